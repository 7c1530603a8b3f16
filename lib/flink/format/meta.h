/* meta.h: the decoding cursor of the _metadata reader and its primitives, shared by its two halves
 * only: meta.c (the header, format versions, operators, master states, properties) and
 * meta-handle.c (the state handles).  The primitives are static, a copy in each half (both use
 * every one, as -Wunused-function holds them to); the halves meet at the ckpt_fm_* readers below. */
#ifndef CKPT_FLINK_META_H
#define CKPT_FLINK_META_H

#include <stdarg.h>
#include <stdio.h>

#include "format.h"

#define FM_DEPTH 16 /* nesting of handles (changelog, key groups as stream) and of Java objects */

/* The decoding cursor, and what is gathered for the snapshot's "flink" object on the way. */
struct rd {
	const unsigned char *p;
	size_t len, pos;
	const char *name;
	struct ckpt_err *e;
	int version;
	int depth;
	json_t *files;    /* every referenced file: {path, kind, size} */
	json_t *warnings; /* strings */
	json_t *regional; /* v7 reference checkpoint ids */
	uint64_t inline_bytes, state_size;
	size_t nhandles, nin, nout, nentries, nfinished, nfully;
	int canonical; /* saw a savepoint key-groups handle (tag 7) */
	struct ckpt_fmspans *sp; /* where the rewritable fields lie, for the writer; or NULL */
	size_t op;               /* the operator being read */
	int incl;                /* inside a changelog handle: its inline bytes are kept in cl */
	unsigned char *cl;       /* those bytes, in the order of its nested handles (changelog.c) */
	size_t cln, clcap;
};

static int fail(struct rd *r, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
fail(struct rd *r, size_t at, const char *fmt, ...)
{
	char msg[900];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return ckpt_err_set(r->e, CKPT_ERR_INPUT, r->name, "offset %zu: %s", at, msg);
}

static int
nomem(struct rd *r)
{
	return ckpt_err_set(r->e, CKPT_ERR_NOMEM, r->name, "out of memory");
}

static void warn(struct rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
warn(struct rd *r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	json_array_append_new(r->warnings, json_string(msg));
}

/* ------------------------------------------------------------ primitives */

static size_t
left(const struct rd *r)
{
	return r->len - r->pos;
}

static int
need(struct rd *r, size_t n, const char *what)
{
	if (left(r) < n)
		return fail(r, r->pos, "truncated %s", what);
	return 0;
}

static int
rd_u8(struct rd *r, uint8_t *v, const char *what)
{
	if (need(r, 1, what) < 0)
		return -1;
	*v = r->p[r->pos++];
	return 0;
}

static int
rd_u16(struct rd *r, uint16_t *v, const char *what)
{
	if (need(r, 2, what) < 0)
		return -1;
	*v = (uint16_t)ckpt_load_be(r->p + r->pos, 2);
	r->pos += 2;
	return 0;
}

static int
rd_i32(struct rd *r, int32_t *v, const char *what)
{
	if (need(r, 4, what) < 0)
		return -1;
	*v = (int32_t)(uint32_t)ckpt_load_be(r->p + r->pos, 4);
	r->pos += 4;
	return 0;
}

static int
rd_i64(struct rd *r, int64_t *v, const char *what)
{
	if (need(r, 8, what) < 0)
		return -1;
	*v = (int64_t)ckpt_load_be(r->p + r->pos, 8);
	r->pos += 8;
	return 0;
}

/* A non-negative i64 (sizes, ids). */
static int
rd_u63(struct rd *r, uint64_t *v, const char *what)
{
	size_t at = r->pos;
	int64_t x;

	if (rd_i64(r, &x, what) < 0)
		return -1;
	if (x < 0)
		return fail(r, at, "negative %s %lld", what, (long long)x);
	*v = (uint64_t)x;
	return 0;
}

/* A count of items of at least min bytes each, checked against what is left before anyone allocates. */
static int
rd_count(struct rd *r, size_t *n, size_t min, const char *what)
{
	size_t at = r->pos;
	int32_t x;

	if (rd_i32(r, &x, what) < 0)
		return -1;
	if (x < 0)
		return fail(r, at, "negative %s %d", what, x);
	if ((uint64_t)x * min > left(r))
		return fail(r, at, "%s %d is more than the remaining %zu bytes can hold", what, x, left(r));
	*n = (size_t)x;
	return 0;
}

/* Java's modified UTF-8 (DataOutput.writeUTF) to UTF-8, with the error naming what it is and where. */
static int
mutf8_decode(struct rd *r, const unsigned char *s, size_t n, char **out, const char *what)
{
	size_t bad;
	char why[300];
	int rc = ckpt_javaser_mutf8(s, n, out, &bad);

	if (rc == 0)
		return 0;
	if (rc == CKPT_JAVASER_ENOMEM)
		return nomem(r);
	ckpt_javaser_mutf8_why(rc, s, n, bad, what, why, sizeof why);
	return fail(r, (size_t)(s - r->p) + bad, "%s", why);
}

static int
rd_utf(struct rd *r, char **out, const char *what)
{
	size_t at = r->pos;
	uint16_t n;

	*out = NULL;
	if (rd_u16(r, &n, what) < 0 || need(r, n, what) < 0)
		return -1;
	r->pos += n;
	return mutf8_decode(r, r->p + at + 2, n, out, what);
}

/* ------------------------------------------------------------ JSON helpers */

static int
jput(struct rd *r, json_t *o, const char *k, json_t *v)
{
	if (v == NULL || json_object_set_new(o, k, v) < 0)
		return nomem(r);
	return 0;
}

static int
jputs(struct rd *r, json_t *o, const char *k, const char *s)
{
	return jput(r, o, k, s ? json_string(s) : json_null());
}

static int
jputi(struct rd *r, json_t *o, const char *k, long long v)
{
	return jput(r, o, k, json_integer(v));
}

static int
jappend(struct rd *r, json_t *a, json_t *v)
{
	if (v == NULL || json_array_append_new(a, v) < 0)
		return nomem(r);
	return 0;
}

static json_t *
jnew(struct rd *r)
{
	json_t *o = json_object();

	if (o == NULL)
		nomem(r);
	return o;
}

static json_t *
jarr(struct rd *r)
{
	json_t *a = json_array();

	if (a == NULL)
		nomem(r);
	return a;
}

/* ------------------------------------------------ the state handles a subtask holds: meta-handle.c */

/* A subtask's operator state of scope (managed_operator, raw_operator): a presence flag, then a handle. */
int ckpt_fm_opstate(struct rd *r, struct ckpt_subtask *st, const char *scope);
/* A subtask's keyed state handle of scope (managed_keyed, raw_keyed), its key groups widening st's. */
int ckpt_fm_keyed(struct rd *r, struct ckpt_subtask *st, const char *scope);
/* A subtask's channel state handles (versions 3 on): of its input channels, or of its result
 * subpartitions. */
int ckpt_fm_channels(struct rd *r, struct ckpt_subtask *st, int input);
/* The operator coordinator's state: a stream handle, inline bytes when present. */
int ckpt_fm_coordinator(struct rd *r, struct ckpt_operator *op);

#endif
