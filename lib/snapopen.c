/*
 * snapopen.c: opening any snapshot (archive, directory, state document, Flink
 * _metadata), loading one subtask's state file at a time, and verifying an
 * archive against its manifest, streaming.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "flink-state.h"
#include "snapshot-int.h"

#define MANIFEST_LIMIT ((uint64_t)1 << 30)
#define METADATA_LIMIT ((uint64_t)1 << 30)

struct arch_backing {
	struct ckpt_snap_backing base;
	char *name;        /* as the user named it ("<stdin>" for standard input) */
	int fd;            /* archives; -1 for directories */
	char *dir;         /* directories */
	struct ckpt_snap_member *members;
	size_t nmembers;
	struct archive *a; /* reader left after the last member it read, or NULL */
	int fresh;         /* a has read only the manifest */
};

static void
arch_free(struct ckpt_snap_backing *base)
{
	struct arch_backing *b = (struct arch_backing *)base;

	ckpt_arc_close(b->a);
	if (b->fd >= 0)
		close(b->fd);
	ckpt_snap_members_free(b->members, b->nmembers);
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
static int
member_size(const struct ckpt_snap_member *m, uint64_t got, const char *where, struct ckpt_err *e)
{
	if (got < m->size)
		return ckpt_err_set(e, CKPT_ERR_REFUSED, where, "truncated member: %llu of %llu bytes",
				    (unsigned long long)got, (unsigned long long)m->size);
	if (got > m->size)
		return ckpt_err_set(e, CKPT_ERR_REFUSED, where, "size mismatch: %llu bytes, manifest says %llu",
				    (unsigned long long)got, (unsigned long long)m->size);
	return 0;
}

static int
check_member(const struct ckpt_snap_member *m, uint64_t got, uint64_t hash, const char *where,
	     struct ckpt_err *e)
{
	char h1[17], h2[17];

	if (member_size(m, got, where, e) < 0)
		return -1;
	if (hash != m->xxh3) {
		ckpt_hex64(hash, h1);
		ckpt_hex64(m->xxh3, h2);
		return ckpt_err_set(e, CKPT_ERR_REFUSED, where, "checksum mismatch: xxh3 %s, manifest says %s",
				    h1, h2);
	}
	return 0;
}

/* Read up to size bytes of fd into buf (NULL: only hash), then look for one more; the count or -1. */
static int64_t
read_fd(int fd, unsigned char *buf, uint64_t size, struct ckpt_hasher *h, const char *where,
	struct ckpt_err *e)
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
		got += (uint64_t)n;
	}
}

/* Read member data from a libarchive reader (a != NULL) or a file descriptor. */
static unsigned char *
read_member(struct archive *a, int fd, const struct ckpt_snap_member *m, const char *where,
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
		ckpt_err_set(e, CKPT_ERR_NOMEM, where, "out of memory");
		goto fail;
	}
	if (a) {
		got = ckpt_arc_stream(a, sink_put, &k, where, e);
	} else {
		got = read_fd(fd, k.buf, m->size, k.h, where, e);
	}
	if (got < 0 || check_member(m, (uint64_t)got, ckpt_hasher_digest(k.h), where, e) < 0)
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
seek_member(struct arch_backing *b, const struct ckpt_snap_member *m, const char *where, struct ckpt_err *e)
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
fetch_member(struct arch_backing *b, const struct ckpt_snap_member *m, const char *where, struct ckpt_err *e)
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

static int
arch_load(struct ckpt_snapshot *s, struct ckpt_operator *op, struct ckpt_subtask *st, struct ckpt_err *e)
{
	struct arch_backing *b = s->backing;
	const struct ckpt_snap_member *m = st->member;
	char where[1024];
	unsigned char *buf;

	(void)op;
	snprintf(where, sizeof where, "%s:%s", b->name, m->name);
	buf = fetch_member(b, m, where, e);
	if (buf == NULL)
		return -1;
	if (ckpt_snap_decode_subtask(st, buf, (size_t)m->size, where, e) < 0) {
		ckpt_subtask_unload(st);
		return -1;
	}
	return 0;
}

