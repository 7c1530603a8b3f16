/* state-backing.c: the backing of a snapshot read from a Flink _metadata: its subtasks' state loaded
 * into the model, checked before -a prints (on threads), printed as read, and -R's rows. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readers.h"
#include "model/model.h"

/* ------------------------------------------------------------ loading into the model */

struct loader {
	struct ckpt_subtask *st;
	struct ckpt_model_arena *arena;
	size_t *filled;  /* per operator state: elements placed */
	size_t kvcap;
	struct ckpt_err *e;
};

static unsigned char *
arena_copy(struct loader *L, const void *p, size_t n)
{
	unsigned char *q = ckpt_model_arena_alloc(L->arena, n ? n : 1);

	if (q == NULL) {
		ckpt_err_nomem(L->e, "");
		return NULL;
	}
	memcpy(q, p, n);
	return q;
}

/* The subtask's operator state an element of state belongs to, counted in filled; -1 when the
 * handles record fewer (typed is then freed). */
static long
op_slot(const struct ckpt_subtask *st, size_t *filled, const char *state, json_t *typed, struct ckpt_err *e)
{
	for (size_t i = 0; i < st->nops; i++)
		if (strcmp(st->ops[i].name, state) == 0) {
			if (filled[i] >= st->ops[i].n)
				break;
			return (long)i;
		}
	json_decref(typed);
	return ckpt_err_set(e, CKPT_ERR_INPUT, "", "operator state \"%s\" holds more elements than its handles record",
			    state);
}

static int
kv_in_range(const struct ckpt_subtask *st, uint32_t kg, struct ckpt_err *e)
{
	if (st->keyed && kg >= st->kg_first && kg <= st->kg_last)
		return 0;
	return ckpt_err_set(e, CKPT_ERR_INPUT, "", "an entry of key group %u, outside the subtask's range", kg);
}

/* Every element the handles record was read. */
static int
all_filled(const struct ckpt_fstate_backing_data *b, const struct ckpt_operator *op, const struct ckpt_subtask *st,
	   const size_t *filled, struct ckpt_err *e)
{
	for (size_t i = 0; i < st->nops; i++)
		if (filled[i] != st->ops[i].n)
			return ckpt_err_set(e, CKPT_ERR_INPUT, b->meta, "operator %s subtask %u: %zu of the %zu elements of "
					    "\"%s\" read", op->id, st->index, filled[i], st->ops[i].n, st->ops[i].name);
	return 0;
}

static int
load_op(void *arg, const char *state, size_t idx, const unsigned char *p, size_t n, json_t *typed)
{
	struct loader *L = arg;
	struct ckpt_opstate *o;
	long slot = op_slot(L->st, L->filled, state, typed, L->e);
	size_t i = (size_t)slot;

	(void)idx;
	if (slot < 0)
		return -1;
	o = &L->st->ops[i];
	if (o->entries == NULL && (o->entries = ckpt_calloc(o->n, sizeof *o->entries, L->e)) == NULL) {
		json_decref(typed);
		return -1;
	}
	if (typed && o->typed == NULL && (o->typed = json_array()) == NULL) {
		json_decref(typed);
		return ckpt_err_nomem(L->e, "");
	}
	if (o->typed) {
		while (json_array_size(o->typed) < L->filled[i])
			json_array_append_new(o->typed, json_null());
		json_array_append_new(o->typed, typed ? typed : json_null());
	}
	o->entries[L->filled[i]].len = n;
	if ((o->entries[L->filled[i]].p = arena_copy(L, p, n)) == NULL)
		return -1;
	L->filled[i]++;
	return 0;
}

static int
load_kv(void *arg, const char *state, uint32_t kg, const unsigned char *k, size_t kn, const unsigned char *v,
	size_t vn, struct ckpt_fstate_typed *t)
{
	struct loader *L = arg;
	struct ckpt_subtask *st = L->st;
	struct ckpt_kv *kv;
	json_t *typed;

	if (ckpt_fstate_typed_json(t, &typed) < 0)
		return -1;
	if (kv_in_range(st, kg, L->e) < 0) {
		json_decref(typed);
		return -1;
	}
	if (ckpt_grow(&st->kv, &L->kvcap, st->nkv + 1, sizeof *st->kv, 64, L->e) < 0) {
		json_decref(typed);
		return -1;
	}
	kv = &st->kv[st->nkv];
	memset(kv, 0, sizeof *kv);
	kv->typed = typed;
	st->nkv++;
	kv->key_group = kg;
	kv->key.len = kn;
	kv->value.len = vn;
	if ((kv->state = (char *)arena_copy(L, state, strlen(state) + 1)) == NULL ||
	    (kv->key.p = arena_copy(L, k, kn)) == NULL || (kv->value.p = arena_copy(L, v, vn)) == NULL)
		return -1;
	return 0;
}

static void
unload_partial(struct ckpt_subtask *st)
{
	for (size_t i = 0; i < st->nops; i++) {
		free(st->ops[i].entries);
		st->ops[i].entries = NULL;
		json_decref(st->ops[i].typed);
		st->ops[i].typed = NULL;
	}
	for (size_t i = 0; i < st->nkv; i++)
		json_decref(st->kv[i].typed);
	free(st->kv);
	st->kv = NULL;
	st->nkv = 0;
	ckpt_model_arena_free(st->arena);
	st->arena = NULL;
}

