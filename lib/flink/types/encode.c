/* encode.c: values given as JSON (as -a and -R print them) written as their serializers write them,
 * for ckpt-merge --rows: the composite and wrapper kinds beyond the keys' of key.c, through which
 * every value is written (the leaves there, the rest here; Avro's in avro.c).  What ckpt cannot
 * write (Java serialization, SQL's other data kinds) is named, for the caller to take only unchanged. */
#include <stdlib.h>
#include <string.h>

#include "types.h"
#include "rowdata.h"

enum { POJO_NULL = 1, POJO_PLAIN = 2, POJO_NAMED = 4, POJO_TAGGED = 8 }; /* PojoSerializer's flags */

static int
cannot(const struct ckpt_fser *t, struct ckpt_fenc *b)
{
	const char *c = t->cls ? t->cls : "?", *dot = strrchr(c, '.');

	c = dot ? dot + 1 : c;
	b->cannot = 1;
	snprintf(b->why, b->whyn, "the serializer %.*s", (int)strcspn(c, "$"), c);
	return -1;
}

static int
count(const json_t *v, struct ckpt_fenc *b, const char *what)
{
	if (!json_is_array(v))
		return ckpt_fenc_fail(b, what);
	return ckpt_fenc_be(b, json_array_size(v), 4);
}

/* Elements of t each after a presence flag (GenericArraySerializer, Traversable), or not. */
static int
elements(const struct ckpt_fser *t, const json_t *v, struct ckpt_fenc *b, int depth, int flagged,
	 const char *what)
{
	const json_t *x;
	size_t i;

	if (count(v, b, what) < 0)
		return -1;
	json_array_foreach(v, i, x) {
		if (flagged && ckpt_fenc_be(b, !json_is_null(x), 1) < 0)
			return -1;
		if ((!flagged || !json_is_null(x)) && ckpt_fenc(t, x, b, depth + 1) < 0)
			return -1;
	}
	return 0;
}

/* MapSerializer: its size, then each key, a null flag and the value: [{"key", "value"}]. */
static int
map(const struct ckpt_fser *t, const json_t *v, struct ckpt_fenc *b, int depth)
{
	const json_t *x, *val;
	size_t i;

	if (count(v, b, "an array of {\"key\", \"value\"} (a map)") < 0)
		return -1;
	json_array_foreach(v, i, x) {
		if (!json_is_object(x) || json_object_size(x) != 2 || !json_object_get(x, "key") ||
		    !(val = json_object_get(x, "value")))
			return ckpt_fenc_fail(b, "an array of {\"key\", \"value\"} (a map)");
		if (ckpt_fenc(t->kids[0], json_object_get(x, "key"), b, depth + 1) < 0 ||
		    ckpt_fenc_be(b, json_is_null(val), 1) < 0 ||
		    (!json_is_null(val) && ckpt_fenc(t->kids[1], val, b, depth + 1) < 0))
			return -1;
	}
	return 0;
}

/* DataOutput.writeUTF of UTF-8 s (jansson's: valid): its length, then modified UTF-8 (NUL in two
 * bytes, a supplementary character as its two surrogates of three bytes each). */
static int
write_utf(struct ckpt_fenc *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t at = b->n, len;

	if (ckpt_fenc_be(b, 0, 2) < 0)
		return -1;
	while (*p) {
		uint32_t c = *p, k = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4, hi;

		if (k < 4) {
			if (ckpt_fenc_put(b, p, k) < 0)
				return -1;
		} else { /* the surrogates, each as a three-byte sequence */
			c = ((c & 7) << 18 | (p[1] & 0x3fu) << 12 | (p[2] & 0x3fu) << 6 | (p[3] & 0x3fu)) - 0x10000;
			hi = 0xd800 | c >> 10;
			c = 0xdc00 | (c & 0x3ff);
			if (ckpt_fenc_be(b, 0xe08080 | (hi >> 12) << 16 | (hi >> 6 & 0x3f) << 8 | (hi & 0x3f), 3) < 0 ||
			    ckpt_fenc_be(b, 0xe08080 | (c >> 12) << 16 | (c >> 6 & 0x3f) << 8 | (c & 0x3f), 3) < 0)
				return -1;
		}
		p += k;
	}
	if ((len = b->n - at - 2) > 65535)
		return ckpt_fenc_fail(b, "a subclass name of at most 65535 bytes");
	b->p[at] = (unsigned char)(len >> 8);
	b->p[at + 1] = (unsigned char)len;
	return 0;
}

