/* legacyconn.c: the operator state of connectors older than the Source API, and of the sinks
 * (ckpt-flink(5), LEGACY CONNECTORS): FlinkKafkaConsumer's partitions and offsets, the KafkaSink's
 * writer state and the committables its committer holds, FlinkKafkaProducer's transactional id hint
 * and transactions, StreamingFileSink's and the FileSink's buckets and the FileSink's committables,
 * typed where the format parses every byte with sane values. */
#include <stdlib.h>
#include <string.h>

#include "types.h"

#define COLLECTOR_MAGIC 0xb91f252cu
#define KTP_CLASS "org.apache.flink.streaming.connectors.kafka.internals.KafkaTopicPartition"
#define FKP "org.apache.flink.streaming.connectors.kafka.FlinkKafkaProducer$"
#define HINT_SNAP FKP "NextTransactionalIdHintSerializer$NextTransactionalIdHintSerializerSnapshot"
#define TXN_SNAP FKP "TransactionStateSerializer$TransactionStateSerializerSnapshot"
#define CTX_SNAP FKP "ContextStateSerializer$ContextStateSerializerSnapshot"
#define TWOPC_SNAP "org.apache.flink.streaming.api.functions.sink.TwoPhaseCommitSinkFunction$StateSerializerSnapshot"
#define MAX_PARALLELISM 32768
#define BUCKET_MAGIC 0x1e764b79u
#define FILE_COMMITTABLE_MAGIC 0x1e765c80u
#define INPROGRESS_MAGIC 0xb3a4073du
#define PENDING_MAGIC 0x2c853c89u
#define LOCAL_MAGIC 0x1e744b57u

/* KafkaTopicPartitionStateSentinel's offsets: the stored offset by Flink's name, the starting offset
 * by the name the KafkaSource's rows give the same start (ckpt-inspect(1), --offsets). */
static const struct {
	int64_t v;
	const char *name, *starting;
} sentinel[] = {
	{-915623761776LL, "OFFSET_NOT_SET", "not_set"},
	{-915623761775LL, "EARLIEST_OFFSET", "earliest"},
	{-915623761774LL, "LATEST_OFFSET", "latest"},
	{-915623761773LL, "GROUP_OFFSET", "committed"},
};

struct try {
	struct ckpt_fsrc s;
	struct ckpt_err e;
};

#define fail(t, ...) ckpt_fsrc_fail(&(t)->s, __VA_ARGS__)

static void
try_open(struct try *t, const unsigned char *p, size_t n, uint64_t at)
{
	memset(&t->e, 0, sizeof t->e);
	ckpt_fsrc_mem(&t->s, p, n, "", &t->e);
	t->s.base = at;
}

static int
is_cls(const struct ckpt_fser *t, const char *cls)
{
	return t && strcmp(t->cls, cls) == 0;
}

int
ckpt_fser_legacy_kind(const char *state, const struct ckpt_fser *value)
{
	if (is_cls(value, HINT_SNAP))
		return FLEGACY_PRODUCER_HINT;
	if (is_cls(value, TWOPC_SNAP) && value->nkids == 2 && is_cls(value->kids[0], TXN_SNAP) &&
	    is_cls(value->kids[1], CTX_SNAP))
		return value->flag ? FLEGACY_PRODUCER_TXN : FLEGACY_PRODUCER_TXN2;
	if (strcmp(state, "topic-partition-offset-states") == 0)
		return FLEGACY_CONSUMER;
	if (strcmp(state, "writer_raw_states") == 0)
		return FLEGACY_WRITER;
	if (strcmp(state, "streaming_committer_raw_states") == 0)
		return FLEGACY_COMMITTER;
	if (strcmp(state, "bucket-states") == 0)
		return FLEGACY_BUCKETS;
	return 0;
}

/* A serializer's version (1 to hi, 2 or 3) and the magic number its stream begins with: 0, or -1
 * failed. */
static int
version_magic(struct try *t, int32_t version, int32_t hi, const char *serializer, uint32_t want)
{
	int32_t magic;

	if (version < 1 || version > hi)
		return fail(t, "version %d is none of %s's (%s)", (int)version, serializer, hi == 2 ? "1, 2" : "1 to 3");
	if (ckpt_fsrc_i32(&t->s, &magic, "magic number") < 0)
		return -1;
	if ((uint32_t)magic != want) {
		t->s.wpos -= 4;
		return fail(t, "magic number %08X, not %s's %08X", (unsigned)magic, serializer, want);
	}
	return 0;
}

/* Kryo's variable-length int (positive: 7 bits a byte, low first; else zig-zag). */
static int
kryo_varint(struct try *t, int positive, int32_t *v, const char *what)
{
	uint32_t x = 0;
	uint8_t b;

	for (int i = 0; i < 5; i++) {
		if (ckpt_fsrc_u8(&t->s, &b, what) < 0)
			return -1;
		x |= (uint32_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80))
			break;
		if (i == 4)
			return fail(t, "%s: a variable-length int of more than 5 bytes", what);
	}
	*v = positive ? (int32_t)x : (int32_t)((x >> 1) ^ (0u - (x & 1)));
	return 0;
}

/* Kryo's writeString of an ASCII string: its bytes, the last one's high bit set (or, for the
 * empty and 1-character strings, the length + 1 with the 0x80 flag, then the characters). */
