/* state-read.c: the bytes a Flink state handle names and the serialization proxies at their head
 * (ckpt-flink(5), STATE FILES), and each subtask's handles given to the reader of their kind. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "readers.h"
#include "model/model.h"

/* ------------------------------------------------------------ the header */

void
ckpt_fstate_header_release(struct fheader *h)
{
	for (size_t i = 0; i < h->n; i++) {
		free(h->m[i].name);
		free(h->m[i].kind);
		free(h->m[i].mode);
		ckpt_fser_free(h->m[i].key);
		ckpt_fser_free(h->m[i].ns);
		ckpt_fser_free(h->m[i].value);
		ckpt_fser_free(h->m[i].ukey);
		json_decref(h->m[i].serializers);
	}
	free(h->m);
	ckpt_fser_free(h->key);
	memset(h, 0, sizeof *h);
}

int
ckpt_fstate_header_stop(struct fheader *h, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(h->stop, sizeof h->stop, fmt, ap);
	va_end(ap);
	h->stopped = 1;
	return 1;
}

int
ckpt_fstate_read_count(struct ckpt_fsrc *s, int32_t *n, int32_t max, const char *what)
{
	if (ckpt_fsrc_i32(s, n, what) < 0)
		return -1;
	if (*n < 0 || *n > max)
		return ckpt_fsrc_fail(s, "%s %d (0 to %d expected)", what, *n, max);
	return 0;
}

int
ckpt_fstate_read_options(struct ckpt_fsrc *s, struct fmeta *m)
{
	int32_t n;

	if (ckpt_fstate_read_count(s, &n, 64, "state option count") < 0)
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

	if (ckpt_fstate_read_count(s, &n, 16, "state serializer count") < 0)
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
		else if (strcmp(k, "USER_KEY_SERIALIZER") == 0 && m->type == 4)
			slot = &m->ukey;
		else {
			ckpt_fsrc_fail(s, "unknown serializer name \"%s\" of state \"%s\" (KEY_SERIALIZER, "
				       "NAMESPACE_SERIALIZER%s expected)", k, m->name,
				       m->type == 4 ? ", VALUE_SERIALIZER or USER_KEY_SERIALIZER" : " or VALUE_SERIALIZER");
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

			ckpt_fstate_header_stop(h, "the %s of state \"%s\" is a %s, whose snapshot ckpt cannot step over", k,
				    m->name, cls ? cls : "?");
		}
		free(k);
		if (r != 0)
			return r;
	}
	return 0;
}

/*
 * A KEY_VALUE_V2 state (Flink 2.x State V2, RegisteredKeyValueStateBackendMetaInfo of
 * runtime.state.v2) names the element serializer of a list state and, beside USER_KEY_SERIALIZER,
 * the user value serializer of a map state, where a KEY_VALUE state names the ListSerializer and
 * MapSerializer; the entries are laid out alike (ForSt's asynchronous states).  Give the state the
 * serializer a KEY_VALUE state of its kind would have.
 */
static int
v2_serializers(struct ckpt_fsrc *s, struct fmeta *m)
{
	const char *kind = m->kind ? m->kind : "";
	struct ckpt_fser *t;

	if (strcmp(kind, "map") == 0) {
		if (m->ukey == NULL || m->value == NULL)
			return ckpt_fsrc_fail(s, "map state \"%s\" (State V2) without its %s serializer", m->name,
					      m->ukey == NULL ? "user key" : "value");
		if ((t = ckpt_fser_composite(FSER_MAP, "org.apache.flink.api.common.typeutils.base.MapSerializerSnapshot",
					     m->ukey, m->value)) == NULL)
			return ckpt_err_set(s->e, CKPT_ERR_NOMEM, s->where, "out of memory");
		m->ukey = NULL;
		m->value = t;
	} else if (m->ukey != NULL) {
		return ckpt_fsrc_fail(s, "%s state \"%s\" names a USER_KEY_SERIALIZER", kind, m->name);
	} else if (strcmp(kind, "list") == 0 && m->value != NULL) {
		if ((t = ckpt_fser_composite(FSER_LIST, "org.apache.flink.api.common.typeutils.base.ListSerializerSnapshot",
					     m->value, NULL)) == NULL)
			return ckpt_err_set(s->e, CKPT_ERR_NOMEM, s->where, "out of memory");
		m->value = t;
	}
	return 0;
}

