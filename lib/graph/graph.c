/* graph.c: the job graph model (ckpt-graph(5)), its loader, its normal form and topological order. */
#include <stdlib.h>
#include <string.h>

#include "graph.h"

static const char *const state_names[CKPT_NSTATES] = {
	"CREATED", "SCHEDULED", "DEPLOYING", "INITIALIZING", "RUNNING",
	"FINISHED", "CANCELING", "CANCELED", "FAILED", "RECONCILING",
};

static const char *const partition_names[CKPT_NPARTITIONS] = {
	"pipelined", "pipelined_bounded", "blocking", "hybrid_full",
	"hybrid_selective", "pipelined_approximate",
};

const char *
ckpt_exec_state_name(enum ckpt_exec_state s)
{
	return (unsigned)s < CKPT_NSTATES ? state_names[s] : "UNKNOWN";
}

int
ckpt_exec_state_parse(const char *name)
{
	for (int i = 0; i < CKPT_NSTATES; i++)
		if (strcmp(name, state_names[i]) == 0)
			return i;
	return -1;
}

const char *
ckpt_distribution_name(enum ckpt_distribution d)
{
	return d == CKPT_POINTWISE ? "pointwise" : "all_to_all";
}

const char *
ckpt_partition_name(enum ckpt_partition p)
{
	return (unsigned)p < CKPT_NPARTITIONS ? partition_names[p] : "unknown";
}

int
ckpt_partition_parse(const char *name)
{
	for (int i = 0; i < CKPT_NPARTITIONS; i++)
		if (strcasecmp(name, partition_names[i]) == 0)
			return i;
	return -1;
}

static const char *const ship_names[CKPT_NSHIPS] = {
	NULL, "forward", "rescale", "rebalance", "hash", "broadcast", "global", "shuffle", "custom",
};

const char *
ckpt_ship_name(enum ckpt_ship s)
{
	return (unsigned)s < CKPT_NSHIPS ? ship_names[s] : NULL;
}

int
ckpt_ship_parse(const char *name)
{
	for (int i = 1; i < CKPT_NSHIPS; i++)
		if (strcasecmp(name, ship_names[i]) == 0)
			return i;
	return -1;
}

static void
free_ops(struct ckpt_operator_decl *ops, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(ops[i].id);
		free(ops[i].uid);
		free(ops[i].name);
		for (size_t k = 0; k < ops[i].nstate; k++) {
			free(ops[i].state[k].name);
			free(ops[i].state[k].mode);
		}
		free(ops[i].state);
	}
	free(ops);
}

void
ckpt_graph_free(struct ckpt_graph *g)
{
	if (g == NULL)
		return;
	for (size_t i = 0; i < g->nv; i++) {
		struct ckpt_vertex *v = &g->v[i];

		free(v->id);
		free(v->name);
		free(v->tasks);
		free_ops(v->ops, v->nops);
		free(v->in);
		free(v->out);
	}
	free(g->v);
	free(g->e);
	free(g->topo);
	if (g->idmap)
		ckpt_idmap_release(g->idmap);
	free(g->idmap);
	free(g);
}

/* ---- vertex ids: hashed (ckpt_idmap), so that large graphs load in linear time */

static uint64_t
id_hash(const char *id)
{
	return ckpt_xxh3(id, strlen(id));
}

static uint64_t
vertex_hash(const void *g, size_t i)
{
	return id_hash(((const struct ckpt_graph *)g)->v[i].id);
}

static int
vertex_is(const void *g, size_t i, const void *id)
{
	return strcmp(((const struct ckpt_graph *)g)->v[i].id, id) == 0;
}

/* Room for n vertices (emptied). */
static int
idmap_init(struct ckpt_graph *g, size_t n, struct ckpt_err *e)
{
	if (g->idmap == NULL && (g->idmap = ckpt_calloc(1, sizeof *g->idmap, e)) == NULL)
		return -1;
	return ckpt_idmap_init(g->idmap, n, e);
}

static int
idmap_add(struct ckpt_graph *g, size_t i, struct ckpt_err *e)
{
	return ckpt_idmap_add(g->idmap, id_hash(g->v[i].id), i, vertex_hash, g, e);
}

