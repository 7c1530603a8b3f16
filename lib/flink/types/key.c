/* key.c: one key given as JSON (ckpt-inspect -k), written as its key serializer writes it, and its
 * Java hashCode and key group as Flink's KeyGroupRangeAssignment computes them from that hashCode. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "types.h"

static int
put(struct ckpt_fenc *b, const void *p, size_t n)
{
	if (ckpt_grow(&b->p, &b->cap, b->n + n + 1, 1, 64, NULL) < 0) { /* never NULL, even empty */
		snprintf(b->why, b->whyn, "out of memory");
		return -1;
	}
	if (n > 0)
		memcpy(b->p + b->n, p, n);
	b->n += n;
	return 0;
}

static int
put_be(struct ckpt_fenc *b, uint64_t x, size_t n)
{
	unsigned char o[8];

	ckpt_store_be(o, x, n);
	return put(b, o, n);
}

/* StringValue's varint of v at o: its bytes. */
static size_t
varint_at(unsigned char *o, uint32_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		o[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	o[n++] = (unsigned char)v;
	return n;
}

/* StringValue's varint: seven bits at a time from the lowest, the high bit on all but the last. */
static int
put_varint(struct ckpt_fenc *b, uint32_t v)
{
	unsigned char o[5];

	return put(b, o, varint_at(o, v));
}

static int
mismatch(struct ckpt_fenc *b, const char *expected)
{
	snprintf(b->why, b->whyn, "%s", expected);
	return -1;
}

/* UTF-8 (jansson's: valid) as UTF-16 units, each a varint of at most three bytes, written in place
 * once the room is there (a put a unit cost more than the rest). */
static int
put_string(struct ckpt_fenc *b, const char *s, size_t len)
{
	size_t units = 0, at, o;
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			units += (p[i] >= 0xf0) ? 2 : 1;
	if (units + 1 > UINT32_MAX || put_varint(b, (uint32_t)(units + 1)) < 0)
		return -1;
	if (units > (SIZE_MAX - b->n - 1) / 3 || ckpt_grow(&b->p, &b->cap, b->n + 3 * units + 1, 1, 64, NULL) < 0) {
		snprintf(b->why, b->whyn, "out of memory");
		return -1;
	}
	for (at = 0, o = b->n; at < len;) {
		uint32_t c = p[at];
		size_t k = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;

		c &= k == 1 ? 0x7f : k == 2 ? 0x1f : k == 3 ? 0x0f : 0x07;
		for (size_t j = 1; j < k; j++)
			c = c << 6 | (p[at + j] & 0x3f);
		at += k;
		if (c >= 0x10000) {
			c -= 0x10000;
			o += varint_at(b->p + o, 0xd800 | (c >> 10));
			o += varint_at(b->p + o, 0xdc00 | (c & 0x3ff));
		} else {
			o += varint_at(b->p + o, c);
		}
	}
	b->n = o;
	return 0;
}

static int
put_integer(struct ckpt_fenc *b, const json_t *v, int64_t lo, int64_t hi, size_t n, const char *what)
{
	json_int_t x;

	if (!json_is_integer(v))
		return mismatch(b, what);
	x = json_integer_value(v);
	if (x < lo || x > hi)
		return mismatch(b, what);
	return put_be(b, (uint64_t)x, n);
}

/* A floating-point key: a JSON number, or "NaN", "Infinity", "-Infinity" as -a prints them. */
static int
put_real(struct ckpt_fenc *b, const json_t *v, int dbl)
{
	double d;

	if (ckpt_json_real(v, &d) < 0)
		return mismatch(b, dbl ? "a number (a double)" : "a number (a float)");
	if (dbl) {
		uint64_t x;

		memcpy(&x, &d, 8);
		return put_be(b, isnan(d) ? 0x7ff8000000000000ull : x, 8);
	} else {
		float f = (float)d;
		uint32_t x;

		memcpy(&x, &f, 4);
		return put_be(b, isnan(f) ? 0x7fc00000u : x, 4);
	}
}

static int encode(const struct ckpt_fser *t, const json_t *v, struct ckpt_fenc *b, int depth);

/* The encoder of every value (encode.c's kinds through here): ckpt-merge --rows. */
int
ckpt_fenc(const struct ckpt_fser *t, const json_t *v, struct ckpt_fenc *b, int depth)
{
	return encode(t, v, b, depth);
}

int
ckpt_fenc_put(struct ckpt_fenc *b, const void *p, size_t n)
{
	return put(b, p, n);
}

int
ckpt_fenc_be(struct ckpt_fenc *b, uint64_t x, size_t n)
{
	return put_be(b, x, n);
}

int
ckpt_fenc_fail(struct ckpt_fenc *b, const char *expected)
{
	return mismatch(b, expected);
}

static int
put_char(struct ckpt_fenc *b, const json_t *v)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);
	unsigned char c0 = s ? (unsigned char)s[0] : 0;
	uint32_t c;

	if (s == NULL || n == 0 || n > 3 || c0 >= 0xf0 || n != (size_t)(c0 < 0x80 ? 1 : c0 < 0xe0 ? 2 : 3))
		return mismatch(b, "a string of one character (a char of the Basic Multilingual Plane)");
	c = n == 1 ? c0 : n == 2 ? (c0 & 0x1fu) << 6 | (s[1] & 0x3f) :
		     (c0 & 0x0fu) << 12 | (uint32_t)(s[1] & 0x3f) << 6 | (s[2] & 0x3f);
	return put_be(b, c, 2);
}

