/*
 * coordinator.c: the checkpoint coordinator: periodic triggers (interval, min pause, max concurrent),
 * the trigger set from libckpt's plan (FLIP-147), acknowledgements, timeouts, tolerable failures,
 * completion into an archive written atomically, retention, and notifications to the tasks.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"

static const char *const op_display[OP_NKINDS] = {
	"Source", "Map", "Filter", "KeyedSum", "TumblingEventTimeWindow", "BroadcastState", "TwoPhaseCommitFileSink",
	"DiscardingSink",
};

void
ckpt_pending_free(struct ckpt_job *j, struct ckpt_pending_cp *pc)
{
	size_t k = (size_t)(pc - j->pend);

	for (size_t v = 0; pc->wait && v < j->p->nv; v++)
		ckpt_bits_release(&pc->wait[v]);
	free(pc->wait);
	for (size_t t = 0; pc->acks && t < j->nt; t++)
		ckpt_engine_subtask_free(pc->acks[t]);
	free(pc->acks);
	free(pc->finished);
	free(pc->ended);
	free(pc->fully);
	memmove(&j->pend[k], &j->pend[k + 1], (j->npend - k - 1) * sizeof *pc);
	j->npend--;
}

static struct ckpt_pending_cp *
find_pending(struct ckpt_job *j, int64_t id)
{
	for (size_t i = 0; i < j->npend; i++)
		if (j->pend[i].id == id)
			return &j->pend[i];
	return NULL;
}

static int
counts_as_failure(const char *reason)
{
	return strstr(reason, "SUBSUMED") == NULL && strcmp(reason, "TASK_FAILURE") != 0 &&
	       strcmp(reason, "CHECKPOINT_DECLINED_ON_CANCELLATION_BARRIER") != 0 &&
	       strcmp(reason, "FINALIZE_CHECKPOINT_FAILURE") != 0 &&
	       strcmp(reason, "CHECKPOINT_DECLINED_TASK_CLOSING") != 0;
}

/* notify-checkpoint-aborted, to the subtasks that still owed an acknowledgement */
static void
notify_aborted(struct ckpt_job *j, const struct ckpt_pending_cp *pc)
{
	for (size_t t = 0; t < j->nt; t++) {
		struct ckpt_task *k = &j->t[t];

		if (!ckpt_bits_test(&pc->wait[k->vi], k->sub) || atomic_load(&k->aborted) >= pc->id)
			continue;
		atomic_store(&k->aborted, pc->id);
		ckpt_notify_wake(&k->nt);
	}
}

static void
abort_pending(struct ckpt_job *j, struct ckpt_pending_cp *pc, const char *reason)
{
	int stop = pc->bar.kind == BAR_SYNC_SAVEPOINT, stopped = stop && pc->delivered;

	ckpt_job_event(j, json_pack("{s:s,s:I,s:s}", "event", "checkpoint_aborted", "id", (json_int_t)pc->id, "reason",
			       reason));
	if (counts_as_failure(reason))
		j->failures++;
	notify_aborted(j, pc);
	if (stop) {
		j->savepoint_id = -1;
		snprintf(j->stop_why, sizeof j->stop_why, "stop-with-savepoint %lld failed (%s)",
			 (long long)pc->id, reason);
	}
	if (stop && !stopped) {
		/* no task got the trigger (one was closing): as Flink's StopWithSavepointTerminationHandlerImpl,
		 * the request fails, the job goes on running and periodic checkpoints resume */
		j->stop_requested = 0;
	}
	ckpt_pending_free(j, pc);
	if (stopped && strcmp(reason, "TASK_FAILURE") != 0) {
		/* the sources already stopped: as in Flink, the failed stop-with-savepoint fails the job over */
		if (j->failover(j, SIZE_MAX, "Stop-with-savepoint failed", &j->err) < 0)
			j->fatal = 1;
	}
}

