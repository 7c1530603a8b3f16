/* inspect-shards.h: ckpt-inspect --shards N (the descriptors) and -R --shard D [-o OUT] (one
 * shard's rows, to stdout or to a part file written whole). */
#ifndef CKPT_INSPECT_SHARDS_H
#define CKPT_INSPECT_SHARDS_H

#include "cli.h"

/* --shards N: the descriptors of s (file as the user named it), one a line; 0, or 2 said. */
int shards_print(struct ckpt_snapshot *s, const char *file, unsigned n);
/* -R --shard desc: its rows to stdout, or into out (DIR/ or s3://bucket/prefix/: part-NNNNN.ndjson,
 * .gz or .zst by compress), written whole or not at all; 0, or 2 said. */
int shards_rows(struct ckpt_snapshot *s, const char *desc, const char *out, const char *compress);

#endif
