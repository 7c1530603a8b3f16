/*
 * open.c: opening any snapshot (archive, directory, state document, Flink
 * _metadata, local or in S3) and loading one subtask's state file at a time, each member read
 * whole and checked against the manifest; verify.c verifies without loading.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "snap.h"

static void
arch_free(struct ckpt_model_backing *base)
{
	struct ckpt_snap_arch *b = (struct ckpt_snap_arch *)base;

	ckpt_arc_close(b->a);
	if (b->fd >= 0)
		close(b->fd);
	ckpt_model_members_free(b->members, b->nmembers);
	free(b->name);
	free(b->dir);
	free(b);
}

/* ---- reading a member whole, hashing it */

struct sink {
	unsigned char *buf;
	uint64_t cap;
	struct ckpt_hasher *h;
	const char *where;
	struct ckpt_err *e;
};

static int
sink_put(void *arg, const void *p, size_t n, int64_t off)
{
	struct sink *k = arg;

	if ((uint64_t)off + n > k->cap)
		return ckpt_err_set(k->e, CKPT_ERR_REFUSED, k->where, "member larger than the manifest says");
	if (k->buf)
		memcpy(k->buf + off, p, n);
	ckpt_hasher_update(k->h, p, n);
	return 0;
}

/* A member's size as found (header or file) against the manifest: -c's words. */
int
ckpt_snap_member_size(const struct ckpt_model_member *m, uint64_t got, const char *where, struct ckpt_err *e)
{
	if (got < m->size)
		return ckpt_err_set(e, CKPT_ERR_REFUSED, where, "truncated member: %llu of %llu bytes",
				    (unsigned long long)got, (unsigned long long)m->size);
	if (got > m->size)
		return ckpt_err_set(e, CKPT_ERR_REFUSED, where, "size mismatch: %llu bytes, manifest says %llu",
				    (unsigned long long)got, (unsigned long long)m->size);
	return 0;
}

int
ckpt_snap_member_verify(const struct ckpt_model_member *m, uint64_t got, uint64_t hash, const char *where,
	     struct ckpt_err *e)
{
	char h1[17], h2[17];

	if (ckpt_snap_member_size(m, got, where, e) < 0)
		return -1;
	if (hash != m->xxh3) {
		ckpt_hex64(hash, h1);
		ckpt_hex64(m->xxh3, h2);
		return ckpt_err_set(e, CKPT_ERR_REFUSED, where, "checksum mismatch: xxh3 %s, manifest says %s",
				    h1, h2);
	}
	return 0;
}

/*
 * Read up to size bytes of fd into buf (NULL: only hash, and check with chk when not NULL), then
 * look for one more; the count or -1.
 */
int64_t
ckpt_snap_read_fd(int fd, unsigned char *buf, uint64_t size, struct ckpt_hasher *h,
		  struct ckpt_model_check *chk, const char *where, struct ckpt_err *e)
{
	static unsigned char scratch[1 << 16];
	uint64_t got = 0;

	for (;;) {
		uint64_t left = size - got;
		size_t want = got < size ? (left < SNAP_BLOCK ? (size_t)left : SNAP_BLOCK) : 1;
		unsigned char *p = got < size ? (buf ? buf + got : NULL) : scratch;
		ssize_t n;

		if (p == NULL)
			p = scratch, want = want < sizeof scratch ? want : sizeof scratch;
		n = read(fd, p, want);
		if (n < 0)
			return ckpt_err_sys(e, where, "read error");
		if (n == 0 || got >= size)
			return (int64_t)(got + (uint64_t)n);
		ckpt_hasher_update(h, p, (size_t)n);
		if (chk)
			ckpt_model_check_feed(chk, p, (size_t)n);
		got += (uint64_t)n;
	}
}

/* Read member data from a libarchive reader (a != NULL) or a file descriptor. */
static unsigned char *
read_member(struct archive *a, int fd, const struct ckpt_model_member *m, const char *where,
	    struct ckpt_err *e)
{
	struct sink k = {.cap = m->size, .where = where, .e = e};
	int64_t got = 0;

