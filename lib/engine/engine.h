/* engine.h: the engine layer (lib/engine/), the top of libckpt: ckpt-run's pipeline, buffers,
 * channels, tasks and coordinator, and its batch mode; a job owns all of them.  Uses every layer
 * below it (lib/README). */
#ifndef CKPT_ENGINE_H
#define CKPT_ENGINE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "base/base.h"
#include "graph/graph.h"
#include "model/model.h"
#include "snap/snap.h"
#include "redist/redist.h"
#include "evlog/evlog.h"

/* ---- the pipeline file (pipeline.c) */

enum ckpt_part_kind { PART_FORWARD, PART_RESCALE, PART_REBALANCE, PART_HASH, PART_BROADCAST };

enum ckpt_op_kind {
	OP_SOURCE, OP_MAP, OP_FILTER, OP_KEYED_SUM, OP_WINDOW, OP_BROADCAST_STATE, OP_FILE_SINK,
	OP_DISCARD_SINK, OP_NKINDS
};

struct ckpt_pl_params {
	int64_t records;         /* source: per split; 0 = unbounded */
	uint64_t keys;           /* source: distinct keys */
	int64_t delay_us;        /* map/filter/source: per-record delay (busy) */
	int64_t watermark_every; /* source: records between watermarks */
	int union_offsets;       /* source: offsets as union state */
	int64_t add;             /* map: added to each value */
	int64_t modulo;          /* filter: keep values not divisible by it */
	int64_t size_ms;         /* window: tumbling size */
	char *path;              /* file_sink: output directory */
	char *uid;               /* operator uid (default: vertex id) */
	int no_batch_snapshot;   /* source: its split coordinator cannot snapshot in batch mode */
};

struct ckpt_pl_vertex {
	char *id;
	enum ckpt_op_kind op;
	uint32_t parallelism, max_parallelism;
	int auto_par;     /* batch mode: parallelism "auto", decided from the input size (parallelism is the bound
			     until then, batch.c sets the decided one) */
	struct ckpt_pl_params prm;
	size_t *in, *out; /* edge indices */
	size_t nin, nout;
};

struct ckpt_pl_edge {
	size_t source, target;
	enum ckpt_part_kind part;
	enum ckpt_partition ptype;
};

struct ckpt_pl_failure {
	size_t vertex;
	uint32_t subtask;
	int64_t after_records;
	int lose_partition; /* batch mode: the subtask's blocking partition vanishes before it is first read */
	int closing;        /* test hook: the first stop-with-savepoint trigger finds the subtask closing */
};

struct ckpt_pipeline {
	struct ckpt_pl_vertex *v;
	size_t nv;
	struct ckpt_pl_edge *e;
	size_t ne;
	/* checkpointing */
	int64_t interval_ms; /* 0: off */
	int unaligned;
	int64_t aligned_timeout_ms, timeout_ms, min_pause_ms;
	uint32_t max_concurrent, tolerable_failures, retain;
	int after_finish;
	char *dir;
	/* failover */
	enum ckpt_failover_strategy strategy;
	uint32_t restart_limit;
	struct ckpt_pl_failure *fail;
	size_t nfail;
	/* network */
	uint32_t buffer_bytes, buffers_per_channel, floating_buffers, max_buffers_per_channel;
	int64_t buffer_timeout_ms;
	/* batch mode (batch.c): where the job event log and the blocking partitions go */
	char *batch_log, *batch_partitions;
	int64_t batch_min_pause_ms;
	int64_t auto_bytes_per_task;          /* batch.auto_parallelism: input bytes per subtask, */
	uint32_t auto_min, auto_max;          /* and the bounds of a decided parallelism */
	struct ckpt_graph *graph; /* the job graph for plans and failover (tasks updated live) */
};

const char *ckpt_pl_op_name(enum ckpt_op_kind k);
/* The producer subtasks [lo, hi) that consumer j of an edge reads (common.c). */
void ckpt_edge_inputs(const struct ckpt_pipeline *p, const struct ckpt_pl_edge *ed, uint32_t j, uint32_t *lo, uint32_t *hi);
const char *ckpt_pl_part_name(enum ckpt_part_kind k);

