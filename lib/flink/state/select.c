/* select.c: --uid, --state and -k (ckpt_flink_state_select): the sink every state reader feeds,
 * narrowed so that what is not asked for is not read (a subtask of another operator, a key group
 * other than the key's) or not given on (an entry of another state or key). */
#include <stdlib.h>
#include <string.h>

#include "readers.h"

struct ckpt_fselect {
	const struct ckpt_operator *ops; /* the snapshot's, for an operator's index */
	size_t nops;
	unsigned char *chosen;           /* per operator: selected */
	char *state;                     /* NULL: every state */
	json_t *key;                     /* NULL: every key */
	char *text;                      /* the key as the user wrote it */
	pthread_mutex_t mu;              /* the check reads subtasks on several threads */
	struct fkg { int known; uint32_t kg; } *kg; /* per operator: the key's key group, once a header said */
	int buffered;                    /* no check pass before -a and -R print (the caller buffers) */
	char **names;                    /* --state: the states the headers read name (ckpt_flink_state_found) */
	size_t nnames, cap;
	int headers, found;              /* a header was read; one named the state */
};

static int
uid_names(const struct ckpt_operator *op, const char *u)
{
	char id[33];

	if ((op->uid && strcmp(op->uid, u) == 0) || strcmp(op->id, u) == 0)
		return 1;
	ckpt_flink_operator_id(u, strlen(u), id);
	return strcmp(op->id, id) == 0;
}

struct ckpt_fselect *
ckpt_fselect_new(const struct ckpt_snapshot *s, const struct ckpt_flink_select *sel, struct ckpt_err *e)
{
	struct ckpt_fselect *f = ckpt_calloc(1, sizeof *f, e);

	if (f == NULL)
		return NULL;
	f->ops = s->ops;
	f->nops = s->nops;
	f->buffered = sel->buffered;
	pthread_mutex_init(&f->mu, NULL);
	if ((f->chosen = ckpt_calloc(s->nops + 1, 1, e)) == NULL || (f->kg = ckpt_calloc(s->nops + 1, sizeof *f->kg, e)) == NULL)
		goto fail;
	for (size_t i = 0; i < s->nops; i++) {
		f->chosen[i] = sel->nuids == 0;
		for (size_t u = 0; u < sel->nuids && !f->chosen[i]; u++)
			f->chosen[i] = uid_names(&s->ops[i], sel->uids[u]);
	}
	if (sel->state && (f->state = ckpt_strdup(sel->state, e)) == NULL)
		goto fail;
	if (sel->key) {
		f->key = json_incref((json_t *)sel->key);
		if ((f->text = ckpt_strdup(sel->key_text ? sel->key_text : "?", e)) == NULL)
			goto fail;
	}
	return f;
fail:
	ckpt_fselect_free(f);
	return NULL;
}

void
ckpt_fselect_free(struct ckpt_fselect *f)
{
	if (f == NULL)
		return;
	pthread_mutex_destroy(&f->mu);
	free(f->chosen);
	free(f->kg);
	free(f->state);
	json_decref(f->key);
	free(f->text);
	for (size_t i = 0; i < f->nnames; i++)
		free(f->names[i]);
	free(f->names);
	free(f);
}

int
ckpt_fselect_buffered(const struct ckpt_fselect *f)
{
	return f && f->buffered;
}

int
ckpt_fselect_partial(const struct ckpt_fselect *f)
{
	return f && (f->state || f->key);
}

int
ckpt_fselect_operator(const struct ckpt_fselect *f, const struct ckpt_operator *op)
{
	if (f == NULL)
		return 1;
	return (size_t)(op - f->ops) >= f->nops || f->chosen[op - f->ops];
}

/* ---------------------------------------------------------------- the narrowed sink */

static const struct ckpt_fstate_meta *
meta_of(const struct ckpt_fstate_header *h, const char *state)
{
	for (size_t i = 0; h && i < h->n; i++)
		if (strcmp(h->m[i].name, state) == 0)
			return &h->m[i];
	return NULL;
}

