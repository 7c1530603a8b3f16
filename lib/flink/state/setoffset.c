/* setoffset.c: ckpt-merge --set-offset, --add-partition and --remove-partition: a Kafka source's
 * reader splits start at new offsets, are added on the reader Flink's enumerator assigns, go.
 *
 * A KafkaPartitionSplit (version 0: UTF topic, i32 partition, i64 starting and stopping offsets)
 * keeps its length when its starting offset changes, so the reader state's element offsets stay
 * and the writer splices 8 bytes of the inline operator state a split lies in.  The enumerator's
 * state of versions 1 and 2 holds partitions only and stays as it is; versions 0 and 3 hold each
 * split whole (i32 length, the split): its starting offset is set alike.  Reader state in a file of
 * its own (above state.storage.fs.memory-threshold) is read whole and, changed, written anew into the
 * savepoint being written, its handle a relative file handle naming it. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readers.h"
#include "model/model.h"

#define READER_STATE "SourceReaderState"
#define CONSUMER_STATE "topic-partition-offset-states"

/* One reader split: where its starting offset lies in the buffer (in the file, for a handle of a
 * file), and its value; its element [eoff, eend) in the data of handle d (an index of the spans'
 * opdata). */
struct rsplit {
	char *topic;
	int32_t partition;
	int64_t start, stop;
	size_t at;
	uint32_t subtask;
	size_t d, eoff, eend;
	int removed, set; /* --remove-partition; --set-offset to v */
	int64_t v;
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
	const char *dir;            /* where the new state files go (the savepoint being written) */
	struct ckpt_fstate_backing_data *b;
	struct ckpt_bytes *fdata;   /* per opdata: the bytes of a handle's file, once read */
	char **fwhere;              /* and that file's path, for messages */
	json_t *names;              /* the names of the state files written */
	struct ckpt_err *e;
};

/* The bytes of handle di: inline in the _metadata, or its file's. */
static const unsigned char *
hdata(const struct setctx *c, size_t di)
{
	return c->sp->opdata[di].file ? c->fdata[di].p : c->buf + c->sp->opdata[di].at;
}

/* What holds them, for messages: the _metadata, or the file. */
static const char *
hwhere(const struct setctx *c, size_t di)
{
	return c->sp->opdata[di].file ? c->fwhere[di] : c->meta;
}

/* Handle di's file read whole, once: its size the handle's (a file cut or grown is refused, naming
 * it, as -c says it). */
static int
read_file(struct setctx *c, size_t di)
{
	const struct ckpt_fmeta_opdata *d = &c->sp->opdata[di];
	const struct ckpt_operator *op = &c->s->ops[d->op];
	struct ckpt_fstate_ctx x = {.b = c->b, .op = op, .e = c->e};
	struct ckpt_fsrc src = {.fd = -1};
	unsigned char *p = NULL;
	int fd = -1, rc = -1;

	if (!d->file || c->fdata[di].p)
		return 0;
	for (size_t i = 0; i < op->nsubtasks; i++)
		if (op->subtasks[i].index == d->subtask)
			x.st = &op->subtasks[i];
	x.h = &x.st->handles[d->handle];
	snprintf(x.where, sizeof x.where, "%s", c->meta);
	if (ckpt_fstate_open_bytes(&x, &src, &fd) < 0 || (p = ckpt_calloc(d->n + 1, 1, c->e)) == NULL ||
	    ckpt_fsrc_read(&src, p, d->n, "operator state") < 0)
		goto out;
	if ((c->fwhere[di] = strdup(x.where)) == NULL) {
		ckpt_err_nomem(c->e, "");
		goto out;
	}
	c->fdata[di] = (struct ckpt_bytes){.p = p, .len = d->n};
	p = NULL;
	rc = 0;
out:
	free(p);
	ckpt_fsrc_release(&src);
	if (fd >= 0)
		close(fd);
	return rc;
}

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

/* Element idx of the reader state at off of handle di's data: typed as a Kafka split, noted. */
static int
reader_split(struct setctx *c, const struct ckpt_operator *op, size_t di, size_t idx, int64_t off)
{
	const struct ckpt_fmeta_opdata *d = &c->sp->opdata[di];
	const unsigned char *p = hdata(c, di);
	char where[300], loc[1400], why[1200];
	json_t *v = NULL;
	size_t n, tl;
	struct rsplit *r;

	snprintf(where, sizeof where, "operator %s subtask %u %s element %zu", op->id, d->subtask, READER_STATE, idx);
	if (off < 0 || (uint64_t)off + 4 > d->n || (n = ckpt_load_be(p + off, 4)) > d->n - (size_t)off - 4)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, hwhere(c, di), "%s: its length lies outside the state", where);
	snprintf(loc, sizeof loc, "%s: %s", hwhere(c, di), where); /* the framing's own errors name the file too */
	if (ckpt_fser_split_typed(p + off + 4, n, d->at + (size_t)off + 4, loc, &v, why, sizeof why, c->e) < 0)
		return -1;
	if (v == NULL || !json_is_string(json_object_get(v, "connector")) ||
	    strcmp(json_string_value(json_object_get(v, "connector")), "kafka") != 0) {
		json_decref(v);
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, hwhere(c, di), "%s: not a Kafka split ckpt can type: %s", where,
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
	r->start = (int64_t)ckpt_load_be(p + off + 18 + tl, 8);
	r->stop = (int64_t)ckpt_load_be(p + off + 26 + tl, 8);
	r->subtask = d->subtask;
	r->d = di;
	r->eoff = (size_t)off;
	r->eend = (size_t)off + 4 + n;
	r->removed = r->set = 0;
	return 0;
}

