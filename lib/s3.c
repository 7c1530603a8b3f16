/* s3.c: objects in S3 or an S3-compatible store through libcurl: the configuration every AWS tool
 * reads (ckpt(7), ENVIRONMENT), requests signed with AWS Signature V4 and retried with backoff,
 * ranged reads checked against the object's ETag, listing, uploads whole or not at all. */
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <ctype.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "progress-internal.h"
#include "s3-internal.h"

#define ATTEMPTS 5                        /* a request tried at most this often */
#define BACKOFF_MS 100                    /* before the second attempt; doubled after each */
#define PART_DEFAULT ((size_t)1 << 20)    /* bytes per ranged GET */
#define AHEAD_MAX ((size_t)16 << 20)      /* the most a read fetches ahead */
#define MULTIPART_DEFAULT ((uint64_t)8 << 20) /* uploads above this go in parts of this size */
#define IN_FLIGHT 8
#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

/* ------------------------------------------------------------ configuration */

struct s3cfg {
	char key[256], secret[256], token[2048], region[64], endpoint[512];
	int path_style;
	size_t part;       /* CKPT_S3_PART: bytes per ranged GET (tests make it small) */
	uint64_t multipart; /* CKPT_S3_MULTIPART: the size above which uploads go in parts */
	char why[300];     /* set when the configuration cannot be used */
};

static struct s3cfg cfg;
static CURLSH *share;
static pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t fetched_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t fetched;

static const char *
env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

static void
trim(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	memmove(s, s + strspn(s, " \t"), strlen(s + strspn(s, " \t")) + 1);
}

/* The value of key in section sect of an INI file (the AWS files' form; nested "s3 =" blocks are
 * read as if flat): 1 found, 0 not. */
static int
ini_get(const char *path, const char *sect, const char *key, char *out, size_t n)
{
	FILE *f = path ? fopen(path, "r") : NULL;
	char line[4096], cur[256] = "";
	int found = 0;

	if (f == NULL)
		return 0;
	while (!found && fgets(line, sizeof line, f)) {
		char *eq;

		trim(line);
		if (line[0] == '#' || line[0] == ';' || line[0] == '\0')
			continue;
		if (line[0] == '[') {
			char *end = strchr(line, ']');

			if (end)
				*end = '\0';
			snprintf(cur, sizeof cur, "%s", line + 1);
			trim(cur);
			continue;
		}
		if (strcmp(cur, sect) != 0 || (eq = strchr(line, '=')) == NULL)
			continue;
		*eq = '\0';
		trim(line);
		trim(eq + 1);
		if (strcmp(line, key) == 0) {
			snprintf(out, n, "%s", eq + 1);
			found = 1;
		}
	}
	fclose(f);
	return found;
}

static void
home_file(char *out, size_t n, const char *var, const char *name)
{
	const char *home = env("HOME");

	if (env(var))
		snprintf(out, n, "%s", env(var));
	else if (home)
		snprintf(out, n, "%s/.aws/%s", home, name);
	else
		out[0] = '\0';
}

static void
set(char *dst, size_t n, const char *v)
{
	if (dst[0] == '\0' && v)
		snprintf(dst, n, "%s", v);
}

static void
load_files(struct s3cfg *c)
{
	const char *profile = env("AWS_PROFILE") ? env("AWS_PROFILE") : "default";
	char creds[4096], conf[4096], csect[300], style[32] = "", v[2048];

	home_file(creds, sizeof creds, "AWS_SHARED_CREDENTIALS_FILE", "credentials");
	home_file(conf, sizeof conf, "AWS_CONFIG_FILE", "config");
	snprintf(csect, sizeof csect, strcmp(profile, "default") == 0 ? "%s" : "profile %s", profile);
	if (c->key[0] == '\0') { /* key and secret come from one place, never mixed */
		if (ini_get(creds, profile, "aws_access_key_id", c->key, sizeof c->key)) {
			ini_get(creds, profile, "aws_secret_access_key", c->secret, sizeof c->secret);
			ini_get(creds, profile, "aws_session_token", c->token, sizeof c->token);
		} else if (ini_get(conf, csect, "aws_access_key_id", c->key, sizeof c->key)) {
			ini_get(conf, csect, "aws_secret_access_key", c->secret, sizeof c->secret);
			ini_get(conf, csect, "aws_session_token", c->token, sizeof c->token);
		}
	}
	if (c->region[0] == '\0' && ini_get(conf, csect, "region", v, sizeof v))
		set(c->region, sizeof c->region, v);
	if (c->endpoint[0] == '\0' && ini_get(conf, csect, "endpoint_url", v, sizeof v))
		set(c->endpoint, sizeof c->endpoint, v);
	if (ini_get(conf, csect, "addressing_style", style, sizeof style))
		c->path_style = strcmp(style, "path") == 0 ? 1 : strcmp(style, "virtual") == 0 ? 0 : -1;
}

