/* operators.c: the built-in operators that keep no files: source, map, filter, keyed_sum, window, broadcast_state, discard_sink. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "kvtable.h"

/*
 * A per-record delay that induces back-pressure.  Delays are owed and paid a millisecond at a time
 * by sleeping: the same rate on average without a spinning thread starving the others.
 */
static int
delay_us(struct ckpt_task *t, int64_t us)
{
	int64_t start;

	t->delay_debt_ns += us * 1000;
	if (t->delay_debt_ns < 1000000)
		return 0;
	start = ckpt_now_ns();
	struct timespec ts = {t->delay_debt_ns / 1000000000, t->delay_debt_ns % 1000000000};

	nanosleep(&ts, NULL);
	t->delay_debt_ns -= ckpt_now_ns() - start;
	return 1;
}

/* ---- source: splits of a keyed sequence; offsets in list (or union) state */

struct split {
	uint32_t id;
	int64_t off;
	uint64_t key; /* off mod keys, kept incrementally: no division per record */
	int64_t v7;   /* (off + id) mod 7 */
};

struct source {
	struct split *sp;
	size_t n, cur;
	int64_t since_wm;
};

static int
parse_split(const struct ckpt_bytes *b, struct split *s)
{
	char tmp[64];
	unsigned id;
	long long off;

	if (b->len == 0 || b->len >= sizeof tmp)
		return -1;
	memcpy(tmp, b->p, b->len);
	tmp[b->len] = '\0';
	if (sscanf(tmp, "s%u:%lld", &id, &off) != 2 || off < 0)
		return -1;
	s->id = id;
	s->off = off;
	return 0;
}

static int
source_open(struct ckpt_task *t, const struct ckpt_subtask *r, struct ckpt_err *e)
{
	struct source *s = ckpt_calloc(1, sizeof *s, e);
	const struct ckpt_opstate *os = ckpt_subtask_opstate(r, "offsets");
	size_t n = os ? os->n : 0;

	if (s == NULL)
		return -1;
	t->ost = s;
	s->sp = ckpt_calloc(n + 1, sizeof *s->sp, e);
	if (s->sp == NULL)
		return -1;
	if (!t->restoring) {
		/* a fresh start: split i belongs to subtask i */
		s->sp[s->n++] = (struct split){t->sub, 0, 0, t->sub % 7};
		return 0;
	}
	/* one state keeps its mode, as Flink refuses a list state restored as union state and back */
	if (os && (os->mode == CKPT_MODE_UNION) != (t->v->prm.union_offsets != 0))
		return ckpt_err_set(e, CKPT_ERR_INPUT, t->v->id,
				    "state \"offsets\" is %s state in the snapshot and %s state in the pipeline",
				    ckpt_mode_name(os->mode), t->v->prm.union_offsets ? "union" : "list");
	for (size_t i = 0; i < n; i++) {
		struct split sp;
		size_t k;

		if (parse_split(&os->entries[i], &sp) < 0)
			return ckpt_err_set(e, CKPT_ERR_INPUT, t->v->id, "offsets entry %zu is not \"sN:OFFSET\"", i);
		/* union state: every subtask sees every split and keeps its own share */
		if (t->v->prm.union_offsets && sp.id % t->v->parallelism != t->sub)
			continue;
		/*
		 * A split is read once however often the state names it: a snapshot written by ckpt-merge
		 * holds the whole union in every subtask, and the restore unites those copies again.  Like
		 * Flink's Kafka consumer, which restores its union into a map by partition.
		 */
		for (k = 0; k < s->n && s->sp[k].id != sp.id; k++)
			;
		if (k < s->n) {
			if (s->sp[k].off != sp.off)
				return ckpt_err_set(e, CKPT_ERR_INPUT, t->v->id,
						    "split s%u restored at two offsets, %" PRId64 " and %" PRId64, sp.id,
						    s->sp[k].off, sp.off);
			continue;
		}
		sp.key = (uint64_t)sp.off % t->v->prm.keys;
		sp.v7 = (sp.off + sp.id) % 7;
		s->sp[s->n++] = sp;
	}
	return 0;
}

