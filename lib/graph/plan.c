/*
 * plan.c: the checkpoint plan of FLIP-147 (Flink's DefaultCheckpointPlanCalculator):
 * which subtasks to trigger, wait for, commit to, and which are finished.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "graph.h"

#define NOT_ALL_RUNNING "NOT_ALL_REQUIRED_TASKS_RUNNING"
#define FINALIZE_FAILURE "FINALIZE_CHECKPOINT_FAILURE"
#define CONNECTIONS_LIMIT (UINT64_C(1) << 32)

void
ckpt_plan_release(struct ckpt_plan *p)
{
	size_t n = p->nvertices;

	for (size_t v = 0; v < n; v++) {
		if (p->trigger)
			ckpt_bits_release(&p->trigger[v]);
		if (p->wait_for)
			ckpt_bits_release(&p->wait_for[v]);
		if (p->finished)
			ckpt_bits_release(&p->finished[v]);
	}
	free(p->trigger);
	free(p->wait_for);
	free(p->finished);
	free(p->fully_finished);
	for (size_t k = 0; k < p->nwarnings; k++)
		free(p->warnings[k]);
	free(p->warnings);
	free(p->decline_message);
	memset(p, 0, sizeof *p);
}

static int
plan_init(struct ckpt_plan *p, const struct ckpt_graph *g, struct ckpt_err *e)
{
	size_t n = g->nv ? g->nv : 1;

	memset(p, 0, sizeof *p);
	p->trigger = ckpt_calloc(n, sizeof *p->trigger, e);
	p->wait_for = ckpt_calloc(n, sizeof *p->wait_for, e);
	p->finished = ckpt_calloc(n, sizeof *p->finished, e);
	p->fully_finished = ckpt_calloc(n, 1, e);
	if (p->trigger == NULL || p->wait_for == NULL || p->finished == NULL || p->fully_finished == NULL)
		return -1;
	p->nvertices = g->nv;
	for (size_t v = 0; v < g->nv; v++) {
		uint32_t P = g->v[v].parallelism;

		if (ckpt_bits_init(&p->trigger[v], P, e) < 0 || ckpt_bits_init(&p->wait_for[v], P, e) < 0 ||
		    ckpt_bits_init(&p->finished[v], P, e) < 0)
			return -1;
	}
	return 0;
}

static const char *
vertex_name(const struct ckpt_vertex *v)
{
	return v->name ? v->name : v->id;
}

static int
decline(struct ckpt_plan *p, const char *reason, struct ckpt_err *e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int
decline(struct ckpt_plan *p, const char *reason, struct ckpt_err *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	p->decline_message = ckpt_vstrdupf(e, 1024, fmt, ap);
	va_end(ap);
	p->decline_reason = reason;
	return p->decline_message ? 1 : -1;
}

/*
 * What the plan looks at, gathered in one pass before any decision (Flink
 * too gathers the running sets first, so that no decision depends on the
 * order of vertices).
 */
struct census {
	struct ckpt_bits *unfinished; /* per vertex: subtasks not FINISHED (Flink's "running" set) */
	size_t *nrun;                 /* per vertex: RUNNING subtasks */
	size_t *nfin;                 /* per vertex: FINISHED subtasks */
};

static void
census_release(struct census *c, size_t nv)
{
	for (size_t v = 0; c->unfinished && v < nv; v++)
		ckpt_bits_release(&c->unfinished[v]);
	free(c->unfinished);
	free(c->nrun);
	free(c->nfin);
}

/* Count a vertex's states and build its unfinished set 64 subtasks at a time. */
static void
census_vertex(struct census *c, const struct ckpt_vertex *vx, size_t v)
{
	const unsigned char *t = vx->tasks;
	size_t nrun = 0, nfin = 0;

	for (uint32_t base = 0; base < vx->parallelism; base += 64) {
		uint32_t lim = vx->parallelism - base < 64 ? vx->parallelism - base : 64;
		uint64_t w = 0;

		for (uint32_t b = 0; b < lim; b++) {
			w |= (uint64_t)(t[base + b] != CKPT_FINISHED) << b;
			nrun += t[base + b] == CKPT_RUNNING;
			nfin += t[base + b] == CKPT_FINISHED;
		}
		ckpt_bits_store64(&c->unfinished[v], base, w);
	}
	c->nrun[v] = nrun;
	c->nfin[v] = nfin;
}

