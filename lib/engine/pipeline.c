/* pipeline.c: the ckpt-pipeline(5) loader: validates every field and names the place of each error. */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

static const char *const op_names[OP_NKINDS] = {
	"source", "map", "filter", "keyed_sum", "window", "broadcast_state", "file_sink", "discard_sink",
};

static const char *const part_names[] = {"forward", "rescale", "rebalance", "hash", "broadcast"};

/* Parameters each operator accepts (uid everywhere). */
static const char *const op_params[OP_NKINDS][8] = {
	[OP_SOURCE] = {"uid", "records", "keys", "delay_us", "watermark_every", "union_offsets", "batch_snapshot", NULL},
	[OP_MAP] = {"uid", "add", "delay_us", NULL},
	[OP_FILTER] = {"uid", "modulo", "delay_us", NULL},
	[OP_KEYED_SUM] = {"uid", NULL},
	[OP_WINDOW] = {"uid", "size_ms", NULL},
	[OP_BROADCAST_STATE] = {"uid", NULL},
	[OP_FILE_SINK] = {"uid", "path", NULL},
	[OP_DISCARD_SINK] = {"uid", NULL},
};

const char *
ckpt_pl_op_name(enum ckpt_op_kind k)
{
	return op_names[k];
}

const char *
ckpt_pl_part_name(enum ckpt_part_kind k)
{
	return part_names[k];
}

struct ld {
	const struct ckpt_jdoc *doc;
	struct ckpt_err *e;
	struct ckpt_pipeline *p;
};

static int
check_keys(struct ld *L, const json_t *obj, const char *ptr, const char *what, const char *const *allowed)
{
	const char *key;
	json_t *val;

	if (!json_is_object(obj))
		return ckpt_jdoc_err(L->doc, L->e, ptr, "%s must be an object", what);
	json_object_foreach((json_t *)obj, key, val) {
		const char *const *a;
		char p[300];

		for (a = allowed; *a; a++)
			if (strcmp(*a, key) == 0)
				break;
		if (*a != NULL)
			continue;
		snprintf(p, sizeof p, "%s/%s", ptr, key);
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: unknown key \"%s\"", what, key);
	}
	return 0;
}

/* An optional integer in [lo, hi]; *out keeps its default when absent. */
static int
get_int(struct ld *L, const json_t *obj, const char *key, const char *ptr, const char *what,
	int64_t lo, int64_t hi, int64_t *out)
{
	json_t *v = json_object_get(obj, key);
	char p[300];
	json_int_t x;

	if (v == NULL)
		return 0;
	snprintf(p, sizeof p, "%s/%s", ptr, key);
	if (!json_is_integer(v))
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: \"%s\" must be an integer", what, key);
	x = json_integer_value(v);
	if (x < lo || x > hi)
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: %s %lld out of range (%lld to %lld)", what, key,
				     (long long)x, (long long)lo, (long long)hi);
	*out = x;
	return 0;
}

static int
get_u32(struct ld *L, const json_t *obj, const char *key, const char *ptr, const char *what,
	int64_t lo, int64_t hi, uint32_t *out)
{
	int64_t x = *out;

	if (get_int(L, obj, key, ptr, what, lo, hi, &x) < 0)
		return -1;
	*out = (uint32_t)x;
	return 0;
}

static int
get_bool(struct ld *L, const json_t *obj, const char *key, const char *ptr, const char *what, int *out)
{
	json_t *v = json_object_get(obj, key);
	char p[300];

	if (v == NULL)
		return 0;
	snprintf(p, sizeof p, "%s/%s", ptr, key);
	if (!json_is_boolean(v))
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: \"%s\" must be true or false", what, key);
	*out = json_is_true(v);
	return 0;
}

static int
get_str(struct ld *L, const json_t *obj, const char *key, const char *ptr, const char *what, char **out)
{
	json_t *v = json_object_get(obj, key);
	char p[300];

	if (v == NULL)
		return 0;
	snprintf(p, sizeof p, "%s/%s", ptr, key);
	if (!json_is_string(v) || json_string_length(v) == 0)
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: \"%s\" must be a non-empty string", what, key);
	free(*out);
	*out = ckpt_strdup(json_string_value(v), L->e);
	return *out ? 0 : -1;
}

/* One of the NULL-terminated names: its index. */
static int
get_enum(struct ld *L, const json_t *obj, const char *key, const char *ptr, const char *what,
	 const char *const *names, size_t n, int *out)
{
	json_t *v = json_object_get(obj, key);
	char p[300], list[200] = "";

	if (v == NULL)
		return 0;
	snprintf(p, sizeof p, "%s/%s", ptr, key);
	for (size_t i = 0; i < n; i++) {
		if (json_is_string(v) && strcmp(json_string_value(v), names[i]) == 0) {
			*out = (int)i;
			return 0;
		}
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", names[i]);
	}
	if (json_is_string(v))
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: unknown %s \"%s\" (one of %s)", what, key,
				     json_string_value(v), list);
	return ckpt_jdoc_err(L->doc, L->e, p, "%s: \"%s\" must be a string (one of %s)", what, key, list);
}

