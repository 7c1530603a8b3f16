/* bytes.c: entries as JSON (UTF-8 text or base64), the one encoding of binary data in documents. */
#include <stdlib.h>
#include <string.h>

#include "base.h"

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int
ckpt_utf8_feed(struct ckpt_utf8 *u, const void *p, size_t len)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < len && !u->bad; i++) {
		unsigned c = s[i];

		if (u->need > 0) {
			if ((c & 0xc0) != 0x80) {
				u->bad = 1;
				break;
			}
			u->cp = u->cp << 6 | (c & 0x3f);
			if (--u->need == 0 && ((u->n == 2 && u->cp < 0x800) ||
					       (u->n == 3 && (u->cp < 0x10000 || u->cp > 0x10ffff)) ||
					       (u->cp >= 0xd800 && u->cp <= 0xdfff)))
				u->bad = 1;
		} else if (c == 0) {
			u->bad = 1;
		} else if (c >= 0x80) {
			if (c >= 0xc2 && c <= 0xdf)
				u->n = 1, u->cp = c & 0x1f;
			else if (c >= 0xe0 && c <= 0xef)
				u->n = 2, u->cp = c & 0x0f;
			else if (c >= 0xf0 && c <= 0xf4)
				u->n = 3, u->cp = c & 0x07;
			else
				u->bad = 1;
			u->need = u->n;
		}
	}
	return u->bad ? -1 : 0;
}

int
ckpt_utf8_valid(const void *p, size_t len)
{
	const unsigned char *s = p;
	struct ckpt_utf8 u = {0};
	size_t i = 0;

	while (i < len && s[i] - 1u < 0x7fu) /* plain ASCII without NUL, decided without the decoder */
		i++;
	if (i < len && s[i] == 0)
		return 0;
	return i == len || (ckpt_utf8_feed(&u, s + i, len - i) == 0 && ckpt_utf8_done(&u));
}

size_t
ckpt_utf8_put(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Two base64 digits for each 12 bits, built by the compiler: half the lookups of b64. */
#define B64C(x) (char)((x) < 26 ? 'A' + (x) : (x) < 52 ? 'a' + (x) - 26 : (x) < 62 ? '0' + (x) - 52 : (x) == 62 ? '+' : '/')
#define B64P1(i) B64C((i) >> 6), B64C((i) & 63)
#define B64P4(i) B64P1(i), B64P1((i) + 1), B64P1((i) + 2), B64P1((i) + 3)
#define B64P16(i) B64P4(i), B64P4((i) + 4), B64P4((i) + 8), B64P4((i) + 12)
#define B64P64(i) B64P16(i), B64P16((i) + 16), B64P16((i) + 32), B64P16((i) + 48)
#define B64P256(i) B64P64(i), B64P64((i) + 64), B64P64((i) + 128), B64P64((i) + 192)
#define B64P1024(i) B64P256(i), B64P256((i) + 256), B64P256((i) + 512), B64P256((i) + 768)
static const char b64pairs[8192] = {
	B64P1024(0), B64P1024(1024), B64P1024(2048), B64P1024(3072),
};

size_t
ckpt_base64_put(char *o, const void *p, size_t len)
{
	const unsigned char *s = p;
	char *start = o;
	size_t i;

	for (i = 0; i + 2 < len; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];

		memcpy(o, b64pairs + 2 * (v >> 12), 2);
		memcpy(o + 2, b64pairs + 2 * (v & 4095), 2);
		o += 4;
	}
	if (i < len) {
		uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < len ? (uint32_t)s[i + 1] << 8 : 0);

		*o++ = b64[v >> 18];
		*o++ = b64[(v >> 12) & 63];
		*o++ = i + 1 < len ? b64[(v >> 6) & 63] : '=';
		*o++ = '=';
	}
	return (size_t)(o - start);
}

/* Two decimal digits a step: the state document prints many small integers. */
static const char digits2[] =
	"0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849"
	"5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

