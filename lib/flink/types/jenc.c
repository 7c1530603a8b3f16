/* jenc.c: Java-serialized values (Flink's JavaSerializer) written from the rows -R prints of them,
 * for ckpt-merge --rows: by the state's own values, which the caller reads: a row's value equal to
 * one of them as its bytes; a changed one built from them, class descriptors and all, and written
 * by javaser-write.c.  What the rows do not say (which of two classes that print alike, what a
 * writeObject wrote) is refused, naming it. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "types.h"

#define JAVA_DEPTH 48 /* nesting of a Java-serialized value, as jvalue.c reads them */

#define FJAVA_BYTES ((size_t)64 << 20) /* the bytes of a state's values kept to write new ones by */

/* One value of the state: its stream and its row's value (compact, keys sorted). */
struct fjt {
	unsigned char *p;
	size_t n;
	char *dump;
};

struct ckpt_fjava {
	struct fjt *t;
	size_t n, cap, bytes;
	int full, sorted;
	struct ckpt_javaser **rd; /* the values parsed (on the first changed one), a reader each */
	const struct ckpt_javaser_value **top;
	size_t nrd;
	const struct ckpt_javaser_value **byclass; /* a value of each class the values hold */
	size_t ncls, clscap;
};

struct ckpt_fjava *
ckpt_fjava_new(struct ckpt_err *e)
{
	return ckpt_calloc(1, sizeof(struct ckpt_fjava), e);
}

void
ckpt_fjava_free(struct ckpt_fjava *j)
{
	if (j == NULL)
		return;
	for (size_t i = 0; i < j->n; i++) {
		free(j->t[i].p);
		free(j->t[i].dump);
	}
	for (size_t i = 0; i < j->nrd; i++)
		ckpt_javaser_free(j->rd[i]);
	free(j->rd);
	free(j->top);
	free(j->byclass);
	free(j->t);
	free(j);
}

int
ckpt_fjava_add(struct ckpt_fjava *j, const unsigned char *p, size_t n, const json_t *typed, struct ckpt_err *e)
{
	struct fjt *t;

	if (j->full || j->bytes + n > FJAVA_BYTES) {
		j->full = 1;
		return 0;
	}
	if (ckpt_grow(&j->t, &j->cap, j->n + 1, sizeof *j->t, 64, e) < 0)
		return -1;
	t = &j->t[j->n];
	if ((t->p = malloc(n ? n : 1)) == NULL ||
	    (t->dump = json_dumps(typed, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY)) == NULL) {
		free(t->p);
		return ckpt_err_nomem(e, "");
	}
	memcpy(t->p, p, n);
	t->n = n;
	j->n++;
	j->bytes += n;
	j->sorted = 0;
	return 0;
}

static int
cmp_fjt(const void *a, const void *b)
{
	return strcmp(((const struct fjt *)a)->dump, ((const struct fjt *)b)->dump);
}

/* Every value of the class of v and within it, the first of each class kept in byclass. */
static int
classes_of(struct ckpt_fjava *j, const struct ckpt_javaser_value *v, int depth)
{
	size_t i;

	if (v == NULL || depth > JAVA_DEPTH || v->kind == CKPT_JAVASER_PRIM || v->kind == CKPT_JAVASER_NULL ||
	    v->kind == CKPT_JAVASER_BLOCK || v->kind == CKPT_JAVASER_STRING)
		return 0;
	for (i = 0; i < j->ncls && strcmp(j->byclass[i]->cls->name, v->cls->name) != 0; i++)
		;
	if (i < j->ncls)
		return 0; /* seen: so are its parts, but for values of other shapes: enough */
	if (ckpt_grow(&j->byclass, &j->clscap, j->ncls + 1, sizeof *j->byclass, 16, NULL) < 0)
		return -1;
	j->byclass[j->ncls++] = v;
	for (i = 0; v->kind == CKPT_JAVASER_ARRAY && i < v->n; i++)
		if (classes_of(j, v->items[i], depth + 1) < 0)
			return -1;
	for (i = 0; v->kind == CKPT_JAVASER_OBJECT && i < v->n; i++) {
		for (size_t k = 0; k < v->data[i].cls->nfields; k++)
			if (classes_of(j, v->data[i].fields[k], depth + 1) < 0)
				return -1;
		for (size_t k = 0; k < v->data[i].nextra; k++)
			if (classes_of(j, v->data[i].extra[k], depth + 1) < 0)
				return -1;
	}
	return 0;
}

