/* fuzz_state.c: the state document reader (ckpt-state(5)) on any bytes; what loads must print and read back the same. */
#include <stdlib.h>
#include <string.h>

#include "ckpt.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *
dump(json_t *j)
{
	char *s = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;

	json_decref(j);
	return s;
}

/* The document a snapshot prints must load again and print the same: a failure is a bug. */
static void
check_round_trip(struct ckpt_snapshot *s)
{
	struct ckpt_err e = {0};
	json_t *j = ckpt_snapshot_to_json(s, &e);
	char *s1, *s2;
	struct ckpt_jdoc *d;
	struct ckpt_snapshot *s2nap;

	if (j == NULL) {
		fprintf(stderr, "a loaded document does not print: %s: %s\n", e.where, e.text);
		abort();
	}
	s1 = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
	d = ckpt_jdoc_wrap(j, "printed", &e);
	s2nap = ckpt_snapshot_from_json(d, &e);
	if (s2nap == NULL) {
		fprintf(stderr, "printed document does not load: %s: %s\n%s\n", e.where, e.text, s1);
		abort();
	}
	s2 = dump(ckpt_snapshot_to_json(s2nap, &e));
	if (s2 == NULL || strcmp(s1, s2) != 0) {
		fprintf(stderr, "printed document changes on reading:\n%s\n%s\n", s1, s2 ? s2 : "(null)");
		abort();
	}
	free(s1);
	free(s2);
	ckpt_snapshot_free(s2nap);
	ckpt_jdoc_free(d);
}

static void
one_snapshot(const struct ckpt_jdoc *doc)
{
	struct ckpt_err e = {0};
	struct ckpt_snapshot *s = ckpt_snapshot_from_json(doc, &e);

	if (s != NULL)
		check_round_trip(s);
	ckpt_snapshot_free(s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_each_doc(data, size, 4, one_snapshot);
	return 0;
}
