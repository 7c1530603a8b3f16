/* avro.c: flink-avro's AvroSerializer: its snapshot (the class and the writer's schema), the
 * schema parsed with jansson, and values in the encoding of flink-avro's DataOutputEncoder. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "types.h"
#include "avro.h"

void
ckpt_fser_avro_free(void *p)
{
	struct ckpt_fser_avro_schema *sc = p;

	for (size_t i = 0; sc && i < sc->nall; i++) {
		struct ckpt_fser_avro_node *n = sc->all[i];

		for (size_t j = 0; j < n->nnames; j++)
			free(n->names[j]);
		free(n->names);
		free(n->kids);
		free(n->name);
		free(n);
	}
	if (sc)
		free(sc->all);
	free(sc);
}

/* ---------------------------------------------------------------- the schema */

static struct ckpt_fser_avro_node *parse(struct ckpt_fser_avro_schema *sc, json_t *j, const char *ns, int depth);

static struct ckpt_fser_avro_node *
node_new(struct ckpt_fser_avro_schema *sc, enum ckpt_fser_avro_type type)
{
	struct ckpt_fser_avro_node *n;

	if (ckpt_grow(&sc->all, &sc->cap, sc->nall + 1, sizeof *sc->all, 16, NULL) < 0)
		return NULL;
	if ((n = calloc(1, sizeof *n)) == NULL)
		return NULL;
	n->type = type;
	sc->all[sc->nall++] = n;
	return n;
}

static struct ckpt_fser_avro_node *
bad(struct ckpt_fser_avro_schema *sc, const char *what, const char *name)
{
	if (!sc->why[0])
		snprintf(sc->why, sizeof sc->why, "%s%s%s", what, name ? " " : "", name ? name : "");
	return NULL;
}

static int
grow_kid(struct ckpt_fser_avro_node *n, struct ckpt_fser_avro_node *k, char *name)
{
	if (ckpt_grow(&n->kids, &n->kidcap, n->nkids + 1, sizeof *n->kids, 4, NULL) < 0)
		return -1;
	n->kids[n->nkids++] = k;
	if (name) {
		if (ckpt_grow(&n->names, &n->namecap, n->nnames + 1, sizeof *n->names, 4, NULL) < 0)
			return -1;
		n->names[n->nnames++] = name;
	}
	return 0;
}

static int
add_name(struct ckpt_fser_avro_node *n, const char *s)
{
	if (ckpt_grow(&n->names, &n->namecap, n->nnames + 1, sizeof *n->names, 4, NULL) < 0)
		return -1;
	if ((n->names[n->nnames] = strdup(s)) == NULL)
		return -1;
	n->nnames++;
	return 0;
}

/* A name in namespace ns made full (malloc'd). */
static char *
full_name(const char *name, const char *ns)
{
	char *f;

	if (strchr(name, '.') || ns == NULL || !*ns)
		return strdup(name);
	if ((f = malloc(strlen(ns) + strlen(name) + 2)) != NULL)
		sprintf(f, "%s.%s", ns, name);
	return f;
}

static struct ckpt_fser_avro_node *
find_named(struct ckpt_fser_avro_schema *sc, const char *name, const char *ns)
{
	char *f = full_name(name, ns);
	struct ckpt_fser_avro_node *hit = NULL;

	for (size_t i = 0; f && i < sc->nall && !hit; i++)
		if (sc->all[i]->name && (strcmp(sc->all[i]->name, f) == 0 || strcmp(sc->all[i]->name, name) == 0))
			hit = sc->all[i];
	free(f);
	return hit;
}

static const char *const prim[] = {
	[A_NULL] = "null", [A_BOOL] = "boolean", [A_INT] = "int", [A_LONG] = "long", [A_FLOAT] = "float",
	[A_DOUBLE] = "double", [A_BYTES] = "bytes", [A_STRING] = "string",
};

/* The logical type of n from its object j; one on a base type it does not fit is ignored, as
 * Avro ignores it. */
