/* s3.c: objects in S3 or an S3-compatible store (the transport: s3-request.c): read by range and
 * checked against the object's ETag, listed, uploaded whole or not at all, deleted. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "s3-request.h"

#define AHEAD_MIN ((size_t)256 << 10) /* a read fetches at least this much ahead... */
#define AHEAD_MAX ((size_t)16 << 20)  /* ...and, while a file is read on, up to this */

static pthread_mutex_t fetched_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t fetched;
static uint64_t progress_base; /* fetched when ckpt_s3_progress_begin was called */
static int progress_key;        /* its address names the work reported */

uint64_t
ckpt_s3_fetched(void)
{
	uint64_t n;

	pthread_mutex_lock(&fetched_mu);
	n = fetched;
	pthread_mutex_unlock(&fetched_mu);
	return n;
}

/* n more bytes came; reported under the lock, so that threads fetching at once report in turn */
static void
count_fetched(size_t n)
{
	pthread_mutex_lock(&fetched_mu);
	fetched += n;
	ckpt_progress_at(&progress_key, fetched - progress_base);
	pthread_mutex_unlock(&fetched_mu);
}

void
ckpt_s3_progress_begin(uint64_t need)
{
	pthread_mutex_lock(&fetched_mu);
	progress_base = fetched;
	ckpt_progress_begin(&progress_key, "bytes", need);
	pthread_mutex_unlock(&fetched_mu);
}

void
ckpt_s3_progress_end(void)
{
	ckpt_progress_end(&progress_key);
}

/* ------------------------------------------------------------ objects read by range */

struct ckpt_s3obj {
	struct ckpt_s3loc l;
	uint64_t size;
	char etag[256];
	unsigned char *buf; /* buf[0, blen) holds the object's bytes from boff */
	uint64_t boff;
	size_t blen, bcap, ahead;
	uint64_t limit; /* no read-ahead at or past it (0: the object's end) */
};

/* HEAD: size and ETag; a HEAD has no body, so its error is asked again with a GET of one byte to
 * learn the server's error code.  0, 1 absent (404 NoSuchKey), -1 with e set. */