static int
load_params(struct ld *L, struct ckpt_pl_vertex *v, const json_t *obj, const char *ptr, const char *what)
{
	struct ckpt_pl_params *q = &v->prm;
	char p[300], w[300];

	q->keys = 16;
	q->watermark_every = 100;
	q->size_ms = 100;
	q->modulo = 2;
	if (obj == NULL)
		return 0;
	snprintf(p, sizeof p, "%s/params", ptr);
	snprintf(w, sizeof w, "%s: params", what);
	if (check_keys(L, obj, p, w, op_params[v->op]) < 0)
		return -1;
	int64_t keys = (int64_t)q->keys;
	int bsnap = 1;

	if (get_bool(L, obj, "batch_snapshot", p, w, &bsnap) < 0)
		return -1;
	q->no_batch_snapshot = !bsnap;

	if (get_int(L, obj, "records", p, w, 0, INT64_MAX / 4, &q->records) < 0 ||
	    get_int(L, obj, "keys", p, w, 1, 1 << 24, &keys) < 0 ||
	    get_int(L, obj, "delay_us", p, w, 0, 1000000, &q->delay_us) < 0 ||
	    get_int(L, obj, "watermark_every", p, w, 1, 1 << 30, &q->watermark_every) < 0 ||
	    get_bool(L, obj, "union_offsets", p, w, &q->union_offsets) < 0 ||
	    get_int(L, obj, "add", p, w, -(1LL << 40), 1LL << 40, &q->add) < 0 ||
	    get_int(L, obj, "modulo", p, w, 1, 1 << 30, &q->modulo) < 0 ||
	    get_int(L, obj, "size_ms", p, w, 1, 1LL << 40, &q->size_ms) < 0 ||
	    get_str(L, obj, "path", p, w, &q->path) < 0 || get_str(L, obj, "uid", p, w, &q->uid) < 0)
		return -1;
	q->keys = (uint64_t)keys;
	return 0;
}

/* Flink's default max parallelism: 1.5 x parallelism rounded up to a power of two, in [128, 32768]. */
static uint32_t
default_maxp(uint32_t p)
{
	uint64_t x = (uint64_t)p + p / 2, r = 1;

	while (r < x)
		r <<= 1;
	return r < 128 ? 128 : r > 32768 ? 32768 : (uint32_t)r;
}

static int
load_vertex(struct ld *L, size_t i, const json_t *obj)
{
	static const char *const keys[] = {"id", "operator", "parallelism", "max_parallelism", "params", NULL};
	struct ckpt_pl_vertex *v = &L->p->v[i];
	char ptr[64], what[300];
	const json_t *x;
	int op = -1;

	snprintf(ptr, sizeof ptr, "/vertices/%zu", i);
	snprintf(what, sizeof what, "vertex %zu", i);
	if (check_keys(L, obj, ptr, what, keys) < 0 || get_str(L, obj, "id", ptr, what, &v->id) < 0)
		return -1;
	if (v->id == NULL)
		return ckpt_jdoc_err(L->doc, L->e, ptr, "%s: missing \"id\"", what);
	for (size_t k = 0; k < i; k++)
		if (strcmp(L->p->v[k].id, v->id) == 0) {
			snprintf(ptr + strlen(ptr), sizeof ptr - strlen(ptr), "/id");
			return ckpt_jdoc_err(L->doc, L->e, ptr, "%s: duplicate vertex \"%s\"", what, v->id);
		}
	snprintf(what, sizeof what, "vertex \"%s\"", v->id);
	if (json_object_get(obj, "operator") == NULL)
		return ckpt_jdoc_err(L->doc, L->e, ptr, "%s: missing \"operator\"", what);
	if (get_enum(L, obj, "operator", ptr, what, op_names, OP_NKINDS, &op) < 0)
		return -1;
	v->op = (enum ckpt_op_kind)op;
	v->parallelism = 1;
	x = json_object_get(obj, "parallelism");
	if (json_is_string(x) && strcmp(json_string_value(x), "auto") == 0) {
		/* Flink's adaptive batch scheduler: the bound is the max parallelism, by default its setting */
		v->auto_par = 1;
		v->max_parallelism = L->p->auto_max;
		if (get_u32(L, obj, "max_parallelism", ptr, what, 1, CKPT_MAX_PARALLELISM_LIMIT,
			    &v->max_parallelism) < 0)
			return -1;
		v->parallelism = v->max_parallelism < L->p->auto_max ? v->max_parallelism : L->p->auto_max;
	} else {
		if (get_u32(L, obj, "parallelism", ptr, what, 1, 1024, &v->parallelism) < 0)
			return -1;
		v->max_parallelism = default_maxp(v->parallelism);
		if (get_u32(L, obj, "max_parallelism", ptr, what, 1, CKPT_MAX_PARALLELISM_LIMIT,
			    &v->max_parallelism) < 0)
			return -1;
	}
	if (v->max_parallelism < v->parallelism)
		return ckpt_jdoc_err(L->doc, L->e, ptr,
				     "%s: the parallelism %u is higher than the max parallelism %u", what,
				     v->parallelism, v->max_parallelism);
	if (load_params(L, v, json_object_get(obj, "params"), ptr, what) < 0)
		return -1;
	if (v->op == OP_FILE_SINK && v->prm.path == NULL)
		return ckpt_jdoc_err(L->doc, L->e, ptr, "%s: file_sink needs params \"path\"", what);
	return 0;
}