static int
flink_load(struct ckpt_snapshot *s, struct ckpt_operator *op, struct ckpt_subtask *st, struct ckpt_err *e)
{
	struct loader L = {.st = st, .e = e};
	struct ckpt_fstate_sink k = {.op = load_op, .kv = load_kv, .arg = &L};
	int rc = -1;

	L.filled = ckpt_calloc(st->nops + 1, sizeof *L.filled, e);
	st->arena = L.arena = ckpt_model_arena_new();
	if (L.filled == NULL || L.arena == NULL) {
		ckpt_err_nomem(e, "");
		goto out;
	}
	st->nkv = 0;
	if (ckpt_fstate_read_subtask((struct ckpt_fstate_backing_data *)s->backing, op, st, &k, e) < 0)
		goto out;
	if (all_filled((struct ckpt_fstate_backing_data *)s->backing, op, st, L.filled, e) < 0)
		goto out;
	for (size_t i = 0; i < st->nops; i++) {
		if (st->ops[i].entries == NULL && (st->ops[i].entries = ckpt_calloc(1, sizeof *st->ops[i].entries, e)) == NULL)
			goto out;
	}
	/* in-flight data stays in its channel handles: it is not read */
	st->nin = st->nout = 0;
	st->loaded = 1;
	st->member = NULL;
	rc = ckpt_subtask_recount(st, e);
out:
	if (rc < 0 && !st->loaded)
		unload_partial(st);
	free(L.filled);
	return rc;
}

/* ------------------------------------------------------------ printing as it reads */

/* The check before printing: what flink_load would refuse, without keeping the entries. */
struct checker {
	const struct ckpt_subtask *st;
	size_t *filled;
	struct ckpt_err *e;
};

static int
check_op(void *arg, const char *state, size_t idx, const unsigned char *p, size_t n, json_t *typed)
{
	struct checker *C = arg;
	long slot = op_slot(C->st, C->filled, state, typed, C->e);

	(void)idx, (void)p, (void)n;
	if (slot < 0)
		return -1;
	C->filled[slot]++;
	json_decref(typed);
	return 0;
}

static int
check_kv(void *arg, const char *state, uint32_t kg, const unsigned char *k, size_t kn, const unsigned char *v,
	 size_t vn, struct ckpt_fstate_typed *typed)
{
	struct checker *C = arg;

	(void)state, (void)k, (void)kn, (void)v, (void)vn;
	if (ckpt_fstate_typed_check(typed) < 0) /* decoded, nothing built */
		return -1;
	return kv_in_range(C->st, kg, C->e);
}

/* One subtask's state files read through, each element and entry checked. */
static int
check_subtask(struct ckpt_fstate_backing_data *b, const struct ckpt_operator *op, const struct ckpt_subtask *st,
	      struct ckpt_err *e)
{
	struct checker C = {.st = st, .e = e};
	struct ckpt_fstate_sink k = {.op = check_op, .kv = check_kv, .arg = &C};
	int rc;

	if ((C.filled = ckpt_calloc(st->nops + 1, sizeof *C.filled, e)) == NULL)
		return -1;
	/* narrowed (select.c), not every element is given: none is missing for that */
	rc = ckpt_fstate_read_subtask(b, op, st, &k, e) < 0 || (b->sel == NULL && all_filled(b, op, st, C.filled, e) < 0)
		     ? -1 : 0;
	free(C.filled);
	return rc;
}

/*
 * Tasks run on as many threads as there are processors (CKPT_THREADS in the environment: that many
 * instead; at most RUN_THREADS), each thread taking the next task.  Stopping at the first failure,
 * the error said is the first failing task's in their order, as one thread would say it: a thread
 * skips the tasks after the first that failed, and every one before it is run.  Keeping each
 * task's error, every task is run.
 */
#define RUN_THREADS 16

struct run {
	int (*fn)(void *arg, size_t t, struct ckpt_err *e);
	void *arg;
	struct ckpt_err *each; /* NULL: stop at the first failure; else each task's error (kind 0: none) */
	size_t n, next, failed; /* failed: the first task that failed (n: none) */
	struct ckpt_err err;
	pthread_mutex_t mu;
};

static void *
run_worker(void *arg)
{
	struct run *R = arg;

	for (;;) {
		struct ckpt_err e = {0};
		size_t t;
		int skip;

		pthread_mutex_lock(&R->mu);
		t = R->next++;
		skip = R->each == NULL && t > R->failed; /* after the first that failed: never said */
		pthread_mutex_unlock(&R->mu);
		if (t >= R->n)
			return NULL;
		if (skip || R->fn(R->arg, t, &e) == 0)
			continue;
		if (e.kind == CKPT_ERR_NONE) /* a failure must not pass for none */
			e.kind = CKPT_ERR_INPUT;
		if (R->each)
			R->each[t] = e;
		pthread_mutex_lock(&R->mu);
		if (t < R->failed) {
			R->failed = t;
			R->err = e;
		}
		pthread_mutex_unlock(&R->mu);
	}
}

