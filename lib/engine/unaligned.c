/*
 * unaligned.c: unaligned checkpoints (FLIP-76) and the aligned timeout: Flink's alternating barrier
 * handler, barriers as priority events that overtake queued buffers, the overtaken buffers captured
 * as channel state, and their replay on restore before any new input.
 *
 * A channel here is both Flink's result subpartition and its input channel (one queue).  A buffer
 * belongs to exactly one side of a checkpoint's cut: queued behind a priority barrier when the
 * producer inserts it (the producer's output state), or taken by the consumer after its snapshot
 * and before that channel's barrier (the consumer's input state), as Chandy and Lamport record it.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

/* The unaligned checkpoint a task snapshotted and whose in-flight input it is still capturing. */
struct ckpt_ua {
	int64_t id;
	struct ckpt_subtask *st;
	int64_t align_ns;
	int oom;
};

static int
pending(const struct ckpt_task *t)
{
	return t->cur_id >= 0 && t->cur_id != t->done_id;
}

static int
timeoutable(const struct ckpt_task *t, const struct ckpt_barrier *b)
{
	return t->job->p->aligned_timeout_ms > 0 && b->kind == BAR_CHECKPOINT && !b->unaligned;
}

/* ---- channel state */

static int
chan_append(struct ckpt_chan **arr, size_t *n, uint32_t a, uint32_t b, const unsigned char *p, size_t len)
{
	struct ckpt_chan *c = NULL;
	unsigned char *d;

	if (len == 0)
		return 0;
	for (size_t i = 0; i < *n; i++)
		if ((*arr)[i].a == a && (*arr)[i].b == b)
			c = &(*arr)[i];
	if (c == NULL) {
		struct ckpt_chan *na = realloc(*arr, (*n + 1) * sizeof *na);

		if (na == NULL)
			return -1;
		*arr = na;
		c = &na[(*n)++];
		memset(c, 0, sizeof *c);
		c->a = a;
		c->b = b;
	}
	if ((d = realloc(c->data.p, c->data.len + len)) == NULL)
		return -1;
	memcpy(d + c->data.len, p, len);
	c->data.p = d;
	c->data.len += len;
	return 0;
}

/* The (gate, channel-in-gate) address of input channel ch, as Flink's InputChannelInfo. */
static void
in_addr(const struct ckpt_task *t, size_t ch, uint32_t *gate, uint32_t *idx)
{
	size_t first = ch;

	while (first > 0 && t->in[first - 1].gate == t->in[ch].gate)
		first--;
	*gate = (uint32_t)t->in[ch].gate;
	*idx = (uint32_t)(ch - first);
}

static void
capture_in(struct ckpt_task *t, size_t ch, const unsigned char *p, size_t len)
{
	struct ckpt_ua *u = t->ua;
	uint32_t a, b;

	if (u == NULL || len == 0)
		return;
	in_addr(t, ch, &a, &b);
	if (chan_append(&u->st->in, &u->st->nin, a, b, p, len) < 0)
		u->oom = 1;
	u->st->in_bytes += len;
}

/* A buffer taken from a channel whose barrier has not come yet: it is in flight across the cut. */
void
ckpt_ua_on_buffer(struct ckpt_task *t, size_t ch, const struct ckpt_buf *b)
{
	if (!t->in[ch].aligned && !t->in[ch].eop)
		capture_in(t, ch, b->data, b->len);
}

/*
 * Insert en at the head of c (behind earlier priority events) and capture the data buffers it
 * overtook; -1 when the event slots are full.
 */
static int
push_priority(struct ckpt_channel *c, const struct ckpt_entry *en, struct ckpt_subtask *st, uint32_t a, uint32_t b, int *oom)
{
	pthread_mutex_lock(&c->mu);
	if (c->n == c->cap) {
		pthread_mutex_unlock(&c->mu);
		return -1;
	}
	for (size_t i = c->n; i > c->nprio; i--)
		c->q[(c->head + i) % c->cap] = c->q[(c->head + i - 1) % c->cap];
	c->q[(c->head + c->nprio) % c->cap] = *en;
	c->n++;
	c->nprio++;
	for (size_t i = c->nprio; st != NULL && i < c->n; i++) {
		const struct ckpt_entry *x = &c->q[(c->head + i) % c->cap];

		if (x->kind != ENT_BUFFER)
			continue;
		if (chan_append(&st->out, &st->nout, a, b, x->b->data, x->b->len) < 0)
			*oom = 1;
		st->out_bytes += x->b->len;
	}
	if (c->cons)
		atomic_store(&c->cons->prio, 1);
	pthread_mutex_unlock(&c->mu);
	if (c->cons)
		ckpt_notify_wake(&c->cons->nt);
	return 0;
}

