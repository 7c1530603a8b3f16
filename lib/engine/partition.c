/*
 * partition.c: batch mode's data side: blocking partitions on disk, pipelined queues inside a
 * region, one subtask's run (the scheduler, log and recovery: batch.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch.h"

int
ckpt_batch_mode(const struct ckpt_pipeline *p)
{
	for (size_t k = 0; k < p->ne; k++)
		if (p->e[k].ptype == CKPT_BLOCKING)
			return 1;
	return 0;
}

int
ckpt_bp_blocking(const struct ckpt_pipeline *p, size_t k)
{
	return p->e[k].ptype == CKPT_BLOCKING;
}

/* Does vertex v write a blocking partition (some output edge blocking)? */
int
ckpt_bp_has_partition(const struct ckpt_pipeline *p, size_t v)
{
	for (size_t q = 0; q < p->v[v].nout; q++)
		if (ckpt_bp_blocking(p, p->v[v].out[q]))
			return 1;
	return 0;
}

/*
 * Subpartitions of edge k: one per consumer subtask, or, into a vertex whose
 * parallelism is decided later, one per key group (hash, rebalance) or one
 * (broadcast), of which each consumer subtask reads a range, as Flink's
 * dynamic graphs do.
 */
static uint32_t
nsub(const struct ckpt_pipeline *p, size_t k)
{
	const struct ckpt_pl_vertex *t = &p->v[p->e[k].target];

	if (!t->auto_par)
		return t->parallelism;
	return p->e[k].part == PART_BROADCAST ? 1 : t->max_parallelism;
}

/* The subpartitions [*lo, *hi) of edge k that consumer subtask j reads. */
static void
sub_range(const struct ckpt_pipeline *p, size_t k, uint32_t j, uint32_t *lo, uint32_t *hi)
{
	const struct ckpt_pl_vertex *t = &p->v[p->e[k].target];
	uint32_t first, last;

	if (!t->auto_par) {
		*lo = j;
		*hi = j + 1;
	} else if (p->e[k].part == PART_BROADCAST) {
		*lo = 0;
		*hi = 1;
	} else {
		ckpt_key_group_range(t->max_parallelism, t->parallelism, j, &first, &last);
		*lo = first;
		*hi = last + 1;
	}
}

/* ---- blocking partitions */


/* The vertex id as a file name: bytes other than [A-Za-z0-9_-] percent-encoded ("a/.." is "a%2F%2E%2E"). */
size_t
ckpt_bp_encode_id(const char *id, char *out, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	for (const unsigned char *c = (const unsigned char *)id; *c; c++) {
		int plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
			    *c == '_' || *c == '-';

		if (n + 4 <= size) {
			if (plain)
				out[n] = (char)*c;
			else {
				out[n] = '%';
				out[n + 1] = hex[*c >> 4];
				out[n + 2] = hex[*c & 15];
			}
		}
		n += plain ? 1 : 3;
	}
	if (size > 0)
		out[n < size ? n : size - 1] = '\0';
	return n;
}

void
ckpt_bp_part_path(const struct ckpt_bjob *b, size_t v, uint32_t sub, char *out, size_t size)
{
	char name[3 * PART_NAME_MAX + 4];

	ckpt_bp_encode_id(b->p->v[v].id, name, sizeof name);
	snprintf(out, size, "%s/%s.%u", b->partdir, name, sub);
}

