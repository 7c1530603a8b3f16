/*
 * evlog.c: the job event log of FLIP-383 on disk: segments, record framing,
 * the buffered writer, the checking reader and the torn-tail-free copy.  The
 * reader also reads a log under an S3 prefix (s3://bucket/dir), by range.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "evlog.h"

#define READ_CHUNK (1u << 20)
#define SEGMENT_LIMIT 100000000u /* events.N with N below this */

/* ---- framing */

static void
encode_header(unsigned char h[CKPT_EVENT_HEADER], uint32_t type, const void *payload, size_t len)
{
	uint64_t x = ckpt_xxh3(payload, len);

	ckpt_store_be(h, (uint32_t)len, 4);
	ckpt_store_be(h + 4, type, 4);
	ckpt_store_be(h + 8, x, 8);
}

static char *
segment_path(const char *dir, uint32_t n, struct ckpt_err *e)
{
	size_t len = strlen(dir) + 32;
	char *p = ckpt_calloc(1, len, e);

	if (p != NULL)
		snprintf(p, len, "%s/events.%u", dir, n);
	return p;
}

/* N when name is "events.N" with N in canonical decimal, else -1. */
static long
segment_number(const char *name)
{
	const char *d = name + 7;
	long n = 0;

	if (strncmp(name, "events.", 7) != 0 || *d == '\0' || (d[0] == '0' && d[1] != '\0'))
		return -1;
	for (; *d; d++) {
		if (*d < '0' || *d > '9' || n >= SEGMENT_LIMIT)
			return -1;
		n = n * 10 + (*d - '0');
	}
	return n < SEGMENT_LIMIT ? n : -1;
}

static int
cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

/* The segment numbers have[0, len) (sorted here): *n contiguous from events.0; *ignored after a gap,
 * *gap the first missing number. */
static void
contiguous(long *have, size_t len, uint32_t *n, uint32_t *ignored, uint32_t *gap)
{
	if (len > 0)
		qsort(have, len, sizeof *have, cmp_long);
	while (*n < len && have[*n] == (long)*n)
		(*n)++;
	*gap = *n;
	*ignored = (uint32_t)(len - *n);
}

/* The keys of a listing that are segments of the prefix (skip bytes of the URL), not deeper. */
struct s3segs {
	long *have;
	size_t len, cap, skip, objects;
	struct ckpt_err *e;
};

static int
note_segment(void *arg, const struct ckpt_s3_entry *o)
{
	struct s3segs *S = arg;
	long k;

	S->objects++;
	if ((k = segment_number(o->url + S->skip)) < 0)
		return 0;
	if (ckpt_grow(&S->have, &S->cap, S->len + 1, sizeof *S->have, 64, S->e) < 0)
		return -1;
	S->have[S->len++] = k;
	return 0;
}

/* list_segments of a log under an S3 prefix (dir without the final '/'), listed once; a prefix
 * without any object is missing, as a directory would be. */
static int
list_s3_segments(const char *dir, uint32_t *n, uint32_t *ignored, uint32_t *gap, struct ckpt_err *e)
{
	size_t len = strlen(dir) + 2;
	char *prefix = ckpt_calloc(len, 1, e);
	struct s3segs S = {.e = e};
	int r = -1;

	if (prefix == NULL)
		return -1;
	snprintf(prefix, len, "%s/", dir);
	/* the listing names s3://bucket/key whatever the scheme given */
	S.skip = strlen("s3://") + strlen(strstr(prefix, "://") + 3);
	if (ckpt_s3_list(prefix, note_segment, &S, e) < 0)
		goto out;
	if (S.objects == 0) {
		ckpt_err_set(e, CKPT_ERR_INPUT, dir, "no such prefix (no objects under %s)", prefix);
		goto out;
	}
	contiguous(S.have, S.len, n, ignored, gap);
	r = 0;
out:
	free(S.have);
	free(prefix);
	return r;
}

/*
 * The segments of dir: *n contiguous from events.0; *ignored files after a
 * gap, *gap the first missing number.  A missing dir is an error.  Memory
 * follows the number of segment files, not their numbers.
 */
static int
list_segments(const char *dir, uint32_t *n, uint32_t *ignored, uint32_t *gap, struct ckpt_err *e)
{
	DIR *d;
	struct dirent *de;
	long *have = NULL;
	size_t cap = 0, len = 0;
	int r = -1;

	*n = *ignored = *gap = 0;
	if (ckpt_s3_is_url(dir))
		return list_s3_segments(dir, n, ignored, gap, e);
	if ((d = opendir(dir)) == NULL)
		return ckpt_err_sys(e, dir, "cannot open");
	while ((errno = 0, de = readdir(d)) != NULL) {
		long k = segment_number(de->d_name);

		if (k < 0)
			continue;
		if (ckpt_grow(&have, &cap, len + 1, sizeof *have, 64, e) < 0)
			goto out;
		have[len++] = k;
	}
	if (errno != 0) {
		ckpt_err_sys(e, dir, "cannot read directory");
		goto out;
	}
	contiguous(have, len, n, ignored, gap);
	r = 0;
out:
	free(have);
	closedir(d);
	return r;
}

