/* state-diff.c: -d, the differences between the state of two Flink snapshots: operator state
 * compared whole, keyed state a window of key groups at a time, the windows on every processor. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readers.h"
#include "model/model.h"

/* ------------------------------------------------------------ -d */

/* Entries of one operator by identity: keyed entries by (state, key group, key) to their value's
 * hash; operator state elements by (state, element hash) to their count. */
/*
 * -d: operator state is compared whole (Flink holds it whole on restore too); keyed state a
 * window of key groups at a time, so that what is held follows the largest window of the first
 * snapshot (about DIFF_WINDOW bytes of its files, or one key group bigger than that), never the
 * snapshot: its entries' identities (state and key, exact) in an arena, their values by XXH3.
 * Each operator's operator state and each window is a task of its own (ckpt_fstate_run), its
 * differences counted apart and added up in the tasks' order afterwards: the states are named in
 * the order one thread meets them, and the error said is the first task's that failed.
 */
#define DIFF_WINDOW ((uint64_t)2 << 20)

struct dentry { /* 32 bytes: a window's table stays in the caches of a processor shared by threads */
	const unsigned char *id; /* state name, NUL, key: in the arena; NULL for a free slot */
	uint64_t h, vh;
	uint32_t n;              /* a key's length is an i32 (diff_kv refuses more) */
	uint32_t kg : 31;
	uint32_t live : 1;       /* not found in the second snapshot (yet) */
};

struct differ {
	json_t *seen;    /* operator state: identity -> count */
	json_t *states;  /* state -> {"added", "removed", "changed", "key_groups": {kg: {...}}} */
	int pass;        /* 0 reading a, 1 reading b */
	struct ckpt_err *e;
	struct dentry *t; /* keyed state of a's window: open addressing, cap a power of two */
	size_t cap, n;
	struct ckpt_model_arena *arena;
	unsigned char *id; /* the identity being looked up */
	size_t idcap;
	struct differ *next; /* in the pool of idle ones */
	/* the differences counted since the state or key group last changed, not yet in states (a
	 * window's millions of added or removed entries cost a count each, not a JSON update each) */
	char pstate[256];
	long pkg;
	json_int_t pn[3]; /* added, removed, changed; all 0: nothing pending */
	size_t prefix;    /* the key-group prefix of a key: 1 or 2 bytes */
};

/* Before a state's name in D->states: the timestamps of its processing-time timers changed */
#define TIMESTAMPS '\x01'


static const char *const kinds[3] = {"added", "removed", "changed"};

/* Add n[kind] differences of each kind to state (and key group kg, or -1) in D->states. */
static int
diff_add(struct differ *D, const char *state, long kg, const json_int_t n[3])
{
	json_t *st = json_object_get(D->states, state), *g;
	char k[16];

	if (st == NULL && json_object_set_new(D->states, state, st = json_pack("{s:i, s:i, s:i}", "added", 0,
									    "removed", 0, "changed", 0)) < 0)
		return ckpt_err_nomem(D->e, "");
	for (int i = 0; i < 3; i++)
		if (n[i])
			ckpt_fstate_add_int(st, kinds[i], n[i]);
	if (kg < 0)
		return 0;
	if ((g = json_object_get(st, "key_groups")) == NULL)
		json_object_set_new(st, "key_groups", g = json_object());
	snprintf(k, sizeof k, "%ld", kg);
	if (json_object_get(g, k) == NULL)
		json_object_set_new(g, k, json_pack("{s:i, s:i, s:i}", "added", 0, "removed", 0, "changed", 0));
	for (int i = 0; i < 3; i++)
		if (n[i])
			ckpt_fstate_add_int(json_object_get(g, k), kinds[i], n[i]);
	return 0;
}

/* What is pending into D->states. */
static int
diff_flush(struct differ *D)
{
	int rc = 0;

	if (D->pn[0] || D->pn[1] || D->pn[2])
		rc = diff_add(D, D->pstate, D->pkg, D->pn);
	D->pn[0] = D->pn[1] = D->pn[2] = 0;
	return rc;
}

/* Count one difference of kind ("added", "removed", "changed") for state (and key group, or -1):
 * pending while the state and key group stay those of the last one, so that D->states gets them in
 * the order they were met. */
