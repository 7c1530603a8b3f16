/* task.c: one subtask on one thread: its mailbox loop, input processing, checkpoints and finishing (FLIP-147). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"

static void
post_state(struct ckpt_task *t, enum ckpt_exec_state s)
{
	struct ckpt_msg *m = ckpt_msg_new(MSG_STATE, t);

	if (m == NULL)
		return;
	m->state = s;
	ckpt_job_post(t->job, m);
}

void
ckpt_task_decline(struct ckpt_task *t, int64_t id, const char *reason)
{
	struct ckpt_entry en = {.kind = ENT_CANCEL, .bar = {.id = id}};
	struct ckpt_msg *m = ckpt_msg_new(MSG_DECLINE, t);

	ckpt_task_broadcast_event(t, &en);
	if (m == NULL)
		return;
	m->id = id;
	snprintf(m->reason, sizeof m->reason, "%s", reason);
	ckpt_job_post(t->job, m);
}

/* The synchronous part of a checkpoint: forward the barrier, snapshot the operator, acknowledge. */
void
ckpt_task_checkpoint(struct ckpt_task *t, const struct ckpt_barrier *b, int64_t align_ns)
{
	struct ckpt_entry en = {.kind = ENT_BARRIER, .bar = *b};
	struct ckpt_subtask *st;
	struct ckpt_msg *m;
	struct ckpt_err e = {0};

	if (b->id <= t->last_cp_id)
		return;
	if (b->id == atomic_load(&t->aborted)) {
		/* notified aborted before it got here: no snapshot, only the cancellation downstream */
		struct ckpt_entry cancel = {.kind = ENT_CANCEL, .bar = {.id = b->id}};

		t->last_cp_id = b->id;
		ckpt_task_broadcast_event(t, &cancel);
		return;
	}
	t->last_cp_id = b->id;
	if (t->phase == PH_ENDED && t->final_min_id < 0)
		t->final_min_id = b->id;
	if (b->kind == BAR_SYNC_SAVEPOINT)
		t->sync_savepoint = b->id;
	if (b->unaligned) {
		ckpt_ua_checkpoint(t, b, align_ns);
		return;
	}
	ckpt_task_broadcast_event(t, &en);
	st = ckpt_calloc(1, sizeof *st, &e);
	m = ckpt_msg_new(MSG_ACK, t);
	if (st == NULL || m == NULL) {
		free(st);
		free(m);
		ckpt_task_decline(t, b->id, "CHECKPOINT_DECLINED_TASK_NOT_READY");
		return;
	}
	st->index = t->sub;
	if (t->op->snapshot && t->op->snapshot(t, b->id, st, &e) < 0) {
		ckpt_engine_subtask_free(st);
		free(m);
		ckpt_task_decline(t, b->id, "CHECKPOINT_ASYNC_EXCEPTION");
		return;
	}
	m->id = b->id;
	m->st = st;
	m->align_ms = align_ns / 1000000;
	m->ended = t->final_min_id >= 0 && t->final_min_id <= b->id;
	ckpt_job_post(t->job, m);
}

/* Input ended (bounded source, stop, or EndOfData on every input): finish() and EndOfData downstream. */
void
ckpt_task_end_of_data(struct ckpt_task *t, int drain)
{
	struct ckpt_entry en = {.kind = ENT_END_OF_DATA, .bar = {.drain = drain}};
	struct ckpt_msg *m;

	if (t->phase != PH_RUNNING)
		return;
	if (drain) {
		if (t->v->op == OP_SOURCE)
			ckpt_task_emit_watermark(t, MAX_WATERMARK);
		if (t->op->finish)
			t->op->finish(t);
		t->finished_ops = 1;
	}
	ckpt_task_broadcast_event(t, &en);
	t->phase = PH_ENDED;
	t->final_min_id = -1;
	if ((m = ckpt_msg_new(MSG_END_OF_DATA, t)) != NULL)
		ckpt_job_post(t->job, m);
}

void
ckpt_task_handle_mail(struct ckpt_task *t)
{
	int64_t done = atomic_load(&t->completed), ab;

	for (;;) {
		struct ckpt_barrier b;

		pthread_mutex_lock(&t->mmu);
		if (t->mn == 0) {
			pthread_mutex_unlock(&t->mmu);
			break;
		}
		b = t->mail[t->mhead];
		t->mhead = (t->mhead + 1) % MAIL_CAP;
		t->mn--;
		pthread_mutex_unlock(&t->mmu);
		if (b.kind == BAR_SYNC_SAVEPOINT && t->nin == 0)
			ckpt_task_end_of_data(t, b.drain); /* stop-with-savepoint: EndOfData goes before the barrier */
		if (t->nin == 0)
			ckpt_task_checkpoint(t, &b, 0);
		else
			ckpt_bh_rpc_trigger(t, &b);
	}
	ab = atomic_load(&t->aborted);
	if (ab > t->last_aborted) {
		t->last_aborted = ab;
		ckpt_bh_on_abort_notified(t, ab);
	}
	if (done > t->last_notified) {
		t->last_notified = done;
		if (t->op->complete)
			t->op->complete(t, done);
	}
}