struct fmeta *
ckpt_fstate_meta_add(struct ckpt_fsrc *s, struct fheader *h)
{
	struct fmeta *m;

	if (ckpt_grow(&h->m, &h->cap, h->n + 1, sizeof *h->m, 4, NULL) < 0) {
		ckpt_err_set(s->e, CKPT_ERR_NOMEM, s->where, "out of memory");
		return NULL;
	}
	m = &h->m[h->n++];
	memset(m, 0, sizeof *m);
	if ((m->serializers = json_object()) == NULL) {
		ckpt_err_set(s->e, CKPT_ERR_NOMEM, s->where, "out of memory");
		return NULL;
	}
	return m;
}

int
ckpt_fstate_meta_unique(struct ckpt_fsrc *s, const struct fheader *h)
{
	const struct fmeta *m = &h->m[h->n - 1];

	for (size_t i = 0; i + 1 < h->n; i++)
		if (strcmp(h->m[i].name, m->name) == 0)
			return ckpt_fsrc_fail(s, "state \"%s\" twice in one header", m->name);
	return 0;
}

/* StateMetaInfoSnapshotReadersWriters' current reader (meta-info versions 6 and 7). */
int
ckpt_fstate_read_meta(struct ckpt_fsrc *s, struct fheader *h)
{
	struct fmeta *m;
	int r;

	if ((m = ckpt_fstate_meta_add(s, h)) == NULL)
		return -1;
	if (ckpt_fsrc_utf(s, &m->name, "state name") < 0 || ckpt_fsrc_i32(s, &m->type, "state type") < 0)
		return -1;
	if (m->type < 0 || m->type > 4)
		return ckpt_fsrc_fail(s, "state type %d of state \"%s\" (0 to 4 expected)", m->type, m->name);
	if (ckpt_fstate_meta_unique(s, h) < 0 || ckpt_fstate_read_options(s, m) < 0)
		return -1;
	if (m->type == 3 && m->kind == NULL && (m->kind = strdup("timers")) == NULL)
		return ckpt_err_set(s->e, CKPT_ERR_NOMEM, s->where, "out of memory");
	r = read_serializers(s, h, m);
	return r == 0 && m->type == 4 ? v2_serializers(s, m) : r;
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
		int r = ckpt_fstate_read_meta(s, h);

		if (r != 0)
			return r;
	}
	return 0;
}

