/*
 * jvalue.c: Java's own value types in state.  flink-core's serializers of java.math (BigInteger,
 * BigDecimal), java.util.Date, java.sql (Date, Time, Timestamp) and java.time (Instant, LocalDate,
 * LocalTime, LocalDateTime) values; and Flink's JavaSerializer (the "_default_" operator state of
 * older jobs), whose values are Java serialization streams, read with javaser.c and typed as far as
 * the stream says: strings, boxed numbers, arrays, the common collections and plain serializable
 * classes as their fields, class names kept, what a writeObject wrote kept as it came.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "types.h"

#define BIGINT_MAX 4096 /* bytes of a BigInteger ckpt prints (about 9,800 digits) */
#define JAVA_DEPTH 48   /* nesting of a Java-serialized value */

static int
put(struct ckpt_fsrc *s, int r)
{
	return r < 0 ? ckpt_fsrc_nomem(s) : 0;
}

/* Two's complement bytes with a scale as a decimal string. */
static int
decimal_out(struct ckpt_fsrc *s, struct ckpt_fout *o, const unsigned char *b, size_t n, int32_t scale)
{
	char *text;
	int nd, r;

	if (o->mode == FOUT_NONE)
		return 0;
	if (scale > 100000 || scale < -100000)
		return ckpt_fsrc_fail(s, "BigDecimal of scale %d, beyond what ckpt prints", scale);
	if ((text = ckpt_fout_decimal_text(b, n, scale, &nd)) == NULL)
		return ckpt_fsrc_nomem(s);
	r = put(s, ckpt_fout_str(o, text, strlen(text)));
	free(text);
	return r;
}

/* BigIntSerializer.writeBigInteger: length + 4 then toByteArray(); 0 null, 1 ZERO, 2 ONE, 3 TEN.
 * *isnull says which of null and a number it was; a number is printed with scale. */
static int
bigint(struct ckpt_fsrc *s, struct ckpt_fout *o, int32_t scale, int read_scale, int *isnull)
{
	static const unsigned char small[] = {0, 1, 10};
	unsigned char *b;
	int32_t len;
	int r;

	*isnull = 0;
	if (ckpt_fsrc_i32(s, &len, "BigInteger length") < 0)
		return -1;
	if (len == 0) {
		*isnull = 1;
		return put(s, ckpt_fout_null(o));
	}
	if (len < 0 || len - 4 > BIGINT_MAX)
		return ckpt_fsrc_fail(s, len < 0 ? "BigInteger length %d" : "BigInteger of %d bytes, more than ckpt prints",
				      len < 0 ? len : len - 4);
	if (len == 4)
		return ckpt_fsrc_fail(s, "BigInteger of no bytes");
	if (len < 4) {
		if (read_scale && ckpt_fsrc_i32(s, &scale, "BigDecimal scale") < 0)
			return -1;
		return decimal_out(s, o, &small[len - 1], 1, scale);
	}
	if ((b = malloc((size_t)len - 4)) == NULL)
		return ckpt_fsrc_nomem(s);
	r = ckpt_fsrc_read(s, b, (size_t)len - 4, "BigInteger");
	if (r == 0 && read_scale)
		r = ckpt_fsrc_i32(s, &scale, "BigDecimal scale");
	if (r == 0)
		r = decimal_out(s, o, b, (size_t)len - 4, scale);
	free(b);
	return r;
}

/* An instant: seconds since the epoch and nanoseconds of that second, in UTC with "Z". */
static int
instant_out(struct ckpt_fsrc *s, struct ckpt_fout *o, int64_t sec, int64_t nano)
{
	int64_t days = ckpt_floordiv(sec, 86400);

	if (sec < -31557014167219200LL || sec > 31556889864403199LL) /* Instant.MIN, Instant.MAX */
		return ckpt_fsrc_fail(s, "instant of %" PRId64 " seconds, beyond java.time's", sec);
	return put(s, ckpt_fout_time(o, days, 1, (sec - days * 86400) * 1000000000 + nano, "Z"));
}

static int
days_in_month(int64_t y, unsigned m)
{
	static const int d[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

	return m == 2 && y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) ? 29 : d[m - 1];
}