static int
kryo_ascii(struct try *t, char *out, size_t cap, const char *what)
{
	size_t n = 0;
	uint8_t b;

	if (ckpt_fsrc_u8(&t->s, &b, what) < 0)
		return -1;
	if (b & 0x80) { /* the length + 1: 6 bits, then 7 a byte while the bit above says more */
		size_t len = (size_t)(b & 0x3f);

		for (int sh = 6, more = b & 0x40; more; sh += 7) {
			if (sh > 27)
				return fail(t, "%s: a length of more than 5 bytes", what);
			if (ckpt_fsrc_u8(&t->s, &b, what) < 0)
				return -1;
			len |= (size_t)(b & 0x7f) << sh;
			more = b & 0x80;
		}
		if (len == 0)
			return fail(t, "%s is null", what);
		if (len > cap)
			return fail(t, "%s longer than %zu bytes", what, cap - 1);
		for (len--; n < len; n++)
			if (ckpt_fsrc_u8(&t->s, &b, what) < 0 || b >= 0x80)
				return t->e.kind ? -1 : fail(t, "%s is not ASCII", what);
			else
				out[n] = (char)b;
		out[n] = '\0';
		return 0;
	}
	for (;;) {
		if (n + 1 >= cap)
			return fail(t, "%s longer than %zu bytes", what, cap - 1);
		out[n++] = (char)(b & 0x7f);
		if (b & 0x80)
			break;
		if (ckpt_fsrc_u8(&t->s, &b, what) < 0)
			return -1;
	}
	out[n] = '\0';
	return 0;
}

/* Java's String.hashCode of modified UTF-8 p[0, n), as DataOutput.writeUTF writes a string (its
 * UTF-16 units, 1 to 3 bytes each; ASCII, a Kafka topic's name say, is its own bytes). */
int32_t
ckpt_fser_java_mutf8_hash(const unsigned char *p, size_t n)
{
	uint32_t h = 0;

	for (size_t i = 0; i < n;) {
		uint32_t c = p[i];

		if (c >= 0xe0 && i + 2 < n) {
			c = (c & 0x0f) << 12 | (p[i + 1] & 0x3fu) << 6 | (p[i + 2] & 0x3fu);
			i += 3;
		} else if (c >= 0xc0 && i + 1 < n) {
			c = (c & 0x1f) << 6 | (p[i + 1] & 0x3fu);
			i += 2;
		} else {
			i++;
		}
		h = 31 * h + c;
	}
	return (int32_t)h;
}

/* The class of a Kryo value: a registered id (any), or KafkaTopicPartition's name. */
static int
ktp_class(struct try *t)
{
	char name[128];
	int32_t id, nid;

	if (kryo_varint(t, 1, &id, "Kryo class") < 0)
		return -1;
	if (id == 0)
		return fail(t, "the partition is null");
	if (id > 1)
		return 0;
	if (kryo_varint(t, 1, &nid, "Kryo class name id") < 0 || kryo_ascii(t, name, sizeof name, "class name") < 0)
		return -1;
	if (strcmp(name, KTP_CLASS) != 0)
		return fail(t, "Kryo class %s is not KafkaTopicPartition", name);
	return 0;
}

/* Kryo's FieldSerializer of KafkaTopicPartition: the reference marker, then its fields by name:
 * cachedHash and partition (zig-zag variable-length ints), topic (a marker, the string).  The hash
 * is 31 * topic.hashCode() + partition, as the class computes it. */
static int
ktp_fields(struct try *t, char *topic, size_t cap, int32_t *part)
{
	int32_t ref, hash;

	if (kryo_varint(t, 1, &ref, "reference marker") < 0)
		return -1;
	if (ref != 1)
		return fail(t, "reference marker %d: not a new object", (int)ref);
	if (kryo_varint(t, 0, &hash, "cachedHash") < 0 || kryo_varint(t, 0, part, "partition") < 0)
		return -1;
	if (*part < 0)
		return fail(t, "partition %d below 0", (int)*part);
	if (kryo_varint(t, 1, &ref, "topic's reference marker") < 0)
		return -1;
	if (ref != 1)
		return fail(t, "topic's reference marker %d: not a string", (int)ref);
	if (kryo_ascii(t, topic, cap, "topic") < 0)
		return -1;
	if (!ckpt_fser_kafka_topic_ok(topic))
		return fail(t, "topic \"%s\" is no Kafka topic name", topic);
	if ((int32_t)(31u * (uint32_t)ckpt_fser_java_mutf8_hash((const unsigned char *)topic, strlen(topic)) + (uint32_t)*part) != hash)
		return fail(t, "cachedHash %d is not that of %s:%d", (int)hash, topic, (int)*part);
	return 0;
}

/* A stored offset: the last record processed (FlinkKafkaConsumer resumes at the next), or a
 * sentinel; -1 is a start at offset 0 (a specific or timestamp start, less one). */
static json_t *
consumer_offset(int64_t v, int starting)
{
	for (size_t i = 0; i < sizeof sentinel / sizeof sentinel[0]; i++)
		if (v == sentinel[i].v)
			return json_string(starting ? sentinel[i].starting : sentinel[i].name);
	if (v < -1 || v == INT64_MAX)
		return NULL;
	return json_integer(starting ? v + 1 : v);
}

/* Tuple2<KafkaTopicPartition, Long>: Kryo's partition, then the offset. */
static json_t *
consumer_element(struct try *t)
{
	char topic[256];
	int32_t part;
	int64_t off;
	json_t *a, *b;

	if (ktp_class(t) < 0 || ktp_fields(t, topic, sizeof topic, &part) < 0 || ckpt_fsrc_i64(&t->s, &off, "offset") < 0)
		return NULL;
	if ((a = consumer_offset(off, 0)) == NULL || (b = consumer_offset(off, 1)) == NULL) {
		json_decref(a);
		t->s.wpos -= 8;
		fail(t, "offset %lld is neither an offset nor a sentinel", (long long)off);
		return NULL;
	}
	if (!ckpt_fsrc_drained(&t->s)) {
		json_decref(a);
		json_decref(b);
		fail(t, "%zu bytes after the offset", (size_t)(t->s.wlen - t->s.wpos));
		return NULL;
	}
	return json_pack("{s:s, s:s, s:i, s:o, s:o}", "connector", "flink_kafka_consumer", "topic", topic, "partition",
			 (int)part, "offset", a, "starting_offset", b);
}

