/* fuzz_eventlog.c: the event log reader on any bytes as a segment events.0, the replay over
 * it (and, where it replays, with -g and -a), and the NDJSON event line parser (ckpt-replay -w)
 * on the same bytes split in lines. */
#include <stdlib.h>
#include <string.h>

#include "ckpt.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ckpt-replay -g: the graph of examples/replay-graph.json, and the same with its first edge pipelined
 * (regions of more than one subtask); -a: one partition of the middle vertex available. */
static const char *const graphs[] = {
	"{\"vertices\": [{\"id\": \"source\", \"parallelism\": 5, \"operators\": [{\"id\": \"enumerator\"}]},"
	" {\"id\": \"middle\", \"parallelism\": 5}, {\"id\": \"sink\", \"parallelism\": 1}],"
	" \"edges\": [{\"source\": \"source\", \"target\": \"middle\", \"distribution\": \"pointwise\", \"partition\": \"blocking\"},"
	" {\"source\": \"middle\", \"target\": \"sink\", \"distribution\": \"all_to_all\", \"partition\": \"blocking\"}]}",
	"{\"vertices\": [{\"id\": \"source\", \"parallelism\": 5, \"operators\": [{\"id\": \"enumerator\"}]},"
	" {\"id\": \"middle\", \"parallelism\": 5}, {\"id\": \"sink\", \"parallelism\": 1}],"
	" \"edges\": [{\"source\": \"source\", \"target\": \"middle\", \"distribution\": \"pointwise\", \"partition\": \"pipelined\"},"
	" {\"source\": \"middle\", \"target\": \"sink\", \"distribution\": \"all_to_all\", \"partition\": \"blocking\"}]}",
};
static struct ckpt_graph *graph[2];
static struct ckpt_jdoc *gdoc[2], *available;

static struct ckpt_jdoc *
load_doc(const char *text)
{
	struct ckpt_err e = {0};
	struct ckpt_jdoc *d = ckpt_jdoc_load(fuzz_memfile((const uint8_t *)text, strlen(text)), &e);

	if (d == NULL)
		abort();
	return d;
}

/* Loaded once, kept for the process's life. */
static void
load_options(void)
{
	struct ckpt_err e = {0};

	if (available != NULL)
		return;
	for (int k = 0; k < 2; k++)
		if ((graph[k] = ckpt_graph_from_json(gdoc[k] = load_doc(graphs[k]), &e)) == NULL)
			abort();
	available = load_doc("[\"source:0\", \"source:1\", \"middle:1\"]");
}

/* The replay with options o; its plan printed into memory. */
static int
replay(const char *dir, const struct ckpt_replay_opts *o)
{
	struct ckpt_err e = {0};
	struct ckpt_replay rp = {0};
	json_t *j;

	if (ckpt_replay_run(dir, o, &rp, &e) < 0)
		return -1;
	j = ckpt_replay_to_json(&rp);
	free(j ? json_dumps(j, JSON_COMPACT) : NULL);
	json_decref(j);
	ckpt_replay_release(&rp);
	return 0;
}

static void
read_log(const char *dir)
{
	struct ckpt_err e = {0};
	struct ckpt_evreader *r = ckpt_evreader_open(dir, &e);
	struct ckpt_event ev;
	struct ckpt_replay_opts o = {0};

	if (r != NULL) {
		while (ckpt_evreader_next(r, &ev, &e) > 0)
			;
		ckpt_evreader_stats(r);
		ckpt_evreader_free(r);
	}
	if (replay(dir, &o) < 0)
		return;
	/* a log the replay reads: again with -g (both graphs) and -a */
	load_options();
	for (int k = 0; k < 2; k++) {
		o = (struct ckpt_replay_opts){.graph = graph[k]};
		replay(dir, &o);
		o.available = available;
		replay(dir, &o);
	}
}

static void
parse_lines(const uint8_t *data, size_t size)
{
	struct ckpt_err e = {0};
	struct ckpt_evparser *p = ckpt_evparser_new(&e);
	size_t i = 0;

	if (p == NULL)
		abort();
	while (i < size) {
		const uint8_t *nl = memchr(data + i, '\n', size - i);
		size_t len = nl ? (size_t)(nl - (data + i)) : size - i;
		struct ckpt_event ev;
		const char *at;
		char *line = malloc(len + 1); /* a line of its own, so ASan sees reads past it */

		if (line == NULL)
			abort();
		memcpy(line, data + i, len);
		line[len] = '\0';
		ckpt_evparser_line(p, line, len, &ev, &at, &e);
		free(line);
		i += len + 1;
	}
	ckpt_evparser_free(p);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_dir_clear();
	if (fuzz_file("events.0", data, size) == NULL)
		abort();
	read_log(fuzz_dir());
	parse_lines(data, size);
	return 0;
}