/* LocalDateSerializer: year, month, day; year Integer.MIN_VALUE (and a short) for null. */
static int
local_date(struct ckpt_fsrc *s, int64_t *days, int *isnull)
{
	int32_t y;
	uint8_t m, d;

	*isnull = 0;
	if (ckpt_fsrc_i32(s, &y, "LocalDate year") < 0)
		return -1;
	if (y == INT32_MIN) {
		*isnull = 1;
		return ckpt_fsrc_read(s, NULL, 2, "LocalDate null padding");
	}
	if (ckpt_fsrc_u8(s, &m, "LocalDate month") < 0 || ckpt_fsrc_u8(s, &d, "LocalDate day") < 0)
		return -1;
	if (y < -999999999 || y > 999999999 || m < 1 || m > 12 || d < 1 || d > days_in_month(y, m))
		return ckpt_fsrc_fail(s, "LocalDate %d-%d-%d", y, (int8_t)m, (int8_t)d);
	*days = ckpt_fout_civil_days(y, m, d);
	return 0;
}

/* LocalTimeSerializer: hour, minute, second, nano; hour Byte.MIN_VALUE (and 6 bytes) for null. */
static int
local_time(struct ckpt_fsrc *s, int64_t *nanos, int *isnull)
{
	uint8_t h, m, sec;
	int32_t n;

	*isnull = 0;
	if (ckpt_fsrc_u8(s, &h, "LocalTime hour") < 0)
		return -1;
	if (h == 0x80) {
		*isnull = 1;
		return ckpt_fsrc_read(s, NULL, 6, "LocalTime null padding");
	}
	if (ckpt_fsrc_u8(s, &m, "LocalTime minute") < 0 || ckpt_fsrc_u8(s, &sec, "LocalTime second") < 0 ||
	    ckpt_fsrc_i32(s, &n, "LocalTime nanosecond") < 0)
		return -1;
	if (h > 23 || m > 59 || sec > 59 || n < 0 || n > 999999999)
		return ckpt_fsrc_fail(s, "LocalTime %d:%d:%d.%d", (int8_t)h, (int8_t)m, (int8_t)sec, n);
	*nanos = ((int64_t)h * 3600 + m * 60 + sec) * 1000000000 + n;
	return 0;
}

static int
time_value(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o)
{
	int64_t a, days, nanos;
	int32_t n;
	int dnull, tnull;

	switch (t->kind) {
	case FSER_DATE: /* java.util.Date, java.sql.Date, java.sql.Time: the epoch millisecond */
		if (ckpt_fsrc_i64(s, &a, "date") < 0)
			return -1;
		if (a == INT64_MIN)
			return put(s, ckpt_fout_null(o));
		return instant_out(s, o, ckpt_floordiv(a, 1000), (a - ckpt_floordiv(a, 1000) * 1000) * 1000000);
	case FSER_SQLTIMESTAMP: /* the epoch millisecond, then the nanoseconds of its second */
		if (ckpt_fsrc_i64(s, &a, "timestamp") < 0 || ckpt_fsrc_i32(s, &n, "timestamp nanoseconds") < 0)
			return -1;
		if (a == INT64_MIN)
			return put(s, ckpt_fout_null(o));
		if (n < 0 || n > 999999999)
			return ckpt_fsrc_fail(s, "timestamp nanoseconds %d (0 to 999999999)", n);
		return instant_out(s, o, ckpt_floordiv(a, 1000), n);
	case FSER_INSTANT:
		if (ckpt_fsrc_i64(s, &a, "instant seconds") < 0 || ckpt_fsrc_i32(s, &n, "instant nanoseconds") < 0)
			return -1;
		if (a == INT64_MIN && n == INT32_MIN)
			return put(s, ckpt_fout_null(o));
		if (n < 0 || n > 999999999)
			return ckpt_fsrc_fail(s, "instant nanoseconds %d (0 to 999999999)", n);
		return instant_out(s, o, a, n);
	case FSER_LOCALDATE:
		if (local_date(s, &days, &dnull) < 0)
			return -1;
		return put(s, dnull ? ckpt_fout_null(o) : ckpt_fout_time(o, days, 2, 0, ""));
	case FSER_LOCALTIME:
		if (local_time(s, &nanos, &tnull) < 0)
			return -1;
		return put(s, tnull ? ckpt_fout_null(o) : ckpt_fout_time(o, 0, 0, nanos, ""));
	default: /* FSER_LOCALDATETIME */
		if (local_date(s, &days, &dnull) < 0 || local_time(s, &nanos, &tnull) < 0)
			return -1;
		if (dnull != tnull)
			return ckpt_fsrc_fail(s, "LocalDateTime: exactly one of LocalDate and LocalTime is null");
		return put(s, dnull ? ckpt_fout_null(o) : ckpt_fout_time(o, days, 1, nanos, ""));
	}
}

