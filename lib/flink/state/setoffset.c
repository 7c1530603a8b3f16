/* setoffset.c: ckpt-merge --set-offset: a Kafka source's reader splits start at new offsets.
 *
 * A KafkaPartitionSplit (version 0: UTF topic, i32 partition, i64 starting and stopping offsets)
 * keeps its length when its starting offset changes, so the reader state's element offsets stay
 * and the writer splices 8 bytes of the inline operator state a split lies in.  The enumerator's
 * state of versions 1 and 2 holds partitions only and stays as it is; versions 0 and 3 hold each
 * split whole (i32 length, the split): its starting offset is set alike. */

#include <stdlib.h>
#include <string.h>

#include "readers.h"
#include "model/model.h"

#define READER_STATE "SourceReaderState"

/* One reader split: where its starting offset lies in the buffer, and its value. */
struct rsplit {
	char *topic;
	int32_t partition;
	int64_t start;
	size_t at;
	uint32_t subtask;
};

struct setctx {
	const char *meta;
	const unsigned char *buf;
	const struct ckpt_snapshot *s;
	const struct ckpt_fmeta_spans *sp;
	struct rsplit *sl;
	size_t nsl, slcap;
	size_t coord_at, coord_len; /* the enumerator's bytes, when it records splits (else 0) */
	char untyped[1400];         /* a source whose enumerator no format parses, and why */
	struct ckpt_err *e;
};

/* Is the operator a Kafka source (its enumerator typed as Kafka's)?  1, 0, or -1 (refused). */
static int
kafka_source(struct setctx *c, const struct ckpt_operator *op)
{
	json_t *en = NULL;
	char why[1200];
	const char *conn;
	int rc = 0;

	if (op->coordinator == NULL)
		return 0;
	if (ckpt_fser_enum_typed(op->coordinator->p, op->coordinator->len, &en, why, sizeof why) < 0)
		return ckpt_err_nomem(c->e, "");
	conn = en ? json_string_value(json_object_get(en, "connector")) : NULL;
	if (en && conn == NULL && c->untyped[0] == '\0')
		snprintf(c->untyped, sizeof c->untyped, ": operator %s's enumerator state is none ckpt can type: %s", op->id,
			 json_string_value(json_object_get(en, "reason")));
	if (conn && strcmp(conn, "kafka") == 0) {
		rc = 1;
		if (json_object_get(en, "splits") || json_object_get(en, "assignments")) {
			c->coord_at = c->sp->ops[op - c->s->ops].coord_at;
			c->coord_len = op->coordinator->len;
		}
	}
	json_decref(en);
	return rc;
}

/* Element idx of the reader state at off of inline data d: typed as a Kafka split, noted. */
static int
reader_split(struct setctx *c, const struct ckpt_operator *op, const struct ckpt_fmeta_opdata *d, size_t idx,
	     int64_t off)
{
	const unsigned char *p = c->buf + d->at;
	char where[300], loc[1400], why[1200];
	json_t *v = NULL;
	size_t n, tl;
	struct rsplit *r;

	snprintf(where, sizeof where, "operator %s subtask %u %s element %zu", op->id, d->subtask, READER_STATE, idx);
	if (off < 0 || (uint64_t)off + 4 > d->n || (n = ckpt_load_be(p + off, 4)) > d->n - (size_t)off - 4)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "%s: its length lies outside the state", where);
	snprintf(loc, sizeof loc, "%s: %s", c->meta, where); /* the framing's own errors name the file too */
	if (ckpt_fser_split_typed(p + off + 4, n, d->at + (size_t)off + 4, loc, &v, why, sizeof why, c->e) < 0)
		return -1;
	if (v == NULL || !json_is_string(json_object_get(v, "connector")) ||
	    strcmp(json_string_value(json_object_get(v, "connector")), "kafka") != 0) {
		json_decref(v);
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "%s: not a Kafka split ckpt can type: %s", where,
				    v ? "another connector's" : why);
	}
	json_decref(v);
	if (ckpt_grow(&c->sl, &c->slcap, c->nsl + 1, sizeof *c->sl, 16, c->e) < 0)
		return -1;
	r = &c->sl[c->nsl];
	tl = ckpt_load_be(p + off + 12, 2);
	if ((r->topic = strndup((const char *)p + off + 14, tl)) == NULL)
		return ckpt_err_nomem(c->e, "");
	c->nsl++;
	r->partition = (int32_t)ckpt_load_be(p + off + 14 + tl, 4);
	r->at = d->at + (size_t)off + 18 + tl;
	r->start = (int64_t)ckpt_load_be(c->buf + r->at, 8);
	r->subtask = d->subtask;
	return 0;
}

