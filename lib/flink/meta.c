/* flink-meta.c: Flink's binary _metadata (format versions 2 to 7) decoded, to its last byte, into a
 * snapshot whose subtasks hold state handles; the layout is in ckpt-flink(5). */
#include <stdlib.h>
#include <string.h>

#include "flink.h"
#include "flink/javaser.h"

#define FM_MAGIC 0x4960672dU
#define FM_MASTER_MAGIC 0xc96b1696U
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

/* A decoded stream state handle (the leaf of every other handle). */
struct fm_stream {
	int present;
	uint64_t size;
	char *path;               /* owned; NULL when inline or empty */
	const unsigned char *data; /* inline bytes (into the buffer), else NULL */
	size_t dlen;
	json_t *j;                /* owned description: kind, size, path, ... */
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
mutf8_decode(struct rd *r, size_t at, const unsigned char *s, size_t n, char **out, const char *what)
{
	switch (ckpt_javaser_mutf8(s, n, out)) {
	case 0: return 0;
	case CKPT_JAVASER_ENUL: return fail(r, at, "%s holds a NUL character, which is not supported", what);
	case CKPT_JAVASER_ENOMEM: return nomem(r);
	default: return fail(r, at, "invalid modified UTF-8 in %s", what);
	}
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
	return mutf8_decode(r, at, r->p + at + 2, n, out, what);
}

/* Remember where a path string read from at lies (for the writer), when asked to. */
static int
note_path(struct rd *r, size_t at, enum ckpt_fmpath_kind kind, const char *path)
{
	struct ckpt_fmpath *p;

	if (r->sp == NULL)
		return 0;
	p = ckpt_reallocarray(r->sp->paths, r->sp->npaths + 1, sizeof *p, r->e);
	if (p == NULL)
		return -1;
	r->sp->paths = p;
	p += r->sp->npaths;
	*p = (struct ckpt_fmpath){.at = at, .end = r->pos, .kind = kind, .op = r->op};
	if ((p->path = strdup(path)) == NULL)
		return nomem(r);
	r->sp->npaths++;
	return 0;
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

/* n i64 offsets as a JSON array. */
static int
rd_offsets(struct rd *r, json_t *o, const char *key, size_t n, int64_t *copy)
{
	json_t *a;
	int64_t v;

	if ((uint64_t)n * 8 > left(r))
		return fail(r, r->pos, "%zu offsets are more than the remaining %zu bytes can hold", n, left(r));
	if ((a = jarr(r)) == NULL || jput(r, o, key, a) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (rd_i64(r, &v, "offset") < 0 || jappend(r, a, json_integer(v)) < 0)
			return -1;
		if (copy)
			copy[i] = v;
	}
	return 0;
}

/* i32 start + i32 count as an inclusive range "a-b" ("" when empty). */
static int
rd_keygroups(struct rd *r, json_t *o, uint32_t *first, uint32_t *count)
{
	size_t at = r->pos;
	int32_t s, n;
	char buf[32];

	if (rd_i32(r, &s, "key-group range") < 0 || rd_i32(r, &n, "key-group range") < 0)
		return -1;
	if (s < 0 || n < 0 || (int64_t)s + n - 1 > INT32_MAX)
		return fail(r, at, "invalid key-group range: start %d, %d key groups", s, n);
	if (n == 0)
		buf[0] = '\0';
	else if (n == 1)
		snprintf(buf, sizeof buf, "%d", s);
	else
		snprintf(buf, sizeof buf, "%d-%d", s, s + n - 1);
	*first = (uint32_t)s;
	*count = (uint32_t)n;
	return jputs(r, o, "key_groups", buf);
}

/* ------------------------------------ stream handles (ckpt-flink(5), STATE HANDLES, Stream handles) */

static void
stream_release(struct fm_stream *s)
{
	free(s->path);
	json_decref(s->j);
	memset(s, 0, sizeof *s);
}

static int
note_file(struct rd *r, const char *kind, const char *path, uint64_t size)
{
	return jappend(r, r->files, json_pack("{s:s,s:s,s:I}", "path", path, "kind", kind,
					      "size", (json_int_t)size));
}

static int rd_stream(struct rd *r, struct fm_stream *s, const char *what);

static int
stream_inline(struct rd *r, struct fm_stream *s)
{
	char *hname = NULL;
	size_t n;
	int rc = -1;

	if (rd_utf(r, &hname, "inline handle name") < 0 || rd_count(r, &n, 1, "inline byte count") < 0)
		goto out;
	s->data = r->p + r->pos;
	s->dlen = n;
	s->size = n;
	r->pos += n;
	r->inline_bytes += n;
	if (jputs(r, s->j, "kind", "byte_stream") < 0 || jputi(r, s->j, "size", (long long)n) < 0 ||
	    jputs(r, s->j, "handle_name", hname) < 0)
		goto out;
	rc = 0;
out:
	free(hname);
	return rc;
}

static int
stream_file(struct rd *r, struct fm_stream *s, int relative)
{
	const char *kind = relative ? "relative_file" : "file";
	size_t at;

	if (relative) {
		at = r->pos;
		if (rd_utf(r, &s->path, "relative path") < 0 || note_path(r, at, CKPT_FMPATH_RELATIVE, s->path) < 0 ||
		    rd_u63(r, &s->size, "file size") < 0)
			return -1;
	} else {
		if (rd_u63(r, &s->size, "file size") < 0)
			return -1;
		at = r->pos;
		if (rd_utf(r, &s->path, "file path") < 0 || note_path(r, at, CKPT_FMPATH_FILE, s->path) < 0)
			return -1;
	}
	if (jputs(r, s->j, "kind", kind) < 0 || jputi(r, s->j, "size", (long long)s->size) < 0 ||
	    jputs(r, s->j, "path", s->path) < 0)
		return -1;
	return note_file(r, kind, s->path, s->size);
}

static int
stream_segment(struct rd *r, struct fm_stream *s)
{
	uint64_t start = 0;
	int32_t scope;
	size_t at;
	char *lid = NULL;
	int rc = -1;

	if (rd_u63(r, &start, "segment start") < 0 || rd_u63(r, &s->size, "segment size") < 0)
		goto out;
	at = r->pos;
	if (rd_i32(r, &scope, "segment scope") < 0)
		goto out;
	if (scope != 0 && scope != 1) {
		fail(r, at, "invalid segment scope %d", scope);
		goto out;
	}
	at = r->pos;
	if (rd_utf(r, &s->path, "segment file path") < 0 || note_path(r, at, CKPT_FMPATH_SEGMENT, s->path) < 0 ||
	    rd_utf(r, &lid, "logical file id") < 0)
		goto out;
	if (jputs(r, s->j, "kind", "segment_file") < 0 || jputi(r, s->j, "size", (long long)s->size) < 0 ||
	    jputs(r, s->j, "path", s->path) < 0 || jputi(r, s->j, "start", (long long)start) < 0 ||
	    jputs(r, s->j, "scope", scope ? "SHARED" : "EXCLUSIVE") < 0 ||
	    jputs(r, s->j, "logical_file_id", lid) < 0)
		goto out;
	rc = note_file(r, "segment_file", s->path, start + s->size);
out:
	free(lid);
	return rc;
}

/* Tag 3 in a stream position: a key-groups handle standing for its delegate. */
static int
stream_keygroups(struct rd *r, struct fm_stream *s)
{
	struct fm_stream d;
	uint32_t first, n;

	if (rd_keygroups(r, s->j, &first, &n) < 0 || rd_offsets(r, s->j, "offsets", n, NULL) < 0)
		return -1;
	if (rd_stream(r, &d, "key-group data handle") < 0)
		return -1;
	s->size = d.size;
	s->path = d.path;
	d.path = NULL;
	if (jputs(r, s->j, "kind", "key_groups") < 0 || jputi(r, s->j, "size", (long long)s->size) < 0 ||
	    jput(r, s->j, "delegate", d.present ? json_incref(d.j) : json_null()) < 0) {
		stream_release(&d);
		return -1;
	}
	stream_release(&d);
	return 0;
}

/* A stream handle; s->present is 0 for the null handle (tag 0). */
static int
rd_stream(struct rd *r, struct fm_stream *s, const char *what)
{
	size_t at = r->pos;
	uint8_t tag;
	int rc;

	memset(s, 0, sizeof *s);
	if (rd_u8(r, &tag, what) < 0)
		return -1;
	if (tag == 0)
		return 0;
	if (r->depth >= FM_DEPTH)
		return fail(r, at, "%s nested more than %d deep", what, FM_DEPTH);
	if ((s->j = jnew(r)) == NULL)
		return -1;
	s->present = 1;
	r->depth++;
	switch (tag) {
	case 1: rc = stream_inline(r, s); break;
	case 2: rc = stream_file(r, s, 0); break;
	case 6: rc = stream_file(r, s, 1); break;
	case 3: rc = stream_keygroups(r, s); break;
	case 15: rc = stream_segment(r, s); break;
	case 16:
		rc = jputs(r, s->j, "kind", "empty_segment_file") < 0 || jputi(r, s->j, "size", 0) < 0 ? -1 : 0;
		break;
	default: rc = fail(r, at, "unknown %s tag %u", what, tag); break;
	}
	r->depth--;
	if (rc < 0)
		stream_release(s);
	return rc;
}

/* ------------------------------------------------------------ the snapshot being built */

/* Add a handle to st; takes detail and path. */
static struct ckpt_handle *
add_handle(struct rd *r, struct ckpt_subtask *st, const char *scope, const char *kind, uint64_t size,
	   char *path, json_t *detail)
{
	struct ckpt_handle *h, *nh;

	nh = ckpt_reallocarray(st->handles, st->nhandles + 1, sizeof *nh, r->e);
	if (nh == NULL)
		goto fail;
	st->handles = nh;
	h = &nh[st->nhandles];
	memset(h, 0, sizeof *h);
	h->scope = strdup(scope);
	h->kind = strdup(kind);
	if (h->scope == NULL || h->kind == NULL) {
		free(h->scope);
		free(h->kind);
		nomem(r);
		goto fail;
	}
	h->size = size;
	h->path = path;
	h->detail = detail;
	st->nhandles++;
	r->nhandles++;
	r->state_size += size;
	return h;
fail:
	free(path);
	json_decref(detail);
	return NULL;
}

/* Keep an inline delegate's bytes with the handle (the state readers of flink-state.c read them). */
static int
inline_data(struct rd *r, struct ckpt_handle *h, const unsigned char *p, size_t n)
{
	if (h == NULL)
		return -1;
	if (p == NULL)
		return 0;
	if ((h->data.p = malloc(n ? n : 1)) == NULL)
		return nomem(r);
	memcpy(h->data.p, p, n);
	h->data.len = n;
	return 0;
}

/* Inside a changelog handle, keep p[0, n) for the handle (its change records, inline delegates). */
static int
cl_keep(struct rd *r, const unsigned char *p, size_t n)
{
	if (!r->incl || p == NULL || n == 0)
		return 0;
	if (r->cln + n > r->clcap) {
		size_t cap = r->clcap ? r->clcap : 256;
		unsigned char *x;

		while (cap < r->cln + n)
			cap *= 2;
		if ((x = realloc(r->cl, cap)) == NULL)
			return nomem(r);
		r->cl = x;
		r->clcap = cap;
	}
	memcpy(r->cl + r->cln, p, n);
	r->cln += n;
	return 0;
}

/* Move the delegate's path and description into a handle's detail. */
static int
take_delegate(struct rd *r, json_t *detail, struct fm_stream *d, char **path)
{
	*path = d->path;
	d->path = NULL;
	return jput(r, detail, "delegate", d->present ? json_incref(d->j) : json_null());
}

/* ---------------------------- operator state (ckpt-flink(5), STATE HANDLES, Operator state handles) */

static const char *const mode_names[] = {"SPLIT_DISTRIBUTE", "UNION", "BROADCAST"};
static const enum ckpt_mode mode_model[] = {CKPT_MODE_LIST, CKPT_MODE_UNION, CKPT_MODE_BROADCAST};

struct fm_opoff {
	int64_t off;
	size_t state;
};

static int
cmp_opoff(const void *a, const void *b)
{
	const struct fm_opoff *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->state < y->state ? -1 : x->state > y->state;
}

/* Add (or add to) the named state of st, with n partitions of bytes in all. */
static int
add_opstate(struct rd *r, struct ckpt_subtask *st, const char *name, enum ckpt_mode mode, size_t n,
	    uint64_t bytes)
{
	struct ckpt_opstate *o;

	for (size_t i = 0; i < st->nops; i++) {
		if (strcmp(st->ops[i].name, name) == 0) {
			st->ops[i].n += n;
			st->ops[i].bytes += bytes;
			return 0;
		}
	}
	o = ckpt_reallocarray(st->ops, st->nops + 1, sizeof *o, r->e);
	if (o == NULL)
		return -1;
	st->ops = o;
	o = &st->ops[st->nops];
	memset(o, 0, sizeof *o);
	if ((o->name = strdup(name)) == NULL)
		return nomem(r);
	o->mode = mode;
	o->n = n;
	o->bytes = bytes;
	st->nops++;
	return 0;
}

/*
 * The bytes of each state in the delegate stream: Flink writes the states one after the other,
 * each from its first offset, so a state runs to the next state's first offset or to the end.
 */
static int
opstate_bytes(struct rd *r, struct fm_opoff *o, size_t n, uint64_t size, uint64_t *bytes, size_t nstates)
{
	if (n > 0) /* o is NULL when there are no offsets, and qsort wants a pointer */
		qsort(o, n, sizeof *o, cmp_opoff);
	for (size_t i = 0; i < n; i++) {
		int64_t end = i + 1 < n ? o[i + 1].off : (int64_t)size;

		if (o[i].off < 0 || (uint64_t)o[i].off > size || end < o[i].off) {
			warn(r, "operator state offset %lld lies outside its %llu-byte stream",
			     (long long)o[i].off, (unsigned long long)size);
			memset(bytes, 0, sizeof *bytes * nstates);
			return 0;
		}
		bytes[o[i].state] += (uint64_t)(end - o[i].off);
	}
	return 0;
}

struct fm_opread {
	json_t *states;      /* the handle's states, in file order */
	struct fm_opoff *off; /* every offset, with its state */
	size_t noff;
	size_t nstates;
};

static int
rd_opstate_entry(struct rd *r, struct fm_opread *o, size_t idx)
{
	size_t at, n;
	uint8_t mode;
	char *name = NULL;
	json_t *s;
	struct fm_opoff *no;
	int64_t *tmp = NULL;
	int rc = -1;

	if (rd_utf(r, &name, "operator state name") < 0)
		goto out;
	at = r->pos;
	if (rd_u8(r, &mode, "distribution mode") < 0)
		goto out;
	if (mode > 2) {
		fail(r, at, "invalid distribution mode %u of operator state \"%s\"", mode, name);
		goto out;
	}
	for (size_t i = 0; i < json_array_size(o->states); i++) {
		if (strcmp(json_string_value(json_object_get(json_array_get(o->states, i), "name")), name) == 0) {
			fail(r, at, "duplicate operator state \"%s\"", name);
			goto out;
		}
	}
	if (rd_count(r, &n, 8, "offset count") < 0)
		goto out;
	if ((s = json_pack("{s:s,s:s}", "name", name, "mode", mode_names[mode])) == NULL ||
	    json_array_append_new(o->states, s) < 0) {
		nomem(r);
		goto out;
	}
	no = ckpt_reallocarray(o->off, o->noff + n + 1, sizeof *no, r->e);
	tmp = ckpt_calloc(n + 1, sizeof *tmp, r->e);
	if (no != NULL)
		o->off = no;
	if (no == NULL || tmp == NULL || rd_offsets(r, s, "offsets", n, tmp) < 0)
		goto out;
	for (size_t i = 0; i < n; i++)
		o->off[o->noff++] = (struct fm_opoff){tmp[i], idx};
	rc = 0;
out:
	free(tmp);
	free(name);
	return rc;
}

/* Tag 17's extra fields, then the delegate (which must be a segment handle). */
static int
rd_opstate_merging(struct rd *r, json_t *detail)
{
	char *own = NULL, *shared = NULL;
	size_t at = r->pos, at2;
	uint8_t empty;
	int rc = -1;

	if (rd_utf(r, &own, "task-owned directory") < 0 || note_path(r, at, CKPT_FMPATH_DIR, own) < 0)
		goto out;
	at2 = r->pos;
	if (rd_utf(r, &shared, "shared directory") < 0 || note_path(r, at2, CKPT_FMPATH_DIR, shared) < 0 ||
	    rd_u8(r, &empty, "empty flag") < 0)
		goto out;
	if (jputs(r, detail, "task_owned_directory", own) < 0 ||
	    jputs(r, detail, "shared_directory", shared) < 0 ||
	    jput(r, detail, "empty", json_boolean(empty)) < 0)
		goto out;
	rc = 0;
out:
	free(own);
	free(shared);
	return rc;
}

static int
opstate_to_model(struct rd *r, struct ckpt_subtask *st, struct fm_opread *o, uint64_t size)
{
	uint64_t *bytes = ckpt_calloc(o->nstates + 1, sizeof *bytes, r->e);
	int rc = -1;

	if (bytes == NULL || opstate_bytes(r, o->off, o->noff, size, bytes, o->nstates) < 0)
		goto out;
	for (size_t i = 0; i < o->nstates; i++) {
		json_t *s = json_array_get(o->states, i);
		const char *mode = json_string_value(json_object_get(s, "mode"));
		size_t m = 0;

		while (strcmp(mode_names[m], mode) != 0)
			m++;
		if (add_opstate(r, st, json_string_value(json_object_get(s, "name")), mode_model[m],
				json_array_size(json_object_get(s, "offsets")), bytes[i]) < 0)
			goto out;
	}
	rc = 0;
out:
	free(bytes);
	return rc;
}

/* An operator state handle (tags 4, 17), after its tag. */
static int
rd_opstate_body(struct rd *r, struct ckpt_subtask *st, const char *scope, uint8_t tag)
{
	struct fm_opread o = {0};
	struct fm_stream d = {0};
	json_t *detail = jnew(r);
	char *path = NULL;
	size_t n, at;
	int rc = -1;

	if (detail == NULL || (o.states = jarr(r)) == NULL || rd_count(r, &n, 7, "operator state count") < 0)
		goto out;
	for (o.nstates = 0; o.nstates < n; o.nstates++)
		if (rd_opstate_entry(r, &o, o.nstates) < 0)
			goto out;
	if (jput(r, detail, "states", json_incref(o.states)) < 0)
		goto out;
	if (tag == 17 && rd_opstate_merging(r, detail) < 0)
		goto out;
	at = r->pos;
	if (rd_stream(r, &d, "operator state data handle") < 0)
		goto out;
	if (!d.present) {
		fail(r, at, "operator state handle without a data handle");
		goto out;
	}
	if (tag == 17 && strncmp(json_string_value(json_object_get(d.j, "kind")), "segment_file", 12) != 0 &&
	    strcmp(json_string_value(json_object_get(d.j, "kind")), "empty_segment_file") != 0) {
		fail(r, at, "file-merging operator state handle over a non-segment data handle");
		goto out;
	}
	if (opstate_to_model(r, st, &o, d.size) < 0 || take_delegate(r, detail, &d, &path) < 0)
		goto out;
	rc = inline_data(r, add_handle(r, st, scope, tag == 4 ? "operator_stream" : "file_merging_operator_stream",
				       d.size, path, detail), d.data, d.dlen);
	detail = NULL;
	path = NULL;
out:
	json_decref(detail);
	free(path);
	json_decref(o.states);
	free(o.off);
	stream_release(&d);
	return rc;
}

/* i32 presence flag, then (if 1) an operator state handle. */
static int
rd_opstate(struct rd *r, struct ckpt_subtask *st, const char *scope)
{
	size_t at = r->pos;
	int32_t has;
	uint8_t tag;

	if (rd_i32(r, &has, "operator state flag") < 0)
		return -1;
	if (has == 0)
		return 0;
	if (has != 1)
		return fail(r, at, "invalid %s state flag %d (0 or 1 expected)", scope, has);
	at = r->pos;
	if (rd_u8(r, &tag, "operator state handle tag") < 0)
		return -1;
	if (tag == 0)
		return 0;
	if (tag != 4 && tag != 17)
		return fail(r, at, "unknown operator state handle tag %u", tag);
	return rd_opstate_body(r, st, scope, tag);
}

/* ---------------------------------- keyed state (ckpt-flink(5), STATE HANDLES, Keyed state handles) */

/* What a keyed handle decodes to; nested ones (changelog) become JSON only. */
struct fm_keyed {
	int present;
	const char *kind;
	uint64_t size;
	char *path;
	json_t *j; /* kind, size, path, then the rest */
	uint32_t kg_first, kg_count;
	const unsigned char *data; /* an inline delegate's bytes (into the buffer or own), else NULL */
	size_t dlen;
	unsigned char *own; /* incremental: its inline files' bytes, one after another (meta, shared, private) */
};

static void
keyed_release(struct fm_keyed *k)
{
	free(k->own);
	free(k->path);
	json_decref(k->j);
	memset(k, 0, sizeof *k);
}

static int rd_keyed(struct rd *r, struct fm_keyed *k);

/* Tags 3, 7, 12. */
static int
keyed_groups(struct rd *r, struct fm_keyed *k, uint8_t tag)
{
	struct fm_stream d;
	char *hid = NULL;
	int rc = -1;

	if (rd_keygroups(r, k->j, &k->kg_first, &k->kg_count) < 0 ||
	    rd_offsets(r, k->j, "offsets", k->kg_count, NULL) < 0)
		return -1;
	if (rd_stream(r, &d, "key-group data handle") < 0)
		return -1;
	k->size = d.size;
	k->data = d.data;
	k->dlen = d.dlen;
	if (cl_keep(r, d.data, d.dlen) < 0 || take_delegate(r, k->j, &d, &k->path) < 0)
		goto out;
	if (tag == 12 && (rd_utf(r, &hid, "state handle id") < 0 || jputs(r, k->j, "handle_id", hid) < 0))
		goto out;
	k->kind = tag == 7 ? "savepoint_key_groups" : "key_groups";
	r->canonical |= tag == 7;
	rc = 0;
out:
	free(hid);
	stream_release(&d);
	return rc;
}

/* Keep an incremental handle's inline file after the ones before it (the reader finds it by the
 * sizes of the byte_stream files before it, in the order meta, shared, private). */
static int
keep_inline(struct rd *r, struct fm_keyed *k, const struct fm_stream *d)
{
	unsigned char *p;

	if (d->data == NULL)
		return 0;
	if ((p = realloc(k->own, k->dlen + d->dlen + 1)) == NULL)
		return nomem(r);
	memcpy(p + k->dlen, d->data, d->dlen);
	k->own = p;
	k->data = p;
	k->dlen += d->dlen;
	return 0;
}

/* The shared or private files of an incremental handle: utf local name, stream handle. */
static int
incremental_files(struct rd *r, struct fm_keyed *k, const char *key, uint64_t *size)
{
	json_t *a = jarr(r);
	size_t n;

	if (a == NULL || jput(r, k->j, key, a) < 0 || rd_count(r, &n, 3, "file count") < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct fm_stream d;
		char *local;
		json_t *f;

		if (rd_utf(r, &local, "local file name") < 0)
			return -1;
		if (rd_stream(r, &d, "incremental file handle") < 0) {
			free(local);
			return -1;
		}
		f = d.present ? json_deep_copy(d.j) : json_object();
		*size += d.size;
		if (keep_inline(r, k, &d) < 0) {
			json_decref(f);
			f = NULL;
		}
		stream_release(&d);
		if (f == NULL || json_object_set_new(f, "local_name", json_string(local)) < 0 ||
		    json_array_append_new(a, f) < 0) {
			free(local);
			return nomem(r);
		}
		free(local);
	}
	return 0;
}

/* Tags 5, 11 (RocksDB / ForSt incremental). */
static int
keyed_incremental(struct rd *r, struct fm_keyed *k, uint8_t tag)
{
	struct fm_stream meta;
	uint64_t cid = 0, csize = 0, size = 0;
	char *backend = NULL, *hid = NULL;
	int rc = -1;

	if (rd_u63(r, &cid, "checkpoint id") < 0 || rd_utf(r, &backend, "backend id") < 0 ||
	    jputi(r, k->j, "checkpoint_id", (long long)cid) < 0 || jputs(r, k->j, "backend_id", backend) < 0 ||
	    rd_keygroups(r, k->j, &k->kg_first, &k->kg_count) < 0)
		goto out;
	if (tag == 11 && (rd_u63(r, &csize, "checkpointed size") < 0 ||
			  jputi(r, k->j, "checkpointed_size", (long long)csize) < 0))
		goto out;
	if (rd_stream(r, &meta, "meta data handle") < 0)
		goto out;
	size = meta.size;
	rc = keep_inline(r, k, &meta) < 0 ? -1 : jput(r, k->j, "meta", meta.present ? json_incref(meta.j) : json_null());
	stream_release(&meta);
	if (rc < 0 || (rc = incremental_files(r, k, "shared", &size)) < 0 ||
	    (rc = incremental_files(r, k, "private", &size)) < 0)
		goto out;
	rc = -1;
	if (tag == 11 && (rd_utf(r, &hid, "state handle id") < 0 || jputs(r, k->j, "handle_id", hid) < 0))
		goto out;
	k->size = size;
	k->kind = "incremental";
	rc = 0;
out:
	free(backend);
	free(hid);
	return rc;
}

/* A list of nested keyed handles (changelog), as JSON. */
static int
keyed_list(struct rd *r, struct fm_keyed *k, const char *key, uint64_t *size)
{
	json_t *a = jarr(r);
	size_t n;

	if (a == NULL || jput(r, k->j, key, a) < 0 || rd_count(r, &n, 1, "nested handle count") < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct fm_keyed c;

		if (rd_keyed(r, &c) < 0)
			return -1;
		if (!c.present)
			continue; /* Flink skips null entries */
		*size += c.size;
		if (jappend(r, a, json_incref(c.j)) < 0) {
			keyed_release(&c);
			return -1;
		}
		keyed_release(&c);
	}
	return 0;
}

/* Tags 8, 14 (changelog backend). */
static int
keyed_changelog(struct rd *r, struct fm_keyed *k, uint8_t tag)
{
	uint64_t csize = 0, mid = 0, cid = 0, size = 0;
	char *hid = NULL;
	int rc = -1;

	r->incl++;
	rc = rd_keygroups(r, k->j, &k->kg_first, &k->kg_count) < 0 || rd_u63(r, &csize, "checkpointed size") < 0 ||
	     jputi(r, k->j, "checkpointed_size", (long long)csize) < 0 ||
	     keyed_list(r, k, "materialized", &size) < 0 || keyed_list(r, k, "non_materialized", &size) < 0 ? -1 : 0;
	r->incl--;
	if (rc < 0 || rd_u63(r, &mid, "materialization id") < 0 ||
	    jputi(r, k->j, "materialization_id", (long long)mid) < 0) {
		rc = -1;
		goto out;
	}
	rc = -1;
	if (tag == 14 && (rd_u63(r, &cid, "checkpoint id") < 0 ||
			  jputi(r, k->j, "checkpoint_id", (long long)cid) < 0))
		goto out;
	if (rd_utf(r, &hid, "state handle id") < 0 || jputs(r, k->j, "handle_id", hid) < 0)
		goto out;
	k->size = size;
	k->kind = "changelog";
	rc = 0;
out:
	free(hid);
	return rc;
}

/* Tag 9: change sets held in _metadata itself. */
static int
keyed_changelog_bytes(struct rd *r, struct fm_keyed *k)
{
	int64_t from, to;
	size_t n, start;
	uint64_t size = 0;
	char *hid = NULL;
	int rc = -1;

	if (rd_keygroups(r, k->j, &k->kg_first, &k->kg_count) < 0 ||
	    rd_i64(r, &from, "sequence number") < 0 || rd_i64(r, &to, "sequence number") < 0 ||
	    jputi(r, k->j, "from_sequence_number", from) < 0 || jputi(r, k->j, "to_sequence_number", to) < 0 ||
	    rd_count(r, &n, 8, "change count") < 0)
		goto out;
	start = r->pos;
	for (size_t i = 0; i < n; i++) {
		int32_t kg;
		size_t len;

		if (rd_i32(r, &kg, "change key group") < 0 || rd_count(r, &len, 1, "change length") < 0)
			goto out;
		r->pos += len;
		size += len;
	}
	if (cl_keep(r, r->p + start, r->pos - start) < 0)
		goto out;
	r->inline_bytes += size;
	if (jputi(r, k->j, "changes", (long long)n) < 0 || rd_utf(r, &hid, "state handle id") < 0 ||
	    jputs(r, k->j, "handle_id", hid) < 0)
		goto out;
	k->size = size;
	k->kind = "changelog_bytes";
	rc = 0;
out:
	free(hid);
	return rc;
}

/* Tags 10, 13: change sets in files. */
static int
keyed_changelog_files(struct rd *r, struct fm_keyed *k, uint8_t tag)
{
	json_t *a = jarr(r);
	uint64_t size = 0, csize = 0;
	char *hid = NULL, *storage = NULL;
	size_t n;
	int rc = -1;

	if (a == NULL || jput(r, k->j, "files", a) < 0 || rd_keygroups(r, k->j, &k->kg_first, &k->kg_count) < 0 ||
	    rd_count(r, &n, 9, "changelog file count") < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		struct fm_stream d;
		int64_t off;
		json_t *f;

		if (rd_i64(r, &off, "changelog offset") < 0 || rd_stream(r, &d, "changelog file handle") < 0)
			goto out;
		f = d.present ? json_deep_copy(d.j) : json_object();
		if (cl_keep(r, d.data, d.dlen) < 0) {
			json_decref(f);
			stream_release(&d);
			goto out;
		}
		stream_release(&d);
		if (f == NULL || json_object_set_new(f, "offset", json_integer(off)) < 0 || jappend(r, a, f) < 0) {
			nomem(r);
			goto out;
		}
	}
	if (rd_u63(r, &size, "state size") < 0 || rd_u63(r, &csize, "checkpointed size") < 0 ||
	    jputi(r, k->j, "checkpointed_size", (long long)csize) < 0 ||
	    rd_utf(r, &hid, "state handle id") < 0 || jputs(r, k->j, "handle_id", hid) < 0)
		goto out;
	if (tag == 13 && rd_utf(r, &storage, "storage id") < 0)
		goto out;
	if (jputs(r, k->j, "storage_id", storage ? storage : "filesystem") < 0)
		goto out;
	k->size = size;
	k->kind = "changelog_files";
	rc = 0;
out:
	free(hid);
	free(storage);
	return rc;
}

/* A keyed state handle; k->present is 0 for the null handle. */
static int
rd_keyed(struct rd *r, struct fm_keyed *k)
{
	size_t at = r->pos;
	uint8_t tag;
	int rc;

	memset(k, 0, sizeof *k);
	if (rd_u8(r, &tag, "keyed state handle tag") < 0)
		return -1;
	if (tag == 0)
		return 0;
	if (r->depth >= FM_DEPTH)
		return fail(r, at, "keyed state handles nested more than %d deep", FM_DEPTH);
	if ((k->j = jnew(r)) == NULL)
		return -1;
	k->present = 1;
	r->depth++;
	switch (tag) {
	case 3: case 7: case 12: rc = keyed_groups(r, k, tag); break;
	case 5: case 11: rc = keyed_incremental(r, k, tag); break;
	case 8: case 14: rc = keyed_changelog(r, k, tag); break;
	case 9: rc = keyed_changelog_bytes(r, k); break;
	case 10: case 13: rc = keyed_changelog_files(r, k, tag); break;
	default: rc = fail(r, at, "unknown keyed state handle tag %u", tag); break;
	}
	r->depth--;
	if (rc == 0) {
		/* kind, size and path first, as the handles print them */
		json_t *o = json_pack("{s:s,s:I,s:s?}", "kind", k->kind, "size", (json_int_t)k->size,
				      "path", k->path);

		if (o == NULL || json_object_update(o, k->j) < 0) {
			json_decref(o);
			rc = nomem(r);
		} else {
			json_decref(k->j);
			k->j = o;
		}
	}
	if (rc < 0)
		keyed_release(k);
	return rc;
}

static int
rd_keyed_top(struct rd *r, struct ckpt_subtask *st, const char *scope)
{
	struct fm_keyed k;
	json_t *detail;
	uint32_t last;

	r->cln = 0;
	if (rd_keyed(r, &k) < 0)
		return -1;
	if (!k.present)
		return 0;
	if (strcmp(k.kind, "changelog") == 0 && r->cln > 0) { /* what changelog.c reads */
		k.data = r->cl;
		k.dlen = r->cln;
	}
	if (k.kg_count > 0) {
		last = k.kg_first + k.kg_count - 1;
		if (!st->keyed || k.kg_first < st->kg_first)
			st->kg_first = k.kg_first;
		if (!st->keyed || last > st->kg_last)
			st->kg_last = last;
		st->keyed = 1;
	}
	detail = json_deep_copy(k.j);
	if (detail == NULL) {
		keyed_release(&k);
		return nomem(r);
	}
	json_object_del(detail, "kind");
	json_object_del(detail, "size");
	json_object_del(detail, "path");
	if (inline_data(r, add_handle(r, st, scope, k.kind, k.size, k.path, detail), k.data, k.dlen) < 0) {
		k.path = NULL;
		keyed_release(&k);
		return -1;
	}
	k.path = NULL;
	keyed_release(&k);
	return 0;
}

/* ----------------------------------------------------- channel state (ckpt-flink(5), CHANNEL STATE) */

struct fm_chan {
	int input;
	const char *scope, *a, *b; /* "gate"/"channel" or "partition"/"subpartition" */
};

/* subtask, a, b, offsets, state size (the v3-v5 record, and v6 tags 1 and 2). */
static int
chan_plain(struct rd *r, struct ckpt_subtask *st, const struct fm_chan *c)
{
	json_t *detail = jnew(r);
	struct fm_stream d = {0};
	int32_t sub, a, b;
	size_t n, at = r->pos;
	uint64_t size = 0;
	char *path = NULL;
	int rc = -1;

	if (detail == NULL || rd_i32(r, &sub, "channel subtask") < 0 || rd_i32(r, &a, "channel index") < 0 ||
	    rd_i32(r, &b, "channel index") < 0)
		goto out;
	if (sub < 0 || a < 0 || b < 0) {
		fail(r, at, "negative index in channel state handle");
		goto out;
	}
	if (jputi(r, detail, "subtask", sub) < 0 || jputi(r, detail, c->a, a) < 0 ||
	    jputi(r, detail, c->b, b) < 0 || rd_count(r, &n, 8, "offset count") < 0 ||
	    rd_offsets(r, detail, "offsets", n, NULL) < 0 || rd_u63(r, &size, "channel state size") < 0 ||
	    rd_stream(r, &d, "channel data handle") < 0 || take_delegate(r, detail, &d, &path) < 0)
		goto out;
	rc = add_handle(r, st, c->scope, "channel", size, path, detail) ? 0 : -1;
	detail = NULL;
	path = NULL;
	if (rc == 0) {
		*(c->input ? &st->nin : &st->nout) += 1;
		*(c->input ? &st->in_bytes : &st->out_bytes) += size;
	}
out:
	free(path);
	json_decref(detail);
	stream_release(&d);
	return rc;
}

/* The channel offsets blob of a merged handle: its own big-endian records, read to its end. */
static int
chan_merged_blob(struct rd *r, json_t *chans, const struct fm_chan *c, size_t end, uint64_t *sum)
{
	size_t n, saved = r->len;
	int rc = -1;

	r->len = end;
	if (rd_count(r, &n, 20, "merged channel count") < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		json_t *o = jnew(r);
		int32_t a, b;
		uint64_t size = 0;
		size_t k;

		if (o == NULL || jappend(r, chans, o) < 0)
			goto out;
		if (rd_i32(r, &a, "channel index") < 0 || rd_i32(r, &b, "channel index") < 0 ||
		    rd_u63(r, &size, "channel state size") < 0 || jputi(r, o, c->a, a) < 0 ||
		    jputi(r, o, c->b, b) < 0 || jputi(r, o, "size", (long long)size) < 0 ||
		    rd_count(r, &k, 8, "offset count") < 0 || rd_offsets(r, o, "offsets", k, NULL) < 0)
			goto out;
		*sum += size;
	}
	if (r->pos != end) {
		fail(r, r->pos, "%zu unread bytes in merged channel offsets", end - r->pos);
		goto out;
	}
	rc = 0;
out:
	r->len = saved;
	return rc;
}

/* v6 tags 3 and 4: one handle for all the channels of a delegate file. */
static int
chan_merged(struct rd *r, struct ckpt_subtask *st, const struct fm_chan *c)
{
	json_t *detail = jnew(r), *chans = jarr(r);
	struct fm_stream d = {0};
	int32_t sub;
	uint64_t size = 0, sum = 0;
	size_t blob;
	char *path = NULL;
	int rc = -1;

	if (detail == NULL || chans == NULL || rd_i32(r, &sub, "channel subtask") < 0 ||
	    jputi(r, detail, "subtask", sub) < 0 || rd_u63(r, &size, "channel state size") < 0 ||
	    rd_stream(r, &d, "channel data handle") < 0 || take_delegate(r, detail, &d, &path) < 0 ||
	    rd_count(r, &blob, 1, "channel offsets length") < 0 ||
	    chan_merged_blob(r, chans, c, r->pos + blob, &sum) < 0)
		goto out;
	if (jput(r, detail, "channels", json_incref(chans)) < 0)
		goto out;
	*(c->input ? &st->nin : &st->nout) += json_array_size(chans);
	*(c->input ? &st->in_bytes : &st->out_bytes) += size;
	rc = add_handle(r, st, c->scope, "merged_channels", size, path, detail) ? 0 : -1;
	detail = NULL;
	path = NULL;
out:
	json_decref(chans);
	json_decref(detail);
	free(path);
	stream_release(&d);
	return rc;
}

static int
rd_channels(struct rd *r, struct ckpt_subtask *st, int input)
{
	static const struct fm_chan in = {1, "input_channel", "gate", "channel"};
	static const struct fm_chan out = {0, "output_channel", "partition", "subpartition"};
	const struct fm_chan *c = input ? &in : &out;
	size_t n;

	if (rd_count(r, &n, r->version >= 6 ? 18 : 25, input ? "input channel handle count" :
			 "output channel handle count") < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		size_t at = r->pos;
		uint8_t tag;
		int rc;

		if (r->version < 6) {
			rc = chan_plain(r, st, c);
		} else {
			if (rd_u8(r, &tag, "channel handle tag") < 0)
				return -1;
			if (tag == (input ? 1 : 2))
				rc = chan_plain(r, st, c);
			else if (tag == (input ? 3 : 4))
				rc = chan_merged(r, st, c);
			else
				rc = fail(r, at, "invalid %s handle tag %u", c->scope, tag);
		}
		if (rc < 0)
			return -1;
		*(input ? &r->nin : &r->nout) += 1;
	}
	return 0;
}

/* --------------------------------- subtasks and operators (ckpt-flink(5), OPERATORS, SUBTASK STATE) */

static int
rd_subtask_v2_legacy(struct rd *r)
{
	int64_t duration;
	size_t at;
	int32_t n;

	if (rd_i64(r, &duration, "subtask duration") < 0)
		return -1;
	at = r->pos;
	if (rd_i32(r, &n, "legacy state count") < 0)
		return -1;
	if (n != 0)
		return fail(r, at, "legacy state (from Flink <= 1.1, created through the 'Checkpointed' "
			    "interface) is no longer supported");
	return 0;
}

static int
rd_subtask(struct rd *r, struct ckpt_operator *op, struct ckpt_subtask *st)
{
	if (r->version == 2 && rd_subtask_v2_legacy(r) < 0)
		return -1;
	if (rd_opstate(r, st, "managed_operator") < 0 || rd_opstate(r, st, "raw_operator") < 0 ||
	    rd_keyed_top(r, st, "managed_keyed") < 0 || rd_keyed_top(r, st, "raw_keyed") < 0)
		return -1;
	if (r->version >= 3 && (rd_channels(r, st, 1) < 0 || rd_channels(r, st, 0) < 0))
		return -1;
	if (r->version >= 7) {
		size_t at = r->pos;
		uint8_t has;
		uint64_t ref = 0;

		if (rd_u8(r, &has, "reference checkpoint flag") < 0)
			return -1;
		if (has > 1)
			return fail(r, at, "invalid reference checkpoint flag %u", has);
		if (has && (rd_u63(r, &ref, "reference checkpoint id") < 0 ||
			    jappend(r, r->regional, json_pack("{s:s,s:i,s:I}", "operator", op->id,
							     "subtask", (int)st->index, "ref_checkpoint_id",
							     (json_int_t)ref)) < 0))
			return -1;
	}
	return 0;
}

static int
cmp_subtask(const void *a, const void *b)
{
	const struct ckpt_subtask *x = a, *y = b;

	return x->index < y->index ? -1 : x->index > y->index;
}

static void
check_key_groups(struct rd *r, const struct ckpt_operator *op, const struct ckpt_subtask *st)
{
	uint64_t p = op->parallelism, m = op->max_parallelism, i = st->index, lo, hi;

	if (!st->keyed || p == 0 || m < p)
		return;
	lo = (i * m + p - 1) / p;
	hi = ((i + 1) * m - 1) / p;
	if (st->kg_first != lo || st->kg_last != hi)
		warn(r, "operator %s subtask %u: key groups %u-%u, where Flink assigns %llu-%llu", op->id,
		     st->index, st->kg_first, st->kg_last, (unsigned long long)lo, (unsigned long long)hi);
}

static int
rd_subtasks(struct rd *r, struct ckpt_operator *op, size_t n)
{
	struct ckpt_bits seen = {0};
	int rc = -1;

	if ((op->subtasks = ckpt_calloc(n ? n : 1, sizeof *op->subtasks, r->e)) == NULL)
		return -1;
	if (n && ckpt_bits_init(&seen, op->parallelism, r->e) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct ckpt_subtask *st = &op->subtasks[i];
		size_t at = r->pos;
		int32_t idx;

		if (rd_i32(r, &idx, "subtask index") < 0)
			goto out;
		op->nsubtasks++;
		st->finished = r->version >= 3 && idx < 0;
		st->index = st->finished ? (uint32_t)(-(int64_t)idx - 1) : (uint32_t)idx;
		if ((idx < 0 && !st->finished) || st->index >= op->parallelism) {
			fail(r, at, "subtask index %d of operator %s is outside its parallelism %u", idx, op->id,
			     op->parallelism);
			goto out;
		}
		if (ckpt_bits_test(&seen, st->index)) {
			fail(r, at, "duplicate subtask %u of operator %s", st->index, op->id);
			goto out;
		}
		ckpt_bits_set(&seen, st->index);
		r->nentries++;
		if (st->finished)
			r->nfinished++;
		else if (rd_subtask(r, op, st) < 0)
			goto out;
	}
	qsort(op->subtasks, op->nsubtasks, sizeof *op->subtasks, cmp_subtask);
	for (size_t i = 0; i < op->nsubtasks; i++)
		check_key_groups(r, op, &op->subtasks[i]);
	rc = 0;
out:
	ckpt_bits_release(&seen);
	return rc;
}

static int
rd_coordinator(struct rd *r, struct ckpt_operator *op)
{
	struct fm_stream s;
	size_t at = r->pos;
	int rc = -1;

	if (rd_stream(r, &s, "coordinator state handle") < 0)
		return -1;
	if (!s.present)
		return 0;
	if (s.data == NULL) {
		fail(r, at, "coordinator state of operator %s is not inline bytes", op->id);
		goto out;
	}
	if ((op->coordinator = ckpt_calloc(1, sizeof *op->coordinator, r->e)) == NULL ||
	    (op->coordinator->p = malloc(s.dlen ? s.dlen : 1)) == NULL) {
		nomem(r);
		goto out;
	}
	memcpy(op->coordinator->p, s.data, s.dlen);
	op->coordinator->len = s.dlen;
	rc = 0;
out:
	stream_release(&s);
	return rc;
}

static int
rd_operator_head(struct rd *r, struct ckpt_operator *op)
{
	static const char hex[] = "0123456789abcdef";
	int32_t p, m;
	size_t at;

	if (r->version >= 5) {
		if (rd_utf(r, &op->name, "operator name") < 0 || rd_utf(r, &op->uid, "operator uid") < 0)
			return -1;
		if (op->name[0] == '\0')
			free(op->name), op->name = NULL;
		if (op->uid[0] == '\0')
			free(op->uid), op->uid = NULL;
	}
	if (need(r, 16, "operator id") < 0)
		return -1;
	if ((op->id = malloc(33)) == NULL)
		return nomem(r);
	for (int i = 0; i < 16; i++) {
		op->id[2 * i] = hex[r->p[r->pos + i] >> 4];
		op->id[2 * i + 1] = hex[r->p[r->pos + i] & 15];
	}
	op->id[32] = '\0';
	r->pos += 16;
	at = r->pos;
	if (rd_i32(r, &p, "parallelism") < 0 || rd_i32(r, &m, "max parallelism") < 0)
		return -1;
	if (p < 0 || m < 0 || p > m)
		return fail(r, at, "operator %s: parallelism %d is not smaller or equal to max parallelism %d",
			    op->id, p, m);
	if ((uint32_t)p > CKPT_PARALLELISM_LIMIT)
		return fail(r, at, "operator %s: parallelism %d is above the limit %u", op->id, p,
			    CKPT_PARALLELISM_LIMIT);
	op->parallelism = (uint32_t)p;
	op->max_parallelism = (uint32_t)m;
	if (op->uid) {
		char want[33];

		ckpt_flink_operator_id(op->uid, strlen(op->uid), want);
		if (strcmp(want, op->id) != 0)
			warn(r, "operator %s: its uid \"%s\" gives id %s (the id was set otherwise)", op->id,
			     op->uid, want);
	}
	return 0;
}

static int
rd_operator(struct rd *r, struct ckpt_operator *op)
{
	size_t at, n;
	int32_t chain, nsub;

	if (rd_operator_head(r, op) < 0)
		return -1;
	if (r->sp)
		r->sp->ops[r->op].body = r->pos;
	if (r->version == 2) {
		if (rd_i32(r, &chain, "chain length") < 0 || rd_count(r, &n, 4, "subtask count") < 0)
			return -1;
		return rd_subtasks(r, op, n);
	}
	if (rd_coordinator(r, op) < 0)
		return -1;
	at = r->pos;
	if (need(r, 4, "subtask count") < 0)
		return -1;
	nsub = (int32_t)(uint32_t)ckpt_load_be(r->p + r->pos, 4);
	if (nsub < 0) {
		r->pos += 4;
		if (op->coordinator)
			return fail(r, at, "fully finished operator %s has coordinator state", op->id);
		op->fully_finished = 1;
		r->nfully++;
		return rd_subtasks(r, op, 0);
	}
	if (rd_count(r, &n, 4, "subtask count") < 0)
		return -1;
	return rd_subtasks(r, op, n);
}

/* ----------------------------------------------------- master states (ckpt-flink(5), MASTER STATES) */

static int
rd_master_block(struct rd *r, json_t *ms)
{
	char *name = NULL;
	int32_t version;
	size_t n;
	int rc = -1;

	if (rd_i32(r, &version, "master state version") < 0 || rd_utf(r, &name, "master state name") < 0 ||
	    rd_count(r, &n, 1, "master state payload length") < 0)
		goto out;
	if (jappend(r, ms, json_pack("{s:s,s:i,s:I,s:o}", "name", name, "version", version, "payload_bytes",
				     (json_int_t)n, "payload", ckpt_entry_to_json(r->p + r->pos, n))) < 0)
		goto out;
	r->pos += n;
	rc = 0;
out:
	free(name);
	return rc;
}

static int
rd_master_states(struct rd *r, json_t *ms)
{
	size_t n;

	if (rd_count(r, &n, 8, "master state count") < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		size_t at = r->pos, len, end, saved = r->len;
		int32_t magic;
		int rc;

		if (rd_i32(r, &magic, "master state magic") < 0)
			return -1;
		if ((uint32_t)magic != FM_MASTER_MAGIC)
			return fail(r, at, "invalid master state magic 0x%08x", (uint32_t)magic);
		at = r->pos;
		if (rd_count(r, &len, 1, "master state length") < 0)
			return -1;
		if (len == 0)
			return fail(r, at, "empty master state");
		end = r->pos + len;
		r->len = end;
		rc = rd_master_block(r, ms);
		r->len = saved;
		if (rc < 0)
			return -1;
		if (r->pos != end)
			return fail(r, r->pos, "%zu unread bytes in master state", end - r->pos);
	}
	return 0;
}

/* -------------------------------------- CheckpointProperties (ckpt-flink(5), CHECKPOINT PROPERTIES) */

/*
 * The trailer is a Java serialization stream holding one object of plain serializable classes
 * and enums (flink-javaser.c reads it), turned into JSON: fields by their names in snake_case,
 * objects with their "class", enum constants by their names.
 */
struct jconv {
	struct rd *r;
	json_t **memo; /* per handle: a value already converted (a back-reference shares it) */
};

static int
snake_key(struct rd *r, json_t *o, const char *name, json_t *v)
{
	char key[256];
	size_t k = 0;

	for (const char *s = name; *s && k + 2 < sizeof key; s++) {
		if (*s >= 'A' && *s <= 'Z') {
			if (k > 0)
				key[k++] = '_';
			key[k++] = (char)(*s - 'A' + 'a');
		} else {
			key[k++] = *s;
		}
	}
	key[k] = '\0';
	return jput(r, o, key, v);
}

static json_t *
jprimitive(const struct ckpt_javaser_value *v)
{
	if (v->type == 'Z')
		return json_boolean(v->i != 0);
	if (v->type == 'D' || v->type == 'F')
		return json_real(v->d);
	return json_integer((json_int_t)v->i);
}

static int jvalue(struct jconv *c, const struct ckpt_javaser_value *v, json_t **out);

/* The fields of each class of the hierarchy, the top-most serializable class first. */
static int
jobject(struct jconv *c, const struct ckpt_javaser_value *v, json_t *o)
{
	if (jputs(c->r, o, "class", v->cls->name) < 0)
		return -1;
	for (size_t i = 0; i < v->n; i++) {
		const struct ckpt_javaser_classdata *d = &v->data[i];

		for (size_t k = 0; k < d->cls->nfields; k++) {
			json_t *f;

			if (jvalue(c, d->fields[k], &f) < 0 || snake_key(c->r, o, d->cls->fields[k].name, f) < 0)
				return -1;
		}
	}
	return 0;
}

/* A value as a new reference in *out. */
static int
jvalue(struct jconv *c, const struct ckpt_javaser_value *v, json_t **out)
{
	json_t *j;

	if (v->handle != SIZE_MAX && c->memo[v->handle]) {
		*out = json_incref(c->memo[v->handle]);
		return 0;
	}
	switch (v->kind) {
	case CKPT_JAVASER_NULL: j = json_null(); break;
	case CKPT_JAVASER_PRIM: j = jprimitive(v); break;
	case CKPT_JAVASER_STRING: /* fall through */
	case CKPT_JAVASER_ENUM: j = json_string(v->str); break;
	case CKPT_JAVASER_OBJECT: j = json_object(); break;
	default: return fail(c->r, v->at, "unsupported Java value"); /* the reader refuses them */
	}
	if (j == NULL)
		return nomem(c->r);
	if (v->handle != SIZE_MAX)
		c->memo[v->handle] = j;
	if (v->kind == CKPT_JAVASER_OBJECT && jobject(c, v, j) < 0)
		return -1;
	*out = json_incref(j);
	return 0;
}

/* The Java object at r->pos, read to its end, as JSON. */
static int
java_read(struct rd *r, json_t **out)
{
	struct ckpt_javaser *j = ckpt_javaser_new(r->p, r->len, r->name, CKPT_JAVASER_PLAIN, FM_DEPTH, r->e);
	const struct ckpt_javaser_value *v;
	struct jconv c = {.r = r};
	int rc = -1;

	*out = NULL;
	if (j == NULL || ckpt_javaser_read(j, &r->pos, &v) < 0)
		goto out;
	if ((c.memo = ckpt_calloc(ckpt_javaser_handles(j), sizeof *c.memo, r->e)) == NULL)
		goto out;
	rc = jvalue(&c, v, out);
out:
	for (size_t i = 0; c.memo && i < ckpt_javaser_handles(j); i++)
		json_decref(c.memo[i]);
	free(c.memo);
	ckpt_javaser_free(j);
	return rc;
}

/* The properties object; sets *kind to "checkpoint" or "savepoint" when the type says so. */
static int
properties_read(struct rd *r, json_t **props, const char **kind)
{
	static const char want[] = "org.apache.flink.runtime.checkpoint.CheckpointProperties";
	size_t at = r->pos;
	json_t *v = NULL, *type;
	const char *cls;
	int rc = -1;

	*kind = NULL;
	if (need(r, 4, "checkpoint properties") < 0)
		goto out;
	if (ckpt_load_be(r->p + r->pos, 4) != 0xaced0005) {
		fail(r, at, "checkpoint properties are not a Java serialization stream");
		goto out;
	}
	r->pos += 4;
	if (java_read(r, &v) < 0)
		goto out;
	if (json_is_object(v)) {
		cls = json_string_value(json_object_get(v, "class")); /* NULL if a field "class" hid it */
		if (cls == NULL || strcmp(cls, want) != 0) {
			fail(r, at, "checkpoint properties of unexpected class %s",
			     cls ? cls : "(hidden by a field \"class\")");
			goto out;
		}
		json_object_del(v, "class");
		type = json_object_get(v, "checkpoint_type");
		cls = json_string_value(json_object_get(type, "class"));
		if (cls && strcmp(cls, "org.apache.flink.runtime.checkpoint.CheckpointType") == 0)
			*kind = "checkpoint";
		else if (cls && strcmp(cls, "org.apache.flink.runtime.checkpoint.SavepointType") == 0)
			*kind = "savepoint";
	} else if (!json_is_null(v)) {
		fail(r, at, "checkpoint properties are not an object");
		goto out;
	}
	*props = v;
	v = NULL;
	rc = 0;
out:
	json_decref(v);
	return rc;
}

/* ------------------------------------------------------------ the file */

static int
cmp_file(const void *a, const void *b)
{
	json_t *const *x = a, *const *y = b;

	return strcmp(json_string_value(json_object_get(*x, "path")),
		      json_string_value(json_object_get(*y, "path")));
}

/* Referenced files sorted by path, each once (with its largest size). */
static json_t *
files_dedup(struct rd *r)
{
	size_t n = json_array_size(r->files);
	json_t **v = ckpt_calloc(n + 1, sizeof *v, r->e), *out = NULL;

	if (v == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
		v[i] = json_array_get(r->files, i);
	qsort(v, n, sizeof *v, cmp_file);
	if ((out = jarr(r)) == NULL)
		goto out;
	for (size_t i = 0; i < n; i++) {
		json_t *last = json_array_get(out, json_array_size(out) - 1);

		if (last && cmp_file(&last, &v[i]) == 0) {
			if (json_integer_value(json_object_get(v[i], "size")) >
			    json_integer_value(json_object_get(last, "size")))
				json_object_set(last, "size", json_object_get(v[i], "size"));
			continue;
		}
		if (jappend(r, out, json_deep_copy(v[i])) < 0) {
			json_decref(out);
			out = NULL;
			goto out;
		}
	}
out:
	free(v);
	return out;
}

/* Before version 4 (or with null properties) the file does not say whether it is a savepoint; what it
 * holds may hint. */
static int
kind_guess(struct rd *r, json_t *f)
{
	if (r->nin + r->nout > 0)
		return jput(r, f, "kind_guess", json_pack("{s:s,s:s}", "kind", "checkpoint", "because",
							  "it holds in-flight channel state (savepoints are aligned)"));
	if (r->canonical)
		return jput(r, f, "kind_guess", json_pack("{s:s,s:s}", "kind", "savepoint", "because",
							  "it holds savepoint key-group handles (tag 7)"));
	return 0;
}

static int
build_flink(struct rd *r, struct ckpt_snapshot *s, json_t *masters, json_t *props, int has_props)
{
	json_t *f = jnew(r), *files = files_dedup(r);

	s->flink = f;
	if (f == NULL || files == NULL) {
		json_decref(files);
		return -1;
	}
	if (jputi(r, f, "format_version", r->version) < 0 ||
	    jput(r, f, "master_states", json_incref(masters)) < 0 ||
	    (has_props && jput(r, f, "properties", json_incref(props)) < 0))
		goto fail;
	if (jput(r, f, "counts", json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
					   "operators", (json_int_t)s->nops,
					   "fully_finished_operators", (json_int_t)r->nfully,
					   "subtask_entries", (json_int_t)r->nentries,
					   "finished_subtasks", (json_int_t)r->nfinished,
					   "handles", (json_int_t)r->nhandles,
					   "input_channel_handles", (json_int_t)r->nin,
					   "output_channel_handles", (json_int_t)r->nout,
					   "state_size", (json_int_t)r->state_size,
					   "inline_bytes", (json_int_t)r->inline_bytes,
					   "files", (json_int_t)json_array_size(files))) < 0)
		goto fail;
	if (jput(r, f, "files", files) < 0)
		return -1;
	if (s->kind == NULL && kind_guess(r, f) < 0)
		return -1;
	if (json_array_size(r->regional) && jput(r, f, "ref_checkpoint_ids", json_incref(r->regional)) < 0)
		return -1;
	if (json_array_size(r->warnings) && jput(r, f, "warnings", json_incref(r->warnings)) < 0)
		return -1;
	return 0;
fail:
	json_decref(files);
	return -1;
}

static int
rd_header(struct rd *r)
{
	int32_t magic, version;

	if (rd_i32(r, &magic, "magic number") < 0)
		return -1;
	if ((uint32_t)magic != FM_MAGIC)
		return fail(r, 0, "unexpected magic number 0x%08x: not a Flink _metadata file (or a Flink 1.0 "
			    "savepoint, which is not supported)", (uint32_t)magic);
	if (rd_i32(r, &version, "format version") < 0)
		return -1;
	if (version == 1)
		return fail(r, 4, "this savepoint / checkpoint version (Flink 1.1 / 1.2) is no longer supported");
	if (version < 2 || version > 7)
		return fail(r, 4, "unrecognized checkpoint version number: %d", version);
	r->version = version;
	return 0;
}

static int
rd_body(struct rd *r, struct ckpt_snapshot *s, json_t *masters, json_t **props)
{
	const char *kind;
	size_t n;

	if (rd_u63(r, &s->checkpoint_id, "checkpoint id") < 0)
		return -1;
	if (r->sp)
		r->sp->masters_at = r->pos;
	if (rd_master_states(r, masters) < 0)
		return -1;
	if (r->sp)
		r->sp->ops_at = r->pos;
	if (rd_count(r, &n, r->version == 2 ? 32 : r->version < 5 ? 29 : 33, "operator count") < 0)
		return -1;
	if ((s->ops = ckpt_calloc(n ? n : 1, sizeof *s->ops, r->e)) == NULL)
		return -1;
	if (r->sp && (r->sp->ops = ckpt_calloc(n ? n : 1, sizeof *r->sp->ops, r->e)) == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		s->nops++;
		r->op = i;
		if (r->sp)
			r->sp->ops[r->sp->nops++].at = r->pos;
		if (rd_operator(r, &s->ops[i]) < 0)
			return -1;
		if (r->sp)
			r->sp->ops[i].end = r->pos;
	}
	if (r->sp)
		r->sp->trailer_at = r->pos;
	if (r->version >= 4) {
		if (properties_read(r, props, &kind) < 0)
			return -1;
		if (kind && (s->kind = strdup(kind)) == NULL)
			return nomem(r);
	}
	if (r->pos != r->len)
		return fail(r, r->pos, "%zu unexpected bytes after the %s", r->len - r->pos,
			    r->version >= 4 ? "checkpoint properties" : "last operator");
	return 0;
}

int
ckpt_flinkmeta_sniff(const void *buf, size_t len)
{
	return len >= 4 && ckpt_load_be(buf, 4) == FM_MAGIC;
}

void
ckpt_fmspans_release(struct ckpt_fmspans *sp)
{
	for (size_t i = 0; i < sp->npaths; i++)
		free(sp->paths[i].path);
	free(sp->paths);
	free(sp->ops);
	memset(sp, 0, sizeof *sp);
}

struct ckpt_snapshot *
ckpt_flinkmeta_decode(const void *buf, size_t len, const char *name, struct ckpt_err *e)
{
	return ckpt_flinkmeta_decode_spans(buf, len, name, NULL, e);
}

struct ckpt_snapshot *
ckpt_flinkmeta_decode_spans(const void *buf, size_t len, const char *name, struct ckpt_fmspans *sp,
			    struct ckpt_err *e)
{
	struct rd r = {.p = buf, .len = len, .name = name, .e = e, .sp = sp};
	struct ckpt_snapshot *s = ckpt_calloc(1, sizeof *s, e);
	json_t *masters = json_array(), *props = NULL;
	int ok = 0;

	if (sp)
		memset(sp, 0, sizeof *sp);
	r.files = json_array();
	r.warnings = json_array();
	r.regional = json_array();
	if (s == NULL)
		goto out;
	if (masters == NULL || r.files == NULL || r.warnings == NULL || r.regional == NULL) {
		nomem(&r);
		goto out;
	}
	if (rd_header(&r) < 0)
		goto out;
	if (sp)
		sp->version = r.version;
	if (rd_body(&r, s, masters, &props) < 0 ||
	    build_flink(&r, s, masters, props, r.version >= 4) < 0)
		goto out;
	ok = 1;
out:
	json_decref(masters);
	json_decref(props);
	json_decref(r.files);
	json_decref(r.warnings);
	json_decref(r.regional);
	free(r.cl);
	if (!ok) {
		ckpt_snapshot_free(s); /* no backing yet: the model only */
		return NULL;
	}
	return s;
}