/* ---------------------------------------------------------------- Java serialization */

struct jout {
	struct ckpt_fsrc *s;
	struct ckpt_fout *o;
	const unsigned char *base; /* the stream's first byte */
	size_t budget;             /* values still to print: shared references print again, within it */
};

static int jv(struct jout *c, const struct ckpt_javaser_value *v, int depth);

/* Fail at offset at of the stream. */
static int
jfail(struct jout *c, size_t at, const char *what, const char *cls)
{
	size_t keep = c->s->wpos;
	int r;

	c->s->wpos += at;
	r = ckpt_fsrc_fail(c->s, "Java-serialized value: %s%s%s", what, cls ? " " : "", cls ? cls : "");
	c->s->wpos = keep;
	return r;
}

static int
is(const struct ckpt_javaser_value *v, const char *cls)
{
	return v && v->kind == CKPT_JAVASER_OBJECT && strcmp(v->cls->name, cls) == 0;
}

/* The data a class of an object's hierarchy wrote, or NULL. */
static const struct ckpt_javaser_classdata *
classdata(const struct ckpt_javaser_value *v, const char *cls)
{
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->data[i].cls->name, cls) == 0)
			return &v->data[i];
	return NULL;
}

static int
prim(struct jout *c, const struct ckpt_javaser_value *v)
{
	uint16_t u;

	switch (v->type) {
	case 'Z':
		return put(c->s, ckpt_fout_bool(c->o, v->i != 0));
	case 'D': case 'F':
		return ckpt_fout_real(c->s, c->o, v->d);
	case 'C':
		u = (uint16_t)v->i;
		return ckpt_fout_utf16(c->s, c->o, &u, 1);
	default:
		return put(c->s, ckpt_fout_int(c->o, v->i));
	}
}

/* A block of what a writeObject wrote: bytes, as byte arrays print. */
static int
block(struct jout *c, const struct ckpt_javaser_value *v)
{
	return put(c->s, ckpt_fout_entry(c->o, v->bytes, v->len));
}

/* items[0, n) as the elements of a new array. */
static int
elements(struct jout *c, const struct ckpt_javaser_value *const *items, size_t n, int depth)
{
	if (ckpt_fout_open(c->o, '[') < 0)
		return ckpt_fsrc_nomem(c->s);
	for (size_t i = 0; i < n; i++)
		if (jv(c, items[i], depth + 1) < 0)
			return -1;
	ckpt_fout_close(c->o);
	return 0;
}

/* items[0, 2n) as [{"key", "value"}], as a MapSerializer's value prints. */
static int
pairs(struct jout *c, const struct ckpt_javaser_value *const *items, size_t n, int depth)
{
	if (ckpt_fout_open(c->o, '[') < 0)
		return ckpt_fsrc_nomem(c->s);
	for (size_t i = 0; i < n; i++) {
		if (ckpt_fout_open(c->o, '{') < 0)
			return ckpt_fsrc_nomem(c->s);
		ckpt_fout_key_lit(c->o, "key");
		if (jv(c, items[2 * i], depth + 2) < 0)
			return -1;
		ckpt_fout_key_lit(c->o, "value");
		if (jv(c, items[2 * i + 1], depth + 2) < 0)
			return -1;
		ckpt_fout_close(c->o);
	}
	ckpt_fout_close(c->o);
	return 0;
}

