/* job.c: a running pipeline: tasks and channels wired from the pipeline, the main loop, failover and restore. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine.h"

static void
edge_outputs(const struct ckpt_pipeline *p, const struct ckpt_pl_edge *ed, uint32_t i, uint32_t *lo, uint32_t *hi)
{
	uint32_t S = p->v[ed->source].parallelism, T = p->v[ed->target].parallelism;

	if (ed->part == PART_FORWARD) {
		*lo = i;
		*hi = i + 1;
	} else if (ed->part == PART_RESCALE) {
		ckpt_pointwise_outputs(S, T, i, lo, hi);
	} else {
		*lo = 0;
		*hi = T;
	}
}

static int
init_tasks(struct ckpt_job *j, struct ckpt_err *e)
{
	const struct ckpt_pipeline *p = j->p;

	j->vfirst = ckpt_calloc(p->nv + 1, sizeof *j->vfirst, e);
	if (j->vfirst == NULL)
		return -1;
	for (size_t v = 0; v < p->nv; v++)
		j->vfirst[v + 1] = j->vfirst[v] + p->v[v].parallelism;
	j->nt = j->vfirst[p->nv];
	j->t = ckpt_calloc(j->nt, sizeof *j->t, e);
	j->state = ckpt_calloc(j->nt, 1, e);
	j->eod = ckpt_calloc(j->nt, 1, e);
	if (j->t == NULL || j->state == NULL || j->eod == NULL)
		return -1;
	for (size_t v = 0; v < p->nv; v++)
		for (uint32_t s = 0; s < p->v[v].parallelism; s++) {
			struct ckpt_task *t = &j->t[j->vfirst[v] + s];

			t->job = j;
			t->vi = v;
			t->sub = s;
			t->gi = j->vfirst[v] + s;
			t->v = &p->v[v];
			t->op = ckpt_op_def(p->v[v].op);
			ckpt_notify_init(&t->nt);
			pthread_mutex_init(&t->mmu, NULL);
			t->ngates = p->v[v].nin;
			t->nout = p->v[v].nout;
			t->gates = ckpt_calloc(t->ngates + 1, sizeof *t->gates, e);
			t->out = ckpt_calloc(t->nout + 1, sizeof *t->out, e);
			if (t->gates == NULL || t->out == NULL)
				return -1;
		}
	return 0;
}

/* Wire edge k: a gate per consumer subtask, a channel per connected producer/consumer pair. */
static int
wire_edge(struct ckpt_job *j, size_t k, size_t gate_index, struct ckpt_err *e)
{
	const struct ckpt_pipeline *p = j->p;
	const struct ckpt_pl_edge *ed = &p->e[k];
	uint32_t S = p->v[ed->source].parallelism, T = p->v[ed->target].parallelism;
	struct ckpt_channel **map = ckpt_calloc((size_t)S * T, sizeof *map, e);
	int r = -1;

	if (map == NULL)
		return -1;
	for (uint32_t c = 0; c < T; c++) {
		struct ckpt_task *ct = &j->t[j->vfirst[ed->target] + c];
		struct ckpt_gate *g = &ct->gates[gate_index];
		uint32_t lo, hi;

		ckpt_edge_inputs(p, ed, c, &lo, &hi);
		if (ckpt_gate_init(g, p->floating_buffers, p->buffer_bytes, e) < 0)
			goto out;
		g->ch = ckpt_calloc(hi - lo + 1, sizeof *g->ch, e);
		if (g->ch == NULL)
			goto out;
		for (uint32_t i = lo; i < hi; i++) {
			struct ckpt_channel *ch = ckpt_calloc(1, sizeof *ch, e);
			struct ckpt_channel **all = ckpt_reallocarray(j->chs, j->nch + 1, sizeof *all, e);

			if (ch == NULL || all == NULL) {
				free(ch);
				goto out;
			}
			j->chs = all;
			j->chs[j->nch++] = ch;
			if (ckpt_channel_init(ch, g, p->buffers_per_channel, p->max_buffers_per_channel, p->buffer_bytes, e) < 0)
				goto out;
			ch->prod = &j->t[j->vfirst[ed->source] + i];
			ch->cons = ct;
			g->ch[g->nch++] = ch;
			map[(size_t)i * T + c] = ch;
			ct->in[ct->nin++] = (struct ckpt_inch){.ch = ch, .gate = gate_index};
		}
	}
	for (uint32_t i = 0; i < S; i++) {
		struct ckpt_task *pt = &j->t[j->vfirst[ed->source] + i];
		struct ckpt_outpart *o = NULL;
		uint32_t lo, hi;

		for (size_t q = 0; q < p->v[ed->source].nout; q++)
			if (p->v[ed->source].out[q] == k)
				o = &pt->out[q];
		edge_outputs(p, ed, i, &lo, &hi);
		o->part = ed->part;
		o->lo = lo;
		o->maxp = p->v[ed->target].max_parallelism;
		o->oc = ckpt_calloc(hi - lo + 1, sizeof *o->oc, e);
		if (o->oc == NULL)
			goto out;
		for (uint32_t c = lo; c < hi; c++) {
			o->oc[o->noc].cap = p->buffer_bytes;
			o->oc[o->noc++].ch = map[(size_t)i * T + c];
		}
		o->rr = (o->part == PART_REBALANCE || o->part == PART_RESCALE) ? i % o->noc : 0;
	}
	r = 0;
out:
	free(map);
	return r;
}

