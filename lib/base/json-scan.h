/* json-scan.h: a JSON scanner that checks and walks text in place without building a tree, for the
 * event log's payloads and lines; library-internal, programs never include it. */
#ifndef CKPT_JSON_SCAN_H
#define CKPT_JSON_SCAN_H

#include "base.h"

/* A cursor over JSON text [p, end); on error e says what and at points at the offending byte. */
struct ckpt_jscan {
	const unsigned char *p, *end;
	struct ckpt_err *e;
	const unsigned char *at;
	void *arg; /* the caller's */
};

/* A growing buffer (decoded strings, a minified copy); the caller frees p. */
struct ckpt_jscan_buf {
	char *p;
	size_t len, cap;
};

/* Set s->at and e (kind input, no where); at the end of the text the message is
 * "not JSON: unexpected end of text" whatever fmt says.  Returns -1. */
int ckpt_jscan_fail(struct ckpt_jscan *s, const unsigned char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A JSON syntax error: ckpt_jscan_fail with "not JSON: " before the text. */
int ckpt_jscan_syntax(struct ckpt_jscan *s, const unsigned char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Grow *buf (of *cap items of size bytes) to hold need items; -1 with s->e set if out of memory. */
int ckpt_jscan_grow(void **buf, size_t *cap, size_t need, size_t size, struct ckpt_jscan *s);
/* Skip white space. */
void ckpt_jscan_ws(struct ckpt_jscan *s);
/* White space, then the character c. */
int ckpt_jscan_expect(struct ckpt_jscan *s, unsigned char c);
/* A string at s->p: its raw text between the quotes in *raw, *rawlen (when raw is not NULL);
 * with dec, its decoded UTF-8 appended to dec, NUL-terminated, at offset *off. */
int ckpt_jscan_string(struct ckpt_jscan *s, const unsigned char **raw, size_t *rawlen,
		      struct ckpt_jscan_buf *dec, size_t *off);
/* A string at p (its opening quote) of plain bytes only (ASCII, no control character, no escape):
 * the byte after its closing quote; NULL when it is not one (for ckpt_jscan_string to read). */
const unsigned char *ckpt_jscan_plain(const unsigned char *p, const unsigned char *end);
/* A number; *isint and *v (when it is a non-negative integer below 10^18). */
int ckpt_jscan_number(struct ckpt_jscan *s, int *isint, uint64_t *v);
/* The literal word (true, false, null) at s->p. */
int ckpt_jscan_literal(struct ckpt_jscan *s, const char *word);
/* Walk an object: first call with *first = 1; 1 with the key read and ':' passed, 0 after '}'. */
int ckpt_jscan_members(struct ckpt_jscan *s, int *first, const unsigned char **key, size_t *klen);
/* Walk an array: 1 before each element, 0 after ']'. */
int ckpt_jscan_elements(struct ckpt_jscan *s, int *first);
/* Check any value, nested depth deep already (at most 64 in all). */
int ckpt_jscan_value(struct ckpt_jscan *s, int depth);
/* A value (nested depth deep already) built as jansson's json_loads (JSON_ALLOW_NUL) builds it, in a
 * fraction of its time: a new reference; NULL where the scanner is stricter than jansson (\u0000, an
 * integer of more than 18 digits, nesting deeper than 64) or the text is not JSON, for the caller to
 * ask jansson (its value, or its message).  tmp: scratch for decoded strings, kept between calls. */
json_t *ckpt_jscan_build(struct ckpt_jscan *s, struct ckpt_jscan_buf *tmp, int depth);
/* JSON text without white space outside strings, chunk by chunk: start with m zeroed; out holds at
 * least len bytes; returns the bytes written. */
struct ckpt_minify {
	int instr, esc;
};
size_t ckpt_minify_chunk(struct ckpt_minify *m, char *out, const unsigned char *in, size_t len);
/* Copy the JSON text [from, to) to out without white space outside strings. */
int ckpt_jscan_minify(struct ckpt_jscan *s, const unsigned char *from, const unsigned char *to,
		      struct ckpt_jscan_buf *out);

#endif