static int
find_vertex(struct ld *L, const json_t *obj, const char *key, const char *ptr, const char *what, size_t *out)
{
	json_t *x = json_object_get(obj, key);
	char p[300];

	snprintf(p, sizeof p, "%s/%s", ptr, key);
	if (x == NULL)
		return ckpt_jdoc_err(L->doc, L->e, ptr, "%s: missing \"%s\"", what, key);
	if (!json_is_string(x))
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: \"%s\" must be a string", what, key);
	for (size_t i = 0; i < L->p->nv; i++)
		if (strcmp(L->p->v[i].id, json_string_value(x)) == 0) {
			*out = i;
			return 0;
		}
	return ckpt_jdoc_err(L->doc, L->e, p, "%s: unknown vertex \"%s\"", what, json_string_value(x));
}

static int
load_edge(struct ld *L, size_t i, const json_t *obj)
{
	static const char *const keys[] = {"source", "target", "partitioner", "partition", NULL};
	struct ckpt_pl_edge *ed = &L->p->e[i];
	char ptr[64], what[64], p[80];
	int part = PART_REBALANCE, pt = CKPT_PIPELINED;
	json_t *x;

	snprintf(ptr, sizeof ptr, "/edges/%zu", i);
	snprintf(what, sizeof what, "edge %zu", i);
	if (check_keys(L, obj, ptr, what, keys) < 0 || find_vertex(L, obj, "source", ptr, what, &ed->source) < 0 ||
	    find_vertex(L, obj, "target", ptr, what, &ed->target) < 0 ||
	    get_enum(L, obj, "partitioner", ptr, what, part_names, 5, &part) < 0)
		return -1;
	ed->part = (enum ckpt_part_kind)part;
	if ((x = json_object_get(obj, "partition")) != NULL) {
		snprintf(p, sizeof p, "%s/partition", ptr);
		pt = json_is_string(x) ? ckpt_partition_parse(json_string_value(x)) : -1;
		if (pt < 0)
			return ckpt_jdoc_err(L->doc, L->e, p, "%s: unknown partition type", what);
		if (pt != CKPT_PIPELINED && pt != CKPT_PIPELINED_BOUNDED && pt != CKPT_PIPELINED_APPROXIMATE &&
		    pt != CKPT_BLOCKING)
			return ckpt_jdoc_err(L->doc, L->e, p, "%s: partition type \"%s\" is not supported (pipelined, "
					     "pipelined_bounded, pipelined_approximate or blocking)", what,
					     json_string_value(x));
	}
	ed->ptype = (enum ckpt_partition)pt;
	return 0;
}

static size_t
region_of(size_t *up, size_t i)
{
	while (up[i] != i)
		i = up[i] = up[up[i]];
	return i;
}

/*
 * Batch mode runs pipelined regions (vertices joined by pipelined edges) one
 * after another along blocking edges; a blocking edge inside a region, or
 * regions that wait for each other, could never start (Flink merges them
 * into one region and relies on its scheduler; we refuse).
 */