/* The state's values parsed, for their classes. */
static int
parse_all(struct ckpt_fjava *j)
{
	struct ckpt_err e = {0};

	if (j->rd || j->n == 0)
		return 0;
	if ((j->rd = calloc(j->n, sizeof *j->rd)) == NULL || (j->top = calloc(j->n, sizeof *j->top)) == NULL)
		return -1;
	for (size_t i = 0; i < j->n; i++) {
		size_t pos = 0;

		if ((j->rd[i] = ckpt_javaser_new(j->t[i].p, j->t[i].n, "", 0, JAVA_DEPTH, &e)) == NULL)
			return -1;
		j->nrd++;
		if (ckpt_javaser_header(j->rd[i], &pos) < 0 || ckpt_javaser_read(j->rd[i], &pos, &j->top[i]) < 0)
			j->top[i] = NULL; /* read before: cannot be */
		else if (classes_of(j, j->top[i], 0) < 0)
			return -1;
	}
	return 0;
}

/* A changed value built from the state's: the new parts allocated here, the rest the state's. */
struct jb {
	struct ckpt_fjava *j;
	void **mem;
	size_t nmem, memcap;
	char *why;
	size_t whyn;
};

static void *
jb_alloc(struct jb *b, size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (p && ckpt_grow(&b->mem, &b->memcap, b->nmem + 1, sizeof *b->mem, 16, NULL) < 0) {
		free(p);
		p = NULL;
	}
	if (p == NULL)
		snprintf(b->why, b->whyn, "out of memory");
	else
		b->mem[b->nmem++] = p;
	return p;
}

static struct ckpt_javaser_value *
jb_value(struct jb *b, enum ckpt_javaser_kind kind)
{
	struct ckpt_javaser_value *v = jb_alloc(b, 1, sizeof *v);

	if (v) {
		v->kind = kind;
		v->handle = SIZE_MAX;
	}
	return v;
}

static const struct ckpt_javaser_value *jb_fail(struct jb *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static const struct ckpt_javaser_value *
jb_fail(struct jb *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b->why, b->whyn, fmt, ap);
	va_end(ap);
	return NULL;
}

static int
same(const json_t *x, const struct ckpt_javaser_value *v)
{
	json_t *r = ckpt_fjava_render(v);
	int eq = r && json_equal(r, x);

	json_decref(r);
	return eq;
}

/* A primitive of type t from x: NULL when x is not one of its range. */
static struct ckpt_javaser_value *
jb_prim(struct jb *b, char t, const json_t *x)
{
	static const char *const types = "BSIJ";
	static const int64_t lo[] = {INT8_MIN, INT16_MIN, INT32_MIN, INT64_MIN}, hi[] = {INT8_MAX, INT16_MAX, INT32_MAX,
											INT64_MAX};
	struct ckpt_javaser_value *v;
	const char *k = strchr(types, t);
	const char *s = json_string_value(x);
	double d;

	if (k && (!json_is_integer(x) || json_integer_value(x) < lo[k - types] || json_integer_value(x) > hi[k - types]))
		return NULL;
	if ((t == 'Z' && !json_is_boolean(x)) || ((t == 'D' || t == 'F') && ckpt_json_real(x, &d) < 0) ||
	    (t == 'C' && (s == NULL || strlen(s) != 1 || (unsigned char)*s >= 0x80)))
		return NULL;
	if ((v = jb_value(b, CKPT_JAVASER_PRIM)) == NULL)
		return NULL;
	v->type = t;
	v->i = k ? json_integer_value(x) : t == 'Z' ? json_is_true(x) : t == 'C' ? (unsigned char)*s : 0;
	v->d = t == 'D' || t == 'F' ? d : 0;
	return v;
}

static const struct ckpt_javaser_value *build(struct jb *b, const json_t *x, const struct ckpt_javaser_value *p,
					      int depth);