long
ckpt_graph_find(const struct ckpt_graph *g, const char *id)
{
	if (g->idmap)
		return ckpt_idmap_find(g->idmap, id_hash(id), id, vertex_is, g);
	for (size_t i = 0; i < g->nv; i++)
		if (g->v[i].id && strcmp(g->v[i].id, id) == 0)
			return (long)i;
	return -1;
}

/* ---- loading */

struct loader {
	const struct ckpt_jdoc *doc;
	struct ckpt_err *e;
	struct ckpt_graph *g;
};

/* Every key of obj must be one of the NULL-terminated allowed names. */
static int
check_keys(struct loader *L, const json_t *obj, const char *ptr, const char *what,
	   const char *const *allowed)
{
	const char *key;
	json_t *val;

	json_object_foreach((json_t *)obj, key, val) {
		const char *const *a;

		for (a = allowed; *a; a++)
			if (strcmp(*a, key) == 0)
				break;
		if (*a == NULL) {
			char p[300];

			snprintf(p, sizeof p, "%s/%s", ptr, key);
			return ckpt_jdoc_err(L->doc, L->e, p, "%s: unknown key \"%s\"", what, key);
		}
	}
	return 0;
}

/* An optional string member: 0 absent, 1 present (*out strdup'd), -1 error. */
static int
opt_string(struct loader *L, const json_t *obj, const char *key, const char *ptr,
	   const char *what, char **out)
{
	json_t *v = json_object_get(obj, key);
	char p[300];

	*out = NULL;
	if (v == NULL || json_is_null(v))
		return 0;
	snprintf(p, sizeof p, "%s/%s", ptr, key);
	if (!json_is_string(v))
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: \"%s\" must be a string", what, key);
	*out = ckpt_strdup(json_string_value(v), L->e);
	return *out ? 1 : -1;
}

static int
get_uint(struct loader *L, const json_t *obj, const char *key, const char *ptr,
	 const char *what, uint64_t lo, uint64_t hi, uint32_t *out)
{
	json_t *v = json_object_get(obj, key);
	char p[300];
	json_int_t x;

	snprintf(p, sizeof p, "%s/%s", ptr, key);
	if (!json_is_integer(v))
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: \"%s\" must be an integer", what, key);
	x = json_integer_value(v);
	if (x < (json_int_t)lo || (uint64_t)x > hi)
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: %s %lld out of range (%llu to %llu)",
				     what, key, (long long)x, (unsigned long long)lo, (unsigned long long)hi);
	*out = (uint32_t)x;
	return 0;
}

static int
load_state_decls(struct loader *L, struct ckpt_operator_decl *op, const json_t *arr,
		 const char *ptr, const char *what)
{
	static const char *const keys[] = {"name", "mode", NULL};
	size_t i;
	json_t *s;

	if (!json_is_array(arr))
		return ckpt_jdoc_err(L->doc, L->e, ptr, "%s: \"state\" must be an array", what);
	op->state = ckpt_calloc(json_array_size(arr), sizeof *op->state, L->e);
	if (op->state == NULL)
		return -1;
	json_array_foreach(arr, i, s) {
		char p[300], w[300];

		snprintf(p, sizeof p, "%s/%zu", ptr, i);
		snprintf(w, sizeof w, "%s: state %zu", what, i);
		if (!json_is_object(s))
			return ckpt_jdoc_err(L->doc, L->e, p, "%s must be an object", w);
		if (check_keys(L, s, p, w, keys) < 0)
			return -1;
		op->nstate++;
		if (opt_string(L, s, "name", p, w, &op->state[i].name) < 0 ||
		    opt_string(L, s, "mode", p, w, &op->state[i].mode) < 0)
			return -1;
		if (op->state[i].name == NULL || op->state[i].mode == NULL)
			return ckpt_jdoc_err(L->doc, L->e, p, "%s needs \"name\" and \"mode\"", w);
	}
	return 0;
}