static int
check_regions(struct ld *L)
{
	struct ckpt_pipeline *p = L->p;
	size_t *up = ckpt_calloc(p->nv + 1, sizeof *up, L->e), *indeg = ckpt_calloc(p->nv + 1, sizeof *indeg, L->e);
	size_t *stack = ckpt_calloc(p->nv + 1, sizeof *stack, L->e), n = 0, seen = 0, roots = 0;
	unsigned char *dead = ckpt_calloc(p->ne + 1, 1, L->e);
	char ptr[64];
	int r = -1;

	if (up == NULL || indeg == NULL || stack == NULL || dead == NULL)
		goto out;
	for (size_t v = 0; v < p->nv; v++)
		up[v] = v;
	for (size_t k = 0; k < p->ne; k++)
		if (p->e[k].ptype != CKPT_BLOCKING)
			up[region_of(up, p->e[k].source)] = region_of(up, p->e[k].target);
	for (size_t k = 0; k < p->ne; k++) {
		size_t a = region_of(up, p->e[k].source), z = region_of(up, p->e[k].target);

		snprintf(ptr, sizeof ptr, "/edges/%zu", k);
		if (p->e[k].ptype == CKPT_BLOCKING && a == z) {
			ckpt_jdoc_err(L->doc, L->e, ptr, "edge %zu: a blocking edge inside a pipelined region "
				      "(its ends are joined by pipelined edges)", k);
			goto out;
		}
		if (p->e[k].ptype == CKPT_BLOCKING)
			indeg[z]++;
	}
	/* Kahn's algorithm over the regions and their blocking edges */
	for (size_t v = 0; v < p->nv; v++)
		if (region_of(up, v) == v && (roots++, indeg[v] == 0))
			stack[n++] = v;
	while (n > 0) {
		size_t x = stack[--n];

		seen++;
		for (size_t k = 0; k < p->ne; k++)
			if (p->e[k].ptype == CKPT_BLOCKING && !dead[k] && region_of(up, p->e[k].source) == x) {
				size_t z = region_of(up, p->e[k].target);

				dead[k] = 1;
				if (--indeg[z] == 0)
					stack[n++] = z;
			}
	}
	for (size_t k = 0; seen < roots && k < p->ne; k++)
		if (p->e[k].ptype == CKPT_BLOCKING && !dead[k]) {
			snprintf(ptr, sizeof ptr, "/edges/%zu", k);
			ckpt_jdoc_err(L->doc, L->e, ptr, "edge %zu: pipelined regions wait for each other's blocking "
				      "partitions", k);
			goto out;
		}
	r = 0;
out:
	free(up);
	free(indeg);
	free(stack);
	free(dead);
	return r;
}

/* batch mode (batch.c): some edge blocking, no checkpoints; where the event log and partitions go */
static int
load_batch(struct ld *L, const json_t *obj)
{
	static const char *const keys[] = {"log", "partitions", "snapshot_min_pause_ms", "auto_parallelism", NULL};
	struct ckpt_pipeline *p = L->p;
	size_t nblocking = 0;

	p->batch_min_pause_ms = 180000; /* Flink's execution.batch.job-recovery.snapshot.min-pause */
	if (obj != NULL && (check_keys(L, obj, "/batch", "batch", keys) < 0 ||
			    get_str(L, obj, "log", "/batch", "batch", &p->batch_log) < 0 ||
			    get_str(L, obj, "partitions", "/batch", "batch", &p->batch_partitions) < 0 ||
			    get_int(L, obj, "snapshot_min_pause_ms", "/batch", "batch", 0, INT64_MAX / 4,
				    &p->batch_min_pause_ms) < 0))
		return -1;
	for (size_t i = 0; i < p->ne; i++)
		nblocking += p->e[i].ptype == CKPT_BLOCKING;
	for (size_t i = 0; nblocking > 0 && i < p->ne; i++)
		if (p->e[i].ptype == CKPT_PIPELINED_APPROXIMATE) {
			char ptr[64];

			snprintf(ptr, sizeof ptr, "/edges/%zu/partition", i);
			return ckpt_jdoc_err(L->doc, L->e, ptr, "edge %zu: batch mode takes blocking, pipelined or "
					     "pipelined_bounded edges", i);
		}
	if (nblocking > 0 && p->interval_ms > 0)
		return ckpt_jdoc_err(L->doc, L->e, "/checkpointing", "checkpointing: batch mode (blocking edges) "
				     "runs without checkpoints");
	for (size_t i = 0; i < p->nfail; i++)
		if (p->fail[i].lose_partition && !ckpt_bp_has_partition(p, p->fail[i].vertex)) {
			char ptr[64];

			snprintf(ptr, sizeof ptr, "/failover/failures/%zu/lose_partition", i);
			return ckpt_jdoc_err(L->doc, L->e, ptr, "failure %zu: vertex \"%s\" writes no blocking partition "
					     "(lose_partition is for batch mode)", i, p->v[p->fail[i].vertex].id);
		} else if (p->fail[i].closing && nblocking > 0) {
			char ptr[64];

			snprintf(ptr, sizeof ptr, "/failover/failures/%zu/closing", i);
			return ckpt_jdoc_err(L->doc, L->e, ptr, "failure %zu: batch mode takes no stop-with-savepoint "
					     "(closing is for pipelined jobs)", i);
		}
	return nblocking > 0 ? check_regions(L) : 0;
}