/* The threads to run n tasks on. */
static size_t
run_threads(size_t n)
{
	const char *env = getenv("CKPT_THREADS");
	char *end = NULL;
	long want = env && *env ? strtol(env, &end, 10) : 0;

	if (end == NULL || *end != '\0' || want < 1)
		want = sysconf(_SC_NPROCESSORS_ONLN);
	if (want < 1)
		want = 1;
	if ((size_t)want > n)
		want = (long)n;
	return want < RUN_THREADS ? (size_t)want : RUN_THREADS;
}

int
ckpt_fstate_run(size_t n, int (*fn)(void *arg, size_t t, struct ckpt_err *e), void *arg, struct ckpt_err *each,
		struct ckpt_err *e)
{
	struct run R = {.fn = fn, .arg = arg, .each = each, .n = n, .failed = n, .mu = PTHREAD_MUTEX_INITIALIZER};
	pthread_t th[RUN_THREADS];
	size_t nth = 0, want = run_threads(n);

	while (nth + 1 < want && pthread_create(&th[nth], NULL, run_worker, &R) == 0)
		nth++;
	run_worker(&R); /* this thread is one of them */
	while (nth > 0)
		pthread_join(th[--nth], NULL);
	if (each == NULL && R.failed < n) {
		*e = R.err;
		return -1;
	}
	return 0;
}

/* The subtasks of a snapshot as tasks. */
struct subtasks {
	struct ckpt_fstate_backing_data *b;
	const struct ckpt_operator **op;
	const struct ckpt_subtask **st;
	int (*fn)(struct ckpt_fstate_backing_data *b, const struct ckpt_operator *op, const struct ckpt_subtask *st,
		  struct ckpt_err *e);
};

static int
subtask_task(void *arg, size_t t, struct ckpt_err *e)
{
	struct subtasks *S = arg;

	return S->fn(S->b, S->op[t], S->st[t], e);
}

/* The subtasks of s (those not loaded, with all 0) through fn on the threads; each, when not NULL,
 * gets their errors in the document's order (*n of them).  0, or -1 with e set: the first error
 * (each NULL), or no memory. */
static int
run_subtasks(struct ckpt_snapshot *s, int all,
	     int (*fn)(struct ckpt_fstate_backing_data *, const struct ckpt_operator *, const struct ckpt_subtask *,
		       struct ckpt_err *),
	     struct ckpt_err **each, size_t *n, struct ckpt_err *e)
{
	struct subtasks S = {.b = (struct ckpt_fstate_backing_data *)s->backing, .fn = fn};
	struct ckpt_err *errs = NULL;
	size_t total = 0, k = 0;
	int rc = -1;

	if (ckpt_fselect_buffered(S.b->sel) && S.b->skip == NULL)
		return 0; /* the caller keeps what is printed until the read has ended: one pass */
	for (size_t i = 0; i < s->nops; i++)
		total += s->ops[i].nsubtasks;
	if ((S.op = ckpt_calloc(total + 1, sizeof *S.op, e)) == NULL ||
	    (S.st = ckpt_calloc(total + 1, sizeof *S.st, e)) == NULL ||
	    (each && (errs = ckpt_calloc(total + 1, sizeof *errs, e)) == NULL))
		goto out;
	for (size_t i = 0; i < s->nops; i++)
		for (size_t j = 0; j < s->ops[i].nsubtasks; j++)
			if (all || !s->ops[i].subtasks[j].loaded) {
				S.op[k] = &s->ops[i];
				S.st[k++] = &s->ops[i].subtasks[j];
			}
	if (ckpt_fstate_run(k, subtask_task, &S, errs, e) < 0)
		goto out;
	if (each) {
		*each = errs;
		*n = k;
		errs = NULL;
	}
	rc = 0;
out:
	free(S.op);
	free(S.st);
	free(errs);
	return rc;
}

/* Under --keep-going: why st's state is left out (NULL: it is not). */
const char *
ckpt_fstate_skipped(const struct ckpt_fstate_backing_data *b, const struct ckpt_subtask *st)
{
	for (size_t i = 0; i < b->nskipped; i++)
		if (b->skipped[i].st == st)
			return b->skipped[i].why;
	return NULL;
}

/* st left out, for why (said to the caller's report). */
static int
skip_subtask(struct ckpt_fstate_backing_data *b, const struct ckpt_operator *op, const struct ckpt_subtask *st,
	     const struct ckpt_err *why, struct ckpt_err *e)
{
	char where[600], what[2048];

	if (ckpt_grow(&b->skipped, &b->skipcap, b->nskipped + 1, sizeof *b->skipped, 8, e) < 0)
		return -1;
	ckpt_err_format(why, what, sizeof what);
	if ((b->skipped[b->nskipped].why = ckpt_strdup(what, e)) == NULL)
		return -1;
	b->skipped[b->nskipped++].st = st;
	if (op->uid)
		snprintf(where, sizeof where, "operator %s (uid %s) subtask %u", op->id, op->uid, st->index);
	else
		snprintf(where, sizeof where, "operator %s subtask %u", op->id, st->index);
	b->skip(b->skip_arg, where, what);
	return 0;
}

