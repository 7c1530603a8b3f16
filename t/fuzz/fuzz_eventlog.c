/* fuzz_eventlog.c: the event log reader on any bytes as a segment events.0, the replay over
 * it, and the NDJSON event line parser (ckpt-replay -w) on the same bytes split in lines. */
#include <stdlib.h>
#include <string.h>

#include "ckpt.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
read_log(const char *dir)
{
	struct ckpt_err e = {0};
	struct ckpt_evreader *r = ckpt_evreader_open(dir, &e);
	struct ckpt_event ev;
	struct ckpt_replay rp = {0};
	struct ckpt_replay_opts o = {0};

	if (r != NULL) {
		while (ckpt_evreader_next(r, &ev, &e) > 0)
			;
		ckpt_evreader_stats(r);
		ckpt_evreader_free(r);
	}
	if (ckpt_replay_run(dir, &o, &rp, &e) == 0) {
		json_t *j = ckpt_replay_to_json(&rp);

		free(j ? json_dumps(j, JSON_COMPACT) : NULL);
		json_decref(j);
		ckpt_replay_release(&rp);
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