int
ckpt_subtask_load(struct ckpt_snapshot *s, struct ckpt_operator *op, struct ckpt_subtask *st,
		  struct ckpt_err *e)
{
	struct ckpt_snap_backing *b = s->backing;

	if (st->loaded)
		return 0;
	if (b && b->load && strcmp(b->format, "flink metadata") == 0) /* ckpt_flink_state_enable */
		return b->load(s, op, st, e);
	if (st->member == NULL || b == NULL || b->load == NULL) {
		if (st->nhandles)
			return ckpt_err_set(e, CKPT_ERR_INPUT, "",
					    "operator \"%s\": subtask %u: its state is in Flink's state files, "
					    "not in the snapshot", op->id, st->index);
		st->loaded = 1; /* nothing stored: no entries */
		return 0;
	}
	return b->load(s, op, st, e);
}

/* ---- the members present, for the summary */

static int
by_member_name(const void *a, const void *b)
{
	return strcmp((*(struct ckpt_snap_member *const *)a)->name, (*(struct ckpt_snap_member *const *)b)->name);
}

/* The member called name, by binary search in idx (sorted by name). */
static struct ckpt_snap_member *
member_named(struct ckpt_snap_member **idx, size_t n, const char *name)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(idx[mid]->name, name);

		if (c == 0)
			return idx[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int
dir_members(struct arch_backing *b, struct ckpt_err *e)
{
	for (size_t i = 0; i < b->nmembers; i++) {
		char p[4096], where[4096];
		struct stat sb;

		snprintf(p, sizeof p, "%s/%s", b->dir, b->members[i].name);
		snprintf(where, sizeof where, "%s:%s", b->name, b->members[i].name);
		if (stat(p, &sb) != 0)
			return errno == ENOENT ? ckpt_err_set(e, CKPT_ERR_REFUSED, where, "missing member")
					       : ckpt_err_sys(e, where, "cannot open");
		if (member_size(&b->members[i], (uint64_t)sb.st_size, where, e) < 0)
			return -1;
	}
	return 0;
}

/* Walk the member headers (a tar's data is skipped by seeking), comparing names and sizes. */
static int
walk_members(struct arch_backing *b, struct ckpt_snap_member **idx, unsigned char *found, struct ckpt_err *e)
{
	struct archive *a = ckpt_arc_open_read(b->fd, b->name, e);
	struct archive_entry *ent;
	char where[4096];
	int r = -1, n;

	if (a == NULL)
		return -1;
	while ((n = ckpt_arc_next(a, &ent, b->name, e)) > 0) {
		const char *name = archive_entry_pathname(ent);
		struct ckpt_snap_member *m = member_named(idx, b->nmembers, name);

		snprintf(where, sizeof where, "%s:%s", b->name, name);
		if (m == NULL)
			continue; /* the manifest, or an extra member: -c reports those */
		found[m - b->members] = 1;
		if (archive_entry_size_is_set(ent) && member_size(m, (uint64_t)archive_entry_size(ent), where, e) < 0)
			goto out;
		if (ckpt_arc_skip(a, where, e) < 0) {
			/* -c's words */
			if (strstr(e->text, "runcated") != NULL || strstr(e->text, "premature") != NULL)
				ckpt_err_set(e, CKPT_ERR_REFUSED, where, "truncated member: the archive ends inside it");
			else
				ckpt_err_prefix(e, "damaged member");
			goto out;
		}
	}
	r = n;
out:
	ckpt_arc_close(a);
	return r;
}

int
ckpt_snap_members_check(struct ckpt_snapshot *s, struct ckpt_err *e)
{
	struct arch_backing *b = s->backing;
	struct ckpt_snap_member **idx;
	unsigned char *found;
	int r;

	if (b == NULL || b->base.load != arch_load)
		return 0;
	if (b->dir != NULL)
		return dir_members(b, e);
	found = ckpt_calloc(b->nmembers ? b->nmembers : 1, 1, e);
	idx = ckpt_calloc(b->nmembers ? b->nmembers : 1, sizeof *idx, e);
	if (found == NULL || idx == NULL) {
		free(found);
		free(idx);
		return -1;
	}
	for (size_t i = 0; i < b->nmembers; i++)
		idx[i] = &b->members[i];
	qsort(idx, b->nmembers, sizeof *idx, by_member_name);
	ckpt_arc_close(b->a); /* the walk moves the file offset under it */
	b->a = NULL;
	r = walk_members(b, idx, found, e);
	for (size_t i = 0; r == 0 && i < b->nmembers; i++)
		if (!found[i]) {
			char where[4096];

			snprintf(where, sizeof where, "%s:%s", b->name, b->members[i].name);
			r = ckpt_err_set(e, CKPT_ERR_REFUSED, where, "missing member");
		}
	free(found);
	free(idx);
	return r;
}

/* ---- opening */

/* Read the manifest, the current member of a; NULL with e set. */
static struct ckpt_snapshot *
read_manifest_text(char *text, size_t len, const char *name, struct ckpt_snap_member **members,
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
	s = ckpt_snap_from_json(&doc, SNAP_MANIFEST, members, nmembers, e);
	json_decref(doc.root);
	return s;
}

struct grow {
	char *buf;
	size_t len, cap;
	const char *where;
	struct ckpt_err *e;
};

static int
grow_put(void *arg, const void *p, size_t n, int64_t off)
{
	struct grow *g = arg;

	(void)off;
	if (g->len + n > MANIFEST_LIMIT)
		return ckpt_err_set(g->e, CKPT_ERR_INPUT, g->where, "manifest larger than 1 GiB");
	if (g->len + n > g->cap) {
		size_t nc = g->cap ? g->cap : 65536;
		char *t;

		while (nc < g->len + n)
			nc *= 2;
		t = realloc(g->buf, nc);
		if (t == NULL)
			return ckpt_err_set(g->e, CKPT_ERR_NOMEM, g->where, "out of memory");
		g->buf = t;
		g->cap = nc;
	}
	memcpy(g->buf + g->len, p, n);
	g->len += n;
	return 0;
}

/* Open fd as an archive: the manifest must be its first member. */
static struct archive *
open_manifest(int fd, const char *name, struct grow *g, struct ckpt_err *e)
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

static struct arch_backing *
new_backing(const char *format, const char *name, struct ckpt_err *e)
{
	struct arch_backing *b = ckpt_calloc(1, sizeof *b, e);

	if (b == NULL)
		return NULL;
	b->base.format = format;
	b->base.load = arch_load;
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
	struct grow g = {0};
	struct archive *a = open_manifest(fd, name, &g, e);
	struct arch_backing *b;
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
	s = read_manifest_text(g.buf, g.len, name, &b->members, &b->nmembers, e);
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

static int
read_file_fd(int fd, const char *name, uint64_t limit, char **out, size_t *len, struct ckpt_err *e)
{
	struct grow g = {.where = name, .e = e};
	char buf[65536];
	ssize_t n;

	while ((n = read(fd, buf, sizeof buf)) > 0) {
		if (g.len + (size_t)n > limit) {
			free(g.buf);
			return ckpt_err_set(e, CKPT_ERR_INPUT, name, "file larger than %llu bytes",
					    (unsigned long long)limit);
		}
		if (grow_put(&g, buf, (size_t)n, 0) < 0) {
			free(g.buf);
			return -1;
		}
	}
	if (n < 0) {
		free(g.buf);
		return ckpt_err_sys(e, name, "read error");
	}
	*out = g.buf;
	*len = g.len;
	return 0;
}

static struct ckpt_snapshot *
open_dir(const char *path, struct ckpt_err *e)
{
	char p[4096];
	int fd;
	char *text = NULL;
	size_t len;
	struct arch_backing *b;
	struct ckpt_snapshot *s;

	snprintf(p, sizeof p, "%s/%s", path, SNAP_MANIFEST_NAME);
	fd = open(p, O_RDONLY);
	if (fd < 0 && errno == ENOENT) {
		snprintf(p, sizeof p, "%s/_metadata", path);
		if (access(p, F_OK) == 0)
			return ckpt_snapshot_open(p, e);
		ckpt_err_set(e, CKPT_ERR_INPUT, path, "not a snapshot: no %s and no _metadata", SNAP_MANIFEST_NAME);
		return NULL;
	}
	if (fd < 0) {
		ckpt_err_sys(e, p, "cannot open");
		return NULL;
	}
	if (read_file_fd(fd, p, MANIFEST_LIMIT, &text, &len, e) < 0) {
		close(fd);
		return NULL;
	}
	close(fd);
	b = new_backing("directory", path, e);
	s = b ? read_manifest_text(text, len, path, &b->members, &b->nmembers, e) : NULL;
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
	char *buf;
	size_t len;

	if (read_file_fd(fd, name, METADATA_LIMIT, &buf, &len, e) == 0) {
		s = ckpt_flinkmeta_decode(buf, len, name, e);
		free(buf);
	}
	close(fd);
	if (s && s->backing == NULL && (s->backing = ckpt_flink_backing_new(name, e)) == NULL) {
		ckpt_snapshot_free(s);
		return NULL;
	}
	return s;
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

static int
is_json_start(int c)
{
	return c == '{' || c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Copy standard input to an unlinked temporary file, so that members can be read again. */
static int
spool_stdin(struct ckpt_err *e)
{
	const char *tmp = getenv("TMPDIR");
	char t[4096], buf[65536];
	size_t n;
	int fd;

	snprintf(t, sizeof t, "%s/ckpt-stdin.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	fd = mkstemp(t);
	if (fd < 0)
		return ckpt_err_sys(e, "<stdin>", "cannot create a temporary file");
	unlink(t);
	while ((n = fread(buf, 1, sizeof buf, stdin)) > 0)
		if (write(fd, buf, n) != (ssize_t)n) {
			close(fd);
			return ckpt_err_sys(e, "<stdin>", "cannot spool");
		}
	if (ferror(stdin)) {
		close(fd);
		return ckpt_err_sys(e, "<stdin>", "read error");
	}
	return fd;
}

static struct ckpt_snapshot *
open_stdin(struct ckpt_err *e)
{
	int c = getc(stdin), fd;
	unsigned char head[4];

	if (c == EOF) {
		ckpt_err_set(e, CKPT_ERR_INPUT, "<stdin>", "empty input");
		return NULL;
	}
	ungetc(c, stdin);
	if (is_json_start(c))
		return open_json(NULL, e);
	fd = spool_stdin(e);
	if (fd < 0)
		return NULL;
	if (pread(fd, head, 4, 0) == 4 && ckpt_flinkmeta_sniff(head, 4)) {
		lseek(fd, 0, SEEK_SET);
		return open_flink(fd, "<stdin>", e);
	}
	return open_archive(fd, "<stdin>", e);
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
		else
			ckpt_err_set(e, CKPT_ERR_INPUT, path, "empty input");
		close(fd);
		return NULL;
	}
	if (ckpt_flinkmeta_sniff(head, (size_t)n))
		return open_flink(fd, path, e);
	while (i < n && head[i] != '{' && is_json_start(head[i]))
		i++;
	if (i < n && head[i] == '{') {
		close(fd);
		return open_json(path, e);
	}
	return open_archive(fd, path, e);
}

/* ---- verifying */

struct verify {
	const char *name;
	ckpt_verify_report *report;
	void *arg;
	struct ckpt_snap_member *members;
	size_t nmembers;
	struct ckpt_snap_member **order; /* the members sorted by name */
	long problems;
	uint64_t nchecked, bytes;
};

static void
problem(struct verify *v, const char *member, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
problem(struct verify *v, const char *member, const char *fmt, ...)
{
	char where[1024], what[1024];
	va_list ap;

	if (member)
		snprintf(where, sizeof where, "%s:%s", v->name, member);
	else
		snprintf(where, sizeof where, "%s", v->name);
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	v->report(v->arg, where, what);
	v->problems++;
}

/* Parse the manifest text; a damaged one is a problem (exit 1), not an error. */
static int
verify_manifest(struct verify *v, char *text, size_t len, struct ckpt_err *e)
{
	struct ckpt_err me = {0};
	struct ckpt_snapshot *s = read_manifest_text(text, len, v->name, &v->members, &v->nmembers, &me);

	if (s == NULL) {
		char what[1100];

		if (me.kind == CKPT_ERR_NOMEM)
			return ckpt_err_set(e, CKPT_ERR_NOMEM, v->name, "out of memory");
		snprintf(what, sizeof what, "damaged manifest: %s", me.text);
		v->report(v->arg, me.where, what);
		v->problems++;
		return 1;
	}
	ckpt_snapshot_free(s);
	v->order = ckpt_calloc(v->nmembers ? v->nmembers : 1, sizeof *v->order, e);
	if (v->order == NULL)
		return -1;
	for (size_t i = 0; i < v->nmembers; i++) {
		v->order[i] = &v->members[i];
		v->members[i].seen = 0; /* the loader marked the members subtasks name */
	}
	qsort(v->order, v->nmembers, sizeof *v->order, by_member_name);
	return 0;
}

static void
verify_done(struct verify *v, uint64_t got, uint64_t hash, struct ckpt_snap_member *m)
{
	struct ckpt_err me = {0};
	char where[1024];

	snprintf(where, sizeof where, "%s:%s", v->name, m->name);
	if (check_member(m, got, hash, where, &me) < 0) {
		v->report(v->arg, me.where, me.text);
		v->problems++;
	}
}

static void
verify_missing(struct verify *v)
{
	for (size_t i = 0; i < v->nmembers; i++)
		if (!v->members[i].seen)
			problem(v, v->members[i].name, "missing member");
}

static int
hash_block(void *arg, const void *p, size_t n, int64_t off)
{
	(void)off;
	ckpt_hasher_update(arg, p, n);
	return 0;
}

/* One member of an archive: 0 checked, 1 the archive is cut (stop), -1 error. */
static int
verify_entry(struct verify *v, struct archive *a, const char *name, struct ckpt_hasher *h)
{
	struct ckpt_snap_member *m = member_named(v->order, v->nmembers, name);
	struct ckpt_err me = {0};
	char where[1024];
	int64_t got;

	if (strcmp(name, SNAP_MANIFEST_NAME) == 0) {
		problem(v, name, "duplicate member");
		return 0;
	}
	if (m == NULL) {
		problem(v, name, "extra member (not in the manifest)");
		return 0;
	}
	if (m->seen) {
		problem(v, name, "duplicate member");
		return 0;
	}
	m->seen = 1;
	snprintf(where, sizeof where, "%s:%s", v->name, name);
	ckpt_hasher_reset(h);
	got = ckpt_arc_stream(a, hash_block, h, where, &me);
	if (got < 0) {
		if (strstr(me.text, "runcated") != NULL || strstr(me.text, "premature") != NULL)
			problem(v, name, "truncated member: the archive ends inside it");
		else
			problem(v, name, "damaged member: %s", me.text);
		return 1;
	}
	v->nchecked++;
	v->bytes += (uint64_t)got;
	verify_done(v, (uint64_t)got, ckpt_hasher_digest(h), m);
	return 0;
}

static int
verify_archive(struct verify *v, int fd, struct ckpt_hasher *h, struct ckpt_err *e)
{
	struct ckpt_err me = {0};
	struct grow g = {0};
	struct archive *a = open_manifest(fd, v->name, &g, &me);
	struct archive_entry *ent;
	int r;

	if (a == NULL) {
		free(g.buf);
		if (me.kind == CKPT_ERR_NOMEM || strstr(me.text, "not a snapshot") == me.text) {
			*e = me;
			return -1;
		}
		v->report(v->arg, me.where, me.text);
		v->problems++;
		return 0;
	}
	r = verify_manifest(v, g.buf, g.len, e);
	free(g.buf);
	while (r == 0) {
		int n = ckpt_arc_next(a, &ent, v->name, &me);

		if (n == 0)
			break;
		if (n < 0) {
			problem(v, NULL, "truncated archive: %s", me.text);
			break;
		}
		if (verify_entry(v, a, archive_entry_pathname(ent), h) != 0)
			break;
	}
	ckpt_arc_close(a);
	if (r == 0)
		verify_missing(v);
	return r < 0 ? -1 : 0;
}

/* Files of the directory tree under dir/rel that the manifest does not list. */
static int
verify_extra(struct verify *v, const char *dir, const char *rel, int depth)
{
	char p[4096], r2[4096];
	struct dirent *d;
	DIR *dh;

	snprintf(p, sizeof p, "%s%s%s", dir, *rel ? "/" : "", rel);
	if (depth > 64 || (dh = opendir(p)) == NULL)
		return 0;
	while ((d = readdir(dh)) != NULL) {
		struct stat sb;

		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
			continue;
		snprintf(r2, sizeof r2, "%s%s%s", rel, *rel ? "/" : "", d->d_name);
		snprintf(p, sizeof p, "%s/%s", dir, r2);
		if (lstat(p, &sb) != 0)
			continue;
		if (S_ISDIR(sb.st_mode))
			verify_extra(v, dir, r2, depth + 1);
		else if (strcmp(r2, SNAP_MANIFEST_NAME) != 0 && member_named(v->order, v->nmembers, r2) == NULL)
			problem(v, r2, "extra member (not in the manifest)");
	}
	closedir(dh);
	return 0;
}

static int
verify_dir(struct verify *v, const char *dir, struct ckpt_hasher *h, struct ckpt_err *e)
{
	char p[4096], *text = NULL;
	size_t len;
	int fd, r;

	snprintf(p, sizeof p, "%s/%s", dir, SNAP_MANIFEST_NAME);
	if ((fd = open(p, O_RDONLY)) < 0)
		return ckpt_err_sys(e, p, "cannot open");
	r = read_file_fd(fd, p, MANIFEST_LIMIT, &text, &len, e);
	close(fd);
	if (r < 0)
		return -1;
	r = verify_manifest(v, text, len, e);
	free(text);
	if (r != 0)
		return r < 0 ? -1 : 0;
	for (size_t i = 0; i < v->nmembers; i++) {
		struct ckpt_snap_member *m = &v->members[i];
		int64_t got;

		snprintf(p, sizeof p, "%s/%s", dir, m->name);
		if ((fd = open(p, O_RDONLY)) < 0)
			continue; /* reported as missing */
		ckpt_hasher_reset(h);
		got = read_fd(fd, NULL, m->size, h, p, e);
		close(fd);
		if (got < 0)
			return -1;
		m->seen = 1;
		v->nchecked++;
		v->bytes += (uint64_t)got;
		verify_done(v, (uint64_t)got, ckpt_hasher_digest(h), m);
	}
	verify_missing(v);
	return verify_extra(v, dir, "", 0);
}

long
ckpt_archive_verify(const char *path, ckpt_verify_report *report, void *arg, uint64_t *members,
		    uint64_t *bytes, struct ckpt_err *e)
{
	int is_stdin = path == NULL || strcmp(path, "-") == 0;
	struct verify v = {.name = is_stdin ? "<stdin>" : path, .report = report, .arg = arg};
	struct ckpt_hasher *h = ckpt_hasher_new();
	struct stat sb;
	int fd = -1, r = -1;

	if (h == NULL)
		return ckpt_err_set(e, CKPT_ERR_NOMEM, v.name, "out of memory");
	if (!is_stdin && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		r = verify_dir(&v, path, h, e);
		goto out;
	}
	fd = is_stdin ? 0 : open(path, O_RDONLY);
	if (fd < 0) {
		ckpt_err_sys(e, path, "cannot open");
		goto out;
	}
	if (!is_stdin) {
		unsigned char head[512];
		ssize_t n = pread(fd, head, sizeof head, 0), i = 0;

		while (i < n && head[i] != '{' && is_json_start(head[i]))
			i++;
		if ((n > 0 && ckpt_flinkmeta_sniff(head, (size_t)n)) || (i < n && head[i] == '{')) {
			ckpt_err_set(e, CKPT_ERR_INPUT, path, "not an archive: only archives carry checksums");
			goto out;
		}
	}
	r = verify_archive(&v, fd, h, e);
out:
	if (fd > 0)
		close(fd);
	ckpt_hasher_free(h);
	free(v.order);
	ckpt_snap_members_free(v.members, v.nmembers);
	*members = v.nchecked;
	*bytes = v.bytes;
	return r < 0 ? -1 : v.problems;
}
