/* s3-request.c: the transport of s3.c: the configuration every AWS tool reads (ckpt(7),
 * ENVIRONMENT), object addresses, and requests signed with AWS Signature V4 by libcurl, several in
 * flight and retried with backoff. */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "s3-request.h"

#define ATTEMPTS 5                            /* a request tried at most this often */
#define BACKOFF_MS 100                        /* before the second attempt; doubled after each */
#define PART_DEFAULT ((size_t)1 << 20)        /* bytes per ranged GET */
#define MULTIPART_DEFAULT ((uint64_t)8 << 20) /* uploads above this go in parts of this size */
#define IN_FLIGHT 8
#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

/* ------------------------------------------------------------ configuration */

struct ckpt_s3cfg ckpt_s3_cfg;
static CURLSH *share;
static pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static const char *
env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

void
ckpt_s3_trim(char *s)
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

		ckpt_s3_trim(line);
		if (line[0] == '#' || line[0] == ';' || line[0] == '\0')
			continue;
		if (line[0] == '[') {
			char *end = strchr(line, ']');

			if (end)
				*end = '\0';
			snprintf(cur, sizeof cur, "%s", line + 1);
			ckpt_s3_trim(cur);
			continue;
		}
		if (strcmp(cur, sect) != 0 || (eq = strchr(line, '=')) == NULL)
			continue;
		*eq = '\0';
		ckpt_s3_trim(line);
		ckpt_s3_trim(eq + 1);
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
load_files(struct ckpt_s3cfg *c)
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
	struct ckpt_s3cfg *c = &ckpt_s3_cfg;
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

int
ckpt_s3_ready(const char *where, struct ckpt_err *e)
{
	pthread_once(&once, init);
	if (ckpt_s3_cfg.why[0])
		return ckpt_err_set(e, CKPT_ERR_INPUT, where, "%s", ckpt_s3_cfg.why);
	return 0;
}

/* ------------------------------------------------------------ addresses */

int
ckpt_s3_is_url(const char *p)
{
	return p && (strncmp(p, "s3://", 5) == 0 || strncmp(p, "s3a://", 6) == 0 || strncmp(p, "s3p://", 6) == 0);
}

int
ckpt_s3_parse(const char *url, struct ckpt_s3loc *l, struct ckpt_err *e)
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
void
ckpt_s3_enc(char *out, size_t n, const char *s, int slash)
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
void
ckpt_s3_url_of(const struct ckpt_s3loc *l, const char *q, char *out, size_t n)
{
	const struct ckpt_s3cfg *c = &ckpt_s3_cfg;
	char k[3 * sizeof l->key];

	ckpt_s3_enc(k, sizeof k, l->key, 1);
	if (c->path_style)
		snprintf(out, n, "%s/%s/%s%s%s", c->endpoint[0] ? c->endpoint : "https://s3.amazonaws.com", l->bucket, k,
			 q ? "?" : "", q ? q : "");
	else if (c->endpoint[0]) {
		const char *host = strstr(c->endpoint, "://");

		snprintf(out, n, "%.*s%s.%s/%s%s%s", (int)(host ? host + 3 - c->endpoint : 0), c->endpoint, l->bucket,
			 host ? host + 3 : c->endpoint, k, q ? "?" : "", q ? q : "");
	} else
		snprintf(out, n, "https://%s.s3.%s.amazonaws.com/%s%s%s", l->bucket, c->region, k, q ? "?" : "", q ? q : "");
}

/* ------------------------------------------------------------ requests */

static size_t
on_body(char *p, size_t sz, size_t nm, void *arg)
{
	struct ckpt_s3req *r = arg;
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
	if (r->len + n + 1 > ((size_t)64 << 20) || ckpt_grow(&r->body, &r->cap, r->len + n + 1, 1, 4096, NULL) < 0)
		return 0; /* an answer this long is no S3 answer: the transfer fails */
	memcpy(r->body + r->len, p, n);
	r->len += n;
	r->body[r->len] = '\0';
	return n;
}