/* Every reader split of operator k, from its managed operator state (inline, or a file's). */
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
			if (read_file(c, i) < 0)
				return -1;
			json_array_foreach(json_object_get(st, "offsets"), m, o)
				if (reader_split(c, op, i, m, json_integer_value(o)) < 0)
					return -1;
		}
	}
	for (size_t i = 0; i < op->nsubtasks; i++)
		for (size_t j = 0; j < op->subtasks[i].nops; j++)
			if (strcmp(op->subtasks[i].ops[j].name, READER_STATE) == 0 && found-- == 0)
				return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "operator %s: --set-offset: the "
						    "reader state is in a file-merging segment: not supported yet (inline or "
						    "in a file of its own only)", op->id);
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

/* The reader split x sets and its new starting offset, checked; NULL with the error set. */
static struct rsplit *
set_target(struct setctx *c, const struct ckpt_flink_offset_set *x, int64_t *v)
{
	struct rsplit *r = NULL;
	char list[1000];

	for (size_t i = 0; i < c->nsl; i++)
		if (c->sl[i].partition == x->partition && strcmp(c->sl[i].topic, x->topic) == 0)
			r = &c->sl[i];
	if (r == NULL) {
		held(c, list, sizeof list);
		ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "--set-offset %s: no reader holds %s:%d (the readers hold "
			     "%s); --add-partition adds it", x->text, x->topic, (int)x->partition, list);
		return NULL;
	}
	*v = x->rel ? r->start + x->value : x->value;
	if (x->rel && r->start < 0)
		ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "--set-offset %s: the starting offset is %s, not a number to "
			     "count from", x->text, r->start == -2 ? "earliest" : r->start == -1 ? "latest" :
			     r->start == -3 ? "committed" : "a sentinel");
	else if (x->rel && *v < 0)
		ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "--set-offset %s: the starting offset %lld moved by %+lld is "
			     "below 0", x->text, (long long)r->start, (long long)x->value);
	else
		return r;
	return NULL;
}

/* Set x's new offset into rk (8 bytes at the split's offset, and at the enumerator's). */
static int
apply(struct setctx *c, const struct ckpt_flink_offset_set *x, struct ckpt_flink_rekey *rk)
{
	int64_t v;
	struct rsplit *r = set_target(c, x, &v);

	if (r == NULL || splice_at(c, rk, r->at, v) < 0)
		return -1;
	return c->coord_at ? enum_split(c, rk, r, x->text, v) : 0;
}

/* ------------------------------------------------ --add-partition and --remove-partition */

/* Adding or removing a split changes the reader state's length: each subtask's handle so changed
 * is written anew from its state count to the end of its inline data (the removed elements cut,
 * the added ones after the reader state's last element, every offset after them moved), and the
 * enumerator's state anew from its typed form (KafkaSourceEnumStateSerializer, its own version). */

static const char *const optname[] = {"--set-offset", "--add-partition", "--remove-partition"};

static struct rsplit *
find_split(struct setctx *c, const char *topic, int32_t part)
{
	for (size_t i = 0; i < c->nsl; i++)
		if (c->sl[i].partition == part && strcmp(c->sl[i].topic, topic) == 0)
			return &c->sl[i];
	return NULL;
}

/* KafkaSourceEnumerator.getSplitOwner: the reader Flink's enumerator assigns a partition to, the
 * topic's String.hashCode (an ASCII name's chars are its bytes) picking partition 0's. */
static uint32_t
split_owner(const char *topic, int32_t part, uint32_t readers)
{
	uint32_t h = (uint32_t)ckpt_fser_java_ascii_hash(topic);

	return (uint32_t)(((h * 31u & 0x7FFFFFFFu) % readers + (uint64_t)part) % readers);
}

/* A KafkaPartitionSplit (version 0), after its i32 length (framed 1), or as a reader state
 * element: the byte[]'s length, SimpleVersionedSerialization's version 0 and length (framed 2). */
static int
w_split(struct ckpt_bytebuf *b, const char *topic, int32_t part, int64_t start, int64_t stop, int framed,
	struct ckpt_err *e)
{
	size_t tl = strlen(topic), n = 2 + tl + 20;

	if ((framed == 2 && (ckpt_bytebuf_be(b, n + 8, 4, e) < 0 || ckpt_bytebuf_be(b, 0, 4, e) < 0)) ||
	    ckpt_bytebuf_be(b, n, 4, e) < 0 || ckpt_bytebuf_be(b, tl, 2, e) < 0 || ckpt_bytebuf_add(b, topic, tl, e) < 0 ||
	    ckpt_bytebuf_be(b, (uint32_t)part, 4, e) < 0 || ckpt_bytebuf_be(b, (uint64_t)start, 8, e) < 0)
		return -1;
	return ckpt_bytebuf_be(b, (uint64_t)stop, 8, e);
}

