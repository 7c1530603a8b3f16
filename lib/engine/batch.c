/*
 * batch.c: batch mode's control side: pipelined regions scheduled as their blocking inputs complete,
 * parallelism decided at run time, the job event log, failover and recovery (data side: partition.c).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch.h"

/* ---- events: stdout and the job event log */

static void
emit(struct ckpt_bjob *b, json_t *ev)
{
	if (ev != NULL && b->o->event)
		b->o->event(b->o->arg, ev);
	json_decref(ev);
}

static void
state_event(struct ckpt_bjob *b, struct ckpt_task *t, const char *state)
{
	emit(b, json_pack("{s:s,s:s,s:i,s:s,s:i}", "event", "task_state", "vertex", t->v->id, "subtask",
			  (json_int_t)t->sub, "state", state, "attempt", (json_int_t)t->attempt));
}

static int
log_append(struct ckpt_bjob *b, uint32_t type, json_t *payload, struct ckpt_err *e)
{
	int r;

	if (payload == NULL)
		return ckpt_err_nomem(e, "");
	r = ckpt_evwriter_append_json(b->w, type, payload, e);
	json_decref(payload);
	return r;
}

static int
log_initialized(struct ckpt_bjob *b, size_t v, struct ckpt_err *e)
{
	const struct ckpt_pl_vertex *pv = &b->p->v[v];
	json_t *in = json_array();

	for (size_t g = 0; g < pv->nin; g++) {
		const struct ckpt_pl_edge *ed = &b->p->e[pv->in[g]];
		int pw = ed->part == PART_FORWARD || ed->part == PART_RESCALE;

		json_array_append_new(in, json_pack("{s:s,s:s,s:s}", "vertex", b->p->v[ed->source].id,
						    "distribution", pw ? "pointwise" : "all_to_all", "partition",
						    ckpt_partition_name(ed->ptype)));
	}
	b->inited[v] = 1;
	return log_append(b, CKPT_EVENT_VERTEX_INITIALIZED,
			  json_pack("{s:s,s:i,s:o}", "vertex", pv->id, "parallelism", (json_int_t)pv->parallelism,
				    "inputs", in),
			  e);
}

/* The split coordinator of a source: the splits whose readers finished (split i is subtask i's). */
static json_t *
coordinator_state(struct ckpt_bjob *b, size_t v)
{
	struct ckpt_bits done;
	json_t *s;
	char *rl;

	if (ckpt_bits_init(&done, b->p->v[v].parallelism, NULL) < 0)
		return NULL;
	for (uint32_t i = 0; i < b->p->v[v].parallelism; i++)
		if (b->st[b->vfirst[v] + i] == B_FINISHED)
			ckpt_bits_set(&done, i);
	rl = ckpt_rangelist_format(&done);
	ckpt_bits_release(&done);
	s = rl ? json_sprintf("finished_splits=%s", rl) : NULL;
	free(rl);
	return s;
}

/*
 * Coordinator and shuffle snapshots, as Flink's batch recovery handler takes
 * them: for the vertices with subtasks finished since the last snapshot,
 * coordinators that support batch snapshots; the partition registry
 * incrementally (the partitions registered since).
 */
static json_t *
snapshots(struct ckpt_bjob *b)
{
	json_t *co = json_object(), *sh;
	const char *s;
	size_t i;
	json_t *x;
	struct ckpt_bytebuf joined = {0};

	for (size_t v = 0; v < b->p->nv; v++) {
		if (b->since_snap[v] && b->p->v[v].op == OP_SOURCE && !b->p->v[v].prm.no_batch_snapshot)
			json_object_set_new(co, b->p->v[v].id, coordinator_state(b, v));
		b->since_snap[v] = 0;
	}
	json_array_foreach(b->shuffle_new, i, x) {
		size_t was = joined.len;

		s = json_string_value(x);
		if ((was && ckpt_bytebuf_add(&joined, ",", 1, NULL) < 0) || ckpt_bytebuf_add(&joined, s, strlen(s), NULL) < 0) {
			joined.len = was; /* no memory: the names so far, whole */
			break;
		}
	}
	sh = json_pack("{s:b,s:s%}", "incremental", 1, "state", joined.p ? (const char *)joined.p : "", joined.len);
	ckpt_bytebuf_release(&joined);
	json_array_clear(b->shuffle_new);
	return json_pack("{s:o,s:o}", "coordinators", co, "shuffle", sh);
}