static int
load_operators(struct loader *L, struct ckpt_vertex *v, const json_t *arr, const char *ptr,
	       const char *what)
{
	static const char *const keys[] = {"id", "uid", "name", "state", NULL};
	size_t i;
	json_t *o;

	if (!json_is_array(arr))
		return ckpt_jdoc_err(L->doc, L->e, ptr, "%s: \"operators\" must be an array", what);
	v->ops = ckpt_calloc(json_array_size(arr), sizeof *v->ops, L->e);
	if (v->ops == NULL)
		return -1;
	json_array_foreach(arr, i, o) {
		struct ckpt_operator_decl *op = &v->ops[i];
		char p[300], w[300];
		json_t *st;

		snprintf(p, sizeof p, "%s/%zu", ptr, i);
		snprintf(w, sizeof w, "%s: operator %zu", what, i);
		if (!json_is_object(o))
			return ckpt_jdoc_err(L->doc, L->e, p, "%s must be an object", w);
		if (check_keys(L, o, p, w, keys) < 0)
			return -1;
		v->nops++;
		if (opt_string(L, o, "id", p, w, &op->id) < 0 || opt_string(L, o, "uid", p, w, &op->uid) < 0 ||
		    opt_string(L, o, "name", p, w, &op->name) < 0)
			return -1;
		st = json_object_get(o, "state");
		if (st != NULL) {
			char sp[320];

			snprintf(sp, sizeof sp, "%s/state", p);
			if (load_state_decls(L, op, st, sp, w) < 0)
				return -1;
		}
	}
	return 0;
}

static int
load_tasks(struct loader *L, struct ckpt_vertex *v, const json_t *obj, const char *ptr,
	   const char *what)
{
	json_t *tasks = json_object_get(obj, "tasks"), *fin = json_object_get(obj, "finished");
	char p[300];

	v->tasks = ckpt_calloc(v->parallelism, 1, L->e);
	if (v->tasks == NULL)
		return -1;
	memset(v->tasks, CKPT_RUNNING, v->parallelism);
	if (tasks && fin)
		return ckpt_jdoc_err(L->doc, L->e, ptr, "%s: give \"tasks\" or \"finished\", not both", what);
	if (tasks) {
		size_t i;
		json_t *t;

		snprintf(p, sizeof p, "%s/tasks", ptr);
		if (!json_is_array(tasks))
			return ckpt_jdoc_err(L->doc, L->e, p, "%s: \"tasks\" must be an array", what);
		if (json_array_size(tasks) != v->parallelism)
			return ckpt_jdoc_err(L->doc, L->e, p, "%s: \"tasks\" has %zu entries for parallelism %u",
					     what, json_array_size(tasks), v->parallelism);
		json_array_foreach(tasks, i, t) {
			int s = json_is_string(t) ? ckpt_exec_state_parse(json_string_value(t)) : -1;

			if (s < 0) {
				snprintf(p, sizeof p, "%s/tasks/%zu", ptr, i);
				if (!json_is_string(t))
					return ckpt_jdoc_err(L->doc, L->e, p, "%s: tasks[%zu] must be a string", what, i);
				return ckpt_jdoc_err(L->doc, L->e, p, "%s: tasks[%zu]: unknown state \"%s\"",
						     what, i, json_string_value(t));
			}
			v->tasks[i] = (unsigned char)s;
		}
	}
	if (fin) {
		struct ckpt_bits b;

		snprintf(p, sizeof p, "%s/finished", ptr);
		if (ckpt_rangelist_from_json(fin, v->parallelism, &b, L->e) < 0) {
			ckpt_err_prefix(L->e, "%s: finished", what);
			return ckpt_jdoc_locate(L->doc, L->e, p);
		}
		for (size_t i = ckpt_bits_next(&b, 0); i < b.n; i = ckpt_bits_next(&b, i + 1))
			v->tasks[i] = CKPT_FINISHED;
		ckpt_bits_release(&b);
	}
	return 0;
}