static int
source_emit_some(struct ckpt_task *t)
{
	struct source *s = t->ost;
	const struct ckpt_pl_params *q = &t->v->prm;
	int lim = t->job->p->unaligned ? 0 : 256; /* unaligned: the records until the next look */

	for (int k = 0; k < 256 && !atomic_load(&t->cancel); k++) {
		struct split *sp;
		struct ckpt_rec r;

		if (s->n == 0)
			return 1;
		/* no priority events reach a source (it has no inputs): its triggers are mail, read between calls */
		if (k >= lim) {
			/* unaligned: wait for output room here, between records, where a checkpoint may run */
			if (ckpt_ua_boundary(t) < 0)
				return 0;
			lim = k + (int)t->ua_room;
			t->ua_room = 0;
		}
		if (s->cur >= s->n)
			s->cur = 0;
		sp = &s->sp[s->cur];
		if (q->records > 0 && sp->off >= q->records) {
			s->sp[s->cur] = s->sp[--s->n];
			continue;
		}
		r.key = sp->key;
		r.value = 1 + sp->v7;
		r.ts = sp->off;
		sp->off++;
		if (++sp->key == q->keys)
			sp->key = 0;
		if (++sp->v7 == 7)
			sp->v7 = 0;
		s->cur++;
		ckpt_task_emit(t, &r);
		task_count_record(t);
		/* after a pause, look at the mail before going on */
		if (q->delay_us && delay_us(t, q->delay_us))
			k = 256;
		if (++s->since_wm >= q->watermark_every) {
			int64_t wm = INT64_MAX;

			s->since_wm = 0;
			for (size_t i = 0; i < s->n; i++)
				if (s->sp[i].off - 1 < wm)
					wm = s->sp[i].off - 1;
			ckpt_task_emit_watermark(t, wm);
		}
	}
	return 0;
}

static int
source_snapshot(struct ckpt_task *t, int64_t id, struct ckpt_subtask *st, struct ckpt_err *e)
{
	struct source *s = t->ost;
	int k = ckpt_st_add_opstate(st, "offsets", t->v->prm.union_offsets ? CKPT_MODE_UNION : CKPT_MODE_LIST, e);

	(void)id;
	if (k < 0)
		return -1;
	for (size_t i = 0; i < s->n; i++) {
		char b[64];
		int len = snprintf(b, sizeof b, "s%u:%" PRId64, s->sp[i].id, s->sp[i].off);

		if (ckpt_st_add_entry(st, (size_t)k, b, (size_t)len, e) < 0)
			return -1;
	}
	return 0;
}

static void
free_ost(struct ckpt_task *t)
{
	struct source *s = t->ost;

	if (s)
		free(s->sp);
	free(s);
	t->ost = NULL;
}

/* ---- map and filter */

static void
map_record(struct ckpt_task *t, const struct ckpt_rec *r, size_t input)
{
	struct ckpt_rec o = *r;

	(void)input;
	if (t->v->prm.delay_us)
		delay_us(t, t->v->prm.delay_us);
	o.value += t->v->prm.add;
	ckpt_task_emit(t, &o);
}

static void
filter_record(struct ckpt_task *t, const struct ckpt_rec *r, size_t input)
{
	(void)input;
	delay_us(t, t->v->prm.delay_us);
	if (r->value % t->v->prm.modulo != 0)
		ckpt_task_emit(t, r);
}

/* ---- keyed operators: state by key group */

static int
check_kg(struct ckpt_task *t, uint32_t kg, struct ckpt_err *e)
{
	uint32_t first, last;

	ckpt_key_group_range(t->v->max_parallelism, t->v->parallelism, t->sub, &first, &last);
	if (kg < first || kg > last)
		return ckpt_err_set(e, CKPT_ERR_INPUT, t->v->id,
				    "subtask %u restored key group %u outside its range %u-%u", t->sub, kg, first, last);
	return 0;
}

static int
kv_field(const struct ckpt_bytes *b, char *out, size_t size)
{
	if (b->len == 0 || b->len >= size)
		return -1;
	memcpy(out, b->p, b->len);
	out[b->len] = '\0';
	return 0;
}