static int
vertex_complete(const struct ckpt_bjob *b, size_t v)
{
	for (uint32_t i = 0; i < b->p->v[v].parallelism; i++)
		if (b->st[b->vfirst[v] + i] != B_FINISHED)
			return 0;
	return 1;
}

static int
log_finished(struct ckpt_bjob *b, struct ckpt_task *t, struct ckpt_err *e)
{
	int complete = vertex_complete(b, t->vi);
	int64_t now = ckpt_now_ms();
	json_t *pl = json_pack("{s:s,s:i,s:i,s:{s:I,s:I}}", "vertex", t->v->id, "subtask", (json_int_t)t->sub,
			       "attempt", (json_int_t)t->attempt, "metrics", "records_in",
			       (json_int_t)t->records_in, "records_out", (json_int_t)t->records_out);

	if (pl == NULL)
		return ckpt_err_nomem(e, "");
	b->since_snap[t->vi] = 1;
	if (ckpt_bp_has_partition(b->p, t->vi)) {
		json_t *id = json_sprintf("%s:%u", t->v->id, t->sub);

		json_object_set_new(pl, "partitions", json_pack("[O]", id));
		json_array_append_new(b->shuffle_new, id);
	}
	if (complete || now - b->last_snap_ms >= b->p->batch_min_pause_ms) {
		json_object_set_new(pl, "snapshots", snapshots(b));
		b->last_snap_ms = now;
	}
	if (log_append(b, CKPT_EVENT_VERTEX_FINISHED, pl, e) < 0)
		return -1;
	/* Flink's cutBlock: a segment ends where a job vertex finished (fsync); else written out now,
	 * so that a crash of the process (not of the machine) loses no finished subtask */
	return complete ? ckpt_evwriter_cut(b->w, e) : ckpt_evwriter_flush(b->w, 0, e);
}

/* ---- scheduling */

static int
inputs_complete(const struct ckpt_bjob *b, const struct ckpt_task *t)
{
	for (size_t g = 0; g < t->v->nin; g++) {
		const struct ckpt_pl_edge *ed = &b->p->e[t->v->in[g]];
		uint32_t lo, hi;

		if (!ckpt_bp_blocking(b->p, t->v->in[g]))
			continue;
		ckpt_edge_inputs(b->p, ed, t->sub, &lo, &hi);
		for (uint32_t i = lo; i < hi; i++)
			if (b->st[b->vfirst[ed->source] + i] != B_FINISHED)
				return 0;
	}
	return 1;
}

static void
prepare_task(struct ckpt_bjob *b, struct ckpt_task *t)
{
	t->attempt++;
	atomic_store(&t->cancel, 0);
	atomic_store(&t->completed, -1);
	atomic_store(&t->aborted, -1);
	t->phase = PH_RUNNING;
	t->wm_out = t->wm_in = INT64_MIN;
	t->records_in = t->records_out = t->counted = 0;
	t->failed = 0;
	t->ost = NULL;
	t->fail_after = -1;
	t->last_flush_ms = ckpt_now_ms();
	t->delay_debt_ns = 0;
	b->lost_from[t->gi] = 0;
	ckpt_bp_pq_reset_inputs(b, t);
	for (size_t f = 0; f < b->p->nfail; f++)
		if (!b->p->fail[f].lose_partition && !b->fail_fired[f] && b->p->fail[f].vertex == t->vi &&
		    b->p->fail[f].subtask == t->sub) {
			t->fail_after = b->p->fail[f].after_records;
			t->fail_index = f;
			break;
		}
}

/*
 * Set vertex v's parallelism (at most the bound it was set up with): in the
 * pipeline and in its job graph (failover), and the subtasks beyond it absent.
 */
static void
set_parallelism(struct ckpt_bjob *b, size_t v, uint32_t n)
{
	struct ckpt_vertex *gv = &b->p->graph->v[v];

	b->p->graph->nsubtasks -= gv->parallelism - n;
	gv->parallelism = n;
	b->p->v[v].parallelism = n;
	for (size_t i = b->vfirst[v] + n; i < b->vfirst[v + 1]; i++)
		b->st[i] = B_ABSENT;
	b->decided[v] = 1;
}

/*
 * Flink's adaptive batch scheduler (DefaultVertexParallelismAndInputInfosDecider):
 * once every producer of an "auto" vertex finished, its parallelism is the
 * bytes they sent it (24 per record, a broadcast counted once) over
 * bytes_per_task, rounded up, within [min_parallelism, its bound].
 */