/* Is v a subclass's value as -R prints it ({"subclass", "tag", "value"}), not t's own fields? */
static int
is_subclass(const struct ckpt_fser *t, const json_t *v)
{
	size_t own = 0;

	if (!json_is_object(v) || json_object_size(v) != 3 || !json_is_string(json_object_get(v, "subclass")) ||
	    !json_object_get(v, "tag") || !json_object_get(v, "value"))
		return 0;
	for (size_t i = 0; i < t->nnames && i < t->nkids; i++)
		own += json_object_get(v, t->names[i]) != NULL;
	return !(own == 3 && t->nkids == 3);
}

/* A subclass's value: flags, its tag (registered) or name (cached), its serializer's value. */
static int
pojo_subclass(const struct ckpt_fser *t, const json_t *v, struct ckpt_fenc *b, int depth)
{
	const char *name = json_string_value(json_object_get(v, "subclass"));
	const json_t *tag = json_object_get(v, "tag");
	size_t i = 0;

	while (i < t->nsubs && strcmp(t->subnames[i], name) != 0)
		i++;
	if (i == t->nsubs)
		return ckpt_fenc_fail(b, "a subclass the snapshot holds a serializer of (registered or cached)");
	if (i < t->nreg ? !json_is_integer(tag) || json_integer_value(tag) != (json_int_t)i : !json_is_null(tag)) {
		if (i < t->nreg)
			snprintf(b->why, b->whyn, "the tag of subclass %s: %zu", name, i);
		else
			snprintf(b->why, b->whyn, "the tag of subclass %s: null (not registered)", name);
		return -1;
	}
	if (t->subs[i] == NULL)
		return cannot(t, b);
	if (ckpt_fenc_be(b, i < t->nreg ? POJO_TAGGED : POJO_NAMED, 1) < 0 ||
	    (i < t->nreg ? ckpt_fenc_be(b, i, 1) : write_utf(b, name)) < 0)
		return -1;
	return ckpt_fenc(t->subs[i], json_object_get(v, "value"), b, depth + 1);
}

/* PojoSerializer: flags, then per field a null flag and the field, or a subclass's value. */
static int
pojo(const struct ckpt_fser *t, const json_t *v, struct ckpt_fenc *b, int depth)
{
	if (json_is_null(v))
		return ckpt_fenc_be(b, POJO_NULL, 1);
	if (is_subclass(t, v))
		return pojo_subclass(t, v, b, depth);
	if (!json_is_object(v) || json_object_size(v) != t->nkids)
		return ckpt_fenc_fail(b, "an object of the POJO's fields");
	if (ckpt_fenc_be(b, POJO_PLAIN, 1) < 0)
		return -1;
	for (size_t i = 0; i < t->nkids; i++) {
		const json_t *f = json_object_get(v, t->names[i]);

		if (f == NULL)
			return ckpt_fenc_fail(b, "an object of the POJO's fields");
		if (ckpt_fenc_be(b, json_is_null(f), 1) < 0)
			return -1;
		if (!json_is_null(f) && (t->kids[i] == NULL ? cannot(t, b) : ckpt_fenc(t->kids[i], f, b, depth + 1)) < 0)
			return -1;
	}
	return 0;
}

