/* restore.c: restoring a snapshot onto a new job graph: operators matched, unmapped state, FLIP-147 finished-state rules. */
#include <stdlib.h>
#include <string.h>

#include "redist.h"

/* One operator slot of the new graph; a vertex without operators is one slot named by its id. */
struct gslot {
	const struct ckpt_vertex *v;
	const struct ckpt_operator_decl *d; /* NULL for the vertex's implicit operator */
	const struct ckpt_operator *state;  /* the snapshot operator it restores, or NULL */
};

struct gmap {
	struct gslot *slot;
	size_t n;
	size_t *first; /* per vertex: its first slot */
};

enum vstate { VS_ALL_RUNNING, VS_PARTIALLY_FINISHED, VS_FULLY_FINISHED };
static const char *const vs_name[] = {"ALL_RUNNING", "PARTIALLY_FINISHED", "FULLY_FINISHED"};

static size_t
vertex_slots(const struct ckpt_vertex *v)
{
	return v->nops ? v->nops : 1;
}

static int
gmap_init(struct gmap *m, const struct ckpt_graph *g, struct ckpt_err *e)
{
	size_t n = 0;

	for (size_t i = 0; i < g->nv; i++)
		n += vertex_slots(&g->v[i]);
	m->slot = ckpt_calloc(n, sizeof *m->slot, e);
	m->first = ckpt_calloc(g->nv, sizeof *m->first, e);
	if (m->slot == NULL || m->first == NULL)
		return -1;
	for (size_t i = 0; i < g->nv; i++) {
		m->first[i] = m->n;
		for (size_t k = 0; k < vertex_slots(&g->v[i]); k++) {
			m->slot[m->n].v = &g->v[i];
			m->slot[m->n].d = g->v[i].nops ? &g->v[i].ops[k] : NULL;
			m->n++;
		}
	}
	return 0;
}

static void
gmap_release(struct gmap *m)
{
	free(m->slot);
	free(m->first);
}

/* Pass 0: the uid; 1: the id; 2: the id Flink derives from the graph's uid (state of a _metadata). */
static int
slot_matches(const struct gslot *s, const struct ckpt_operator *op, int pass)
{
	const char *id = s->d ? s->d->id : s->v->id;
	char hashed[33];

	if (pass == 0)
		return s->d && s->d->uid && op->uid && strcmp(s->d->uid, op->uid) == 0;
	if (pass == 1)
		return id && strcmp(id, op->id) == 0;
	if (s->d == NULL || s->d->uid == NULL)
		return 0;
	ckpt_flink_operator_id(s->d->uid, strlen(s->d->uid), hashed);
	return strcmp(hashed, op->id) == 0;
}

static struct gslot *
match_slot(struct gmap *m, const struct ckpt_operator *op)
{
	for (int pass = 0; pass < 3; pass++)
		for (size_t k = 0; k < m->n; k++)
			if (m->slot[k].state == NULL && slot_matches(&m->slot[k], op, pass))
				return &m->slot[k];
	return NULL;
}

/* Flink skips operators without state even when it may not skip state. */
static int
holds_state(const struct ckpt_operator *op)
{
	if (op->coordinator)
		return 1;
	for (size_t k = 0; k < op->nsubtasks; k++) {
		const struct ckpt_subtask *st = &op->subtasks[k];

		if (!st->finished && (st->nops || st->keyed || st->nkv || st->nin || st->nout || st->nhandles))
			return 1;
	}
	return 0;
}

static int
map_operator(struct ckpt_redist *r, struct gmap *m, struct ckpt_operator *op,
	     const struct ckpt_redist_opts *opt, struct ckpt_err *e)
{
	struct gslot *s = match_slot(m, op);
	struct ckpt_redist_op *o;

	if (s == NULL) {
		if (!holds_state(op) || opt->allow_non_restored)
			return 0;
		return ckpt_err_set(e, CKPT_ERR_REFUSED, r->name,
				    "Failed to rollback to checkpoint/savepoint %s. Cannot map checkpoint/savepoint state for operator %s to the new program, because the operator is not available in the new program. If you want to allow to skip this, you can set the --allowNonRestoredState option on the CLI.",
				    r->name, op->id);
	}
	/* Flink formats its CheckpointMetadata object here, whose toString is "Checkpoint Metadata"
	 * (Checkpoints.loadAndValidateCheckpoint); the file is named before the message anyway. */
	if (s->v->max_parallelism && s->v->max_parallelism != op->max_parallelism)
		return ckpt_err_set(e, CKPT_ERR_REFUSED, r->name,
				    "Failed to rollback to checkpoint/savepoint Checkpoint Metadata. Max parallelism mismatch between checkpoint/savepoint state and new program. Cannot map operator %s with max parallelism %u to new program with max parallelism %u. This indicates that the program has been changed in a non-compatible way after the checkpoint/savepoint.",
				    op->id, op->max_parallelism, s->v->max_parallelism);
	s->state = op;
	o = &r->ops[r->nops++];
	o->old = op;
	o->p = s->v->parallelism;
	o->vid = s->v->id;
	o->vname = s->v->name ? s->v->name : s->v->id;
	o->nid = s->d && s->d->id ? s->d->id : op->id;
	o->nuid = s->d && s->d->uid ? s->d->uid : op->uid;
	o->nname = s->d && s->d->name ? s->d->name : op->name;
	o->nvertex = s->v->id;
	o->gv = (long)(s->v - opt->graph->v);
	/* a vertex's operators are listed as Flink's JobVertex.getOperatorIDs lists them: the chain's
	 * last operator first, its head last */
	o->not_tail = s->d != NULL && s->d != &s->v->ops[0];
	o->not_head = s->d != NULL && s->d != &s->v->ops[s->v->nops - 1];
	return 0;
}

