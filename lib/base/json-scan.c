/*
 * json-scan.c: a JSON scanner that checks and walks text in place, without a tree
 * (jansson needs about a microsecond per record; the event log has millions of them).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json-scan.h"

#define DEPTH_LIMIT 64

int
ckpt_jscan_fail(struct ckpt_jscan *s, const unsigned char *at, const char *fmt, ...)
{
	va_list ap;

	s->at = at;
	if (at >= s->end && strncmp(fmt, "not JSON", 8) != 0)
		return ckpt_err_set(s->e, CKPT_ERR_INPUT, "", "not JSON: unexpected end of text");
	va_start(ap, fmt);
	ckpt_err_vset(s->e, CKPT_ERR_INPUT, "", fmt, ap);
	va_end(ap);
	return -1;
}

/* A JSON syntax error (as opposed to text that is JSON but not what the caller wants). */
int
ckpt_jscan_syntax(struct ckpt_jscan *s, const unsigned char *at, const char *fmt, ...)
{
	va_list ap;

	s->at = at;
	va_start(ap, fmt);
	ckpt_err_vset(s->e, CKPT_ERR_INPUT, "", fmt, ap);
	va_end(ap);
	ckpt_err_prefix(s->e, "not JSON");
	return -1;
}

void
ckpt_jscan_ws(struct ckpt_jscan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

int
ckpt_jscan_expect(struct ckpt_jscan *s, unsigned char c)
{
	ckpt_jscan_ws(s);
	if (s->p >= s->end || *s->p != c) {
		if (s->p >= s->end)
			return ckpt_jscan_syntax(s, s->p, "'%c' expected near end of text", c);
		return ckpt_jscan_syntax(s, s->p, "'%c' expected", c);
	}
	s->p++;
	return 0;
}

/* Length of the UTF-8 sequence at p (RFC 3629: no overlongs, surrogates or values above U+10FFFF), 0 if invalid. */
static size_t
utf8_len(const unsigned char *p, const unsigned char *end)
{
	size_t n = (size_t)(end - p);

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		return n >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (p[0] >= 0xe0 && p[0] <= 0xef) {
		if (n < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
			return 0;
		if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0))
			return 0;
		return 3;
	}
	if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		if (n < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 || (p[3] & 0xc0) != 0x80)
			return 0;
		if ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
			return 0;
		return 4;
	}
	return 0;
}

static int
hex4(const unsigned char *p, unsigned *out)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++) {
		unsigned c = p[i], d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (c | 0x20) - 'a' + 10;
		else
			return -1;
		v = v << 4 | d;
	}
	*out = v;
	return 0;
}

/* A \u escape at s->p (after the backslash and 'u'); the code point, or -1. */
static long
unicode_escape(struct ckpt_jscan *s)
{
	const unsigned char *start = s->p - 2;
	unsigned hi, lo;

	if (s->end - s->p < 4 || hex4(s->p, &hi) < 0)
		return ckpt_jscan_syntax(s, start, "invalid \\u escape");
	s->p += 4;
	if (hi == 0)
		return ckpt_jscan_syntax(s, start, "\\u0000 is not allowed");
	if (hi >= 0xdc00 && hi <= 0xdfff)
		return ckpt_jscan_syntax(s, start, "invalid Unicode '\\u%04X'", hi);
	if (hi < 0xd800 || hi > 0xdbff)
		return hi;
	if (s->end - s->p < 6 || s->p[0] != '\\' || s->p[1] != 'u' || hex4(s->p + 2, &lo) < 0 ||
	    lo < 0xdc00 || lo > 0xdfff)
		return ckpt_jscan_syntax(s, start, "invalid Unicode '\\u%04X'", hi);
	s->p += 6;
	return 0x10000 + ((long)(hi - 0xd800) << 10) + (lo - 0xdc00);
}

/* The end of the run of plain ASCII from p (no control character, quote or backslash), eight bytes
 * at a time while it lasts. */
