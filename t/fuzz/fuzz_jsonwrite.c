/* fuzz_jsonwrite.c: the state document's own JSON writer (ckpt_jw_json, lib/base/jw.c) on any JSON
 * jansson reads as the library does: compact and indented, it must write byte for byte what
 * ckpt_json_print (jansson) writes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* v as ckpt_jw_json writes it (with the final newline, as the state document ends), or as
 * ckpt_json_print does; its length in *n. */
static char *
written(const json_t *v, int pretty, int by_jw, size_t *n)
{
	struct ckpt_err e = {0};
	char *buf = NULL;
	FILE *f = open_memstream(&buf, n);
	struct ckpt_jw *w;

	if (f == NULL)
		abort();
	if (by_jw) {
		if ((w = ckpt_jw_new(f, pretty, &e)) == NULL)
			abort();
		ckpt_jw_json(w, v);
		ckpt_jw_free(w);
		fputc('\n', f);
	} else if (ckpt_json_print(f, v, pretty) < 0) {
		abort();
	}
	if (fclose(f) != 0)
		abort();
	return buf;
}

static void
compare(const json_t *v, int pretty)
{
	size_t n1, n2;
	char *ours = written(v, pretty, 1, &n1), *theirs = written(v, pretty, 0, &n2);

	if (n1 != n2 || memcmp(ours, theirs, n1) != 0) {
		size_t i = 0;

		while (i < n1 && i < n2 && ours[i] == theirs[i])
			i++;
		fprintf(stderr, "%s: ckpt_jw_json differs from jansson at byte %zu (%zu and %zu bytes)\n",
			pretty ? "pretty" : "compact", i, n1, n2);
		fprintf(stderr, "ckpt_jw_json: %.*s\njansson:      %.*s\n", (int)(n1 - i < 80 ? n1 - i : 80),
			ours + i, (int)(n2 - i < 80 ? n2 - i : 80), theirs + i);
		abort();
	}
	free(ours);
	free(theirs);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *v = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);

	if (v != NULL) {
		compare(v, 0);
		compare(v, 1);
	}
	json_decref(v);
	return 0;
}