/* Read exactly len bytes at off; 0, or -1 with errno (EIO for a short file). */
static int
pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	while (len > 0) {
		ssize_t k = pread(fd, buf, len, (off_t)off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (k == 0)
				errno = EIO;
			return -1;
		}
		buf = (char *)buf + k;
		len -= (size_t)k;
		off += (uint64_t)k;
	}
	return 0;
}

static int
write_all(int fd, const void *buf, size_t len)
{
	while (len > 0) {
		ssize_t k = write(fd, buf, len);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		buf = (const char *)buf + k;
		len -= (size_t)k;
	}
	return 0;
}

/*
 * Where the whole records of a segment end: walks the length fields only.
 * *end < size means the segment ends in a torn record.
 */
static int
whole_end(const char *path, uint64_t *end, uint64_t *size, struct ckpt_err *e)
{
	unsigned char h[CKPT_EVENT_HEADER];
	struct stat st;
	uint64_t off = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), r = -1;

	if (fd < 0)
		return ckpt_err_sys(e, path, "cannot open");
	if (fstat(fd, &st) < 0) {
		ckpt_err_sys(e, path, "cannot stat");
		goto out;
	}
	*size = (uint64_t)st.st_size;
	while (*size - off >= CKPT_EVENT_HEADER) {
		if (pread_all(fd, h, sizeof h, off) < 0) {
			ckpt_err_sys(e, path, "read error");
			goto out;
		}
		if (ckpt_be32(h) > *size - off - CKPT_EVENT_HEADER)
			break;
		off += CKPT_EVENT_HEADER + ckpt_be32(h);
	}
	*end = off;
	r = 0;
out:
	close(fd);
	return r;
}

int
ckpt_evlog_is_flink(const unsigned char *p, size_t n)
{
	/* a payload of Flink's begins with a Java stream, or (type 1) with its length and one; here
	 * bytes 8 to 15 are the checksum */
	return n >= 16 && (ckpt_be32(p + 8) == CKPT_JAVASER_MAGIC || ckpt_be32(p + 12) == CKPT_JAVASER_MAGIC);
}

/* The first bytes of the segment at path (at most n) into h: their count, or -1 with e set. */
static ssize_t
segment_head(const char *path, unsigned char *h, size_t n, struct ckpt_err *e)
{
	ssize_t got;
	int fd;

	if (ckpt_s3_is_url(path)) {
		struct ckpt_s3obj *o = ckpt_s3obj_open(path, e);

		if (o == NULL)
			return -1;
		if (n > ckpt_s3obj_size(o))
			n = (size_t)ckpt_s3obj_size(o);
		got = ckpt_s3obj_pread(o, h, n, 0, e) < 0 ? -1 : (ssize_t)n;
		ckpt_s3obj_close(o);
		return got;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return ckpt_err_sys(e, path, "cannot open");
	while ((got = pread(fd, h, n, 0)) < 0 && errno == EINTR)
		;
	if (got < 0)
		ckpt_err_sys(e, path, "read error");
	close(fd);
	return got;
}

/* Is the log of n segments in dir Flink's?  Its first segment of 16 bytes or more says; a log
 * without one is read as ckpt's (in either format it holds no whole record). */
static int
log_is_flink(const char *dir, uint32_t n, int *flink, struct ckpt_err *e)
{
	unsigned char h[16];

	*flink = 0;
	for (uint32_t k = 0; k < n; k++) {
		char *path = segment_path(dir, k, e);
		ssize_t got;

		if (path == NULL)
			return -1;
		got = segment_head(path, h, sizeof h, e);
		free(path);
		if (got < 0)
			return -1;
		if (got == (ssize_t)sizeof h) {
			*flink = ckpt_evlog_is_flink(h, sizeof h);
			return 0;
		}
	}
	return 0;
}

/* ---- the writer */

struct ckpt_evwriter {
	char *dir;
	unsigned flags;
	uint32_t next;       /* number of the next segment to create */
	int fd;              /* the open segment, or -1 */
	char *path, *tmp;    /* its name, and its temporary name (CKPT_EVW_WHOLE) */
	unsigned char *buf;
	size_t len;
	uint64_t whole;      /* bytes of whole records in the open segment's file */
	uint64_t records;
	int failed;
	struct timespec last;
};

static int
sync_dir(const char *dir, struct ckpt_err *e)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r = 0;

	if (fd < 0 || fsync(fd) != 0)
		r = ckpt_err_sys(e, dir, "cannot sync directory");
	if (fd >= 0)
		close(fd);
	return r;
}