static void
lock_cb(CURL *h, curl_lock_data d, curl_lock_access a, void *u)
{
	(void)h, (void)a, (void)u;
	pthread_mutex_lock(&locks[d]);
}

static void
unlock_cb(CURL *h, curl_lock_data d, void *u)
{
	(void)h, (void)u;
	pthread_mutex_unlock(&locks[d]);
}

static void
cleanup(void)
{
	curl_share_cleanup(share);
	curl_global_cleanup();
}

static void
init(void)
{
	struct s3cfg *c = &cfg;
	const char *v;

	c->path_style = -1;
	set(c->key, sizeof c->key, env("AWS_ACCESS_KEY_ID"));
	set(c->secret, sizeof c->secret, env("AWS_SECRET_ACCESS_KEY"));
	set(c->token, sizeof c->token, env("AWS_SESSION_TOKEN"));
	set(c->region, sizeof c->region, env("AWS_REGION"));
	set(c->region, sizeof c->region, env("AWS_DEFAULT_REGION"));
	set(c->endpoint, sizeof c->endpoint, env("AWS_ENDPOINT_URL_S3"));
	set(c->endpoint, sizeof c->endpoint, env("AWS_ENDPOINT_URL"));
	load_files(c);
	set(c->region, sizeof c->region, "us-east-1");
	if ((v = env("CKPT_S3_ADDRESSING")) != NULL)
		c->path_style = strcmp(v, "path") == 0;
	if (c->path_style < 0) /* a custom endpoint: path-style; AWS itself: virtual-hosted */
		c->path_style = c->endpoint[0] != '\0';
	for (size_t n = strlen(c->endpoint); n > 0 && c->endpoint[n - 1] == '/';)
		c->endpoint[--n] = '\0';
	c->part = env("CKPT_S3_PART") ? (size_t)strtoull(env("CKPT_S3_PART"), NULL, 10) : PART_DEFAULT;
	if (c->part == 0)
		c->part = PART_DEFAULT;
	c->multipart = env("CKPT_S3_MULTIPART") ? strtoull(env("CKPT_S3_MULTIPART"), NULL, 10) : MULTIPART_DEFAULT;
	if (c->multipart < 5 << 20) /* S3's smallest part */
		c->multipart = 5 << 20;
	if (c->key[0] == '\0' || c->secret[0] == '\0')
		snprintf(c->why, sizeof c->why, "no AWS credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
			 "or a profile in ~/.aws/credentials)");
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
		snprintf(c->why, sizeof c->why, "cannot initialise libcurl");
		return;
	}
	for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_init(&locks[i], NULL);
	if ((share = curl_share_init()) != NULL) {
		curl_share_setopt(share, CURLSHOPT_LOCKFUNC, lock_cb);
		curl_share_setopt(share, CURLSHOPT_UNLOCKFUNC, unlock_cb);
		curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
		curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
		curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
	}
	atexit(cleanup);
}

static int
ready(const char *where, struct ckpt_err *e)
{
	pthread_once(&once, init);
	if (cfg.why[0])
		return ckpt_err_set(e, CKPT_ERR_INPUT, where, "%s", cfg.why);
	return 0;
}

uint64_t
ckpt_s3_fetched(void)
{
	uint64_t n;

	pthread_mutex_lock(&fetched_mu);
	n = fetched;
	pthread_mutex_unlock(&fetched_mu);
	return n;
}

/* ------------------------------------------------------------ addresses */

int
ckpt_s3_is_url(const char *p)
{
	return p && (strncmp(p, "s3://", 5) == 0 || strncmp(p, "s3a://", 6) == 0 || strncmp(p, "s3p://", 6) == 0);
}

struct loc {
	char bucket[256];
	char key[2048];
	char where[2400]; /* s3://bucket/key, as errors name it */
};