/* The collections of java.util whose writeObject ckpt knows: a leading block of hblock bytes
 * holding the size at sizeat (skip objects before it), then the elements (map: keys and values).
 * 1 when v is not one of them or not as its class writes it. */
static int
collection(struct jout *c, const struct ckpt_javaser_value *v, int depth)
{
	static const struct {
		const char *cls, *data; /* the class, the class of its hierarchy whose writeObject wrote */
		size_t skip, hblock, sizeat;
		int map;
	} known[] = {
		{"java.util.ArrayList", "java.util.ArrayList", 0, 4, SIZE_MAX, 0},
		{"java.util.LinkedList", "java.util.LinkedList", 0, 4, 0, 0},
		{"java.util.ArrayDeque", "java.util.ArrayDeque", 0, 4, 0, 0},
		{"java.util.HashSet", "java.util.HashSet", 0, 12, 8, 0},
		{"java.util.LinkedHashSet", "java.util.HashSet", 0, 12, 8, 0},
		{"java.util.TreeSet", "java.util.TreeSet", 1, 4, 0, 0},
		{"java.util.HashMap", "java.util.HashMap", 0, 8, 4, 1},
		{"java.util.LinkedHashMap", "java.util.HashMap", 0, 8, 4, 1},
		{"java.util.TreeMap", "java.util.TreeMap", 0, 4, 0, 1},
	};
	const struct ckpt_javaser_classdata *d;
	size_t k, size;

	for (k = 0; k < sizeof known / sizeof *known && strcmp(known[k].cls, v->cls->name) != 0; k++)
		;
	if (k == sizeof known / sizeof *known || (d = classdata(v, known[k].data)) == NULL ||
	    d->nextra < known[k].skip + 1 || d->extra[known[k].skip]->kind != CKPT_JAVASER_BLOCK ||
	    d->extra[known[k].skip]->len != known[k].hblock)
		return 1;
	if (known[k].sizeat == SIZE_MAX) { /* ArrayList: the size is its field */
		const struct ckpt_javaser_value *f = ckpt_javaser_field(v, "size");

		if (f == NULL || f->kind != CKPT_JAVASER_PRIM || f->type != 'I' || f->i < 0)
			return 1;
		size = (size_t)f->i;
	} else {
		size = ckpt_be32(d->extra[known[k].skip]->bytes + known[k].sizeat);
	}
	if (size > (d->nextra - known[k].skip - 1) || d->nextra - known[k].skip - 1 != (known[k].map ? 2 : 1) * size)
		return 1;
	for (size_t i = known[k].skip + 1; i < d->nextra; i++)
		if (d->extra[i]->kind == CKPT_JAVASER_BLOCK)
			return 1;
	if (known[k].map)
		return pairs(c, (const struct ckpt_javaser_value *const *)d->extra + known[k].skip + 1, size, depth);
	return elements(c, (const struct ckpt_javaser_value *const *)d->extra + known[k].skip + 1, size, depth);
}

/* BigInteger's serial form: signum and magnitude (unsigned, big-endian) as a decimal string with
 * scale.  1 when v is not such. */
static int
biginteger(struct jout *c, const struct ckpt_javaser_value *v, int32_t scale)
{
	const struct ckpt_javaser_value *sig = ckpt_javaser_field(v, "signum"), *mag = ckpt_javaser_field(v, "magnitude");
	unsigned char *b;
	int r;

	if (!is(v, "java.math.BigInteger") || sig == NULL || sig->kind != CKPT_JAVASER_PRIM || sig->i < -1 ||
	    sig->i > 1 || mag == NULL || mag->kind != CKPT_JAVASER_ARRAY || strcmp(mag->cls->name, "[B") != 0 ||
	    mag->n > BIGINT_MAX)
		return 1;
	if ((b = malloc(mag->n + 1)) == NULL)
		return ckpt_fsrc_nomem(c->s);
	b[0] = 0; /* unsigned: a leading zero byte keeps it positive */
	for (size_t i = 0; i < mag->n; i++)
		b[i + 1] = (unsigned char)mag->items[i]->i;
	if (sig->i < 0 && mag->n > 0) { /* negate: two's complement of the magnitude */
		int carry = 1;

		for (size_t i = mag->n + 1; i-- > 0;) {
			unsigned x = (unsigned)(~b[i] & 0xff) + (unsigned)carry;

			carry = x > 0xff;
			b[i] = (unsigned char)x;
		}
	}
	r = decimal_out(c->s, c->o, b, mag->n + 1, scale);
	free(b);
	return r;
}

