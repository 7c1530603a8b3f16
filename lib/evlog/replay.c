/*
 * replay.c: the recovery plan of a job event log, in the order of Flink's
 * BatchJobRecoveryHandler (FLIP-383): replay, drop the tail after the last
 * snapshot, restore coordinators and shuffle, reset by coordinator rules,
 * then reset the producers of lost partitions, each reset by region failover
 * (the resets are in reset.c).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

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

struct ckpt_rp {
	struct vstate *v;
	size_t nv, vcap;
	struct ckpt_idmap vids; /* v by id */
	struct rec *rec;
	size_t nrec, reccap;
	struct ckpt_idmap recs; /* rec by vertex and subtask */
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

static uint64_t
vertex_hash(const void *R, size_t i)
{
	return hash_id(((const struct ckpt_rp *)R)->v[i].id);
}

static int
vertex_is(const void *R, size_t i, const void *id)
{
	return strcmp(((const struct ckpt_rp *)R)->v[i].id, id) == 0;
}

static long
find(const struct ckpt_rp *R, const char *id)
{
	return ckpt_idmap_find(&R->vids, hash_id(id), id, vertex_is, R);
}

static void
vstate_free(struct vstate *v)
{
	free(v->id);
	free(v->inputs);
	free(v->in);
}

static void
rp_free(struct ckpt_rp *R)
{
	for (size_t i = 0; i < R->nv; i++)
		vstate_free(&R->v[i]);
	free(R->v);
	ckpt_idmap_release(&R->vids);
	for (size_t i = 0; i < R->nrec; i++)
		free(R->rec[i].snap);
	free(R->rec);
	ckpt_idmap_release(&R->recs);
	ckpt_evreader_free(R->r);
}

/* ---- replaying records */

static int
refuse(struct ckpt_rp *R, const struct ckpt_event *ev, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
refuse(struct ckpt_rp *R, const struct ckpt_event *ev, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ckpt_evreader_verr(R->r, ev, R->e, CKPT_ERR_REFUSED, fmt, ap);
	va_end(ap);
	return -1;
}

static int
init_inputs(struct ckpt_rp *R, struct vstate *v, const struct ckpt_event *ev)
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
on_initialized(struct ckpt_rp *R, const struct ckpt_event *ev)
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
	if (ckpt_grow(&R->v, &R->vcap, R->nv + 1, sizeof *R->v, 16, R->e) < 0)
		return -1;
	v = &R->v[R->nv];
	memset(v, 0, sizeof *v);
	R->nv++;
	v->p = ev->parallelism;
	if ((v->id = ckpt_strdup(ev->vertex, R->e)) == NULL || init_inputs(R, v, ev) < 0)
		return -1;
	R->nsubtasks += v->p;
	return ckpt_idmap_add(&R->vids, hash_id(v->id), R->nv - 1, vertex_hash, R, R->e);
}

/* The vertex and subtask an event names, both known. */
static struct vstate *
subtask_of(struct ckpt_rp *R, const struct ckpt_event *ev, const char *id, uint32_t subtask)
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

/* A record's key. */
struct rec_key {
	size_t v;
	uint32_t subtask;
};

static uint64_t
rec_hash(size_t v, uint32_t subtask)
{
	return ((uint64_t)v << 32 | subtask) * UINT64_C(0x9e3779b97f4a7c15) >> 32;
}

static uint64_t
rec_hash_at(const void *R, size_t n)
{
	const struct rec *x = &((const struct ckpt_rp *)R)->rec[n];

	return rec_hash(x->v, x->subtask);
}

static int
rec_is(const void *R, size_t n, const void *key)
{
	const struct rec *x = &((const struct ckpt_rp *)R)->rec[n];
	const struct rec_key *k = key;

	return x->v == k->v && x->subtask == k->subtask;
}

/* The record of subtask i of vertex v, or NULL. */
static struct rec *
rec_find(const struct ckpt_rp *R, size_t v, uint32_t i)
{
	struct rec_key k = {v, i};
	long n = ckpt_idmap_find(&R->recs, rec_hash(v, i), &k, rec_is, R);

	return n < 0 ? NULL : &R->rec[n];
}