static size_t
on_header(char *p, size_t sz, size_t nm, void *arg)
{
	struct ckpt_s3req *r = arg;
	size_t n = sz * nm;
	char line[512];

	snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line - 1 ? n : sizeof line - 1), p);
	ckpt_s3_trim(line);
	if (strncmp(line, "HTTP/", 5) == 0) { /* a new response (after a 100 Continue, say) */
		r->status = strtol(strchr(line, ' ') ? strchr(line, ' ') + 1 : "0", NULL, 10);
		r->etag[0] = r->crange[0] = '\0';
	} else if (strncasecmp(line, "etag:", 5) == 0) {
		snprintf(r->etag, sizeof r->etag, "%s", line + 5);
		ckpt_s3_trim(r->etag);
	} else if (strncasecmp(line, "content-range:", 14) == 0) {
		snprintf(r->crange, sizeof r->crange, "%s", line + 14);
		ckpt_s3_trim(r->crange);
	}
	return n;
}

static int
req_setup(struct ckpt_s3req *r)
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
	snprintf(sig, sizeof sig, "aws:amz:%s:s3", ckpt_s3_cfg.region);
	curl_easy_setopt(r->h, CURLOPT_URL, r->url);
	curl_easy_setopt(r->h, CURLOPT_SHARE, share);
	curl_easy_setopt(r->h, CURLOPT_AWS_SIGV4, sig);
	curl_easy_setopt(r->h, CURLOPT_USERNAME, ckpt_s3_cfg.key);
	curl_easy_setopt(r->h, CURLOPT_PASSWORD, ckpt_s3_cfg.secret);
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
	if (ckpt_s3_cfg.token[0]) {
		snprintf(h, sizeof h, "x-amz-security-token: %s", ckpt_s3_cfg.token);
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

void
ckpt_s3req_release(struct ckpt_s3req *r)
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
retryable(const struct ckpt_s3req *r)
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

/* A request's first attempt set up and added to m: 0, or -1 with e set. */
static int
req_add(CURLM *m, struct ckpt_s3req *r, struct ckpt_err *e)
{
	r->attempts = 1;
	if (req_setup(r) < 0)
		return ckpt_err_nomem(e, r->l->where);
	curl_multi_add_handle(m, r->h);
	return 0;
}

/* Run n requests, several at a time, each retried while retryable: 0 when every one got an answer
 * (of any status), -1 with e set when one failed at the transport or on its last attempt. */
int
ckpt_s3req_run(struct ckpt_s3req *rs, size_t n, struct ckpt_err *e)
{
	CURLM *m = curl_multi_init();
	size_t pending = n, next = 0;
	int rc = -1;

	if (m == NULL)
		return ckpt_err_nomem(e, n ? rs[0].l->where : "");
	/* At most IN_FLIGHT requests are added at a time, the next as one ends.  Not through
	 * CURLMOPT_MAX_TOTAL_CONNECTIONS: with the connection cache shared between threads, that
	 * limit counted another thread's idle connections too, and a request could wait for a free
	 * connection forever (t/s3.bats hung so under -a's check threads). */
	for (; next < n && next < IN_FLIGHT; next++)
		if (req_add(m, &rs[next], e) < 0)
			goto out;
	while (pending > 0) {
		int running, left, added = 0;
		CURLMsg *msg;

		if (curl_multi_perform(m, &running) != CURLM_OK) {
			ckpt_err_set(e, CKPT_ERR_IO, n ? rs[0].l->where : "", "libcurl failed");
			goto out;
		}
		while ((msg = curl_multi_info_read(m, &left)) != NULL) {
			struct ckpt_s3req *r;

			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&r);
			r->cc = msg->data.result;
			curl_multi_remove_handle(m, r->h);
			if (retryable(r) && r->attempts < ATTEMPTS) {
				backoff(r->attempts++);
				if (req_setup(r) < 0) {
					ckpt_err_nomem(e, r->l->where);
					goto out;
				}
				curl_multi_add_handle(m, r->h);
				added = 1;
				continue;
			}
			pending--;
			if (next < n) {
				if (req_add(m, &rs[next++], e) < 0)
					goto out;
				added = 1;
			}
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
int
ckpt_s3req_fail(const struct ckpt_s3req *r, struct ckpt_err *e)
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
int
ckpt_s3req_one(struct ckpt_s3req *r, struct ckpt_err *e)
{
	if (ckpt_s3req_run(r, 1, e) < 0)
		return -1;
	if (r->status / 100 != 2)
		return ckpt_s3req_fail(r, e);
	return 0;
}