static int
head(const struct ckpt_s3loc *l, uint64_t *size, char *etag, size_t etagn, struct ckpt_err *e)
{
	struct ckpt_s3req r = {.l = l, .method = "HEAD"};
	curl_off_t cl = -1;
	int rc = -1;

	ckpt_s3_url_of(l, NULL, r.url, sizeof r.url);
	if (ckpt_s3req_run(&r, 1, e) < 0)
		goto out;
	if (r.status / 100 != 2) {
		struct ckpt_s3req g = {.l = l, .method = "GET", .range = "bytes=0-0"};

		memcpy(g.url, r.url, sizeof g.url);
		if (ckpt_s3req_run(&g, 1, e) == 0) {
			if (g.status == 404 && strstr(g.body ? (char *)g.body : "", "<Code>NoSuchKey<"))
				rc = 1;
			else if (g.status / 100 == 2) /* answered now: let the caller try again */
				ckpt_err_set(e, CKPT_ERR_INPUT, l->where, "HEAD: HTTP %ld, but a GET succeeds", r.status);
			else
				ckpt_s3req_fail(&g, e);
		}
		ckpt_s3req_release(&g);
		goto out;
	}
	curl_easy_getinfo(r.h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
	if (cl < 0) {
		ckpt_err_set(e, CKPT_ERR_INPUT, l->where, "HEAD: no Content-Length in the answer");
		goto out;
	}
	*size = (uint64_t)cl;
	if (etag)
		snprintf(etag, etagn, "%s", r.etag);
	rc = 0;
out:
	ckpt_s3req_release(&r);
	return rc;
}

/* ------------------------------------------------------------ objects pinned for the run */

/*
 * The first HEAD of an object pins its size and ETag for the rest of the run: a later open reads
 * the same object (its ranges asked with If-Match) or fails, so that a file read twice (checked,
 * then printed) is one object both times, and its HEAD is not asked again.  Writing or deleting
 * an object forgets it.
 */
struct pin {
	char *name; /* bucket/key */
	uint64_t size;
	char *etag;
	int live;
};
static pthread_mutex_t pin_mu = PTHREAD_MUTEX_INITIALIZER;
static struct pin *pins;
static size_t npins, pincap;
static struct ckpt_idmap pinmap;

static uint64_t
pin_hash(const void *ctx, size_t i)
{
	(void)ctx;
	return ckpt_xxh3(pins[i].name, strlen(pins[i].name));
}

static int
pin_eq(const void *ctx, size_t i, const void *key)
{
	(void)ctx;
	return strcmp(pins[i].name, key) == 0;
}

static long
pin_find(const char *name, uint64_t h)
{
	return ckpt_idmap_find(&pinmap, h, name, pin_eq, NULL);
}

static void
pin_name(const struct ckpt_s3loc *l, char *out, size_t n)
{
	snprintf(out, n, "%s/%s", l->bucket, l->key);
}

/* Pin name (hash h) at size and tag unless it is pinned already; called with pin_mu held.  The
 * index of its pin, or -1 with e set. */
static long
pin_set(const char *name, uint64_t h, uint64_t size, const char *tag, struct ckpt_err *e)
{
	long i = pin_find(name, h);
	char *t;

	if (i >= 0 && pins[i].live)
		return i;
	if (i < 0) {
		char *nm = strdup(name);

		if (nm == NULL || ckpt_grow(&pins, &pincap, npins + 1, sizeof *pins, 64, e) < 0 ||
		    ckpt_idmap_add(&pinmap, h, npins, pin_hash, NULL, e) < 0) {
			free(nm);
			return nm ? -1 : ckpt_err_nomem(e, name);
		}
		i = (long)npins++;
		pins[i] = (struct pin){.name = nm};
	}
	if ((t = strdup(tag)) == NULL)
		return ckpt_err_nomem(e, name);
	free(pins[i].etag);
	pins[i].etag = t;
	pins[i].size = size;
	pins[i].live = 1;
	return i;
}

/* head() through the pins: the pinned size and ETag, else the server's, pinned now (unless another
 * thread pinned it meanwhile: then that). */
static int
head_pinned(const struct ckpt_s3loc *l, uint64_t *size, char *etag, size_t etagn, struct ckpt_err *e)
{
	char name[sizeof l->bucket + sizeof l->key + 1], tag[256];
	uint64_t h, sz;
	long i;
	int rc;

	pin_name(l, name, sizeof name);
	h = ckpt_xxh3(name, strlen(name));
	pthread_mutex_lock(&pin_mu);
	if ((i = pin_find(name, h)) >= 0 && pins[i].live)
		goto found;
	pthread_mutex_unlock(&pin_mu);
	if ((rc = head(l, &sz, tag, sizeof tag, e)) != 0)
		return rc;
	pthread_mutex_lock(&pin_mu);
	if ((i = pin_set(name, h, sz, tag, e)) < 0) {
		pthread_mutex_unlock(&pin_mu);
		return -1;
	}
found:
	*size = pins[i].size;
	if (etag)
		snprintf(etag, etagn, "%s", pins[i].etag);
	pthread_mutex_unlock(&pin_mu);
	return 0;
}

/* An object a listing named with its size and ETag: pinned as a HEAD would pin it, so that
 * opening it later asks no HEAD (a listing of thousands of files is not followed by as many). */
static int
pin_listed(const char *bucket, const char *key, uint64_t size, const char *etag, struct ckpt_err *e)
{
	char name[4400], tag[256];
	long i;

	/* the ETag as a HEAD gives it, quoted (some stores list it bare) */
	snprintf(tag, sizeof tag, etag[0] == '"' ? "%s" : "\"%s\"", etag);
	if ((size_t)snprintf(name, sizeof name, "%s/%s", bucket, key) >= sizeof name)
		return 0;
	pthread_mutex_lock(&pin_mu);
	i = pin_set(name, ckpt_xxh3(name, strlen(name)), size, tag, e);
	pthread_mutex_unlock(&pin_mu);
	return i < 0 ? -1 : 0;
}

/* The object at l was written or deleted: read it afresh. */
static void
pin_forget(const struct ckpt_s3loc *l)
{
	char name[sizeof l->bucket + sizeof l->key + 1];
	long i;

	pin_name(l, name, sizeof name);
	pthread_mutex_lock(&pin_mu);
	if ((i = pin_find(name, ckpt_xxh3(name, strlen(name)))) >= 0)
		pins[i].live = 0;
	pthread_mutex_unlock(&pin_mu);
}

struct ckpt_s3obj *
ckpt_s3obj_open(const char *url, struct ckpt_err *e)
{
	struct ckpt_s3obj *o;
	int r;

	if (ckpt_s3_ready(url, e) < 0 || (o = ckpt_calloc(1, sizeof *o, e)) == NULL)
		return NULL;
	if (ckpt_s3_parse(url, &o->l, e) < 0 || (r = head_pinned(&o->l, &o->size, o->etag, sizeof o->etag, e)) < 0)
		goto fail;
	if (r == 1) {
		ckpt_err_set(e, CKPT_ERR_INPUT, o->l.where, "no such object (HTTP 404 NoSuchKey)");
		goto fail;
	}
	o->ahead = ckpt_s3_cfg.part < AHEAD_MIN ? ckpt_s3_cfg.part : AHEAD_MIN;
	return o;
fail:
	free(o);
	return NULL;
}

uint64_t
ckpt_s3obj_size(const struct ckpt_s3obj *o)
{
	return o->size;
}

void
ckpt_s3obj_close(struct ckpt_s3obj *o)
{
	if (o == NULL)
		return;
	free(o->buf);
	free(o);
}

/* Check that r brought exactly bytes [from, from + want) of an object of size bytes. */
static int
check_range(const struct ckpt_s3req *r, uint64_t from, uint64_t size, struct ckpt_err *e)
{
	unsigned long long a, b, total;

	if (r->status != 206 && !(r->status == 200 && from == 0 && r->want == size))
		return r->status / 100 == 2 ? ckpt_err_set(e, CKPT_ERR_INPUT, r->l->where,
							   "GET %s: HTTP %ld, not the range asked for", r->range, r->status)
					    : ckpt_s3req_fail(r, e);
	if (r->status == 206 && (sscanf(r->crange, "bytes %llu-%llu/%llu", &a, &b, &total) != 3 || a != from ||
				 b + 1 != from + r->want || total != size))
		return ckpt_err_set(e, CKPT_ERR_INPUT, r->l->where, "GET %s: the server sent %s instead (of %llu bytes)",
				    r->range, r->crange[0] ? r->crange : "no Content-Range", (unsigned long long)size);
	if (r->overflow || r->len != r->want)
		return ckpt_err_set(e, CKPT_ERR_INPUT, r->l->where, "GET %s: %zu bytes came, %zu asked for (a short read)",
				    r->range, r->len, r->want);
	return 0;
}

/* Bytes [from, from + n) of o into dst, in ranges of ckpt_s3_cfg.part, several in flight. */
static int
fetch(struct ckpt_s3obj *o, unsigned char *dst, uint64_t from, size_t n, struct ckpt_err *e)
{
	size_t nr = (n + ckpt_s3_cfg.part - 1) / ckpt_s3_cfg.part, i;
	struct ckpt_s3req *rs = ckpt_calloc(nr ? nr : 1, sizeof *rs, e);
	int rc = -1;

	if (rs == NULL)
		return -1;
	for (i = 0; i < nr; i++) {
		uint64_t a = from + i * ckpt_s3_cfg.part;
		size_t k = n - i * ckpt_s3_cfg.part < ckpt_s3_cfg.part ? n - i * ckpt_s3_cfg.part : ckpt_s3_cfg.part;

		rs[i] = (struct ckpt_s3req){.l = &o->l, .method = "GET", .if_match = o->etag[0] ? o->etag : NULL,
				     .dst = dst + i * ckpt_s3_cfg.part, .want = k};
		ckpt_s3_url_of(&o->l, NULL, rs[i].url, sizeof rs[i].url);
		snprintf(rs[i].range, sizeof rs[i].range, "bytes=%" PRIu64 "-%" PRIu64, a, a + k - 1);
	}
	if (ckpt_s3req_run(rs, nr, e) < 0)
		goto out;
	for (i = 0; i < nr; i++)
		if (check_range(&rs[i], from + i * ckpt_s3_cfg.part, o->size, e) < 0)
			goto out;
	count_fetched(n);
	rc = 0;
out:
	for (i = 0; i < nr; i++)
		ckpt_s3req_release(&rs[i]);
	free(rs);
	return rc;
}

int
ckpt_s3obj_pread(struct ckpt_s3obj *o, void *p, size_t n, uint64_t off, struct ckpt_err *e)
{
	unsigned char *out = p;

	if (off > o->size || n > o->size - off)
		return ckpt_err_set(e, CKPT_ERR_INPUT, o->l.where, "offset %" PRIu64 ": the object ends at %" PRIu64,
				    off + (off > o->size ? 0 : o->size - off), o->size);
	while (n > 0) {
		size_t k, want;

		if (off >= o->boff && off < o->boff + o->blen) {
			k = o->boff + o->blen - off < n ? (size_t)(o->boff + o->blen - off) : n;
			memcpy(out, o->buf + (off - o->boff), k);
			out += k;
			off += k;
			n -= k;
			continue;
		}
		if (o->blen && off == o->boff + o->blen && o->ahead < AHEAD_MAX) /* reading on: fetch more at once */
			o->ahead *= 2;
		want = n > o->ahead ? n : o->ahead;
		if (want > o->size - off)
			want = (size_t)(o->size - off);
		if (o->limit > off && want > o->limit - off) /* what is asked, but nothing ahead past the limit */
			want = n > o->limit - off ? n : (size_t)(o->limit - off);
		if (ckpt_grow(&o->buf, &o->bcap, want, 1, want, e) < 0)
			return -1;
		o->blen = 0;
		if (fetch(o, o->buf, off, want, e) < 0)
			return -1;
		o->boff = off;
		o->blen = want;
	}
	return 0;
}

void
ckpt_s3obj_limit(struct ckpt_s3obj *o, uint64_t end)
{
	o->limit = end;
}

int
ckpt_s3obj_copy(struct ckpt_s3obj *o, int fd, const char *path, struct ckpt_err *e)
{
	static const size_t step = (size_t)1 << 20;
	unsigned char *b = malloc(step);
	int rc = -1;

	if (b == NULL)
		return ckpt_err_nomem(e, o->l.where);
	for (uint64_t off = 0; off < o->size;) {
		size_t k = o->size - off < step ? (size_t)(o->size - off) : step, w = 0;

		if (ckpt_s3obj_pread(o, b, k, off, e) < 0)
			goto out;
		while (w < k) {
			ssize_t r = write(fd, b + w, k - w);

			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				ckpt_err_sys(e, path, "cannot write");
				goto out;
			}
			w += (size_t)r;
		}
		off += k;
	}
	rc = 0;
out:
	free(b);
	return rc;
}

