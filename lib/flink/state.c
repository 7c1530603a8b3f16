/* flink-state.c: the state Flink's handles point to (ckpt-flink(5), STATE FILES): where the bytes
 * are, the operator and keyed serialization proxies, operator list/union/broadcast state, keyed
 * state in the canonical savepoint and the heap layouts; loading, summary and verification. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state.h"
#include "model/model.h"

#define END_OF_KEY_GROUP 0xffff
#define MAX_STATES 32767
#define SNAPPY_ID 10 /* a Snappy stream identifier chunk; compressed operator state offsets come after it */

/* The backing of a snapshot read from a Flink _metadata: where relative files are, the --root maps. */
struct flink_backing {
	struct ckpt_snap_backing base;
	char *meta;   /* the _metadata as the user named it */
	char *dir;    /* its directory; NULL when it came from standard input */
	char **from, **to;
	size_t nroots;
	int raw;      /* -a: the raw bytes of every entry beside its typed form (ckpt_flink_state_raw) */
};

/* ------------------------------------------------------------ the header */

static void
header_release(struct fheader *h)
{
	for (size_t i = 0; i < h->n; i++) {
		free(h->m[i].name);
		free(h->m[i].kind);
		free(h->m[i].mode);
		ckpt_fser_free(h->m[i].key);
		ckpt_fser_free(h->m[i].ns);
		ckpt_fser_free(h->m[i].value);
		json_decref(h->m[i].serializers);
	}
	free(h->m);
	ckpt_fser_free(h->key);
	memset(h, 0, sizeof *h);
}

static int
header_stop(struct fheader *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int
header_stop(struct fheader *h, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(h->stop, sizeof h->stop, fmt, ap);
	va_end(ap);
	h->stopped = 1;
	return 1;
}

static int
read_count(struct ckpt_fsrc *s, int32_t *n, int32_t max, const char *what)
{
	if (ckpt_fsrc_i32(s, n, what) < 0)
		return -1;
	if (*n < 0 || *n > max)
		return ckpt_fsrc_fail(s, "%s %d (0 to %d expected)", what, *n, max);
	return 0;
}

static int
read_options(struct ckpt_fsrc *s, struct fmeta *m)
{
	int32_t n;

	if (read_count(s, &n, 64, "state option count") < 0)
		return -1;
	for (int32_t i = 0; i < n; i++) {
		char *k = NULL, *v = NULL;

		if (ckpt_fsrc_utf(s, &k, "state option") < 0 || ckpt_fsrc_utf(s, &v, "state option value") < 0) {
			free(k);
			return -1;
		}
		if (strcmp(k, "KEYED_STATE_TYPE") == 0 && m->kind == NULL) {
			for (char *p = v; *p; p++)
				*p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
			m->kind = v;
			v = NULL;
		} else if (strcmp(k, "OPERATOR_STATE_DISTRIBUTION_MODE") == 0 && m->mode == NULL) {
			m->mode = v;
			v = NULL;
		}
		free(k);
		free(v);
	}
	return 0;
}

/* The serializers map of a state; 1 when a snapshot class stops the parse. */
static int
read_serializers(struct ckpt_fsrc *s, struct fheader *h, struct fmeta *m)
{
	int32_t n;

	if (read_count(s, &n, 16, "state serializer count") < 0)
		return -1;
	for (int32_t i = 0; i < n; i++) {
		struct ckpt_fser *t = NULL, **slot;
		char *k;
		int r;

		if (ckpt_fsrc_utf(s, &k, "serializer name") < 0)
			return -1;
		if (strcmp(k, "KEY_SERIALIZER") == 0)
			slot = &m->key;
		else if (strcmp(k, "NAMESPACE_SERIALIZER") == 0)
			slot = &m->ns;
		else if (strcmp(k, "VALUE_SERIALIZER") == 0)
			slot = &m->value;
		else {
			ckpt_fsrc_fail(s, "unknown serializer name \"%s\" of state \"%s\"", k, m->name);
			free(k);
			return -1;
		}
		if (*slot != NULL) {
			ckpt_fsrc_fail(s, "state \"%s\" names its %s twice", m->name, k);
			free(k);
			return -1;
		}
		r = ckpt_fser_read(s, 1, &t);
		*slot = t;
		if (r == 0 && json_object_set_new(m->serializers, k, ckpt_fser_json(t)) < 0)
			r = ckpt_err_set(s->e, CKPT_ERR_NOMEM, s->where, "out of memory");
		if (r == 1) {
			const char *cls = ckpt_fser_blocker(t);

			header_stop(h, "the %s of state \"%s\" is a %s, whose snapshot ckpt cannot step over", k,
				    m->name, cls ? cls : "?");
		}
		free(k);
		if (r != 0)
			return r;
	}
	return 0;
}

/* StateMetaInfoSnapshotReadersWriters' current reader (meta-info versions 6 and 7). */
static int
read_meta(struct ckpt_fsrc *s, struct fheader *h)
{
	struct fmeta *m = realloc(h->m, (h->n + 1) * sizeof *m);

	if (m == NULL)
		return ckpt_err_set(s->e, CKPT_ERR_NOMEM, s->where, "out of memory");
	h->m = m;
	m = &h->m[h->n++];
	memset(m, 0, sizeof *m);
	if ((m->serializers = json_object()) == NULL)
		return ckpt_err_set(s->e, CKPT_ERR_NOMEM, s->where, "out of memory");
	if (ckpt_fsrc_utf(s, &m->name, "state name") < 0 || ckpt_fsrc_i32(s, &m->type, "state type") < 0)
		return -1;
	if (m->type < 0 || m->type > 4)
		return ckpt_fsrc_fail(s, "state type %d of state \"%s\" (0 to 4 expected)", m->type, m->name);
	for (size_t i = 0; i + 1 < h->n; i++)
		if (strcmp(h->m[i].name, m->name) == 0)
			return ckpt_fsrc_fail(s, "state \"%s\" twice in one header", m->name);
	if (read_options(s, m) < 0)
		return -1;
	if (m->type == 3 && m->kind == NULL && (m->kind = strdup("timers")) == NULL)
		return ckpt_err_set(s->e, CKPT_ERR_NOMEM, s->where, "out of memory");
	return read_serializers(s, h, m);
}

static int
read_metas(struct ckpt_fsrc *s, struct fheader *h, const char *what)
{
	int16_t n;

	if (ckpt_fsrc_i16(s, &n, what) < 0)
		return -1;
	if (n < 0)
		return ckpt_fsrc_fail(s, "negative %s %d", what, n);
	for (int16_t i = 0; i < n; i++) {
		int r = read_meta(s, h);

		if (r != 0)
			return r;
	}
	return 0;
}

static int
read_flag(struct ckpt_fsrc *s, int *v, const char *what)
{
	uint8_t b;

	if (ckpt_fsrc_u8(s, &b, what) < 0)
		return -1;
	if (b > 1)
		return ckpt_fsrc_fail(s, "%s %u (a boolean expected)", what, b);
	*v = b;
	return 0;
}

/* OperatorBackendSerializationProxy; 1 when the header stops early (h->stop says why). */
static int
read_op_header(struct ckpt_fsrc *s, struct fheader *h)
{
	int r;

	if (ckpt_fsrc_seek(s, 0, 0) < 0 || ckpt_fsrc_i32(s, &h->version, "operator state header version") < 0)
		return -1;
	if (h->version < 1 || h->version > 6)
		return ckpt_fsrc_fail(s, "operator state header version %d (1 to 6 expected)", h->version);
	if (h->version < 5)
		return header_stop(h, "operator state header version %d (Flink 1.6 and before) is not read",
				   h->version);
	if (h->version == 6 && read_flag(s, &h->compressed, "compression flag") < 0)
		return -1;
	if ((r = read_metas(s, h, "operator state count")) != 0)
		return r;
	h->nlist = h->n;
	if ((r = read_metas(s, h, "broadcast state count")) != 0)
		return r;
	h->end = ckpt_fsrc_tell(s);
	return 0;
}

/* KeyedBackendSerializationProxy; 1 when the header stops early. */
static int
read_keyed_header(struct ckpt_fsrc *s, struct fheader *h)
{
	int r;

	if (ckpt_fsrc_seek(s, 0, 0) < 0 || ckpt_fsrc_i32(s, &h->version, "keyed state header version") < 0)
		return -1;
	if (h->version < 1 || h->version > 6)
		return ckpt_fsrc_fail(s, "keyed state header version %d (1 to 6 expected)", h->version);
	if (h->version < 6)
		return header_stop(h, "keyed state header version %d (Flink 1.6 and before) is not read",
				   h->version);
	if (read_flag(s, &h->compressed, "key-group compression flag") < 0)
		return -1;
	if ((r = ckpt_fser_read(s, 1, &h->key)) != 0) {
		if (r == 1)
			header_stop(h, "the key serializer is a %s, whose snapshot ckpt cannot step over",
				    ckpt_fser_blocker(h->key));
		return r;
	}
	if ((r = read_metas(s, h, "keyed state count")) != 0)
		return r;
	h->end = ckpt_fsrc_tell(s);
	return 0;
}

/* ------------------------------------------------------------ where the bytes are */

static int
has_prefix(const char *p, const char *pre)
{
	size_t n = strlen(pre);

	return strncmp(p, pre, n) == 0 && (p[n] == '\0' || p[n] == '/' || (n > 0 && pre[n - 1] == '/'));
}

/* A handle's path as a local path: a --root map, file: URIs, absolute paths. */
static int
resolve(struct fctx *c, const char *p, char *out, size_t n)
{
	for (size_t i = 0; i < c->b->nroots; i++)
		if (has_prefix(p, c->b->from[i])) {
			snprintf(out, n, "%s%s", c->b->to[i], p + strlen(c->b->from[i]));
			return 0;
		}
	if (strncmp(p, "file:", 5) == 0) {
		p += 5;
		if (strncmp(p, "//", 2) == 0) /* file://host/x or file:///x */
			p = strchr(p + 2, '/');
		if (p == NULL || *p != '/')
			return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->where, "state file URI without a path");
	}
	if (*p != '/')
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, p, "not a local path: map its prefix with --root PREFIX=DIR");
	snprintf(out, n, "%s", p);
	return 0;
}

/* The local path of a file the _metadata names (kind: file, relative_file, segment_file). */
static int
local_path(struct fctx *c, const char *kind, const char *p, char *out, size_t n)
{
	if (strcmp(kind, "relative_file") == 0) {
		if (c->b->dir == NULL)
			return ckpt_err_set(c->e, CKPT_ERR_INPUT, p,
					    "a relative state file, but the _metadata came from standard input");
		snprintf(out, n, "%s/%s", c->b->dir, p);
		return 0;
	}
	return resolve(c, p, out, n);
}

/* Open the bytes of handle h's delegate: *fd >= 0 for a file (close it), -1 inline. */
static int
open_bytes(struct fctx *c, struct ckpt_fsrc *s, int *fd)
{
	const json_t *d = json_object_get(c->h->detail, "delegate");
	const char *kind = json_string_value(json_object_get(d, "kind")), *path = c->h->path;
	uint64_t start = (uint64_t)json_integer_value(json_object_get(d, "start")), want;
	struct stat sb;

	*fd = -1;
	if (kind == NULL)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->b->meta, "operator %s subtask %u: a handle without data",
				    c->op->id, c->st->index);
	if (strcmp(kind, "byte_stream") == 0 || strcmp(kind, "empty_segment_file") == 0) {
		snprintf(c->where, sizeof c->where, "%s:inline:%s", c->b->meta,
			 json_string_value(json_object_get(d, "handle_name")) ?
			 json_string_value(json_object_get(d, "handle_name")) : "");
		return ckpt_fsrc_mem(s, c->h->data.p, c->h->data.len, c->where, c->e);
	}
	if (path == NULL)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->b->meta, "operator %s subtask %u: a %s handle without a path",
				    c->op->id, c->st->index, kind);
	if (local_path(c, kind, path, c->where, sizeof c->where) < 0)
		return -1;
	if ((*fd = open(c->where, O_RDONLY)) < 0)
		return ckpt_err_sys(c->e, c->where, "cannot open the state file of operator %s subtask %u",
				    c->op->id, c->st->index);
	if (fstat(*fd, &sb) < 0)
		return ckpt_err_sys(c->e, c->where, "cannot stat");
	want = strcmp(kind, "segment_file") == 0 ? start + c->h->size : c->h->size;
	if (strcmp(kind, "segment_file") == 0 ? (uint64_t)sb.st_size < want : (uint64_t)sb.st_size != want)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->where, "%s: %llu bytes, the _metadata records %llu",
				    (uint64_t)sb.st_size < want ? "short" : "long", (unsigned long long)sb.st_size,
				    (unsigned long long)want); /* as -c words it */
	return ckpt_fsrc_file(s, *fd, strcmp(kind, "segment_file") == 0 ? start : 0, c->h->size, c->where, c->e);
}

/* ------------------------------------------------------------ values */

/* Decode p[0, n) (at offset at of the source) as one value of t, to its last byte, into o. */
static int
decode_out(struct fctx *c, const struct ckpt_fser *t, const unsigned char *p, size_t n, uint64_t at,
	   const char *what, struct ckpt_fout *o)
{
	struct ckpt_fsrc m;
	int32_t h;
	int hd, r;

	ckpt_fsrc_mem(&m, p, n, c->where, c->e);
	m.base = at;
	r = ckpt_fser_emit(t, &m, o, &h, &hd);
	if (r == 0 && !ckpt_fsrc_drained(&m))
		r = ckpt_fsrc_fail(&m, "%s does not end where its serializer (%s) ends", what, t->cls);
	ckpt_fsrc_release(&m);
	return r;
}

/* The same, as a jansson value. */
static int
decode_all(struct fctx *c, const struct ckpt_fser *t, const unsigned char *p, size_t n, uint64_t at,
	   const char *what, json_t **v)
{
	struct ckpt_fsrc m;
	int32_t h;
	int hd, r;

	ckpt_fsrc_mem(&m, p, n, c->where, c->e);
	m.base = at;
	r = ckpt_fser_value(t, &m, v, &h, &hd);
	if (r == 0 && !ckpt_fsrc_drained(&m)) {
		json_decref(*v);
		*v = NULL;
		r = ckpt_fsrc_fail(&m, "%s does not end where its serializer (%s) ends", what, t->cls);
	}
	ckpt_fsrc_release(&m);
	return r;
}