/* KafkaWriterStateSerializer: versions 0 and 1 the transactional id prefix alone; 2 adds the
 * subtask owning the transactions, how many, the ownership and the precommitted transactions. */
static json_t *
writer_state(struct try *t, int32_t version)
{
	static const char *const own[] = {"IMPLICIT_BY_SUBTASK_ID", "EXPLICIT_BY_WRITER_STATE"};
	char *prefix = NULL, *id = NULL;
	int32_t sub, total, ow, cnt;
	json_t *v = NULL, *list = NULL;

	if (version < 0 || version > 2) {
		fail(t, "version %d is none of KafkaWriterStateSerializer's (0 to 2)", (int)version);
		return NULL;
	}
	if (ckpt_fsrc_utf(&t->s, &prefix, "transactional id prefix") < 0)
		goto out;
	if (version < 2) {
		v = json_pack("{s:s, s:i, s:s}", "connector", "kafka_sink", "version", (int)version,
			      "transactional_id_prefix", prefix);
		goto out;
	}
	if (ckpt_fsrc_i32(&t->s, &sub, "owned subtask") < 0 || ckpt_fsrc_i32(&t->s, &total, "owned subtasks") < 0 ||
	    ckpt_fsrc_i32(&t->s, &ow, "transaction ownership") < 0 || ckpt_fsrc_i32(&t->s, &cnt, "precommitted count") < 0)
		goto out;
	if (sub < -1 || total < -1 || ow < 0 || ow > 1 || cnt < 0 || (size_t)cnt > t->s.wlen - t->s.wpos) {
		fail(t, "owned subtask %d of %d, ownership %d, %d precommitted: not sane", (int)sub, (int)total, (int)ow,
		     (int)cnt);
		goto out;
	}
	list = json_array();
	for (int32_t i = 0; list && i < cnt; i++) {
		int64_t ck;

		if (ckpt_fsrc_utf(&t->s, &id, "transactional id") < 0 || ckpt_fsrc_i64(&t->s, &ck, "checkpoint id") < 0)
			goto out;
		json_array_append_new(list, json_pack("{s:s, s:I}", "transactional_id", id, "checkpoint_id", (json_int_t)ck));
		free(id);
		id = NULL;
	}
	v = json_pack("{s:s, s:i, s:s, s:i, s:i, s:s, s:O}", "connector", "kafka_sink", "version", (int)version,
		      "transactional_id_prefix", prefix, "owned_subtask", (int)sub, "owned_subtasks", (int)total,
		      "transaction_ownership", own[ow], "precommitted", list);
out:
	json_decref(list);
	free(prefix);
	free(id);
	return v;
}

/* A frame: i32 length, checked against what is left; *end where it ends. */
static int
frame(struct try *t, size_t *end, const char *what)
{
	int32_t len;

	if (ckpt_fsrc_i32(&t->s, &len, what) < 0)
		return -1;
	if (len < 0 || (size_t)len > t->s.wlen - t->s.wpos) {
		t->s.wpos -= 4;
		return fail(t, "%s %d, but %zu bytes follow it", what, (int)len, (size_t)(t->s.wlen - t->s.wpos - 4));
	}
	*end = t->s.wpos + (size_t)len;
	return 0;
}

static int
frame_end(struct try *t, size_t end, const char *what)
{
	if (t->s.wpos != end)
		return fail(t, "%s ends %zu bytes %s its length", what, t->s.wpos > end ? t->s.wpos - end : end - t->s.wpos,
			    t->s.wpos > end ? "past" : "before");
	return 0;
}

/* KafkaCommittableSerializer version 1: i16 epoch, i64 producer id, UTF transactional id. */
static json_t *
kafka_committable(struct try *t, int32_t version)
{
	int16_t epoch;
	int64_t pid;
	char *id = NULL;
	json_t *v = NULL;

	if (version != 1)
		fail(t, "version %d is not KafkaCommittableSerializer's (1)", (int)version);
	else if (ckpt_fsrc_i16(&t->s, &epoch, "epoch") == 0 && ckpt_fsrc_i64(&t->s, &pid, "producer id") == 0 &&
		 ckpt_fsrc_utf(&t->s, &id, "transactional id") == 0) {
		if (epoch < -1 || pid < -1)
			fail(t, "epoch %d, producer id %lld: not sane", (int)epoch, (long long)pid);
		else
			v = json_pack("{s:s, s:i, s:i, s:I, s:s}", "connector", "kafka_sink", "version", (int)version,
				      "epoch", (int)epoch, "producer_id", (json_int_t)pid, "transactional_id", id);
	}
	free(id);
	return v;
}

static json_t *file_committable(struct try *t, int32_t version);

/* fn's value of the bytes from here to end when it parses them exactly, else NULL. */
static json_t *
exactly(struct try *t, int32_t ver, size_t end, json_t *(*fn)(struct try *, int32_t))
{
	size_t at = t->s.wpos;
	struct try k;
	json_t *c;

	try_open(&k, t->s.win + at, end - at, t->s.base + at);
	c = fn(&k, ver);
	if (c && !ckpt_fsrc_drained(&k.s)) {
		json_decref(c);
		c = NULL;
	}
	ckpt_fsrc_release(&k.s);
	return c;
}