void
ckpt_coord_abort_all(struct ckpt_job *j, const char *reason)
{
	while (j->npend > 0)
		abort_pending(j, &j->pend[j->npend - 1], reason);
}

static void
update_graph(struct ckpt_job *j)
{
	for (size_t v = 0; v < j->p->nv; v++)
		for (uint32_t s = 0; s < j->p->v[v].parallelism; s++)
			j->p->graph->v[v].tasks[s] = j->state[j->vfirst[v] + s];
}

/* The test hook of failures[]: the first stop-with-savepoint trigger finds subtask t closing. */
static int
hook_closing(struct ckpt_job *j, const struct ckpt_task *t, const struct ckpt_barrier *b)
{
	for (size_t f = 0; b->kind == BAR_SYNC_SAVEPOINT && f < j->p->nfail; f++)
		if (j->p->fail[f].closing && !j->fail_fired[f] && j->p->fail[f].vertex == t->vi &&
		    j->p->fail[f].subtask == t->sub) {
			j->fail_fired[f] = 1;
			return 1;
		}
	return 0;
}

/*
 * Mail the trigger to every subtask of the trigger set, or to none: 0, -2 when one is closing
 * (CHECKPOINT_DECLINED_TASK_CLOSING), -1 when a mailbox is full.  All or none, so that a declined
 * stop-with-savepoint has stopped no source.  Only the coordinator holds several mailbox locks.
 */
static int
mail_triggers(struct ckpt_job *j, const struct ckpt_plan *plan, const struct ckpt_barrier *b)
{
	int r = 0;
	size_t t;

	for (t = 0; t < j->nt; t++) {
		struct ckpt_task *k = &j->t[t];

		if (!ckpt_bits_test(&plan->trigger[k->vi], k->sub))
			continue;
		pthread_mutex_lock(&k->mmu);
		if (k->mail_closed || hook_closing(j, k, b))
			r = -2;
		else if (k->mn == MAIL_CAP && r == 0)
			r = -1;
	}
	for (t = 0; t < j->nt; t++) {
		struct ckpt_task *k = &j->t[t];

		if (!ckpt_bits_test(&plan->trigger[k->vi], k->sub))
			continue;
		if (r == 0)
			k->mail[(k->mhead + k->mn++) % MAIL_CAP] = *b;
		pthread_mutex_unlock(&k->mmu);
		if (r == 0)
			ckpt_notify_wake(&k->nt);
	}
	return r;
}

static int
init_pending(struct ckpt_job *j, struct ckpt_pending_cp *pc, const struct ckpt_plan *plan, struct ckpt_err *e)
{
	pc->wait = ckpt_calloc(j->p->nv, sizeof *pc->wait, e);
	pc->acks = ckpt_calloc(j->nt, sizeof *pc->acks, e);
	pc->finished = ckpt_calloc(j->nt, 1, e);
	pc->ended = ckpt_calloc(j->nt, 1, e);
	pc->fully = ckpt_calloc(j->p->nv, 1, e);
	if (pc->wait == NULL || pc->acks == NULL || pc->finished == NULL || pc->ended == NULL || pc->fully == NULL)
		return -1;
	for (size_t v = 0; v < j->p->nv; v++) {
		if (ckpt_bits_init(&pc->wait[v], j->p->v[v].parallelism, e) < 0)
			return -1;
		for (uint32_t s = 0; s < j->p->v[v].parallelism; s++) {
			if (ckpt_bits_test(&plan->wait_for[v], s)) {
				ckpt_bits_set(&pc->wait[v], s);
				pc->nwait++;
			}
			pc->finished[j->vfirst[v] + s] = (unsigned char)ckpt_bits_test(&plan->finished[v], s);
		}
		pc->fully[v] = plan->fully_finished[v];
	}
	return 0;
}

static void complete(struct ckpt_job *j, struct ckpt_pending_cp *pc);