static const unsigned char *
plain_run(const unsigned char *p, const unsigned char *end)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;

	for (uint64_t w; end - p >= 8; p += 8) {
		memcpy(&w, p, 8);
		/* a byte >= 0x80, < 0x20, '"' or '\\' */
		if ((w = (w | ((w - ones * 0x20) & ~w) | ((w ^ ones * '"') - ones) | ((w ^ ones * '\\') - ones)) & high) != 0) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			p += __builtin_ctzll(w) / 8; /* the first byte found is one (a borrow marks only those after) */
#endif
			break;
		}
	}
	while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\')
		p++;
	return p;
}

const unsigned char *
ckpt_jscan_plain(const unsigned char *p, const unsigned char *end)
{
	if (p >= end || *p != '"')
		return NULL;
	p = plain_run(p + 1, end);
	return p < end && *p == '"' ? p + 1 : NULL;
}

/*
 * A string at s->p (the opening quote).  *raw, *rawlen: its text between the
 * quotes.  With dec, its decoded value is appended to dec, NUL-terminated, and
 * *off gets its offset there.
 */
int
ckpt_jscan_string(struct ckpt_jscan *s, const unsigned char **raw, size_t *rawlen, struct ckpt_jscan_buf *dec,
		  size_t *off)
{
	const unsigned char *start;

	ckpt_jscan_ws(s);
	if (s->p >= s->end || *s->p != '"')
		return ckpt_jscan_syntax(s, s->p, "string expected%s", s->p >= s->end ? " near end of text" : "");
	start = ++s->p;
	if (dec) {
		if (ckpt_grow(&dec->p, &dec->cap, dec->len + (size_t)(s->end - s->p) + 1, 1, 16, s->e) < 0)
			return -1;
		*off = dec->len;
	}
	while (s->p < s->end && *s->p != '"') {
		const unsigned char *q = s->p;
		unsigned char c = *s->p;
		size_t n;

		q = plain_run(q, s->end);
		if (q > s->p) {
			if (dec) {
				memcpy(dec->p + dec->len, s->p, (size_t)(q - s->p));
				dec->len += (size_t)(q - s->p);
			}
			s->p = q;
			continue;
		}

		if (c < 0x20)
			return ckpt_jscan_syntax(s, s->p, "control character 0x%x in string", c);
		if (c == '\\') {
			long cp;
			char o = 0;

			if (++s->p >= s->end)
				break;
			switch (*s->p++) {
			case '"': o = '"'; break;
			case '\\': o = '\\'; break;
			case '/': o = '/'; break;
			case 'b': o = '\b'; break;
			case 'f': o = '\f'; break;
			case 'n': o = '\n'; break;
			case 'r': o = '\r'; break;
			case 't': o = '\t'; break;
			case 'u':
				if ((cp = unicode_escape(s)) < 0)
					return -1;
				if (dec)
					dec->len += ckpt_utf8_put(dec->p + dec->len, (unsigned)cp);
				continue;
			default:
				return ckpt_jscan_syntax(s, s->p - 2, "invalid escape");
			}
			if (dec)
				dec->p[dec->len++] = o;
			continue;
		}
		if ((n = utf8_len(s->p, s->end)) == 0)
			return ckpt_jscan_syntax(s, s->p, "invalid UTF-8 in string");
		if (dec) {
			memcpy(dec->p + dec->len, s->p, n);
			dec->len += n;
		}
		s->p += n;
	}
	if (s->p >= s->end)
		return ckpt_jscan_syntax(s, start - 1, "unterminated string");
	if (raw) {
		*raw = start;
		*rawlen = (size_t)(s->p - start);
	}
	s->p++;
	if (dec)
		dec->p[dec->len++] = '\0';
	return 0;
}