/* An offset as the typed enumerator names it, as Flink's long again (null, "migrated": none). */
static int64_t
raw_offset(const json_t *v)
{
	const char *s = json_string_value(v);

	if (json_is_integer(v))
		return json_integer_value(v);
	return s == NULL ? INT64_MIN : strcmp(s, "latest") == 0 ? -1 : strcmp(s, "earliest") == 0 ? -2 :
	       strcmp(s, "committed") == 0 ? -3 : INT64_MIN;
}

static int
same_tp(const json_t *x, const char *topic, int32_t part)
{
	return json_integer_value(json_object_get(x, "partition")) == part &&
	       strcmp(json_string_value(json_object_get(x, "topic")), topic) == 0;
}

/* The enumerator's entry of topic:part (versions 1 to 3: its partitions or splits; 0: its
 * readers' assignments), or NULL. */
static json_t *
enum_entry(json_t *en, const char *topic, int32_t part)
{
	json_t *as = json_object_get(en, "assignments"), *l = json_object_get(en, "splits"), *a, *x;
	size_t i, j;

	json_array_foreach(as, i, a)
		json_array_foreach(json_object_get(a, "splits"), j, x)
			if (same_tp(x, topic, part))
				return x;
	json_array_foreach(l ? l : json_object_get(en, "partitions"), i, x)
		if (same_tp(x, topic, part))
			return x;
	return NULL;
}

/* Reader owner's assignment list of a version 0 enumerator, made when it has none. */
static json_t *
enum0_list(json_t *en, uint32_t owner)
{
	json_t *as = json_object_get(en, "assignments"), *a;
	size_t i;

	json_array_foreach(as, i, a)
		if (json_integer_value(json_object_get(a, "subtask")) == owner)
			return json_object_get(a, "splits");
	a = json_pack("{s:I, s:[]}", "subtask", (json_int_t)owner, "splits");
	return a && json_array_append_new(as, a) == 0 ? json_object_get(a, "splits") : NULL;
}

/* The enumerator lists topic:part as assigned (Flink's discovery then leaves it alone); a split
 * it records starts at start when setstart, or is made so when new. */
static int
enum_assigned(json_t *en, const struct rsplit *r, int64_t start, int setstart, uint32_t owner)
{
	json_int_t ver = json_integer_value(json_object_get(en, "version"));
	json_t *x = enum_entry(en, r->topic, r->partition), *l;

	if (x == NULL) {
		l = ver == 0 ? enum0_list(en, owner) : json_object_get(en, ver == 3 ? "splits" : "partitions");
		x = json_pack("{s:s, s:i}", "topic", r->topic, "partition", (int)r->partition);
		if (l == NULL || x == NULL || json_array_append_new(l, x) < 0)
			return -1;
		if ((ver == 0 || ver == 3) && json_object_set_new(x, "stopping_offset", ckpt_fser_split_offset(r->stop, 1)) < 0)
			return -1;
		setstart = 1;
	}
	if (setstart && (ver == 0 || ver == 3) && json_object_set_new(x, "starting_offset", ckpt_fser_split_offset(start, 0)) < 0)
		return -1;
	return ver >= 2 ? json_object_set_new(x, "status", json_string("assigned")) : 0;
}

static int
w_enum_split(struct ckpt_bytebuf *b, const json_t *x, struct ckpt_err *e)
{
	return w_split(b, json_string_value(json_object_get(x, "topic")), (int32_t)json_integer_value(json_object_get(x, "partition")),
		       raw_offset(json_object_get(x, "starting_offset")), raw_offset(json_object_get(x, "stopping_offset")), 1, e);
}

/* KafkaSourceEnumStateSerializer: the typed enumerator en written in its own version. */
static int
w_enum(json_t *en, struct ckpt_bytebuf *b, struct ckpt_err *e)
{
	json_int_t ver = json_integer_value(json_object_get(en, "version"));
	json_t *l = json_object_get(en, ver == 0 ? "assignments" : ver == 3 ? "splits" : "partitions"), *x, *y;
	size_t i, j;

	if (ckpt_bytebuf_be(b, json_array_size(l), 4, e) < 0 || (ver != 1 && ver != 2 && ckpt_bytebuf_be(b, 0, 4, e) < 0))
		return -1;
	json_array_foreach(l, i, x) {
		const char *t = json_string_value(json_object_get(x, "topic"));

		if (ver == 0 && (ckpt_bytebuf_be(b, (uint32_t)json_integer_value(json_object_get(x, "subtask")), 4, e) < 0 ||
				 ckpt_bytebuf_be(b, json_array_size(json_object_get(x, "splits")), 4, e) < 0))
			return -1;
		json_array_foreach(ver == 0 ? json_object_get(x, "splits") : NULL, j, y)
			if (w_enum_split(b, y, e) < 0)
				return -1;
		if ((ver == 3 && w_enum_split(b, x, e) < 0) ||
		    ((ver == 1 || ver == 2) && (ckpt_bytebuf_be(b, strlen(t), 2, e) < 0 || ckpt_bytebuf_add(b, t, strlen(t), e) < 0 ||
						ckpt_bytebuf_be(b, (uint32_t)json_integer_value(json_object_get(x, "partition")), 4, e) < 0)))
			return -1;
		if (ver >= 2 && ckpt_bytebuf_be(b, strcmp(json_string_value(json_object_get(x, "status")), "assigned") != 0, 4, e) < 0)
			return -1;
	}
	return ver >= 2 ? ckpt_bytebuf_be(b, json_is_true(json_object_get(en, "initial_discovery_finished")), 1, e) : 0;
}