struct prio_push {
	const struct ckpt_entry *en;
	struct ckpt_subtask *st;
	int *oom;
};

static int
push_one_priority(struct ckpt_task *t, size_t k, size_t i, void *arg)
{
	const struct prio_push *pp = arg;

	return push_priority(t->out[k].oc[i].ch, pp->en, pp->st, (uint32_t)k, (uint32_t)i, pp->oom);
}

/* The barrier goes out as a priority event on every output; what it jumps is output channel state. */
static void
broadcast_priority(struct ckpt_task *t, const struct ckpt_entry *en, struct ckpt_subtask *st, int *oom)
{
	struct prio_push pp = {en, st, oom};

	ckpt_task_push_all(t, push_one_priority, &pp);
}

/* Pop the head of c if it is a priority event. */
static int
pop_priority(struct ckpt_channel *c, struct ckpt_entry *en)
{
	int r = 0;

	pthread_mutex_lock(&c->mu);
	if (c->nprio > 0 && c->n > 0) {
		*en = c->q[c->head];
		c->head = (c->head + 1) % c->cap;
		c->n--;
		c->nprio--;
		r = 1;
	}
	pthread_mutex_unlock(&c->mu);
	return r;
}

/*
 * The aligned barrier id queued somewhere in input channel ch is made a priority event and taken
 * at once; the buffers in front of it are input channel state.  1 when it was there.
 */
static int
extract_barrier(struct ckpt_task *t, size_t ch, int64_t id)
{
	struct ckpt_channel *c = t->in[ch].ch;
	size_t at = SIZE_MAX;

	pthread_mutex_lock(&c->mu);
	for (size_t i = 0; i < c->n && at == SIZE_MAX; i++) {
		const struct ckpt_entry *x = &c->q[(c->head + i) % c->cap];

		if (x->kind == ENT_BARRIER && x->bar.id == id)
			at = i;
	}
	if (at != SIZE_MAX) {
		for (size_t i = 0; i < at; i++) {
			const struct ckpt_entry *x = &c->q[(c->head + i) % c->cap];

			if (x->kind == ENT_BUFFER)
				capture_in(t, ch, x->b->data, x->b->len);
		}
		for (size_t i = at; i + 1 < c->n; i++)
			c->q[(c->head + i) % c->cap] = c->q[(c->head + i + 1) % c->cap];
		c->n--;
		if (at < c->nprio)
			c->nprio--;
	}
	pthread_mutex_unlock(&c->mu);
	return at != SIZE_MAX;
}

/* The newest barrier queued in ch newer than id (an announcement): 1 and *b when there is one. */
static int
announced(struct ckpt_channel *c, int64_t id, struct ckpt_barrier *b)
{
	int r = 0;

	pthread_mutex_lock(&c->mu);
	for (size_t i = 0; i < c->n; i++) {
		const struct ckpt_entry *x = &c->q[(c->head + i) % c->cap];

		if (x->kind == ENT_BARRIER && x->bar.id > id) {
			*b = x->bar;
			id = x->bar.id;
			r = 1;
		}
	}
	pthread_mutex_unlock(&c->mu);
	return r;
}

/* ---- the snapshot and its acknowledgement */

static void
ua_drop(struct ckpt_task *t)
{
	if (t->ua == NULL)
		return;
	ckpt_engine_subtask_free(t->ua->st);
	free(t->ua);
	t->ua = NULL;
}

void
ckpt_ua_release(struct ckpt_task *t)
{
	ua_drop(t);
}

/* Every channel delivered its barrier (or ended): the captured input is complete, acknowledge. */
static void
ack(struct ckpt_task *t)
{
	struct ckpt_ua *u = t->ua;
	struct ckpt_msg *m;

	if (u == NULL)
		return;
	t->ua = NULL;
	if (u->oom || (m = ckpt_msg_new(MSG_ACK, t)) == NULL) {
		int64_t id = u->id;

		ckpt_engine_subtask_free(u->st);
		free(u);
		t->ops->decline(t, id, "CHECKPOINT_DECLINED_TASK_NOT_READY");
		return;
	}
	m->id = u->id;
	m->st = u->st;
	m->align_ms = u->align_ns / 1000000;
	m->persisted = u->st->in_bytes + u->st->out_bytes;
	m->ended = t->final_min_id >= 0 && t->final_min_id <= u->id;
	free(u);
	ckpt_job_post(t->job, m);
}

