/* fout.c: where a decoded value goes (struct ckpt_fout): nowhere, a jansson value or a document
 * written through ckpt_jw; the decoders of serializer.c, scala.c, kryo.c and rowdata.c share it. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "format.h"

/* FOUT_JSON: give x (taken) its place, the root or a member or element of the open container. */
int
ckpt_fout_put(struct ckpt_fout *o, json_t *x)
{
	json_t *top;

	if (x == NULL)
		return -1;
	if (o->depth == 0) {
		json_decref(o->root);
		o->root = x;
		return 0;
	}
	top = o->stack[o->depth - 1];
	return json_is_object(top) ? json_object_set_new(top, o->key, x) : json_array_append_new(top, x);
}

int
ckpt_fout_entry(struct ckpt_fout *o, const void *p, size_t n)
{
	if (o->mode == FOUT_WRITE) {
		ckpt_fout_elem(o);
		ckpt_jw_entry(o->w, n ? p : "", n);
		return 0;
	}
	return o->mode == FOUT_JSON ? ckpt_fout_put(o, ckpt_entry_to_json(n ? p : "", n)) : 0;
}

int
ckpt_fout_json(struct ckpt_fout *o, json_t *v)
{
	if (v == NULL)
		return -1;
	if (o->mode == FOUT_JSON)
		return ckpt_fout_put(o, v);
	if (o->mode == FOUT_WRITE && o->flat && o->depth == 0 && json_is_object(v)) {
		ckpt_jw_members(o->w, v);
	} else if (o->mode == FOUT_WRITE) {
		ckpt_fout_elem(o);
		ckpt_jw_json(o->w, v);
	}
	json_decref(v);
	return 0;
}

int
ckpt_fout_open(struct ckpt_fout *o, char c)
{
	json_t *x;

	if (o->depth >= FOUT_DEPTH)
		return -1;
	if (o->mode == FOUT_WRITE && o->flat && o->depth == 0 && c == '{') {
		o->obj[0] = 1; /* the members go into the object open */
	} else if (o->mode == FOUT_WRITE) {
		ckpt_fout_elem(o);
		ckpt_jw_open(o->w, c);
		o->obj[o->depth] = c == '{';
	} else if (o->mode == FOUT_JSON) {
		x = c == '{' ? json_object() : json_array();
		if (ckpt_fout_put(o, x) < 0)
			return -1;
		o->stack[o->depth] = x;
	}
	o->depth++;
	return 0;
}

void
ckpt_fout_reset(struct ckpt_fout *o)
{
	json_decref(o->root);
	o->root = NULL;
	o->depth = 0;
}

/* ------------------------------------------------------------ dates, times and decimals as text */