static int
diff_count(struct differ *D, const char *state, long kg, const char *kind)
{
	int i = kind[0] == 'a' ? 0 : kind[0] == 'r' ? 1 : 2;

	if (!(D->pn[0] || D->pn[1] || D->pn[2]) || kg != D->pkg || strcmp(state, D->pstate) != 0) {
		if (diff_flush(D) < 0)
			return -1;
		if (strlen(state) >= sizeof D->pstate) { /* too long to keep: said now */
			json_int_t n[3] = {0};

			n[i] = 1;
			return diff_add(D, state, kg, n);
		}
		strcpy(D->pstate, state);
		D->pkg = kg;
	}
	D->pn[i]++;
	return 0;
}

static int
diff_op(void *arg, const char *state, size_t idx, const unsigned char *p, size_t n, json_t *typed)
{
	struct differ *D = arg;
	char id[600];
	json_t *c;

	(void)idx;
	json_decref(typed);
	snprintf(id, sizeof id, "o\x1f%s\x1f%016llx", state, (unsigned long long)ckpt_xxh3(p, n));
	c = json_object_get(D->seen, id);
	if (D->pass == 0)
		return json_object_set_new(D->seen, id, json_integer(json_integer_value(c) + 1)) < 0 ?
			ckpt_err_nomem(D->e, "") : 0;
	if (c == NULL || json_integer_value(c) == 0)
		return diff_count(D, state, -1, "added");
	json_object_set_new(D->seen, id, json_integer(json_integer_value(c) - 1));
	return 0;
}

/* The slot of identity id (hash h): where it is, or the free slot where it would go. */
static struct dentry *
diff_slot(struct differ *D, const unsigned char *id, size_t n, uint64_t h)
{
	for (size_t i = h & (D->cap - 1);; i = (i + 1) & (D->cap - 1)) {
		struct dentry *d = &D->t[i];

		if (d->id == NULL || (d->h == h && d->n == n && memcmp(d->id, id, n) == 0))
			return d;
	}
}

static int
diff_grow(struct differ *D)
{
	struct dentry *old = D->t;
	size_t ocap = D->cap;

	D->cap = ocap ? 2 * ocap : 1024;
	if ((D->t = calloc(D->cap, sizeof *D->t)) == NULL) {
		D->t = old;
		D->cap = ocap;
		return ckpt_err_nomem(D->e, "");
	}
	for (size_t i = 0; i < ocap; i++)
		if (old[i].id)
			*diff_slot(D, old[i].id, old[i].n, old[i].h) = old[i];
	free(old);
	return 0;
}

/* A processing-time timer's state: its timers' timestamps differ between any two runs. */
static int
is_ptimer(const char *state)
{
	return strncmp(state, "_timer_state/processing_", 24) == 0;
}

/* D->id: state, NUL, key; for a processing-time timer (key: key-group prefix, timestamp, key,
 * namespace) without its timestamp, then occ, the how-manieth timer of that key and namespace. */
static int
diff_id(struct differ *D, const char *state, const unsigned char *k, size_t kn, int ptimer, uint32_t occ,
	size_t *np)
{
	size_t sn = strlen(state), n = sn + 1 + kn + (ptimer ? 4 : 0);

	if (n > UINT32_MAX)
		return ckpt_err_set(D->e, CKPT_ERR_INPUT, "", "a key of state \"%s\" of %zu bytes", state, kn);
	if (n > D->idcap) {
		if (ckpt_grow(&D->id, &D->idcap, n, 1, n, D->e) < 0)
			return -1;
	}
	memcpy(D->id, state, sn + 1);
	if (ptimer) {
		memcpy(D->id + sn + 1, k, D->prefix);
		memcpy(D->id + sn + 1 + D->prefix, k + D->prefix + 8, kn - D->prefix - 8);
		memcpy(D->id + n - 12, &occ, 4);
		n -= 8;
	} else {
		memcpy(D->id + sn + 1, k, kn);
	}
	*np = n;
	return 0;
}