/* Row: the row kind's bits (when written), one null bit per field, high bit first, then the fields. */
static int
row(const struct ckpt_fser *t, const json_t *v, struct ckpt_fenc *b, int depth)
{
	static const char *const kinds[] = {"+I", "-U", "+U", "-D"};
	const json_t *f = json_object_get(v, "fields"), *k = json_object_get(v, "kind");
	size_t off = t->flag ? 2 : 0, bits = off + t->nkids, at = b->n;
	int kind = -1;

	for (int i = 0; t->flag && json_is_string(k) && i < 4; i++)
		if (strcmp(json_string_value(k), kinds[i]) == 0)
			kind = i;
	if (!json_is_array(f) || json_array_size(f) != t->nkids || (t->flag ? kind < 0 : !json_is_null(k)))
		return ckpt_fenc_fail(b, "{\"kind\", \"fields\"} (a row)");
	for (size_t i = 0; i < (bits + 7) / 8; i++)
		if (ckpt_fenc_be(b, 0, 1) < 0)
			return -1;
	for (size_t i = 0; i < bits; i++) {
		int one = i < off ? (kind >> i) & 1 : json_is_null(json_array_get(f, i - off));

		b->p[at + i / 8] |= (unsigned char)(one << (7 - i % 8));
	}
	for (size_t i = 0; i < t->nkids; i++)
		if (!json_is_null(json_array_get(f, i)) && ckpt_fenc(t->kids[i], json_array_get(f, i), b, depth + 1) < 0)
			return -1;
	return 0;
}

/* {"tag": value}, one of two tags (Either's, Try's): its flag (1 for the first), then the value. */
static int
tagged(const struct ckpt_fser *t, const json_t *v, struct ckpt_fenc *b, int depth, const char *one,
       const char *zero)
{
	const json_t *x = json_object_get(v, one);
	int first = x != NULL;

	if (!json_is_object(v) || json_object_size(v) != 1 || (!first && !(x = json_object_get(v, zero))))
		return ckpt_fenc_fail(b, t->kind == FSER_EITHER ? "{\"left\"} or {\"right\"}" : "{\"success\"} or {\"failure\"}");
	return ckpt_fenc_be(b, first, 1) < 0 ? -1 : ckpt_fenc(t->kids[first ? 0 : 1], x, b, depth + 1);
}

static int
scala(const struct ckpt_fser *t, const json_t *v, struct ckpt_fenc *b, int depth)
{
	switch (t->kind) {
	case FSER_OPTION:
		if (ckpt_fenc_be(b, !json_is_null(v), 1) < 0)
			return -1;
		return json_is_null(v) ? 0 : ckpt_fenc(t->kids[0], v, b, depth + 1);
	case FSER_EITHER:
		return tagged(t, v, b, depth, "left", "right");
	case FSER_TRY:
		return tagged(t, v, b, depth, "success", "failure");
	case FSER_TRAVERSABLE:
		return elements(t->kids[0], v, b, depth, 1, "an array (a collection)");
	case FSER_SENUM:
		for (size_t i = 0; json_is_string(v) && i < t->nnames; i++)
			if (strcmp(t->names[i], json_string_value(v)) == 0)
				return ckpt_fenc_be(b, (uint32_t)t->ids[i], 4);
		return ckpt_fenc_fail(b, "a constant of the enumeration");
	default: /* FSER_UNIT: one byte */
		return json_is_null(v) ? ckpt_fenc_be(b, 0, 1) : ckpt_fenc_fail(b, "null (Unit)");
	}
}

/* Kryo's value is kept as it was read ({"kryo_class", ..., "bytes"}): its bytes, class included. */
static int
kryo(const struct ckpt_fser *t, const json_t *v, struct ckpt_fenc *b)
{
	unsigned char *p = NULL;
	size_t n = 0;
	int r;

	if (!json_is_object(v) || !json_object_get(v, "bytes") || !json_object_get(v, "kryo_class"))
		return cannot(t, b);
	if (ckpt_entry_from_json(json_object_get(v, "bytes"), &p, &n, NULL) < 0)
		return ckpt_fenc_fail(b, "the Kryo value's bytes as an entry");
	r = ckpt_fenc_put(b, p, n);
	free(p);
	return r;
}

/* ArrayDataSerializer, MapDataSerializer, TimestampDataSerializer, DecimalDataSerializer: as rowkey.c
 * writes them. */