static int
load_vertex(struct loader *L, size_t idx, const json_t *obj)
{
	static const char *const keys[] = {"id", "name", "parallelism", "max_parallelism", "tasks",
					   "finished", "operators", "batch_snapshot", NULL};
	struct ckpt_vertex *v = &L->g->v[idx];
	char ptr[64], what[300];
	json_t *x;

	snprintf(ptr, sizeof ptr, "/vertices/%zu", idx);
	snprintf(what, sizeof what, "vertex %zu", idx);
	v->batch_snapshot = 1;
	if (!json_is_object(obj))
		return ckpt_jdoc_err(L->doc, L->e, ptr, "%s must be an object", what);
	if (check_keys(L, obj, ptr, what, keys) < 0)
		return -1;
	if (opt_string(L, obj, "id", ptr, what, &v->id) < 0)
		return -1;
	if (v->id == NULL || v->id[0] == '\0')
		return ckpt_jdoc_err(L->doc, L->e, ptr, "%s: missing \"id\"", what);
	if (ckpt_graph_find(L->g, v->id) >= 0) {
		char p[80];

		snprintf(p, sizeof p, "%s/id", ptr);
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: duplicate vertex \"%s\"", what, v->id);
	}
	if (idmap_add(L->g, idx, L->e) < 0)
		return -1;
	snprintf(what, sizeof what, "vertex \"%s\"", v->id);
	if (opt_string(L, obj, "name", ptr, what, &v->name) < 0)
		return -1;
	if (get_uint(L, obj, "parallelism", ptr, what, 1, CKPT_PARALLELISM_LIMIT, &v->parallelism) < 0)
		return -1;
	if (json_object_get(obj, "max_parallelism")) {
		if (get_uint(L, obj, "max_parallelism", ptr, what, 1, CKPT_MAX_PARALLELISM_LIMIT,
			     &v->max_parallelism) < 0)
			return -1;
		if (v->max_parallelism < v->parallelism) {
			char p[80];

			snprintf(p, sizeof p, "%s/max_parallelism", ptr);
			return ckpt_jdoc_err(L->doc, L->e, p, "%s: max_parallelism %u is below parallelism %u",
					     what, v->max_parallelism, v->parallelism);
		}
	}
	L->g->nsubtasks += v->parallelism;
	if (L->g->nsubtasks > CKPT_SUBTASKS_LIMIT)
		return ckpt_jdoc_err(L->doc, L->e, ptr, "%s: more than %llu subtasks in the graph", what,
				     (unsigned long long)CKPT_SUBTASKS_LIMIT);
	if (load_tasks(L, v, obj, ptr, what) < 0)
		return -1;
	if ((x = json_object_get(obj, "operators")) != NULL) {
		char p[80];

		snprintf(p, sizeof p, "%s/operators", ptr);
		if (load_operators(L, v, x, p, what) < 0)
			return -1;
	}
	if ((x = json_object_get(obj, "batch_snapshot")) != NULL) {
		if (!json_is_boolean(x)) {
			char p[80];

			snprintf(p, sizeof p, "%s/batch_snapshot", ptr);
			return ckpt_jdoc_err(L->doc, L->e, p, "%s: \"batch_snapshot\" must be true or false", what);
		}
		v->batch_snapshot = json_is_true(x);
	}
	return 0;
}

static int
edge_end(struct loader *L, const json_t *obj, const char *key, const char *ptr, const char *what,
	 size_t *out)
{
	json_t *x = json_object_get(obj, key);
	char p[300];
	long k;

	snprintf(p, sizeof p, "%s/%s", ptr, key);
	if (x == NULL)
		return ckpt_jdoc_err(L->doc, L->e, ptr, "%s: missing \"%s\"", what, key);
	if (!json_is_string(x))
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: \"%s\" must be a string", what, key);
	k = ckpt_graph_find(L->g, json_string_value(x));
	if (k < 0)
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: unknown vertex \"%s\"", what, json_string_value(x));
	*out = (size_t)k;
	return 0;
}