static int
wire(struct ckpt_job *j, struct ckpt_err *e)
{
	const struct ckpt_pipeline *p = j->p;

	for (size_t t = 0; t < j->nt; t++) {
		const struct ckpt_pl_vertex *v = j->t[t].v;
		size_t n = 0;

		for (size_t g = 0; g < v->nin; g++) {
			uint32_t lo, hi;

			ckpt_edge_inputs(p, &p->e[v->in[g]], j->t[t].sub, &lo, &hi);
			n += hi - lo;
		}
		j->t[t].in = ckpt_calloc(n + 1, sizeof *j->t[t].in, e);
		if (j->t[t].in == NULL)
			return -1;
	}
	for (size_t v = 0; v < p->nv; v++)
		for (size_t g = 0; g < p->v[v].nin; g++)
			if (wire_edge(j, p->v[v].in[g], g, e) < 0)
				return -1;
	return 0;
}

/* A fresh attempt of t: everything but its wiring starts over. */
static void
reset_task(struct ckpt_job *j, struct ckpt_task *t)
{
	t->attempt++;
	atomic_store(&t->cancel, 0);
	atomic_store(&t->completed, -1);
	atomic_store(&t->aborted, -1);
	t->last_aborted = -1;
	t->phase = PH_RUNNING;
	t->finished_ops = 0;
	t->final_min_id = -1;
	t->sync_savepoint = -1;
	t->last_notified = -1;
	t->wm_out = t->wm_in = INT64_MIN;
	t->records_in = t->records_out = t->counted = 0;
	t->failed = 0;
	t->cur_id = t->done_id = t->last_cp_id = -1;
	t->naligned = t->target = 0;
	t->nopen = t->nin;
	t->mhead = t->mn = 0;
	t->mail_closed = 0;
	t->rr_in = 0;
	t->ost = NULL;
	t->restored = NULL;
	t->restoring = 0;
	t->deployed_finished = 0;
	t->last_flush_ms = ckpt_now_ms();
	t->delay_debt_ns = 0;
	atomic_store(&t->prio, 0);
	t->ua_unaligned = t->in_buf = t->replaying = 0;
	t->ua_deadline_ms = 0;
	t->ua_room = t->ua_avail = 0;
	for (size_t i = 0; i < t->nin; i++) {
		struct ckpt_inch *in = &t->in[i];

		in->blocked = in->aligned = in->eod = in->eop = in->eod_drain = 0;
		in->wm = INT64_MIN;
	}
	t->fail_after = -1;
	for (size_t f = 0; f < j->p->nfail; f++)
		if (!j->fail_fired[f] && !j->p->fail[f].closing && j->p->fail[f].vertex == t->vi &&
		    j->p->fail[f].subtask == t->sub) {
			t->fail_after = j->p->fail[f].after_records;
			t->fail_index = f;
			break;
		}
}

static int
start_task(struct ckpt_job *j, struct ckpt_task *t, struct ckpt_err *e)
{
	int fully = 0;

	reset_task(j, t);
	j->state[t->gi] = CKPT_CREATED;
	j->state_gen++;
	j->eod[t->gi] = 0;
	if (j->restore != NULL) {
		t->restored = ckpt_job_restored_state(j, t, &fully, e);
		if (t->restored == NULL && e->kind != CKPT_ERR_NONE)
			return -1;
		t->deployed_finished = fully;
	}
	errno = pthread_create(&t->th, NULL, ckpt_task_main, t);
	if (errno != 0)
		return ckpt_err_sys(e, "", "cannot start a task thread");
	t->started = 1;
	return 0;
}