static int
union_vertex(const struct ckpt_job *j, size_t v)
{
	const struct ckpt_vertex *gv = &j->p->graph->v[v];

	for (size_t k = 0; k < gv->nops; k++)
		for (size_t s = 0; s < gv->ops[k].nstate; s++)
			if (strcmp(gv->ops[k].state[s].mode, "union") == 0)
				return 1;
	return 0;
}

/*
 * Flink's rule for union state (FLINK-21080): each subtask's state is every subtask's, so all the
 * subtasks of such a vertex must share one final checkpoint.  No checkpoint is taken while some of
 * them ended their input and others did not: those that ended wait, and all close together.
 * The vertex whose subtasks partly ended (of pc's acknowledgements, or now when pc is NULL), else -1.
 */
static ssize_t
union_partly_ended(const struct ckpt_job *j, const struct ckpt_pending_cp *pc)
{
	for (size_t v = 0; v < j->p->nv; v++) {
		uint32_t n = 0, par = j->p->v[v].parallelism;

		if (!union_vertex(j, v))
			continue;
		for (uint32_t s = 0; s < par; s++) {
			size_t gi = j->vfirst[v] + s;

			n += pc ? pc->ended[gi] || pc->finished[gi] : j->eod[gi] || j->state[gi] == CKPT_FINISHED;
		}
		if (n > 0 && n < par)
			return (ssize_t)v;
	}
	return -1;
}

static int
decline_union(struct ckpt_job *j, size_t v, struct ckpt_err *e)
{
	return ckpt_err_set(e, CKPT_ERR_REFUSED, "",
			    "The vertex %s (id = %s) has used UnionListState, but part of its tasks has called "
			    "operators' finish method.", j->p->v[v].id, j->p->v[v].id);
}

/* Trigger a checkpoint now: 1 triggered, 0 declined by the plan (*declined names Flink's reason, e says
 * why), -1 on error. */
int
ckpt_coord_trigger(struct ckpt_job *j, enum ckpt_bar_kind kind, int drain, const char **declined, struct ckpt_err *e)
{
	struct ckpt_plan_opts po = {CKPT_PLAN_FAST, !j->p->after_finish};
	struct ckpt_plan plan = {0};
	struct ckpt_pending_cp *pc, *np;
	ssize_t uv;
	int r = -1, mr;

	update_graph(j);
	if (ckpt_plan_compute(j->p->graph, &po, &plan, e) < 0)
		return -1;
	if (plan.decline_reason != NULL) {
		*declined = plan.decline_reason;
		ckpt_err_set(e, CKPT_ERR_REFUSED, "", "%s", plan.decline_message ? plan.decline_message : "");
		r = 0;
		goto out;
	}
	/* a stop-with-savepoint ends every subtask's input before its barrier: the final checkpoint of all */
	if (kind != BAR_SYNC_SAVEPOINT && (uv = union_partly_ended(j, NULL)) >= 0) {
		*declined = "FINALIZE_CHECKPOINT_FAILURE";
		decline_union(j, (size_t)uv, e);
		r = 0;
		goto out;
	}
	np = ckpt_reallocarray(j->pend, j->npend + 1, sizeof *np, e);
	if (np == NULL)
		goto out;
	j->pend = np;
	pc = &j->pend[j->npend++];
	memset(pc, 0, sizeof *pc);
	pc->id = j->next_id++;
	pc->start_ms = ckpt_now_ms();
	pc->bar = (struct ckpt_barrier){.id = pc->id, .ts_ms = pc->start_ms, .kind = kind, .drain = drain};
	/* savepoints are aligned; a timeout of 0 makes a checkpoint unaligned from the start (FLIP-76) */
	pc->bar.unaligned = j->p->unaligned && kind == BAR_CHECKPOINT && j->p->aligned_timeout_ms == 0;
	if (init_pending(j, pc, &plan, e) < 0) {
		ckpt_pending_free(j, pc);
		goto out;
	}
	if (kind == BAR_SYNC_SAVEPOINT)
		j->savepoint_id = pc->id;
	ckpt_job_event(j, json_pack("{s:s,s:I,s:s,s:o}", "event", "checkpoint_triggered", "id", (json_int_t)pc->id,
			       "kind", kind == BAR_CHECKPOINT ? "checkpoint" : "savepoint", "trigger",
			       ckpt_subtask_sets_json(j, plan.trigger)));
	r = 1;
	if ((mr = mail_triggers(j, &plan, &pc->bar)) < 0) {
		/* a task finishing meanwhile is no failure: the next trigger plans without it */
		abort_pending(j, pc, mr == -2 ? "CHECKPOINT_DECLINED_TASK_CLOSING" : "CHECKPOINT_DECLINED_TASK_NOT_READY");
		goto out;
	}
	pc->delivered = 1;
	if (pc->nwait == 0)
		complete(j, pc);
out:
	ckpt_plan_release(&plan);
	return r;
}

