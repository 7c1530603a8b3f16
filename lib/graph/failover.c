/* failover.c: pipelined regions at subtask level and the restart sets of Flink's failover strategies. */
#include <stdlib.h>
#include <string.h>

#include "graph.h"

/*
 * Beyond this many subtask-to-subtask pointwise connections (summed over
 * the edges) a graph is refused rather than worked on.
 */
#define CONNECTIONS_LIMIT (UINT64_C(1) << 28)

static const char *const strategy_names[] = {"full", "region", "approximate"};

const char *
ckpt_failover_strategy_name(enum ckpt_failover_strategy s)
{
	return (unsigned)s <= CKPT_FAILOVER_APPROXIMATE ? strategy_names[s] : "unknown";
}

int
ckpt_failover_strategy_parse(const char *name)
{
	for (int i = 0; i <= CKPT_FAILOVER_APPROXIMATE; i++)
		if (strcmp(name, strategy_names[i]) == 0)
			return i;
	return -1;
}

/* Only these join producer and consumer into one region (mustBePipelinedConsumed). */
static int
joins(enum ckpt_partition p)
{
	return p == CKPT_PIPELINED || p == CKPT_PIPELINED_BOUNDED;
}

/* Whether a partition of this kind can be consumed again after its consumer restarts. */
static int
reconsumable(enum ckpt_failover_strategy s, enum ckpt_partition p)
{
	return s == CKPT_FAILOVER_APPROXIMATE || p == CKPT_BLOCKING || p == CKPT_HYBRID_FULL ||
	       p == CKPT_PIPELINED_APPROXIMATE;
}

/* Connections of a pointwise edge: each subtask of the larger side has exactly one partner. */
static uint64_t
pointwise_connections(uint32_t S, uint32_t T)
{
	return S > T ? S : T;
}

/* Regions, restart walks and the region graph grow with the pointwise connections: bound them. */
static int
check_size(const struct ckpt_graph *g, struct ckpt_err *e)
{
	uint64_t conn = 0;

	for (size_t k = 0; k < g->ne; k++)
		if (g->e[k].distribution == CKPT_POINTWISE)
			conn += pointwise_connections(g->v[g->e[k].source].parallelism,
						      g->v[g->e[k].target].parallelism);
	if (conn > CONNECTIONS_LIMIT)
		return ckpt_err_set(e, CKPT_ERR_INPUT, "", "more than %llu pointwise connections in the graph",
				    (unsigned long long)CONNECTIONS_LIMIT);
	return 0;
}

void
ckpt_regions_release(struct ckpt_regions *r)
{
	free(r->base);
	free(r->of);
	free(r->first);
	free(r->members);
	memset(r, 0, sizeof *r);
}

/* The vertex (index into g->v) holding global subtask number k. */
static size_t
regions_vertex(const struct ckpt_graph *g, const struct ckpt_regions *r, uint64_t k)
{
	size_t lo = 0, hi = g->nv; /* positions in g->topo; answer is the last with base <= k */

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->base[g->topo[mid]] <= k)
			lo = mid;
		else
			hi = mid;
	}
	return g->topo[lo];
}

/* ---- union-find over global subtask numbers */

struct uf {
	uint32_t *parent, *size;
	unsigned char *whole; /* per vertex: all its subtasks already joined */
};

static uint32_t
uf_find(uint32_t *parent, uint32_t x)
{
	while (parent[x] != x) {
		parent[x] = parent[parent[x]];
		x = parent[x];
	}
	return x;
}

static void
uf_union(struct uf *u, uint32_t a, uint32_t b)
{
	a = uf_find(u->parent, a);
	b = uf_find(u->parent, b);
	if (a == b)
		return;
	if (u->size[a] < u->size[b]) {
		uint32_t t = a;

		a = b;
		b = t;
	}
	u->parent[b] = a;
	u->size[a] += u->size[b];
}

static void
join_whole(struct uf *u, const struct ckpt_graph *g, const struct ckpt_regions *r, size_t v)
{
	uint32_t b = (uint32_t)r->base[v];

	if (u->whole[v])
		return;
	for (uint32_t i = 1; i < g->v[v].parallelism; i++)
		uf_union(u, b, b + i);
	u->whole[v] = 1;
}

