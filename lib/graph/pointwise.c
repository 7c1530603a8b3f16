/* pointwise.c: which subtasks a POINTWISE edge connects (EdgeManagerBuildUtil.connectPointwise). */
#include "graph.h"

void
ckpt_pointwise_inputs(uint32_t S, uint32_t T, uint32_t j, uint32_t *lo, uint32_t *hi)
{
	if (S >= T) {
		*lo = (uint32_t)((uint64_t)j * S / T);
		*hi = (uint32_t)(((uint64_t)j + 1) * S / T);
	} else {
		*lo = (uint32_t)((uint64_t)j * S / T);
		*hi = *lo + 1;
	}
}

void
ckpt_pointwise_outputs(uint32_t S, uint32_t T, uint32_t i, uint32_t *lo, uint32_t *hi)
{
	if (S >= T) {
		*lo = (uint32_t)((((uint64_t)i + 1) * T - 1) / S);
		*hi = *lo + 1;
	} else {
		*lo = (uint32_t)(((uint64_t)i * T + S - 1) / S);
		*hi = (uint32_t)((((uint64_t)i + 1) * T + S - 1) / S);
	}
}