/* ---- completion */

static int
fill_operator(struct ckpt_job *j, struct ckpt_pending_cp *pc, size_t v, struct ckpt_operator *op, struct ckpt_err *e)
{
	const struct ckpt_pl_vertex *pv = &j->p->v[v];

	op->id = ckpt_strdup(pv->id, e);
	op->uid = ckpt_strdup(pv->prm.uid ? pv->prm.uid : pv->id, e);
	op->name = ckpt_strdup(op_display[pv->op], e);
	op->vertex = ckpt_strdup(pv->id, e);
	op->subtasks = ckpt_calloc(pv->parallelism, sizeof *op->subtasks, e);
	if (!op->id || !op->uid || !op->name || !op->vertex || !op->subtasks)
		return -1;
	op->parallelism = pv->parallelism;
	op->max_parallelism = pv->max_parallelism;
	op->fully_finished = 1;
	for (uint32_t s = 0; s < pv->parallelism; s++)
		op->fully_finished &= pc->finished[j->vfirst[v] + s];
	for (uint32_t s = 0; s < pv->parallelism; s++) {
		size_t gi = j->vfirst[v] + s;
		struct ckpt_subtask *st = &op->subtasks[op->nsubtasks++];

		if (pc->acks[gi] != NULL) {
			*st = *pc->acks[gi];
			free(pc->acks[gi]);
			pc->acks[gi] = NULL;
		}
		st->index = s;
		st->finished = pc->finished[gi];
		st->loaded = 1;
	}
	return 0;
}

static struct ckpt_snapshot *
build_snapshot(struct ckpt_job *j, struct ckpt_pending_cp *pc, uint64_t *state_bytes, struct ckpt_err *e)
{
	struct ckpt_snapshot *s = ckpt_calloc(1, sizeof *s, e);

	if (s == NULL)
		return NULL;
	s->checkpoint_id = (uint64_t)pc->id;
	s->kind = ckpt_strdup(pc->bar.kind == BAR_CHECKPOINT ? "checkpoint" : "savepoint", e);
	s->ops = ckpt_calloc(j->p->nv, sizeof *s->ops, e);
	if (s->kind == NULL || s->ops == NULL)
		goto fail;
	for (size_t v = 0; v < j->p->nv; v++) {
		s->nops++;
		if (fill_operator(j, pc, v, &s->ops[v], e) < 0)
			goto fail;
		for (size_t k = 0; k < s->ops[v].nsubtasks; k++) {
			const struct ckpt_subtask *st = &s->ops[v].subtasks[k];

			*state_bytes += st->kv_bytes;
			for (size_t o = 0; o < st->nops; o++)
				*state_bytes += st->ops[o].bytes;
		}
	}
	return s;
fail:
	ckpt_snapshot_free(s);
	return NULL;
}

static char *
archive_path(struct ckpt_job *j, const struct ckpt_pending_cp *pc, struct ckpt_err *e)
{
	char buf[4200];

	if (pc->bar.kind != BAR_CHECKPOINT && j->o->savepoint)
		return ckpt_strdup(j->o->savepoint, e);
	snprintf(buf, sizeof buf, "%s/%s-%" PRId64 ".tar", j->dir, pc->bar.kind == BAR_CHECKPOINT ? "chk" : "savepoint",
		 pc->id);
	return ckpt_strdup(buf, e);
}

