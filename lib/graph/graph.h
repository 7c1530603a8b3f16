/* graph.h: the graph layer (lib/graph/): job graphs, their checkpoint plans, failover regions,
 * DOT and Flink's REST responses, offered to every layer above; it owns the graphs, plans and
 * region sets it builds (ckpt.h says who frees them) and uses only the base layer. */
#ifndef CKPT_GRAPH_H
#define CKPT_GRAPH_H

#include "base/base.h"

/* -------------------------------------------------------------------------- job graphs: graph.c */

const char *ckpt_exec_state_name(enum ckpt_exec_state s);
/* -1 if name is not an ExecutionState name (upper case, as Flink spells them). */
int ckpt_exec_state_parse(const char *name);
const char *ckpt_distribution_name(enum ckpt_distribution d); /* "all_to_all" | "pointwise" */
const char *ckpt_partition_name(enum ckpt_partition p);       /* "pipelined", ... */
int ckpt_partition_parse(const char *name);                   /* -1 if unknown */
const char *ckpt_ship_name(enum ckpt_ship s);                 /* "forward", "hash", ...; NULL for none */
int ckpt_ship_parse(const char *name); /* any case (Flink's FORWARD or ckpt's forward); -1 if unknown */

/* ----------------------------------------------------------- POINTWISE edges: pointwise.c */

/*
 * POINTWISE connection arithmetic (Flink's EdgeManagerBuildUtil), S upstream
 * and T downstream subtasks.  The half-open range of upstream subtasks that
 * downstream subtask j reads, and of downstream subtasks that upstream i feeds.
 */
void ckpt_pointwise_inputs(uint32_t S, uint32_t T, uint32_t j, uint32_t *lo, uint32_t *hi);
void ckpt_pointwise_outputs(uint32_t S, uint32_t T, uint32_t i, uint32_t *lo, uint32_t *hi);

/* ------------------------------------------------------------- failover and regions: failover.c */

/*
 * ckpt_failover_restart_in with the lost partitions
 * asked of loss, per edge, instead of per producing subtask.
 */
int ckpt_failover_restart_loss(const struct ckpt_graph *g, const struct ckpt_regions *r,
			       const struct ckpt_task_ref *failed, size_t nfailed,
			       const struct ckpt_partition_loss *loss, struct ckpt_bits *restart,
			       size_t *nregions, struct ckpt_err *e);

#endif