int
ckpt_s3_get(const char *url, unsigned char **p, size_t *n, struct ckpt_err *e)
{
	struct ckpt_s3obj *o = ckpt_s3obj_open(url, e);
	unsigned char *b;

	*p = NULL;
	*n = 0;
	if (o == NULL)
		return -1;
	if ((b = malloc(o->size ? (size_t)o->size : 1)) == NULL) {
		ckpt_s3obj_close(o);
		return ckpt_err_nomem(e, url);
	}
	if (o->size && fetch(o, b, 0, (size_t)o->size, e) < 0) {
		free(b);
		ckpt_s3obj_close(o);
		return -1;
	}
	*p = b;
	*n = (size_t)o->size;
	ckpt_s3obj_close(o);
	return 0;
}

int
ckpt_s3_stat(const char *url, uint64_t *size, struct ckpt_err *e)
{
	struct ckpt_s3loc l;

	if (ckpt_s3_ready(url, e) < 0 || ckpt_s3_parse(url, &l, e) < 0)
		return -1;
	return head_pinned(&l, size, NULL, 0, e);
}

/* ------------------------------------------------------------ listing */

/* The text of the first <tag>...</tag> at or after s, into out; the end of it, or NULL. */
static const char *
xml_get(const char *s, const char *tag, char *out, size_t n)
{
	char open[64], close[64];
	const char *a, *b;

	snprintf(open, sizeof open, "<%s>", tag);
	snprintf(close, sizeof close, "</%s>", tag);
	if ((a = strstr(s, open)) == NULL || (b = strstr(a, close)) == NULL)
		return NULL;
	a += strlen(open);
	snprintf(out, n, "%.*s", (int)(b - a), a);
	return b + strlen(close);
}

