/*
 * rest.c: job graphs from Flink's REST responses (GET /jobs/:jobid and
 * GET /jobs/:jobid/vertices/:vertexid), and the reader of graph streams.
 */
#include <stdlib.h>
#include <string.h>

#include "graph.h"

/* Is doc a Flink REST job document (GET /jobs/:jobid)? */
static int
rest_is_job(const json_t *root)
{
	return json_is_object(root) && json_object_get(root, "jid") && json_object_get(root, "plan");
}

/*
 * Flink's other REST responses, by the keys only they have: a user who fetched the wrong endpoint
 * is told which one it is.  The first row whose keys are all there (and whose "jobs" holds objects
 * with the key named after "jobs:", when one does) names the document.
 */
static const struct {
	const char *keys[3];
	const char *what;
} rest_others[] = {
	{{"errors"}, "REST error response"},
	{{"counts", "history"}, "GET /jobs/:jobid/checkpoints (checkpoint statistics)"},
	{{"@class", "is_savepoint"}, "GET /jobs/:jobid/checkpoints/details/:checkpointid"},
	{{"mode", "interval", "timeout"}, "GET /jobs/:jobid/checkpoints/config"},
	{{"jobs", "jobs:jid"}, "GET /jobs/overview"},
	{{"jobs", "jobs:status"}, "GET /jobs (the job list)"},
	{{"jobs"}, "GET /jobs or GET /jobs/overview"},
	{{"taskmanagers", "slots-total"}, "GET /overview (the cluster overview)"},
	{{"taskmanagers", "id"}, "GET /jobs/:jobid/vertices/:vertexid/taskmanagers"},
	{{"taskmanagers"}, "GET /taskmanagers"},
	{{"id", "hardware"}, "GET /taskmanagers/:taskmanagerid"},
	{{"refresh-interval", "flink-version"}, "GET /config (the web UI's configuration)"},
	{{"root-exception"}, "GET /jobs/:jobid/exceptions"},
	{{"exceptionHistory"}, "GET /jobs/:jobid/exceptions"},
	{{"jid", "execution-config"}, "GET /jobs/:jobid/config"},
	{{"plan", "plan:nodes"}, "GET /jobs/:jobid/plan (the plan alone, without each vertex's subtasks)"},
	{{"jid", "vertices"}, "GET /jobs/:jobid without its \"plan\", which holds the edges"},
	{{"job-accumulators"}, "GET /jobs/:jobid/accumulators"},
	{{"user-accumulators"}, "GET /jobs/:jobid/vertices/:vertexid/accumulators"},
	{{"backpressure-level"}, "GET /jobs/:jobid/vertices/:vertexid/backpressure"},
	{{"backpressureLevel"}, "GET /jobs/:jobid/vertices/:vertexid/backpressure"},
	{{"request-id"}, "answer to a trigger (POST /jobs/:jobid/savepoints, /stop, /rescaling)"},
	{{"status", "operation"}, "status of an asynchronous operation (GET /jobs/:jobid/savepoints/:triggerid)"},
};

/* Has o the key k, or, for "a:b", is o's "a" (its first element when an array) an object with "b"? */
static int
rest_has(const json_t *o, const char *k)
{
	const char *colon = strchr(k, ':');
	char outer[32];
	const json_t *v;

	if (colon == NULL)
		return json_object_get(o, k) != NULL;
	snprintf(outer, sizeof outer, "%.*s", (int)(colon - k), k);
	v = json_object_get(o, outer);
	if (json_is_array(v))
		v = json_array_get(v, 0);
	return json_is_object(v) && json_object_get(v, colon + 1) != NULL;
}

/* Which other REST response root is, or NULL. */
static const char *
rest_other(const json_t *root)
{
	if (!json_is_object(root) || (json_object_get(root, "jid") && json_object_get(root, "plan")))
		return NULL;
	for (size_t i = 0; i < sizeof rest_others / sizeof rest_others[0]; i++) {
		size_t k = 0;

		while (k < 3 && rest_others[i].keys[k] && rest_has(root, rest_others[i].keys[k]))
			k++;
		if (k == 3 || rest_others[i].keys[k] == NULL)
			return rest_others[i].what;
	}
	return NULL;
}

