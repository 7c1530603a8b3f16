/* meta-handle.c: the state handles of Flink's _metadata (stream, operator, keyed, changelog,
 * incremental, channel and file-merging handles) decoded into a subtask's handles (meta.c reads the
 * records around them); the layout is in ckpt-flink(5), STATE HANDLES and CHANNEL STATE. */
#include <stdlib.h>
#include <string.h>

#include "meta.h"

/* A decoded stream state handle (the leaf of every other handle). */
struct fm_stream {
	int present;
	uint64_t size;
	char *path;               /* owned; NULL when inline or empty */
	const unsigned char *data; /* inline bytes (into the buffer), else NULL */
	size_t dlen;
	json_t *j;                /* owned description: kind, size, path, ... */
};

/* ------------------------------------------------------------ primitives of handles */

/* Remember where a path string read from at lies (for the writer), when asked to. */
static int
note_path(struct ckpt_fmeta_reader *r, size_t at, enum ckpt_fmeta_path_kind kind, const char *path)
{
	struct ckpt_fmeta_path *p;

	if (r->sp == NULL)
		return 0;
	p = ckpt_reallocarray(r->sp->paths, r->sp->npaths + 1, sizeof *p, r->c.e);
	if (p == NULL)
		return -1;
	r->sp->paths = p;
	p += r->sp->npaths;
	*p = (struct ckpt_fmeta_path){.at = at, .end = r->c.pos, .kind = kind, .op = r->op};
	if ((p->path = strdup(path)) == NULL)
		return ckpt_err_nomem(r->c.e, r->c.where);
	r->sp->npaths++;
	return 0;
}

/* A new array as o's member key (NULL with the error set). */
static json_t *
jlist(struct ckpt_fmeta_reader *r, json_t *o, const char *key)
{
	json_t *a = jarr(r);

	return a == NULL || jput(r, o, key, a) < 0 ? NULL : a;
}

/* n i64 offsets as a JSON array. */
static int
rd_offsets(struct ckpt_fmeta_reader *r, json_t *o, const char *key, size_t n, int64_t *copy)
{
	json_t *a;
	int64_t v;

	if ((uint64_t)n * 8 > ckpt_cur_left(&r->c))
		return ckpt_cur_fail(&r->c, r->c.pos, "%zu offsets are more than the remaining %zu bytes can hold", n, ckpt_cur_left(&r->c));
	if ((a = jlist(r, o, key)) == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (ckpt_cur_i64(&r->c, &v, "offset") < 0 || jappend(r, a, json_integer(v)) < 0)
			return -1;
		if (copy)
			copy[i] = v;
	}
	return 0;
}

