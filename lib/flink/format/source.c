/* source.c: the bytes the state readers pull: a region of a file or of an object in S3 read
 * through a window (never whole) or bytes in memory, plain or as Snappy-framed streams; errors
 * name the file and offset. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "javaser.h"
#include "format.h"

#define WINDOW 65536u
#define BLOB_STEP ((size_t)1 << 20) /* a blob's buffer grows as its bytes arrive, not by its claim */

static _Atomic uint64_t bytes_read; /* every byte pread from a state file (-c reads on several threads) */

uint64_t
ckpt_flink_state_bytes_read(void)
{
	return atomic_load(&bytes_read);
}

/* The directories state files were opened in (-v names them: a copy read through --root must not
 * touch the old place): the first few, distinct, and how many more. */
#define READ_DIRS 8
static pthread_mutex_t dirs_mu = PTHREAD_MUTEX_INITIALIZER;
static char *dirs[READ_DIRS];
static size_t ndirs, more_dirs;

void
ckpt_fsrc_note_read(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) + (slash == path) : 1;
	const char *d = slash ? path : ".";
	size_t i;

	pthread_mutex_lock(&dirs_mu);
	for (i = 0; i < ndirs; i++)
		if (strlen(dirs[i]) == n && strncmp(dirs[i], d, n) == 0)
			break;
	if (i == ndirs && ndirs < READ_DIRS && (dirs[ndirs] = strndup(d, n)) != NULL)
		ndirs++;
	else if (i == ndirs)
		more_dirs++;
	pthread_mutex_unlock(&dirs_mu);
}

size_t
ckpt_flink_state_read_dirs(char *out, size_t n)
{
	size_t len = 0, k;

	pthread_mutex_lock(&dirs_mu);
	k = ndirs;
	if (n)
		out[0] = '\0';
	for (size_t i = 0; i < ndirs; i++) {
		if (n > len)
			len += (size_t)snprintf(out + len, n - len, "%s%s", i ? ", " : "", dirs[i]);
		free(dirs[i]);
	}
	if (more_dirs && n > len)
		snprintf(out + len, n - len, " and %zu more", more_dirs);
	ndirs = more_dirs = 0;
	pthread_mutex_unlock(&dirs_mu);
	return k;
}

int
ckpt_fsrc_fail(struct ckpt_fsrc *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (s->snappy) {
		ckpt_err_vset(s->e, CKPT_ERR_INPUT, s->where, fmt, ap);
		ckpt_err_prefix(s->e, "offset %llu (Snappy chunk), byte %llu of its stream",
				(unsigned long long)(s->base + s->wat), (unsigned long long)(s->zdone + s->wpos));
	} else {
		ckpt_err_vat(s->e, CKPT_ERR_INPUT, s->where, s->base + s->wat + s->wpos, fmt, ap);
	}
	va_end(ap);
	return -1;
}

int
ckpt_fsrc_nomem(struct ckpt_fsrc *s)
{
	return ckpt_err_nomem(s->e, s->where);
}

int
ckpt_fsrc_file(struct ckpt_fsrc *s, int fd, uint64_t base, uint64_t size, const char *where,
	       struct ckpt_err *e)
{
	memset(s, 0, sizeof *s);
	s->fd = fd;
	s->base = base;
	s->size = size;
	s->where = where;
	s->e = e;
	s->buf = malloc(WINDOW);
	if (s->buf == NULL)
		return ckpt_fsrc_nomem(s);
	s->win = s->buf;
	return 0;
}

int
ckpt_fsrc_s3(struct ckpt_fsrc *s, struct ckpt_s3obj *o, uint64_t base, uint64_t size, const char *where,
	     struct ckpt_err *e)
{
	if (ckpt_fsrc_file(s, -1, base, size, where, e) < 0) {
		ckpt_s3obj_close(o);
		return -1;
	}
	s->obj = o;
	return 0;
}

void
ckpt_fsrc_limit(struct ckpt_fsrc *s, uint64_t end)
{
	s->limit = end;
	if (s->obj)
		ckpt_s3obj_limit(s->obj, end ? s->base + end : 0);
}

void
ckpt_fsrc_mem_again(struct ckpt_fsrc *s, const void *p, size_t n)
{
	s->mem = s->win = p;
	s->size = s->wlen = s->raw = n;
	s->wpos = 0;
	s->wat = s->zdone = 0;
}

