/*
 * jw.c: the one JSON writer of the library (ckpt_jw_*, declared in base.h): containers, keys and
 * values written as they are produced, byte for byte as jansson's compact and two-space indented
 * forms, in bounded memory.  The state document (model/print.c) and the Flink readers use it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

static const char hexd[] = "0123456789ABCDEF";

void
ckpt_jw_flush(struct ckpt_jw *w)
{
	if (w->len && !w->failed && fwrite(w->buf, 1, w->len, w->f) != w->len)
		w->failed = errno ? errno : EIO;
	w->flushed += w->len;
	w->len = 0;
}

static void
jw_raw(struct ckpt_jw *w, const char *p, size_t n)
{
	while (n > 0) {
		size_t k = n < CKPT_JW_BUF / 2 ? n : CKPT_JW_BUF / 2;

		memcpy(ckpt_jw_room(w, k), p, k);
		w->len += k;
		p += k;
		n -= k;
	}
}

/* jansson's dump_indent: a new line and two spaces a level. */
void
ckpt_jw_indent(struct ckpt_jw *w, int depth)
{
	char *o = ckpt_jw_room(w, 1 + 2 * (size_t)depth);

	*o++ = '\n';
	memset(o, ' ', 2 * (size_t)depth);
	w->len += 1 + 2 * (size_t)depth;
}

/* A JSON string of p[0, n), escaped as jansson does (p is valid UTF-8). */
void
ckpt_jw_string(struct ckpt_jw *w, const char *p, size_t n)
{
	const unsigned char *s = (const unsigned char *)p;
	size_t i = 0;

	if (ckpt_jw_plain(w, s, n, 0, "", 0))
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
		o = ckpt_jw_room(w, 6);
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

static void
jw_base64(struct ckpt_jw *w, const unsigned char *s, size_t len)
{
	while (len > 0) {
		size_t chunk = len < CKPT_JW_BUF / 8 * 3 ? len : CKPT_JW_BUF / 8 * 3; /* whole triples but the last */

		w->len += ckpt_base64_put(ckpt_jw_room(w, (chunk + 2) / 3 * 4), s, chunk);
		s += chunk;
		len -= chunk;
	}
}

void
ckpt_jw_entry(struct ckpt_jw *w, const void *p, size_t n)
{
	if (ckpt_jw_plain(w, p, n, 1, "", 0)) /* printable ASCII: valid UTF-8, nothing escaped */
		return;
	if (ckpt_utf8_valid(p, n)) {
		ckpt_jw_string(w, n ? p : "", n);
		return;
	}
	ckpt_jw_open(w, '{');
	ckpt_jw_key_lit(w, "base64");
	jw_raw(w, "\"", 1);
	jw_base64(w, p, n);
	jw_raw(w, "\"", 1);
	ckpt_jw_close(w, '}');
}


void
ckpt_jw_json(struct ckpt_jw *w, const json_t *v)
{
	json_t *x;
	size_t i;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		ckpt_jw_open(w, '{');
		ckpt_jw_members(w, v);
		ckpt_jw_close(w, '}');
		break;
	case JSON_ARRAY:
		ckpt_jw_open(w, '[');
		json_array_foreach(v, i, x) {
			ckpt_jw_elem(w);
			ckpt_jw_json(w, x);
		}
		ckpt_jw_close(w, ']');
		break;
	case JSON_STRING:
		ckpt_jw_string(w, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		ckpt_jw_int(w, (long long)json_integer_value(v));
		break;
	case JSON_REAL: { /* jansson's own digits */
		char *o = ckpt_jw_room(w, 64);
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
void
ckpt_jw_members(struct ckpt_jw *w, const json_t *o)
{
	const char *k;
	json_t *x;

	json_object_foreach((json_t *)o, k, x) {
		ckpt_jw_keyn(w, k, json_object_iter_key_len(json_object_key_to_iter(k)));
		ckpt_jw_json(w, x);
	}
}

/* Room for one more level of containers: as deep as the value is (jansson's writer has no limit);
 * out of memory, the writer has failed. */
int
ckpt_jw_deeper(struct ckpt_jw *w)
{
	if (ckpt_grow(&w->count, &w->cap, w->cap + 1, sizeof *w->count, 64, NULL) < 0) {
		w->failed = ENOMEM;
		return -1;
	}
	return 0;
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
	ckpt_jw_flush(w);
	free(w->count);
	free(w);
}

int
ckpt_jw_failed(struct ckpt_jw *w, struct ckpt_err *e)
{
	if (!w->failed)
		return 0;
	if (w->failed == ENOMEM)
		return ckpt_err_nomem(e, "");
	errno = w->failed;
	return ckpt_err_sys(e, "stdout", "write error");
}
