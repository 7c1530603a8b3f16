/* ckpt-plan: which subtasks a checkpoint triggers, waits for and commits to (FLIP-147). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void
usage(void)
{
	printf("usage: ckpt-plan [-p] [-g] [file ...]\n");
}

static int
plan_file(const char *path, int graph_only)
{
	struct ckpt_err e = {0};
	struct ckpt_jsonin *in = ckpt_jsonin_open(path, &e);
	struct ckpt_jdoc *doc;
	int r, status = 0, n = 0;

	if (in == NULL) {
		cli_error(&e);
		return 2;
	}
	while ((r = ckpt_jsonin_next(in, &doc, &e)) > 0) {
		struct ckpt_graph *g = ckpt_graph_from_json(doc, &e);
		json_t *out;

		n++;
		if (g == NULL) {
			r = -1;
			break;
		}
		out = graph_only ? ckpt_graph_to_json(g) : NULL;
		if (out && cli_print_json(out) < 0) {
			json_decref(out);
			ckpt_graph_free(g);
			status = 2;
			break;
		}
		json_decref(out);
		ckpt_graph_free(g);
	}
	if (r < 0) {
		cli_error(&e);
		status = 2;
	} else if (n == 0) {
		ckpt_err_set(&e, CKPT_ERR_INPUT, ckpt_jsonin_name(in), "no job graph in input");
		cli_error(&e);
		status = 2;
	}
	ckpt_jsonin_free(in);
	return status;
}

int
main(int argc, char **argv)
{
	int c, graph_only = 0, status = 0;

	cli_init("ckpt-plan");
	while ((c = getopt(argc, argv, "hVpg")) != -1) {
		switch (c) {
		case 'h':
			usage();
			return cli_finish(0);
		case 'V':
			cli_version();
			return cli_finish(0);
		case 'p':
			cli_pretty = 1;
			break;
		case 'g':
			graph_only = 1;
			break;
		default:
			cli_usage_fail("unknown option");
		}
	}
	if (optind == argc)
		status = plan_file(NULL, graph_only);
	for (int i = optind; i < argc && status == 0; i++)
		status = plan_file(argv[i], graph_only);
	return cli_finish(status);
}