/* The committable of serializer version ver from here to end: Kafka's or the FileSink's when it
 * parses as that exactly, else {"connector": null, "version", "bytes"}; the source then at end. */
static json_t *
committable_of(struct try *t, int32_t ver, size_t end)
{
	size_t at = t->s.wpos;
	json_t *c;

	if ((c = exactly(t, ver, end, kafka_committable)) == NULL)
		c = exactly(t, ver, end, file_committable);
	if (c == NULL)
		c = json_pack("{s:n, s:i, s:o}", "connector", "version", (int)ver, "bytes", ckpt_entry_to_json(t->s.win + at, end - at));
	t->s.wpos = end;
	return c;
}

static json_t *
bare_committable(struct try *t, int32_t ver, size_t end)
{
	return committable_of(t, ver, end);
}

/* One CommitRequest (version 0): the committable (SimpleVersionedSerialization), retries, state;
 * the committable Kafka's when it parses as that, its bytes otherwise. */
static json_t *
commit_request(struct try *t)
{
	static const char *const st[] = {"RECEIVED", "RETRY", "FAILED", "COMMITTED"};
	int32_t ver, retries = 0, state = 0;
	size_t end;
	json_t *c;

	if (ckpt_fsrc_i32(&t->s, &ver, "committable version") < 0 || frame(t, &end, "committable length") < 0)
		return NULL;
	if ((c = committable_of(t, ver, end)) == NULL)
		return NULL;
	if (ckpt_fsrc_i32(&t->s, &retries, "retries") < 0 || ckpt_fsrc_i32(&t->s, &state, "request state") < 0 ||
	    retries < 0 || state < 0 || state > 3) {
		if (t->e.kind == CKPT_ERR_NONE)
			fail(t, "retries %d, state %d: not sane", (int)retries, (int)state);
		json_decref(c);
		return NULL;
	}
	json_object_set_new(c, "retries", json_integer(retries));
	json_object_set_new(c, "request_state", json_string(st[state]));
	return c;
}

/* A list as SimpleVersionedSerialization writes it: i32 version, i32 count, each i32 length and
 * bytes, each parsed by fn (version) to its length exactly. */
static json_t *
versioned_list(struct try *t, int32_t lo, int32_t hi, json_t *(*fn)(struct try *, int32_t, size_t), const char *what)
{
	int32_t ver, cnt;
	json_t *a = json_array();

	if (a == NULL || ckpt_fsrc_i32(&t->s, &ver, what) < 0 || ckpt_fsrc_i32(&t->s, &cnt, what) < 0)
		goto bad;
	if (ver < lo || ver > hi || cnt < 0 || (size_t)cnt > (t->s.wlen - t->s.wpos) / 4) {
		fail(t, "%s version %d, count %d: not sane", what, (int)ver, (int)cnt);
		goto bad;
	}
	for (int32_t i = 0; i < cnt; i++) {
		size_t end;
		json_t *x;

		if (frame(t, &end, what) < 0 || (x = fn(t, ver, end)) == NULL)
			goto bad;
		json_array_append_new(a, x);
		if (frame_end(t, end, what) < 0)
			goto bad;
	}
	return a;
bad:
	json_decref(a);
	return NULL;
}

static json_t *
request_of(struct try *t, int32_t ver, size_t end)
{
	(void)end;
	(void)ver;
	return commit_request(t);
}

/* SubtaskCommittableManager: versions 1 (Flink 1.19, 1.20: with the drained count) and 2. */
static json_t *
subtask_of(struct try *t, int32_t ver, size_t end)
{
	(void)end;
	int32_t id, ncomm = 0, ndrained = 0, nfailed = 0;
	json_t *req, *v;

	if (ckpt_fsrc_i32(&t->s, &id, "subtask id") < 0 || (req = versioned_list(t, 0, 0, request_of, "requests")) == NULL)
		return NULL;
	if (ckpt_fsrc_i32(&t->s, &ncomm, "committables") < 0 || (ver < 2 && ckpt_fsrc_i32(&t->s, &ndrained, "drained") < 0) ||
	    ckpt_fsrc_i32(&t->s, &nfailed, "failed") < 0 || id < 0 || ncomm < 0 || ndrained < 0 || nfailed < 0) {
		if (t->e.kind == CKPT_ERR_NONE)
			fail(t, "subtask %d, %d committables, %d drained, %d failed: not sane", (int)id, (int)ncomm,
			     (int)ndrained, (int)nfailed);
		json_decref(req);
		return NULL;
	}
	v = json_pack("{s:i, s:o, s:i, s:i}", "subtask", (int)id, "requests", req, "committables", (int)ncomm,
		      "failed", (int)nfailed);
	if (v && ver < 2)
		json_object_set_new(v, "drained", json_integer(ndrained));
	return v;
}

/* CheckpointCommittableManager, version 1: i64 checkpoint id, i32 subtasks, the subtasks' list. */
static json_t *
checkpoint_of(struct try *t, int32_t ver, size_t end)
{
	(void)end;
	int64_t ck;
	int32_t nsub;
	json_t *subs;

	(void)ver;
	if (ckpt_fsrc_i64(&t->s, &ck, "checkpoint id") < 0 || ckpt_fsrc_i32(&t->s, &nsub, "subtasks") < 0)
		return NULL;
	if (ck < 0 || nsub < 1) {
		fail(t, "checkpoint %lld of %d subtasks: not sane", (long long)ck, (int)nsub);
		return NULL;
	}
	if ((subs = versioned_list(t, 1, 2, subtask_of, "subtask committables")) == NULL)
		return NULL;
	return json_pack("{s:I, s:i, s:o}", "checkpoint_id", (json_int_t)ck, "number_of_subtasks", (int)nsub,
			 "subtasks", subs);
}