/* Watermarks of several channels combine to their minimum (closed channels do not hold it back). */
static void
on_watermark(struct ckpt_task *t, size_t ch, int64_t wm)
{
	int64_t min = MAX_WATERMARK;
	int open = 0;

	if (wm > t->in[ch].wm)
		t->in[ch].wm = wm;
	for (size_t i = 0; i < t->nin; i++)
		if (!t->in[i].eop) {
			open = 1;
			if (t->in[i].wm < min)
				min = t->in[i].wm;
		}
	/* the end of the last input is no watermark: without drain, timers stay for a restore */
	if (open && min > t->wm_in) {
		t->wm_in = min;
		if (t->op->watermark)
			t->op->watermark(t, min);
		ckpt_task_emit_watermark(t, min);
	}
}

/* The elements d[off..end) of input channel ch, in order; where it stopped: end, or earlier when cancelled
 * or (prio set) after the element at which a priority event came in. */
static inline __attribute__((always_inline)) size_t /* inlined twice: prio is a constant in each */
process_range(struct ckpt_task *t, size_t ch, const unsigned char *data, size_t off, size_t end, int prio)
{
	size_t input = t->in[ch].gate;

	for (; off < end && !atomic_load(&t->cancel); off += REC_SIZE) {
		const unsigned char *d = data + off;

		if (d[0] == EL_RECORD) {
			struct ckpt_rec r;

			memcpy(&r.key, d + 1, 8);
			memcpy(&r.value, d + 9, 8);
			memcpy(&r.ts, d + 17, 8);
			t->records_in++;
			t->op->record(t, &r, input);
			task_count_record(t);
		} else {
			int64_t wm;

			memcpy(&wm, d + 1, 8);
			on_watermark(t, ch, wm);
		}
		/* one relaxed load a record, as Flink's mailbox looks before each record */
		if (prio && atomic_load_explicit(&t->prio, memory_order_relaxed))
			return off + REC_SIZE;
	}
	return off;
}

void
ckpt_task_process_elems(struct ckpt_task *t, size_t ch, const unsigned char *data, size_t len)
{
	size_t off = 0, end = len - len % REC_SIZE;

	if (!t->job->p->unaligned || t->replaying) {
		process_range(t, ch, data, 0, end, 0);
		return;
	}
	t->cur_d = data;
	t->cur_len = len;
	t->cur_ch = ch;
	t->in_buf = 1;
	/* unaligned: runs of at most ua_room records, with a look between them (ckpt_ua_boundary) at a record
	 * boundary, where a barrier may overtake the rest of this buffer; a priority event ends a run early */
	while (off < end && !atomic_load(&t->cancel)) {
		size_t n, stop;

		if (t->ua_room <= 0) {
			t->cur_off = off;
			if (ckpt_ua_boundary(t) < 0)
				break;
		}
		n = (end - off) / REC_SIZE;
		if ((int64_t)n > t->ua_room)
			n = (size_t)t->ua_room;
		t->ua_room -= (int64_t)n; /* a flush on the way sets it to 0: the next run starts with a look */
		stop = off + n * REC_SIZE;
		if ((off = process_range(t, ch, data, off, stop, 1)) < stop)
			t->ua_room = 0;
	}
	t->in_buf = 0;
}

static void
process_buffer(struct ckpt_task *t, size_t ch, struct ckpt_buf *b)
{
	if (t->ua != NULL)
		ckpt_ua_on_buffer(t, ch, b);
	ckpt_task_process_elems(t, ch, b->data, b->len);
	ckpt_buffer_release(b);
}

static void
on_end_of_data(struct ckpt_task *t, size_t ch, int drain)
{
	int all = 1, all_drain = 1;

	t->in[ch].eod = 1;
	t->in[ch].eod_drain = drain;
	atomic_store(&t->in[ch].ch->eod_acked, 1);
	if (t->in[ch].ch->prod)
		ckpt_notify_wake(&t->in[ch].ch->prod->nt);
	for (size_t i = 0; i < t->nin; i++) {
		all &= t->in[i].eod;
		all_drain &= t->in[i].eod_drain;
	}
	if (all)
		ckpt_task_end_of_data(t, all_drain);
}

