/* ckpt-plan: which subtasks a checkpoint triggers, waits for and commits to (FLIP-147), and failover. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum mode { MODE_PLAN, MODE_GRAPH, MODE_REGIONS, MODE_FAILOVER, MODE_DOT };
enum algo { ALGO_FAST, ALGO_REFERENCE, ALGO_BOTH };
enum { OPT_LOST = 256, OPT_REGIONS, OPT_GRAPH_OLD }; /* long options without a letter */

struct target {
	const char *arg; /* as given: "VERTEX:SUBTASK" */
	char *vertex;
	uint32_t subtask;
};

struct opts {
	enum mode mode;
	enum algo algo;
	int no_finished;
	enum ckpt_failover_strategy strategy;
	struct target *failed, *lost;
	size_t nfailed, nlost;
};

/* A graph resolved against the options: failed and lost subtasks by index. */
struct job {
	const struct opts *o;
	const struct ckpt_jdoc *doc;
	struct ckpt_graph *g;
	struct ckpt_task_ref *failed;
	struct ckpt_bits *lost; /* NULL without -l */
};

static void
usage(FILE *f)
{
	fprintf(f, "usage: ckpt-plan [-p] [-N] [-A fast|reference|both] [file ...]\n"
	       "       ckpt-plan -G [-p] [file ...]\n"
	       "       ckpt-plan -D [-N] [-f VERTEX:SUBTASK ...] [-s strategy] [--lost VERTEX:SUBTASK ...] [file ...]\n"
	       "       ckpt-plan -f VERTEX:SUBTASK ... [-s full|region|approximate] [--lost VERTEX:SUBTASK ...] [-p] [file ...]\n"
	       "       ckpt-plan --regions [-s full|region|approximate] [-p] [file ...]\n"
	       "options:\n"
	       "  -p, --pretty          indented JSON\n"
	       "  -G, --print-graph     print the normalised job graph\n"
	       "  -N, --no-finished     checkpoints after tasks finish are switched off\n"
	       "  -A, --algorithm=ALGO  fast (default), reference, or both (cross-check)\n"
	       "  -f, --fail=V:S        the restart set when subtask S of vertex V fails (repeatable)\n"
	       "  -s, --strategy=S      failover strategy: full, region (default), approximate\n"
	       "      --lost=V:S        the partitions of producer subtask V:S are lost (repeatable)\n"
	       "      --regions         print the failover regions\n"
	       "  -D, --dot             print the graph and its plan as Graphviz DOT\n"
	       "  -h, --help            this help\n"
	       "  -V, --version         the version\n");
}

static void
add_target(struct target **list, size_t *n, const char *opt, const char *arg)
{
	const char *colon = strrchr(arg, ':');
	struct target *t;
	char *end;
	unsigned long x;

	if (colon == NULL || colon == arg || colon[1] < '0' || colon[1] > '9')
		cli_usage_fail("%s %s: expected VERTEX:SUBTASK", opt, arg);
	x = strtoul(colon + 1, &end, 10);
	if (*end != '\0' || x > UINT32_MAX)
		cli_usage_fail("%s %s: expected VERTEX:SUBTASK", opt, arg);
	*list = realloc(*list, (*n + 1) * sizeof **list);
	t = *list ? &(*list)[*n] : NULL;
	if (t == NULL || (t->vertex = strndup(arg, (size_t)(colon - arg))) == NULL)
		cli_out_of_memory();
	t->arg = arg;
	t->subtask = (uint32_t)x;
	(*n)++;
}

/* Resolve a -f or -l target against the graph: its vertex index. */
static int
resolve(const struct ckpt_graph *g, const char *opt, const struct target *t, size_t *v,
	struct ckpt_err *e)
{
	char where[600];
	long k = ckpt_graph_find(g, t->vertex);

	snprintf(where, sizeof where, "%s %s", opt, t->arg);
	for (size_t i = 0; k < 0 && i < g->nv; i++) /* a vertex may be named by its name as well */
		if (g->v[i].name && strcmp(g->v[i].name, t->vertex) == 0)
			k = (long)i;
	if (k < 0)
		return ckpt_err_set(e, CKPT_ERR_INPUT, where, "unknown vertex \"%s\"", t->vertex);
	if (t->subtask >= g->v[k].parallelism)
		return ckpt_err_set(e, CKPT_ERR_INPUT, where, "subtask %u out of range (parallelism %u)",
				    t->subtask, g->v[k].parallelism);
	*v = (size_t)k;
	return 0;
}