/*
 * The synchronous part of an unaligned checkpoint (ckpt_task_checkpoint's, for an unaligned barrier):
 * the barrier overtakes the outputs, the operator snapshots, the rest of the buffer being
 * processed is input state; the acknowledgement waits for the barriers of the other channels.
 */
void
ckpt_ua_checkpoint(struct ckpt_task *t, const struct ckpt_barrier *b, int64_t align_ns)
{
	struct ckpt_entry en = {.kind = ENT_BARRIER, .bar = *b};
	struct ckpt_err e = {0};
	struct ckpt_ua *u = calloc(1, sizeof *u);
	struct ckpt_subtask *st = calloc(1, sizeof *st);

	ua_drop(t);
	if (u == NULL || st == NULL) {
		free(u);
		free(st);
		broadcast_priority(t, &en, NULL, NULL);
		t->ops->decline(t, b->id, "CHECKPOINT_DECLINED_TASK_NOT_READY");
		return;
	}
	st->index = t->sub;
	u->id = b->id;
	u->st = st;
	u->align_ns = align_ns;
	broadcast_priority(t, &en, st, &u->oom);
	if (t->op->snapshot && t->op->snapshot(t, b->id, st, &e) < 0) {
		ckpt_engine_subtask_free(st);
		free(u);
		t->ops->decline(t, b->id, "CHECKPOINT_ASYNC_EXCEPTION");
		return;
	}
	t->ua = u;
	if (t->in_buf)
		capture_in(t, t->cur_ch, t->cur_d + t->cur_off, t->cur_len - t->cur_off);
	if (t->nopen == 0)
		ack(t);
}

/* ---- the alternating barrier handler (SingleCheckpointBarrierHandler with unaligned enabled) */

static void
unblock_all(struct ckpt_task *t)
{
	for (size_t i = 0; i < t->nin; i++)
		t->in[i].blocked = 0;
	ckpt_notify_wake(&t->nt);
}

static void
clear_aligned(struct ckpt_task *t)
{
	for (size_t i = 0; i < t->nin; i++)
		t->in[i].aligned = 0;
	t->naligned = 0;
}

static void
abort_cp(struct ckpt_task *t, int64_t id, const char *reason)
{
	if (id > t->cur_id)
		t->cur_id = id;
	if (id > t->done_id)
		t->done_id = id;
	t->target = 0;
	t->ua_unaligned = 0;
	t->ua_deadline_ms = 0;
	ua_drop(t);
	unblock_all(t);
	clear_aligned(t);
	t->ops->decline(t, id, reason);
}

/* Every open channel delivered the barrier or its EndOfPartition. */
static void
all_in(struct ckpt_task *t)
{
	struct ckpt_barrier b = t->pending;

	t->done_id = t->cur_id;
	t->ua_deadline_ms = 0;
	unblock_all(t);
	if (t->ua_unaligned) {
		t->ua_unaligned = 0;
		ack(t);
	} else {
		t->ops->checkpoint(t, &b, t->target > 1 ? ckpt_now_ns() - t->align_start_ns : 0);
	}
}

static void
mark(struct ckpt_task *t, size_t ch)
{
	if (!t->in[ch].aligned) {
		t->in[ch].aligned = 1;
		t->naligned++;
	}
}

/* Alignment took too long (or the barrier came unaligned): snapshot now, capture what is in flight. */
static void
switch_unaligned(struct ckpt_task *t)
{
	struct ckpt_barrier b = t->pending;

	b.unaligned = 1;
	t->ua_unaligned = 1;
	t->ua_deadline_ms = 0;
	unblock_all(t);
	t->ops->checkpoint(t, &b, ckpt_now_ns() - t->align_start_ns);
	for (size_t i = 0; i < t->nin; i++)
		if (!t->in[i].aligned && !t->in[i].eop && extract_barrier(t, i, b.id))
			mark(t, i);
}