/* The last segment must end in a whole record, or be cut back to one. */
static int
check_last(struct ckpt_evwriter *w, struct ckpt_err *e)
{
	uint64_t end = 0, size = 0;
	char *path;
	int r = -1;

	if (w->next == 0)
		return 0;
	if ((path = segment_path(w->dir, w->next - 1, e)) == NULL || whole_end(path, &end, &size, e) < 0)
		goto out;
	r = 0;
	if (end == size)
		goto out;
	if (!(w->flags & CKPT_EVW_CUT_TORN)) {
		r = ckpt_err_set(e, CKPT_ERR_REFUSED, path,
				 "offset %llu: the log ends in a torn record (%llu bytes); cut it off first "
				 "(ckpt-replay --repair)", (unsigned long long)end, (unsigned long long)(size - end));
		goto out;
	}
	if (truncate(path, (off_t)end) != 0)
		r = ckpt_err_sys(e, path, "cannot cut off the torn record");
out:
	free(path);
	return r;
}

struct ckpt_evwriter *
ckpt_evwriter_open(const char *dir, unsigned flags, struct ckpt_err *e)
{
	struct ckpt_evwriter *w = ckpt_calloc(1, sizeof *w, e);
	uint32_t ignored, gap;
	int flink;

	if (w == NULL)
		return NULL;
	w->fd = -1;
	w->flags = flags;
	w->dir = ckpt_strdup(dir, e);
	w->buf = malloc(CKPT_EVENT_BUFFER);
	if (w->dir == NULL || w->buf == NULL) {
		ckpt_err_nomem(e, dir);
		goto fail;
	}
	if (ckpt_s3_is_url(dir)) {
		ckpt_err_set(e, CKPT_ERR_INPUT, dir, "a log is written to a local directory only, not to S3");
		goto fail;
	}
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		ckpt_err_sys(e, dir, "cannot create directory");
		goto fail;
	}
	if (list_segments(dir, &w->next, &ignored, &gap, e) < 0)
		goto fail;
	if (ignored > 0) {
		ckpt_err_set(e, CKPT_ERR_REFUSED, dir,
			     "events.%u is missing but %u later segment%s exist; refusing to write into the gap",
			     gap, ignored, ignored == 1 ? "" : "s");
		goto fail;
	}
	if (log_is_flink(dir, w->next, &flink, e) < 0)
		goto fail;
	if (flink) {
		ckpt_err_set(e, CKPT_ERR_REFUSED, dir, "a Flink job event log: ckpt writes ckpt-events(5) logs only");
		goto fail;
	}
	if (check_last(w, e) < 0)
		goto fail;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &w->last);
	return w;
fail:
	free(w->dir);
	free(w->buf);
	free(w);
	return NULL;
}

static int
stopped(struct ckpt_evwriter *w, struct ckpt_err *e)
{
	return ckpt_err_set(e, CKPT_ERR_IO, w->dir, "the writer stopped after an earlier error");
}

/* A failed write: cut the segment back to its whole records, stop the writer. */
static int
write_failed(struct ckpt_evwriter *w, const char *what, struct ckpt_err *e)
{
	int saved = errno;

	w->failed = 1;
	if (w->fd >= 0 && ftruncate(w->fd, (off_t)w->whole) != 0)
		(void)0; /* the torn tail stays; readers and the next session see it as torn */
	errno = saved;
	return ckpt_err_sys(e, w->path ? w->path : w->dir, "%s", what);
}

static int
open_segment(struct ckpt_evwriter *w, struct ckpt_err *e)
{
	if ((w->path = segment_path(w->dir, w->next, e)) == NULL)
		return -1;
	if (w->flags & CKPT_EVW_WHOLE) {
		size_t n = strlen(w->dir) + 48;

		if ((w->tmp = ckpt_calloc(1, n, e)) == NULL)
			return -1;
		snprintf(w->tmp, n, "%s/.events.%u.XXXXXX", w->dir, w->next);
		w->fd = mkstemp(w->tmp);
		if (w->fd >= 0)
			(void)fchmod(w->fd, 0666 & ~(mode_t)ckpt_umask());
	} else {
		w->fd = open(w->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	}
	if (w->fd < 0) {
		w->failed = 1;
		return ckpt_err_sys(e, w->path, "cannot create");
	}
	w->next++;
	w->whole = 0;
	if (!(w->flags & CKPT_EVW_WHOLE) && sync_dir(w->dir, e) < 0) {
		w->failed = 1;
		return -1;
	}
	return 0;
}

static int
write_buffer(struct ckpt_evwriter *w, struct ckpt_err *e)
{
	if (w->len == 0)
		return 0;
	if (write_all(w->fd, w->buf, w->len) < 0)
		return write_failed(w, "write error", e);
	w->whole += w->len;
	w->len = 0;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &w->last);
	return 0;
}

