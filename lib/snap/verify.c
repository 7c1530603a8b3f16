/*
 * verify.c: a snapshot's members against its manifest: the summary's check that
 * every member is there, whole, and -c's streaming verification of every byte.
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

#include "snap.h"

/* ---- the members present, for the summary */

static int
by_member_name(const void *a, const void *b)
{
	return strcmp((*(struct ckpt_model_member *const *)a)->name, (*(struct ckpt_model_member *const *)b)->name);
}

/* The member called name, by binary search in idx (sorted by name). */
static struct ckpt_model_member *
member_named(struct ckpt_model_member **idx, size_t n, const char *name)
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
dir_members(struct ckpt_snap_arch *b, struct ckpt_err *e)
{
	for (size_t i = 0; i < b->nmembers; i++) {
		char p[4096], where[4096];
		struct stat sb;

		snprintf(p, sizeof p, "%s/%s", b->dir, b->members[i].name);
		snprintf(where, sizeof where, "%s:%s", b->name, b->members[i].name);
		if (stat(p, &sb) != 0)
			return errno == ENOENT ? ckpt_err_set(e, CKPT_ERR_REFUSED, where, "missing member")
					       : ckpt_err_sys(e, where, "cannot open");
		if (ckpt_snap_member_size(&b->members[i], (uint64_t)sb.st_size, where, e) < 0)
			return -1;
	}
	return 0;
}

/* Walk the member headers (a tar's data is skipped by seeking), comparing names and sizes. */
static int
walk_members(struct ckpt_snap_arch *b, struct ckpt_model_member **idx, unsigned char *found,
	     struct ckpt_err *e)
{
	struct archive *a = ckpt_arc_open_read(b->fd, b->name, e);
	struct archive_entry *ent;
	char where[4096];
	int r = -1, n;

