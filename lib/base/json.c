/*
 * json.c: reading streams of JSON documents with file:line:col in errors,
 * locating a JSON pointer in a document's text, and printing.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

struct ckpt_jsonin {
	char *name;
	char *buf;
	size_t len, off;
	size_t line, col; /* position of buf[off] */
	struct ckpt_jdoc doc;
};

struct ckpt_jsonin *
ckpt_jsonin_open(const char *path, struct ckpt_err *e)
{
	int is_stdin = path == NULL || strcmp(path, "-") == 0;
	struct ckpt_jsonin *in;
	FILE *f;

	in = ckpt_calloc(1, sizeof *in, e);
	if (in == NULL)
		return NULL;
	in->name = ckpt_strdup(is_stdin ? "<stdin>" : path, e);
	if (in->name == NULL)
		goto fail;
	f = is_stdin ? stdin : fopen(path, "rb");
	if (f == NULL) {
		ckpt_err_sys(e, path, "cannot open");
		goto fail;
	}
	if (ckpt_read_all(f, in->name, &in->buf, &in->len, e) < 0) {
		if (!is_stdin)
			fclose(f);
		goto fail;
	}
	if (!is_stdin)
		fclose(f);
	in->line = in->col = 1;
	return in;
fail:
	ckpt_jsonin_free(in);
	return NULL;
}

const char *
ckpt_jsonin_name(const struct ckpt_jsonin *in)
{
	return in->name;
}