/* ------------------------------------------------------------ operator state */

struct opel {
	uint64_t off;
	size_t state, idx;
};

static int
cmp_opel(const void *a, const void *b)
{
	const struct opel *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	if (x->state != y->state)
		return x->state < y->state ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static const struct fmeta *
meta_named(const struct fheader *h, const char *name)
{
	for (size_t i = 0; i < h->n; i++)
		if (strcmp(h->m[i].name, name) == 0)
			return &h->m[i];
	return NULL;
}

/* A broadcast state's bytes: i32 size, then size (key, value) pairs. */
static int
decode_broadcast(struct fctx *c, const struct fmeta *m, const unsigned char *p, size_t n, uint64_t at, json_t **v)
{
	struct ckpt_fsrc s;
	int32_t cnt, h;
	int hd, r;

	ckpt_fsrc_mem(&s, p, n, c->where, c->e);
	s.base = at;
	*v = json_array();
	r = *v ? read_count(&s, &cnt, INT32_MAX, "broadcast state size") : -1;
	for (int32_t i = 0; r == 0 && i < cnt; i++) {
		json_t *k = NULL, *x = NULL;

		r = ckpt_fser_value(m->key, &s, &k, &h, &hd);
		if (r == 0 && (r = ckpt_fser_value(m->value, &s, &x, &h, &hd)) < 0)
			json_decref(k);
		if (r == 0)
			json_array_append_new(*v, json_pack("{s:o, s:o}", "key", k, "value", x));
	}
	if (r == 0 && !ckpt_fsrc_drained(&s))
		r = ckpt_fsrc_fail(&s, "broadcast state \"%s\" does not end where its entries end", m->name);
	ckpt_fsrc_release(&s);
	if (r < 0) {
		json_decref(*v);
		*v = NULL;
	}
	return r;
}

static int
emit_op(struct fctx *c, const struct fheader *h, const char *name, size_t idx, const unsigned char *p, size_t n,
	uint64_t at)
{
	const struct fmeta *m = h && !c->k->untyped ? meta_named(h, name) : NULL;
	json_t *typed = NULL;
	int broadcast = m && m->type == 2;

	if (c->k->only && strcmp(name, c->k->only) != 0)
		return 0;

	if (m && !broadcast && m->value && !ckpt_fser_blocker_tail(m->value) && /* each element its own bytes */
	    decode_all(c, m->value, p, n, at, "list element", &typed) < 0)
		return -1;
	if (broadcast && m->key && m->value && !ckpt_fser_blocker(m->key) && !ckpt_fser_blocker(m->value) &&
	    decode_broadcast(c, m, p, n, at, &typed) < 0)
		return -1;
	return c->k->op(c->k->arg, name, idx, p, n, typed);
}

/* Every element of every state, cut by the offsets the _metadata records. */
static int
cut_plain(struct fctx *c, struct ckpt_fsrc *s, const struct fheader *h, const json_t *states, struct opel *el,
	  size_t nel)
{
	for (size_t i = 0; i < nel; i++) {
		uint64_t end = i + 1 < nel ? el[i + 1].off : c->h->size;
		const char *name = json_string_value(json_object_get(json_array_get(states, el[i].state), "name"));
		unsigned char *p;
		int r;

		if (end > c->h->size)
			return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->where,
					    "offset %llu of operator state \"%s\" lies past the end (%llu bytes)",
					    (unsigned long long)end, json_string_value(json_object_get(
						    json_array_get(states, el[i + 1].state), "name")),
					    (unsigned long long)c->h->size);
		if ((p = malloc(end - el[i].off + 1)) == NULL)
			return ckpt_err_set(c->e, CKPT_ERR_NOMEM, c->where, "out of memory");
		r = ckpt_fsrc_seek(s, el[i].off, 0) < 0 ||
		    ckpt_fsrc_read(s, p, (size_t)(end - el[i].off), "operator state element") < 0 ? -1 :
		    emit_op(c, h, name, el[i].idx, p, (size_t)(end - el[i].off), el[i].off);
		free(p);
		if (r < 0)
			return -1;
	}
	return 0;
}

/* Compressed operator state: its elements one after the other with no lengths, so they are cut by
 * decoding them.  Flink 1.17 (and 1.18 before FLINK-34063) began a Snappy stream for each state,
 * its identifier just before the state's first offset; since FLINK-34063 (1.19) one stream holds
 * them all, flushed at each offset, so a state starts at the chunk where the one before ends.
 * Flink's restore reads both alike: one stream from the header's end, chunks from each offset on. */
static int
cut_snappy(struct fctx *c, struct ckpt_fsrc *s, const struct fheader *h, const json_t *states, struct opel *el,
	   size_t nel)
{
	for (size_t i = 0; i < nel;) {
		const char *name = json_string_value(json_object_get(json_array_get(states, el[i].state), "name"));
		const struct fmeta *m = meta_named(h, name);
		const char *stop = m == NULL ? "(not in the header)" :
			m->type == 2 ? (ckpt_fser_blocker(m->key) ? ckpt_fser_blocker(m->key) : ckpt_fser_blocker(m->value)) :
			ckpt_fser_blocker(m->value);
		size_t j = i;

		if (stop && c->k->skip == NULL)
			return ckpt_err_set(c->e, CKPT_ERR_REFUSED, c->where,
					    "compressed operator state \"%s\" has no lengths and its serializer %s is "
					    "not one ckpt decodes", name, stop);
		if (stop) { /* the summary: counted by its offsets; the next state read from its own offset */
			char why[600];

			while (j < nel && el[j].state == el[i].state)
				j++;
			snprintf(why, sizeof why, "compressed operator state has no lengths, and its serializer %s is not "
				 "one ckpt decodes", stop);
			if (c->k->skip(c->k->arg, name, -1, (long)(j - i), why) < 0)
				return -1;
			/* Flink's restore seeks to each state's offset in one stream: a chunk starts there in
			 * both layouts (after the state's own identifier in 1.17's, ckpt-flink(5)). */
			if (j < nel && ckpt_fsrc_seek(s, el[j].off, 2) < 0)
				return -1;
			i = j;
			continue;
		}
		if ((i == 0 || ckpt_fsrc_tell(s) != el[i].off) &&
		    (el[i].off < SNAPPY_ID || ckpt_fsrc_seek(s, el[i].off - SNAPPY_ID, 1) < 0))
			return el[i].off < SNAPPY_ID ? ckpt_err_set(c->e, CKPT_ERR_INPUT, c->where, "offset %llu of compressed "
								  "operator state \"%s\" leaves no room for its stream "
								  "identifier", (unsigned long long)el[i].off, name) : -1;
		for (; j < nel && el[j].state == el[i].state; j++) {
			json_t *v = NULL;
			int32_t hh, cnt;
			int hd, r;

			ckpt_fsrc_capture(s, 1);
			if (m->type == 2) {
				r = read_count(s, &cnt, INT32_MAX, "broadcast state size");
				for (int32_t k = 0; r == 0 && k < cnt; k++) {
					json_t *a = NULL, *b = NULL;

					r = ckpt_fser_value(m->key, s, &a, &hh, &hd) < 0 ||
					    ckpt_fser_value(m->value, s, &b, &hh, &hd) < 0 ? -1 : 0;
					json_decref(a);
					json_decref(b);
				}
			} else {
				r = ckpt_fser_value(m->value, s, &v, &hh, &hd);
			}
			json_decref(v);
			ckpt_fsrc_capture(s, 0);
			if (r < 0 || emit_op(c, h, name, el[j].idx, s->cap, s->clen, el[j].off) < 0)
				return -1;
		}
		if (!ckpt_fsrc_drained(s) || (ckpt_fsrc_tell(s) != (j < nel ? el[j].off : c->h->size) &&
					      (j == nel || ckpt_fsrc_tell(s) != el[j].off - SNAPPY_ID)))
			return ckpt_fsrc_fail(s, "compressed operator state \"%s\" does not end where the next begins", name);
		i = j;
	}
	return 0;
}

static int
collect_offsets(struct fctx *c, const json_t *states, struct opel **out, size_t *n)
{
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < json_array_size(states); i++) {
		const json_t *offs = json_object_get(json_array_get(states, i), "offsets");

		for (size_t k = 0; k < json_array_size(offs); k++) {
			if (*n == cap) {
				struct opel *p = ckpt_reallocarray(*out, cap = cap ? cap * 2 : 16, sizeof *p, c->e);

				if (p == NULL)
					return -1;
				*out = p;
			}
			(*out)[(*n)++] = (struct opel){(uint64_t)json_integer_value(json_array_get(offs, k)), i, k};
		}
	}
	if (*n)
		qsort(*out, *n, sizeof **out, cmp_opel);
	return 0;
}

static int
read_operator(struct fctx *c, int managed)
{
	const json_t *states = json_object_get(c->h->detail, "states");
	struct fheader h = {0};
	struct ckpt_fsrc s = {0};
	struct opel *el = NULL;
	size_t nel = 0;
	int fd = -1, rc = -1, r = 0;

	s.fd = -1;
	if (open_bytes(c, &s, &fd) < 0 || collect_offsets(c, states, &el, &nel) < 0)
		goto out;
	if (managed && (r = read_op_header(&s, &h)) < 0)
		goto out;
	if (managed && c->k->header && c->k->header(c->k->arg, "operator", &h) < 0)
		goto out;
	if (managed && !h.stopped && nel > 0 && el[0].off != h.end + (h.compressed ? SNAPPY_ID : 0)) {
		ckpt_err_set(c->e, CKPT_ERR_INPUT, c->where, "offset %llu: the first element starts at %llu, not where "
			     "the header ends%s", (unsigned long long)h.end, (unsigned long long)el[0].off,
			     h.compressed ? " and the Snappy stream identifier after it" : "");
		goto out;
	}
	if (h.compressed)
		rc = cut_snappy(c, &s, &h, states, el, nel);
	else
		rc = cut_plain(c, &s, managed && !h.stopped ? &h : NULL, states, el, nel);
out:
	free(el);
	header_release(&h);
	ckpt_fsrc_release(&s);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* ------------------------------------------------------------ keyed state */

struct kgs {
	uint32_t first, n;
	uint64_t *off;
};

static int
read_kgs(struct fctx *c, struct kgs *g)
{
	const char *r = json_string_value(json_object_get(c->h->detail, "key_groups"));
	const json_t *offs = json_object_get(c->h->detail, "offsets");
	unsigned a = 0, b = 0;
	int k;

	memset(g, 0, sizeof *g);
	if (r == NULL || *r == '\0')
		return 0;
	k = sscanf(r, "%u-%u", &a, &b);
	if (k == 1)
		b = a;
	g->first = a;
	g->n = b - a + 1;
	if (json_array_size(offs) != g->n)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->b->meta, "a key-groups handle with %zu offsets for %u key groups",
				    json_array_size(offs), g->n);
	if ((g->off = ckpt_calloc(g->n, sizeof *g->off, c->e)) == NULL)
		return -1;
	for (uint32_t i = 0; i < g->n; i++)
		g->off[i] = (uint64_t)json_integer_value(json_array_get(offs, i));
	return 0;
}

/* The state of id within the header, or a stand-in "#id" when the header stopped before it. */
static const char *
state_name(const struct fheader *h, int16_t id, char buf[16])
{
	if ((size_t)id < h->n)
		return h->m[id].name;
	snprintf(buf, 16, "#%d", id);
	return buf;
}

static int
fo_nomem(struct fctx *c)
{
	return ckpt_err_set(c->e, CKPT_ERR_NOMEM, c->where, "out of memory");
}

/* The length of what was read since from, as CompositeKeySerializationUtils.writeVariableIntBytes
 * writes it after a key or namespace when both are of variable length: little-endian, the bytes
 * until the rest is 0 (at least one).  Flink skips them; ckpt checks them. */
static int
length_suffix(struct ckpt_fsrc *s, uint64_t from, const char *what, const char *state)
{
	uint64_t len = ckpt_fsrc_tell(s) - from, rest = len, at = s->base + ckpt_fsrc_tell(s), got = 0;
	int shift = 0;
	uint8_t b;

	do {
		if (ckpt_fsrc_u8(s, &b, "length suffix") < 0)
			return -1;
		got |= (uint64_t)b << shift;
		shift += 8;
		rest >>= 8;
	} while (rest != 0);
	if (got != len)
		return ckpt_err_set(s->e, CKPT_ERR_INPUT, s->where, "offset %llu: %s of state \"%s\" has length "
				    "suffix %llu, not its length %llu", (unsigned long long)at, what, state,
				    (unsigned long long)got, (unsigned long long)len);
	return 0;
}

/* Write the length suffix of n at o (CompositeKeySerializationUtils.writeVariableIntBytes: its
 * bytes from the lowest, at least one, at most 5); returns how many. */
static size_t
length_suffix_put(unsigned char *o, size_t n)
{
	size_t k = 0;
	uint32_t v = (uint32_t)n;

	do {
		o[k++] = (unsigned char)v;
		v >>= 8;
	} while (v != 0);
	return k;
}