static int
diff_kv(void *arg, const char *state, uint32_t kg, const unsigned char *k, size_t kn, const unsigned char *v,
	size_t vn, struct ckpt_fstate_typed *typed)
{
	struct differ *D = arg;
	int ptimer = is_ptimer(state) && kn >= D->prefix + 8;
	struct dentry *d;
	uint64_t h;
	size_t n = 0;

	(void)typed;
	if (ptimer) { /* the timestamp is the timer's value */
		v = k + D->prefix;
		vn = 8;
	}
	for (uint32_t occ = 0;; occ++) {
		if (diff_id(D, state, k, kn, ptimer, occ, &n) < 0)
			return -1;
		h = ckpt_xxh3(D->id, n);
		/* at most half full: the table's order is the order removed entries are counted in */
		if (D->pass == 0 && 2 * (D->n + 1) > D->cap && diff_grow(D) < 0)
			return -1;
		d = D->cap ? diff_slot(D, D->id, n, h) : NULL;
		if (!ptimer || d == NULL || d->id == NULL || (D->pass == 1 && d->live))
			break; /* another timer of that key and namespace: the next occurrence */
	}
	if (D->pass == 1) {
		char ts[300];

		if (d == NULL || d->id == NULL || !d->live)
			return diff_count(D, state, kg, "added");
		d->live = 0;
		if (d->vh == ckpt_xxh3(v, vn))
			return 0;
		if (!ptimer || strlen(state) + 2 > sizeof ts)
			return diff_count(D, state, kg, "changed");
		snprintf(ts, sizeof ts, "%c%s", TIMESTAMPS, state); /* reported apart */
		return diff_count(D, ts, kg, "changed");
	}
	if (d->id == NULL) {
		unsigned char *q = ckpt_model_arena_alloc(D->arena, n);

		if (q == NULL)
			return ckpt_err_nomem(D->e, "");
		memcpy(q, D->id, n);
		*d = (struct dentry){.id = q, .n = (uint32_t)n, .h = h, .kg = kg};
		D->n++;
	}
	d->vh = ckpt_xxh3(v, vn);
	d->live = 1;
	return 0;
}

static int diff_clear(struct differ *D);

/* What is left of a after b: removed entries (operator state, and the keyed window), then
 * forgotten. */
static int
diff_removed(struct differ *D)
{
	const char *id;
	json_t *v;

	json_object_foreach(D->seen, id, v) {
		char state[600];
		const char *a = id + 2, *b = strchr(a, '\x1f');

		snprintf(state, sizeof state, "%.*s", (int)(b - a), a);
		for (json_int_t i = 0; i < json_integer_value(v); i++)
			if (diff_count(D, state, -1, "removed") < 0)
				return -1;
	}
	json_object_clear(D->seen);
	for (size_t i = 0; i < D->cap; i++)
		if (D->t[i].id && D->t[i].live && diff_count(D, (const char *)D->t[i].id, D->t[i].kg, "removed") < 0)
			return -1;
	if (diff_flush(D) < 0)
		return -1;
	return diff_clear(D);
}

/* Forget a's window. */
static int
diff_clear(struct differ *D)
{
	ckpt_model_arena_free(D->arena);
	if ((D->arena = ckpt_model_arena_new()) == NULL)
		return ckpt_err_nomem(D->e, "");
	if (D->cap)
		memset(D->t, 0, D->cap * sizeof *D->t);
	D->n = 0;
	return 0;
}

static int
diff_side(struct ckpt_fstate_backing_data *b, const struct ckpt_operator *op, const struct ckpt_fstate_sink *k,
	  struct ckpt_err *e)
{
	for (size_t j = 0; op && j < op->nsubtasks; j++)
		if (ckpt_fstate_read_subtask(b, op, &op->subtasks[j], k, e) < 0)
			return -1;
	return 0;
}

/* Bytes of op's keyed state files in each of its key groups (about: what lies between one key
 * group's offset and the next one's up) into by[0, m).  0, or -1 with e set. */