/* --state: the states a header names, so that a name none of them holds is told (ckpt_flink_state_found). */
static int
note_states(struct ckpt_fselect *f, const struct ckpt_fstate_header *h, struct ckpt_err *e)
{
	int rc = 0;

	pthread_mutex_lock(&f->mu);
	f->headers = 1;
	for (size_t i = 0; i < h->n && rc == 0; i++) {
		size_t k = 0;

		f->found |= strcmp(h->m[i].name, f->state) == 0;
		while (k < f->nnames && strcmp(f->names[k], h->m[i].name) != 0)
			k++;
		if (k < f->nnames)
			continue;
		if (ckpt_grow(&f->names, &f->cap, f->nnames + 1, sizeof *f->names, 8, e) < 0 ||
		    (f->names[f->nnames] = ckpt_strdup(h->m[i].name, e)) == NULL)
			rc = -1;
		else
			f->nnames++;
	}
	pthread_mutex_unlock(&f->mu);
	return rc;
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
ckpt_fselect_found(struct ckpt_fselect *f, char *names, size_t size)
{
	size_t at = 0;

	if (size)
		names[0] = '\0';
	if (f == NULL || f->state == NULL || !f->headers || f->found)
		return 1;
	qsort(f->names, f->nnames, sizeof *f->names, by_name);
	for (size_t i = 0; i < f->nnames && at < size; i++) {
		int n = snprintf(names + at, size - at, "%s%s", i ? ", " : "", f->names[i]);

		at += n > 0 ? (size_t)n : 0;
	}
	return 0;
}

/* -k in a shard's key groups (the sink's window): the key's key group when it is one of them, else
 * an empty window (nothing more of the handle read). */
static void
key_window(struct ckpt_fstate_wrap *w)
{
	if (kg_skipped(w->in, w->k.kg_lo))
		w->k.kg_lo = w->k.kg_hi = UINT32_MAX;
}

/* The key's bytes under this header's key serializer; its key group, the window from here on. */
static int
w_header(void *arg, const char *scope, const struct ckpt_fstate_header *h)
{
	struct ckpt_fstate_wrap *w = arg;
	struct ckpt_fselect *f = w->f;
	size_t i = (size_t)(w->op - f->ops);
	char where[600];

	if (strcmp(scope, "keyed") == 0) {
		w->h = h;
		if (f->key && w->key.bytes == NULL) {
			snprintf(where, sizeof where, "%s: operator %s", w->meta, w->op->id);
			if (h->key == NULL)
				return ckpt_err_set(w->e, CKPT_ERR_INPUT, where, "-k %s: the key serializer is not known, so "
						    "neither is the key's key group (%s)", f->text,
						    h->stopped ? h->stop : "a changelog names none");
			if (ckpt_fkey_make(&w->key, h->key, f->key, f->text, where, w->e) < 0)
				return -1;
			w->k.key = w->key.bytes;
			w->k.keyn = w->key.n;
			w->k.kg_lo = ckpt_flink_key_group(w->key.hash, w->op->max_parallelism);
			w->k.kg_hi = w->k.kg_lo + 1;
			pthread_mutex_lock(&f->mu);
			f->kg[i].known = 1;
			f->kg[i].kg = w->k.kg_lo;
			pthread_mutex_unlock(&f->mu);
			key_window(w);
		}
	}
	if (f->state && note_states(f, h, w->e) < 0)
		return -1;
	if (f->state && w->in->header) { /* --state: the sink hears of that state alone */
		const struct ckpt_fstate_meta *m = meta_of(h, f->state);

		w->hstate = *h;
		w->hstate.m = (struct ckpt_fstate_meta *)m;
		w->hstate.n = m != NULL;
		w->hstate.nlist = m != NULL && (size_t)(m - h->m) < h->nlist; /* list/union come first */
		h = &w->hstate;
	}
	return w->in->header ? w->in->header(w->in->arg, scope, h) : 0;
}

static int
w_op(void *arg, const char *state, size_t idx, const unsigned char *p, size_t n, json_t *typed)
{
	struct ckpt_fstate_wrap *w = arg;

	if (w->f->key || (w->f->state && strcmp(state, w->f->state) != 0)) {
		json_decref(typed);
		return 0;
	}
	return w->in->op(w->in->arg, state, idx, p, n, typed);
}

static int
w_kv(void *arg, const char *state, uint32_t kg, const unsigned char *k, size_t kn, const unsigned char *v,
     size_t vn, struct ckpt_fstate_typed *typed)
{
	struct ckpt_fstate_wrap *w = arg;
	const struct ckpt_fstate_meta *m;

	if (w->f->state && strcmp(state, w->f->state) != 0)
		return 0;
	if (w->f->key) {
		/* a timer's key follows its timestamp (TimerSerializer) */
		unsigned skip = (m = meta_of(w->h, state)) && m->kind && strcmp(m->kind, "timers") == 0 ? 8 : 0;

		if (w->key.bytes == NULL || kg != w->k.kg_lo || !ckpt_fkey_matches(&w->key, k, kn, w->prefix + skip))
			return 0;
	}
	return w->in->kv(w->in->arg, state, kg, k, kn, v, vn, typed);
}

static int
w_skip(void *arg, const char *state, long kg, long n, const char *why)
{
	struct ckpt_fstate_wrap *w = arg;

	if (w->f->state && state && strcmp(state, w->f->state) != 0)
		return 0;
	return w->in->skip(w->in->arg, state, kg, n, why);
}

static int
w_cut(void *arg, const struct ckpt_fstate_header *h, uint32_t kg, const int16_t *ids, size_t n)
{
	struct ckpt_fstate_wrap *w = arg;

	return w->in->cut(w->in->arg, h, kg, ids, n);
}

int
ckpt_fselect_wrap(struct ckpt_fselect *f, struct ckpt_fstate_wrap *w, const struct ckpt_fstate_sink *in, const struct ckpt_operator *op,
		  const char *meta, struct ckpt_err *e)
{
	size_t i = (size_t)(op - f->ops);

	memset(w, 0, sizeof *w);
	if (!ckpt_fselect_operator(f, op) || (f->key && in->part == 1))
		return 0; /* nothing of it asked for: no file opened */
	w->k = *in;
	w->in = in;
	w->f = f;
	w->op = op;
	w->meta = meta;
	w->e = e;
	w->prefix = ckpt_flink_kg_prefix(op->max_parallelism);
	w->k.arg = w;
	w->k.header = w_header;
	w->k.op = w_op;
	w->k.kv = w_kv;
	w->k.skip = in->skip ? w_skip : NULL;
	w->k.cut = in->cut ? w_cut : NULL;
	if (f->state && in->only == NULL)
		w->k.only = f->state;
	if (f->key) {
		w->k.part = 2; /* operator state holds no keys */
		pthread_mutex_lock(&f->mu);
		if (f->kg[i].known) { /* a handle whose range misses it is not opened */
			w->k.kg_lo = f->kg[i].kg;
			w->k.kg_hi = w->k.kg_lo + 1;
		}
		pthread_mutex_unlock(&f->mu);
		if (w->k.kg_hi > 0 && kg_skipped(in, w->k.kg_lo))
			return 0; /* a shard's key groups without the key's: nothing of it asked for */
	}
	return 1;
}

void
ckpt_fselect_unwrap(struct ckpt_fstate_wrap *w)
{
	ckpt_fkey_release(&w->key);
}