static int
load_edge(struct loader *L, size_t idx, const json_t *obj)
{
	static const char *const keys[] = {"source", "target", "distribution", "partition", "partitioner",
					   NULL};
	struct ckpt_edge *ed = &L->g->e[idx];
	char ptr[64], what[64], p[80];
	json_t *x;

	snprintf(ptr, sizeof ptr, "/edges/%zu", idx);
	snprintf(what, sizeof what, "edge %zu", idx);
	if (!json_is_object(obj))
		return ckpt_jdoc_err(L->doc, L->e, ptr, "%s must be an object", what);
	if (check_keys(L, obj, ptr, what, keys) < 0 || edge_end(L, obj, "source", ptr, what, &ed->source) < 0 ||
	    edge_end(L, obj, "target", ptr, what, &ed->target) < 0)
		return -1;
	ed->distribution = CKPT_ALL_TO_ALL;
	if ((x = json_object_get(obj, "distribution")) != NULL) {
		const char *s = json_is_string(x) ? json_string_value(x) : "";

		snprintf(p, sizeof p, "%s/distribution", ptr);
		if (strcasecmp(s, "pointwise") == 0)
			ed->distribution = CKPT_POINTWISE;
		else if (strcasecmp(s, "all_to_all") != 0)
			return ckpt_jdoc_err(L->doc, L->e, p,
					     "%s: distribution must be \"all_to_all\" or \"pointwise\"", what);
	}
	ed->partition = CKPT_PIPELINED;
	if ((x = json_object_get(obj, "partition")) != NULL) {
		int k = json_is_string(x) ? ckpt_partition_parse(json_string_value(x)) : -1;

		snprintf(p, sizeof p, "%s/partition", ptr);
		if (k < 0)
			return ckpt_jdoc_err(L->doc, L->e, p, "%s: unknown partition type %s%s%s", what,
					     json_is_string(x) ? "\"" : "",
					     json_is_string(x) ? json_string_value(x) : "(not a string)",
					     json_is_string(x) ? "\"" : "");
		ed->partition = (enum ckpt_partition)k;
	}
	ed->ship = CKPT_SHIP_NONE;
	if ((x = json_object_get(obj, "partitioner")) != NULL) {
		int k = json_is_string(x) ? ckpt_ship_parse(json_string_value(x)) : -1;

		snprintf(p, sizeof p, "%s/partitioner", ptr);
		if (k < 0)
			return ckpt_jdoc_err(L->doc, L->e, p, "%s: unknown partitioner %s%s%s", what,
					     json_is_string(x) ? "\"" : "",
					     json_is_string(x) ? json_string_value(x) : "(not a string)",
					     json_is_string(x) ? "\"" : "");
		ed->ship = (enum ckpt_ship)k;
	}
	return 0;
}

/* Fill g->topo and each vertex's in/out lists; -1 with the vertices of a cycle named. */
static int graph_finish(struct ckpt_graph *g, struct ckpt_err *e);

struct ckpt_graph *
ckpt_graph_from_json(const struct ckpt_jdoc *doc, struct ckpt_err *e)
{
	static const char *const keys[] = {"vertices", "edges", NULL};
	struct loader L = {doc, e, NULL};
	json_t *vs, *es, *x;
	size_t i;

	if (!json_is_object(doc->root) ||
	    (!json_object_get(doc->root, "vertices") && !json_object_get(doc->root, "edges"))) {
		ckpt_jdoc_err(doc, e, "", "not a job graph%s: expected {\"vertices\": [...], \"edges\": [...]}",
			      json_is_array(doc->root) ? " (an array)" : !json_is_object(doc->root) ? " (not an object)" : "");
		return NULL;
	}
	if (check_keys(&L, doc->root, "", "graph", keys) < 0)
		return NULL;
	vs = json_object_get(doc->root, "vertices");
	es = json_object_get(doc->root, "edges");
	if (!json_is_array(vs)) {
		ckpt_jdoc_err(doc, e, vs ? "/vertices" : "", "graph: \"vertices\" must be an array");
		return NULL;
	}
	if (es != NULL && !json_is_array(es)) {
		ckpt_jdoc_err(doc, e, "/edges", "graph: \"edges\" must be an array");
		return NULL;
	}
	L.g = ckpt_calloc(1, sizeof *L.g, e);
	if (L.g == NULL)
		return NULL;
	L.g->v = ckpt_calloc(json_array_size(vs), sizeof *L.g->v, e);
	L.g->e = ckpt_calloc(json_array_size(es), sizeof *L.g->e, e);
	if (L.g->v == NULL || L.g->e == NULL || idmap_init(L.g, json_array_size(vs), e) < 0)
		goto fail;
	json_array_foreach(vs, i, x) {
		L.g->nv++;
		if (load_vertex(&L, i, x) < 0)
			goto fail;
	}
	json_array_foreach(es, i, x) {
		L.g->ne++;
		if (load_edge(&L, i, x) < 0)
			goto fail;
	}
	if (graph_finish(L.g, e) < 0) {
		/* name the place: a vertex of the cycle, whose index is in e->where */
		char p[64];

		snprintf(p, sizeof p, "/vertices/%s", e->where);
		ckpt_jdoc_locate(doc, e, p);
		goto fail;
	}
	return L.g;
fail:
	ckpt_graph_free(L.g);
	return NULL;
}