/* CommittableCollectorSerializer version 2: the magic number, the checkpoints' list. */
static json_t *
committer_state(struct try *t, int32_t version)
{
	json_t *cks;

	if (version_magic(t, version, 2, "CommittableCollectorSerializer", COLLECTOR_MAGIC) < 0)
		return NULL;
	if (version == 1) { /* Sink V1's committables (SinkV1CommittableDeserializer): a list, no checkpoints */
		if ((cks = versioned_list(t, INT32_MIN, INT32_MAX, bare_committable, "committables")) == NULL)
			return NULL;
		return json_pack("{s:s, s:i, s:o}", "state", "committables", "version", (int)version, "committables", cks);
	}
	if ((cks = versioned_list(t, 1, 1, checkpoint_of, "checkpoints")) == NULL)
		return NULL;
	return json_pack("{s:s, s:i, s:o}", "state", "committables", "version", (int)version, "checkpoints", cks);
}

/* A flag byte (0 or 1), refused at its offset otherwise. */
static int
flag_u8(struct try *t, uint8_t *b, const char *what)
{
	if (ckpt_fsrc_u8(&t->s, b, what) < 0)
		return -1;
	if (*b > 1) {
		t->s.wpos--;
		return fail(t, "%s %u", what, *b);
	}
	return 0;
}

/* writeUTF's string, its u16 length checked against what is left first (named at its offset). */
static int
utf_fits(struct try *t, char **out, const char *what)
{
	int16_t l;
	uint16_t len;

	if (ckpt_fsrc_i16(&t->s, &l, what) < 0)
		return -1;
	len = (uint16_t)l;
	t->s.wpos -= 2;
	if (len > t->s.wlen - t->s.wpos - 2)
		return fail(t, "%s length %u, but %zu bytes follow it", what, (unsigned)len, (size_t)(t->s.wlen - t->s.wpos - 2));
	return ckpt_fsrc_utf(&t->s, out, what);
}

/* FlinkKafkaProducer's NextTransactionalIdHint: i64 the next free transactional id, i32 the
 * parallelism it was taken at. */
static json_t *
producer_hint(struct try *t)
{
	int64_t next;
	int32_t par;

	if (ckpt_fsrc_i64(&t->s, &next, "next transactional id") < 0 || ckpt_fsrc_i32(&t->s, &par, "last parallelism") < 0)
		return NULL;
	if (next < 0 || par < 1 || par > MAX_PARALLELISM) {
		t->s.wpos -= 12;
		fail(t, "next transactional id %lld at parallelism %d: not sane", (long long)next, (int)par);
		return NULL;
	}
	return json_pack("{s:s, s:I, s:i}", "connector", "flink_kafka_producer", "next_transactional_id",
			 (json_int_t)next, "last_parallelism", (int)par);
}

/* A TransactionHolder of KafkaTransactionState: a flag, the transactional id (UTF) when set, i64
 * producer id, i16 epoch; then i64 the transaction's start time. */
static json_t *
producer_txn(struct try *t)
{
	uint8_t has;
	char *id = NULL;
	int64_t pid, start;
	int16_t epoch;
	json_t *v = NULL;

	if (flag_u8(t, &has, "transactional id flag") < 0)
		return NULL;
	if ((has && utf_fits(t, &id, "transactional id") < 0) || ckpt_fsrc_i64(&t->s, &pid, "producer id") < 0 ||
	    ckpt_fsrc_i16(&t->s, &epoch, "epoch") < 0 || ckpt_fsrc_i64(&t->s, &start, "transaction start time") < 0)
		goto out;
	if (pid < -1 || epoch < -1 || start < 0) {
		t->s.wpos -= 18;
		fail(t, "producer id %lld, epoch %d, start time %lld: not sane", (long long)pid, (int)epoch, (long long)start);
		goto out;
	}
	v = json_pack("{s:s?, s:I, s:i, s:I}", "transactional_id", id, "producer_id", (json_int_t)pid, "epoch", (int)epoch,
		      "start_time", (json_int_t)start);
out:
	free(id);
	return v;
}

/* KafkaTransactionContext: i32 count, the transactional ids (UTF). */
static json_t *
producer_context(struct try *t)
{
	int32_t n;
	char *id;
	json_t *a;

	if (ckpt_fsrc_i32(&t->s, &n, "transactional id count") < 0)
		return NULL;
	if (n < 0 || (size_t)n > (t->s.wlen - t->s.wpos) / 2) {
		t->s.wpos -= 4;
		fail(t, "transactional id count %d, but %zu bytes follow it", (int)n, (size_t)(t->s.wlen - t->s.wpos - 4));
		return NULL;
	}
	if ((a = json_array()) == NULL)
		return NULL;
	for (int32_t i = 0; i < n; i++) {
		if (utf_fits(t, &id, "transactional id") < 0) {
			json_decref(a);
			return NULL;
		}
		json_array_append_new(a, json_string(id));
		free(id);
	}
	return a;
}

/* TwoPhaseCommitSinkFunction.State of FlinkKafkaProducer: the pending transaction (after a flag
 * from outer snapshot version 3 on: flagged, it may be absent), i32 count, the pending commit
 * transactions, then a flag and the context. */