/* Keep the newest `retain` checkpoints (savepoints belong to the user and stay). */
static void
retain(struct ckpt_job *j, char *path)
{
	if (ckpt_grow(&j->retained, &j->retcap, j->nretained + 1, sizeof *j->retained, 4, NULL) < 0) {
		free(path);
		return;
	}
	j->retained[j->nretained++] = path;
	while (j->nretained > j->p->retain) {
		unlink(j->retained[0]);
		free(j->retained[0]);
		memmove(j->retained, j->retained + 1, --j->nretained * sizeof *j->retained);
	}
}

static void
notify_complete(struct ckpt_job *j, int64_t id)
{
	for (size_t t = 0; t < j->nt; t++) {
		struct ckpt_task *k = &j->t[t];

		if (j->state[t] == CKPT_FINISHED || atomic_load(&k->completed) >= id)
			continue;
		atomic_store(&k->completed, id);
		ckpt_notify_wake(&k->nt);
	}
}

/*
 * The caller's o->unverified set (ckpt-run sets it under CKPT_VERIFY_SNAPSHOTS=1,
 * which the tests do): the archive just written is read back whole, every
 * checksum and state file, and must equal the snapshot meant; if not, the caller
 * hears why before the snapshot is reported complete (ckpt-run ends there), and
 * the checkpoint fails.  A writer bug cannot hide behind a later restore.
 */
static int
verify_written(struct ckpt_job *j, struct ckpt_snapshot *s, const char *path, struct ckpt_err *e)
{
	struct ckpt_err re = {0};
	struct ckpt_snapshot *back = ckpt_snapshot_open(path, &re);
	json_t *want = back ? ckpt_snapshot_to_json(s, &re) : NULL;
	json_t *got = want ? ckpt_snapshot_to_json(back, &re) : NULL;
	char why[1600];
	int r = 0;

	if (got == NULL || !json_equal(want, got)) {
		if (got)
			snprintf(why, sizeof why, "%s: reads back other than written", path);
		else
			ckpt_err_format(&re, why, sizeof why);
		j->o->unverified(j->o->arg, why);
		r = ckpt_err_set(e, CKPT_ERR_IO, "CKPT_VERIFY_SNAPSHOTS", "%s", why);
	}
	json_decref(want);
	json_decref(got);
	ckpt_snapshot_free(back);
	return r;
}

static int
write_archive(struct ckpt_job *j, struct ckpt_pending_cp *pc, const char *path, uint64_t *state_bytes, struct ckpt_err *e)
{
	struct ckpt_snapshot *s = build_snapshot(j, pc, state_bytes, e);
	int kind = ckpt_archive_kind_of(path), r;

	if (s == NULL)
		return -1;
	r = ckpt_snapshot_write(s, path, kind < 0 ? CKPT_ARCHIVE_TAR : (enum ckpt_archive_kind)kind, e);
	if (r == 0 && j->o->unverified)
		r = verify_written(j, s, path, e);
	ckpt_snapshot_free(s);
	return r;
}