static void
start_new(struct ckpt_task *t, const struct ckpt_barrier *b)
{
	if (pending(t))
		abort_cp(t, t->cur_id, "CHECKPOINT_DECLINED_SUBSUMED");
	t->cur_id = b->id;
	t->pending = *b;
	clear_aligned(t);
	t->target = t->nopen;
	t->align_start_ns = ckpt_now_ns();
	t->ua_unaligned = 0;
	/* measured from the trigger at the coordinator, not from this task's first barrier */
	t->ua_deadline_ms = timeoutable(t, b) ? b->ts_ms + t->job->p->aligned_timeout_ms : 0;
}

static int
timed_out(const struct ckpt_task *t)
{
	return t->ua_deadline_ms != 0 && ckpt_now_ms() >= t->ua_deadline_ms;
}

static void
after_mark(struct ckpt_task *t)
{
	if (!t->ua_unaligned && timed_out(t))
		switch_unaligned(t);
	if (t->naligned >= t->target)
		all_in(t);
}

void
ckpt_ua_on_barrier(struct ckpt_task *t, const struct ckpt_barrier *b, size_t ch, int rpc)
{
	if (b->id < t->cur_id || (b->id == t->cur_id && !pending(t)))
		return;
	if (b->id > t->cur_id)
		start_new(t, b);
	mark(t, ch);
	if (!t->ua_unaligned) {
		if (b->unaligned || timed_out(t))
			switch_unaligned(t);
		else if (!rpc)
			t->in[ch].blocked = 1;
	}
	if (t->naligned >= t->target)
		all_in(t);
}

void
ckpt_ua_on_cancel(struct ckpt_task *t, int64_t id)
{
	if (id > t->cur_id || (id == t->cur_id && pending(t) && (t->naligned > 0 || t->ua_unaligned)))
		abort_cp(t, id, "CHECKPOINT_DECLINED_ON_CANCELLATION_BARRIER");
}

/* EndOfPartition stands in for the channel's barrier (FLIP-147): it also ends its capture. */
void
ckpt_ua_on_end_of_partition(struct ckpt_task *t, size_t ch)
{
	t->nopen--;
	if (!pending(t))
		return;
	if (!t->job->p->after_finish) {
		abort_cp(t, t->cur_id, "CHECKPOINT_DECLINED_INPUT_END_OF_STREAM");
		return;
	}
	mark(t, ch);
	after_mark(t);
}

void
ckpt_ua_on_abort_notified(struct ckpt_task *t, int64_t id)
{
	if (id == t->cur_id && pending(t))
		abort_cp(t, id, "CHECKPOINT_DECLINED");
}

/*
 * Priority events first (unaligned barriers at the heads of the channels), then announcements:
 * a barrier queued behind data starts the aligned timer, or, once unaligned, is taken at once.
 */
void
ckpt_ua_poll(struct ckpt_task *t)
{
	struct ckpt_barrier nb;

	atomic_store(&t->prio, 0);
	for (size_t i = 0; i < t->nin; i++) {
		struct ckpt_entry en;

		while (!t->in[i].eop && pop_priority(t->in[i].ch, &en))
			if (en.kind == ENT_BARRIER)
				ckpt_ua_on_barrier(t, &en.bar, i, 0);
	}
	if (pending(t) && t->ua_unaligned) {
		for (size_t i = 0; i < t->nin; i++)
			if (!t->in[i].aligned && !t->in[i].eop && extract_barrier(t, i, t->cur_id))
				mark(t, i);
		if (t->naligned >= t->target)
			all_in(t);
		return;
	}
	if (t->job->p->aligned_timeout_ms > 0)
		for (size_t i = 0; i < t->nin; i++)
			if (!t->in[i].eop && announced(t->in[i].ch, t->cur_id, &nb) && !nb.unaligned)
				start_new(t, &nb);
	if (pending(t) && !t->ua_unaligned && timed_out(t)) {
		switch_unaligned(t);
		if (t->naligned >= t->target)
			all_in(t);
	}
}