static int
sqldata(const struct ckpt_fser *t, const json_t *v, struct ckpt_fenc *b)
{
	unsigned char *p = NULL;
	size_t n = 0;
	int r;

	if (t->rd == NULL || ((t->kind == FSER_ARRAYDATA || t->kind == FSER_MAPDATA) &&
			      !ckpt_frow_key_writable(t, b->why, b->whyn)))
		return cannot(t, b);
	if (ckpt_frow_key(t, v, &p, &n, b->why, b->whyn) < 0)
		return -1;
	r = ckpt_fenc_put(b, p, n);
	free(p);
	return r;
}

/* JavaSerializer: by the state's own values (jvalue.c), when the caller has them. */
static int
java(const struct ckpt_fser *t, const json_t *v, struct ckpt_fenc *b)
{
	unsigned char *p = NULL;
	size_t n = 0;
	int r;

	if (b->java == NULL)
		return cannot(t, b);
	if (ckpt_fjava_enc(b->java, v, &p, &n, b->why, b->whyn) < 0)
		return -1;
	r = ckpt_fenc_put(b, p, n);
	free(p);
	return r;
}

/* ExternalSerializer: its internal serializer's value; a row's fields named by the DataType's. */
static int
external(const struct ckpt_fser *t, const json_t *v, struct ckpt_fenc *b, int depth)
{
	const struct ckpt_fser *k = t->nkids == 1 ? t->kids[0] : NULL;
	struct ckpt_fser named;

	if (k == NULL)
		return cannot(t, b);
	if (t->rd && t->rd->root == RD_ROW && k->kind == FSER_ROWDATA && k->rd && k->rd->n == t->rd->n) {
		named = *k;
		named.rd = t->rd;
		return ckpt_fenc(&named, v, b, depth + 1);
	}
	return ckpt_fenc(k, v, b, depth + 1);
}

static int
leaf(const struct ckpt_fser *t, const json_t *v, struct ckpt_fenc *b, int depth)
{
	struct ckpt_fser e = {.kind = t->elem};
	const json_t *x;
	unsigned char *p = NULL;
	size_t n = 0, i;
	int r;

	switch (t->kind) {
	case FSER_VOID: case FSER_VOIDNS: case FSER_GLOBALWINDOW:
		return json_is_null(v) ? ckpt_fenc_be(b, 0, 1) : ckpt_fenc_fail(b, "null");
	case FSER_TIMEWINDOW:
		if (!json_is_integer(json_object_get(v, "start")) || !json_is_integer(json_object_get(v, "end")) ||
		    json_object_size(v) != 2)
			return ckpt_fenc_fail(b, "{\"start\", \"end\"} (a TimeWindow)");
		return ckpt_fenc_be(b, (uint64_t)json_integer_value(json_object_get(v, "start")), 8) < 0 ? -1 :
		       ckpt_fenc_be(b, (uint64_t)json_integer_value(json_object_get(v, "end")), 8);
	case FSER_BYTES: case FSER_STRINGDATA:
		if (ckpt_entry_from_json(v, &p, &n, NULL) < 0 || n > INT32_MAX)
			return ckpt_fenc_fail(b, t->kind == FSER_BYTES ? "an entry (a string or {\"base64\"}: a byte[])" :
					      "a string (or an entry: {\"base64\"})");
		r = ckpt_fenc_be(b, n, 4) < 0 ? -1 : ckpt_fenc_put(b, p, n);
		free(p);
		return r;
	case FSER_PARRAY:
		if (count(v, b, "an array") < 0)
			return -1;
		json_array_foreach(v, i, x)
			if (ckpt_fenc(&e, x, b, depth + 1) < 0)
				return -1;
		return 0;
	default: /* FSER_ENUM: its ordinal */
		for (i = 0; json_is_string(v) && i < t->nnames; i++)
			if (strcmp(t->names[i], json_string_value(v)) == 0)
				return ckpt_fenc_be(b, i, 4);
		return ckpt_fenc_fail(b, "a constant of the enum");
	}
}

