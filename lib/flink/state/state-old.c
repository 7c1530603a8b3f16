/* state-old.c: the serialization proxies of Flink 1.3 to 1.6 (ckpt-flink(5), OLD STATE HEADERS):
 * their state meta info, and each serializer Java-serialized with its config snapshot after it,
 * the serializer's class (and the serializers it holds) mapped onto the built-in ones. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readers.h"

#define JAVA_DEPTH 32       /* nesting of a serializer's object graph */
#define PAIRS_MAX 16        /* serializer and config snapshot pairs of one list */
#define PARAMETERLESS "org.apache.flink.api.common.typeutils.ParameterlessTypeSerializerConfig"

/* ------------------------------------------------------------ serializers, Java-serialized */

#define B "org.apache.flink.api.common.typeutils.base."
/* The serializers without nested ones whose values ckpt decodes, by class. */
static const struct leaf {
	const char *cls;
	enum ckpt_fser_kind kind, elem;
} leaves[] = {
	{B "StringSerializer", FSER_STRING, 0},
	{B "LongSerializer", FSER_LONG, 0},
	{B "IntSerializer", FSER_INT, 0},
	{B "ShortSerializer", FSER_SHORT, 0},
	{B "ByteSerializer", FSER_BYTE, 0},
	{B "BooleanSerializer", FSER_BOOL, 0},
	{B "FloatSerializer", FSER_FLOAT, 0},
	{B "DoubleSerializer", FSER_DOUBLE, 0},
	{B "CharSerializer", FSER_CHAR, 0},
	{B "VoidSerializer", FSER_VOID, 0},
	{B "BigIntSerializer", FSER_BIGINT, 0},
	{B "BigDecSerializer", FSER_BIGDEC, 0},
	{B "DateSerializer", FSER_DATE, 0},
	{B "SqlDateSerializer", FSER_DATE, 0},
	{B "SqlTimeSerializer", FSER_DATE, 0},
	{B "SqlTimestampSerializer", FSER_SQLTIMESTAMP, 0},
	{B "array.BytePrimitiveArraySerializer", FSER_BYTES, 0},
	{B "array.IntPrimitiveArraySerializer", FSER_PARRAY, FSER_INT},
	{B "array.LongPrimitiveArraySerializer", FSER_PARRAY, FSER_LONG},
	{B "array.ShortPrimitiveArraySerializer", FSER_PARRAY, FSER_SHORT},
	{B "array.FloatPrimitiveArraySerializer", FSER_PARRAY, FSER_FLOAT},
	{B "array.DoublePrimitiveArraySerializer", FSER_PARRAY, FSER_DOUBLE},
	{B "array.CharPrimitiveArraySerializer", FSER_PARRAY, FSER_CHAR},
	{B "array.BooleanPrimitiveArraySerializer", FSER_PARRAY, FSER_BOOL},
	{B "array.StringArraySerializer", FSER_PARRAY, FSER_STRING},
	{"org.apache.flink.runtime.state.VoidNamespaceSerializer", FSER_VOIDNS, 0},
	{"org.apache.flink.runtime.state.JavaSerializer", FSER_JAVA, 0},
	{"org.apache.flink.streaming.api.windowing.windows.TimeWindow$Serializer", FSER_TIMEWINDOW, 0},
	{"org.apache.flink.streaming.api.windowing.windows.GlobalWindow$Serializer", FSER_GLOBALWINDOW, 0},
};

/* The serializers holding others: their kind and the fields that hold them (and a Class). */
static const struct composite {
	const char *cls;
	enum ckpt_fser_kind kind;
	const char *kid0, *kid1; /* serializer fields; kid0 "[" an array of them */
	const char *clsfield;    /* a java.lang.Class field naming the tuple or element class */
} composites[] = {
	{"org.apache.flink.api.java.typeutils.runtime.TupleSerializer", FSER_TUPLE, "[fieldSerializers", NULL,
	 "tupleClass"},
	{B "ListSerializer", FSER_LIST, "elementSerializer", NULL, NULL},
	{B "MapSerializer", FSER_MAP, "keySerializer", "valueSerializer", NULL},
	{B "GenericArraySerializer", FSER_ARRAY, "componentSerializer", NULL, "componentClass"},
};
#undef B

/* The Java stream of one serializer, at offset at of the source s names. */
struct jctx {
	struct ckpt_fsrc *s;
	uint64_t at;
};