/* The typed form of one canonical entry: key ‖ namespace (‖ user key) and the value, into o. */
static int
typed_out(const struct ftyped *t, struct ckpt_fout *o)
{
	struct fctx *c = t->c;
	const struct fheader *h = t->h;
	const struct fmeta *m = t->m;
	const unsigned char *k = t->k, *v = t->v;
	size_t kn = t->kn, vn = t->vn;
	uint64_t at = t->at;
	uint32_t kg = t->kg;
	uint64_t from;
	struct ckpt_fsrc s;
	const struct ckpt_fser *vs = m->value;
	int32_t hash, hh;
	int hashed = 0, hd, r = -1, map = m->kindc == 'm' && !t->heap; /* typable() set kindc */

	if (m->kindc == 't') {
		if (vn != 0)
			return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->where, "offset %llu: a timer with a value",
					    (unsigned long long)at);
		return decode_out(c, m->value, k + c->prefix, kn - c->prefix, at, "timer", o);
	}
	if (ckpt_fout_open(o, '{') < 0)
		return fo_nomem(c);
	ckpt_fsrc_mem(&s, k, kn, c->where, c->e);
	s.base = at + 4; /* at is the entry's: the key's i32 length, the key, the value's, the value */
	if (ckpt_fsrc_read(&s, NULL, c->prefix, "key-group prefix") < 0)
		goto out;
	ckpt_fout_key_lit(o, "key");
	from = ckpt_fsrc_tell(&s);
	s.tail = m->ns->kind == FSER_VOIDNS; /* its one byte follows a Kryo key */
	if (ckpt_fser_emit(h->key, &s, o, &hash, &hashed) < 0 ||
	    (m->ambiguous && length_suffix(&s, from, "key", m->name) < 0))
		goto out;
	ckpt_fout_key_lit(o, "namespace");
	from = ckpt_fsrc_tell(&s);
	if (ckpt_fser_emit(m->ns, &s, o, &hh, &hd) < 0 ||
	    (m->ambiguous && length_suffix(&s, from, "namespace", m->name) < 0))
		goto out;
	if (map) {
		ckpt_fout_key_lit(o, "user_key");
		if (ckpt_fser_emit(vs->kids[0], &s, o, &hh, &hd) < 0)
			goto out;
		vs = vs->kids[1];
	}
	if (!ckpt_fsrc_drained(&s)) {
		ckpt_fsrc_fail(&s, "key of state \"%s\" does not end where its serializers end", m->name);
		goto out;
	}
	if (hashed && ckpt_flink_key_group(hash, c->op->max_parallelism) != kg) {
		ckpt_err_set(c->e, CKPT_ERR_INPUT, c->where, "offset %llu: a key of state \"%s\" in key group %u hashes "
			     "to key group %u", (unsigned long long)at, m->name, kg,
			     ckpt_flink_key_group(hash, c->op->max_parallelism));
		goto out;
	}
	ckpt_fsrc_mem_again(&s, v, vn);
	s.base = at + 8 + kn;
	s.tail = 0;
	ckpt_fout_key_lit(o, "value");
	if (map) {
		uint8_t isnull;

		if (ckpt_fsrc_u8(&s, &isnull, "map value null flag") < 0)
			goto out;
		if (isnull ? ckpt_fout_null(o) < 0 && fo_nomem(c) : ckpt_fser_emit(vs, &s, o, &hh, &hd) < 0)
			goto out;
	} else if (m->kindc == 'l' && !t->heap) {
		/* ListDelimitedSerializer: elements joined by ',' */
		if (ckpt_fout_open(o, '[') < 0) {
			fo_nomem(c);
			goto out;
		}
		for (size_t i = 0; !ckpt_fsrc_drained(&s); i++) {
			uint8_t comma;

			if (i > 0 && (ckpt_fsrc_u8(&s, &comma, "list delimiter") < 0 ||
				      (comma != ',' && ckpt_fsrc_fail(&s, "list delimiter %u", comma))))
				goto out;
			if (ckpt_fser_emit(vs->kids[0], &s, o, &hh, &hd) < 0)
				goto out;
		}
		ckpt_fout_close(o);
	} else if (ckpt_fser_emit(vs, &s, o, &hh, &hd) < 0) {
		goto out;
	}
	if (!ckpt_fsrc_drained(&s)) {
		ckpt_fsrc_fail(&s, "value of state \"%s\" does not end where its serializer ends", m->name);
		goto out;
	}
	ckpt_fout_close(o);
	r = 0;
out:
	ckpt_fsrc_release(&s);
	return r;
}

/* What a sink calls to have the typed form: into o (FOUT_JSON's root, the document, or nowhere). */
static int
typed_emit(struct ftyped *t, struct ckpt_fout *o)
{
	json_t *v = t->ready;

	t->done = 1;
	if (v == NULL)
		return typed_out(t, o);
	t->ready = NULL;
	return ckpt_fout_json(o, v) < 0 ? fo_nomem(t->c) : 0;
}

/* The typed form as a new jansson value (*v NULL when there is none). */
static int
typed_json(struct ftyped *t, json_t **v)
{
	struct ckpt_fout o; /* the stacks are written before they are read: not cleared */

	*v = NULL;
	if (t == NULL)
		return 0;
	o.mode = FOUT_JSON;
	o.root = NULL;
	o.depth = 0;
	if (typed_emit(t, &o) < 0) {
		ckpt_fout_reset(&o);
		return -1;
	}
	*v = o.root;
	return 0;
}

/* Check the typed form the sink did not ask for. */
static int
typed_check(struct ftyped *t)
{
	struct ckpt_fout o;

	if (t == NULL || t->done)
		return 0;
	o.mode = FOUT_NONE;
	o.depth = 0;
	return typed_emit(t, &o);
}

static int typable_of(const struct fheader *h, const struct fmeta *m);

/* Can entries of m be typed?  Asked once a state (an entry's question, in the hot loop). */
static int
typable(const struct fheader *h, struct fmeta *m)
{
	if (m == NULL)
		return 0;
	if (m->typable == 0) {
		m->typable = typable_of(h, m) ? 1 : -1;
		m->ambiguous = m->ns && h->key && ckpt_fser_fixed_length(h->key) < 0 &&
			       ckpt_fser_fixed_length(m->ns) < 0;
		m->kindc = strcmp(m->kind ? m->kind : "", "timers") == 0 ? 't' :
			   strcmp(m->kind ? m->kind : "", "map") == 0 ? 'm' :
			   strcmp(m->kind ? m->kind : "", "list") == 0 ? 'l' : 0;
	}
	return m->typable > 0;
}

/* Can entries of m be typed? */
static int
typable_of(const struct fheader *h, const struct fmeta *m)
{
	int plain = !m || !m->kind || (strcmp(m->kind, "map") != 0 && strcmp(m->kind, "list") != 0);

	if (h->stopped || m == NULL || m->value == NULL)
		return 0;
	if (strcmp(m->kind ? m->kind : "", "timers") == 0)
		return !ckpt_fser_blocker(m->value);
	/* a Kryo value last of a canonical entry's value, or its key before a VoidNamespace (typed_out) */
	if (plain ? ckpt_fser_blocker_tail(m->value) != NULL : ckpt_fser_blocker(m->value) != NULL)
		return 0;
	if (m->ns == NULL || ckpt_fser_blocker(m->ns) ||
	    (m->ns->kind == FSER_VOIDNS && plain ? ckpt_fser_blocker_tail(h->key) : ckpt_fser_blocker(h->key)))
		return 0;
	if (m->kind && strcmp(m->kind, "map") == 0)
		return m->value->kind == FSER_MAP;
	if (m->kind && strcmp(m->kind, "list") == 0)
		return m->value->kind == FSER_LIST;
	return 1;
}

/* One key group of the canonical layout, from its offset to its end-of-key-group mark. */
static int
canonical_group(struct fctx *c, struct ckpt_fsrc *s, const struct fheader *h, uint32_t kg, uint64_t off)
{
	unsigned char *k = NULL, *v = NULL; /* each entry's key and value, the buffers reused */
	size_t kcap = 0, vcap = 0;
	int16_t id;
	char buf[16];
	int rc = -1;

	if (ckpt_fsrc_seek(s, off, h->compressed) < 0 || ckpt_fsrc_i16(s, &id, "state id") < 0)
		return -1;
	for (;;) {
		size_t kn, vn = 0;
		uint64_t at;
		int more, r;
		struct ftyped t;
		uint32_t pk;

		if (id < 0 || id >= MAX_STATES || (!h->stopped && (size_t)id >= h->n)) {
			ckpt_fsrc_fail(s, "state id %d (the header has %zu states)", id, h->n);
			break;
		}
		at = ckpt_fsrc_tell(s);
		if (ckpt_fsrc_blob_buf(s, &k, &kcap, &kn, "key") < 0)
			break;
		if (kn < c->prefix) {
			ckpt_fsrc_fail(s, "a key of %zu bytes, shorter than its key-group prefix", kn);
			break;
		}
		more = k[0] & 0x80;
		k[0] &= 0x7f;
		pk = c->prefix == 2 ? (uint32_t)k[0] << 8 | k[1] : k[0];
		r = 0;
		t.c = NULL;
		if (pk != kg)
			r = ckpt_fsrc_fail(s, "a key of key group %u at the offset of key group %u", pk, kg);
		if (r == 0)
			r = ckpt_fsrc_blob_buf(s, &v, &vcap, &vn, "value");
		if (r == 0 && !c->k->untyped && typable(h, (size_t)id < h->n ? &h->m[id] : NULL))
			t = (struct ftyped){.c = c, .h = h, .m = &h->m[id], .k = k, .kn = kn, .v = v ? v : (unsigned char *)"",
					    .vn = vn, .at = at, .kg = kg};
		if (r == 0)
			r = c->k->kv(c->k->arg, state_name(h, id, buf), kg, k, kn, v ? v : (unsigned char *)"", vn,
				     t.c ? &t : NULL);
		if (r == 0)
			r = typed_check(t.c ? &t : NULL);
		if (r < 0)
			break;
		if (!more)
			continue;
		if (ckpt_fsrc_i16(s, &id, "state id or end of key group") < 0)
			break;
		if ((uint16_t)id == END_OF_KEY_GROUP) {
			rc = 0;
			break;
		}
	}
	free(k);
	free(v);
	return rc;
}

/* Sort the non-empty key groups by offset, so each one's end is the next one's start. */
struct kgoff {
	uint64_t off;
	uint32_t kg;
};

static int
cmp_kgoff(const void *a, const void *b)
{
	const struct kgoff *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

static int
read_canonical(struct fctx *c, struct ckpt_fsrc *s, const struct fheader *h, const struct kgs *g)
{
	struct kgoff *o = ckpt_calloc(g->n + 1, sizeof *o, c->e);
	size_t n = 0;
	int rc = -1;

	if (o == NULL)
		return -1;
	for (uint32_t i = 0; i < g->n; i++)
		if (g->off[i] != 0)
			o[n++] = (struct kgoff){g->off[i], g->first + i};
	qsort(o, n, sizeof *o, cmp_kgoff);
	if (!h->stopped && (n ? o[0].off : c->h->size) != h->end) {
		ckpt_err_set(c->e, CKPT_ERR_INPUT, c->where, "offset %llu: the header ends here, but the first key group "
			     "starts at %llu", (unsigned long long)h->end, (unsigned long long)(n ? o[0].off : c->h->size));
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t end = i + 1 < n ? o[i + 1].off : c->h->size;

		if (o[i].off > c->h->size) {
			ckpt_err_set(c->e, CKPT_ERR_INPUT, c->where, "key group %u at offset %llu, past the end (%llu bytes)",
				     o[i].kg, (unsigned long long)o[i].off, (unsigned long long)c->h->size);
			goto out;
		}
		if (kg_skipped(c->k, o[i].kg))
			continue;
		if (canonical_group(c, s, h, o[i].kg, o[i].off) < 0)
			goto out;
		if ((h->compressed && !ckpt_fsrc_drained(s)) || ckpt_fsrc_tell(s) != end) {
			ckpt_fsrc_fail(s, "key group %u ends here, but the next data starts at %llu", o[i].kg,
				       (unsigned long long)end);
			goto out;
		}
	}
	rc = 0;
out:
	free(o);
	return rc;
}

/* One value read (and checked) with t, its bytes captured (appended to buf at *len, of *cap
 * bytes); what names it in errors. */
static int
heap_piece(struct ckpt_fsrc *s, const struct ckpt_fser *t, const char *what, unsigned char **buf, size_t *cap,
	   size_t *len, int32_t *hash, int *hashed)
{
	struct ckpt_fout o = {.mode = FOUT_NONE};
	int r;

	ckpt_fsrc_capture(s, 1);
	s->what = what;
	r = ckpt_fser_emit(t, s, &o, hash, hashed);
	s->what = NULL;
	ckpt_fsrc_capture(s, 0);
	if (r < 0)
		return -1;
	if (*len + s->clen > *cap) {
		unsigned char *n = realloc(*buf, *len + s->clen);

		if (n == NULL)
			return ckpt_err_set(s->e, CKPT_ERR_NOMEM, s->where, "out of memory");
		*buf = n;
		*cap = *len + s->clen;
	}
	if (s->clen)
		memcpy(*buf + *len, s->cap, s->clen);
	*len += s->clen;
	return 0;
}

/* One (namespace, key, state) of a heap state map, or one timer, as a canonical key (key-group
 * prefix, key, namespace) and value; its typed form is decoded again from them when asked. */
static int
heap_entry(struct fctx *c, struct ckpt_fsrc *s, const struct fheader *h, struct fmeta *m, uint32_t kg)
{
	struct heapbuf *B = c->heap;
	size_t nn = 0, kn = c->prefix, vn = 0;
	int32_t hash = 0, hh;
	int hashed = 0, hd;
	uint64_t at = ckpt_fsrc_tell(s);

	typable(h, m); /* sets m->kindc */
	B->key[0] = (unsigned char)(c->prefix == 2 ? kg >> 8 : kg);
	if (c->prefix == 2)
		B->key[1] = (unsigned char)kg;
	if (m->kindc == 't') {
		if (heap_piece(s, m->value, "timer", &B->key, &B->kcap, &kn, &hh, &hd) < 0)
			return -1;
	} else {
		if (heap_piece(s, m->ns, "namespace", &B->ns, &B->ncap, &nn, &hh, &hd) < 0 ||
		    heap_piece(s, h->key, "key", &B->key, &B->kcap, &kn, &hash, &hashed) < 0 ||
		    heap_piece(s, m->value, "value", &B->val, &B->vcap, &vn, &hh, &hd) < 0)
			return -1;
		if (hashed && ckpt_flink_key_group(hash, c->op->max_parallelism) != kg)
			return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->where, "offset %llu: a key of state \"%s\" in key "
					    "group %u hashes to key group %u", (unsigned long long)at, m->name, kg,
					    ckpt_flink_key_group(hash, c->op->max_parallelism));
		/* the canonical order: key, then namespace, each with its length after it when both
		 * are of variable length (as the canonical layout has them) */
		if (kn + nn + 10 > B->kcap) {
			unsigned char *x = realloc(B->key, kn + nn + 10);

			if (x == NULL)
				return ckpt_err_set(c->e, CKPT_ERR_NOMEM, c->where, "out of memory");
			B->key = x;
			B->kcap = kn + nn + 10;
		}
		if (m->ambiguous)
			kn += length_suffix_put(B->key + kn, kn - c->prefix);
		if (nn)
			memcpy(B->key + kn, B->ns, nn);
		kn += nn;
		if (m->ambiguous)
			kn += length_suffix_put(B->key + kn, nn);
	}
	{
		struct ftyped t = {.c = c, .h = h, .m = m, .k = B->key, .kn = kn, .v = vn ? B->val : (unsigned char *)"",
				   .vn = vn, .at = at, .kg = kg, .heap = 1};

		if (c->k->kv(c->k->arg, m->name, kg, B->key, kn, t.v, vn, c->k->untyped ? NULL : &t) < 0)
			return -1;
		return c->k->untyped ? 0 : typed_check(&t);
	}
}