static void
decide(struct ckpt_bjob *b, size_t v)
{
	const struct ckpt_pl_vertex *pv = &b->p->v[v];
	uint64_t bytes = 0, n;

	for (size_t g = 0; g < pv->nin; g++) {
		size_t src = b->p->e[pv->in[g]].source;

		if (!b->decided[src])
			return;
		for (uint32_t i = 0; i < b->p->v[src].parallelism; i++) {
			if (b->st[b->vfirst[src] + i] != B_FINISHED)
				return;
			bytes += b->rout[b->vfirst[src] + i] * PART_REC;
		}
	}
	n = (bytes + (uint64_t)b->p->auto_bytes_per_task - 1) / (uint64_t)b->p->auto_bytes_per_task;
	n = n < b->p->auto_min ? b->p->auto_min : n;
	n = n > b->vfirst[v + 1] - b->vfirst[v] ? b->vfirst[v + 1] - b->vfirst[v] : n;
	set_parallelism(b, v, (uint32_t)n);
}

/*
 * A pipelined region starts when the blocking inputs of all its subtasks are
 * complete (Flink's PipelinedRegionSchedulingStrategy): all its pending
 * subtasks are set up first, their queues empty, then their threads start.
 */
static int
start_ready(struct ckpt_bjob *b, struct ckpt_err *e)
{
	for (size_t v = 0; v < b->p->nv; v++)
		if (!b->decided[v])
			decide(b, v);
	memset(b->ready, 1, b->nt);
	for (size_t i = 0; i < b->nt; i++)
		if (b->st[i] == B_PENDING && (!b->decided[b->t[i].vi] || !inputs_complete(b, &b->t[i])))
			b->ready[b->region[i]] = 0;
	for (size_t i = 0; i < b->nt; i++) {
		struct ckpt_task *t = &b->t[i];

		if (b->st[i] != B_PENDING || !b->ready[b->region[i]])
			continue;
		if (!b->inited[t->vi] && log_initialized(b, t->vi, e) < 0)
			return -1;
		prepare_task(b, t);
		b->st[i] = B_RUNNING;
		b->done[i] = 0;
	}
	for (size_t i = 0; i < b->nt; i++) {
		struct ckpt_task *t = &b->t[i];

		if (b->st[i] != B_RUNNING || t->started || b->done[i])
			continue;
		state_event(b, t, "RUNNING");
		errno = pthread_create(&t->th, NULL, ckpt_bp_task_main, t);
		if (errno != 0)
			return ckpt_err_sys(e, "", "cannot start a task thread");
		t->started = 1;
	}
	return 0;
}

static void
join_task(struct ckpt_task *t)
{
	if (t->started) {
		atomic_store(&t->cancel, 1);
		ckpt_notify_wake(&t->nt);
		pthread_join(t->th, NULL);
		t->started = 0;
	}
}

/* Whole pipelined regions restart (with approximate failover too: their queues are shared). */
static void
close_over_regions(struct ckpt_bjob *b, struct ckpt_bits *sets)
{
	memset(b->ready, 0, b->nt);
	for (size_t v = 0; v < b->p->nv; v++)
		for (uint32_t s = 0; s < b->p->v[v].parallelism; s++)
			if (ckpt_bits_test(&sets[v], s))
				b->ready[b->region[b->vfirst[v] + s]] = 1;
	for (size_t v = 0; v < b->p->nv; v++)
		for (uint32_t s = 0; s < b->p->v[v].parallelism; s++)
			if (b->ready[b->region[b->vfirst[v] + s]])
				ckpt_bits_set(&sets[v], s);
}

/* The producer whose partition ft found gone, as the lost partition of a failover. */
static int
lost_sets(struct ckpt_bjob *b, const struct ckpt_task *ft, struct ckpt_bits **lost, char *reason, size_t size,
	  struct ckpt_err *e)
{
	const struct ckpt_task *pt;