int
ckpt_fstate_read_flag(struct ckpt_fsrc *s, int *v, const char *what)
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
int
ckpt_fstate_op_header(struct ckpt_fsrc *s, struct fheader *h)
{
	int r;

	if (ckpt_fsrc_seek(s, 0, 0) < 0 || ckpt_fsrc_i32(s, &h->version, "operator state header version") < 0)
		return -1;
	if (h->version < 1 || h->version > 6)
		return ckpt_fsrc_fail(s, "operator state header version %d (1 to 6 expected)", h->version);
	if (h->version < 5)
		return ckpt_fstate_old_op_header(s, h);
	if (h->version == 6 && ckpt_fstate_read_flag(s, &h->compressed, "compression flag") < 0)
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
int
ckpt_fstate_read_keyed_header(struct ckpt_fsrc *s, struct fheader *h)
{
	int r;

	if (ckpt_fsrc_seek(s, 0, 0) < 0 || ckpt_fsrc_i32(s, &h->version, "keyed state header version") < 0)
		return -1;
	if (h->version < 1 || h->version > 6)
		return ckpt_fsrc_fail(s, "keyed state header version %d (1 to 6 expected)", h->version);
	if (h->version < 6)
		return ckpt_fstate_old_keyed_header(s, h);
	if (ckpt_fstate_read_flag(s, &h->compressed, "key-group compression flag") < 0)
		return -1;
	if ((r = ckpt_fser_read(s, 1, &h->key)) != 0) {
		if (r == 1)
			ckpt_fstate_header_stop(h, "the key serializer is a %s, whose snapshot ckpt cannot step over",
				    ckpt_fser_blocker(h->key));
		return r;
	}
	if ((r = read_metas(s, h, "keyed state count")) != 0)
		return r;
	h->end = ckpt_fsrc_tell(s);
	return 0;
}

const struct fmeta *
ckpt_fstate_meta_named(const struct fheader *h, const char *name)
{
	for (size_t i = 0; i < h->n; i++)
		if (strcmp(h->m[i].name, name) == 0)
			return &h->m[i];
	return NULL;
}

const char *
ckpt_fstate_meta_kind(const struct fmeta *m)
{
	if (m->type == 2)
		return "broadcast";
	if (m->type == 1)
		return m->mode && strcmp(m->mode, "UNION") == 0 ? "union" : "list";
	return m->kind ? m->kind : "value";
}

/* The keyed serialization proxy at the head of c->h's stream (changelog.c reads it too). */
int
ckpt_fstate_keyed_header(struct fctx *c, struct fheader *h)
{
	struct ckpt_fsrc s = {0};
	int fd = -1, rc;

	s.fd = -1;
	rc = ckpt_fstate_open_bytes(c, &s, &fd) < 0 || ckpt_fstate_read_keyed_header(&s, h) < 0 ? -1 : 0;
	ckpt_fsrc_release(&s);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* ------------------------------------------------------------ where the bytes are */

static int
has_prefix(const char *p, const char *pre)
{
	size_t n = strlen(pre);

	return strncmp(p, pre, n) == 0 && (p[n] == '\0' || p[n] == '/' || (n > 0 && pre[n - 1] == '/'));
}

/* The path of a file: URI (file:/x, file:///x, file://host/x), NULL when p is none. */
static const char *
file_uri_path(const char *p)
{
	if (strncmp(p, "file:", 5) != 0)
		return NULL;
	p += 5;
	if (strncmp(p, "//", 2) == 0) /* file://host/x or file:///x */
		p = strchr(p + 2, '/');
	return p && *p == '/' ? p : NULL;
}

/* A handle's path as a local path or an s3:// URL: a --root map, file: URIs, absolute paths,
 * s3://, s3a://, s3p:// URLs.  A root's local prefix, bare or a file: URI, maps the paths of
 * either spelling: Flink writes local paths as file: URIs, people as paths. */
static int
resolve(struct fctx *c, const char *p, char *out, size_t n)
{
	for (size_t i = 0; i < c->b->nroots; i++) {
		const char *from = c->b->from[i], *q = p;

		if (ckpt_s3_is_url(p) && ckpt_s3_is_url(from)) { /* s3://, s3a://, s3p://: one store */
			from = strstr(from, "://") + 3;
			q = strstr(p, "://") + 3;
		} else if ((file_uri_path(from) || *from == '/') && (file_uri_path(p) || *p == '/')) {
			from = file_uri_path(from) ? file_uri_path(from) : from;
			q = file_uri_path(p) ? file_uri_path(p) : p;
		}
		if (has_prefix(q, from)) {
			const char *to = c->b->to[i], *rest = q + strlen(from), *sep = "";
			size_t k = strlen(to);

			/* one '/' between, whichever side has it: a key in S3 is spelt one way */
			if (k > 0 && to[k - 1] == '/' && *rest == '/')
				rest++;
			else if ((k == 0 || to[k - 1] != '/') && *rest != '/' && *rest != '\0')
				sep = "/";
			if (ckpt_s3_is_url(to)) /* mapped into S3: one spelling of the scheme */
				snprintf(out, n, "s3://%s%s%s", strstr(to, "://") + 3, sep, rest);
			else
				snprintf(out, n, "%s%s%s", to, sep, rest);
			return 0;
		}
	}
	if (ckpt_s3_is_url(p)) { /* Flink's s3a:// and s3p:// are the same objects */
		snprintf(out, n, "s3://%s", strstr(p, "://") + 3);
		return 0;
	}
	if (strncmp(p, "file:", 5) == 0 && (p = file_uri_path(p)) == NULL)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->where, "state file URI without a path");
	if (*p != '/')
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, p, "not a local path: map its prefix with --root PREFIX=DIR");
	snprintf(out, n, "%s", p);
	return 0;
}

