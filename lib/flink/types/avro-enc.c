/* avro-enc.c: Avro values given as JSON (as -R prints them) written in the encoding of flink-avro's
 * DataOutputEncoder by the snapshot's schema (avro.h), for ckpt-merge --rows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "types.h"
#include "avro.h"

static int aenc(const struct ckpt_fser_avro_node *n, const json_t *v, struct ckpt_fenc *b, int depth);

/* digits of s (at least min, at most max) into *v. */
static int
adigits(const char **s, int min, int max, int64_t *v)
{
	int k = 0;

	for (*v = 0; **s >= '0' && **s <= '9' && k < max; k++)
		*v = *v * 10 + (*(*s)++ - '0');
	return k >= min && !(**s >= '0' && **s <= '9') ? 0 : -1;
}

/* "YYYY-MM-DD" (other years signed) into days since 1970. */
static int
parse_day(const char **s, int64_t *days)
{
	int64_t y, m, d, yy;
	unsigned mm, dd;
	int neg = **s == '-';

	if (**s == '-' || **s == '+')
		(*s)++;
	if (adigits(s, 4, 9, &y) < 0 || *(*s)++ != '-' || adigits(s, 2, 2, &m) < 0 || *(*s)++ != '-' ||
	    adigits(s, 2, 2, &d) < 0 || m < 1 || m > 12 || d < 1 || d > 31)
		return -1;
	y = neg ? -y : y;
	*days = ckpt_fout_civil_days(y, (unsigned)m, (unsigned)d);
	ckpt_civil(*days, &yy, &mm, &dd);
	return yy == y && mm == m && dd == d ? 0 : -1;
}

/* "HH:MM:SS[.fraction]" (at most the unit's digits) into units since midnight. */
static int
parse_clock(const char **s, int64_t unit, int64_t *v)
{
	int64_t h, mi, sec, frac = 0, k;
	const char *f;

	if (adigits(s, 2, 2, &h) < 0 || *(*s)++ != ':' || adigits(s, 2, 2, &mi) < 0 || *(*s)++ != ':' ||
	    adigits(s, 2, 2, &sec) < 0 || h > 23 || mi > 59 || sec > 59)
		return -1;
	if (**s == '.') {
		f = ++*s;
		if (adigits(s, 1, unit == 1000 ? 3 : 6, &frac) < 0)
			return -1;
		for (k = *s - f; k < (unit == 1000 ? 3 : 6); k++)
			frac *= 10;
	}
	*v = ((h * 60 + mi) * 60 + sec) * unit + frac;
	return 0;
}

/* The text datetime() prints for l, back into its int or long. */
static int
parse_datetime(const json_t *v, enum ckpt_fser_avro_logical l, int64_t *out)
{
	const char *s = json_string_value(v);
	int64_t unit = l == L_TIME_US || l == L_TS_US || l == L_LTS_US ? 1000000 : 1000, days = 0, t = 0;

	if (s == NULL)
		return -1;
	if (l != L_TIME_MS && l != L_TIME_US && parse_day(&s, &days) < 0)
		return -1;
	if (l == L_DATE) {
		*out = days;
		return *s ? -1 : 0;
	}
	if ((l != L_TIME_MS && l != L_TIME_US && *s++ != 'T') || parse_clock(&s, unit, &t) < 0 ||
	    strcmp(s, l == L_TS_MS || l == L_TS_US ? "Z" : "") != 0)
		return -1;
	if (days > INT64_MAX / 86400 / unit - 1 || days < INT64_MIN / 86400 / unit + 1)
		return -1;
	*out = days * 86400 * unit + t;
	return 0;
}

/* A decimal text ("-1.23", at most scale fraction digits) at scale into BigInteger.toByteArray's
 * bytes (big-endian two's complement, fewest bytes), sign-extended to size when size > 0. */