	*lost = NULL;
	if (b->lost_from[ft->gi] == 0) {
		snprintf(reason, size, "injected failure");
		return 0;
	}
	pt = &b->t[b->lost_from[ft->gi] - 1];
	snprintf(reason, size, "partition %s:%u not found", pt->v->id, pt->sub);
	if ((*lost = ckpt_calloc(b->p->nv, sizeof **lost, e)) == NULL)
		return -1;
	for (size_t v = 0; v < b->p->nv; v++)
		if (ckpt_bits_init(&(*lost)[v], b->p->v[v].parallelism, e) < 0)
			return -1;
	ckpt_bits_set(&(*lost)[pt->vi], pt->sub);
	return 0;
}

/*
 * A subtask failed (an injected failure, or a partition it reads is gone):
 * region failover over the job graph (with the lost partition's producer);
 * the restart set is reset in the log and runs again.
 */
static int
failover(struct ckpt_bjob *b, struct ckpt_task *ft, struct ckpt_err *e)
{
	struct ckpt_graph *g = b->p->graph;
	struct ckpt_bits *sets = ckpt_calloc(b->p->nv, sizeof *sets, e), *lost = NULL;
	struct ckpt_task_ref ref = {ft->vi, ft->sub};
	json_t *reset = json_array();
	char reason[160];
	int r = -1;

	if (sets == NULL || lost_sets(b, ft, &lost, reason, sizeof reason, e) < 0)
		goto out;
	if (lost == NULL)
		b->fail_fired[ft->fail_index] = 1;
	emit(b, json_pack("{s:s,s:o,s:s}", "event", "failure", "task",
			  json_pack("{s:s,s:i}", "vertex", ft->v->id, "subtask", (json_int_t)ft->sub), "reason",
			  reason));
	if (b->restarts >= b->p->restart_limit) {
		ckpt_err_set(e, CKPT_ERR_REFUSED, "", "the job failed: restart limit %u reached (%s)",
			     b->p->restart_limit, reason);
		goto out;
	}
	b->restarts++;
	for (size_t v = 0; v < b->p->nv; v++)
		for (uint32_t s = 0; s < b->p->v[v].parallelism; s++) {
			unsigned char st = b->st[b->vfirst[v] + s];

			g->v[v].tasks[s] = st == B_FINISHED ? CKPT_FINISHED : st == B_RUNNING ? CKPT_RUNNING : CKPT_CREATED;
		}
	if (ckpt_failover_restart(g, b->p->strategy, &ref, 1, lost, sets, e) < 0)
		goto out;
	close_over_regions(b, sets);
	for (size_t v = 0; v < b->p->nv; v++)
		if (b->unrecovered[v] && ckpt_bits_count(&sets[v]) > 0) {
			/* a coordinator that could not snapshot: after recovery, one restart restarts all */
			ckpt_bits_set_range(&sets[v], 0, b->p->v[v].parallelism);
			b->unrecovered[v] = 0;
		}
	close_over_regions(b, sets); /* again: the whole vertices just added have regions too */
	for (size_t v = 0; v < b->p->nv; v++)
		for (uint32_t s = 0; s < b->p->v[v].parallelism; s++) {
			struct ckpt_task *t = &b->t[b->vfirst[v] + s];

			if (!ckpt_bits_test(&sets[v], s))
				continue;
			join_task(t);
			b->st[t->gi] = B_PENDING;
			/* a vertex not yet initialized has nothing to reset, and the replay refuses to hear of it */
			if (b->inited[v])
				json_array_append_new(reset, json_pack("{s:s,s:i}", "vertex", t->v->id, "subtask",
								       (json_int_t)s));
		}
	if (log_append(b, CKPT_EVENT_VERTICES_RESET, json_pack("{s:O}", "subtasks", reset), e) < 0)
		goto out;
	emit(b, json_pack("{s:s,s:s,s:o,s:i,s:n}", "event", "restart", "strategy",
			  ckpt_failover_strategy_name(b->p->strategy), "restart", ckpt_subtask_sets_json(&b->j, sets), "attempt",
			  (json_int_t)b->restarts, "checkpoint"));
	r = 0;
out:
	json_decref(reset);
	for (size_t v = 0; v < b->p->nv; v++) {
		if (sets)
			ckpt_bits_release(&sets[v]);
		if (lost)
			ckpt_bits_release(&lost[v]);
	}
	free(sets);
	free(lost);
	return r;
}