static int
kg_bytes(const struct ckpt_operator *op, uint64_t *by, uint32_t m, struct ckpt_err *e)
{
	for (size_t j = 0; op && j < op->nsubtasks; j++)
		for (size_t i = 0; i < op->subtasks[j].nhandles; i++) {
			const struct ckpt_handle *h = &op->subtasks[j].handles[i];
			const char *r = json_string_value(json_object_get(h->detail, "key_groups"));
			const json_t *offs = json_object_get(h->detail, "offsets");
			size_t n = json_array_size(offs);
			unsigned a = 0, z = 0;
			int got = r && ckpt_fstate_handle_role(h) == 3 ? sscanf(r, "%u-%u", &a, &z) : 0;
			struct ckpt_fstate_kgoff *o;

			if (got == 1)
				z = a;
			if (got <= 0 || n == 0)
				continue;
			if ((o = ckpt_calloc(n, sizeof *o, e)) == NULL)
				return -1;
			for (size_t x = 0; x < n; x++)
				o[x] = (struct ckpt_fstate_kgoff){(uint64_t)json_integer_value(json_array_get(offs, x)), a + (uint32_t)x};
			qsort(o, n, sizeof *o, ckpt_fstate_cmp_kgoff); /* each one's end is the next one's start up */
			for (size_t x = n, next = 0; x-- > 0;) {
				uint64_t end = h->size;

				if (x + 1 < n && o[x + 1].off > o[x].off)
					next = x + 1;
				if (next)
					end = o[next].off;
				if (o[x].kg <= z && o[x].kg < m && o[x].off && end > o[x].off)
					by[o[x].kg] += end - o[x].off;
			}
			free(o);
		}
	return 0;
}

/* The operators compared (oa or ob may be NULL), each one's tasks: its operator state (hi 0), then
 * its windows of key groups [lo, hi), each task's differences (res) kept until they are added up. */
struct dpair {
	const struct ckpt_operator *oa, *ob;
};

struct dtask {
	size_t pair;
	uint32_t lo, hi;
};

struct drun {
	struct ckpt_fstate_backing_data *ba, *bb;
	struct dpair *pairs;
	size_t npairs, paircap;
	struct dtask *t;
	size_t n, cap;
	json_t **res;
	struct differ *idle; /* the pool: one differ a thread at most, each kept for the next task */
	json_t *unread;      /* ids of the operators --keep-going left out */
	pthread_mutex_t mu;
};

static void
differ_free(struct differ *D)
{
	json_decref(D->seen);
	json_decref(D->states);
	ckpt_model_arena_free(D->arena);
	free(D->t);
	free(D->id);
	free(D);
}

/* An idle differ, or a new one.  NULL with e set when there is no memory. */
static struct differ *
differ_take(struct drun *R, struct ckpt_err *e)
{
	struct differ *D;

	pthread_mutex_lock(&R->mu);
	if ((D = R->idle) != NULL)
		R->idle = D->next;
	pthread_mutex_unlock(&R->mu);
	if (D == NULL && (D = calloc(1, sizeof *D)) != NULL &&
	    ((D->seen = json_object()) == NULL || (D->arena = ckpt_model_arena_new()) == NULL)) {
		differ_free(D);
		D = NULL;
	}
	if (D == NULL)
		ckpt_err_nomem(e, "");
	return D;
}

/* D back to the pool, what it held of its task forgotten. */
static void
differ_give(struct drun *R, struct differ *D)
{
	struct ckpt_err scratch = {0};

	D->e = &scratch; /* the task's error stays the one it said */
	D->pn[0] = D->pn[1] = D->pn[2] = 0;
	json_object_clear(D->seen);
	json_decref(D->states);
	D->states = NULL;
	if (D->n && diff_clear(D) < 0) { /* no memory for a new arena: this one is not kept */
		differ_free(D);
		return;
	}
	pthread_mutex_lock(&R->mu);
	D->next = R->idle;
	R->idle = D;
	pthread_mutex_unlock(&R->mu);
}

/* Task i: one operator's operator state, or one window of its keyed state: a, then b, then what
 * is left of a.  Its differences into R->res[i]. */
