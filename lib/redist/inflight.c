/* inflight.c: the in-flight data of a Flink unaligned checkpoint onto new parallelism, as Flink's
 * StateAssignmentOperation and TaskStateAssignment assign it, through each edge's SubtaskStateMapper. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redist.h"

/*
 * Flink's restore splits the channel state of a rescaled vertex per input gate and per result
 * partition and hands old subtask j's handles of gate g to every new subtask whose list of old
 * subtasks (the gate's mapper, RescaleMappings new -> old) holds j.  The mapper of an input gate
 * is its partitioner's downstream SubtaskStateMapper, that of a result partition the consuming
 * gate's upstream one.  Each new subtask also gets, per gate and partition with in-flight data,
 * a rescaling descriptor: its old subtasks, the ambiguous ones (old subtasks that more than one
 * new subtask reads, whose records are filtered on recovery) and whether it is an identity.
 */

enum rd_mapper { M_NONE, M_ARBITRARY, M_FIRST, M_FULL, M_RANGE, M_ROUND_ROBIN, M_UNSUPPORTED };

#define FLINK_UNSUPPORTED "Cannot rescale the given pointwise partitioner. Did you change the partitioner to forward or rescale? It may also help to add an explicit shuffle()."
#define FLINK_CHAINED "Cannot recover from unaligned checkpoint when topology changes, such that data exchanges with persisted data are now chained. The following operators contain channel state: "
#define UPPER_BOUND_MAX_PARALLELISM 32768u /* KeyGroupRangeAssignment's; RANGE's arithmetic uses it */

/* The partitioner's getDownstreamSubtaskStateMapper: the input gate's mapper. */
static enum rd_mapper
down_mapper(enum ckpt_ship s)
{
	switch (s) {
	case CKPT_SHIP_HASH: return M_RANGE;
	case CKPT_SHIP_REBALANCE: case CKPT_SHIP_SHUFFLE: return M_ROUND_ROBIN;
	case CKPT_SHIP_GLOBAL: return M_FIRST;
	case CKPT_SHIP_CUSTOM: return M_FULL;
	case CKPT_SHIP_FORWARD: case CKPT_SHIP_RESCALE: case CKPT_SHIP_BROADCAST: return M_UNSUPPORTED;
	default: return M_NONE;
	}
}

/* getUpstreamSubtaskStateMapper: StreamPartitioner's default ARBITRARY, but for the pointwise and
 * broadcast partitioners. */
static enum rd_mapper
up_mapper(enum ckpt_ship s)
{
	switch (s) {
	case CKPT_SHIP_NONE: return M_NONE;
	case CKPT_SHIP_FORWARD: case CKPT_SHIP_RESCALE: case CKPT_SHIP_BROADCAST: return M_UNSUPPORTED;
	default: return M_ARBITRARY;
	}
}

/* Does new subtask t of newp read old subtask j of oldp (getOldSubtasks)? */
static int
maps(enum rd_mapper m, uint32_t t, uint32_t oldp, uint32_t newp, uint32_t j)
{
	uint32_t f, l, a, b;

	switch (m) {
	case M_ARBITRARY: case M_ROUND_ROBIN:
		return j % newp == t;
	case M_FIRST:
		return t == 0;
	case M_FULL:
		return 1;
	case M_RANGE:
		ckpt_key_group_range(UPPER_BOUND_MAX_PARALLELISM, newp, t, &f, &l);
		a = (uint32_t)((uint64_t)f * oldp / UPPER_BOUND_MAX_PARALLELISM);
		b = (uint32_t)((uint64_t)l * oldp / UPPER_BOUND_MAX_PARALLELISM);
		return j >= a && j <= b;
	default:
		return 0;
	}
}

/* RescaleMappings.isIdentity of the mapping new -> old: new subtask t < oldp reads old t alone,
 * the others nothing. */
static int
identity(enum rd_mapper m, uint32_t oldp, uint32_t newp)
{
	switch (m) {
	case M_ARBITRARY: case M_ROUND_ROBIN:
		return newp >= oldp;
	case M_FIRST:
		return oldp == 1;
	case M_FULL:
		return oldp == 1 && newp == 1;
	case M_RANGE:
		return newp == oldp;
	default:
		return 0;
	}
}

/* RescaleMappings.getAmbiguousTargets, for the mappers that may have some: does more than one new
 * subtask read old subtask j?  Under RANGE, those whose key groups overlap j's. */