/* Threads that ended: finished (logged), failed (failover) or broken (the job fails). */
static int
reap(struct ckpt_bjob *b, struct ckpt_err *e)
{
	for (size_t i = 0; i < b->nt; i++) {
		struct ckpt_task *t = &b->t[i];
		unsigned char d;

		pthread_mutex_lock(&b->j.cmu);
		d = b->done[i];
		b->done[i] = 0;
		pthread_mutex_unlock(&b->j.cmu);
		if (d == 0 || b->st[i] != B_RUNNING)
			continue;
		pthread_join(t->th, NULL);
		t->started = 0;
		if (d == 2) {
			*e = b->terr[i];
			return -1;
		}
		if (t->failed || d == 3) {
			if (failover(b, t, e) < 0)
				return -1;
			continue;
		}
		b->st[i] = B_FINISHED;
		b->rin[i] = t->records_in;
		b->rout[i] = t->records_out;
		b->ran[i] = 1;
		if (log_finished(b, t, e) < 0)
			return -1;
		state_event(b, t, "FINISHED");
	}
	return 0;
}

static int
all_done(const struct ckpt_bjob *b)
{
	for (size_t i = 0; i < b->nt; i++)
		if (b->st[i] != B_FINISHED && b->st[i] != B_ABSENT)
			return 0;
	return 1;
}

/* ---- recovery: the log replayed (ckpt_replay_run, as ckpt-replay), partitions that survived */

static json_t *
available_partitions(struct ckpt_bjob *b)
{
	json_t *a = json_array();

	for (size_t v = 0; v < b->p->nv; v++)
		for (uint32_t s = 0; ckpt_bp_has_partition(b->p, v) && s < b->p->v[v].parallelism; s++) {
			struct ckpt_err ignored = {0};
			unsigned char *d;
			size_t len;
			char path[4200];

			ckpt_bp_part_path(b, v, s, path, sizeof path);
			if (ckpt_bp_read_partition(path, &d, &len, &ignored) == 0)
				json_array_append_new(a, json_sprintf("%s:%u", b->p->v[v].id, s));
			free(d);
		}
	return a;
}

/* The metrics of a vertex_finished payload into the task it names (a vertex the pipeline lacks is skipped). */
static void
finished_metrics(struct ckpt_bjob *b, const struct ckpt_event *ev)
{
	long v = ckpt_graph_find(b->p->graph, ev->vertex);
	json_t *j, *m;

	if (v < 0 || ev->subtask >= b->p->v[v].parallelism)
		return;
	j = json_loadb((const char *)ev->payload, ev->len, 0, NULL);
	m = json_object_get(j, "metrics");
	b->rin[b->vfirst[v] + ev->subtask] = (uint64_t)json_integer_value(json_object_get(m, "records_in"));
	b->rout[b->vfirst[v] + ev->subtask] = (uint64_t)json_integer_value(json_object_get(m, "records_out"));
	json_decref(j);
}

/*
 * The records of the subtasks recovery keeps, from the metrics of their
 * finished events (the last one of each subtask, as replay keeps it), so
 * that job_finished counts the whole job, not this session only.
 */
static int
recover_metrics(struct ckpt_bjob *b, struct ckpt_err *e)
{
	struct ckpt_evreader *r = ckpt_evreader_open(b->logdir, e);
	struct ckpt_event ev;
	int k;

	if (r == NULL)
		return -1;
	while ((k = ckpt_evreader_next(r, &ev, e)) > 0)
		if (ev.type == CKPT_EVENT_VERTEX_FINISHED)
			finished_metrics(b, &ev);
	ckpt_evreader_free(r);
	for (size_t i = 0; i < b->nt; i++)
		if (b->st[i] != B_FINISHED)
			b->rin[i] = b->rout[i] = 0;
	return k;
}

