/* output.c: a task's outputs: partitioners, records serialized into buffers, back-pressure, events. */
#include <string.h>

#include "engine.h"

/* Wait for a credit on oc's channel; flushes the other outputs first so nobody waits on us. NULL if cancelled. */
static struct ckpt_buf *
wait_buffer(struct ckpt_task *t, struct ckpt_outch *oc)
{
	int flushed = 0;

	for (;;) {
		unsigned seq = notify_prepare(&t->nt);
		struct ckpt_buf *b = ckpt_channel_take_buffer(oc->ch, &oc->gen);

		if (b != NULL)
			return b;
		if (atomic_load(&t->cancel))
			return NULL;
		if (!flushed) {
			ckpt_task_flush(t);
			flushed = 1;
			continue;
		}
		ckpt_notify_wait(&t->nt, seq, 100);
	}
}

static void
push_cur(struct ckpt_task *t, struct ckpt_outch *oc)
{
	struct ckpt_entry en = {.kind = ENT_BUFFER, .b = oc->cur};

	(void)t;
	oc->cur = NULL;
	ckpt_channel_push(oc->ch, &en, oc->gen);
}

static inline unsigned char *
room(struct ckpt_task *t, struct ckpt_outch *oc)
{
	struct ckpt_buf *b = oc->cur;

	if (b == NULL || b->len + REC_SIZE > oc->cap) {
		if (b != NULL)
			push_cur(t, oc);
		oc->cur = wait_buffer(t, oc);
		if (oc->cur == NULL)
			return NULL;
		b = oc->cur;
	}
	return b->data + b->len;
}

static inline void
put_rec(struct ckpt_task *t, struct ckpt_outch *oc, const struct ckpt_rec *r)
{
	unsigned char *d = room(t, oc);

	if (d == NULL)
		return;
	d[0] = EL_RECORD;
	memcpy(d + 1, &r->key, 8);
	memcpy(d + 9, &r->value, 8);
	memcpy(d + 17, &r->ts, 8);
	oc->cur->len += REC_SIZE;
	oc->cur->nrec++;
}

void
ckpt_task_emit(struct ckpt_task *t, const struct ckpt_rec *r)
{
	if (t->bout != NULL) {
		ckpt_batch_emit(t, r); /* batch mode: blocking partitions on disk */
		return;
	}
	for (size_t k = 0; k < t->nout; k++) {
		struct ckpt_outpart *o = &t->out[k];

		switch (o->part) {
		case PART_FORWARD:
			put_rec(t, &o->oc[0], r);
			break;
		case PART_RESCALE:
		case PART_REBALANCE:
			put_rec(t, &o->oc[o->rr], r);
			if (++o->rr == o->noc)
				o->rr = 0;
			break;
		case PART_HASH: {
			uint32_t kg = ckpt_key_group_of(r->key, o->maxp);

			put_rec(t, &o->oc[ckpt_subtask_of_key_group(kg, o->maxp, (uint32_t)o->noc)], r);
			break;
		}
		case PART_BROADCAST:
			for (size_t i = 0; i < o->noc; i++)
				put_rec(t, &o->oc[i], r);
			break;
		}
	}
	t->records_out++;
}

void
ckpt_task_emit_watermark(struct ckpt_task *t, int64_t wm)
{
	if (wm <= t->wm_out || t->bout != NULL)
		return;
	t->wm_out = wm;
	for (size_t k = 0; k < t->nout; k++)
		for (size_t i = 0; i < t->out[k].noc; i++) {
			struct ckpt_outch *oc = &t->out[k].oc[i];
			unsigned char *d = room(t, oc);

			if (d == NULL)
				return;
			d[0] = EL_WATERMARK;
			memcpy(d + 1, &wm, 8);
			memset(d + 9, 0, 16);
			oc->cur->len += REC_SIZE;
		}
}

void
ckpt_task_flush(struct ckpt_task *t)
{
	t->ua_room = t->ua_avail = 0;
	for (size_t k = 0; k < t->nout; k++)
		for (size_t i = 0; i < t->out[k].noc; i++) {
			struct ckpt_outch *oc = &t->out[k].oc[i];

			if (oc->cur != NULL && oc->cur->len > 0)
				push_cur(t, oc);
		}
}

/* Flush, then push one event to every output channel (k, i), waiting while push finds the event slots full. */
void
ckpt_task_push_all(struct ckpt_task *t, int (*push)(struct ckpt_task *t, size_t k, size_t i, void *arg), void *arg)
{
	ckpt_task_flush(t);
	for (size_t k = 0; k < t->nout; k++)
		for (size_t i = 0; i < t->out[k].noc; i++)
			for (;;) {
				unsigned seq = notify_prepare(&t->nt);

				if (push(t, k, i, arg) == 0 || atomic_load(&t->cancel))
					break;
				ckpt_notify_wait(&t->nt, seq, 100);
			}
}

static int
push_event(struct ckpt_task *t, size_t k, size_t i, void *arg)
{
	struct ckpt_channel *c = t->out[k].oc[i].ch;
	unsigned gen;

	/* an event travels in whatever generation the channel is in now */
	pthread_mutex_lock(&c->mu);
	gen = c->gen;
	pthread_mutex_unlock(&c->mu);
	return ckpt_channel_push(c, arg, gen);
}

/* Events go behind the data already written. */
void
ckpt_task_broadcast_event(struct ckpt_task *t, const struct ckpt_entry *en)
{
	ckpt_task_push_all(t, push_event, (void *)en);
}

int64_t
ckpt_task_reserve_outputs(struct ckpt_task *t)
{
	int64_t room = INT64_MAX;

	for (size_t k = 0; k < t->nout; k++)
		for (size_t i = 0; i < t->out[k].noc; i++) {
			struct ckpt_outch *oc = &t->out[k].oc[i];

			if (oc->cur != NULL && oc->cur->len + REC_SIZE <= oc->cap)
				continue;
			if (oc->cur != NULL)
				push_cur(t, oc);
			if ((oc->cur = ckpt_channel_take_buffer(oc->ch, &oc->gen)) == NULL)
				return 0;
		}
	for (size_t k = 0; k < t->nout; k++)
		for (size_t i = 0; i < t->out[k].noc; i++) {
			const struct ckpt_outch *oc = &t->out[k].oc[i];
			int64_t n = (oc->cap - oc->cur->len) / REC_SIZE;

			if (n < room)
				room = n;
		}
	return room;
}

void
ckpt_task_put_raw(struct ckpt_task *t, struct ckpt_outch *oc, const unsigned char *elem)
{
	unsigned char *d = room(t, oc);

	if (d == NULL)
		return;
	memcpy(d, elem, REC_SIZE);
	oc->cur->len += REC_SIZE;
	oc->cur->nrec += elem[0] == EL_RECORD;
}

void
ckpt_task_release_outputs(struct ckpt_task *t)
{
	for (size_t k = 0; k < t->nout; k++)
		for (size_t i = 0; i < t->out[k].noc; i++) {
			struct ckpt_outch *oc = &t->out[k].oc[i];

			if (oc->cur != NULL)
				ckpt_channel_return_unused(oc->ch, oc->cur);
			oc->cur = NULL;
		}
}