/* A number; *isint and *v (when it is a non-negative integer below 2^63). */
int
ckpt_jscan_number(struct ckpt_jscan *s, int *isint, uint64_t *v)
{
	const unsigned char *start = s->p;
	int digits = 0, neg = 0, frac = 0;
	uint64_t x = 0;

	if (s->p < s->end && *s->p == '-') {
		neg = 1;
		s->p++;
	}
	if (s->p >= s->end || *s->p < '0' || *s->p > '9')
		return ckpt_jscan_syntax(s, start, "invalid token");
	if (*s->p == '0' && s->p + 1 < s->end && s->p[1] >= '0' && s->p[1] <= '9')
		return ckpt_jscan_syntax(s, start, "invalid token");
	while (s->p < s->end && *s->p >= '0' && *s->p <= '9') {
		if (++digits <= 18)
			x = x * 10 + (uint64_t)(*s->p - '0');
		s->p++;
	}
	if (s->p < s->end && *s->p == '.') {
		frac = 1;
		if (++s->p >= s->end || *s->p < '0' || *s->p > '9')
			return ckpt_jscan_syntax(s, start, "invalid token");
		while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
			s->p++;
	}
	if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
		frac = 1;
		s->p++;
		if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
			s->p++;
		if (s->p >= s->end || *s->p < '0' || *s->p > '9')
			return ckpt_jscan_syntax(s, start, "invalid token");
		while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
			s->p++;
	}
	if (!frac && digits > 18)
		return ckpt_jscan_syntax(s, start, "too big integer");
	if (frac) {
		char buf[64];
		size_t n = (size_t)(s->p - start);

		if (n < sizeof buf) {
			memcpy(buf, start, n);
			buf[n] = '\0';
			if (isinf(strtod(buf, NULL)))
				return ckpt_jscan_syntax(s, start, "real number overflow");
		}
	}
	*isint = !frac && !neg;
	*v = x;
	return 0;
}

int
ckpt_jscan_literal(struct ckpt_jscan *s, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
		return ckpt_jscan_syntax(s, s->p, "invalid token");
	s->p += n;
	return 0;
}

/* Walk an object: first call with *first = 1; 1 with the key read and ':' passed, 0 after '}'. */
int
ckpt_jscan_members(struct ckpt_jscan *s, int *first, const unsigned char **key, size_t *klen)
{
	const unsigned char *q;

	/* the common case first: {"NAME": or ,"NAME": with a plain name and no space */
	if (s->p < s->end && *s->p == (*first ? '{' : ',') && (q = ckpt_jscan_plain(s->p + 1, s->end)) != NULL &&
	    q < s->end && *q == ':') {
		*first = 0;
		if (key) {
			*key = s->p + 2;
			*klen = (size_t)(q - s->p - 3);
		}
		s->p = q + 1;
		ckpt_jscan_ws(s);
		return 1;
	}
	ckpt_jscan_ws(s);
	if (*first) {
		if (ckpt_jscan_expect(s, '{') < 0)
			return -1;
		ckpt_jscan_ws(s);
		if (s->p < s->end && *s->p == '}') {
			s->p++;
			return 0;
		}
		*first = 0;
	} else {
		if (s->p < s->end && *s->p == '}') {
			s->p++;
			return 0;
		}
		if (s->p >= s->end || *s->p != ',')
			return ckpt_jscan_syntax(s, s->p, "',' or '}' expected%s", s->p >= s->end ? " near end of text" : "");
		s->p++;
	}
	if (ckpt_jscan_string(s, key, klen, NULL, NULL) < 0 || ckpt_jscan_expect(s, ':') < 0)
		return -1;
	ckpt_jscan_ws(s);
	return 1;
}

/* Walk an array: 1 before each element, 0 after ']'. */
int
ckpt_jscan_elements(struct ckpt_jscan *s, int *first)
{
	ckpt_jscan_ws(s);
	if (*first) {
		if (ckpt_jscan_expect(s, '[') < 0)
			return -1;
		ckpt_jscan_ws(s);
		if (s->p < s->end && *s->p == ']') {
			s->p++;
			return 0;
		}
		*first = 0;
		return 1;
	}
	if (s->p < s->end && *s->p == ']') {
		s->p++;
		return 0;
	}
	if (s->p >= s->end || *s->p != ',')
		return ckpt_jscan_syntax(s, s->p, "',' or ']' expected%s", s->p >= s->end ? " near end of text" : "");
	s->p++;
	ckpt_jscan_ws(s);
	return 1;
}