int
ckpt_evwriter_append(struct ckpt_evwriter *w, uint32_t type, const void *payload, size_t len,
		     struct ckpt_err *e)
{
	unsigned char h[CKPT_EVENT_HEADER];
	struct timespec now;

	if (w->failed)
		return stopped(w, e);
	if (len > CKPT_EVENT_PAYLOAD_LIMIT)
		return ckpt_err_set(e, CKPT_ERR_INPUT, w->dir, "payload of %zu bytes is above the limit of %u",
				    len, CKPT_EVENT_PAYLOAD_LIMIT);
	if (w->fd < 0 && open_segment(w, e) < 0)
		return -1;
	encode_header(h, type, payload, len);
	if (w->len + sizeof h + len > CKPT_EVENT_BUFFER && write_buffer(w, e) < 0)
		return -1;
	if (sizeof h + len > CKPT_EVENT_BUFFER) {
		struct iovec iov[2] = {{h, sizeof h}, {(void *)(uintptr_t)payload, len}};
		ssize_t k;

		while ((k = writev(w->fd, iov, 2)) < 0 && errno == EINTR)
			;
		if (k < 0 || (size_t)k < sizeof h + len) {
			if (k >= 0)
				errno = ENOSPC;
			return write_failed(w, "write error", e);
		}
		w->whole += sizeof h + len;
	} else {
		memcpy(w->buf + w->len, h, sizeof h);
		memcpy(w->buf + w->len + sizeof h, payload, len);
		w->len += sizeof h + len;
	}
	w->records++;
	if (!(w->flags & CKPT_EVW_WHOLE)) {
		clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
		if (now.tv_sec - w->last.tv_sec >= 1 && write_buffer(w, e) < 0)
			return -1;
	}
	return 0;
}

int
ckpt_evwriter_append_json(struct ckpt_evwriter *w, uint32_t type, const json_t *payload, struct ckpt_err *e)
{
	char *s = json_dumps(payload, JSON_COMPACT | JSON_PRESERVE_ORDER);
	int r;

	if (s == NULL)
		return ckpt_err_nomem(e, w->dir);
	r = ckpt_evwriter_append(w, type, s, strlen(s), e);
	free(s);
	return r;
}

int
ckpt_evwriter_flush(struct ckpt_evwriter *w, int sync, struct ckpt_err *e)
{
	if (w->failed)
		return stopped(w, e);
	if (w->fd < 0)
		return 0;
	if (write_buffer(w, e) < 0)
		return -1;
	if (sync && fsync(w->fd) != 0)
		return write_failed(w, "cannot sync", e);
	return 0;
}

/* Publish a CKPT_EVW_WHOLE segment under its name, never over an existing file. */
static int
publish(struct ckpt_evwriter *w, struct ckpt_err *e)
{
	if (link(w->tmp, w->path) != 0) {
		w->failed = 1;
		ckpt_err_sys(e, w->path, "cannot create");
		unlink(w->tmp);
		return -1;
	}
	unlink(w->tmp);
	return sync_dir(w->dir, e);
}

int
ckpt_evwriter_cut(struct ckpt_evwriter *w, struct ckpt_err *e)
{
	int r = 0;

	if (w->failed)
		return stopped(w, e);
	if (w->fd < 0)
		return 0;
	if (ckpt_evwriter_flush(w, 1, e) < 0)
		r = -1;
	if (close(w->fd) != 0 && r == 0) {
		w->failed = 1;
		r = ckpt_err_sys(e, w->path, "write error");
	}
	w->fd = -1;
	if (r == 0 && (w->flags & CKPT_EVW_WHOLE))
		r = publish(w, e);
	else if (r < 0 && (w->flags & CKPT_EVW_WHOLE))
		unlink(w->tmp);
	free(w->path);
	free(w->tmp);
	w->path = w->tmp = NULL;
	return r;
}


static void
writer_free(struct ckpt_evwriter *w)
{
	free(w->dir);
	free(w->path);
	free(w->tmp);
	free(w->buf);
	free(w);
}

int
ckpt_evwriter_close(struct ckpt_evwriter *w, struct ckpt_err *e)
{
	int r;

	if (w == NULL)
		return 0;
	r = ckpt_evwriter_cut(w, e);
	if (w->fd >= 0)
		close(w->fd);
	if (w->tmp)
		unlink(w->tmp);
	writer_free(w);
	return r;
}

void
ckpt_evwriter_abort(struct ckpt_evwriter *w)
{
	if (w == NULL)
		return;
	if (w->fd >= 0)
		close(w->fd);
	if (w->tmp)
		unlink(w->tmp);
	writer_free(w);
}