int
ckpt_ua_boundary(struct ckpt_task *t)
{
	int64_t room;
	int flushed = 0;

	/* the aligned timeout needs no look of its own: its timer (coordinator.c) sets prio when it passes */
	if (atomic_load_explicit(&t->prio, memory_order_relaxed))
		ckpt_ua_poll(t);
	if (t->ua_avail > 0)
		goto grant; /* room reserved earlier and not flushed since: no need to look at the outputs */
	while ((room = ckpt_task_reserve_outputs(t)) == 0) {
		unsigned seq = notify_prepare(&t->nt);

		if (atomic_load(&t->cancel))
			return -1;
		/* back-pressured: the mailbox still runs (triggers, notifications, priority barriers) */
		t->ops->handle_mail(t);
		if (atomic_load(&t->prio))
			ckpt_ua_poll(t);
		if (t->phase != PH_RUNNING && t->nin == 0)
			return -1;
		if ((room = ckpt_task_reserve_outputs(t)) > 0)
			break;
		if (!flushed) {
			/* as wait_buffer: what the other outputs hold goes out, so nobody downstream waits on us */
			ckpt_task_flush(t);
			flushed = 1;
			continue;
		}
		ckpt_notify_wait(&t->nt, seq, ckpt_ua_wait_ms(t, 100));
	}
	/* a source may write a watermark besides its record: half the room is safe without a look */
	t->ua_avail = room == INT64_MAX ? INT64_MAX : room / 2;
grant:
	/* at least the one element there is room for (a watermark beside it may wait: the look comes again next) */
	t->ua_room = t->ua_avail < 1 ? 1 : t->ua_avail < UA_LOOK_EVERY ? t->ua_avail : UA_LOOK_EVERY;
	if (t->ua_avail != INT64_MAX)
		t->ua_avail = t->ua_avail > t->ua_room ? t->ua_avail - t->ua_room : 0;
	return atomic_load(&t->cancel) ? -1 : 0;
}

int64_t
ckpt_ua_wait_ms(struct ckpt_task *t, int64_t ms)
{
	if (t->ua_deadline_ms != 0) {
		int64_t left = t->ua_deadline_ms - ckpt_now_ms();

		if (left < ms)
			ms = left < 1 ? 1 : left;
	}
	return ms;
}

/* ---- restore: output state first, then each channel's input state, then live input */

static int
check_len(const struct ckpt_task *t, const struct ckpt_chan *c, const char *what, struct ckpt_err *e)
{
	if (c->data.len % REC_SIZE != 0)
		return ckpt_err_set(e, CKPT_ERR_INPUT, t->v->id, "subtask %u: %s channel state %u/%u is not whole elements",
				    t->sub, what, c->a, c->b);
	return 0;
}

static size_t
find_in(const struct ckpt_task *t, uint32_t gate, uint32_t idx)
{
	for (size_t i = 0; i < t->nin; i++) {
		uint32_t a, b;

		in_addr(t, i, &a, &b);
		if (a == gate && b == idx)
			return i;
	}
	return SIZE_MAX;
}

int
ckpt_ua_restore(struct ckpt_task *t, struct ckpt_err *e)
{
	const struct ckpt_subtask *r = t->restored;

	if (r == NULL || (r->nin == 0 && r->nout == 0))
		return 0;
	for (size_t k = 0; r->out && k < r->nout; k++) {
		const struct ckpt_chan *c = &r->out[k];

		if (c->a >= t->nout || c->b >= t->out[c->a].noc)
			return ckpt_err_set(e, CKPT_ERR_INPUT, t->v->id, "subtask %u: output channel state %u/%u has no channel",
					    t->sub, c->a, c->b);
		if (check_len(t, c, "output", e) < 0)
			return -1;
		for (size_t off = 0; off < c->data.len && !atomic_load(&t->cancel); off += REC_SIZE)
			ckpt_task_put_raw(t, &t->out[c->a].oc[c->b], c->data.p + off);
	}
	ckpt_task_flush(t);
	t->replaying = 1;
	for (size_t k = 0; r->in && k < r->nin; k++) {
		const struct ckpt_chan *c = &r->in[k];
		size_t ch = find_in(t, c->a, c->b);

		if (ch == SIZE_MAX) {
			t->replaying = 0;
			return ckpt_err_set(e, CKPT_ERR_INPUT, t->v->id, "subtask %u: input channel state %u/%u has no channel",
					    t->sub, c->a, c->b);
		}
		if (check_len(t, c, "input", e) < 0) {
			t->replaying = 0;
			return -1;
		}
		t->ops->process_elems(t, ch, c->data.p, c->data.len);
	}
	t->replaying = 0;
	return 0;
}