static int
load_checkpointing(struct ld *L, const json_t *obj)
{
	static const char *const keys[] = {"interval_ms", "mode", "aligned_timeout_ms", "max_concurrent",
					   "timeout_ms", "min_pause_ms", "tolerable_failures", "dir", "retain",
					   "after_tasks_finish", NULL};
	static const char *const modes[] = {"aligned", "unaligned"};
	struct ckpt_pipeline *p = L->p;
	const char *w = "checkpointing";

	p->timeout_ms = 600000;
	p->max_concurrent = 1;
	p->retain = 1;
	p->after_finish = 1;
	if (obj == NULL)
		return 0;
	if (check_keys(L, obj, "/checkpointing", w, keys) < 0 ||
	    get_int(L, obj, "interval_ms", "/checkpointing", w, 0, 1LL << 40, &p->interval_ms) < 0 ||
	    get_enum(L, obj, "mode", "/checkpointing", w, modes, 2, &p->unaligned) < 0 ||
	    get_int(L, obj, "aligned_timeout_ms", "/checkpointing", w, 0, 1LL << 40, &p->aligned_timeout_ms) < 0 ||
	    get_u32(L, obj, "max_concurrent", "/checkpointing", w, 1, 64, &p->max_concurrent) < 0 ||
	    get_int(L, obj, "timeout_ms", "/checkpointing", w, 1, 1LL << 40, &p->timeout_ms) < 0 ||
	    get_int(L, obj, "min_pause_ms", "/checkpointing", w, 0, 1LL << 40, &p->min_pause_ms) < 0 ||
	    get_u32(L, obj, "tolerable_failures", "/checkpointing", w, 0, 1 << 30, &p->tolerable_failures) < 0 ||
	    get_str(L, obj, "dir", "/checkpointing", w, &p->dir) < 0 ||
	    get_u32(L, obj, "retain", "/checkpointing", w, 1, 1 << 20, &p->retain) < 0 ||
	    get_bool(L, obj, "after_tasks_finish", "/checkpointing", w, &p->after_finish) < 0)
		return -1;
	return 0;
}

static int
load_failure(struct ld *L, size_t i, const json_t *obj)
{
	static const char *const keys[] = {"vertex", "subtask", "after_records", "lose_partition", "closing", NULL};
	struct ckpt_pl_failure *f = &L->p->fail[i];
	char ptr[64], what[64];
	int64_t sub = 0;

	snprintf(ptr, sizeof ptr, "/failover/failures/%zu", i);
	snprintf(what, sizeof what, "failure %zu", i);
	f->after_records = 1;
	if (check_keys(L, obj, ptr, what, keys) < 0 || find_vertex(L, obj, "vertex", ptr, what, &f->vertex) < 0 ||
	    get_int(L, obj, "subtask", ptr, what, 0, L->p->v[f->vertex].parallelism - 1, &sub) < 0 ||
	    get_int(L, obj, "after_records", ptr, what, 1, INT64_MAX / 4, &f->after_records) < 0 ||
	    get_bool(L, obj, "lose_partition", ptr, what, &f->lose_partition) < 0 ||
	    get_bool(L, obj, "closing", ptr, what, &f->closing) < 0)
		return -1;
	f->subtask = (uint32_t)sub;
	return 0;
}

/* "random": {"seed", "count", "max_records"}: failures at seeded random places. */
static int
load_random(struct ld *L, const json_t *obj, size_t first)
{
	static const char *const keys[] = {"seed", "count", "max_records", NULL};
	const char *ptr = "/failover/random", *w = "failover: random";
	int64_t seed = 1, count = 0, maxr = 1000;
	uint64_t x;

	if (check_keys(L, obj, ptr, w, keys) < 0 || get_int(L, obj, "seed", ptr, w, 0, INT64_MAX, &seed) < 0 ||
	    get_int(L, obj, "count", ptr, w, 0, 1000, &count) < 0 ||
	    get_int(L, obj, "max_records", ptr, w, 1, INT64_MAX / 4, &maxr) < 0)
		return -1;
	x = (uint64_t)seed;
	for (int64_t k = 0; k < count; k++) {
		struct ckpt_pl_failure *f = &L->p->fail[first + (size_t)k];

		x = ckpt_xxh3(&x, sizeof x);
		f->vertex = (size_t)(x % L->p->nv);
		f->subtask = (uint32_t)((x >> 20) % L->p->v[f->vertex].parallelism);
		f->after_records = 1 + (int64_t)((x >> 30) % (uint64_t)maxr);
	}
	L->p->nfail = first + (size_t)count;
	return 0;
}

static int
load_failover(struct ld *L, const json_t *obj)
{
	static const char *const keys[] = {"strategy", "restart_limit", "failures", "random", NULL};
	static const char *const strategies[] = {"full", "region", "approximate"};
	struct ckpt_pipeline *p = L->p;
	json_t *fs, *rnd, *x;
	int s = CKPT_FAILOVER_REGION;
	size_t i, n;

	p->strategy = CKPT_FAILOVER_REGION;
	p->restart_limit = 3;
	if (obj == NULL)
		return 0;
	if (check_keys(L, obj, "/failover", "failover", keys) < 0 ||
	    get_enum(L, obj, "strategy", "/failover", "failover", strategies, 3, &s) < 0 ||
	    get_u32(L, obj, "restart_limit", "/failover", "failover", 0, 1 << 20, &p->restart_limit) < 0)
		return -1;
	p->strategy = (enum ckpt_failover_strategy)s;
	fs = json_object_get(obj, "failures");
	rnd = json_object_get(obj, "random");
	if (fs && !json_is_array(fs))
		return ckpt_jdoc_err(L->doc, L->e, "/failover/failures", "failover: \"failures\" must be an array");
	if (fs && json_array_size(fs) > 1000)
		return ckpt_jdoc_err(L->doc, L->e, "/failover/failures", "failover: more than 1000 failures");
	n = json_array_size(fs);
	p->fail = ckpt_calloc(n + 1000 + 1, sizeof *p->fail, L->e);
	if (p->fail == NULL)
		return -1;
	json_array_foreach(fs, i, x) {
		if (load_failure(L, i, x) < 0)
			return -1;
	}
	p->nfail = n;
	return rnd ? load_random(L, rnd, n) : 0;
}