static int
recover(struct ckpt_bjob *b, struct ckpt_err *e)
{
	struct ckpt_replay_opts ro = {.graph = b->p->graph};
	struct ckpt_replay plan = {0};
	struct ckpt_jdoc *avail = ckpt_jdoc_wrap(available_partitions(b), "partitions", e);
	json_t *pj;
	int r = -1;

	if (avail == NULL)
		return -1;
	ro.available = avail;
	if (ckpt_replay_run(b->logdir, &ro, &plan, e) < 0)
		goto out;
	for (size_t i = 0; i < plan.nv; i++) {
		const struct ckpt_replay_vertex *rv = &plan.v[i];
		long v = ckpt_graph_find(b->p->graph, rv->id);

		if (v >= 0 && !b->decided[v] && rv->parallelism <= b->vfirst[v + 1] - b->vfirst[v])
			set_parallelism(b, (size_t)v, rv->parallelism); /* as the log recorded it, not decided again */
		if (v < 0 || rv->parallelism != b->p->v[v].parallelism) {
			ckpt_err_set(e, CKPT_ERR_INPUT, b->logdir, "the log does not belong to this pipeline (vertex \"%s\")",
				     rv->id);
			goto out;
		}
		b->inited[v] = 1;
		b->unrecovered[v] = (unsigned char)rv->unrecovered;
		for (uint32_t s = 0; s < rv->parallelism; s++)
			if (ckpt_bits_test(&rv->finished, s)) {
				b->st[b->vfirst[v] + s] = B_FINISHED;
				b->t[b->vfirst[v] + s].attempt = rv->attempt[s];
			}
	}
	if (recover_metrics(b, e) < 0)
		goto out;
	pj = ckpt_replay_to_json(&plan);
	emit(b, json_pack("{s:s,s:s,s:o}", "event", "recovered", "log", b->logdir, "plan", pj ? pj : json_null()));
	r = 0;
out:
	ckpt_replay_release(&plan);
	ckpt_jdoc_free(avail);
	return r;
}

/* ---- the run */

static int
log_is_empty(const char *dir)
{
	char p[4200];
	struct stat sb;

	snprintf(p, sizeof p, "%s/events.0", dir);
	return stat(p, &sb) < 0;
}

static void
init_task(struct ckpt_bjob *b, size_t v, uint32_t s)
{
	struct ckpt_task *t = &b->t[b->vfirst[v] + s];

	t->job = &b->j;
	t->vi = v;
	t->sub = s;
	t->gi = b->vfirst[v] + s;
	t->v = &b->p->v[v];
	t->op = ckpt_op_def(b->p->v[v].op);
	ckpt_notify_init(&t->nt);
	pthread_mutex_init(&t->mmu, NULL);
}

/* Temporary files of partitions whose writer was killed (ckpt_atomic's NAME.tmp.XXXXXX). */
static void
clean_partdir(const struct ckpt_bjob *b)
{
	DIR *d = opendir(b->partdir);
	struct dirent *de;

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		char p[4200];

		if (strstr(de->d_name, ".tmp.") == NULL || de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof p, "%s/%s", b->partdir, de->d_name);
		unlink(p);
	}
	closedir(d);
}

static size_t
uf_find(size_t *up, size_t i)
{
	while (up[i] != i)
		i = up[i] = up[up[i]];
	return i;
}

/* Pipelined regions of subtasks (Flink's SchedulingPipelinedRegionComputeUtil: pipelined edges join)
 * and the queues of pipelined edges. */
static int
setup_regions(struct ckpt_bjob *b, struct ckpt_err *e)
{
	const struct ckpt_pipeline *p = b->p;

	b->region = ckpt_calloc(b->nt + 1, sizeof *b->region, e);
	b->ready = ckpt_calloc(b->nt + 1, 1, e);
	b->pqfirst = ckpt_calloc(p->ne + 1, sizeof *b->pqfirst, e);
	if (b->region == NULL || b->ready == NULL || b->pqfirst == NULL)
		return -1;
	for (size_t i = 0; i < b->nt; i++)
		b->region[i] = i;
	for (size_t k = 0; k < p->ne; k++) {
		b->pqfirst[k] = b->npq;
		if (!ckpt_bp_blocking(p, k))
			b->npq += p->v[p->e[k].target].parallelism;
	}
	if ((b->pq = ckpt_calloc(b->npq + 1, sizeof *b->pq, e)) == NULL)
		return -1;
	for (size_t i = 0; i < b->npq; i++)
		pthread_mutex_init(&b->pq[i].mu, NULL);
	for (size_t k = 0; k < p->ne; k++) {
		const struct ckpt_pl_edge *ed = &p->e[k];

		for (uint32_t c = 0; !ckpt_bp_blocking(p, k) && c < p->v[ed->target].parallelism; c++) {
			uint32_t lo, hi;

			ckpt_edge_inputs(p, ed, c, &lo, &hi);
			ckpt_bp_pq_of(b, k, c)->nprod = hi - lo;
			for (uint32_t i = lo; i < hi; i++) {
				size_t x = uf_find(b->region, b->vfirst[ed->source] + i);
				size_t y = uf_find(b->region, b->vfirst[ed->target] + c);

				b->region[x > y ? x : y] = x < y ? x : y;
			}
		}
	}
	for (size_t i = 0; i < b->nt; i++)
		b->region[i] = uf_find(b->region, i);
	return 0;
}