/* Every subtask of s read through once (not those loaded): under --keep-going, those that cannot be
 * read left out and said, in the document's order; else the first error stops it. */
int
ckpt_fstate_check_all(struct ckpt_snapshot *s, struct ckpt_err *e)
{
	struct ckpt_fstate_backing_data *b = (struct ckpt_fstate_backing_data *)s->backing;
	struct ckpt_err *errs = NULL;
	size_t n = 0, k = 0;
	int rc = 0;

	if (b->skip == NULL || b->checked)
		return b->skip ? 0 : run_subtasks(s, 0, check_subtask, NULL, NULL, e);
	b->checked = 1;
	if (run_subtasks(s, 0, check_subtask, &errs, &n, e) < 0)
		return -1;
	for (size_t i = 0; i < s->nops && rc == 0; i++)
		for (size_t j = 0; j < s->ops[i].nsubtasks && rc == 0; j++)
			if (!s->ops[i].subtasks[j].loaded && k < n && errs[k++].kind != CKPT_ERR_NONE)
				rc = skip_subtask(b, &s->ops[i], &s->ops[i].subtasks[j], &errs[k - 1], e);
	free(errs);
	return rc;
}

/* --keep-going in a shard: st's part (1 its operator state, 2 its keyed state in [lo, hi)) read
 * through and checked before it prints; when it cannot be read, st is left out and said. */
int
ckpt_fstate_check_part(struct ckpt_fstate_backing_data *b, const struct ckpt_operator *op, const struct ckpt_subtask *st,
		       int part, uint32_t lo, uint32_t hi, struct ckpt_err *e)
{
	struct ckpt_err why = {0};
	struct checker C = {.st = st, .e = &why};
	struct ckpt_fstate_sink k = {.op = check_op, .kv = check_kv, .arg = &C, .part = part, .kg_lo = lo, .kg_hi = hi};
	int rc = 0;

	if (st->finished || ckpt_fstate_skipped(b, st))
		return 0;
	if ((C.filled = ckpt_calloc(st->nops + 1, sizeof *C.filled, e)) == NULL)
		return -1;
	if (ckpt_fstate_read_subtask(b, op, st, &k, &why) < 0 ||
	    (part == 1 && b->sel == NULL && all_filled(b, op, st, C.filled, &why) < 0))
		rc = why.kind == CKPT_ERR_NOMEM ? ckpt_err_nomem(e, "")
						 : skip_subtask(b, op, st, &why, e);
	free(C.filled);
	return rc;
}

static int
flink_check(struct ckpt_snapshot *s, struct ckpt_err *e)
{
	ckpt_fstate_progress(s, NULL, 2); /* this read, then the one that prints */
	return ckpt_fstate_check_all(s, e);
}

/* The end of what flink_check began, when the printing ends. */
static void
flink_done(struct ckpt_snapshot *s)
{
	ckpt_progress_end(s);
}

static const char *const typed_keys[] = {"namespace", "untyped", NULL};
const struct ckpt_model_foreign ckpt_flink_typed_entries = {
	.keys = typed_keys,
	.about = "a typed entry",
	.hint = "state documents are read as bytes, as ckpt-inspect -a --raw prints them",
};

void
ckpt_flink_state_keep_going(struct ckpt_snapshot *s, ckpt_verify_report *skip, void *arg)
{
	struct ckpt_fstate_backing_data *b = ckpt_fstate_backing(s, NULL);

	if (b) {
		b->skip = skip;
		b->skip_arg = arg;
	}
}

/* The bytes of s's state files, 0 when something narrows the reading (not known). */
static uint64_t
state_size(const struct ckpt_snapshot *s)
{
	const struct ckpt_fstate_backing_data *b = s->backing;
	uint64_t total = 0;

	for (size_t i = 0; b->sel == NULL && i < s->nops; i++)
		for (size_t j = 0; j < s->ops[i].nsubtasks; j++)
			for (size_t h = 0; h < s->ops[i].subtasks[j].nhandles; h++)
				total += s->ops[i].subtasks[j].handles[h].size;
	return total;
}

void
ckpt_fstate_progress(struct ckpt_snapshot *s, struct ckpt_snapshot *also, unsigned passes)
{
	uint64_t a, b;

	if (!ckpt_progress_on())
		return;
	a = state_size(s);
	b = also ? state_size(also) : 0;
	ckpt_progress_begin(s, "bytes", a && (b || also == NULL) ? (a + b) * passes : 0);
}

/* -c's read of one subtask: every file read through, every entry decoded, nothing kept. */
static int
verify_subtask(struct ckpt_fstate_backing_data *b, const struct ckpt_operator *op, const struct ckpt_subtask *st,
	       struct ckpt_err *e)
{
	struct ckpt_fstate_sink k = {.op = ckpt_fstate_dry_op, .kv = ckpt_fstate_dry_kv};

	return ckpt_fstate_read_subtask(b, op, st, &k, e);
}

int
ckpt_fstate_verify_all(struct ckpt_snapshot *s, struct ckpt_err **each, size_t *n, struct ckpt_err *e)
{
	return run_subtasks(s, 1, verify_subtask, each, n, e);
}