int
ckpt_fenc_more(const struct ckpt_fser *t, const json_t *v, struct ckpt_fenc *b, int depth)
{
	switch (t->kind) {
	case FSER_VOID: case FSER_VOIDNS: case FSER_GLOBALWINDOW: case FSER_TIMEWINDOW: case FSER_BYTES:
	case FSER_PARRAY: case FSER_ENUM:
		return leaf(t, v, b, depth);
	case FSER_LIST:
		return elements(t->kids[0], v, b, depth, 0, "an array (a list)");
	case FSER_ARRAY:
		return elements(t->kids[0], v, b, depth, 1, "an array");
	case FSER_MAP:
		return map(t, v, b, depth);
	case FSER_TTL: /* TtlSerializer: the last access, kept from the row, then the value */
		if (!json_is_object(v) || json_object_size(v) != 2 || !json_object_get(v, "value"))
			return ckpt_fenc_fail(b, "{\"last_access\", \"value\"} (a value with a TTL)");
		return ckpt_fenc(t->kids[0], json_object_get(v, "last_access"), b, depth + 1) < 0 ? -1 :
		       ckpt_fenc(t->kids[1], json_object_get(v, "value"), b, depth + 1);
	case FSER_NULLABLE: /* a null flag; null: padded to the wrapped serializer's length */
		if (ckpt_fenc_be(b, json_is_null(v), 1) < 0)
			return -1;
		for (int i = 0; json_is_null(v) && i < t->flag; i++)
			if (ckpt_fenc_be(b, 0, 1) < 0)
				return -1;
		return json_is_null(v) ? 0 : ckpt_fenc(t->kids[0], v, b, depth + 1);
	case FSER_ROW:
		return row(t, v, b, depth);
	case FSER_POJO:
		return pojo(t, v, b, depth);
	case FSER_OPTION: case FSER_EITHER: case FSER_TRY: case FSER_TRAVERSABLE: case FSER_SENUM: case FSER_UNIT:
		return scala(t, v, b, depth);
	case FSER_KRYO:
		return kryo(t, v, b);
	case FSER_AVRO:
		return ckpt_fser_avro_enc(t, v, b, depth);
	case FSER_EXTERNAL:
		return external(t, v, b, depth);
	case FSER_ARRAYDATA: case FSER_MAPDATA: case FSER_TIMESTAMPDATA: case FSER_DECIMALDATA:
		return sqldata(t, v, b);
	case FSER_JAVA:
		return java(t, v, b);
	case FSER_STRINGDATA: /* StringDataSerializer: an i32 length, the UTF-8 (an entry when not UTF-8) */
		return leaf(t, v, b, depth);
	default:
		return cannot(t, b);
	}
}

/* Could a value of t be one ckpt cannot write (a kind it cannot, or one whose values may be)?  (--rows:
 * a state of none is encoded only once its rows are read; moved from rowsin.c) */
int
ckpt_fenc_may_refuse(const struct ckpt_fser *t, int depth)
{
	if (t == NULL || depth > 32)
		return 1;
	switch (t->kind) {
	case FSER_STRING: case FSER_LONG: case FSER_INT: case FSER_SHORT: case FSER_BYTE: case FSER_BOOL:
	case FSER_FLOAT: case FSER_DOUBLE: case FSER_CHAR: case FSER_VOID: case FSER_BYTES: case FSER_PARRAY:
	case FSER_VOIDNS: case FSER_TIMEWINDOW: case FSER_GLOBALWINDOW: case FSER_ENUM: case FSER_SENUM: case FSER_UNIT:
		return 0;
	case FSER_TUPLE: case FSER_ROW: case FSER_LIST: case FSER_MAP: case FSER_ARRAY: case FSER_TTL: case FSER_NULLABLE:
	case FSER_TIMER: case FSER_OPTION: case FSER_EITHER: case FSER_TRY: case FSER_TRAVERSABLE:
		for (size_t i = 0; i < t->nkids; i++)
			if (ckpt_fenc_may_refuse(t->kids[i], depth + 1))
				return 1;
		return 0;
	default: /* POJO subclasses, Kryo values without their bytes, the rest */
		return 1;
	}
}