static void
on_entry(struct ckpt_task *t, size_t ch, struct ckpt_entry *en)
{
	switch (en->kind) {
	case ENT_BUFFER:
		process_buffer(t, ch, en->b);
		break;
	case ENT_BARRIER:
		ckpt_bh_on_barrier(t, &en->bar, ch, 0);
		break;
	case ENT_CANCEL:
		ckpt_bh_on_cancel(t, en->bar.id);
		break;
	case ENT_END_OF_DATA:
		on_end_of_data(t, ch, en->bar.drain);
		break;
	case ENT_END_OF_PARTITION:
		t->in[ch].eop = 1;
		ckpt_bh_on_end_of_partition(t, ch);
		on_watermark(t, ch, INT64_MIN);
		break;
	}
}

/* Take one entry from the next readable channel (round robin); 0 when none is readable. */
static int
read_input(struct ckpt_task *t)
{
	for (size_t k = 0; k < t->nin; k++) {
		size_t ch = (t->rr_in + k) % t->nin;
		struct ckpt_entry en;

		if (t->in[ch].blocked || t->in[ch].eop || !ckpt_channel_pop(t->in[ch].ch, &en))
			continue;
		t->rr_in = (ch + 1) % t->nin;
		on_entry(t, ch, &en);
		return 1;
	}
	return 0;
}

static int
outputs_acked(struct ckpt_task *t)
{
	for (size_t k = 0; k < t->nout; k++)
		for (size_t i = 0; i < t->out[k].noc; i++)
			if (!atomic_load(&t->out[k].oc[i].ch->eod_acked))
				return 0;
	return 1;
}

/*
 * After EndOfData: close once downstream consumed it and a checkpoint after finish() completed and
 * was notified to the operator (last_notified, not completed: a completion that lands after the
 * mail was handled must still be committed by the next turn of the loop before the task closes).
 */
static int
may_close(struct ckpt_task *t)
{
	const struct ckpt_pipeline *p = t->job->p;
	int64_t done = t->last_notified;

	if (t->nopen > 0 || !outputs_acked(t))
		return 0;
	if (t->sync_savepoint >= 0)
		return done >= t->sync_savepoint;
	if (p->interval_ms > 0 && p->after_finish)
		return t->final_min_id >= 0 && done >= t->final_min_id;
	return 1;
}

/* Every input not yet ended has its EndOfPartition queued (its producer closed). */
static int
inputs_closed(struct ckpt_task *t)
{
	for (size_t i = 0; i < t->nin; i++) {
		struct ckpt_channel *c = t->in[i].ch;
		int sent;

		if (t->in[i].eop)
			continue;
		pthread_mutex_lock(&c->mu);
		sent = c->eop_sent;
		pthread_mutex_unlock(&c->mu);
		if (!sent)
			return 0;
	}
	return 1;
}

/*
 * Test-only hook, not for users (CKPT_TEST_CLOSE_RACE=1, read once by job.c's setup; unset, the loop
 * looks at one flag).  It makes the race of may_close happen every time: the checkpoint a task waits
 * for to close (its final one, or its stop-with-savepoint) completes between the task's look at the
 * mail and its look at closing.  Called after the look at the mail and the input, when the mail did
 * not yet bring that completion (it cannot have, in the turn that acknowledged the checkpoint): the
 * task waits, on its own wake-up (no sleep), until the coordinator marked the checkpoint completed,
 * its producers closed and its consumers took its EndOfData, then takes the rest of its input (their
 * EndOfPartition), so that nothing but that notification keeps it from closing.  may_close must then
 * still wait for the next look at the mail, which commits it (t/run.bats).  An abort notified or a
 * cancellation ends the wait.
 */
static void
test_hold_before_close(struct ckpt_task *t)
{
	const struct ckpt_pipeline *p = t->job->p;
	int64_t want = t->sync_savepoint >= 0 ? t->sync_savepoint : t->final_min_id;

	if (t->sync_savepoint < 0 && !(p->interval_ms > 0 && p->after_finish))
		return; /* may_close waits for no checkpoint */
	if (want < 0 || t->last_notified >= want)
		return;
	for (;;) {
		unsigned seq = notify_prepare(&t->nt);
		int64_t done = atomic_load(&t->completed);

		/* a later checkpoint that needs this task aborted before want completed: want never will */
		if (atomic_load(&t->cancel) || (done < want && atomic_load(&t->aborted) > want))
			return;
		if (done >= want && inputs_closed(t) && outputs_acked(t))
			break;
		ckpt_notify_wait(&t->nt, seq, 1000);
	}
	while (!atomic_load(&t->cancel) && read_input(t))
		;
}

/*
 * The mailbox closes with the task: a trigger that came after the last look at the mail is
 * performed first (the loop goes on), one that comes later is refused to the coordinator.
 */
