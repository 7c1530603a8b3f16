/* keygroup.c: Flink's KeyGroupRangeAssignment, the one copy of the key-group arithmetic that
 * redistribution, the engine and batch partitions share. */
#include "base.h"

void
ckpt_key_group_range(uint32_t maxp, uint32_t p, uint32_t i, uint32_t *first, uint32_t *last)
{
	*first = (uint32_t)(((uint64_t)i * maxp + p - 1) / p);
	*last = (uint32_t)((((uint64_t)i + 1) * maxp - 1) / p);
}

uint32_t
ckpt_subtask_of_key_group(uint32_t kg, uint32_t maxp, uint32_t p)
{
	return (uint32_t)((uint64_t)kg * p / maxp);
}
