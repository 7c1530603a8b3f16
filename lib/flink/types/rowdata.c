/* rowdata.c: Flink SQL's internal data: the snapshots of RowDataSerializer (logical types, Java
 * serialized), ExternalSerializer and the field serializers, and BinaryRowData values typed by them. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "types.h"
#include "rowdata.h"

#define RD_JAVA_DEPTH 64
#define RD_JAVA_MAX ((size_t)1 << 20) /* the most a logical type's Java stream may take */
#define RD_DEPTH 24                   /* logical types nested */
#define RD_FIELDS 65535


/* LogicalTypeRoot's constants ckpt decodes (the others, as STRUCTURED_TYPE, stay RD_UNKNOWN). */
static const struct {
	const char *name;
	enum ckpt_frow_root root;
} roots[] = {
	{"CHAR", RD_CHAR}, {"VARCHAR", RD_VARCHAR}, {"BOOLEAN", RD_BOOLEAN}, {"BINARY", RD_BINARY},
	{"VARBINARY", RD_VARBINARY}, {"DECIMAL", RD_DECIMAL}, {"TINYINT", RD_TINYINT}, {"SMALLINT", RD_SMALLINT},
	{"INTEGER", RD_INTEGER}, {"BIGINT", RD_BIGINT}, {"FLOAT", RD_FLOAT}, {"DOUBLE", RD_DOUBLE},
	{"DATE", RD_DATE}, {"TIME_WITHOUT_TIME_ZONE", RD_TIME}, {"TIMESTAMP_WITHOUT_TIME_ZONE", RD_TIMESTAMP},
	{"TIMESTAMP_WITH_LOCAL_TIME_ZONE", RD_TIMESTAMP_LTZ}, {"INTERVAL_YEAR_MONTH", RD_INTERVAL_YM},
	{"INTERVAL_DAY_TIME", RD_INTERVAL_DT}, {"ARRAY", RD_ARRAY}, {"MULTISET", RD_MULTISET}, {"MAP", RD_MAP},
	{"ROW", RD_ROW}, {"RAW", RD_RAW}, {"STRUCTURED_TYPE", RD_STRUCT},
};


void
ckpt_frow_free(struct ckpt_frow_type *rd)
{
	if (rd == NULL)
		return;
	for (size_t i = 0; i < rd->n; i++) {
		ckpt_frow_free(rd->kids[i]);
		if (rd->names)
			free(rd->names[i]);
	}
	free(rd->kids);
	free(rd->names);
	free(rd->name);
	free(rd);
}

/* ---------------------------------------------------------------- logical types, from Java objects */

static int
jint(const struct ckpt_javaser_value *obj, const char *field, int *v)
{
	const struct ckpt_javaser_value *f = ckpt_javaser_field(obj, field);

	if (f == NULL || f->kind != CKPT_JAVASER_PRIM || f->type != 'I')
		return -1;
	*v = (int)f->i;
	return 0;
}

/* The elements of a java.util.List as Java serialization leaves them: an ArrayList's (written by
 * its writeObject after the size), through Collections' unmodifiable wrappers. */
static int
jlist(const struct ckpt_javaser_value *v, const struct ckpt_javaser_value ***items, size_t *n, int depth)
{
	const struct ckpt_javaser_value *w;

	if (v == NULL || v->kind != CKPT_JAVASER_OBJECT || depth > 4)
		return -1;
	if ((w = ckpt_javaser_field(v, "list")) != NULL || (w = ckpt_javaser_field(v, "c")) != NULL)
		return jlist(w, items, n, depth + 1);
	if (strcmp(v->cls->name, "java.util.ArrayList") != 0 || v->n == 0)
		return -1;
	*items = (const struct ckpt_javaser_value **)v->data[v->n - 1].extra;
	*n = v->data[v->n - 1].nextra;
	if (*n > 0 && (*items)[0]->kind == CKPT_JAVASER_BLOCK) { /* the capacity, written as an int */
		(*items)++;
		(*n)--;
	}
	return 0;
}

static struct ckpt_frow_type *rdtype(const struct ckpt_javaser_value *v, int depth, const char **why);

static int
rd_add(struct ckpt_frow_type *t, struct ckpt_frow_type *k, const char *name)
{
	if (ckpt_grow(&t->kids, &t->kidcap, t->n + 1, sizeof *t->kids, 4, NULL) < 0)
		return -1;
	if (name || t->names) {
		if (ckpt_grow(&t->names, &t->namecap, t->n + 1, sizeof *t->names, 4, NULL) < 0)
			return -1;
		if ((t->names[t->n] = strdup(name ? name : "")) == NULL)
			return -1;
	}
	t->kids[t->n++] = k;
	return 0;
}