/* The values of java.lang, java.math, java.util.Date and java.sql whose serial form ckpt knows
 * print as their flink-core serializers print them.  1 when v is none of them. */
static int
known_value(struct jout *c, const struct ckpt_javaser_value *v)
{
	static const char *const boxed[] = {"java.lang.Integer", "java.lang.Long", "java.lang.Short", "java.lang.Byte",
					    "java.lang.Double", "java.lang.Float", "java.lang.Boolean",
					    "java.lang.Character"};
	const char *cls = v->cls->name;
	const struct ckpt_javaser_classdata *d;
	const struct ckpt_javaser_value *f;

	for (size_t i = 0; i < sizeof boxed / sizeof *boxed; i++)
		if (strcmp(cls, boxed[i]) == 0) {
			f = ckpt_javaser_field(v, "value");
			return f && f->kind == CKPT_JAVASER_PRIM ? prim(c, f) : 1;
		}
	if (strcmp(cls, "java.math.BigInteger") == 0)
		return biginteger(c, v, 0);
	if (strcmp(cls, "java.math.BigDecimal") == 0) {
		f = ckpt_javaser_field(v, "scale");
		if (f == NULL || f->kind != CKPT_JAVASER_PRIM || f->type != 'I')
			return 1;
		return biginteger(c, ckpt_javaser_field(v, "intVal"), (int32_t)f->i);
	}
	if (strcmp(cls, "java.util.Date") == 0 || strcmp(cls, "java.sql.Date") == 0 || strcmp(cls, "java.sql.Time") == 0 ||
	    strcmp(cls, "java.sql.Timestamp") == 0) {
		int64_t ms, nano;

		/* Date.writeObject: the epoch millisecond in a block; Timestamp: its nanos field */
		if ((d = classdata(v, "java.util.Date")) == NULL || d->nextra != 1 || d->extra[0]->kind != CKPT_JAVASER_BLOCK ||
		    d->extra[0]->len != 8)
			return 1;
		ms = (int64_t)ckpt_be64(d->extra[0]->bytes);
		nano = (ms - ckpt_floordiv(ms, 1000) * 1000) * 1000000;
		if (strcmp(cls, "java.sql.Timestamp") == 0) {
			f = ckpt_javaser_field(v, "nanos");
			if (f == NULL || f->kind != CKPT_JAVASER_PRIM || f->i < 0 || f->i > 999999999)
				return 1;
			nano = f->i;
		}
		return instant_out(c->s, c->o, ckpt_floordiv(ms, 1000), nano);
	}
	return 1;
}

/* Any other object: {"class", its fields (a field a subclass also names as "Class.field"), and
 * "written": what writeObject or writeExternal wrote beyond them, when anything}. */
static int
object(struct jout *c, const struct ckpt_javaser_value *v, int depth)
{
	size_t extra = 0;

