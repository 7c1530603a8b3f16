/* fuzz_javaser.c: the Java serialization stream reader (general, then plain) on any bytes, every
 * value it returns walked, twice: the second reading, with class descriptors remembered, the same. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flink/format/javaser.h"
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

/* Every value of the stream read from its start: their digest, where the reading stopped, why. */
struct pass {
	size_t digest, pos, handles;
	char why[sizeof ((struct ckpt_err *)0)->text];
};

static void
read_all(struct ckpt_javaser *j, const uint8_t *data, size_t size, struct pass *p)
{
	struct ckpt_err e = {0};
	const struct ckpt_javaser_value *v;

	ckpt_javaser_reset(j, data, size, &e);
	memset(p, 0, sizeof *p);
	if (ckpt_javaser_header(j, &p->pos) == 0)
		while (p->pos < size && ckpt_javaser_read(j, &p->pos, &v) == 0)
			p->digest += walk(v, 0);
	p->handles = ckpt_javaser_handles(j);
	snprintf(p->why, sizeof p->why, "%s", e.text);
}

/* Each mode reads the bytes twice with one reader: the second time with the class descriptors
 * of the first remembered, which must read exactly as the first did. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned modes[] = {0, CKPT_JAVASER_PLAIN};
	volatile size_t sink = 0;

	for (size_t m = 0; m < 2; m++) {
		struct ckpt_err e = {0};
		struct ckpt_javaser *j = ckpt_javaser_new(data, size, "fuzz", modes[m], 32, &e);
		struct pass a, b;

		if (j == NULL)
			continue;
		read_all(j, data, size, &a);
		read_all(j, data, size, &b);
		if (a.digest != b.digest || a.pos != b.pos || a.handles != b.handles || strcmp(a.why, b.why) != 0) {
			fprintf(stderr, "fuzz_javaser: a second reading differs: %zu %zu %zu \"%s\", then %zu %zu %zu \"%s\"\n",
				a.digest, a.pos, a.handles, a.why, b.digest, b.pos, b.handles, b.why);
			abort();
		}
		sink += a.digest;
		ckpt_javaser_free(j);
	}
	return 0;
}