static void
logical(struct ckpt_fser_avro_node *n, json_t *j)
{
	const char *l = json_string_value(json_object_get(j, "logicalType"));
	json_t *scale = json_object_get(j, "scale");

	if (l == NULL)
		return;
	if (strcmp(l, "decimal") == 0 && (n->type == A_BYTES || n->type == A_FIXED)) {
		if (scale && (!json_is_integer(scale) || json_integer_value(scale) < 0 ||
			      json_integer_value(scale) > 1000))
			return;
		n->scale = scale ? (int)json_integer_value(scale) : 0;
		n->logical = L_DECIMAL;
	} else if (n->type == A_INT) {
		n->logical = strcmp(l, "date") == 0 ? L_DATE : strcmp(l, "time-millis") == 0 ? L_TIME_MS : L_NONE;
	} else if (n->type == A_LONG) {
		n->logical = strcmp(l, "time-micros") == 0 ? L_TIME_US : strcmp(l, "timestamp-millis") == 0 ? L_TS_MS :
			strcmp(l, "timestamp-micros") == 0 ? L_TS_US : strcmp(l, "local-timestamp-millis") == 0 ? L_LTS_MS :
			strcmp(l, "local-timestamp-micros") == 0 ? L_LTS_US : L_NONE;
	}
}

/* A record, enum or fixed: named (registered before its fields, which may refer to it). */
static struct ckpt_fser_avro_node *
parse_named(struct ckpt_fser_avro_schema *sc, json_t *j, const char *type, const char *ns, int depth)
{
	const char *name = json_string_value(json_object_get(j, "name"));
	const char *space = json_string_value(json_object_get(j, "namespace"));
	enum ckpt_fser_avro_type t = strcmp(type, "enum") == 0 ? A_ENUM : strcmp(type, "fixed") == 0 ? A_FIXED : A_RECORD;
	struct ckpt_fser_avro_node *n;
	json_t *a, *x;
	size_t i;

	if (name == NULL)
		return bad(sc, "a schema without a name of its", type);
	if ((n = node_new(sc, t)) == NULL || (n->name = full_name(name, space ? space : ns)) == NULL)
		return bad(sc, "out of memory", NULL);
	if (t == A_FIXED) {
		x = json_object_get(j, "size");
		if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) > AVRO_FIXED_MAX)
			return bad(sc, "a fixed of a size ckpt does not take:", n->name);
		n->size = (size_t)json_integer_value(x);
		logical(n, j);
		return n;
	}
	a = json_object_get(j, t == A_ENUM ? "symbols" : "fields");
	if (!json_is_array(a))
		return bad(sc, "no symbols or fields in", n->name);
	json_array_foreach(a, i, x) {
		const char *fname = json_string_value(t == A_ENUM ? x : json_object_get(x, "name"));
		const char *dot = strrchr(n->name, '.');
		char *space_of = NULL, *copy; /* the namespace of what it holds: its name up to the last dot */
		struct ckpt_fser_avro_node *k;

		if (fname == NULL)
			return bad(sc, "a symbol or field without a name in", n->name);
		if (t == A_ENUM) {
			if (add_name(n, fname) < 0)
				return bad(sc, "out of memory", NULL);
			continue;
		}
		if (dot && (space_of = strndup(n->name, (size_t)(dot - n->name))) == NULL)
			return bad(sc, "out of memory", NULL);
		k = parse(sc, json_object_get(x, "type"), space_of, depth + 1);
		free(space_of);
		if (k == NULL)
			return NULL;
		if ((copy = strdup(fname)) == NULL || grow_kid(n, k, copy) < 0) {
			free(copy);
			return bad(sc, "out of memory", NULL);
		}
	}
	return n;
}