static int
job_resolve(struct job *j, struct ckpt_err *e)
{
	const struct opts *o = j->o;
	size_t v;

	j->failed = ckpt_calloc(o->nfailed ? o->nfailed : 1, sizeof *j->failed, e);
	if (j->failed == NULL)
		return -1;
	for (size_t k = 0; k < o->nfailed; k++) {
		if (resolve(j->g, "-f", &o->failed[k], &v, e) < 0)
			return -1;
		j->failed[k] = (struct ckpt_task_ref){v, o->failed[k].subtask};
	}
	if (o->nlost == 0)
		return 0;
	j->lost = ckpt_calloc(j->g->nv, sizeof *j->lost, e);
	if (j->lost == NULL)
		return -1;
	for (size_t k = 0; k < j->g->nv; k++)
		if (ckpt_bits_init(&j->lost[k], j->g->v[k].parallelism, e) < 0)
			return -1;
	for (size_t k = 0; k < o->nlost; k++) {
		if (resolve(j->g, "--lost", &o->lost[k], &v, e) < 0)
			return -1;
		ckpt_bits_set(&j->lost[v], o->lost[k].subtask);
	}
	return 0;
}

static void
job_release(struct job *j)
{
	for (size_t k = 0; j->lost && k < j->g->nv; k++)
		ckpt_bits_release(&j->lost[k]);
	free(j->lost);
	free(j->failed);
	ckpt_graph_free(j->g);
}

static void
release_sets(struct ckpt_bits *sets, size_t n)
{
	for (size_t k = 0; sets && k < n; k++)
		ckpt_bits_release(&sets[k]);
	free(sets);
}

/* Print and free out; 0, or -1 on a write error (reported). */
static int
emit(json_t *out, struct ckpt_err *e)
{
	int r = cli_print_json(out);

	json_decref(out);
	if (r < 0)
		return ckpt_err_sys(e, "stdout", "write error");
	return 0;
}

static json_t *
failed_to_json(const struct job *j)
{
	json_t *arr;

	if (j->o->nfailed == 1)
		return json_pack("{s:s,s:I}", "vertex", j->g->v[j->failed[0].vertex].id, "subtask",
				 (json_int_t)j->failed[0].subtask);
	arr = json_array();
	for (size_t k = 0; arr && k < j->o->nfailed; k++)
		ckpt_json_append_new(arr, json_pack("{s:s,s:I}", "vertex", j->g->v[j->failed[k].vertex].id,
						    "subtask", (json_int_t)j->failed[k].subtask));
	return arr;
}

/* The restart sets of the failed subtasks: g->nv sets into *out, and the number of regions. */
static int
restart_sets(const struct job *j, struct ckpt_bits **out, size_t *nregions, struct ckpt_err *e)
{
	struct ckpt_regions r;
	int ret;

	*out = ckpt_calloc(j->g->nv ? j->g->nv : 1, sizeof **out, e);
	if (*out == NULL || ckpt_regions_compute(j->g, j->o->strategy, &r, e) < 0)
		return -1;
	ret = ckpt_failover_restart_in(j->g, &r, j->failed, j->o->nfailed, j->lost, *out, nregions, e);
	ckpt_regions_release(&r);
	return ret;
}

static int
do_failover(struct job *j, struct ckpt_err *e)
{
	struct ckpt_bits *sets = NULL;
	size_t nregions = 0;
	json_t *out;
	int ret = -1;

	if (restart_sets(j, &sets, &nregions, e) < 0)
		goto out;
	out = json_pack("{s:s,s:o,s:o,s:I}", "strategy", ckpt_failover_strategy_name(j->o->strategy),
			"failed", failed_to_json(j), "restart", ckpt_vertex_sets_to_json(j->g, sets),
			"regions", (json_int_t)nregions);
	if (out == NULL)
		cli_out_of_memory();
	ret = emit(out, e);
out:
	release_sets(sets, j->g->nv);
	return ret;
}

static int
do_regions(struct job *j, struct ckpt_err *e)
{
	struct ckpt_regions r;
	json_t *out;

	if (ckpt_regions_compute(j->g, j->o->strategy, &r, e) < 0)
		return -1;
	out = ckpt_regions_to_json(j->g, &r);
	ckpt_regions_release(&r);
	if (out == NULL)
		cli_out_of_memory();
	return emit(out, e);
}