static int
diff_task(void *arg, size_t i, struct ckpt_err *e)
{
	struct drun *R = arg;
	const struct dtask *t = &R->t[i];
	const struct dpair *p = &R->pairs[t->pair];
	struct differ *D = differ_take(R, e);
	struct ckpt_fstate_sink k = {.op = diff_op, .kv = diff_kv, .arg = D, .untyped = 1, .part = t->hi ? 2 : 1,
			  .kg_lo = t->lo, .kg_hi = t->hi};
	uint32_t ma = p->oa ? p->oa->max_parallelism : 0, mb = p->ob ? p->ob->max_parallelism : 0;
	int rc = -1;

	if (D == NULL)
		return -1;
	D->e = e;
	D->prefix = ckpt_flink_kg_prefix(ma > mb ? ma : mb);
	if ((D->states = json_object()) == NULL) {
		ckpt_err_nomem(D->e, "");
		goto out;
	}
	D->pass = 0;
	if (diff_side(R->ba, p->oa, &k, e) < 0)
		goto out;
	D->pass = 1;
	if (diff_side(R->bb, p->ob, &k, e) < 0 || diff_removed(D) < 0)
		goto out;
	R->res[i] = D->states; /* each task its own slot: no lock */
	D->states = NULL;
	rc = 0;
out:
	differ_give(R, D);
	return rc;
}

/* Add the task (or pair) p, of window [lo, hi) (hi 0: operator state), to R's tasks. */
static int
diff_add_task(struct drun *R, size_t p, uint32_t lo, uint32_t hi, struct ckpt_err *e)
{
	if (ckpt_grow(&R->t, &R->cap, R->n + 1, sizeof *R->t, 64, e) < 0)
		return -1;
	R->t[R->n++] = (struct dtask){.pair = p, .lo = lo, .hi = hi};
	return 0;
}

/* Pair p's tasks: its operator state, then windows of key groups whose bytes in a add up to
 * DIFF_WINDOW, at least one key group each. */
static int
diff_plan(struct drun *R, size_t p, struct ckpt_err *e)
{
	const struct ckpt_operator *oa = R->pairs[p].oa, *ob = R->pairs[p].ob;
	uint32_t m = 1, lo = 0;
	uint64_t *by;
	int rc = -1;

	if (diff_add_task(R, p, 0, 0, e) < 0)
		return -1;
	if (oa && oa->max_parallelism > m)
		m = oa->max_parallelism;
	if (ob && ob->max_parallelism > m)
		m = ob->max_parallelism;
	if ((by = ckpt_calloc(m, sizeof *by, e)) == NULL)
		return -1;
	if (kg_bytes(oa, by, m, e) < 0)
		goto out;
	while (lo < m) {
		uint64_t sum = by[lo];
		uint32_t hi = lo + 1;

		while (hi < m && sum + by[hi] <= DIFF_WINDOW)
			sum += by[hi++];
		if (diff_add_task(R, p, lo, hi, e) < 0)
			goto out;
		lo = hi;
	}
	rc = 0;
out:
	free(by);
	return rc;
}

/* The counts of from (a task's differences) added to into (its operator's so far): a state not
 * in into yet goes at its end, as one thread would have met it. */
static int
diff_merge(json_t *into, json_t *from)
{
	const char *name, *kg;
	json_t *st, *g, *v;

	json_object_foreach(from, name, st) {
		json_t *to = json_object_get(into, name), *tg;

		if (to == NULL) {
			if (json_object_set(into, name, st) < 0)
				return -1;
			continue;
		}
		ckpt_fstate_add_int(to, "added", json_integer_value(json_object_get(st, "added")));
		ckpt_fstate_add_int(to, "removed", json_integer_value(json_object_get(st, "removed")));
		ckpt_fstate_add_int(to, "changed", json_integer_value(json_object_get(st, "changed")));
		if ((g = json_object_get(st, "key_groups")) == NULL)
			continue;
		if ((tg = json_object_get(to, "key_groups")) == NULL) {
			if (json_object_set(to, "key_groups", g) < 0)
				return -1;
			continue;
		}
		json_object_foreach(g, kg, v) /* windows hold disjoint key groups */
			if (json_object_set(tg, kg, v) < 0)
				return -1;
	}
	return 0;
}

static const struct ckpt_operator *
op_by_id(const struct ckpt_snapshot *s, const char *id)
{
	for (size_t i = 0; i < s->nops; i++)
		if (strcmp(s->ops[i].id, id) == 0)
			return &s->ops[i];
	return NULL;
}

static int
cmp_kgkey(const void *a, const void *b)
{
	long x = strtol(*(const char *const *)a, NULL, 10), y = strtol(*(const char *const *)b, NULL, 10);

	return (x > y) - (x < y);
}