/* XML's five entities, in place. */
static void
unxml(char *s)
{
	static const char *ent[][2] = {{"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&apos;", "'"}};
	char *o = s;

	while (*s) {
		size_t i;

		for (i = 0; i < 5; i++)
			if (strncmp(s, ent[i][0], strlen(ent[i][0])) == 0)
				break;
		if (i < 5) {
			*o++ = ent[i][1][0];
			s += strlen(ent[i][0]);
		} else
			*o++ = *s++;
	}
	*o = '\0';
}

/* S3's LastModified (ISO 8601 in UTC, "2026-12-05T13:25:00.123Z") as seconds and nanoseconds;
 * -1 seconds when it is not that. */
static void
parse_time(const char *s, int64_t *sec, long *nsec)
{
	struct tm tm = {0};
	int n = 0;

	*sec = -1;
	*nsec = 0;
	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
		   &tm.tm_sec, &n) != 6)
		return;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	*sec = (int64_t)timegm(&tm);
	if (s[n] == '.')
		for (long scale = 100000000L, k = n + 1; isdigit((unsigned char)s[k]) && scale > 0; k++, scale /= 10)
			*nsec += (s[k] - '0') * scale;
}

/* The objects of one page of a listing, each pinned (its size and ETag) and fn called with it: 0,
 * what fn returned, or -1 with e set. */