static int
bout_init(struct ckpt_bjob *b, struct ckpt_task *t, struct ckpt_err *e)
{
	struct ckpt_bout *o;

	if (t->v->nout == 0)
		return 0;
	o = ckpt_calloc(1, sizeof *o, e);
	if (o == NULL)
		return -1;
	t->bout = o;
	o->first = ckpt_calloc(t->v->nout + 1, sizeof *o->first, e);
	o->rr = ckpt_calloc(t->v->nout + 1, sizeof *o->rr, e);
	if (o->first == NULL || o->rr == NULL)
		return -1;
	for (size_t q = 0; q < t->v->nout; q++) {
		const struct ckpt_pl_edge *ed = &b->p->e[t->v->out[q]];
		uint32_t T = nsub(b->p, t->v->out[q]), lo, hi;

		o->first[q] = o->nsec;
		o->nsec += T;
		if (ed->part == PART_REBALANCE)
			o->rr[q] = t->sub % T;
		else if (ed->part == PART_RESCALE) {
			ckpt_pointwise_outputs(t->v->parallelism, T, t->sub, &lo, &hi);
			o->rr[q] = t->sub % (hi - lo);
		}
	}
	o->first[t->v->nout] = o->nsec;
	o->sec = ckpt_calloc(o->nsec + 1, sizeof *o->sec, e);
	return o->sec ? 0 : -1;
}

static void
bout_free(struct ckpt_task *t)
{
	struct ckpt_bout *o = t->bout;

	if (o == NULL)
		return;
	for (size_t i = 0; o->sec && i < o->nsec; i++)
		free(o->sec[i].d);
	free(o->sec);
	free(o->first);
	free(o->rr);
	free(o);
	t->bout = NULL;
}

static void
sec_add(struct ckpt_bout *o, size_t i, const struct ckpt_rec *r)
{
	struct ckpt_bsec *s = &o->sec[i];

	if (s->n + PART_REC > s->cap && ckpt_grow(&s->d, &s->cap, s->n + PART_REC, 1, 4096, NULL) < 0) {
		o->nomem = 1;
		return;
	}
	ckpt_store_be(s->d + s->n, r->key, 8);
	ckpt_store_be(s->d + s->n + 8, (uint64_t)r->value, 8);
	ckpt_store_be(s->d + s->n + 16, (uint64_t)r->ts, 8);
	s->n += PART_REC;
}

/* The partitioners of output.c, into sections instead of channels. */
/* ---- pipelined edges inside a region: bounded queues between threads */

struct ckpt_pq *
ckpt_bp_pq_of(struct ckpt_bjob *b, size_t k, uint32_t c)
{
	return &b->pq[b->pqfirst[k] + c];
}

/* A record to consumer c over pipelined edge k; waits while the queue is full (until cancelled). */
static void
pq_put(struct ckpt_bjob *b, struct ckpt_task *t, size_t k, uint32_t c, const struct ckpt_rec *r)
{
	struct ckpt_pq *q = ckpt_bp_pq_of(b, k, c);
	struct ckpt_task *ct = &b->t[b->vfirst[b->p->e[k].target] + c];
	int wake;

	for (;;) {
		unsigned seq = notify_prepare(&t->nt);

		pthread_mutex_lock(&q->mu);
		if (q->n < PQ_LIMIT)
			break;
		pthread_mutex_unlock(&q->mu);
		if (atomic_load(&t->cancel))
			return;
		ckpt_notify_wait(&t->nt, seq, 100);
	}
	if (q->n + PART_REC > q->cap && ckpt_grow(&q->d, &q->cap, q->n + PART_REC, 1, 4096, NULL) < 0) {
		pthread_mutex_unlock(&q->mu);
		t->bout->nomem = 1;
		atomic_store(&t->cancel, 1);
		return;
	}
	ckpt_store_be(q->d + q->n, r->key, 8);
	ckpt_store_be(q->d + q->n + 8, (uint64_t)r->value, 8);
	ckpt_store_be(q->d + q->n + 16, (uint64_t)r->ts, 8);
	wake = q->n == 0;
	q->n += PART_REC;
	pthread_mutex_unlock(&q->mu);
	if (wake)
		ckpt_notify_wake(&ct->nt);
}