/* Each state's key groups in numeric order, whichever order they were met in. */
static int
diff_sort(json_t *states)
{
	const char *name, *kg;
	json_t *st, *v;

	json_object_foreach(states, name, st) {
		json_t *g = json_object_get(st, "key_groups"), *sorted = json_object();
		size_t n = 0, i = 0;
		const char **keys = g ? calloc(json_object_size(g) + 1, sizeof *keys) : NULL;

		if (g == NULL) {
			json_decref(sorted);
			continue;
		}
		if (keys == NULL || sorted == NULL) {
			free(keys);
			json_decref(sorted);
			return -1;
		}
		json_object_foreach(g, kg, v)
			keys[n++] = kg;
		qsort(keys, n, sizeof *keys, cmp_kgkey);
		for (i = 0; i < n; i++)
			if (json_object_set(sorted, keys[i], json_object_get(g, keys[i])) < 0)
				break;
		free(keys);
		if (i < n) {
			json_decref(sorted);
			return -1;
		}
		if (json_object_set_new(st, "key_groups", sorted) < 0)
			return -1;
	}
	return 0;
}

/* Has op a subtask --keep-going leaves out? */
static int
unread(const struct ckpt_fstate_backing_data *b, const struct ckpt_operator *op)
{
	for (size_t j = 0; op && j < op->nsubtasks; j++)
		if (ckpt_fstate_skipped(b, &op->subtasks[j]))
			return 1;
	return 0;
}

/* The operators of a, each with b's of its id, then those of b alone, into R->pairs. */
static int
diff_pairs(struct drun *R, const struct ckpt_snapshot *a, const struct ckpt_snapshot *b, struct ckpt_err *e)
{
	for (size_t pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < (pass ? b->nops : a->nops); i++) {
			const struct ckpt_operator *oa = pass ? op_by_id(a, b->ops[i].id) : &a->ops[i];
			const struct ckpt_operator *ob = pass ? &b->ops[i] : op_by_id(b, a->ops[i].id);

			if (pass && oa) /* done in the first pass */
				continue;
			if (unread(R->ba, oa) || unread(R->bb, ob)) { /* --keep-going left it out */
				if (json_array_append_new(R->unread, json_string(oa ? oa->id : ob->id)) < 0)
					return ckpt_err_nomem(e, "");
				continue;
			}
			if (ckpt_grow(&R->pairs, &R->paircap, R->npairs + 1, sizeof *R->pairs, 16, e) < 0)
				return -1;
			R->pairs[R->npairs] = (struct dpair){oa, ob};
			if (diff_plan(R, R->npairs++, e) < 0)
				return -1;
		}
	return 0;
}

/* The states of states whose name begins with TIMESTAMPS moved to timers[id], the mark taken off. */
static int
diff_apart(json_t *states, json_t *timers, const char *id)
{
	json_t *t = NULL, *v;
	const char *name;
	void *tmp;

	json_object_foreach_safe(states, tmp, name, v) {
		if (name[0] != TIMESTAMPS)
			continue;
		if ((t == NULL && json_object_set_new(timers, id, t = json_object()) < 0) ||
		    json_object_set(t, name + 1, v) < 0)
			return -1;
		json_object_del(states, name);
	}
	return 0;
}

/* Each pair's tasks' differences added up, in order, into out by operator id (the timestamps of
 * processing-time timers into timers). */
static int
diff_collect(struct drun *R, json_t *out, json_t *timers, int *differ, struct ckpt_err *e)
{
	for (size_t p = 0, i = 0; p < R->npairs; p++) {
		json_t *states = json_object();
		const char *id = R->pairs[p].oa ? R->pairs[p].oa->id : R->pairs[p].ob->id;

		if (states == NULL)
			return ckpt_err_nomem(e, "");
		for (; i < R->n && R->t[i].pair == p; i++)
			if (diff_merge(states, R->res[i]) < 0) {
				json_decref(states);
				return ckpt_err_nomem(e, "");
			}
		if (diff_sort(states) < 0 || diff_apart(states, timers, id) < 0) {
			json_decref(states);
			return ckpt_err_nomem(e, "");
		}
		if (json_object_size(states) == 0) {
			json_decref(states);
			continue;
		}
		*differ = 1;
		if (json_object_set_new(out, id, states) < 0)
			return ckpt_err_nomem(e, "");
	}
	return 0;
}