/* ---- stream elements, buffers and channels (channel.c) */

#define EL_RECORD 1
#define EL_WATERMARK 2
#define REC_SIZE 25 /* tag, key, value, timestamp: a record never spans buffers */
#define MAX_WATERMARK INT64_MAX

struct ckpt_rec {
	uint64_t key;
	int64_t value, ts;
};

/* One task's wake-up: an event count, so a waiter never misses a wake between check and sleep. */
struct ckpt_notify {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	atomic_uint seq;
	atomic_int waiters;
};

void ckpt_notify_init(struct ckpt_notify *n);
void ckpt_notify_destroy(struct ckpt_notify *n);
static inline unsigned notify_prepare(struct ckpt_notify *n) { return atomic_load(&n->seq); }
void ckpt_notify_wait(struct ckpt_notify *n, unsigned seq, int64_t timeout_ms);
void ckpt_notify_wake(struct ckpt_notify *n);

struct ckpt_gate;
struct ckpt_channel;

struct ckpt_buf {
	struct ckpt_buf *next;
	struct ckpt_channel *home_ch; /* exclusive buffer of this channel, or */
	struct ckpt_gate *home_gate;  /* a floating buffer of this gate */
	uint32_t len, nrec;
	unsigned char data[];
};

enum ckpt_ent_kind { ENT_BUFFER, ENT_BARRIER, ENT_CANCEL, ENT_END_OF_DATA, ENT_END_OF_PARTITION };

enum ckpt_bar_kind { BAR_CHECKPOINT, BAR_SAVEPOINT, BAR_SYNC_SAVEPOINT };

struct ckpt_barrier {
	int64_t id;
	int64_t ts_ms; /* trigger time at the coordinator */
	enum ckpt_bar_kind kind;
	int drain;     /* sync savepoint: stop with drain */
	int unaligned; /* room for issue 7 */
};

struct ckpt_entry {
	enum ckpt_ent_kind kind;
	struct ckpt_buf *b;      /* ENT_BUFFER */
	struct ckpt_barrier bar; /* ENT_BARRIER, ENT_CANCEL (id), ENT_END_OF_DATA (drain) */
};

/* A consumer's input gate (one per input edge): the floating buffers its channels share. */
struct ckpt_gate {
	pthread_mutex_t mu;
	struct ckpt_buf *free;
	size_t nfree;
	struct ckpt_channel **ch; /* its channels, to wake producers when a floating buffer returns */
	size_t nch;
};

/* One producer subtask to one consumer subtask: a bounded FIFO of entries and its credits. */
struct ckpt_channel {
	pthread_mutex_t mu;
	struct ckpt_entry *q;
	size_t cap, head, n;
	struct ckpt_buf *free; /* exclusive buffers not in use (the consumer's credits) */
	size_t nfree, inflight, max_inflight;
	struct ckpt_gate *gate;
	struct ckpt_task *prod, *cons;
	unsigned gen;          /* bumped on reset: a producer holding a buffer of an older one drops it */
	atomic_int eod_acked;  /* the consumer consumed EndOfData */
	uint64_t lost_records; /* records dropped by resets (approximate failover) */
	int eod_sent, eod_drain, eop_sent; /* replayed to a consumer restarted alone (approximate failover) */
	size_t nprio; /* priority events at the head of q (unaligned barriers, unaligned.c) */
};

int ckpt_channel_init(struct ckpt_channel *c, struct ckpt_gate *g, size_t exclusive, size_t max_inflight,
		 size_t bufsize, struct ckpt_err *e);
