/*
 * reset.c: the resets of a recovery (replay.c's plan): by coordinator rules, then the
 * producers of lost partitions, each by region failover through Flink's regions or, when no edge
 * joins subtasks, by a walk over bit sets to the same fixed point.
 */
#include <stdlib.h>
#include <string.h>

#include "replay.h"

/* Partitions a consumer can read again after it restarts (under region failover). */
static int
reconsumable(enum ckpt_partition p)
{
	return p == CKPT_BLOCKING || p == CKPT_HYBRID_FULL || p == CKPT_PIPELINED_APPROXIMATE;
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
reserved(const struct ckpt_rp_ctx *X, const struct ckpt_edge *ed, uint32_t i)
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
refresh_full(struct ckpt_rp_ctx *X)
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
	const struct ckpt_rp_ctx *X = arg;
	const struct ckpt_edge *ed = &X->g->e[k];
	long pv = X->g2p[ed->source];

	if (pv < 0 || !ckpt_bits_test(&X->out->v[pv].finished, j))
		return 1; /* RELEASE: the producer did not finish */
	if (X->listed != NULL && !ckpt_bits_test(&X->listed[ed->source], j))
		return 1; /* not reported */
	return !reserved(X, ed, j); /* OPTIONAL: reported, but not tracked */
}

static void
add_ref(struct ckpt_rp_ctx *X, size_t gv, uint32_t i)
{
	ckpt_bits_set(&X->failed[gv], i);
}

/* Take the restart sets out of the finished sets; an unrecovered vertex touched restarts whole. */
static void
apply_restart(struct ckpt_rp_ctx *X, const struct ckpt_bits *restart)
{
	for (size_t gv = 0; gv < X->g->nv; gv++) {
		struct ckpt_replay_vertex *v = X->g2p[gv] < 0 ? NULL : &X->out->v[X->g2p[gv]];

		if (v == NULL || restart[gv].w == NULL)
			continue;
		ckpt_bits_andnot(&v->finished, &restart[gv]);
		if (v->unrecovered && ckpt_bits_any_in(&restart[gv], 0, restart[gv].n)) {
			v->unrecovered = 0;
			ckpt_bits_fill(&X->failed[gv]);
		}
	}
}

/*
 * Region failover from the failed sets through Flink's regions
 * (ckpt_failover_restart), round by round; with avail, partitions count as
 * available only when tracked (partition_lost).
 */
static int
reset_by_regions(struct ckpt_rp_ctx *X, int avail)
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
			ckpt_bits_clear_all(b);
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
	struct ckpt_rp_ctx *X;
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

/* restart[gv] |= s, or every subtask of gv when s is NULL. */
static void
walk_or(struct walk *W, size_t gv, const struct ckpt_bits *s)
{
	if (s ? ckpt_bits_or(&W->restart[gv], s) : ckpt_bits_fill(&W->restart[gv]))
		W->dirty[gv] = 1;
}

/* The producers of ALL_TO_ALL edge k whose partitions are untracked (partition_lost, a word at a time). */
static void
walk_lost_a2a(struct walk *W, size_t k)
{
	const struct ckpt_rp_ctx *X = W->X;
	const struct ckpt_edge *ed = &X->g->e[k];
	long pv = X->g2p[ed->source];
	struct ckpt_bits *rs = &W->restart[ed->source];
	const struct ckpt_bits *fin;
	int changed;

	if (pv < 0 || !reserved(X, ed, 0)) {
		walk_or(W, ed->source, NULL);
		return;
	}
	/* untracked: not finished, or not listed */
	fin = &X->out->v[pv].finished;
	changed = ckpt_bits_or_not(rs, fin);
	if (X->listed)
		changed |= ckpt_bits_or_not(rs, &X->listed[ed->source]);
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
		ckpt_bits_fill(rs);
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
	/* the new subtasks (restart and not done), a word at a time so that they are walked as they are found */
	for (size_t k = 0; k < (rs->n + 63) / 64; k++) {
		uint64_t w = rs->w[k] & ~dn->w[k];

		dn->w[k] |= w;
		for (; w; w &= w - 1)
			walk_subtask(W, gv, (uint32_t)(k * 64 + (size_t)__builtin_ctzll(w)));
	}
}

static int
reset_by_walk(struct ckpt_rp_ctx *X, int avail)
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
		ckpt_bits_clear_all(&X->failed[gv]);
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
reset_in_recovering(struct ckpt_rp_ctx *X, int avail)
{
	int any = 0;

	for (size_t gv = 0; gv < X->g->nv && !any; gv++)
		any = ckpt_bits_any_in(&X->failed[gv], 0, X->failed[gv].n);
	if (!any)
		return 0;
	if (check_connections(X->g, X->e) < 0)
		return -1;
	if (avail)
		refresh_full(X);
	return X->pipelined ? reset_by_regions(X, avail) : reset_by_walk(X, avail);
}

/* Flink's determineVerticesForResetAfterRestoreOpCoordinator (every vertex counts as holding a coordinator). */
int
ckpt_rp_coordinator_resets(struct ckpt_rp_ctx *X)
{
	for (size_t pv = 0; pv < X->out->nv; pv++) {
		struct ckpt_replay_vertex *v = &X->out->v[pv];
		size_t done = ckpt_bits_count(&v->finished);

		if (X->g->v[v->graph_index].batch_snapshot)
			ckpt_bits_or_not(&X->failed[v->graph_index], &v->finished);
		else if (done == v->parallelism)
			v->unrecovered = 1;
		else
			ckpt_bits_fill(&X->failed[v->graph_index]);
	}
	return reset_in_recovering(X, 0);
}

/* ---- lost partitions */

/* "vertex:subtask" ids of the -a document as bit sets per graph vertex. */
static int
parse_available(struct ckpt_rp_ctx *X, const struct ckpt_jdoc *doc, struct ckpt_bits *listed)
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
classify(struct ckpt_rp_ctx *X, size_t pv, uint32_t i)
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
int
ckpt_rp_partition_resets(struct ckpt_rp_ctx *X, const struct ckpt_jdoc *available)
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