static void
stop_task(struct ckpt_task *t)
{
	if (!t->started)
		return;
	atomic_store(&t->cancel, 1);
	ckpt_notify_wake(&t->nt);
	pthread_join(t->th, NULL);
	t->started = 0;
}

/* The operator of the snapshot that restores vertex v: matched by uid, then by id. */
static struct ckpt_operator *
find_operator(struct ckpt_snapshot *s, const struct ckpt_pl_vertex *v)
{
	const char *uid = v->prm.uid ? v->prm.uid : v->id;

	for (size_t i = 0; i < s->nops; i++)
		if (s->ops[i].uid && strcmp(s->ops[i].uid, uid) == 0)
			return &s->ops[i];
	for (size_t i = 0; i < s->nops; i++)
		if (strcmp(s->ops[i].id, v->id) == 0)
			return &s->ops[i];
	return NULL;
}

struct ckpt_subtask *
ckpt_job_restored_state(struct ckpt_job *j, struct ckpt_task *t, int *fully_finished, struct ckpt_err *e)
{
	struct ckpt_operator *op = find_operator(j->restore, t->v);

	*fully_finished = 0;
	if (op == NULL)
		return NULL;
	t->restoring = 1;
	if (op->fully_finished) {
		*fully_finished = 1;
		return NULL;
	}
	if (op->parallelism != t->v->parallelism) {
		/* only a -r snapshot is redistributed; checkpoints of this run match the pipeline */
		ckpt_err_set(e, CKPT_ERR_INPUT, j->latest ? j->latest : "",
			     "operator \"%s\" has parallelism %u in the snapshot and %u in the pipeline", op->id,
			     op->parallelism, t->v->parallelism);
		return NULL;
	}
	for (size_t i = 0; i < op->nsubtasks; i++) {
		struct ckpt_subtask *st = &op->subtasks[i];

		if (st->index != t->sub)
			continue;
		if (st->finished)
			return NULL;
		if (st->loaded)
			return st;
		if (j->restore == j->view ? ckpt_redist_fill(j->redist, op, st, e) < 0
					  : ckpt_subtask_load(j->restore, op, st, e) < 0)
			return NULL;
		return st;
	}
	return NULL;
}

/* ---- events */

static void
on_state(struct ckpt_job *j, struct ckpt_msg *m)
{
	j->state[m->task] = (unsigned char)m->state;
	j->state_gen++;
	ckpt_job_event(j, json_pack("{s:s,s:s,s:i,s:s,s:i}", "event", "task_state", "vertex", j->t[m->task].v->id,
			       "subtask", (json_int_t)j->t[m->task].sub, "state", ckpt_exec_state_name(m->state),
			       "attempt", (json_int_t)m->attempt));
	if (m->state == CKPT_FINISHED)
		ckpt_coord_task_finished(j, m->task);
}

static void
dispatch(struct ckpt_job *j)
{
	struct ckpt_msg *m;

	pthread_mutex_lock(&j->cmu);
	m = j->inbox;
	j->inbox = NULL;
	j->inbox_tail = &j->inbox;
	pthread_mutex_unlock(&j->cmu);
	while (m != NULL) {
		struct ckpt_msg *next = m->next;

		if (m->attempt != j->t[m->task].attempt) {
			/* from an attempt that failover already replaced */
		} else if (m->kind == MSG_STATE) {
			on_state(j, m);
		} else if (m->kind == MSG_FAILED) {
			if (m->reason[0] && strcmp(m->reason, "injected failure") == 0)
				j->fail_fired[m->id] = 1;
			if (ckpt_job_failover(j, m->task, m->reason, &j->err) < 0)
				j->fatal = 1;
		} else {
			ckpt_coord_handle(j, m);
		}
		if (m->st != NULL)
			ckpt_engine_subtask_free(m->st);
		free(m);
		m = next;
	}
}

/* ---- failover */