/* ---- topological order: Kahn's algorithm with a min-heap, so ties keep input order */

static void
heap_push(size_t *h, size_t *n, size_t x)
{
	size_t i = (*n)++;

	while (i > 0 && h[(i - 1) / 2] > x) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = x;
}

static size_t
heap_pop(size_t *h, size_t *n)
{
	size_t top = h[0], x = h[--(*n)], i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] < h[c])
			c++;
		if (h[c] >= x)
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
	return top;
}

static int
build_adjacency(struct ckpt_graph *g, struct ckpt_err *e)
{
	for (size_t i = 0; i < g->nv; i++) {
		free(g->v[i].in);
		free(g->v[i].out);
		g->v[i].in = g->v[i].out = NULL;
		g->v[i].nin = g->v[i].nout = 0;
	}
	for (size_t k = 0; k < g->ne; k++) {
		g->v[g->e[k].target].nin++;
		g->v[g->e[k].source].nout++;
	}
	for (size_t i = 0; i < g->nv; i++) {
		g->v[i].in = ckpt_calloc(g->v[i].nin, sizeof(size_t), e);
		g->v[i].out = ckpt_calloc(g->v[i].nout, sizeof(size_t), e);
		if (g->v[i].in == NULL || g->v[i].out == NULL)
			return -1;
		g->v[i].nin = g->v[i].nout = 0;
	}
	for (size_t k = 0; k < g->ne; k++) {
		struct ckpt_vertex *s = &g->v[g->e[k].source], *t = &g->v[g->e[k].target];

		t->in[t->nin++] = k;
		s->out[s->nout++] = k;
	}
	return 0;
}

/*
 * Name one cycle among the vertices left with a nonzero in-degree: walk
 * backwards through such predecessors until a vertex repeats; where = its index.
 */
static int
report_cycle(struct ckpt_graph *g, const size_t *indeg, struct ckpt_err *e)
{
	size_t *pos = ckpt_calloc(g->nv, sizeof *pos, e), *path = ckpt_calloc(g->nv + 1, sizeof *path, e);
	size_t v = 0, m = 0, k, len = 0;
	char text[sizeof e->text], where[32];

	if (pos == NULL || path == NULL) {
		free(pos);
		free(path);
		return -1;
	}
	while (indeg[v] == 0)
		v++;
	while (pos[v] == 0) {
		path[m++] = v;
		pos[v] = m;
		for (size_t i = 0; i < g->v[v].nin; i++) {
			size_t u = g->e[g->v[v].in[i]].source;

			if (indeg[u] != 0) {
				v = u;
				break;
			}
		}
	}
	k = pos[v] - 1; /* path[k..m-1] is the cycle, backwards */
	snprintf(where, sizeof where, "%zu", v);
	len = (size_t)snprintf(text, sizeof text, "cycle through vertices \"%s\"", g->v[v].id);
	for (size_t i = m; i-- > k;)
		if (len < sizeof text)
			len += (size_t)snprintf(text + len, sizeof text - len, " -> \"%s\"", g->v[path[i]].id);
	free(pos);
	free(path);
	return ckpt_err_set(e, CKPT_ERR_INPUT, where, "%s", text);
}

static int
graph_finish(struct ckpt_graph *g, struct ckpt_err *e)
{
	size_t *indeg = NULL, *heap = NULL, nheap = 0, ntopo = 0;
	int r = -1;

	if (build_adjacency(g, e) < 0 || idmap_init(g, g->nv, e) < 0)
		return -1;
	for (size_t i = 0; i < g->nv; i++)
		if (g->v[i].id && idmap_add(g, i, e) < 0)
			return -1;
	free(g->topo);
	g->topo = ckpt_calloc(g->nv, sizeof *g->topo, e);
	indeg = ckpt_calloc(g->nv, sizeof *indeg, e);
	heap = ckpt_calloc(g->nv, sizeof *heap, e);
	if (g->topo == NULL || indeg == NULL || heap == NULL)
		goto out;
	for (size_t i = 0; i < g->nv; i++) {
		indeg[i] = g->v[i].nin;
		if (indeg[i] == 0)
			heap_push(heap, &nheap, i);
	}
	while (nheap > 0) {
		size_t v = heap_pop(heap, &nheap);

		g->topo[ntopo++] = v;
		for (size_t k = 0; k < g->v[v].nout; k++) {
			size_t t = g->e[g->v[v].out[k]].target;

			if (--indeg[t] == 0)
				heap_push(heap, &nheap, t);
		}
	}
	if (ntopo < g->nv) {
		report_cycle(g, indeg, e);
		goto out;
	}
	r = 0;
out:
	free(indeg);
	free(heap);
	return r;
}