static int
parse(const char *url, struct loc *l, struct ckpt_err *e)
{
	const char *p = strstr(url, "://"), *slash;

	if (!ckpt_s3_is_url(url) || p == NULL)
		return ckpt_err_set(e, CKPT_ERR_INPUT, url, "not an s3:// URL");
	p += 3;
	slash = strchr(p, '/');
	if (slash == p || (size_t)(slash ? slash - p : (ptrdiff_t)strlen(p)) >= sizeof l->bucket)
		return ckpt_err_set(e, CKPT_ERR_INPUT, url, "an s3:// URL without a bucket");
	snprintf(l->bucket, sizeof l->bucket, "%.*s", (int)(slash ? slash - p : (ptrdiff_t)strlen(p)), p);
	snprintf(l->key, sizeof l->key, "%s", slash ? slash + 1 : "");
	snprintf(l->where, sizeof l->where, "s3://%s/%s", l->bucket, l->key);
	return 0;
}

/* AWS's URI encoding: unreserved bytes as they are, '/' kept when slash, the rest %XX. */
static void
enc(char *out, size_t n, const char *s, int slash)
{
	size_t o = 0;

	for (; *s && o + 4 < n; s++) {
		unsigned char c = (unsigned char)*s;

		if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (slash && c == '/'))
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, n - o, "%%%02X", c);
	}
	out[o] = '\0';
}

/* The request URL of l with query q (already encoded, parameters sorted). */
static void
url_of(const struct loc *l, const char *q, char *out, size_t n)
{
	char k[3 * sizeof l->key];

	enc(k, sizeof k, l->key, 1);
	if (cfg.path_style)
		snprintf(out, n, "%s/%s/%s%s%s", cfg.endpoint[0] ? cfg.endpoint : "https://s3.amazonaws.com",
			 l->bucket, k, q ? "?" : "", q ? q : "");
	else if (cfg.endpoint[0]) {
		const char *host = strstr(cfg.endpoint, "://");

		snprintf(out, n, "%.*s%s.%s/%s%s%s", (int)(host ? host + 3 - cfg.endpoint : 0), cfg.endpoint, l->bucket,
			 host ? host + 3 : cfg.endpoint, k, q ? "?" : "", q ? q : "");
	} else
		snprintf(out, n, "https://%s.s3.%s.amazonaws.com/%s%s%s", l->bucket, cfg.region, k, q ? "?" : "",
			 q ? q : "");
}

/* ------------------------------------------------------------ requests */

struct req {
	const struct loc *l;
	const char *method;    /* GET HEAD PUT POST DELETE */
	char url[8192];
	char range[64];
	const char *if_match;
	const unsigned char *up; /* the body sent */
	size_t upn;
	unsigned char *dst;    /* GET into the caller's buffer (want bytes), else into body */
	size_t want;
	unsigned char *body;   /* what came back (error bodies too) */
	size_t len, cap;
	int overflow;          /* more came than asked for */
	long status;
	char etag[256], crange[128];
	CURLcode cc;
	char errbuf[CURL_ERROR_SIZE];
	CURL *h;
	struct curl_slist *hdr;
	int attempts;
};

static size_t
on_body(char *p, size_t sz, size_t nm, void *arg)
{
	struct req *r = arg;
	size_t n = sz * nm;

	if (r->dst && r->status / 100 == 2) {
		if (r->len + n > r->want) {
			r->overflow = 1;
			return 0;
		}
		memcpy(r->dst + r->len, p, n);
		r->len += n;
		return n;
	}
	if (r->len + n + 1 > r->cap) {
		size_t nc = r->cap ? r->cap * 2 : 4096;
		unsigned char *b;

		while (nc < r->len + n + 1)
			nc *= 2;
		if (nc > ((size_t)64 << 20) || (b = realloc(r->body, nc)) == NULL)
			return 0;
		r->body = b;
		r->cap = nc;
	}
	memcpy(r->body + r->len, p, n);
	r->len += n;
	r->body[r->len] = '\0';
	return n;
}

static size_t
on_header(char *p, size_t sz, size_t nm, void *arg)
{
	struct req *r = arg;
	size_t n = sz * nm;
	char line[512];

	snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line - 1 ? n : sizeof line - 1), p);
	trim(line);
	if (strncmp(line, "HTTP/", 5) == 0) { /* a new response (after a 100 Continue, say) */
		r->status = strtol(strchr(line, ' ') ? strchr(line, ' ') + 1 : "0", NULL, 10);
		r->etag[0] = r->crange[0] = '\0';
	} else if (strncasecmp(line, "etag:", 5) == 0) {
		snprintf(r->etag, sizeof r->etag, "%s", line + 5);
		trim(r->etag);
	} else if (strncasecmp(line, "content-range:", 14) == 0) {
		snprintf(r->crange, sizeof r->crange, "%s", line + 14);
		trim(r->crange);
	}
	return n;
}

