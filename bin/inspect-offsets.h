/* inspect-offsets.h: ckpt-inspect --offsets as a table for a person (a terminal, or --table). */
#ifndef CKPT_INSPECT_OFFSETS_H
#define CKPT_INSPECT_OFFSETS_H

#include "cli.h"

/* The rows of ckpt_flink_offsets as a table on stdout, one line a split, printed once all are read
 * (nothing on an error): 0, or -1 with e set. */
int offsets_table(struct ckpt_snapshot *s, struct ckpt_err *e);

#endif
