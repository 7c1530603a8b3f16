/* batch.h: what batch mode's two files share: the job, blocking partitions, queues of pipelined edges. */
#ifndef CKPT_ENGINE_BATCH_H
#define CKPT_ENGINE_BATCH_H

#include "engine.h"

#define PART_MAGIC "CKPTPRT1"
#define PART_REC 24                       /* key, value, timestamp */
#define PART_NAME_MAX 200 /* an encoded id longer than this is refused (NAME_MAX with ".SUB.tmp.XXXXXX") */
#define PART_LIMIT ((uint64_t)1 << 32)    /* a partition file larger than this is refused */

/* One section of a subtask's blocking output: the records for one consumer subtask of one edge. */
struct ckpt_bsec {
	unsigned char *d;
	size_t n, cap;
};

/* The blocking partition a subtask writes: sections first[q] + consumer, per output edge q. */
struct ckpt_bout {
	struct ckpt_bsec *sec;
	size_t *first;
	uint32_t *rr;
	size_t nsec;
	int nomem;
};

/*
 * A pipelined edge inside a region, to one consumer subtask: the records of
 * all its producers in arrival order, bounded (a producer waits for room), and
 * how many producers ended.  Producer and consumer belong to one pipelined
 * region, so they start, fail and restart together.
 */
struct ckpt_pq {
	pthread_mutex_t mu;
	unsigned char *d;
	size_t n, cap;
	uint32_t ended, nprod;
};

#define PQ_LIMIT (4096 * PART_REC) /* bytes queued before a producer waits */

enum { B_PENDING, B_RUNNING, B_FINISHED, B_ABSENT /* beyond a decided parallelism */ };

struct ckpt_bjob {
	struct ckpt_job j; /* first: what operators reach through t->job */
	struct ckpt_pipeline *p;
	const struct ckpt_run_opts *o;
	struct ckpt_task *t;
	size_t nt, *vfirst;
	struct ckpt_pq *pq;           /* queues of pipelined edges: pqfirst[k] + consumer subtask */
	size_t *pqfirst, npq;
	size_t *region;          /* per task: the first task of its pipelined region */
	unsigned char *ready;    /* per task, scratch of start_ready */
	unsigned char *st;       /* per task: B_* */
	unsigned char *done;     /* per task: its thread ended (1 ok, 2 error); under j.cmu */
	struct ckpt_err *terr;   /* per task: why its thread failed */
	unsigned char *inited;   /* per vertex: vertex_initialized is in the log */
	unsigned char *unrecovered;  /* per vertex: from the replay (a restart of one restarts all) */
	unsigned char *since_snap;   /* per vertex: subtasks finished since the last snapshot */
	json_t *shuffle_new;     /* partitions registered since the last snapshot */
	struct ckpt_evwriter *w;
	const char *logdir, *partdir;
	int64_t last_snap_ms, start_ms;
	uint32_t restarts;
	unsigned char *fail_fired;
	uint64_t *rin, *rout;    /* per task: records read and written by its finished attempt */
	unsigned char *ran;      /* per task: finished in this session (not kept by recovery) */
	size_t *lost_from;       /* per task: 1 + the producer task whose partition it found gone, or 0 */
	unsigned char *decided;  /* per vertex: its parallelism is known (not "auto", or decided) */
};

/* ---- partition.c: the data side */

/* Edge k is a blocking exchange. */
int ckpt_bp_blocking(const struct ckpt_pipeline *p, size_t k);
/* A vertex id percent-encoded for a file name into out (size bytes); the encoded length. */
size_t ckpt_bp_encode_id(const char *id, char *out, size_t size);
/* The path of subtask sub of vertex v's blocking partition. */
void ckpt_bp_part_path(const struct ckpt_bjob *b, size_t v, uint32_t sub, char *out, size_t size);
/* The queue of pipelined edge k to consumer subtask c. */
struct ckpt_pq *ckpt_bp_pq_of(struct ckpt_bjob *b, size_t k, uint32_t c);
/* Before t (re)starts: its pipelined inputs empty, none of their producers ended. */
void ckpt_bp_pq_reset_inputs(struct ckpt_bjob *b, struct ckpt_task *t);
/* A whole blocking partition file, checked; a missing or damaged one is an error. */
int ckpt_bp_read_partition(const char *path, unsigned char **d, size_t *len, struct ckpt_err *e);
/* The thread of one batch subtask: run it, then tell the scheduler how it ended. */
void *ckpt_bp_task_main(void *arg);

#endif