static int
restart_set(struct ckpt_job *j, size_t gi, struct ckpt_bits *sets, struct ckpt_err *e)
{
	struct ckpt_task_ref ref;

	for (size_t v = 0; v < j->p->nv; v++)
		for (uint32_t s = 0; s < j->p->v[v].parallelism; s++)
			j->p->graph->v[v].tasks[s] = j->state[j->vfirst[v] + s];
	if (gi == SIZE_MAX) {
		/* a global failure (checkpoint failures beyond tolerance): everything restarts */
		for (size_t v = 0; v < j->p->nv; v++) {
			if (ckpt_bits_init(&sets[v], j->p->v[v].parallelism, e) < 0)
				return -1;
			ckpt_bits_set_range(&sets[v], 0, j->p->v[v].parallelism);
		}
		return 0;
	}
	ref.vertex = j->t[gi].vi;
	ref.subtask = j->t[gi].sub;
	return ckpt_failover_restart(j->p->graph, j->p->strategy, &ref, 1, NULL, sets, e);
}

static const char *const strategy_names[] = {"full", "region", "approximate"};

static int
restart_tasks(struct ckpt_job *j, struct ckpt_bits *sets, uint64_t *lost, struct ckpt_err *e)
{
	unsigned char *in = ckpt_calloc(j->nt, 1, e);

	if (in == NULL)
		return -1;
	for (size_t t = 0; t < j->nt; t++) {
		in[t] = (unsigned char)ckpt_bits_test(&sets[j->t[t].vi], j->t[t].sub);
		if (in[t])
			stop_task(&j->t[t]);
	}
	for (size_t c = 0; c < j->nch; c++) {
		struct ckpt_channel *ch = j->chs[c];

		if (in[ch->cons->gi] || in[ch->prod->gi])
			*lost += ckpt_channel_reset(ch, !in[ch->prod->gi]);
	}
	if (j->latest != NULL && (j->restore == NULL || j->restore_id != j->latest_id)) {
		struct ckpt_snapshot *s = ckpt_snapshot_open(j->latest, e);

		if (s == NULL) {
			free(in);
			return -1;
		}
		if (j->restore && j->restore != j->view)
			j->old_restores[j->nold++] = j->restore;
		j->restore = s;
		j->restore_id = j->latest_id;
	}
	for (size_t t = 0; t < j->nt; t++)
		if (in[t] && start_task(j, &j->t[t], e) < 0) {
			free(in);
			return -1;
		}
	free(in);
	return 0;
}

int
ckpt_job_failover(struct ckpt_job *j, size_t gi, const char *reason, struct ckpt_err *e)
{
	struct ckpt_bits *sets = ckpt_calloc(j->p->nv, sizeof *sets, e);
	uint64_t lost = 0;
	int r = -1;

	if (sets == NULL)
		return -1;
	ckpt_job_event(j, json_pack("{s:s,s:o,s:s}", "event", "failure", "task",
			       gi == SIZE_MAX ? json_null() : ckpt_task_ref_json(j, gi), "reason", reason));
	ckpt_coord_abort_all(j, "TASK_FAILURE");
	if (j->restarts >= j->p->restart_limit) {
		ckpt_err_set(e, CKPT_ERR_REFUSED, "", "the job failed: restart limit %u reached (%s)",
			     j->p->restart_limit, reason);
		j->final_state = "FAILED";
		goto out;
	}
	j->restarts++;
	if (restart_set(j, gi, sets, e) < 0)
		goto out;
	if (restart_tasks(j, sets, &lost, e) < 0)
		goto out;
	/* the restarted tasks end their data again: their final checkpoint goes at once, as the first did */
	j->final_fast = 0;
	{
		json_t *ev = json_pack("{s:s,s:s,s:o,s:i,s:o}", "event", "restart", "strategy",
				       gi == SIZE_MAX ? "full" : strategy_names[j->p->strategy], "restart",
				       ckpt_subtask_sets_json(j, sets), "attempt", (json_int_t)j->restarts, "checkpoint",
				       j->latest ? json_integer(j->latest_id) : json_null());

		if (j->p->strategy == CKPT_FAILOVER_APPROXIMATE)
			json_object_set_new(ev, "lost_records", json_integer((json_int_t)lost));
		ckpt_job_event(j, ev);
	}
	r = 0;
out:
	for (size_t v = 0; v < j->p->nv; v++)
		ckpt_bits_release(&sets[v]);
	free(sets);
	return r;
}

/* ---- the run */

static int
all_finished(const struct ckpt_job *j)
{
	for (size_t t = 0; t < j->nt; t++)
		if (j->state[t] != CKPT_FINISHED)
			return 0;
	return 1;
}

/*
 * -r: the snapshot as Flink assigns it on restore onto this pipeline's job graph (the same code as
 * ckpt-merge -g): rescaled, operators matched by uid, Flink's refusals.
 */