/* ---- normal form */

static json_t *
ops_to_json(const struct ckpt_vertex *v)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < v->nops; i++) {
		const struct ckpt_operator_decl *op = &v->ops[i];
		json_t *o = json_object(), *st = json_array();

		if (op->id)
			ckpt_json_set_new(o, "id", json_string(op->id));
		if (op->uid)
			ckpt_json_set_new(o, "uid", json_string(op->uid));
		if (op->name)
			ckpt_json_set_new(o, "name", json_string(op->name));
		for (size_t k = 0; k < op->nstate; k++)
			ckpt_json_append_new(st, json_pack("{s:s,s:s}", "name", op->state[k].name, "mode",
							   op->state[k].mode));
		if (op->nstate)
			ckpt_json_set_new(o, "state", st);
		else
			json_decref(st);
		ckpt_json_append_new(arr, o);
	}
	return arr;
}

static json_t *
tasks_to_json(const struct ckpt_vertex *v, const char **key)
{
	int other = 0, fin = 0;
	struct ckpt_bits b;
	json_t *r;
	char *s;

	for (uint32_t i = 0; i < v->parallelism; i++) {
		fin |= v->tasks[i] == CKPT_FINISHED;
		other |= v->tasks[i] != CKPT_FINISHED && v->tasks[i] != CKPT_RUNNING;
	}
	if (other) {
		*key = "tasks";
		r = json_array();
		for (uint32_t i = 0; i < v->parallelism; i++)
			ckpt_json_append_new(r, json_string(ckpt_exec_state_name(v->tasks[i])));
		return r;
	}
	if (!fin || ckpt_bits_init(&b, v->parallelism, NULL) < 0)
		return NULL;
	for (uint32_t i = 0; i < v->parallelism; i++)
		if (v->tasks[i] == CKPT_FINISHED)
			ckpt_bits_set(&b, i);
	s = ckpt_rangelist_format(&b);
	ckpt_bits_release(&b);
	*key = "finished";
	r = s ? json_string(s) : NULL;
	free(s);
	return r;
}

json_t *
ckpt_graph_to_json(const struct ckpt_graph *g)
{
	json_t *root = json_object(), *vs = json_array(), *es = json_array();

	for (size_t i = 0; i < g->nv; i++) {
		const struct ckpt_vertex *v = &g->v[i];
		json_t *o = json_object(), *t;
		const char *key = NULL;

		ckpt_json_set_new(o, "id", json_string(v->id));
		if (v->name)
			ckpt_json_set_new(o, "name", json_string(v->name));
		ckpt_json_set_new(o, "parallelism", json_integer(v->parallelism));
		if (v->max_parallelism)
			ckpt_json_set_new(o, "max_parallelism", json_integer(v->max_parallelism));
		if ((t = tasks_to_json(v, &key)) != NULL)
			ckpt_json_set_new(o, key, t);
		if (v->nops)
			ckpt_json_set_new(o, "operators", ops_to_json(v));
		if (!v->batch_snapshot)
			ckpt_json_set_new(o, "batch_snapshot", json_false());
		ckpt_json_append_new(vs, o);
	}
	for (size_t k = 0; k < g->ne; k++) {
		const struct ckpt_edge *ed = &g->e[k];

		ckpt_json_append_new(es, json_pack("{s:s,s:s,s:s,s:s,s:s*}", "source", g->v[ed->source].id,
						   "target", g->v[ed->target].id, "distribution",
						   ckpt_distribution_name(ed->distribution), "partition",
						   ckpt_partition_name(ed->partition), "partitioner",
						   ckpt_ship_name(ed->ship)));
	}
	ckpt_json_set_new(root, "vertices", vs);
	ckpt_json_set_new(root, "edges", es);
	return root;
}