/* Join the subtasks that pipelined edges connect: ALL_TO_ALL joins both vertices whole. */
static void
join_pipelined(struct uf *u, const struct ckpt_graph *g, const struct ckpt_regions *r)
{
	for (size_t k = 0; k < g->ne; k++) {
		const struct ckpt_edge *ed = &g->e[k];
		uint32_t S = g->v[ed->source].parallelism, T = g->v[ed->target].parallelism;
		uint32_t bs = (uint32_t)r->base[ed->source], bt = (uint32_t)r->base[ed->target];

		if (!joins(ed->partition))
			continue;
		if (ed->distribution == CKPT_ALL_TO_ALL) {
			join_whole(u, g, r, ed->source);
			join_whole(u, g, r, ed->target);
		}
		if (u->whole[ed->source] && u->whole[ed->target]) {
			uf_union(u, bs, bt);
			continue;
		}
		for (uint32_t j = 0; j < T; j++) {
			uint32_t lo, hi;

			ckpt_pointwise_inputs(S, T, j, &lo, &hi);
			for (uint32_t i = lo; i < hi; i++)
				uf_union(u, bt + j, bs + i);
		}
	}
}

/* Raw regions: the union-find sets, numbered by their first subtask; r->of receives them. */
static int
raw_regions(const struct ckpt_graph *g, struct ckpt_regions *r, uint64_t N, struct ckpt_err *e)
{
	struct uf u = {0};
	int ret = -1;

	u.parent = ckpt_calloc(N, sizeof *u.parent, e);
	u.size = ckpt_calloc(N, sizeof *u.size, e);
	u.whole = ckpt_calloc(g->nv, 1, e);
	if (u.parent == NULL || u.size == NULL || u.whole == NULL)
		goto out;
	for (uint64_t x = 0; x < N; x++) {
		u.parent[x] = (uint32_t)x;
		u.size[x] = 1;
	}
	join_pipelined(&u, g, r);
	for (uint64_t x = 0; x < N; x++)
		u.size[x] = UINT32_MAX; /* from here on: region number of a root */
	r->n = 0;
	for (uint64_t x = 0; x < N; x++) {
		uint32_t root = uf_find(u.parent, (uint32_t)x);

		if (u.size[root] == UINT32_MAX)
			u.size[root] = (uint32_t)r->n++;
		r->of[x] = u.size[root];
	}
	ret = 0;
out:
	free(u.parent);
	free(u.size);
	free(u.whole);
	return ret;
}

/* ---- the graph of raw regions, for merging those that depend on each other in a cycle */

/*
 * Nodes: the raw regions, then two hubs per vertex.  A non-joining
 * ALL_TO_ALL edge u->v becomes regions(u) -> out-hub(u) -> in-hub(v) ->
 * regions(v), which keeps reachability (so the strongly connected
 * components) while costing O(subtasks + edges), not O(regions^2).
 */
struct dg {
	size_t nn;
	size_t *off;  /* nn + 1 */
	uint32_t *adj;
	size_t *pos;  /* NULL while counting */
};

static void
dg_edge(struct dg *d, uint32_t a, uint32_t b)
{
	if (a == b)
		return;
	if (d->pos == NULL)
		d->off[a + 1]++;
	else
		d->adj[d->pos[a]++] = b;
}

static void
emit_hub_links(struct dg *d, const struct ckpt_graph *g, const struct ckpt_regions *r,
	       const unsigned char *hubs, size_t nraw)
{
	for (size_t v = 0; v < g->nv; v++) {
		uint32_t out = (uint32_t)(nraw + 2 * v), in = out + 1;
		const uint32_t *of = r->of + r->base[v];

		for (uint32_t i = 0; i < g->v[v].parallelism; i++) {
			if (i > 0 && of[i] == of[i - 1])
				continue;
			if (hubs[v] & 1)
				dg_edge(d, of[i], out);
			if (hubs[v] & 2)
				dg_edge(d, in, of[i]);
		}
	}
}

static void
emit_region_edges(struct dg *d, const struct ckpt_graph *g, const struct ckpt_regions *r,
		  const unsigned char *hubs, size_t nraw)
{
	for (size_t k = 0; k < g->ne; k++) {
		const struct ckpt_edge *ed = &g->e[k];
		uint32_t S = g->v[ed->source].parallelism, T = g->v[ed->target].parallelism;
		const uint32_t *os = r->of + r->base[ed->source], *ot = r->of + r->base[ed->target];

		if (joins(ed->partition))
			continue;
		if (ed->distribution == CKPT_ALL_TO_ALL) {
			dg_edge(d, (uint32_t)(nraw + 2 * ed->source), (uint32_t)(nraw + 2 * ed->target + 1));
			continue;
		}
		for (uint32_t i = 0; i < S; i++) {
			uint32_t lo, hi;

			ckpt_pointwise_outputs(S, T, i, &lo, &hi);
			for (uint32_t j = lo; j < hi; j++)
				dg_edge(d, os[i], ot[j]);
		}
	}
	emit_hub_links(d, g, r, hubs, nraw);
}