	if (m->size > SIZE_MAX - 1) {
		ckpt_err_set(e, CKPT_ERR_INPUT, where, "member too large for memory");
		return NULL;
	}
	k.buf = malloc(m->size ? (size_t)m->size : 1);
	k.h = ckpt_hasher_new();
	if (k.buf == NULL || k.h == NULL) {
		ckpt_err_nomem(e, where);
		goto fail;
	}
	if (a) {
		got = ckpt_arc_stream(a, sink_put, &k, where, e);
	} else {
		got = ckpt_snap_read_fd(fd, k.buf, m->size, k.h, NULL, where, e);
	}
	if (got < 0 || ckpt_snap_member_verify(m, (uint64_t)got, ckpt_hasher_digest(k.h), where, e) < 0)
		goto fail;
	ckpt_hasher_free(k.h);
	return k.buf;
fail:
	ckpt_hasher_free(k.h);
	free(k.buf);
	return NULL;
}

/* ---- loading a subtask */

/* Position the reader at member m: forward from where it is, else once more from the start. */
static int
seek_member(struct ckpt_snap_arch *b, const struct ckpt_model_member *m, const char *where, struct ckpt_err *e)
{
	for (int pass = 0; pass < 2; pass++) {
		struct archive_entry *ent;
		int r;

		if (b->a == NULL) {
			b->a = ckpt_arc_open_read(b->fd, b->name, e);
			if (b->a == NULL || ckpt_arc_next(b->a, &ent, b->name, e) <= 0)
				return -1;
			b->fresh = 1;
		} else if (b->fresh) {
			pass = 1;
		}
		while ((r = ckpt_arc_next(b->a, &ent, b->name, e)) > 0) {
			b->fresh = 0;
			if (strcmp(archive_entry_pathname(ent), m->name) == 0) {
				if (archive_entry_size_is_set(ent) && (uint64_t)archive_entry_size(ent) != m->size)
					return ckpt_err_set(e, CKPT_ERR_REFUSED, where,
							    "size mismatch: %lld bytes, manifest says %llu",
							    (long long)archive_entry_size(ent),
							    (unsigned long long)m->size);
				return 0;
			}
		}
		ckpt_arc_close(b->a);
		b->a = NULL;
		if (r < 0)
			return -1;
	}
	return ckpt_err_set(e, CKPT_ERR_REFUSED, where, "missing member");
}

static unsigned char *
fetch_member(struct ckpt_snap_arch *b, const struct ckpt_model_member *m, const char *where,
	     struct ckpt_err *e)
{
	unsigned char *buf;
	char p[4096];
	int fd;

	if (b->dir == NULL) {
		if (seek_member(b, m, where, e) < 0)
			return NULL;
		buf = read_member(b->a, -1, m, where, e);
		if (buf == NULL) {
			ckpt_arc_close(b->a); /* its position is unknown now */
			b->a = NULL;
		}
		return buf;
	}
	snprintf(p, sizeof p, "%s/%s", b->dir, m->name);
	fd = open(p, O_RDONLY);
	if (fd < 0) {
		if (errno == ENOENT)
			ckpt_err_set(e, CKPT_ERR_REFUSED, where, "missing member");
		else
			ckpt_err_sys(e, where, "cannot open");
		return NULL;
	}
	buf = read_member(NULL, fd, m, where, e);
	close(fd);
	return buf;
}

int
ckpt_snap_arch_load(struct ckpt_snapshot *s, struct ckpt_operator *op, struct ckpt_subtask *st,
		    struct ckpt_err *e)
{
	struct ckpt_snap_arch *b = s->backing;
	const struct ckpt_model_member *m = st->member;
	char where[1024];
	unsigned char *buf;

	(void)op;
	snprintf(where, sizeof where, "%s:%s", b->name, m->name);
	buf = fetch_member(b, m, where, e);
	if (buf == NULL)
		return -1;
	if (ckpt_model_decode_subtask(st, buf, (size_t)m->size, where, e) < 0) {
		ckpt_subtask_unload(st);
		return -1;
	}
	return 0;
}

/* ---- opening */

