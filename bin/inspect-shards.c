/* inspect-shards.c: ckpt-inspect --shards N and -R --shard D [-o OUT] (ckpt-inspect(1), SHARDS). */
#include <stdlib.h>
#include <string.h>

#include "inspect-shards.h"

int
shards_print(struct ckpt_snapshot *s, const char *file, unsigned n)
{
	struct ckpt_err e = {0};
	char note[1024];
	json_t *all = ckpt_flink_shards(s, n, note, sizeof note, &e), *d;
	size_t i;

	if (all == NULL) {
		cli_error(&e);
		return 2;
	}
	json_array_foreach(all, i, d) {
		char *line = json_dumps(d, JSON_COMPACT | JSON_PRESERVE_ORDER);

		if (line == NULL)
			cli_out_of_memory();
		puts(line);
		free(line);
	}
	json_decref(all);
	if (*note)
		cli_warn("%s: %s", file, note);
	return fflush(stdout) == EOF ? 2 : 0;
}

int
shards_rows(struct ckpt_snapshot *s, const char *desc, const char *out, const char *compress)
{
	struct ckpt_err e = {0};
	char name[4096];

	if (out == NULL) {
		if (ckpt_flink_shard_rows(s, desc, stdout, &e) == 0 && fflush(stdout) != EOF)
			return 0;
		if (ferror(stdout))
			return 2; /* cli_finish says it */
		cli_error(&e);
		return 2;
	}
	if (ckpt_flink_shard_write(s, desc, out, compress, name, sizeof name, &e) < 0) {
		cli_error(&e);
		return 2;
	}
	return 0;
}