/* ------------------------------------------------------------ -d --rows */

/* The rows of one side of task t (-R's, of its operator and window), each by identity: the row
 * without subtask and value (keyed state), or without subtask and index (operator state: its
 * elements compared as a multiset), then "#n", its how-manieth of that identity.  NULL with e set. */
static json_t *
rows_side(struct ckpt_fstate_backing_data *b, const struct ckpt_operator *op, const struct dtask *t, struct ckpt_err *e)
{
	json_t *by = json_object(), *seen = json_object();
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	struct ckpt_jw *w = f ? ckpt_jw_new(f, 0, e) : NULL;
	int rc = w == NULL || by == NULL || seen == NULL ? -1 : ckpt_fstate_rows_op(b, op, t->hi ? 2 : 1, t->lo, t->hi, w, e);

	ckpt_jw_flush(w);
	ckpt_jw_free(w);
	if (f && fclose(f) != 0)
		rc = -1;
	for (char *p = buf, *nl; rc == 0 && p && (nl = memchr(p, '\n', n - (size_t)(p - buf))) != NULL; p = nl + 1) {
		json_t *row = json_loadb(p, (size_t)(nl - p), 0, NULL), *id = json_deep_copy(row);
		char *key = NULL, *occ = NULL;
		json_int_t c;

		rc = -1;
		if (row && id) {
			json_object_del(id, "subtask");
			json_object_del(id, t->hi ? "value" : "index");
			key = json_dumps(id, JSON_COMPACT | JSON_SORT_KEYS);
		}
		if (key && (occ = malloc(strlen(key) + 32)) != NULL) {
			c = json_integer_value(json_object_get(seen, key));
			sprintf(occ, "%s#%lld", key, (long long)c);
			if (json_object_set_new(seen, key, json_integer(c + 1)) == 0 && json_object_set(by, occ, row) == 0)
				rc = 0;
		}
		free(key);
		free(occ);
		json_decref(row);
		json_decref(id);
	}
	free(buf);
	json_decref(seen);
	if (rc < 0) {
		if (e->kind == CKPT_ERR_NONE)
			ckpt_err_nomem(e, "");
		json_decref(by);
		return NULL;
	}
	return by;
}

/* One row of change to f: row with "change" first; for "changed" and "timestamp", "old" and "new" for "value". */
static int
row_out(FILE *f, const char *change, json_t *row, json_t *old)
{
	json_t *o = json_pack("{s:s}", "change", change);
	int rc;

	if (o == NULL || json_object_update(o, row) < 0) {
		json_decref(o);
		return -1;
	}
	if (old) {
		json_object_set(o, "old", json_object_get(old, "value"));
		json_object_set(o, "new", json_object_get(row, "value"));
		json_object_del(o, "value");
	}
	rc = ckpt_json_print(f, o, 0);
	json_decref(o);
	return rc;
}

/* Task t's rows changed: b's in its order (added, changed), then what is left of a's (removed). */
static int
rows_task(struct drun *R, const struct dtask *t, FILE *f, struct ckpt_err *e)
{
	const struct dpair *p = &R->pairs[t->pair];
	json_t *a = rows_side(R->ba, p->oa, t, e), *b = a ? rows_side(R->bb, p->ob, t, e) : NULL, *ra, *rb;
	const char *id;
	int rc = -1;

	if (b == NULL)
		goto out;
	json_object_foreach(b, id, rb) {
		const char *change = "added", *state = json_string_value(json_object_get(rb, "state"));

		if ((ra = json_object_get(a, id)) != NULL) {
			if (json_equal(json_object_get(ra, "value"), json_object_get(rb, "value"))) {
				json_object_del(a, id);
				continue;
			}
			change = t->hi && state && is_ptimer(state) ? "timestamp" : "changed";
		}
		if (row_out(f, change, rb, ra) < 0)
			goto fail;
		if (ra)
			json_object_del(a, id);
	}
	json_object_foreach(a, id, ra)
		if (row_out(f, "removed", ra, NULL) < 0)
			goto fail;
	rc = 0;
	goto out;
fail:
	ckpt_err_sys(e, "stdout", "write error");
out:
	json_decref(a);
	json_decref(b);
	return rc;
}