/* The nested types of t from the fields of the Java object v. */
static int
rd_children(struct ckpt_frow_type *t, const struct ckpt_javaser_value *v, int depth, const char **why)
{
	static const char *const single[] = {"elementType", "keyType", "valueType"};
	const struct ckpt_javaser_value **items, *name;
	struct ckpt_frow_type *k;
	size_t n;

	if (t->root == RD_ROW || t->root == RD_STRUCT) {
		if (jlist(ckpt_javaser_field(v, t->root == RD_ROW ? "fields" : "attributes"), &items, &n, 0) < 0 ||
		    n > RD_FIELDS)
			return *why = "a ROW or structured type whose fields are not a list ckpt reads", -1;
		for (size_t i = 0; i < n; i++) {
			name = ckpt_javaser_field(items[i], "name");
			if (name == NULL || name->kind != CKPT_JAVASER_STRING)
				return *why = "a ROW field without a name", -1;
			if ((k = rdtype(ckpt_javaser_field(items[i], "type"), depth + 1, why)) == NULL ||
			    rd_add(t, k, name->str) < 0)
				return ckpt_frow_free(k), -1;
		}
		return 0;
	}
	for (size_t i = 0; i < 3; i++) {
		if ((i == 0) != (t->root == RD_ARRAY || t->root == RD_MULTISET) || (i > 0 && t->root != RD_MAP))
			continue;
		if ((k = rdtype(ckpt_javaser_field(v, single[i]), depth + 1, why)) == NULL || rd_add(t, k, NULL) < 0)
			return ckpt_frow_free(k), -1;
	}
	return 0;
}

/* A LogicalType object as a struct ckpt_frow_type; NULL with *why (or *why NULL: out of memory). */
static struct ckpt_frow_type *
rdtype_strict(const struct ckpt_javaser_value *v, int depth, const char **why)
{
	const struct ckpt_javaser_value *r, *c;
	struct ckpt_frow_type *t;

	*why = NULL;
	if (depth > RD_DEPTH)
		return *why = "logical types nested too deep", NULL;
	if (v == NULL || v->kind != CKPT_JAVASER_OBJECT || (r = ckpt_javaser_field(v, "typeRoot")) == NULL ||
	    r->kind != CKPT_JAVASER_ENUM)
		return *why = "a logical type without its type root", NULL;
	if ((t = calloc(1, sizeof *t)) == NULL)
		return NULL;
	for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++)
		if (strcmp(roots[i].name, r->str) == 0)
			t->root = roots[i].root;
	if (t->root == RD_UNKNOWN) {
		size_t n = strlen(r->str) + 40;

		if ((t->name = malloc(n)) == NULL)
			goto fail;
		snprintf(t->name, n, "logical type %s is not decoded", r->str);
	}
	if (t->root == RD_DECIMAL && (jint(v, "precision", &t->precision) < 0 || jint(v, "scale", &t->scale) < 0 ||
				      t->precision < 1 || t->precision > 38 || t->scale < 0 || t->scale > t->precision)) {
		*why = "a DECIMAL type without a precision and scale ckpt takes";
		goto fail;
	}
	if ((t->root == RD_TIMESTAMP || t->root == RD_TIMESTAMP_LTZ || t->root == RD_TIME) &&
	    (jint(v, "precision", &t->precision) < 0 || t->precision < 0 || t->precision > 9)) {
		*why = "a time type without a precision of 0 to 9";
		goto fail;
	}
	if (t->root == RD_RAW) {
		c = ckpt_javaser_field(v, "clazz");
		if ((t->name = strdup(c && c->kind == CKPT_JAVASER_CLASS ? c->cls->name : "?")) == NULL)
			goto fail;
	}
	if (rd_children(t, v, depth, why) < 0)
		goto fail;
	return t;
fail:
	ckpt_frow_free(t);
	return NULL;
}

/* The same, a type ckpt cannot take becoming an unknown one, whose values are typed null with
 * the reason (a slot of a row is stepped over all the same); NULL only when out of memory. */
static struct ckpt_frow_type *
rdtype(const struct ckpt_javaser_value *v, int depth, const char **why)
{
	struct ckpt_frow_type *t = rdtype_strict(v, depth, why);

	if (t || *why == NULL)
		return t;
	if ((t = calloc(1, sizeof *t)) == NULL || (t->name = strdup(*why)) == NULL) {
		free(t);
		return *why = NULL, NULL;
	}
	return t;
}

enum { JT_TYPE, JT_DATA, JT_SKIP };

/* One Java stream in p[0, n): 0 and *pos past it, *out its type (as java_type says); -1 with the
 * error set. */
static int
java_parse(struct ckpt_fsrc *s, const unsigned char *p, size_t n, int data, size_t *pos, struct ckpt_frow_type **out)
{
	const struct ckpt_javaser_value *v;
	struct ckpt_javaser *j;
	const char *why;
	int r = -1;

	*pos = 0;
	if ((j = ckpt_javaser_new(p, n, s->where, 0, RD_JAVA_DEPTH, s->e)) == NULL)
		return ckpt_fsrc_nomem(s);
	if (ckpt_javaser_header(j, pos) == 0 && ckpt_javaser_read(j, pos, &v) == 0) {
		if (data == JT_DATA)
			v = ckpt_javaser_field(v, "logicalType");
		if (data == JT_SKIP || (*out = rdtype(v, 0, &why)) != NULL)
			r = 0;
		else
			ckpt_fsrc_nomem(s);
	}
	ckpt_javaser_free(j);
	return r;
}