static int
put_tuple(const struct ckpt_fser *t, const json_t *v, struct ckpt_fenc *b, int depth)
{
	char what[64];

	snprintf(what, sizeof what, "an array of %zu field%s (a tuple)", t->nkids, t->nkids == 1 ? "" : "s");
	if (!json_is_array(v) || json_array_size(v) != t->nkids)
		return mismatch(b, what);
	for (size_t i = 0; i < t->nkids; i++)
		if (encode(t->kids[i], json_array_get(v, i), b, depth + 1) < 0)
			return -1;
	return 0;
}

/* The kinds whose hashCode serializer.c computes: a key of any other kind is refused before this. */
static int
encode(const struct ckpt_fser *t, const json_t *v, struct ckpt_fenc *b, int depth)
{
	if (depth > 32)
		return mismatch(b, "a key nested less deep");
	switch (t->kind) {
	case FSER_STRING:
		if (b->value && json_is_null(v)) /* StringValue's null: length 0 */
			return put_varint(b, 0);
		if (!json_is_string(v))
			return mismatch(b, "a string");
		return put_string(b, json_string_value(v), json_string_length(v));
	case FSER_LONG:
		return put_integer(b, v, INT64_MIN, INT64_MAX, 8, "an integer (a long)");
	case FSER_INT:
		return put_integer(b, v, INT32_MIN, INT32_MAX, 4, "an integer from -2147483648 to 2147483647 (an int)");
	case FSER_SHORT:
		return put_integer(b, v, INT16_MIN, INT16_MAX, 2, "an integer from -32768 to 32767 (a short)");
	case FSER_BYTE:
		return put_integer(b, v, INT8_MIN, INT8_MAX, 1, "an integer from -128 to 127 (a byte)");
	case FSER_BOOL:
		if (!json_is_boolean(v))
			return mismatch(b, "true or false (a boolean)");
		return put_be(b, json_is_true(v), 1);
	case FSER_FLOAT:
	case FSER_DOUBLE:
		return put_real(b, v, t->kind == FSER_DOUBLE);
	case FSER_CHAR:
		return put_char(b, v);
	case FSER_TUPLE:
		return put_tuple(t, v, b, depth);
	case FSER_ROWDATA: {
		unsigned char *p;
		size_t n;
		int r;

		if (b->value && !ckpt_frow_key_writable(t, b->why, b->whyn)) {
			b->cannot = 1; /* a value ckpt cannot write: only an unchanged one is taken */
			return -1;
		}
		if ((depth > 0 && !b->value) || ckpt_frow_key(t, v, &p, &n, b->why, b->whyn) < 0)
			return depth > 0 && !b->value ? mismatch(b, "a key of a kind ckpt cannot write") : -1;
		r = put(b, p, n);
		free(p);
		return r;
	}
	default:
		return b->value && b->more ? b->more(t, v, b, depth) : mismatch(b, "a key of a kind ckpt cannot write");
	}
}