/* Build the region graph; 0 with d->nn == 0 when no edge leaves a region. */
static int
build_region_graph(struct dg *d, const struct ckpt_graph *g, const struct ckpt_regions *r,
		   struct ckpt_err *e)
{
	unsigned char *hubs = ckpt_calloc(g->nv ? g->nv : 1, 1, e);
	int ret = -1, any = 0;

	if (hubs == NULL)
		return -1;
	for (size_t k = 0; k < g->ne; k++) {
		const struct ckpt_edge *ed = &g->e[k];

		if (joins(ed->partition))
			continue;
		any = 1;
		if (ed->distribution == CKPT_ALL_TO_ALL) {
			hubs[ed->source] |= 1;
			hubs[ed->target] |= 2;
		}
	}
	if (!any) {
		d->nn = 0;
		ret = 0;
		goto out;
	}
	d->nn = r->n + 2 * g->nv;
	if (d->nn >= UINT32_MAX) {
		ckpt_err_set(e, CKPT_ERR_INPUT, "", "too many regions and vertices");
		goto out;
	}
	d->off = ckpt_calloc(d->nn + 1, sizeof *d->off, e);
	if (d->off == NULL)
		goto out;
	emit_region_edges(d, g, r, hubs, r->n);
	for (size_t x = 0; x < d->nn; x++)
		d->off[x + 1] += d->off[x];
	d->adj = ckpt_calloc(d->off[d->nn] ? d->off[d->nn] : 1, sizeof *d->adj, e);
	d->pos = ckpt_calloc(d->nn, sizeof *d->pos, e);
	if (d->adj == NULL || d->pos == NULL)
		goto out;
	memcpy(d->pos, d->off, d->nn * sizeof *d->pos);
	emit_region_edges(d, g, r, hubs, r->n);
	ret = 0;
out:
	free(hubs);
	return ret;
}

struct frame {
	uint32_t node;
	size_t pos;
};

/* Tarjan's strongly connected components, without recursion; comp[x] receives each node's component. */
static int
tarjan(const struct dg *d, uint32_t *comp, struct ckpt_err *e)
{
	uint32_t *idx = ckpt_calloc(d->nn, sizeof *idx, e), *low = ckpt_calloc(d->nn, sizeof *low, e);
	uint32_t *stack = ckpt_calloc(d->nn, sizeof *stack, e), counter = 0, ncomp = 0;
	struct frame *call = ckpt_calloc(d->nn, sizeof *call, e);
	size_t sp = 0, cs = 0;
	int ret = -1;

	if (idx == NULL || low == NULL || stack == NULL || call == NULL)
		goto out;
	for (uint32_t s = 0; s < d->nn; s++) {
		if (idx[s])
			continue;
		idx[s] = low[s] = ++counter;
		stack[sp++] = s;
		comp[s] = UINT32_MAX; /* on the stack */
		call[cs++] = (struct frame){s, d->off[s]};
		while (cs > 0) {
			struct frame *f = &call[cs - 1];
			uint32_t v = f->node;

			if (f->pos < d->off[v + 1]) {
				uint32_t w = d->adj[f->pos++];

				if (!idx[w]) {
					idx[w] = low[w] = ++counter;
					stack[sp++] = w;
					comp[w] = UINT32_MAX;
					call[cs++] = (struct frame){w, d->off[w]};
				} else if (comp[w] == UINT32_MAX && idx[w] < low[v]) {
					low[v] = idx[w];
				}
				continue;
			}
			if (low[v] == idx[v]) {
				uint32_t x;

				do {
					x = stack[--sp];
					comp[x] = ncomp;
				} while (x != v);
				ncomp++;
			}
			if (--cs > 0 && low[v] < low[call[cs - 1].node])
				low[call[cs - 1].node] = low[v];
		}
	}
	ret = 0;
out:
	free(idx);
	free(low);
	free(stack);
	free(call);
	return ret;
}