static int
load_network(struct ld *L, const json_t *obj)
{
	static const char *const keys[] = {"buffer_bytes", "buffers_per_channel", "floating_buffers",
					   "max_buffers_per_channel", "buffer_timeout_ms", NULL};
	struct ckpt_pipeline *p = L->p;
	const char *w = "network";

	p->buffer_bytes = 32768;
	p->buffers_per_channel = 2;
	p->floating_buffers = 8;
	p->max_buffers_per_channel = 10;
	p->buffer_timeout_ms = 100;
	if (obj == NULL)
		return 0;
	if (check_keys(L, obj, "/network", w, keys) < 0 ||
	    get_u32(L, obj, "buffer_bytes", "/network", w, 64, 1 << 24, &p->buffer_bytes) < 0 ||
	    get_u32(L, obj, "buffers_per_channel", "/network", w, 1, 1024, &p->buffers_per_channel) < 0 ||
	    get_u32(L, obj, "floating_buffers", "/network", w, 0, 1 << 16, &p->floating_buffers) < 0 ||
	    get_u32(L, obj, "max_buffers_per_channel", "/network", w, 1, 1 << 16, &p->max_buffers_per_channel) < 0 ||
	    get_int(L, obj, "buffer_timeout_ms", "/network", w, 0, 1 << 30, &p->buffer_timeout_ms) < 0)
		return -1;
	if (p->max_buffers_per_channel < p->buffers_per_channel)
		p->max_buffers_per_channel = p->buffers_per_channel;
	return 0;
}

/* Network memory is allocated when the job starts; refuse pipelines that would need more than this. */
#define NETWORK_LIMIT (UINT64_C(1) << 30)

static int
check_network(struct ld *L)
{
	const struct ckpt_pipeline *p = L->p;
	uint64_t bufs = 0;

	for (size_t k = 0; k < p->ne; k++) {
		const struct ckpt_pl_edge *ed = &p->e[k];
		uint64_t T = p->v[ed->target].parallelism, nch = 0;

		for (uint32_t j = 0; j < T; j++) {
			uint32_t lo, hi;

			ckpt_edge_inputs(p, ed, j, &lo, &hi);
			nch += hi - lo;
		}
		bufs += nch * p->buffers_per_channel + T * p->floating_buffers;
	}
	if (bufs * p->buffer_bytes > NETWORK_LIMIT)
		return ckpt_jdoc_err(L->doc, L->e, json_object_get(L->doc->root, "network") ? "/network" : "",
				     "pipeline: the network buffers would take %llu MiB (limit %llu MiB)",
				     (unsigned long long)(bufs * p->buffer_bytes >> 20),
				     (unsigned long long)(NETWORK_LIMIT >> 20));
	return 0;
}

/* Which inputs each operator needs; forward edges keep parallelism, as Flink demands. */
static int
check_shape(struct ld *L)
{
	struct ckpt_pipeline *p = L->p;

	for (size_t i = 0; i < p->ne; i++) {
		struct ckpt_pl_edge *ed = &p->e[i];
		struct ckpt_pl_vertex *s = &p->v[ed->source], *t = &p->v[ed->target];
		char ptr[64];

		snprintf(ptr, sizeof ptr, "/edges/%zu", i);
		if ((s->auto_par || t->auto_par) && (ed->part == PART_FORWARD || ed->part == PART_RESCALE ||
						     ed->ptype != CKPT_BLOCKING))
			return ckpt_jdoc_err(L->doc, L->e, ptr, "edge %zu: a vertex of parallelism \"auto\" (\"%s\") "
					     "takes blocking edges with the hash, rebalance or broadcast partitioner "
					     "only", i, s->auto_par ? s->id : t->id);
		if (ed->part == PART_FORWARD && s->parallelism != t->parallelism)
			return ckpt_jdoc_err(L->doc, L->e, ptr,
					     "edge %zu: forward partitioning does not allow change of parallelism "
					     "(\"%s\" %u, \"%s\" %u): use rescale, rebalance, hash or broadcast",
					     i, s->id, s->parallelism, t->id, t->parallelism);
		if (t->op == OP_SOURCE)
			return ckpt_jdoc_err(L->doc, L->e, ptr, "edge %zu: a source (\"%s\") has no inputs", i, t->id);
		if (s->op == OP_FILE_SINK || s->op == OP_DISCARD_SINK)
			return ckpt_jdoc_err(L->doc, L->e, ptr, "edge %zu: a sink (\"%s\") has no outputs", i, s->id);
		if ((t->op == OP_KEYED_SUM || t->op == OP_WINDOW) && ed->part != PART_HASH)
			return ckpt_jdoc_err(L->doc, L->e, ptr, "edge %zu: %s \"%s\" is keyed: its inputs need the "
					     "hash partitioner", i, op_names[t->op], t->id);
	}
	for (size_t i = 0; i < p->nv; i++) {
		struct ckpt_pl_vertex *v = &p->v[i];
		size_t nb = 0;
		char ptr[64];

		snprintf(ptr, sizeof ptr, "/vertices/%zu", i);
		for (size_t k = 0; k < v->nin; k++)
			nb += p->e[v->in[k]].part == PART_BROADCAST;
		if (v->auto_par && v->op == OP_SOURCE)
			return ckpt_jdoc_err(L->doc, L->e, ptr, "vertex \"%s\": a source's parallelism cannot be "
					     "\"auto\" (it is decided from the input)", v->id);
		if (v->op != OP_SOURCE && v->nin == 0)
			return ckpt_jdoc_err(L->doc, L->e, ptr, "vertex \"%s\": %s needs an input edge", v->id,
					     op_names[v->op]);
		if (v->op == OP_BROADCAST_STATE && (nb == 0 || nb == v->nin))
			return ckpt_jdoc_err(L->doc, L->e, ptr, "vertex \"%s\": broadcast_state needs a broadcast "
					     "input and another input", v->id);
	}
	return 0;
}