static struct ckpt_fser_avro_node *
parse(struct ckpt_fser_avro_schema *sc, json_t *j, const char *ns, int depth)
{
	const char *type;
	struct ckpt_fser_avro_node *n;
	size_t i;
	json_t *x;

	if (depth > AVRO_DEPTH)
		return bad(sc, "a schema nested too deep", NULL);
	if (json_is_array(j)) { /* a union */
		if ((n = node_new(sc, A_UNION)) == NULL)
			return bad(sc, "out of memory", NULL);
		json_array_foreach(j, i, x) {
			struct ckpt_fser_avro_node *k = parse(sc, x, ns, depth + 1);

			if (k == NULL)
				return NULL;
			if (grow_kid(n, k, NULL) < 0)
				return bad(sc, "out of memory", NULL);
		}
		return n;
	}
	type = json_is_string(j) ? json_string_value(j) : json_string_value(json_object_get(j, "type"));
	if (json_is_object(j) && type == NULL) /* {"type": a schema} */
		return parse(sc, json_object_get(j, "type"), ns, depth + 1);
	if (type == NULL)
		return bad(sc, "a schema that is no name, object or array", NULL);
	for (i = 0; i < sizeof prim / sizeof *prim; i++)
		if (strcmp(type, prim[i]) == 0) {
			if ((n = node_new(sc, (enum ckpt_fser_avro_type)i)) == NULL)
				return bad(sc, "out of memory", NULL);
			if (json_is_object(j))
				logical(n, j);
			return n;
		}
	if (json_is_string(j))
		return (n = find_named(sc, type, ns)) ? n : bad(sc, "an unknown type", type);
	if (strcmp(type, "array") == 0 || strcmp(type, "map") == 0) {
		struct ckpt_fser_avro_node *k;

		if ((n = node_new(sc, type[0] == 'a' ? A_ARRAY : A_MAP)) == NULL)
			return bad(sc, "out of memory", NULL);
		if ((k = parse(sc, json_object_get(j, type[0] == 'a' ? "items" : "values"), ns, depth + 1)) == NULL)
			return NULL;
		return grow_kid(n, k, NULL) < 0 ? bad(sc, "out of memory", NULL) : n;
	}
	if (strcmp(type, "record") == 0 || strcmp(type, "error") == 0 || strcmp(type, "enum") == 0 ||
	    strcmp(type, "fixed") == 0)
		return parse_named(sc, j, type, ns, depth);
	return (n = find_named(sc, type, ns)) ? n : bad(sc, "an unknown type", type);
}

/* A string of the snapshot: writeUTF before version 3, StringValue's from it (malloc'd). */
static int
snapshot_string(struct ckpt_fsrc *s, int version, char **out, const char *what, const struct ckpt_fser_ops *ops)
{
	struct ckpt_fser str = {.kind = FSER_STRING};
	json_t *v;
	int32_t h;
	int hd;

	if (version < 3)
		return ckpt_fsrc_utf(s, out, what);
	if (ops->value(&str, s, &v, &h, &hd) < 0)
		return -1;
	*out = json_is_string(v) ? strdup(json_string_value(v)) : NULL;
	json_decref(v);
	if (*out == NULL)
		return v ? ckpt_fsrc_nomem(s) : ckpt_fsrc_fail(s, "a null %s", what);
	return 0;
}

int
ckpt_fser_avro_snapshot(struct ckpt_fsrc *s, struct ckpt_fser *t, const struct ckpt_fser_ops *ops)
{
	struct ckpt_fser_avro_schema *sc;
	json_error_t je;
	char *text = NULL;
	json_t *j;

	if (t->version < 1 || t->version > 3) {
		t->kind = FSER_UNKNOWN;
		return 1;
	}
	if (t->version > 1 && snapshot_string(s, t->version, &t->name, "Avro runtime class", ops) < 0)
		return -1;
	if (snapshot_string(s, t->version, &text, "Avro schema", ops) < 0)
		return -1;
	j = json_loads(text, JSON_DECODE_ANY, &je);
	free(text);
	if (j == NULL)
		return ckpt_fsrc_fail(s, "Avro schema not JSON: %s", je.text);
	if ((sc = calloc(1, sizeof *sc)) == NULL) {
		json_decref(j);
		return ckpt_fsrc_nomem(s);
	}
	t->ext = sc;
	sc->root = parse(sc, j, NULL, 0);
	json_decref(j);
	if (sc->root == NULL && strcmp(sc->why, "out of memory") == 0)
		return ckpt_fsrc_nomem(s);
	if (sc->root == NULL) /* stepped over, its values not decoded: the state stays untyped */
		t->kind = FSER_OPAQUE;
	if (t->name == NULL && sc->root && sc->root->name && (t->name = strdup(sc->root->name)) == NULL)
		return ckpt_fsrc_nomem(s);
	return 0;
}

