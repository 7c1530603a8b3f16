/* fuzz_flinkmeta.c: the Flink _metadata decoder on any bytes, the JSON of what it decodes, and the
 * writer's round trip: what decodes encodes (unedited) to bytes that decode to the same. */
#include <stdlib.h>
#include <string.h>

#include "ckpt.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static json_t *
as_json(struct ckpt_snapshot *s)
{
	struct ckpt_err e = {0};
	json_t *j = ckpt_snapshot_to_json(s, &e);

	if (j && s->flink)
		json_object_set(j, "flink", s->flink);
	return j;
}

/* decode -> encode -> decode gives the same snapshot; version 2 is refused, never written. */
static void
round_trip(const uint8_t *data, size_t size, json_t *before)
{
	struct ckpt_err e = {0};
	struct ckpt_bytes out;
	struct ckpt_snapshot *s;
	json_t *after;

	if (ckpt_fmeta_rewrite(data, size, "fuzz", NULL, 0, &out, NULL, &e) < 0) {
		if (size < 8 || data[7] >= 3) /* only versions 2 and below may refuse what decodes */
			abort();
		return;
	}
	s = ckpt_fmeta_decode(out.p, out.len, "fuzz", &e);
	if (s == NULL)
		abort();
	after = as_json(s);
	if (before && after && !json_equal(before, after))
		abort();
	json_decref(after);
	ckpt_snapshot_free(s);
	free(out.p);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ckpt_err e = {0};
	struct ckpt_snapshot *s;
	char id[33];

	ckpt_fmeta_sniff(data, size);
	s = ckpt_fmeta_decode(data, size, "fuzz", &e);
	if (s != NULL) {
		json_t *j = as_json(s);
		char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;

		free(text);
		round_trip(data, size, j);
		json_decref(j);
		ckpt_snapshot_free(s);
	}
	ckpt_flink_operator_id((const char *)data, size, id);
	return 0;
}