/* What stops ckpt from walking the entries of m in a heap snapshot (NULL: nothing); m is NULL for
 * a state the header does not name, as the last state named is for a header that stopped early:
 * then its serializers are not all known. */
static const char *
heap_stop(const struct fheader *h, const struct fmeta *m)
{
	const char *stop;

	if (m == NULL || (h->stopped && m == &h->m[h->n - 1]))
		return h->stop;
	stop = strcmp(m->kind ? m->kind : "", "timers") == 0 ? ckpt_fser_blocker(m->value) :
		ckpt_fser_blocker(m->ns) ? ckpt_fser_blocker(m->ns) : ckpt_fser_blocker(m->value);
	return stop ? stop : ckpt_fser_blocker(h->key);
}

/* One state block of a heap key group: i16 state id, i32 count, the entries with no lengths.
 * 1 when the summary passes a state over (the sink's skip): nothing after it in the key group
 * can be found; *id is its id. */
static int
heap_state(struct fctx *c, struct ckpt_fsrc *s, const struct fheader *h, uint32_t kg, unsigned char *seen,
	   int16_t *idp)
{
	struct fmeta *m = NULL;
	const char *stop;
	char why[700], buf[16];
	int16_t id;
	int32_t n;

	if (h->compressed && ckpt_fsrc_seek(s, ckpt_fsrc_tell(s), 1) < 0)
		return -1;
	if (ckpt_fsrc_i16(s, &id, "state id") < 0)
		return -1;
	if (id < 0 || id >= MAX_STATES || ((size_t)id >= h->n && !h->stopped) || seen[id])
		return ckpt_fsrc_fail(s, "state id %d in key group %u (%zu states, each once)", id, kg, h->n);
	*idp = id;
	seen[id] = 1;
	if ((size_t)id < h->n)
		m = &h->m[id];
	stop = heap_stop(h, m);
	if (stop && c->k->skip == NULL)
		return ckpt_err_set(c->e, CKPT_ERR_REFUSED, c->where, "state \"%s\" of a heap snapshot has no lengths, "
				    "and its serializer %s is not one ckpt decodes", m->name, stop);
	if (read_count(s, &n, INT32_MAX, "entry count") < 0)
		return -1;
	if (stop) { /* with no entries, nothing to step over */
		if (stop == h->stop)
			snprintf(why, sizeof why, "a heap snapshot has no lengths, and %s", h->stop);
		else
			snprintf(why, sizeof why, "a heap snapshot has no lengths, and its serializer %s is not one "
				 "ckpt decodes", stop);
		if (c->k->skip(c->k->arg, state_name(h, id, buf), kg, n, why) < 0)
			return -1;
		if (n > 0)
			return 1;
	}
	for (int32_t i = 0; i < n; i++)
		if (heap_entry(c, s, h, m, kg) < 0)
			return -1;
	if (h->compressed && !ckpt_fsrc_drained(s))
		return ckpt_fsrc_fail(s, "state \"%s\" in key group %u does not end with its compressed stream",
				      state_name(h, id, buf), kg);
	return 0;
}

/* HeapSnapshotStrategy: per key group in the range, i32 key group, then one block per state.
 * The summary reads a key group up to the first state it passes over (heap_state); every state
 * is in every key group, so a state found in none read whole, when the header stopped early, may
 * be missing (the sink's skip is told, with state NULL). */
static int
read_heap(struct fctx *c, struct ckpt_fsrc *s, const struct fheader *h, const struct kgs *g)
{
	size_t nid = h->stopped ? MAX_STATES : h->n, nseen = 0;
	unsigned char *seen = ckpt_calloc(nid + 1, 1, c->e);
	int16_t *ids = ckpt_calloc(nid + 1, sizeof *ids, c->e), id = 0;
	struct heapbuf B = {.key = malloc(2), .kcap = 2};
	int rc = -1, cut = 0, whole = 0; /* cut: the key group before was passed over from a state on */

	c->heap = &B;
	if (seen == NULL || ids == NULL || (B.key == NULL && ckpt_err_set(c->e, CKPT_ERR_NOMEM, c->where, "out of memory")))
		goto out;
	if (h->stopped && c->k->skip == NULL) {
		ckpt_err_set(c->e, CKPT_ERR_REFUSED, c->where, "a heap snapshot, whose entries have no lengths, and %s",
			     h->stop);
		goto out;
	}
	for (uint32_t i = 0; i < g->n; i++) {
		uint64_t end = i + 1 < g->n ? g->off[i + 1] : c->h->size;
		int known = i == 0 ? !h->stopped : !cut && !kg_skipped(c->k, g->first + i - 1);
		int32_t kg;

		if (kg_skipped(c->k, g->first + i))
			continue;
		if (known && g->off[i] != (i ? ckpt_fsrc_tell(s) : h->end)) {
			ckpt_err_set(c->e, CKPT_ERR_INPUT, c->where, "key group %u at offset %llu, but the data before it "
				     "ends at %llu", g->first + i, (unsigned long long)g->off[i],
				     (unsigned long long)(i ? ckpt_fsrc_tell(s) : h->end));
			goto out;
		}
		if (ckpt_fsrc_seek(s, g->off[i], 0) < 0 || ckpt_fsrc_i32(s, &kg, "key group") < 0)
			goto out;
		if ((uint32_t)kg != g->first + i) {
			ckpt_fsrc_fail(s, "key group %d where key group %u starts", kg, g->first + i);
			goto out;
		}
		while (nseen > 0)
			seen[ids[--nseen]] = 0;
		cut = 0;
		for (size_t k = 0; !cut && (h->stopped ? ckpt_fsrc_tell(s) < end : k < h->n); k++) {
			if ((cut = heap_state(c, s, h, (uint32_t)kg, seen, &id)) < 0)
				goto out;
			ids[nseen++] = id;
		}
		if (cut && c->k->cut(c->k->arg, h, (uint32_t)kg, ids, nseen) < 0)
			goto out;
		if (!cut && ckpt_fsrc_tell(s) != end) {
			ckpt_fsrc_fail(s, "key group %d ends here, but the next data starts at %llu", kg,
				       (unsigned long long)end);
			goto out;
		}
		whole |= !cut;
	}
	if (h->stopped && !whole && g->n > 0) {
		char why[200], buf[16];

		snprintf(why, sizeof why, "subtask %u may hold states not listed here: its header was not read to its "
			 "end, and in each of its key groups the states after \"%s\" cannot be found, a heap snapshot "
			 "having no lengths", c->st->index, state_name(h, id, buf));
		if (c->k->skip(c->k->arg, NULL, -1, -1, why) < 0)
			goto out;
	}
	rc = 0;
out:
	free(seen);
	free(ids);
	free(B.key);
	free(B.ns);
	free(B.val);
	c->heap = NULL;
	return rc;
}

/* Tags 3 and 12 are written by the heap backend and by full RocksDB snapshots alike: the heap
 * layout has every key group, each opening with its number. */
static int
is_heap(struct ckpt_fsrc *s, const struct fheader *h, const struct kgs *g)
{
	int32_t kg;

	for (uint32_t i = 0; i < g->n; i++)
		if (g->off[i] == 0)
			return 0;
	(void)h;
	if (g->n == 0 || ckpt_fsrc_seek(s, g->off[0], 0) < 0 || g->off[0] + 4 > s->size)
		return 0;
	return ckpt_fsrc_i32(s, &kg, "key group") == 0 && (uint32_t)kg == g->first;
}

static int
dry_op(void *arg, const char *state, size_t idx, const unsigned char *p, size_t n, json_t *typed)
{
	(void)arg, (void)state, (void)idx, (void)p, (void)n;
	json_decref(typed);
	return 0;
}

static int
dry_kv(void *arg, const char *state, uint32_t kg, const unsigned char *k, size_t kn, const unsigned char *v,
       size_t vn, struct ftyped *typed)
{
	(void)arg, (void)state, (void)kg, (void)k, (void)kn, (void)v, (void)vn, (void)typed;
	return 0;
}

/* When key group 0 comes first (its number and a state id with a key length look alike) or the
 * header stopped early, the layout is the one that parses to its end: 1 heap, 0 canonical. */
static int
which_layout(struct fctx *c, struct ckpt_fsrc *s, const struct fheader *h, const struct kgs *g)
{
	const struct fsink dry = {.op = dry_op, .kv = dry_kv, .untyped = 1}, *k = c->k;
	struct ckpt_err scratch = {0}, *e = c->e;
	int heap = 1;

	c->k = &dry;
	c->e = s->e = &scratch;
	if (h->stopped || read_heap(c, s, h, g) < 0)
		heap = read_canonical(c, s, h, g) < 0;
	c->k = k;
	c->e = s->e = e;
	return heap;
}

static int
read_keyed(struct fctx *c)
{
	struct fheader h = {0};
	struct ckpt_fsrc s = {0};
	struct kgs g = {0};
	int fd = -1, rc = -1, heap;

	s.fd = -1;
	c->prefix = c->op->max_parallelism > 128 ? 2 : 1;
	if (read_kgs(c, &g) < 0)
		goto out;
	if (c->k->kg_hi > 0 && (g.n == 0 || g.first >= c->k->kg_hi || g.first + g.n <= c->k->kg_lo)) {
		rc = 0; /* nothing in the window */
		goto out;
	}
	if (open_bytes(c, &s, &fd) < 0 || read_keyed_header(&s, &h) < 0)
		goto out;
	if (c->k->header && c->k->header(c->k->arg, "keyed", &h) < 0)
		goto out;
	heap = strcmp(c->h->kind, "key_groups") == 0 && is_heap(&s, &h, &g);
	if (heap && (h.stopped || g.first == 0))
		heap = which_layout(c, &s, &h, &g);
	rc = heap ? read_heap(c, &s, &h, &g) : read_canonical(c, &s, &h, &g);
out:
	free(g.off);
	header_release(&h);
	ckpt_fsrc_release(&s);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* ------------------------------------------------------------ RocksDB state (flink-rocksdb.c) */

/* The entries of a RocksDB handle's column families are the canonical layout's keys and values
 * (ckpt-flink(5), ROCKSDB), typed as those are. */
struct rocks {
	struct fctx *c;
	struct fheader *h;
	const char *name; /* the column family's state */
	struct fmeta *m;  /* its meta info, NULL when the header stopped before it */
	uint32_t kg;
};

static int
rocks_kv(void *arg, const unsigned char *k, size_t kn, const unsigned char *v, size_t vn)
{
	struct rocks *R = arg;
	struct fctx *c = R->c;
	struct ftyped t = {0};

	if (kn < c->prefix || (c->prefix == 2 ? (uint32_t)k[0] << 8 | k[1] : k[0]) != R->kg)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->where, "a key of %zu bytes in key group %u, shorter than its "
				    "key-group prefix", kn, R->kg);
	if (!c->k->untyped && typable(R->h, R->m))
		t = (struct ftyped){.c = c, .h = R->h, .m = R->m, .k = k, .kn = kn, .v = v ? v : (unsigned char *)"",
				    .vn = vn, .kg = R->kg};
	if (c->k->kv(c->k->arg, R->name, R->kg, k, kn, v ? v : (unsigned char *)"", vn, t.c ? &t : NULL) < 0)
		return -1;
	return typed_check(t.c ? &t : NULL);
}

static int
rocks_default(void *arg, const unsigned char *k, size_t kn, const unsigned char *v, size_t vn)
{
	struct fctx *c = arg;

	(void)k, (void)kn, (void)v, (void)vn;
	return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->where, "operator %s subtask %u: an entry in the default column "
			    "family, which Flink leaves empty", c->op->id, c->st->index);
}

/* The handle's files, meta first: local paths, or the inline bytes flink-meta.c kept in order. */
static int
rocks_files(struct fctx *c, struct ckpt_frocks_file *f, char (*paths)[1024], size_t *n)
{
	static const char *const lists[] = {"shared", "private"};
	const json_t *meta = json_object_get(c->h->detail, "meta");
	uint64_t off = 0;

	if (strcmp(json_string_value(json_object_get(meta, "kind")) ?: "", "byte_stream") == 0)
		off = (uint64_t)json_integer_value(json_object_get(meta, "size"));
	*n = 0;
	for (int l = 0; l < 2; l++) {
		const json_t *a = json_object_get(c->h->detail, lists[l]);

		for (size_t i = 0; i < json_array_size(a); i++) {
			const json_t *x = json_array_get(a, i);
			const char *kind = json_string_value(json_object_get(x, "kind")) ?: "";
			struct ckpt_frocks_file *o = &f[(*n)++];

			o->local = json_string_value(json_object_get(x, "local_name")) ?: "";
			o->size = (uint64_t)json_integer_value(json_object_get(x, "size"));
			if (strcmp(kind, "byte_stream") == 0) {
				if (off + o->size > c->h->data.len)
					return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->b->meta, "operator %s subtask %u: the "
							    "inline RocksDB file %s is not there", c->op->id, c->st->index, o->local);
				o->mem = c->h->data.p + off;
				off += o->size;
			} else if (strcmp(kind, "file") == 0 || strcmp(kind, "relative_file") == 0) {
				if (local_path(c, kind, json_string_value(json_object_get(x, "path")) ?: "", paths[*n - 1],
					       sizeof paths[0]) < 0)
					return -1;
				o->path = paths[*n - 1];
			} else {
				return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->b->meta, "operator %s subtask %u: the RocksDB "
						    "file %s in a %s handle", c->op->id, c->st->index, o->local, kind);
			}
		}
	}
	return 0;
}