/* Every reader split of operator k, from its inline managed operator state. */
static int
reader_splits(struct setctx *c, size_t k)
{
	const struct ckpt_operator *op = &c->s->ops[k];
	size_t found = 0;

	for (size_t i = 0; i < c->sp->nopdata; i++) {
		const struct ckpt_fmeta_opdata *d = &c->sp->opdata[i];
		const json_t *st, *o;
		size_t j, m;

		if (d->op != k)
			continue;
		json_array_foreach(d->states, j, st) {
			if (strcmp(json_string_value(json_object_get(st, "name")), READER_STATE) != 0)
				continue;
			found++;
			json_array_foreach(json_object_get(st, "offsets"), m, o)
				if (reader_split(c, op, d, m, json_integer_value(o)) < 0)
					return -1;
		}
	}
	for (size_t i = 0; i < op->nsubtasks; i++)
		for (size_t j = 0; j < op->subtasks[i].nops; j++)
			if (strcmp(op->subtasks[i].ops[j].name, READER_STATE) == 0 && found-- == 0)
				return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "operator %s: --set-offset: the "
						    "reader state is in a state file: not supported yet (inline only)", op->id);
	return 0;
}

static void
free_splits(struct setctx *c)
{
	for (size_t i = 0; i < c->nsl; i++)
		free(c->sl[i].topic);
	c->nsl = 0;
}

/* Do operator k's readers hold every topic the sets name (1), some (2), none (0)?  -1: an error. */
static int
holds_topics(struct setctx *c, size_t k, const struct ckpt_flink_offset_set *sets, size_t nsets)
{
	size_t have = 0;

	if (reader_splits(c, k) < 0)
		return -1;
	for (size_t i = 0; i < nsets; i++) {
		size_t j = 0;

		while (j < c->nsl && strcmp(c->sl[j].topic, sets[i].topic) != 0)
			j++;
		have += j < c->nsl;
	}
	free_splits(c);
	return have == nsets ? 1 : have ? 2 : 0;
}

/* Of two or more Kafka sources ks[0, n), the one whose readers alone hold the topics named. */
static long
by_topic(struct setctx *c, const size_t *ks, size_t n, const struct ckpt_flink_offset_set *sets, size_t nsets)
{
	long k = -1;
	int ambiguous = 0, r;

	for (size_t i = 0; i < n; i++) {
		if ((r = holds_topics(c, ks[i], sets, nsets)) < 0)
			return -1;
		ambiguous |= r == 2 || (r == 1 && k >= 0);
		if (r == 1)
			k = (long)ks[i];
	}
	if (k < 0 || ambiguous)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "--set-offset: %zu Kafka sources (operators %s, %s%s) "
				    "and the topics do not tell which: choose one with --source UID", n, c->s->ops[ks[0]].id,
				    c->s->ops[ks[1]].id, n > 2 ? ", ..." : "");
	return k;
}

/* The Kafka source: the one of uid or id source, else the only one, else the one whose readers
 * alone hold the topics named.  Its index, its enumerator noted (kafka_source), or -1. */
static long
pick_source(struct setctx *c, const char *source, const struct ckpt_flink_offset_set *sets, size_t nsets)
{
	size_t *ks = ckpt_calloc(c->s->nops + 1, sizeof *ks, c->e), n = 0;
	long k = -1;
	int r;

	for (size_t i = 0; ks && i < c->s->nops; i++) {
		const struct ckpt_operator *op = &c->s->ops[i];

		if (source && strcmp(op->id, source) != 0 && (op->uid == NULL || strcmp(op->uid, source) != 0))
			continue;
		if ((r = kafka_source(c, op)) < 0)
			goto out;
		if (r == 0 && source) {
			ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "--source %s: not a Kafka source%s", source, c->untyped);
			goto out;
		}
		if (r)
			ks[n++] = i;
	}
	if (ks && n == 0)
		ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, source ? "--source %s: no such operator" :
			     "--set-offset: no Kafka source%s", source ? source : c->untyped);
	else if (ks)
		k = n == 1 ? (long)ks[0] : by_topic(c, ks, n, sets, nsets);
	c->coord_at = c->coord_len = 0;
	if (k >= 0 && kafka_source(c, &c->s->ops[k]) < 0)
		k = -1;
out:
	free(ks);
	return k;
}

/* "topic:0, topic:1, ...": the partitions the readers hold, sorted as the readers list them. */
static void
held(const struct setctx *c, char *b, size_t n)
{
	size_t used = 0;

	b[0] = '\0';
	for (size_t i = 0; i < c->nsl && used < n; i++)
		used += (size_t)snprintf(b + used, n - used, "%s%s:%d", i ? ", " : "", c->sl[i].topic,
					 (int)c->sl[i].partition);
	if (c->nsl == 0)
		snprintf(b, n, "none");
}

/* The 8 bytes at at become v, as splice n of rk. */
static int
splice_at(struct setctx *c, struct ckpt_flink_rekey *rk, size_t at, int64_t v)
{
	struct ckpt_flink_splice *x = &rk->splices[rk->nsplices];

	if ((x->p = malloc(8)) == NULL)
		return ckpt_err_nomem(c->e, "");
	rk->nsplices++;
	x->at = at;
	x->end = at + 8;
	x->n = 8;
	for (int i = 0; i < 8; i++)
		x->p[i] = (unsigned char)((uint64_t)v >> (56 - 8 * i));
	return 0;
}