static int
do_graph(struct job *j, struct ckpt_err *e)
{
	json_t *out = ckpt_graph_to_json(j->g);

	if (out == NULL)
		cli_out_of_memory();
	return emit(out, e);
}

/* Compute the plan with the chosen algorithm (both: cross-checked). */
static int
compute_plan(const struct job *j, struct ckpt_plan *p, struct ckpt_err *e)
{
	struct ckpt_plan_opts po = {j->o->algo == ALGO_REFERENCE ? CKPT_PLAN_REFERENCE : CKPT_PLAN_FAST,
				    j->o->no_finished};
	struct ckpt_plan ref;
	char what[600];
	int differ;

	if (ckpt_plan_compute(j->g, &po, p, e) < 0)
		return -1;
	if (j->o->algo != ALGO_BOTH)
		return 0;
	po.algo = CKPT_PLAN_REFERENCE;
	if (ckpt_plan_compute(j->g, &po, &ref, e) < 0) {
		ckpt_plan_release(p);
		return -1;
	}
	differ = ckpt_plan_diff(j->g, p, &ref, what, sizeof what);
	ckpt_plan_release(&ref);
	if (differ) {
		ckpt_plan_release(p);
		return ckpt_jdoc_err(j->doc, e, "", "fast and reference algorithms differ: %s", what);
	}
	return 0;
}

/* 0, 1 when declined, -1 on error. */
static int
do_plan(struct job *j, struct ckpt_err *e)
{
	struct ckpt_plan p;
	json_t *out;
	int declined;

	if (compute_plan(j, &p, e) < 0)
		return -1;
	declined = p.decline_reason != NULL;
	out = ckpt_plan_to_json(j->g, &p);
	ckpt_plan_release(&p);
	if (out == NULL)
		cli_out_of_memory();
	if (emit(out, e) < 0)
		return -1;
	return declined;
}

static int
do_dot(struct job *j, struct ckpt_err *e)
{
	struct ckpt_dot_input in = {0};
	struct ckpt_plan p;
	struct ckpt_bits *sets = NULL;
	int ret = -1, declined;

	if (compute_plan(j, &p, e) < 0)
		return -1;
	declined = p.decline_reason != NULL;
	if (j->o->nfailed && restart_sets(j, &sets, NULL, e) < 0)
		goto out;
	in.plan = &p;
	in.restart = sets;
	in.failed = j->failed;
	in.nfailed = j->o->nfailed;
	if (ckpt_plan_dot(stdout, j->g, &in) < 0 || fflush(stdout) == EOF) {
		ckpt_err_sys(e, "stdout", "write error");
		goto out;
	}
	ret = declined;
out:
	release_sets(sets, j->g->nv);
	ckpt_plan_release(&p);
	return ret;
}

/* One graph (takes g): 0, 1 (declined) or -1 (error in e). */
static int
run_graph(const struct opts *o, struct ckpt_graph *g, const struct ckpt_jdoc *doc, struct ckpt_err *e)
{
	struct job j = {o, doc, g, NULL, NULL};
	int r = -1;

	if (job_resolve(&j, e) < 0)
		goto out;
	switch (o->mode) {
	case MODE_GRAPH: r = do_graph(&j, e); break;
	case MODE_REGIONS: r = do_regions(&j, e); break;
	case MODE_FAILOVER: r = do_failover(&j, e); break;
	case MODE_DOT: r = do_dot(&j, e); break;
	default: r = do_plan(&j, e); break;
	}
out:
	if (r < 0 && e->kind == CKPT_ERR_INPUT && e->where[0] == '\0') {
		/* a problem of the whole graph: name where it starts */
		char text[sizeof e->text];

		memcpy(text, e->text, sizeof text);
		ckpt_jdoc_err(doc, e, "", "%s", text);
	}
	job_release(&j);
	return r;
}

/* Every graph of the input (the files as one stream): 0, 1 (some plan declined) or 2. */
static int
run_inputs(const struct opts *o, char *const *paths, size_t npaths)
{
	struct ckpt_err e = {0};
	struct ckpt_graphin *in = ckpt_graphin_open(paths, npaths, &e);
	const struct ckpt_jdoc *doc;
	struct ckpt_graph *g;
	int r, status = 0;

	if (in == NULL) {
		cli_error(&e);
		return 2;
	}
	while ((r = ckpt_graphin_next(in, &g, &doc, &e)) > 0) {
		r = run_graph(o, g, doc, &e);
		if (r < 0)
			break;
		if (r > 0)
			status = 1;
	}
	if (r < 0) {
		cli_error(&e);
		status = 2;
	}
	ckpt_graphin_free(in);
	return status;
}

