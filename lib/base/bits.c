/* bits.c: fixed-size bit sets, the representation of subtask sets. */
#include <stdlib.h>
#include <string.h>

#include "base.h"

int
ckpt_bits_init(struct ckpt_bits *b, size_t n, struct ckpt_err *e)
{
	b->n = n;
	b->w = ckpt_calloc((n + 63) / 64, sizeof *b->w, e);
	return b->w ? 0 : -1;
}

void
ckpt_bits_release(struct ckpt_bits *b)
{
	free(b->w);
	b->w = NULL;
	b->n = 0;
}

void
ckpt_bits_set_range(struct ckpt_bits *b, size_t lo, size_t hi)
{
	while (lo < hi && (lo & 63)) {
		ckpt_bits_set(b, lo);
		lo++;
	}
	while (lo + 64 <= hi) {
		b->w[lo >> 6] = ~UINT64_C(0);
		lo += 64;
	}
	while (lo < hi) {
		ckpt_bits_set(b, lo);
		lo++;
	}
}

size_t
ckpt_bits_count(const struct ckpt_bits *b)
{
	size_t c = 0;

	for (size_t i = 0; i < (b->n + 63) / 64; i++)
		c += (size_t)__builtin_popcountll(b->w[i]);
	return c;
}

size_t
ckpt_bits_next(const struct ckpt_bits *b, size_t i)
{
	size_t k;
	uint64_t w;

	if (i >= b->n)
		return b->n;
	k = i >> 6;
	w = b->w[k] & (~UINT64_C(0) << (i & 63));
	for (;;) {
		if (w) {
			size_t r = k * 64 + (size_t)__builtin_ctzll(w);
			return r < b->n ? r : b->n;
		}
		if (++k >= (b->n + 63) / 64)
			return b->n;
		w = b->w[k];
	}
}

/* Looks only at the words of [lo, hi), so that short ranges cost O(1). */
int
ckpt_bits_any_in(const struct ckpt_bits *b, size_t lo, size_t hi)
{
	size_t wl, wh;
	uint64_t mlo, mhi;

	if (hi > b->n)
		hi = b->n;
	if (lo >= hi)
		return 0;
	wl = lo >> 6;
	wh = (hi - 1) >> 6;
	mlo = ~UINT64_C(0) << (lo & 63);
	mhi = ~UINT64_C(0) >> (63 - ((hi - 1) & 63));
	if (wl == wh)
		return (b->w[wl] & mlo & mhi) != 0;
	if (b->w[wl] & mlo)
		return 1;
	for (size_t k = wl + 1; k < wh; k++)
		if (b->w[k])
			return 1;
	return (b->w[wh] & mhi) != 0;
}

void
ckpt_bits_copy(struct ckpt_bits *dst, const struct ckpt_bits *src, int complement)
{
	size_t nw = (dst->n + 63) / 64;

	for (size_t k = 0; k < nw; k++)
		dst->w[k] = complement ? ~src->w[k] : src->w[k];
	if (complement && (dst->n & 63))
		dst->w[nw - 1] &= ~UINT64_C(0) >> (64 - (dst->n & 63));
}

int
ckpt_bits_equal(const struct ckpt_bits *a, const struct ckpt_bits *b)
{
	return a->n == b->n && memcmp(a->w, b->w, (a->n + 63) / 64 * sizeof *a->w) == 0;
}

/* The bits of the last word of b that lie within b->n. */
static uint64_t
last_mask(const struct ckpt_bits *b)
{
	return b->n & 63 ? (UINT64_C(1) << (b->n & 63)) - 1 : ~UINT64_C(0);
}

int
ckpt_bits_fill(struct ckpt_bits *b)
{
	size_t nw = (b->n + 63) / 64;
	uint64_t changed = 0;

	for (size_t k = 0; k < nw; k++) {
		uint64_t w = k == nw - 1 ? last_mask(b) : ~UINT64_C(0);

		changed |= w & ~b->w[k];
		b->w[k] |= w;
	}
	return changed != 0;
}

int
ckpt_bits_or(struct ckpt_bits *dst, const struct ckpt_bits *src)
{
	uint64_t changed = 0;

	for (size_t k = 0; k < (dst->n + 63) / 64; k++) {
		changed |= src->w[k] & ~dst->w[k];
		dst->w[k] |= src->w[k];
	}
	return changed != 0;
}

int
ckpt_bits_or_not(struct ckpt_bits *dst, const struct ckpt_bits *src)
{
	size_t nw = (dst->n + 63) / 64;
	uint64_t changed = 0;

	for (size_t k = 0; k < nw; k++) {
		uint64_t w = k == nw - 1 ? ~src->w[k] & last_mask(dst) : ~src->w[k];

		changed |= w & ~dst->w[k];
		dst->w[k] |= w;
	}
	return changed != 0;
}

void
ckpt_bits_andnot(struct ckpt_bits *dst, const struct ckpt_bits *src)
{
	for (size_t k = 0; k < (dst->n + 63) / 64; k++)
		dst->w[k] &= ~src->w[k];
}

void
ckpt_bits_clear_all(struct ckpt_bits *b)
{
	memset(b->w, 0, (b->n + 63) / 64 * sizeof *b->w);
}