static int
close_mail(struct ckpt_task *t)
{
	int ok;

	pthread_mutex_lock(&t->mmu);
	ok = t->mn == 0;
	t->mail_closed = ok;
	pthread_mutex_unlock(&t->mmu);
	return ok;
}

static void
close_task(struct ckpt_task *t)
{
	struct ckpt_entry en = {.kind = ENT_END_OF_PARTITION};

	if (t->op->close)
		t->op->close(t);
	ckpt_task_broadcast_event(t, &en);
	t->phase = PH_DONE;
}

static void
delay_source(struct ckpt_task *t)
{
	int64_t now = ckpt_now_ms();

	if (now - t->last_flush_ms >= t->job->p->buffer_timeout_ms) {
		ckpt_task_flush(t);
		t->last_flush_ms = now;
	}
}

/*
 * Idle: partly filled buffers leave once they are buffer_timeout_ms old (Flink's output flusher),
 * so a consumer faster than its producer does not turn every buffer into a few records.
 * Returns how long to sleep.
 */
static int64_t
idle_flush(struct ckpt_task *t)
{
	int64_t now = ckpt_now_ms(), bt = t->job->p->buffer_timeout_ms;

	if (now - t->last_flush_ms >= bt) {
		ckpt_task_flush(t);
		t->last_flush_ms = now;
		return bt > 0 ? bt : 200;
	}
	return bt - (now - t->last_flush_ms);
}

static void
run_loop(struct ckpt_task *t)
{
	while (!atomic_load(&t->cancel) && t->phase != PH_DONE) {
		unsigned seq = notify_prepare(&t->nt);
		int busy = 0;

		ckpt_task_handle_mail(t);
		if (t->job->p->unaligned && atomic_load(&t->prio))
			ckpt_ua_poll(t);
		if (t->phase == PH_RUNNING && t->nin == 0 && t->op->emit_some) {
			if (t->op->emit_some(t))
				ckpt_task_end_of_data(t, 1);
			delay_source(t);
			busy = 1;
		} else {
			for (int k = 0; k < 64 && read_input(t); k++)
				busy = 1;
		}
		if (t->phase == PH_ENDED && t->job->test_close_race)
			test_hold_before_close(t);
		if (t->phase == PH_ENDED && may_close(t) && close_mail(t)) {
			close_task(t);
			break;
		}
		if (busy)
			continue;
		ckpt_notify_wait(&t->nt, seq, ckpt_ua_wait_ms(t, idle_flush(t)));
	}
}

/* Restored as fully finished: no operator runs, downstream only learns that this input ended. */
static void
run_finished(struct ckpt_task *t)
{
	struct ckpt_entry eod = {.kind = ENT_END_OF_DATA, .bar = {.drain = 1}};
	struct ckpt_entry eop = {.kind = ENT_END_OF_PARTITION};

	ckpt_task_broadcast_event(t, &eod);
	ckpt_task_broadcast_event(t, &eop);
	t->phase = PH_DONE;
}

/* What the barrier handlers call back (struct ckpt_task_ops): they sit below this file. */
static const struct ckpt_task_ops task_ops = {
	.checkpoint = ckpt_task_checkpoint,
	.decline = ckpt_task_decline,
	.handle_mail = ckpt_task_handle_mail,
	.process_elems = ckpt_task_process_elems,
};

void *
ckpt_task_main(void *arg)
{
	struct ckpt_task *t = arg;
	struct ckpt_err e = {0};

	t->ops = &task_ops;
	post_state(t, CKPT_INITIALIZING);
	if (t->deployed_finished) {
		run_finished(t);
	} else if (t->op->open && t->op->open(t, t->restored, &e) < 0) {
		char buf[600];

		ckpt_err_format(&e, buf, sizeof buf);
		ckpt_task_fail(t, buf);
	} else if (ckpt_ua_restore(t, &e) < 0) {
		char buf[600];

		ckpt_err_format(&e, buf, sizeof buf);
		ckpt_task_fail(t, buf);
	} else {
		post_state(t, CKPT_RUNNING);
		run_loop(t);
	}
	ckpt_ua_release(t);
	ckpt_task_release_outputs(t);
	/* the job's counters are shared: added once per attempt, not per record */
	if (t->nin == 0)
		atomic_fetch_add(&t->job->records, t->records_out);
	if (t->nout == 0)
		atomic_fetch_add(&t->job->sink_records, t->records_in);
	if (t->op->dispose)
		t->op->dispose(t);
	if (t->phase == PH_DONE && !t->failed) {
		post_state(t, CKPT_FINISHED);
	} else if (!t->failed) {
		post_state(t, CKPT_CANCELED);
	}
	return NULL;
}