/* t ended: each consumer of its pipelined edges counts one more producer done. */
static void
pq_end(struct ckpt_bjob *b, struct ckpt_task *t)
{
	for (size_t q = 0; q < t->v->nout; q++) {
		size_t k = t->v->out[q];
		const struct ckpt_pl_edge *ed = &b->p->e[k];

		if (ckpt_bp_blocking(b->p, k))
			continue;
		for (uint32_t c = 0; c < b->p->v[ed->target].parallelism; c++) {
			struct ckpt_pq *pq = ckpt_bp_pq_of(b, k, c);
			uint32_t lo, hi;

			ckpt_edge_inputs(b->p, ed, c, &lo, &hi);
			if (t->sub < lo || t->sub >= hi)
				continue;
			pthread_mutex_lock(&pq->mu);
			pq->ended++;
			pthread_mutex_unlock(&pq->mu);
			ckpt_notify_wake(&b->t[b->vfirst[ed->target] + c].nt);
		}
	}
}

/* Before t (re)starts: its pipelined inputs are empty and none of their producers ended. */
void
ckpt_bp_pq_reset_inputs(struct ckpt_bjob *b, struct ckpt_task *t)
{
	for (size_t g = 0; g < t->v->nin; g++) {
		struct ckpt_pq *q;

		if (ckpt_bp_blocking(b->p, t->v->in[g]))
			continue;
		q = ckpt_bp_pq_of(b, t->v->in[g], t->sub);
		pthread_mutex_lock(&q->mu);
		q->n = 0;
		q->ended = 0;
		pthread_mutex_unlock(&q->mu);
	}
}

/* The partitioners of output.c, into sections (blocking edges) or queues (pipelined ones). */
static void
route(struct ckpt_task *t, size_t q, const struct ckpt_rec *r,
      void (*put)(struct ckpt_task *, size_t, uint32_t, const struct ckpt_rec *))
{
	struct ckpt_bout *o = t->bout;
	const struct ckpt_pipeline *p = t->job->p;
	const struct ckpt_pl_edge *ed = &p->e[t->v->out[q]];
	uint32_t T = nsub(p, t->v->out[q]), lo, hi;

	switch (ed->part) {
	case PART_FORWARD:
		put(t, q, t->sub, r);
		break;
	case PART_RESCALE:
		ckpt_pointwise_outputs(t->v->parallelism, T, t->sub, &lo, &hi);
		put(t, q, lo + o->rr[q], r);
		o->rr[q] = (o->rr[q] + 1) % (hi - lo);
		break;
	case PART_REBALANCE:
		put(t, q, o->rr[q], r);
		o->rr[q] = (o->rr[q] + 1) % T;
		break;
	case PART_HASH: {
		uint32_t maxp = p->v[ed->target].max_parallelism, kg = ckpt_key_group_of(r->key, maxp);

		put(t, q, p->v[ed->target].auto_par ? kg : ckpt_subtask_of_key_group(kg, maxp, T), r);
		break;
	}
	case PART_BROADCAST:
		for (uint32_t c = 0; c < T; c++)
			put(t, q, c, r);
		break;
	}
}

static void
put_section(struct ckpt_task *t, size_t q, uint32_t c, const struct ckpt_rec *r)
{
	sec_add(t->bout, t->bout->first[q] + c, r);
}

static void
put_queue(struct ckpt_task *t, size_t q, uint32_t c, const struct ckpt_rec *r)
{
	pq_put((struct ckpt_bjob *)t->job, t, t->v->out[q], c, r);
}

void
ckpt_batch_emit(struct ckpt_task *t, const struct ckpt_rec *r)
{
	const struct ckpt_pipeline *p = t->job->p;

	for (size_t q = 0; q < t->v->nout && !atomic_load(&t->cancel); q++)
		route(t, q, r, ckpt_bp_blocking(p, t->v->out[q]) ? put_section : put_queue);
	t->records_out++;
}

/*
 * The file: "CKPTPRT1", u64 number of sections, per section u64 edge, u64
 * consumer subtask, u64 bytes and the records (u64 key, value, timestamp),
 * then the XXH3-64 of everything before; integers big-endian.  Written whole
 * or not at all.
 */