static int
list_page(const struct ckpt_s3loc *l, char *s, int (*fn)(void *arg, const struct ckpt_s3_entry *o), void *arg,
	  struct ckpt_err *e)
{
	char key[2048], size[32], when[64], full[2400], etag[256];
	int rc;

	while ((s = strstr(s, "<Contents>")) != NULL) {
		char *end = strstr(s, "</Contents>");
		struct ckpt_s3_entry o = {.url = full};

		if (end == NULL)
			break;
		*end = '\0'; /* what follows is read within this object's element only */
		if (!xml_get(s, "Key", key, sizeof key) || !xml_get(s, "Size", size, sizeof size))
			break;
		unxml(key);
		if (xml_get(s, "LastModified", when, sizeof when))
			parse_time(when, &o.mtime_sec, &o.mtime_nsec);
		else
			o.mtime_sec = -1;
		if (!xml_get(s, "ETag", etag, sizeof etag))
			etag[0] = '\0';
		s = end + 1;
		if (key[0] && key[strlen(key) - 1] == '/') /* a directory marker, not an object */
			continue;
		snprintf(full, sizeof full, "s3://%s/%s", l->bucket, key);
		o.size = strtoull(size, NULL, 10);
		if (etag[0]) {
			unxml(etag);
			if (pin_listed(l->bucket, key, o.size, etag, e) < 0)
				return -1;
		}
		if ((rc = fn(arg, &o)) != 0)
			return rc;
	}
	return 0;
}

int
ckpt_s3_list(const char *url, int (*fn)(void *arg, const struct ckpt_s3_entry *o), void *arg, struct ckpt_err *e)
{
	struct ckpt_s3loc l, b;
	char token[2048] = "", q[8192], pre[6200], tok[6200], trunc[16];
	const char *maxkeys = getenv("CKPT_S3_MAX_KEYS"); /* tests page through small pages */
	int rc = 0, more = 1;

	if (ckpt_s3_ready(url, e) < 0 || ckpt_s3_parse(url, &l, e) < 0)
		return -1;
	b = l;
	b.key[0] = '\0';
	ckpt_s3_enc(pre, sizeof pre, l.key, 0);
	while (more && rc == 0) {
		struct ckpt_s3req r = {.l = &l, .method = "GET"};

		/* the parameters in the order SigV4 signs them */
		ckpt_s3_enc(tok, sizeof tok, token, 0);
		snprintf(q, sizeof q, "%s%s%slist-type=2%s%s&prefix=%s", token[0] ? "continuation-token=" : "",
			 token[0] ? tok : "", token[0] ? "&" : "", maxkeys ? "&max-keys=" : "", maxkeys ? maxkeys : "", pre);
		ckpt_s3_url_of(&b, q, r.url, sizeof r.url);
		if (ckpt_s3req_one(&r, e) < 0) {
			ckpt_s3req_release(&r);
			return -1;
		}
		if (r.body == NULL) {
			ckpt_s3req_release(&r);
			return ckpt_err_set(e, CKPT_ERR_INPUT, l.where, "GET ?list-type=2: an empty answer");
		}
		more = xml_get((char *)r.body, "IsTruncated", trunc, sizeof trunc) && strcmp(trunc, "true") == 0;
		if (more && !xml_get((char *)r.body, "NextContinuationToken", token, sizeof token)) {
			ckpt_s3req_release(&r);
			return ckpt_err_set(e, CKPT_ERR_INPUT, l.where, "GET ?list-type=2: a truncated listing without "
					    "a NextContinuationToken");
		}
		unxml(token);
		rc = list_page(&l, (char *)r.body, fn, arg, e);
		ckpt_s3req_release(&r);
	}
	return rc;
}