/* Partition files are named by the vertex id, encoded: a name too long for a file system is refused. */
static int
check_names(const struct ckpt_bjob *b, struct ckpt_err *e)
{
	for (size_t v = 0; v < b->p->nv; v++)
		if (ckpt_bp_has_partition(b->p, v) && ckpt_bp_encode_id(b->p->v[v].id, NULL, 0) > PART_NAME_MAX)
			return ckpt_err_set(e, CKPT_ERR_INPUT, "",
					    "vertex id \"%.40s...\" is too long for a partition file name", b->p->v[v].id);
	return 0;
}

static int
setup(struct ckpt_bjob *b, struct ckpt_pipeline *p, const struct ckpt_run_opts *o, struct ckpt_err *e)
{
	b->p = b->j.p = p;
	b->o = b->j.o = o;
	pthread_mutex_init(&b->j.cmu, NULL);
	pthread_mutex_init(&b->j.emu, NULL);
	ckpt_notify_init(&b->j.cnt);
	b->j.inbox_tail = &b->j.inbox;
	b->logdir = o->log ? o->log : p->batch_log ? p->batch_log : "job-events";
	b->partdir = o->partitions ? o->partitions : p->batch_partitions ? p->batch_partitions : "partitions";
	b->start_ms = b->last_snap_ms = ckpt_now_ms();
	b->vfirst = ckpt_calloc(p->nv + 1, sizeof *b->vfirst, e);
	if (b->vfirst == NULL)
		return -1;
	for (size_t v = 0; v < p->nv; v++)
		b->vfirst[v + 1] = b->vfirst[v] + p->v[v].parallelism;
	b->t = b->j.t = ckpt_calloc(b->vfirst[p->nv], sizeof *b->t, e);
	if (b->t == NULL)
		return -1;
	b->nt = b->j.nt = b->vfirst[p->nv]; /* from here on free_bjob destroys what init_task made */
	for (size_t v = 0; v < p->nv; v++)
		for (uint32_t s = 0; s < p->v[v].parallelism; s++)
			init_task(b, v, s);
	b->st = ckpt_calloc(b->nt, 1, e);
	b->done = ckpt_calloc(b->nt, 1, e);
	b->terr = ckpt_calloc(b->nt, sizeof *b->terr, e);
	b->inited = ckpt_calloc(p->nv, 1, e);
	b->unrecovered = ckpt_calloc(p->nv, 1, e);
	b->since_snap = ckpt_calloc(p->nv, 1, e);
	b->fail_fired = ckpt_calloc(p->nfail + 1, 1, e);
	b->rin = ckpt_calloc(b->nt + 1, sizeof *b->rin, e);
	b->rout = ckpt_calloc(b->nt + 1, sizeof *b->rout, e);
	b->ran = ckpt_calloc(b->nt + 1, 1, e);
	b->lost_from = ckpt_calloc(b->nt + 1, sizeof *b->lost_from, e);
	b->decided = ckpt_calloc(p->nv + 1, 1, e);
	b->shuffle_new = json_array();
	if (!b->st || !b->done || !b->terr || !b->inited || !b->unrecovered || !b->since_snap || !b->fail_fired ||
	    !b->shuffle_new || !b->rin || !b->rout || !b->ran ||
	    !b->lost_from || !b->decided)
		return -1;
	for (size_t v = 0; v < p->nv; v++)
		b->decided[v] = !p->v[v].auto_par;
	if (setup_regions(b, e) < 0 || check_names(b, e) < 0)
		return -1;
	if (mkdir(b->partdir, 0777) < 0 && errno != EEXIST)
		return ckpt_err_sys(e, b->partdir, "cannot create the partition directory");
	clean_partdir(b);
	if (!o->recover && !log_is_empty(b->logdir))
		return ckpt_err_set(e, CKPT_ERR_INPUT, b->logdir,
				    "the job event log is not empty (recover with --recover, or remove it)");
	if (o->recover && recover(b, e) < 0)
		return -1;
	b->w = ckpt_evwriter_open(b->logdir, o->recover ? CKPT_EVW_CUT_TORN : 0, e);
	return b->w ? 0 : -1;
}