size_t
ckpt_dec_put(char *o, long long v)
{
	static const unsigned long long pow10[CKPT_DEC_MAX] = {
		1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull,
		1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull,
		100000000000000ull, 1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
		1000000000000000000ull, 10000000000000000000ull,
	};
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
	size_t neg = v < 0, n = 1;
	char *t;

	if (u >= 10) { /* the digits first, so that they are written in place: log10 from log2 */
		n = (size_t)((64 - __builtin_clzll(u)) * 1233) >> 12;
		n += u >= pow10[n];
	}
	if (neg)
		*o++ = '-';
	t = o + n;
	while (u >= 10000) { /* four digits a division: half the dependent ones */
		unsigned d = (unsigned)(u % 10000);

		u /= 10000;
		t -= 4;
		memcpy(t, digits2 + 2 * (d / 100), 2);
		memcpy(t + 2, digits2 + 2 * (d % 100), 2);
	}
	if (u >= 100) {
		unsigned d = (unsigned)(u % 100);

		u /= 100;
		t -= 2;
		memcpy(t, digits2 + 2 * d, 2);
	}
	if (u >= 10)
		memcpy(t - 2, digits2 + 2 * u, 2);
	else
		t[-1] = (char)('0' + u);
	return n + neg;
}

/* Standard base64 with padding; malloc'd, NULL on allocation failure. */
static char *
base64_encode(const void *p, size_t len)
{
	char *out;

	if (len > (SIZE_MAX - 1) / 4 * 3 - 3)
		return NULL;
	out = malloc((len + 2) / 3 * 4 + 1);
	if (out == NULL)
		return NULL;
	out[ckpt_base64_put(out, p, len)] = '\0';
	return out;
}

static int
b64val(char c)
{
	const char *q = c ? strchr(b64, c) : NULL;

	return q ? (int)(q - b64) : -1;
}

/* Decode standard base64, padded to a multiple of 4; *out malloc'd; -1 on bad input or no memory. */
static int
base64_decode(const char *s, size_t slen, unsigned char **out, size_t *len)
{
	unsigned char *buf, *o;

	if (slen % 4 != 0)
		return -1;
	buf = malloc(slen / 4 * 3 + 1);
	if (buf == NULL)
		return -1;
	o = buf;
	for (size_t i = 0; i < slen; i += 4) {
		int a = b64val(s[i]), b = b64val(s[i + 1]), c, d;
		int last = i + 4 == slen;

		c = last && s[i + 2] == '=' && s[i + 3] == '=' ? -2 : b64val(s[i + 2]);
		d = last && s[i + 3] == '=' ? -2 : b64val(s[i + 3]);
		if (a < 0 || b < 0 || c == -1 || d == -1 || (c == -2 && d != -2)) {
			free(buf);
			return -1;
		}
		*o++ = (unsigned char)(a << 2 | b >> 4);
		if (c >= 0)
			*o++ = (unsigned char)((b & 15) << 4 | c >> 2);
		if (d >= 0)
			*o++ = (unsigned char)((c & 3) << 6 | d);
	}
	*out = buf;
	*len = (size_t)(o - buf);
	return 0;
}

json_t *
ckpt_entry_to_json(const void *p, size_t len)
{
	char *enc;
	json_t *v;

	if (ckpt_utf8_valid(p, len))
		return json_stringn(len ? p : "", len);
	enc = base64_encode(p, len);
	if (enc == NULL)
		return NULL;
	v = json_pack("{s:s}", "base64", enc);
	free(enc);
	return v;
}

int
ckpt_entry_from_json(const json_t *v, unsigned char **out, size_t *len, struct ckpt_err *e)
{
	const json_t *b;

	if (json_is_string(v)) {
		size_t n = json_string_length(v);

		*out = malloc(n + 1);
		if (*out == NULL)
			return ckpt_err_nomem(e, "");
		memcpy(*out, json_string_value(v), n);
		*len = n;
		return 0;
	}
	if (json_is_object(v) && json_object_size(v) == 1 &&
	    json_is_string(b = json_object_get(v, "base64"))) {
		if (base64_decode(json_string_value(b), json_string_length(b), out, len) < 0)
			return ckpt_err_set(e, CKPT_ERR_INPUT, "", "bad base64 in entry");
		return 0;
	}
	return ckpt_err_set(e, CKPT_ERR_INPUT, "", "an entry must be a string or {\"base64\": \"...\"}");
}
