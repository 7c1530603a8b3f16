/* common.c: what the files of the engine share below them: the mail between tasks and the coordinator,
 * the job's events, the producers an edge's consumer reads, a subtask failing. */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

struct ckpt_msg *
ckpt_msg_new(enum ckpt_msg_kind k, const struct ckpt_task *t)
{
	struct ckpt_msg *m = calloc(1, sizeof *m);

	if (m == NULL)
		return NULL;
	m->kind = k;
	if (t != NULL) {
		m->task = t->gi;
		m->attempt = t->attempt;
	}
	return m;
}

void
ckpt_job_post(struct ckpt_job *j, struct ckpt_msg *m)
{
	pthread_mutex_lock(&j->cmu);
	m->next = NULL;
	*j->inbox_tail = m;
	j->inbox_tail = &m->next;
	pthread_mutex_unlock(&j->cmu);
	ckpt_notify_wake(&j->cnt);
}

void
ckpt_job_event(struct ckpt_job *j, json_t *ev)
{
	if (ev == NULL)
		return;
	pthread_mutex_lock(&j->emu);
	if (j->o->event)
		j->o->event(j->o->arg, ev);
	pthread_mutex_unlock(&j->emu);
	json_decref(ev);
}

/* The producer subtasks [lo, hi) that consumer j of edge ed reads. */
void
ckpt_edge_inputs(const struct ckpt_pipeline *p, const struct ckpt_pl_edge *ed, uint32_t j, uint32_t *lo, uint32_t *hi)
{
	uint32_t S = p->v[ed->source].parallelism, T = p->v[ed->target].parallelism;

	if (ed->part == PART_FORWARD) {
		*lo = j;
		*hi = j + 1;
	} else if (ed->part == PART_RESCALE) {
		ckpt_pointwise_inputs(S, T, j, lo, hi);
	} else {
		*lo = 0;
		*hi = S;
	}
}

void
ckpt_task_fail(struct ckpt_task *t, const char *why)
{
	struct ckpt_msg *m = ckpt_msg_new(MSG_FAILED, t);

	t->failed = 1;
	atomic_store(&t->cancel, 1);
	if (m == NULL)
		return;
	m->id = (int64_t)t->fail_index;
	snprintf(m->reason, sizeof m->reason, "%s", why);
	ckpt_job_post(t->job, m);
}

/* The injected failure of this attempt fires (task_count_record counts). */
void
ckpt_task_fail_injected(struct ckpt_task *t)
{
	if (!t->failed)
		ckpt_task_fail(t, "injected failure");
}

json_t *
ckpt_task_ref_json(const struct ckpt_job *j, size_t gi)
{
	return json_pack("{s:s,s:i}", "vertex", j->t[gi].v->id, "subtask", (json_int_t)j->t[gi].sub);
}

/* [{"vertex": ..., "subtasks": "0-3"}] for one bit set per vertex, empty sets left out. */
json_t *
ckpt_subtask_sets_json(const struct ckpt_job *j, const struct ckpt_bits *sets)
{
	json_t *a = json_array();

	for (size_t v = 0; v < j->p->nv; v++) {
		char *rl;

		if (ckpt_bits_count(&sets[v]) == 0)
			continue;
		rl = ckpt_rangelist_format(&sets[v]);
		json_array_append_new(a, json_pack("{s:s,s:s}", "vertex", j->p->v[v].id, "subtasks", rl ? rl : ""));
		free(rl);
	}
	return a;
}