void
ckpt_fsrc_release_slow(struct ckpt_fsrc *s)
{
	free(s->buf);
	free(s->zbody);
	free(s->cap);
	ckpt_s3obj_close(s->obj);
	memset(s, 0, sizeof *s);
	s->fd = -1;
}

void
ckpt_fsrc_capture(struct ckpt_fsrc *s, int on)
{
	s->capture = on;
	if (on)
		s->clen = 0;
}

/* n raw bytes at the region's raw offset, past the window; 0, or -1 with the error set. */
static int
raw_take(struct ckpt_fsrc *s, void *p, size_t n)
{
	if (s->obj) {
		if (ckpt_s3obj_pread(s->obj, p, n, s->base + s->raw, s->e) < 0)
			return -1;
	} else if (s->fd < 0) {
		memcpy(p, s->mem + s->raw, n);
	} else {
		size_t got = 0;

		while (got < n) {
			ssize_t r = pread(s->fd, (char *)p + got, n - got, (off_t)(s->base + s->raw + got));

			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				return ckpt_err_sys(s->e, s->where, "read error");
			if (r == 0)
				return ckpt_err_set(s->e, CKPT_ERR_INPUT, s->where,
						    "offset %llu: the file ends before its recorded size",
						    (unsigned long long)(s->base + s->raw + got));
			got += (size_t)r;
		}
		atomic_fetch_add(&bytes_read, n);
	}
	ckpt_progress_add(n);
	s->raw += n;
	return 0;
}

int
ckpt_fsrc_seek(struct ckpt_fsrc *s, uint64_t off, int snappy)
{
	s->snappy = snappy != 0;
	s->zstarted = snappy == 2;
	s->zdone = 0;
	if (!snappy && s->fd < 0 && s->obj == NULL) { /* memory: the window is the whole region */
		s->win = s->mem;
		s->wat = 0;
		s->wlen = (size_t)s->size;
		s->wpos = (size_t)(off < s->size ? off : s->size);
		s->raw = s->size;
		return 0;
	}
	if (s->buf == NULL && (s->buf = malloc(WINDOW)) == NULL)
		return ckpt_fsrc_nomem(s);
	s->win = s->buf;
	s->wat = off;
	s->wpos = s->wlen = 0;
	s->raw = off;
	return 0;
}

/* One chunk's data into the window: 1, 0 at the end of the region, -1 on error. */
static int
fill_snappy(struct ckpt_fsrc *s)
{
	unsigned char hdr[4];
	const char *why = NULL;
	unsigned type;
	size_t len, n;

	if (s->zbody == NULL && (s->zbody = malloc(CKPT_FSNAPPY_BODY)) == NULL)
		return ckpt_fsrc_nomem(s);
	for (;;) {
		s->zdone += s->wlen;
		s->wpos = s->wlen = 0;
		s->wat = s->raw;
		if (s->raw == s->size)
			return 0;
		if (s->size - s->raw < 4)
			return ckpt_fsrc_fail(s, "truncated Snappy chunk header");
		if (raw_take(s, hdr, 4) < 0)
			return -1;
		ckpt_fsnappy_header(hdr, &type, &len);
		if (!s->zstarted && type != 0xff)
			return ckpt_fsrc_fail(s, "no Snappy stream identifier where a compressed stream starts");
		if (len > CKPT_FSNAPPY_BODY)
			return ckpt_fsrc_fail(s, "Snappy chunk of %zu bytes (at most %u)", len, CKPT_FSNAPPY_BODY);
		if (s->size - s->raw < len)
			return ckpt_fsrc_fail(s, "truncated Snappy chunk (%zu bytes, %llu left)", len,
					      (unsigned long long)(s->size - s->raw));
		if (raw_take(s, s->zbody, len) < 0)
			return -1;
		if (ckpt_fsnappy_body(type, s->zbody, len, s->buf, &n, &why) < 0)
			return ckpt_fsrc_fail(s, "%s", why);
		s->zstarted = 1;
		if (n > 0) {
			s->wlen = n;
			return 1;
		}
	}
}

static int
fill(struct ckpt_fsrc *s)
{
	size_t n;

	if (s->snappy)
		return fill_snappy(s);
	if (s->raw >= s->size)
		return 0;
	n = s->size - s->raw < WINDOW ? (size_t)(s->size - s->raw) : WINDOW;
	if (s->limit > s->raw && n > s->limit - s->raw)
		n = (size_t)(s->limit - s->raw);
	s->wat = s->raw;
	s->wpos = s->wlen = 0;
	if (raw_take(s, s->buf, n) < 0)
		return -1;
	s->wlen = n;
	return 1;
}