/* Read the manifest, the current member of a; NULL with e set. */
struct ckpt_snapshot *
ckpt_snap_read_manifest(char *text, size_t len, const char *name, struct ckpt_model_member **members,
		   size_t *nmembers, struct ckpt_err *e)
{
	struct ckpt_jdoc doc = {.src = text, .len = len, .line0 = 1, .col0 = 1};
	char where[1024];
	json_error_t jerr;
	struct ckpt_snapshot *s;

	snprintf(where, sizeof where, "%s:%s", name, SNAP_MANIFEST_NAME);
	doc.name = where;
	doc.root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (doc.root == NULL) {
		char w2[1100];

		snprintf(w2, sizeof w2, "%s:%d:%d", where, jerr.line, jerr.column);
		ckpt_err_set(e, CKPT_ERR_INPUT, w2, "%s", jerr.text);
		return NULL;
	}
	s = ckpt_model_from_json(&doc, SNAP_MANIFEST, &ckpt_flink_typed_entries, members, nmembers, e);
	json_decref(doc.root);
	return s;
}

static int
grow_put(void *arg, const void *p, size_t n, int64_t off)
{
	struct ckpt_snap_grow *g = arg;

	(void)off;
	if (g->len + n > SNAP_MANIFEST_LIMIT)
		return ckpt_err_set(g->e, CKPT_ERR_INPUT, g->where, "manifest larger than 1 GiB");
	if (ckpt_grow(&g->buf, &g->cap, g->len + n, 1, 65536, NULL) < 0)
		return ckpt_err_nomem(g->e, g->where);
	memcpy(g->buf + g->len, p, n);
	g->len += n;
	return 0;
}

/* Open fd as an archive: the manifest must be its first member. */
struct archive *
ckpt_snap_open_manifest(int fd, const char *name, struct ckpt_snap_grow *g, struct ckpt_err *e)
{
	struct archive_entry *ent;
	struct archive *a = ckpt_arc_open_read(fd, name, e);
	int r;

	if (a == NULL)
		return NULL;
	r = ckpt_arc_next(a, &ent, name, e);
	if (r == 0)
		ckpt_err_set(e, CKPT_ERR_INPUT, name, "not a snapshot: empty archive");
	else if (r > 0 && strcmp(archive_entry_pathname(ent), SNAP_MANIFEST_NAME) != 0)
		r = ckpt_err_set(e, CKPT_ERR_INPUT, name, "not a ckpt archive: first member is \"%s\", not %s",
				 archive_entry_pathname(ent), SNAP_MANIFEST_NAME);
	if (r > 0) {
		g->where = name;
		g->e = e;
		if (ckpt_arc_stream(a, grow_put, g, name, e) >= 0)
			return a;
	}
	ckpt_arc_close(a);
	return NULL;
}

static struct ckpt_snap_arch *
new_backing(const char *format, const char *name, struct ckpt_err *e)
{
	struct ckpt_snap_arch *b = ckpt_calloc(1, sizeof *b, e);

	if (b == NULL)
		return NULL;
	b->base.format = format;
	b->base.load = ckpt_snap_arch_load;
	b->base.free = arch_free;
	b->fd = -1;
	b->name = ckpt_strdup(name, e);
	if (b->name == NULL) {
		free(b);
		return NULL;
	}
	return b;
}

static struct ckpt_snapshot *
open_archive(int fd, const char *name, struct ckpt_err *e)
{
	struct ckpt_snap_grow g = {0};
	struct archive *a = ckpt_snap_open_manifest(fd, name, &g, e);
	struct ckpt_snap_arch *b;
	struct ckpt_snapshot *s = NULL;
	const char *format;

	if (a == NULL)
		goto fail;
	format = (archive_format(a) & ARCHIVE_FORMAT_BASE_MASK) == ARCHIVE_FORMAT_ZIP ? "zip" :
		 archive_filter_code(a, 0) == ARCHIVE_FILTER_GZIP ? "tar.gz" :
		 archive_filter_code(a, 0) == ARCHIVE_FILTER_NONE ? "tar" : "compressed tar";
	b = new_backing(format, name, e);
	if (b == NULL)
		goto fail;
	b->base.archive = strcmp(format, "compressed tar") != 0; /* as redist/ has reopened them */
	s = ckpt_snap_read_manifest(g.buf, g.len, name, &b->members, &b->nmembers, e);
	if (s == NULL) {
		arch_free(&b->base);
		goto fail;
	}
	b->fd = fd;
	b->a = a;
	b->fresh = 1;
	s->backing = b;
	free(g.buf);
	return s;
fail:
	ckpt_arc_close(a);
	free(g.buf);
	close(fd);
	return NULL;
}

