/* fuzz_archive.c: ckpt_snapshot_open on any bytes (tar, tar.gz, zip, state document or _metadata,
 * as sniffed), then every subtask loaded, printed whole and summarised, and the archive verified. */
#include <stdlib.h>

#include "ckpt.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
report(void *arg, const char *where, const char *what)
{
	(void)arg, (void)where, (void)what;
}

static void
walk(struct ckpt_snapshot *s)
{
	struct ckpt_err e = {0};
	json_t *j;

	for (size_t i = 0; i < s->nops; i++)
		for (size_t k = 0; k < s->ops[i].nsubtasks; k++)
			if (ckpt_subtask_load(s, &s->ops[i], &s->ops[i].subtasks[k], &e) < 0)
				return;
	json_decref(ckpt_snapshot_summary(s, "fuzz", &e));
	j = ckpt_snapshot_to_json(s, &e);
	free(j ? json_dumps(j, JSON_COMPACT) : NULL);
	json_decref(j);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_memfile(data, size);
	struct ckpt_err e = {0};
	struct ckpt_snapshot *s = ckpt_snapshot_open(path, &e);
	uint64_t members, bytes;

	if (s != NULL)
		walk(s);
	ckpt_snapshot_free(s);
	ckpt_archive_verify(path, report, NULL, &members, &bytes, &e);
	return 0;
}