static int
ambiguous(enum rd_mapper m, uint32_t oldp, uint32_t newp, uint32_t j)
{
	uint32_t f, l;

	if (m == M_FULL)
		return newp > 1;
	if (m != M_RANGE)
		return 0;
	ckpt_key_group_range(UPPER_BOUND_MAX_PARALLELISM, oldp, j, &f, &l);
	return (uint64_t)l * newp / UPPER_BOUND_MAX_PARALLELISM > (uint64_t)f * newp / UPPER_BOUND_MAX_PARALLELISM;
}

/* ------------------------------------------------------------------ vertices and their edges */

static size_t
gate_of(const struct ckpt_graph *g, size_t edge)
{
	const struct ckpt_vertex *v = &g->v[g->e[edge].target];

	for (size_t k = 0; k < v->nin; k++)
		if (v->in[k] == edge)
			return k;
	return 0;
}

static size_t
partition_of(const struct ckpt_graph *g, size_t edge)
{
	const struct ckpt_vertex *v = &g->v[g->e[edge].source];

	for (size_t k = 0; k < v->nout; k++)
		if (v->out[k] == edge)
			return k;
	return 0;
}

/* The gate (input) or partition (output) indexes a channel handle names, one per channel of a
 * merged handle; -1 where the handle has none. */
static long
handle_index(const struct ckpt_handle *h, size_t k, int input)
{
	const char *key = input ? "gate" : "partition";
	json_t *chans = json_object_get(h->detail, "channels");

	if (strcmp(h->kind, "merged_channels") == 0)
		return k < json_array_size(chans) ?
			(long)json_integer_value(json_object_get(json_array_get(chans, k), key)) : -1;
	return k == 0 ? (long)json_integer_value(json_object_get(h->detail, key)) : -1;
}

static long
handle_channel(const struct ckpt_handle *h, size_t k, int input)
{
	const char *key = input ? "channel" : "subpartition";
	json_t *chans = json_object_get(h->detail, "channels");

	if (strcmp(h->kind, "merged_channels") == 0)
		return (long)json_integer_value(json_object_get(json_array_get(chans, k), key));
	return (long)json_integer_value(json_object_get(h->detail, key));
}

static int
chan_scope(const struct ckpt_handle *h, int *input)
{
	if (strcmp(h->scope, "input_channel") == 0)
		return *input = 1;
	if (strcmp(h->scope, "output_channel") == 0)
		return *input = 0, 1;
	return 0;
}

/* The channels of a POINTWISE gate of downstream subtask j (input), or the subpartitions of
 * upstream subtask j's partition, S upstream and T downstream subtasks (ckpt-graph(5)). */
static uint64_t
pointwise_width(uint32_t S, uint32_t T, uint32_t j, int input)
{
	uint64_t lo, hi;

	if (input && S >= T)
		return (uint64_t)(j + 1) * S / T - (uint64_t)j * S / T;
	if (input)
		return 1;
	if (S >= T)
		return 1;
	lo = ((uint64_t)j * T + S - 1) / S;
	hi = ((uint64_t)(j + 1) * T + S - 1) / S;
	return hi - lo;
}

/* Does op o hold channel handles of one side (input: gates), and do some name data (offsets)?
 * Their bytes. */
static uint64_t
side_bytes(const struct ckpt_redist_op *o, int input, int *any, int *data)
{
	uint64_t n = 0;

	*any = *data = 0;
	for (uint32_t j = 0; j < o->P; j++) {
		const struct ckpt_subtask *st = o->at[j];

		for (size_t h = 0; st && h < st->nhandles; h++) {
			const struct ckpt_handle *x = &st->handles[h];
			json_t *chans = json_object_get(x->detail, "channels"), *c;
			size_t i;
			int in;

			if (!chan_scope(x, &in) || in != input)
				continue;
			*any = 1;
			n += x->size;
			*data |= json_array_size(json_object_get(x->detail, "offsets")) > 0;
			json_array_foreach(chans, i, c)
				*data |= json_array_size(json_object_get(c, "offsets")) > 0;
		}
	}
	return n;
}

static int
chained(const struct ckpt_redist_op *o, int input)
{
	return o->gv >= 0 && o->how != RD_FINISHED && (input ? o->not_head : o->not_tail);
}

