/* rows.c: a Flink snapshot's state as rows (ckpt-inspect -R): one JSON object a line, one per
 * entry, map entry or list element, the same whatever layout Flink kept it in (ckpt-state(5), ROWS). */
#include <string.h>

#include "state.h"

/* The columns every row opens with: uid, operator, state, kind, subtask. */
static void
row_render(struct ckpt_frows *r, const char *state, const char *kind)
{
	struct ckpt_jw *w = r->w;

	ckpt_jw_open(w, '{');
	ckpt_jw_key_lit(w, "uid");
	if (r->uid)
		ckpt_jw_str(w, r->uid);
	else
		ckpt_jw_null(w);
	ckpt_jw_key_lit(w, "operator");
	ckpt_jw_str(w, r->op);
	ckpt_jw_key_lit(w, "state");
	ckpt_jw_str(w, state);
	ckpt_jw_key_lit(w, "kind");
	if (kind)
		ckpt_jw_str(w, kind);
	else
		ckpt_jw_null(w);
	ckpt_jw_key_lit(w, "subtask");
	ckpt_jw_int(w, r->subtask);
}

/* Rows come a state at a time, millions of them: the opening columns are escaped once, when the
 * state or kind changes, and copied after that (a row is a top-level object: after its opening
 * columns the writer is one level deep with five members written).  A compact writer only. */
static void
row_open(struct ckpt_frows *r, const char *state, const char *kind)
{
	struct ckpt_jw *w = r->w;
	const char *k = kind ? kind : "";
	size_t start;

	if (w->len > CKPT_JW_BUF / 2 && w->depth == 0)
		ckpt_jw_flush(w); /* flushed between rows: a row under half the buffer never goes out half */
	if (r->npre > 0 && w->depth == 0 && strcmp(r->pstate, state) == 0 && strcmp(r->pkind, k) == 0) {
		memcpy(ckpt_jw_room(w, r->npre), r->pre, r->npre);
		w->len += r->npre;
		w->depth = 1;
		w->count[0] = 5;
		return;
	}
	r->npre = 0;
	/* at most 6 bytes a character escaped, and 80 for the names and the subtask: when that fits,
	 * the room asked first keeps the writer from flushing in the middle of it */
	if (w->pretty || w->depth != 0 || (kind && *kind == '\0') || strlen(state) >= sizeof r->pstate ||
	    strlen(k) >= sizeof r->pkind ||
	    80 + 6 * (strlen(r->uid ? r->uid : "") + strlen(r->op) + strlen(state) + strlen(k)) > sizeof r->pre) {
		row_render(r, state, kind);
		return;
	}
	ckpt_jw_room(w, sizeof r->pre);
	start = w->len;
	row_render(r, state, kind);
	if (w->len > start && w->len - start <= sizeof r->pre && w->depth == 1 && w->cap > 0 && w->count[0] == 5) {
		r->npre = w->len - start;
		memcpy(r->pre, w->buf + start, r->npre);
		strcpy(r->pstate, state);
		strcpy(r->pkind, k);
	}
}

static int
row_close(struct ckpt_frows *r)
{
	ckpt_jw_close(r->w, '}');
	ckpt_jw_byte(r->w, '\n');
	r->n++;
	r->end = r->w->flushed + r->w->len;
	return ckpt_jw_failed(r->w, NULL);
}

static void
value(struct ckpt_jw *w, const json_t *v)
{
	if (v)
		ckpt_jw_json(w, v);
	else
		ckpt_jw_null(w);
}
/* A member named by a literal, its value v (NULL: null). */
#define member(w, k, v) (ckpt_jw_key_lit((w), k), value((w), (v)))

/* A keyed row up to its value: key group, key, namespace. */
static void
keyed_open(struct ckpt_frows *r, const char *state, const char *kind, uint32_t kg, const json_t *t)
{
	row_open(r, state, kind);
	ckpt_jw_key_lit(r->w, "key_group");
	ckpt_jw_int(r->w, kg);
	member(r->w, "key", json_object_get(t, "key"));
	member(r->w, "namespace", json_object_get(t, "namespace"));
}

void
ckpt_frows_cut(struct ckpt_frows *r)
{
	struct ckpt_jw *w = r->w;

	if (r->end >= w->flushed && r->end <= w->flushed + w->len)
		w->len = (size_t)(r->end - w->flushed);
	else if (w->flushed + w->len > r->end) /* a row longer than the buffer, begun: ended, a line of its own */
		ckpt_jw_byte(w, '\n');
	w->depth = 0;
}

void
ckpt_frows_open(struct ckpt_frows *r, const char *state, const char *kind, uint32_t kg)
{
	row_open(r, state, kind);
	ckpt_jw_key_lit(r->w, "key_group");
	ckpt_jw_int(r->w, kg);
}

int
ckpt_frows_close(struct ckpt_frows *r)
{
	return row_close(r);
}