/* Restore keyed entries of one state: key "K" or "K@NS", value a number. */
static int
keyed_open(struct ckpt_task *t, const struct ckpt_subtask *r, const char *state, struct ckpt_err *e)
{
	struct ckpt_kvt *kv = ckpt_calloc(1, sizeof *kv, e);

	if (kv == NULL)
		return -1;
	t->ost = kv;
	for (size_t i = 0; r && r->kv && i < r->nkv; i++) {
		char key[64], val[64];
		unsigned long long k;
		long long ns = 0, v;
		int64_t *slot;

		if (strcmp(r->kv[i].state, state) != 0)
			continue;
		if (kv_field(&r->kv[i].key, key, sizeof key) < 0 || kv_field(&r->kv[i].value, val, sizeof val) < 0 ||
		    sscanf(key, "%llu@%lld", &k, &ns) < 1 || sscanf(val, "%lld", &v) != 1)
			return ckpt_err_set(e, CKPT_ERR_INPUT, t->v->id, "keyed state \"%s\": entry %zu is malformed",
					    state, i);
		if (check_kg(t, r->kv[i].key_group, e) < 0)
			return -1;
		if ((slot = ckpt_kvt_get(kv, k, ns, 1)) == NULL)
			return ckpt_err_nomem(e, t->v->id);
		*slot = v;
	}
	return 0;
}

static int
keyed_snapshot(struct ckpt_task *t, const char *state, int with_ns, struct ckpt_subtask *st, struct ckpt_err *e)
{
	struct ckpt_kvt *kv = t->ost;

	st->keyed = 1;
	ckpt_key_group_range(t->v->max_parallelism, t->v->parallelism, t->sub, &st->kg_first, &st->kg_last);
	for (size_t i = 0; i < kv->cap; i++) {
		const struct ckpt_kvslot *s = &kv->s[i];
		char key[64], val[32];

		if (!s->used)
			continue;
		if (with_ns)
			snprintf(key, sizeof key, "%" PRIu64 "@%" PRId64, s->k, s->ns);
		else
			snprintf(key, sizeof key, "%" PRIu64, s->k);
		snprintf(val, sizeof val, "%" PRId64, s->v);
		if (ckpt_st_add_kv(st, state, ckpt_key_group_of(s->k, t->v->max_parallelism), key, val, e) < 0)
			return -1;
	}
	return 0;
}

static void
free_kv(struct ckpt_task *t)
{
	if (t->ost)
		ckpt_kvt_free(t->ost);
	free(t->ost);
	t->ost = NULL;
}

static int
sum_open(struct ckpt_task *t, const struct ckpt_subtask *r, struct ckpt_err *e)
{
	return keyed_open(t, r, "sum", e);
}

static void
sum_record(struct ckpt_task *t, const struct ckpt_rec *r, size_t input)
{
	int64_t *v = ckpt_kvt_get(t->ost, r->key, 0, 1);
	struct ckpt_rec o = *r;

	(void)input;
	if (v == NULL)
		return;
	*v += r->value;
	o.value = *v;
	ckpt_task_emit(t, &o);
}

static int
sum_snapshot(struct ckpt_task *t, int64_t id, struct ckpt_subtask *st, struct ckpt_err *e)
{
	(void)id;
	return keyed_snapshot(t, "sum", 0, st, e);
}

/* ---- event-time tumbling window: a sum per key and window, fired when the watermark passes its end */

static int
window_open(struct ckpt_task *t, const struct ckpt_subtask *r, struct ckpt_err *e)
{
	return keyed_open(t, r, "window", e);
}

static void
window_record(struct ckpt_task *t, const struct ckpt_rec *r, size_t input)
{
	int64_t size = t->v->prm.size_ms, start = r->ts - (r->ts % size + size) % size;
	int64_t *v;

	(void)input;
	if (start + size - 1 <= t->wm_in)
		return; /* late: its window already fired */
	if ((v = ckpt_kvt_get(t->ost, r->key, start, 1)) != NULL)
		*v += r->value;
}

static void
window_watermark(struct ckpt_task *t, int64_t wm)
{
	struct ckpt_kvt *kv = t->ost;
	int64_t size = t->v->prm.size_ms;

	for (size_t i = 0; i < kv->cap;) {
		struct ckpt_kvslot s = kv->s[i];

		if (s.used && s.ns + size - 1 <= wm) {
			struct ckpt_rec o = {s.k, s.v, s.ns + size - 1};

			ckpt_task_emit(t, &o);
			ckpt_kvt_del(kv, s.k, s.ns);
			continue; /* the deletion may have shifted another entry into slot i */
		}
		i++;
	}
}

