/* fuzz_flinkmeta.c: the Flink _metadata decoder on any bytes, and the JSON of what it decodes. */
#include <stdlib.h>

#include "ckpt.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ckpt_err e = {0};
	struct ckpt_snapshot *s;
	char id[33];

	ckpt_flinkmeta_sniff(data, size);
	s = ckpt_flinkmeta_decode(data, size, "fuzz", &e);
	if (s != NULL) {
		json_t *j = ckpt_snapshot_to_json(s, &e);
		char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;

		free(text);
		json_decref(j);
		ckpt_snapshot_free(s);
	}
	ckpt_flink_operator_id((const char *)data, size, id);
	return 0;
}
