/* fuzz_graph.c: the JSON stream reader and the job graph loader (ckpt-graph(5)) on any bytes. */
#include <stdlib.h>
#include <string.h>

#include "ckpt.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The normal form must load again and print the same: a failure here is a bug, not bad input. */
static void
check_round_trip(const struct ckpt_graph *g)
{
	struct ckpt_err e = {0};
	json_t *out = ckpt_graph_to_json(g);
	char *s1 = json_dumps(out, JSON_COMPACT | JSON_PRESERVE_ORDER), *s2;
	struct ckpt_jdoc *d = ckpt_jdoc_wrap(out, "normal", &e);
	struct ckpt_graph *g2 = ckpt_graph_from_json(d, &e);

	if (g2 == NULL) {
		fprintf(stderr, "normal form does not load: %s: %s\n%s\n", e.where, e.text, s1);
		abort();
	}
	out = ckpt_graph_to_json(g2);
	s2 = json_dumps(out, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (strcmp(s1, s2) != 0) {
		fprintf(stderr, "normal form changes on reading:\n%s\n%s\n", s1, s2);
		abort();
	}
	json_decref(out);
	free(s1);
	free(s2);
	ckpt_graph_free(g2);
	ckpt_jdoc_free(d);
}

static void
one_graph(const struct ckpt_jdoc *doc)
{
	struct ckpt_err e = {0};
	struct ckpt_graph *g = ckpt_graph_from_json(doc, &e);

	if (g != NULL)
		check_round_trip(g);
	ckpt_graph_free(g);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_each_doc(data, size, 8, one_graph);
	struct ckpt_err e = {0};

	ckpt_jdoc_free(ckpt_jdoc_load(path, &e));
	return 0;
}