static enum vstate
op_vstate(const struct ckpt_operator *op)
{
	if (op == NULL)
		return VS_ALL_RUNNING;
	if (op->fully_finished)
		return VS_FULLY_FINISHED;
	for (size_t k = 0; k < op->nsubtasks; k++)
		if (op->subtasks[k].finished)
			return VS_PARTIALLY_FINISHED;
	return VS_ALL_RUNNING;
}

/* VertexFinishedStateChecker: the finished state of vertex i, or -1 when its operators disagree. */
static int
vertex_vstate(struct ckpt_redist *r, const struct gmap *m, const struct ckpt_graph *g, size_t i,
	      enum vstate *out, struct ckpt_err *e)
{
	const struct ckpt_vertex *v = &g->v[i];
	int seen[3] = {0, 0, 0}, kinds = 0;
	char list[80] = "";

	for (size_t k = 0; k < vertex_slots(v); k++) {
		enum vstate s = op_vstate(m->slot[m->first[i] + k].state);

		kinds += !seen[s];
		seen[s] = 1;
		*out = s;
	}
	if (kinds <= 1)
		return 0;
	for (int s = 0; s < 3; s++)
		if (seen[s])
			snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", list[0] ? ", " : "",
				 vs_name[s]);
	return ckpt_err_set(e, CKPT_ERR_REFUSED, r->name,
			    "Can not restore vertex %s(%s) which contain mixed operator finished state: [%s]",
			    v->name ? v->name : v->id, v->id, list);
}

static int
a2a_from(const struct ckpt_graph *g, const struct ckpt_vertex *v, size_t src)
{
	for (size_t k = 0; k < v->nin; k++)
		if (g->e[v->in[k]].source == src && g->e[v->in[k]].distribution == CKPT_ALL_TO_ALL)
			return 1;
	return 0;
}

/* 0 when the edge from src is allowed, else which of Flink's three rules it breaks. */
static int
check_edge(const struct ckpt_graph *g, const struct ckpt_vertex *v, enum vstate me, size_t src,
	   enum vstate pred)
{
	if (me == VS_FULLY_FINISHED && pred != VS_FULLY_FINISHED)
		return 1;
	if (me != VS_PARTIALLY_FINISHED)
		return 0;
	if (a2a_from(g, v, src) && pred != VS_FULLY_FINISHED)
		return 2;
	return pred == VS_ALL_RUNNING ? 3 : 0;
}

static int
check_finished(struct ckpt_redist *r, const struct gmap *m, const struct ckpt_graph *g,
	       struct ckpt_err *e)
{
	for (size_t ti = 0; ti < g->nv; ti++) {
		size_t i = g->topo[ti];
		const struct ckpt_vertex *v = &g->v[i];
		const char *name = v->name ? v->name : v->id;
		enum vstate me, pred;

		if (vertex_vstate(r, m, g, i, &me, e) < 0)
			return -1;
		for (size_t k = 0; k < v->nin; k++) {
			size_t src = g->e[v->in[k]].source;
			int bad;

			if (vertex_vstate(r, m, g, src, &pred, e) < 0)
				return -1;
			bad = check_edge(g, v, me, src, pred);
			if (bad == 1)
				return ckpt_err_set(e, CKPT_ERR_REFUSED, r->name,
						    "Illegal JobGraph modification. Cannot run a program with fully finished vertices predeceased with the ones not fully finished. Task vertex %s(%s) has a predecessor not fully finished",
						    name, v->id);
			if (bad == 2)
				return ckpt_err_set(e, CKPT_ERR_REFUSED, r->name,
						    "Illegal JobGraph modification. Cannot run a program with partially finished vertices predeceased with running or partially finished ones and connected via the ALL_TO_ALL edges. Task vertex %s(%s) has a %s predecessor",
						    name, v->id, pred == VS_ALL_RUNNING ? "all running" : "partially finished");
			if (bad == 3)
				return ckpt_err_set(e, CKPT_ERR_REFUSED, r->name,
						    "Illegal JobGraph modification. Cannot run a program with partially finished vertices predeceased with all running ones. Task vertex %s(%s) has a all running predecessor",
						    name, v->id);
		}
	}
	return 0;
}

int
ckpt_redist_map_graph(struct ckpt_redist *r, const struct ckpt_redist_opts *opt, struct ckpt_err *e)
{
	struct gmap m = {0};
	int rc = -1;

	if (gmap_init(&m, opt->graph, e) < 0)
		goto out;
	for (size_t i = 0; i < r->in->nops; i++)
		if (map_operator(r, &m, &r->in->ops[i], opt, e) < 0)
			goto out;
	rc = check_finished(r, &m, opt->graph, e);
out:
	gmap_release(&m);
	return rc;
}