/* The keyed backend's serialization proxy in the handle's meta data handle. */
static int
rocks_header(struct fctx *c, struct ckpt_fsrc *s, int *fd, struct fheader *h)
{
	const json_t *meta = json_object_get(c->h->detail, "meta");
	struct ckpt_handle mh = {.kind = c->h->kind, .scope = c->h->scope, .data = c->h->data,
				 .size = (uint64_t)json_integer_value(json_object_get(meta, "size")),
				 .path = (char *)json_string_value(json_object_get(meta, "path"))};
	const struct ckpt_handle *was = c->h;
	int rc;

	if ((mh.detail = json_pack("{s:O}", "delegate", meta ? meta : json_null())) == NULL)
		return fo_nomem(c);
	mh.data.len = mh.data.len < mh.size ? mh.data.len : mh.size; /* the meta's bytes come first */
	c->h = &mh;
	rc = open_bytes(c, s, fd);
	if (rc == 0 && (rc = read_keyed_header(s, h)) == 0 && h->end != mh.size)
		rc = ckpt_fsrc_fail(s, "the keyed state header ends here, but its meta data handle holds %llu bytes",
				    (unsigned long long)mh.size);
	if (rc >= 0 && c->k->header)
		rc = c->k->header(c->k->arg, "keyed", h) < 0 ? -1 : rc;
	c->h = was;
	json_decref(mh.detail);
	return rc < 0 ? -1 : 0;
}

/* Each key group of the range, each state in the header's order (the canonical order). */
static int
rocks_groups(struct fctx *c, struct fheader *h, struct ckpt_frocks_db *db, uint32_t lo, uint32_t hi)
{
	size_t ncf = ckpt_frocks_ncf(db), *order = ckpt_calloc(ncf + 1, sizeof *order, c->e), n = 0;
	struct fmeta **m = ckpt_calloc(ncf + 1, sizeof *m, c->e);
	char where[1024];
	int rc = -1;

	snprintf(where, sizeof where, "%s", c->where);
	if (order == NULL || m == NULL)
		goto out;
	for (size_t j = 0; j <= h->n; j++) /* the header's states, then those it stopped before */
		for (size_t i = 0; i < ncf; i++) {
			const char *name = ckpt_frocks_cf(db, i);
			struct fmeta *x = j < h->n && strcmp(h->m[j].name, name) == 0 ? &h->m[j] : NULL;

			if (x == NULL && (j < h->n || meta_named(h, name) || strcmp(name, "default") == 0))
				continue;
			if (x == NULL && !h->stopped) {
				ckpt_err_set(c->e, CKPT_ERR_INPUT, where, "operator %s subtask %u: column family \"%s\" has "
					     "no meta info in the state's header", c->op->id, c->st->index, name);
				goto out;
			}
			m[n] = x;
			order[n++] = i;
		}
	for (size_t i = 0; i < ncf; i++)
		if (strcmp(ckpt_frocks_cf(db, i), "default") == 0 && !meta_named(h, "default") &&
		    ckpt_frocks_scan(db, i, NULL, 0, NULL, 0, rocks_default, c, where, c->e) < 0)
			goto out;
	for (uint32_t kg = lo; kg < hi; kg++) {
		unsigned char a[2], b[2];
		size_t pn = c->prefix;
		int last = kg + 1 == (pn == 2 ? 65536u : 256u);

		a[0] = (unsigned char)(pn == 2 ? kg >> 8 : kg), a[1] = (unsigned char)kg;
		b[0] = (unsigned char)(pn == 2 ? (kg + 1) >> 8 : kg + 1), b[1] = (unsigned char)(kg + 1);
		for (size_t i = 0; i < n; i++) {
			struct rocks R = {.c = c, .h = h, .m = m[i], .kg = kg, .name = ckpt_frocks_cf(db, order[i])};

			snprintf(c->where, sizeof c->where, "%s:rocksdb:%s", where, R.name);
			if (ckpt_frocks_scan(db, order[i], a, pn, last ? NULL : b, pn, rocks_kv, &R, where, c->e) < 0)
				goto out;
		}
	}
	rc = 0;
out:
	snprintf(c->where, sizeof c->where, "%s", where);
	free(order);
	free(m);
	return rc;
}

/* An incremental handle (a checkpoint's or a native savepoint's RocksDB files), clipped to its
 * key-group range and the sink's window. */
static int
read_rocksdb(struct fctx *c)
{
	const json_t *sh = json_object_get(c->h->detail, "shared"), *pr = json_object_get(c->h->detail, "private");
	const char *r = json_string_value(json_object_get(c->h->detail, "key_groups"));
	size_t nf = json_array_size(sh) + json_array_size(pr), n;
	struct ckpt_frocks_file *f = ckpt_calloc(nf + 1, sizeof *f, c->e);
	char (*paths)[1024] = ckpt_calloc(nf + 1, sizeof *paths, c->e);
	struct ckpt_frocks_db *db = NULL;
	struct fheader h = {0};
	struct ckpt_fsrc s = {0};
	unsigned lo = 0, hi = 0;
	int fd = -1, rc = -1;

	s.fd = -1;
	c->prefix = c->op->max_parallelism > 128 ? 2 : 1;
	if (f == NULL || paths == NULL)
		goto out;
	if (r == NULL || *r == '\0' || sscanf(r, "%u-%u", &lo, &hi) < 1) {
		rc = 0; /* no key groups */
		goto out;
	}
	hi = strchr(r, '-') ? hi + 1 : lo + 1;
	if (c->k->kg_hi > 0) {
		lo = lo > c->k->kg_lo ? lo : c->k->kg_lo;
		hi = hi < c->k->kg_hi ? hi : c->k->kg_hi;
	}
	if (lo >= hi || hi > (c->prefix == 2 ? 65536u : 256u)) {
		rc = 0;
		goto out;
	}
	if (rocks_header(c, &s, &fd, &h) < 0 || rocks_files(c, f, paths, &n) < 0)
		goto out;
	snprintf(c->where, sizeof c->where, "%s", c->b->meta);
	if ((db = ckpt_frocks_open(f, n, c->b->meta, c->e)) == NULL)
		goto out;
	rc = rocks_groups(c, &h, db, lo, hi);
out:
	ckpt_frocks_close(db);
	header_release(&h);
	ckpt_fsrc_release(&s);
	if (fd >= 0)
		close(fd);
	free(f);
	free(paths);
	return rc;
}

/* ------------------------------------------------------------ for changelog.c */

int
ckpt_fstate_read_meta(struct ckpt_fsrc *s, struct fheader *h)
{
	return read_meta(s, h);
}

void
ckpt_fstate_header_release(struct fheader *h)
{
	header_release(h);
}

int
ckpt_fstate_keyed_header(struct fctx *c, struct fheader *h)
{
	struct ckpt_fsrc s = {0};
	int fd = -1, rc;

	s.fd = -1;
	rc = open_bytes(c, &s, &fd) < 0 || read_keyed_header(&s, h) < 0 ? -1 : 0;
	ckpt_fsrc_release(&s);
	if (fd >= 0)
		close(fd);
	return rc;
}

int
ckpt_fstate_read_keyed(struct fctx *c)
{
	return read_keyed(c);
}

int
ckpt_fstate_local_path(struct fctx *c, const char *kind, const char *p, char *out, size_t n)
{
	return local_path(c, kind, p, out, n);
}

int
ckpt_fstate_kv(struct fctx *c, const struct fheader *h, struct fmeta *m, uint32_t kg, const unsigned char *k,
	       size_t kn, const unsigned char *v, size_t vn)
{
	struct ftyped t = {.c = c, .h = h, .m = m, .k = k, .kn = kn, .v = vn ? v : (const unsigned char *)"",
			   .vn = vn, .kg = kg, .heap = 1};
	int typed = !c->k->untyped && typable(h, m);

	if (kg_skipped(c->k, kg))
		return 0;
	if (c->k->kv(c->k->arg, m->name, kg, k, kn, t.v, vn, typed ? &t : NULL) < 0)
		return -1;
	return typed ? typed_check(&t) : 0;
}

/* ------------------------------------------------------------ one subtask */

/* Which handles hold state ckpt reads: 1 operator (managed), 2 raw operator, 3 keyed, 4 RocksDB
 * (incremental), 5 keyed in a changelog, 0 none. */
static int
handle_role(const struct ckpt_handle *h)
{
	if (strcmp(h->kind, "operator_stream") == 0 || strcmp(h->kind, "file_merging_operator_stream") == 0)
		return strcmp(h->scope, "managed_operator") == 0 ? 1 : 2;
	if (strcmp(h->scope, "managed_keyed") == 0 &&
	    (strcmp(h->kind, "savepoint_key_groups") == 0 || strcmp(h->kind, "key_groups") == 0))
		return 3;
	if (strcmp(h->scope, "managed_keyed") == 0 && strcmp(h->kind, "incremental") == 0)
		return 4;
	if (strcmp(h->scope, "managed_keyed") == 0 && strcmp(h->kind, "changelog") == 0)
		return 5;
	return 0;
}

static int
read_subtask(struct flink_backing *b, const struct ckpt_operator *op, const struct ckpt_subtask *st,
	     const struct fsink *k, struct ckpt_err *e)
{
	struct fctx c = {.b = b, .op = op, .st = st, .k = k, .e = e};

	for (size_t i = 0; i < st->nhandles; i++) {
		int role = handle_role(&st->handles[i]), r = 0;

		c.h = &st->handles[i];
		snprintf(c.where, sizeof c.where, "%s", b->meta);
		if ((k->part == 1 && role >= 3) || (k->part == 2 && role < 3))
			continue;
		if (role == 1 || role == 2)
			r = read_operator(&c, role == 1);
		else if (role == 3)
			r = read_keyed(&c);
		else if (role == 4)
			r = read_rocksdb(&c);
		else if (role == 5)
			r = ckpt_fchangelog_read(&c);
		if (r < 0)
			return -1;
	}
	return 0;
}

/* ------------------------------------------------------------ loading into the model */

struct loader {
	struct ckpt_subtask *st;
	struct ckpt_snap_arena *arena;
	size_t *filled;  /* per operator state: elements placed */
	size_t kvcap;
	struct ckpt_err *e;
};