/* The entries of one subtask, written as they are read: typed where the serializers are known (the
 * raw bytes and the serializer that stops the typing where not), or raw and typed (--raw). */
struct printer {
	struct ckpt_jw *w;
	struct ckpt_fout out; /* FOUT_WRITE into w */
	size_t n;      /* items written */
	int typed;     /* some element had a typed form */
	int raw;       /* --raw: the bytes of every entry, the typed form beside them */
	const struct ckpt_fstate_header *h; /* the header of the handle being read (keyed) */
	const char *name; /* operator state: the state printed */
	char why[600]; /* operator state: what stops its typing */
};

/* What stops the typing of state m of header h ("" when nothing is known to). */
static const char *
untyped_why(const struct ckpt_fstate_header *h, const struct ckpt_fstate_meta *m)
{
	const char *b;

	if (h == NULL)
		return "";
	if (m == NULL || (h->stopped && m == &h->m[h->n - 1]))
		return h->stopped ? h->stop : "";
	if (m->type == 1 || m->type == 2) /* operator, broadcast */
		b = m->type == 2 && ckpt_fser_blocker(m->key) ? ckpt_fser_blocker(m->key) : ckpt_fser_blocker(m->value);
	else
		b = ckpt_fstate_heap_stop(h, m);
	if (b == NULL && m->value && (m->kindc == 'm' || m->kindc == 'l'))
		b = m->value->cls; /* a map or list state whose value serializer is of another kind */
	return b ? b : "";
}

static int
print_header(void *arg, const char *scope, const struct ckpt_fstate_header *h)
{
	struct printer *P = arg;

	if (strcmp(scope, "keyed") == 0)
		P->h = h;
	else if (P->why[0] == '\0')
		snprintf(P->why, sizeof P->why, "%s", untyped_why(h, h ? ckpt_fstate_meta_named(h, P->name) : NULL));
	return 0;
}

static int
print_op(void *arg, const char *state, size_t idx, const unsigned char *p, size_t n, json_t *typed)
{
	struct printer *P = arg;

	(void)state, (void)idx;
	P->typed |= typed != NULL;
	P->n++;
	ckpt_jw_elem(P->w);
	if (typed && !P->raw)
		ckpt_jw_json(P->w, typed);
	else
		ckpt_jw_entry(P->w, p, n);
	json_decref(typed);
	return 0;
}

static int
print_typed(void *arg, const char *state, size_t idx, const unsigned char *p, size_t n, json_t *typed)
{
	struct printer *P = arg;

	(void)state, (void)idx, (void)p, (void)n;
	ckpt_jw_elem(P->w);
	if (typed)
		ckpt_jw_json(P->w, typed);
	else
		ckpt_jw_json(P->w, json_null());
	json_decref(typed);
	return 0;
}

static int
print_kv(void *arg, const char *state, uint32_t kg, const unsigned char *k, size_t kn, const unsigned char *v,
	 size_t vn, struct ckpt_fstate_typed *typed)
{
	struct printer *P = arg;
	struct ckpt_jw *w = P->w;

	if (P->n++ == 0) {
		ckpt_jw_key_lit(w, "entries");
		ckpt_jw_open(w, '[');
	}
	ckpt_jw_elem(w);
	ckpt_jw_open(w, '{');
	ckpt_jw_key_lit(w, "state");
	ckpt_jw_str(w, state);
	ckpt_jw_key_lit(w, "key_group");
	ckpt_jw_int(w, kg);
	if (typed && !P->raw) { /* key, namespace (user key) and value, written as they are decoded */
		P->out.depth = 0;
		P->out.flat = 1;
		if (ckpt_fstate_typed_emit(typed, &P->out) < 0)
			return -1;
		ckpt_jw_close(w, '}');
		return ckpt_jw_failed(w, NULL);
	}
	ckpt_jw_key_lit(w, "key");
	ckpt_jw_entry(w, k, kn);
	ckpt_jw_key_lit(w, "value");
	ckpt_jw_entry(w, v, vn);
	if (typed) { /* written as it is decoded */
		ckpt_jw_key_lit(w, "typed");
		P->out.depth = 0;
		P->out.flat = 0;
		if (ckpt_fstate_typed_emit(typed, &P->out) < 0)
			return -1;
	} else if (!P->raw) {
		const struct ckpt_fstate_meta *m = P->h ? ckpt_fstate_meta_named(P->h, state) : NULL;

		ckpt_jw_key_lit(w, "untyped");
		ckpt_jw_str(w, untyped_why(P->h, m));
	}
	ckpt_jw_close(w, '}');
	return ckpt_jw_failed(w, NULL);
}

/* A read stopped by the reader (e set) or by a failed write (said now). */
static int
print_failed(struct ckpt_jw *w, struct ckpt_err *e)
{
	ckpt_jw_failed(w, e);
	return -1;
}