/* Is doc a Flink REST vertex document (GET /jobs/:jobid/vertices/:vertexid)? */
static int
rest_is_vertex(const json_t *root)
{
	return json_is_object(root) && json_is_array(json_object_get(root, "subtasks")) &&
	       json_object_get(root, "vertices") == NULL && rest_other(root) == NULL;
}

/* What ckpt-plan reads, said when a document is something else: -1 with e set. */
static int
not_a_graph(const struct ckpt_jdoc *doc, struct ckpt_err *e)
{
	const json_t *root = doc->root, *errs = json_object_get(root, "errors");
	const char *other = rest_other(root);

	if (other && json_is_array(errs) && json_is_string(json_array_get(errs, 0)))
		return ckpt_jdoc_err(doc, e, "", "Flink's REST error response \"%s\", not a job: expected a job graph "
				     "({\"vertices\": [...], \"edges\": [...]}) or Flink's GET /jobs/:jobid",
				     json_string_value(json_array_get(errs, 0)));
	if (other)
		return ckpt_jdoc_err(doc, e, "", "Flink's %s, not a job: expected a job graph ({\"vertices\": [...], "
				     "\"edges\": [...]}) or Flink's GET /jobs/:jobid", other);
	return ckpt_jdoc_err(doc, e, "", "not a job graph%s: expected {\"vertices\": [...], \"edges\": [...]} or "
			     "Flink's GET /jobs/:jobid", json_is_array(root) ? " (an array)" :
			     !json_is_object(root) ? " (not an object)" : "");
}

/* ---- conversion */

struct rest {
	const struct ckpt_jdoc *job;
	const struct ckpt_jdoc *const *vdocs;
	size_t nvdocs;
	struct ckpt_err *e;
	json_t *vs;     /* the job's vertices[] */
	const char **ids;
	size_t n;
	unsigned char *detailed; /* per vertex: a vertex document gave its subtasks */
};

/* Flink's placeholder ids in documentation ("<vertex-id>") name no vertex. */
static int
is_placeholder(const char *s)
{
	size_t n = strlen(s);

	return n >= 2 && s[0] == '<' && s[n - 1] == '>';
}

static long
rest_find(const struct rest *R, const char *id)
{
	for (size_t k = 0; k < R->n; k++)
		if (strcmp(R->ids[k], id) == 0)
			return (long)k;
	return -1;
}

/* Read vertices[k]: id, name, parallelism, maxParallelism into the graph vertex o. */
static int
rest_vertex(struct rest *R, size_t k, json_t *o, uint64_t *total)
{
	json_t *x = json_array_get(R->vs, k), *id, *par, *mp;
	char p[64];
	json_int_t P;

	snprintf(p, sizeof p, "/vertices/%zu", k);
	if (!json_is_object(x))
		return ckpt_jdoc_err(R->job, R->e, p, "vertex %zu must be an object", k);
	id = json_object_get(x, "id");
	snprintf(p, sizeof p, "/vertices/%zu/id", k);
	if (!json_is_string(id) || json_string_length(id) == 0)
		return ckpt_jdoc_err(R->job, R->e, p, "vertex %zu: \"id\" must be a non-empty string", k);
	R->ids[k] = json_string_value(id);
	if (is_placeholder(R->ids[k]))
		return ckpt_jdoc_err(R->job, R->e, p,
				     "vertex %zu: id \"%s\" is a placeholder, not a JobVertexID; edges cannot be resolved",
				     k, R->ids[k]);
	if (rest_find(R, R->ids[k]) < (long)k)
		return ckpt_jdoc_err(R->job, R->e, p, "vertex %zu: duplicate vertex \"%s\"", k, R->ids[k]);
	par = json_object_get(x, "parallelism");
	snprintf(p, sizeof p, "/vertices/%zu/parallelism", k);
	P = json_is_integer(par) ? json_integer_value(par) : -1;
	if (P < 1 || P > (json_int_t)CKPT_PARALLELISM_LIMIT)
		return ckpt_jdoc_err(R->job, R->e, p, "vertex \"%s\": parallelism must be an integer from 1 to %u",
				     R->ids[k], CKPT_PARALLELISM_LIMIT);
	*total += (uint64_t)P;
	if (*total > CKPT_SUBTASKS_LIMIT)
		return ckpt_jdoc_err(R->job, R->e, p, "vertex \"%s\": more than %llu subtasks in the graph",
				     R->ids[k], (unsigned long long)CKPT_SUBTASKS_LIMIT);
	json_object_set_new(o, "id", json_string(R->ids[k]));
	if (json_is_string(json_object_get(x, "name")))
		json_object_set(o, "name", json_object_get(x, "name"));
	json_object_set_new(o, "parallelism", json_integer(P));
	mp = json_object_get(x, "maxParallelism");
	if (json_is_integer(mp) && json_integer_value(mp) >= P &&
	    json_integer_value(mp) <= (json_int_t)CKPT_MAX_PARALLELISM_LIMIT)
		json_object_set(o, "max_parallelism", mp);
	return 0;
}