static int
open_view(struct ckpt_job *j, const char *path, struct ckpt_err *e)
{
	struct ckpt_redist_opts ro = {.name = path, .graph = j->p->graph, .reopen = path,
				      .allow_non_restored = j->o->allow_non_restored};

	j->src = ckpt_snapshot_open(path, e);
	if (j->src == NULL)
		return -1;
	j->redist = ckpt_redist_plan(j->src, &ro, e);
	if (j->redist == NULL)
		return -1;
	j->view = j->restore = ckpt_redist_snapshot(j->redist);
	return 0;
}

static void
free_view(struct ckpt_job *j)
{
	for (size_t i = 0; j->view && i < j->view->nops; i++)
		for (size_t k = 0; k < j->view->ops[i].nsubtasks; k++)
			if (j->view->ops[i].subtasks[k].loaded)
				ckpt_redist_release(&j->view->ops[i].subtasks[k]);
	ckpt_redist_free(j->redist);
	ckpt_snapshot_free(j->src);
}

static void
free_job(struct ckpt_job *j)
{
	for (size_t t = 0; t < j->nt; t++)
		stop_task(&j->t[t]);
	for (size_t c = 0; c < j->nch; c++) {
		ckpt_channel_destroy(j->chs[c]);
		free(j->chs[c]);
	}
	for (size_t t = 0; t < j->nt; t++) {
		struct ckpt_task *k = &j->t[t];

		for (size_t g = 0; g < k->ngates; g++)
			ckpt_gate_destroy(&k->gates[g]);
		for (size_t o = 0; o < k->nout; o++)
			free(k->out[o].oc);
		free(k->gates);
		free(k->out);
		free(k->in);
		ckpt_notify_destroy(&k->nt);
		pthread_mutex_destroy(&k->mmu);
	}
	while (j->npend > 0)
		ckpt_pending_free(j, &j->pend[0]);
	for (struct ckpt_msg *m = j->inbox; m != NULL;) {
		struct ckpt_msg *n = m->next;

		ckpt_engine_subtask_free(m->st);
		free(m);
		m = n;
	}
	for (size_t i = 0; i < j->nold; i++)
		ckpt_snapshot_free(j->old_restores[i]);
	if (j->restore != j->view)
		ckpt_snapshot_free(j->restore);
	free_view(j);
	for (size_t i = 0; i < j->nretained; i++)
		free(j->retained[i]);
	free(j->retained);
	free(j->old_restores);
	free(j->latest);
	free(j->pend);
	free(j->t);
	free(j->chs);
	free(j->vfirst);
	free(j->state);
	free(j->eod);
	free(j->fail_fired);
	free(j->dir);
	ckpt_notify_destroy(&j->cnt);
	pthread_mutex_destroy(&j->cmu);
	pthread_mutex_destroy(&j->emu);
}

static int
setup(struct ckpt_job *j, struct ckpt_pipeline *p, const struct ckpt_run_opts *o, struct ckpt_err *e)
{
	j->p = p;
	j->o = o;
	j->failover = ckpt_job_failover;
	pthread_mutex_init(&j->cmu, NULL);
	pthread_mutex_init(&j->emu, NULL);
	ckpt_notify_init(&j->cnt);
	j->inbox_tail = &j->inbox;
	j->savepoint_id = -1;
	j->latest_id = -1;
	j->restore_id = -1;
	j->next_id = 1;
	j->final_state = "FINISHED";
	j->start_ms = j->last_complete_ms = ckpt_now_ms();
	j->next_trigger_ms = j->start_ms + p->interval_ms;
	j->stop_at_ms = o->stop_after_ms > 0 ? j->start_ms + o->stop_after_ms : 0;
	/* -s and -n ask for a savepoint from the start: a job that ends before the stop is triggered has none */
	j->stop_asked = o->stop_after_ms > 0 || o->stop_after_cps > 0;
	/* test-only (task.c, test_hold_before_close): read once here, the tasks look at a flag */
	j->test_close_race = getenv("CKPT_TEST_CLOSE_RACE") != NULL && strcmp(getenv("CKPT_TEST_CLOSE_RACE"), "1") == 0;
	j->fail_fired = ckpt_calloc(p->nfail + 1, sizeof *j->fail_fired, e);
	j->old_restores = ckpt_calloc(p->restart_limit + 2, sizeof *j->old_restores, e);
	j->dir = ckpt_strdup(o->dir ? o->dir : p->dir ? p->dir : "checkpoints", e);
	if (j->fail_fired == NULL || j->old_restores == NULL || j->dir == NULL)
		return -1;
	if (init_tasks(j, e) < 0 || wire(j, e) < 0)
		return -1;
	if (o->restore != NULL) {
		if (open_view(j, o->restore, e) < 0)
			return -1;
		j->latest = ckpt_strdup(o->restore, e);
		if (j->latest == NULL)
			return -1;
		j->latest_id = j->restore_id = (int64_t)j->src->checkpoint_id;
		j->next_id = j->latest_id + 1;
	}
	if ((p->interval_ms > 0 || o->stop || o->stop_after_ms || o->stop_after_cps) && mkdir(j->dir, 0777) < 0 &&
	    errno != EEXIST)
		return ckpt_err_sys(e, j->dir, "cannot create the checkpoint directory");
	return 0;
}