/* Can ckpt write t's keys and compute their hashCode?  NULL, or the serializer (nested) that stops it. */
static const struct ckpt_fser *
unwritable(const struct ckpt_fser *t, char *why, size_t whyn)
{
	switch (t->kind) {
	case FSER_STRING: case FSER_LONG: case FSER_INT: case FSER_SHORT: case FSER_BYTE: case FSER_BOOL:
	case FSER_FLOAT: case FSER_DOUBLE: case FSER_CHAR:
		return NULL;
	case FSER_ROWDATA: /* the BinaryRowData it is written as: its hashCode is that of its bytes */
		return ckpt_frow_key_writable(t, why, whyn) ? NULL : t;
	case FSER_TUPLE:
		if (t->flag) /* a Scala case class: its hashCode is Scala's */
			return t;
		for (size_t i = 0; i < t->nkids; i++)
			if (t->kids[i] == NULL || unwritable(t->kids[i], why, whyn))
				return t->kids[i] ? unwritable(t->kids[i], why, whyn) : t;
		return NULL;
	default:
		return t;
	}
}

/* The serializer's name for messages: the snapshot class without its package. */
static const char *
short_class(const struct ckpt_fser *t, char *buf, size_t n)
{
	const char *c = t->cls ? t->cls : "?", *dot = strrchr(c, '.');
	size_t len;

	c = dot ? dot + 1 : c;
	len = strcspn(c, "$");
	if (len > 18 && strncmp(c + len - 18, "SerializerSnapshot", 18) == 0)
		len -= 8; /* the serializer, not its snapshot: TupleSerializerSnapshot is TupleSerializer's */
	snprintf(buf, n, "%.*s", (int)len, c);
	return buf;
}

int
ckpt_fkey_make(struct ckpt_fkey *k, const struct ckpt_fser *t, const json_t *v, const char *text, const char *where,
	       struct ckpt_err *e)
{
	char why[200], c1[128], c2[128];
	struct ckpt_fenc b = {.why = why, .whyn = sizeof why};
	const struct ckpt_fser *stop;
	struct ckpt_fsrc s;
	json_t *back = NULL;
	int32_t hash = 0;
	int hashed = 0;

	memset(k, 0, sizeof *k);
	why[0] = '\0';
	if ((stop = unwritable(t, why, sizeof why)) != NULL)
		return ckpt_err_set(e, CKPT_ERR_INPUT, where, "-k %s: ckpt cannot compute the key group of a key of the "
				    "key serializer %s (%s)", text, short_class(t, c1, sizeof c1), why[0] ? why :
				    stop == t ? "its keys' hashCode is not known" : short_class(stop, c2, sizeof c2));
	if (encode(t, v, &b, 0) < 0) {
		free(b.p);
		return ckpt_err_set(e, CKPT_ERR_INPUT, where, "-k %s does not match the key serializer %s: expected %s",
				    text, short_class(t, c1, sizeof c1), why);
	}
	/* the bytes read back as a key: the typed form -a prints and the hashCode serializer.c computes */
	ckpt_fsrc_mem(&s, b.p, b.n, where, e);
	if (ckpt_fser_value(t, &s, &back, &hash, &hashed) < 0 || !ckpt_fsrc_drained(&s) || !hashed) {
		json_decref(back);
		free(b.p);
		return ckpt_err_set(e, CKPT_ERR_INPUT, where, "-k %s: the key serializer %s does not read back the "
				    "key ckpt wrote", text, short_class(t, c1, sizeof c1));
	}
	k->bytes = b.p;
	k->n = b.n;
	k->hash = hash;
	k->typed = back;
	return 0;
}

void
ckpt_fkey_release(struct ckpt_fkey *k)
{
	free(k->bytes);
	json_decref(k->typed);
	memset(k, 0, sizeof *k);
}

/* Does an entry's key (its key-group prefix, the key, then what follows it) hold exactly this key?
 * Flink's key serializers are self-delimiting, so its bytes are a prefix of no other key's. */
int
ckpt_fkey_matches(const struct ckpt_fkey *k, const unsigned char *p, size_t n, unsigned prefix)
{
	return n >= prefix + k->n && memcmp(p + prefix, k->bytes, k->n) == 0;
}