	if (ckpt_fout_open(c->o, '{') < 0)
		return ckpt_fsrc_nomem(c->s);
	ckpt_fout_key_lit(c->o, "class");
	if (ckpt_fout_str(c->o, v->cls->name, strlen(v->cls->name)) < 0)
		return ckpt_fsrc_nomem(c->s);
	for (size_t i = 0; i < v->n; i++) {
		const struct ckpt_javaser_classdata *d = &v->data[i];

		extra += d->nextra;
		for (size_t k = 0; k < d->cls->nfields; k++) {
			const char *name = d->cls->fields[k].name;
			char q[600];
			int shadowed = strcmp(name, "class") == 0 || strcmp(name, "written") == 0;

			for (size_t j = i + 1; j < v->n && !shadowed; j++) /* a subclass's field of the name */
				for (size_t m = 0; m < v->data[j].cls->nfields && !shadowed; m++)
					shadowed = strcmp(v->data[j].cls->fields[m].name, name) == 0;
			if (shadowed) {
				const char *simple = strrchr(d->cls->name, '.');

				snprintf(q, sizeof q, "%s.%s", simple ? simple + 1 : d->cls->name, name);
				name = q;
			}
			ckpt_fout_key(c->o, name);
			if (jv(c, d->fields[k], depth + 1) < 0)
				return -1;
		}
	}
	if (extra) {
		ckpt_fout_key_lit(c->o, "written");
		if (ckpt_fout_open(c->o, '[') < 0)
			return ckpt_fsrc_nomem(c->s);
		for (size_t i = 0; i < v->n; i++)
			for (size_t k = 0; k < v->data[i].nextra; k++)
				if (jv(c, v->data[i].extra[k], depth + 2) < 0)
					return -1;
		ckpt_fout_close(c->o);
	}
	ckpt_fout_close(c->o);
	return 0;
}

static int
jv(struct jout *c, const struct ckpt_javaser_value *v, int depth)
{
	int r;

	if (depth > JAVA_DEPTH)
		return jfail(c, v->at, "nested too deep", NULL);
	if (c->budget-- == 0)
		return jfail(c, v->at, "shared references repeat more values than ckpt prints", NULL);
	switch (v->kind) {
	case CKPT_JAVASER_NULL:
		return put(c->s, ckpt_fout_null(c->o));
	case CKPT_JAVASER_PRIM:
		return prim(c, v);
	case CKPT_JAVASER_STRING: case CKPT_JAVASER_ENUM:
		return put(c->s, ckpt_fout_str(c->o, v->str, v->len));
	case CKPT_JAVASER_BLOCK:
		return block(c, v);
	case CKPT_JAVASER_CLASS:
		if (ckpt_fout_open(c->o, '{') < 0)
			return ckpt_fsrc_nomem(c->s);
		ckpt_fout_key_lit(c->o, "class");
		r = ckpt_fout_str(c->o, "java.lang.Class", 15);
		ckpt_fout_key_lit(c->o, "name");
		r |= ckpt_fout_str(c->o, v->cls->name, strlen(v->cls->name));
		ckpt_fout_close(c->o);
		return put(c->s, r);
	case CKPT_JAVASER_ARRAY:
		if (strcmp(v->cls->name, "[B") == 0) { /* byte[] as byte arrays print */
			unsigned char *b = malloc(v->n ? v->n : 1);

			if (b == NULL)
				return ckpt_fsrc_nomem(c->s);
			for (size_t i = 0; i < v->n; i++)
				b[i] = (unsigned char)v->items[i]->i;
			r = put(c->s, ckpt_fout_entry(c->o, b, v->n));
			free(b);
			return r;
		}
		return elements(c, (const struct ckpt_javaser_value *const *)v->items, v->n, depth);
	default: /* CKPT_JAVASER_OBJECT */
		if ((r = known_value(c, v)) <= 0 || (r = collection(c, v, depth)) <= 0)
			return r;
		return object(c, v, depth);
	}
}

/* One stream (magic, version, one object) read from p[0, n) and printed: 0 with *used its length,
 * 1 when it runs past n (nothing printed), -1 with the error set. */
static int
java_stream(struct jout *c, const unsigned char *p, size_t n, size_t *used)
{
	struct ckpt_err e = {0};
	struct ckpt_javaser *j;
	const struct ckpt_javaser_value *v;
	size_t pos = 0;
	int r = -1;

	c->budget = ((size_t)1 << 20) + 16 * n;
	if ((j = ckpt_javaser_new(p, n, "", 0, JAVA_DEPTH, &e)) == NULL)
		return ckpt_fsrc_nomem(c->s);
	if (ckpt_javaser_header(j, &pos) < 0 || ckpt_javaser_read(j, &pos, &v) < 0) {
		unsigned long long at = 0;
		int k = 0;

		if (e.kind == CKPT_ERR_NOMEM)
			ckpt_fsrc_nomem(c->s);
		else if (sscanf(e.text, "offset %llu: %n", &at, &k) == 1 && k > 0 && at <= n) {
			if (strncmp(e.text + k, "truncated ", 10) == 0)
				r = 1;
			else /* the reader's "offset N: text", N from the value's first byte */
				jfail(c, (size_t)at, e.text + k, NULL);
		} else
			jfail(c, 0, e.text, NULL);
		goto out;
	}
	if (v->kind == CKPT_JAVASER_BLOCK)
		jfail(c, v->at, "block data where an object belongs", NULL);
	else if (jv(c, v, 0) == 0) {
		*used = pos;
		r = 0;
	}
out:
	ckpt_javaser_free(j);
	return r;
}