static void
finished_event(struct ckpt_job *j)
{
	int64_t ms = ckpt_now_ms() - j->start_ms;
	uint64_t recs = atomic_load(&j->sink_records), lost = 0;
	json_t *ev;

	ev = json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:i,s:I}", "event", "job_finished", "state", j->final_state,
		       "records", (json_int_t)recs, "source_records", (json_int_t)atomic_load(&j->records),
		       "duration_ms", (json_int_t)ms, "records_per_second",
		       (json_int_t)(ms > 0 ? recs * 1000 / (uint64_t)ms : recs), "restarts", (json_int_t)j->restarts,
		       "checkpoints", (json_int_t)j->completed);
	/* records dropped in flight: only approximate failover drops any */
	for (size_t c = 0; c < j->nch; c++)
		lost += j->chs[c]->lost_records;
	if (j->p->strategy == CKPT_FAILOVER_APPROXIMATE)
		json_object_set_new(ev, "lost_records", json_integer((json_int_t)lost));
	ckpt_job_event(j, ev);
}

static void
main_loop(struct ckpt_job *j)
{
	while (!j->fatal) {
		unsigned seq = notify_prepare(&j->cnt);
		int64_t now;

		dispatch(j);
		if (j->fatal)
			break;
		if (all_finished(j))
			break;
		if (j->o->cancel && *j->o->cancel) {
			j->final_state = "CANCELED";
			break;
		}
		now = ckpt_now_ms();
		if (j->o->stop && *j->o->stop != j->stop_seen) {
			j->stop_seen = *j->o->stop;
			ckpt_coord_request_stop(j);
		}
		if (j->stop_at_ms && now >= j->stop_at_ms) {
			j->stop_at_ms = 0;
			ckpt_coord_request_stop(j);
		}
		if (ckpt_coord_tick(j, now) < 0) {
			j->fatal = 1;
			break;
		}
		ckpt_notify_wait(&j->cnt, seq, ckpt_coord_next_deadline(j, ckpt_now_ms()));
	}
}

int
ckpt_pipeline_run(struct ckpt_pipeline *p, const struct ckpt_run_opts *o, struct ckpt_err *e)
{
	struct ckpt_job j = {0};
	int r = -1;

	if (ckpt_batch_mode(p) || o->log || o->recover || o->partitions)
		return ckpt_batch_run(p, o, e); /* blocking edges: region by region (batch.c) */
	if (setup(&j, p, o, e) < 0)
		goto out;
	for (size_t t = 0; t < j.nt; t++)
		if (start_task(&j, &j.t[t], e) < 0)
			goto out;
	main_loop(&j);
	if (j.fatal) {
		*e = j.err;
		if (strcmp(j.final_state, "FINISHED") == 0)
			j.final_state = "FAILED";
	}
	for (size_t t = 0; t < j.nt; t++)
		stop_task(&j.t[t]);
	finished_event(&j);
	r = j.fatal ? -1 : 0;
	if (!j.fatal && strcmp(j.final_state, "CANCELED") == 0)
		r = ckpt_err_set(e, CKPT_ERR_REFUSED, "", "the job was cancelled");
	else if (!j.fatal && j.stop_asked && j.savepoints == 0)
		/* a script that asked for a savepoint must learn that there is none */
		r = ckpt_err_set(e, CKPT_ERR_REFUSED, "", "the job finished without a savepoint: %s",
				 j.stop_why[0] ? j.stop_why : "it ended before the stop-with-savepoint was triggered");
out:
	free_job(&j);
	return r;
}
