/* fuzz_javaser.c: the Java serialization stream reader (general, then plain) on any bytes, every
 * value it returns walked. */
#include <stdio.h>
#include <string.h>

#include "flink-javaser.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A digest of the value, so that every field is read; depth bounds the walk of a shared graph. */
static size_t
walk(const struct ckpt_javaser_value *v, int depth)
{
	size_t h = (size_t)v->kind + v->len + (v->str ? strlen(v->str) : 0);

	if (depth > 8)
		return h;
	if (v->kind == CKPT_JAVASER_BLOCK && v->len)
		h += v->bytes[v->len - 1];
	if (v->cls)
		h += strlen(v->cls->name) + v->cls->nfields + v->cls->nannotations;
	for (size_t i = 0; v->kind == CKPT_JAVASER_ARRAY && i < v->n; i++)
		h += walk(v->items[i], depth + 1);
	for (size_t i = 0; v->kind == CKPT_JAVASER_OBJECT && i < v->n; i++) {
		const struct ckpt_javaser_classdata *d = &v->data[i];

		for (size_t k = 0; d->fields && k < d->cls->nfields; k++)
			h += walk(d->fields[k], depth + 1) + (ckpt_javaser_field(v, d->cls->fields[k].name) != NULL);
		for (size_t k = 0; k < d->nextra; k++)
			h += walk(d->extra[k], depth + 1);
	}
	return h;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned modes[] = {0, CKPT_JAVASER_PLAIN};
	volatile size_t sink = 0;

	for (size_t m = 0; m < 2; m++) {
		struct ckpt_err e = {0};
		struct ckpt_javaser *j = ckpt_javaser_new(data, size, "fuzz", modes[m], 32, &e);
		const struct ckpt_javaser_value *v;
		size_t pos = 0;

		if (j && ckpt_javaser_header(j, &pos) == 0)
			while (pos < size && ckpt_javaser_read(j, &pos, &v) == 0)
				sink += walk(v, 0);
		if (j && sink < ckpt_javaser_handles(j))
			sink++;
		ckpt_javaser_free(j);
	}
	return 0;
}