static int
decimal_bytes(const json_t *v, int scale, size_t size, unsigned char *p, size_t *n)
{
	const char *s = json_string_value(v);
	unsigned char m[AVRO_DECIMAL_MAX + 1] = {0}; /* the magnitude, little-endian */
	char d[AVRO_DECIMAL_MAX * 5 / 2 + 8];        /* the unscaled value's digits */
	size_t len = 1, nd = 0, k;
	int neg = s && *s == '-', frac = -1;

	for (s += s ? neg : 0; s && *s; s++)
		if (*s == '.' && frac < 0 && nd)
			frac = 0;
		else if (*s >= '0' && *s <= '9' && nd < sizeof d && (frac < 0 || frac++ < scale))
			d[nd++] = *s;
		else
			return -1;
	if (s == NULL || nd == 0 || frac == 0)
		return -1;
	for (frac = frac < 0 ? 0 : frac; frac < scale && nd < sizeof d; frac++)
		d[nd++] = '0';
	for (k = 0; k < nd && d[k] == '0'; k++)
		;
	neg = neg && k < nd; /* "-0.00" is BigInteger zero: one byte 0, as Java writes it */
	for (size_t i = 0; i < nd; i++) {
		unsigned carry = (unsigned)(d[i] - '0');

		for (k = 0; k < len || carry; k++) {
			unsigned x = (k < len ? m[k] : 0) * 10u + carry;

			if (k == AVRO_DECIMAL_MAX)
				return -1;
			m[k] = (unsigned char)x;
			carry = x >> 8;
		}
		len = k > len ? k : len;
	}
	len++; /* room for the sign */
	for (k = 0; neg && k < len; k++) /* two's complement: inverted, plus one */
		m[k] = (unsigned char)~m[k];
	for (k = 0; neg && k < len && ++m[k] == 0; k++)
		;
	while (len > 1 && m[len - 1] == (neg ? 0xff : 0) && ((m[len - 2] & 0x80) != 0) == neg)
		len--;
	if (size && len > size)
		return -1;
	*n = size ? size : len;
	for (k = 0; k < *n; k++)
		p[*n - 1 - k] = k < len ? m[k] : neg ? 0xff : 0;
	return 0;
}

/* bytes (an i32 length) or fixed (its size): a decimal's unscaled value, or an entry's bytes. */
static int
enc_bytes(const struct ckpt_fser_avro_node *n, const json_t *v, struct ckpt_fenc *b)
{
	unsigned char *p = NULL;
	size_t len = 0;
	int r = -1;

	if (n->logical == L_DECIMAL) {
		if ((p = malloc(n->size ? n->size : AVRO_DECIMAL_MAX + 1)) == NULL)
			return ckpt_fenc_fail(b, "out of memory");
		if (decimal_bytes(v, n->scale, n->size, p, &len) < 0)
			ckpt_fenc_fail(b, n->type == A_FIXED ? "a decimal text (\"-1.23\") within its scale and its fixed's size" :
				       "a decimal text (\"-1.23\") within its scale");
		else
			r = 0;
	} else if (ckpt_entry_from_json(v, &p, &len, NULL) < 0) {
		ckpt_fenc_fail(b, "an entry (a string or {\"base64\"}: Avro bytes)");
	} else if (n->type == A_FIXED && len != n->size) {
		snprintf(b->why, b->whyn, "an entry of %zu bytes (an Avro fixed)", n->size);
	} else {
		r = 0;
	}
	if (r == 0)
		r = (n->type == A_BYTES && ckpt_fenc_be(b, len, 4) < 0) || ckpt_fenc_put(b, p, len) < 0 ? -1 : 0;
	free(p);
	return r;
}

/* An array's or a map's items: one block of them all (when any), then the count 0, as
 * DataOutputEncoder's setItemCount and writeArrayEnd write them. */
static int
enc_blocks(const struct ckpt_fser_avro_node *n, const json_t *v, struct ckpt_fenc *b, int depth)
{
	size_t count = json_is_array(v) ? json_array_size(v) : json_object_size(v), i;
	const char *key;
	const json_t *x;
	unsigned char c[10];
	size_t k = 0;

	if (n->type == A_ARRAY ? !json_is_array(v) : !json_is_object(v))
		return ckpt_fenc_fail(b, n->type == A_ARRAY ? "an array (an Avro array)" : "an object (an Avro map)");
	for (; count >= 0x80; count >>= 7)
		c[k++] = (unsigned char)(count | 0x80);
	c[k++] = (unsigned char)count;
	if (json_is_array(v) ? json_array_size(v) != 0 : json_object_size(v) != 0)
		if (ckpt_fenc_put(b, c, k) < 0)
			return -1;
	if (n->type == A_ARRAY) {
		json_array_foreach(v, i, x)
			if (aenc(n->kids[0], x, b, depth + 1) < 0)
				return -1;
	} else {
		json_object_foreach((json_t *)v, key, x)
			if (ckpt_fenc_be(b, strlen(key), 4) < 0 || ckpt_fenc_put(b, key, strlen(key)) < 0 ||
			    aenc(n->kids[0], x, b, depth + 1) < 0)
				return -1;
	}
	return ckpt_fenc_be(b, 0, 1);
}

static int
enc_record(const struct ckpt_fser_avro_node *n, const json_t *v, struct ckpt_fenc *b, int depth)
{
	if (!json_is_object(v) || json_object_size(v) != n->nkids)
		goto bad;
	for (size_t i = 0; i < n->nkids; i++) {
		const json_t *f = json_object_get(v, n->names[i]);

		if (f == NULL)
			goto bad;
		if (aenc(n->kids[i], f, b, depth + 1) < 0)
			return -1;
	}
	return 0;
bad:
	snprintf(b->why, b->whyn, "an object of the fields of Avro record %s", n->name ? n->name : "?");
	return -1;
}