/* ------------------------------------------------------------ writing */

int
ckpt_s3_delete(const char *url, struct ckpt_err *e)
{
	struct ckpt_s3loc l;
	struct ckpt_s3req r = {.l = &l, .method = "DELETE"};
	int rc;

	if (ckpt_s3_ready(url, e) < 0 || ckpt_s3_parse(url, &l, e) < 0)
		return -1;
	ckpt_s3_url_of(&l, NULL, r.url, sizeof r.url);
	rc = ckpt_s3req_one(&r, e);
	ckpt_s3req_release(&r);
	pin_forget(&l);
	return rc;
}

static int
put(const struct ckpt_s3loc *l, const char *q, const char *method, const unsigned char *p, size_t n, char **body,
    char *etag, size_t etagn, struct ckpt_err *e)
{
	struct ckpt_s3req r = {.l = l, .method = method, .up = p ? p : (const unsigned char *)"", .upn = n};
	int rc;

	ckpt_s3_url_of(l, q, r.url, sizeof r.url);
	rc = ckpt_s3req_one(&r, e);
	pin_forget(l);
	if (rc == 0 && body)
		*body = r.body ? strdup((char *)r.body) : strdup("");
	if (rc == 0 && etag)
		snprintf(etag, etagn, "%s", r.etag);
	ckpt_s3req_release(&r);
	return rc;
}

static int
read_at(FILE *f, unsigned char *b, size_t n, const char *path, struct ckpt_err *e)
{
	if (fread(b, 1, n, f) != n)
		return ckpt_err_sys(e, path, ferror(f) ? "read error" : "the file shrank during the upload");
	return 0;
}

static int
multipart(FILE *f, uint64_t size, const struct ckpt_s3loc *l, const char *path, struct ckpt_err *e)
{
	size_t part = (size_t)ckpt_s3_cfg.multipart, np = (size_t)((size + part - 1) / part), xn = 0, xc = 0;
	unsigned char *b = malloc(part);
	char *body = NULL, id[1024], eid[3100], q[3400], *xml = NULL;
	int rc = -1, created = 0;

	if (b == NULL)
		return ckpt_err_nomem(e, l->where);
	if (put(l, "uploads=", "POST", NULL, 0, &body, NULL, 0, e) < 0)
		goto out;
	if (!xml_get(body, "UploadId", id, sizeof id)) {
		ckpt_err_set(e, CKPT_ERR_INPUT, l->where, "POST ?uploads: no UploadId in the answer");
		goto out;
	}
	created = 1;
	unxml(id);
	ckpt_s3_enc(eid, sizeof eid, id, 0);
	xc = 128 + np * 400;
	if ((xml = malloc(xc)) == NULL) {
		ckpt_err_nomem(e, l->where);
		goto out;
	}
	xn = (size_t)snprintf(xml, xc, "<CompleteMultipartUpload>");
	for (size_t i = 0; i < np; i++) {
		size_t k = size - i * part < part ? (size_t)(size - i * part) : part;
		char etag[256];

		snprintf(q, sizeof q, "partNumber=%zu&uploadId=%s", i + 1, eid);
		if (read_at(f, b, k, path, e) < 0 || put(l, q, "PUT", b, k, NULL, etag, sizeof etag, e) < 0)
			goto out;
		xn += (size_t)snprintf(xml + xn, xc - xn, "<Part><PartNumber>%zu</PartNumber><ETag>%s</ETag></Part>", i + 1,
				       etag);
	}
	snprintf(xml + xn, xc - xn, "</CompleteMultipartUpload>");
	snprintf(q, sizeof q, "uploadId=%s", eid);
	free(body);
	body = NULL;
	if (put(l, q, "POST", (unsigned char *)xml, strlen(xml), &body, NULL, 0, e) < 0)
		goto out;
	if (strstr(body, "<Error>")) { /* S3 may fail a completion inside a 200 */
		struct ckpt_s3req r = {.l = l, .method = "POST", .status = 200, .body = (unsigned char *)body};

		ckpt_s3req_fail(&r, e);
		goto out;
	}
	rc = 0;
out:
	if (rc < 0 && created) {
		struct ckpt_err ignored = {0};

		snprintf(q, sizeof q, "uploadId=%s", eid);
		put(l, q, "DELETE", NULL, 0, NULL, NULL, 0, &ignored);
	}
	free(body);
	free(xml);
	free(b);
	return rc;
}