static int
census_init(struct census *c, const struct ckpt_graph *g, struct ckpt_err *e)
{
	size_t n = g->nv ? g->nv : 1;

	c->unfinished = ckpt_calloc(n, sizeof *c->unfinished, e);
	c->nrun = ckpt_calloc(n, sizeof *c->nrun, e);
	c->nfin = ckpt_calloc(n, sizeof *c->nfin, e);
	if (c->unfinished == NULL || c->nrun == NULL || c->nfin == NULL)
		return -1;
	for (size_t v = 0; v < g->nv; v++) {
		if (ckpt_bits_init(&c->unfinished[v], g->v[v].parallelism, e) < 0)
			return -1;
		census_vertex(c, &g->v[v], v);
	}
	return 0;
}

/* ---- declines, in the order Flink meets them: 1 declined, 0 not, -1 error */

static int
has_union_state(const struct ckpt_vertex *v)
{
	for (size_t k = 0; k < v->nops; k++)
		for (size_t s = 0; s < v->ops[k].nstate; s++)
			if (strcasecmp(v->ops[k].state[s].mode, "union") == 0)
				return 1;
	return 0;
}

static int
check_declines(const struct ckpt_graph *g, const struct census *c, const struct ckpt_plan_opts *o,
	       struct ckpt_plan *p, struct ckpt_err *e)
{
	int any_finished = 0;

	for (size_t v = 0; v < g->nv; v++)
		any_finished |= c->nfin[v] > 0;
	if (any_finished && o->no_finished)
		return decline(p, NOT_ALL_RUNNING, e, "Some tasks of the job have already finished and "
			       "checkpointing with finished tasks is not enabled.");
	for (size_t k = 0; k < g->nv; k++) {
		const struct ckpt_vertex *v = &g->v[g->topo[k]];

		if (c->nrun[g->topo[k]] + c->nfin[g->topo[k]] == v->parallelism)
			continue;
		for (uint32_t i = 0; i < v->parallelism; i++)
			if (v->tasks[i] != CKPT_RUNNING && v->tasks[i] != CKPT_FINISHED)
				return decline(p, NOT_ALL_RUNNING, e, "Checkpoint triggering task %s (%u/%u) is "
					       "not being executed at the moment. Aborting checkpoint.",
					       vertex_name(v), i + 1, v->parallelism);
	}
	for (size_t k = 0; k < g->nv; k++) {
		const struct ckpt_vertex *v = &g->v[g->topo[k]];
		size_t nfin = c->nfin[g->topo[k]];

		if (nfin > 0 && nfin < v->parallelism && has_union_state(v))
			return decline(p, FINALIZE_FAILURE, e, "The vertex %s (id = %s) has used UnionListState, "
				       "but part of its tasks are FINISHED.", vertex_name(v), v->id);
	}
	return 0;
}

/* ---- warnings: FINISHED subtasks with a RUNNING predecessor */

static int
add_warning(struct ckpt_plan *p, const char *text, struct ckpt_err *e)
{
	char **w = ckpt_reallocarray(p->warnings, p->nwarnings + 1, sizeof *w, e);

	if (w == NULL)
		return -1;
	p->warnings = w;
	if ((w[p->nwarnings] = ckpt_strdup(text, e)) == NULL)
		return -1;
	p->nwarnings++;
	return 0;
}

/* Does any subtask in [lo, hi) of u run? */
static int
any_running(const struct ckpt_vertex *u, uint32_t lo, uint32_t hi)
{
	for (uint32_t k = lo; k < hi; k++)
		if (u->tasks[k] == CKPT_RUNNING)
			return 1;
	return 0;
}