/* Advance line and column over buf[from, to). */
static void
advance(const char *buf, size_t from, size_t to, size_t *line, size_t *col)
{
	for (size_t i = from; i < to; i++) {
		if (buf[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

/* jansson places a syntax error after the token it names ("... near 'x'"); the user wants its start. */
static size_t
near_token_len(const char *text, size_t pos)
{
	const char *q = strstr(text, " near '");
	size_t n;

	if (q == NULL)
		return 0;
	q += 7;
	n = strlen(q);
	if (n == 0 || q[n - 1] != '\'' || n - 1 > pos)
		return 0;
	return n - 1;
}

int
ckpt_jsonin_next(struct ckpt_jsonin *in, struct ckpt_jdoc **doc, struct ckpt_err *e)
{
	json_error_t jerr;
	size_t start = in->off;
	json_t *root;

	json_decref(in->doc.root);
	in->doc.root = NULL;
	while (start < in->len && strchr(" \t\r\n", in->buf[start]) && in->buf[start] != '\0')
		start++;
	advance(in->buf, in->off, start, &in->line, &in->col);
	in->off = start;
	if (start == in->len)
		return 0;
	root = json_loadb(in->buf + start, in->len - start,
			  JSON_REJECT_DUPLICATES | JSON_DISABLE_EOF_CHECK, &jerr);
	if (root == NULL) {
		size_t line = in->line, col = in->col, pos = (size_t)jerr.position;
		char where[600];

		if (pos > in->len - start)
			pos = in->len - start;
		pos -= near_token_len(jerr.text, pos);
		advance(in->buf, start, start + pos, &line, &col);
		snprintf(where, sizeof where, "%s:%zu:%zu", in->name, line, col);
		return ckpt_err_set(e, CKPT_ERR_INPUT, where, "%s", jerr.text);
	}
	in->doc.root = root;
	in->doc.name = in->name;
	in->doc.src = in->buf + start;
	in->doc.len = (size_t)jerr.position;
	in->doc.line0 = in->line;
	in->doc.col0 = in->col;
	advance(in->buf, start, start + in->doc.len, &in->line, &in->col);
	in->off = start + in->doc.len;
	*doc = &in->doc;
	return 1;
}

void
ckpt_jsonin_free(struct ckpt_jsonin *in)
{
	if (in == NULL)
		return;
	json_decref(in->doc.root);
	free(in->buf);
	free(in->name);
	free(in);
}

/* A standalone document owns copies of its name and text. */
struct jdoc_owned {
	struct ckpt_jdoc doc;
	char *name, *src;
};

struct ckpt_jdoc *
ckpt_jdoc_load(const char *path, struct ckpt_err *e)
{
	struct ckpt_jsonin *in = ckpt_jsonin_open(path, e);
	struct jdoc_owned *o = NULL;
	struct ckpt_jdoc *d;
	int r;

	if (in == NULL)
		return NULL;
	r = ckpt_jsonin_next(in, &d, e);
	if (r == 0)
		ckpt_err_set(e, CKPT_ERR_INPUT, in->name, "empty input");
	if (r <= 0)
		goto out;
	o = ckpt_calloc(1, sizeof *o, e);
	if (o == NULL)
		goto out;
	o->doc = *d;
	in->doc.root = NULL;
	o->name = in->name;
	o->src = in->buf;
	o->doc.name = o->name;
	in->name = NULL;
	in->buf = NULL;
	{
		/* anything after the document is an error */
		size_t p = (size_t)(o->doc.src - o->src) + o->doc.len, line = o->doc.line0, col = o->doc.col0;

		advance(o->src, (size_t)(o->doc.src - o->src), p, &line, &col);
		while (p < in->len && strchr(" \t\r\n", o->src[p]) && o->src[p] != '\0') {
			advance(o->src, p, p + 1, &line, &col);
			p++;
		}
		if (p < in->len) {
			char where[600];

			snprintf(where, sizeof where, "%s:%zu:%zu", o->name, line, col);
			ckpt_err_set(e, CKPT_ERR_INPUT, where, "more than one document in input");
			ckpt_jdoc_free(&o->doc);
			o = NULL;
		}
	}
out:
	ckpt_jsonin_free(in);
	return o ? &o->doc : NULL;
}

struct ckpt_jdoc *
ckpt_jdoc_wrap(json_t *root, const char *name, struct ckpt_err *e)
{
	struct jdoc_owned *o = ckpt_calloc(1, sizeof *o, e);

	if (o == NULL) {
		json_decref(root);
		return NULL;
	}
	o->name = ckpt_strdup(name, e);
	if (o->name == NULL) {
		free(o);
		json_decref(root);
		return NULL;
	}
	o->doc.root = root;
	o->doc.name = o->name;
	return &o->doc;
}

void
ckpt_jdoc_free(struct ckpt_jdoc *doc)
{
	struct jdoc_owned *o = (struct jdoc_owned *)doc;

	if (o == NULL)
		return;
	json_decref(o->doc.root);
	free(o->name);
	free(o->src);
	free(o);
}

/* ---- locating a JSON pointer in the text (the text already parsed, so it is valid) */

static const char *
skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	return p;
}

static const char *
skip_string(const char *p, const char *end)
{
	for (p++; p < end && *p != '"'; p++)
		if (*p == '\\')
			p++;
	return p < end ? p + 1 : end;
}

static const char *
skip_value(const char *p, const char *end)
{
	int depth = 0;

	p = skip_ws(p, end);
	do {
		if (p >= end)
			return end;
		if (*p == '"') {
			p = skip_string(p, end);
			continue;
		}
		if (*p == '{' || *p == '[')
			depth++;
		else if (*p == '}' || *p == ']')
			depth--;
		else if (depth == 0) {
			while (p < end && !strchr(",}] \t\r\n", *p))
				p++;
			return p;
		}
		p++;
	} while (depth > 0);
	return p;
}

/* Compare the raw JSON string at p (at its quote) with key, undoing \" and \\ only. */
static int
key_equals(const char *p, const char *end, const char *key, size_t klen)
{
	size_t i = 0;

	for (p++; p < end && *p != '"'; p++) {
		char c = *p;

		if (c == '\\' && p + 1 < end) {
			c = *++p;
			if (c != '"' && c != '\\' && c != '/')
				return 0;
		}
		if (i >= klen || key[i++] != c)
			return 0;
	}
	return i == klen;
}

/* Follow one pointer token from the value at p; NULL if it cannot be followed. */
static const char *
step(const char *p, const char *end, const char *tok, size_t tlen)
{
	p = skip_ws(p, end);
	if (p < end && *p == '{') {
		p = skip_ws(p + 1, end);
		while (p < end && *p == '"') {
			int match = key_equals(p, end, tok, tlen);

			p = skip_ws(skip_string(p, end), end);
			p = skip_ws(p + 1, end); /* the colon */
			if (match)
				return p;
			p = skip_ws(skip_value(p, end), end);
			if (p < end && *p == ',')
				p = skip_ws(p + 1, end);
		}
		return NULL;
	}
	if (p < end && *p == '[') {
		char *ep;
		unsigned long idx = strtoul(tok, &ep, 10);

		if (tlen == 0 || ep != tok + tlen)
			return NULL;
		p = skip_ws(p + 1, end);
		for (unsigned long i = 0; p < end && *p != ']'; i++) {
			if (i == idx)
				return p;
			p = skip_ws(skip_value(p, end), end);
			if (p < end && *p == ',')
				p = skip_ws(p + 1, end);
		}
	}
	return NULL;
}

/* Offset in doc->src of the value at ptr (or of the deepest value found). */
static size_t
locate(const struct ckpt_jdoc *doc, const char *ptr)
{
	const char *end = doc->src + doc->len, *p = skip_ws(doc->src, end);
	char tok[256];

	while (*ptr == '/') {
		size_t n = 0;
		const char *q;

		for (ptr++; *ptr && *ptr != '/'; ptr++) {
			char c = *ptr;

			if (c == '~' && (ptr[1] == '0' || ptr[1] == '1'))
				c = *++ptr == '0' ? '~' : '/';
			if (n + 1 < sizeof tok)
				tok[n++] = c;
		}
		tok[n] = '\0';
		q = step(p, end, tok, n);
		if (q == NULL)
			break;
		p = q;
	}
	return (size_t)(p - doc->src);
}

/* "name:line:col" of the value ptr designates ("name" for a document built in memory). */
static void
doc_where(const struct ckpt_jdoc *doc, const char *ptr, char *where, size_t size)
{
	if (doc->src != NULL) {
		size_t line = doc->line0, col = doc->col0;

		advance(doc->src, 0, locate(doc, ptr ? ptr : ""), &line, &col);
		snprintf(where, size, "%s:%zu:%zu", doc->name, line, col);
	} else {
		snprintf(where, size, "%s", doc->name);
	}
}

int
ckpt_jdoc_err(const struct ckpt_jdoc *doc, struct ckpt_err *e, const char *ptr,
	      const char *fmt, ...)
{
	char where[600];
	va_list ap;

	doc_where(doc, ptr, where, sizeof where);
	va_start(ap, fmt);
	ckpt_err_vset(e, CKPT_ERR_INPUT, where, fmt, ap);
	va_end(ap);
	return -1;
}

int
ckpt_jdoc_locate(const struct ckpt_jdoc *doc, struct ckpt_err *e, const char *ptr)
{
	char where[600];

	if (e == NULL || e->kind == CKPT_ERR_NOMEM)
		return -1;
	doc_where(doc, ptr, where, sizeof where);
	return ckpt_err_locate(e, CKPT_ERR_INPUT, where);
}

int
ckpt_json_print(FILE *f, const json_t *v, int pretty)
{
	size_t flags = JSON_ENCODE_ANY | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17);

	flags |= pretty ? JSON_INDENT(2) : JSON_COMPACT;
	if (json_dumpf(v, f, flags) < 0 || fputc('\n', f) == EOF)
		return -1;
	return 0;
}

int
ckpt_json_real(const json_t *v, double *d)
{
	const char *s = json_string_value(v);

	if (json_is_number(v))
		*d = json_number_value(v);
	else if (s && strcmp(s, "NaN") == 0)
		*d = NAN;
	else if (s && strcmp(s, "Infinity") == 0)
		*d = INFINITY;
	else if (s && strcmp(s, "-Infinity") == 0)
		*d = -INFINITY;
	else
		return -1;
	return 0;
}

int
ckpt_json_set_new(json_t *obj, const char *key, json_t *v)
{
	return v == NULL ? -1 : json_object_set_new(obj, key, v);
}

int
ckpt_json_append_new(json_t *arr, json_t *v)
{
	return v == NULL ? -1 : json_array_append_new(arr, v);
}