static void
set_mode(struct opts *o, enum mode m)
{
	if (o->mode != MODE_PLAN && o->mode != m && !(o->mode == MODE_DOT && m == MODE_FAILOVER) &&
	    !(o->mode == MODE_FAILOVER && m == MODE_DOT))
		cli_usage_fail("-G, --regions, -f and -D exclude each other (but -D takes -f)");
	if (o->mode == MODE_PLAN || m == MODE_DOT)
		o->mode = m;
}

static void
parse_algo(struct opts *o, const char *arg)
{
	if (strcmp(arg, "fast") == 0)
		o->algo = ALGO_FAST;
	else if (strcmp(arg, "reference") == 0)
		o->algo = ALGO_REFERENCE;
	else if (strcmp(arg, "both") == 0)
		o->algo = ALGO_BOTH;
	else
		cli_usage_fail("-A %s: expected fast, reference or both", arg);
}

static void
check_opts(const struct opts *o, int strategy_set)
{
	if (strategy_set && o->mode != MODE_FAILOVER && o->mode != MODE_REGIONS && o->nfailed == 0)
		cli_usage_fail("-s needs -f or --regions");
	if (o->nlost && o->nfailed == 0)
		cli_usage_fail("--lost needs -f");
	if (o->algo != ALGO_FAST && o->mode != MODE_PLAN && o->mode != MODE_DOT)
		cli_usage_fail("-A applies to checkpoint plans only");
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"pretty", no_argument, NULL, 'p'},       {"print-graph", no_argument, NULL, 'G'},
		{"no-finished", no_argument, NULL, 'N'},  {"algorithm", required_argument, NULL, 'A'},
		{"fail", required_argument, NULL, 'f'},   {"strategy", required_argument, NULL, 's'},
		{"lost", required_argument, NULL, OPT_LOST}, {"regions", no_argument, NULL, OPT_REGIONS},
		{"dot", no_argument, NULL, 'D'},          {"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{"graph", no_argument, NULL, OPT_GRAPH_OLD}, /* the old name of --print-graph */
		{NULL, 0, NULL, 0},
	};
	struct opts o = {MODE_PLAN, ALGO_FAST, 0, CKPT_FAILOVER_REGION, NULL, NULL, 0, 0};
	int c, status = 0, strategy_set = 0, s;

	cli_init("ckpt-plan");
	/* -g, -l, -r: letters ckpt(7) gives to other options, kept for a release */
	while ((c = cli_getopt(argc, argv, ":hVpGNA:f:s:Dgl:r", longopts, usage)) != -1) {
		switch (c) {
		case 'g': cli_moved("-g", "-G, --print-graph", NULL); /* fall through */
		case OPT_GRAPH_OLD:
			if (c == OPT_GRAPH_OLD)
				cli_moved("--graph", "--print-graph, -G", NULL);
			/* fall through */
		case 'G': set_mode(&o, MODE_GRAPH); break;
		case 'N': o.no_finished = 1; break;
		case 'A': parse_algo(&o, optarg); break;
		case 'f': set_mode(&o, MODE_FAILOVER); add_target(&o.failed, &o.nfailed, "-f", optarg); break;
		case 'l': cli_moved("-l", "--lost", NULL); /* fall through */
		case OPT_LOST: add_target(&o.lost, &o.nlost, "--lost", optarg); break;
		case 'r': cli_moved("-r", "--regions", NULL); /* fall through */
		case OPT_REGIONS: set_mode(&o, MODE_REGIONS); break;
		case 'D': set_mode(&o, MODE_DOT); break;
		case 's':
			if ((s = ckpt_failover_strategy_parse(optarg)) < 0)
				cli_usage_fail("-s %s: expected full, region or approximate", optarg);
			o.strategy = (enum ckpt_failover_strategy)s;
			strategy_set = 1;
			break;
		default: cli_bad_option(c, argv);
		}
	}
	cli_no_input(argc - optind, usage);
	check_opts(&o, strategy_set);
	status = run_inputs(&o, argv + optind, (size_t)(argc - optind));
	for (size_t k = 0; k < o.nfailed; k++)
		free(o.failed[k].vertex);
	for (size_t k = 0; k < o.nlost; k++)
		free(o.lost[k].vertex);
	free(o.failed);
	free(o.lost);
	return cli_finish(status);
}