/* Merge raw regions that depend on each other in a cycle, keeping numbers by first subtask. */
static int
merge_cycles(const struct ckpt_graph *g, struct ckpt_regions *r, uint64_t N, struct ckpt_err *e)
{
	struct dg d = {0};
	uint32_t *comp = NULL, *map = NULL;
	size_t n = 0;
	int ret = -1;

	if (build_region_graph(&d, g, r, e) < 0)
		goto out;
	if (d.nn == 0) {
		ret = 0;
		goto out;
	}
	comp = ckpt_calloc(d.nn, sizeof *comp, e);
	map = ckpt_calloc(d.nn, sizeof *map, e);
	if (comp == NULL || map == NULL || tarjan(&d, comp, e) < 0)
		goto out;
	memset(map, 0xff, d.nn * sizeof *map);
	for (size_t x = 0; x < r->n; x++) {
		if (map[comp[x]] == UINT32_MAX)
			map[comp[x]] = (uint32_t)n++;
		comp[x] = map[comp[x]];
	}
	for (uint64_t x = 0; x < N; x++)
		r->of[x] = comp[r->of[x]];
	r->n = n;
	ret = 0;
out:
	free(d.off);
	free(d.adj);
	free(d.pos);
	free(comp);
	free(map);
	return ret;
}

static int
fill_members(struct ckpt_regions *r, uint64_t N, struct ckpt_err *e)
{
	uint32_t *pos;

	r->first = ckpt_calloc(r->n + 1, sizeof *r->first, e);
	r->members = ckpt_calloc(N ? N : 1, sizeof *r->members, e);
	pos = ckpt_calloc(r->n + 1, sizeof *pos, e);
	if (r->first == NULL || r->members == NULL || pos == NULL) {
		free(pos);
		return -1;
	}
	for (uint64_t x = 0; x < N; x++)
		r->first[r->of[x] + 1]++;
	for (size_t k = 0; k < r->n; k++)
		r->first[k + 1] += r->first[k];
	memcpy(pos, r->first, (r->n + 1) * sizeof *pos);
	for (uint64_t x = 0; x < N; x++)
		r->members[pos[r->of[x]]++] = (uint32_t)x;
	free(pos);
	return 0;
}

int
ckpt_regions_compute(const struct ckpt_graph *g, enum ckpt_failover_strategy s,
		     struct ckpt_regions *out, struct ckpt_err *e)
{
	uint64_t N = 0;

	memset(out, 0, sizeof *out);
	out->strategy = s;
	if (check_size(g, e) < 0)
		return -1;
	out->base = ckpt_calloc(g->nv ? g->nv : 1, sizeof *out->base, e);
	if (out->base == NULL)
		goto fail;
	for (size_t k = 0; k < g->nv; k++) {
		out->base[g->topo[k]] = N;
		N += g->v[g->topo[k]].parallelism;
	}
	if (N >= UINT32_MAX) {
		ckpt_err_set(e, CKPT_ERR_INPUT, "", "too many subtasks for failover regions");
		goto fail;
	}
	out->of = ckpt_calloc(N ? N : 1, sizeof *out->of, e);
	if (out->of == NULL)
		goto fail;
	if (s == CKPT_FAILOVER_FULL) {
		out->n = N ? 1 : 0; /* of[] is all 0 already */
	} else if (s == CKPT_FAILOVER_APPROXIMATE) {
		for (uint64_t x = 0; x < N; x++)
			out->of[x] = (uint32_t)x;
		out->n = N;
	} else if (raw_regions(g, out, N, e) < 0 || merge_cycles(g, out, N, e) < 0) {
		goto fail;
	}
	if (fill_members(out, N, e) < 0)
		goto fail;
	return 0;
fail:
	ckpt_regions_release(out);
	return -1;
}

/* ---- restart sets: a breadth-first walk over regions (RestartPipelinedRegionFailoverStrategy) */

struct walk {
	const struct ckpt_graph *g;
	const struct ckpt_regions *r;
	const struct ckpt_bits *lost;
	const struct ckpt_partition_loss *loss; /* per partition instead of lost, or NULL */
	struct ckpt_bits *restart;
	struct ckpt_bits seen;    /* regions queued */
	uint32_t *queue;
	size_t head, tail;
	unsigned char *all;       /* per vertex: every subtask queued */
	unsigned char *lost_done; /* per vertex (per edge with loss): its lost producers queued */
	unsigned char *a2a_done;  /* per vertex: its ALL_TO_ALL edges handled */
};