static int
jfail(struct jctx *x, const struct ckpt_javaser_value *v, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
jfail(struct jctx *x, const struct ckpt_javaser_value *v, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ckpt_err_vset(x->s->e, CKPT_ERR_INPUT, x->s->where, fmt, ap);
	va_end(ap);
	ckpt_err_prefix(x->s->e, "offset %llu: Java-serialized serializer", (unsigned long long)(x->at + v->at));
	return -1;
}

static struct ckpt_fser *
new_fser(struct ckpt_fsrc *s, enum ckpt_fser_kind kind, const char *cls)
{
	struct ckpt_fser *t = calloc(1, sizeof *t);

	if (t == NULL || (t->cls = strdup(cls)) == NULL) {
		free(t);
		ckpt_fsrc_nomem(s);
		return NULL;
	}
	t->kind = kind;
	return t;
}

/* Field name of serializer object v, of kind k; NULL (the error set) when it has none such. */
static const struct ckpt_javaser_value *
jfield(struct jctx *x, const struct ckpt_javaser_value *v, const char *name, enum ckpt_javaser_kind k)
{
	const struct ckpt_javaser_value *f = ckpt_javaser_field(v, name);

	if (f == NULL || f->kind != k) {
		jfail(x, v, "%s without its field %s", v->cls->name, name);
		return NULL;
	}
	return f;
}

static int java_fser(struct jctx *x, const struct ckpt_javaser_value *v, int depth, struct ckpt_fser **out);

/* The nested serializers of a composite into t->kids. */
static int
java_kids(struct jctx *x, const struct ckpt_javaser_value *v, const struct composite *c, struct ckpt_fser *t, int depth)
{
	const struct ckpt_javaser_value *a = NULL, *one[2];
	const struct ckpt_javaser_value *const *items = one;
	size_t n = c->kid1 ? 2 : 1;

	if (c->kid0[0] == '[') {
		const struct ckpt_javaser_value *ar;

		if ((a = jfield(x, v, c->kid0 + 1, CKPT_JAVASER_ARRAY)) == NULL ||
		    (ar = jfield(x, v, "arity", CKPT_JAVASER_PRIM)) == NULL)
			return -1;
		if (ar->type != 'I' || ar->i != (int64_t)a->n)
			return jfail(x, v, "%s of arity %lld with %zu field serializers", v->cls->name, (long long)ar->i, a->n);
		items = (const struct ckpt_javaser_value *const *)a->items;
		n = a->n;
	} else if ((one[0] = jfield(x, v, c->kid0, CKPT_JAVASER_OBJECT)) == NULL ||
		   (c->kid1 && (one[1] = jfield(x, v, c->kid1, CKPT_JAVASER_OBJECT)) == NULL)) {
		return -1;
	}
	if (n > 0 && (t->kids = calloc(n, sizeof *t->kids)) == NULL)
		return ckpt_fsrc_nomem(x->s);
	t->nkids = n;
	for (size_t i = 0; i < n; i++)
		if (java_fser(x, items[i], depth + 1, &t->kids[i]) < 0)
			return -1;
	return 0;
}

/* A serializer object as ckpt's serializer tree; a class ckpt does not know is kept as an opaque
 * node naming it (typing stops there, and says so). */
static int
java_fser(struct jctx *x, const struct ckpt_javaser_value *v, int depth, struct ckpt_fser **out)
{
	const char *cls;

	*out = NULL;
	if (depth > JAVA_DEPTH)
		return jfail(x, v, "serializers nested more than %d deep", JAVA_DEPTH);
	if (v->kind != CKPT_JAVASER_OBJECT)
		return jfail(x, v, "%s where a serializer object belongs",
			     v->kind == CKPT_JAVASER_NULL ? "null" : v->kind == CKPT_JAVASER_BLOCK ? "block data" :
			     "a value of another kind");
	cls = v->cls->name;
	for (size_t i = 0; i < sizeof leaves / sizeof *leaves; i++)
		if (strcmp(leaves[i].cls, cls) == 0) {
			if ((*out = new_fser(x->s, leaves[i].kind, cls)) == NULL)
				return -1;
			(*out)->elem = leaves[i].elem;
			return 0;
		}
	for (size_t i = 0; i < sizeof composites / sizeof *composites; i++) {
		const struct composite *c = &composites[i];
		const struct ckpt_javaser_value *k;

		if (strcmp(c->cls, cls) != 0)
			continue;
		if ((*out = new_fser(x->s, c->kind, cls)) == NULL)
			return -1;
		if (c->clsfield) {
			if ((k = jfield(x, v, c->clsfield, CKPT_JAVASER_CLASS)) == NULL)
				return -1;
			if (((*out)->name = strdup(k->cls->name)) == NULL)
				return ckpt_fsrc_nomem(x->s);
		}
		return java_kids(x, v, c, *out, depth);
	}
	return (*out = new_fser(x->s, FSER_OPAQUE, cls)) == NULL ? -1 : 0;
}

/* One serializer's Java stream, p[0, n) at offset at of s, to its last byte. */
static int
read_java(struct ckpt_fsrc *s, const unsigned char *p, size_t n, uint64_t at, struct ckpt_fser **out)
{
	struct ckpt_err e = {0};
	struct ckpt_javaser *j = ckpt_javaser_new(p, n, "", 0, JAVA_DEPTH, &e);
	const struct ckpt_javaser_value *v;
	struct jctx x = {s, at};
	unsigned long long off = 0;
	size_t pos = 0;
	int r, k = 0;

	if (j == NULL)
		return ckpt_fsrc_nomem(s);
	if (ckpt_javaser_header(j, &pos) < 0 || ckpt_javaser_read(j, &pos, &v) < 0) {
		if (e.kind == CKPT_ERR_NOMEM)
			r = ckpt_fsrc_nomem(s);
		else if (sscanf(e.text, "offset %llu: %n", &off, &k) == 1 && k > 0)
			r = ckpt_err_set(s->e, CKPT_ERR_INPUT, s->where, "offset %llu: Java-serialized serializer: %s",
					 (unsigned long long)at + off, e.text + k);
		else
			r = ckpt_err_set(s->e, CKPT_ERR_INPUT, s->where, "offset %llu: Java-serialized serializer: %s",
					 (unsigned long long)at, e.text);
	} else if (pos != n) {
		r = ckpt_err_set(s->e, CKPT_ERR_INPUT, s->where, "offset %llu: Java-serialized serializer ends %zu "
				 "bytes before its length says", (unsigned long long)(at + pos), n - pos);
	} else {
		r = java_fser(&x, v, 0, out);
	}
	ckpt_javaser_free(j);
	return r;
}

/* TypeSerializerSerializationProxy: its version (1), the length of the Java stream, the stream. */
static int
read_serializer(struct ckpt_fsrc *s, struct ckpt_fser **out)
{
	unsigned char *p;
	uint64_t at;
	size_t n;
	int32_t v;
	int r;

	*out = NULL;
	if (ckpt_fsrc_i32(s, &v, "serializer proxy version") < 0)
		return -1;
	if (v != 1)
		return ckpt_fsrc_fail(s, "serializer proxy version %d (1 expected)", v);
	at = s->base + ckpt_fsrc_tell(s) + 4;
	if (ckpt_fsrc_blob(s, &p, &n, "Java-serialized serializer") < 0)
		return -1;
	r = read_java(s, p ? p : (const unsigned char *)"", n, at, out);
	free(p);
	return r;
}

/* TypeSerializerConfigSnapshotSerializationProxy: its version (1), the config snapshot's class and
 * version, its fields up to end, where the offsets say the next serializer starts (last: where the
 * list ends).  The serializer
 * before it says how values are laid out, so only ParameterlessTypeSerializerConfig's fields (one
 * name) are read; the others are stepped over. */
static int
read_config(struct ckpt_fsrc *m, uint64_t end, int last)
{
	char *cls = NULL, *id = NULL;
	int32_t v, cv;
	int r = -1;

	if (ckpt_fsrc_i32(m, &v, "config snapshot proxy version") < 0)
		return -1;
	if (v != 1)
		return ckpt_fsrc_fail(m, "config snapshot proxy version %d (1 expected)", v);
	if (ckpt_fsrc_utf(m, &cls, "config snapshot class") < 0 || ckpt_fsrc_i32(m, &cv, "config snapshot version") < 0)
		goto out;
	if (ckpt_fsrc_tell(m) > end) {
		ckpt_fsrc_fail(m, "config snapshot %s runs past %s (%llu)", cls, last ? "the end of its list" :
			       "where the next serializer starts", (unsigned long long)end);
		goto out;
	}
	if (strcmp(cls, PARAMETERLESS) != 0) {
		r = ckpt_fsrc_read(m, NULL, (size_t)(end - ckpt_fsrc_tell(m)), "config snapshot");
		goto out;
	}
	if (cv != 1) {
		ckpt_fsrc_fail(m, "%s version %d (1 expected)", cls, cv);
		goto out;
	}
	if (ckpt_fsrc_utf(m, &id, "serialization format identifier") < 0)
		goto out;
	if (ckpt_fsrc_tell(m) != end) {
		ckpt_fsrc_fail(m, "%s ends here, but %s at %llu", cls, last ? "its list ends" : "the next serializer starts",
			       (unsigned long long)end);
		goto out;
	}
	r = 0;
out:
	free(cls);
	free(id);
	return r;
}

/*
 * TypeSerializerSerializationUtil's serializers and config snapshots "with resilience": a count,
 * each pair's two offsets into the bytes that follow, their length, the bytes: each serializer,
 * then its config snapshot.  The pairs' serializers into out[0, *n); on failure the caller frees
 * those set.
 */
static int
read_pairs(struct ckpt_fsrc *s, int32_t *n, struct ckpt_fser **out)
{
	int32_t off[2 * PAIRS_MAX];
	struct ckpt_fsrc m;
	unsigned char *p;
	uint64_t at;
	size_t len;
	int r = 0;

	if (ckpt_fstate_read_count(s, n, PAIRS_MAX, "serializer count") < 0)
		return -1;
	for (int32_t i = 0; i < 2 * *n; i++)
		if (ckpt_fsrc_i32(s, &off[i], i % 2 ? "config snapshot offset" : "serializer offset") < 0)
			return -1;
	at = s->base + ckpt_fsrc_tell(s) + 4;
	if (ckpt_fsrc_blob(s, &p, &len, "serializers and config snapshots") < 0)
		return -1;
	ckpt_fsrc_mem(&m, p ? p : (const unsigned char *)"", len, s->where, s->e);
	m.base = at;
	for (int32_t i = 0; r == 0 && i < *n; i++) {
		uint64_t next = i + 1 < *n ? (uint64_t)(int64_t)off[2 * i + 2] : len;

		if ((int64_t)off[2 * i] != (int64_t)ckpt_fsrc_tell(&m))
			r = ckpt_fsrc_fail(&m, "serializer %d at offset %d of its list, where %llu is expected", i,
					   off[2 * i], (unsigned long long)ckpt_fsrc_tell(&m));
		else if ((r = read_serializer(&m, &out[i])) == 0 && (int64_t)off[2 * i + 1] != (int64_t)ckpt_fsrc_tell(&m))
			r = ckpt_fsrc_fail(&m, "config snapshot %d at offset %d of its list, but its serializer ends at %llu",
					   i, off[2 * i + 1], (unsigned long long)ckpt_fsrc_tell(&m));
		else if (r == 0 && (next < ckpt_fsrc_tell(&m) || next > len))
			r = ckpt_fsrc_fail(&m, "serializer %d at offset %lld of its list of %zu bytes, before or past its "
					   "config snapshot", i + 1, (long long)(int64_t)off[2 * i + 2], len);
		else if (r == 0)
			r = read_config(&m, next, i + 1 == *n);
	}
	if (r == 0 && *n == 0 && len > 0)
		r = ckpt_fsrc_fail(&m, "%zu bytes in a list of no serializers", len);
	ckpt_fsrc_release(&m);
	free(p);
	return r;
}

/* ------------------------------------------------------------ state meta info */

static int
set_slot(struct ckpt_fsrc *s, struct ckpt_fstate_meta *m, const char *k, struct ckpt_fser *t)
{
	struct ckpt_fser **slot = strcmp(k, "KEY_SERIALIZER") == 0 ? &m->key :
				  strcmp(k, "NAMESPACE_SERIALIZER") == 0 ? &m->ns :
				  strcmp(k, "VALUE_SERIALIZER") == 0 ? &m->value : NULL;

	if (slot == NULL || *slot) {
		ckpt_fser_free(t);
		if (slot == NULL)
			return ckpt_fsrc_fail(s, "unknown serializer name \"%s\" of state \"%s\" (KEY_SERIALIZER, "
					      "NAMESPACE_SERIALIZER or VALUE_SERIALIZER expected)", k, m->name);
		return ckpt_fsrc_fail(s, "state \"%s\" names its %s twice", m->name, k);
	}
	*slot = t;
	if (json_object_set_new(m->serializers, k, ckpt_fser_json(t)) < 0)
		return ckpt_fsrc_nomem(s);
	return 0;
}

/* A list of n pairs (want of them), given to the serializer names keys[0, want). */
static int
read_named_pairs(struct ckpt_fsrc *s, struct ckpt_fstate_meta *m, int32_t want, const char *const *keys)
{
	struct ckpt_fser *t[PAIRS_MAX] = {0};
	int32_t n = 0;
	int r = read_pairs(s, &n, t);

	if (r == 0 && n != want)
		r = ckpt_fsrc_fail(s, "state \"%s\" with %d serializers (%d expected)", m->name, n, want);
	for (int32_t i = 0; i < PAIRS_MAX; i++)
		if (r == 0 && i < want) {
			r = set_slot(s, m, keys[i], t[i]);
			t[i] = NULL;
		} else {
			ckpt_fser_free(t[i]);
		}
	return r;
}

static const char *const modes[] = {"SPLIT_DISTRIBUTE", "UNION", "BROADCAST"};
static const char *const kinds[] = {"unknown", "value", "list", "reducing", "folding", "aggregating", "map"};

/* LegacyStateMetaInfoReaders' operator reader of versions 2 and 3: name, distribution mode, then
 * one pair (list state) or two (broadcast state, key and value). */
static int
op_meta_v2(struct ckpt_fsrc *s, struct ckpt_fstate_header *h)
{
	static const char *const one[] = {"VALUE_SERIALIZER"}, *const two[] = {"KEY_SERIALIZER", "VALUE_SERIALIZER"};
	struct ckpt_fstate_meta *m = ckpt_fstate_meta_add(s, h);
	uint8_t mode;
	int32_t n;
	uint64_t at;

	if (m == NULL || ckpt_fsrc_utf(s, &m->name, "state name") < 0 || ckpt_fstate_meta_unique(s, h) < 0 ||
	    ckpt_fsrc_u8(s, &mode, "distribution mode") < 0)
		return -1;
	if (mode > 2)
		return ckpt_fsrc_fail(s, "distribution mode %u of state \"%s\" (0 to 2 expected)", mode, m->name);
	if ((m->mode = strdup(modes[mode])) == NULL)
		return ckpt_fsrc_nomem(s);
	at = ckpt_fsrc_tell(s); /* the count decides the kind: peek at it */
	if (ckpt_fsrc_i32(s, &n, "serializer count") < 0 || ckpt_fsrc_seek(s, at, 0) < 0)
		return -1;
	if (n != 1 && n != 2)
		return ckpt_fsrc_fail(s, "operator state \"%s\" with %d serializers (1 or 2 expected)", m->name, n);
	m->type = n == 1 ? 1 : 2;
	return read_named_pairs(s, m, n, n == 1 ? one : two);
}

/* LegacyStateMetaInfoReaders' keyed readers: the state type, name, then the namespace and value
 * serializers (versions 1 and 2: each alone; 3 and 4: a list of two pairs). */
static int
keyed_meta_v1(struct ckpt_fsrc *s, struct ckpt_fstate_header *h)
{
	static const char *const keys[] = {"NAMESPACE_SERIALIZER", "VALUE_SERIALIZER"};
	struct ckpt_fstate_meta *m = ckpt_fstate_meta_add(s, h);
	struct ckpt_fser *t = NULL;
	int32_t type;

	if (m == NULL || ckpt_fsrc_i32(s, &type, "state type") < 0)
		return -1;
	if (type < 0 || type > 6)
		return ckpt_fsrc_fail(s, "state type %d (0 to 6 expected)", type);
	if (ckpt_fsrc_utf(s, &m->name, "state name") < 0 || ckpt_fstate_meta_unique(s, h) < 0)
		return -1;
	if ((m->kind = strdup(kinds[type])) == NULL)
		return ckpt_fsrc_nomem(s);
	if (h->version >= 3)
		return read_named_pairs(s, m, 2, keys);
	for (int i = 0; i < 2; i++) {
		if (read_serializer(s, &t) < 0) {
			ckpt_fser_free(t);
			return -1;
		}
		if (set_slot(s, m, keys[i], t) < 0)
			return -1;
	}
	return 0;
}

/* StateMetaInfoSnapshotReadersWriters' reader of version 5 (Flink 1.6): name, type, options, the
 * serializers' names, then a list of as many pairs. */
static int
meta_v5(struct ckpt_fsrc *s, struct ckpt_fstate_header *h)
{
	struct ckpt_fstate_meta *m = ckpt_fstate_meta_add(s, h);
	char *keys[3] = {0};
	int32_t n;
	int r = -1;

	if (m == NULL || ckpt_fsrc_utf(s, &m->name, "state name") < 0 || ckpt_fsrc_i32(s, &m->type, "state type") < 0)
		return -1;
	if (m->type < 0 || m->type > 3)
		return ckpt_fsrc_fail(s, "state type %d of state \"%s\" (0 to 3 expected)", m->type, m->name);
	if (ckpt_fstate_meta_unique(s, h) < 0 || ckpt_fstate_read_options(s, m) < 0)
		return -1;
	if (m->type == 3 && m->kind == NULL && (m->kind = strdup("timers")) == NULL)
		return ckpt_fsrc_nomem(s);
	if (ckpt_fstate_read_count(s, &n, 3, "state serializer count") < 0)
		return -1;
	for (int32_t i = 0; i < n; i++)
		if (ckpt_fsrc_utf(s, &keys[i], "serializer name") < 0)
			goto out;
	r = read_named_pairs(s, m, n, (const char *const *)keys);
out:
	for (int i = 0; i < 3; i++)
		free(keys[i]);
	return r;
}

static int
read_metas(struct ckpt_fsrc *s, struct ckpt_fstate_header *h, int (*meta)(struct ckpt_fsrc *, struct ckpt_fstate_header *),
	   const char *what)
{
	int16_t n;

	if (ckpt_fsrc_i16(s, &n, what) < 0)
		return -1;
	if (n < 0)
		return ckpt_fsrc_fail(s, "negative %s %d", what, n);
	for (int16_t i = 0; i < n; i++)
		if (meta(s, h) < 0)
			return -1;
	return 0;
}

/* OperatorBackendSerializationProxy versions 2 and 3 (Flink 1.3 to 1.5; broadcast states from 3)
 * and 4 (Flink 1.6, meta info version 5); after version 2, the count of its states again. */
int
ckpt_fstate_old_op_header(struct ckpt_fsrc *s, struct ckpt_fstate_header *h)
{
	int (*meta)(struct ckpt_fsrc *, struct ckpt_fstate_header *) = h->version == 4 ? meta_v5 : op_meta_v2;

	if (h->version == 1)
		return ckpt_fstate_header_stop(h, "operator state header version 1 (Flink 1.2) is not read");
	if (read_metas(s, h, meta, "operator state count") < 0)
		return -1;
	h->nlist = h->n;
	if (h->version >= 3 && read_metas(s, h, meta, "broadcast state count") < 0)
		return -1;
	if (h->version == 2) { /* DefaultOperatorStateBackend of 1.3 and 1.4 wrote the states' count after it */
		int32_t n;

		if (ckpt_fsrc_i32(s, &n, "state count after the header") < 0)
			return -1;
		if (n < 0 || (size_t)n != h->n)
			return ckpt_fsrc_fail(s, "state count %d after a header of %zu states", n, h->n);
	}
	h->end = ckpt_fsrc_tell(s);
	return 0;
}

/* KeyedBackendSerializationProxy versions 1 to 5 (Flink 1.2 to 1.6): the compression flag (from
 * 4), the key serializer (alone before 3, then a list of one pair), the states. */
int
ckpt_fstate_old_keyed_header(struct ckpt_fsrc *s, struct ckpt_fstate_header *h)
{
	struct ckpt_fser *t[PAIRS_MAX] = {0};
	int32_t n = 0;
	int r;

	if (h->version >= 4 && ckpt_fstate_read_flag(s, &h->compressed, "key-group compression flag") < 0)
		return -1;
	if (h->version < 3) {
		r = read_serializer(s, &h->key);
	} else {
		r = read_pairs(s, &n, t);
		if (r == 0 && n != 1)
			r = ckpt_fsrc_fail(s, "key serializer list of %d serializers (1 expected)", n);
		h->key = t[0];
		for (int32_t i = 1; i < PAIRS_MAX; i++)
			ckpt_fser_free(t[i]);
	}
	if (r < 0 || read_metas(s, h, h->version == 5 ? meta_v5 : keyed_meta_v1, "keyed state count") < 0)
		return -1;
	h->end = ckpt_fsrc_tell(s);
	return 0;
}
