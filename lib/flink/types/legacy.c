/* legacy.c: serializer snapshots Flink 1.7 wrote the way of Flink 1.6 (a TypeSerializerConfigSnapshot
 * behind the adapter version), read where serializer.c finds one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "types.h"

#define PAIRS_MAX 64 /* field serializers of one tuple */
#define TUPLE_CONFIG "org.apache.flink.api.java.typeutils.runtime.TupleSerializerConfigSnapshot"

/* TypeSerializerSerializationProxy: its version (1), the serializer Java-serialized as a length
 * and the stream, stepped over (the config snapshot after it says the layout). */
static int
skip_serializer(struct ckpt_fsrc *s)
{
	int32_t v, n;

	if (ckpt_fsrc_i32(s, &v, "serializer proxy version") < 0)
		return -1;
	if (v != 1)
		return ckpt_fsrc_fail(s, "serializer proxy version %d (1 expected)", v);
	if (ckpt_fsrc_i32(s, &n, "Java-serialized serializer length") < 0)
		return -1;
	if (n < 0)
		return ckpt_fsrc_fail(s, "Java-serialized serializer length %d", n);
	return ckpt_fsrc_read(s, NULL, (size_t)n, "Java-serialized serializer");
}

/*
 * Flink 1.7's legacy ParameterlessTypeSerializerConfig (at version CKPT_FSER_LEGACY_ADAPTER, ckpt-flink(5)):
 * the serializer Java-serialized (TypeSerializerSerializationProxy: version 1, length, stream),
 * then the config's version (1) and its one field, the serializer's class: a singleton whose
 * snapshot class is that name and "$NAMESnapshot" (IntSerializer$IntSerializerSnapshot).
 */
static int
parameterless(struct ckpt_fsrc *s, struct ckpt_fser *t, const struct ckpt_fser_ops *ops)
{
	char *id = NULL, name[512];
	int known = 0;
	int32_t cv;

	if (skip_serializer(s) < 0 || ckpt_fsrc_i32(s, &cv, "config snapshot version") < 0)
		return -1;
	if (cv != 1)
		return ckpt_fsrc_fail(s, "%s version %d (1 expected)", t->cls, cv);
	if (ckpt_fsrc_utf(s, &id, "serialization format identifier") < 0)
		return -1;
	if (strrchr(id, '.') && (size_t)snprintf(name, sizeof name, "%s$%sSnapshot", id, strrchr(id, '.') + 1) < sizeof name)
		known = ops->known_simple(name, t);
	if (!known) {
		free(t->cls); /* what stops the typing is the serializer it names */
		t->cls = id;
		t->kind = FSER_UNKNOWN;
		return 1;
	}
	free(id);
	return 0;
}

/* A java.lang.Class Java-serialized with no length before it (the tuple class): its name, and the
 * stream stepped over; it must lie in the bytes s holds at hand (a header's, read whole). */
static int
java_class(struct ckpt_fsrc *s, char **name)
{
	struct ckpt_err e = {0};
	size_t have = s->snappy ? 0 : s->wlen - s->wpos, pos = 0;
	struct ckpt_javaser *j = ckpt_javaser_new(s->win ? s->win + s->wpos : (const unsigned char *)"", have, "", 0,
						  32, &e);
	const struct ckpt_javaser_value *v;
	int r = -1;

	if (j == NULL)
		return ckpt_fsrc_nomem(s);
	if (ckpt_javaser_header(j, &pos) < 0 || ckpt_javaser_read(j, &pos, &v) < 0)
		ckpt_fsrc_fail(s, "Java-serialized tuple class: %s", e.text);
	else if (v->kind != CKPT_JAVASER_CLASS)
		ckpt_fsrc_fail(s, "Java-serialized tuple class: not a class");
	else if ((*name = strdup(v->cls->name)) == NULL)
		ckpt_fsrc_nomem(s);
	else
		r = ckpt_fsrc_read(s, NULL, pos, "Java-serialized tuple class");
	ckpt_javaser_free(j);
	return r;
}

/* One field's serializer and snapshot of a tuple's pairs, the snapshot in Flink 1.7's format at
 * offset off of the pairs' bytes (which start at start): 0, 1 (typing stops there), -1. */
static int
tuple_kid(struct ckpt_fsrc *s, struct ckpt_fser *t, uint64_t start, int32_t off, const struct ckpt_fser_ops *ops)
{
	struct ckpt_fser *k = NULL;
	int r;

	if (off < 0 || start + (uint64_t)off < ckpt_fsrc_tell(s))
		return ckpt_fsrc_fail(s, "field snapshot offset %d behind the bytes read", off);
	if (ckpt_fsrc_read(s, NULL, (size_t)(start + (uint64_t)off - ckpt_fsrc_tell(s)), "field serializer") < 0)
		return -1;
	r = ops->read(s, 1, &k);
	if (k != NULL && ckpt_grow(&t->kids, &t->kidcap, t->nkids + 1, sizeof *t->kids, 4, NULL) < 0) {
		ops->free(k);
		return ckpt_fsrc_nomem(s);
	}
	if (k != NULL)
		t->kids[t->nkids++] = k;
	return r;
}

/*
 * Flink 1.7's legacy TupleSerializerConfigSnapshot (ckpt-flink(5)): the serializer stepped over,
 * the config's version (1), its fields' serializers and snapshots "with resilience" (a count, each
 * pair's two offsets, the pairs' length, their bytes: a serializer Java-serialized, then its
 * snapshot in Flink 1.7's own format), then the tuple class Java-serialized.
 */
static int
tuple(struct ckpt_fsrc *s, struct ckpt_fser *t, const struct ckpt_fser_ops *ops)
{
	int32_t cv, n, off[2 * PAIRS_MAX], len;
	uint64_t start;
	int r;

	if (skip_serializer(s) < 0 || ckpt_fsrc_i32(s, &cv, "config snapshot version") < 0)
		return -1;
	if (cv != 1)
		return ckpt_fsrc_fail(s, "%s version %d (1 expected)", t->cls, cv);
	if (ckpt_fsrc_i32(s, &n, "field serializer count") < 0)
		return -1;
	if (n < 0 || n > PAIRS_MAX)
		return ckpt_fsrc_fail(s, "field serializer count %d (0 to %d expected)", n, PAIRS_MAX);
	for (int32_t i = 0; i < 2 * n; i++)
		if (ckpt_fsrc_i32(s, &off[i], "field serializer offset") < 0)
			return -1;
	if (ckpt_fsrc_i32(s, &len, "field serializers length") < 0)
		return -1;
	start = ckpt_fsrc_tell(s);
	for (int32_t i = 0; i < n; i++)
		if ((r = tuple_kid(s, t, start, off[2 * i + 1], ops)) != 0)
			return r;
	if (len < 0 || start + (uint64_t)len != ckpt_fsrc_tell(s))
		return ckpt_fsrc_fail(s, "field serializers end here, not where their length %d says", len);
	t->kind = FSER_TUPLE;
	return java_class(s, &t->name);
}

int
ckpt_fser_legacy(struct ckpt_fsrc *s, struct ckpt_fser *t, const struct ckpt_fser_ops *ops)
{
	if (strcmp(t->cls, CKPT_FSER_PARAMETERLESS) == 0)
		return parameterless(s, t, ops);
	if (strcmp(t->cls, TUPLE_CONFIG) == 0)
		return tuple(s, t, ops);
	return 1;
}