/* ---------------------------------------------------------------- values */

/* date "YYYY-MM-DD" (other years signed, as Java's LocalDate writes them); time "HH:MM:SS.fff"; timestamps "YYYY-MM-DDTHH:MM:SS.fff" with "Z" (UTC) or
 * without (local), fractions of 3 digits (millis) or 6 (micros). */
static int
datetime(struct ckpt_fsrc *s, struct ckpt_fout *o, enum ckpt_fser_avro_logical l, int64_t v)
{
	int64_t unit = l == L_TIME_US || l == L_TS_US || l == L_LTS_US ? 1000000 : 1000, day = 86400 * unit;
	int64_t days = l == L_DATE ? v : l == L_TIME_MS || l == L_TIME_US ? 0 : ckpt_floordiv(v, day), y, rest;
	unsigned m, d;
	char b[64];
	int k = 0;

	rest = l == L_DATE ? 0 : v - days * day;
	if (l == L_TIME_MS || l == L_TIME_US) {
		if (v < 0 || v >= day)
			return ckpt_fsrc_fail(s, "Avro time %lld beyond a day", (long long)v);
	} else {
		ckpt_civil(days, &y, &m, &d);
		k = snprintf(b, sizeof b, y >= 0 && y <= 9999 ? "%04lld-%02u-%02u" : "%+05lld-%02u-%02u", (long long)y, m, d);
		if (l == L_DATE)
			return ckpt_fout_str(o, b, (size_t)k) < 0 ? ckpt_fsrc_nomem(s) : 0;
		b[k++] = 'T';
	}
	k += snprintf(b + k, sizeof b - (size_t)k, "%02lld:%02lld:%02lld.%0*lld", (long long)(rest / unit / 3600),
		      (long long)(rest / unit / 60 % 60), (long long)(rest / unit % 60), unit == 1000 ? 3 : 6,
		      (long long)(rest % unit));
	if (l == L_TS_MS || l == L_TS_US)
		b[k++] = 'Z';
	return ckpt_fout_str(o, b, (size_t)k) < 0 ? ckpt_fsrc_nomem(s) : 0;
}

/* A decimal: the big-endian two's complement unscaled value p[0, n) and the scale, as
 * BigDecimal.toPlainString writes it. */
static int
decimal(struct ckpt_fsrc *s, struct ckpt_fout *o, const unsigned char *p, size_t n, int scale)
{
	char *text;
	int nd, r;

	if (n == 0 || n > AVRO_DECIMAL_MAX)
		return ckpt_fsrc_fail(s, "Avro decimal of %zu bytes", n);
	if ((text = ckpt_fout_decimal_text(p, n, scale, &nd)) == NULL)
		return ckpt_fsrc_nomem(s);
	r = ckpt_fout_str(o, text, strlen(text));
	free(text);
	return r < 0 ? ckpt_fsrc_nomem(s) : 0;
}

static int
real(struct ckpt_fsrc *s, struct ckpt_fout *o, double d)
{
	int r;

	if (isnan(d))
		r = ckpt_fout_str(o, "NaN", 3);
	else if (isinf(d))
		r = d > 0 ? ckpt_fout_str(o, "Infinity", 8) : ckpt_fout_str(o, "-Infinity", 9);
	else
		r = o->mode == FOUT_NONE ? 0 : ckpt_fout_json(o, json_real(d));
	return r < 0 ? ckpt_fsrc_nomem(s) : 0;
}

/* Whether a value of n can take no bytes (null, a record of such), so that a block count alone
 * cannot be trusted to end. */