/* Mark in bad the finished subtasks of v that have a running predecessor. */
static void
inconsistent(const struct ckpt_graph *g, const struct census *c, size_t v, struct ckpt_bits *bad)
{
	const struct ckpt_vertex *vx = &g->v[v];

	for (size_t k = 0; k < vx->nin; k++) {
		const struct ckpt_edge *ed = &g->e[vx->in[k]];

		if (ed->distribution == CKPT_ALL_TO_ALL && c->nrun[ed->source] > 0) {
			for (uint32_t i = 0; i < vx->parallelism; i++)
				if (vx->tasks[i] == CKPT_FINISHED)
					ckpt_bits_set(bad, i);
			return;
		}
	}
	for (size_t k = 0; k < vx->nin; k++) {
		const struct ckpt_edge *ed = &g->e[vx->in[k]];
		const struct ckpt_vertex *u = &g->v[ed->source];

		if (ed->distribution != CKPT_POINTWISE || c->nrun[ed->source] == 0)
			continue;
		for (uint32_t i = 0; i < vx->parallelism; i++) {
			uint32_t lo, hi;

			if (vx->tasks[i] != CKPT_FINISHED || ckpt_bits_test(bad, i))
				continue;
			ckpt_pointwise_inputs(u->parallelism, vx->parallelism, i, &lo, &hi);
			if (any_running(u, lo, hi))
				ckpt_bits_set(bad, i);
		}
	}
}

static int
find_warnings(const struct ckpt_graph *g, const struct census *c, struct ckpt_plan *p, struct ckpt_err *e)
{
	for (size_t k = 0; k < g->nv; k++) {
		size_t v = g->topo[k];
		struct ckpt_bits bad;
		char *list, text[1024];

		if (c->nfin[v] == 0 || g->v[v].nin == 0)
			continue;
		if (ckpt_bits_init(&bad, g->v[v].parallelism, e) < 0)
			return -1;
		inconsistent(g, c, v, &bad);
		list = ckpt_bits_next(&bad, 0) < bad.n ? ckpt_rangelist_format(&bad) : NULL;
		ckpt_bits_release(&bad);
		if (list == NULL)
			continue;
		snprintf(text, sizeof text, "FINISHED subtasks with a RUNNING predecessor in \"%s\": %s",
			 g->v[v].id, list);
		free(list);
		if (add_warning(p, text, e) < 0)
			return -1;
	}
	return 0;
}

/* ---- the fast algorithm: O(vertices + edges + subtasks + pointwise connections) */

/* pw: scratch room for the indices of v's POINTWISE input edges. */
static void
fast_vertex(const struct ckpt_graph *g, const struct census *c, size_t v, size_t *pw, struct ckpt_plan *p)
{
	const struct ckpt_vertex *vx = &g->v[v];
	const struct ckpt_bits *unf = &c->unfinished[v];
	size_t npw = 0;
	int must_check = 1;

	ckpt_bits_copy(&p->wait_for[v], unf, 0);
	ckpt_bits_copy(&p->finished[v], unf, 1);
	/* an unfinished ALL_TO_ALL upstream, or an all unfinished POINTWISE one, gives every subtask a running predecessor */
	for (size_t k = 0; k < vx->nin && must_check; k++) {
		const struct ckpt_edge *ed = &g->e[vx->in[k]];
		size_t nfin = c->nfin[ed->source];

		if (ed->distribution == CKPT_ALL_TO_ALL ? nfin < g->v[ed->source].parallelism : nfin == 0)
			must_check = 0;
		if (ed->distribution == CKPT_POINTWISE)
			pw[npw++] = vx->in[k];
	}
	if (!must_check)
		return;
	if (npw == 0) {
		ckpt_bits_copy(&p->trigger[v], unf, 0);
		return;
	}
	for (size_t i = ckpt_bits_next(unf, 0); i < unf->n; i = ckpt_bits_next(unf, i + 1)) {
		int pred = 0;

		for (size_t k = 0; k < npw && !pred; k++) {
			const struct ckpt_edge *ed = &g->e[pw[k]];
			uint32_t lo, hi;

			ckpt_pointwise_inputs(g->v[ed->source].parallelism, vx->parallelism, (uint32_t)i, &lo, &hi);
			pred = ckpt_bits_any_in(&c->unfinished[ed->source], lo, hi);
		}
		if (!pred)
			ckpt_bits_set(&p->trigger[v], i);
	}
}