static int
link_edges(struct ld *L)
{
	struct ckpt_pipeline *p = L->p;

	for (size_t i = 0; i < p->nv; i++) {
		p->v[i].in = ckpt_calloc(p->ne + 1, sizeof(size_t), L->e);
		p->v[i].out = ckpt_calloc(p->ne + 1, sizeof(size_t), L->e);
		if (p->v[i].in == NULL || p->v[i].out == NULL)
			return -1;
	}
	for (size_t i = 0; i < p->ne; i++) {
		struct ckpt_pl_vertex *s = &p->v[p->e[i].source], *t = &p->v[p->e[i].target];

		s->out[s->nout++] = i;
		t->in[t->nin++] = i;
	}
	return 0;
}

/* The job graph of the pipeline (ckpt-graph(5)), through the same loader as ckpt-plan's. */
static struct ckpt_graph *
build_graph(struct ld *L)
{
	struct ckpt_pipeline *p = L->p;
	json_t *g = json_pack("{s:[],s:[]}", "vertices", "edges");
	json_t *vs = json_object_get(g, "vertices"), *es = json_object_get(g, "edges");
	struct ckpt_graph *gr = NULL;
	struct ckpt_jdoc *doc;

	for (size_t i = 0; i < p->nv; i++) {
		const char *mode = p->v[i].op == OP_SOURCE ? (p->v[i].prm.union_offsets ? "union" : "list")
				   : p->v[i].op == OP_FILE_SINK ? "list"
				   : p->v[i].op == OP_BROADCAST_STATE ? "broadcast" : NULL;
		json_t *st = json_array();

		if (mode)
			json_array_append_new(st, json_pack("{s:s,s:s}", "name",
							    p->v[i].op == OP_SOURCE ? "offsets"
							    : p->v[i].op == OP_FILE_SINK ? "pending" : "rules",
							    "mode", mode));
		json_array_append_new(vs, json_pack("{s:s,s:i,s:i,s:[{s:s,s:s,s:o}]}", "id", p->v[i].id,
						    "parallelism", (json_int_t)p->v[i].parallelism,
						    "max_parallelism", (json_int_t)p->v[i].max_parallelism,
						    "operators", "id", p->v[i].id, "uid",
						    p->v[i].prm.uid ? p->v[i].prm.uid : p->v[i].id, "state", st));
		if (p->v[i].prm.no_batch_snapshot)
			json_object_set_new(json_array_get(vs, i), "batch_snapshot", json_false());
	}
	for (size_t i = 0; i < p->ne; i++) {
		const struct ckpt_pl_edge *ed = &p->e[i];
		int pw = ed->part == PART_FORWARD || ed->part == PART_RESCALE;

		json_array_append_new(es, json_pack("{s:s,s:s,s:s,s:s}", "source", p->v[ed->source].id, "target",
						    p->v[ed->target].id, "distribution", pw ? "pointwise" : "all_to_all",
						    "partition", ckpt_partition_name(ed->ptype)));
	}
	doc = ckpt_jdoc_wrap(g, L->doc->name, L->e);
	if (doc == NULL)
		return NULL;
	gr = ckpt_graph_from_json(doc, L->e);
	ckpt_jdoc_free(doc);
	return gr;
}

/* batch.auto_parallelism (read before the vertices, which take its bound): Flink's
 * execution.batch.adaptive.auto-parallelism.{avg-data-volume-per-task, min-parallelism, max-parallelism}. */