void ckpt_channel_destroy(struct ckpt_channel *c);
int ckpt_gate_init(struct ckpt_gate *g, size_t floating, size_t bufsize, struct ckpt_err *e);
void ckpt_gate_destroy(struct ckpt_gate *g);
/* Producer: a free buffer (exclusive first, then floating), NULL if none now. */
struct ckpt_buf *ckpt_channel_take_buffer(struct ckpt_channel *c, unsigned *gen);
/* Producer: give back a buffer it took but never pushed. */
void ckpt_channel_return_unused(struct ckpt_channel *c, struct ckpt_buf *b);
/* Producer: append an entry; 0, or -1 when the queue is full (events only; buffers always fit). */
int ckpt_channel_push(struct ckpt_channel *c, const struct ckpt_entry *en, unsigned gen);
/* Consumer: pop the head entry into *en; 0 when empty. */
int ckpt_channel_pop(struct ckpt_channel *c, struct ckpt_entry *en);
int ckpt_channel_peek_kind(struct ckpt_channel *c);
/* Consumer: give a buffer back (a credit to its producer). */
void ckpt_buffer_release(struct ckpt_buf *b);
/* Drop what is queued (with keep_end, EndOfData/EndOfPartition already sent are queued again); records dropped. */
uint64_t ckpt_channel_reset(struct ckpt_channel *c, int keep_end);

/* ---- tasks (task.c, output.c, barrier.c) */

/* Producer side of one channel. */
struct ckpt_outch {
	struct ckpt_channel *ch;
	struct ckpt_buf *cur;
	unsigned gen;
	uint32_t cap; /* buffer bytes */
};

/* One output edge of a task: its channels, in consumer-subtask order, and its partitioner. */
struct ckpt_outpart {
	enum ckpt_part_kind part;
	struct ckpt_outch *oc;
	size_t noc;
	uint32_t lo;   /* first consumer subtask (forward, rescale) */
	uint32_t rr;   /* round robin position */
	uint32_t maxp; /* consumer max parallelism (hash) */
};

struct ckpt_inch {
	struct ckpt_channel *ch;
	size_t gate;
	int blocked, aligned, eod, eop;
	int eod_drain;
	int64_t wm;
};

enum ckpt_task_phase { PH_RUNNING, PH_ENDED, PH_DONE };

/* Coordinator-to-task mail: triggers are queued, notifications are counters. */
#define MAIL_CAP 16

struct ckpt_task;
struct ckpt_job;

/* A built-in operator: its hooks, called on the task thread. */
struct ckpt_opdef {
	int (*open)(struct ckpt_task *t, const struct ckpt_subtask *restored, struct ckpt_err *e);
	void (*record)(struct ckpt_task *t, const struct ckpt_rec *r, size_t input);
	void (*watermark)(struct ckpt_task *t, int64_t wm);
	void (*finish)(struct ckpt_task *t);
	/* fill st's operator and keyed state (st->index is set) */
	int (*snapshot)(struct ckpt_task *t, int64_t id, struct ckpt_subtask *st, struct ckpt_err *e);
	void (*complete)(struct ckpt_task *t, int64_t id);
	void (*close)(struct ckpt_task *t);   /* after the final checkpoint completed */
	void (*dispose)(struct ckpt_task *t); /* free the operator's memory, whatever happened */
	int (*emit_some)(struct ckpt_task *t); /* sources: emit a batch; 1 when the input ended */
};

const struct ckpt_opdef *ckpt_op_def(enum ckpt_op_kind k);

/* What the barrier handlers (barrier.c, unaligned.c) call back in the task (task.c fills it in, so they
 * do not call up into it): snapshot and forward a barrier, decline one, read the mail, process elements. */
struct ckpt_task_ops {
	void (*checkpoint)(struct ckpt_task *t, const struct ckpt_barrier *b, int64_t align_ns);
	void (*decline)(struct ckpt_task *t, int64_t id, const char *reason);
	void (*handle_mail)(struct ckpt_task *t);
	void (*process_elems)(struct ckpt_task *t, size_t ch, const unsigned char *d, size_t len);
};