/* The state's value of class cls, or NULL. */
static const struct ckpt_javaser_value *
of_class(const struct ckpt_fjava *j, const char *cls)
{
	for (size_t i = 0; i < j->ncls; i++)
		if (strcmp(j->byclass[i]->cls->name, cls) == 0)
			return j->byclass[i];
	return NULL;
}

/* A boxed number, boolean or character of p's class holding x (NULL: p is not boxed, or x does
 * not fit it; b->why set when it does not fit). */
static const struct ckpt_javaser_value *
boxed(struct jb *b, const json_t *x, const struct ckpt_javaser_value *p)
{
	static const char *const cls[] = {"java.lang.Integer", "java.lang.Long", "java.lang.Short", "java.lang.Byte",
					  "java.lang.Double", "java.lang.Float", "java.lang.Boolean", "java.lang.Character"};
	struct ckpt_javaser_value *v;
	struct ckpt_javaser_classdata *d;
	const struct ckpt_javaser_value *f = ckpt_javaser_field(p, "value");
	size_t i = 0;

	while (i < 8 && strcmp(p->cls->name, cls[i]) != 0)
		i++;
	if (i == 8 || f == NULL || f->kind != CKPT_JAVASER_PRIM || p->n == 0)
		return NULL;
	if ((v = jb_value(b, CKPT_JAVASER_OBJECT)) == NULL || (d = jb_alloc(b, p->n, sizeof *d)) == NULL)
		return NULL;
	*v = *p;
	v->data = d;
	memcpy(d, p->data, p->n * sizeof *d);
	d = &d[p->n - 1]; /* the class itself: its one field, value */
	if (d->cls->nfields != 1 || (d->fields = jb_alloc(b, 1, sizeof *d->fields)) == NULL)
		return NULL;
	if ((d->fields[0] = jb_prim(b, f->type, x)) == NULL)
		return jb_fail(b, "a value of %s", p->cls->name);
	return v;
}

/* The key -R prints field k of class data i of v by (object() above). */
static const char *
field_key(const struct ckpt_javaser_value *v, size_t i, size_t k, char *q, size_t qn)
{
	const char *name = v->data[i].cls->fields[k].name, *simple;
	int shadowed = strcmp(name, "class") == 0 || strcmp(name, "written") == 0;

	for (size_t j = i + 1; j < v->n && !shadowed; j++)
		for (size_t m = 0; m < v->data[j].cls->nfields && !shadowed; m++)
			shadowed = strcmp(v->data[j].cls->fields[m].name, name) == 0;
	if (!shadowed)
		return name;
	simple = strrchr(v->data[i].cls->name, '.');
	snprintf(q, qn, "%s.%s", simple ? simple + 1 : v->data[i].cls->name, name);
	return q;
}

/* A field of declared signature sig given as x, by the state's value f of it (or, f null, another
 * of x's class). */
static const struct ckpt_javaser_value *
field_value(struct jb *b, const json_t *x, const struct ckpt_javaser_value *f, const char *sig, int depth)
{
	char cls[512];
	size_t n = sig ? strlen(sig) : 0;

	const struct ckpt_javaser_value *v;

	if (f->kind == CKPT_JAVASER_PRIM)
		return (v = jb_prim(b, f->type, x)) ? v : jb_fail(b, "a value of a field of type %s", (char[2]){f->type, 0});
	if (f->kind != CKPT_JAVASER_NULL || json_is_null(x))
		return build(b, x, f, depth + 1);
	if (json_is_string(x) && sig && strcmp(sig, "Ljava/lang/String;") == 0) {
		struct ckpt_javaser_value *s = jb_value(b, CKPT_JAVASER_STRING);

		if (s) {
			s->str = json_string_value(x);
			s->len = strlen(s->str);
		}
		return s;
	}
	if (json_is_object(x) && json_is_string(json_object_get(x, "class")))
		return build(b, x, NULL, depth + 1);
	if (n > 2 && sig[0] == 'L' && n - 2 < sizeof cls) { /* by the field's declared class */
		for (size_t i = 0; i < n - 2; i++)
			cls[i] = sig[i + 1] == '/' ? '.' : sig[i + 1];
		cls[n - 2] = '\0';
		if (of_class(b->j, cls))
			return build(b, x, of_class(b->j, cls), depth + 1);
	}
	return jb_fail(b, "a value of a field of type %s the state holds a value of", sig ? sig : "?");
}