static int
zero_width(const struct ckpt_fser_avro_node *n, int depth)
{
	if (n->type == A_NULL || (n->type == A_FIXED && n->size == 0))
		return 1;
	if (n->type != A_RECORD || depth > AVRO_DEPTH)
		return 0;
	for (size_t i = 0; i < n->nkids; i++)
		if (!zero_width(n->kids[i], depth + 1))
			return 0;
	return 1;
}

/* DataOutputEncoder's block count: a varint of 7 bits a byte, low first (0 ends the items). */
static int
block_count(struct ckpt_fsrc *s, const struct ckpt_fser_avro_node *item, uint64_t *n)
{
	uint64_t x = 0;
	uint8_t b;

	for (int shift = 0;; shift += 7) {
		if (ckpt_fsrc_u8(s, &b, "Avro block count") < 0)
			return -1;
		if (shift > 56)
			return ckpt_fsrc_fail(s, "Avro block count longer than 63 bits");
		x |= (uint64_t)(b & 0x7f) << shift;
		if (b < 0x80)
			break;
	}
	if (x > INT32_MAX || (x > AVRO_NULLS_MAX && zero_width(item, 0)))
		return ckpt_fsrc_fail(s, "Avro block of %llu items", (unsigned long long)x);
	*n = x;
	return 0;
}

static int avalue(const struct ckpt_fser_avro_node *n, struct ckpt_fsrc *s, struct ckpt_fout *o, int depth);

/* An array's or map's blocks: a count, that many items (a map's each a key and a value), ... 0. */
static int
blocks(const struct ckpt_fser_avro_node *n, struct ckpt_fsrc *s, struct ckpt_fout *o, int depth)
{
	uint64_t count = 0;

	if (ckpt_fout_open(o, n->type == A_ARRAY ? '[' : '{') < 0)
		return ckpt_fsrc_nomem(s);
	for (;;) {
		if (block_count(s, n->kids[0], &count) < 0)
			return -1;
		if (count == 0)
			break;
		for (uint64_t i = 0; i < count; i++) {
			unsigned char *k = NULL;
			char *key = NULL;
			size_t kn;
			int r;

			if (n->type == A_MAP) {
				if (ckpt_fsrc_blob(s, &k, &kn, "Avro map key") < 0)
					return -1;
				if (!ckpt_utf8_valid(k, kn) || (kn && memchr(k, 0, kn))) {
					free(k);
					return ckpt_fsrc_fail(s, "Avro map key not UTF-8 or with a NUL");
				}
				key = strndup(kn ? (const char *)k : "", kn); /* a key is a C string */
				free(k);
				if (key == NULL)
					return ckpt_fsrc_nomem(s);
				ckpt_fout_key(o, key);
			}
			r = avalue(n->kids[0], s, o, depth + 1);
			free(key);
			if (r < 0)
				return -1;
		}
	}
	ckpt_fout_close(o);
	return 0;
}

static int
record(const struct ckpt_fser_avro_node *n, struct ckpt_fsrc *s, struct ckpt_fout *o, int depth)
{
	if (ckpt_fout_open(o, '{') < 0)
		return ckpt_fsrc_nomem(s);
	for (size_t i = 0; i < n->nkids; i++) {
		ckpt_fout_key(o, n->names[i]);
		if (avalue(n->kids[i], s, o, depth + 1) < 0)
			return -1;
	}
	ckpt_fout_close(o);
	return 0;
}

/* bytes (an i32 length, then them) or fixed (the schema's size): an entry, or a decimal. */
static int
bytes(const struct ckpt_fser_avro_node *n, struct ckpt_fsrc *s, struct ckpt_fout *o)
{
	unsigned char *p = NULL;
	size_t len = n->size;
	int r;

	if (n->type == A_BYTES ? ckpt_fsrc_blob(s, &p, &len, "Avro bytes") < 0 :
	    (p = malloc(len ? len : 1)) == NULL ? ckpt_fsrc_nomem(s) : ckpt_fsrc_read(s, p, len, "Avro fixed") < 0) {
		free(p);
		return -1;
	}
	if (n->logical == L_DECIMAL)
		r = decimal(s, o, p, len, n->scale);
	else
		r = ckpt_fout_entry(o, p ? p : (const unsigned char *)"", len) < 0 ? ckpt_fsrc_nomem(s) : 0;
	free(p);
	return r;
}