static int
print_opstates(struct ckpt_fstate_backing_data *b, const struct ckpt_operator *op, const struct ckpt_subtask *st,
	       struct ckpt_jw *w, struct ckpt_err *e)
{
	ckpt_jw_key_lit(w, "operator_state");
	ckpt_jw_open(w, '{');
	for (size_t i = 0; i < st->nops; i++) {
		struct printer P = {.w = w, .raw = b->raw, .name = st->ops[i].name};
		struct ckpt_fstate_sink k = {.header = print_header, .op = print_op, .kv = ckpt_fstate_dry_kv, .arg = &P,
				  .part = 1, .only = st->ops[i].name};

		ckpt_jw_key(w, st->ops[i].name);
		ckpt_jw_open(w, '{');
		ckpt_jw_key_lit(w, "mode");
		ckpt_jw_str(w, ckpt_mode_name(st->ops[i].mode));
		ckpt_jw_key_lit(w, "entries");
		ckpt_jw_open(w, '[');
		if (ckpt_fstate_read_subtask(b, op, st, &k, e) < 0)
			return print_failed(w, e);
		ckpt_jw_close(w, ']');
		if (P.typed && P.raw) { /* the typed forms follow the raw ones: a second read of the same elements */
			k.op = print_typed;
			ckpt_jw_key_lit(w, "typed");
			ckpt_jw_open(w, '[');
			if (ckpt_fstate_read_subtask(b, op, st, &k, e) < 0)
				return print_failed(w, e);
			ckpt_jw_close(w, ']');
		} else if (!P.typed && !P.raw && P.n > 0) {
			ckpt_jw_key_lit(w, "untyped");
			ckpt_jw_str(w, P.why);
		}
		ckpt_jw_close(w, '}');
	}
	ckpt_jw_close(w, '}');
	return 0;
}

/* What ckpt_model_subtask_doc gives of a loaded subtask (subtask_json in model/snapshot.c), written as read. */
static int
flink_print(struct ckpt_snapshot *s, struct ckpt_operator *op, struct ckpt_subtask *st, struct ckpt_jw *w,
	    struct ckpt_err *e)
{
	struct ckpt_fstate_backing_data *b = (struct ckpt_fstate_backing_data *)s->backing;

	ckpt_jw_open(w, '{');
	ckpt_jw_key_lit(w, "index");
	ckpt_jw_int(w, st->index);
	ckpt_jw_key_lit(w, "finished");
	ckpt_jw_bool(w, st->finished);
	if (ckpt_fstate_skipped(b, st)) { /* --keep-going: its handles, and why its state is not here */
		ckpt_jw_key_lit(w, "unread");
		ckpt_jw_str(w, ckpt_fstate_skipped(b, st));
	} else if (!st->finished && (st->nops > 0 || st->nhandles == 0) && print_opstates(b, op, st, w, e) < 0)
		return -1;
	if (st->keyed && !ckpt_fstate_skipped(b, st)) {
		struct printer P = {.w = w, .out = {.mode = FOUT_WRITE, .w = w}, .raw = b->raw};
		struct ckpt_fstate_sink k = {.header = print_header, .op = ckpt_fstate_dry_op, .kv = print_kv, .arg = &P,
				  .part = 2};
		char kg[32];

		if (st->kg_first == st->kg_last)
			snprintf(kg, sizeof kg, "%u", st->kg_first);
		else
			snprintf(kg, sizeof kg, "%u-%u", st->kg_first, st->kg_last);
		ckpt_jw_key_lit(w, "keyed_state");
		ckpt_jw_open(w, '{');
		ckpt_jw_key_lit(w, "key_groups");
		ckpt_jw_str(w, kg);
		if (ckpt_fstate_read_subtask(b, op, st, &k, e) < 0)
			return print_failed(w, e);
		if (P.n > 0)
			ckpt_jw_close(w, ']');
		else if (st->nhandles == 0) {
			ckpt_jw_key_lit(w, "entries");
			ckpt_jw_open(w, '[');
			ckpt_jw_close(w, ']');
		}
		ckpt_jw_close(w, '}');
	}
	if (st->nhandles) {
		json_t *h = ckpt_model_handles_json(st);

		if (h == NULL)
			return ckpt_err_nomem(e, "");
		ckpt_jw_key_lit(w, "handles");
		ckpt_jw_json(w, h);
		json_decref(h);
	}
	ckpt_jw_close(w, '}');
	return 0;
}

/* -R: the same reads as the document's, each entry given to rows.c as rows.  One read: what the
 * check pass refuses is refused as it is met (an element too many or too few, a key group outside
 * the subtask's range), the rows before it written. */
struct rowsink {
	struct printer P;     /* first, for print_header: the header and why */
	struct ckpt_frows r;
	const char *mode;
	const struct ckpt_subtask *st;
	size_t nop, max;      /* elements of the operator state read, and those its handles record */
	struct ckpt_err *e;
};

static int
row_op(void *arg, const char *state, size_t idx, const unsigned char *p, size_t n, json_t *typed)
{
	struct rowsink *R = arg;
	int rc;

	if (R->nop++ >= R->max) {
		json_decref(typed);
		return ckpt_err_set(R->e, CKPT_ERR_INPUT, "", "operator state \"%s\" holds more elements than its "
				    "handles record", state);
	}
	rc = ckpt_frows_op(&R->r, state, R->mode, idx, typed, p, n, R->P.why);

	json_decref(typed);
	return rc;
}

