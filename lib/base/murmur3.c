/* murmur3.c: MurmurHash3_x64_128, the hash Flink (through Guava) derives operator ids from uids with. */
#include <string.h>

#include "base.h"

static uint64_t
rotl(uint64_t x, int r)
{
	return x << r | x >> (64 - r);
}

static uint64_t
fmix(uint64_t k)
{
	k ^= k >> 33;
	k *= UINT64_C(0xff51afd7ed558ccd);
	k ^= k >> 33;
	k *= UINT64_C(0xc4ceb9fe1a85ec53);
	k ^= k >> 33;
	return k;
}

static void
store_le(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++, v >>= 8)
		p[i] = (unsigned char)v;
}

/* MurmurHash3_x64_128 of buf: h1 then h2, each little-endian (Guava's asBytes() order). */
static void
murmur3_128(const void *buf, size_t len, uint32_t seed, unsigned char out[16])
{
	const uint64_t c1 = UINT64_C(0x87c37b91114253d5), c2 = UINT64_C(0x4cf5ad432745937f);
	const unsigned char *p = buf;
	uint64_t h1 = seed, h2 = seed, k1, k2;
	size_t i, nblocks = len / 16, rest = len % 16;

	for (i = 0; i < nblocks; i++, p += 16) {
		k1 = ckpt_load_le(p, 8);
		k2 = ckpt_load_le(p + 8, 8);
		h1 ^= rotl(k1 * c1, 31) * c2;
		h1 = (rotl(h1, 27) + h2) * 5 + 0x52dce729;
		h2 ^= rotl(k2 * c2, 33) * c1;
		h2 = (rotl(h2, 31) + h1) * 5 + 0x38495ab5;
	}
	k1 = ckpt_load_le(p, rest < 8 ? rest : 8);
	k2 = rest > 8 ? ckpt_load_le(p + 8, rest - 8) : 0;
	if (rest > 8)
		h2 ^= rotl(k2 * c2, 33) * c1;
	if (rest > 0)
		h1 ^= rotl(k1 * c1, 31) * c2;
	h1 ^= len;
	h2 ^= len;
	h1 += h2;
	h2 += h1;
	h1 = fmix(h1);
	h2 = fmix(h2);
	h1 += h2;
	h2 += h1;
	store_le(out, h1);
	store_le(out + 8, h2);
}

void
ckpt_flink_operator_id(const char *uid, size_t len, char out[33])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char h[16];

	murmur3_128(uid, len, 0, h);
	for (int i = 0; i < 16; i++) {
		out[2 * i] = hex[h[i] >> 4];
		out[2 * i + 1] = hex[h[i] & 15];
	}
	out[32] = '\0';
}