static int
write_partition(struct ckpt_bjob *b, struct ckpt_task *t, struct ckpt_err *e)
{
	struct ckpt_bout *o = t->bout;
	size_t len = 16 + 8, k = 16;
	unsigned char *d;
	struct ckpt_atomic *a;
	char path[4200];
	size_t nsec = 0;
	int r = -1;

	if (o->nomem)
		return ckpt_err_set(e, CKPT_ERR_NOMEM, t->v->id, "out of memory for a blocking partition");
	for (size_t q = 0; q < t->v->nout; q++)
		for (size_t i = o->first[q]; ckpt_bp_blocking(b->p, t->v->out[q]) && i < o->first[q + 1]; i++) {
			len += 24 + o->sec[i].n;
			nsec++;
		}
	if ((d = malloc(len)) == NULL)
		return ckpt_err_set(e, CKPT_ERR_NOMEM, t->v->id, "out of memory for a blocking partition");
	memcpy(d, PART_MAGIC, 8);
	ckpt_store_be(d + 8, nsec, 8);
	for (size_t q = 0; q < t->v->nout; q++)
		for (size_t i = o->first[q]; ckpt_bp_blocking(b->p, t->v->out[q]) && i < o->first[q + 1]; i++) {
			ckpt_store_be(d + k, t->v->out[q], 8);
			ckpt_store_be(d + k + 8, i - o->first[q], 8);
			ckpt_store_be(d + k + 16, o->sec[i].n, 8);
			if (o->sec[i].n)
				memcpy(d + k + 24, o->sec[i].d, o->sec[i].n);
			k += 24 + o->sec[i].n;
		}
	ckpt_store_be(d + k, ckpt_xxh3(d, k), 8);
	ckpt_bp_part_path(b, t->vi, t->sub, path, sizeof path);
	if ((a = ckpt_atomic_open(path, e)) == NULL)
		goto out;
	if (fwrite(d, 1, len, ckpt_atomic_file(a)) != len) {
		ckpt_atomic_abort(a);
		ckpt_err_sys(e, path, "cannot write the partition");
		goto out;
	}
	r = ckpt_atomic_commit(a, e);
out:
	free(d);
	return r;
}

/* Read and check a whole partition file; *d (malloc'd) and *len. */
int
ckpt_bp_read_partition(const char *path, unsigned char **d, size_t *len, struct ckpt_err *e)
{
	FILE *f = fopen(path, "rb");
	struct stat sb;
	int r = -1;

	*d = NULL;
	if (f == NULL)
		return ckpt_err_sys(e, path, "cannot open the blocking partition");
	if (fstat(fileno(f), &sb) < 0 || sb.st_size < 24 || (uint64_t)sb.st_size > PART_LIMIT) {
		ckpt_err_set(e, CKPT_ERR_INPUT, path, "not a blocking partition");
		goto out;
	}
	*len = (size_t)sb.st_size;
	if ((*d = malloc(*len)) == NULL) {
		ckpt_err_nomem(e, path);
		goto out;
	}
	if (fread(*d, 1, *len, f) != *len) {
		ckpt_err_sys(e, path, "cannot read the blocking partition");
		goto out;
	}
	if (memcmp(*d, PART_MAGIC, 8) != 0 || ckpt_be64(*d + *len - 8) != ckpt_xxh3(*d, *len - 8)) {
		ckpt_err_set(e, CKPT_ERR_INPUT, path, "blocking partition is corrupt (checksum mismatch)");
		goto out;
	}
	r = 0;
out:
	if (r < 0) {
		free(*d);
		*d = NULL;
	}
	fclose(f);
	return r;
}

/* The section of edge k for consumer c: start and bytes; -1 when the file has none or lies. */
static int
find_section(const unsigned char *d, size_t len, size_t k, uint32_t c, size_t *at, size_t *n)
{
	uint64_t nsec = ckpt_be64(d + 8);
	size_t off = 16, end = len - 8;

	for (uint64_t i = 0; i < nsec; i++) {
		uint64_t sz;

		if (end - off < 24)
			return -1;
		sz = ckpt_be64(d + off + 16);
		if (sz > end - off - 24 || sz % PART_REC)
			return -1;
		if (ckpt_be64(d + off) == k && ckpt_be64(d + off + 8) == c) {
			*at = off + 24;
			*n = (size_t)sz;
			return 0;
		}
		off += 24 + (size_t)sz;
	}
	return -1;
}