/* The enumerator's own split of r (its i32 length, topic, partition), when it records splits: its
 * starting offset set to v too.  None there: nothing to change; two: refused. */
static int
enum_split(struct setctx *c, struct ckpt_flink_rekey *rk, const struct rsplit *r, const char *text, int64_t v)
{
	size_t tl = strlen(r->topic), n = 4 + 2 + tl + 4, at = 0, found = 0;
	unsigned char *pat = malloc(n);
	const unsigned char *p = c->buf + c->coord_at;

	if (pat == NULL)
		return ckpt_err_nomem(c->e, "");
	for (int i = 0; i < 4; i++) {
		pat[i] = (unsigned char)((2 + tl + 20) >> (24 - 8 * i));
		pat[6 + tl + i] = (unsigned char)((uint32_t)r->partition >> (24 - 8 * i));
	}
	pat[4] = (unsigned char)(tl >> 8);
	pat[5] = (unsigned char)tl;
	memcpy(pat + 6, r->topic, tl);
	for (size_t i = 0; c->coord_len >= n + 16 && i <= c->coord_len - n - 16; i++)
		if (memcmp(p + i, pat, n) == 0)
			found++, at = c->coord_at + i + n;
	free(pat);
	if (found > 1)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "--set-offset %s: the enumerator's state holds "
				    "%s:%d %zu times", text, r->topic, (int)r->partition, found);
	return found ? splice_at(c, rk, at, v) : 0;
}

/* Set x's new offset into rk (8 bytes at the split's offset, and at the enumerator's). */
static int
apply(struct setctx *c, const struct ckpt_flink_offset_set *x, struct ckpt_flink_rekey *rk)
{
	struct rsplit *r = NULL;
	char list[1000];
	int64_t v = x->value;

	for (size_t i = 0; i < c->nsl; i++)
		if (c->sl[i].partition == x->partition && strcmp(c->sl[i].topic, x->topic) == 0)
			r = &c->sl[i];
	if (r == NULL) {
		held(c, list, sizeof list);
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "--set-offset %s: no reader holds %s:%d "
				    "(the readers hold %s)", x->text, x->topic, (int)x->partition, list);
	}
	if (x->rel && r->start < 0)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "--set-offset %s: the starting offset is %s, "
				    "not a number to count from", x->text,
				    r->start == -2 ? "earliest" : r->start == -1 ? "latest" : r->start == -3 ? "committed" : "a sentinel");
	if (x->rel)
		v = r->start + x->value;
	if (x->rel && v < 0)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "--set-offset %s: the starting offset %lld moved by %+lld "
				    "is below 0", x->text, (long long)r->start, (long long)x->value);
	if (splice_at(c, rk, r->at, v) < 0)
		return -1;
	return c->coord_at ? enum_split(c, rk, r, x->text, v) : 0;
}

static int
cmp_splice(const void *a, const void *b)
{
	const struct ckpt_flink_splice *x = a, *y = b;

	return x->at < y->at ? -1 : x->at > y->at;
}

int
ckpt_flink_set_offsets(const char *meta, const void *buf, size_t len, const struct ckpt_flink_edit *ed,
		       size_t ned, const struct ckpt_flink_offset_set *sets, size_t nsets, const char *source,
		       struct ckpt_bytes *out, json_t **relative, struct ckpt_err *e)
{
	struct ckpt_fmeta_spans sp;
	struct ckpt_snapshot *s = ckpt_fmeta_decode_spans(buf, len, meta, &sp, e);
	struct setctx c = {.meta = meta, .buf = buf, .s = s, .sp = &sp, .e = e};
	struct ckpt_flink_rekey rk = {0};
	long k;
	int rc = -1;

	if (s == NULL || (k = pick_source(&c, source, sets, nsets)) < 0 || reader_splits(&c, (size_t)k) < 0)
		goto out;
	if ((rk.splices = ckpt_calloc(2 * nsets + 1, sizeof *rk.splices, e)) == NULL)
		goto out;
	for (size_t i = 0; i < nsets; i++)
		if (apply(&c, &sets[i], &rk) < 0)
			goto out;
	qsort(rk.splices, rk.nsplices, sizeof *rk.splices, cmp_splice);
	for (size_t i = 1; i < rk.nsplices; i++)
		if (rk.splices[i].at == rk.splices[i - 1].at) {
			ckpt_err_set(e, CKPT_ERR_INPUT, meta, "--set-offset: one partition set twice");
			goto out;
		}
	rc = ckpt_fmeta_rewrite_rekeyed(buf, len, meta, ed, ned, &rk, out, relative, e);
out:
	for (size_t i = 0; i < rk.nsplices; i++)
		free(rk.splices[i].p);
	free(rk.splices);
	free_splits(&c);
	free(c.sl);
	ckpt_fmeta_spans_release(&sp);
	ckpt_snapshot_free(s);
	return rc;
}
