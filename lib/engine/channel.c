/* channel.c: fixed-size buffers, credit-based bounded channels and floating buffers per input gate. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"

#ifndef SPIN
#define SPIN 64
#endif

/* Control events never need a credit; a channel holds at most this many of them besides buffers. */
#define EVENT_SLOTS 64

void
ckpt_notify_init(struct ckpt_notify *n)
{
	pthread_condattr_t a;

	pthread_mutex_init(&n->mu, NULL);
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&n->cv, &a);
	pthread_condattr_destroy(&a);
	atomic_init(&n->seq, 0);
	atomic_init(&n->waiters, 0);
}

void
ckpt_notify_destroy(struct ckpt_notify *n)
{
	pthread_mutex_destroy(&n->mu);
	pthread_cond_destroy(&n->cv);
}

void
ckpt_notify_wait(struct ckpt_notify *n, unsigned seq, int64_t timeout_ms)
{
	struct timespec ts;

	/* a short spin first: the other side is often a few hundred nanoseconds from a buffer */
	for (int i = 0; i < SPIN; i++) {
		if (atomic_load_explicit(&n->seq, memory_order_acquire) != seq)
			return;
		if (i % 16 == 15)
			sched_yield();
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (timeout_ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&n->mu);
	atomic_fetch_add(&n->waiters, 1);
	while (atomic_load(&n->seq) == seq)
		if (pthread_cond_timedwait(&n->cv, &n->mu, &ts) == ETIMEDOUT)
			break;
	atomic_fetch_sub(&n->waiters, 1);
	pthread_mutex_unlock(&n->mu);
}

/*
 * The count goes up first, then the waiters are read (both sequentially consistent), while a
 * waiter registers before it reads the count: one of the two sees the other, so no wake is lost,
 * and nobody pays for a system call when nobody sleeps.
 */
void
ckpt_notify_wake(struct ckpt_notify *n)
{
	atomic_fetch_add(&n->seq, 1);
	if (atomic_load(&n->waiters) == 0)
		return;
	pthread_mutex_lock(&n->mu);
	pthread_cond_broadcast(&n->cv);
	pthread_mutex_unlock(&n->mu);
}

static struct ckpt_buf *
buf_new(size_t bufsize, struct ckpt_err *e)
{
	return ckpt_calloc(1, sizeof(struct ckpt_buf) + bufsize, e);
}

int
ckpt_gate_init(struct ckpt_gate *g, size_t floating, size_t bufsize, struct ckpt_err *e)
{
	pthread_mutex_init(&g->mu, NULL);
	for (size_t i = 0; i < floating; i++) {
		struct ckpt_buf *b = buf_new(bufsize, e);

		if (b == NULL)
			return -1;
		b->home_gate = g;
		b->next = g->free;
		g->free = b;
		g->nfree++;
	}
	return 0;
}

void
ckpt_gate_destroy(struct ckpt_gate *g)
{
	while (g->free) {
		struct ckpt_buf *b = g->free;

		g->free = b->next;
		free(b);
	}
	free(g->ch);
	pthread_mutex_destroy(&g->mu);
}

int
ckpt_channel_init(struct ckpt_channel *c, struct ckpt_gate *g, size_t exclusive, size_t max_inflight, size_t bufsize,
	     struct ckpt_err *e)
{
	pthread_mutex_init(&c->mu, NULL);
	c->gate = g;
	c->max_inflight = max_inflight;
	c->cap = max_inflight + EVENT_SLOTS;
	c->q = ckpt_calloc(c->cap, sizeof *c->q, e);
	if (c->q == NULL)
		return -1;
	for (size_t i = 0; i < exclusive; i++) {
		struct ckpt_buf *b = buf_new(bufsize, e);

		if (b == NULL)
			return -1;
		b->home_ch = c;
		b->next = c->free;
		c->free = b;
		c->nfree++;
	}
	return 0;
}

void
ckpt_channel_destroy(struct ckpt_channel *c)
{
	for (size_t i = 0; i < c->n; i++) {
		struct ckpt_entry *en = &c->q[(c->head + i) % c->cap];

		if (en->kind != ENT_BUFFER)
			continue;
		/* the job is over: put floating buffers back without waking anybody */
		if (en->b->home_gate) {
			en->b->next = en->b->home_gate->free;
			en->b->home_gate->free = en->b;
		} else {
			en->b->next = c->free;
			c->free = en->b;
		}
	}
	while (c->free) {
		struct ckpt_buf *b = c->free;

		c->free = b->next;
		free(b);
	}
	free(c->q);
	pthread_mutex_destroy(&c->mu);
}

struct ckpt_buf *
ckpt_channel_take_buffer(struct ckpt_channel *c, unsigned *gen)
{
	struct ckpt_buf *b = NULL;

	pthread_mutex_lock(&c->mu);
	if (c->free) {
		b = c->free;
		c->free = b->next;
		c->nfree--;
	} else if (c->inflight < c->max_inflight && c->gate) {
		pthread_mutex_lock(&c->gate->mu);
		if (c->gate->free) {
			b = c->gate->free;
			c->gate->free = b->next;
			c->gate->nfree--;
		}
		pthread_mutex_unlock(&c->gate->mu);
	}
	*gen = c->gen;
	if (b) {
		c->inflight++;
		b->len = 0;
		b->nrec = 0;
		b->next = NULL;
	}
	pthread_mutex_unlock(&c->mu);
	return b;
}

/* Return a buffer to where it came from; the caller holds its channel's lock when it is exclusive. */
static void
give_back(struct ckpt_channel *c, struct ckpt_buf *b)
{
	c->inflight--;
	if (b->home_ch == c) {
		b->next = c->free;
		c->free = b;
		c->nfree++;
		return;
	}
	pthread_mutex_lock(&b->home_gate->mu);
	b->next = b->home_gate->free;
	b->home_gate->free = b;
	b->home_gate->nfree++;
	pthread_mutex_unlock(&b->home_gate->mu);
}

void
ckpt_channel_return_unused(struct ckpt_channel *c, struct ckpt_buf *b)
{
	pthread_mutex_lock(&c->mu);
	give_back(c, b);
	pthread_mutex_unlock(&c->mu);
}

void
ckpt_buffer_release(struct ckpt_buf *b)
{
	struct ckpt_channel *c = b->home_ch;
	int floating = b->home_gate != NULL;

	/* a floating buffer names no channel: it was counted against the one it travelled in */
	if (floating)
		c = (struct ckpt_channel *)b->next;
	pthread_mutex_lock(&c->mu);
	give_back(c, b);
	pthread_mutex_unlock(&c->mu);
	if (floating) {
		struct ckpt_gate *g = b->home_gate;

		for (size_t i = 0; i < g->nch; i++)
			if (g->ch[i]->prod)
				ckpt_notify_wake(&g->ch[i]->prod->nt);
	} else if (c->prod) {
		ckpt_notify_wake(&c->prod->nt);
	}
}

int
ckpt_channel_push(struct ckpt_channel *c, const struct ckpt_entry *en, unsigned gen)
{
	int r = 0, wake = 0;

	pthread_mutex_lock(&c->mu);
	if (gen != c->gen) {
		/* the consumer side was reset: this buffer's records are lost */
		if (en->kind == ENT_BUFFER) {
			c->lost_records += en->b->nrec;
			give_back(c, en->b);
		}
		goto out;
	}
	if (c->n == c->cap) {
		r = -1;
		goto out;
	}
	c->q[(c->head + c->n) % c->cap] = *en;
	if (en->kind == ENT_END_OF_DATA) {
		c->eod_sent = 1;
		c->eod_drain = en->bar.drain;
	}
	c->eop_sent |= en->kind == ENT_END_OF_PARTITION;
	if (en->kind == ENT_BUFFER)
		en->b->next = (struct ckpt_buf *)c; /* where a floating buffer goes back to */
	c->n++;
	wake = 1;
	if (en->kind == ENT_BARRIER && c->cons)
		atomic_store(&c->cons->prio, 1); /* the announcement of an aligned barrier (unaligned.c) */
out:
	pthread_mutex_unlock(&c->mu);
	if (wake && c->cons)
		ckpt_notify_wake(&c->cons->nt);
	return r;
}

int
ckpt_channel_pop(struct ckpt_channel *c, struct ckpt_entry *en)
{
	int r = 0;

	pthread_mutex_lock(&c->mu);
	if (c->n > 0) {
		*en = c->q[c->head];
		c->head = (c->head + 1) % c->cap;
		c->n--;
		if (c->nprio > 0)
			c->nprio--;
		r = 1;
	}
	pthread_mutex_unlock(&c->mu);
	return r;
}

int
ckpt_channel_peek_kind(struct ckpt_channel *c)
{
	int k = -1;

	pthread_mutex_lock(&c->mu);
	if (c->n > 0)
		k = (int)c->q[c->head].kind;
	pthread_mutex_unlock(&c->mu);
	return k;
}

uint64_t
ckpt_channel_reset(struct ckpt_channel *c, int keep_end)
{
	uint64_t lost = 0;

	pthread_mutex_lock(&c->mu);
	for (size_t i = 0; i < c->n; i++) {
		struct ckpt_entry en = c->q[(c->head + i) % c->cap];

		if (en.kind == ENT_BUFFER) {
			lost += en.b->nrec;
			give_back(c, en.b);
		}
	}
	c->n = 0;
	c->nprio = 0;
	c->gen++;
	c->lost_records += lost;
	atomic_store(&c->eod_acked, 0);
	if (!keep_end) {
		c->eod_sent = c->eop_sent = 0;
	} else {
		/* the producer lives on: a new consumer must still learn that its input ended */
		if (c->eod_sent)
			c->q[(c->head + c->n++) % c->cap] = (struct ckpt_entry){.kind = ENT_END_OF_DATA, .bar = {.drain = c->eod_drain}};
		if (c->eop_sent)
			c->q[(c->head + c->n++) % c->cap] = (struct ckpt_entry){.kind = ENT_END_OF_PARTITION};
	}
	pthread_mutex_unlock(&c->mu);
	if (c->prod)
		ckpt_notify_wake(&c->prod->nt);
	return lost;
}