int
ckpt_jscan_value(struct ckpt_jscan *s, int depth)
{
	const unsigned char *k;
	size_t kl;
	uint64_t v;
	int first = 1, r, isint;

	ckpt_jscan_ws(s);
	if (s->p >= s->end)
		return ckpt_jscan_syntax(s, s->p, "value expected near end of text");
	if (depth > DEPTH_LIMIT)
		return ckpt_jscan_syntax(s, s->p, "nesting deeper than %d", DEPTH_LIMIT);
	switch (*s->p) {
	case '{':
		while ((r = ckpt_jscan_members(s, &first, &k, &kl)) > 0)
			if (ckpt_jscan_value(s, depth + 1) < 0)
				return -1;
		return r;
	case '[':
		while ((r = ckpt_jscan_elements(s, &first)) > 0)
			if (ckpt_jscan_value(s, depth + 1) < 0)
				return -1;
		return r;
	case '"':
		return ckpt_jscan_string(s, NULL, NULL, NULL, NULL);
	case 't':
		return ckpt_jscan_literal(s, "true");
	case 'f':
		return ckpt_jscan_literal(s, "false");
	case 'n':
		return ckpt_jscan_literal(s, "null");
	default:
		return ckpt_jscan_number(s, &isint, &v);
	}
}

size_t
ckpt_minify_chunk(struct ckpt_minify *m, char *out, const unsigned char *in, size_t len)
{
	size_t k = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = in[i];

		if (m->esc)
			m->esc = 0;
		else if (m->instr && c == '\\')
			m->esc = 1;
		else if (m->instr && c == '"')
			m->instr = 0;
		else if (!m->instr && (c == ' ' || c == '\t' || c == '\n' || c == '\r'))
			continue;
		else if (c == '"')
			m->instr = 1;
		out[k++] = (char)c;
	}
	return k;
}

/* Copy the JSON text [from, to) to out without white space outside strings (out->len its length). */
int
ckpt_jscan_minify(struct ckpt_jscan *s, const unsigned char *from, const unsigned char *to,
		  struct ckpt_jscan_buf *out)
{
	struct ckpt_minify m = {0};

	if (ckpt_grow(&out->p, &out->cap, (size_t)(to - from) + 1, 1, 16, s->e) < 0)
		return -1;
	out->len = ckpt_minify_chunk(&m, out->p, from, (size_t)(to - from));
	return 0;
}

/* ------------------------------------------------------------ a tree built as jansson builds it */

/* A number: an integer when it has neither fraction nor exponent (strtoll; beyond 64 bits refused,
 * as jansson refuses it), else a real (strtod), as jansson's lexer makes them; NULL for one jansson
 * refuses or the scanner does not take. */
static json_t *
build_number(struct ckpt_jscan *s)
{
	const unsigned char *start = s->p;
	char buf[64];
	size_t n;
	int integer;
	double d;

	if (s->p < s->end && *s->p == '-')
		s->p++;
	if (s->p >= s->end || *s->p < '0' || *s->p > '9' ||
	    (*s->p == '0' && s->p + 1 < s->end && s->p[1] >= '0' && s->p[1] <= '9'))
		return NULL;
	while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
		s->p++;
	integer = s->p >= s->end || (*s->p != '.' && *s->p != 'e' && *s->p != 'E');
	if (!integer) { /* the fraction and exponent checked by the scanner's own reading */
		s->p = start;
		if (ckpt_jscan_number(s, &integer, &(uint64_t){0}) < 0)
			return NULL;
		integer = 0;
	}
	if (integer) { /* strtoll's value, beyond 64 bits refused */
		const unsigned char *p = start + (*start == '-');
		uint64_t x = 0, lim = (uint64_t)INT64_MAX + (*start == '-');

		for (; p < s->p; p++) {
			if (x > (lim - (uint64_t)(*p - '0')) / 10)
				return NULL;
			x = x * 10 + (uint64_t)(*p - '0');
		}
		return json_integer(*start == '-' ? (json_int_t)(0 - x) : (json_int_t)x);
	}
	if ((n = (size_t)(s->p - start)) >= sizeof buf)
		return NULL;
	memcpy(buf, start, n);
	buf[n] = '\0';
	d = strtod(buf, NULL);
	return isinf(d) ? NULL : json_real(d);
}

