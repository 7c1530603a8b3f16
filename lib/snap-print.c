/*
 * snap-print.c: the state document (ckpt-state(5)) of a Flink snapshot written as it is read,
 * entry by entry, byte for byte what ckpt_json_print of ckpt_snapshot_to_json writes (jansson's
 * compact and two-space indented forms), in bounded memory; other snapshots are built whole.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "snap-internal.h"

#define JW_BUF ((size_t)1 << 16)
#define JW_DEPTH 64

struct ckpt_jw {
	FILE *f;
	int pretty, depth, failed;
	size_t *count;          /* items written in each open container: cap of them, JW_DEPTH at first */
	size_t cap;
	size_t len;
	char buf[JW_BUF];
};

static const char hexd[] = "0123456789ABCDEF";

static void
jw_flush(struct ckpt_jw *w)
{
	if (w->len && !w->failed && fwrite(w->buf, 1, w->len, w->f) != w->len)
		w->failed = errno ? errno : EIO;
	w->len = 0;
}

/* Room for n more bytes in the buffer (n <= JW_BUF). */
static inline char *
jw_room(struct ckpt_jw *w, size_t n)
{
	if (w->len + n > JW_BUF)
		jw_flush(w);
	return w->buf + w->len;
}

static void
jw_raw(struct ckpt_jw *w, const char *p, size_t n)
{
	while (n > 0) {
		size_t k = n < JW_BUF / 2 ? n : JW_BUF / 2;

		memcpy(jw_room(w, k), p, k);
		w->len += k;
		p += k;
		n -= k;
	}
}

/* jansson's dump_indent: a new line and two spaces a level when pretty, nothing when compact. */
static void
jw_indent(struct ckpt_jw *w, int depth)
{
	char *o;

	if (!w->pretty)
		return;
	o = jw_room(w, 1 + 2 * (size_t)depth);
	*o++ = '\n';
	memset(o, ' ', 2 * (size_t)depth);
	w->len += 1 + 2 * (size_t)depth;
}

/* Before an item of the innermost container: its separator and indentation. */
static void
jw_item(struct ckpt_jw *w)
{
	if (w->depth == 0 || (size_t)w->depth > w->cap) /* deeper only when out of memory (failed) */
		return;
	if (w->count[w->depth - 1]++ > 0)
		jw_raw(w, ",", 1);
	jw_indent(w, w->depth);
}

/* Room for one more level of containers: as deep as the value is (jansson's writer has no limit);
 * out of memory, the writer has failed. */
static int
jw_deeper(struct ckpt_jw *w)
{
	size_t cap = w->cap ? 2 * w->cap : JW_DEPTH, *c;

	if ((c = reallocarray(w->count, cap, sizeof *c)) == NULL) {
		w->failed = ENOMEM;
		return -1;
	}
	w->count = c;
	w->cap = cap;
	return 0;
}

void
ckpt_jw_open(struct ckpt_jw *w, char c)
{
	jw_raw(w, &c, 1);
	if ((size_t)w->depth < w->cap || jw_deeper(w) == 0)
		w->count[w->depth] = 0;
	w->depth++;
}

void
ckpt_jw_close(struct ckpt_jw *w, char c)
{
	w->depth--;
	if ((size_t)w->depth < w->cap && w->count[w->depth] > 0)
		jw_indent(w, w->depth);
	jw_raw(w, &c, 1);
}

/* The common case of a string: short, nothing to escape (and, with ascii, only ASCII), written
 * in one pass; 0 when it is not, nothing written. */
static inline int
jw_plain(struct ckpt_jw *w, const unsigned char *s, size_t n, int ascii)
{
	char *o;
	size_t i;

	if (n > JW_BUF / 4)
		return 0;
	o = jw_room(w, n + 2);
	for (i = 0; i < n; i++) {
		unsigned char c = s[i];

		if (c < 0x20 || c == '"' || c == '\\' || (ascii && c >= 0x80))
			return 0;
		o[i + 1] = (char)c;
	}
	o[0] = '"';
	o[n + 1] = '"';
	w->len += n + 2;
	return 1;
}