/* ---- the reader */

struct ckpt_evreader {
	char *dir;
	char *path;              /* of the open segment */
	int fd;
	struct ckpt_s3obj *obj;  /* the open segment when the log is in S3 (fd is then -1) */
	uint32_t cur;            /* the open segment, or the next one to open */
	uint64_t size;           /* of the open segment */
	uint64_t off;            /* file offset of buf[0] */
	unsigned char *buf;
	size_t cap, lo, hi;      /* buf[lo, hi) holds unread bytes */
	struct ckpt_evparser *ps;
	struct ckpt_evflink *fl;  /* Flink's format: its payload decoder; NULL for ours */
	const unsigned char *raw; /* Flink's format: the last record's payload as stored */
	size_t rawlen;
	struct ckpt_evlog_stats st;
	uint64_t before;         /* bytes of the segments before the open one (for progress) */
};

struct ckpt_evreader *
ckpt_evreader_open(const char *dir, struct ckpt_err *e)
{
	struct ckpt_evreader *r = ckpt_calloc(1, sizeof *r, e);
	int flink;

	if (r == NULL)
		return NULL;
	r->fd = -1;
	if ((r->dir = ckpt_strdup(dir, e)) == NULL || (r->ps = ckpt_evparser_new(e)) == NULL)
		goto fail;
	/* in S3, "dir/" and "dir" are one prefix, and dir//events.0 would be another key */
	for (size_t n = strlen(r->dir); ckpt_s3_is_url(r->dir) && n > 0 && r->dir[n - 1] == '/';)
		r->dir[--n] = '\0';
	if (list_segments(r->dir, &r->st.segments, &r->st.ignored, &r->st.gap, e) < 0 ||
	    log_is_flink(r->dir, r->st.segments, &flink, e) < 0)
		goto fail;
	r->st.flink = flink;
	if (flink && (r->fl = ckpt_evflink_new(e)) == NULL)
		goto fail;
	if (ckpt_progress_on()) {
		struct ckpt_err pe = {0};
		uint64_t total = 0;
		struct stat sb;
		char *p;

		for (uint32_t k = 0; k < r->st.segments; k++, free(p)) {
			uint64_t size; /* in S3, as the listing said (pinned: no request) */

			if ((p = segment_path(r->dir, k, &pe)) == NULL)
				continue;
			if (ckpt_s3_is_url(p) && ckpt_s3_stat(p, &size, &pe) == 0)
				total += size;
			else if (!ckpt_s3_is_url(p) && stat(p, &sb) == 0)
				total += (uint64_t)sb.st_size;
		}
		ckpt_progress_begin(r, "bytes", total);
	}
	return r;
fail:
	ckpt_evreader_free(r);
	return NULL;
}

const struct ckpt_evlog_stats *
ckpt_evreader_stats(const struct ckpt_evreader *r)
{
	return &r->st;
}

void
ckpt_evreader_free(struct ckpt_evreader *r)
{
	if (r == NULL)
		return;
	ckpt_progress_end(r);
	if (r->fd >= 0)
		close(r->fd);
	ckpt_s3obj_close(r->obj);
	free(r->dir);
	free(r->path);
	free(r->buf);
	ckpt_evparser_free(r->ps);
	ckpt_evflink_free(r->fl);
	free(r);
}

/* The place of segment seg: "dir/events.N". */
static void
seg_where(const struct ckpt_evreader *r, uint32_t seg, char *where, size_t size)
{
	snprintf(where, size, "%s/events.%u", r->dir, seg);
}

static int
verr(const struct ckpt_evreader *r, uint32_t seg, uint64_t off, struct ckpt_err *e, enum ckpt_errkind kind,
     const char *fmt, va_list ap)
{
	char where[sizeof e->where];

	seg_where(r, seg, where, sizeof where);
	return ckpt_err_vat(e, kind, where, off, fmt, ap);
}