static json_t *
producer_state(struct try *t, int flagged)
{
	uint8_t has = 1;
	int32_t n;
	json_t *pend = NULL, *list = NULL, *ctx = NULL, *x;

	if (flagged && flag_u8(t, &has, "pending transaction flag") < 0)
		return NULL;
	if (has && (pend = producer_txn(t)) == NULL)
		return NULL;
	if (ckpt_fsrc_i32(&t->s, &n, "pending commit transactions") < 0)
		goto bad;
	if (n < 0 || (size_t)n > (t->s.wlen - t->s.wpos) / 19) {
		t->s.wpos -= 4;
		fail(t, "%d pending commit transactions, but %zu bytes follow", (int)n, (size_t)(t->s.wlen - t->s.wpos - 4));
		goto bad;
	}
	if ((list = json_array()) == NULL)
		goto bad;
	for (int32_t i = 0; i < n; i++) {
		if ((x = producer_txn(t)) == NULL)
			goto bad;
		json_array_append_new(list, x);
	}
	if (flag_u8(t, &has, "context flag") < 0 ||
	    (has && (ctx = producer_context(t)) == NULL))
		goto bad;
	return json_pack("{s:s, s:o, s:o, s:o}", "connector", "flink_kafka_producer", "pending_transaction",
			 pend ? pend : json_null(), "pending_commit_transactions", list, "transactional_ids",
			 ctx ? ctx : json_null());
bad:
	json_decref(pend);
	json_decref(list);
	return NULL;
}

/* FlinkKafkaProducer's element p[0, n): every byte parsed, else the input refused naming the offset. */
static int
producer_typed(int kind, const unsigned char *p, size_t n, uint64_t at, const char *where, json_t **v,
	       struct ckpt_err *e)
{
	struct try t;

	try_open(&t, p, n, at);
	*v = kind == FLEGACY_PRODUCER_HINT ? producer_hint(&t) : producer_state(&t, kind == FLEGACY_PRODUCER_TXN);
	if (*v && !ckpt_fsrc_drained(&t.s)) {
		fail(&t, "%zu bytes after the %s", (size_t)(t.s.wlen - t.s.wpos),
		     kind == FLEGACY_PRODUCER_HINT ? "hint" : "state");
		json_decref(*v);
		*v = NULL;
	}
	ckpt_fsrc_release(&t.s);
	if (*v)
		return 0;
	if (t.e.kind == CKPT_ERR_NONE || t.e.kind == CKPT_ERR_NOMEM)
		return ckpt_err_nomem(e, where);
	return ckpt_err_set(e, CKPT_ERR_INPUT, where, "flink_kafka_producer: %s", t.e.text);
}

/* LocalRecoverableSerializer 1, the local file system's resume and commit recoverable, little-endian:
 * i32 magic, i64 offset, i32 target length, i32 temp length, the two paths; NULL unless exactly that. */
static json_t *
local_recoverable(int32_t ver, const unsigned char *p, size_t n)
{
	uint64_t off, tl, ml;

	if (ver != 1 || n < 20 || ckpt_load_le(p, 4) != LOCAL_MAGIC)
		return NULL;
	off = ckpt_load_le(p + 4, 8);
	tl = ckpt_load_le(p + 12, 4);
	ml = ckpt_load_le(p + 16, 4);
	if (off > INT64_MAX || tl > n - 20 || ml != n - 20 - tl)
		return NULL;
	return json_pack("{s:i, s:s, s:I, s:s%, s:s%}", "version", 1, "file_system", "local", "offset", (json_int_t)off,
			 "target_file", (const char *)p + 20, (size_t)tl, "temp_file", (const char *)p + 20 + tl, (size_t)ml);
}

/* OutputStreamBasedPartFileWriter's in-progress (magic 0xB3A4073D) or pending (0x2C853C89) file
 * recoverable, versions 1 and 2: the magic; version 2 a flag and the UTF target path, and when
 * pending the i64 file size; the file system's recoverable framed (i32 version, i32 length, the
 * bytes), typed when the local file system's.  NULL unless exactly that. */
static json_t *
part_file(int32_t ver, const unsigned char *p, size_t n, uint64_t at)
{
	struct try t;
	uint32_t magic;
	int32_t fver;
	int64_t size = -1;
	uint8_t has = 0;
	char *target = NULL;
	size_t end;
	json_t *fs = NULL, *v = NULL;

	if ((ver != 1 && ver != 2) || n < 4 || ((magic = ckpt_be32(p)) != INPROGRESS_MAGIC && magic != PENDING_MAGIC))
		return NULL;
	try_open(&t, p + 4, n - 4, at + 4);
	if ((ver == 2 && (flag_u8(&t, &has, "target flag") < 0 || (has && utf_fits(&t, &target, "target path") < 0) ||
			  (magic == PENDING_MAGIC && ckpt_fsrc_i64(&t.s, &size, "file size") < 0))) ||
	    ckpt_fsrc_i32(&t.s, &fver, "recoverable version") < 0 || frame(&t, &end, "recoverable length") < 0 ||
	    end != t.s.wlen)
		goto out;
	fs = local_recoverable(fver, t.s.win + t.s.wpos, end - t.s.wpos);
	if (fs == NULL)
		fs = json_pack("{s:i, s:o}", "version", (int)fver, "bytes", ckpt_entry_to_json(t.s.win + t.s.wpos, end - t.s.wpos));
	if (fs)
		v = json_pack("{s:i, s:o, s:o}", "version", (int)ver, "target_path", target ? json_string(target) : json_null(),
			      "recoverable", fs);
	if (v && size >= 0)
		json_object_set_new(v, "size", json_integer(size));
out:
	free(target);
	ckpt_fsrc_release(&t.s);
	return v;
}