/* i32 start + i32 count as an inclusive range "a-b" ("" when empty). */
static int
rd_keygroups(struct ckpt_fmeta_reader *r, json_t *o, uint32_t *first, uint32_t *count)
{
	size_t at = r->c.pos;
	int32_t s, n;
	char buf[32];

	if (ckpt_cur_i32(&r->c, &s, "key-group range") < 0 || ckpt_cur_i32(&r->c, &n, "key-group range") < 0)
		return -1;
	if (s < 0 || n < 0 || (int64_t)s + n - 1 > INT32_MAX)
		return ckpt_cur_fail(&r->c, at, "invalid key-group range: start %d, %d key groups", s, n);
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
note_file(struct ckpt_fmeta_reader *r, const char *kind, const char *path, uint64_t size)
{
	return jappend(r, r->files, json_pack("{s:s,s:s,s:I}", "path", path, "kind", kind,
					      "size", (json_int_t)size));
}

static int rd_stream(struct ckpt_fmeta_reader *r, struct fm_stream *s, const char *what);

static int
stream_inline(struct ckpt_fmeta_reader *r, struct fm_stream *s)
{
	char *hname = NULL;
	size_t n;
	int rc = -1;

	if (ckpt_javaser_utf(&r->c, &hname, "inline handle name") < 0 || ckpt_cur_count(&r->c, &n, 1, "inline byte count") < 0)
		goto out;
	s->data = r->c.p + r->c.pos;
	s->dlen = n;
	s->size = n;
	r->c.pos += n;
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
stream_file(struct ckpt_fmeta_reader *r, struct fm_stream *s, int relative)
{
	const char *kind = relative ? "relative_file" : "file";
	size_t at;

	if (relative) {
		at = r->c.pos;
		if (ckpt_javaser_utf(&r->c, &s->path, "relative path") < 0 || note_path(r, at, CKPT_FMETA_PATH_RELATIVE, s->path) < 0 ||
		    ckpt_cur_u63(&r->c, &s->size, "file size") < 0)
			return -1;
	} else {
		if (ckpt_cur_u63(&r->c, &s->size, "file size") < 0)
			return -1;
		at = r->c.pos;
		if (ckpt_javaser_utf(&r->c, &s->path, "file path") < 0 || note_path(r, at, CKPT_FMETA_PATH_FILE, s->path) < 0)
			return -1;
	}
	if (jputs(r, s->j, "kind", kind) < 0 || jputi(r, s->j, "size", (long long)s->size) < 0 ||
	    jputs(r, s->j, "path", s->path) < 0)
		return -1;
	return note_file(r, kind, s->path, s->size);
}

static int
stream_segment(struct ckpt_fmeta_reader *r, struct fm_stream *s)
{
	uint64_t start = 0;
	int32_t scope;
	size_t at;
	char *lid = NULL;
	int rc = -1;

	if (ckpt_cur_u63(&r->c, &start, "segment start") < 0 || ckpt_cur_u63(&r->c, &s->size, "segment size") < 0)
		goto out;
	at = r->c.pos;
	if (ckpt_cur_i32(&r->c, &scope, "segment scope") < 0)
		goto out;
	if (scope != 0 && scope != 1) {
		ckpt_cur_fail(&r->c, at, "invalid segment scope %d", scope);
		goto out;
	}
	at = r->c.pos;
	if (ckpt_javaser_utf(&r->c, &s->path, "segment file path") < 0 || note_path(r, at, CKPT_FMETA_PATH_SEGMENT, s->path) < 0 ||
	    ckpt_javaser_utf(&r->c, &lid, "logical file id") < 0)
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
stream_keygroups(struct ckpt_fmeta_reader *r, struct fm_stream *s)
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
rd_stream(struct ckpt_fmeta_reader *r, struct fm_stream *s, const char *what)
{
	size_t at = r->c.pos;
	uint8_t tag;
	int rc;

	memset(s, 0, sizeof *s);
	if (ckpt_cur_u8(&r->c, &tag, what) < 0)
		return -1;
	if (tag == 0)
		return 0;
	if (r->depth >= FM_DEPTH)
		return ckpt_cur_fail(&r->c, at, "%s nested more than %d deep", what, FM_DEPTH);
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
	default: rc = ckpt_cur_fail(&r->c, at, "unknown %s tag %u", what, tag); break;
	}
	r->depth--;
	if (rc < 0)
		stream_release(s);
	return rc;
}

/* ------------------------------------------------------------ the snapshot being built */

/* Add a handle to st; takes detail and path. */
static struct ckpt_handle *
add_handle(struct ckpt_fmeta_reader *r, struct ckpt_subtask *st, const char *scope, const char *kind, uint64_t size,
	   char *path, json_t *detail)
{
	struct ckpt_handle *h, *nh;

	nh = ckpt_reallocarray(st->handles, st->nhandles + 1, sizeof *nh, r->c.e);
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
		ckpt_err_nomem(r->c.e, r->c.where);
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

/* Keep an inline delegate's bytes with the handle (the state readers of flink/state-*.c read them). */
static int
inline_data(struct ckpt_fmeta_reader *r, struct ckpt_handle *h, const unsigned char *p, size_t n)
{
	if (h == NULL)
		return -1;
	if (p == NULL)
		return 0;
	if ((h->data.p = malloc(n ? n : 1)) == NULL)
		return ckpt_err_nomem(r->c.e, r->c.where);
	memcpy(h->data.p, p, n);
	h->data.len = n;
	return 0;
}

/* Inside a changelog handle, keep p[0, n) for the handle (its change records, inline delegates). */
static int
cl_keep(struct ckpt_fmeta_reader *r, const unsigned char *p, size_t n)
{
	if (!r->incl || p == NULL || n == 0)
		return 0;
	if (r->cln + n > r->clcap && ckpt_grow(&r->cl, &r->clcap, r->cln + n, 1, 256, r->c.e) < 0)
		return -1;
	memcpy(r->cl + r->cln, p, n);
	r->cln += n;
	return 0;
}

/* Move the delegate's path and description into a handle's detail. */
static int
take_delegate(struct ckpt_fmeta_reader *r, json_t *detail, struct fm_stream *d, char **path)
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
add_opstate(struct ckpt_fmeta_reader *r, struct ckpt_subtask *st, const char *name, enum ckpt_mode mode, size_t n,
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
	o = ckpt_reallocarray(st->ops, st->nops + 1, sizeof *o, r->c.e);
	if (o == NULL)
		return -1;
	st->ops = o;
	o = &st->ops[st->nops];
	memset(o, 0, sizeof *o);
	if ((o->name = strdup(name)) == NULL)
		return ckpt_err_nomem(r->c.e, r->c.where);
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
opstate_bytes(struct ckpt_fmeta_reader *r, struct fm_opoff *o, size_t n, uint64_t size, uint64_t *bytes, size_t nstates)
{
	if (n > 0) /* o is NULL when there are no offsets, and qsort wants a pointer */
		qsort(o, n, sizeof *o, cmp_opoff);
	for (size_t i = 0; i < n; i++) {
		int64_t end = i + 1 < n ? o[i + 1].off : (int64_t)size;

		if (o[i].off < 0 || (uint64_t)o[i].off > size || end < o[i].off) {
			fm_warn(r, "operator state offset %lld lies outside its %llu-byte stream",
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
rd_opstate_entry(struct ckpt_fmeta_reader *r, struct fm_opread *o, size_t idx)
{
	size_t at, n;
	uint8_t mode;
	char *name = NULL;
	json_t *s;
	struct fm_opoff *no;
	int64_t *tmp = NULL;
	int rc = -1;

	if (ckpt_javaser_utf(&r->c, &name, "operator state name") < 0)
		goto out;
	at = r->c.pos;
	if (ckpt_cur_u8(&r->c, &mode, "distribution mode") < 0)
		goto out;
	if (mode > 2) {
		ckpt_cur_fail(&r->c, at, "invalid distribution mode %u of operator state \"%s\"", mode, name);
		goto out;
	}
	for (size_t i = 0; i < json_array_size(o->states); i++) {
		if (strcmp(json_string_value(json_object_get(json_array_get(o->states, i), "name")), name) == 0) {
			ckpt_cur_fail(&r->c, at, "duplicate operator state \"%s\"", name);
			goto out;
		}
	}
	if (ckpt_cur_count(&r->c, &n, 8, "offset count") < 0)
		goto out;
	if ((s = json_pack("{s:s,s:s}", "name", name, "mode", mode_names[mode])) == NULL ||
	    json_array_append_new(o->states, s) < 0) {
		ckpt_err_nomem(r->c.e, r->c.where);
		goto out;
	}
	no = ckpt_reallocarray(o->off, o->noff + n + 1, sizeof *no, r->c.e);
	tmp = ckpt_calloc(n + 1, sizeof *tmp, r->c.e);
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
rd_opstate_merging(struct ckpt_fmeta_reader *r, json_t *detail)
{
	char *own = NULL, *shared = NULL;
	size_t at = r->c.pos, at2;
	uint8_t empty;
	int rc = -1;

	if (ckpt_javaser_utf(&r->c, &own, "task-owned directory") < 0 || note_path(r, at, CKPT_FMETA_PATH_DIR, own) < 0)
		goto out;
	at2 = r->c.pos;
	if (ckpt_javaser_utf(&r->c, &shared, "shared directory") < 0 || note_path(r, at2, CKPT_FMETA_PATH_DIR, shared) < 0 ||
	    ckpt_cur_u8(&r->c, &empty, "empty flag") < 0)
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
opstate_to_model(struct ckpt_fmeta_reader *r, struct ckpt_subtask *st, struct fm_opread *o, uint64_t size)
{
	uint64_t *bytes = ckpt_calloc(o->nstates + 1, sizeof *bytes, r->c.e);
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

/* A managed operator state handle's inline data or file, noted for the writer (--set-offset). */
static int
note_opdata(struct ckpt_fmeta_reader *r, const struct ckpt_subtask *st, const char *scope, const struct fm_stream *d,
	    json_t *states, size_t head)
{
	const char *kind = json_string_value(json_object_get(d->j, "kind"));
	int file = kind && (strcmp(kind, "file") == 0 || strcmp(kind, "relative_file") == 0);

	if (r->sp == NULL || (d->data == NULL && !file) || strcmp(scope, "managed_operator") != 0)
		return 0;
	if (ckpt_grow(&r->sp->opdata, &r->sp->opdatacap, r->sp->nopdata + 1, sizeof *r->sp->opdata, 4, r->c.e) < 0)
		return -1;
	r->sp->opdata[r->sp->nopdata++] = (struct ckpt_fmeta_opdata){
		.op = r->op, .at = file ? 0 : (size_t)(d->data - r->c.p), .n = file ? d->size : d->dlen, .head = head,
		.dend = r->c.pos, .handle = st->nhandles, .file = file, .subtask = st->index, .states = json_incref(states)};
	return 0;
}

/* An operator state handle (tags 4, 17), after its tag. */
static int
rd_opstate_body(struct ckpt_fmeta_reader *r, struct ckpt_subtask *st, const char *scope, uint8_t tag)
{
	struct fm_opread o = {0};
	struct fm_stream d = {0};
	json_t *detail = jnew(r);
	char *path = NULL;
	size_t n, at, head = r->c.pos;
	int rc = -1;

	if (detail == NULL || (o.states = jarr(r)) == NULL || ckpt_cur_count(&r->c, &n, 7, "operator state count") < 0)
		goto out;
	for (o.nstates = 0; o.nstates < n; o.nstates++)
		if (rd_opstate_entry(r, &o, o.nstates) < 0)
			goto out;
	if (jput(r, detail, "states", json_incref(o.states)) < 0)
		goto out;
	if (tag == 17 && rd_opstate_merging(r, detail) < 0)
		goto out;
	at = r->c.pos;
	if (rd_stream(r, &d, "operator state data handle") < 0)
		goto out;
	if (!d.present) {
		ckpt_cur_fail(&r->c, at, "operator state handle without a data handle");
		goto out;
	}
	if (tag == 17 && strncmp(json_string_value(json_object_get(d.j, "kind")), "segment_file", 12) != 0 &&
	    strcmp(json_string_value(json_object_get(d.j, "kind")), "empty_segment_file") != 0) {
		ckpt_cur_fail(&r->c, at, "file-merging operator state handle over a non-segment data handle");
		goto out;
	}
	if (opstate_to_model(r, st, &o, d.size) < 0 || note_opdata(r, st, scope, &d, o.states, head) < 0 ||
	    take_delegate(r, detail, &d, &path) < 0)
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
int
ckpt_fmeta_read_opstate(struct ckpt_fmeta_reader *r, struct ckpt_subtask *st, const char *scope)
{
	size_t at = r->c.pos;
	int32_t has;
	uint8_t tag;

	if (ckpt_cur_i32(&r->c, &has, "operator state flag") < 0)
		return -1;
	if (has == 0)
		return 0;
	if (has != 1)
		return ckpt_cur_fail(&r->c, at, "invalid %s state flag %d (0 or 1 expected)", scope, has);
	at = r->c.pos;
	if (ckpt_cur_u8(&r->c, &tag, "operator state handle tag") < 0)
		return -1;
	if (tag == 0)
		return 0;
	if (tag != 4 && tag != 17)
		return ckpt_cur_fail(&r->c, at, "unknown operator state handle tag %u", tag);
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
	size_t owncap;
};

static void
keyed_release(struct fm_keyed *k)
{
	free(k->own);
	free(k->path);
	json_decref(k->j);
	memset(k, 0, sizeof *k);
}

static int rd_keyed(struct ckpt_fmeta_reader *r, struct fm_keyed *k);

/* Tags 3, 7, 12. */
static int
keyed_groups(struct ckpt_fmeta_reader *r, struct fm_keyed *k, uint8_t tag)
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
	if (tag == 12 && (ckpt_javaser_utf(&r->c, &hid, "state handle id") < 0 || jputs(r, k->j, "handle_id", hid) < 0))
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
 * sizes of the byte_stream files before it, in the order meta, shared, private); inside a changelog
 * handle, for it too (a RocksDB materialized part). */
static int
keep_inline(struct ckpt_fmeta_reader *r, struct fm_keyed *k, const struct fm_stream *d)
{
	unsigned char *p;

	if (d->data == NULL)
		return 0;
	if (cl_keep(r, d->data, d->dlen) < 0)
		return -1;
	if (ckpt_grow(&k->own, &k->owncap, k->dlen + d->dlen + 1, 1, 256, NULL) < 0)
		return ckpt_err_nomem(r->c.e, r->c.where);
	p = k->own;
	memcpy(p + k->dlen, d->data, d->dlen);
	k->data = p;
	k->dlen += d->dlen;
	return 0;
}

/* The shared or private files of an incremental handle: utf local name, stream handle. */
static int
incremental_files(struct ckpt_fmeta_reader *r, struct fm_keyed *k, const char *key, uint64_t *size)
{
	json_t *a = jlist(r, k->j, key);
	size_t n;

	if (a == NULL || ckpt_cur_count(&r->c, &n, 3, "file count") < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct fm_stream d;
		char *local;
		json_t *f;

		if (ckpt_javaser_utf(&r->c, &local, "local file name") < 0)
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
			return ckpt_err_nomem(r->c.e, r->c.where);
		}
		free(local);
	}
	return 0;
}

/* Tags 5, 11 (RocksDB / ForSt incremental). */
static int
keyed_incremental(struct ckpt_fmeta_reader *r, struct fm_keyed *k, uint8_t tag)
{
	struct fm_stream meta;
	uint64_t cid = 0, csize = 0, size = 0;
	char *backend = NULL, *hid = NULL;
	int rc = -1;

	if (ckpt_cur_u63(&r->c, &cid, "checkpoint id") < 0 || ckpt_javaser_utf(&r->c, &backend, "backend id") < 0 ||
	    jputi(r, k->j, "checkpoint_id", (long long)cid) < 0 || jputs(r, k->j, "backend_id", backend) < 0 ||
	    rd_keygroups(r, k->j, &k->kg_first, &k->kg_count) < 0)
		goto out;
	if (tag == 11 && (ckpt_cur_u63(&r->c, &csize, "checkpointed size") < 0 ||
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
	if (tag == 11 && (ckpt_javaser_utf(&r->c, &hid, "state handle id") < 0 || jputs(r, k->j, "handle_id", hid) < 0))
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
keyed_list(struct ckpt_fmeta_reader *r, struct fm_keyed *k, const char *key, uint64_t *size)
{
	json_t *a = jlist(r, k->j, key);
	size_t n;

	if (a == NULL || ckpt_cur_count(&r->c, &n, 1, "nested handle count") < 0)
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
keyed_changelog(struct ckpt_fmeta_reader *r, struct fm_keyed *k, uint8_t tag)
{
	uint64_t csize = 0, mid = 0, cid = 0, size = 0;
	char *hid = NULL;
	int rc = -1;

	r->incl++;
	rc = rd_keygroups(r, k->j, &k->kg_first, &k->kg_count) < 0 || ckpt_cur_u63(&r->c, &csize, "checkpointed size") < 0 ||
	     jputi(r, k->j, "checkpointed_size", (long long)csize) < 0 ||
	     keyed_list(r, k, "materialized", &size) < 0 || keyed_list(r, k, "non_materialized", &size) < 0 ? -1 : 0;
	r->incl--;
	if (rc < 0 || ckpt_cur_u63(&r->c, &mid, "materialization id") < 0 ||
	    jputi(r, k->j, "materialization_id", (long long)mid) < 0) {
		rc = -1;
		goto out;
	}
	rc = -1;
	if (tag == 14 && (ckpt_cur_u63(&r->c, &cid, "checkpoint id") < 0 ||
			  jputi(r, k->j, "checkpoint_id", (long long)cid) < 0))
		goto out;
	if (ckpt_javaser_utf(&r->c, &hid, "state handle id") < 0 || jputs(r, k->j, "handle_id", hid) < 0)
		goto out;
	k->size = size;
	k->kind = "changelog";
	rc = 0;
out:
	free(hid);
	return rc;
}

/* Tag 9: change sets held in _metadata itself.  "change_key_groups": the key groups its changes are
 * in (a metadata change's, -1, is none), which decide whether Flink hands it to a new subtask
 * (InMemoryChangelogStateHandle.getIntersection). */
static int
keyed_changelog_bytes(struct ckpt_fmeta_reader *r, struct fm_keyed *k)
{
	struct ckpt_bits kgs = {0};
	int64_t from, to;
	size_t n, start;
	uint64_t size = 0;
	char *hid = NULL, *list = NULL;
	int rc = -1;

	if (rd_keygroups(r, k->j, &k->kg_first, &k->kg_count) < 0 ||
	    ckpt_cur_i64(&r->c, &from, "sequence number") < 0 || ckpt_cur_i64(&r->c, &to, "sequence number") < 0 ||
	    jputi(r, k->j, "from_sequence_number", from) < 0 || jputi(r, k->j, "to_sequence_number", to) < 0 ||
	    ckpt_cur_count(&r->c, &n, 8, "change count") < 0 || ckpt_bits_init(&kgs, CKPT_MAX_PARALLELISM_LIMIT, r->c.e) < 0)
		goto out;
	start = r->c.pos;
	for (size_t i = 0; i < n; i++) {
		int32_t kg;
		size_t len;

		if (ckpt_cur_i32(&r->c, &kg, "change key group") < 0 || ckpt_cur_count(&r->c, &len, 1, "change length") < 0)
			goto out;
		if (kg >= 0 && (uint32_t)kg < CKPT_MAX_PARALLELISM_LIMIT)
			ckpt_bits_set(&kgs, (size_t)kg);
		r->c.pos += len;
		size += len;
	}
	if (cl_keep(r, r->c.p + start, r->c.pos - start) < 0)
		goto out;
	r->inline_bytes += size;
	if ((list = ckpt_rangelist_format(&kgs)) == NULL) {
		ckpt_err_nomem(r->c.e, r->c.where);
		goto out;
	}
	if (jputi(r, k->j, "changes", (long long)n) < 0 || jputs(r, k->j, "change_key_groups", list) < 0 ||
	    ckpt_javaser_utf(&r->c, &hid, "state handle id") < 0 || jputs(r, k->j, "handle_id", hid) < 0)
		goto out;
	k->size = size;
	k->kind = "changelog_bytes";
	rc = 0;
out:
	ckpt_bits_release(&kgs);
	free(list);
	free(hid);
	return rc;
}

/* Tags 10, 13: change sets in files. */
static int
keyed_changelog_files(struct ckpt_fmeta_reader *r, struct fm_keyed *k, uint8_t tag)
{
	json_t *a = jlist(r, k->j, "files");
	uint64_t size = 0, csize = 0;
	char *hid = NULL, *storage = NULL;
	size_t n;
	int rc = -1;

	if (a == NULL || rd_keygroups(r, k->j, &k->kg_first, &k->kg_count) < 0 ||
	    ckpt_cur_count(&r->c, &n, 9, "changelog file count") < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		struct fm_stream d;
		int64_t off;
		json_t *f;

		if (ckpt_cur_i64(&r->c, &off, "changelog offset") < 0 || rd_stream(r, &d, "changelog file handle") < 0)
			goto out;
		f = d.present ? json_deep_copy(d.j) : json_object();
		if (cl_keep(r, d.data, d.dlen) < 0) {
			json_decref(f);
			stream_release(&d);
			goto out;
		}
		stream_release(&d);
		if (f == NULL || json_object_set_new(f, "offset", json_integer(off)) < 0 || jappend(r, a, f) < 0) {
			ckpt_err_nomem(r->c.e, r->c.where);
			goto out;
		}
	}
	if (ckpt_cur_u63(&r->c, &size, "state size") < 0 || ckpt_cur_u63(&r->c, &csize, "checkpointed size") < 0 ||
	    jputi(r, k->j, "checkpointed_size", (long long)csize) < 0 ||
	    ckpt_javaser_utf(&r->c, &hid, "state handle id") < 0 || jputs(r, k->j, "handle_id", hid) < 0)
		goto out;
	if (tag == 13 && ckpt_javaser_utf(&r->c, &storage, "storage id") < 0)
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
rd_keyed(struct ckpt_fmeta_reader *r, struct fm_keyed *k)
{
	size_t at = r->c.pos;
	uint8_t tag;
	int rc;

	memset(k, 0, sizeof *k);
	if (ckpt_cur_u8(&r->c, &tag, "keyed state handle tag") < 0)
		return -1;
	if (tag == 0)
		return 0;
	if (r->depth >= FM_DEPTH)
		return ckpt_cur_fail(&r->c, at, "keyed state handles nested more than %d deep", FM_DEPTH);
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
	default: rc = ckpt_cur_fail(&r->c, at, "unknown keyed state handle tag %u", tag); break;
	}
	r->depth--;
	if (rc == 0) {
		/* kind, size and path first, as the handles print them */
		json_t *o = json_pack("{s:s,s:I,s:s?}", "kind", k->kind, "size", (json_int_t)k->size,
				      "path", k->path);

		if (o == NULL || json_object_update(o, k->j) < 0) {
			json_decref(o);
			rc = ckpt_err_nomem(r->c.e, r->c.where);
		} else {
			json_decref(k->j);
			k->j = o;
		}
	}
	if (rc < 0)
		keyed_release(k);
	return rc;
}

int
ckpt_fmeta_read_keyed(struct ckpt_fmeta_reader *r, struct ckpt_subtask *st, const char *scope)
{
	struct fm_keyed k;
	json_t *detail;
	uint32_t last;
	size_t at = r->c.pos;

	r->cln = 0;
	if (rd_keyed(r, &k) < 0)
		return -1;
	if (r->sp && ckpt_grow(&r->sp->keyed, &r->sp->keyedcap, r->sp->nkeyed + 1, sizeof *r->sp->keyed, 16, r->c.e) < 0) {
		keyed_release(&k);
		return -1;
	}
	if (r->sp)
		r->sp->keyed[r->sp->nkeyed++] = (struct ckpt_fmeta_keyed){at, r->c.pos, r->op, st->index,
								  strcmp(scope, "managed_keyed") == 0, k.present};
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
		return ckpt_err_nomem(r->c.e, r->c.where);
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
chan_plain(struct ckpt_fmeta_reader *r, struct ckpt_subtask *st, const struct fm_chan *c)
{
	json_t *detail = jnew(r);
	struct fm_stream d = {0};
	int32_t sub, a, b;
	size_t n, at = r->c.pos;
	uint64_t size = 0;
	char *path = NULL;
	int rc = -1;

	if (detail == NULL || ckpt_cur_i32(&r->c, &sub, "channel subtask") < 0 || ckpt_cur_i32(&r->c, &a, "channel index") < 0 ||
	    ckpt_cur_i32(&r->c, &b, "channel index") < 0)
		goto out;
	if (sub < 0 || a < 0 || b < 0) {
		ckpt_cur_fail(&r->c, at, "negative index in channel state handle");
		goto out;
	}
	if (jputi(r, detail, "subtask", sub) < 0 || jputi(r, detail, c->a, a) < 0 ||
	    jputi(r, detail, c->b, b) < 0 || ckpt_cur_count(&r->c, &n, 8, "offset count") < 0 ||
	    rd_offsets(r, detail, "offsets", n, NULL) < 0 || ckpt_cur_u63(&r->c, &size, "channel state size") < 0 ||
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
chan_merged_blob(struct ckpt_fmeta_reader *r, json_t *chans, const struct fm_chan *c, size_t end, uint64_t *sum)
{
	size_t n, saved = r->c.len;
	int rc = -1;

	r->c.len = end;
	if (ckpt_cur_count(&r->c, &n, 20, "merged channel count") < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		json_t *o = jnew(r);
		int32_t a, b;
		uint64_t size = 0;
		size_t k;

		if (o == NULL || jappend(r, chans, o) < 0)
			goto out;
		if (ckpt_cur_i32(&r->c, &a, "channel index") < 0 || ckpt_cur_i32(&r->c, &b, "channel index") < 0 ||
		    ckpt_cur_u63(&r->c, &size, "channel state size") < 0 || jputi(r, o, c->a, a) < 0 ||
		    jputi(r, o, c->b, b) < 0 || jputi(r, o, "size", (long long)size) < 0 ||
		    ckpt_cur_count(&r->c, &k, 8, "offset count") < 0 || rd_offsets(r, o, "offsets", k, NULL) < 0)
			goto out;
		*sum += size;
	}
	if (r->c.pos != end) {
		ckpt_cur_fail(&r->c, r->c.pos, "%zu unread bytes in merged channel offsets", end - r->c.pos);
		goto out;
	}
	rc = 0;
out:
	r->c.len = saved;
	return rc;
}

/* v6 tags 3 and 4: one handle for all the channels of a delegate file. */
static int
chan_merged(struct ckpt_fmeta_reader *r, struct ckpt_subtask *st, const struct fm_chan *c)
{
	json_t *detail = jnew(r), *chans = jarr(r);
	struct fm_stream d = {0};
	int32_t sub;
	uint64_t size = 0, sum = 0;
	size_t blob;
	char *path = NULL;
	int rc = -1;

	if (detail == NULL || chans == NULL || ckpt_cur_i32(&r->c, &sub, "channel subtask") < 0 ||
	    jputi(r, detail, "subtask", sub) < 0 || ckpt_cur_u63(&r->c, &size, "channel state size") < 0 ||
	    rd_stream(r, &d, "channel data handle") < 0 || take_delegate(r, detail, &d, &path) < 0 ||
	    ckpt_cur_count(&r->c, &blob, 1, "channel offsets length") < 0 ||
	    chan_merged_blob(r, chans, c, r->c.pos + blob, &sum) < 0)
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

int
ckpt_fmeta_read_channels(struct ckpt_fmeta_reader *r, struct ckpt_subtask *st, int input)
{
	static const struct fm_chan in = {1, "input_channel", "gate", "channel"};
	static const struct fm_chan out = {0, "output_channel", "partition", "subpartition"};
	const struct fm_chan *c = input ? &in : &out;
	size_t n;

	if (ckpt_cur_count(&r->c, &n, r->version >= 6 ? 18 : 25, input ? "input channel handle count" :
			 "output channel handle count") < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		size_t at = r->c.pos;
		uint8_t tag;
		int rc;

		if (r->version < 6) {
			rc = chan_plain(r, st, c);
		} else {
			if (ckpt_cur_u8(&r->c, &tag, "channel handle tag") < 0)
				return -1;
			if (tag == (input ? 1 : 2))
				rc = chan_plain(r, st, c);
			else if (tag == (input ? 3 : 4))
				rc = chan_merged(r, st, c);
			else
				rc = ckpt_cur_fail(&r->c, at, "invalid %s handle tag %u", c->scope, tag);
		}
		if (rc < 0)
			return -1;
		*(input ? &r->nin : &r->nout) += 1;
	}
	return 0;
}

/* ------------------------------------------ the operator coordinator's state (ckpt-flink(5), OPERATORS) */

int
ckpt_fmeta_read_coordinator(struct ckpt_fmeta_reader *r, struct ckpt_operator *op)
{
	struct fm_stream s;
	size_t at = r->c.pos;
	int rc = -1;

	if (rd_stream(r, &s, "coordinator state handle") < 0)
		return -1;
	if (!s.present)
		return 0;
	if (s.data == NULL) {
		ckpt_cur_fail(&r->c, at, "coordinator state of operator %s is not inline bytes", op->id);
		goto out;
	}
	if ((op->coordinator = ckpt_calloc(1, sizeof *op->coordinator, r->c.e)) == NULL ||
	    (op->coordinator->p = malloc(s.dlen ? s.dlen : 1)) == NULL) {
		ckpt_err_nomem(r->c.e, r->c.where);
		goto out;
	}
	memcpy(op->coordinator->p, s.data, s.dlen);
	op->coordinator->len = s.dlen;
	if (r->sp)
		r->sp->ops[r->op].coord_at = (size_t)(s.data - r->c.p);
	rc = 0;
out:
	stream_release(&s);
	return rc;
}