static int
corrupt(const struct ckpt_evreader *r, uint64_t off, struct ckpt_err *e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int
corrupt(const struct ckpt_evreader *r, uint64_t off, struct ckpt_err *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(r, r->cur, off, e, CKPT_ERR_REFUSED, fmt, ap);
	va_end(ap);
	return -1;
}

int
ckpt_evreader_verr(const struct ckpt_evreader *r, const struct ckpt_event *ev, struct ckpt_err *e,
		   enum ckpt_errkind kind, const char *fmt, va_list ap)
{
	return verr(r, ev->segment, ev->offset, e, kind, fmt, ap);
}

int
ckpt_evreader_err(const struct ckpt_evreader *r, const struct ckpt_event *ev, struct ckpt_err *e,
		  enum ckpt_errkind kind, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(r, ev->segment, ev->offset, e, kind, fmt, ap);
	va_end(ap);
	return -1;
}

/* Open the next segment; 0 when there is none. */
static int
open_next(struct ckpt_evreader *r, struct ckpt_err *e)
{
	struct stat st;

	if (r->cur >= r->st.segments)
		return 0;
	free(r->path);
	if ((r->path = segment_path(r->dir, r->cur, e)) == NULL)
		return -1;
	r->off = 0;
	r->lo = r->hi = 0;
	if (ckpt_s3_is_url(r->path)) {
		if ((r->obj = ckpt_s3obj_open(r->path, e)) == NULL)
			return -1;
		r->size = ckpt_s3obj_size(r->obj);
		return 1;
	}
	r->fd = open(r->path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0)
		return ckpt_err_sys(e, r->path, "cannot open");
	if (fstat(r->fd, &st) < 0)
		return ckpt_err_sys(e, r->path, "cannot stat");
	if (!S_ISREG(st.st_mode))
		return ckpt_err_set(e, CKPT_ERR_INPUT, r->path, "not a regular file");
	r->size = (uint64_t)st.st_size;
	return 1;
}

static void
close_segment(struct ckpt_evreader *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	ckpt_s3obj_close(r->obj);
	r->obj = NULL;
	r->cur++;
	r->before += r->size;
}

/* fill from S3: the buffer filled by one ranged read, at most to the object's end. */
static int
fill_s3(struct ckpt_evreader *r, size_t n, struct ckpt_err *e)
{
	uint64_t at = r->off + r->hi;
	size_t k = r->cap - r->hi;

	if (k > r->size - at)
		k = (size_t)(r->size - at);
	if (r->hi + k < n)
		return ckpt_err_set(e, CKPT_ERR_IO, r->path, "offset %llu: read past the end of the segment",
				    (unsigned long long)at);
	if (ckpt_s3obj_pread(r->obj, r->buf + r->hi, k, at, e) < 0)
		return -1;
	r->hi += k;
	ckpt_progress_at(r, r->before + r->off + r->hi);
	return 0;
}

/* Make buf[lo, lo+n) hold the next n bytes of the segment (n no more than what is left). */
static int
fill(struct ckpt_evreader *r, size_t n, struct ckpt_err *e)
{
	size_t want;

	if (r->hi - r->lo >= n)
		return 0;
	if (r->lo > 0) {
		memmove(r->buf, r->buf + r->lo, r->hi - r->lo);
		r->off += r->lo;
		r->hi -= r->lo;
		r->lo = 0;
	}
	/* READ_CHUNK at a time, but no more than the segment holds: a small log needs no megabyte */
	want = r->size - r->off < READ_CHUNK ? (size_t)((r->size - r->off + 4095) / 4096 * 4096) : READ_CHUNK;
	if (n > r->cap || r->cap < want) {
		size_t nc = n > want ? n : want;
		unsigned char *t = ckpt_reallocarray(r->buf, nc, 1, e);

		if (t == NULL)
			return -1;
		r->buf = t;
		r->cap = nc;
	}
	if (r->obj) /* what the buffer holds, no more than the object has (n is within it) */
		return fill_s3(r, n, e);
	while (r->hi < n) {
		ssize_t k = read(r->fd, r->buf + r->hi, r->cap - r->hi);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return ckpt_err_sys(e, r->path, "read error");
		if (k == 0)
			return ckpt_err_set(e, CKPT_ERR_IO, r->path, "segment shrank while being read");
		r->hi += (size_t)k;
	}
	ckpt_progress_at(r, r->before + r->off + r->hi);
	return 0;
}

/* A torn tail of left bytes at off ends the open segment. */
static int
torn(struct ckpt_evreader *r, uint64_t off, uint64_t left)
{
	if (r->st.torn_tails++ == 0) {
		r->st.torn_bytes = left;
		r->st.torn_offset = off;
		r->st.torn_segment = r->cur;
	}
	close_segment(r);
	return 0;
}

/* The segment ends in a record cut short at off: torn at the end of the last segment, else corruption. */
static int
short_record(struct ckpt_evreader *r, uint64_t off, uint64_t left, const char *what, struct ckpt_err *e)
{
	if (r->cur + 1 < r->st.segments)
		return corrupt(r, off, e, "%s (%llu bytes left in a segment that is not the last)", what,
			       (unsigned long long)left);
	return torn(r, off, left);
}

/* One record of the open segment: 1 read, 0 the segment is done, -1 error. */
static int
read_record(struct ckpt_evreader *r, struct ckpt_event *ev, struct ckpt_err *e)
{
	uint64_t off = r->off + r->lo, left = r->size - off;
	const unsigned char *h, *pl;
	const char *at = NULL;
	uint32_t len, type;
	uint64_t sum;

	if (left == 0) {
		close_segment(r);
		return 0;
	}
	if (left < CKPT_EVENT_HEADER)
		return short_record(r, off, left, "record header cut short", e);
	if (fill(r, CKPT_EVENT_HEADER, e) < 0)
		return -1;
	h = r->buf + r->lo;
	len = ckpt_be32(h);
	type = ckpt_be32(h + 4);
	sum = ckpt_be64(h + 8);
	if (len > left - CKPT_EVENT_HEADER)
		return short_record(r, off, left, "record runs past the end of the segment", e);
	if (len > CKPT_EVENT_PAYLOAD_LIMIT)
		return corrupt(r, off, e, "record length %u is above the limit of %u", len, CKPT_EVENT_PAYLOAD_LIMIT);
	if (fill(r, CKPT_EVENT_HEADER + (size_t)len, e) < 0)
		return -1;
	pl = r->buf + r->lo + CKPT_EVENT_HEADER;
	if (ckpt_xxh3(pl, len) != sum) {
		char a[17], b[17];

		ckpt_hex64(sum, a);
		ckpt_hex64(ckpt_xxh3(pl, len), b);
		return corrupt(r, off, e, "checksum mismatch (record says %s, payload has %s)", a, b);
	}
	if (ckpt_event_type_name(type) == NULL)
		return corrupt(r, off, e, "unknown record type %u", type);
	if (ckpt_evparser_decode(r->ps, type, pl, len, ev, &at, e) < 0) {
		char where[sizeof e->where];

		ckpt_err_prefix(e, "offset %llu: payload byte %zu", (unsigned long long)off,
				at ? (size_t)(at - (const char *)pl) : 0);
		seg_where(r, r->cur, where, sizeof where);
		return ckpt_err_locate(e, CKPT_ERR_REFUSED, where);
	}
	ev->segment = r->cur;
	ev->offset = off;
	r->lo += CKPT_EVENT_HEADER + (size_t)len;
	r->st.records++;
	return 1;
}

/* Where a payload error is: "offset X: payload byte N: ..." of the open segment. */
static int
payload_error(struct ckpt_evreader *r, uint64_t off, size_t at, struct ckpt_err *e)
{
	char where[sizeof e->where];

	if (e->kind == CKPT_ERR_NOMEM)
		return -1;
	ckpt_err_prefix(e, "offset %llu: payload byte %zu", (unsigned long long)off, at);
	seg_where(r, r->cur, where, sizeof where);
	return ckpt_err_locate(e, CKPT_ERR_REFUSED, where);
}

/*
 * One record of Flink's format.  Flink's reader (FileSystemJobEventStore.readEvent) takes an
 * EOFException, a record cut short, as the end of the segment and goes on with the next one:
 * a torn tail wherever it is.  A negative length fails its allocation: corruption.
 */
static int
read_flink_record(struct ckpt_evreader *r, struct ckpt_event *ev, struct ckpt_err *e)
{
	uint64_t off = r->off + r->lo, left = r->size - off;
	const unsigned char *pl;
	size_t pat = 0;
	uint32_t len, type;

	if (left == 0) {
		close_segment(r);
		return 0;
	}
	if (left < CKPT_EVFLINK_HEADER)
		return torn(r, off, left);
	if (fill(r, CKPT_EVFLINK_HEADER, e) < 0)
		return -1;
	type = ckpt_be32(r->buf + r->lo);
	len = ckpt_be32(r->buf + r->lo + 4);
	if (len > INT32_MAX)
		return corrupt(r, off, e, "record length %d is negative", (int32_t)len);
	if (len > left - CKPT_EVFLINK_HEADER)
		return torn(r, off, left);
	if (len > CKPT_EVENT_PAYLOAD_LIMIT)
		return corrupt(r, off, e, "record length %u is above the limit of %u", len, CKPT_EVENT_PAYLOAD_LIMIT);
	if (ckpt_event_type_name(type) == NULL)
		return corrupt(r, off, e, "unknown record type %d", (int32_t)type);
	if (fill(r, CKPT_EVFLINK_HEADER + (size_t)len, e) < 0)
		return -1;
	pl = r->buf + r->lo + CKPT_EVFLINK_HEADER;
	if (ckpt_evflink_decode(r->fl, type, pl, len, ev, &pat, e) < 0)
		return payload_error(r, off, pat, e);
	ev->segment = r->cur;
	ev->offset = off;
	r->raw = pl;
	r->rawlen = len;
	r->lo += CKPT_EVFLINK_HEADER + (size_t)len;
	r->st.records++;
	return 1;
}

int
ckpt_evreader_next(struct ckpt_evreader *r, struct ckpt_event *ev, struct ckpt_err *e)
{
	for (;;) {
		int k;

		if (r->fd < 0 && r->obj == NULL) {
			k = open_next(r, e);
			if (k <= 0)
				return k;
		}
		k = r->fl ? read_flink_record(r, ev, e) : read_record(r, ev, e);
		if (k != 0)
			return k;
	}
}

/* ---- the copy without a torn tail */

struct copy {
	char *tmpdir;
	uint32_t seg;   /* segments created so far */
	int fd;
	struct ckpt_err *e;
};

/* Finish the open copied segment: fsync and close. */
static int
copy_finish(struct copy *c)
{
	int fd = c->fd;

	c->fd = -1;
	if (fd >= 0 && (fsync(fd) != 0 || close(fd) != 0)) {
		close(fd);
		return ckpt_err_sys(c->e, c->tmpdir, "write error");
	}
	return 0;
}

/* Make segment seg the open one, creating the (empty) segments before it. */
static int
copy_segment(struct copy *c, uint32_t seg)
{
	while (c->seg <= seg) {
		char *p;

		if (copy_finish(c) < 0 || (p = segment_path(c->tmpdir, c->seg, c->e)) == NULL)
			return -1;
		c->fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (c->fd < 0)
			ckpt_err_sys(c->e, p, "cannot create");
		free(p);
		if (c->fd < 0)
			return -1;
		c->seg++;
	}
	return 0;
}

static void
copy_cleanup(struct copy *c)
{
	if (c->fd >= 0)
		close(c->fd);
	for (uint32_t i = 0; i < c->seg; i++) {
		char *p = segment_path(c->tmpdir, i, NULL);

		if (p)
			unlink(p);
		free(p);
	}
	rmdir(c->tmpdir);
}

static int
copy_records(struct ckpt_evreader *r, struct copy *c, struct ckpt_err *e)
{
	struct ckpt_event ev;
	int k;

	while ((k = ckpt_evreader_next(r, &ev, e)) > 0) {
		unsigned char h[CKPT_EVENT_HEADER];

		if (copy_segment(c, ev.segment) < 0)
			return -1;
		if (r->fl) {
			/* Flink's log stays Flink's: its record as stored */
			ckpt_store_be(h, ev.type, 4);
			ckpt_store_be(h + 4, (uint32_t)r->rawlen, 4);
			if (write_all(c->fd, h, CKPT_EVFLINK_HEADER) < 0 || write_all(c->fd, r->raw, r->rawlen) < 0)
				return ckpt_err_sys(e, c->tmpdir, "write error");
			continue;
		}
		encode_header(h, ev.type, ev.payload, ev.len);
		if (write_all(c->fd, h, sizeof h) < 0 || write_all(c->fd, ev.payload, ev.len) < 0)
			return ckpt_err_sys(e, c->tmpdir, "write error");
	}
	if (k < 0)
		return -1;
	/* trailing empty segments too: the copy has the segments of the log */
	if (r->st.segments > 0 && copy_segment(c, r->st.segments - 1) < 0)
		return -1;
	return copy_finish(c);
}

int
ckpt_evlog_copy(const char *dir, const char *out, struct ckpt_evlog_stats *st, struct ckpt_err *e)
{
	struct ckpt_evreader *r = ckpt_evreader_open(dir, e);
	struct copy c = {NULL, 0, -1, e};
	struct stat sb;
	size_t n = strlen(out) + 16;
	int ret = -1;

	if (r == NULL)
		return -1;
	if (ckpt_s3_is_url(out)) {
		ckpt_err_set(e, CKPT_ERR_INPUT, out, "a log is written to a local directory only, not to S3");
		goto out;
	}
	if (lstat(out, &sb) == 0) {
		ckpt_err_set(e, CKPT_ERR_INPUT, out, "already exists");
		goto out;
	}
	if ((c.tmpdir = ckpt_calloc(1, n, e)) == NULL)
		goto out;
	snprintf(c.tmpdir, n, "%s.tmp.XXXXXX", out);
	if (mkdtemp(c.tmpdir) == NULL) {
		ckpt_err_sys(e, out, "cannot create directory");
		free(c.tmpdir);
		c.tmpdir = NULL;
		goto out;
	}
	if (copy_records(r, &c, e) < 0 || sync_dir(c.tmpdir, e) < 0)
		goto out;
	if (renameat2(AT_FDCWD, c.tmpdir, AT_FDCWD, out, RENAME_NOREPLACE) != 0) {
		ckpt_err_sys(e, out, errno == EEXIST ? "already exists" : "cannot rename into place");
		goto out;
	}
	free(c.tmpdir);
	c.tmpdir = NULL;
	if (ckpt_fsync_dir_of(out, e) < 0)
		goto out;
	if (st)
		*st = r->st;
	ret = 0;
out:
	if (c.tmpdir) {
		copy_cleanup(&c);
		free(c.tmpdir);
	}
	ckpt_evreader_free(r);
	return ret;
}