static int
plan_fast(const struct ckpt_graph *g, const struct census *c, struct ckpt_plan *p, struct ckpt_err *e)
{
	size_t *pw = ckpt_calloc(g->ne ? g->ne : 1, sizeof *pw, e);

	if (pw == NULL)
		return -1;
	for (size_t k = 0; k < g->nv; k++) {
		size_t v = g->topo[k];

		if (c->nfin[v] == g->v[v].parallelism) {
			p->fully_finished[v] = 1;
			ckpt_bits_set_range(&p->finished[v], 0, g->v[v].parallelism);
			continue;
		}
		fast_vertex(g, c, v, pw, p);
	}
	free(pw);
	return 0;
}

/* ---- the reference algorithm: every predecessor of every subtask, plainly */

/*
 * Upstream subtasks that may feed downstream subtask i of T from S: all of
 * them for ALL_TO_ALL; for POINTWISE a window one wider on each side than
 * the proportional share, each member then tested with the forward rule
 * (which upstream feeds which downstream), so that the arithmetic of the
 * fast algorithm (which downstream reads which upstream) is checked too.
 */
static void
candidates(const struct ckpt_edge *ed, uint32_t S, uint32_t T, uint32_t i, uint32_t *lo, uint32_t *hi)
{
	uint64_t a = (uint64_t)i * S / T, b = ((uint64_t)i + 1) * S / T + 2;

	*lo = 0;
	*hi = S;
	if (ed->distribution == CKPT_POINTWISE) {
		*lo = a > 0 ? (uint32_t)(a - 1) : 0;
		*hi = b < S ? (uint32_t)b : S;
	}
}

static int
is_predecessor_running(const struct ckpt_graph *g, size_t v, uint32_t i)
{
	const struct ckpt_vertex *vx = &g->v[v];

	for (size_t k = 0; k < vx->nin; k++) {
		const struct ckpt_edge *ed = &g->e[vx->in[k]];
		const struct ckpt_vertex *u = &g->v[ed->source];
		uint32_t jlo, jhi;

		candidates(ed, u->parallelism, vx->parallelism, i, &jlo, &jhi);
		for (uint32_t j = jlo; j < jhi; j++) {
			uint32_t lo, hi;

			if (ed->distribution == CKPT_POINTWISE) {
				ckpt_pointwise_outputs(u->parallelism, vx->parallelism, j, &lo, &hi);
				if (i < lo || i >= hi)
					continue; /* j does not feed i */
			}
			if (u->tasks[j] == CKPT_RUNNING)
				return 1;
		}
	}
	return 0;
}

static void
plan_reference(const struct ckpt_graph *g, struct ckpt_plan *p)
{
	for (size_t v = 0; v < g->nv; v++) {
		const struct ckpt_vertex *vx = &g->v[v];
		int all_finished = 1;

		for (uint32_t i = 0; i < vx->parallelism; i++) {
			if (vx->tasks[i] == CKPT_FINISHED) {
				ckpt_bits_set(&p->finished[v], i);
				continue;
			}
			all_finished = 0;
			ckpt_bits_set(&p->wait_for[v], i);
			if (!is_predecessor_running(g, v, i))
				ckpt_bits_set(&p->trigger[v], i);
		}
		p->fully_finished[v] = (unsigned char)all_finished;
	}
}

/* The work of both algorithms grows with the pointwise connections: refuse absurd numbers, not hang. */
static int
check_size(const struct ckpt_graph *g, struct ckpt_err *e)
{
	uint64_t conn = 0;

	for (size_t k = 0; k < g->ne; k++) {
		uint32_t S = g->v[g->e[k].source].parallelism, T = g->v[g->e[k].target].parallelism;

		if (g->e[k].distribution == CKPT_POINTWISE)
			conn += S > T ? S : T;
	}
	if (conn > CONNECTIONS_LIMIT)
		return ckpt_err_set(e, CKPT_ERR_INPUT, "", "more than %llu pointwise connections in the graph",
				    (unsigned long long)CONNECTIONS_LIMIT);
	return 0;
}