static struct ckpt_snapshot *
open_dir(const char *path, struct ckpt_err *e)
{
	char p[4096];
	FILE *f;
	char *text = NULL;
	size_t len;
	int r;
	struct ckpt_snap_arch *b;
	struct ckpt_snapshot *s;

	snprintf(p, sizeof p, "%s/%s", path, SNAP_MANIFEST_NAME);
	f = fopen(p, "rb");
	if (f == NULL && errno == ENOENT) {
		snprintf(p, sizeof p, "%s/_metadata", path);
		if (access(p, F_OK) == 0)
			return ckpt_snapshot_open(p, e);
		ckpt_err_set(e, CKPT_ERR_INPUT, path, "not a snapshot: no %s and no _metadata%s", SNAP_MANIFEST_NAME,
				    ckpt_snap_dir_hint(path));
		return NULL;
	}
	if (f == NULL) {
		ckpt_err_sys(e, p, "cannot open");
		return NULL;
	}
	r = ckpt_read_all(f, p, &text, &len, e);
	fclose(f);
	if (r < 0)
		return NULL;
	b = new_backing("directory", path, e);
	s = b ? ckpt_snap_read_manifest(text, len, path, &b->members, &b->nmembers, e) : NULL;
	free(text);
	if (s == NULL) {
		if (b)
			arch_free(&b->base);
		return NULL;
	}
	b->dir = ckpt_strdup(path, e);
	if (b->dir == NULL) {
		ckpt_snapshot_free(s);
		arch_free(&b->base);
		return NULL;
	}
	s->backing = b;
	return s;
}

static struct ckpt_snapshot *
open_flink(int fd, const char *name, struct ckpt_err *e)
{
	struct ckpt_snapshot *s = NULL;
	FILE *f = fdopen(fd, "rb");
	char *buf;
	size_t len;

	if (f == NULL) {
		ckpt_err_sys(e, name, "cannot open");
		close(fd);
		return NULL;
	}
	if (ckpt_read_all(f, name, &buf, &len, e) == 0) {
		s = ckpt_fmeta_decode(buf, len, name, e);
		free(buf);
	}
	fclose(f);
	if (s && s->backing == NULL && (s->backing = ckpt_flink_backing_new(name, e)) == NULL) {
		ckpt_snapshot_free(s);
		return NULL;
	}
	return s;
}

/* A state document: entries as bytes, and flink/'s typed ones refused with a word on the form. */
struct ckpt_snapshot *
ckpt_snapshot_from_json(const struct ckpt_jdoc *doc, struct ckpt_err *e)
{
	return ckpt_model_from_json(doc, SNAP_DOC, &ckpt_flink_typed_entries, NULL, NULL, e);
}

static struct ckpt_snapshot *
open_json(const char *path, struct ckpt_err *e)
{
	struct ckpt_jdoc *doc = ckpt_jdoc_load(path, e);
	struct ckpt_snapshot *s;

	if (doc == NULL)
		return NULL;
	s = ckpt_snapshot_from_json(doc, e);
	ckpt_jdoc_free(doc);
	return s;
}

