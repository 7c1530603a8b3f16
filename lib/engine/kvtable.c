/*
 * kvtable.c: the operators' in-memory state: an open-addressing table from
 * (key, namespace) to a number.  Not ckpt_idmap: this is the operators' hot
 * path, so the entries live in the slots themselves (one cache line per
 * probe, no index into a second array), and state is deleted (backward
 * shift), which the index-only ckpt_idmap does not offer.
 */
#include <stdlib.h>
#include <string.h>

#include "kvtable.h"

static size_t
slot_of(const struct ckpt_kvt *t, uint64_t k, int64_t ns)
{
	uint64_t x[2] = {k, (uint64_t)ns};

	return (size_t)(ckpt_xxh3(x, sizeof x) & (t->cap - 1));
}

static int
kvt_grow(struct ckpt_kvt *t)
{
	struct ckpt_kvt n = {0};

	n.cap = t->cap ? t->cap * 2 : 64;
	n.s = calloc(n.cap, sizeof *n.s);
	if (n.s == NULL)
		return -1;
	for (size_t i = 0; i < t->cap; i++)
		if (t->s[i].used)
			*ckpt_kvt_get(&n, t->s[i].k, t->s[i].ns, 1) = t->s[i].v;
	free(t->s);
	*t = n;
	return 0;
}

int64_t *
ckpt_kvt_get(struct ckpt_kvt *t, uint64_t k, int64_t ns, int create)
{
	size_t i;

	if (create && (t->n + 1) * 4 > t->cap * 3 && kvt_grow(t) < 0)
		return NULL;
	if (t->cap == 0)
		return NULL;
	for (i = slot_of(t, k, ns);; i = (i + 1) & (t->cap - 1)) {
		struct ckpt_kvslot *s = &t->s[i];

		if (!s->used)
			break;
		if (s->k == k && s->ns == ns)
			return &s->v;
	}
	if (!create)
		return NULL;
	t->s[i] = (struct ckpt_kvslot){k, ns, 0, 1};
	t->n++;
	return &t->s[i].v;
}

/* Backward-shift deletion keeps probe chains whole without tombstones. */
void
ckpt_kvt_del(struct ckpt_kvt *t, uint64_t k, int64_t ns)
{
	size_t i, j;

	if (t->cap == 0)
		return;
	for (i = slot_of(t, k, ns);; i = (i + 1) & (t->cap - 1)) {
		if (!t->s[i].used)
			return;
		if (t->s[i].k == k && t->s[i].ns == ns)
			break;
	}
	t->s[i].used = 0;
	t->n--;
	for (j = (i + 1) & (t->cap - 1); t->s[j].used; j = (j + 1) & (t->cap - 1)) {
		size_t h = slot_of(t, t->s[j].k, t->s[j].ns);

		/* move j into the hole at i when its home slot does not lie in (i, j] */
		if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j))) {
			t->s[i] = t->s[j];
			t->s[j].used = 0;
			i = j;
		}
	}
}

void
ckpt_kvt_free(struct ckpt_kvt *t)
{
	free(t->s);
	memset(t, 0, sizeof *t);
}