static int __attribute__((format(printf, 3, 4)))
add_warning(struct ckpt_redist *r, struct ckpt_err *e, const char *fmt, ...)
{
	va_list ap;

	if (ckpt_grow(&r->warn, &r->warncap, r->nwarn + 1, sizeof *r->warn, 4, e) < 0)
		return -1;
	va_start(ap, fmt);
	r->warn[r->nwarn] = ckpt_vstrdupf(e, 512, fmt, ap);
	va_end(ap);
	if (r->warn[r->nwarn] == NULL)
		return -1;
	r->nwarn++;
	return 0;
}

/*
 * Flink's restore hands a vertex's input channel state to its head operator alone and its output
 * channel state to its last operator alone (TaskStateAssignment's input and output operator).
 * That of another operator, one chained into the vertex since the checkpoint, is looked at only
 * when the vertex redistributes that side, which it does when its head (last) operator or a vertex
 * across its gates (partitions) holds channel handles of the exchange: then such state with data
 * is refused (checkForUnsupportedToplogyChanges).  Otherwise, and without data, it is dropped.
 */
static int
chained_side(struct ckpt_redist *r, size_t vi, int input, struct ckpt_err *e)
{
	const struct ckpt_graph *g = r->graph;
	const struct ckpt_vertex *v = &g->v[vi];
	int again = input ? r->vx[vi].head_in : r->vx[vi].tail_out, any, data;
	char ids[1024] = "";

	for (size_t k = 0; k < (input ? v->nin : v->nout); k++) {
		size_t edge = input ? v->in[k] : v->out[k];
		const struct ckpt_redist_vert *N = &r->vx[input ? g->e[edge].source : g->e[edge].target];

		again |= input ? N->tail_out : N->head_in;
	}
	for (size_t i = 0; again && i < r->nops; i++) {
		const struct ckpt_redist_op *o = &r->ops[i];

		if (o->gv != (long)vi || !chained(o, input))
			continue;
		side_bytes(o, input, &any, &data);
		if (data)
			snprintf(ids + strlen(ids), sizeof ids - strlen(ids), "%s%s", ids[0] ? ", " : "", o->old->id);
	}
	if (ids[0])
		return ckpt_err_set(e, CKPT_ERR_REFUSED, r->name, "%s[%s]", FLINK_CHAINED, ids);
	for (size_t i = 0; i < r->nops; i++) {
		const struct ckpt_redist_op *o = &r->ops[i];
		uint64_t n;

		if (o->gv != (long)vi || !chained(o, input))
			continue;
		n = side_bytes(o, input, &any, &data);
		if (any && add_warning(r, e, "operator %s: %llu bytes of %s in-flight data dropped: it is chained into vertex %s, whose %s operator alone restores %s in-flight data, as Flink's restore drops it",
				ckpt_redist_opname(o->old), (unsigned long long)n, input ? "input" : "output", v->id,
				input ? "first" : "last", input ? "input" : "output") < 0)
			return -1;
	}
	return 0;
}

/* Mark the gates and partitions that hold state; check them against the graph (exit 2). */
static int
mark_op(struct ckpt_redist *r, struct ckpt_redist_op *o, struct ckpt_err *e)
{
	const struct ckpt_graph *g = r->graph;
	struct ckpt_redist_vert *V = &r->vx[o->gv];
	const struct ckpt_vertex *v = &g->v[o->gv];

	for (uint32_t j = 0; j < o->P; j++) {
		const struct ckpt_subtask *st = o->at[j];

		for (size_t h = 0; st && h < st->nhandles; h++) {
			int input;
			long x;

			if (!chan_scope(&st->handles[h], &input) || chained(o, input))
				continue;
			for (size_t k = 0; (x = handle_index(&st->handles[h], k, input)) >= 0; k++) {
				size_t n = input ? v->nin : v->nout, edge;
				const struct ckpt_redist_vert *N;
				long c = handle_channel(&st->handles[h], k, input);
				uint64_t w;

				if ((size_t)x >= n)
					return ckpt_err_set(e, CKPT_ERR_INPUT, r->name,
							    "operator %s: subtask %u: %s channel state of %s %ld, but vertex %s of the graph has %zu %s",
							    ckpt_redist_opname(o->old), j, input ? "input" : "output",
							    input ? "gate" : "partition", x, v->id, n,
							    input ? "input gates" : "result partitions");
				edge = input ? v->in[x] : v->out[x];
				N = &r->vx[input ? g->e[edge].source : g->e[edge].target];
				(input ? V->in_state : V->out_state)[x] = 1;
				*(input ? &V->any_in : &V->any_out) = 1;
				if (!N->known)
					continue;
				w = N->oldp;
				if (g->e[edge].distribution == CKPT_POINTWISE)
					w = input ? pointwise_width(N->oldp, V->oldp, j, 1) :
						    pointwise_width(V->oldp, N->oldp, j, 0);
				if (c < 0 || (uint64_t)c >= w)
					return ckpt_err_set(e, CKPT_ERR_INPUT, r->name,
							    "operator %s: subtask %u: %s channel state of %s %ld %s %ld, but that %s has %u %ss in the graph",
							    ckpt_redist_opname(o->old), j, input ? "input" : "output",
							    input ? "gate" : "partition", x, input ? "channel" : "subpartition", c,
							    input ? "gate" : "partition", (unsigned)w,
							    input ? "channel" : "subpartition");
			}
		}
	}
	return 0;
}

