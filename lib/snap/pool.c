/*
 * pool.c: one piece of work a snapshot, spread over threads (one a core), each taking the next;
 * discovery (list.c) and --orphans (orphans.c) read their snapshots so.
 */
#include <pthread.h>
#include <unistd.h>

#include "snap.h"

struct pool {
	int (*fn)(void *arg, size_t i, struct ckpt_err *e);
	void *arg;
	size_t n, next;
	int failed;
	pthread_mutex_t mu;
	struct ckpt_err e;
};

static void *
worker(void *arg)
{
	struct pool *P = arg;

	for (;;) {
		struct ckpt_err e = {0};
		size_t i = __atomic_fetch_add(&P->next, 1, __ATOMIC_RELAXED);

		if (i >= P->n || __atomic_load_n(&P->failed, __ATOMIC_RELAXED))
			return NULL;
		if (P->fn(P->arg, i, &e) >= 0)
			continue;
		pthread_mutex_lock(&P->mu);
		if (!P->failed)
			P->e = e;
		__atomic_store_n(&P->failed, 1, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&P->mu);
	}
}

int
ckpt_snap_each(size_t n, int (*fn)(void *arg, size_t i, struct ckpt_err *e), void *arg,
	       struct ckpt_err *e)
{
	struct pool P = {.fn = fn, .arg = arg, .n = n};
	pthread_t t[CKPT_SNAP_THREADS];
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	size_t nt = cores < 1 ? 1 : (size_t)cores, started = 0;

	if (nt > CKPT_SNAP_THREADS)
		nt = CKPT_SNAP_THREADS;
	if (nt > n)
		nt = n;
	pthread_mutex_init(&P.mu, NULL);
	json_decref(json_object()); /* jansson seeds its hash function with the first object: here, not in the threads */
	while (started + 1 < nt && pthread_create(&t[started], NULL, worker, &P) == 0)
		started++;
	worker(&P); /* this thread is one of them */
	for (size_t i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	pthread_mutex_destroy(&P.mu);
	if (P.failed) {
		*e = P.e;
		return -1;
	}
	return 0;
}
