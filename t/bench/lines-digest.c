/* lines-digest.c: an order-free digest of standard input's lines, for t/bench/shards.sh's union check
 * at sizes too large to sort (CKPT_BENCH_UNION=digest): the count of lines, and the sum and the xor
 * of a 64-bit hash of each (FNV-1a, mixed).  Two streams holding the same lines in any order give
 * the same digest; a line lost, doubled or changed changes it. */
#include <stdint.h>
#include <stdio.h>

static uint64_t
mix(uint64_t h)
{
	h ^= h >> 31;
	h *= 0x9e3779b97f4a7c15ull;
	return h ^ h >> 29;
}

int
main(void)
{
	static unsigned char buf[1 << 20];
	uint64_t h = 1469598103934665603ull, sum = 0, x = 0, n = 0;
	size_t r;

	while ((r = fread(buf, 1, sizeof buf, stdin)) > 0)
		for (size_t i = 0; i < r; i++)
			if (buf[i] == '\n') {
				uint64_t m = mix(h);

				sum += m;
				x ^= m * 0xbf58476d1ce4e5b9ull;
				n++;
				h = 1469598103934665603ull;
			} else {
				h = (h ^ buf[i]) * 1099511628211ull;
			}
	if (ferror(stdin))
		return 2;
	printf("%llu %016llx %016llx\n", (unsigned long long)n, (unsigned long long)sum, (unsigned long long)x);
	return 0;
}
