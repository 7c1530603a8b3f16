/*
 * replay.c: the recovery plan of a job event log, in the order of Flink's
 * BatchJobRecoveryHandler (FLIP-383): replay, drop the tail after the last
 * snapshot, restore coordinators and shuffle, reset by coordinator rules,
 * then reset the producers of lost partitions, each reset by region failover.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt-internal.h"

/* A vertex the log initialized, while replaying. */
struct vstate {
	char *id;
	uint32_t p;
	size_t *inputs;      /* vertex indices */
	struct ckpt_event_input *in; /* their distribution and partition (vertex unused) */
	size_t ninputs;
};

/*
 * A subtask some vertex_finished record named: only these take memory, so
 * that a log claiming a huge parallelism costs what its records say, not
 * what the parallelism would.
 */
struct rec {
	uint64_t seq;        /* order of its finished event in the map, 0 = none (reset) */
	size_t v;
	uint32_t subtask, attempt;
	char *snap;          /* the finished event's "snapshots" text, or NULL */
	uint32_t snaplen;
};

struct rp {
	struct vstate *v;
	size_t nv, vcap;
	size_t *hash, hcap;  /* open addressing: vertex index + 1, 0 when free */
	struct rec *rec;
	size_t nrec, reccap;
	size_t *rhash, rhcap; /* open addressing over rec: index + 1, 0 when free */
	uint64_t seq, nsubtasks;
	struct ckpt_evreader *r;
	struct ckpt_err *e;
};

/* A finished event that survives the replay. */
struct kept {
	uint64_t seq;
	size_t rec;
};

/* ---- vertices by id */

static uint64_t
hash_id(const char *s)
{
	return ckpt_xxh3(s, strlen(s));
}

static long
find(const struct rp *R, const char *id)
{
	if (R->hcap == 0)
		return -1;
	for (size_t i = hash_id(id) & (R->hcap - 1);; i = (i + 1) & (R->hcap - 1)) {
		if (R->hash[i] == 0)
			return -1;
		if (strcmp(R->v[R->hash[i] - 1].id, id) == 0)
			return (long)(R->hash[i] - 1);
	}
}

static int
rehash(struct rp *R)
{
	size_t cap = R->hcap ? R->hcap * 2 : 64;
	size_t *h = ckpt_calloc(cap, sizeof *h, R->e);

	if (h == NULL)
		return -1;
	free(R->hash);
	R->hash = h;
	R->hcap = cap;
	for (size_t k = 0; k < R->nv; k++) {
		size_t i = hash_id(R->v[k].id) & (cap - 1);

		while (h[i])
			i = (i + 1) & (cap - 1);
		h[i] = k + 1;
	}
	return 0;
}

static void
vstate_free(struct vstate *v)
{
	free(v->id);
	free(v->inputs);
	free(v->in);
}

static void
rp_free(struct rp *R)
{
	for (size_t i = 0; i < R->nv; i++)
		vstate_free(&R->v[i]);
	free(R->v);
	free(R->hash);
	for (size_t i = 0; i < R->nrec; i++)
		free(R->rec[i].snap);
	free(R->rec);
	free(R->rhash);
	ckpt_evreader_free(R->r);
}

/* ---- replaying records */