/* The coordinator state of operator k (its inline byte count and bytes) as one splice: the
 * framing (serde and enumerator versions) kept, the enumerator en, what followed it kept. */
static int
enum_splice(struct setctx *c, size_t k, json_t *en, struct ckpt_flink_rekey *rk)
{
	const struct ckpt_bytes *co = c->s->ops[k].coordinator;
	size_t at = c->sp->ops[k].coord_at, old = ckpt_load_be(co->p + 8, 4);
	struct ckpt_bytebuf eb = {0}, b = {0};
	struct ckpt_flink_splice *x = &rk->splices[rk->nsplices];
	int rc = -1;

	if (w_enum(en, &eb, c->e) < 0 || ckpt_bytebuf_be(&b, 12 + eb.len + co->len - 12 - old, 4, c->e) < 0 ||
	    ckpt_bytebuf_add(&b, co->p, 8, c->e) < 0 || ckpt_bytebuf_be(&b, eb.len, 4, c->e) < 0 ||
	    ckpt_bytebuf_add(&b, eb.p, eb.len, c->e) < 0 || ckpt_bytebuf_add(&b, co->p + 12 + old, co->len - 12 - old, c->e) < 0)
		goto out;
	*x = (struct ckpt_flink_splice){.at = at - 4, .end = at + co->len, .p = b.p, .n = b.len};
	b.p = NULL;
	rk->nsplices++;
	rc = 0;
out:
	ckpt_bytebuf_release(&eb);
	ckpt_bytebuf_release(&b);
	return rc;
}

/* Where offset o of handle di's data lies once its removed elements are cut and nins bytes go in at p. */
static uint64_t
moved(const struct setctx *c, size_t di, uint64_t o, size_t p, size_t nins)
{
	uint64_t m = o;

	for (size_t i = 0; i < c->nsl; i++)
		if (c->sl[i].d == di && c->sl[i].removed && c->sl[i].eend <= o)
			m -= c->sl[i].eend - c->sl[i].eoff;
	return m + (o >= p ? nins : 0);
}

static int
cut(const struct setctx *c, size_t di, uint64_t o)
{
	for (size_t i = 0; i < c->nsl; i++)
		if (c->sl[i].d == di && c->sl[i].removed && c->sl[i].eoff == o)
			return 1;
	return 0;
}

/* Handle di's states (from its state count, as meta-handle.c read them): names and modes as
 * they are, every offset moved, the removed elements' gone, the added ones' last of the reader
 * state (each of nadd a reader state element of its own length).  *end: where the data handle starts. */
static int
w_states(struct setctx *c, size_t di, size_t p, const struct ckpt_bytebuf *ins, size_t nadd, struct ckpt_bytebuf *b,
	 size_t *end)
{
	const unsigned char *q = c->buf + c->sp->opdata[di].head;
	size_t pos = 4, ns = ckpt_load_be(q, 4);

	if (ckpt_bytebuf_add(b, q, 4, c->e) < 0)
		return -1;
	for (size_t i = 0; i < ns; i++) {
		size_t nl = ckpt_load_be(q + pos, 2), no = ckpt_load_be(q + pos + 3 + nl, 4), kept = 0, at = 0;
		int reader = nl == strlen(READER_STATE) && memcmp(q + pos + 2, READER_STATE, nl) == 0;

		for (size_t j = 0; j < no; j++)
			kept += !(reader && cut(c, di, ckpt_load_be(q + pos + 7 + nl + 8 * j, 8)));
		if (ckpt_bytebuf_add(b, q + pos, 3 + nl, c->e) < 0 ||
		    ckpt_bytebuf_be(b, kept + (reader ? nadd : 0), 4, c->e) < 0)
			return -1;
		for (size_t j = 0; j < no; j++) {
			uint64_t o = ckpt_load_be(q + pos + 7 + nl + 8 * j, 8);

			if (!(reader && cut(c, di, o)) && ckpt_bytebuf_be(b, moved(c, di, o, p, ins->len), 8, c->e) < 0)
				return -1;
		}
		for (size_t j = 0; reader && j < nadd; j++, at += 4 + ckpt_load_be(ins->p + at, 4))
			if (ckpt_bytebuf_be(b, moved(c, di, p, p, 0) + at, 8, c->e) < 0)
				return -1;
		pos += 7 + nl + 8 * no;
	}
	*end = c->sp->opdata[di].head + pos;
	return 0;
}

static int
cmp_eoff(const void *a, const void *b)
{
	const struct rsplit *x = *(const struct rsplit *const *)a, *y = *(const struct rsplit *const *)b;

	return x->eoff < y->eoff ? -1 : x->eoff > y->eoff;
}