struct ckpt_task {
	struct ckpt_job *job;
	size_t vi;        /* vertex index */
	uint32_t sub;     /* subtask index */
	size_t gi;        /* global index */
	const struct ckpt_pl_vertex *v;
	const struct ckpt_opdef *op;
	const struct ckpt_task_ops *ops; /* set by ckpt_task_main */
	void *ost;        /* operator state */
	pthread_t th;
	int started;
	struct ckpt_notify nt;
	struct ckpt_inch *in;
	size_t nin;
	struct ckpt_gate *gates;
	size_t ngates;
	struct ckpt_outpart *out;
	size_t nout;
	size_t rr_in;     /* next input channel to look at */
	/* mail from the coordinator */
	pthread_mutex_t mmu;
	struct ckpt_barrier mail[MAIL_CAP];
	size_t mhead, mn;
	int mail_closed;        /* the task is closing: no more triggers (CHECKPOINT_DECLINED_TASK_CLOSING) */
	atomic_llong completed; /* newest checkpoint notified complete */
	atomic_llong aborted;   /* newest checkpoint notified aborted */
	int64_t last_aborted;
	atomic_int cancel;
	/* lifecycle */
	enum ckpt_task_phase phase;
	int finished_ops;       /* finish() called */
	int64_t final_min_id;   /* first checkpoint performed after end of data (-1 none yet) */
	int64_t sync_savepoint; /* stop-with-savepoint id (-1 none) */
	int stop_drain;
	int64_t last_notified;
	int64_t wm_out;         /* last watermark emitted */
	uint64_t records_in, records_out, counted;
	int64_t wm_in;          /* combined input watermark */
	int64_t fail_after;     /* injected failure: after this many records (-1 none) */
	size_t fail_index;
	int failed;
	int64_t last_flush_ms;
	int64_t delay_debt_ns;  /* per-record delays owed (operators' delay_us) */
	/* barrier handler (aligned) */
	int64_t cur_id, done_id;
	struct ckpt_barrier pending;
	size_t naligned, target, nopen;
	int64_t align_start_ns;
	int64_t last_cp_id;
	/* restore */
	struct ckpt_subtask *restored;
	int restoring;         /* the operator is in the restore snapshot (restored may still be NULL) */
	int deployed_finished; /* fully finished operator on restore: send EndOfData and EndOfPartition only */
	uint32_t attempt;
	struct ckpt_bout *bout;      /* batch mode: the blocking partitions this subtask writes (batch.c) */
	/* unaligned checkpoints (unaligned.c) */
	atomic_int prio;         /* a barrier was pushed to one of our inputs, or the aligned timeout passed: look */
	struct ckpt_ua *ua;           /* the unaligned checkpoint whose in-flight input is being captured */
	int ua_unaligned;        /* the pending checkpoint switched to (or started) unaligned */
	int64_t ua_deadline_ms;  /* aligned timeout of the pending checkpoint (0 none) */
	const unsigned char *cur_d; /* the buffer being processed: its rest is channel state at a snapshot */
	size_t cur_len, cur_off, cur_ch;
	int in_buf, replaying;
	int64_t ua_room;         /* records until the next look (a cheap per-record count down) */
	int64_t ua_avail;        /* reserved room on every output beyond ua_room (INT64_MAX: no outputs) */
};