static void
free_bjob(struct ckpt_bjob *b)
{
	for (size_t i = 0; b->t && i < b->nt; i++) {
		join_task(&b->t[i]);
		ckpt_notify_destroy(&b->t[i].nt);
		pthread_mutex_destroy(&b->t[i].mmu);
	}
	for (struct ckpt_msg *m = b->j.inbox; m != NULL;) {
		struct ckpt_msg *n = m->next;

		ckpt_engine_subtask_free(m->st);
		free(m);
		m = n;
	}
	ckpt_evwriter_abort(b->w);
	json_decref(b->shuffle_new);
	for (size_t i = 0; b->pq && i < b->npq; i++) {
		pthread_mutex_destroy(&b->pq[i].mu);
		free(b->pq[i].d);
	}
	free(b->pq);
	free(b->pqfirst);
	free(b->region);
	free(b->ready);
	free(b->t);
	free(b->vfirst);
	free(b->st);
	free(b->done);
	free(b->terr);
	free(b->inited);
	free(b->unrecovered);
	free(b->since_snap);
	free(b->fail_fired);
	free(b->rin);
	free(b->rout);
	free(b->ran);
	free(b->lost_from);
	free(b->decided);
	ckpt_notify_destroy(&b->j.cnt);
	pthread_mutex_destroy(&b->j.cmu);
	pthread_mutex_destroy(&b->j.emu);
}

/*
 * The whole job's records: each finished subtask once, with its last attempt,
 * kept by recovery or run now; the rate is this session's (its sinks' records
 * over its duration).
 */
static void
finished_event(struct ckpt_bjob *b, const char *state)
{
	int64_t ms = ckpt_now_ms() - b->start_ms;
	uint64_t sink = 0, source = 0, now = 0;

	for (size_t i = 0; i < b->nt; i++) {
		if (b->st[i] != B_FINISHED)
			continue;
		if (b->t[i].v->op == OP_SOURCE)
			source += b->rout[i];
		if (b->t[i].v->nout == 0) {
			sink += b->rin[i];
			now += b->ran[i] ? b->rin[i] : 0;
		}
	}
	emit(b, json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:i,s:i}", "event", "job_finished", "state", state, "records",
			  (json_int_t)sink, "source_records", (json_int_t)source, "duration_ms", (json_int_t)ms,
			  "records_per_second", (json_int_t)(ms > 0 ? now * 1000 / (uint64_t)ms : now), "restarts",
			  (json_int_t)b->restarts, "checkpoints", 0));
}

int
ckpt_batch_run(struct ckpt_pipeline *p, const struct ckpt_run_opts *o, struct ckpt_err *e)
{
	struct ckpt_bjob b = {0};
	const char *state = "FINISHED";
	int r = -1;

	if (!ckpt_batch_mode(p))
		return ckpt_err_set(e, CKPT_ERR_INPUT, "", "-L, --recover and -B need a pipeline in batch mode (blocking edges)");
	if (o->restore || o->savepoint || o->stop_after_ms || o->stop_after_cps || o->drain)
		/* a refusal, as Flink refuses savepoints of a batch job */
		return ckpt_err_set(e, CKPT_ERR_REFUSED, "", "batch mode takes no snapshot options (--restore, "
				    "--savepoint, --stop-after-ms, --stop-after-checkpoints, --drain)");
	if (setup(&b, p, o, e) < 0)
		goto out;
	for (;;) {
		unsigned seq = notify_prepare(&b.j.cnt);

		if (reap(&b, e) < 0) {
			state = "FAILED";
			break;
		}
		if (all_done(&b))
			break;
		if (o->cancel && *o->cancel) {
			state = "CANCELED";
			break;
		}
		if (start_ready(&b, e) < 0) {
			state = "FAILED";
			break;
		}
		ckpt_notify_wait(&b.j.cnt, seq, 100);
	}
	for (size_t i = 0; i < b.nt; i++)
		join_task(&b.t[i]);
	if (strcmp(state, "FAILED") != 0) {
		struct ckpt_evwriter *w = b.w;

		b.w = NULL;
		if (ckpt_evwriter_close(w, e) < 0)
			state = "FAILED";
	}
	finished_event(&b, state);
	if (strcmp(state, "FINISHED") == 0)
		r = 0;
	else if (strcmp(state, "CANCELED") == 0)
		r = ckpt_err_set(e, CKPT_ERR_REFUSED, "", "the job was cancelled");
out:
	free_bjob(&b);
	return r;
}