/* A JSON string of p[0, n), escaped as jansson does (p is valid UTF-8). */
static void
jw_string(struct ckpt_jw *w, const char *p, size_t n)
{
	const unsigned char *s = (const unsigned char *)p;
	size_t i = 0;

	if (jw_plain(w, s, n, 0))
		return;
	jw_raw(w, "\"", 1);
	while (i < n) {
		size_t j = i;
		char *o;

		while (j < n && s[j] >= 0x20 && s[j] != '"' && s[j] != '\\')
			j++;
		jw_raw(w, p + i, j - i);
		if (j == n)
			break;
		o = jw_room(w, 6);
		o[0] = '\\';
		switch (s[j]) {
		case '"': o[1] = '"'; w->len += 2; break;
		case '\\': o[1] = '\\'; w->len += 2; break;
		case '\b': o[1] = 'b'; w->len += 2; break;
		case '\f': o[1] = 'f'; w->len += 2; break;
		case '\n': o[1] = 'n'; w->len += 2; break;
		case '\r': o[1] = 'r'; w->len += 2; break;
		case '\t': o[1] = 't'; w->len += 2; break;
		default:
			memcpy(o + 1, "u00", 3);
			o[4] = hexd[s[j] >> 4];
			o[5] = hexd[s[j] & 15];
			w->len += 6;
		}
		i = j + 1;
	}
	jw_raw(w, "\"", 1);
}

void
ckpt_jw_key(struct ckpt_jw *w, const char *k)
{
	jw_item(w);
	jw_string(w, k, strlen(k));
	jw_raw(w, w->pretty ? ": " : ":", w->pretty ? 2 : 1);
}

void
ckpt_jw_elem(struct ckpt_jw *w)
{
	jw_item(w);
}

void
ckpt_jw_str(struct ckpt_jw *w, const char *s)
{
	jw_string(w, s, strlen(s));
}

void
ckpt_jw_strn(struct ckpt_jw *w, const char *s, size_t n)
{
	jw_string(w, s, n);
}

void
ckpt_jw_null(struct ckpt_jw *w)
{
	jw_raw(w, "null", 4);
}

void
ckpt_jw_int(struct ckpt_jw *w, long long v)
{
	w->len += ckpt_dec_put(jw_room(w, CKPT_DEC_MAX), v);
}

void
ckpt_jw_bool(struct ckpt_jw *w, int v)
{
	jw_raw(w, v ? "true" : "false", v ? 4 : 5);
}

static void
jw_base64(struct ckpt_jw *w, const unsigned char *s, size_t len)
{
	while (len > 0) {
		size_t chunk = len < JW_BUF / 8 * 3 ? len : JW_BUF / 8 * 3; /* whole triples but the last */

		w->len += ckpt_base64_put(jw_room(w, (chunk + 2) / 3 * 4), s, chunk);
		s += chunk;
		len -= chunk;
	}
}

void
ckpt_jw_entry(struct ckpt_jw *w, const void *p, size_t n)
{
	if (jw_plain(w, p, n, 1)) /* printable ASCII: valid UTF-8, nothing escaped */
		return;
	if (ckpt_utf8_valid(p, n)) {
		jw_string(w, n ? p : "", n);
		return;
	}
	ckpt_jw_open(w, '{');
	ckpt_jw_key(w, "base64");
	jw_raw(w, "\"", 1);
	jw_base64(w, p, n);
	jw_raw(w, "\"", 1);
	ckpt_jw_close(w, '}');
}

void
ckpt_jw_json(struct ckpt_jw *w, const json_t *v)
{
	const char *k;
	json_t *x;
	size_t i;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		ckpt_jw_open(w, '{');
		json_object_foreach((json_t *)v, k, x) {
			jw_item(w);
			jw_string(w, k, json_object_iter_key_len(json_object_key_to_iter(k)));
			jw_raw(w, w->pretty ? ": " : ":", w->pretty ? 2 : 1);
			ckpt_jw_json(w, x);
		}
		ckpt_jw_close(w, '}');
		break;
	case JSON_ARRAY:
		ckpt_jw_open(w, '[');
		json_array_foreach(v, i, x) {
			jw_item(w);
			ckpt_jw_json(w, x);
		}
		ckpt_jw_close(w, ']');
		break;
	case JSON_STRING:
		jw_string(w, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		ckpt_jw_int(w, (long long)json_integer_value(v));
		break;
	case JSON_REAL: { /* jansson's own digits */
		char *o = jw_room(w, 64);
		size_t n = json_dumpb(v, o, 64, JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));

		w->len += n <= 64 ? n : 0;
		break;
	}
	case JSON_TRUE:
		jw_raw(w, "true", 4);
		break;
	case JSON_FALSE:
		jw_raw(w, "false", 5);
		break;
	case JSON_NULL:
		jw_raw(w, "null", 4);
		break;
	}
}