/* A plain object of p's class given as x ({"class", its fields, "written" as it was}). */
static const struct ckpt_javaser_value *
object_value(struct jb *b, const json_t *x, const struct ckpt_javaser_value *p, int depth)
{
	struct ckpt_javaser_value *v = jb_value(b, CKPT_JAVASER_OBJECT);
	struct ckpt_javaser_classdata *d = v ? jb_alloc(b, p->n, sizeof *d) : NULL;
	size_t want = 1, extra = 0;
	char q[600];

	if (d == NULL)
		return NULL;
	*v = *p;
	v->data = d;
	for (size_t i = 0; i < p->n; i++) {
		d[i] = p->data[i];
		extra += d[i].nextra;
		if ((d[i].fields = jb_alloc(b, d[i].cls->nfields, sizeof *d[i].fields)) == NULL)
			return NULL;
		for (size_t k = 0; k < d[i].cls->nfields; k++, want++) {
			const json_t *m = json_object_get(x, field_key(p, i, k, q, sizeof q));

			if (m == NULL)
				return jb_fail(b, "an object of the fields of %s", p->cls->name);
			if ((d[i].fields[k] = (struct ckpt_javaser_value *)(uintptr_t)field_value(b, m, p->data[i].fields[k],
													    d[i].cls->fields[k].sig, depth)) == NULL)
				return NULL;
		}
	}
	if (extra && (!json_object_get(x, "written") || !json_is_array(json_object_get(x, "written"))))
		return jb_fail(b, "%s's \"written\" as it was (what its writeObject wrote)", p->cls->name);
	if (extra) { /* kept as it was: ckpt does not write what a writeObject writes */
		json_t *w = json_object_get(x, "written"), *r;
		size_t at = 0;
		int eq = 1;

		for (size_t i = 0; i < p->n && eq; i++)
			for (size_t k = 0; k < p->data[i].nextra && eq; k++, at++)
				eq = (r = ckpt_fjava_render(p->data[i].extra[k])) && json_equal(r, json_array_get(w, at)), json_decref(r);
		if (!eq || json_array_size(w) != extra)
			return jb_fail(b, "%s's \"written\" as it was (what its writeObject wrote)", p->cls->name);
		want++;
	}
	if (json_object_size(x) != want)
		return jb_fail(b, "an object of the fields of %s", p->cls->name);
	return v;
}

/* An array of p's class given as x (byte[] as an entry). */
static const struct ckpt_javaser_value *
array_value(struct jb *b, const json_t *x, const struct ckpt_javaser_value *p, int depth)
{
	struct ckpt_javaser_value *v = jb_value(b, CKPT_JAVASER_ARRAY);
	char t = p->cls->name[1];
	unsigned char *bytes = NULL;
	size_t n = json_array_size(x);

	if (v == NULL)
		return NULL;
	*v = *p;
	if (t == 'B' && ckpt_entry_from_json(x, &bytes, &n, NULL) < 0)
		return jb_fail(b, "an entry (a byte[] of %s)", p->cls->name);
	if (t != 'B' && !json_is_array(x))
		return jb_fail(b, "an array (a %s)", p->cls->name);
	if ((v->items = jb_alloc(b, n, sizeof *v->items)) == NULL) {
		free(bytes);
		return NULL;
	}
	v->n = n;
	for (size_t i = 0; i < n; i++) {
		json_t *bx = t == 'B' ? json_integer((int8_t)bytes[i]) : NULL;
		const json_t *e = bx ? bx : json_array_get(x, i);

		if (strchr("BCDFIJSZ", t))
			v->items[i] = jb_prim(b, t, e);
		else /* the reader's values are not const: those kept are written, never changed */
			v->items[i] = (struct ckpt_javaser_value *)(uintptr_t)(p->n ? build(b, e, p->items[i < p->n ? i : p->n - 1], depth + 1)
					   : (json_is_null(e) ? build(b, e, NULL, depth + 1) : NULL));
		json_decref(bx);
		if (v->items[i] == NULL) {
			free(bytes);
			return *b->why ? NULL : jb_fail(b, "elements of %s the state holds values of", p->cls->name);
		}
	}
	free(bytes);
	return v;
}