int
ckpt_s3_put_file(const char *path, const char *url, struct ckpt_err *e)
{
	struct ckpt_s3loc l;
	struct stat sb;
	unsigned char *b = NULL;
	FILE *f;
	int rc = -1;

	if (ckpt_s3_ready(url, e) < 0 || ckpt_s3_parse(url, &l, e) < 0)
		return -1;
	if ((f = fopen(path, "rb")) == NULL || fstat(fileno(f), &sb) < 0) {
		if (f)
			fclose(f);
		return ckpt_err_sys(e, path, "cannot open");
	}
	if ((uint64_t)sb.st_size > ckpt_s3_cfg.multipart)
		rc = multipart(f, (uint64_t)sb.st_size, &l, path, e);
	else if ((b = malloc(sb.st_size ? (size_t)sb.st_size : 1)) == NULL)
		ckpt_err_nomem(e, path);
	else if (read_at(f, b, (size_t)sb.st_size, path, e) == 0)
		rc = put(&l, NULL, "PUT", b, (size_t)sb.st_size, NULL, NULL, 0, e);
	free(b);
	fclose(f);
	return rc;
}

struct uploaded {
	char **url;
	size_t n, cap;
};

static int upload_dir(const char *dir, const char *url, const char *last, struct uploaded *u, struct ckpt_err *e);

/* dir/name to url/name: a file uploaded, a directory's files under the prefix url/name/. */
static int
upload_one(const char *dir, const char *url, const char *name, struct uploaded *u, struct ckpt_err *e)
{
	const char *sep = url[0] && url[strlen(url) - 1] == '/' ? "" : "/";
	char src[4096], dst[4096];
	struct stat sb;

	snprintf(src, sizeof src, "%s/%s", dir, name);
	snprintf(dst, sizeof dst, "%s%s%s", url, sep, name);
	if (lstat(src, &sb) < 0)
		return ckpt_err_sys(e, src, "cannot open");
	if (S_ISDIR(sb.st_mode))
		return upload_dir(src, dst, NULL, u, e);
	if (ckpt_grow(&u->url, &u->cap, u->n + 1, sizeof *u->url, 16, e) < 0 || ckpt_s3_put_file(src, dst, e) < 0)
		return -1;
	if ((u->url[u->n] = ckpt_strdup(dst, e)) == NULL)
		return -1;
	u->n++;
	return 0;
}

/* The files of dir under the prefix url, last (a name, or NULL) last. */
static int
upload_dir(const char *dir, const char *url, const char *last, struct uploaded *u, struct ckpt_err *e)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int rc = -1;

	if (d == NULL)
		return ckpt_err_sys(e, dir, "cannot open");
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 || (last && strcmp(de->d_name, last) == 0))
			continue;
		if (upload_one(dir, url, de->d_name, u, e) < 0)
			goto out;
	}
	if (last && upload_one(dir, url, last, u, e) < 0)
		goto out;
	rc = 0;
out:
	closedir(d);
	return rc;
}

int
ckpt_s3_put_dir(const char *dir, const char *url, const char *last, struct ckpt_err *e)
{
	struct uploaded u = {0};
	int rc = upload_dir(dir, url, last, &u, e);

	for (size_t i = 0; i < u.n; i++) {
		struct ckpt_err ignored = {0};

		if (rc < 0)
			ckpt_s3_delete(u.url[i], &ignored);
		free(u.url[i]);
	}
	free(u.url);
	return rc;
}
