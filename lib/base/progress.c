/* progress.c: the hook through which long work reports how far it is (the library never prints). */
#include "progress.h"

static struct ckpt_progress hook;
static const void *cur;     /* the work being reported, or NULL */
static const char *cur_unit;
static uint64_t cur_total;

void
ckpt_progress_set(const struct ckpt_progress *p)
{
	hook = p != NULL ? *p : (struct ckpt_progress){0};
	cur = NULL;
}

int
ckpt_progress_on(void)
{
	return hook.update != NULL;
}

void
ckpt_progress_begin(const void *key, const char *unit, uint64_t total)
{
	if (hook.update == NULL || cur != NULL)
		return; /* one piece of work at a time: what runs inside it is not reported apart */
	cur = key;
	cur_unit = unit;
	cur_total = total;
	hook.update(hook.arg, unit, 0, total);
}

void
ckpt_progress_at(const void *key, uint64_t done)
{
	if (hook.update != NULL && key == cur && key != NULL)
		hook.update(hook.arg, cur_unit, done, cur_total);
}

void
ckpt_progress_end(const void *key)
{
	if (hook.update == NULL || key != cur || key == NULL)
		return;
	cur = NULL;
	if (hook.end != NULL)
		hook.end(hook.arg);
}