/* One Java serialization stream (InstantiationUtil.serializeObject: a header and an object) at the
 * source's position, stepped over and converted by rdtype: the object (JT_TYPE), the DataType's
 * logicalType (JT_DATA), or only stepped over (JT_SKIP: a serializer object, *out stays NULL).
 * Read where the window holds it (then stepped over through the source, so that capturing and
 * framing go on); else, from a plain file, up to RD_JAVA_MAX bytes ahead and a seek back.
 * 0, 1 when it cannot be read (framed or capturing, past the window), -1 with the error set. */
static int
java_type(struct ckpt_fsrc *s, int data, struct ckpt_frow_type **out)
{
	uint64_t at = ckpt_fsrc_tell(s), left = s->size - at;
	size_t n = left < RD_JAVA_MAX ? (size_t)left : RD_JAVA_MAX, pos;
	unsigned char *own;
	int r, whole = s->fd < 0 && !s->snappy; /* the window is the rest of the region */

	*out = NULL;
	if ((r = java_parse(s, s->win + s->wpos, s->wlen - s->wpos, data, &pos, out)) == 0)
		return ckpt_fsrc_read(s, NULL, pos, "logical type");
	if (whole || s->snappy || s->capture || s->fd < 0)
		return whole ? -1 : 1;
	if ((own = malloc(n ? n : 1)) == NULL)
		return ckpt_fsrc_nomem(s);
	r = ckpt_fsrc_read(s, own, n, "logical type");
	if (r == 0 && (r = java_parse(s, own, n, data, &pos, out)) == 0)
		r = ckpt_fsrc_seek(s, at + pos, 0);
	free(own);
	return r;
}

static int
rd_scalar(struct ckpt_fser *t, enum ckpt_frow_root root, int precision, int scale)
{
	if ((t->rd = calloc(1, sizeof *t->rd)) == NULL)
		return -1;
	t->rd->root = root;
	t->rd->precision = precision;
	t->rd->scale = scale;
	return 0;
}

/* RowDataSerializerSnapshot (version 3): field count, each field's LogicalType Java serialized,
 * then the nested serializer snapshots (read, not used: the types say how to decode). */
static int
read_rowdata(struct ckpt_fsrc *s, struct ckpt_fser *t)
{
	struct ckpt_frow_type *k;
	int32_t n;
	int r;

	if (t->version != 3)
		return t->kind = FSER_UNKNOWN, 1;
	if (ckpt_fsrc_i32(s, &n, "row field count") < 0)
		return -1;
	if (n < 0 || n > RD_FIELDS)
		return ckpt_fsrc_fail(s, "row field count %d", n);
	if (rd_scalar(t, RD_ROW, 0, 0) < 0)
		return ckpt_fsrc_nomem(s);
	for (int32_t i = 0; i < n; i++) {
		if ((r = java_type(s, JT_TYPE, &k)) != 0)
			return r == 1 ? (t->kind = FSER_UNKNOWN, 1) : -1;
		if (rd_add(t->rd, k, NULL) < 0) {
			ckpt_frow_free(k);
			return ckpt_fsrc_nomem(s);
		}
	}
	/* the nested snapshots: through a composite's reader, which these are laid out as after its outer part */
	return 2;
}