/* An i32 index into n of names or kids (an enum symbol, a union branch). */
static int
index_of(struct ckpt_fsrc *s, size_t n, const char *what, int32_t *i)
{
	if (ckpt_fsrc_i32(s, i, what) < 0)
		return -1;
	if (*i < 0 || (size_t)*i >= n)
		return ckpt_fsrc_fail(s, "%s %d of %zu", what, *i, n);
	return 0;
}

static int
avalue(const struct ckpt_fser_avro_node *n, struct ckpt_fsrc *s, struct ckpt_fout *o, int depth)
{
	unsigned char *p;
	int64_t l;
	int32_t i;
	size_t len;
	uint8_t b;
	double d;
	float f;
	int r;

	if (depth > AVRO_DEPTH)
		return ckpt_fsrc_fail(s, "Avro value nested more than %d deep", AVRO_DEPTH);
	switch (n->type) {
	case A_NULL:
		return ckpt_fout_null(o) < 0 ? ckpt_fsrc_nomem(s) : 0;
	case A_BOOL:
		if (ckpt_fsrc_u8(s, &b, "Avro boolean") < 0)
			return -1;
		if (b > 1)
			return ckpt_fsrc_fail(s, "Avro boolean %u (0 or 1 expected)", b);
		return ckpt_fout_bool(o, b) < 0 ? ckpt_fsrc_nomem(s) : 0;
	case A_INT:
		if (ckpt_fsrc_i32(s, &i, "Avro int") < 0)
			return -1;
		if (n->logical != L_NONE)
			return datetime(s, o, n->logical, i);
		return ckpt_fout_int(o, i) < 0 ? ckpt_fsrc_nomem(s) : 0;
	case A_LONG:
		if (ckpt_fsrc_i64(s, &l, "Avro long") < 0)
			return -1;
		if (n->logical != L_NONE)
			return datetime(s, o, n->logical, l);
		return ckpt_fout_int(o, l) < 0 ? ckpt_fsrc_nomem(s) : 0;
	case A_FLOAT:
		if (ckpt_fsrc_i32(s, &i, "Avro float") < 0)
			return -1;
		memcpy(&f, &i, 4);
		return real(s, o, f);
	case A_DOUBLE:
		if (ckpt_fsrc_i64(s, &l, "Avro double") < 0)
			return -1;
		memcpy(&d, &l, 8);
		return real(s, o, d);
	case A_STRING:
		if (ckpt_fsrc_blob(s, &p, &len, "Avro string") < 0)
			return -1;
		if (!ckpt_utf8_valid(p, len)) {
			free(p);
			return ckpt_fsrc_fail(s, "Avro string not UTF-8");
		}
		r = ckpt_fout_str(o, p ? (const char *)p : "", len) < 0 ? ckpt_fsrc_nomem(s) : 0;
		free(p);
		return r;
	case A_BYTES: case A_FIXED:
		return bytes(n, s, o);
	case A_ENUM:
		if (index_of(s, n->nnames, "Avro enum index", &i) < 0)
			return -1;
		return ckpt_fout_str(o, n->names[i], strlen(n->names[i])) < 0 ? ckpt_fsrc_nomem(s) : 0;
	case A_UNION:
		if (index_of(s, n->nkids, "Avro union branch", &i) < 0)
			return -1;
		return avalue(n->kids[i], s, o, depth + 1);
	case A_ARRAY: case A_MAP:
		return blocks(n, s, o, depth);
	default:
		return record(n, s, o, depth);
	}
}

int
ckpt_fser_avro_value(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o)
{
	const struct ckpt_fser_avro_schema *sc = t->ext;

	if (sc == NULL || sc->root == NULL)
		return ckpt_fsrc_fail(s, "Avro value of %s without a schema ckpt reads", t->name ? t->name : "?");
	return avalue(sc->root, s, o, 0);
}