/* A part file's recoverable of serializer version ver at p[0, n): typed (part_file), else its
 * "version" and "bytes". */
static json_t *
recoverable(int32_t ver, const unsigned char *p, size_t n, uint64_t at)
{
	json_t *v = part_file(ver, p, n, at);

	return v ? v : json_pack("{s:i, s:o}", "version", (int)ver, "bytes", ckpt_entry_to_json(p, n));
}

/* A SimpleVersionedSerialization blob (i32 version, i32 length, the bytes): as_string a bucket id,
 * its string when SimpleVersionedStringSerializer wrote it (version 1: little-endian i32 length,
 * UTF-8), else a part file's recoverable (recoverable), else {"version", "bytes"}. */
static json_t *
versioned_blob(struct try *t, int as_string, const char *what)
{
	int32_t ver;
	size_t end, at;
	const unsigned char *p;
	json_t *v = NULL;

	if (ckpt_fsrc_i32(&t->s, &ver, what) < 0 || frame(t, &end, what) < 0)
		return NULL;
	at = t->s.wpos;
	p = t->s.win + at;
	if (as_string && ver == 1 && end - at >= 4 && ckpt_load_le(p, 4) == end - at - 4)
		v = json_stringn((const char *)p + 4, end - at - 4); /* NULL when not UTF-8 */
	if (v == NULL && !as_string)
		v = recoverable(ver, p, end - at, t->s.base + at);
	if (v == NULL)
		v = json_pack("{s:i, s:o}", "version", (int)ver, "bytes", ckpt_entry_to_json(p, end - at));
	t->s.wpos = end;
	return v;
}

/* The pending files of BucketState: i32 their serializer's version, i32 checkpoints, each i64
 * checkpoint id, i32 n, n files (i32 length, the bytes). */
static json_t *
bucket_pending(struct try *t)
{
	int32_t ver, ncp, n;
	int64_t ck;
	size_t end;
	json_t *a = json_array(), *files;

	if (a == NULL || ckpt_fsrc_i32(&t->s, &ver, "pending file version") < 0 ||
	    ckpt_fsrc_i32(&t->s, &ncp, "pending checkpoints") < 0)
		goto bad;
	if (ncp < 0 || (size_t)ncp > (t->s.wlen - t->s.wpos) / 12) {
		t->s.wpos -= 4;
		fail(t, "%d pending checkpoints, but %zu bytes follow", (int)ncp, (size_t)(t->s.wlen - t->s.wpos - 4));
		goto bad;
	}
	for (int32_t i = 0; i < ncp; i++) {
		if (ckpt_fsrc_i64(&t->s, &ck, "checkpoint id") < 0 || ckpt_fsrc_i32(&t->s, &n, "pending files") < 0)
			goto bad;
		if (ck < 0 || n < 0 || (size_t)n > (t->s.wlen - t->s.wpos) / 4) {
			t->s.wpos -= 12;
			fail(t, "checkpoint %lld of %d pending files: not sane", (long long)ck, (int)n);
			goto bad;
		}
		if ((files = json_array()) == NULL || json_array_append_new(a, json_pack("{s:I, s:o}", "checkpoint_id",
											 (json_int_t)ck, "files", files)) < 0)
			goto bad;
		for (int32_t j = 0; j < n; j++) {
			if (frame(t, &end, "pending file length") < 0)
				goto bad;
			json_array_append_new(files, recoverable(ver, t->s.win + t->s.wpos, end - t->s.wpos,
								 t->s.base + t->s.wpos));
			t->s.wpos = end;
		}
	}
	return a;
bad:
	json_decref(a);
	return NULL;
}

/* StreamingFileSink's BucketStateSerializer, versions 1 and 2 (one layout), or (filesink) the
 * FileSink's FileWriterBucketStateSerializer, 1 and 2 that layout, 3 without the pending files: the
 * magic number, the bucket id, UTF bucket path, i64 in-progress file's creation time, a flag and the
 * in-progress file, the pending files per checkpoint. */
static json_t *
bucket_of(struct try *t, int32_t version, int filesink)
{
	char *path = NULL;
	int64_t created;
	uint8_t has;
	json_t *id = NULL, *cur = NULL, *pend = NULL, *v = NULL;

	if (version_magic(t, version, filesink ? 3 : 2, filesink ? "FileWriterBucketStateSerializer" : "BucketStateSerializer",
			  BUCKET_MAGIC) < 0)
		return NULL;
	if ((id = versioned_blob(t, 1, "bucket id")) == NULL || ckpt_fsrc_utf(&t->s, &path, "bucket path") < 0 ||
	    ckpt_fsrc_i64(&t->s, &created, "creation time") < 0 || flag_u8(t, &has, "in-progress file flag") < 0 ||
	    (has && (cur = versioned_blob(t, 0, "in-progress file")) == NULL) ||
	    ((!filesink || version < 3) && (pend = bucket_pending(t)) == NULL))
		goto out;
	v = json_pack("{s:s, s:i, s:O, s:s, s:I, s:O}", "connector", filesink ? "file_sink" : "streaming_file_sink",
		      "version", (int)version, "bucket_id", id, "bucket_path", path, "in_progress_creation_time",
		      (json_int_t)created, "in_progress", cur ? cur : json_null());
	if (v && pend)
		json_object_set(v, "pending", pend);
out:
	json_decref(id);
	json_decref(cur);
	json_decref(pend);
	free(path);
	return v;
}

static json_t *
bucket_state(struct try *t, int32_t version)
{
	return bucket_of(t, version, 0);
}

static json_t *
file_writer_state(struct try *t, int32_t version)
{
	return bucket_of(t, version, 1);
}