/* Per-subtask states from a vertex document: an array of exactly parallelism state names. */
static int
rest_subtasks(struct rest *R, const struct ckpt_jdoc *d, size_t k, json_t *o)
{
	json_t *subs = json_object_get(d->root, "subtasks"), *s, *tasks;
	size_t P = (size_t)json_integer_value(json_object_get(o, "parallelism")), i;
	const char **st;
	int ret = -1;

	if (json_array_size(subs) != P)
		return ckpt_jdoc_err(d, R->e, "/subtasks", "vertex \"%s\": %zu subtasks for parallelism %zu",
				     R->ids[k], json_array_size(subs), P);
	st = ckpt_calloc(P, sizeof *st, R->e);
	if (st == NULL)
		return -1;
	json_array_foreach(subs, i, s) {
		json_t *idx = json_object_get(s, "subtask"), *status = json_object_get(s, "status");
		json_int_t x = json_is_integer(idx) ? json_integer_value(idx) : (json_int_t)i;
		char p[64];

		snprintf(p, sizeof p, "/subtasks/%zu", i);
		if (!json_is_object(s) || x < 0 || (size_t)x >= P || st[x] != NULL) {
			ckpt_jdoc_err(d, R->e, p, "vertex \"%s\": subtask %zu: bad or repeated \"subtask\" index",
				      R->ids[k], i);
			goto out;
		}
		snprintf(p, sizeof p, "/subtasks/%zu/status", i);
		if (!json_is_string(status) || ckpt_exec_state_parse(json_string_value(status)) < 0) {
			ckpt_jdoc_err(d, R->e, p, "vertex \"%s\": subtask %lld: unknown state", R->ids[k], (long long)x);
			goto out;
		}
		st[x] = json_string_value(status);
	}
	tasks = json_array();
	for (i = 0; tasks && i < P; i++)
		json_array_append_new(tasks, json_string(st[i]));
	if (ckpt_json_set_new(o, "tasks", tasks) < 0) {
		ckpt_err_nomem(R->e, "");
		goto out;
	}
	ret = 0;
out:
	free(st);
	return ret;
}