void *ckpt_task_main(void *arg);
void ckpt_task_handle_mail(struct ckpt_task *t);
/* Process the stream elements d[0..len) as if read from input channel ch. */
void ckpt_task_process_elems(struct ckpt_task *t, size_t ch, const unsigned char *d, size_t len);
/* Unaligned: room for one element on every output without waiting: how many fit; 0 when some output has no credit. */
int64_t ckpt_task_reserve_outputs(struct ckpt_task *t);
/* Write one serialized element to an output channel (restore of output channel state). */
void ckpt_task_put_raw(struct ckpt_task *t, struct ckpt_outch *oc, const unsigned char *elem);
/* The subtask fails (why is the reason the coordinator gets); the injected failure fires (common.c). */
void ckpt_task_fail(struct ckpt_task *t, const char *why);
void ckpt_task_fail_injected(struct ckpt_task *t);
/* Counted per record processed (or emitted, for sources): the injected failure fires here. */
static inline void
task_count_record(struct ckpt_task *t)
{
	if (t->fail_after > 0 && (int64_t)++t->counted >= t->fail_after)
		ckpt_task_fail_injected(t);
}
void ckpt_task_end_of_data(struct ckpt_task *t, int drain);
/* Emit a record (or the watermark) through every output edge; blocks under back-pressure. */
void ckpt_task_emit(struct ckpt_task *t, const struct ckpt_rec *r);
void ckpt_task_emit_watermark(struct ckpt_task *t, int64_t wm);
void ckpt_task_broadcast_event(struct ckpt_task *t, const struct ckpt_entry *en);
/* Flush, then push(t, k, i, arg) one event to every output channel, retried while its slots are full. */
void ckpt_task_push_all(struct ckpt_task *t, int (*push)(struct ckpt_task *t, size_t k, size_t i, void *arg), void *arg);
void ckpt_task_flush(struct ckpt_task *t);
void ckpt_task_release_outputs(struct ckpt_task *t);
/* Aligned barrier handling (barrier.c). */
void ckpt_bh_on_barrier(struct ckpt_task *t, const struct ckpt_barrier *b, size_t ch, int rpc);
void ckpt_bh_on_cancel(struct ckpt_task *t, int64_t id);
void ckpt_bh_on_end_of_partition(struct ckpt_task *t, size_t ch);
void ckpt_bh_rpc_trigger(struct ckpt_task *t, const struct ckpt_barrier *b);
void ckpt_bh_on_abort_notified(struct ckpt_task *t, int64_t id);
/* Unaligned checkpoints and the aligned timeout (unaligned.c): the handler used when mode is unaligned. */
void ckpt_ua_on_barrier(struct ckpt_task *t, const struct ckpt_barrier *b, size_t ch, int rpc);
void ckpt_ua_on_cancel(struct ckpt_task *t, int64_t id);
void ckpt_ua_on_end_of_partition(struct ckpt_task *t, size_t ch);
void ckpt_ua_on_abort_notified(struct ckpt_task *t, int64_t id);
void ckpt_ua_checkpoint(struct ckpt_task *t, const struct ckpt_barrier *b, int64_t align_ns);
void ckpt_ua_on_buffer(struct ckpt_task *t, size_t ch, const struct ckpt_buf *b);
void ckpt_ua_poll(struct ckpt_task *t);
/* At most this many records go by between two looks at the outputs' room: a run of records with one relaxed
 * load each (a priority event ends the run; sources get none, their triggers are mail); the aligned timeout
 * is a timer that ends the run the same way when it passes (coordinator.c), not a look at the clock. */
#define UA_LOOK_EVERY 1024
/* A look, at a record boundary: priority events (the aligned timeout's timer among them), then room on every
 * output (mail while waiting); sets ua_room, the records that may go by before the next look (at least 1). */
int ckpt_ua_boundary(struct ckpt_task *t);
int64_t ckpt_ua_wait_ms(struct ckpt_task *t, int64_t ms);
int ckpt_ua_restore(struct ckpt_task *t, struct ckpt_err *e);
void ckpt_ua_release(struct ckpt_task *t);
/* Snapshot the task and forward the barrier (task.c). */
void ckpt_task_checkpoint(struct ckpt_task *t, const struct ckpt_barrier *b, int64_t align_ns);
void ckpt_task_decline(struct ckpt_task *t, int64_t id, const char *reason);
/* The clock, monotonic (inline: every file of the engine reads it, some per record or buffer). */
static inline int64_t
ckpt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline int64_t
ckpt_now_ms(void)
{
	return ckpt_now_ns() / 1000000;
}