/* A flag, then when set a SimpleVersionedSerialization blob ({"version", "bytes"}), else null. */
static json_t *
flagged_blob(struct try *t, const char *what)
{
	uint8_t has;

	if (flag_u8(t, &has, what) < 0)
		return NULL;
	return has ? versioned_blob(t, 0, what) : json_null();
}

/* FileSinkCommittableSerializer, versions 1 and 2: the magic number; version 2 the UTF bucket id;
 * a flag and the pending file, a flag and the in-progress file to clean up; version 2 a flag and
 * the UTF URI of the compacted file to clean up. */
static json_t *
file_committable(struct try *t, int32_t version)
{
	char *id = NULL, *uri = NULL;
	uint8_t has = 0;
	json_t *pend = NULL, *cur = NULL, *v = NULL;

	if (version_magic(t, version, 2, "FileSinkCommittableSerializer", FILE_COMMITTABLE_MAGIC) < 0 ||
	    (version == 2 && utf_fits(t, &id, "bucket id") < 0) || (pend = flagged_blob(t, "pending file")) == NULL ||
	    (cur = flagged_blob(t, "in-progress file to clean up")) == NULL ||
	    (version == 2 && (flag_u8(t, &has, "compacted file flag") < 0 ||
			      (has && utf_fits(t, &uri, "compacted file to clean up") < 0))))
		goto out;
	v = json_pack("{s:s, s:i, s:O, s:O}", "connector", "file_sink", "version", (int)version, "pending_file", pend,
		      "in_progress_to_clean_up", cur);
	if (v && version == 2) {
		json_object_set_new(v, "bucket_id", json_string(id));
		json_object_set_new(v, "compacted_file_to_clean_up", uri ? json_string(uri) : json_null());
	}
out:
	json_decref(pend);
	json_decref(cur);
	free(id);
	free(uri);
	return v;
}

/* A framed element (i32 version, i32 length, the bytes) typed by fn. */
static int
framed(const unsigned char *p, size_t n, uint64_t at, const char *where, const char *name,
       json_t *(*fn)(struct try *, int32_t), json_t **v, char *why, size_t nwhy, struct ckpt_err *e)
{
	struct try t;
	uint32_t len;

	if (n < 8)
		return ckpt_err_at(e, CKPT_ERR_INPUT, where, at, "element of %zu bytes, shorter than its version and "
				   "length", n);
	len = ckpt_be32(p + 4);
	if (len != n - 8)
		return ckpt_err_at(e, CKPT_ERR_INPUT, where, at + 4, "element length %u, but %zu bytes follow it", len,
				   n - 8);
	try_open(&t, p + 8, n - 8, at + 8);
	*v = fn(&t, (int32_t)ckpt_be32(p));
	if (*v && !ckpt_fsrc_drained(&t.s)) {
		fail(&t, "%zu bytes after the state", (size_t)(t.s.wlen - t.s.wpos));
		json_decref(*v);
		*v = NULL;
	}
	if (*v == NULL)
		snprintf(why, nwhy, "%s: %s", name, t.e.kind == CKPT_ERR_NONE ? "out of memory" : t.e.text);
	ckpt_fsrc_release(&t.s);
	return t.e.kind == CKPT_ERR_NOMEM ? ckpt_err_nomem(e, where) : 0;
}

/* A Sink V2 writer's element: the FileSink's when it begins with its magic number and parses as
 * that (the reason its format gives when neither does), else the KafkaSink's. */
static int
writer_typed(const unsigned char *p, size_t n, uint64_t at, const char *where, json_t **v, char *why, size_t nwhy,
	     struct ckpt_err *e)
{
	char fwhy[512];

	if (n < 12 || ckpt_be32(p + 8) != BUCKET_MAGIC)
		return framed(p, n, at, where, "kafka_sink", writer_state, v, why, nwhy, e);
	if (framed(p, n, at, where, "file_sink", file_writer_state, v, why, nwhy, e) < 0 || *v)
		return *v ? 0 : -1;
	snprintf(fwhy, sizeof fwhy, "%s", why); /* a KafkaSink's prefix may begin with those bytes */
	if (framed(p, n, at, where, "kafka_sink", writer_state, v, why, nwhy, e) < 0 || *v)
		return *v ? 0 : -1;
	snprintf(why, nwhy, "%s", fwhy);
	return 0;
}

int
ckpt_fser_legacy_typed(int kind, const unsigned char *p, size_t n, uint64_t at, const char *where, json_t **v,
		       char *why, size_t nwhy, struct ckpt_err *e)
{
	struct try t;

	*v = NULL;
	why[0] = '\0';
	if (kind == FLEGACY_WRITER)
		return writer_typed(p, n, at, where, v, why, nwhy, e);
	if (kind >= FLEGACY_PRODUCER_HINT)
		return producer_typed(kind, p, n, at, where, v, e);
	if (kind == FLEGACY_BUCKETS)
		return framed(p, n, at, where, "streaming_file_sink", bucket_state, v, why, nwhy, e);
	if (kind == FLEGACY_COMMITTER)
		return framed(p, n, at, where, "committable_collector", committer_state, v, why, nwhy, e);
	try_open(&t, p, n, at);
	if ((*v = consumer_element(&t)) == NULL)
		snprintf(why, nwhy, "flink_kafka_consumer: %s", t.e.kind == CKPT_ERR_NONE ? "out of memory" : t.e.text);
	ckpt_fsrc_release(&t.s);
	return t.e.kind == CKPT_ERR_NOMEM ? ckpt_err_nomem(e, where) : 0;
}
