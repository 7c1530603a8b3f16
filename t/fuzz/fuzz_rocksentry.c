/* fuzz_rocksentry.c: the decoding of RocksDB entries (ckpt_fstate_rocks_entry: key-group prefix, key,
 * namespace, length suffixes, map user key, value by kind, list delimiters, map null flags, TTL
 * wrappers, timers), not RocksDB itself.  Input: the max parallelism (big-endian u16, 0 taken as
 * 128), a mode byte (bit 0: the typed form as JSON, printed and freed; else only checked), the keyed
 * state header a RocksDB handle's meta data holds (big-endian u32 length, then its bytes), then
 * entries to the end: the state's index in the header (u8, modulo its states), key and value each
 * as a big-endian u32 length and bytes.  An entry's key group is its key's prefix. */
#include <stdlib.h>
#include <string.h>

#include "flink/state/readers.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t
u32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The sink of a read: the typed form as JSON when asked, else left to the reader to check. */
static int
kv(void *arg, const char *state, uint32_t kg, const unsigned char *k, size_t kn, const unsigned char *v, size_t vn,
   struct ckpt_fstate_typed *typed)
{
	int json = *(int *)arg;
	json_t *j = NULL;
	char *text;

	(void)state, (void)kg, (void)k, (void)kn, (void)v, (void)vn;
	if (!json || typed == NULL)
		return 0;
	if (ckpt_fstate_typed_json(typed, &j) < 0)
		return -1;
	text = j ? json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
	free(text);
	json_decref(j);
	return 0;
}

/* Take a u32 length and that many bytes from *p; -1 when they are not all there. */
static int
take(const uint8_t **p, size_t *n, const uint8_t **out, size_t *len)
{
	if (*n < 4 || u32(*p) > *n - 4)
		return -1;
	*len = u32(*p);
	*out = *p + 4;
	*p += 4 + *len;
	*n -= 4 + *len;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ckpt_operator op = {.id = "op", .parallelism = 1};
	struct ckpt_subtask st = {0};
	struct ckpt_err e = {0};
	struct ckpt_fstate_header h = {0};
	struct ckpt_fsrc s;
	const uint8_t *hb, *k, *v;
	size_t hn, kn, vn;
	int json;
	struct ckpt_fstate_sink sink = {.kv = kv, .arg = &json};
	struct ckpt_fstate_ctx c = {.op = &op, .st = &st, .k = &sink, .e = &e};

	if (size < 3)
		return 0;
	op.max_parallelism = (uint32_t)data[0] << 8 | data[1];
	op.max_parallelism = op.max_parallelism ? op.max_parallelism : 128;
	if (op.max_parallelism > 32768)
		op.max_parallelism = 32768;
	c.prefix = op.max_parallelism > 128 ? 2 : 1;
	json = data[2] & 1;
	data += 3, size -= 3;
	if (take(&data, &size, &hb, &hn) < 0)
		return 0;
	ckpt_fsrc_mem(&s, hb, hn, "header", &e);
	snprintf(c.where, sizeof c.where, "fuzz:rocksdb");
	if (ckpt_fstate_read_keyed_header(&s, &h) >= 0 && h.n > 0)
		while (size > 0) {
			uint8_t id = *data++;
			uint32_t kg;

			size--;
			if (take(&data, &size, &k, &kn) < 0 || take(&data, &size, &v, &vn) < 0)
				break;
			kg = kn < c.prefix ? 0 : c.prefix == 2 ? (uint32_t)k[0] << 8 | k[1] : k[0];
			memset(&e, 0, sizeof e);
			ckpt_fstate_rocks_entry(&c, &h, &h.m[id % h.n], h.m[id % h.n].name, kg, k, kn, v, vn);
		}
	ckpt_fsrc_release(&s);
	ckpt_fstate_header_release(&h);
	return 0;
}