/* Is the partition producer subtask j writes for edge k lost? */
static int
is_lost(const struct walk *w, size_t k, uint32_t j)
{
	if (w->loss != NULL)
		return w->loss->lost(w->loss->arg, k, j);
	return w->lost != NULL && ckpt_bits_test(&w->lost[w->g->e[k].source], j);
}

static void
queue_region(struct walk *w, uint32_t region)
{
	if (ckpt_bits_test(&w->seen, region))
		return;
	ckpt_bits_set(&w->seen, region);
	w->queue[w->tail++] = region;
}

static void
queue_subtask(struct walk *w, size_t v, uint32_t i)
{
	queue_region(w, w->r->of[w->r->base[v] + i]);
}

static void
queue_vertex(struct walk *w, size_t v)
{
	if (w->all[v])
		return;
	w->all[v] = 1;
	for (uint32_t i = 0; i < w->g->v[v].parallelism; i++)
		queue_subtask(w, v, i);
}

/* The producers of edge k whose partitions are lost. */
static void
queue_lost(struct walk *w, size_t k)
{
	size_t v = w->g->e[k].source;
	const struct ckpt_bits *b;

	if (w->loss != NULL) {
		if (w->lost_done[k] || w->all[v])
			return;
		w->lost_done[k] = 1;
		for (uint32_t j = 0; j < w->g->v[v].parallelism; j++)
			if (w->loss->lost(w->loss->arg, k, j))
				queue_subtask(w, v, j);
		return;
	}
	if (w->lost == NULL || w->lost_done[v] || w->all[v])
		return;
	w->lost_done[v] = 1;
	b = &w->lost[v];
	for (size_t i = ckpt_bits_next(b, 0); i < b->n; i = ckpt_bits_next(b, i + 1))
		queue_subtask(w, v, (uint32_t)i);
}

/* ALL_TO_ALL edges do not depend on which subtask of v restarts: handle them once per vertex. */
static void
visit_vertex(struct walk *w, size_t v)
{
	const struct ckpt_vertex *vx = &w->g->v[v];

	if (w->a2a_done[v])
		return;
	w->a2a_done[v] = 1;
	for (size_t k = 0; k < vx->nout; k++) {
		const struct ckpt_edge *ed = &w->g->e[vx->out[k]];

		if (ed->distribution == CKPT_ALL_TO_ALL)
			queue_vertex(w, ed->target);
	}
	for (size_t k = 0; k < vx->nin; k++) {
		const struct ckpt_edge *ed = &w->g->e[vx->in[k]];

		if (ed->distribution != CKPT_ALL_TO_ALL)
			continue;
		if (reconsumable(w->r->strategy, ed->partition))
			queue_lost(w, vx->in[k]);
		else
			queue_vertex(w, ed->source);
	}
}

/* Subtask i of v restarts: its consumers restart, and so do the producers it cannot read again. */
static void
visit_subtask(struct walk *w, size_t v, uint32_t i)
{
	const struct ckpt_vertex *vx = &w->g->v[v];

	ckpt_bits_set(&w->restart[v], i);
	visit_vertex(w, v);
	for (size_t k = 0; k < vx->nout; k++) {
		const struct ckpt_edge *ed = &w->g->e[vx->out[k]];
		uint32_t lo, hi;

		if (ed->distribution != CKPT_POINTWISE || w->all[ed->target])
			continue;
		ckpt_pointwise_outputs(vx->parallelism, w->g->v[ed->target].parallelism, i, &lo, &hi);
		for (uint32_t j = lo; j < hi; j++)
			queue_subtask(w, ed->target, j);
	}
	for (size_t k = 0; k < vx->nin; k++) {
		const struct ckpt_edge *ed = &w->g->e[vx->in[k]];
		int avail = reconsumable(w->r->strategy, ed->partition);
		uint32_t lo, hi;

		if (ed->distribution != CKPT_POINTWISE || w->all[ed->source])
			continue;
		ckpt_pointwise_inputs(w->g->v[ed->source].parallelism, vx->parallelism, i, &lo, &hi);
		for (uint32_t j = lo; j < hi; j++)
			if (!avail || is_lost(w, vx->in[k], j))
				queue_subtask(w, ed->source, j);
	}
}