static void
take_records(struct ckpt_task *t, const unsigned char *d, size_t n, size_t g)
{
	for (size_t x = 0; x < n && !atomic_load(&t->cancel); x += PART_REC) {
		struct ckpt_rec r = {ckpt_be64(d + x), (int64_t)ckpt_be64(d + x + 8), (int64_t)ckpt_be64(d + x + 16)};

		t->records_in++;
		t->op->record(t, &r, g);
		task_count_record(t);
	}
}

/* The failure injection lose_partition: producer (v, s)'s partition vanishes before it is first read. */
static void
lose_partition(struct ckpt_bjob *b, size_t v, uint32_t s, const char *path)
{
	for (size_t f = 0; f < b->p->nfail; f++) {
		const struct ckpt_pl_failure *pf = &b->p->fail[f];
		int fire = 0;

		if (!pf->lose_partition || pf->vertex != v || pf->subtask != s)
			continue;
		pthread_mutex_lock(&b->j.cmu);
		fire = !b->fail_fired[f];
		b->fail_fired[f] = 1;
		pthread_mutex_unlock(&b->j.cmu);
		if (fire)
			unlink(path);
	}
}

/* A partition missing or damaged: Flink's PartitionNotFoundException, a failover that reruns its producer. */
static int
partition_lost(struct ckpt_bjob *b, struct ckpt_task *t, size_t producer, struct ckpt_err *e)
{
	if (e->kind == CKPT_ERR_INPUT || (e->kind == CKPT_ERR_IO && e->sys_errno == ENOENT))
		b->lost_from[t->gi] = producer + 1;
	return -1;
}

/* Feed input g of t: the sections of its producers, producer by producer. */
static int
feed(struct ckpt_bjob *b, struct ckpt_task *t, size_t g, struct ckpt_err *e)
{
	size_t k = t->v->in[g];
	const struct ckpt_pl_edge *ed = &b->p->e[k];
	uint32_t lo, hi, slo, shi;

	ckpt_edge_inputs(b->p, ed, t->sub, &lo, &hi);
	sub_range(b->p, k, t->sub, &slo, &shi);
	for (uint32_t i = lo; i < hi && !atomic_load(&t->cancel); i++) {
		unsigned char *d;
		size_t len, at, n;
		char path[4200];

		ckpt_bp_part_path(b, ed->source, i, path, sizeof path);
		lose_partition(b, ed->source, i, path);
		if (ckpt_bp_read_partition(path, &d, &len, e) < 0)
			return partition_lost(b, t, b->vfirst[ed->source] + i, e);
		for (uint32_t sp = slo; sp < shi && !atomic_load(&t->cancel); sp++) {
			if (find_section(d, len, k, sp, &at, &n) < 0) {
				free(d);
				ckpt_err_set(e, CKPT_ERR_INPUT, path, "blocking partition has no data for %s:%u",
					     t->v->id, t->sub);
				return partition_lost(b, t, b->vfirst[ed->source] + i, e);
			}
			take_records(t, d + at, n, g);
		}
		free(d);
	}
	return 0;
}