int
ckpt_frow_read(struct ckpt_fsrc *s, struct ckpt_fser *t)
{
	struct ckpt_frow_type *k;
	int32_t a, b;
	uint8_t flag;
	int r;

	switch (t->kind) {
	case FSER_ROWDATA:
		return read_rowdata(s, t);
	case FSER_EXTERNAL: /* the outer snapshot: DataType Java serialized, isInternalInput */
		if ((r = java_type(s, JT_DATA, &t->rd)) != 0)
			return r == 1 ? (t->kind = FSER_UNKNOWN, 1) : -1;
		return ckpt_fsrc_u8(s, &flag, "internal input flag");
	case FSER_LINKEDLIST: /* the outer snapshot: a null mask flag from version 3, implied by 2 */
		if (t->flag >= 3) {
			if (ckpt_fsrc_u8(s, &flag, "null mask flag") < 0)
				return -1;
			t->flag = flag != 0;
		} else
			t->flag = t->flag == 2;
		return 0;
	case FSER_ARRAYDATA: case FSER_MAPDATA: /* version 3: the types, then the serializers, Java serialized */
		if (t->version != 3)
			return t->kind = FSER_UNKNOWN, 1;
		if (rd_scalar(t, t->kind == FSER_ARRAYDATA ? RD_ARRAY : RD_MAP, 0, 0) < 0)
			return ckpt_fsrc_nomem(s);
		for (int i = 0; i < (t->kind == FSER_ARRAYDATA ? 1 : 2); i++) {
			if ((r = java_type(s, JT_TYPE, &k)) != 0)
				return r == 1 ? (t->kind = FSER_UNKNOWN, 1) : -1;
			if (rd_add(t->rd, k, NULL) < 0) {
				ckpt_frow_free(k);
				return ckpt_fsrc_nomem(s);
			}
		}
		for (int i = 0; i < (t->kind == FSER_ARRAYDATA ? 1 : 2); i++)
			if ((r = java_type(s, JT_SKIP, &k)) != 0)
				return r == 1 ? (t->kind = FSER_UNKNOWN, 1) : -1;
		return 0;
	case FSER_TIMESTAMPDATA:
		if (t->version != 1)
			return t->kind = FSER_UNKNOWN, 1;
		if (ckpt_fsrc_i32(s, &a, "timestamp precision") < 0)
			return -1;
		if (a < 0 || a > 9)
			return ckpt_fsrc_fail(s, "timestamp precision %d", a);
		return rd_scalar(t, RD_TIMESTAMP, a, 0) < 0 ? ckpt_fsrc_nomem(s) : 0;
	case FSER_DECIMALDATA: /* the same payload in versions 1 to 3 */
		if (t->version < 1 || t->version > 3)
			return t->kind = FSER_UNKNOWN, 1;
		if (ckpt_fsrc_i32(s, &a, "decimal precision") < 0 || ckpt_fsrc_i32(s, &b, "decimal scale") < 0)
			return -1;
		if (a < 1 || a > 38 || b < 0 || b > a)
			return ckpt_fsrc_fail(s, "decimal precision %d and scale %d", a, b);
		return rd_scalar(t, RD_DECIMAL, a, b) < 0 ? ckpt_fsrc_nomem(s) : 0;
	default:
		return 1;
	}
}

int
ckpt_frow_fixed_length(const struct ckpt_fser *t)
{
	if (t->kind == FSER_TIMESTAMPDATA && t->rd)
		return t->rd->precision <= 3 ? 8 : 12;
	if (t->kind == FSER_DECIMALDATA && t->rd)
		return t->rd->precision <= 18 ? 8 : -1;
	return -1;
}

/* ---------------------------------------------------------------- values: BinaryRowData and its fields */

const char *const ckpt_frow_row_kinds[4] = {"+I", "-U", "+U", "-D"};

/* What a value is decoded with: the source (for errors) and the sink. */
struct rdc {
	struct ckpt_fsrc *s;
	struct ckpt_fout *o;
	const char *what; /* "row", "array", "map": what the offsets of an error are into */
};

/* Little-endian: the memory segments of the binary formats are written in the machine's order,
 * which Flink's supported platforms have little-endian. */
static uint64_t
le(const unsigned char *p, int n)
{
	uint64_t v = 0;

	while (n-- > 0)
		v = v << 8 | p[n];
	return v;
}

static int
put(struct rdc *c, int r)
{
	return r < 0 ? ckpt_fsrc_nomem(c->s) : 0;
}

static int
open_c(struct rdc *c, char k)
{
	return ckpt_fout_open(c->o, k) < 0 ? ckpt_fsrc_nomem(c->s) : 0;
}

static int
out_str(struct rdc *c, const char *p)
{
	return put(c, ckpt_fout_str(c->o, p, strlen(p)));
}

static int
out_real(struct rdc *c, double d)
{
	if (c->o->mode == FOUT_NONE)
		return 0;
	if (d != d)
		return out_str(c, "NaN");
	if (d > 1.7976931348623157e308 || d < -1.7976931348623157e308)
		return out_str(c, d > 0 ? "Infinity" : "-Infinity");
	return put(c, ckpt_fout_json(c->o, json_real(d)));
}

static int
out_time(struct rdc *c, int64_t days, int date, int64_t nanos, const char *zone)
{
	return put(c, ckpt_fout_time(c->o, days, date, nanos, zone));
}

static int
out_timestamp(struct rdc *c, const struct ckpt_frow_type *t, int64_t millis, int64_t nano, size_t at)
{
	int64_t days = millis / 86400000, ms = millis % 86400000;

	if (nano < 0 || nano > 999999)
		return ckpt_fsrc_fail(c->s, "%s offset %zu: timestamp nanoseconds of the millisecond %" PRId64
				      " (0 to 999999)", c->what, at, nano);
	if (ms < 0) {
		ms += 86400000;
		days--;
	}
	return out_time(c, days, 1, ms * 1000000 + nano, t->root == RD_TIMESTAMP_LTZ ? "Z" : "");
}

/* An unscaled decimal, big-endian two's complement (a long's 8 bytes for the compact form), as a
 * plain string: "-12.50".  Its digits must fit its precision. */