	if (a == NULL)
		return -1;
	while ((n = ckpt_arc_next(a, &ent, b->name, e)) > 0) {
		const char *name = archive_entry_pathname(ent);
		struct ckpt_model_member *m = member_named(idx, b->nmembers, name);

		snprintf(where, sizeof where, "%s:%s", b->name, name);
		if (m == NULL)
			continue; /* the manifest, or an extra member: -c reports those */
		found[m - b->members] = 1;
		if (archive_entry_size_is_set(ent) &&
		    ckpt_snap_member_size(m, (uint64_t)archive_entry_size(ent), where, e) < 0)
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
	struct ckpt_snap_arch *b = s->backing;
	struct ckpt_model_member **idx;
	unsigned char *found;
	int r;

	if (b == NULL || b->base.load != ckpt_snap_arch_load)
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

/* ---- verifying */

struct verify {
	const char *name;
	ckpt_verify_report *report;
	void *arg;
	struct ckpt_model_member *members;
	size_t nmembers;
	struct ckpt_model_member **order; /* the members sorted by name */
	struct ckpt_snapshot *snap;      /* the manifest's */
	const struct ckpt_subtask **sub; /* each member's subtask, by member index */
	struct ckpt_hasher *h;
	struct ckpt_model_check *chk;     /* the member being read, or NULL */
	long problems;
	uint64_t nchecked, bytes;
	struct ckpt_err io; /* the first member there that could not be read: -c cannot answer */
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
	struct ckpt_snapshot *s = ckpt_snap_read_manifest(text, len, v->name, &v->members, &v->nmembers, &me);

	if (s == NULL) {
		char what[1100];

		if (me.kind == CKPT_ERR_NOMEM)
			return ckpt_err_nomem(e, v->name);
		snprintf(what, sizeof what, "damaged manifest: %s", me.text);
		v->report(v->arg, me.where, what);
		v->problems++;
		return 1;
	}
	v->snap = s;
	v->order = ckpt_calloc(v->nmembers ? v->nmembers : 1, sizeof *v->order, e);
	v->sub = ckpt_calloc(v->nmembers ? v->nmembers : 1, sizeof *v->sub, e);
	if (v->order == NULL || v->sub == NULL)
		return -1;
	for (size_t i = 0; i < s->nops; i++)
		for (size_t k = 0; k < s->ops[i].nsubtasks; k++)
			if (s->ops[i].subtasks[k].member)
				v->sub[(struct ckpt_model_member *)s->ops[i].subtasks[k].member - v->members] =
					&s->ops[i].subtasks[k];
	for (size_t i = 0; i < v->nmembers; i++) {
		v->order[i] = &v->members[i];
		v->members[i].seen = 0; /* the loader marked the members subtasks name */
	}
	qsort(v->order, v->nmembers, sizeof *v->order, by_member_name);
	return 0;
}

/* Start reading member m: its hash and, when a subtask's state file, its parse check. */
static int
verify_start(struct verify *v, struct ckpt_model_member *m, struct ckpt_err *e)
{
	const struct ckpt_subtask *st = v->sub[m - v->members];

	ckpt_hasher_reset(v->h);
	if (st == NULL)
		return 0;
	v->chk = ckpt_model_check_new(st, m->size);
	if (v->chk == NULL)
		return ckpt_err_nomem(e, v->name);
	return 0;
}

/* Member m read whole (got bytes): its size, its checksum, then (only when those are right) its parse. */
static void
verify_done(struct verify *v, uint64_t got, struct ckpt_model_member *m)
{
	struct ckpt_err me = {0};
	char where[1024], what[256];

	snprintf(where, sizeof where, "%s:%s", v->name, m->name);
	if (ckpt_snap_member_verify(m, got, ckpt_hasher_digest(v->h), where, &me) < 0) {
		v->report(v->arg, me.where, me.text);
		v->problems++;
	} else if (v->chk && ckpt_model_check_end(v->chk, what, sizeof what) < 0) {
		v->report(v->arg, where, what);
		v->problems++;
	}
	ckpt_model_check_free(v->chk);
	v->chk = NULL;
}

static void
verify_missing(struct verify *v)
{
	for (size_t i = 0; i < v->nmembers; i++)
		if (!v->members[i].seen)
			problem(v, v->members[i].name, "missing member");
}

/* Each block read once: hashed and checked as it passes. */
static int
verify_block(void *arg, const void *p, size_t n, int64_t off)
{
	struct verify *v = arg;

	(void)off;
	ckpt_hasher_update(v->h, p, n);
	if (v->chk)
		ckpt_model_check_feed(v->chk, p, n);
	return 0;
}

/* One member of an archive: 0 checked, 1 the archive is cut (stop), -1 error. */
static int
verify_entry(struct verify *v, struct archive *a, const char *name, struct ckpt_err *e)
{
	struct ckpt_model_member *m = member_named(v->order, v->nmembers, name);
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
	if (verify_start(v, m, e) < 0)
		return -1;
	got = ckpt_arc_stream(a, verify_block, v, where, &me);
	if (got < 0) {
		ckpt_model_check_free(v->chk);
		v->chk = NULL;
		if (strstr(me.text, "runcated") != NULL || strstr(me.text, "premature") != NULL)
			problem(v, name, "truncated member: the archive ends inside it");
		else
			problem(v, name, "damaged member: %s", me.text);
		return 1;
	}
	v->nchecked++;
	v->bytes += (uint64_t)got;
	verify_done(v, (uint64_t)got, m);
	return 0;
}

static int
verify_archive(struct verify *v, int fd, struct ckpt_err *e)
{
	struct ckpt_err me = {0};
	struct ckpt_snap_grow g = {0};
	struct archive *a = ckpt_snap_open_manifest(fd, v->name, &g, &me);
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
	if (ckpt_progress_on()) {
		struct stat sb;

		ckpt_progress_begin(a, "bytes", fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) ? (uint64_t)sb.st_size : 0);
	}
	while (r == 0) {
		int n = ckpt_arc_next(a, &ent, v->name, &me);

		if (n == 0)
			break;
		if (n < 0) {
			problem(v, NULL, "truncated archive: %s", me.text);
			break;
		}
		if ((n = verify_entry(v, a, archive_entry_pathname(ent), e)) != 0) {
			r = n < 0 ? -1 : r;
			break;
		}
	}
	ckpt_progress_end(a);
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
verify_dir(struct verify *v, const char *dir, struct ckpt_err *e)
{
	char p[4096], *text = NULL;
	size_t len;
	FILE *f;
	int fd, r;

	snprintf(p, sizeof p, "%s/%s", dir, SNAP_MANIFEST_NAME);
	if ((f = fopen(p, "rb")) == NULL && errno == ENOENT) /* a _metadata would have made it Flink's */
		return ckpt_err_set(e, CKPT_ERR_INPUT, dir, "not a snapshot: no %s and no _metadata%s", SNAP_MANIFEST_NAME,
				    ckpt_snap_dir_hint(dir));
	if (f == NULL)
		return ckpt_err_sys(e, p, "cannot open");
	r = ckpt_read_all(f, p, &text, &len, e);
	fclose(f);
	if (r < 0)
		return -1;
	r = verify_manifest(v, text, len, e);
	free(text);
	if (r != 0)
		return r < 0 ? -1 : 0;
	for (size_t i = 0; i < v->nmembers; i++) {
		struct ckpt_model_member *m = &v->members[i];
		int64_t got;

		snprintf(p, sizeof p, "%s/%s", dir, m->name);
		if ((fd = open(p, O_RDONLY)) < 0 && (errno == ENOENT || errno == ENOTDIR))
			continue; /* reported as missing */
		if (fd < 0) {
			int err = errno;

			m->seen = 1;
			if (v->io.kind == CKPT_ERR_NONE)
				ckpt_err_sys(&v->io, p, "cannot open");
			problem(v, m->name, "cannot open: %s", strerror(err));
			continue;
		}
		if (verify_start(v, m, e) < 0) {
			close(fd);
			return -1;
		}
		got = ckpt_snap_read_fd(fd, NULL, m->size, v->h, v->chk, p, e);
		close(fd);
		if (got < 0) {
			ckpt_model_check_free(v->chk);
			v->chk = NULL;
			return -1;
		}
		m->seen = 1;
		v->nchecked++;
		v->bytes += (uint64_t)got;
		verify_done(v, (uint64_t)got, m);
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
	struct stat sb;
	int fd = -1, r = -1;

	v.h = ckpt_hasher_new();
	if (v.h == NULL)
		return ckpt_err_nomem(e, v.name);
	if (!is_stdin && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		r = verify_dir(&v, path, e);
		goto out;
	}
	fd = is_stdin ? 0 : open(path, O_RDONLY);
	if (fd < 0) {
		ckpt_err_sys(e, path, "cannot open");
		goto out;
	}
	{ /* standard input too when it is a file (a pipe cannot be read twice: libarchive says then) */
		unsigned char head[512];
		ssize_t n = pread(fd, head, sizeof head, 0), i = 0;

		while (i < n && head[i] != '{' && ckpt_snap_is_json_start(head[i]))
			i++;
		if (n == 0) {
			ckpt_err_set(e, CKPT_ERR_INPUT, v.name, "empty input");
			goto out;
		}
		if (n > 0 && is_stdin && ckpt_fmeta_sniff(head, (size_t)n)) {
			ckpt_err_set(e, CKPT_ERR_INPUT, v.name, "a Flink _metadata: -c reads the state files beside it: "
				     "name the _metadata or its directory, not standard input");
			goto out;
		}
		if ((n > 0 && ckpt_fmeta_sniff(head, (size_t)n)) || (i < n && head[i] == '{')) {
			ckpt_err_set(e, CKPT_ERR_INPUT, v.name, "not an archive: only archives carry checksums");
			goto out;
		}
	}
	r = verify_archive(&v, fd, e);
out:
	if (fd > 0)
		close(fd);
	ckpt_hasher_free(v.h);
	ckpt_snapshot_free(v.snap);
	free(v.sub);
	free(v.order);
	ckpt_model_members_free(v.members, v.nmembers);
	*members = v.nchecked;
	*bytes = v.bytes;
	if (r >= 0 && v.io.kind != CKPT_ERR_NONE)
		*e = v.io;
	return r < 0 ? -1 : v.problems;
}