/* A union: null its null branch, else the first branch the value fits (its index, the value). */
static int
enc_union(const struct ckpt_fser_avro_node *n, const json_t *v, struct ckpt_fenc *b, int depth)
{
	size_t at = b->n;

	for (size_t i = 0; i < n->nkids; i++) {
		if ((n->kids[i]->type == A_NULL) != json_is_null(v))
			continue;
		if (ckpt_fenc_be(b, i, 4) == 0 && aenc(n->kids[i], v, b, depth + 1) == 0)
			return 0;
		b->n = at;
	}
	return ckpt_fenc_fail(b, "a value of one of the Avro union's branches");
}

/* What an int or a long of n is given as, for the message when it is not. */
static const char *
expected_number(const struct ckpt_fser_avro_node *n)
{
	switch (n->logical) {
	case L_DATE: return "a date (\"2024-02-29\")";
	case L_TIME_MS: case L_TIME_US: return "a time within a day (\"10:00:00.123\")";
	case L_TS_MS: case L_TS_US: return "a timestamp in UTC (\"2024-02-29T10:00:00.123Z\")";
	case L_LTS_MS: case L_LTS_US: return "a local timestamp (\"2024-02-29T10:00:00.123\")";
	default: return n->type == A_INT ? "an integer of 32 bits (an Avro int)" : "an integer (an Avro long)";
	}
}

/* The value v of n as DataOutputEncoder writes it (flink-avro's AvroSerializer). */
static int
aenc(const struct ckpt_fser_avro_node *n, const json_t *v, struct ckpt_fenc *b, int depth)
{
	int64_t l;
	double d;
	float f;
	uint32_t u;
	uint64_t u64;
	size_t i;

	if (depth > AVRO_DEPTH)
		return ckpt_fenc_fail(b, "an Avro value nested less deep");
	switch (n->type) {
	case A_NULL:
		return json_is_null(v) ? 0 : ckpt_fenc_fail(b, "null (Avro null)");
	case A_BOOL:
		return json_is_boolean(v) ? ckpt_fenc_be(b, json_is_true(v), 1) : ckpt_fenc_fail(b, "true or false");
	case A_INT: case A_LONG:
		l = json_integer_value(v);
		if ((n->logical != L_NONE ? parse_datetime(v, n->logical, &l) < 0 : !json_is_integer(v)) ||
		    (n->type == A_INT && (l < INT32_MIN || l > INT32_MAX)))
			return ckpt_fenc_fail(b, expected_number(n));
		return ckpt_fenc_be(b, (uint64_t)l, n->type == A_INT ? 4 : 8);
	case A_FLOAT: case A_DOUBLE:
		if (ckpt_json_real(v, &d) < 0)
			return ckpt_fenc_fail(b, "a number, \"NaN\", \"Infinity\" or \"-Infinity\"");
		if (n->type == A_FLOAT) {
			f = (float)d;
			memcpy(&u, &f, 4);
			return ckpt_fenc_be(b, isnan(f) ? 0x7fc00000u : u, 4);
		}
		memcpy(&u64, &d, 8);
		return ckpt_fenc_be(b, isnan(d) ? 0x7ff8000000000000ull : u64, 8);
	case A_STRING:
		if (!json_is_string(v) || json_string_length(v) > INT32_MAX)
			return ckpt_fenc_fail(b, "a string (an Avro string)");
		return ckpt_fenc_be(b, json_string_length(v), 4) < 0 ? -1 :
		       ckpt_fenc_put(b, json_string_value(v), json_string_length(v));
	case A_BYTES: case A_FIXED:
		return enc_bytes(n, v, b);
	case A_ENUM:
		for (i = 0; json_is_string(v) && i < n->nnames; i++)
			if (strcmp(n->names[i], json_string_value(v)) == 0)
				return ckpt_fenc_be(b, i, 4);
		return ckpt_fenc_fail(b, "a symbol of the Avro enum");
	case A_UNION:
		return enc_union(n, v, b, depth);
	case A_ARRAY: case A_MAP:
		return enc_blocks(n, v, b, depth);
	default:
		return enc_record(n, v, b, depth);
	}
}

int
ckpt_fser_avro_enc(const struct ckpt_fser *t, const json_t *v, struct ckpt_fenc *b, int depth)
{
	const struct ckpt_fser_avro_schema *sc = t->ext;

	if (sc == NULL || sc->root == NULL)
		return ckpt_fenc_fail(b, "a value of a schema ckpt reads");
	return aenc(sc->root, v, b, depth);
}