/* Handle di's data: the offsets set, the removed elements cut, ins at p (after every reader element). */
static int
w_data(struct setctx *c, size_t di, size_t p, const struct ckpt_bytebuf *ins, struct ckpt_bytebuf *b)
{
	const struct ckpt_fmeta_opdata *d = &c->sp->opdata[di];
	const unsigned char *q = hdata(c, di);
	struct rsplit **rm = ckpt_calloc(c->nsl + 1, sizeof *rm, c->e);
	size_t nrm = 0, from = 0, start = b->len;
	int rc = -1;

	if (rm == NULL)
		return -1;
	for (size_t i = 0; i < c->nsl; i++)
		if (c->sl[i].d == di && c->sl[i].removed)
			rm[nrm++] = &c->sl[i];
	qsort(rm, nrm, sizeof *rm, cmp_eoff);
	for (size_t i = 0; i < nrm; i++) {
		if (ckpt_bytebuf_add(b, q + from, rm[i]->eoff - from, c->e) < 0)
			goto out;
		from = rm[i]->eend;
	}
	if (ckpt_bytebuf_add(b, q + from, p - from, c->e) < 0 || ckpt_bytebuf_add(b, ins->p, ins->len, c->e) < 0 ||
	    ckpt_bytebuf_add(b, q + p, d->n - p, c->e) < 0)
		goto out;
	for (size_t i = 0; i < c->nsl; i++) /* kept splits set: before p, each moved by the cuts before it */
		if (c->sl[i].d == di && c->sl[i].set && !c->sl[i].removed)
			ckpt_store_be(b->p + start + moved(c, di, c->sl[i].at - d->at, p, 0), (uint64_t)c->sl[i].v, 8);
	rc = 0;
out:
	free(rm);
	return rc;
}

/* Handle di's new data written whole into the savepoint (a temporary name renamed) as reader-OPID-
 * SUBTASK (-2, -3, ... after it when that is taken), named in b as Flink's relative file handle
 * (tag 6: the name, the size), as a savepoint's own files are. */
static int
w_state_file(struct setctx *c, size_t di, const struct ckpt_bytebuf *data, struct ckpt_bytebuf *b)
{
	const struct ckpt_fmeta_opdata *d = &c->sp->opdata[di];
	char prefix[80];

	if (c->dir == NULL)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, hwhere(c, di), "reader state in a file: no directory to write "
				    "the new one in");
	snprintf(prefix, sizeof prefix, "reader-%s", c->s->ops[d->op].id);
	return ckpt_fmeta_write_relative(c->sp, di, c->dir, prefix, d->subtask, &c->names, data, b, c->e);
}

/* Handle di written anew from its state count to the end of its data handle, as one splice: inline
 * data in it, or in a new file it names. */
static int
rebuild_handle(struct setctx *c, size_t di, const struct ckpt_bytebuf *ins, size_t nadd, struct ckpt_flink_rekey *rk)
{
	const struct ckpt_fmeta_opdata *d = &c->sp->opdata[di];
	struct ckpt_bytebuf b = {0}, data = {0};
	size_t p = 0, end, any = 0;

	for (size_t i = 0; i < c->nsl; i++)
		if (c->sl[i].d == di && (any = 1, c->sl[i].eend > p))
			p = c->sl[i].eend;
	if (!any)
		p = d->n; /* an empty reader state: its element goes last */
	if (w_states(c, di, p, ins, nadd, &b, &end) < 0 || w_data(c, di, p, ins, &data) < 0 ||
	    (d->file ? w_state_file(c, di, &data, &b) < 0 :
	     ckpt_bytebuf_add(&b, c->buf + end, d->at - 4 - end, c->e) < 0 || ckpt_bytebuf_be(&b, data.len, 4, c->e) < 0 ||
	     ckpt_bytebuf_add(&b, data.p, data.len, c->e) < 0)) {
		ckpt_bytebuf_release(&b);
		ckpt_bytebuf_release(&data);
		return -1;
	}
	ckpt_bytebuf_release(&data);
	rk->splices[rk->nsplices++] = (struct ckpt_flink_splice){.at = d->head, .end = d->dend, .p = b.p, .n = b.len};
	return 0;
}

/* Of operator k, the handle of subtask sub that holds the reader state, or -1. */
static long
reader_handle(const struct setctx *c, size_t k, uint32_t sub)
{
	for (size_t i = 0; i < c->sp->nopdata; i++) {
		const struct ckpt_fmeta_opdata *d = &c->sp->opdata[i];
		const json_t *st;
		size_t j;

		if (d->op != k || d->subtask != sub)
			continue;
		json_array_foreach(d->states, j, st)
			if (strcmp(json_string_value(json_object_get(st, "name")), READER_STATE) == 0)
				return (long)i;
	}
	return -1;
}

static int
topic_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 249 || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return 0;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

/* --add-partition x: its split, stopping where every split held stops (a sentinel, none when there
 * is no split: what Flink's enumerator gives a partition it discovers), appended to the bytes ins
 * of the handle of the reader Flink's enumerator assigns it to; the enumerator lists it assigned. */
static int
add_one(struct setctx *c, size_t k, const struct ckpt_flink_offset_set *x, json_t *en, struct ckpt_bytebuf *ins,
	size_t *nadd)
{
	const struct ckpt_operator *op = &c->s->ops[k];
	struct rsplit *r = find_split(c, x->topic, x->partition), a = {.topic = (char *)x->topic, .partition = x->partition};
	uint32_t owner = split_owner(x->topic, x->partition, op->parallelism ? op->parallelism : 1);
	long di = reader_handle(c, k, owner);

	a.stop = c->nsl ? c->sl[0].stop : INT64_MIN;
	for (size_t i = 0; i < c->nsl; i++)
		if (c->sl[i].stop != a.stop || a.stop >= 0)
			return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "--add-partition %s: the splits held stop at "
					    "offsets of their own, none Flink would give a new partition", x->text);
	if (!topic_name(x->topic))
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "--add-partition %s: \"%s\" is no Kafka topic name",
				    x->text, x->topic);
	if (r)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "--add-partition %s: subtask %u's reader holds %s:%d "
				    "already (--set-offset moves it)", x->text, r->subtask, x->topic, (int)x->partition);
	if (di < 0)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "--add-partition %s: subtask %u of operator %s, the "
				    "reader Flink's enumerator assigns %s:%d to, has no reader state", x->text, owner,
				    op->id, x->topic, (int)x->partition);
	nadd[di]++;
	if (w_split(&ins[di], x->topic, x->partition, x->value, a.stop, 2, c->e) < 0 ||
	    enum_assigned(en, &a, x->value, 1, owner) < 0)
		return ckpt_err_nomem(c->e, "");
	return 0;
}

