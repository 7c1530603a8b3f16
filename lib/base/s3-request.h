/* s3-request.h: the transport under s3.c (s3-request.c): the configuration, the address of an
 * object, and signed requests run several at a time with retries.  Only s3.c and s3-request.c
 * include it; the rest of the library uses the ckpt_s3_* calls of base.h. */
#ifndef CKPT_S3_REQUEST_H
#define CKPT_S3_REQUEST_H

#include <curl/curl.h>
#include <stdint.h>

#include "base.h"

struct ckpt_s3cfg {
	char key[256], secret[256], token[2048], region[64], endpoint[512];
	int path_style;
	size_t part;        /* CKPT_S3_PART: bytes per ranged GET (tests make it small) */
	uint64_t multipart; /* CKPT_S3_MULTIPART: the size above which uploads go in parts */
	char why[300];      /* set when the configuration cannot be used */
};
/* Read once, by the first ckpt_s3_ready. */
extern struct ckpt_s3cfg ckpt_s3_cfg;

/* The configuration read (once); 0, or -1 with e set (at where) when it cannot be used. */
int ckpt_s3_ready(const char *where, struct ckpt_err *e);

/* An object's address. */
struct ckpt_s3loc {
	char bucket[256];
	char key[2048];
	char where[2400]; /* s3://bucket/key, as errors name it */
};
/* url (s3://, s3a://, s3p://) into l: 0, or -1 with e set. */
int ckpt_s3_parse(const char *url, struct ckpt_s3loc *l, struct ckpt_err *e);
/* AWS's URI encoding of s into out: unreserved bytes as they are, '/' kept when slash, the rest %XX. */
void ckpt_s3_enc(char *out, size_t n, const char *s, int slash);
/* The request URL of l with query q (already encoded, parameters sorted; NULL: none). */
void ckpt_s3_url_of(const struct ckpt_s3loc *l, const char *q, char *out, size_t n);

/* One request: the caller fills l, method, url and what it needs of the rest, zero elsewhere. */
struct ckpt_s3req {
	const struct ckpt_s3loc *l;
	const char *method;      /* GET HEAD PUT POST DELETE */
	char url[8192];
	char range[64];
	const char *if_match;
	const unsigned char *up; /* the body sent */
	size_t upn;
	unsigned char *dst;      /* GET into the caller's buffer (want bytes), else into body */
	size_t want;
	unsigned char *body;     /* what came back (error bodies too), NUL-terminated */
	size_t len, cap;
	int overflow;            /* more came than asked for */
	long status;
	char etag[256], crange[128];
	CURLcode cc;
	char errbuf[CURL_ERROR_SIZE];
	CURL *h;
	struct curl_slist *hdr;
	int attempts;
};
/* Run n requests, several at a time, each retried while retryable: 0 when every one got an
 * answer (of any status), -1 with e set when one failed at the transport or on its last attempt. */
int ckpt_s3req_run(struct ckpt_s3req *rs, size_t n, struct ckpt_err *e);
/* One request run, its status 2xx: 0, or -1 with e set (ckpt_s3req_fail). */
int ckpt_s3req_one(struct ckpt_s3req *r, struct ckpt_err *e);
/* The server's error in one line: its Code (from the XML body, or what the status means when a
 * HEAD has none), never anything of the request's signature.  Returns -1. */
int ckpt_s3req_fail(const struct ckpt_s3req *r, struct ckpt_err *e);
/* What the request holds freed (the struct itself is the caller's). */
void ckpt_s3req_release(struct ckpt_s3req *r);
/* s with the white space at both ends removed, in place. */
void ckpt_s3_trim(char *s);

#endif