/* Is v of a class -R prints by its value (boxed, java.math, dates, the collections of java.util)? */
static int
known_class(const struct ckpt_javaser_value *v)
{
	static const char *const k[] = {
		"java.lang.Integer", "java.lang.Long", "java.lang.Short", "java.lang.Byte", "java.lang.Double",
		"java.lang.Float", "java.lang.Boolean", "java.lang.Character", "java.math.BigInteger",
		"java.math.BigDecimal", "java.util.Date", "java.sql.Date", "java.sql.Time", "java.sql.Timestamp",
		"java.util.ArrayList", "java.util.LinkedList", "java.util.ArrayDeque", "java.util.HashSet",
		"java.util.LinkedHashSet", "java.util.TreeSet", "java.util.HashMap", "java.util.LinkedHashMap",
		"java.util.TreeMap",
	};

	for (size_t i = 0; i < sizeof k / sizeof *k; i++)
		if (strcmp(v->cls->name, k[i]) == 0)
			return 1;
	return 0;
}

/* x as a value of p's kind and class (p NULL: of the class x names); the state's own where x is
 * what -R prints of it. */
static const struct ckpt_javaser_value *
build(struct jb *b, const json_t *x, const struct ckpt_javaser_value *p, int depth)
{
	static const struct ckpt_javaser_value null = {.kind = CKPT_JAVASER_NULL, .handle = SIZE_MAX};
	const char *cls = json_string_value(json_object_get(x, "class"));
	struct ckpt_javaser_value *v;
	const struct ckpt_javaser_value *r;

	if (depth > JAVA_DEPTH)
		return jb_fail(b, "%s", "a value nested less deep");
	if (json_is_null(x))
		return &null;
	if (cls && json_is_object(x) && (p == NULL || p->kind != CKPT_JAVASER_OBJECT || strcmp(p->cls->name, cls) != 0) &&
	    (p = of_class(b->j, cls)) == NULL)
		return jb_fail(b, "a class the state holds a value of, not %s", cls);
	if (p == NULL || p->kind == CKPT_JAVASER_NULL)
		return jb_fail(b, "%s", "a value of a class the state holds a value of");
	if (same(x, p))
		return p;
	switch (p->kind) {
	case CKPT_JAVASER_STRING: case CKPT_JAVASER_ENUM:
		if (!json_is_string(x) || (v = jb_value(b, p->kind)) == NULL)
			return json_is_string(x) ? NULL : jb_fail(b, "a string (%s)", p->kind == CKPT_JAVASER_ENUM ?
								  p->cls->name : "java.lang.String");
		v->cls = p->cls;
		v->str = json_string_value(x);
		v->len = strlen(v->str);
		return v;
	case CKPT_JAVASER_ARRAY:
		return array_value(b, x, p, depth);
	case CKPT_JAVASER_OBJECT:
		if ((r = boxed(b, x, p)) != NULL || *b->why)
			return r;
		if (cls && strcmp(cls, p->cls->name) == 0 && known_class(p) == 0)
			return object_value(b, x, p, depth);
		/* fall through */
	default:
		return jb_fail(b, "%s as it was (ckpt writes a changed one only of plain classes)", p->cls->name);
	}
}

/* The shape of what -R prints of v: 's'tring, 'i'nteger, 'r'eal, 'b'oolean, 'a'rray, 'o'bject, 'n'ull. */
static char
shape_of(const struct ckpt_javaser_value *v)
{
	static const char *const cls[] = {"java.lang.Integer", "java.lang.Long", "java.lang.Short", "java.lang.Byte",
					  "java.lang.Double", "java.lang.Float", "java.lang.Boolean", "java.lang.Character",
					  "java.math.BigInteger", "java.math.BigDecimal", "java.util.Date", "java.sql.Date",
					  "java.sql.Time", "java.sql.Timestamp"};
	static const char sh[] = "iiiirrbsssssss";

	switch (v->kind) {
	case CKPT_JAVASER_STRING: case CKPT_JAVASER_ENUM:
		return 's';
	case CKPT_JAVASER_ARRAY:
		return strcmp(v->cls->name, "[B") == 0 ? 's' : 'a';
	case CKPT_JAVASER_NULL:
		return 'n';
	default:
		for (size_t i = 0; v->kind == CKPT_JAVASER_OBJECT && i < sizeof cls / sizeof *cls; i++)
			if (strcmp(v->cls->name, cls[i]) == 0)
				return sh[i];
		return v->kind == CKPT_JAVASER_OBJECT && strstr(v->cls->name, "java.util.") == v->cls->name &&
		       known_class(v) ? 'a' : 'o';
	}
}