/* --remove-partition x: its reader split goes; the enumerator keeps (or gets) it as assigned.  One
 * the enumerator alone holds becomes assigned (KafkaSourceEnumerator gives an unassigned split to
 * a reader on restore, an assigned one to none, and its discovery passes over both). */
static int
remove_one(struct setctx *c, const struct ckpt_flink_offset_set *x, json_t *en)
{
	struct rsplit *r = find_split(c, x->topic, x->partition), a = {.topic = (char *)x->topic, .partition = x->partition};
	char list[1000];

	if (r == NULL && enum_entry(en, x->topic, x->partition))
		return enum_assigned(en, &a, 0, 0, 0) < 0 ? ckpt_err_nomem(c->e, "") : 0;
	if (r == NULL) {
		held(c, list, sizeof list);
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "--remove-partition %s: no reader holds %s:%d (the "
				    "readers hold %s)", x->text, x->topic, (int)x->partition, list);
	}
	r->removed = 1;
	return enum_assigned(en, r, r->start, 0, r->subtask) < 0 ? ckpt_err_nomem(c->e, "") : 0;
}

/* --set-offset x beside additions or removals: the split marked, the enumerator's split set. */
static int
set_one(struct setctx *c, const struct ckpt_flink_offset_set *x, json_t *en)
{
	int64_t v;
	struct rsplit *r = set_target(c, x, &v);
	json_t *s;

	if (r == NULL)
		return -1;
	r->set = 1;
	r->v = v;
	s = enum_entry(en, x->topic, x->partition);
	if (s && json_object_get(s, "starting_offset") &&
	    json_object_set_new(s, "starting_offset", ckpt_fser_split_offset(v, 0)) < 0)
		return ckpt_err_nomem(c->e, "");
	return 0;
}

static int
named_twice(struct setctx *c, const struct ckpt_flink_offset_set *sets, size_t nsets)
{
	for (size_t i = 0; i < nsets; i++)
		for (size_t j = i + 1; j < nsets; j++)
			if (sets[i].partition == sets[j].partition && strcmp(sets[i].topic, sets[j].topic) == 0)
				return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "%s %s and %s %s name one partition",
						    optname[sets[i].kind], sets[i].text, optname[sets[j].kind], sets[j].text);
	return 0;
}

/* Every set, addition and removal on source k: handles with splits added or removed written
 * anew (and those of a file with a split set), the others' offsets set in place, the enumerator
 * written anew. */
static int
edit_partitions(struct setctx *c, size_t k, const struct ckpt_flink_offset_set *sets, size_t nsets,
		struct ckpt_flink_rekey *rk)
{
	const struct ckpt_bytes *co = c->s->ops[k].coordinator;
	size_t n = c->sp->nopdata + 1, *nadd = ckpt_calloc(n, sizeof *nadd, c->e);
	struct ckpt_bytebuf *ins = ckpt_calloc(n, sizeof *ins, c->e);
	json_t *en = NULL;
	char why[1200];
	int rc = -1;

	if (nadd == NULL || ins == NULL || named_twice(c, sets, nsets) < 0)
		goto out;
	if (ckpt_fser_enum_typed(co->p, co->len, &en, why, sizeof why) < 0 || en == NULL) {
		ckpt_err_nomem(c->e, "");
		goto out;
	}
	for (size_t i = 0; i < nsets; i++)
		if ((sets[i].kind == CKPT_OFFSET_ADD ? add_one(c, k, &sets[i], en, ins, nadd) :
		     sets[i].kind == CKPT_OFFSET_REMOVE ? remove_one(c, &sets[i], en) : set_one(c, &sets[i], en)) < 0)
			goto out;
	for (size_t di = 0; di < c->sp->nopdata; di++) {
		int touched = nadd[di] > 0;

		for (size_t i = 0; i < c->nsl; i++)
			touched |= c->sl[i].d == di && (c->sl[i].removed || (c->sl[i].set && c->sp->opdata[di].file));
		if (touched && rebuild_handle(c, di, &ins[di], nadd[di], rk) < 0)
			goto out;
		for (size_t i = 0; !touched && i < c->nsl; i++)
			if (c->sl[i].d == di && c->sl[i].set && splice_at(c, rk, c->sl[i].at, c->sl[i].v) < 0)
				goto out;
	}
	rc = enum_splice(c, k, en, rk);
out:
	for (size_t i = 0; ins && i < n; i++)
		ckpt_bytebuf_release(&ins[i]);
	free(ins);
	free(nadd);
	json_decref(en);
	return rc;
}

/* ------------------------------------------------ FlinkKafkaConsumer's union state */