/* A mapper Flink needs: refused as Flink refuses (UNSUPPORTED), or for want of the partitioner. */
static int
need(struct ckpt_redist *r, size_t edge, enum rd_mapper m, struct ckpt_err *e)
{
	const struct ckpt_graph *g = r->graph;

	if (m == M_UNSUPPORTED)
		return ckpt_err_set(e, CKPT_ERR_REFUSED, r->name, "%s", FLINK_UNSUPPORTED);
	if (m == M_NONE)
		return ckpt_err_set(e, CKPT_ERR_REFUSED, r->name,
				    "edge %s -> %s holds in-flight data of an unaligned checkpoint, which its partitioner rescales, but the graph does not name the partitioner (ckpt-graph(5))",
				    g->v[g->e[edge].source].id, g->v[g->e[edge].target].id);
	return 0;
}

static struct ckpt_redist_op *
op_of_vertex(struct ckpt_redist *r, size_t vi)
{
	for (size_t i = 0; i < r->nops; i++)
		if (r->ops[i].gv == (long)vi && r->ops[i].how != RD_FINISHED)
			return &r->ops[i];
	return NULL;
}

/* Does the gate (input) or partition of vertex vi hold in-flight data, its own or its neighbour's? */
static int
in_flight(const struct ckpt_redist *r, size_t vi, size_t k, int input)
{
	const struct ckpt_graph *g = r->graph;
	const struct ckpt_vertex *v = &g->v[vi];
	size_t edge = input ? v->in[k] : v->out[k];

	if (input)
		return r->vx[vi].in_state[k] || r->vx[g->e[edge].source].out_state[partition_of(g, edge)];
	return r->vx[vi].out_state[k] || r->vx[g->e[edge].target].in_state[gate_of(g, edge)];
}

static int
rescaled(const struct ckpt_redist_vert *V)
{
	return V->oldp != V->newp;
}

/*
 * Which mappings Flink computes, and so may refuse (since FLINK-38267, in both lines tested:
 * only those of exchanges with in-flight data): a rescaled vertex's for each such gate and
 * partition.  Its subtasks then get a rescaling descriptor for a side (inputs, outputs) when it or
 * the vertex across some such exchange was rescaled, with both mappings of every such exchange.
 */
static int
plan_side(struct ckpt_redist *r, size_t vi, int input, struct ckpt_err *e)
{
	const struct ckpt_graph *g = r->graph;
	const struct ckpt_vertex *v = &g->v[vi];
	struct ckpt_redist_vert *V = &r->vx[vi];
	struct ckpt_redist_op *o = op_of_vertex(r, vi);
	size_t n = input ? v->nin : v->nout;
	int any = 0;

	for (size_t k = 0; k < n; k++) {
		size_t edge = input ? v->in[k] : v->out[k];
		const struct ckpt_redist_vert *N = &r->vx[input ? g->e[edge].source : g->e[edge].target];

		if (in_flight(r, vi, k, input) && (rescaled(V) || rescaled(N)))
			any = 1;
	}
	if (!any)
		return 0;
	*(input ? &V->in_desc : &V->out_desc) = o != NULL;
	for (size_t k = 0; k < n; k++) {
		size_t edge = input ? v->in[k] : v->out[k];
		enum ckpt_ship s = g->e[edge].ship;

		if (!in_flight(r, vi, k, input))
			continue;
		if (need(r, edge, input ? down_mapper(s) : up_mapper(s), e) < 0 ||
		    need(r, edge, input ? up_mapper(s) : down_mapper(s), e) < 0)
			return -1;
	}
	return 0;
}

