/*
 * barrier.c: aligned barrier handling (Flink's SingleCheckpointBarrierHandler, aligned states):
 * block a channel after its barrier until every open channel delivered it or its EndOfPartition.
 */
#include "engine.h"

static int
pending(const struct ckpt_task *t)
{
	return t->cur_id >= 0 && t->cur_id != t->done_id;
}

static void
unblock_all(struct ckpt_task *t)
{
	for (size_t i = 0; i < t->nin; i++) {
		t->in[i].blocked = 0;
		t->in[i].aligned = 0;
	}
	t->naligned = 0;
	ckpt_notify_wake(&t->nt);
}

/* Give up checkpoint id here: decline it and tell downstream to stop aligning for it. */
static void
bh_abort(struct ckpt_task *t, int64_t id, const char *reason)
{
	if (id > t->cur_id)
		t->cur_id = id;
	if (id > t->done_id)
		t->done_id = id;
	t->target = 0;
	unblock_all(t);
	t->ops->decline(t, id, reason);
}

static void
alignment_done(struct ckpt_task *t)
{
	int64_t align = ckpt_now_ns() - t->align_start_ns;
	struct ckpt_barrier b = t->pending;

	t->done_id = t->cur_id;
	unblock_all(t);
	t->ops->checkpoint(t, &b, t->target > 1 ? align : 0);
}

static void
mark_aligned(struct ckpt_task *t, size_t ch, int block)
{
	if (!t->in[ch].aligned) {
		t->in[ch].aligned = 1;
		t->naligned++;
		if (block)
			t->in[ch].blocked = 1;
	}
	if (t->naligned >= t->target)
		alignment_done(t);
}

void
ckpt_bh_on_barrier(struct ckpt_task *t, const struct ckpt_barrier *b, size_t ch, int rpc)
{
	if (t->job->p->unaligned) {
		ckpt_ua_on_barrier(t, b, ch, rpc);
		return;
	}
	if (b->id < t->cur_id || (b->id == t->cur_id && !pending(t)))
		return; /* obsolete: subsumed, cancelled or already done */
	if (b->id > t->cur_id) {
		if (pending(t))
			bh_abort(t, t->cur_id, "CHECKPOINT_DECLINED_SUBSUMED");
		t->cur_id = b->id;
		t->pending = *b;
		t->naligned = 0;
		t->target = t->nopen;
		t->align_start_ns = ckpt_now_ns();
		for (size_t i = 0; i < t->nin; i++)
			t->in[i].aligned = 0;
	}
	mark_aligned(t, ch, !rpc);
}

void
ckpt_bh_on_cancel(struct ckpt_task *t, int64_t id)
{
	if (t->job->p->unaligned) {
		ckpt_ua_on_cancel(t, id);
		return;
	}
	if (id > t->cur_id || (id == t->cur_id && pending(t) && t->naligned > 0))
		bh_abort(t, id, "CHECKPOINT_DECLINED_ON_CANCELLATION_BARRIER");
}

/* EndOfPartition counts as the channel's barrier for a pending checkpoint (FLIP-147). */
void
ckpt_bh_on_end_of_partition(struct ckpt_task *t, size_t ch)
{
	if (t->job->p->unaligned) {
		ckpt_ua_on_end_of_partition(t, ch);
		return;
	}
	t->nopen--;
	if (!pending(t))
		return;
	if (!t->job->p->after_finish) {
		bh_abort(t, t->cur_id, "CHECKPOINT_DECLINED_INPUT_END_OF_STREAM");
		return;
	}
	mark_aligned(t, ch, 0);
}

/*
 * Triggered by the coordinator although the task has inputs (its predecessors finished): with every
 * input closed it checkpoints like a source, else a virtual, non-blocking barrier on each open channel.
 */
void
ckpt_bh_rpc_trigger(struct ckpt_task *t, const struct ckpt_barrier *b)
{
	if (t->nopen == 0) {
		if (b->id > t->cur_id) {
			t->cur_id = b->id;
			t->done_id = b->id;
			t->ops->checkpoint(t, b, 0);
		}
		return;
	}
	for (size_t i = 0; i < t->nin; i++)
		if (!t->in[i].eop)
			ckpt_bh_on_barrier(t, b, i, 1); /* unaligned: handed on to ckpt_ua_on_barrier */
}

/* The coordinator gave checkpoint id up (expired, declined elsewhere): stop aligning for it. */
void
ckpt_bh_on_abort_notified(struct ckpt_task *t, int64_t id)
{
	if (t->job->p->unaligned) {
		ckpt_ua_on_abort_notified(t, id);
		return;
	}
	if (id == t->cur_id && pending(t))
		bh_abort(t, id, "CHECKPOINT_DECLINED");
}