static int
out_decimal(struct rdc *c, const struct ckpt_frow_type *t, const unsigned char *b, size_t n, size_t at)
{
	char *text;
	int nd, r;

	if (n == 0 || n > 16) /* 16 bytes hold 38 digits and the sign */
		return ckpt_fsrc_fail(c->s, "%s offset %zu: decimal(%d, %d) of %zu bytes", c->what, at, t->precision,
				      t->scale, n);
	if ((text = ckpt_fout_decimal_text(b, n, t->scale, &nd)) == NULL)
		return ckpt_fsrc_nomem(c->s);
	if (nd > t->precision && !(nd == 1 && text[0] == '0')) {
		free(text);
		return ckpt_fsrc_fail(c->s, "%s offset %zu: decimal of %d digits, more than its precision %d", c->what,
				      at, nd, t->precision);
	}
	r = out_str(c, text);
	free(text);
	return r;
}

static int emit_field(struct rdc *c, const struct ckpt_frow_type *t, const unsigned char *p, size_t n, size_t at,
		      int depth);

/* The variable-length part a slot points to: offset and size, or (the slot's top bit set, strings
 * and bytes of at most 7) in the slot itself, its length in the top byte's low 7 bits. */
static int
var_part(struct rdc *c, const unsigned char *p, size_t n, size_t at, int inline_ok, const unsigned char **q,
	 size_t *len)
{
	uint64_t v = le(p + at, 8), off = v >> 32;

	if (v >> 63) {
		*len = (size_t)(v >> 56 & 0x7f);
		if (!inline_ok || *len > 7)
			return ckpt_fsrc_fail(c->s, "%s offset %zu: inline part of %zu bytes where none may be", c->what,
					      at, *len);
		*q = p + at;
		return 0;
	}
	*len = (uint32_t)v;
	if (off > n || *len > n - off)
		return ckpt_fsrc_fail(c->s, "%s offset %zu: variable part at %" PRIu64 ", %zu bytes, outside the %s's %zu",
				      c->what, at, off, *len, c->what, n);
	*q = p + off;
	return 0;
}

size_t
ckpt_frow_elem_size(const struct ckpt_frow_type *t)
{
	switch (t->root) {
	case RD_BOOLEAN: case RD_TINYINT:
		return 1;
	case RD_SMALLINT:
		return 2;
	case RD_INTEGER: case RD_FLOAT: case RD_DATE: case RD_TIME: case RD_INTERVAL_YM:
		return 4;
	default:
		return 8;
	}
}

/* BinaryArrayData: i32 count, a null bit per element (in 4-byte words), the elements' fixed part. */
static int
array_at(struct rdc *c, const struct ckpt_frow_type *et, const unsigned char *p, size_t n, size_t *cnt, size_t *hdr)
{
	int64_t k;

	if (n < 4)
		return ckpt_fsrc_fail(c->s, "array of %zu bytes, shorter than its count", n);
	k = (int32_t)le(p, 4);
	if (k < 0)
		return ckpt_fsrc_fail(c->s, "array offset 0: element count %" PRId64, k);
	*cnt = (size_t)k;
	*hdr = 4 + ((size_t)k + 31) / 32 * 4;
	if (*hdr > n || (n - *hdr) / ckpt_frow_elem_size(et) < *cnt)
		return ckpt_fsrc_fail(c->s, "array of %zu bytes, shorter than the fixed part of its %zu elements", n,
				      *cnt);
	return 0;
}

static int
emit_elem(struct rdc *c, const struct ckpt_frow_type *et, const unsigned char *p, size_t n, size_t hdr, size_t i,
	  int depth)
{
	if (p[4 + i / 8] >> (i % 8) & 1)
		return put(c, ckpt_fout_null(c->o));
	return emit_field(c, et, p, n, hdr + i * ckpt_frow_elem_size(et), depth);
}

static int
emit_array(struct rdc *c, const struct ckpt_frow_type *t, const unsigned char *p, size_t n, int depth)
{
	const char *what = c->what;
	size_t cnt, hdr;

	c->what = "array";
	if (array_at(c, t->kids[0], p, n, &cnt, &hdr) < 0 || open_c(c, '[') < 0)
		return -1;
	for (size_t i = 0; i < cnt; i++)
		if (emit_elem(c, t->kids[0], p, n, hdr, i, depth) < 0)
			return -1;
	ckpt_fout_close(c->o);
	c->what = what;
	return 0;
}

/* BinaryMapData: the key array's size (i32), the key array, the value array; as [{"key", "value"}].
 * A MULTISET is a map of its elements to their counts (INT). */
