/* consumeroff.c: ckpt-merge --set-offset on FlinkKafkaConsumer's union state of partitions and
 * offsets ("topic-partition-offset-states"): every subtask's element of a partition set, inline
 * in place or in a new file of the savepoint for state held in a file. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readers.h"
#include "model/model.h"

#define CONSUMER_STATE "topic-partition-offset-states"

/* KafkaTopicPartitionStateSentinel's EARLIEST_OFFSET; LATEST_OFFSET and GROUP_OFFSET follow it. */
#define CONSUMER_EARLIEST (-915623761775LL)

/* Does operator k hold FlinkKafkaConsumer's "topic-partition-offset-states" in a handle? */
static int
consumer_op(const struct ckpt_fsetoff *c, size_t k)
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
long
ckpt_fsetoff_pick_consumer(struct ckpt_fsetoff *c, const char *source)
{
	long k = -1;
	int kafka = 0, r;

	for (size_t i = 0; i < c->s->nops; i++) {
		const struct ckpt_operator *op = &c->s->ops[i];

		if (source && strcmp(op->id, source) != 0 && (op->uid == NULL || strcmp(op->uid, source) != 0))
			continue;
		if (source == NULL && (r = ckpt_fsetoff_kafka_source(c, op)) != 0)
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
element_end(const struct ckpt_fsetoff *c, size_t di, uint64_t off)
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
consumer_element(struct ckpt_fsetoff *c, size_t di, size_t idx, int64_t off)
{
	const struct ckpt_fmeta_opdata *d = &c->sp->opdata[di];
	const unsigned char *p = ckpt_fsetoff_hdata(c, di);
	uint64_t end = off < 0 ? 0 : element_end(c, di, (uint64_t)off);
	char where[300], why[1200];
	json_t *v = NULL;
	struct ckpt_fsetoff_split *r;

	snprintf(where, sizeof where, "operator %s subtask %u %s element %zu", c->s->ops[d->op].id, d->subtask,
		 CONSUMER_STATE, idx);
	if (off < 0 || (uint64_t)off + 8 > end)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, ckpt_fsetoff_hwhere(c, di), "%s: it lies outside the state", where);
	if (ckpt_fser_legacy_typed(FLEGACY_CONSUMER, p + off, end - (uint64_t)off, d->at + (uint64_t)off, where, &v, why,
				   sizeof why, c->e) < 0)
		return -1;
	if (v == NULL)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, ckpt_fsetoff_hwhere(c, di), "%s: %s", where, why);
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
int
ckpt_fsetoff_consumer_elements(struct ckpt_fsetoff *c, size_t k)
{
	for (size_t i = 0; i < c->sp->nopdata; i++) {
		const json_t *st, *o;
		size_t j, m;

		if (c->sp->opdata[i].op != k)
			continue;
		json_array_foreach(c->sp->opdata[i].states, j, st) {
			if (strcmp(json_string_value(json_object_get(st, "name")), CONSUMER_STATE) != 0)
				continue;
			if (ckpt_fsetoff_read_file(c, i) < 0)
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
consumer_value(struct ckpt_fsetoff *c, const struct ckpt_flink_offset_set *x, const struct ckpt_fsetoff_split *r, int64_t *v)
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
int
ckpt_fsetoff_set_consumer(struct ckpt_fsetoff *c, size_t k, const struct ckpt_flink_offset_set *sets, size_t nsets,
	     struct ckpt_flink_rekey *rk)
{
	struct ckpt_bytebuf none = {0};
	char list[1000];

	for (size_t i = 0, hits = 0; i < nsets; i++, hits = 0) {
		const struct ckpt_flink_offset_set *x = &sets[i];

		if (x->kind != CKPT_OFFSET_SET)
			return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "%s %s: operator %s is a FlinkKafkaConsumer, which "
					    "reads the partitions Kafka has: only --set-offset applies", ckpt_fsetoff_optname[x->kind],
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
			ckpt_fsetoff_held(c, list, sizeof list);
			return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "--set-offset %s: FlinkKafkaConsumer %s holds no "
					    "%s:%d (it holds %s)", x->text, c->s->ops[k].id, x->topic, (int)x->partition, list);
		}
	}
	for (size_t di = 0; di < c->sp->nopdata; di++) {
		int touched = 0;

		for (size_t i = 0; i < c->nsl; i++)
			touched |= c->sl[i].d == di && c->sl[i].set;
		if (touched && c->sp->opdata[di].file && ckpt_fsetoff_rebuild_handle(c, di, &none, 0, rk) < 0)
			return -1;
		for (size_t i = 0; touched && !c->sp->opdata[di].file && i < c->nsl; i++)
			if (c->sl[i].d == di && c->sl[i].set && ckpt_fsetoff_splice_at(c, rk, c->sl[i].at, c->sl[i].v) < 0)
				return -1;
	}
	return 0;
}
