/* fuzz_flinkstate.c: the Flink state readers (flink/state-*.c, serializer.c, snappy.c) on
 * any bytes, held inline by a _metadata made around them.  Input: one byte of mode (0 operator
 * state, 1 a canonical savepoint's keyed state, 2 a key-groups handle: heap or full snapshot),
 * three big-endian u32 offsets (operator: the two elements of list state "names"; savepoint: key
 * groups 29, 86 and 94 of 0-127; key groups: the one key group 29 of 29-29; max parallelism
 * 128), then the state file.  The mode byte's bit 0x10 names the operator's list state
 * "SourceReaderState" (a source's splits, typed by connector.c); bit 0x20 makes the state file the
 * operator's coordinator state too (a source enumerator's checkpoint, typed by -a's document).
 * Bits 0xc0 name it as the legacy connectors' and sinks' states legacyconn.c types: 0x40
 * "topic-partition-offset-states", 0x80 "writer_raw_states" (the KafkaSink's or the FileSink's),
 * 0xc0 "streaming_committer_raw_states"; with bit 0x04 set, 0x44 "bucket-states" (StreamingFileSink),
 * 0x84 "state" and 0xc4 "next-transactional-id-hint-v2" (FlinkKafkaProducer's, typed by the value
 * serializer snapshot the file holds).  The low two bits are the mode (3 is 0). */
#include <stdlib.h>
#include <string.h>

#include "ckpt.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct buf {
	unsigned char *p;
	size_t n, cap;
};

static void
put(struct buf *b, const void *p, size_t n)
{
	if (b->n + n > b->cap) {
		size_t c = b->cap ? b->cap : 256;
		unsigned char *q;

		while (c < b->n + n)
			c *= 2;
		if ((q = realloc(b->p, c)) == NULL)
			abort();
		b->p = q;
		b->cap = c;
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void
be(struct buf *b, uint64_t v, int n)
{
	unsigned char x[8];

	for (int i = 0; i < n; i++)
		x[i] = (unsigned char)(v >> (8 * (n - 1 - i)));
	put(b, x, (size_t)n);
}

static void
utf(struct buf *b, const char *s)
{
	be(b, strlen(s), 2);
	put(b, s, strlen(s));
}

static uint32_t
u32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The operator's list state named by the mode byte's bits 0xf4 (flags). */
static const char *
state_name(int flags)
{
	static const char *const legacy[2][4] = {
		{NULL, "topic-partition-offset-states", "writer_raw_states", "streaming_committer_raw_states"},
		{NULL, "bucket-states", "state", "next-transactional-id-hint-v2"},
	};

	if (flags & 0xc0)
		return legacy[(flags & 0x04) != 0][(flags & 0xc0) >> 6];
	return flags & 0x10 ? "SourceReaderState" : "names";
}

/* A version 3 _metadata: one operator (parallelism 1, max parallelism 128), subtask 0. */
static void
metadata(struct buf *m, int mode, int flags, const uint8_t *off, const uint8_t *state, size_t n)
{
	be(m, 0x4960672d, 4);
	be(m, 3, 4);
	be(m, 9, 8);
	be(m, 0, 4);
	be(m, 1, 4);
	be(m, 0x0102030405060708ull, 8);
	be(m, 0x090a0b0c0d0e0f10ull, 8);
	be(m, 1, 4);
	be(m, 128, 4);
	if (flags & 0x20) { /* the state file as the coordinator state, inline */
		be(m, 1, 1);
		utf(m, "c");
		be(m, n, 4);
		put(m, state, n);
	} else {
		be(m, 0, 1);  /* no coordinator state */
	}
	be(m, 1, 4);  /* one subtask entry: */
	be(m, 0, 4);  /* subtask 0 */
	if (mode == 0) {
		be(m, 1, 4);
		be(m, 4, 1);
		be(m, 1, 4);
		utf(m, state_name(flags));
		be(m, 0, 1);
		be(m, 2, 4);
		be(m, u32(off), 8);
		be(m, u32(off + 4), 8);
	} else {
		be(m, 0, 4);
	}
	if (mode == 0) { /* the inline delegate of the operator state */
		be(m, 1, 1);
		utf(m, "h");
		be(m, n, 4);
		put(m, state, n);
	}
	be(m, 0, 4); /* no raw operator state */
	if (mode != 0) {
		be(m, mode == 1 ? 7 : 3, 1);
		be(m, mode == 1 ? 0 : 29, 4);
		be(m, mode == 1 ? 128 : 1, 4);
		for (int kg = mode == 1 ? 0 : 29; kg < (mode == 1 ? 128 : 30); kg++)
			be(m, kg == 29 ? u32(off) : kg == 86 ? u32(off + 4) : kg == 94 ? u32(off + 8) : 0, 8);
		be(m, 1, 1);
		utf(m, "h");
		be(m, n, 4);
		put(m, state, n);
	} else {
		be(m, 0, 1);
	}
	be(m, 0, 1); /* no raw keyed state */
	be(m, 0, 4); /* no input channels */
	be(m, 0, 4); /* no output channels */
}

static void
report(void *arg, const char *where, const char *what)
{
	(void)arg;
	(void)where;
	(void)what;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf m = {0};
	struct ckpt_err e = {0};
	struct ckpt_snapshot *s;
	uint64_t files, bytes;
	const char *path;

	if (size < 13)
		return 0;
	metadata(&m, (data[0] & 0x03) % 3, data[0] & 0xf4, data + 1, data + 13, size - 13);
	path = fuzz_file("_metadata", m.p, m.n);
	free(m.p);
	if (path == NULL || (s = ckpt_snapshot_open(path, &e)) == NULL)
		return 0;
	if (ckpt_flink_state_enable(s, NULL, 0, &e) == 0) {
		json_t *j = ckpt_snapshot_to_json(s, &e);
		char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;

		free(text);
		json_decref(j);
		json_decref(ckpt_flink_state_summary(s, &e));
		ckpt_flink_state_verify(s, report, NULL, &files, &bytes, &e);
	}
	ckpt_snapshot_free(s);
	return 0;
}
