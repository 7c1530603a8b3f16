/* progress.c: the hook through which long work reports how far it is (the library never prints). */
#include <pthread.h>
#include <stdatomic.h>

#include "progress.h"

static struct ckpt_progress hook;
static const void *_Atomic cur; /* the work being reported, or NULL (ckpt_progress_add reads it on any thread) */
static const char *cur_unit;
static uint64_t cur_total;
static _Atomic uint64_t added; /* ckpt_progress_add's, since the work began */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

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
	cur_unit = unit;
	cur_total = total;
	atomic_store(&added, 0);
	cur = key; /* last: a thread that sees it sees its unit and total */
	hook.update(hook.arg, unit, 0, total);
}

void
ckpt_progress_at(const void *key, uint64_t done)
{
	if (hook.update != NULL && key == cur && key != NULL)
		hook.update(hook.arg, cur_unit, done, cur_total);
}

void
ckpt_progress_add(uint64_t n)
{
	uint64_t done;

	if (hook.update == NULL || cur == NULL)
		return;
	done = atomic_fetch_add(&added, n) + n;
	if (cur_total && done > cur_total)
		done = cur_total; /* a file read again in part (a header, a window re-read): not past the end */
	if (pthread_mutex_trylock(&mu) != 0)
		return; /* another thread is saying it */
	if (cur != NULL)
		hook.update(hook.arg, cur_unit, done, cur_total);
	pthread_mutex_unlock(&mu);
}

void
ckpt_progress_end(const void *key)
{
	if (hook.update == NULL || key != cur || key == NULL)
		return;
	pthread_mutex_lock(&mu);
	cur = NULL;
	pthread_mutex_unlock(&mu);
	if (hook.end != NULL)
		hook.end(hook.arg);
}