int
ckpt_snap_is_json_start(int c)
{
	return c == '{' || c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static struct ckpt_snapshot *
open_stdin(struct ckpt_err *e)
{
	int c = getc(stdin), fd;
	unsigned char head[4];
	ssize_t n;
	off_t size;

	if (c == EOF) {
		ckpt_err_set(e, CKPT_ERR_INPUT, "<stdin>", "empty input");
		return NULL;
	}
	ungetc(c, stdin);
	if (ckpt_snap_is_json_start(c))
		return open_json(NULL, e);
	/* spooled, so that members can be read again */
	if ((fd = ckpt_spool(stdin, "<stdin>", &size, e)) < 0)
		return NULL;
	if ((n = pread(fd, head, 4, 0)) > 0 && ckpt_fmeta_sniff(head, (size_t)n)) {
		lseek(fd, 0, SEEK_SET);
		return open_flink(fd, "<stdin>", e);
	}
	return open_archive(fd, "<stdin>", e);
}

static int
count_key(void *arg, const struct ckpt_s3_entry *o)
{
	(void)o;
	++*(size_t *)arg;
	return 0;
}

/* A Flink _metadata in S3, named itself or by its directory's prefix: fetched whole (it is small);
 * the state files it names are read later by range (flink/state.c). */
static struct ckpt_snapshot *
open_s3(const char *path, struct ckpt_err *e)
{
	char url[4096], meta[4200];
	unsigned char *buf = NULL;
	struct ckpt_snapshot *s = NULL;
	size_t len, n, nkeys = 0;
	uint64_t size;
	int r = 1;

	snprintf(url, sizeof url, "s3://%s", strstr(path, "://") + 3);
	for (n = strlen(url); n > 5 && url[n - 1] == '/';)
		url[--n] = '\0';
	snprintf(meta, sizeof meta, "%s", url);
	if (path[strlen(path) - 1] != '/' && (r = ckpt_s3_stat(meta, &size, e)) < 0)
		return NULL;
	if (r == 1) { /* not an object: a directory's prefix */
		snprintf(meta, sizeof meta, "%s/_metadata", url);
		if ((r = ckpt_s3_stat(meta, &size, e)) < 0)
			return NULL;
		if (r == 1) {
			snprintf(meta, sizeof meta, "%s/", url);
			if (ckpt_s3_list(meta, count_key, &nkeys, e) < 0)
				return NULL;
			ckpt_err_set(e, CKPT_ERR_INPUT, path, "not a snapshot: no _metadata (%zu objects under %s)", nkeys,
				     meta);
			return NULL;
		}
	}
	if (ckpt_s3_get(meta, &buf, &len, e) < 0)
		return NULL;
	if (!ckpt_fmeta_sniff(buf, len))
		ckpt_err_set(e, CKPT_ERR_INPUT, meta, "not a Flink _metadata (only those are read from S3)");
	else if ((s = ckpt_fmeta_decode(buf, len, meta, e)) != NULL && s->backing == NULL &&
		 (s->backing = ckpt_flink_backing_new(meta, e)) == NULL) {
		ckpt_snapshot_free(s);
		s = NULL;
	}
	free(buf);
	return s;
}

/* A file called _metadata is Flink's, whatever it holds: its faults are said in Flink's terms. */
static int
named_metadata(const char *path)
{
	const char *base = strrchr(path, '/');

	return strcmp(base ? base + 1 : path, "_metadata") == 0;
}

struct ckpt_snapshot *
ckpt_snapshot_open(const char *path, struct ckpt_err *e)
{
	unsigned char head[512];
	struct stat sb;
	ssize_t n, i = 0;
	int fd;

	if (path == NULL || strcmp(path, "-") == 0)
		return open_stdin(e);
	if (ckpt_s3_is_url(path))
		return open_s3(path, e);
	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
		return open_dir(path, e);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		ckpt_err_sys(e, path, "cannot open");
		return NULL;
	}
	n = pread(fd, head, sizeof head, 0);
	if (n <= 0) {
		if (n < 0)
			ckpt_err_sys(e, path, "read error");
		else if (named_metadata(path))
			ckpt_err_set(e, CKPT_ERR_INPUT, path, "empty file: a Flink _metadata starts with its magic number "
				     "and version (8 bytes)");
		else
			ckpt_err_set(e, CKPT_ERR_INPUT, path, "empty input");
		close(fd);
		return NULL;
	}
	if (ckpt_fmeta_sniff(head, (size_t)n) || named_metadata(path))
		return open_flink(fd, path, e);
	while (i < n && head[i] != '{' && ckpt_snap_is_json_start(head[i]))
		i++;
	if (i < n && head[i] == '{') {
		close(fd);
		return open_json(path, e);
	}
	return open_archive(fd, path, e);
}

int
ckpt_snapshot_is_flink(const char *path)
{
	unsigned char head[4];
	char p[4096];
	struct stat sb;
	FILE *f;
	size_t n = 0;

	if (path == NULL || strcmp(path, "-") == 0)
		return 0;
	if (ckpt_s3_is_url(path)) /* ckpt's own archives are not read from S3 */
		return 1;
	snprintf(p, sizeof p, "%s", path);
	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		snprintf(p, sizeof p, "%s/MANIFEST.json", path);
		if (access(p, F_OK) == 0)
			return 0;
		snprintf(p, sizeof p, "%s/_metadata", path);
		return access(p, F_OK) == 0;
	}
	if (named_metadata(p))
		return 1;
	if ((f = fopen(p, "rb")) != NULL) {
		n = fread(head, 1, 4, f);
		fclose(f);
	}
	return ckpt_fmeta_sniff(head, n);
}