static int
emit_map(struct rdc *c, const struct ckpt_frow_type *t, const unsigned char *p, size_t n, int depth)
{
	static const struct ckpt_frow_type count = {.root = RD_INTEGER};
	const struct ckpt_frow_type *kt = t->kids[0], *vt = t->root == RD_MAP ? t->kids[1] : &count;
	const char *what = c->what;
	size_t kb, kn, kh, vn, vh;

	c->what = "map";
	if (n < 4 || (kb = (uint32_t)le(p, 4)) > n - 4)
		return ckpt_fsrc_fail(c->s, "map of %zu bytes: key array size past its end", n);
	if (array_at(c, kt, p + 4, kb, &kn, &kh) < 0 || array_at(c, vt, p + 4 + kb, n - 4 - kb, &vn, &vh) < 0)
		return -1;
	if (kn != vn)
		return ckpt_fsrc_fail(c->s, "map of %zu keys and %zu values", kn, vn);
	if (open_c(c, '[') < 0)
		return -1;
	for (size_t i = 0; i < kn; i++) {
		if (open_c(c, '{') < 0)
			return -1;
		ckpt_fout_key_lit(c->o, "key");
		if (emit_elem(c, kt, p + 4, kb, kh, i, depth) < 0)
			return -1;
		ckpt_fout_key_lit(c->o, "value");
		if (emit_elem(c, vt, p + 4 + kb, n - 4 - kb, vh, i, depth) < 0)
			return -1;
		ckpt_fout_close(c->o);
	}
	ckpt_fout_close(c->o);
	c->what = what;
	return 0;
}

/* "f" and i in decimal, written backwards from end (a buffer of 32 bytes ending there). */
static const char *
field_name(char *end, size_t i)
{
	char *q = end;

	*--q = 0;
	do
		*--q = (char)('0' + i % 10);
	while ((i /= 10) != 0);
	*--q = 'f';
	return q;
}

/* BinaryRowData: the header (row kind byte, then a null bit per field, low bit first, in 8-byte
 * words), an 8-byte slot per field, the variable-length part.  As {"kind", "fields": {name: value}}. */
static int
emit_row(struct rdc *c, const struct ckpt_frow_type *t, const unsigned char *p, size_t n, int depth)
{
	size_t bits = (t->n + 63 + 8) / 64 * 8, fixed = bits + 8 * t->n;
	const char *what = c->what;
	char name[32];

	c->what = "row";
	if (n < fixed)
		return ckpt_fsrc_fail(c->s, "row of %zu bytes, shorter than the %zu of its fixed part (%zu fields)", n,
				      fixed, t->n);
	if (p[0] > 3)
		return ckpt_fsrc_fail(c->s, "row offset 0: row kind %u (0 to 3 expected)", p[0]);
	if (open_c(c, '{') < 0)
		return -1;
	ckpt_fout_key_lit(c->o, "kind");
	if (out_str(c, ckpt_frow_row_kinds[p[0]]) < 0)
		return -1;
	ckpt_fout_key_lit(c->o, "fields");
	if (open_c(c, '{') < 0)
		return -1;
	for (size_t i = 0; i < t->n; i++) {
		if (t->names && t->names[i][0])
			ckpt_fout_key(c->o, t->names[i]);
		else /* f0, f1, ...: for every field of every row, so not through snprintf */
			ckpt_fout_key(c->o, field_name(name + sizeof name, i));
		if (p[(i + 8) / 8] >> ((i + 8) % 8) & 1 ? put(c, ckpt_fout_null(c->o)) < 0
							: emit_field(c, t->kids[i], p, n, bits + 8 * i, depth) < 0)
			return -1;
		c->what = "row";
	}
	ckpt_fout_close(c->o);
	ckpt_fout_close(c->o);
	c->what = what;
	return 0;
}

/* A value whose type ckpt does not decode: typed null with the reason. */
static int
emit_untyped(struct rdc *c, const struct ckpt_frow_type *t)
{
	const char *why = t->name ? t->name : "logical type not decoded";

	if (open_c(c, '{') < 0)
		return -1;
	ckpt_fout_key_lit(c->o, "typed");
	if (put(c, ckpt_fout_null(c->o)) < 0)
		return -1;
	ckpt_fout_key_lit(c->o, "reason");
	if (out_str(c, why) < 0)
		return -1;
	ckpt_fout_close(c->o);
	return 0;
}

/* RAW: the bytes of its own serializer, named by its class. */
static int
emit_raw(struct rdc *c, const struct ckpt_frow_type *t, const unsigned char *q, size_t len)
{
	if (open_c(c, '{') < 0)
		return -1;
	ckpt_fout_key_lit(c->o, "raw_class");
	if (out_str(c, t->name) < 0)
		return -1;
	ckpt_fout_key_lit(c->o, "bytes");
	if (put(c, ckpt_fout_entry(c->o, q, len)) < 0)
		return -1;
	ckpt_fout_close(c->o);
	return 0;
}