static int
window_snapshot(struct ckpt_task *t, int64_t id, struct ckpt_subtask *st, struct ckpt_err *e)
{
	(void)id;
	return keyed_snapshot(t, "window", 1, st, e);
}

/* ---- broadcast state: the broadcast input sets rules (key -> value), the other input gets value + rule */

static int
bcast_open(struct ckpt_task *t, const struct ckpt_subtask *r, struct ckpt_err *e)
{
	const struct ckpt_opstate *os = ckpt_subtask_opstate(r, "rules");
	struct ckpt_kvt *kv = ckpt_calloc(1, sizeof *kv, e);

	if (kv == NULL)
		return -1;
	t->ost = kv;
	for (size_t i = 0; os && i < os->n; i++) {
		char tmp[80];
		unsigned long long k;
		long long v;
		int64_t *slot;

		if (kv_field(&os->entries[i], tmp, sizeof tmp) < 0 || sscanf(tmp, "%llu=%lld", &k, &v) != 2)
			return ckpt_err_set(e, CKPT_ERR_INPUT, t->v->id, "rules entry %zu is not \"KEY=VALUE\"", i);
		if ((slot = ckpt_kvt_get(kv, k, 0, 1)) == NULL)
			return ckpt_err_nomem(e, t->v->id);
		*slot = v;
	}
	return 0;
}

static void
bcast_record(struct ckpt_task *t, const struct ckpt_rec *r, size_t input)
{
	const struct ckpt_pl_edge *ed = &t->job->p->e[t->v->in[input]];
	int64_t *v;
	struct ckpt_rec o = *r;

	if (ed->part == PART_BROADCAST) {
		if ((v = ckpt_kvt_get(t->ost, r->key, 0, 1)) != NULL)
			*v = r->value;
		return;
	}
	if ((v = ckpt_kvt_get(t->ost, r->key, 0, 0)) != NULL)
		o.value += *v;
	ckpt_task_emit(t, &o);
}

static int
bcast_snapshot(struct ckpt_task *t, int64_t id, struct ckpt_subtask *st, struct ckpt_err *e)
{
	struct ckpt_kvt *kv = t->ost;
	int k = ckpt_st_add_opstate(st, "rules", CKPT_MODE_BROADCAST, e);

	(void)id;
	if (k < 0)
		return -1;
	for (size_t i = 0; i < kv->cap; i++) {
		char b[64];
		int len;

		if (!kv->s[i].used)
			continue;
		len = snprintf(b, sizeof b, "%" PRIu64 "=%" PRId64, kv->s[i].k, kv->s[i].v);
		if (ckpt_st_add_entry(st, (size_t)k, b, (size_t)len, e) < 0)
			return -1;
	}
	return 0;
}

/* ---- discarding sink: counts what arrives */

/* Counted by the task (records_in), added to the job's total when the task ends. */
static void
discard_record(struct ckpt_task *t, const struct ckpt_rec *r, size_t input)
{
	(void)t, (void)r, (void)input;
}

extern const struct ckpt_opdef ckpt_file_sink_def;

static const struct ckpt_opdef defs[OP_NKINDS] = {
	[OP_SOURCE] = {.open = source_open, .snapshot = source_snapshot, .dispose = free_ost,
		       .emit_some = source_emit_some},
	[OP_MAP] = {.record = map_record},
	[OP_FILTER] = {.record = filter_record},
	[OP_KEYED_SUM] = {.open = sum_open, .record = sum_record, .snapshot = sum_snapshot, .dispose = free_kv},
	[OP_WINDOW] = {.open = window_open, .record = window_record, .watermark = window_watermark,
		       .snapshot = window_snapshot, .dispose = free_kv},
	[OP_BROADCAST_STATE] = {.open = bcast_open, .record = bcast_record, .snapshot = bcast_snapshot,
				.dispose = free_kv},
	[OP_DISCARD_SINK] = {.record = discard_record},
};

const struct ckpt_opdef *
ckpt_op_def(enum ckpt_op_kind k)
{
	return k == OP_FILE_SINK ? &ckpt_file_sink_def : &defs[k];
}