/* Without a vertex document the counts decide only when every subtask is in one state. */
static int
rest_counts(struct rest *R, size_t k, json_t *o)
{
	json_t *x = json_array_get(R->vs, k), *tasks = json_object_get(x, "tasks"), *c;
	json_int_t P = json_integer_value(json_object_get(o, "parallelism")), sum = 0;
	const char *key, *only = NULL;
	int nstates = 0;
	char p[64];

	snprintf(p, sizeof p, "/vertices/%zu/tasks", k);
	if (!json_is_object(tasks))
		return ckpt_jdoc_err(R->job, R->e, p, "vertex \"%s\": no subtask states (\"tasks\" counts or "
				     "a vertex document)", R->ids[k]);
	json_object_foreach(tasks, key, c) {
		if (!json_is_integer(c) || json_integer_value(c) < 0)
			return ckpt_jdoc_err(R->job, R->e, p, "vertex \"%s\": tasks: bad count for %s", R->ids[k], key);
		if (json_integer_value(c) == 0)
			continue;
		if (json_integer_value(c) > P - sum) { /* more than the parallelism: no need to add further */
			sum += json_integer_value(c);
			break;
		}
		if (ckpt_exec_state_parse(key) < 0)
			return ckpt_jdoc_err(R->job, R->e, p, "vertex \"%s\": tasks: unknown state \"%s\"", R->ids[k], key);
		sum += json_integer_value(c);
		only = key;
		nstates++;
	}
	if (sum != P)
		return ckpt_jdoc_err(R->job, R->e, p, "vertex \"%s\": tasks counts %lld subtasks for parallelism %lld",
				     R->ids[k], (long long)sum, (long long)P);
	if (nstates > 1)
		return ckpt_jdoc_err(R->job, R->e, p,
				     "vertex \"%s\": subtasks in %d different states and no vertex document "
				     "(GET /jobs/:jobid/vertices/%s) says which is which", R->ids[k], nstates, R->ids[k]);
	if (strcmp(only, "RUNNING") != 0) {
		json_t *arr = json_array();

		for (json_int_t i = 0; arr && i < P; i++)
			json_array_append_new(arr, json_string(only));
		if (ckpt_json_set_new(o, "tasks", arr) < 0)
			return ckpt_err_nomem(R->e, "");
	}
	return 0;
}

/* Match each vertex document to its vertex and take its subtask states. */
static int
rest_details(struct rest *R, json_t *outv)
{
	for (size_t d = 0; d < R->nvdocs; d++) {
		const struct ckpt_jdoc *doc = R->vdocs[d];
		json_t *id = json_object_get(doc->root, "id");
		long k = json_is_string(id) ? rest_find(R, json_string_value(id)) : -1;

		if (k < 0)
			return json_is_string(id)
				       ? ckpt_jdoc_err(doc, R->e, "/id", "vertex \"%s\" is not in the job document before it",
						       json_string_value(id))
				       : ckpt_jdoc_err(doc, R->e, "", "vertex document without an \"id\"");
		if (R->detailed[k])
			return ckpt_jdoc_err(doc, R->e, "/id", "second vertex document for \"%s\"", R->ids[k]);
		R->detailed[k] = 1;
		if (rest_subtasks(R, doc, (size_t)k, json_array_get(outv, (size_t)k)) < 0)
			return -1;
	}
	for (size_t k = 0; k < R->n; k++)
		if (!R->detailed[k] && rest_counts(R, k, json_array_get(outv, k)) < 0)
			return -1;
	return 0;
}

/* ship_strategy: FORWARD and RESCALE are pointwise partitioners, everything else all-to-all. */
static const char *
distribution_of(const char *ship)
{
	return strcmp(ship, "FORWARD") == 0 || strcmp(ship, "RESCALE") == 0 ? "pointwise" : "all_to_all";
}