static int
emit_var(struct rdc *c, const struct ckpt_frow_type *t, const unsigned char *p, size_t n, size_t at, int depth)
{
	const unsigned char *q = NULL;
	size_t len;
	int bytes = t->root == RD_CHAR || t->root == RD_VARCHAR || t->root == RD_BINARY || t->root == RD_VARBINARY;

	if (depth >= RD_DEPTH)
		return ckpt_fsrc_fail(c->s, "%s offset %zu: values nested more than %d deep", c->what, at, RD_DEPTH);
	if (var_part(c, p, n, at, bytes, &q, &len) < 0)
		return -1;
	switch (t->root) {
	case RD_CHAR: case RD_VARCHAR:
		if (ckpt_utf8_valid(q, len))
			return put(c, ckpt_fout_str(c->o, (const char *)q, len));
		return put(c, ckpt_fout_entry(c->o, q, len));
	case RD_BINARY: case RD_VARBINARY:
		return put(c, ckpt_fout_entry(c->o, q, len));
	case RD_DECIMAL:
		return out_decimal(c, t, q, len, at);
	case RD_ARRAY:
		return emit_array(c, t, q, len, depth + 1);
	case RD_MAP: case RD_MULTISET:
		return emit_map(c, t, q, len, depth + 1);
	case RD_ROW: case RD_STRUCT:
		return emit_row(c, t, q, len, depth + 1);
	default:
		return emit_raw(c, t, q, len);
	}
}

/* The field of type t whose fixed part is at p + at. */
static int
emit_field(struct rdc *c, const struct ckpt_frow_type *t, const unsigned char *p, size_t n, size_t at, int depth)
{
	uint64_t v = le(p + at, (int)ckpt_frow_elem_size(t));
	uint32_t u32 = (uint32_t)v;
	float f;
	double d;
	unsigned char be[8];

	switch (t->root) {
	case RD_BOOLEAN:
		return put(c, ckpt_fout_bool(c->o, v != 0));
	case RD_TINYINT:
		return put(c, ckpt_fout_int(c->o, (int8_t)v));
	case RD_SMALLINT:
		return put(c, ckpt_fout_int(c->o, (int16_t)v));
	case RD_INTEGER: case RD_INTERVAL_YM:
		return put(c, ckpt_fout_int(c->o, (int32_t)v));
	case RD_BIGINT: case RD_INTERVAL_DT:
		return put(c, ckpt_fout_int(c->o, (long long)(int64_t)v));
	case RD_FLOAT:
		memcpy(&f, &u32, 4);
		return out_real(c, f);
	case RD_DOUBLE:
		memcpy(&d, &v, 8);
		return out_real(c, d);
	case RD_DATE:
		return out_time(c, (int32_t)v, 2, 0, "");
	case RD_TIME:
		if ((int32_t)v < 0 || (int32_t)v >= 86400000)
			return ckpt_fsrc_fail(c->s, "%s offset %zu: time of day %d ms", c->what, at, (int32_t)v);
		return out_time(c, 0, 0, (int64_t)(int32_t)v * 1000000, "");
	case RD_TIMESTAMP: case RD_TIMESTAMP_LTZ:
		if (t->precision <= 3)
			return out_timestamp(c, t, (int64_t)v, 0, at);
		if ((v >> 32) > n || n - (v >> 32) < 8)
			return ckpt_fsrc_fail(c->s, "%s offset %zu: timestamp at %" PRIu64 " outside the %s's %zu bytes",
					      c->what, at, v >> 32, c->what, n);
		return out_timestamp(c, t, (int64_t)le(p + (v >> 32), 8), (int32_t)v, at);
	case RD_DECIMAL:
		if (t->precision > 18)
			return emit_var(c, t, p, n, at, depth);
		for (int i = 0; i < 8; i++)
			be[i] = (unsigned char)(v >> (56 - 8 * i));
		return out_decimal(c, t, be, 8, at);
	case RD_UNKNOWN:
		return emit_untyped(c, t);
	default:
		return emit_var(c, t, p, n, at, depth);
	}
}

/* BinarySection.hashCode (BinaryRowData's, which keys of SQL state are): MurmurHashUtil's
 * hashBytesByWords, seed 42, over the bytes as native (little-endian) ints; 0 when n is not a
 * whole number of words (a row's size always is). */
static int
binary_hash(const unsigned char *p, size_t n, int32_t *hash)
{
	uint32_t h = 42;

	if (n % 4 != 0)
		return 0;
	for (size_t i = 0; i < n; i += 4)
		h = ckpt_murmur32_word(h, (uint32_t)ckpt_load_le(p + i, 4));
	*hash = (int32_t)ckpt_murmur32_final(h, (uint32_t)n);
	return 1;
}

/* An i32 length, then that many bytes of a binary row (array, map), decoded as t; a row's hash
 * (its hashCode) into *hash, *hashed set, when asked for (hash not NULL). */
static int
row_value(const struct ckpt_frow_type *t, struct ckpt_fsrc *s, struct ckpt_fout *o, int32_t *hash, int *hashed)
{
	struct rdc c = {s, o, t->root == RD_ROW ? "row" : t->root == RD_ARRAY ? "array" : "map"};
	const unsigned char *q;
	unsigned char *p;
	size_t n;
	int r;

	if (ckpt_fsrc_blob(s, &p, &n, c.what) < 0)
		return -1;
	q = p ? p : (const unsigned char *)"";
	if (hash && t->root == RD_ROW)
		*hashed = binary_hash(q, n, hash);
	r = t->root == RD_ROW ? emit_row(&c, t, q, n, 0) : t->root == RD_ARRAY ? emit_array(&c, t, q, n, 0)
									      : emit_map(&c, t, q, n, 0);
	free(p);
	return r;
}

