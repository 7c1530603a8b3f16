/* hash.c: XXH3-64, the one checksum of archives and logs. */
#include <stdlib.h>

#define XXH_INLINE_ALL /* the hash inlined: small inputs cost no call */
#include <xxhash.h>

#include "base.h"

/*
 * Inlined, XXH3 is compiled for the build's baseline, SSE2 on x86-64: half the
 * speed of AVX2 and AVX-512, which libxxhash's own entry points choose at run
 * time (xxh_x86dispatch, as xxhsum does).  Large inputs go there when the
 * library has them (the Makefile looks: CKPT_XXH_DISPATCH); the state is the
 * same struct either way.
 */
#define DISPATCH_MIN 4096
#ifdef CKPT_XXH_DISPATCH
XXH_errorcode XXH3_64bits_update_dispatch(XXH3_state_t *st, const void *p, size_t len);
XXH64_hash_t XXH3_64bits_dispatch(const void *p, size_t len);
#define HAVE_DISPATCH 1
#else
#define HAVE_DISPATCH 0
#define XXH3_64bits_update_dispatch XXH3_64bits_update
#define XXH3_64bits_dispatch XXH3_64bits
#endif

struct ckpt_hasher {
	XXH3_state_t *st;
};

uint64_t
ckpt_xxh3(const void *p, size_t len)
{
	if (len >= DISPATCH_MIN && HAVE_DISPATCH)
		return XXH3_64bits_dispatch(p, len);
	return XXH3_64bits(p, len);
}

struct ckpt_hasher *
ckpt_hasher_new(void)
{
	struct ckpt_hasher *h = malloc(sizeof *h);

	if (h == NULL)
		return NULL;
	h->st = XXH3_createState();
	if (h->st == NULL) {
		free(h);
		return NULL;
	}
	XXH3_64bits_reset(h->st);
	return h;
}

void
ckpt_hasher_reset(struct ckpt_hasher *h)
{
	XXH3_64bits_reset(h->st);
}

void
ckpt_hasher_update(struct ckpt_hasher *h, const void *p, size_t len)
{
	if (len >= DISPATCH_MIN && HAVE_DISPATCH)
		XXH3_64bits_update_dispatch(h->st, p, len);
	else
		XXH3_64bits_update(h->st, p, len);
}

uint64_t
ckpt_hasher_digest(const struct ckpt_hasher *h)
{
	return XXH3_64bits_digest(h->st);
}

void
ckpt_hasher_free(struct ckpt_hasher *h)
{
	if (h == NULL)
		return;
	XXH3_freeState(h->st);
	free(h);
}

void
ckpt_hex64(uint64_t v, char out[17])
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 15; i >= 0; i--) {
		out[i] = hex[v & 15];
		v >>= 4;
	}
	out[16] = '\0';
}

int
ckpt_parse_hex64(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 16; i++) {
		char c = s[i];
		int d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else
			return -1;
		v = v << 4 | (uint64_t)d;
	}
	if (s[16] != '\0')
		return -1;
	*out = v;
	return 0;
}