static int
rest_input(struct rest *R, const char *ptr, const json_t *in, const char *target, json_t *edges)
{
	json_t *id = json_object_get(in, "id"), *ship = json_object_get(in, "ship_strategy");
	json_t *ex = json_object_get(in, "exchange");
	const char *part = "pipelined";
	char p[128];

	snprintf(p, sizeof p, "%s/id", ptr);
	if (!json_is_string(id))
		return ckpt_jdoc_err(R->job, R->e, json_is_object(in) ? p : ptr, "plan input: \"id\" must be a string");
	if (is_placeholder(json_string_value(id)) || rest_find(R, json_string_value(id)) < 0)
		return ckpt_jdoc_err(R->job, R->e, p, "plan input: unknown vertex \"%s\"", json_string_value(id));
	if (json_is_string(ex)) {
		part = json_string_value(ex);
		if (strcasecmp(part, "blocking_persistent") == 0)
			part = "blocking"; /* the same for regions and restarts */
		if (ckpt_partition_parse(part) < 0) {
			snprintf(p, sizeof p, "%s/exchange", ptr);
			return ckpt_jdoc_err(R->job, R->e, p, "plan input: unknown exchange \"%s\"", part);
		}
	}
	/* the partitioners ckpt knows carry over (in-flight data is rescaled by them); others are
	 * left unsaid, as a graph without partitioners */
	return ckpt_json_append_new(edges, json_pack("{s:s,s:s,s:s,s:s,s:s*}", "source", json_string_value(id),
						     "target", target, "distribution",
						     distribution_of(json_is_string(ship) ? json_string_value(ship) : ""),
						     "partition", part, "partitioner",
						     ckpt_ship_name(json_is_string(ship) && ckpt_ship_parse(json_string_value(ship)) > 0
								    ? (enum ckpt_ship)ckpt_ship_parse(json_string_value(ship))
								    : CKPT_SHIP_NONE)));
}

/* The plan node of vertex k, or NULL. */
static json_t *
plan_node(struct rest *R, json_t *nodes, size_t k, size_t *at)
{
	size_t i;
	json_t *n;

	json_array_foreach(nodes, i, n) {
		json_t *id = json_object_get(n, "id");

		if (json_is_string(id) && strcmp(json_string_value(id), R->ids[k]) == 0) {
			*at = i;
			return n;
		}
	}
	return NULL;
}

/* Edges from plan.nodes[].inputs[], vertex by vertex in the order of vertices[]. */
static int
rest_edges(struct rest *R, json_t *edges)
{
	json_t *plan = json_object_get(R->job->root, "plan"), *nodes = json_object_get(plan, "nodes"), *n;
	size_t i, at = 0;

	if (!json_is_array(nodes))
		return ckpt_jdoc_err(R->job, R->e, json_is_object(plan) ? "/plan" : "", "plan: \"nodes\" must be an array");
	json_array_foreach(nodes, i, n) {
		json_t *id = json_object_get(n, "id");
		char p[64];

		snprintf(p, sizeof p, "/plan/nodes/%zu", i);
		if (!json_is_string(id) || is_placeholder(json_string_value(id)) ||
		    rest_find(R, json_string_value(id)) < 0)
			return ckpt_jdoc_err(R->job, R->e, p, "plan node %zu: not a vertex of the job", i);
	}
	for (size_t k = 0; k < R->n; k++) {
		json_t *node = plan_node(R, nodes, k, &at), *ins = json_object_get(node, "inputs"), *in;
		char p[96];

		if (ins == NULL)
			continue; /* sources have no "inputs" */
		snprintf(p, sizeof p, "/plan/nodes/%zu/inputs", at);
		if (!json_is_array(ins))
			return ckpt_jdoc_err(R->job, R->e, p, "plan node %zu: \"inputs\" must be an array", at);
		json_array_foreach(ins, i, in) {
			snprintf(p, sizeof p, "/plan/nodes/%zu/inputs/%zu", at, i);
			if (rest_input(R, p, in, R->ids[k], edges) < 0)
				return -1;
		}
	}
	return 0;
}

static json_t *
rest_document(struct rest *R)
{
	json_t *out = json_pack("{s:[],s:[]}", "vertices", "edges");
	json_t *outv = json_object_get(out, "vertices"), *oute = json_object_get(out, "edges");
	uint64_t total = 0;

	if (out == NULL)
		return NULL;
	for (size_t k = 0; k < R->n; k++) {
		json_t *o = json_object();

		if (ckpt_json_append_new(outv, o) < 0 || rest_vertex(R, k, o, &total) < 0)
			goto fail;
	}
	if (rest_details(R, outv) < 0 || rest_edges(R, oute) < 0)
		goto fail;
	return out;
fail:
	json_decref(out);
	return NULL;
}