static int
row_kv(void *arg, const char *state, uint32_t kg, const unsigned char *k, size_t kn, const unsigned char *v,
       size_t vn, struct ckpt_fstate_typed *typed)
{
	struct rowsink *R = arg;
	const struct ckpt_fstate_meta *m = R->P.h ? ckpt_fstate_meta_named(R->P.h, state) : NULL;
	json_t *t = NULL;
	int rc;

	if (kv_in_range(R->st, kg, R->e) < 0)
		return -1;
	/* a value (reducing, aggregating) state or a canonical map entry is one row as it is typed:
	 * written as it is decoded, key, namespace (user key) and value in the row's order */
	if (typed && m && m->kindc != 't' && m->kindc != 'l' && !(m->kindc == 'm' && typed->heap) &&
	    typed->ready == NULL) {
		struct ckpt_fout o; /* the stacks are written before they are read: not cleared */

		o.mode = FOUT_WRITE;
		o.w = R->r.w;
		o.flat = 1;
		o.depth = 0;
		ckpt_frows_open(&R->r, state, ckpt_fstate_meta_kind(m), kg);
		if (ckpt_fstate_typed_emit(typed, &o) < 0)
			return -1;
		return ckpt_frows_close(&R->r);
	}
	if (typed && m && m->kindc == 'l' && !typed->heap && typed->ready == NULL) /* a row an element */
		return ckpt_fstate_typed_list_rows(typed, &R->r, state, ckpt_fstate_meta_kind(m));
	if (typed && ckpt_fstate_typed_json(typed, &t) < 0)
		return -1;
	rc = ckpt_frows_keyed(&R->r, state, m ? ckpt_fstate_meta_kind(m) : NULL, kg, t, k, kn, v, vn,
			      t ? NULL : untyped_why(R->P.h, m));
	json_decref(t);
	return rc;
}

/* st's rows: part 1 its operator state, 2 its keyed state in key groups [lo, hi) when hi > 0, 0 both. */
static int
rows_subtask(struct ckpt_fstate_backing_data *b, const struct ckpt_operator *op, const struct ckpt_subtask *st, int part,
	     uint32_t lo, uint32_t hi, struct rowsink *R)
{
	struct ckpt_err *e = R->e;

	for (size_t o = 0; part != 2 && o < st->nops; o++) {
		struct ckpt_fstate_sink k = {.header = print_header, .op = row_op, .kv = ckpt_fstate_dry_kv, .arg = R,
				  .part = 1, .only = st->ops[o].name};

		R->P = (struct printer){.name = st->ops[o].name};
		R->mode = ckpt_mode_name(st->ops[o].mode);
		R->nop = 0;
		R->max = st->ops[o].n;
		if (ckpt_fstate_read_subtask(b, op, st, &k, e) < 0)
			return print_failed(R->r.w, e);
		if (b->sel == NULL && R->nop != R->max) /* narrowed, not every element is given */
			return ckpt_err_set(e, CKPT_ERR_INPUT, b->meta, "operator %s subtask %u: %zu of the %zu "
					    "elements of \"%s\" read", op->id, st->index, R->nop, R->max,
					    st->ops[o].name);
	}
	if (part != 1 && st->keyed) {
		struct ckpt_fstate_sink k = {.header = print_header, .op = ckpt_fstate_dry_op, .kv = row_kv, .arg = R,
				  .part = 2, .kg_lo = lo, .kg_hi = hi};

		R->P = (struct printer){0};
		if (ckpt_fstate_read_subtask(b, op, st, &k, e) < 0)
			return print_failed(R->r.w, e);
	}
	return 0;
}

/* The rows of op's subtasks (part 1: operator state, 2: keyed state, in key groups [lo, hi) when hi > 0). */
int
ckpt_fstate_rows_op(struct ckpt_fstate_backing_data *b, const struct ckpt_operator *op, int part, uint32_t lo, uint32_t hi,
		    struct ckpt_jw *w, struct ckpt_err *e)
{
	for (size_t j = 0; op && j < op->nsubtasks; j++)
		if (ckpt_fstate_rows_subtask(b, op, &op->subtasks[j], part, lo, hi, w, e) < 0)
			return -1;
	return ckpt_jw_failed(w, e);
}

/* The rows of one subtask, as ckpt_fstate_rows_op's (shards.c reads a shard's parts through it). */
int
ckpt_fstate_rows_subtask(struct ckpt_fstate_backing_data *b, const struct ckpt_operator *op, const struct ckpt_subtask *st,
			 int part, uint32_t lo, uint32_t hi, struct ckpt_jw *w, struct ckpt_err *e)
{
	struct rowsink R = {.r = {.w = w, .uid = op->uid, .op = op->id, .subtask = st->index}, .st = st, .e = e};

	/* print_header takes the sink's argument for a printer: R.P is R's first member */
	if (st->finished || ckpt_fstate_skipped(b, st))
		return 0;
	R.r.end = w->flushed + w->len;
	if (rows_subtask(b, op, st, part, lo, hi, &R) < 0) {
		ckpt_frows_cut(&R.r); /* the rows before the damage stay whole, without a half row */
		return -1;
	}
	return 0;
}