static int
refuse(struct rp *R, const struct ckpt_event *ev, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
refuse(struct rp *R, const struct ckpt_event *ev, const char *fmt, ...)
{
	char text[sizeof R->e->text];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	return ckpt_evreader_err(R->r, ev, R->e, CKPT_ERR_REFUSED, "%s", text);
}

static int
init_inputs(struct rp *R, struct vstate *v, const struct ckpt_event *ev)
{
	v->inputs = ckpt_calloc(ev->ninputs, sizeof *v->inputs, R->e);
	v->in = ckpt_calloc(ev->ninputs, sizeof *v->in, R->e);
	if (v->inputs == NULL || v->in == NULL)
		return -1;
	for (size_t i = 0; i < ev->ninputs; i++) {
		long k = find(R, ev->inputs[i].vertex);

		if (k < 0)
			return refuse(R, ev, "vertex_initialized: input \"%s\" of vertex \"%s\" is not initialized",
				      ev->inputs[i].vertex, ev->vertex);
		v->inputs[i] = (size_t)k;
		v->in[i] = ev->inputs[i];
		v->in[i].vertex = NULL;
		v->ninputs++;
	}
	return 0;
}

static int
on_initialized(struct rp *R, const struct ckpt_event *ev)
{
	long k = find(R, ev->vertex);
	struct vstate *v;

	if (k >= 0) {
		if (R->v[k].p != ev->parallelism)
			return refuse(R, ev, "vertex_initialized: vertex \"%s\" initialized again with parallelism "
				      "%u (was %u)", ev->vertex, ev->parallelism, R->v[k].p);
		return 0;
	}
	if (R->nsubtasks + ev->parallelism > CKPT_SUBTASKS_LIMIT)
		return refuse(R, ev, "vertex_initialized: more than %llu subtasks in the job",
			      (unsigned long long)CKPT_SUBTASKS_LIMIT);
	if (R->nv == R->vcap) {
		size_t cap = R->vcap ? 2 * R->vcap : 16;
		struct vstate *t = ckpt_reallocarray(R->v, cap, sizeof *t, R->e);

		if (t == NULL)
			return -1;
		R->v = t;
		R->vcap = cap;
	}
	v = &R->v[R->nv];
	memset(v, 0, sizeof *v);
	R->nv++;
	v->p = ev->parallelism;
	if ((v->id = ckpt_strdup(ev->vertex, R->e)) == NULL || init_inputs(R, v, ev) < 0)
		return -1;
	R->nsubtasks += v->p;
	if (2 * R->nv > R->hcap)
		return rehash(R);
	for (size_t i = hash_id(v->id) & (R->hcap - 1);; i = (i + 1) & (R->hcap - 1))
		if (R->hash[i] == 0) {
			R->hash[i] = R->nv;
			return 0;
		}
}

/* The vertex and subtask an event names, both known. */
static struct vstate *
subtask_of(struct rp *R, const struct ckpt_event *ev, const char *id, uint32_t subtask)
{
	const char *what = ckpt_event_type_name(ev->type);
	long k = find(R, id);

	if (k < 0) {
		refuse(R, ev, "%s: vertex \"%s\" was not initialized", what, id);
		return NULL;
	}
	if (subtask >= R->v[k].p) {
		refuse(R, ev, "%s: subtask %u of vertex \"%s\" out of range (parallelism %u)", what, subtask, id,
		       R->v[k].p);
		return NULL;
	}
	return &R->v[k];
}

/* ---- the records by (vertex, subtask) */

static size_t
rec_slot(const struct rp *R, size_t v, uint32_t subtask)
{
	uint64_t h = ((uint64_t)v << 32 | subtask) * UINT64_C(0x9e3779b97f4a7c15);

	return (size_t)(h >> 32) & (R->rhcap - 1);
}

/* The record of subtask i of vertex v, or NULL. */
static struct rec *
rec_find(const struct rp *R, size_t v, uint32_t i)
{
	if (R->rhcap == 0)
		return NULL;
	for (size_t k = rec_slot(R, v, i);; k = (k + 1) & (R->rhcap - 1)) {
		struct rec *x;

		if (R->rhash[k] == 0)
			return NULL;
		x = &R->rec[R->rhash[k] - 1];
		if (x->v == v && x->subtask == i)
			return x;
	}
}

static int
rec_rehash(struct rp *R)
{
	size_t cap = R->rhcap ? R->rhcap * 2 : 256;
	size_t *h = ckpt_calloc(cap, sizeof *h, R->e);

	if (h == NULL)
		return -1;
	free(R->rhash);
	R->rhash = h;
	R->rhcap = cap;
	for (size_t n = 0; n < R->nrec; n++) {
		size_t k = rec_slot(R, R->rec[n].v, R->rec[n].subtask);

		while (h[k])
			k = (k + 1) & (cap - 1);
		h[k] = n + 1;
	}
	return 0;
}

/* The record of subtask i of vertex v, made when missing; NULL on no memory. */
static struct rec *
rec_get(struct rp *R, size_t v, uint32_t i)
{
	struct rec *x = rec_find(R, v, i);
	size_t k;

	if (x != NULL)
		return x;
	if (R->nrec == R->reccap) {
		size_t cap = R->reccap ? 2 * R->reccap : 256;

		if ((x = ckpt_reallocarray(R->rec, cap, sizeof *x, R->e)) == NULL)
			return NULL;
		R->rec = x;
		R->reccap = cap;
	}
	x = &R->rec[R->nrec++];
	*x = (struct rec){0, v, i, 0, NULL, 0};
	if (2 * R->nrec > R->rhcap)
		return rec_rehash(R) < 0 ? NULL : x;
	for (k = rec_slot(R, v, i); R->rhash[k]; k = (k + 1) & (R->rhcap - 1))
		;
	R->rhash[k] = R->nrec;
	return x;
}

/* A LinkedHashMap put: a subtask already present keeps its place, a new one goes last. */
static int
on_finished(struct rp *R, const struct ckpt_event *ev)
{
	struct vstate *v = subtask_of(R, ev, ev->vertex, ev->subtask);
	struct rec *x;

	if (v == NULL || (x = rec_get(R, (size_t)(v - R->v), ev->subtask)) == NULL)
		return -1;
	if (x->seq == 0)
		x->seq = ++R->seq;
	x->attempt = ev->attempt;
	free(x->snap);
	x->snap = NULL;
	x->snaplen = 0;
	if (ev->snapshots != NULL) {
		if ((x->snap = malloc(ev->snapshots_len)) == NULL)
			return ckpt_err_set(R->e, CKPT_ERR_NOMEM, "", "out of memory");
		memcpy(x->snap, ev->snapshots, ev->snapshots_len);
		x->snaplen = (uint32_t)ev->snapshots_len;
	}
	return 0;
}

static int
on_reset(struct rp *R, const struct ckpt_event *ev)
{
	for (size_t k = 0; k < ev->ntasks; k++) {
		struct vstate *v = subtask_of(R, ev, ev->tasks[k].vertex, ev->tasks[k].subtask);
		struct rec *x;

		if (v == NULL)
			return -1;
		if ((x = rec_find(R, (size_t)(v - R->v), ev->tasks[k].subtask)) != NULL) {
			x->seq = 0;
			free(x->snap);
			x->snap = NULL;
		}
	}
	return 0;
}

static int
replay_records(struct rp *R)
{
	struct ckpt_event ev;
	int k;

	while ((k = ckpt_evreader_next(R->r, &ev, R->e)) > 0) {
		if (ev.type == CKPT_EVENT_VERTEX_FINISHED)
			k = on_finished(R, &ev);
		else if (ev.type == CKPT_EVENT_VERTICES_RESET)
			k = on_reset(R, &ev);
		else
			k = on_initialized(R, &ev);
		if (k < 0)
			return -1;
	}
	return k;
}

/* ---- the graph */

static json_t *
log_graph_json(const struct rp *R)
{
	json_t *root = json_object(), *vs = json_array(), *es = json_array();

	for (size_t i = 0; i < R->nv; i++) {
		const struct vstate *v = &R->v[i];

		ckpt_json_append_new(vs, json_pack("{s:s,s:I}", "id", v->id, "parallelism", (json_int_t)v->p));
		for (size_t k = 0; k < v->ninputs; k++)
			ckpt_json_append_new(es, json_pack("{s:s,s:s,s:s,s:s}", "source", R->v[v->inputs[k]].id,
							   "target", v->id, "distribution",
							   ckpt_distribution_name(v->in[k].distribution), "partition",
							   ckpt_partition_name(v->in[k].partition)));
	}
	ckpt_json_set_new(root, "vertices", vs);
	ckpt_json_set_new(root, "edges", es);
	return root;
}

/* The user's graph with the parallelism the log decided; every vertex of the log must be in it. */
static json_t *
user_graph_json(const struct rp *R, const struct ckpt_graph *g, const char *dir)
{
	json_t *root = ckpt_graph_to_json(g), *vs = json_object_get(root, "vertices"), *x;
	size_t i;

	json_array_foreach(vs, i, x) {
		long k = find(R, json_string_value(json_object_get(x, "id")));
		json_t *mp = json_object_get(x, "max_parallelism");

		json_object_del(x, "tasks");
		json_object_del(x, "finished");
		if (k < 0)
			continue;
		json_object_set_new(x, "parallelism", json_integer(R->v[k].p));
		if (mp && json_integer_value(mp) < R->v[k].p)
			json_object_del(x, "max_parallelism");
	}
	for (i = 0; i < R->nv; i++)
		if (ckpt_graph_find(g, R->v[i].id) < 0) {
			json_decref(root);
			ckpt_err_set(R->e, CKPT_ERR_INPUT, dir, "vertex \"%s\" of the log is not in the job graph",
				     R->v[i].id);
			return NULL;
		}
	return root;
}

static struct ckpt_graph *
build_graph(const struct rp *R, const struct ckpt_replay_opts *o, const char *dir)
{
	json_t *j = o->graph ? user_graph_json(R, o->graph, dir) : log_graph_json(R);
	struct ckpt_jdoc *doc;
	struct ckpt_graph *g;

	if (j == NULL)
		return NULL;
	if ((doc = ckpt_jdoc_wrap(j, dir, R->e)) == NULL)
		return NULL;
	g = ckpt_graph_from_json(doc, R->e);
	ckpt_jdoc_free(doc);
	return g;
}

/* ---- recovery */

/* What the recovery steps share. */
struct ctx {
	struct rp *R;
	struct ckpt_replay *out;
	const struct ckpt_graph *g;
	long *g2p;                 /* graph vertex -> plan vertex, or -1 */
	struct ckpt_bits *failed;  /* per graph vertex: subtasks to reset next */
	int pipelined;             /* some edge joins subtasks into larger regions */
	const struct ckpt_bits *listed; /* per graph vertex: the producers -a names, or NULL: all */
	unsigned char *full;       /* per plan vertex: every subtask finished, as of now */
	struct ckpt_err *e;
};

static int
cmp_kept(const void *a, const void *b)
{
	const struct kept *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The attempt numbers of the finished subtasks of plan vertex pv, allocated when first needed. */
static int
set_attempt(struct ctx *X, size_t pv, uint32_t i, uint32_t attempt)
{
	struct ckpt_replay_vertex *v = &X->out->v[pv];

	if (v->attempt == NULL && (v->attempt = ckpt_calloc(v->parallelism, sizeof *v->attempt, X->e)) == NULL)
		return -1;
	v->attempt[i] = attempt;
	return 0;
}

/*
 * The finished events left in map order, cut after the last one carrying
 * snapshots (coordinator and shuffle state are known only up to there).
 */
static int
restore_finished(struct ctx *X, struct kept **keptp, size_t *nkept)
{
	struct rp *R = X->R;
	struct kept *k;
	size_t n = 0, last = 0;

	if ((k = ckpt_calloc(R->nrec ? R->nrec : 1, sizeof *k, X->e)) == NULL)
		return -1;
	for (size_t i = 0; i < R->nrec; i++)
		if (R->rec[i].seq != 0)
			k[n++] = (struct kept){R->rec[i].seq, i};
	qsort(k, n, sizeof *k, cmp_kept);
	*keptp = k;
	for (size_t i = 0; i < n; i++)
		if (R->rec[k[i].rec].snap != NULL)
			last = i + 1;
	X->out->dropped_tail_events = n - last;
	for (size_t i = 0; i < last; i++) {
		const struct rec *x = &R->rec[k[i].rec];

		ckpt_bits_set(&X->out->v[x->v].finished, x->subtask);
		if (set_attempt(X, x->v, x->subtask, x->attempt) < 0)
			return -1;
	}
	*nkept = last;
	return 0;
}

/*
 * The plan vertex whose coordinator op is: by the graph's operator ids and
 * uids, else the vertex whose finished event carried the snapshot.  -1 when
 * the coordinator is not restored (its vertex is not initialized, or cannot
 * snapshot in batch mode).
 */
static long
coordinator_vertex(struct ctx *X, const char *op, size_t ev_vertex)
{
	const struct ckpt_graph *g = X->g;
	size_t gv = X->out->v[ev_vertex].graph_index;

	for (size_t i = 0; i < g->nv; i++)
		for (size_t k = 0; k < g->v[i].nops; k++) {
			const struct ckpt_operator_decl *d = &g->v[i].ops[k];

			if ((d->id && strcmp(d->id, op) == 0) || (d->uid && strcmp(d->uid, op) == 0)) {
				gv = i;
				goto found;
			}
		}
found:
	if (X->g2p[gv] < 0 || !g->v[gv].batch_snapshot)
		return -1;
	return X->g2p[gv];
}

static int
restore_coordinator(struct ctx *X, json_t *index, const char *op, json_t *state, size_t ev_vertex)
{
	struct ckpt_replay *out = X->out;
	long v = coordinator_vertex(X, op, ev_vertex);
	json_t *at = json_object_get(index, op);
	struct ckpt_replay_coordinator *c;

	if (v < 0)
		return 0;
	if (at != NULL) {
		c = &out->coord[json_integer_value(at)];
		json_decref(c->state);
	} else {
		c = ckpt_reallocarray(out->coord, out->ncoord + 1, sizeof *c, X->e);
		if (c == NULL)
			return -1;
		out->coord = c;
		c = &out->coord[out->ncoord];
		memset(c, 0, sizeof *c);
		if ((c->op = ckpt_strdup(op, X->e)) == NULL ||
		    json_object_set_new(index, op, json_integer((json_int_t)out->ncoord++)) < 0)
			return ckpt_err_set(X->e, CKPT_ERR_NOMEM, "", "out of memory");
	}
	c->vertex = (size_t)v;
	c->state = json_incref(state);
	return 0;
}

/* Coordinators: the last snapshot wins.  Shuffle: a full snapshot replaces the list, an incremental one appends. */
static int
restore_snapshots(struct ctx *X, const struct kept *k, size_t n)
{
	json_t *index = json_object();
	int r = -1;

	X->out->shuffle = json_array();
	if (index == NULL || X->out->shuffle == NULL)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const struct rec *x = &X->R->rec[k[i].rec];
		const struct vstate *v = &X->R->v[x->v];
		const char *s = x->snap, *op;
		json_t *j, *sh, *st;
		json_error_t jerr;

		if (s == NULL)
			continue;
		j = json_loadb(s, x->snaplen, JSON_REJECT_DUPLICATES, &jerr);
		if (j == NULL) {
			ckpt_err_set(X->e, CKPT_ERR_REFUSED, "", "snapshots of %s subtask %u: %s", v->id,
				     x->subtask, jerr.text);
			goto out;
		}
		json_object_foreach(json_object_get(j, "coordinators"), op, st)
			if (restore_coordinator(X, index, op, st, x->v) < 0) {
				json_decref(j);
				goto out;
			}
		sh = json_object_get(j, "shuffle");
		if (sh != NULL && !json_is_null(sh)) {
			if (!json_is_true(json_object_get(sh, "incremental")))
				json_array_clear(X->out->shuffle);
			json_array_append(X->out->shuffle, sh);
		}
		json_decref(j);
	}
	r = 0;
out:
	json_decref(index);
	return r;
}

/* Partitions a consumer can read again after it restarts (under region failover). */
static int
reconsumable(enum ckpt_partition p)
{
	return p == CKPT_BLOCKING || p == CKPT_HYBRID_FULL || p == CKPT_PIPELINED_APPROXIMATE;
}

/* Edges that join producer and consumer into one region. */
static int
joins(enum ckpt_partition p)
{
	return p == CKPT_PIPELINED || p == CKPT_PIPELINED_BOUNDED;
}

/* ckpt_failover_restart's bound on pointwise connections, kept by the walk that stands in for it. */
static int
check_connections(const struct ckpt_graph *g, struct ckpt_err *e)
{
	uint64_t conn = 0;

	for (size_t k = 0; k < g->ne; k++)
		if (g->e[k].distribution == CKPT_POINTWISE) {
			uint32_t S = g->v[g->e[k].source].parallelism, T = g->v[g->e[k].target].parallelism;

			conn += S > T ? S : T;
		}
	if (conn > (UINT64_C(1) << 28))
		return ckpt_err_set(e, CKPT_ERR_INPUT, "", "more than %llu pointwise connections in the graph",
				    (unsigned long long)(UINT64_C(1) << 28));
	return 0;
}

/* ---- partitions, one per producing subtask and edge, as Flink tracks them */

/* Flink's RESERVE: some consumer of subtask i's partition over edge ed is not finished (or not initialized). */
static int
reserved(const struct ctx *X, const struct ckpt_edge *ed, uint32_t i)
{
	long pw = X->g2p[ed->target];
	const struct ckpt_replay_vertex *w;
	uint32_t lo, hi;

	if (pw < 0)
		return 1;
	if (ed->distribution == CKPT_ALL_TO_ALL)
		return !X->full[pw];
	w = &X->out->v[pw];
	ckpt_pointwise_outputs(X->g->v[ed->source].parallelism, w->parallelism, i, &lo, &hi);
	for (uint32_t j = lo; j < hi; j++)
		if (!ckpt_bits_test(&w->finished, j))
			return 1;
	return 0;
}

static void
refresh_full(struct ctx *X)
{
	for (size_t pv = 0; pv < X->out->nv; pv++)
		X->full[pv] = ckpt_bits_count(&X->out->v[pv].finished) == X->out->v[pv].parallelism;
}

/*
 * Is the partition that producer subtask j wrote for edge k untracked?
 * Flink's availability checker asks the partition tracker, which tracks
 * only the RESERVE partitions the shuffle master reported.  Asked of the
 * finished sets as they are now, not as they were when the partitions were
 * reconciled: the answer can differ only for a partition one of whose
 * consumers was reset since, and that reset asked first, under the old sets
 * (resetting the producer when untracked), so the restart sets come out the
 * same without a copy of the finished sets.
 */
static int
partition_lost(void *arg, size_t k, uint32_t j)
{
	const struct ctx *X = arg;
	const struct ckpt_edge *ed = &X->g->e[k];
	long pv = X->g2p[ed->source];

	if (pv < 0 || !ckpt_bits_test(&X->out->v[pv].finished, j))
		return 1; /* RELEASE: the producer did not finish */
	if (X->listed != NULL && !ckpt_bits_test(&X->listed[ed->source], j))
		return 1; /* not reported */
	return !reserved(X, ed, j); /* OPTIONAL: reported, but not tracked */
}

static void
add_ref(struct ctx *X, size_t gv, uint32_t i)
{
	ckpt_bits_set(&X->failed[gv], i);
}

/* d |= s, or every bit of d when s is NULL; whether d changed. */
static int
bits_or(struct ckpt_bits *d, const struct ckpt_bits *s)
{
	size_t nw = (d->n + 63) / 64;
	uint64_t changed = 0;

	for (size_t k = 0; k < nw; k++) {
		uint64_t w = s ? s->w[k] : ~UINT64_C(0);

		if (s == NULL && k == nw - 1 && (d->n & 63))
			w &= (UINT64_C(1) << (d->n & 63)) - 1;
		changed |= w & ~d->w[k];
		d->w[k] |= w;
	}
	return changed != 0;
}

/* d |= the complement of s (same size). */
static void
bits_or_not(struct ckpt_bits *d, const struct ckpt_bits *s)
{
	size_t nw = (d->n + 63) / 64;

	for (size_t k = 0; k < nw; k++) {
		uint64_t w = ~s->w[k];

		if (k == nw - 1 && (d->n & 63))
			w &= (UINT64_C(1) << (d->n & 63)) - 1;
		d->w[k] |= w;
	}
}

static int
bits_empty(const struct ckpt_bits *b)
{
	return ckpt_bits_next(b, 0) >= b->n;
}

/* Take the restart sets out of the finished sets; an unrecovered vertex touched restarts whole. */
static void
apply_restart(struct ctx *X, const struct ckpt_bits *restart)
{
	for (size_t gv = 0; gv < X->g->nv; gv++) {
		struct ckpt_replay_vertex *v = X->g2p[gv] < 0 ? NULL : &X->out->v[X->g2p[gv]];

		if (v == NULL || restart[gv].w == NULL)
			continue;
		for (size_t w = 0; w < (v->finished.n + 63) / 64; w++)
			v->finished.w[w] &= ~restart[gv].w[w];
		if (v->unrecovered && !bits_empty(&restart[gv])) {
			v->unrecovered = 0;
			bits_or(&X->failed[gv], NULL);
		}
	}
}

/*
 * Region failover from the failed sets through Flink's regions
 * (ckpt_failover_restart), round by round; with avail, partitions count as
 * available only when tracked (partition_lost).
 */
static int
reset_by_regions(struct ctx *X, int avail)
{
	const struct ckpt_graph *g = X->g;
	struct ckpt_partition_loss loss = {partition_lost, X};
	struct ckpt_regions reg;
	int r = 0;

	if (ckpt_regions_compute(g, CKPT_FAILOVER_REGION, &reg, X->e) < 0)
		return -1;
	for (;;) {
		struct ckpt_bits *restart = NULL;
		struct ckpt_task_ref *refs;
		size_t n = 0, m = 0;

		for (size_t gv = 0; gv < g->nv; gv++)
			n += ckpt_bits_count(&X->failed[gv]);
		if (n == 0)
			break;
		refs = ckpt_calloc(n, sizeof *refs, X->e);
		restart = ckpt_calloc(g->nv, sizeof *restart, X->e);
		r = refs && restart ? 0 : -1;
		for (size_t gv = 0; r == 0 && gv < g->nv; gv++) {
			struct ckpt_bits *b = &X->failed[gv];

			for (size_t i = ckpt_bits_next(b, 0); i < b->n; i = ckpt_bits_next(b, i + 1))
				refs[m++] = (struct ckpt_task_ref){gv, (uint32_t)i};
			memset(b->w, 0, (b->n + 63) / 64 * sizeof *b->w);
		}
		if (r == 0 && avail)
			refresh_full(X);
		if (r == 0)
			r = avail ? ckpt_failover_restart_loss(g, &reg, refs, n, &loss, restart, NULL, X->e)
				  : ckpt_failover_restart_in(g, &reg, refs, n, NULL, restart, NULL, X->e);
		if (r == 0)
			apply_restart(X, restart);
		for (size_t gv = 0; restart && r == 0 && gv < g->nv; gv++)
			ckpt_bits_release(&restart[gv]);
		free(restart);
		free(refs);
		if (r < 0)
			break;
	}
	ckpt_regions_release(&reg);
	return r;
}

/*
 * Region failover when no edge joins subtasks (every partition blocking,
 * hybrid or approximate: each subtask is a region of its own), over bit
 * sets alone, so that memory stays a few bits per subtask: the same walk
 * as ckpt_failover_restart, run to a fixed point vertex by vertex.
 */
struct walk {
	struct ctx *X;
	int avail;                        /* partitions available only when tracked */
	struct ckpt_bits *restart, *done; /* per graph vertex */
	unsigned char *dirty;             /* per graph vertex: restart has bits not yet followed */
};

static void
walk_mark(struct walk *W, size_t gv, uint32_t i)
{
	if (!ckpt_bits_test(&W->restart[gv], i)) {
		ckpt_bits_set(&W->restart[gv], i);
		W->dirty[gv] = 1;
	}
}

static void
walk_or(struct walk *W, size_t gv, const struct ckpt_bits *s)
{
	if (bits_or(&W->restart[gv], s))
		W->dirty[gv] = 1;
}

/* The producers of ALL_TO_ALL edge k whose partitions are untracked (partition_lost, a word at a time). */
static void
walk_lost_a2a(struct walk *W, size_t k)
{
	const struct ctx *X = W->X;
	const struct ckpt_edge *ed = &X->g->e[k];
	long pv = X->g2p[ed->source];
	struct ckpt_bits *rs = &W->restart[ed->source];
	const struct ckpt_bits *fin, *ls = X->listed ? &X->listed[ed->source] : NULL;
	uint64_t changed = 0;

	if (pv < 0 || !reserved(X, ed, 0)) {
		walk_or(W, ed->source, NULL);
		return;
	}
	fin = &X->out->v[pv].finished;
	for (size_t w = 0; w < (rs->n + 63) / 64; w++) {
		uint64_t x = ~(fin->w[w] & (ls ? ls->w[w] : ~UINT64_C(0)));

		if (w == (rs->n - 1) / 64 && (rs->n & 63))
			x &= (UINT64_C(1) << (rs->n & 63)) - 1;
		changed |= x & ~rs->w[w];
		rs->w[w] |= x;
	}
	if (changed)
		W->dirty[ed->source] = 1;
}

/* Subtask i of gv restarts: its pointwise consumers, and the pointwise producers it cannot read again. */
static void
walk_subtask(struct walk *W, size_t gv, uint32_t i)
{
	const struct ckpt_graph *g = W->X->g;
	const struct ckpt_vertex *vx = &g->v[gv];
	uint32_t lo, hi;

	for (size_t k = 0; k < vx->nout; k++) {
		const struct ckpt_edge *ed = &g->e[vx->out[k]];

		if (ed->distribution != CKPT_POINTWISE)
			continue;
		ckpt_pointwise_outputs(vx->parallelism, g->v[ed->target].parallelism, i, &lo, &hi);
		for (uint32_t j = lo; j < hi; j++)
			walk_mark(W, ed->target, j);
	}
	for (size_t k = 0; k < vx->nin; k++) {
		const struct ckpt_edge *ed = &g->e[vx->in[k]];
		int avail = reconsumable(ed->partition);

		if (ed->distribution != CKPT_POINTWISE)
			continue;
		ckpt_pointwise_inputs(g->v[ed->source].parallelism, vx->parallelism, i, &lo, &hi);
		for (uint32_t j = lo; j < hi; j++)
			if (!avail || (W->avail && partition_lost(W->X, vx->in[k], j)))
				walk_mark(W, ed->source, j);
	}
}

/* Follow what restarting gv's new subtasks restarts. */
static void
walk_vertex(struct walk *W, size_t gv)
{
	const struct ckpt_graph *g = W->X->g;
	const struct ckpt_vertex *vx = &g->v[gv];
	struct ckpt_bits *rs = &W->restart[gv], *dn = &W->done[gv];
	long pv = W->X->g2p[gv];

	W->dirty[gv] = 0;
	if (pv >= 0 && W->X->out->v[pv].unrecovered) {
		W->X->out->v[pv].unrecovered = 0;
		bits_or(rs, NULL);
	}
	for (size_t k = 0; k < vx->nout; k++) {
		const struct ckpt_edge *ed = &g->e[vx->out[k]];

		if (ed->distribution == CKPT_ALL_TO_ALL)
			walk_or(W, ed->target, NULL);
	}
	for (size_t k = 0; k < vx->nin; k++) {
		const struct ckpt_edge *ed = &g->e[vx->in[k]];

		if (ed->distribution != CKPT_ALL_TO_ALL)
			continue;
		if (!reconsumable(ed->partition))
			walk_or(W, ed->source, NULL);
		else if (W->avail)
			walk_lost_a2a(W, vx->in[k]);
	}
	for (size_t k = 0; k < (rs->n + 63) / 64; k++) {
		uint64_t w = rs->w[k] & ~dn->w[k];

		dn->w[k] |= w;
		for (; w; w &= w - 1)
			walk_subtask(W, gv, (uint32_t)(k * 64 + (size_t)__builtin_ctzll(w)));
	}
}

static int
reset_by_walk(struct ctx *X, int avail)
{
	const struct ckpt_graph *g = X->g;
	size_t nv = g->nv ? g->nv : 1;
	struct walk W = {X, avail, ckpt_calloc(nv, sizeof *W.restart, X->e), ckpt_calloc(nv, sizeof *W.done, X->e),
			 ckpt_calloc(nv, 1, X->e)};
	int r = -1, more = 1;

	if (W.restart == NULL || W.done == NULL || W.dirty == NULL)
		goto out;
	for (size_t gv = 0; gv < g->nv; gv++) {
		if (ckpt_bits_init(&W.restart[gv], g->v[gv].parallelism, X->e) < 0 ||
		    ckpt_bits_init(&W.done[gv], g->v[gv].parallelism, X->e) < 0)
			goto out;
		walk_or(&W, gv, &X->failed[gv]);
		memset(X->failed[gv].w, 0, (X->failed[gv].n + 63) / 64 * sizeof *X->failed[gv].w);
	}
	while (more) {
		more = 0;
		for (size_t gv = 0; gv < g->nv; gv++)
			if (W.dirty[gv]) {
				walk_vertex(&W, gv);
				more = 1;
			}
	}
	apply_restart(X, W.restart);
	r = 0;
out:
	for (size_t gv = 0; gv < g->nv; gv++) {
		if (W.restart)
			ckpt_bits_release(&W.restart[gv]);
		if (W.done)
			ckpt_bits_release(&W.done[gv]);
	}
	free(W.restart);
	free(W.done);
	free(W.dirty);
	return r;
}

/*
 * Flink's resetVerticesInRecovering: region failover from the subtasks in
 * X->failed; a fully finished vertex whose coordinator cannot snapshot in
 * batch mode restarts whole the first time a restart touches it.
 */
static int
reset_in_recovering(struct ctx *X, int avail)
{
	int any = 0;

	for (size_t gv = 0; gv < X->g->nv && !any; gv++)
		any = !bits_empty(&X->failed[gv]);
	if (!any)
		return 0;
	if (check_connections(X->g, X->e) < 0)
		return -1;
	if (avail)
		refresh_full(X);
	return X->pipelined ? reset_by_regions(X, avail) : reset_by_walk(X, avail);
}

/* Flink's determineVerticesForResetAfterRestoreOpCoordinator (every vertex counts as holding a coordinator). */
static int
coordinator_resets(struct ctx *X)
{
	for (size_t pv = 0; pv < X->out->nv; pv++) {
		struct ckpt_replay_vertex *v = &X->out->v[pv];
		size_t done = ckpt_bits_count(&v->finished);

		if (X->g->v[v->graph_index].batch_snapshot)
			bits_or_not(&X->failed[v->graph_index], &v->finished);
		else if (done == v->parallelism)
			v->unrecovered = 1;
		else
			bits_or(&X->failed[v->graph_index], NULL);
	}
	return reset_in_recovering(X, 0);
}

/* ---- lost partitions */

/* "vertex:subtask" ids of the -a document as bit sets per graph vertex. */
static int
parse_available(struct ctx *X, const struct ckpt_jdoc *doc, struct ckpt_bits *listed)
{
	size_t i;
	json_t *x;

	if (!json_is_array(doc->root))
		return ckpt_jdoc_err(doc, X->e, "", "available partitions must be an array of \"vertex:subtask\"");
	json_array_foreach(doc->root, i, x) {
		const char *s = json_string_value(x), *colon = s ? strrchr(s, ':') : NULL;
		char ptr[32], *id, *end;
		unsigned long sub;
		long gv;

		snprintf(ptr, sizeof ptr, "/%zu", i);
		if (colon == NULL)
			return ckpt_jdoc_err(doc, X->e, ptr, "partition %zu: not a \"vertex:subtask\" string", i);
		if ((id = ckpt_strdup(s, X->e)) == NULL)
			return -1;
		id[colon - s] = '\0';
		gv = ckpt_graph_find(X->g, id);
		free(id);
		if (gv < 0)
			return ckpt_jdoc_err(doc, X->e, ptr, "partition \"%s\": unknown vertex", s);
		sub = (colon[1] >= '0' && colon[1] <= '9') ? strtoul(colon + 1, &end, 10) : (end = NULL, 0);
		if (end == NULL || *end != '\0' || sub >= X->g->v[gv].parallelism)
			return ckpt_jdoc_err(doc, X->e, ptr, "partition \"%s\": no such subtask (parallelism %u)", s,
					     X->g->v[gv].parallelism);
		ckpt_bits_set(&listed[gv], sub);
	}
	return 0;
}

/*
 * Flink's missing partitions: a RESERVE partition the shuffle master did not
 * report.  -a names producing subtasks, so a subtask it leaves out misses
 * every partition it wrote; one that some consumer still needs is listed
 * lost and reset.
 */
static int
classify(struct ctx *X, size_t pv, uint32_t i)
{
	const struct ckpt_replay_vertex *v = &X->out->v[pv];
	const struct ckpt_vertex *gv = &X->g->v[v->graph_index];
	struct ckpt_task_ref *t;
	int missing = 0;

	if (X->listed == NULL || ckpt_bits_test(&X->listed[v->graph_index], i))
		return 0;
	for (size_t k = 0; k < gv->nout && !missing; k++)
		missing = reserved(X, &X->g->e[gv->out[k]], i);
	if (!missing)
		return 0;
	if ((t = ckpt_reallocarray(X->out->lost, X->out->nlost + 1, sizeof *t, X->e)) == NULL)
		return -1;
	X->out->lost = t;
	t[X->out->nlost++] = (struct ckpt_task_ref){pv, i};
	add_ref(X, v->graph_index, i);
	return 0;
}

/*
 * Flink's recoverPartitions: a finished producer's partition is RESERVE when
 * a consumer has not finished, OPTIONAL when all have; RESERVE partitions
 * not reported are missing, and their producers are reset with the
 * availability check (only RESERVE partitions that are there are tracked).
 * Each partition (producer subtask and edge) counts on its own.
 */
static int
partition_resets(struct ctx *X, const struct ckpt_jdoc *available)
{
	const struct ckpt_graph *g = X->g;
	struct ckpt_bits *listed = NULL;
	int r = -1;

	if ((X->full = ckpt_calloc(X->out->nv ? X->out->nv : 1, 1, X->e)) == NULL)
		goto out;
	if (available != NULL) {
		if ((listed = ckpt_calloc(g->nv ? g->nv : 1, sizeof *listed, X->e)) == NULL)
			goto out;
		for (size_t gv = 0; gv < g->nv; gv++)
			if (ckpt_bits_init(&listed[gv], g->v[gv].parallelism, X->e) < 0)
				goto out;
		if (parse_available(X, available, listed) < 0)
			goto out;
		X->listed = listed;
	}
	refresh_full(X);
	for (size_t pv = 0; pv < X->out->nv; pv++) {
		const struct ckpt_bits *fin = &X->out->v[pv].finished;

		for (size_t i = ckpt_bits_next(fin, 0); i < fin->n; i = ckpt_bits_next(fin, i + 1))
			if (classify(X, pv, (uint32_t)i) < 0)
				goto out;
	}
	r = reset_in_recovering(X, 1);
out:
	for (size_t gv = 0; listed && gv < g->nv; gv++)
		ckpt_bits_release(&listed[gv]);
	free(listed);
	X->listed = NULL;
	free(X->full);
	X->full = NULL;
	return r;
}

/* ---- the plan */

/* Does an input edge of graph vertex gv join it with its producer into one region? */
static int
joins_any(const struct ckpt_graph *g, size_t gv)
{
	for (size_t k = 0; k < g->v[gv].nin; k++)
		if (joins(g->e[g->v[gv].in[k]].partition))
			return 1;
	return 0;
}

static int
plan_vertices(struct ctx *X)
{
	struct rp *R = X->R;
	struct ckpt_replay *out = X->out;

	if ((out->v = ckpt_calloc(R->nv ? R->nv : 1, sizeof *out->v, X->e)) == NULL)
		return -1;
	if ((X->g2p = ckpt_calloc(X->g->nv ? X->g->nv : 1, sizeof *X->g2p, X->e)) == NULL)
		return -1;
	if ((X->failed = ckpt_calloc(X->g->nv ? X->g->nv : 1, sizeof *X->failed, X->e)) == NULL)
		return -1;
	for (size_t gv = 0; gv < X->g->nv; gv++) {
		X->g2p[gv] = -1;
		X->pipelined |= X->g->v[gv].nin > 0 && joins_any(X->g, gv);
		if (ckpt_bits_init(&X->failed[gv], X->g->v[gv].parallelism, X->e) < 0)
			return -1;
	}
	for (size_t pv = 0; pv < R->nv; pv++) {
		struct ckpt_replay_vertex *v = &out->v[pv];

		out->nv++;
		v->id = R->v[pv].id;
		R->v[pv].id = NULL;
		v->parallelism = R->v[pv].p;
		v->graph_index = (size_t)ckpt_graph_find(X->g, v->id);
		X->g2p[v->graph_index] = (long)pv;
		if (ckpt_bits_init(&v->finished, v->parallelism, X->e) < 0)
			return -1;
	}
	return 0;
}

/* Keep the vertex table usable for finding ids after plan_vertices took them. */
static void
rp_rename(struct rp *R, const struct ckpt_replay *out)
{
	for (size_t pv = 0; pv < out->nv; pv++)
		R->v[pv].id = out->v[pv].id;
}

static void
rp_unname(struct rp *R)
{
	for (size_t pv = 0; pv < R->nv; pv++)
		R->v[pv].id = NULL;
}

int
ckpt_replay_run(const char *dir, const struct ckpt_replay_opts *o, struct ckpt_replay *out, struct ckpt_err *e)
{
	struct rp R = {.e = e};
	struct ctx X = {.R = &R, .out = out, .e = e};
	struct kept *kept = NULL;
	size_t nkept = 0;
	int r = -1;

	memset(out, 0, sizeof *out);
	if ((R.r = ckpt_evreader_open(dir, e)) == NULL || replay_records(&R) < 0)
		goto out;
	out->log = *ckpt_evreader_stats(R.r);
	if ((out->graph = build_graph(&R, o, dir)) == NULL)
		goto out;
	X.g = out->graph;
	if (plan_vertices(&X) < 0)
		goto out;
	rp_rename(&R, out);
	if (restore_finished(&X, &kept, &nkept) < 0)
		goto unname;
	if (nkept > 0 && (restore_snapshots(&X, kept, nkept) < 0 || coordinator_resets(&X) < 0))
		goto unname;
	if (out->shuffle == NULL && (out->shuffle = json_array()) == NULL)
		goto unname;
	if (partition_resets(&X, o->available) < 0)
		goto unname;
	r = 0;
unname:
	rp_unname(&R);
out:
	free(kept);
	free(X.g2p);
	for (size_t gv = 0; X.failed && gv < X.g->nv; gv++)
		ckpt_bits_release(&X.failed[gv]);
	free(X.failed);
	rp_free(&R);
	if (r < 0)
		ckpt_replay_release(out);
	return r;
}

static json_t *
rangelist_json(const struct ckpt_bits *b)
{
	char *s = ckpt_rangelist_format(b);
	json_t *j = s ? json_string(s) : NULL;

	free(s);
	return j;
}

static json_t *
reset_json(const struct ckpt_replay_vertex *v)
{
	struct ckpt_bits b;
	json_t *j;

	if (ckpt_bits_init(&b, v->parallelism, NULL) < 0)
		return NULL;
	for (uint32_t i = 0; i < v->parallelism; i++)
		if (!ckpt_bits_test(&v->finished, i))
			ckpt_bits_set(&b, i);
	j = rangelist_json(&b);
	ckpt_bits_release(&b);
	return j;
}

static int
log_json(const struct ckpt_replay *r, json_t *root)
{
	return ckpt_json_set_new(root, "log", json_pack("{s:I,s:I,s:I,s:I}",
			"segments", (json_int_t)r->log.segments, "records", (json_int_t)r->log.records,
			"torn_bytes", (json_int_t)r->log.torn_bytes,
			"dropped_tail_events", (json_int_t)r->dropped_tail_events));
}

json_t *
ckpt_replay_to_json(const struct ckpt_replay *r)
{
	json_t *root = json_object(), *vs = json_array(), *co = json_object(), *lost = json_array();
	int bad = root == NULL || vs == NULL || co == NULL || lost == NULL;

	for (size_t i = 0; !bad && i < r->nv; i++) {
		const struct ckpt_replay_vertex *v = &r->v[i];

		bad |= ckpt_json_append_new(vs, json_pack("{s:s,s:I,s:o,s:o}", "vertex", v->id, "parallelism",
							  (json_int_t)v->parallelism, "finished",
							  rangelist_json(&v->finished), "reset", reset_json(v))) < 0;
	}
	for (size_t i = 0; !bad && i < r->ncoord; i++)
		bad |= ckpt_json_set_new(co, r->coord[i].op, json_pack("{s:O,s:o}", "state", r->coord[i].state,
							"subtask_reset", reset_json(&r->v[r->coord[i].vertex]))) < 0;
	for (size_t i = 0; !bad && i < r->nlost; i++) {
		char buf[64];
		json_t *s = json_sprintf("%s:%u", r->v[r->lost[i].vertex].id, r->lost[i].subtask);

		(void)buf;
		bad |= ckpt_json_append_new(lost, s) < 0;
	}
	if (!bad) {
		bad |= ckpt_json_set_new(root, "vertices", vs) < 0;
		bad |= ckpt_json_set_new(root, "coordinators", co) < 0;
		bad |= ckpt_json_set_new(root, "shuffle", json_incref(r->shuffle)) < 0;
		bad |= ckpt_json_set_new(root, "lost_partitions", lost) < 0;
		bad |= log_json(r, root) < 0;
		if (!bad)
			return root;
		vs = co = lost = NULL;
	}
	json_decref(vs);
	json_decref(co);
	json_decref(lost);
	json_decref(root);
	return NULL;
}

void
ckpt_replay_release(struct ckpt_replay *r)
{
	for (size_t i = 0; i < r->nv; i++) {
		free(r->v[i].id);
		free(r->v[i].attempt);
		ckpt_bits_release(&r->v[i].finished);
	}
	free(r->v);
	for (size_t i = 0; i < r->ncoord; i++) {
		free(r->coord[i].op);
		json_decref(r->coord[i].state);
	}
	free(r->coord);
	json_decref(r->shuffle);
	free(r->lost);
	ckpt_graph_free(r->graph);
	memset(r, 0, sizeof *r);
}