/* Convert a job document and the vertex documents that followed it into a graph; NULL on error. */
static struct ckpt_graph *
rest_to_graph(const struct ckpt_jdoc *job, const struct ckpt_jdoc *const *vertices,
		   size_t nvertices, struct ckpt_err *e)
{
	struct rest R = {job, vertices, nvertices, e, NULL, NULL, 0, NULL};
	struct ckpt_graph *g = NULL;
	struct ckpt_jdoc *doc = NULL;
	json_t *out;

	R.vs = json_object_get(job->root, "vertices");
	if (!json_is_array(R.vs)) {
		ckpt_jdoc_err(job, e, "", "job document: \"vertices\" must be an array");
		return NULL;
	}
	R.n = json_array_size(R.vs);
	R.ids = ckpt_calloc(R.n ? R.n : 1, sizeof *R.ids, e);
	R.detailed = ckpt_calloc(R.n ? R.n : 1, 1, e);
	if (R.ids == NULL || R.detailed == NULL)
		goto out;
	out = rest_document(&R);
	if (out == NULL)
		goto out;
	doc = ckpt_jdoc_wrap(out, job->name, e);
	if (doc != NULL)
		g = ckpt_graph_from_json(doc, e);
	if (g == NULL && e && e->kind == CKPT_ERR_INPUT) {
		/* only a cycle is left to find; the converted document has no place to name */
		ckpt_jdoc_locate(job, e, "/plan");
	}
out:
	ckpt_jdoc_free(doc);
	free(R.ids);
	free(R.detailed);
	return g;
}

/* ---- the reader of graph streams */

struct ckpt_graphin {
	char *const *paths;  /* the files, read one after the other as one stream */
	size_t npaths, next; /* npaths 0: standard input */
	size_t ndocs;        /* documents read from the current file */
	struct ckpt_jsonin *in;
	struct ckpt_jsonin **done; /* earlier files, kept while documents from them are held */
	size_t ndone;
	struct ckpt_jdoc cur, pending; /* held documents (root referenced) */
	int has_cur, has_pending;
	struct ckpt_jdoc *vdocs;
	const struct ckpt_jdoc **vptrs;
	size_t nvdocs, cap;
};

struct ckpt_graphin *
ckpt_graphin_open(char *const *paths, size_t npaths, struct ckpt_err *e)
{
	struct ckpt_graphin *gi = ckpt_calloc(1, sizeof *gi, e);

	if (gi == NULL)
		return NULL;
	gi->paths = paths;
	gi->npaths = npaths;
	gi->in = ckpt_jsonin_open(npaths ? paths[0] : NULL, e);
	if (gi->in == NULL) {
		free(gi);
		return NULL;
	}
	gi->next = 1;
	return gi;
}

/* Move the current file to the done list (its documents may still be held). */
static int
keep_done(struct ckpt_graphin *gi, struct ckpt_err *e)
{
	struct ckpt_jsonin **t = ckpt_reallocarray(gi->done, gi->ndone + 1, sizeof *t, e);

	if (t == NULL)
		return -1;
	gi->done = t;
	gi->done[gi->ndone++] = gi->in;
	gi->in = NULL;
	return 0;
}

static void
free_done(struct ckpt_graphin *gi)
{
	for (size_t k = 0; k < gi->ndone; k++)
		ckpt_jsonin_free(gi->done[k]);
	gi->ndone = 0;
}

/*
 * The next document of the stream, across files: 1, 0 at the end of the
 * last file, -1 on error.  A file without any document is an error.
 */
static int
next_doc(struct ckpt_graphin *gi, struct ckpt_jdoc **d, struct ckpt_err *e)
{
	for (;;) {
		int r = ckpt_jsonin_next(gi->in, d, e);

		if (r != 0) {
			gi->ndocs += r > 0;
			return r;
		}
		if (gi->ndocs == 0)
			return ckpt_err_set(e, CKPT_ERR_INPUT, ckpt_jsonin_name(gi->in), "no job graph in input");
		if (gi->next >= gi->npaths)
			return 0;
		if (keep_done(gi, e) < 0 || (gi->in = ckpt_jsonin_open(gi->paths[gi->next++], e)) == NULL)
			return -1;
		gi->ndocs = 0;
	}
}


