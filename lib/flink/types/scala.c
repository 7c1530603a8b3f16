/* scala.c: the values of flink-scala's serializers (Option, Either, Try, collections,
 * Enumeration, Unit) and of Java's Either, whose snapshots serializer.c reads. */
#include <stdlib.h>
#include <string.h>

#include "types.h"

int
ckpt_fser_scala_enum(struct ckpt_fsrc *s, struct ckpt_fser *t)
{
	int32_t n;

	if (ckpt_fsrc_utf(s, &t->name, "enumeration class") < 0 ||
	    ckpt_fsrc_i32(s, &n, "enumeration constant count") < 0)
		return -1;
	if (n < 0 || n > 65535)
		return ckpt_fsrc_fail(s, "enumeration constant count %d", n);
	if (n > 0 && ((t->names = calloc((size_t)n, sizeof *t->names)) == NULL ||
		      (t->ids = calloc((size_t)n, sizeof *t->ids)) == NULL))
		return ckpt_fsrc_nomem(s);
	for (int32_t i = 0; i < n; i++) {
		if (ckpt_fsrc_utf(s, &t->names[i], "enumeration constant") < 0)
			return -1;
		t->nnames++;
		if (ckpt_fsrc_i32(s, &t->ids[i], "enumeration constant id") < 0)
			return -1;
	}
	return 0;
}

/* A boolean flag of the tagged kinds: 0 or 1, nothing else. */
static int
read_flag(struct ckpt_fsrc *s, uint8_t *b, const char *what)
{
	if (ckpt_fsrc_u8(s, b, what) < 0)
		return -1;
	if (*b > 1)
		return ckpt_fsrc_fail(s, "%s %u (0 or 1 expected)", what, *b);
	return 0;
}

/* {"tag": value}: Either's left or right, Try's success or failure. */
static int
tagged(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o, const char *tag,
       const struct ckpt_fser_ops *ops)
{
	int32_t h;
	int hd;

	if (ckpt_fout_open(o, '{') < 0)
		return ckpt_fsrc_nomem(s);
	ckpt_fout_key(o, tag);
	if (ops->emit(t, s, o, &h, &hd) < 0)
		return -1;
	ckpt_fout_close(o);
	return 0;
}

/* TraversableSerializer: i32 size, then per element a non-null flag and the element. */
static int
traversable(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o, const struct ckpt_fser_ops *ops)
{
	int32_t n, h;
	int hd;

	if (ckpt_fsrc_i32(s, &n, "collection size") < 0)
		return -1;
	if (n < 0)
		return ckpt_fsrc_fail(s, "negative collection size %d", n);
	if (ckpt_fout_open(o, '[') < 0)
		return ckpt_fsrc_nomem(s);
	for (int32_t i = 0; i < n; i++) {
		uint8_t present;

		if (read_flag(s, &present, "collection element flag") < 0)
			return -1;
		if (!present ? ckpt_fout_null(o) < 0 && ckpt_fsrc_nomem(s) : ops->emit(t->kids[0], s, o, &h, &hd) < 0)
			return -1;
	}
	ckpt_fout_close(o);
	return 0;
}

/* EnumValueSerializer: the constant's i32 id, named by the snapshot's list. */
static int
scala_enum(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o)
{
	int32_t id;

	if (ckpt_fsrc_i32(s, &id, "enumeration id") < 0)
		return -1;
	for (size_t i = 0; i < t->nnames; i++)
		if (t->ids[i] == id)
			return ckpt_fout_str(o, t->names[i], strlen(t->names[i])) < 0 ? ckpt_fsrc_nomem(s) : 0;
	return ckpt_fsrc_fail(s, "enumeration id %d is none of the %zu constants of %s", id, t->nnames, t->name);
}

int
ckpt_fser_scala_value(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o,
		      const struct ckpt_fser_ops *ops)
{
	int32_t h;
	uint8_t b;
	int hd;

	switch (t->kind) {
	case FSER_OPTION: /* OptionSerializer: a defined flag, then the value: None is null */
		if (read_flag(s, &b, "option flag") < 0)
			return -1;
		if (!b)
			return ckpt_fout_null(o) < 0 ? ckpt_fsrc_nomem(s) : 0;
		return ops->emit(t->kids[0], s, o, &h, &hd);
	case FSER_EITHER: /* Scala's and Java's EitherSerializer: an is-left flag, then the side */
		if (read_flag(s, &b, "either flag") < 0)
			return -1;
		return b ? tagged(t->kids[0], s, o, "left", ops) : tagged(t->kids[1], s, o, "right", ops);
	case FSER_TRY: /* TrySerializer: an is-success flag, then the value or the throwable */
		if (read_flag(s, &b, "try flag") < 0)
			return -1;
		return b ? tagged(t->kids[0], s, o, "success", ops) : tagged(t->kids[1], s, o, "failure", ops);
	case FSER_TRAVERSABLE:
		return traversable(t, s, o, ops);
	case FSER_SENUM:
		return scala_enum(t, s, o);
	case FSER_UNIT: /* UnitSerializer: one byte, whatever it is (read and dropped by Flink) */
		if (ckpt_fsrc_u8(s, &b, "unit byte") < 0)
			return -1;
		return ckpt_fout_null(o) < 0 ? ckpt_fsrc_nomem(s) : 0;
	default:
		return ckpt_fsrc_fail(s, "serializer %s is not one of flink-scala's", t->cls);
	}
}