static int
load_auto(struct ld *L, const json_t *batch)
{
	static const char *const keys[] = {"bytes_per_task", "min_parallelism", "max_parallelism", NULL};
	const char *ptr = "/batch/auto_parallelism", *w = "batch: auto_parallelism";
	const json_t *obj = json_is_object(batch) ? json_object_get(batch, "auto_parallelism") : NULL;
	struct ckpt_pipeline *p = L->p;

	p->auto_bytes_per_task = 16 << 20;
	p->auto_min = 1;
	p->auto_max = 128;
	if (obj == NULL)
		return 0;
	if (check_keys(L, obj, ptr, w, keys) < 0 ||
	    get_int(L, obj, "bytes_per_task", ptr, w, 1, INT64_MAX / 4, &p->auto_bytes_per_task) < 0 ||
	    get_u32(L, obj, "min_parallelism", ptr, w, 1, 1024, &p->auto_min) < 0 ||
	    get_u32(L, obj, "max_parallelism", ptr, w, 1, 1024, &p->auto_max) < 0)
		return -1;
	if (p->auto_min > p->auto_max)
		return ckpt_jdoc_err(L->doc, L->e, ptr, "%s: min_parallelism %u is above max_parallelism %u", w,
				     p->auto_min, p->auto_max);
	return 0;
}

static int
load_root(struct ld *L)
{
	static const char *const keys[] = {"vertices", "edges", "checkpointing", "failover", "network", "batch",
					   NULL};
	const json_t *root = L->doc->root;
	json_t *vs, *es, *x;
	size_t i;

	if (check_keys(L, root, "", "pipeline", keys) < 0)
		return -1;
	vs = json_object_get(root, "vertices");
	es = json_object_get(root, "edges");
	if (!json_is_array(vs) || json_array_size(vs) == 0)
		return ckpt_jdoc_err(L->doc, L->e, vs ? "/vertices" : "",
				     "pipeline: \"vertices\" must be a non-empty array");
	if (es && !json_is_array(es))
		return ckpt_jdoc_err(L->doc, L->e, "/edges", "pipeline: \"edges\" must be an array");
	if (json_array_size(vs) > 256 || json_array_size(es) > 1024)
		return ckpt_jdoc_err(L->doc, L->e, "", "pipeline: more than 256 vertices or 1024 edges");
	L->p->v = ckpt_calloc(json_array_size(vs), sizeof *L->p->v, L->e);
	L->p->e = ckpt_calloc(json_array_size(es) + 1, sizeof *L->p->e, L->e);
	if (L->p->v == NULL || L->p->e == NULL || load_auto(L, json_object_get(root, "batch")) < 0)
		return -1;
	json_array_foreach(vs, i, x) {
		L->p->nv++;
		if (load_vertex(L, i, x) < 0)
			return -1;
	}
	json_array_foreach(es, i, x) {
		L->p->ne++;
		if (load_edge(L, i, x) < 0)
			return -1;
	}
	if (link_edges(L) < 0 || check_shape(L) < 0)
		return -1;
	if (load_checkpointing(L, json_object_get(root, "checkpointing")) < 0 ||
	    load_failover(L, json_object_get(root, "failover")) < 0 ||
	    load_network(L, json_object_get(root, "network")) < 0 || check_network(L) < 0 ||
	    load_batch(L, json_object_get(root, "batch")) < 0)
		return -1;
	if (L->p->unaligned && L->p->strategy == CKPT_FAILOVER_APPROXIMATE)
		return ckpt_jdoc_err(L->doc, L->e, "/checkpointing/mode",
				     "Approximate Local Recovery and Unaligned Checkpoint can not be used together yet");
	L->p->graph = build_graph(L);
	return L->p->graph ? 0 : -1;
}

struct ckpt_pipeline *
ckpt_pipeline_load(const char *path, struct ckpt_err *e)
{
	struct ckpt_jdoc *doc = ckpt_jdoc_load(path, e);
	struct ld L = {doc, e, NULL};

	if (doc == NULL)
		return NULL;
	L.p = ckpt_calloc(1, sizeof *L.p, e);
	if (L.p == NULL || load_root(&L) < 0) {
		ckpt_pipeline_free(L.p);
		L.p = NULL;
	}
	ckpt_jdoc_free(doc);
	return L.p;
}

void
ckpt_pipeline_free(struct ckpt_pipeline *p)
{
	if (p == NULL)
		return;
	for (size_t i = 0; i < p->nv; i++) {
		free(p->v[i].id);
		free(p->v[i].prm.path);
		free(p->v[i].prm.uid);
		free(p->v[i].in);
		free(p->v[i].out);
	}
	free(p->v);
	free(p->e);
	free(p->fail);
	free(p->dir);
	free(p->batch_log);
	free(p->batch_partitions);
	ckpt_graph_free(p->graph);
	free(p);
}