static void
hold(struct ckpt_jdoc *dst, const struct ckpt_jdoc *src)
{
	*dst = *src;
	json_incref(dst->root);
}

static void
drop_held(struct ckpt_graphin *gi)
{
	if (gi->has_cur)
		json_decref(gi->cur.root);
	gi->has_cur = 0;
	for (size_t k = 0; k < gi->nvdocs; k++)
		json_decref(gi->vdocs[k].root);
	gi->nvdocs = 0;
}

static int
add_vdoc(struct ckpt_graphin *gi, const struct ckpt_jdoc *d, struct ckpt_err *e)
{
	size_t dcap = gi->cap, pcap = gi->cap; /* two arrays of one capacity */

	if (ckpt_grow(&gi->vdocs, &dcap, gi->nvdocs + 1, sizeof *gi->vdocs, 8, e) < 0 ||
	    ckpt_grow(&gi->vptrs, &pcap, gi->nvdocs + 1, sizeof *gi->vptrs, 8, e) < 0)
		return -1;
	gi->cap = dcap;
	hold(&gi->vdocs[gi->nvdocs++], d);
	return 0;
}

/* After a job document: take the vertex documents that follow, keep the next other one pending. */
static int
collect_vertices(struct ckpt_graphin *gi, struct ckpt_err *e)
{
	struct ckpt_jdoc *d;
	int r;

	while ((r = next_doc(gi, &d, e)) > 0) {
		if (!rest_is_vertex(d->root)) {
			hold(&gi->pending, d);
			gi->has_pending = 1;
			return 0;
		}
		if (add_vdoc(gi, d, e) < 0)
			return -1;
	}
	return r;
}

int
ckpt_graphin_next(struct ckpt_graphin *gi, struct ckpt_graph **g, const struct ckpt_jdoc **doc,
		  struct ckpt_err *e)
{
	struct ckpt_jdoc *d;
	int r;

	drop_held(gi);
	free_done(gi); /* a pending document comes from the current file */
	*g = NULL;
	if (gi->in == NULL)
		return 0;
	if (gi->has_pending) {
		gi->cur = gi->pending;
		gi->has_pending = 0;
	} else {
		if ((r = next_doc(gi, &d, e)) <= 0)
			return r;
		hold(&gi->cur, d);
	}
	gi->has_cur = 1;
	*doc = &gi->cur;
	if (rest_is_vertex(gi->cur.root))
		return ckpt_jdoc_err(&gi->cur, e, "",
				     "a vertex document (GET /jobs/:jobid/vertices/:vertexid) must follow its job "
				     "document (GET /jobs/:jobid)");
	if (!rest_is_job(gi->cur.root) && (rest_other(gi->cur.root) || !json_is_object(gi->cur.root) ||
					   (!json_object_get(gi->cur.root, "vertices") && !json_object_get(gi->cur.root, "edges"))))
		return not_a_graph(&gi->cur, e);
	if (!rest_is_job(gi->cur.root)) {
		*g = ckpt_graph_from_json(&gi->cur, e);
		return *g ? 1 : -1;
	}
	if (collect_vertices(gi, e) < 0)
		return -1;
	for (size_t k = 0; k < gi->nvdocs; k++)
		gi->vptrs[k] = &gi->vdocs[k];
	*g = rest_to_graph(&gi->cur, gi->vptrs, gi->nvdocs, e);
	return *g ? 1 : -1;
}

void
ckpt_graphin_free(struct ckpt_graphin *gi)
{
	if (gi == NULL)
		return;
	drop_held(gi);
	if (gi->has_pending)
		json_decref(gi->pending.root);
	free(gi->vdocs);
	free(gi->vptrs);
	ckpt_jsonin_free(gi->in);
	free_done(gi);
	free(gi->done);
	free(gi);
}