/* The local path of a file the _metadata names (kind: file, relative_file, segment_file). */
int
ckpt_fstate_local_path(struct fctx *c, const char *kind, const char *p, char *out, size_t n)
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

/* The same from S3: read by range, never whole. */
static int
open_s3(struct fctx *c, struct ckpt_fsrc *s, const char *kind, uint64_t start)
{
	struct ckpt_s3obj *o = ckpt_s3obj_open(c->where, c->e);
	int seg = strcmp(kind, "segment_file") == 0;
	uint64_t want = seg ? start + c->h->size : c->h->size, size;

	if (o == NULL)
		return -1;
	size = ckpt_s3obj_size(o);
	if (seg ? size < want : size != want) {
		ckpt_s3obj_close(o);
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->where, "%s: %llu bytes, the _metadata records %llu",
				    size < want ? "short" : "long", (unsigned long long)size, (unsigned long long)want);
	}
	return ckpt_fsrc_s3(s, o, seg ? start : 0, c->h->size, c->where, c->e);
}

/* Open the bytes of handle h's delegate: *fd >= 0 for a file (close it), -1 inline or in S3. */
int
ckpt_fstate_open_bytes(struct fctx *c, struct ckpt_fsrc *s, int *fd)
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
	if (ckpt_fstate_local_path(c, kind, path, c->where, sizeof c->where) < 0)
		return -1;
	if (ckpt_s3_is_url(c->where))
		return open_s3(c, s, kind, start);
	if ((*fd = open(c->where, O_RDONLY)) < 0)
		return ckpt_err_sys(c->e, c->where, "cannot open the state file of operator %s subtask %u",
				    c->op->id, c->st->index);
	ckpt_fsrc_note_read(c->where);
	if (fstat(*fd, &sb) < 0)
		return ckpt_err_sys(c->e, c->where, "cannot stat");
	want = strcmp(kind, "segment_file") == 0 ? start + c->h->size : c->h->size;
	if (strcmp(kind, "segment_file") == 0 ? (uint64_t)sb.st_size < want : (uint64_t)sb.st_size != want)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->where, "%s: %llu bytes, the _metadata records %llu",
				    (uint64_t)sb.st_size < want ? "short" : "long", (unsigned long long)sb.st_size,
				    (unsigned long long)want); /* as -c words it */
	return ckpt_fsrc_file(s, *fd, strcmp(kind, "segment_file") == 0 ? start : 0, c->h->size, c->where, c->e);
}

/* ------------------------------------------------------------ one subtask */

/* Which handles hold state ckpt reads: 1 operator (managed), 2 raw operator, 3 keyed, 4 RocksDB
 * (incremental), 5 keyed in a changelog, 0 none. */
int
ckpt_fstate_handle_role(const struct ckpt_handle *h)
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

int
ckpt_fstate_read_subtask(struct flink_backing *b, const struct ckpt_operator *op, const struct ckpt_subtask *st,
			 const struct fsink *k, struct ckpt_err *e)
{
	struct fctx c = {.b = b, .op = op, .st = st, .k = k, .e = e};
	struct fwrap w;
	int rc = -1;

	if (b->sel) { /* narrowed: what is not asked for is not opened */
		if (!ckpt_fselect_wrap(b->sel, &w, k, op, b->meta, e))
			return 0;
		c.k = k = &w.k;
	}
	for (size_t i = 0; i < st->nhandles; i++) {
		int role = ckpt_fstate_handle_role(&st->handles[i]), r = 0;

		c.h = &st->handles[i];
		snprintf(c.where, sizeof c.where, "%s", b->meta);
		if ((k->part == 1 && role >= 3) || (k->part == 2 && role < 3))
			continue;
		if (role == 1 || role == 2)
			r = ckpt_fstate_read_operator(&c, role == 1);
		else if (role == 3)
			r = ckpt_fstate_read_keyed(&c);
		else if (role == 4)
			r = ckpt_fstate_read_rocksdb(&c);
		else if (role == 5)
			r = ckpt_fchangelog_read(&c);
		if (r < 0)
			goto out;
	}
	rc = 0;
out:
	if (b->sel)
		ckpt_fselect_unwrap(&w);
	return rc;
}