/* KafkaTopicPartitionStateSentinel's EARLIEST_OFFSET; LATEST_OFFSET and GROUP_OFFSET follow it. */
#define CONSUMER_EARLIEST (-915623761775LL)

/* Does operator k hold FlinkKafkaConsumer's "topic-partition-offset-states" in a handle? */
static int
consumer_op(const struct setctx *c, size_t k)
{
	for (size_t i = 0; i < c->sp->nopdata; i++) {
		const json_t *st;
		size_t j;

		json_array_foreach(c->sp->opdata[i].states, j, st)
			if (c->sp->opdata[i].op == k && strcmp(json_string_value(json_object_get(st, "name")), CONSUMER_STATE) == 0)
				return 1;
	}
	return 0;
}

/* The consumer operator: the one of uid or id source, else the only one when no Kafka source is
 * there; -1 none (the Kafka source's path), -2 refused. */
static long
pick_consumer(struct setctx *c, const char *source)
{
	long k = -1;
	int kafka = 0, r;

	for (size_t i = 0; i < c->s->nops; i++) {
		const struct ckpt_operator *op = &c->s->ops[i];

		if (source && strcmp(op->id, source) != 0 && (op->uid == NULL || strcmp(op->uid, source) != 0))
			continue;
		if (source == NULL && (r = kafka_source(c, op)) != 0)
			kafka |= r > 0 ? 1 : 2;
		if (consumer_op(c, i) && k >= 0)
			return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "--set-offset: FlinkKafkaConsumers %s and %s: "
					    "choose one with --source UID", c->s->ops[k].id, op->id), -2;
		if (consumer_op(c, i))
			k = (long)i;
	}
	if (kafka & 2)
		return -2;
	if (k >= 0 && kafka)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "--set-offset: a Kafka source and FlinkKafkaConsumer %s: "
				    "choose one with --source UID", c->s->ops[k].id), -2;
	return k;
}

/* Where the element at off of handle di ends: at the next offset of any of its states, else at
 * the data's end. */
static uint64_t
element_end(const struct setctx *c, size_t di, uint64_t off)
{
	uint64_t end = c->sp->opdata[di].n;
	const json_t *st, *o;
	size_t j, m;

	json_array_foreach(c->sp->opdata[di].states, j, st)
		json_array_foreach(json_object_get(st, "offsets"), m, o)
			if ((uint64_t)json_integer_value(o) > off && (uint64_t)json_integer_value(o) < end)
				end = (uint64_t)json_integer_value(o);
	return end;
}

/* Element idx at off of handle di: typed as the consumer's Tuple2 (legacyconn.c), noted as a
 * split whose "start" is the stored offset, the element's last 8 bytes. */
static int
consumer_element(struct setctx *c, size_t di, size_t idx, int64_t off)
{
	const struct ckpt_fmeta_opdata *d = &c->sp->opdata[di];
	const unsigned char *p = hdata(c, di);
	uint64_t end = off < 0 ? 0 : element_end(c, di, (uint64_t)off);
	char where[300], why[1200];
	json_t *v = NULL;
	struct rsplit *r;

	snprintf(where, sizeof where, "operator %s subtask %u %s element %zu", c->s->ops[d->op].id, d->subtask,
		 CONSUMER_STATE, idx);
	if (off < 0 || (uint64_t)off + 8 > end)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, hwhere(c, di), "%s: it lies outside the state", where);
	if (ckpt_fser_legacy_typed(FLEGACY_CONSUMER, p + off, end - (uint64_t)off, d->at + (uint64_t)off, where, &v, why,
				   sizeof why, c->e) < 0)
		return -1;
	if (v == NULL)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, hwhere(c, di), "%s: %s", where, why);
	if (ckpt_grow(&c->sl, &c->slcap, c->nsl + 1, sizeof *c->sl, 16, c->e) < 0 ||
	    (c->sl[c->nsl].topic = strdup(json_string_value(json_object_get(v, "topic")))) == NULL) {
		json_decref(v);
		return c->e->kind ? -1 : ckpt_err_nomem(c->e, "");
	}
	r = &c->sl[c->nsl++];
	r->partition = (int32_t)json_integer_value(json_object_get(v, "partition"));
	json_decref(v);
	r->at = d->at + (size_t)end - 8;
	r->start = (int64_t)ckpt_load_be(p + end - 8, 8);
	r->stop = 0;
	r->subtask = d->subtask;
	r->d = di;
	r->eoff = (size_t)off;
	r->eend = (size_t)end;
	r->removed = r->set = 0;
	return 0;
}

/* Every element of operator k's consumer state, in every subtask's handle (inline, or a file's). */
static int
consumer_elements(struct setctx *c, size_t k)
{
	for (size_t i = 0; i < c->sp->nopdata; i++) {
		const json_t *st, *o;
		size_t j, m;

		if (c->sp->opdata[i].op != k)
			continue;
		json_array_foreach(c->sp->opdata[i].states, j, st) {
			if (strcmp(json_string_value(json_object_get(st, "name")), CONSUMER_STATE) != 0)
				continue;
			if (read_file(c, i) < 0)
				return -1;
			json_array_foreach(json_object_get(st, "offsets"), m, o)
				if (consumer_element(c, i, m, json_integer_value(o)) < 0)
					return -1;
		}
	}
	return 0;
}

/* The offset FlinkKafkaConsumer stores for x on r, the last one read: where it resumes less one,
 * a sentinel, or r's moved; -1 refused. */