/* Take what queue q holds (swapping buffers with mine); 1 when every producer ended and nothing is left. */
static int
pq_take(struct ckpt_bjob *b, struct ckpt_task *t, size_t g, struct ckpt_bsec *mine)
{
	const struct ckpt_pl_edge *ed = &b->p->e[t->v->in[g]];
	struct ckpt_pq *q = ckpt_bp_pq_of(b, t->v->in[g], t->sub);
	struct ckpt_bsec got;
	int ended;
	uint32_t lo, hi;

	pthread_mutex_lock(&q->mu);
	got = (struct ckpt_bsec){q->d, q->n, q->cap};
	q->d = mine->d;
	q->cap = mine->cap;
	q->n = 0;
	ended = q->ended == q->nprod;
	pthread_mutex_unlock(&q->mu);
	*mine = got;
	if (got.n == 0)
		return ended;
	ckpt_edge_inputs(b->p, ed, t->sub, &lo, &hi);
	for (uint32_t i = lo; i < hi; i++)
		ckpt_notify_wake(&b->t[b->vfirst[ed->source] + i].nt);
	take_records(t, got.d, got.n, g);
	return 0;
}

/* The pipelined inputs of t, taken as they come, until every producer ended. */
static int
feed_pipelined(struct ckpt_bjob *b, struct ckpt_task *t, struct ckpt_err *e)
{
	unsigned char *done = ckpt_calloc(t->v->nin + 1, 1, e);
	struct ckpt_bsec mine = {0};
	size_t left = 0;

	if (done == NULL)
		return -1;
	for (size_t g = 0; g < t->v->nin; g++)
		if (ckpt_bp_blocking(b->p, t->v->in[g]))
			done[g] = 1;
		else
			left++;
	while (left > 0 && !atomic_load(&t->cancel)) {
		unsigned seq = notify_prepare(&t->nt);
		size_t before = t->records_in;

		for (size_t g = 0; g < t->v->nin; g++)
			if (!done[g] && pq_take(b, t, g, &mine)) {
				done[g] = 1;
				left--;
			}
		if (left > 0 && t->records_in == before)
			ckpt_notify_wait(&t->nt, seq, 100);
	}
	free(mine.d);
	free(done);
	return 0;
}

/* ---- one subtask: open, all of its input, end of input, its partition written */

static int
run_subtask(struct ckpt_bjob *b, struct ckpt_task *t, struct ckpt_err *e)
{
	int r = -1;

	if (bout_init(b, t, e) < 0)
		goto out;
	if (t->op->open && t->op->open(t, NULL, e) < 0)
		goto out;
	if (t->op->emit_some)
		while (!atomic_load(&t->cancel) && !t->op->emit_some(t))
			;
	for (size_t g = 0; g < t->v->nin && !atomic_load(&t->cancel); g++)
		if (ckpt_bp_blocking(b->p, t->v->in[g]) && feed(b, t, g, e) < 0)
			goto out;
	if (feed_pipelined(b, t, e) < 0)
		goto out;
	if (!atomic_load(&t->cancel)) {
		/* batch semantics: no watermarks on the way, MAX_WATERMARK at the end of input */
		if (t->op->watermark)
			t->op->watermark(t, MAX_WATERMARK);
		if (t->op->finish)
			t->op->finish(t);
		if (t->op->close)
			t->op->close(t);
		if (ckpt_bp_has_partition(b->p, t->vi) && write_partition(b, t, e) < 0)
			goto out;
		if (!atomic_load(&t->cancel))
			pq_end(b, t);
	}
	if (t->bout != NULL && t->bout->nomem) { /* it cancelled itself: not finished */
		ckpt_err_set(e, CKPT_ERR_NOMEM, t->v->id, "out of memory for a blocking partition");
		goto out;
	}
	r = 0;
out:
	if (t->op->dispose)
		t->op->dispose(t);
	bout_free(t);
	return r;
}

void *
ckpt_bp_task_main(void *arg)
{
	struct ckpt_task *t = arg;
	struct ckpt_bjob *b = (struct ckpt_bjob *)t->job;
	int r = run_subtask(b, t, &b->terr[t->gi]);

	pthread_mutex_lock(&b->j.cmu);
	b->done[t->gi] = r == 0 ? 1 : b->lost_from[t->gi] ? 3 : 2;
	pthread_mutex_unlock(&b->j.cmu);
	ckpt_notify_wake(&b->j.cnt);
	return NULL;
}