int
ckpt_plan_compute(const struct ckpt_graph *g, const struct ckpt_plan_opts *o, struct ckpt_plan *out,
		  struct ckpt_err *e)
{
	struct census c = {0};
	int declined, ret = -1;

	memset(out, 0, sizeof *out);
	if (check_size(g, e) < 0)
		return -1;
	if (plan_init(out, g, e) < 0 || census_init(&c, g, e) < 0 || find_warnings(g, &c, out, e) < 0 ||
	    (declined = check_declines(g, &c, o, out, e)) < 0)
		goto out;
	if (!declined) { /* a declined checkpoint has no plan: the sets stay empty */
		if (o->algo == CKPT_PLAN_REFERENCE)
			plan_reference(g, out);
		else if (plan_fast(g, &c, out, e) < 0)
			goto out;
	}
	ret = 0;
out:
	census_release(&c, g->nv);
	if (ret < 0)
		ckpt_plan_release(out);
	return ret;
}

/* ---- JSON */

json_t *
ckpt_plan_to_json(const struct ckpt_graph *g, const struct ckpt_plan *p)
{
	json_t *root = json_object(), *ff = json_array(), *w = json_array();
	int declined = p->decline_reason != NULL;

	if (root == NULL || ff == NULL || w == NULL)
		goto fail;
	for (size_t k = 0; k < g->nv; k++)
		if (p->fully_finished[g->topo[k]] && ckpt_json_append_new(ff, json_string(g->v[g->topo[k]].id)) < 0)
			goto fail;
	for (size_t k = 0; k < p->nwarnings; k++)
		if (ckpt_json_append_new(w, json_string(p->warnings[k])) < 0)
			goto fail;
	if (ckpt_json_set_new(root, "trigger", ckpt_vertex_sets_to_json(g, p->trigger)) < 0 ||
	    ckpt_json_set_new(root, "wait_for", ckpt_vertex_sets_to_json(g, p->wait_for)) < 0 ||
	    ckpt_json_set_new(root, "commit_to", ckpt_vertex_sets_to_json(g, p->wait_for)) < 0 ||
	    ckpt_json_set_new(root, "finished", ckpt_vertex_sets_to_json(g, p->finished)) < 0)
		goto fail;
	json_object_set_new(root, "fully_finished", ff);
	json_object_set_new(root, "warnings", w);
	ff = w = NULL;
	if (ckpt_json_set_new(root, "decline", declined ? json_pack("{s:s,s:s}", "reason", p->decline_reason,
								   "message", p->decline_message)
							: json_null()) < 0)
		goto fail;
	return root;
fail:
	json_decref(root);
	json_decref(ff);
	json_decref(w);
	return NULL;
}

int
ckpt_plan_diff(const struct ckpt_graph *g, const struct ckpt_plan *a, const struct ckpt_plan *b, char *what,
	       size_t size)
{
	static const char *const names[] = {"trigger", "wait_for", "finished"};

	if ((a->decline_reason == NULL) != (b->decline_reason == NULL) ||
	    (a->decline_reason && strcmp(a->decline_reason, b->decline_reason) != 0)) {
		snprintf(what, size, "decline");
		return 1;
	}
	if (a->decline_reason)
		return 0;
	for (size_t k = 0; k < g->nv; k++) {
		size_t v = g->topo[k];
		const struct ckpt_bits *sa[] = {&a->trigger[v], &a->wait_for[v], &a->finished[v]};
		const struct ckpt_bits *sb[] = {&b->trigger[v], &b->wait_for[v], &b->finished[v]};

		for (int s = 0; s < 3; s++)
			if (!ckpt_bits_equal(sa[s], sb[s])) {
				snprintf(what, size, "%s of \"%s\"", names[s], g->v[v].id);
				return 1;
			}
		if (a->fully_finished[v] != b->fully_finished[v]) {
			snprintf(what, size, "fully_finished of \"%s\"", g->v[v].id);
			return 1;
		}
	}
	return 0;
}