static void
complete(struct ckpt_job *j, struct ckpt_pending_cp *pc)
{
	struct ckpt_err e = {0};
	uint64_t state_bytes = 0;
	int64_t now = ckpt_now_ms(), id = pc->id;
	char *path = archive_path(j, pc, &e);
	enum ckpt_bar_kind kind = pc->bar.kind;
	int drain = pc->bar.drain, covered = 1;
	ssize_t uv = union_partly_ended(j, pc);

	if (uv >= 0) {
		/* some ended before their barrier came: the trigger could not see it; not counted as a failure */
		free(path);
		abort_pending(j, pc, "FINALIZE_CHECKPOINT_FAILURE");
		return;
	}
	if (path == NULL || write_archive(j, pc, path, &state_bytes, &e) < 0) {
		char why[1600];

		ckpt_err_format(&e, why, sizeof why);
		ckpt_job_event(j, json_pack("{s:s,s:I,s:s}", "event", "checkpoint_failure", "id", (json_int_t)id, "error", why));
		free(path);
		abort_pending(j, pc, "IO_EXCEPTION");
		return;
	}
	ckpt_job_event(j, json_pack("{s:s,s:I,s:s,s:I,s:I,s:I,s:I,s:s}", "event", "checkpoint_completed", "id",
			       (json_int_t)id, "kind", kind == BAR_CHECKPOINT ? "checkpoint" : "savepoint",
			       "duration_ms", (json_int_t)(now - pc->start_ms), "alignment_ms", (json_int_t)pc->align_ms,
			       "persisted_bytes", (json_int_t)pc->persisted, "state_bytes", (json_int_t)state_bytes,
			       "path", path));
	if (kind != BAR_CHECKPOINT)
		ckpt_job_event(j, json_pack("{s:s,s:I,s:s,s:b}", "event", "savepoint", "id", (json_int_t)id, "path", path,
				       "drain", drain));
	if (kind != BAR_CHECKPOINT)
		j->savepoints++;
	free(j->latest);
	j->latest = ckpt_strdup(path, &e);
	j->latest_id = id;
	for (size_t t = 0; t < j->nt; t++)
		covered &= pc->ended[t] || pc->finished[t];
	j->final_covered = covered;
	if (kind == BAR_CHECKPOINT)
		retain(j, path);
	else
		free(path);
	ckpt_pending_free(j, pc);
	/* a completed checkpoint subsumes every older pending one */
	for (size_t i = j->npend; i-- > 0;)
		if (j->pend[i].id < id)
			abort_pending(j, &j->pend[i], "CHECKPOINT_SUBSUMED");
	j->failures = 0;
	j->completed++;
	j->last_complete_ms = now;
	notify_complete(j, id);
	if (j->o->stop_after_cps > 0 && j->completed == j->o->stop_after_cps)
		ckpt_coord_request_stop(j); /* once: a request that fails is not made again */
}

static void
on_ack(struct ckpt_job *j, struct ckpt_msg *m)
{
	struct ckpt_pending_cp *pc = find_pending(j, m->id);
	const struct ckpt_task *t = &j->t[m->task];

	if (pc == NULL || !ckpt_bits_test(&pc->wait[t->vi], t->sub))
		return;
	ckpt_bits_clear(&pc->wait[t->vi], t->sub);
	pc->acks[m->task] = m->st;
	pc->ended[m->task] = (unsigned char)m->ended;
	m->st = NULL;
	if (m->align_ms > pc->align_ms)
		pc->align_ms = m->align_ms;
	pc->persisted += m->persisted;
	if (--pc->nwait == 0)
		complete(j, pc);
}

/*
 * A task that finished after a checkpoint was triggered on it will not acknowledge: it is recorded
 * as finished in that checkpoint (its final checkpoint completed, EndOfPartition stood in for its
 * barrier downstream), as Flink's checkpoint plan fulfils the status of tasks finished meanwhile.
 */
void
ckpt_coord_task_finished(struct ckpt_job *j, size_t gi)
{
	const struct ckpt_task *t = &j->t[gi];

	for (size_t i = j->npend; i-- > 0;) {
		struct ckpt_pending_cp *pc = &j->pend[i];

		if (!ckpt_bits_test(&pc->wait[t->vi], t->sub))
			continue;
		ckpt_bits_clear(&pc->wait[t->vi], t->sub);
		pc->finished[gi] = 1;
		if (--pc->nwait == 0)
			complete(j, pc);
	}
}

static int
all_reached_end(const struct ckpt_job *j)
{
	for (size_t t = 0; t < j->nt; t++)
		if (j->state[t] != CKPT_FINISHED && !j->eod[t])
			return 0;
	return 1;
}

