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

/* Element idx of the reader state at off of handle di's data: typed as a Kafka split, noted. */
static int
reader_split(struct ckpt_fsetoff *c, const struct ckpt_operator *op, size_t di, size_t idx, int64_t off)
{
	const struct ckpt_fmeta_opdata *d = &c->sp->opdata[di];
	const unsigned char *p = ckpt_fsetoff_hdata(c, di);
	char where[300], loc[1400], why[1200];
	json_t *v = NULL;
	size_t n, tl;
	struct ckpt_fsetoff_split *r;

	snprintf(where, sizeof where, "operator %s subtask %u %s element %zu", op->id, d->subtask, CKPT_FSETOFF_READER, idx);
	if (off < 0 || (uint64_t)off + 4 > d->n || (n = ckpt_load_be(p + off, 4)) > d->n - (size_t)off - 4)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, ckpt_fsetoff_hwhere(c, di), "%s: its length lies outside the state", where);
	snprintf(loc, sizeof loc, "%s: %s", ckpt_fsetoff_hwhere(c, di), where); /* the framing's own errors name the file too */
	if (ckpt_fser_split_typed(p + off + 4, n, d->at + (size_t)off + 4, loc, &v, why, sizeof why, c->e) < 0)
		return -1;
	if (v == NULL || !json_is_string(json_object_get(v, "connector")) ||
	    strcmp(json_string_value(json_object_get(v, "connector")), "kafka") != 0) {
		json_decref(v);
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, ckpt_fsetoff_hwhere(c, di), "%s: not a Kafka split ckpt can type: %s", where,
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
reader_splits(struct ckpt_fsetoff *c, size_t k)
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
			if (strcmp(json_string_value(json_object_get(st, "name")), CKPT_FSETOFF_READER) != 0)
				continue;
			found++;
			if (ckpt_fsetoff_read_file(c, i) < 0)
				return -1;
			json_array_foreach(json_object_get(st, "offsets"), m, o)
				if (reader_split(c, op, i, m, json_integer_value(o)) < 0)
					return -1;
		}
	}
	for (size_t i = 0; i < op->nsubtasks; i++)
		for (size_t j = 0; j < op->subtasks[i].nops; j++)
			if (strcmp(op->subtasks[i].ops[j].name, CKPT_FSETOFF_READER) == 0 && found-- == 0)
				return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "operator %s: --set-offset: the "
						    "reader state is in a file-merging segment: not supported yet (inline or "
						    "in a file of its own only)", op->id);
	return 0;
}

static void
free_splits(struct ckpt_fsetoff *c)
{
	for (size_t i = 0; i < c->nsl; i++)
		free(c->sl[i].topic);
	c->nsl = 0;
}

/* Do operator k's readers hold every topic the sets name (1), some (2), none (0)?  -1: an error. */
static int
holds_topics(struct ckpt_fsetoff *c, size_t k, const struct ckpt_flink_offset_set *sets, size_t nsets)
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
by_topic(struct ckpt_fsetoff *c, const size_t *ks, size_t n, const struct ckpt_flink_offset_set *sets, size_t nsets)
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
 * alone hold the topics named.  Its index, its enumerator noted (ckpt_fsetoff_kafka_source), or -1. */
static long
pick_source(struct ckpt_fsetoff *c, const char *source, const struct ckpt_flink_offset_set *sets, size_t nsets)
{
	size_t *ks = ckpt_calloc(c->s->nops + 1, sizeof *ks, c->e), n = 0;
	long k = -1;
	int r;

	for (size_t i = 0; ks && i < c->s->nops; i++) {
		const struct ckpt_operator *op = &c->s->ops[i];

		if (source && strcmp(op->id, source) != 0 && (op->uid == NULL || strcmp(op->uid, source) != 0))
			continue;
		if ((r = ckpt_fsetoff_kafka_source(c, op)) < 0)
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
	if (k >= 0 && ckpt_fsetoff_kafka_source(c, &c->s->ops[k]) < 0)
		k = -1;
out:
	free(ks);
	return k;
}

/* The enumerator's own split of r (its i32 length, topic, partition), when it records splits: its
 * starting offset set to v too.  None there: nothing to change; two: refused. */
static int
enum_split(struct ckpt_fsetoff *c, struct ckpt_flink_rekey *rk, const struct ckpt_fsetoff_split *r, const char *text, int64_t v)
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
	return found ? ckpt_fsetoff_splice_at(c, rk, at, v) : 0;
}