/* LinkedListSerializer: i32 size, a null mask (high bit first) when flagged, the elements. */
static int
linked_list(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o, const struct ckpt_fser_ops *ops)
{
	struct rdc c = {s, o, "list"};
	unsigned char mask[8192];
	int32_t n, h;
	int hd;

	if (ckpt_fsrc_i32(s, &n, "list size") < 0)
		return -1;
	if (n < 0 || (t->flag && (size_t)n > 8 * sizeof mask))
		return ckpt_fsrc_fail(s, "list size %d", n);
	if (t->flag && ckpt_fsrc_read(s, mask, ((size_t)n + 7) / 8, "list null mask") < 0)
		return -1;
	if (open_c(&c, '[') < 0)
		return -1;
	for (int32_t i = 0; i < n; i++)
		if (t->flag && mask[i / 8] >> (7 - i % 8) & 1 ? put(&c, ckpt_fout_null(o)) < 0
							       : ops->emit(t->kids[0], s, o, &h, &hd) < 0)
			return -1;
	ckpt_fout_close(o);
	return 0;
}

/* RawValueDataSerializer: i32 length and the bytes of the nested serializer, kept. */
static int
raw_value(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o)
{
	struct rdc c = {s, o, "raw value"};
	struct ckpt_frow_type rt = {.root = RD_RAW, .name = t->nkids == 1 && t->kids[0] ? t->kids[0]->cls : "?"};
	unsigned char *p;
	size_t n;
	int r;

	if (ckpt_fsrc_blob(s, &p, &n, "raw value") < 0)
		return -1;
	r = emit_raw(&c, &rt, p ? p : (const unsigned char *)"", n);
	free(p);
	return r;
}

int
ckpt_frow_value(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o, int32_t *hash, int *hashed,
		   const struct ckpt_fser_ops *ops)
{
	struct rdc c = {s, o, "value"};
	const struct ckpt_fser *k = t->nkids == 1 ? t->kids[0] : NULL;
	unsigned char b[12], *p;
	size_t n;
	int32_t h;
	int hd, r;

	switch (t->kind) {
	case FSER_ROWDATA:
		return row_value(t->rd, s, o, hash, hashed);
	case FSER_ARRAYDATA: case FSER_MAPDATA:
		return row_value(t->rd, s, o, NULL, NULL);
	case FSER_LINKEDLIST:
		return linked_list(t, s, o, ops);
	case FSER_RAWDATA:
		return raw_value(t, s, o);
	case FSER_EXTERNAL: /* the internal serializer's value; a row named by the DataType's fields */
		if (t->rd && t->rd->root == RD_ROW && k && k->kind == FSER_ROWDATA && k->rd && k->rd->n == t->rd->n)
			return row_value(t->rd, s, o, NULL, NULL);
		return ops->emit(k, s, o, &h, &hd);
	case FSER_STRINGDATA:
		if (ckpt_fsrc_blob(s, &p, &n, "string") < 0)
			return -1;
		r = ckpt_utf8_valid(p ? p : b, n) ? put(&c, ckpt_fout_str(o, p ? (char *)p : "", n))
						   : put(&c, ckpt_fout_entry(o, p, n));
		free(p);
		return r;
	case FSER_TIMESTAMPDATA:
		if (ckpt_fsrc_read(s, b, t->rd->precision <= 3 ? 8 : 12, "timestamp") < 0)
			return -1;
		return out_timestamp(&c, t->rd, (int64_t)ckpt_be64(b), t->rd->precision <= 3 ? 0 : (int32_t)ckpt_be32(b + 8),
				     0);
	case FSER_DECIMALDATA:
		if (t->rd->precision <= 18) {
			if (ckpt_fsrc_read(s, b, 8, "decimal") < 0)
				return -1;
			return out_decimal(&c, t->rd, b, 8, 0);
		}
		if (ckpt_fsrc_blob(s, &p, &n, "decimal") < 0)
			return -1;
		r = out_decimal(&c, t->rd, p, n, 0);
		free(p);
		return r;
	default:
		return ckpt_fsrc_fail(s, "no value of %s", t->cls);
	}
}

/* The type's name in messages: LogicalTypeRoot's, with its precision where it has one. */
const char *
ckpt_frow_root_name(const struct ckpt_frow_type *t, char *buf, size_t n)
{
	const char *name = "an undecoded type";

	for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++)
		if (roots[i].root == t->root)
			name = roots[i].name;
	if (t->root == RD_DECIMAL)
		snprintf(buf, n, "%s(%d, %d)", name, t->precision, t->scale);
	else if (t->root == RD_TIMESTAMP || t->root == RD_TIMESTAMP_LTZ)
		snprintf(buf, n, "%s(%d)", name, t->precision);
	else
		snprintf(buf, n, "%s", name);
	return buf;
}
