/* idmap.c: the one open-addressing hash of the library, from a caller's keys to indices of its array. */
#include <stdlib.h>

#include "base.h"

#define MIN_CAP 16

static size_t
cap_for(size_t n)
{
	size_t cap = MIN_CAP;

	while (cap < 2 * n)
		cap *= 2;
	return cap;
}

int
ckpt_idmap_init(struct ckpt_idmap *m, size_t n, struct ckpt_err *e)
{
	size_t cap = cap_for(n), *s = ckpt_calloc(cap, sizeof *s, e);

	if (s == NULL)
		return -1;
	free(m->slot);
	m->slot = s;
	m->cap = cap;
	m->n = 0;
	return 0;
}

static void
put(size_t *slot, size_t cap, uint64_t h, size_t i)
{
	size_t k = (size_t)h & (cap - 1);

	while (slot[k])
		k = (k + 1) & (cap - 1);
	slot[k] = i + 1;
}

int
ckpt_idmap_add(struct ckpt_idmap *m, uint64_t h, size_t i, ckpt_idmap_hash_fn *hash, const void *ctx,
	       struct ckpt_err *e)
{
	if (2 * (m->n + 1) > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : MIN_CAP, *s = ckpt_calloc(cap, sizeof *s, e);

		if (s == NULL)
			return -1;
		for (size_t k = 0; k < m->cap; k++)
			if (m->slot[k])
				put(s, cap, hash(ctx, m->slot[k] - 1), m->slot[k] - 1);
		free(m->slot);
		m->slot = s;
		m->cap = cap;
	}
	put(m->slot, m->cap, h, i);
	m->n++;
	return 0;
}

void
ckpt_idmap_release(struct ckpt_idmap *m)
{
	free(m->slot);
	m->slot = NULL;
	m->cap = m->n = 0;
}