/* The record of subtask i of vertex v, made when missing; NULL on no memory. */
static struct rec *
rec_get(struct ckpt_rp *R, size_t v, uint32_t i)
{
	struct rec *x = rec_find(R, v, i);

	if (x != NULL)
		return x;
	if (ckpt_grow(&R->rec, &R->reccap, R->nrec + 1, sizeof *R->rec, 256, R->e) < 0)
		return NULL;
	x = &R->rec[R->nrec++];
	*x = (struct rec){0, v, i, 0, NULL, 0};
	return ckpt_idmap_add(&R->recs, rec_hash(v, i), R->nrec - 1, rec_hash_at, R, R->e) < 0 ? NULL : x;
}

/* A LinkedHashMap put: a subtask already present keeps its place, a new one goes last. */
static int
on_finished(struct ckpt_rp *R, const struct ckpt_event *ev)
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
			return ckpt_err_nomem(R->e, "");
		memcpy(x->snap, ev->snapshots, ev->snapshots_len);
		x->snaplen = (uint32_t)ev->snapshots_len;
	}
	return 0;
}

static int
on_reset(struct ckpt_rp *R, const struct ckpt_event *ev)
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
replay_records(struct ckpt_rp *R)
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
log_graph_json(const struct ckpt_rp *R)
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
user_graph_json(const struct ckpt_rp *R, const struct ckpt_graph *g, const char *dir)
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
build_graph(const struct ckpt_rp *R, const struct ckpt_replay_opts *o, const char *dir)
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

static int
cmp_kept(const void *a, const void *b)
{
	const struct kept *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The attempt numbers of the finished subtasks of plan vertex pv, allocated when first needed. */
static int
set_attempt(struct ckpt_rp_ctx *X, size_t pv, uint32_t i, uint32_t attempt)
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
restore_finished(struct ckpt_rp_ctx *X, struct kept **keptp, size_t *nkept)
{
	struct ckpt_rp *R = X->R;
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
coordinator_vertex(struct ckpt_rp_ctx *X, const char *op, size_t ev_vertex)
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
restore_coordinator(struct ckpt_rp_ctx *X, json_t *index, const char *op, json_t *state, size_t ev_vertex)
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
			return ckpt_err_nomem(X->e, "");
	}
	c->vertex = (size_t)v;
	c->state = json_incref(state);
	return 0;
}

/* Coordinators: the last snapshot wins.  Shuffle: a full snapshot replaces the list, an incremental one appends. */
static int
restore_snapshots(struct ckpt_rp_ctx *X, const struct kept *k, size_t n)
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

/* Edges that join producer and consumer into one region. */
static int
joins(enum ckpt_partition p)
{
	return p == CKPT_PIPELINED || p == CKPT_PIPELINED_BOUNDED;
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
plan_vertices(struct ckpt_rp_ctx *X)
{
	struct ckpt_rp *R = X->R;
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
rp_rename(struct ckpt_rp *R, const struct ckpt_replay *out)
{
	for (size_t pv = 0; pv < out->nv; pv++)
		R->v[pv].id = out->v[pv].id;
}

static void
rp_unname(struct ckpt_rp *R)
{
	for (size_t pv = 0; pv < R->nv; pv++)
		R->v[pv].id = NULL;
}

int
ckpt_replay_run(const char *dir, const struct ckpt_replay_opts *o, struct ckpt_replay *out, struct ckpt_err *e)
{
	struct ckpt_rp R = {.e = e};
	struct ckpt_rp_ctx X = {.R = &R, .out = out, .e = e};
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
	if (nkept > 0 && (restore_snapshots(&X, kept, nkept) < 0 || ckpt_rp_coordinator_resets(&X) < 0))
		goto unname;
	if (out->shuffle == NULL && (out->shuffle = json_array()) == NULL)
		goto unname;
	if (ckpt_rp_partition_resets(&X, o->available) < 0)
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
	ckpt_bits_copy(&b, &v->finished, 1);
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
		const char *name = r->graph->v[v->graph_index].name;
		json_t *o = json_pack("{s:s}", "vertex", v->id), *rest;

		/* a Flink log names vertices by their JobVertexID: the name the graph gives goes beside it */
		if (o != NULL && r->log.flink && name != NULL)
			bad |= json_object_set_new(o, "name", json_string(name)) < 0;
		rest = json_pack("{s:I,s:o,s:o}", "parallelism", (json_int_t)v->parallelism, "finished",
				 rangelist_json(&v->finished), "reset", reset_json(v));
		bad |= o == NULL || rest == NULL || json_object_update(o, rest) < 0;
		json_decref(rest);
		bad |= ckpt_json_append_new(vs, o) < 0;
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