static unsigned char *
arena_copy(struct loader *L, const void *p, size_t n)
{
	unsigned char *q = ckpt_snap_arena_alloc(L->arena, n ? n : 1);

	if (q == NULL) {
		ckpt_err_set(L->e, CKPT_ERR_NOMEM, "", "out of memory");
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
all_filled(const struct flink_backing *b, const struct ckpt_operator *op, const struct ckpt_subtask *st,
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
		return ckpt_err_set(L->e, CKPT_ERR_NOMEM, "", "out of memory");
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
	size_t vn, struct ftyped *t)
{
	struct loader *L = arg;
	struct ckpt_subtask *st = L->st;
	struct ckpt_kv *kv;
	json_t *typed;

	if (typed_json(t, &typed) < 0)
		return -1;
	if (kv_in_range(st, kg, L->e) < 0) {
		json_decref(typed);
		return -1;
	}
	if (st->nkv == L->kvcap) {
		size_t nc = L->kvcap ? L->kvcap * 2 : 64;

		if ((kv = ckpt_reallocarray(st->kv, nc, sizeof *kv, L->e)) == NULL) {
			json_decref(typed);
			return -1;
		}
		st->kv = kv;
		L->kvcap = nc;
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
	ckpt_snap_arena_free(st->arena);
	st->arena = NULL;
}

static int
flink_load(struct ckpt_snapshot *s, struct ckpt_operator *op, struct ckpt_subtask *st, struct ckpt_err *e)
{
	struct loader L = {.st = st, .e = e};
	struct fsink k = {.op = load_op, .kv = load_kv, .arg = &L};
	int rc = -1;

	L.filled = ckpt_calloc(st->nops + 1, sizeof *L.filled, e);
	st->arena = L.arena = ckpt_snap_arena_new();
	if (L.filled == NULL || L.arena == NULL) {
		ckpt_err_set(e, CKPT_ERR_NOMEM, "", "out of memory");
		goto out;
	}
	st->nkv = 0;
	if (read_subtask((struct flink_backing *)s->backing, op, st, &k, e) < 0)
		goto out;
	if (all_filled((struct flink_backing *)s->backing, op, st, L.filled, e) < 0)
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
	 size_t vn, struct ftyped *typed)
{
	struct checker *C = arg;

	(void)state, (void)k, (void)kn, (void)v, (void)vn;
	if (typed_check(typed) < 0) /* decoded, nothing built */
		return -1;
	return kv_in_range(C->st, kg, C->e);
}

/* One subtask's state files read through, each element and entry checked. */
static int
check_subtask(struct flink_backing *b, const struct ckpt_operator *op, const struct ckpt_subtask *st,
	      struct ckpt_err *e)
{
	struct checker C = {.st = st, .e = e};
	struct fsink k = {.op = check_op, .kv = check_kv, .arg = &C};
	int rc;

	if ((C.filled = ckpt_calloc(st->nops + 1, sizeof *C.filled, e)) == NULL)
		return -1;
	rc = read_subtask(b, op, st, &k, e) < 0 || all_filled(b, op, st, C.filled, e) < 0 ? -1 : 0;
	free(C.filled);
	return rc;
}

/*
 * The check before -a prints: every subtask not loaded yet, on as many threads as there are
 * processors (at most CHECK_THREADS), each taking the next subtask.  The error said is the first
 * subtask's in the document's order, as one thread would say it: a thread skips the subtasks after
 * the first that failed, and every one before it is read.
 */
#define CHECK_THREADS 16

struct check_run {
	struct flink_backing *b;
	const struct ckpt_operator **op;
	const struct ckpt_subtask **st;
	size_t n, next, failed; /* failed: the first subtask that failed (n: none) */
	struct ckpt_err err;
	pthread_mutex_t mu;
};

static void *
check_worker(void *arg)
{
	struct check_run *R = arg;

	for (;;) {
		struct ckpt_err e = {0};
		size_t t;
		int skip;

		pthread_mutex_lock(&R->mu);
		t = R->next++;
		skip = t > R->failed; /* after the first that failed: never said */
		pthread_mutex_unlock(&R->mu);
		if (t >= R->n)
			return NULL;
		if (skip || check_subtask(R->b, R->op[t], R->st[t], &e) == 0)
			continue;
		pthread_mutex_lock(&R->mu);
		if (t < R->failed) {
			R->failed = t;
			R->err = e;
		}
		pthread_mutex_unlock(&R->mu);
	}
}

static int
flink_check(struct ckpt_snapshot *s, struct ckpt_err *e)
{
	struct check_run R = {.b = (struct flink_backing *)s->backing, .mu = PTHREAD_MUTEX_INITIALIZER};
	pthread_t th[CHECK_THREADS];
	size_t all = 0, nth = 0, want;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int rc = -1;

	for (size_t i = 0; i < s->nops; i++)
		all += s->ops[i].nsubtasks;
	if ((R.op = ckpt_calloc(all + 1, sizeof *R.op, e)) == NULL || (R.st = ckpt_calloc(all + 1, sizeof *R.st, e)) == NULL)
		goto out;
	for (size_t i = 0; i < s->nops; i++)
		for (size_t j = 0; j < s->ops[i].nsubtasks; j++)
			if (!s->ops[i].subtasks[j].loaded) {
				R.op[R.n] = &s->ops[i];
				R.st[R.n++] = &s->ops[i].subtasks[j];
			}
	R.failed = R.n;
	want = cpus > 1 ? (size_t)cpus : 1;
	want = want < R.n ? want : R.n;
	want = want < CHECK_THREADS ? want : CHECK_THREADS;
	while (nth + 1 < want && pthread_create(&th[nth], NULL, check_worker, &R) == 0)
		nth++;
	check_worker(&R); /* this thread is one of them */
	while (nth > 0)
		pthread_join(th[--nth], NULL);
	if (R.failed < R.n) {
		*e = R.err;
		goto out;
	}
	rc = 0;
out:
	free(R.op);
	free(R.st);
	return rc;
}

/* The entries of one subtask, written as they are read: typed where the serializers are known (the
 * raw bytes and the serializer that stops the typing where not), or raw and typed (--raw). */
struct printer {
	struct ckpt_jw *w;
	struct ckpt_fout out; /* FOUT_WRITE into w */
	size_t n;      /* items written */
	int typed;     /* some element had a typed form */
	int raw;       /* --raw: the bytes of every entry, the typed form beside them */
	const struct fheader *h; /* the header of the handle being read (keyed) */
	const char *name; /* operator state: the state printed */
	char why[600]; /* operator state: what stops its typing */
};

/* What stops the typing of state m of header h ("" when nothing is known to). */
static const char *
untyped_why(const struct fheader *h, const struct fmeta *m)
{
	const char *b;

	if (h == NULL)
		return "";
	if (m == NULL || (h->stopped && m == &h->m[h->n - 1]))
		return h->stopped ? h->stop : "";
	if (m->type == 1 || m->type == 2) /* operator, broadcast */
		b = m->type == 2 && ckpt_fser_blocker(m->key) ? ckpt_fser_blocker(m->key) : ckpt_fser_blocker(m->value);
	else
		b = heap_stop(h, m);
	if (b == NULL && m->value && (m->kindc == 'm' || m->kindc == 'l'))
		b = m->value->cls; /* a map or list state whose value serializer is of another kind */
	return b ? b : "";
}

static int
print_header(void *arg, const char *scope, const struct fheader *h)
{
	struct printer *P = arg;

	if (strcmp(scope, "keyed") == 0)
		P->h = h;
	else if (P->why[0] == '\0')
		snprintf(P->why, sizeof P->why, "%s", untyped_why(h, h ? meta_named(h, P->name) : NULL));
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
	 size_t vn, struct ftyped *typed)
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
		if (typed_emit(typed, &P->out) < 0)
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
		if (typed_emit(typed, &P->out) < 0)
			return -1;
	} else if (!P->raw) {
		const struct fmeta *m = P->h ? meta_named(P->h, state) : NULL;

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
print_opstates(struct flink_backing *b, const struct ckpt_operator *op, const struct ckpt_subtask *st,
	       struct ckpt_jw *w, struct ckpt_err *e)
{
	ckpt_jw_key_lit(w, "operator_state");
	ckpt_jw_open(w, '{');
	for (size_t i = 0; i < st->nops; i++) {
		struct printer P = {.w = w, .raw = b->raw, .name = st->ops[i].name};
		struct fsink k = {.header = print_header, .op = print_op, .kv = dry_kv, .arg = &P, .part = 1,
				  .only = st->ops[i].name};

		ckpt_jw_key(w, st->ops[i].name);
		ckpt_jw_open(w, '{');
		ckpt_jw_key_lit(w, "mode");
		ckpt_jw_str(w, ckpt_mode_name(st->ops[i].mode));
		ckpt_jw_key_lit(w, "entries");
		ckpt_jw_open(w, '[');
		if (read_subtask(b, op, st, &k, e) < 0)
			return print_failed(w, e);
		ckpt_jw_close(w, ']');
		if (P.typed && P.raw) { /* the typed forms follow the raw ones: a second read of the same elements */
			k.op = print_typed;
			ckpt_jw_key_lit(w, "typed");
			ckpt_jw_open(w, '[');
			if (read_subtask(b, op, st, &k, e) < 0)
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

/* What ckpt_snap_subtask_doc gives of a loaded subtask (subtask_json in snap.c), written as read. */
static int
flink_print(struct ckpt_snapshot *s, struct ckpt_operator *op, struct ckpt_subtask *st, struct ckpt_jw *w,
	    struct ckpt_err *e)
{
	struct flink_backing *b = (struct flink_backing *)s->backing;

	ckpt_jw_open(w, '{');
	ckpt_jw_key_lit(w, "index");
	ckpt_jw_int(w, st->index);
	ckpt_jw_key_lit(w, "finished");
	ckpt_jw_bool(w, st->finished);
	if (!st->finished && (st->nops > 0 || st->nhandles == 0) && print_opstates(b, op, st, w, e) < 0)
		return -1;
	if (st->keyed) {
		struct printer P = {.w = w, .out = {.mode = FOUT_WRITE, .w = w}, .raw = b->raw};
		struct fsink k = {.header = print_header, .op = dry_op, .kv = print_kv, .arg = &P, .part = 2};
		char kg[32];

		if (st->kg_first == st->kg_last)
			snprintf(kg, sizeof kg, "%u", st->kg_first);
		else
			snprintf(kg, sizeof kg, "%u-%u", st->kg_first, st->kg_last);
		ckpt_jw_key_lit(w, "keyed_state");
		ckpt_jw_open(w, '{');
		ckpt_jw_key_lit(w, "key_groups");
		ckpt_jw_str(w, kg);
		if (read_subtask(b, op, st, &k, e) < 0)
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
		json_t *h = ckpt_snap_handles_json(st);

		if (h == NULL)
			return ckpt_err_set(e, CKPT_ERR_NOMEM, "", "out of memory");
		ckpt_jw_key_lit(w, "handles");
		ckpt_jw_json(w, h);
		json_decref(h);
	}
	ckpt_jw_close(w, '}');
	return 0;
}

static const char *meta_kind(const struct fmeta *m);
static struct flink_backing *backing_of(struct ckpt_snapshot *s, struct ckpt_err *e);

/* -R: the same reads as the document's, each entry given to rows.c as rows. */
struct rowsink {
	struct printer P;     /* first, for print_header: the header and why */
	struct ckpt_frows r;
	const char *mode;
};

static int
row_op(void *arg, const char *state, size_t idx, const unsigned char *p, size_t n, json_t *typed)
{
	struct rowsink *R = arg;
	int rc = ckpt_frows_op(&R->r, state, R->mode, idx, typed, p, n, R->P.why);

	json_decref(typed);
	return rc;
}

static int
row_kv(void *arg, const char *state, uint32_t kg, const unsigned char *k, size_t kn, const unsigned char *v,
       size_t vn, struct ftyped *typed)
{
	struct rowsink *R = arg;
	const struct fmeta *m = R->P.h ? meta_named(R->P.h, state) : NULL;
	json_t *t = NULL;
	int rc;

	/* a value (reducing, aggregating) state or a canonical map entry is one row as it is typed:
	 * written as it is decoded, key, namespace (user key) and value in the row's order */
	if (typed && m && m->kindc != 't' && m->kindc != 'l' && !(m->kindc == 'm' && typed->heap) &&
	    typed->ready == NULL) {
		struct ckpt_fout o; /* the stacks are written before they are read: not cleared */

		o.mode = FOUT_WRITE;
		o.w = R->r.w;
		o.flat = 1;
		o.depth = 0;
		ckpt_frows_open(&R->r, state, meta_kind(m), kg);
		if (typed_emit(typed, &o) < 0)
			return -1;
		return ckpt_frows_close(&R->r);
	}
	if (typed && typed_json(typed, &t) < 0)
		return -1;
	rc = ckpt_frows_keyed(&R->r, state, m ? meta_kind(m) : NULL, kg, t, k, kn, v, vn,
			      t ? NULL : untyped_why(R->P.h, m));
	json_decref(t);
	return rc;
}

int
ckpt_flink_state_rows(struct ckpt_snapshot *s, struct ckpt_jw *w, struct ckpt_err *e)
{
	struct flink_backing *b = backing_of(s, e);

	if (b == NULL || flink_check(s, e) < 0) /* a damaged file prints nothing */
		return -1;
	for (size_t i = 0; i < s->nops; i++)
		for (size_t j = 0; j < s->ops[i].nsubtasks; j++) {
			const struct ckpt_operator *op = &s->ops[i];
			const struct ckpt_subtask *st = &op->subtasks[j];
			struct rowsink R = {.r = {.w = w, .uid = op->uid, .op = op->id, .subtask = st->index}};

			/* print_header takes the sink's argument for a printer: R.P is R's first member */

			if (st->finished)
				continue;
			for (size_t o = 0; o < st->nops; o++) {
				struct fsink k = {.header = print_header, .op = row_op, .kv = dry_kv, .arg = &R, .part = 1,
						  .only = st->ops[o].name};

				R.P = (struct printer){.name = st->ops[o].name};
				R.mode = ckpt_mode_name(st->ops[o].mode);
				if (read_subtask(b, op, st, &k, e) < 0)
					return print_failed(w, e);
			}
			if (st->keyed) {
				struct fsink k = {.header = print_header, .op = dry_op, .kv = row_kv, .arg = &R, .part = 2};

				R.P = (struct printer){0};
				if (read_subtask(b, op, st, &k, e) < 0)
					return print_failed(w, e);
			}
		}
	return ckpt_jw_failed(w, e);
}

/* ------------------------------------------------------------ the backing */

static void
flink_free(struct ckpt_snap_backing *base)
{
	struct flink_backing *b = (struct flink_backing *)base;

	for (size_t i = 0; i < b->nroots; i++) {
		free(b->from[i]);
		free(b->to[i]);
	}
	free(b->from);
	free(b->to);
	free(b->meta);
	free(b->dir);
	free(b);
}

struct ckpt_snap_backing *
ckpt_flink_backing_new(const char *meta, struct ckpt_err *e)
{
	struct flink_backing *b = ckpt_calloc(1, sizeof *b, e);
	const char *slash;

	if (b == NULL)
		return NULL;
	b->base.format = "flink metadata";
	b->base.free = flink_free;
	if ((b->meta = ckpt_strdup(meta, e)) == NULL)
		goto fail;
	if (strcmp(meta, "<stdin>") != 0) {
		slash = strrchr(meta, '/');
		b->dir = slash ? strndup(meta, (size_t)(slash - meta) + (slash == meta)) : strdup(".");
		if (b->dir == NULL) {
			ckpt_err_set(e, CKPT_ERR_NOMEM, meta, "out of memory");
			goto fail;
		}
	}
	return &b->base;
fail:
	flink_free(&b->base);
	return NULL;
}

static struct flink_backing *backing_of(struct ckpt_snapshot *s, struct ckpt_err *e);

int
ckpt_flink_state_raw(struct ckpt_snapshot *s, int raw)
{
	struct flink_backing *b = s->backing && ((struct ckpt_snap_backing *)s->backing)->free == flink_free ?
					  s->backing : NULL;

	if (b)
		b->raw = raw;
	return b != NULL;
}

static struct flink_backing *
backing_of(struct ckpt_snapshot *s, struct ckpt_err *e)
{
	if (s->backing == NULL || ((struct ckpt_snap_backing *)s->backing)->free != flink_free) {
		ckpt_err_set(e, CKPT_ERR_INPUT, "", "not a Flink snapshot");
		return NULL;
	}
	return s->backing;
}

int
ckpt_flink_state_enable(struct ckpt_snapshot *s, const char *const *roots, size_t nroots, struct ckpt_err *e)
{
	struct flink_backing *b = backing_of(s, e);

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
			return ckpt_err_set(e, CKPT_ERR_NOMEM, "", "out of memory");
	}
	b->base.load = flink_load;
	b->base.check = flink_check;
	b->base.print = flink_print;
	return 0;
}

/* ------------------------------------------------------------ the summary */

struct counter {
	json_t *ops;      /* operator id -> {"states": [...], ...} */
	json_t *op;       /* the current operator's object */
	json_t *states;   /* its "states" array */
	json_t *cuts;     /* heap key groups read in part: key group -> {"seen": {state: true}, "why"} */
	json_t *keyed;    /* keyed states passed over with no entries: state -> true */
	struct ckpt_err *e;
};

/* The state object of name in the current operator, added when new. */
static json_t *
count_state(struct counter *C, const char *name)
{
	json_t *o;

	for (size_t i = 0; i < json_array_size(C->states); i++)
		if (strcmp(json_string_value(json_object_get(json_array_get(C->states, i), "name")), name) == 0)
			return json_array_get(C->states, i);
	o = json_pack("{s:s, s:I, s:I}", "name", name, "entries", (json_int_t)0, "bytes", (json_int_t)0);
	if (o == NULL || json_array_append_new(C->states, o) < 0)
		return NULL;
	return o;
}

/* Add v to the count k of o; a count not known (null) stays so, and v < 0 makes it so. */
static void
add_int(json_t *o, const char *k, json_int_t v)
{
	json_t *x = json_object_get(o, k);

	if (x == NULL || json_is_integer(x))
		json_object_set_new(o, k, v < 0 ? json_null() : json_integer(json_integer_value(x) + v));
}

static const char *
meta_kind(const struct fmeta *m)
{
	if (m->type == 2)
		return "broadcast";
	if (m->type == 1)
		return m->mode && strcmp(m->mode, "UNION") == 0 ? "union" : "list";
	return m->kind ? m->kind : "value";
}

static int
count_header(void *arg, const char *scope, const struct fheader *h)
{
	struct counter *C = arg;

	if (h->key && !json_object_get(C->op, "key_serializer"))
		json_object_set_new(C->op, "key_serializer", ckpt_fser_json(h->key));
	if (h->compressed)
		json_object_set_new(C->op, "compressed", json_true());
	if (h->stopped) {
		json_t *a = json_object_get(C->op, "not_read");
		int seen = 0;

		if (a == NULL)
			json_object_set_new(C->op, "not_read", a = json_array());
		for (size_t i = 0; i < json_array_size(a); i++)
			seen |= strcmp(json_string_value(json_array_get(a, i)), h->stop) == 0;
		if (!seen)
			json_array_append_new(a, json_string(h->stop));
	}
	for (size_t i = 0; i < h->n; i++) {
		json_t *o = count_state(C, h->m[i].name);

		if (o == NULL)
			return ckpt_err_set(C->e, CKPT_ERR_NOMEM, "", "out of memory");
		if (json_object_get(o, "scope") == NULL) {
			json_object_set_new(o, "scope", json_string(strcmp(scope, "keyed") == 0 ? "keyed" : "operator"));
			json_object_set_new(o, "kind", json_string(meta_kind(&h->m[i])));
			json_object_set(o, "serializers", h->m[i].serializers);
		}
	}
	return 0;
}

static int
count_op(void *arg, const char *state, size_t idx, const unsigned char *p, size_t n, json_t *typed)
{
	struct counter *C = arg;
	json_t *o = count_state(C, state);

	(void)idx;
	(void)p;
	json_decref(typed);
	if (o == NULL)
		return ckpt_err_set(C->e, CKPT_ERR_NOMEM, "", "out of memory");
	add_int(o, "entries", 1);
	add_int(o, "bytes", (json_int_t)n);
	return 0;
}

static int
count_kv(void *arg, const char *state, uint32_t kg, const unsigned char *k, size_t kn, const unsigned char *v,
	 size_t vn, struct ftyped *typed)
{
	struct counter *C = arg;
	json_t *o = count_state(C, state), *g, *x;
	char key[16];

	(void)k;
	(void)v;
	(void)typed; /* checked by the reader */
	if (o == NULL)
		return ckpt_err_set(C->e, CKPT_ERR_NOMEM, "", "out of memory");
	add_int(o, "entries", 1);
	add_int(o, "bytes", (json_int_t)(kn + vn));
	if ((g = json_object_get(o, "key_groups")) == NULL)
		json_object_set_new(o, "key_groups", g = json_object());
	snprintf(key, sizeof key, "%u", kg);
	if ((x = json_object_get(g, key)) == NULL)
		json_object_set_new(g, key, x = json_pack("{s:I, s:I}", "entries", (json_int_t)0, "bytes", (json_int_t)0));
	if (x == NULL)
		return ckpt_err_set(C->e, CKPT_ERR_NOMEM, "", "out of memory");
	add_int(x, "entries", 1);
	add_int(x, "bytes", (json_int_t)(kn + vn));
	return 0;
}

/* A state passed over (fsink.skip): n entries (-1: not known) in key group kg, bytes not known. */
static int
count_skip(void *arg, const char *state, long kg, long n, const char *why)
{
	struct counter *C = arg;
	json_t *o, *g, *x;
	char key[16];

	if (state == NULL) {
		if (json_object_get(C->op, "unlisted_states") == NULL &&
		    ckpt_json_set_new(C->op, "unlisted_states", json_string(why)) < 0)
			return ckpt_err_set(C->e, CKPT_ERR_NOMEM, "", "out of memory");
		return 0;
	}
	if ((o = count_state(C, state)) == NULL)
		return ckpt_err_set(C->e, CKPT_ERR_NOMEM, "", "out of memory");
	if (n == 0) /* nothing passed over: counted whole */
		return kg < 0 || json_object_set_new(C->keyed, state, json_true()) == 0 ? 0 :
			ckpt_err_set(C->e, CKPT_ERR_NOMEM, "", "out of memory");
	add_int(o, "entries", n);
	add_int(o, "bytes", -1);
	if (json_object_get(o, "entries_not_read") == NULL &&
	    ckpt_json_set_new(o, "entries_not_read", json_string(why)) < 0)
		return ckpt_err_set(C->e, CKPT_ERR_NOMEM, "", "out of memory");
	if (kg < 0)
		return 0;
	if ((g = json_object_get(o, "key_groups")) == NULL)
		json_object_set_new(o, "key_groups", g = json_object());
	snprintf(key, sizeof key, "%ld", kg);
	if ((x = json_object_get(g, key)) == NULL)
		json_object_set_new(g, key, x = json_pack("{s:I, s:I}", "entries", (json_int_t)0, "bytes", (json_int_t)0));
	if (x == NULL)
		return ckpt_err_set(C->e, CKPT_ERR_NOMEM, "", "out of memory");
	add_int(x, "entries", n);
	add_int(x, "bytes", -1);
	return 0;
}

/* A heap key group read in part (fsink.cut): which states were found in it, kept until the
 * operator's every subtask is read (count_cuts). */
static int
count_cut(void *arg, const struct fheader *h, uint32_t kg, const int16_t *ids, size_t n)
{
	struct counter *C = arg;
	json_t *seen = json_object();
	char key[16], why[200], buf[16];

	for (size_t i = 0; seen && i < n; i++)
		if (json_object_set_new(seen, state_name(h, ids[i], buf), json_true()) < 0) {
			json_decref(seen);
			seen = NULL;
		}
	snprintf(key, sizeof key, "%u", kg);
	snprintf(why, sizeof why, "a heap snapshot has no lengths, and in some key group it follows state \"%s\", "
		 "whose entries are not read", n ? state_name(h, ids[n - 1], buf) : "?");
	if (seen == NULL || ckpt_json_set_new(C->cuts, key, json_pack("{s:o, s:s}", "seen", seen, "why", why)) < 0)
		return ckpt_err_set(C->e, CKPT_ERR_NOMEM, "", "out of memory");
	return 0;
}

static int
is_keyed(const struct counter *C, json_t *o)
{
	const char *scope = json_string_value(json_object_get(o, "scope"));

	return json_object_get(o, "key_groups") || (scope && strcmp(scope, "keyed") == 0) ||
	       json_object_get(C->keyed, json_string_value(json_object_get(o, "name")));
}

/* Every keyed state of the operator not found in a key group read in part: its entries there
 * (and so in all) are not known.  Every state is in every key group of its file, but a state may
 * come to light only in another subtask's file, so this waits for the operator's last subtask. */
static int
count_cuts(struct counter *C)
{
	const char *kg;
	json_t *cut, *o, *g;
	size_t i;

	json_object_foreach(C->cuts, kg, cut)
		json_array_foreach(C->states, i, o) {
			if (!is_keyed(C, o) ||
			    json_object_get(json_object_get(cut, "seen"), json_string_value(json_object_get(o, "name"))))
				continue;
			add_int(o, "entries", -1);
			add_int(o, "bytes", -1);
			if (json_object_get(o, "entries_not_read") == NULL &&
			    json_object_set(o, "entries_not_read", json_object_get(cut, "why")) < 0)
				return ckpt_err_set(C->e, CKPT_ERR_NOMEM, "", "out of memory");
			if ((g = json_object_get(o, "key_groups")) == NULL)
				json_object_set_new(o, "key_groups", g = json_object());
			if (ckpt_json_set_new(g, kg, json_pack("{s:n, s:n}", "entries", "bytes")) < 0)
				return ckpt_err_set(C->e, CKPT_ERR_NOMEM, "", "out of memory");
		}
	json_object_clear(C->cuts);
	json_object_clear(C->keyed);
	return 0;
}

/* Handles whose files the summary lists: those of no state ckpt reads, RocksDB's (their entries
 * counted too) and changelogs. */
static int
listed_files(int role)
{
	return role == 0 || role == 4 || role == 5;
}

/* The files of handles that are not a stream of their own (RocksDB incremental, changelog), from
 * the handles only. */
static int
count_unread(struct counter *C, const struct ckpt_subtask *st, const struct ckpt_handle *h)
{
	json_t *a = json_object_get(C->op, "files"), *f;
	static const char *const lists[] = {"shared", "private", NULL};

	if (a == NULL)
		json_object_set_new(C->op, "files", a = json_array());
	if (strcmp(h->kind, "incremental") != 0) {
		f = json_pack("{s:I, s:s, s:s, s:I, s:o}", "subtask", (json_int_t)st->index, "scope", h->scope,
			      "kind", h->kind, "size", (json_int_t)h->size, "path", h->path ? json_string(h->path) : json_null());
		return json_array_append_new(a, f);
	}
	for (int l = 0; lists[l]; l++) {
		json_t *files = json_object_get(h->detail, lists[l]);

		for (size_t i = 0; i < json_array_size(files); i++) {
			json_t *x = json_array_get(files, i);

			f = json_pack("{s:I, s:s, s:s, s:O?, s:O?, s:O?}", "subtask", (json_int_t)st->index, "scope",
				      h->scope, "kind", lists[l], "local_name", json_object_get(x, "local_name"),
				      "size", json_object_get(x, "size"), "path", json_object_get(x, "path"));
			if (json_array_append_new(a, f) < 0)
				return -1;
		}
	}
	return 0;
}

json_t *
ckpt_flink_state_summary(struct ckpt_snapshot *s, struct ckpt_err *e)
{
	struct flink_backing *b = backing_of(s, e);
	struct counter C = {.e = e};
	struct fsink k = {.header = count_header, .op = count_op, .kv = count_kv, .skip = count_skip, .cut = count_cut,
			  .arg = &C, .untyped = 1};
	json_t *out = NULL;

	if (b == NULL)
		return NULL;
	if ((C.ops = json_object()) == NULL || (C.cuts = json_object()) == NULL || (C.keyed = json_object()) == NULL) {
		ckpt_err_set(e, CKPT_ERR_NOMEM, "", "out of memory");
		goto out;
	}
	for (size_t i = 0; i < s->nops; i++) {
		const struct ckpt_operator *op = &s->ops[i];

		C.op = json_pack("{s:[]}", "states");
		if (C.op == NULL || json_object_set_new(C.ops, op->id, C.op) < 0)
			goto out;
		C.states = json_object_get(C.op, "states");
		for (size_t j = 0; j < op->nsubtasks; j++) {
			const struct ckpt_subtask *st = &op->subtasks[j];

			if (read_subtask(b, op, st, &k, e) < 0)
				goto out;
			for (size_t h = 0; h < st->nhandles; h++)
				if (listed_files(handle_role(&st->handles[h])) &&
				    strstr(st->handles[h].scope, "channel") == NULL &&
				    count_unread(&C, st, &st->handles[h]) < 0)
					goto out;
		}
		if (count_cuts(&C) < 0)
			goto out;
	}
	out = C.ops;
	C.ops = NULL;
out:
	json_decref(C.ops);
	json_decref(C.cuts);
	json_decref(C.keyed);
	return out;
}

/* ------------------------------------------------------------ -c */

struct verifier {
	ckpt_verify_report *report;
	void *arg;
	json_t *bad; /* paths already reported */
	long problems;
};

static void
problem(struct verifier *V, const char *where, const char *what)
{
	V->problems++;
	json_object_set_new(V->bad, where, json_true());
	V->report(V->arg, where, what);
}

/* Every file the _metadata names: there, and of its recorded size (segment files: at least). */
static int
verify_files(struct flink_backing *b, const struct ckpt_snapshot *s, struct verifier *V, uint64_t *files,
	     uint64_t *bytes, struct ckpt_err *e)
{
	const json_t *list = json_object_get(s->flink, "files");
	struct fctx c = {.b = b, .e = e};

	for (size_t i = 0; i < json_array_size(list); i++) {
		const json_t *f = json_array_get(list, i);
		const char *kind = json_string_value(json_object_get(f, "kind"));
		uint64_t size = (uint64_t)json_integer_value(json_object_get(f, "size"));
		char path[1024], what[256];
		struct stat sb;
		int cl;

		if (local_path(&c, kind, json_string_value(json_object_get(f, "path")), path, sizeof path) < 0) {
			char msg[1200];

			ckpt_err_format(e, msg, sizeof msg);
			problem(V, json_string_value(json_object_get(f, "path")), msg);
			memset(e, 0, sizeof *e);
			continue;
		}
		(*files)++;
		if (stat(path, &sb) < 0) {
			snprintf(what, sizeof what, "missing (%s)", strerror(errno));
			problem(V, path, what);
			continue;
		}
		cl = ckpt_fchangelog_size(s, json_string_value(json_object_get(f, "path")), path, (uint64_t)sb.st_size,
					  what, sizeof what);
		if (cl == 1)
			problem(V, path, what);
		else if (cl == 0)
			*bytes += size;
		if (cl >= 0)
			continue;
		if (strcmp(kind, "segment_file") == 0 ? (uint64_t)sb.st_size < size : (uint64_t)sb.st_size != size) {
			snprintf(what, sizeof what, "%s: %llu bytes, the _metadata records %llu",
				 (uint64_t)sb.st_size < size ? "short" : "long", (unsigned long long)sb.st_size,
				 (unsigned long long)size);
			problem(V, path, what);
			continue;
		}
		*bytes += size;
	}
	return 0;
}

json_t *
ckpt_flink_state_missing(struct ckpt_snapshot *s, struct ckpt_err *e)
{
	struct flink_backing *b = backing_of(s, e);
	const json_t *list = s->flink ? json_object_get(s->flink, "files") : NULL;
	struct ckpt_err ignored = {0};
	struct fctx c = {.b = b, .e = &ignored};
	json_t *out;

	if (b == NULL)
		return NULL;
	if ((out = json_array()) == NULL)
		goto nomem;
	for (size_t i = 0; i < json_array_size(list); i++) {
		const json_t *f = json_array_get(list, i);
		const char *kind = json_string_value(json_object_get(f, "kind"));
		const char *named = json_string_value(json_object_get(f, "path"));
		char path[1024];
		struct stat sb;
		int local = local_path(&c, kind, named, path, sizeof path) == 0;

		if (local && stat(path, &sb) == 0)
			continue;
		if (json_array_append_new(out, json_string(local ? path : named)) < 0)
			goto nomem;
	}
	return out;
nomem:
	json_decref(out);
	ckpt_err_set(e, CKPT_ERR_NOMEM, "", "out of memory");
	return NULL;
}

int
ckpt_flink_state_each_file(struct ckpt_snapshot *s, int (*fn)(void *arg, const char *path, int local), void *arg,
			   struct ckpt_err *e)
{
	struct flink_backing *b = backing_of(s, e);
	const json_t *list = s->flink ? json_object_get(s->flink, "files") : NULL;
	struct ckpt_err ignored = {0};
	struct fctx c = {.b = b, .e = &ignored};

	if (b == NULL)
		return -1;
	for (size_t i = 0; i < json_array_size(list); i++) {
		const json_t *f = json_array_get(list, i);
		const char *named = json_string_value(json_object_get(f, "path"));
		char path[1024];
		int local = local_path(&c, json_string_value(json_object_get(f, "kind")), named, path, sizeof path) == 0;

		if (fn(arg, local ? path : named, local) < 0)
			return -1;
	}
	return 0;
}

long
ckpt_flink_state_verify(struct ckpt_snapshot *s, ckpt_verify_report *report, void *arg, uint64_t *files,
			uint64_t *bytes, struct ckpt_err *e)
{
	struct flink_backing *b = backing_of(s, e);
	struct verifier V = {.report = report, .arg = arg};
	struct counter C = {.e = e};
	struct fsink k = {.header = count_header, .op = count_op, .kv = count_kv, .arg = &C};
	long rc = -1;

	*files = *bytes = 0;
	if (b == NULL || (V.bad = json_object()) == NULL || (C.op = json_pack("{s:[]}", "states")) == NULL)
		goto out;
	C.states = json_object_get(C.op, "states");
	if (verify_files(b, s, &V, files, bytes, e) < 0)
		goto out;
	for (size_t i = 0; i < s->nops; i++)
		for (size_t j = 0; j < s->ops[i].nsubtasks; j++) {
			struct ckpt_err pe = {0}, pw;
			char msg[1200], text[1100];

			if (read_subtask(b, &s->ops[i], &s->ops[i].subtasks[j], &k, &pe) == 0)
				continue;
			if (pe.kind == CKPT_ERR_NOMEM) {
				*e = pe;
				goto out;
			}
			if (json_object_get(V.bad, pe.where)) /* missing or of the wrong size: said already */
				continue;
			pw = pe; /* the diagnostic -a prints, one line, after its "where: " */
			pw.where[0] = '\0';
			ckpt_err_format(&pw, text, sizeof text);
			snprintf(msg, sizeof msg, "%s%s", pe.kind == CKPT_ERR_REFUSED ? "not checked: " : "", text);
			if (pe.kind == CKPT_ERR_REFUSED)
				report(arg, pe.where, msg);
			else
				problem(&V, pe.where, msg);
		}
	rc = V.problems;
out:
	json_decref(V.bad);
	json_decref(C.op);
	return rc;
}

long
ckpt_flink_state_files(struct ckpt_snapshot *s, ckpt_verify_report *report, void *arg, uint64_t *files,
		       uint64_t *bytes, struct ckpt_err *e)
{
	struct flink_backing *b = backing_of(s, e);
	struct verifier V = {.report = report, .arg = arg};
	long rc = -1;

	*files = *bytes = 0;
	if (b == NULL)
		return -1;
	if ((V.bad = json_object()) == NULL)
		return ckpt_err_set(e, CKPT_ERR_NOMEM, "", "out of memory");
	if (verify_files(b, s, &V, files, bytes, e) == 0)
		rc = V.problems;
	json_decref(V.bad);
	return rc;
}

/* ------------------------------------------------------------ -d */

/* Entries of one operator by identity: keyed entries by (state, key group, key) to their value's
 * hash; operator state elements by (state, element hash) to their count. */
/*
 * -d: operator state is compared whole (Flink holds it whole on restore too); keyed state a
 * window of key groups at a time, so that what is held follows the largest window of the first
 * snapshot (about DIFF_WINDOW bytes of its files, or one key group bigger than that), never the
 * snapshot: its entries' identities (state and key, exact) in an arena, their values by XXH3.
 */
#define DIFF_WINDOW ((uint64_t)2 << 20)

struct dentry {
	const unsigned char *id; /* state name, NUL, key: in the arena; NULL for a free slot */
	size_t n;
	uint64_t h, vh;
	uint32_t kg;
	int live;                /* not found in the second snapshot (yet) */
};

struct differ {
	json_t *seen;    /* operator state: identity -> count */
	json_t *states;  /* state -> {"added", "removed", "changed", "key_groups": {kg: {...}}} */
	int pass;        /* 0 reading a, 1 reading b */
	struct ckpt_err *e;
	struct dentry *t; /* keyed state of a's window: open addressing, cap a power of two */
	size_t cap, n;
	struct ckpt_snap_arena *arena;
	unsigned char *id; /* the identity being looked up */
	size_t idcap;
};

/* Count one difference of kind ("added", "removed", "changed") for state (and key group, or -1). */
static int
diff_count(struct differ *D, const char *state, long kg, const char *kind)
{
	json_t *st = json_object_get(D->states, state), *g;
	char k[16];

	if (st == NULL && json_object_set_new(D->states, state, st = json_pack("{s:i, s:i, s:i}", "added", 0,
									    "removed", 0, "changed", 0)) < 0)
		return ckpt_err_set(D->e, CKPT_ERR_NOMEM, "", "out of memory");
	add_int(st, kind, 1);
	if (kg < 0)
		return 0;
	if ((g = json_object_get(st, "key_groups")) == NULL)
		json_object_set_new(st, "key_groups", g = json_object());
	snprintf(k, sizeof k, "%ld", kg);
	if (json_object_get(g, k) == NULL)
		json_object_set_new(g, k, json_pack("{s:i, s:i, s:i}", "added", 0, "removed", 0, "changed", 0));
	add_int(json_object_get(g, k), kind, 1);
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
			ckpt_err_set(D->e, CKPT_ERR_NOMEM, "", "out of memory") : 0;
	if (c == NULL || json_integer_value(c) == 0)
		return diff_count(D, state, -1, "added");
	json_object_set_new(D->seen, id, json_integer(json_integer_value(c) - 1));
	return 0;
}

static int
diff_nomem(struct differ *D)
{
	return ckpt_err_set(D->e, CKPT_ERR_NOMEM, "", "out of memory");
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
		return diff_nomem(D);
	}
	for (size_t i = 0; i < ocap; i++)
		if (old[i].id)
			*diff_slot(D, old[i].id, old[i].n, old[i].h) = old[i];
	free(old);
	return 0;
}

static int
diff_kv(void *arg, const char *state, uint32_t kg, const unsigned char *k, size_t kn, const unsigned char *v,
	size_t vn, struct ftyped *typed)
{
	struct differ *D = arg;
	size_t sn = strlen(state), n = sn + 1 + kn;
	struct dentry *d;
	uint64_t h;

	(void)typed;
	if (n > D->idcap) {
		unsigned char *q = realloc(D->id, n);

		if (q == NULL)
			return diff_nomem(D);
		D->id = q;
		D->idcap = n;
	}
	memcpy(D->id, state, sn + 1);
	memcpy(D->id + sn + 1, k, kn);
	h = ckpt_xxh3(D->id, n);
	if (D->pass == 0 && 2 * (D->n + 1) > D->cap && diff_grow(D) < 0)
		return -1;
	d = D->cap ? diff_slot(D, D->id, n, h) : NULL;
	if (D->pass == 1) {
		if (d == NULL || d->id == NULL || !d->live)
			return diff_count(D, state, kg, "added");
		d->live = 0;
		return d->vh != ckpt_xxh3(v, vn) ? diff_count(D, state, kg, "changed") : 0;
	}
	if (d->id == NULL) {
		unsigned char *q = ckpt_snap_arena_alloc(D->arena, n);

		if (q == NULL)
			return diff_nomem(D);
		memcpy(q, D->id, n);
		*d = (struct dentry){.id = q, .n = n, .h = h, .kg = kg};
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
	return diff_clear(D);
}

/* Forget a's window. */
static int
diff_clear(struct differ *D)
{
	ckpt_snap_arena_free(D->arena);
	if ((D->arena = ckpt_snap_arena_new()) == NULL)
		return diff_nomem(D);
	if (D->cap)
		memset(D->t, 0, D->cap * sizeof *D->t);
	D->n = 0;
	return 0;
}

static int
diff_side(struct flink_backing *b, const struct ckpt_operator *op, const struct fsink *k,
	  struct ckpt_err *e)
{
	for (size_t j = 0; op && j < op->nsubtasks; j++)
		if (read_subtask(b, op, &op->subtasks[j], k, e) < 0)
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
			int got = r && handle_role(h) == 3 ? sscanf(r, "%u-%u", &a, &z) : 0;
			struct kgoff *o;

			if (got == 1)
				z = a;
			if (got <= 0 || n == 0)
				continue;
			if ((o = ckpt_calloc(n, sizeof *o, e)) == NULL)
				return -1;
			for (size_t x = 0; x < n; x++)
				o[x] = (struct kgoff){(uint64_t)json_integer_value(json_array_get(offs, x)), a + (uint32_t)x};
			qsort(o, n, sizeof *o, cmp_kgoff); /* each one's end is the next one's start up */
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

/* One operator's differences (oa or ob may be NULL) into D->states. */
static int
diff_operator(struct flink_backing *ba, const struct ckpt_operator *oa, struct flink_backing *bb,
	      const struct ckpt_operator *ob, struct differ *D, struct ckpt_err *e)
{
	struct fsink k = {.op = diff_op, .kv = diff_kv, .arg = D, .untyped = 1, .part = 1};
	uint32_t m = 1, lo = 0;
	uint64_t *by;
	int rc = -1;

	D->pass = 0;
	if (diff_side(ba, oa, &k, e) < 0)
		return -1;
	D->pass = 1;
	if (diff_side(bb, ob, &k, e) < 0 || diff_removed(D) < 0)
		return -1;
	if (oa && oa->max_parallelism > m)
		m = oa->max_parallelism;
	if (ob && ob->max_parallelism > m)
		m = ob->max_parallelism;
	if ((by = ckpt_calloc(m, sizeof *by, e)) == NULL)
		return -1;
	if (kg_bytes(oa, by, m, e) < 0)
		goto out;
	k.part = 2;
	while (lo < m) { /* the windows: key groups whose bytes in a add up to DIFF_WINDOW, at least one */
		uint64_t sum = by[lo];
		uint32_t hi = lo + 1;

		while (hi < m && sum + by[hi] <= DIFF_WINDOW)
			sum += by[hi++];
		k.kg_lo = lo;
		k.kg_hi = hi;
		D->pass = 0;
		if (diff_side(ba, oa, &k, e) < 0)
			goto out;
		D->pass = 1;
		if (diff_side(bb, ob, &k, e) < 0 || diff_removed(D) < 0)
			goto out;
		lo = hi;
	}
	rc = 0;
out:
	free(by);
	return rc;
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

json_t *
ckpt_flink_state_diff(struct ckpt_snapshot *a, struct ckpt_snapshot *b, int *differ, struct ckpt_err *e)
{
	struct flink_backing *ba = backing_of(a, e), *bb = ba ? backing_of(b, e) : NULL;
	json_t *out = NULL;
	struct differ D = {.e = e};

	if (bb == NULL || (out = json_object()) == NULL || (D.seen = json_object()) == NULL ||
	    (D.arena = ckpt_snap_arena_new()) == NULL)
		goto fail;
	for (size_t pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < (pass ? b->nops : a->nops); i++) {
			const struct ckpt_operator *oa = pass ? op_by_id(a, b->ops[i].id) : &a->ops[i];
			const struct ckpt_operator *ob = pass ? &b->ops[i] : op_by_id(b, a->ops[i].id);

			if (pass && oa) /* done in the first pass */
				continue;
			if ((D.states = json_object()) == NULL || diff_operator(ba, oa, bb, ob, &D, e) < 0)
				goto fail;
			if (json_object_size(D.states)) {
				*differ = 1;
				if (diff_sort(D.states) < 0)
					goto fail;
				json_object_set_new(out, pass ? ob->id : oa->id, D.states);
			} else {
				json_decref(D.states);
			}
			D.states = NULL;
		}
	goto out;
fail:
	json_decref(out);
	out = NULL;
out:
	json_decref(D.seen);
	json_decref(D.states);
	ckpt_snap_arena_free(D.arena);
	free(D.t);
	free(D.id);
	return out;
}