int
ckpt_frows_keyed(struct ckpt_frows *r, const char *state, const char *kind, uint32_t kg, const json_t *t,
		 const void *k, size_t kn, const void *v, size_t vn, const char *why)
{
	struct ckpt_jw *w = r->w;
	const json_t *val = json_object_get(t, "value"), *x;
	size_t i;

	if (t == NULL) { /* not typed: the bytes, and what stops the typing */
		row_open(r, state, kind);
		ckpt_jw_key_lit(w, "key_group");
		ckpt_jw_int(w, kg);
		ckpt_jw_key_lit(w, "key");
		ckpt_jw_entry(w, k, kn);
		ckpt_jw_key_lit(w, "namespace");
		ckpt_jw_null(w);
		ckpt_jw_key_lit(w, "value");
		ckpt_jw_entry(w, v, vn);
		ckpt_jw_key_lit(w, "untyped");
		ckpt_jw_str(w, why ? why : "");
		return row_close(r);
	}
	if (json_object_get(t, "timestamp")) { /* a timer: its timestamp is the value */
		keyed_open(r, state, kind, kg, t);
		member(w, "value", json_object_get(t, "timestamp"));
		return row_close(r);
	}
	if (json_object_get(t, "user_key")) { /* a canonical map entry */
		keyed_open(r, state, kind, kg, t);
		member(w, "user_key", json_object_get(t, "user_key"));
		member(w, "value", val);
		return row_close(r);
	}
	if (kind && strcmp(kind, "map") == 0 && json_is_array(val)) { /* a heap map, whole */
		json_array_foreach(val, i, x) {
			keyed_open(r, state, kind, kg, t);
			member(w, "user_key", json_object_get(x, "key"));
			member(w, "value", json_object_get(x, "value"));
			if (row_close(r) < 0)
				return -1;
		}
		return 0;
	}
	if (kind && strcmp(kind, "list") == 0 && json_is_array(val)) { /* a list, either layout */
		json_array_foreach(val, i, x) {
			keyed_open(r, state, kind, kg, t);
			ckpt_jw_key_lit(w, "index");
			ckpt_jw_int(w, (long long)i);
			member(w, "value", x);
			if (row_close(r) < 0)
				return -1;
		}
		return 0;
	}
	keyed_open(r, state, kind, kg, t);
	member(w, "value", val);
	return row_close(r);
}

int
ckpt_frows_op(struct ckpt_frows *r, const char *state, const char *mode, size_t idx, const json_t *t,
	      const void *p, size_t n, const char *why)
{
	struct ckpt_jw *w = r->w;
	const json_t *x;
	size_t i;

	if (t && strcmp(mode, "broadcast") == 0 && json_is_array(t)) { /* a map: one row an entry */
		json_array_foreach(t, i, x) {
			row_open(r, state, mode);
			member(w, "user_key", json_object_get(x, "key"));
			member(w, "value", json_object_get(x, "value"));
			if (row_close(r) < 0)
				return -1;
		}
		return 0;
	}
	row_open(r, state, mode);
	ckpt_jw_key_lit(w, "index");
	ckpt_jw_int(w, (long long)idx);
	ckpt_jw_key_lit(w, "value");
	if (t)
		ckpt_jw_json(w, t);
	else {
		ckpt_jw_entry(w, p, n);
		ckpt_jw_key_lit(w, "untyped");
		ckpt_jw_str(w, why ? why : "");
	}
	return row_close(r);
}

/* ckpt's own snapshots: their entries are the bytes they hold (a string or {"base64"}), as rows. */
int
ckpt_frows_model(struct ckpt_frows *r, const struct ckpt_subtask *st)
{
	for (size_t i = 0; i < st->nops; i++)
		for (size_t j = 0; j < st->ops[i].n; j++) {
			row_open(r, st->ops[i].name, ckpt_mode_name(st->ops[i].mode));
			ckpt_jw_key_lit(r->w, "index");
			ckpt_jw_int(r->w, (long long)j);
			ckpt_jw_key_lit(r->w, "value");
			ckpt_jw_entry(r->w, st->ops[i].entries[j].p, st->ops[i].entries[j].len);
			if (row_close(r) < 0)
				return -1;
		}
	for (size_t i = 0; i < st->nkv; i++) {
		const struct ckpt_kv *kv = &st->kv[i];

		row_open(r, kv->state, NULL);
		ckpt_jw_key_lit(r->w, "key_group");
		ckpt_jw_int(r->w, kv->key_group);
		ckpt_jw_key_lit(r->w, "key");
		ckpt_jw_entry(r->w, kv->key.p, kv->key.len);
		ckpt_jw_key_lit(r->w, "namespace");
		ckpt_jw_null(r->w);
		ckpt_jw_key_lit(r->w, "value");
		ckpt_jw_entry(r->w, kv->value.p, kv->value.len);
		if (row_close(r) < 0)
			return -1;
	}
	return 0;
}