/* Building and freeing the snapshot of a subtask (snapbuild.c). */
int ckpt_st_add_opstate(struct ckpt_subtask *st, const char *name, enum ckpt_mode mode, struct ckpt_err *e);
int ckpt_st_add_entry(struct ckpt_subtask *st, size_t opi, const void *p, size_t len, struct ckpt_err *e);
int ckpt_st_add_kv(struct ckpt_subtask *st, const char *state, uint32_t kg, const char *key, const char *val,
	      struct ckpt_err *e);
void ckpt_engine_subtask_release(struct ckpt_subtask *st);
void ckpt_engine_subtask_free(struct ckpt_subtask *st);

/* the key group of a record's key (the engine's own hash; ckpt_key_group_range is Flink's); inline: the
 * hash partitioners (output.c, partition.c) call it per record */
static inline uint32_t
ckpt_key_group_of(uint64_t key, uint32_t maxp)
{
	return (uint32_t)(ckpt_xxh3(&key, sizeof key) % maxp);
}

/* ---- the job and its coordinator (job.c, coordinator.c) */

enum ckpt_msg_kind { MSG_STATE, MSG_ACK, MSG_DECLINE, MSG_END_OF_DATA, MSG_FAILED };

struct ckpt_msg {
	struct ckpt_msg *next;
	enum ckpt_msg_kind kind;
	size_t task;
	uint32_t attempt;
	int64_t id;
	enum ckpt_exec_state state;
	struct ckpt_subtask *st; /* ACK: owned by the message */
	int64_t align_ms;
	uint64_t persisted;
	int ended; /* ACK: the task had ended its input: this checkpoint may be its final one */
	char reason[160];
};

struct ckpt_pending_cp {
	int64_t id;
	int64_t start_ms;
	struct ckpt_barrier bar;
	struct ckpt_bits *wait;  /* per vertex, subtasks still to ack */
	size_t nwait;
	struct ckpt_subtask **acks; /* per global task */
	unsigned char *finished;    /* per global task: FINISHED at trigger */
	unsigned char *ended;       /* per global task: acknowledged after the end of its input */
	unsigned char *fully;       /* per vertex */
	int64_t align_ms;
	uint64_t persisted;
	int active;
	int delivered;    /* the triggers are in the tasks' mailboxes (before: nothing happened in the tasks) */
	int timer_fired;  /* the aligned timeout passed and the aligning tasks were told to look (unaligned.c) */
};

struct ckpt_job {
	struct ckpt_pipeline *p;
	const struct ckpt_run_opts *o;
	struct ckpt_task *t;
	size_t nt;
	size_t *vfirst;        /* first global task index of each vertex */
	struct ckpt_channel **chs;  /* all channels */
	size_t nch;
	struct ckpt_gate **gts;
	size_t ngt;
	/* coordinator inbox */
	pthread_mutex_t cmu;
	struct ckpt_notify cnt;
	struct ckpt_msg *inbox, **inbox_tail;
	unsigned char *state;  /* per global task: enum ckpt_exec_state (coordinator's view) */
	unsigned char *eod;    /* per global task: reached end of data */
	uint64_t state_gen;    /* counts the changes of state[]: a plan of the same states is the same plan */
	/* checkpoints */
	int64_t next_id;
	struct ckpt_pending_cp *pend;
	size_t npend;
	int64_t last_complete_ms, next_trigger_ms;
	uint32_t failures;     /* consecutive checkpoint failures */
	char *latest;          /* newest completed checkpoint's archive */
	int64_t latest_id;
	char **retained;
	size_t nretained, retcap;
	int64_t savepoint_id;  /* pending stop-with-savepoint (-1 none) */
	int stop_requested, stop_drain;
	int64_t stop_declined_ms; /* since when the stop's savepoint is declined (0: it is not) */
	uint64_t stop_declined_gen; /* state_gen at its last declined attempt (coordinator.c, tick_stop) */
	char stop_declined[1024]; /* why the plan declined it then */
	int64_t stop_at_ms;
	int stop_asked;        /* a stop-with-savepoint was asked for (-s, -n, the stop flag) */
	int stop_seen;         /* the value of *o->stop last acted on: each change is a new request */
	int64_t savepoints;    /* savepoints written */
	char stop_why[1200];   /* why the last stop-with-savepoint failed ("" none) */
	uint32_t restarts;
	size_t *fail_fired;    /* per failure spec: fired */
	atomic_ullong records; /* records emitted by sources */
	atomic_ullong sink_records;
	int64_t start_ms;
	const char *final_state;
	struct ckpt_snapshot *restore; /* snapshot tasks restore from (current attempt) */
	int64_t restore_id;
	struct ckpt_snapshot *src;     /* -r: the snapshot as read, */
	struct ckpt_redist *redist;    /* its redistribution onto the pipeline, */
	struct ckpt_snapshot *view;    /* and the result, which tasks restore from */
	struct ckpt_snapshot **old_restores; /* replaced ones, freed at the end (a task may still read one) */
	size_t nold;
	char *dir;             /* checkpoint directory */
	int64_t completed;     /* checkpoints completed */
	int final_fast;        /* the checkpoint after every task reached end of data was triggered (failover resets) */
	int final_covered;     /* the newest completed checkpoint was every task's final one (coordinator.c) */
	int test_close_race;   /* CKPT_TEST_CLOSE_RACE=1: test-only hold before the look at closing (task.c) */
	struct ckpt_err err;
	int fatal;
	pthread_mutex_t emu; /* serialises events */
	/* failover, which the coordinator calls back (job.c fills it in: ckpt_job_failover) */
	int (*failover)(struct ckpt_job *j, size_t task, const char *reason, struct ckpt_err *e);
};

