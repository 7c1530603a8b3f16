/* run-baseline.c: the yardstick of t/bench/run.sh: three bare threads hand 16-byte records
 * along in 32 KiB buffers through bounded queues, nothing else. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BUFSZ 32768
#define NBUF 10
#define REC 16

struct queue {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned char *b[NBUF + 1];
	size_t len[NBUF + 1];
	int head, n;
};

static struct queue q1, q2, free1, free2;
static long long nrec;

static void
put(struct queue *q, unsigned char *b, size_t len)
{
	pthread_mutex_lock(&q->mu);
	while (q->n == NBUF + 1)
		pthread_cond_wait(&q->cv, &q->mu);
	q->b[(q->head + q->n) % (NBUF + 1)] = b;
	q->len[(q->head + q->n) % (NBUF + 1)] = len;
	q->n++;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

static unsigned char *
get(struct queue *q, size_t *len)
{
	unsigned char *b;

	pthread_mutex_lock(&q->mu);
	while (q->n == 0)
		pthread_cond_wait(&q->cv, &q->mu);
	b = q->b[q->head];
	if (len)
		*len = q->len[q->head];
	q->head = (q->head + 1) % (NBUF + 1);
	q->n--;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
	return b;
}

static void *
source(void *arg)
{
	long long i = 0;

	(void)arg;
	while (i < nrec) {
		unsigned char *b = get(&free1, NULL);
		size_t len = 0;

		for (; len + REC <= BUFSZ && i < nrec; len += REC, i++) {
			uint64_t k = (uint64_t)i, v = (uint64_t)i * 3;

			memcpy(b + len, &k, 8);
			memcpy(b + len + 8, &v, 8);
		}
		put(&q1, b, len);
	}
	put(&q1, NULL, 0);
	return NULL;
}

static void *
map(void *arg)
{
	(void)arg;
	for (;;) {
		size_t len, olen = 0;
		unsigned char *b = get(&q1, &len), *o;

		if (b == NULL)
			break;
		o = get(&free2, NULL);
		for (size_t off = 0; off < len; off += REC, olen += REC) {
			uint64_t k, v;

			memcpy(&k, b + off, 8);
			memcpy(&v, b + off + 8, 8);
			v += 1;
			memcpy(o + olen, &k, 8);
			memcpy(o + olen + 8, &v, 8);
		}
		put(&free1, b, 0);
		put(&q2, o, olen);
	}
	put(&q2, NULL, 0);
	return NULL;
}

int
main(int argc, char **argv)
{
	pthread_t t1, t2;
	struct timespec a, z;
	uint64_t sum = 0;
	long long got = 0;
	double s;

	nrec = argc > 1 ? atoll(argv[1]) : 50000000;
	struct queue *qs[] = {&q1, &q2, &free1, &free2};
	for (int i = 0; i < 4; i++) {
		pthread_mutex_init(&qs[i]->mu, NULL);
		pthread_cond_init(&qs[i]->cv, NULL);
	}
	for (int i = 0; i < NBUF; i++) {
		put(&free1, malloc(BUFSZ), 0);
		put(&free2, malloc(BUFSZ), 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	pthread_create(&t1, NULL, source, NULL);
	pthread_create(&t2, NULL, map, NULL);
	for (;;) {
		size_t len;
		unsigned char *b = get(&q2, &len);

		if (b == NULL)
			break;
		for (size_t off = 0; off < len; off += REC, got++) {
			uint64_t v;

			memcpy(&v, b + off + 8, 8);
			sum += v;
		}
		put(&free2, b, 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &z);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	s = (double)(z.tv_sec - a.tv_sec) + (double)(z.tv_nsec - a.tv_nsec) / 1e9;
	printf("%lld %.0f %llu\n", got, (double)got / s, (unsigned long long)(sum & 1));
	return 0;
}
