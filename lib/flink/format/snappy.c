/* snappy.c: the chunks of Flink's SnappyFramedOutputStream (xerial, the Snappy framing
 * format), decoded with libsnappy, every checksum verified (Flink's reader skips them). */
#include <pthread.h>
#include <string.h>

#include <snappy-c.h>

#include "format.h"

static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void
crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
		crc_table[i] = c;
	}
}

uint32_t
ckpt_fsnappy_crc32c(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint32_t c = 0xffffffffu;

	pthread_once(&crc_once, crc_init);
	while (n--)
		c = crc_table[(c ^ *b++) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

void
ckpt_fsnappy_header(const unsigned char hdr[4], unsigned *type, size_t *len)
{
	*type = hdr[0];
	*len = (size_t)hdr[1] | (size_t)hdr[2] << 8 | (size_t)hdr[3] << 16;
}

static uint32_t
masked_crc(const unsigned char *p, size_t n)
{
	uint32_t c = ckpt_fsnappy_crc32c(p, n);

	return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

static uint32_t
le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int
ckpt_fsnappy_body(unsigned type, const unsigned char *body, size_t len, unsigned char *out, size_t *n,
		  const char **why)
{
	size_t ulen;

	*n = 0;
	if (type == 0xff) {
		if (len != 6 || memcmp(body, "sNaPpY", 6) != 0)
			return *why = "bad Snappy stream identifier", -1;
		return 0;
	}
	if (type >= 0x80) /* padding (0xfe) and the skippable reserved range */
		return 0;
	if (type > 0x01)
		return *why = "reserved unskippable Snappy chunk type", -1;
	if (len < 4)
		return *why = "Snappy chunk shorter than its checksum", -1;
	if (type == 0x01) {
		if (len - 4 > CKPT_FSNAPPY_BLOCK)
			return *why = "uncompressed Snappy chunk longer than 65536 bytes", -1;
		memcpy(out, body + 4, len - 4);
		ulen = len - 4;
	} else {
		if (snappy_uncompressed_length((const char *)body + 4, len - 4, &ulen) != SNAPPY_OK ||
		    ulen > CKPT_FSNAPPY_BLOCK)
			return *why = "damaged Snappy chunk (bad length)", -1;
		if (snappy_uncompress((const char *)body + 4, len - 4, (char *)out, &ulen) != SNAPPY_OK)
			return *why = "damaged Snappy chunk", -1;
	}
	if (masked_crc(out, ulen) != le32(body))
		return *why = "Snappy chunk checksum mismatch", -1;
	*n = ulen;
	return 0;
}
