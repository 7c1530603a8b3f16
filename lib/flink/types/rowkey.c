/* rowkey.c: a Flink SQL key (ckpt-inspect -k) or value (ckpt-merge --rows) written as
 * RowDataSerializer writes it: a BinaryRowData of the row's logical types (nested rows and
 * structured types each a BinaryRowData in the variable part, arrays a BinaryArrayData, maps and
 * multisets a BinaryMapData, wide decimals and timestamps in 16 and 8 bytes there); and the values
 * of ArrayDataSerializer, MapDataSerializer, TimestampDataSerializer and DecimalDataSerializer. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "types.h"
#include "rowdata.h"

static int
key_field_writable(const struct ckpt_frow_type *t)
{
	switch (t->root) {
	case RD_BOOLEAN: case RD_TINYINT: case RD_SMALLINT: case RD_INTEGER: case RD_BIGINT: case RD_FLOAT:
	case RD_DOUBLE: case RD_DATE: case RD_CHAR: case RD_VARCHAR: case RD_INTERVAL_YM: case RD_INTERVAL_DT:
	case RD_BINARY: case RD_VARBINARY: case RD_RAW:
		return 1;
	case RD_ROW: case RD_STRUCT: /* a nested BinaryRowData (the logical type's depth is bounded) */
		for (size_t i = 0; i < t->n; i++)
			if (!key_field_writable(t->kids[i]))
				return 0;
		return 1;
	case RD_DECIMAL: case RD_TIMESTAMP: case RD_TIMESTAMP_LTZ: case RD_TIME:
		return 1;
	case RD_ARRAY: case RD_MULTISET: /* a BinaryArrayData (MULTISET: a map to INT counts) */
		return t->n >= 1 && key_field_writable(t->kids[0]);
	case RD_MAP: /* a BinaryMapData: its key array and its value array */
		return t->n >= 2 && key_field_writable(t->kids[0]) && key_field_writable(t->kids[1]);
	default:
		return 0;
	}
}

static const char *
key_field_name(const struct ckpt_frow_type *row, size_t i, char *buf, size_t n)
{
	if (row->names && row->names[i][0])
		return row->names[i];
	snprintf(buf, n, "f%zu", i);
	return buf;
}

/* The first field of row (nested rows' fields by their path) ckpt cannot write, into why. */
static int
unwritable_field(const struct ckpt_frow_type *row, char *why, size_t n, const char *path)
{
	char name[32], type[64], sub[256];

	for (size_t i = 0; i < row->n; i++) {
		const struct ckpt_frow_type *k = row->kids[i];

		snprintf(sub, sizeof sub, "%s%s", path, key_field_name(row, i, name, sizeof name));
		if ((k->root == RD_ROW || k->root == RD_STRUCT) && k->n > 0) {
			if (strlen(sub) + 2 < sizeof sub && (strcat(sub, "."), unwritable_field(k, why, n, sub)))
				return 1;
		} else if (!key_field_writable(k)) {
			snprintf(why, n, "field %s of type %s", sub, ckpt_frow_root_name(k, type, sizeof type));
			return 1;
		}
	}
	return 0;
}

int
ckpt_frow_key_writable(const struct ckpt_fser *t, char *why, size_t n)
{
	char type[64];

	if ((t->kind == FSER_ARRAYDATA || t->kind == FSER_MAPDATA) && t->rd) { /* values only */
		if (key_field_writable(t->rd))
			return 1;
		snprintf(why, n, "type %s", ckpt_frow_root_name(t->rd, type, sizeof type));
		return 0;
	}
	if (t->kind != FSER_ROWDATA || t->rd == NULL || t->rd->root != RD_ROW) {
		snprintf(why, n, "its keys' hashCode is not known");
		return 0;
	}
	return !unwritable_field(t->rd, why, n, "");
}

struct rw {
	unsigned char *p;
	size_t n, cap;
	size_t base; /* where the row starts in p (after its length) */
	char *why;
	size_t whyn;
	char path[128]; /* a nested row's field names before its own ("f1.") */
};