static int
req_setup(struct req *r)
{
	char sig[128], h[2300];

	r->len = 0;
	r->overflow = 0;
	r->status = 0;
	r->etag[0] = r->crange[0] = r->errbuf[0] = '\0';
	if (r->h == NULL && (r->h = curl_easy_init()) == NULL)
		return -1;
	curl_easy_reset(r->h);
	curl_slist_free_all(r->hdr);
	r->hdr = NULL;
	snprintf(sig, sizeof sig, "aws:amz:%s:s3", cfg.region);
	curl_easy_setopt(r->h, CURLOPT_URL, r->url);
	curl_easy_setopt(r->h, CURLOPT_SHARE, share);
	curl_easy_setopt(r->h, CURLOPT_AWS_SIGV4, sig);
	curl_easy_setopt(r->h, CURLOPT_USERNAME, cfg.key);
	curl_easy_setopt(r->h, CURLOPT_PASSWORD, cfg.secret);
	curl_easy_setopt(r->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(r->h, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(r->h, CURLOPT_LOW_SPEED_LIMIT, 1L); /* a server that stops answering is a dropped connection */
	curl_easy_setopt(r->h, CURLOPT_LOW_SPEED_TIME, 30L);
	curl_easy_setopt(r->h, CURLOPT_ERRORBUFFER, r->errbuf);
	curl_easy_setopt(r->h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(r->h, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(r->h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(r->h, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(r->h, CURLOPT_PRIVATE, r);
	if (strcmp(r->method, "HEAD") == 0)
		curl_easy_setopt(r->h, CURLOPT_NOBODY, 1L);
	else if (strcmp(r->method, "GET") != 0)
		curl_easy_setopt(r->h, CURLOPT_CUSTOMREQUEST, r->method);
	if (r->up) {
		curl_easy_setopt(r->h, CURLOPT_POSTFIELDS, (const char *)r->up);
		curl_easy_setopt(r->h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->upn);
		r->hdr = curl_slist_append(r->hdr, "Content-Type: application/octet-stream");
		r->hdr = curl_slist_append(r->hdr, "Expect:");
	} else if (strcmp(r->method, "PUT") == 0 || strcmp(r->method, "POST") == 0) {
		curl_easy_setopt(r->h, CURLOPT_POSTFIELDS, "");
		curl_easy_setopt(r->h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
	}
	/* the payload is signed as unsigned: curl 7.88 does not hash a body for S3 itself */
	r->hdr = curl_slist_append(r->hdr, r->up ? "x-amz-content-sha256: UNSIGNED-PAYLOAD"
					      : "x-amz-content-sha256: " EMPTY_SHA256);
	if (cfg.token[0]) {
		snprintf(h, sizeof h, "x-amz-security-token: %s", cfg.token);
		r->hdr = curl_slist_append(r->hdr, h);
	}
	if (r->range[0]) {
		snprintf(h, sizeof h, "Range: %s", r->range);
		r->hdr = curl_slist_append(r->hdr, h);
	}
	if (r->if_match) {
		snprintf(h, sizeof h, "If-Match: %s", r->if_match);
		r->hdr = curl_slist_append(r->hdr, h);
	}
	curl_easy_setopt(r->h, CURLOPT_HTTPHEADER, r->hdr);
	return 0;
}

static void
req_free(struct req *r)
{
	if (r->h)
		curl_easy_cleanup(r->h);
	curl_slist_free_all(r->hdr);
	free(r->body);
	r->h = NULL;
	r->hdr = NULL;
	r->body = NULL;
}

static int
retryable(const struct req *r)
{
	if (r->cc != CURLE_OK)
		return r->cc != CURLE_WRITE_ERROR && r->cc != CURLE_OUT_OF_MEMORY && r->cc != CURLE_URL_MALFORMAT &&
		       r->cc != CURLE_UNSUPPORTED_PROTOCOL && r->cc != CURLE_COULDNT_RESOLVE_HOST;
	return r->status >= 500 || r->status == 429;
}

static void
backoff(int attempt)
{
	long ms = (long)BACKOFF_MS << (attempt - 1);
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Run n requests, several at a time, each retried while retryable: 0 when every one got an answer
 * (of any status), -1 with e set when one failed at the transport or on its last attempt. */
static int
run(struct req *rs, size_t n, struct ckpt_err *e)
{
	CURLM *m = curl_multi_init();
	size_t pending = n;
	int rc = -1;

	if (m == NULL)
		return ckpt_err_set(e, CKPT_ERR_NOMEM, n ? rs[0].l->where : "", "out of memory");
	curl_multi_setopt(m, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)IN_FLIGHT);
	for (size_t i = 0; i < n; i++) {
		rs[i].attempts = 1;
		if (req_setup(&rs[i]) < 0) {
			ckpt_err_set(e, CKPT_ERR_NOMEM, rs[i].l->where, "out of memory");
			goto out;
		}
		curl_multi_add_handle(m, rs[i].h);
	}
	while (pending > 0) {
		int running, left, added = 0;
		CURLMsg *msg;

		if (curl_multi_perform(m, &running) != CURLM_OK) {
			ckpt_err_set(e, CKPT_ERR_IO, n ? rs[0].l->where : "", "libcurl failed");
			goto out;
		}
		while ((msg = curl_multi_info_read(m, &left)) != NULL) {
			struct req *r;

			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&r);
			r->cc = msg->data.result;
			curl_multi_remove_handle(m, r->h);
			if (retryable(r) && r->attempts < ATTEMPTS) {
				backoff(r->attempts++);
				if (req_setup(r) < 0) {
					ckpt_err_set(e, CKPT_ERR_NOMEM, r->l->where, "out of memory");
					goto out;
				}
				curl_multi_add_handle(m, r->h);
				added = 1;
				continue;
			}
			pending--;
			if (r->cc == CURLE_WRITE_ERROR && r->overflow)
				continue; /* the caller says so */
			if (r->cc != CURLE_OK) {
				ckpt_err_set(e, CKPT_ERR_INPUT, r->l->where, "%s: %s%s%s", r->method,
					     r->errbuf[0] ? r->errbuf : curl_easy_strerror(r->cc),
					     r->attempts > 1 ? ", after " : "",
					     r->attempts > 1 ? (r->attempts == ATTEMPTS ? "5 attempts" : "retries") : "");
				goto out;
			}
		}
		if (pending > 0 && running > 0 && !added && curl_multi_poll(m, NULL, 0, 1000, NULL) != CURLM_OK) {
			ckpt_err_set(e, CKPT_ERR_IO, n ? rs[0].l->where : "", "libcurl failed");
			goto out;
		}
	}
	rc = 0;
out:
	for (size_t i = 0; i < n; i++)
		if (rs[i].h)
			curl_multi_remove_handle(m, rs[i].h);
	curl_multi_cleanup(m);
	return rc;
}

/* The server's error, one line: its Code (from the XML body, or what the status means when a
 * HEAD has none), never anything of the request's signature.  Returns -1. */
static int
fail_status(const struct req *r, struct ckpt_err *e)
{
	char code[128] = "";
	const char *b = r->body ? (const char *)r->body : "", *s = strstr(b, "<Code>"), *t;

	if (s && (t = strstr(s + 6, "</Code>")) != NULL && t - s - 6 < (ptrdiff_t)sizeof code)
		snprintf(code, sizeof code, "%.*s", (int)(t - s - 6), s + 6);
	for (char *c = code; *c; c++)
		if (!isalnum((unsigned char)*c))
			*c = '_';
	if (code[0] == '\0')
		snprintf(code, sizeof code, "%s", r->status == 404 ? "NotFound" : r->status == 403 ? "Forbidden" :
			 r->status == 412 ? "PreconditionFailed" : r->status == 416 ? "InvalidRange" : "no error code");
	if (r->status == 412 && r->if_match)
		return ckpt_err_set(e, CKPT_ERR_INPUT, r->l->where,
				    "%s: the object changed during the read (HTTP 412 %s: its ETag is no longer %s)",
				    r->method, code, r->if_match);
	return ckpt_err_set(e, CKPT_ERR_INPUT, r->l->where, "%s: HTTP %ld %s%s", r->method, r->status, code,
			    r->attempts > 1 ? " (after retries)" : "");
}

/* One request, run, its status 2xx (or fail_status): 0, -1 with e set. */
static int
one(struct req *r, struct ckpt_err *e)
{
	if (run(r, 1, e) < 0)
		return -1;
	if (r->status / 100 != 2)
		return fail_status(r, e);
	return 0;
}

static void
count_fetched(size_t n)
{
	pthread_mutex_lock(&fetched_mu);
	fetched += n;
	pthread_mutex_unlock(&fetched_mu);
}

/* ------------------------------------------------------------ objects read by range */

struct ckpt_s3obj {
	struct loc l;
	uint64_t size;
	char etag[256];
	unsigned char *buf; /* buf[0, blen) holds the object's bytes from boff */
	uint64_t boff;
	size_t blen, bcap, ahead;
};

/* HEAD: size and ETag; a HEAD has no body, so its error is asked again with a GET of one byte to
 * learn the server's error code.  0, 1 absent (404 NoSuchKey), -1 with e set. */
static int
head(const struct loc *l, uint64_t *size, char *etag, size_t etagn, struct ckpt_err *e)
{
	struct req r = {.l = l, .method = "HEAD"};
	double len = -1;
	curl_off_t cl = -1;
	int rc = -1;

	url_of(l, NULL, r.url, sizeof r.url);
	if (run(&r, 1, e) < 0)
		goto out;
	if (r.status / 100 != 2) {
		struct req g = {.l = l, .method = "GET", .range = "bytes=0-0"};

		memcpy(g.url, r.url, sizeof g.url);
		if (run(&g, 1, e) == 0) {
			if (g.status == 404 && strstr(g.body ? (char *)g.body : "", "<Code>NoSuchKey<"))
				rc = 1;
			else if (g.status / 100 == 2) /* answered now: let the caller try again */
				ckpt_err_set(e, CKPT_ERR_INPUT, l->where, "HEAD: HTTP %ld, but a GET succeeds", r.status);
			else
				fail_status(&g, e);
		}
		req_free(&g);
		goto out;
	}
	curl_easy_getinfo(r.h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
	(void)len;
	if (cl < 0) {
		ckpt_err_set(e, CKPT_ERR_INPUT, l->where, "HEAD: no Content-Length in the answer");
		goto out;
	}
	*size = (uint64_t)cl;
	if (etag)
		snprintf(etag, etagn, "%s", r.etag);
	rc = 0;
out:
	req_free(&r);
	return rc;
}

struct ckpt_s3obj *
ckpt_s3obj_open(const char *url, struct ckpt_err *e)
{
	struct ckpt_s3obj *o;
	int r;

	if (ready(url, e) < 0 || (o = ckpt_calloc(1, sizeof *o, e)) == NULL)
		return NULL;
	if (parse(url, &o->l, e) < 0 || (r = head(&o->l, &o->size, o->etag, sizeof o->etag, e)) < 0)
		goto fail;
	if (r == 1) {
		ckpt_err_set(e, CKPT_ERR_INPUT, o->l.where, "no such object (HTTP 404 NoSuchKey)");
		goto fail;
	}
	o->ahead = cfg.part < ((size_t)256 << 10) ? cfg.part : (size_t)256 << 10;
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
check_range(const struct req *r, uint64_t from, uint64_t size, struct ckpt_err *e)
{
	unsigned long long a, b, total;

	if (r->status != 206 && !(r->status == 200 && from == 0 && r->want == size))
		return r->status / 100 == 2 ? ckpt_err_set(e, CKPT_ERR_INPUT, r->l->where,
							   "GET %s: HTTP %ld, not the range asked for", r->range, r->status)
					    : fail_status(r, e);
	if (r->status == 206 && (sscanf(r->crange, "bytes %llu-%llu/%llu", &a, &b, &total) != 3 || a != from ||
				 b + 1 != from + r->want || total != size))
		return ckpt_err_set(e, CKPT_ERR_INPUT, r->l->where, "GET %s: the server sent %s instead (of %llu bytes)",
				    r->range, r->crange[0] ? r->crange : "no Content-Range", (unsigned long long)size);
	if (r->overflow || r->len != r->want)
		return ckpt_err_set(e, CKPT_ERR_INPUT, r->l->where, "GET %s: %zu bytes came, %zu asked for (a short read)",
				    r->range, r->len, r->want);
	return 0;
}

/* Bytes [from, from + n) of o into dst, in ranges of cfg.part, several in flight. */
static int
fetch(struct ckpt_s3obj *o, unsigned char *dst, uint64_t from, size_t n, struct ckpt_err *e)
{
	size_t nr = (n + cfg.part - 1) / cfg.part, i;
	struct req *rs = ckpt_calloc(nr ? nr : 1, sizeof *rs, e);
	int rc = -1;

	if (rs == NULL)
		return -1;
	for (i = 0; i < nr; i++) {
		uint64_t a = from + i * cfg.part;
		size_t k = n - i * cfg.part < cfg.part ? n - i * cfg.part : cfg.part;

		rs[i] = (struct req){.l = &o->l, .method = "GET", .if_match = o->etag[0] ? o->etag : NULL,
				     .dst = dst + i * cfg.part, .want = k};
		url_of(&o->l, NULL, rs[i].url, sizeof rs[i].url);
		snprintf(rs[i].range, sizeof rs[i].range, "bytes=%" PRIu64 "-%" PRIu64, a, a + k - 1);
	}
	if (run(rs, nr, e) < 0)
		goto out;
	for (i = 0; i < nr; i++)
		if (check_range(&rs[i], from + i * cfg.part, o->size, e) < 0)
			goto out;
	count_fetched(n);
	rc = 0;
out:
	for (i = 0; i < nr; i++)
		req_free(&rs[i]);
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
		if (want > o->bcap) {
			unsigned char *b = realloc(o->buf, want);

			if (b == NULL)
				return ckpt_err_set(e, CKPT_ERR_NOMEM, o->l.where, "out of memory");
			o->buf = b;
			o->bcap = want;
		}
		o->blen = 0;
		if (fetch(o, o->buf, off, want, e) < 0)
			return -1;
		o->boff = off;
		o->blen = want;
	}
	return 0;
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
		return ckpt_err_set(e, CKPT_ERR_NOMEM, url, "out of memory");
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
	struct loc l;

	if (ready(url, e) < 0 || parse(url, &l, e) < 0)
		return -1;
	return head(&l, size, NULL, 0, e);
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

int
ckpt_s3_list(const char *url, int (*fn)(void *arg, const char *url, uint64_t size), void *arg,
	     struct ckpt_err *e)
{
	struct loc l, b;
	char token[2048] = "", q[8192], pre[6200], tok[6200], key[2048], size[32], full[2400];
	const char *maxkeys = env("CKPT_S3_MAX_KEYS"); /* tests page through small pages */
	int rc = -1, more = 1;

	if (ready(url, e) < 0 || parse(url, &l, e) < 0)
		return -1;
	b = l;
	b.key[0] = '\0';
	enc(pre, sizeof pre, l.key, 0);
	while (more) {
		struct req r = {.l = &l, .method = "GET"};
		const char *s;

		enc(tok, sizeof tok, token, 0);
		snprintf(q, sizeof q, "%s%s%slist-type=2%s%s%s%s", token[0] ? "continuation-token=" : "", token[0] ? tok : "",
			 token[0] ? "&" : "", maxkeys ? "&max-keys=" : "", maxkeys ? maxkeys : "", "&prefix=", pre);
		url_of(&b, q, r.url, sizeof r.url);
		if (one(&r, e) < 0) {
			req_free(&r);
			return -1;
		}
		s = r.body ? (const char *)r.body : "";
		more = xml_get(s, "IsTruncated", size, sizeof size) && strcmp(size, "true") == 0;
		if (!more || !xml_get(s, "NextContinuationToken", token, sizeof token))
			more = 0;
		unxml(token);
		while ((s = strstr(s, "<Contents>")) != NULL) {
			const char *end = strstr(s, "</Contents>");

			if (end == NULL || !xml_get(s, "Key", key, sizeof key) || !xml_get(s, "Size", size, sizeof size))
				break;
			s = end;
			unxml(key);
			if (key[0] && key[strlen(key) - 1] == '/') /* a directory marker, not an object */
				continue;
			snprintf(full, sizeof full, "s3://%s/%s", l.bucket, key);
			if ((rc = fn(arg, full, strtoull(size, NULL, 10))) != 0) {
				req_free(&r);
				return rc;
			}
		}
		req_free(&r);
	}
	return 0;
}

/* ------------------------------------------------------------ writing */

int
ckpt_s3_delete(const char *url, struct ckpt_err *e)
{
	struct loc l;
	struct req r = {.l = &l, .method = "DELETE"};
	int rc;

	if (ready(url, e) < 0 || parse(url, &l, e) < 0)
		return -1;
	url_of(&l, NULL, r.url, sizeof r.url);
	rc = one(&r, e);
	req_free(&r);
	return rc;
}

static int
put(const struct loc *l, const char *q, const char *method, const unsigned char *p, size_t n, char **body,
    char *etag, size_t etagn, struct ckpt_err *e)
{
	struct req r = {.l = l, .method = method, .up = p ? p : (const unsigned char *)"", .upn = n};
	int rc;

	url_of(l, q, r.url, sizeof r.url);
	rc = one(&r, e);
	if (rc == 0 && body)
		*body = r.body ? strdup((char *)r.body) : strdup("");
	if (rc == 0 && etag)
		snprintf(etag, etagn, "%s", r.etag);
	req_free(&r);
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
multipart(FILE *f, uint64_t size, const struct loc *l, const char *path, struct ckpt_err *e)
{
	size_t part = (size_t)cfg.multipart, np = (size_t)((size + part - 1) / part), xn = 0, xc = 0;
	unsigned char *b = malloc(part);
	char *body = NULL, id[1024], eid[3100], q[3400], *xml = NULL;
	int rc = -1, created = 0;

	if (b == NULL)
		return ckpt_err_set(e, CKPT_ERR_NOMEM, l->where, "out of memory");
	if (put(l, "uploads=", "POST", NULL, 0, &body, NULL, 0, e) < 0)
		goto out;
	if (!xml_get(body, "UploadId", id, sizeof id)) {
		ckpt_err_set(e, CKPT_ERR_INPUT, l->where, "POST ?uploads: no UploadId in the answer");
		goto out;
	}
	created = 1;
	unxml(id);
	enc(eid, sizeof eid, id, 0);
	xc = 128 + np * 400;
	if ((xml = malloc(xc)) == NULL) {
		ckpt_err_set(e, CKPT_ERR_NOMEM, l->where, "out of memory");
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
		struct req r = {.l = l, .method = "POST", .status = 200, .body = (unsigned char *)body};

		fail_status(&r, e);
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
	struct loc l;
	struct stat sb;
	unsigned char *b = NULL;
	FILE *f;
	int rc = -1;

	if (ready(url, e) < 0 || parse(url, &l, e) < 0)
		return -1;
	if ((f = fopen(path, "rb")) == NULL || fstat(fileno(f), &sb) < 0) {
		if (f)
			fclose(f);
		return ckpt_err_sys(e, path, "cannot open");
	}
	if ((uint64_t)sb.st_size > cfg.multipart)
		rc = multipart(f, (uint64_t)sb.st_size, &l, path, e);
	else if ((b = malloc(sb.st_size ? (size_t)sb.st_size : 1)) == NULL)
		ckpt_err_set(e, CKPT_ERR_NOMEM, path, "out of memory");
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

static int
upload_one(const char *dir, const char *url, const char *name, struct uploaded *u, struct ckpt_err *e)
{
	const char *sep = url[0] && url[strlen(url) - 1] == '/' ? "" : "/";
	char src[4096], dst[4096];

	snprintf(src, sizeof src, "%s/%s", dir, name);
	snprintf(dst, sizeof dst, "%s%s%s", url, sep, name);
	if (u->n == u->cap) {
		char **n = realloc(u->url, (u->cap ? u->cap * 2 : 16) * sizeof *u->url);

		if (n == NULL)
			return ckpt_err_set(e, CKPT_ERR_NOMEM, dst, "out of memory");
		u->url = n;
		u->cap = u->cap ? u->cap * 2 : 16;
	}
	if (ckpt_s3_put_file(src, dst, e) < 0)
		return -1;
	if ((u->url[u->n] = strdup(dst)) == NULL)
		return ckpt_err_set(e, CKPT_ERR_NOMEM, dst, "out of memory");
	u->n++;
	return 0;
}

int
ckpt_s3_put_dir(const char *dir, const char *url, const char *last, struct ckpt_err *e)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct uploaded u = {0};
	int rc = -1;

	if (d == NULL)
		return ckpt_err_sys(e, dir, "cannot open");
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 || (last && strcmp(de->d_name, last) == 0))
			continue;
		if (upload_one(dir, url, de->d_name, &u, e) < 0)
			goto out;
	}
	if (last && upload_one(dir, url, last, &u, e) < 0)
		goto out;
	rc = 0;
out:
	closedir(d);
	for (size_t i = 0; i < u.n; i++) {
		struct ckpt_err ignored = {0};

		if (rc < 0)
			ckpt_s3_delete(u.url[i], &ignored);
		free(u.url[i]);
	}
	free(u.url);
	return rc;
}