static void
walk_run(struct walk *w)
{
	while (w->head < w->tail) {
		uint32_t region = w->queue[w->head++];

		for (uint32_t m = w->r->first[region]; m < w->r->first[region + 1]; m++) {
			uint32_t x = w->r->members[m];
			size_t v = regions_vertex(w->g, w->r, x);

			visit_subtask(w, v, (uint32_t)(x - w->r->base[v]));
		}
	}
}

static int
check_request(const struct ckpt_graph *g, const struct ckpt_task_ref *failed, size_t nfailed,
	      const struct ckpt_bits *lost, struct ckpt_err *e)
{
	for (size_t k = 0; k < nfailed; k++) {
		if (failed[k].vertex >= g->nv)
			return ckpt_err_set(e, CKPT_ERR_INPUT, "", "failed subtask %zu: no vertex %zu",
					    k, failed[k].vertex);
		if (failed[k].subtask >= g->v[failed[k].vertex].parallelism)
			return ckpt_err_set(e, CKPT_ERR_INPUT, "",
					    "failed subtask %s:%u out of range (parallelism %u)",
					    g->v[failed[k].vertex].id, failed[k].subtask,
					    g->v[failed[k].vertex].parallelism);
	}
	for (size_t v = 0; lost && v < g->nv; v++)
		if (lost[v].n != g->v[v].parallelism)
			return ckpt_err_set(e, CKPT_ERR_INPUT, "",
					    "lost partitions of \"%s\": %zu subtasks for parallelism %u",
					    g->v[v].id, lost[v].n, g->v[v].parallelism);
	return 0;
}

static void
release_sets(struct ckpt_bits *sets, size_t n)
{
	for (size_t v = 0; v < n; v++)
		ckpt_bits_release(&sets[v]);
}

static int
restart_walk(const struct ckpt_graph *g, const struct ckpt_regions *r, const struct ckpt_task_ref *failed,
	     size_t nfailed, const struct ckpt_bits *lost, const struct ckpt_partition_loss *loss,
	     struct ckpt_bits *restart, size_t *nregions, struct ckpt_err *e)
{
	struct walk w = {g, r, lost, loss, restart, {0}, NULL, 0, 0, NULL, NULL, NULL};
	size_t nd = loss ? g->ne : g->nv;
	int ret = -1;

	memset(restart, 0, g->nv * sizeof *restart);
	if (check_request(g, failed, nfailed, lost, e) < 0)
		return -1;
	for (size_t v = 0; v < g->nv; v++)
		if (ckpt_bits_init(&restart[v], g->v[v].parallelism, e) < 0)
			goto out;
	w.queue = ckpt_calloc(r->n ? r->n : 1, sizeof *w.queue, e);
	w.all = ckpt_calloc(g->nv ? g->nv : 1, 1, e);
	w.lost_done = ckpt_calloc(nd ? nd : 1, 1, e);
	w.a2a_done = ckpt_calloc(g->nv ? g->nv : 1, 1, e);
	if (w.queue == NULL || w.all == NULL || w.lost_done == NULL || w.a2a_done == NULL ||
	    ckpt_bits_init(&w.seen, r->n, e) < 0)
		goto out;
	for (size_t k = 0; k < nfailed; k++)
		queue_subtask(&w, failed[k].vertex, failed[k].subtask);
	walk_run(&w);
	if (nregions)
		*nregions = w.tail;
	ret = 0;
out:
	if (ret < 0)
		release_sets(restart, g->nv);
	ckpt_bits_release(&w.seen);
	free(w.queue);
	free(w.all);
	free(w.lost_done);
	free(w.a2a_done);
	return ret;
}

int
ckpt_failover_restart_in(const struct ckpt_graph *g, const struct ckpt_regions *r,
			 const struct ckpt_task_ref *failed, size_t nfailed,
			 const struct ckpt_bits *lost, struct ckpt_bits *restart,
			 size_t *nregions, struct ckpt_err *e)
{
	return restart_walk(g, r, failed, nfailed, lost, NULL, restart, nregions, e);
}

int
ckpt_failover_restart_loss(const struct ckpt_graph *g, const struct ckpt_regions *r,
			   const struct ckpt_task_ref *failed, size_t nfailed,
			   const struct ckpt_partition_loss *loss, struct ckpt_bits *restart,
			   size_t *nregions, struct ckpt_err *e)
{
	return restart_walk(g, r, failed, nfailed, NULL, loss, restart, nregions, e);
}