/* The key groups of a keyed task's differences (res: state -> {"key_groups": {kg: ...}}) into
 * has[lo, hi), marked. */
static void
kgs_marked(json_t *res, unsigned char *has, uint32_t lo, uint32_t hi)
{
	const char *name, *kg;
	json_t *st, *v;

	json_object_foreach(res, name, st)
		json_object_foreach(json_object_get(st, "key_groups"), kg, v) {
			unsigned long g = strtoul(kg, NULL, 10);

			if (g >= lo && g < hi)
				has[g - lo] = 1;
		}
}

/* -d --rows: the rows of every task that found a difference, in the tasks' order; of a keyed
 * task, only its runs of key groups where a difference was counted are read again. */
static int
diff_rows(struct drun *R, FILE *f, struct ckpt_err *e)
{
	for (size_t i = 0; i < R->n; i++) {
		struct dtask t = R->t[i];
		unsigned char *has;

		if (json_object_size(R->res[i]) == 0)
			continue;
		if (t.hi == 0) {
			if (rows_task(R, &t, f, e) < 0)
				return -1;
			continue;
		}
		if ((has = ckpt_calloc(t.hi - t.lo, 1, e)) == NULL)
			return -1;
		kgs_marked(R->res[i], has, R->t[i].lo, R->t[i].hi);
		for (uint32_t g = R->t[i].lo; g < R->t[i].hi;) {
			for (t.lo = g; t.lo < R->t[i].hi && !has[t.lo - R->t[i].lo]; t.lo++)
				;
			for (t.hi = t.lo; t.hi < R->t[i].hi && has[t.hi - R->t[i].lo]; t.hi++)
				;
			if (t.lo < t.hi && rows_task(R, &t, f, e) < 0) {
				free(has);
				return -1;
			}
			g = t.hi;
		}
		free(has);
	}
	return fflush(f) == EOF ? ckpt_err_sys(e, "stdout", "write error") : 0;
}

json_t *
ckpt_flink_state_diff(struct ckpt_snapshot *a, struct ckpt_snapshot *b, struct ckpt_flink_diff *d, struct ckpt_err *e)
{
	struct ckpt_fstate_backing_data *ba = ckpt_fstate_backing(a, e), *bb = ba ? ckpt_fstate_backing(b, e) : NULL;
	struct drun R = {.ba = ba, .bb = bb, .mu = PTHREAD_MUTEX_INITIALIZER, .unread = json_array()};
	json_t *out = NULL;

	if (bb == NULL || R.unread == NULL) {
		json_decref(R.unread);
		if (bb && R.unread == NULL)
			ckpt_err_nomem(e, "");
		return NULL;
	}
	ckpt_fstate_progress(a, b, ba->skip ? 2 : 1);
	/* --keep-going: an operator with a subtask that cannot be read is left out (diff_pairs) */
	if ((ba->skip && ckpt_fstate_check_all(a, e) < 0) || (bb->skip && ckpt_fstate_check_all(b, e) < 0) ||
	    diff_pairs(&R, a, b, e) < 0 || (R.res = ckpt_calloc(R.n + 1, sizeof *R.res, e)) == NULL ||
	    ckpt_fstate_run(R.n, diff_task, &R, NULL, e) < 0)
		goto out;
	if ((out = json_object()) == NULL) {
		ckpt_err_nomem(e, "");
		goto out;
	}
	d->unread = R.unread;
	R.unread = NULL;
	if ((d->timers = json_object()) == NULL || diff_collect(&R, out, d->timers, &d->differ, e) < 0 ||
	    (d->rows && diff_rows(&R, d->rows, e) < 0)) {
		json_decref(out);
		json_decref(d->timers);
		json_decref(d->unread);
		d->timers = d->unread = NULL;
		out = NULL;
	}
out:
	for (size_t i = 0; R.res && i < R.n; i++)
		json_decref(R.res[i]);
	while (R.idle) {
		struct differ *D = R.idle;

		R.idle = D->next;
		differ_free(D);
	}
	free(R.res);
	free(R.t);
	free(R.pairs);
	json_decref(R.unread);
	ckpt_progress_end(a);
	return out;
}