void
ckpt_coord_handle(struct ckpt_job *j, struct ckpt_msg *m)
{
	struct ckpt_pending_cp *pc;

	switch (m->kind) {
	case MSG_ACK:
		on_ack(j, m);
		break;
	case MSG_DECLINE:
		if ((pc = find_pending(j, m->id)) != NULL)
			abort_pending(j, pc, m->reason);
		break;
	case MSG_END_OF_DATA:
		j->eod[m->task] = 1;
		j->final_covered = 0; /* (a restarted task) it needs a checkpoint after this end */
		break;
	default:
		break;
	}
}

/* A stop-with-savepoint is asked for (-s, -n, the stop flag). */
void
ckpt_coord_request_stop(struct ckpt_job *j)
{
	j->stop_requested = 1;
	j->stop_asked = 1;
}

/*
 * The stop-with-savepoint, tried again while its plan declines (a subtask restarting, say); a
 * stop whose plan keeps declining for the checkpoint timeout fails the job, so that a stop always
 * ends it.  Each declined attempt is a checkpoint_declined event, so that a user sees why the stop
 * waits.  The plan is a function of the task states alone: a declined stop is tried again when one
 * of them changed (state_gen), not at every tick with the same answer.
 */
static int
tick_stop(struct ckpt_job *j, int64_t now)
{
	struct ckpt_err e = {0};
	const char *declined = "";
	int r;

	if (!j->stop_requested || j->savepoint_id >= 0 || j->npend >= j->p->max_concurrent + 1)
		return 0;
	if (j->stop_declined_ms == 0 || j->stop_declined_gen != j->state_gen) {
		r = ckpt_coord_trigger(j, BAR_SYNC_SAVEPOINT, j->o->drain, &declined, &e);
		if (r < 0) {
			j->err = e;
			return -1;
		}
		if (r > 0) {
			j->stop_declined_ms = 0;
			return 0;
		}
		ckpt_job_event(j, json_pack("{s:s,s:s,s:s,s:s}", "event", "checkpoint_declined", "kind", "savepoint",
				       "reason", declined, "message", e.text));
		snprintf(j->stop_why, sizeof j->stop_why, "stop-with-savepoint declined: %s", e.text);
		snprintf(j->stop_declined, sizeof j->stop_declined, "%s", e.text);
		j->stop_declined_gen = j->state_gen;
		if (j->stop_declined_ms == 0)
			j->stop_declined_ms = now;
	}
	if (now - j->stop_declined_ms < j->p->timeout_ms)
		return 0;
	j->final_state = "FAILED";
	ckpt_err_set(&j->err, CKPT_ERR_REFUSED, "", "stop-with-savepoint failed: %s", j->stop_declined);
	return -1;
}

/* When the aligned timeout of a checkpoint ends (0: no timer runs). */
static int64_t
align_deadline(const struct ckpt_job *j, const struct ckpt_pending_cp *pc)
{
	if (!j->p->unaligned || j->p->aligned_timeout_ms <= 0 || pc->bar.kind != BAR_CHECKPOINT || pc->bar.unaligned ||
	    !pc->delivered || pc->timer_fired)
		return 0;
	return pc->bar.ts_ms + j->p->aligned_timeout_ms;
}

/*
 * Flink's alignment timer: when the aligned timeout passed, every subtask with inputs that still owes
 * the acknowledgement is told to look, as a priority event does (its one relaxed load a record sees
 * it), and switches to unaligned if it is still aligning.  No task reads the clock per record.
 */
static void
fire_align_timers(struct ckpt_job *j, int64_t now)
{
	for (size_t i = 0; i < j->npend; i++) {
		struct ckpt_pending_cp *pc = &j->pend[i];
		int64_t d = align_deadline(j, pc);

		if (d == 0 || now < d)
			continue;
		pc->timer_fired = 1;
		for (size_t t = 0; t < j->nt; t++) {
			struct ckpt_task *k = &j->t[t];

			if (k->nin == 0 || !ckpt_bits_test(&pc->wait[k->vi], k->sub))
				continue;
			atomic_store(&k->prio, 1);
			ckpt_notify_wake(&k->nt);
		}
	}
}

