/* plan.c: STUB until the plan concern lands; see ckpt.h. */
#include "ckpt.h"

int
ckpt_plan_compute(const struct ckpt_graph *g, const struct ckpt_plan_opts *o, struct ckpt_plan *out,
		  struct ckpt_err *e)
{
	(void)g, (void)o, (void)out;
	return ckpt_err_set(e, CKPT_ERR_INPUT, "", "checkpoint plans are not implemented yet");
}

json_t *
ckpt_plan_to_json(const struct ckpt_graph *g, const struct ckpt_plan *p)
{
	(void)g, (void)p;
	return NULL;
}

void
ckpt_plan_release(struct ckpt_plan *p)
{
	(void)p;
}

int
ckpt_plan_dot(FILE *f, const struct ckpt_graph *g, const struct ckpt_dot_input *in)
{
	(void)f, (void)g, (void)in;
	return -1;
}