/* In-flight data as entries (a state document) rather than as a _metadata's handles. */
static int
chan_entries(const struct ckpt_redist_op *o)
{
	for (uint32_t j = 0; j < o->P; j++) {
		const struct ckpt_subtask *st = o->at[j];
		size_t n = 0;
		int input;

		for (size_t h = 0; st && h < st->nhandles; h++)
			n += (size_t)chan_scope(&st->handles[h], &input);
		if (st && st->nin + st->nout > 0 && n == 0)
			return 1;
	}
	return 0;
}

int
ckpt_redist_plan_inflight(struct ckpt_redist *r, struct ckpt_err *e)
{
	const struct ckpt_graph *g = r->graph;

	for (size_t i = 0; i < r->nops; i++) {
		struct ckpt_redist_op *o = &r->ops[i];

		if (!o->chan || o->how != RD_RESCALE)
			continue;
		if (r->in->flink == NULL)
			return ckpt_err_set(e, CKPT_ERR_REFUSED, r->name,
					    "operator %s holds in-flight data of an unaligned checkpoint and cannot be rescaled from %u to %u: take a savepoint and rescale from that",
					    ckpt_redist_opname(o->old), o->P, o->p);
		if (chan_entries(o))
			return ckpt_err_set(e, CKPT_ERR_REFUSED, r->name,
					    "operator %s holds in-flight data of an unaligned checkpoint as entries: ckpt-merge rescales a Flink snapshot's in-flight data from its _metadata only",
					    ckpt_redist_opname(o->old));
		if (g == NULL)
			return ckpt_err_set(e, CKPT_ERR_REFUSED, r->name,
					    "operator %s holds in-flight data of an unaligned checkpoint: rescaling it from %u to %u needs the job graph's partitioners (-g)",
					    ckpt_redist_opname(o->old), o->P, o->p);
	}
	if (g == NULL || r->in->flink == NULL)
		return 0;
	r->vx = ckpt_calloc(g->nv, sizeof *r->vx, e);
	if (r->vx == NULL)
		return -1;
	for (size_t i = 0; i < g->nv; i++) {
		struct ckpt_redist_op *o = op_of_vertex(r, i);

		r->vx[i].in_state = ckpt_calloc(g->v[i].nin + 1, 1, e);
		r->vx[i].out_state = ckpt_calloc(g->v[i].nout + 1, 1, e);
		if (r->vx[i].in_state == NULL || r->vx[i].out_state == NULL)
			return -1;
		r->vx[i].known = o != NULL;
		r->vx[i].oldp = o ? o->P : g->v[i].parallelism;
		r->vx[i].newp = g->v[i].parallelism;
	}
	for (size_t i = 0; i < r->nops; i++) {
		struct ckpt_redist_op *o = &r->ops[i];
		int any, data;

		if (o->gv < 0 || o->how == RD_FINISHED)
			continue;
		if (!o->not_head && (side_bytes(o, 1, &any, &data), any))
			r->vx[o->gv].head_in = 1;
		if (!o->not_tail && (side_bytes(o, 0, &any, &data), any))
			r->vx[o->gv].tail_out = 1;
	}
	for (size_t i = 0; i < g->nv; i++)
		if (chained_side(r, i, 1, e) < 0 || chained_side(r, i, 0, e) < 0)
			return -1;
	for (size_t i = 0; i < r->nops; i++)
		if (r->ops[i].gv >= 0 && r->ops[i].how != RD_FINISHED && mark_op(r, &r->ops[i], e) < 0)
			return -1;
	for (size_t i = 0; i < g->nv; i++)
		if (plan_side(r, i, 1, e) < 0 || plan_side(r, i, 0, e) < 0)
			return -1;
	return 0;
}

void
ckpt_redist_free_inflight(struct ckpt_redist *r)
{
	for (size_t i = 0; i < r->nwarn; i++)
		free(r->warn[i]);
	free(r->warn);
	for (size_t i = 0; r->vx && i < r->graph->nv; i++) {
		free(r->vx[i].in_state);
		free(r->vx[i].out_state);
	}
	free(r->vx);
}

const char *
ckpt_redist_warning(const struct ckpt_redist *r, size_t i)
{
	return i < r->nwarn ? r->warn[i] : NULL;
}

/* ------------------------------------------------------------------ the assignment */