static int
rw_grow(struct rw *w, size_t add)
{
	if (ckpt_grow(&w->p, &w->cap, w->n + add, 1, 64, NULL) < 0) {
		snprintf(w->why, w->whyn, "out of memory");
		return -1;
	}
	memset(w->p + w->n, 0, add);
	w->n += add;
	return 0;
}

static void
put_le(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* [-]digits: *v, the digits read, at most max of them. */
static int
digits(const char **s, int min, int max, int64_t *v)
{
	int k = 0;

	*v = 0;
	while (**s >= '0' && **s <= '9' && k < max) {
		*v = *v * 10 + (**s - '0');
		(*s)++;
		k++;
	}
	return k >= min && !(**s >= '0' && **s <= '9') ? 0 : -1;
}

/* A date as -a prints it (java.time's: 2024-02-29, +10000-01-01, -0001-12-31): days since 1970. */
static int
parse_date(const char **s, int64_t *days)
{
	int64_t y, m, d, yy;
	unsigned mm, dd;
	int sign = **s == '-' ? -1 : 1;

	if (**s == '-' || **s == '+')
		(*s)++;
	if (digits(s, 4, 9, &y) < 0 || *(*s)++ != '-' || digits(s, 2, 2, &m) < 0 || *(*s)++ != '-' ||
	    digits(s, 2, 2, &d) < 0 || m < 1 || m > 12 || d < 1 || d > 31)
		return -1;
	y *= sign;
	*days = ckpt_fout_civil_days(y, (unsigned)m, (unsigned)d);
	ckpt_civil(*days, &yy, &mm, &dd);
	return yy == y && mm == m && dd == d ? 0 : -1;
}

/* hh:mm:ss and at most digits fraction digits (-a prints 3, 6 or 9): the nanosecond of the day. */
static int
parse_clock(const char **s, int maxdigits, int64_t *nanos)
{
	int64_t h, mi, sec, frac = 0;

	if (digits(s, 2, 2, &h) < 0 || *(*s)++ != ':' || digits(s, 2, 2, &mi) < 0 || *(*s)++ != ':' ||
	    digits(s, 2, 2, &sec) < 0 || h > 23 || mi > 59 || sec > 59)
		return -1;
	if (**s == '.') {
		const char *f = ++*s;

		if (digits(s, 1, maxdigits, &frac) < 0)
			return -1;
		for (long k = *s - f; k < 9; k++)
			frac *= 10;
	}
	*nanos = ((h * 60 + mi) * 60 + sec) * 1000000000 + frac;
	return 0;
}

/* A timestamp as -a prints it: the date, T, the clock (at most precision fraction digits), zone
 * ("Z" or ""): its epoch millisecond and the nanosecond within it (TimestampData's two parts). */
static int
parse_timestamp(const char *s, const char *zone, int precision, int64_t *millis, int32_t *nano)
{
	int64_t days, ns;

	if (parse_date(&s, &days) < 0 || *s++ != 'T' || parse_clock(&s, precision < 3 ? 3 : precision, &ns) < 0 ||
	    strcmp(s, zone) != 0)
		return -1;
	*millis = days * 86400000 + ns / 1000000;
	*nano = (int32_t)(ns % 1000000);
	return 0;
}

/* mag (16 bytes, big-endian) times 10 plus d. */
static void
mul10_add(unsigned char *mag, unsigned d)
{
	for (int i = 15; i >= 0; i--) {
		d += mag[i] * 10u;
		mag[i] = (unsigned char)d;
		d >>= 8;
	}
}

/* A decimal as -a prints it ("-12.50"; or a JSON integer): its unscaled value at scale, at most
 * precision digits (38 at most: 16 bytes), as 16 bytes of big-endian two's complement. */
static int
parse_decimal(const json_t *v, const struct ckpt_frow_type *t, unsigned char *be)
{
	char buf[48];
	const char *s = buf;
	int neg = 0, nd = 0, frac = -1, carry = 1;

	memset(be, 0, 16);
	if (json_is_integer(v))
		snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else if (json_is_string(v) && json_string_length(v) < sizeof buf)
		snprintf(buf, sizeof buf, "%s", json_string_value(v));
	else
		return -1;
	if (*s == '-') {
		neg = 1;
		s++;
	}
	if (!(*s >= '0' && *s <= '9') || t->precision > 38)
		return -1;
	for (; *s; s++) {
		if (*s == '.' && frac < 0 && s[1]) {
			frac = 0;
			continue;
		}
		if (!(*s >= '0' && *s <= '9') || (frac >= 0 && ++frac > t->scale))
			return -1;
		if (nd || *s != '0')
			nd++;
		if (nd > 38)
			return -1;
		mul10_add(be, (unsigned)(*s - '0'));
	}
	for (int k = frac < 0 ? 0 : frac; k < t->scale && nd <= t->precision; k++, nd += nd != 0)
		mul10_add(be, 0);
	if (nd > t->precision)
		return -1;
	for (int i = 15; neg && i >= 0; i--) { /* negated: two's complement */
		unsigned x = (unsigned)(~be[i] & 0xff) + (unsigned)carry;

		carry = x > 0xff;
		be[i] = (unsigned char)x;
	}
	return 0;
}

/* BigInteger.toByteArray of the 16 bytes be: the fewest bytes that keep its sign (at least one). */
static size_t
minimal_bytes(const unsigned char *be, const unsigned char **start)
{
	size_t k = 0;

	while (k < 15 && ((be[k] == 0 && !(be[k + 1] & 0x80)) || (be[k] == 0xff && (be[k + 1] & 0x80))))
		k++;
	*start = be + k;
	return 16 - k;
}

/* What a field of type t is given as, for the message when it is not. */
static void
field_expected(struct rw *w, const char *name, const struct ckpt_frow_type *t)
{
	char type[64];
	const char *as;

	switch (t->root) {
	case RD_BOOLEAN: as = "true, false or null"; break;
	case RD_FLOAT: case RD_DOUBLE: as = "a number, \"NaN\", \"Infinity\", \"-Infinity\" or null"; break;
	case RD_CHAR: case RD_VARCHAR: as = "a string or null"; break;
	case RD_BINARY: case RD_VARBINARY: as = "an entry (a string or {\"base64\"}) or null"; break;
	case RD_RAW: as = "{\"raw_class\": its class, \"bytes\": an entry} or null"; break;
	case RD_DATE: as = "a date (\"2024-02-29\") or null"; break;
	case RD_DECIMAL: as = "a decimal string (\"-12.50\") within its precision and scale, or null"; break;
	case RD_TIMESTAMP: as = "a timestamp (\"2024-02-29T10:00:00.123\") or null"; break;
	case RD_TIMESTAMP_LTZ: as = "a timestamp in UTC (\"2024-02-29T10:00:00.123Z\") or null"; break;
	case RD_TIME: as = "a time of day (\"10:00:00.123\") or null"; break;
	case RD_ARRAY: as = "an array or null"; break;
	case RD_MAP: case RD_MULTISET: as = "an array of {\"key\", \"value\"} or null"; break;
	default: as = "an integer in its range, or null"; break;
	}
	snprintf(w->why, w->whyn, "field %s%s (%s): %s", w->path, name, ckpt_frow_root_name(t, type, sizeof type), as);
}

static int write_row(struct rw *w, const struct ckpt_frow_type *row, const json_t *v);

/* A nested row (BinaryWriter.writeRow): its own BinaryRowData in the variable part, in 8-byte
 * words, its offset from the row's start and its size in the slot. */
static int
nested_row(struct rw *w, const struct ckpt_frow_type *t, const json_t *v, size_t at, const char *name)
{
	struct rw sub = {.why = w->why, .whyn = w->whyn};
	size_t from = w->n;
	int r = -2;

	snprintf(sub.path, sizeof sub.path, "%s%s.", w->path, name);

	if (write_row(&sub, t, v) < 0)
		goto out;
	if (sub.n > INT32_MAX || rw_grow(w, (sub.n + 7) / 8 * 8) < 0) {
		snprintf(w->why, w->whyn, "a row of less than 2 GiB");
		goto out;
	}
	memcpy(w->p + from, sub.p, sub.n);
	put_le(w->p + at, (uint64_t)(from - w->base) << 32 | sub.n, 8);
	r = 0;
out:
	free(sub.p);
	return r;
}

/* A compact DECIMAL (precision 18 at most): its unscaled long in the slot; else
 * (AbstractBinaryWriter.writeDecimal) 16 bytes of the variable part, BigInteger.toByteArray's
 * bytes of the unscaled value at their start, their offset and number in the slot; a null one (v
 * NULL) as the planner's code writes it (writeDecimal of null): its 16 bytes kept, length 0. */
static int
decimal_field(struct rw *w, const struct ckpt_frow_type *t, const json_t *v, size_t at)
{
	unsigned char be[16] = {0};
	const unsigned char *q;
	size_t from = w->n, len = 0;

	if (v && parse_decimal(v, t, be) < 0)
		return -1;
	if (t->precision <= 18) {
		if (v)
			put_le(w->p + at, ckpt_be64(be + 8), 8);
		return 0;
	}
	if (v)
		len = minimal_bytes(be, &q);
	if (rw_grow(w, 16) < 0)
		return -2;
	if (v)
		memcpy(w->p + from, q, len);
	put_le(w->p + at, (uint64_t)(from - w->base) << 32 | len, 8);
	return 0;
}

/* A compact TIMESTAMP (precision 3 at most): its epoch millisecond in the slot; else
 * (writeTimestamp) the millisecond in 8 bytes of the variable part, their offset and the
 * nanosecond of the millisecond in the slot. */
static int
timestamp_field(struct rw *w, const struct ckpt_frow_type *t, const char *s, size_t at)
{
	int64_t ms;
	int32_t nano;
	size_t from = w->n;

	if (s == NULL || parse_timestamp(s, t->root == RD_TIMESTAMP_LTZ ? "Z" : "", t->precision, &ms, &nano) < 0 ||
	    (t->precision <= 3 && nano != 0))
		return -1;
	if (t->precision <= 3) {
		put_le(w->p + at, (uint64_t)ms, 8);
		return 0;
	}
	if (rw_grow(w, 8) < 0)
		return -2;
	put_le(w->p + from, (uint64_t)ms, 8);
	put_le(w->p + at, (uint64_t)(from - w->base) << 32 | (uint32_t)nano, 8);
	return 0;
}

/* CHAR, VARCHAR, BINARY, VARBINARY: an entry's bytes, as BinaryWriter writes them: at most 7 in
 * the slot (inline_), else in 8-byte words after; RAW: always in the variable part. */
static int
var_bytes(struct rw *w, const json_t *v, size_t at, int inline_)
{
	unsigned char *p = NULL;
	size_t len = 0, from = w->n;
	int r = 0;

	if (ckpt_entry_from_json(v, &p, &len, NULL) < 0 || len > INT32_MAX) {
		free(p);
		return -1;
	}
	if (inline_ && len <= 7) {
		memcpy(w->p + at, p, len);
		w->p[at + 7] = (unsigned char)(0x80 | len);
	} else if (rw_grow(w, (len + 7) / 8 * 8) < 0) {
		r = -2;
	} else {
		memcpy(w->p + from, p, len);
		put_le(w->p + at, (uint64_t)(from - w->base) << 32 | len, 8);
	}
	free(p);
	return r;
}

static int nested_data(struct rw *w, const struct ckpt_frow_type *t, const json_t *v, size_t at, const char *name);

/* Field name of type t, the value v, into the slot at `at` (and the variable part after w->n). */
static int
write_field(struct rw *w, const struct ckpt_frow_type *t, const json_t *v, size_t at, const char *name)
{
	static const int64_t lo[] = {INT8_MIN, INT16_MIN, INT32_MIN}, hi[] = {INT8_MAX, INT16_MAX, INT32_MAX};
	int64_t x;
	double d;
	float f;
	uint32_t u32;
	const char *s = json_string_value(v);

	switch (t->root) {
	case RD_BOOLEAN:
		if (!json_is_boolean(v))
			return -1;
		w->p[at] = json_is_true(v);
		return 0;
	case RD_TINYINT: case RD_SMALLINT: case RD_INTEGER: case RD_INTERVAL_YM: case RD_BIGINT: case RD_INTERVAL_DT: {
		int k = t->root == RD_TINYINT ? 0 : t->root == RD_SMALLINT ? 1 : t->root == RD_BIGINT ||
			t->root == RD_INTERVAL_DT ? 3 : 2;

		if (!json_is_integer(v))
			return -1;
		x = json_integer_value(v);
		if (k < 3 && (x < lo[k] || x > hi[k]))
			return -1;
		put_le(w->p + at, (uint64_t)x, k == 3 ? 8 : 1 << k);
		return 0;
	}
	case RD_FLOAT: case RD_DOUBLE:
		if (ckpt_json_real(v, &d) < 0)
			return -1;
		if (t->root == RD_FLOAT) {
			f = (float)d;
			memcpy(&u32, &f, 4);
			put_le(w->p + at, isnan(f) ? 0x7fc00000u : u32, 4);
		} else {
			uint64_t u;

			memcpy(&u, &d, 8);
			put_le(w->p + at, isnan(d) ? 0x7ff8000000000000ull : u, 8);
		}
		return 0;
	case RD_DATE:
		if (s == NULL || parse_date(&s, &x) < 0 || *s || x < INT32_MIN || x > INT32_MAX)
			return -1;
		put_le(w->p + at, (uint64_t)x, 4);
		return 0;
	case RD_TIME: /* an int: the millisecond of the day */
		if (s == NULL || parse_clock(&s, 3, &x) < 0 || *s)
			return -1;
		put_le(w->p + at, (uint64_t)(x / 1000000), 4);
		return 0;
	case RD_DECIMAL:
		return decimal_field(w, t, v, at);
	case RD_TIMESTAMP: case RD_TIMESTAMP_LTZ:
		return timestamp_field(w, t, s, at);
	case RD_ROW: case RD_STRUCT:
		return nested_row(w, t, v, at, name);
	case RD_ARRAY: case RD_MAP: case RD_MULTISET:
		return nested_data(w, t, v, at, name);
	case RD_CHAR: case RD_VARCHAR: case RD_BINARY: case RD_VARBINARY: /* a string not UTF-8: an entry */
		return var_bytes(w, v, at, 1);
	case RD_RAW: /* its own serializer's bytes, kept as the row carries them */
		if (!json_is_object(v) || json_object_size(v) != 2 || !json_is_string(json_object_get(v, "raw_class")) ||
		    strcmp(json_string_value(json_object_get(v, "raw_class")), t->name ? t->name : "") != 0)
			return -1;
		return var_bytes(w, json_object_get(v, "bytes"), at, 0);
	default:
		return -1;
	}
}

/* BinaryArrayWriter's array of elements of type et, the value v (an array), from w->n on (its
 * base): the count, a null bit per element (4-byte words), the elements' slots (to 8 bytes), the
 * variable part; a null element's slot zero. */
static int
write_array(struct rw *w, const struct ckpt_frow_type *et, const json_t *v)
{
	size_t b = w->base = w->n, cnt = json_array_size(v), hdr = 4 + (cnt + 31) / 32 * 4, es = ckpt_frow_elem_size(et);
	char name[40];
	int r;

	if (!json_is_array(v) || cnt > INT32_MAX / 16)
		return -1;
	if (rw_grow(w, (hdr + es * cnt + 7) / 8 * 8) < 0)
		return -2;
	put_le(w->p + b, cnt, 4);
	for (size_t i = 0; i < cnt; i++) {
		const json_t *x = json_array_get(v, i);

		snprintf(name, sizeof name, "[%zu]", i);
		if (json_is_null(x)) {
			w->p[b + 4 + i / 8] |= (unsigned char)(1u << (i % 8));
			continue;
		}
		if ((r = write_field(w, et, x, b + hdr + i * es, name)) == -1)
			field_expected(w, name, et);
		if (r < 0)
			return -2;
	}
	return 0;
}

/* BinaryMapData of t (MAP; MULTISET: its elements to INT counts), v as [{"key", "value"}]: the key
 * array's size (an int), the key array, the value array. */
static int
write_map(struct rw *w, const struct ckpt_frow_type *t, const json_t *v)
{
	static const struct ckpt_frow_type count = {.root = RD_INTEGER};
	struct rw ka = {.why = w->why, .whyn = w->whyn}, va = ka;
	json_t *keys = json_array(), *vals = json_array();
	const json_t *x;
	size_t i, from = w->n;
	int r = -1;

	snprintf(ka.path, sizeof ka.path, "%s", w->path);
	snprintf(va.path, sizeof va.path, "%s", w->path);
	if (keys == NULL || vals == NULL || !json_is_array(v))
		goto out;
	json_array_foreach(v, i, x) {
		if (!json_is_object(x) || json_object_size(x) != 2 || !json_object_get(x, "key") ||
		    !json_object_get(x, "value"))
			goto out;
		json_array_append(keys, json_object_get(x, "key"));
		json_array_append(vals, json_object_get(x, "value"));
	}
	if ((r = write_array(&ka, t->kids[0], keys)) < 0 ||
	    (r = write_array(&va, t->root == RD_MAP ? t->kids[1] : &count, vals)) < 0)
		goto out;
	r = -2;
	if (rw_grow(w, 4 + ka.n + va.n) < 0)
		goto out;
	put_le(w->p + from, ka.n, 4);
	memcpy(w->p + from + 4, ka.p, ka.n);
	memcpy(w->p + from + 4 + ka.n, va.p, va.n);
	r = 0;
out:
	json_decref(keys);
	json_decref(vals);
	free(ka.p);
	free(va.p);
	return r;
}

/* An ARRAY, MAP or MULTISET field: its BinaryArrayData or BinaryMapData in the variable part (to 8
 * bytes), its offset and size in the slot (BinaryWriter.writeArray, writeMap). */
static int
nested_data(struct rw *w, const struct ckpt_frow_type *t, const json_t *v, size_t at, const char *name)
{
	struct rw sub = {.why = w->why, .whyn = w->whyn};
	size_t from = w->n;
	int r;

	snprintf(sub.path, sizeof sub.path, "%s%s", w->path, name);
	r = t->root == RD_ARRAY ? write_array(&sub, t->kids[0], v) : write_map(&sub, t, v);
	if (r == 0 && (sub.n > INT32_MAX || rw_grow(w, (sub.n + 7) / 8 * 8) < 0))
		r = -2;
	if (r == 0) {
		memcpy(w->p + from, sub.p, sub.n);
		put_le(w->p + at, (uint64_t)(from - w->base) << 32 | sub.n, 8);
	}
	free(sub.p);
	return r;
}

/* The BinaryRowData of row, the value v ({"kind", "fields"} as -a prints it, or an array of the
 * fields), from w->base on. */
static int
write_row(struct rw *w, const struct ckpt_frow_type *row, const json_t *v)
{
	size_t bits = (row->n + 63 + 8) / 64 * 8, k, b = w->base;
	const json_t *fields = json_is_array(v) ? v : json_object_get(v, "fields"), *kind = json_object_get(v, "kind");
	char name[32];
	int r;

	if (json_is_array(v) ? json_array_size(v) != row->n
			     : !json_is_object(v) || !json_is_object(fields) || json_object_size(fields) != row->n ||
				       json_object_size(v) != 1 + (kind != NULL)) {
		snprintf(w->why, w->whyn, "%s%.*s%sa row of %zu field%s: {\"kind\": \"+I\", \"fields\": {%s%s}} as -a "
			 "prints it, or an array of its fields", *w->path ? "field " : "", (int)strlen(w->path) - 1,
			 w->path, *w->path ? ": " : "", row->n, row->n == 1 ? "" : "s", row->n ? "\"f0\": ..." : "",
			 row->n > 1 ? ", ..." : "");
		return -1;
	}
	for (k = 0; kind && k < 4 &&
		    strcmp(json_string_value(kind) ? json_string_value(kind) : "", ckpt_frow_row_kinds[k]); k++)
		;
	if (k == 4) {
		snprintf(w->why, w->whyn, "%s%.*s%sa row kind of \"+I\", \"-U\", \"+U\" or \"-D\"", *w->path ? "field " : "",
			 (int)strlen(w->path) - 1, w->path, *w->path ? ": " : "");
		return -1;
	}
	if (rw_grow(w, b + bits + 8 * row->n - w->n) < 0)
		return -1;
	w->p[b] = (unsigned char)(kind ? k : 0);
	for (size_t i = 0; i < row->n; i++) {
		const char *fn = key_field_name(row, i, name, sizeof name);
		const json_t *f = json_is_array(v) ? json_array_get(v, i) : json_object_get(fields, fn);

		if (f == NULL) {
			snprintf(w->why, w->whyn, "a row with the field %s", fn);
			r = -1;
		} else if (json_is_null(f)) {
			w->p[b + (i + 8) / 8] |= (unsigned char)(1u << ((i + 8) % 8));
			r = row->kids[i]->root == RD_DECIMAL ? decimal_field(w, row->kids[i], NULL, b + bits + 8 * i) : 0;
		} else if ((r = write_field(w, row->kids[i], f, b + bits + 8 * i, fn)) == -1) {
			field_expected(w, fn, row->kids[i]);
		}
		if (r < 0)
			return -1;
	}
	return 0;
}

/* TimestampDataSerializer (the millisecond, a long; above precision 3 the nanosecond of it, an
 * int) and DecimalDataSerializer (compact: the unscaled long; else the unscaled bytes, their
 * number first) values, into a new *out. */
static int
scalar_value(const struct ckpt_fser *t, const json_t *v, unsigned char **out, size_t *outn, char *why, size_t whyn)
{
	const struct ckpt_frow_type *rd = t->rd;
	unsigned char be[16], *p = malloc(20);
	const unsigned char *q;
	int64_t ms;
	int32_t nano;
	size_t len;
	char type[64];

	if (p == NULL) {
		snprintf(why, whyn, "out of memory");
		return -1;
	}
	if (t->kind == FSER_TIMESTAMPDATA ? !json_is_string(v) || parse_timestamp(json_string_value(v), "", rd->precision,
										&ms, &nano) < 0 || (rd->precision <= 3 && nano)
					  : parse_decimal(v, rd, be) < 0) {
		snprintf(why, whyn, "%s of %s", t->kind == FSER_TIMESTAMPDATA ? "a timestamp (\"2024-02-29T10:00:00.123\")" :
			 "a decimal string (\"-12.50\") within its precision and scale", ckpt_frow_root_name(rd, type, sizeof type));
		free(p);
		return -1;
	}
	if (t->kind == FSER_TIMESTAMPDATA) {
		for (int i = 0; i < 8; i++)
			p[i] = (unsigned char)((uint64_t)ms >> (56 - 8 * i));
		for (int i = 0; i < 4; i++)
			p[8 + i] = (unsigned char)((uint32_t)nano >> (24 - 8 * i));
		*outn = rd->precision <= 3 ? 8 : 12;
	} else if (rd->precision <= 18) {
		memcpy(p, be + 8, 8);
		*outn = 8;
	} else {
		len = minimal_bytes(be, &q);
		for (int i = 0; i < 4; i++)
			p[i] = (unsigned char)(len >> (24 - 8 * i));
		memcpy(p + 4, q, len);
		*outn = 4 + len;
	}
	*out = p;
	return 0;
}

int
ckpt_frow_key(const struct ckpt_fser *t, const json_t *v, unsigned char **out, size_t *outn, char *why,
		 size_t whyn)
{
	struct rw w = {.why = why, .whyn = whyn, .base = 4};
	int r;

	if (t->kind == FSER_TIMESTAMPDATA || t->kind == FSER_DECIMALDATA)
		return scalar_value(t, v, out, outn, why, whyn);
	if (rw_grow(&w, 4) < 0)
		return -1;
	r = t->rd->root == RD_ROW ? write_row(&w, t->rd, v) : t->rd->root == RD_ARRAY ? write_array(&w, t->rd->kids[0], v)
										     : write_map(&w, t->rd, v);
	if (r == -1 && t->rd->root != RD_ROW)
		snprintf(why, whyn, "%s", t->rd->root == RD_ARRAY ? "an array" : "an array of {\"key\", \"value\"} (a map)");
	if (r < 0) {
		free(w.p);
		return -1;
	}
	if (w.n - 4 > INT32_MAX) {
		free(w.p);
		snprintf(why, whyn, "a row of less than 2 GiB");
		return -1;
	}
	for (int i = 0; i < 4; i++) /* the serializer's length, big-endian */
		w.p[i] = (unsigned char)((w.n - 4) >> (24 - 8 * i));
	*out = w.p;
	*outn = w.n;
	return 0;
}
