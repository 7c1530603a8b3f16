/* state-locate.c: where the bytes a Flink state handle names are (a --root map, file: URIs,
 * relative and segment files, S3, inline in the _metadata), opened as a byte source. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "readers.h"

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
resolve(struct ckpt_fstate_ctx *c, const char *p, char *out, size_t n)
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
ckpt_fstate_local_path(struct ckpt_fstate_ctx *c, const char *kind, const char *p, char *out, size_t n)
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
open_s3(struct ckpt_fstate_ctx *c, struct ckpt_fsrc *s, const char *kind, uint64_t start)
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
ckpt_fstate_open_bytes(struct ckpt_fstate_ctx *c, struct ckpt_fsrc *s, int *fd)
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