int
ckpt_coord_tick(struct ckpt_job *j, int64_t now)
{
	const struct ckpt_pipeline *p = j->p;
	struct ckpt_err e = {0};
	const char *declined = "";

	fire_align_timers(j, now);
	for (size_t i = j->npend; i-- > 0;)
		if (now - j->pend[i].start_ms >= p->timeout_ms)
			abort_pending(j, &j->pend[i], "CHECKPOINT_EXPIRED");
	if (j->failures > p->tolerable_failures) {
		j->failures = 0;
		if (j->failover(j, SIZE_MAX, "Exceeded checkpoint tolerable failure threshold.", &j->err) < 0)
			return -1;
	}
	if (tick_stop(j, now) < 0)
		return -1;
	if (p->interval_ms <= 0 || j->stop_requested || j->savepoint_id >= 0 || j->npend >= p->max_concurrent)
		return 0;
	/* the final checkpoint goes right after every task reached the end of its data, unless the one that
	 * just completed was already every task's final one (each acknowledged it after its end): they close */
	if (!j->final_fast && all_reached_end(j) && j->npend == 0 && !j->final_covered) {
		j->final_fast = 1;
	} else if (now < j->next_trigger_ms || now - j->last_complete_ms < p->min_pause_ms) {
		return 0;
	}
	j->next_trigger_ms = now + p->interval_ms;
	/* declined by the plan: not reported, tried again at the next interval */
	if (ckpt_coord_trigger(j, BAR_CHECKPOINT, 0, &declined, &e) < 0) {
		j->err = e;
		return -1;
	}
	return 0;
}

/* When ckpt_coord_tick would next trigger a periodic checkpoint, were nothing else to change (0: it
 * waits for a change the coordinator is woken for: a completion, an abort, the end of a stop). */
static int64_t
trigger_deadline(const struct ckpt_job *j)
{
	const struct ckpt_pipeline *p = j->p;
	int64_t d = j->next_trigger_ms;

	if (p->interval_ms <= 0 || j->stop_requested || j->savepoint_id >= 0 || j->npend >= p->max_concurrent)
		return 0;
	if (j->last_complete_ms + p->min_pause_ms > d)
		d = j->last_complete_ms + p->min_pause_ms;
	return d;
}

/*
 * How long the coordinator may sleep: until the next deadline of ckpt_coord_tick (a periodic trigger,
 * a checkpoint's timeout, an alignment timer, -s, a declined stop's timeout), at most 100 ms (the stop
 * and cancel flags are looked at).  What waits for a message (an acknowledgement, a task's state) has
 * no deadline: the message wakes the coordinator.  Nor has a periodic trigger held back by pending
 * checkpoints or a stop: what releases it is a message too, and the interval that passed meanwhile
 * must not make the coordinator wake every millisecond until then.
 */
int64_t
ckpt_coord_next_deadline(struct ckpt_job *j, int64_t now)
{
	int64_t d = 100, t = trigger_deadline(j);

	if (t != 0 && t - now < d)
		d = t - now;
	if (j->stop_at_ms && j->stop_at_ms - now < d)
		d = j->stop_at_ms - now;
	if (j->stop_requested && j->savepoint_id < 0 && j->stop_declined_ms != 0 &&
	    j->stop_declined_ms + j->p->timeout_ms - now < d)
		d = j->stop_declined_ms + j->p->timeout_ms - now;
	for (size_t i = 0; i < j->npend; i++) {
		int64_t a = align_deadline(j, &j->pend[i]);

		if (a != 0 && a - now < d)
			d = a - now;
		if (j->pend[i].start_ms + j->p->timeout_ms - now < d)
			d = j->pend[i].start_ms + j->p->timeout_ms - now;
	}
	return d < 1 ? 1 : d;
}