int
ckpt_failover_restart(const struct ckpt_graph *g, enum ckpt_failover_strategy s,
		      const struct ckpt_task_ref *failed, size_t nfailed, const struct ckpt_bits *lost,
		      struct ckpt_bits *restart, struct ckpt_err *e)
{
	struct ckpt_regions r;
	int ret;

	memset(restart, 0, g->nv * sizeof *restart);
	if (check_request(g, failed, nfailed, lost, e) < 0 || ckpt_regions_compute(g, s, &r, e) < 0)
		return -1;
	ret = ckpt_failover_restart_in(g, &r, failed, nfailed, lost, restart, NULL, e);
	ckpt_regions_release(&r);
	return ret;
}

/* ---- JSON */

json_t *
ckpt_vertex_sets_to_json(const struct ckpt_graph *g, const struct ckpt_bits *sets)
{
	json_t *arr = json_array();

	for (size_t k = 0; arr && k < g->nv; k++) {
		size_t v = g->topo[k];
		char *s;

		if (ckpt_bits_next(&sets[v], 0) >= sets[v].n)
			continue;
		s = ckpt_rangelist_format(&sets[v]);
		if (s == NULL || ckpt_json_append_new(arr, json_pack("{s:s,s:s}", "vertex", g->v[v].id,
								     "subtasks", s)) < 0) {
			free(s);
			json_decref(arr);
			return NULL;
		}
		free(s);
	}
	return arr;
}

/* A growing string for range lists built from ascending numbers. */
struct sbuf {
	char *p;
	size_t len, cap;
};

/* Append sep (may be "") and x. */
static int
sbuf_add(struct sbuf *b, const char *sep, uint32_t x)
{
	char tmp[24];
	int k = snprintf(tmp, sizeof tmp, "%s%u", sep, x);

	if (ckpt_grow(&b->p, &b->cap, b->len + (size_t)k + 1, 1, 64, NULL) < 0)
		return -1;
	memcpy(b->p + b->len, tmp, (size_t)k + 1);
	b->len += (size_t)k;
	return 0;
}

/* The range list of the ascending subtasks s[0..n), n >= 1. */
static int
ranges_of(struct sbuf *b, const uint32_t *s, size_t n)
{
	b->len = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j + 1 < n && s[j + 1] == s[j] + 1)
			j++;
		if (sbuf_add(b, i > 0 ? "," : "", s[i]) < 0 || (j > i && sbuf_add(b, "-", s[j]) < 0))
			return -1;
		i = j + 1;
	}
	return 0;
}

static json_t *
region_to_json(const struct ckpt_graph *g, const struct ckpt_regions *r, size_t region,
	       struct sbuf *b, uint32_t *tmp)
{
	json_t *arr = json_array();
	uint32_t m = r->first[region], end = r->first[region + 1];

	while (arr && m < end) {
		size_t v = regions_vertex(g, r, r->members[m]), n = 0;
		uint64_t lo = r->base[v], hi = lo + g->v[v].parallelism;

		for (; m < end && r->members[m] < hi; m++)
			tmp[n++] = (uint32_t)(r->members[m] - lo);
		if (ranges_of(b, tmp, n) < 0 ||
		    ckpt_json_append_new(arr, json_pack("{s:s,s:s}", "vertex", g->v[v].id, "subtasks", b->p)) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

json_t *
ckpt_regions_to_json(const struct ckpt_graph *g, const struct ckpt_regions *r)
{
	json_t *root = json_object(), *arr = json_array();
	uint32_t *tmp = calloc(r->first[r->n] ? r->first[r->n] : 1, sizeof *tmp);
	struct sbuf b = {0};

	if (root == NULL || arr == NULL || tmp == NULL)
		goto fail;
	for (size_t k = 0; k < r->n; k++)
		if (ckpt_json_append_new(arr, region_to_json(g, r, k, &b, tmp)) < 0)
			goto fail;
	if (ckpt_json_set_new(root, "strategy", json_string(ckpt_failover_strategy_name(r->strategy))) < 0)
		goto fail;
	if (ckpt_json_set_new(root, "regions", arr) < 0) { /* arr is taken even on failure */
		arr = NULL;
		goto fail;
	}
	free(tmp);
	free(b.p);
	return root;
fail:
	json_decref(arr);
	json_decref(root);
	free(tmp);
	free(b.p);
	return NULL;
}