void
ckpt_civil(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	int64_t era, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	yoe = z - era * 146097;
	yoe = (yoe - yoe / 1460 + yoe / 36524 - yoe / 146096) / 365;
	doy = z - era * 146097 - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
	*m = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

int64_t
ckpt_fout_civil_days(int64_t y, unsigned m, unsigned d)
{
	int64_t era, yoe, doy;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

int
ckpt_fout_time(struct ckpt_fout *o, int64_t days, int date, int64_t nanos, const char *zone)
{
	char b[96];
	int n = 0;
	int64_t y;
	unsigned m, d;
	int64_t sec = nanos / 1000000000, frac = nanos % 1000000000;

	if (date) {
		ckpt_civil(days, &y, &m, &d);
		if (y > 9999) /* as java.time prints the years past four digits, and before year 1 */
			n = snprintf(b, sizeof b, "+%" PRId64 "-%02u-%02u", y, m, d);
		else if (y < 0)
			n = snprintf(b, sizeof b, "-%04" PRId64 "-%02u-%02u", -y, m, d);
		else
			n = snprintf(b, sizeof b, "%04" PRId64 "-%02u-%02u", y, m, d);
		if (date == 2)
			return ckpt_fout_str(o, b, (size_t)n);
		b[n++] = 'T';
	}
	n += snprintf(b + n, sizeof b - (size_t)n, "%02d:%02d:%02d", (int)(sec / 3600), (int)(sec / 60 % 60),
		      (int)(sec % 60));
	if (frac % 1000000 == 0 && frac)
		n += snprintf(b + n, sizeof b - (size_t)n, ".%03d", (int)(frac / 1000000));
	else if (frac % 1000 == 0 && frac)
		n += snprintf(b + n, sizeof b - (size_t)n, ".%06d", (int)(frac / 1000));
	else if (frac)
		n += snprintf(b + n, sizeof b - (size_t)n, ".%09d", (int)frac);
	n += snprintf(b + n, sizeof b - (size_t)n, "%s", zone);
	return ckpt_fout_str(o, b, (size_t)n);
}

char *
ckpt_fout_decimal_text(const unsigned char *b, size_t n, int32_t scale, int *ndigits)
{
	unsigned char *mag = NULL;
	char dig8[24], *dig = n <= 8 ? dig8 : malloc(n * 3 + 2), *out = NULL;
	size_t nd = 0, k = 0, lead, cap;
	int neg = n && (b[0] & 0x80), carry = 1;

	if (dig == NULL || scale > 100000 || scale < -100000)
		goto out;
	if (n <= 8) { /* a long's bytes or fewer (DecimalData up to precision 18): in 64 bits */
		uint64_t u = 0;

		for (size_t i = 0; i < n; i++)
			u = u << 8 | b[i];
		if (neg && n < 8)
			u |= ~(uint64_t)0 << (8 * n);
		if (neg)
			u = ~u + 1;
		do
			dig[nd++] = (char)('0' + u % 10);
		while ((u /= 10) != 0);
		goto digits;
	}
	if ((mag = malloc(n)) == NULL)
		goto out;
	for (size_t i = n; i-- > 0;) { /* the magnitude, two's complement undone */
		unsigned v = neg ? (unsigned)(~b[i] & 0xff) + (unsigned)carry : b[i];

		carry = neg && v > 0xff;
		mag[i] = (unsigned char)v;
	}
	for (;;) { /* divide by ten until nothing is left: the digits, lowest first */
		unsigned r = 0, any = 0;

		for (size_t i = 0; i < n; i++) {
			unsigned v = r << 8 | mag[i];

			mag[i] = (unsigned char)(v / 10);
			r = v % 10;
			any |= mag[i];
		}
		dig[nd++] = (char)('0' + r);
		if (!any)
			break;
	}
digits:
	*ndigits = (int)nd;
	lead = scale > 0 ? (size_t)scale : 0;
	cap = 4 + (nd > lead ? nd : lead) + (scale < 0 && !(nd == 1 && dig[0] == '0') ? (size_t)-(int64_t)scale : 0);
	if ((out = malloc(cap)) == NULL)
		goto out;
	if (neg)
		out[k++] = '-';
	if (nd <= lead)
		out[k++] = '0';
	for (size_t i = nd; i-- > lead;)
		out[k++] = dig[i];
	if (scale < 0 && !(nd == 1 && dig[0] == '0')) /* toPlainString: the zeros the scale stands for */
		for (int64_t i = 0; i < -(int64_t)scale; i++)
			out[k++] = '0';
	if (scale > 0)
		out[k++] = '.';
	for (size_t i = lead; i-- > 0;)
		out[k++] = i < nd ? dig[i] : '0';
	out[k] = 0;
out:
	free(mag);
	if (dig != dig8)
		free(dig);
	return out;
}

/* A UTF-16 unit sequence as UTF-8 into o; lone surrogates become U+FFFD. */
int
ckpt_fout_utf16(struct ckpt_fsrc *s, struct ckpt_fout *o, const uint16_t *u, size_t n)
{
	char small[3 * 128], *b = small;
	size_t k = 0;
	int r;

	if (o->mode == FOUT_NONE)
		return 0;
	if (n > 128 && (b = malloc(n * 3 + 1)) == NULL)
		return ckpt_fsrc_nomem(s);
	for (size_t i = 0; i < n; i++) {
		uint32_t c = u[i];

		if (c < 0x80) {
			b[k++] = (char)c;
			continue;
		}
		if (c >= 0xd800 && c <= 0xdbff && i + 1 < n && u[i + 1] >= 0xdc00 && u[i + 1] <= 0xdfff) {
			c = 0x10000 + ((c - 0xd800) << 10) + (u[i + 1] - 0xdc00u);
			i++;
		} else if (c >= 0xd800 && c <= 0xdfff) {
			c = 0xfffd;
		}
		k += ckpt_utf8_put(b + k, c);
	}
	r = ckpt_fout_str(o, b, k) < 0 ? ckpt_fsrc_nomem(s) : 0;
	if (b != small)
		free(b);
	return r;
}

/* A double into o: NaN and the infinities as strings, as Java prints them. */
int
ckpt_fout_real(struct ckpt_fsrc *s, struct ckpt_fout *o, double d)
{
	int r;

	if (o->mode == FOUT_NONE)
		return 0;
	if (isnan(d))
		r = ckpt_fout_str(o, "NaN", 3);
	else if (isinf(d))
		r = d > 0 ? ckpt_fout_str(o, "Infinity", 8) : ckpt_fout_str(o, "-Infinity", 9);
	else
		r = ckpt_fout_json(o, json_real(d));
	return r < 0 ? ckpt_fsrc_nomem(s) : 0;
}