int
ckpt_flink_state_rows(struct ckpt_snapshot *s, struct ckpt_jw *w, struct ckpt_err *e)
{
	struct ckpt_fstate_backing_data *b = ckpt_fstate_backing(s, e);
	int rc = 0;

	/* one read: rows go out as they are decoded, and a damage met later ends them (the caller says
	 * it); --keep-going first learns which subtasks to leave out, through the check pass */
	if (b == NULL)
		rc = -1;
	else if (b->skip)
		rc = flink_check(s, e);
	else
		ckpt_fstate_progress(s, NULL, 1);
	for (size_t i = 0; rc == 0 && i < s->nops; i++)
		rc = ckpt_fstate_rows_op(b, &s->ops[i], 0, 0, 0, w, e);
	ckpt_progress_end(s);
	return rc;
}

/* ------------------------------------------------------------ the backing */

static void
flink_free(struct ckpt_model_backing *base)
{
	struct ckpt_fstate_backing_data *b = (struct ckpt_fstate_backing_data *)base;

	for (size_t i = 0; i < b->nroots; i++) {
		free(b->from[i]);
		free(b->to[i]);
	}
	free(b->from);
	free(b->to);
	for (size_t i = 0; i < b->nskipped; i++)
		free(b->skipped[i].why);
	free(b->skipped);
	free(b->meta);
	free(b->dir);
	ckpt_fselect_free(b->sel);
	free(b);
}

struct ckpt_model_backing *
ckpt_flink_backing_new(const char *meta, struct ckpt_err *e)
{
	struct ckpt_fstate_backing_data *b = ckpt_calloc(1, sizeof *b, e);
	const char *slash;

	if (b == NULL)
		return NULL;
	b->base.format = "flink metadata";
	b->base.flink_meta = 1;
	b->base.free = flink_free;
	ckpt_fstate_sources_init(b);
	if ((b->meta = ckpt_strdup(meta, e)) == NULL)
		goto fail;
	if (strcmp(meta, "<stdin>") != 0) {
		slash = strrchr(meta, '/');
		b->dir = slash ? strndup(meta, (size_t)(slash - meta) + (slash == meta)) : strdup(".");
		if (b->dir == NULL) {
			ckpt_err_nomem(e, meta);
			goto fail;
		}
	}
	return &b->base;
fail:
	flink_free(&b->base);
	return NULL;
}

int
ckpt_flink_state_raw(struct ckpt_snapshot *s, int raw)
{
	struct ckpt_fstate_backing_data *b = s->backing && ((struct ckpt_model_backing *)s->backing)->free == flink_free ?
					  s->backing : NULL;

	if (b)
		b->raw = raw;
	return b != NULL;
}

struct ckpt_fstate_backing_data *
ckpt_fstate_backing(struct ckpt_snapshot *s, struct ckpt_err *e)
{
	if (s->backing == NULL || ((struct ckpt_model_backing *)s->backing)->free != flink_free) {
		ckpt_err_set(e, CKPT_ERR_INPUT, "", "not a Flink snapshot");
		return NULL;
	}
	return s->backing;
}

int
ckpt_flink_state_found(struct ckpt_snapshot *s, char *names, size_t size)
{
	struct ckpt_err e = {0};
	struct ckpt_fstate_backing_data *b = s->backing ? ckpt_fstate_backing(s, &e) : NULL;

	return ckpt_fselect_found(b ? b->sel : NULL, names, size);
}

int
ckpt_flink_state_select(struct ckpt_snapshot *s, const struct ckpt_flink_select *sel, struct ckpt_err *e)
{
	struct ckpt_fstate_backing_data *b = ckpt_fstate_backing(s, e);
	struct ckpt_fselect *f;

	if (b == NULL || (f = ckpt_fselect_new(s, sel, e)) == NULL)
		return -1;
	ckpt_fselect_free(b->sel);
	b->sel = f;
	return 0;
}

int
ckpt_flink_state_enable(struct ckpt_snapshot *s, const char *const *roots, size_t nroots, struct ckpt_err *e)
{
	struct ckpt_fstate_backing_data *b = ckpt_fstate_backing(s, e);

	if (b == NULL)
		return -1;
	if (nroots && ((b->from = ckpt_calloc(nroots, sizeof *b->from, e)) == NULL ||
		       (b->to = ckpt_calloc(nroots, sizeof *b->to, e)) == NULL))
		return -1;
	for (size_t i = 0; i < nroots; i++) {
		const char *eq = strchr(roots[i], '=');

		if (eq == NULL || eq == roots[i] || eq[1] == '\0')
			return ckpt_err_set(e, CKPT_ERR_INPUT, roots[i], "a root is OLDPREFIX=DIR");
		b->from[i] = strndup(roots[i], (size_t)(eq - roots[i]));
		b->to[i] = strdup(eq + 1);
		b->nroots = i + 1;
		if (b->from[i] == NULL || b->to[i] == NULL)
			return ckpt_err_nomem(e, "");
	}
	b->base.load = flink_load;
	b->base.check = flink_check;
	b->base.done = flink_done;
	b->base.print = flink_print;
	return 0;
}