/* A string decoded at the end of tmp (its length restored after): a new json_t, or NULL. */
static json_t *
build_string(struct ckpt_jscan *s, struct ckpt_jscan_buf *tmp)
{
	size_t len = tmp->len, off;
	const unsigned char *q = ckpt_jscan_plain(s->p, s->end);
	json_t *v = NULL;

	if (q != NULL) { /* nothing to decode: no copy */
		v = json_stringn_nocheck((const char *)s->p + 1, (size_t)(q - s->p - 2));
		s->p = q;
		return v;
	}
	if (ckpt_jscan_string(s, NULL, NULL, tmp, &off) == 0) /* valid UTF-8, no NUL (\u0000 refused) */
		v = json_stringn_nocheck(tmp->p + off, tmp->len - off - 1);
	tmp->len = len;
	return v;
}

static json_t *
build_object(struct ckpt_jscan *s, struct ckpt_jscan_buf *tmp, int depth)
{
	json_t *o = json_object(), *v;
	size_t len = tmp->len, off;
	int first = 1;

	if (o == NULL || ckpt_jscan_expect(s, '{') < 0)
		goto fail;
	for (ckpt_jscan_ws(s); s->p < s->end && *s->p != '}'; first = 0) {
		if ((!first && ckpt_jscan_expect(s, ',') < 0) || ckpt_jscan_string(s, NULL, NULL, tmp, &off) < 0 ||
		    ckpt_jscan_expect(s, ':') < 0 || (v = ckpt_jscan_build(s, tmp, depth + 1)) == NULL ||
		    json_object_setn_new_nocheck(o, tmp->p + off, tmp->len - off - 1, v) < 0)
			goto fail;
		tmp->len = len;
		ckpt_jscan_ws(s);
	}
	if (ckpt_jscan_expect(s, '}') == 0)
		return o;
fail:
	tmp->len = len;
	json_decref(o);
	return NULL;
}

static json_t *
build_array(struct ckpt_jscan *s, struct ckpt_jscan_buf *tmp, int depth)
{
	json_t *a = json_array(), *v;
	int first = 1, r = -1;

	while (a && (r = ckpt_jscan_elements(s, &first)) > 0)
		if ((v = ckpt_jscan_build(s, tmp, depth + 1)) == NULL || json_array_append_new(a, v) < 0) {
			r = -1;
			break;
		}
	if (r == 0)
		return a;
	json_decref(a);
	return NULL;
}

json_t *
ckpt_jscan_build(struct ckpt_jscan *s, struct ckpt_jscan_buf *tmp, int depth)
{
	ckpt_jscan_ws(s);
	if (s->p >= s->end || depth > DEPTH_LIMIT)
		return NULL;
	switch (*s->p) {
	case '{':
		return build_object(s, tmp, depth);
	case '[':
		return build_array(s, tmp, depth);
	case '"':
		return build_string(s, tmp);
	case 't':
		return ckpt_jscan_literal(s, "true") < 0 ? NULL : json_true();
	case 'f':
		return ckpt_jscan_literal(s, "false") < 0 ? NULL : json_false();
	case 'n':
		return ckpt_jscan_literal(s, "null") < 0 ? NULL : json_null();
	default:
		return build_number(s);
	}
}