#define JAVA_MAX ((size_t)256 << 20) /* bytes of one Java-serialized value read to find its end */

/*
 * JavaSerializer: one serialization stream and nothing around it, so only the stream says where
 * the value ends.  Read from the window when it holds the value; else (a file or an object) from
 * the value's start in buffers doubled until the stream ends in one, then the source goes on
 * after it.  A value across the chunks of a compressed stream is refused.
 */
static int
java_value(struct ckpt_fsrc *s, struct ckpt_fout *o)
{
	struct jout c = {.s = s, .o = o};
	size_t used = 0, avail = s->wlen - s->wpos, k, want;
	uint64_t start, total;
	unsigned char *buf = NULL;
	size_t bufcap = 0;
	int r, cap;

	if ((r = java_stream(&c, s->win + s->wpos, avail, &used)) <= 0)
		return r < 0 ? -1 : ckpt_fsrc_read(s, NULL, used, "Java-serialized value");
	if (s->snappy || (s->fd < 0 && s->obj == NULL) || s->size <= s->wat + s->wlen)
		return jfail(&c, avail, s->snappy ? "runs past its compressed chunk" : "truncated", NULL);
	start = s->wat + s->wpos;
	total = s->size - start;
	for (want = avail * 2 > ((size_t)64 << 10) ? avail * 2 : (size_t)64 << 10;; want *= 2) {
		k = total < want ? (size_t)total : want;
		if (k > JAVA_MAX) {
			free(buf);
			return jfail(&c, 0, "larger than ckpt reads to find its end (256 MiB)", NULL);
		}
		if (ckpt_grow(&buf, &bufcap, k, 1, k, NULL) < 0) {
			free(buf);
			return ckpt_fsrc_nomem(s);
		}
		cap = s->capture; /* what is read to find the end is not the entry's bytes */
		s->capture = 0;
		r = ckpt_fsrc_seek(s, start, 0) < 0 || ckpt_fsrc_read(s, buf, k, "Java-serialized value") < 0 ? -1 : 0;
		s->capture = cap;
		if (r == 0 && ckpt_fsrc_seek(s, start, 0) < 0) /* errors count from the value's start */
			r = -1;
		if (r == 0 && (r = java_stream(&c, buf, k, &used)) == 1 && k == total)
			r = jfail(&c, (size_t)k, "truncated", NULL);
		if (r != 1)
			break;
	}
	free(buf);
	return r < 0 ? -1 : ckpt_fsrc_read(s, NULL, used, "Java-serialized value");
}

int
ckpt_fser_jvalue(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o)
{
	int isnull;

	switch (t->kind) {
	case FSER_BIGINT:
		return bigint(s, o, 0, 0, &isnull);
	case FSER_BIGDEC: /* a BigInteger (null: nothing more), then the scale */
		return bigint(s, o, 0, 1, &isnull);
	case FSER_JAVA:
		return java_value(s, o);
	default:
		return time_value(t, s, o);
	}
}

/* The row's value of v, as -R prints it (a new reference), or NULL. */
json_t *
ckpt_fjava_render(const struct ckpt_javaser_value *v)
{
	struct ckpt_err e = {0};
	struct ckpt_fsrc s;
	struct ckpt_fout o = {.mode = FOUT_JSON};
	struct jout c = {.s = &s, .o = &o, .budget = (size_t)1 << 20};

	ckpt_fsrc_mem(&s, "", 0, "", &e);
	if (jv(&c, v, 0) < 0) {
		json_decref(o.root);
		return NULL;
	}
	return o.root;
}
