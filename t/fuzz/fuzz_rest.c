/* fuzz_rest.c: the graph stream reader (ckpt-graph(5) documents and Flink REST responses) on any
 * bytes; every graph it yields is planned by both algorithms, which must agree, and failed over. */
#include <stdlib.h>
#include <string.h>

#include "ckpt.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The reference algorithm walks every subtask connection: keep it to small graphs. */
#define SMALL 4096

static char *
plan_text(const struct ckpt_graph *g, enum ckpt_plan_algo algo, int no_finished)
{
	struct ckpt_plan_opts o = {algo, no_finished};
	struct ckpt_plan p = {0};
	struct ckpt_err e = {0};
	char *s = NULL;

	if (ckpt_plan_compute(g, &o, &p, &e) == 0) {
		json_t *j = ckpt_plan_to_json(g, &p);

		s = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
		json_decref(j);
	}
	ckpt_plan_release(&p);
	return s;
}

static void
check_plans(const struct ckpt_graph *g)
{
	for (int nf = 0; nf < 2; nf++) {
		char *fast = plan_text(g, CKPT_PLAN_FAST, nf), *ref;

		if (g->nsubtasks > SMALL) {
			free(fast);
			continue;
		}
		ref = plan_text(g, CKPT_PLAN_REFERENCE, nf);
		if ((fast == NULL) != (ref == NULL) || (fast && strcmp(fast, ref) != 0)) {
			fprintf(stderr, "plans differ:\nfast      %s\nreference %s\n", fast ? fast : "(error)",
				ref ? ref : "(error)");
			abort();
		}
		free(fast);
		free(ref);
	}
}

static void
fail_over(const struct ckpt_graph *g)
{
	struct ckpt_task_ref failed = {0, 0};
	struct ckpt_bits *restart;
	struct ckpt_err e = {0};

	if (g->nv == 0 || g->nsubtasks > SMALL)
		return;
	failed.vertex = g->nv - 1;
	for (int s = CKPT_FAILOVER_FULL; s <= CKPT_FAILOVER_APPROXIMATE; s++) {
		restart = calloc(g->nv, sizeof *restart);
		if (restart == NULL)
			abort();
		if (ckpt_failover_restart(g, (enum ckpt_failover_strategy)s, &failed, 1, NULL, restart, &e) == 0)
			for (size_t v = 0; v < g->nv; v++)
				ckpt_bits_release(&restart[v]);
		free(restart);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *path = (char *)fuzz_memfile(data, size);
	struct ckpt_err e = {0};
	struct ckpt_graphin *in = ckpt_graphin_open(&path, 1, &e);
	const struct ckpt_jdoc *doc;
	struct ckpt_graph *g;

	if (in == NULL)
		return 0;
	for (int n = 0; n < 8 && ckpt_graphin_next(in, &g, &doc, &e) > 0; n++) {
		json_t *j = ckpt_graph_to_json(g);

		free(json_dumps(j, JSON_COMPACT));
		json_decref(j);
		check_plans(g);
		fail_over(g);
		ckpt_graph_free(g);
	}
	ckpt_graphin_free(in);
	return 0;
}