/* Does new subtask t get old subtask j's handle h (a channel handle)?  In place: its own. */
int
ckpt_redist_chan_to(const struct ckpt_redist *r, const struct ckpt_redist_op *o, uint32_t t, uint32_t j,
		const struct ckpt_handle *h)
{
	const struct ckpt_graph *g = r->graph;
	int input;
	long x;

	if (!chan_scope(h, &input) || (r->vx && chained(o, input)))
		return 0;
	if (o->how == RD_IN_PLACE)
		return j == t;
	if (r->vx == NULL || o->gv < 0)
		return 0;
	for (size_t k = 0; (x = handle_index(h, k, input)) >= 0; k++) {
		const struct ckpt_vertex *v = &g->v[o->gv];
		size_t edge = input ? v->in[x] : v->out[x];
		enum rd_mapper m = input ? down_mapper(g->e[edge].ship) : up_mapper(g->e[edge].ship);

		if (maps(m, t, o->P, o->p, j))
			return 1;
	}
	return 0;
}

/* Does new subtask t read any channel handle of old subtask j? */
int
ckpt_redist_chan_needed(const struct ckpt_redist *r, const struct ckpt_redist_op *o, uint32_t t, uint32_t j)
{
	const struct ckpt_subtask *st = o->at[j];

	for (size_t h = 0; st && h < st->nhandles; h++)
		if (ckpt_redist_chan_to(r, o, t, j, &st->handles[h]))
			return 1;
	return 0;
}

static json_t *
index_list(enum rd_mapper m, uint32_t oldp, uint32_t newp, uint32_t t, int amb)
{
	json_t *a = json_array();

	for (uint32_t j = 0; a && j < oldp; j++)
		if (amb ? ambiguous(m, oldp, newp, j) : maps(m, t, oldp, newp, j))
			json_array_append_new(a, json_integer(j));
	return a;
}

/* One InflightDataGateOrPartitionRescalingDescriptor of new subtask t, or NULL (NO_STATE). */
static json_t *
gate_descriptor(const struct ckpt_redist *r, const struct ckpt_redist_op *o, uint32_t t, size_t k, int input,
		int *rescaling)
{
	const struct ckpt_graph *g = r->graph;
	const struct ckpt_vertex *v = &g->v[o->gv];
	size_t edge = input ? v->in[k] : v->out[k];
	const struct ckpt_redist_vert *V = &r->vx[o->gv], *N = &r->vx[input ? g->e[edge].source : g->e[edge].target];
	enum rd_mapper mine = input ? down_mapper(g->e[edge].ship) : up_mapper(g->e[edge].ship);
	enum rd_mapper theirs = input ? up_mapper(g->e[edge].ship) : down_mapper(g->e[edge].ship);
	json_t *old;
	int id;

	if (!in_flight(r, (size_t)o->gv, k, input))
		return NULL;
	old = index_list(mine, V->oldp, V->newp, t, 0);
	id = (identity(mine, V->oldp, V->newp) && identity(theirs, N->oldp, N->newp)) ||
	     json_array_size(old) == 0;
	*rescaling |= !id;
	return json_pack("{s:I, s:o, s:o, s:s}", input ? "gate" : "partition", (json_int_t)k, "old_subtasks", old,
			 "ambiguous", index_list(mine, V->oldp, V->newp, t, 1), "type", id ? "IDENTITY" : "RESCALING");
}

/* The input (or output) InflightDataRescalingDescriptor of new subtask t; NULL for NO_RESCALE. */
json_t *
ckpt_redist_descriptor(const struct ckpt_redist *r, const struct ckpt_redist_op *o, uint32_t t, int input)
{
	const struct ckpt_vertex *v;
	json_t *arr;
	int rescaling = 0;

	if (r->vx == NULL || o->gv < 0 || !(input ? r->vx[o->gv].in_desc : r->vx[o->gv].out_desc) ||
	    (struct ckpt_redist_op *)o != op_of_vertex((struct ckpt_redist *)r, (size_t)o->gv))
		return NULL;
	v = &r->graph->v[o->gv];
	arr = json_array();
	for (size_t k = 0; arr && k < (input ? v->nin : v->nout); k++) {
		json_t *d = gate_descriptor(r, o, t, k, input, &rescaling);

		if (d)
			json_array_append_new(arr, d);
	}
	if (!rescaling) {
		json_decref(arr);
		return NULL;
	}
	return arr;
}