/* The state's value a changed top-level value v is written by: of the one class of v's shape the
 * state's values have (an enum's constants only as the state holds them; a string where the state
 * holds Strings and another class printed as a string, a BigDecimal say, is refused: never guessed),
 * or of the class v names.  NULL with why. */
static const struct ckpt_javaser_value *
top_proto(struct ckpt_fjava *j, const json_t *v, char *why, size_t whyn)
{
	const struct ckpt_javaser_value *p = NULL, *t;
	char want = json_is_string(v) ? 's' : json_is_integer(v) ? 'i' : json_is_real(v) ? 'r' : json_is_boolean(v) ? 'b' :
		    json_is_array(v) ? 'a' : 'o';

	const char *cls = json_string_value(json_object_get(v, "class"));

	if (want == 'o' && cls == NULL)
		snprintf(why, whyn, "an object with its \"class\"");
	else if (want == 'o' && (p = of_class(j, cls)) == NULL)
		snprintf(why, whyn, "a class the state holds a value of, not %s", cls);
	if (want == 'o')
		return p;
	for (size_t i = 0; i < j->n; i++) {
		if ((t = j->top[i]) == NULL || (shape_of(t) != want && !(want == 'r' && shape_of(t) == 'i')))
			continue;
		if (t->kind == CKPT_JAVASER_ENUM)
			continue; /* a constant the state holds was found whole: ckpt writes no other */
		if (p && (p->kind != t->kind || (p->cls && strcmp(p->cls->name, t->cls->name) != 0))) {
			snprintf(why, whyn, "a value of one class (the state holds %s and %s values of this shape)",
				 p->cls ? p->cls->name : "java.lang.String", t->cls ? t->cls->name : "java.lang.String");
			return NULL;
		}
		p = t;
	}
	if (p == NULL)
		snprintf(why, whyn, "a value of a shape the state holds (an enum: one of its constants the state holds)");
	return p;
}

int
ckpt_fjava_enc(struct ckpt_fjava *j, const json_t *v, unsigned char **out, size_t *outn, char *why, size_t whyn)
{
	struct fjt key = {.dump = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY)}, *t;
	struct jb b = {.j = j, .why = why, .whyn = whyn};
	struct ckpt_bytebuf buf = {0};
	struct ckpt_err e = {0};
	const struct ckpt_javaser_value *x = NULL;
	int r = -1;

	*why = '\0';
	if (key.dump == NULL)
		return snprintf(why, whyn, "out of memory"), -1;
	if (!j->sorted) {
		qsort(j->t, j->n, sizeof *j->t, cmp_fjt);
		j->sorted = 1;
	}
	if ((t = j->n ? bsearch(&key, j->t, j->n, sizeof *j->t, cmp_fjt) : NULL) != NULL) { /* one of the state's */
		free(key.dump);
		if ((*out = malloc(t->n)) == NULL)
			return snprintf(why, whyn, "out of memory"), -1;
		memcpy(*out, t->p, t->n);
		*outn = t->n;
		return 0;
	}
	free(key.dump);
	if (parse_all(j) < 0)
		snprintf(why, whyn, "out of memory");
	if (*why == '\0' && (x = top_proto(j, v, why, whyn)) != NULL)
		x = build(&b, v, x, 0);
	if (x && ckpt_javaser_write(x, JAVA_DEPTH + 8, &buf, &e) < 0)
		snprintf(why, whyn, "%s", e.text);
	else if (x) {
		*out = buf.p;
		*outn = buf.len;
		buf.p = NULL;
		r = 0;
	}
	ckpt_bytebuf_release(&buf);
	for (size_t i = 0; i < b.nmem; i++)
		free(b.mem[i]);
	free(b.mem);
	return r;
}