static int
consumer_value(struct setctx *c, const struct ckpt_flink_offset_set *x, const struct rsplit *r, int64_t *v)
{
	if (!x->rel) {
		*v = x->value >= 0 ? x->value - 1 : CONSUMER_EARLIEST + (x->value == -2 ? 0 : x->value == -1 ? 1 : 2);
		return 0;
	}
	if (r->start < -1)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "--set-offset %s: subtask %u's FlinkKafkaConsumer state "
				    "holds %s:%d at a sentinel, not an offset to count from", x->text, r->subtask, x->topic,
				    (int)x->partition);
	*v = r->start + x->value;
	if (*v < -1)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "--set-offset %s: the starting offset %lld moved by "
				    "%+lld is below 0", x->text, (long long)r->start + 1, (long long)x->value);
	return 0;
}

/* Every set on consumer k: each subtask's element of the partition set (a union state: every copy
 * of it), in place inline, in a new file for a file's. */
static int
set_consumer(struct setctx *c, size_t k, const struct ckpt_flink_offset_set *sets, size_t nsets,
	     struct ckpt_flink_rekey *rk)
{
	struct ckpt_bytebuf none = {0};
	char list[1000];

	for (size_t i = 0, hits = 0; i < nsets; i++, hits = 0) {
		const struct ckpt_flink_offset_set *x = &sets[i];

		if (x->kind != CKPT_OFFSET_SET)
			return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "%s %s: operator %s is a FlinkKafkaConsumer, which "
					    "reads the partitions Kafka has: only --set-offset applies", optname[x->kind],
					    x->text, c->s->ops[k].id);
		for (size_t j = 0; j < c->nsl; j++) {
			if (c->sl[j].partition != x->partition || strcmp(c->sl[j].topic, x->topic) != 0)
				continue;
			if (consumer_value(c, x, &c->sl[j], &c->sl[j].v) < 0)
				return -1;
			c->sl[j].set = 1;
			hits++;
		}
		if (hits == 0) {
			held(c, list, sizeof list);
			return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "--set-offset %s: FlinkKafkaConsumer %s holds no "
					    "%s:%d (it holds %s)", x->text, c->s->ops[k].id, x->topic, (int)x->partition, list);
		}
	}
	for (size_t di = 0; di < c->sp->nopdata; di++) {
		int touched = 0;

		for (size_t i = 0; i < c->nsl; i++)
			touched |= c->sl[i].d == di && c->sl[i].set;
		if (touched && c->sp->opdata[di].file && rebuild_handle(c, di, &none, 0, rk) < 0)
			return -1;
		for (size_t i = 0; touched && !c->sp->opdata[di].file && i < c->nsl; i++)
			if (c->sl[i].d == di && c->sl[i].set && splice_at(c, rk, c->sl[i].at, c->sl[i].v) < 0)
				return -1;
	}
	return 0;
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
		       const char *dir, struct ckpt_bytes *out, json_t **relative, struct ckpt_err *e)
{
	struct ckpt_fmeta_spans sp;
	struct ckpt_snapshot *s = ckpt_fmeta_decode_spans(buf, len, meta, &sp, e);
	struct setctx c = {.meta = meta, .buf = buf, .s = s, .sp = &sp, .dir = dir, .e = e};
	struct ckpt_flink_rekey rk = {0};
	long k;
	int rc = -1, edits = 0, consumer = 0;

	if (s == NULL || (s->backing = ckpt_flink_backing_new(meta, e)) == NULL || (c.b = ckpt_fstate_backing(s, e)) == NULL ||
	    (c.fdata = ckpt_calloc(sp.nopdata + 1, sizeof *c.fdata, e)) == NULL ||
	    (c.fwhere = ckpt_calloc(sp.nopdata + 1, sizeof *c.fwhere, e)) == NULL)
		goto out;
	if ((k = pick_consumer(&c, source)) < -1 || (k >= 0 && (consumer = 1, consumer_elements(&c, (size_t)k) < 0)) ||
	    (!consumer && ((k = pick_source(&c, source, sets, nsets)) < 0 || reader_splits(&c, (size_t)k) < 0)))
		goto out;
	for (size_t i = 0; i < nsets; i++)
		edits |= sets[i].kind != CKPT_OFFSET_SET;
	for (size_t i = 0; i < c.nsl; i++) /* a file's splits are set in a new file */
		edits |= sp.opdata[c.sl[i].d].file;
	if ((rk.splices = ckpt_calloc(2 * nsets + c.nsl + sp.nopdata + 2, sizeof *rk.splices, e)) == NULL ||
	    (consumer && (named_twice(&c, sets, nsets) < 0 || set_consumer(&c, (size_t)k, sets, nsets, &rk) < 0)))
		goto out;
	if (!consumer && edits && edit_partitions(&c, (size_t)k, sets, nsets, &rk) < 0)
		goto out;
	for (size_t i = 0; !consumer && !edits && i < nsets; i++)
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
	for (size_t i = 0; c.fdata && c.fwhere && i < sp.nopdata; i++) {
		free(c.fdata[i].p);
		free(c.fwhere[i]);
	}
	free(c.fdata);
	free(c.fwhere);
	json_decref(c.names);
	ckpt_fmeta_spans_release(&sp);
	ckpt_snapshot_free(s);
	return rc;
}