static int
cap_add(struct ckpt_fsrc *s, const void *p, size_t n)
{
	if (ckpt_grow(&s->cap, &s->ccap, s->clen + n, 1, 256, NULL) < 0)
		return ckpt_fsrc_nomem(s);
	memcpy(s->cap + s->clen, p, n);
	s->clen += n;
	return 0;
}

int
ckpt_fsrc_read_slow(struct ckpt_fsrc *s, void *p, size_t n, const char *what)
{
	unsigned char *o = p;

	while (n > 0) {
		size_t k;

		if (s->wpos == s->wlen) {
			int r = fill(s);

			if (r < 0)
				return -1;
			if (r == 0)
				return ckpt_fsrc_fail(s, "truncated %s", what);
		}
		k = s->wlen - s->wpos < n ? s->wlen - s->wpos : n;
		if (o) {
			memcpy(o, s->win + s->wpos, k);
			o += k;
		}
		if (s->capture && cap_add(s, s->win + s->wpos, k) < 0)
			return -1;
		s->wpos += k;
		n -= k;
	}
	return 0;
}

/* As ckpt_fsrc_fail, at the byte back bytes before the cursor (all of them read from this source). */
static int
fail_back(struct ckpt_fsrc *s, uint64_t back, const char *msg)
{
	if (s->snappy)
		return ckpt_err_set(s->e, CKPT_ERR_INPUT, s->where, "offset %llu (Snappy chunk), byte %llu of its stream: %s",
				    (unsigned long long)(s->base + s->wat),
				    (unsigned long long)(s->zdone + s->wpos - back), msg);
	return ckpt_err_set(s->e, CKPT_ERR_INPUT, s->where, "offset %llu: %s",
			    (unsigned long long)(s->base + s->wat + s->wpos - back), msg);
}

int
ckpt_fsrc_utf(struct ckpt_fsrc *s, char **out, const char *what)
{
	unsigned char b[65536];
	char why[300];
	int16_t len;
	size_t n, bad;
	int rc;

	*out = NULL;
	if (ckpt_fsrc_i16(s, &len, what) < 0)
		return -1;
	n = (uint16_t)len;
	if (ckpt_fsrc_read(s, b, n, what) < 0)
		return -1;
	if ((rc = ckpt_javaser_mutf8(b, n, out, &bad)) == 0)
		return 0;
	if (rc == CKPT_JAVASER_ENOMEM)
		return ckpt_fsrc_nomem(s);
	ckpt_javaser_mutf8_why(rc, b, n, bad, what, why, sizeof why);
	return fail_back(s, n - bad, why);
}

int
ckpt_fsrc_blob(struct ckpt_fsrc *s, unsigned char **out, size_t *n, const char *what)
{
	size_t cap = 0;

	*out = NULL;
	if (ckpt_fsrc_blob_buf(s, out, &cap, n, what) == 0)
		return 0;
	free(*out);
	*out = NULL;
	return -1;
}

int
ckpt_fsrc_blob_buf(struct ckpt_fsrc *s, unsigned char **out, size_t *bufcap, size_t *n, const char *what)
{
	unsigned char *p = *out;
	size_t have = 0, cap = *bufcap;
	int32_t len;

	*n = 0;
	if (ckpt_fsrc_i32(s, &len, what) < 0)
		return -1;
	if (len < 0)
		return ckpt_fsrc_fail(s, "negative length %d of %s", len, what);
	if (len > 0 && (size_t)len <= cap && (size_t)len <= s->wlen - s->wpos && !s->capture) { /* the common case */
		memcpy(p, s->win + s->wpos, (size_t)len);
		s->wpos += (size_t)len;
		*n = (size_t)len;
		return 0;
	}
	if (!s->snappy && (uint64_t)len > s->size - ckpt_fsrc_tell(s))
		return ckpt_fsrc_fail(s, "%s of %d bytes, more than the %llu left", what, len,
				      (unsigned long long)(s->size - ckpt_fsrc_tell(s)));
	while (have < (size_t)len) {
		size_t k = (size_t)len - have < BLOB_STEP ? (size_t)len - have : BLOB_STEP;

		if (have + k > cap) {
			if (ckpt_grow(out, bufcap, have + k, 1, BLOB_STEP, NULL) < 0)
				return ckpt_fsrc_nomem(s);
			p = *out;
			cap = *bufcap;
		}
		if (ckpt_fsrc_read(s, p + have, k, what) < 0)
			return -1;
		have += k;
	}
	*n = have;
	return 0;
}

