/* replay.h: what replay.c and reset.c share and nobody else sees (the layer's face is evlog.h). */
#ifndef CKPT_REPLAY_INTERNAL_H
#define CKPT_REPLAY_INTERNAL_H

#include "evlog.h"

struct ckpt_rp; /* the replay of the log's records (replay.c) */

/* What the recovery steps share. */
struct ckpt_rp_ctx {
	struct ckpt_rp *R;
	struct ckpt_replay *out;
	const struct ckpt_graph *g;
	long *g2p;                 /* graph vertex -> plan vertex, or -1 */
	struct ckpt_bits *failed;  /* per graph vertex: subtasks to reset next */
	int pipelined;             /* some edge joins subtasks into larger regions */
	const struct ckpt_bits *listed; /* per graph vertex: the producers -a names, or NULL: all */
	unsigned char *full;       /* per plan vertex: every subtask finished, as of now */
	struct ckpt_err *e;
};

/* Flink's determineVerticesForResetAfterRestoreOpCoordinator, then its resetVerticesInRecovering. */
int ckpt_rp_coordinator_resets(struct ckpt_rp_ctx *X);
/* Flink's recoverPartitions: producers of missing partitions reset, with the availability check
 * (available: the -a document of reported producers, or NULL: all). */
int ckpt_rp_partition_resets(struct ckpt_rp_ctx *X, const struct ckpt_jdoc *available);

#endif
