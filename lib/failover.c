/* failover.c: STUB until the failover concern lands; see ckpt.h. */
#include "ckpt.h"

int
ckpt_failover_restart(const struct ckpt_graph *g, enum ckpt_failover_strategy s,
		      const struct ckpt_task_ref *failed, size_t nfailed, const struct ckpt_bits *lost,
		      struct ckpt_bits *restart, struct ckpt_err *e)
{
	(void)g, (void)s, (void)failed, (void)nfailed, (void)lost, (void)restart;
	return ckpt_err_set(e, CKPT_ERR_INPUT, "", "failover is not implemented yet");
}