/* Mail to the coordinator, the job's events, subtasks as JSON (common.c). */
void ckpt_job_post(struct ckpt_job *j, struct ckpt_msg *m);
struct ckpt_msg *ckpt_msg_new(enum ckpt_msg_kind k, const struct ckpt_task *t);
void ckpt_job_event(struct ckpt_job *j, json_t *ev);
json_t *ckpt_task_ref_json(const struct ckpt_job *j, size_t gi);
json_t *ckpt_subtask_sets_json(const struct ckpt_job *j, const struct ckpt_bits *sets);
/* Coordinator (coordinator.c). */
int ckpt_coord_tick(struct ckpt_job *j, int64_t now);
void ckpt_coord_handle(struct ckpt_job *j, struct ckpt_msg *m);
void ckpt_coord_task_finished(struct ckpt_job *j, size_t gi);
void ckpt_coord_abort_all(struct ckpt_job *j, const char *reason);
void ckpt_coord_request_stop(struct ckpt_job *j);
int64_t ckpt_coord_next_deadline(struct ckpt_job *j, int64_t now);
int ckpt_coord_trigger(struct ckpt_job *j, enum ckpt_bar_kind kind, int drain, const char **declined, struct ckpt_err *e);
void ckpt_pending_free(struct ckpt_job *j, struct ckpt_pending_cp *pc);
/* Failover (failover in job.c). */
int ckpt_job_failover(struct ckpt_job *j, size_t task, const char *reason, struct ckpt_err *e);
/* State of one subtask in the restore snapshot, loaded; NULL when none. */
struct ckpt_subtask *ckpt_job_restored_state(struct ckpt_job *j, struct ckpt_task *t, int *fully_finished,
					struct ckpt_err *e);

/* ---- batch mode (batch.c, partition.c): blocking edges, region by region, the job event log */

/* Does p run in batch mode (some edge blocking)? */
int ckpt_batch_mode(const struct ckpt_pipeline *p);
/* Vertex v writes a blocking partition (some output edge is blocking). */
int ckpt_bp_has_partition(const struct ckpt_pipeline *p, size_t v);
int ckpt_batch_run(struct ckpt_pipeline *p, const struct ckpt_run_opts *o, struct ckpt_err *e);
/* A record into t's blocking partitions. */
void ckpt_batch_emit(struct ckpt_task *t, const struct ckpt_rec *r);

#endif