/* The reader split x sets and its new starting offset, checked; NULL with the error set. */
static struct ckpt_fsetoff_split *
set_target(struct ckpt_fsetoff *c, const struct ckpt_flink_offset_set *x, int64_t *v)
{
	struct ckpt_fsetoff_split *r = NULL;
	char list[1000];

	for (size_t i = 0; i < c->nsl; i++)
		if (c->sl[i].partition == x->partition && strcmp(c->sl[i].topic, x->topic) == 0)
			r = &c->sl[i];
	if (r == NULL) {
		ckpt_fsetoff_held(c, list, sizeof list);
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
apply(struct ckpt_fsetoff *c, const struct ckpt_flink_offset_set *x, struct ckpt_flink_rekey *rk)
{
	int64_t v;
	struct ckpt_fsetoff_split *r = set_target(c, x, &v);

	if (r == NULL || ckpt_fsetoff_splice_at(c, rk, r->at, v) < 0)
		return -1;
	return c->coord_at ? enum_split(c, rk, r, x->text, v) : 0;
}

/* ------------------------------------------------ --add-partition and --remove-partition */

/* Adding or removing a split changes the reader state's length: each subtask's handle so changed
 * is written anew from its state count to the end of its inline data (the removed elements cut,
 * the added ones after the reader state's last element, every offset after them moved), and the
 * enumerator's state anew from its typed form (KafkaSourceEnumStateSerializer, its own version). */

static struct ckpt_fsetoff_split *
find_split(struct ckpt_fsetoff *c, const char *topic, int32_t part)
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
	uint32_t h = (uint32_t)ckpt_fser_java_mutf8_hash((const unsigned char *)topic, strlen(topic));

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
enum_assigned(json_t *en, const struct ckpt_fsetoff_split *r, int64_t start, int setstart, uint32_t owner)
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
enum_splice(struct ckpt_fsetoff *c, size_t k, json_t *en, struct ckpt_flink_rekey *rk)
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

/* Of operator k, the handle of subtask sub that holds the reader state, or -1. */
static long
reader_handle(const struct ckpt_fsetoff *c, size_t k, uint32_t sub)
{
	for (size_t i = 0; i < c->sp->nopdata; i++) {
		const struct ckpt_fmeta_opdata *d = &c->sp->opdata[i];
		const json_t *st;
		size_t j;

		if (d->op != k || d->subtask != sub)
			continue;
		json_array_foreach(d->states, j, st)
			if (strcmp(json_string_value(json_object_get(st, "name")), CKPT_FSETOFF_READER) == 0)
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
add_one(struct ckpt_fsetoff *c, size_t k, const struct ckpt_flink_offset_set *x, json_t *en, struct ckpt_bytebuf *ins,
	size_t *nadd)
{
	const struct ckpt_operator *op = &c->s->ops[k];
	struct ckpt_fsetoff_split *r = find_split(c, x->topic, x->partition), a = {.topic = (char *)x->topic, .partition = x->partition};
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
remove_one(struct ckpt_fsetoff *c, const struct ckpt_flink_offset_set *x, json_t *en)
{
	struct ckpt_fsetoff_split *r = find_split(c, x->topic, x->partition), a = {.topic = (char *)x->topic, .partition = x->partition};
	char list[1000];

	if (r == NULL && enum_entry(en, x->topic, x->partition))
		return enum_assigned(en, &a, 0, 0, 0) < 0 ? ckpt_err_nomem(c->e, "") : 0;
	if (r == NULL) {
		ckpt_fsetoff_held(c, list, sizeof list);
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "--remove-partition %s: no reader holds %s:%d (the "
				    "readers hold %s)", x->text, x->topic, (int)x->partition, list);
	}
	r->removed = 1;
	return enum_assigned(en, r, r->start, 0, r->subtask) < 0 ? ckpt_err_nomem(c->e, "") : 0;
}

/* --set-offset x beside additions or removals: the split marked, the enumerator's split set. */
static int
set_one(struct ckpt_fsetoff *c, const struct ckpt_flink_offset_set *x, json_t *en)
{
	int64_t v;
	struct ckpt_fsetoff_split *r = set_target(c, x, &v);
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

/* Every set, addition and removal on source k: handles with splits added or removed written
 * anew (and those of a file with a split set), the others' offsets set in place, the enumerator
 * written anew. */
static int
edit_partitions(struct ckpt_fsetoff *c, size_t k, const struct ckpt_flink_offset_set *sets, size_t nsets,
		struct ckpt_flink_rekey *rk)
{
	const struct ckpt_bytes *co = c->s->ops[k].coordinator;
	size_t n = c->sp->nopdata + 1, *nadd = ckpt_calloc(n, sizeof *nadd, c->e);
	struct ckpt_bytebuf *ins = ckpt_calloc(n, sizeof *ins, c->e);
	json_t *en = NULL;
	char why[1200];
	int rc = -1;

	if (nadd == NULL || ins == NULL || ckpt_fsetoff_named_twice(c, sets, nsets) < 0)
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
		if (touched && ckpt_fsetoff_rebuild_handle(c, di, &ins[di], nadd[di], rk) < 0)
			goto out;
		for (size_t i = 0; !touched && i < c->nsl; i++)
			if (c->sl[i].d == di && c->sl[i].set && ckpt_fsetoff_splice_at(c, rk, c->sl[i].at, c->sl[i].v) < 0)
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
	struct ckpt_fsetoff c = {.meta = meta, .buf = buf, .s = s, .sp = &sp, .dir = dir, .e = e};
	struct ckpt_flink_rekey rk = {0};
	long k;
	int rc = -1, edits = 0, consumer = 0;

	if (s == NULL || (s->backing = ckpt_flink_backing_new(meta, e)) == NULL || (c.b = ckpt_fstate_backing(s, e)) == NULL ||
	    (c.fdata = ckpt_calloc(sp.nopdata + 1, sizeof *c.fdata, e)) == NULL ||
	    (c.fwhere = ckpt_calloc(sp.nopdata + 1, sizeof *c.fwhere, e)) == NULL)
		goto out;
	if ((k = ckpt_fsetoff_pick_consumer(&c, source)) < -1 || (k >= 0 && (consumer = 1, ckpt_fsetoff_consumer_elements(&c, (size_t)k) < 0)) ||
	    (!consumer && ((k = pick_source(&c, source, sets, nsets)) < 0 || reader_splits(&c, (size_t)k) < 0)))
		goto out;
	for (size_t i = 0; i < nsets; i++)
		edits |= sets[i].kind != CKPT_OFFSET_SET;
	for (size_t i = 0; i < c.nsl; i++) /* a file's splits are set in a new file */
		edits |= sp.opdata[c.sl[i].d].file;
	if ((rk.splices = ckpt_calloc(2 * nsets + c.nsl + sp.nopdata + 2, sizeof *rk.splices, e)) == NULL ||
	    (consumer && (ckpt_fsetoff_named_twice(&c, sets, nsets) < 0 || ckpt_fsetoff_set_consumer(&c, (size_t)k, sets, nsets, &rk) < 0)))
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