/* The members of object o, in the object the writer has open. */
static void
jw_members(struct ckpt_jw *w, const json_t *o)
{
	const char *k;
	json_t *x;

	json_object_foreach((json_t *)o, k, x) {
		jw_item(w);
		jw_string(w, k, json_object_iter_key_len(json_object_key_to_iter(k)));
		jw_raw(w, w->pretty ? ": " : ":", w->pretty ? 2 : 1);
		ckpt_jw_json(w, x);
	}
}

struct ckpt_jw *
ckpt_jw_new(FILE *f, int pretty, struct ckpt_err *e)
{
	struct ckpt_jw *w = ckpt_calloc(1, sizeof *w, e);

	if (w == NULL)
		return NULL;
	w->f = f;
	w->pretty = pretty;
	return w;
}

void
ckpt_jw_free(struct ckpt_jw *w)
{
	if (w == NULL)
		return;
	jw_flush(w);
	free(w->count);
	free(w);
}

int
ckpt_jw_failed(struct ckpt_jw *w, struct ckpt_err *e)
{
	if (!w->failed)
		return 0;
	if (w->failed == ENOMEM)
		return ckpt_err_set(e, CKPT_ERR_NOMEM, "", "out of memory");
	errno = w->failed;
	return ckpt_err_sys(e, "stdout", "write error");
}

/* One subtask: streamed by the backing, or built whole when it is loaded already. */
static int
print_subtask(struct ckpt_snapshot *s, struct ckpt_operator *op, struct ckpt_subtask *st, struct ckpt_jw *w,
	      struct ckpt_err *e)
{
	const struct ckpt_snap_backing *b = s->backing;
	json_t *v;

	jw_item(w);
	if (b && b->print && !st->loaded)
		return b->print(s, op, st, w, e);
	if ((v = ckpt_snap_subtask_doc(s, op, st, e)) == NULL)
		return -1;
	ckpt_jw_json(w, v);
	json_decref(v);
	return 0;
}

static int
print_operator(struct ckpt_snapshot *s, struct ckpt_operator *op, struct ckpt_jw *w, struct ckpt_err *e)
{
	json_t *head = ckpt_snap_operator_head(op);

	if (head == NULL)
		return ckpt_err_set(e, CKPT_ERR_NOMEM, "", "out of memory");
	ckpt_jw_open(w, '{');
	jw_members(w, head);
	json_decref(head);
	ckpt_jw_key(w, "subtasks");
	ckpt_jw_open(w, '[');
	for (size_t k = 0; k < op->nsubtasks; k++)
		if (print_subtask(s, op, &op->subtasks[k], w, e) < 0 || ckpt_jw_failed(w, e) < 0)
			return -1;
	ckpt_jw_close(w, ']');
	ckpt_jw_close(w, '}');
	return 0;
}

int
ckpt_snapshot_print(struct ckpt_snapshot *s, FILE *f, int pretty, struct ckpt_err *e)
{
	const struct ckpt_snap_backing *b = s->backing;
	struct ckpt_jw *w;
	json_t *head;
	int rc = -1;

	/* archives are checked member by member as they are loaded: built whole, as before, so
	 * that a damaged member prints nothing */
	if (b == NULL || b->print == NULL) {
		json_t *v = ckpt_snapshot_to_json(s, e);

		if (v == NULL)
			return -1;
		rc = ckpt_json_print(f, v, pretty);
		json_decref(v);
		return rc < 0 ? ckpt_err_sys(e, "stdout", "write error") : 0;
	}
	/* every state file is read through once before anything is printed: what would stop the
	 * document half-way stops it before it starts */
	if (b->check && b->check(s, e) < 0)
		return -1;
	if ((w = ckpt_jw_new(f, pretty, e)) == NULL)
		return -1;
	if ((head = ckpt_snap_head(s)) == NULL) {
		ckpt_err_set(e, CKPT_ERR_NOMEM, "", "out of memory");
		goto out;
	}
	ckpt_jw_open(w, '{');
	jw_members(w, head);
	json_decref(head);
	ckpt_jw_key(w, "operators");
	ckpt_jw_open(w, '[');
	for (size_t i = 0; i < s->nops; i++) {
		jw_item(w);
		if (print_operator(s, &s->ops[i], w, e) < 0)
			goto out;
	}
	ckpt_jw_close(w, ']');
	ckpt_jw_close(w, '}');
	jw_raw(w, "\n", 1);
	jw_flush(w);
	rc = ckpt_jw_failed(w, e);
out:
	ckpt_jw_free(w); /* what was printed stays printed: the document is cut, never closed */
	return rc;
}
