/* connector.c: the splits and enumerator checkpoints of Flink's sources (ckpt-flink(5), SOURCES):
 * Kafka, FileSource, NumberSequenceSource (and DataGeneratorSource) and HybridSource, typed where
 * exactly one format parses every byte with sane values. */
#include <stdlib.h>
#include <string.h>

#include "types.h"

#define KAFKA_MIN INT64_MIN /* NO_STOPPING_OFFSET, MIGRATED */
#define PENDING_MAGIC 0xDEADBEEFu

/* One attempt: a memory source whose failure is kept as the reason, not reported. */
struct try {
	struct ckpt_fsrc s;
	struct ckpt_err e;
};

static void
try_open(struct try *t, const unsigned char *p, size_t n, uint64_t at)
{
	memset(&t->e, 0, sizeof t->e);
	ckpt_fsrc_mem(&t->s, p, n, "", &t->e);
	t->s.base = at;
}

#define fail(t, ...) ckpt_fsrc_fail(&(t)->s, __VA_ARGS__)
/* Fail at the value of n bytes just read (a memory source: its window is all of it). */
#define fail_back(t, n, ...) ((t)->s.wpos -= (n), ckpt_fsrc_fail(&(t)->s, __VA_ARGS__))

/* A Kafka starting or stopping offset: its number, or Flink's sentinel named. */
json_t *
ckpt_fser_split_offset(int64_t v, int stopping)
{
	if (v >= 0)
		return json_integer(v);
	if (v == -1)
		return json_string("latest");
	if (v == -2 && !stopping)
		return json_string("earliest");
	if (v == -3)
		return json_string("committed");
	if (v == KAFKA_MIN)
		return stopping ? json_null() : json_string("migrated");
	return NULL;
}

int
ckpt_fser_kafka_topic_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 249)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '.' || s[i] == '_' || s[i] == '-'))
			return 0;
	return 1;
}

/* UTF topic, i32 partition: the partition Kafka names. */
static int
read_tp(struct try *t, char **topic, int32_t *part)
{
	if (ckpt_fsrc_utf(&t->s, topic, "topic") < 0)
		return -1;
	if (!ckpt_fser_kafka_topic_ok(*topic))
		return fail(t, "topic \"%s\" is no Kafka topic name", *topic);
	if (ckpt_fsrc_i32(&t->s, part, "partition") < 0)
		return -1;
	if (*part < 0)
		return fail_back(t, 4, "partition %d below 0", (int)*part);
	return 0;
}

static int
bool_of(struct try *t, int *v, const char *what)
{
	uint8_t b;

	if (ckpt_fsrc_u8(&t->s, &b, what) < 0)
		return -1;
	if (b > 1)
		return fail_back(t, 1, "%s byte %u is no boolean", what, (unsigned)b);
	*v = b;
	return 0;
}

/* KafkaPartitionSplitSerializer version 0: UTF topic, i32 partition, i64 starting and stopping offsets. */
static json_t *
kafka_split(struct try *t)
{
	char *topic = NULL;
	int32_t part;
	int64_t from, to = 0;
	json_t *a, *b, *v = NULL;

	if (read_tp(t, &topic, &part) < 0 || ckpt_fsrc_i64(&t->s, &from, "starting offset") < 0)
		goto out;
	if ((a = ckpt_fser_split_offset(from, 0)) == NULL) {
		fail_back(t, 8, "starting offset %lld is neither an offset nor a sentinel", (long long)from);
		goto out;
	}
	if (ckpt_fsrc_i64(&t->s, &to, "stopping offset") < 0 || (b = ckpt_fser_split_offset(to, 1)) == NULL) {
		if (t->e.kind == CKPT_ERR_NONE)
			fail_back(t, 8, "stopping offset %lld is neither an offset nor a sentinel", (long long)to);
		json_decref(a);
		goto out;
	}
	v = json_pack("{s:s, s:i, s:o, s:o}", "topic", topic, "partition", (int)part,
		      "starting_offset", a, "stopping_offset", b);
out:
	free(topic);
	return v;
}

/* NumberSequenceSource's split (DataGeneratorSource's too), version 1: UTF id, i64 from, i64 to. */
static json_t *
number_split(struct try *t)
{
	char *id = NULL;
	int64_t from, to = 0;
	json_t *v = NULL;

	if (ckpt_fsrc_utf(&t->s, &id, "split id") < 0 || ckpt_fsrc_i64(&t->s, &from, "from") < 0 ||
	    ckpt_fsrc_i64(&t->s, &to, "to") < 0)
		goto out;
	if (id[0] == '\0' || strspn(id, "0123456789") != strlen(id)) {
		fail(t, "split id \"%s\" is not a number", id);
		goto out;
	}
	if (from > to) {
		fail(t, "from %lld is past to %lld", (long long)from, (long long)to);
		goto out;
	}
	v = json_pack("{s:s, s:I, s:I}", "split_id", id, "from", (json_int_t)from,
		      "to", (json_int_t)to);
out:
	free(id);
	return v;
}

static const struct ckpt_fser string_value = {.kind = FSER_STRING, .cls = "StringValue"};

/* StringUtils.writeNullableString: a flag, then StringValue's form. */
static int
nullable_string(struct try *t, json_t **v, const char *what)
{
	int32_t h;
	int hd, present;

	*v = NULL;
	if (bool_of(t, &present, what) < 0)
		return -1;
	if (!present) {
		*v = json_null();
		return 0;
	}
	return ckpt_fser_value(&string_value, &t->s, v, &h, &hd);
}

/* Path.serializeToDataOutputView: a flag, then the URI's scheme, user info, host (nullable strings),
 * i32 port, path, query and fragment. */
static int
file_path(struct try *t, json_t *o)
{
	static const char *const part[] = {"scheme", "user_info", "host", "port", "path", "query", "fragment"};
	int present;

	if (bool_of(t, &present, "path flag") < 0)
		return -1;
	if (!present)
		return json_object_set_new(o, "path", json_null());
	for (size_t i = 0; i < sizeof part / sizeof *part; i++) {
		json_t *v = NULL;
		int32_t port;

		if (i == 3 && ckpt_fsrc_i32(&t->s, &port, "port") < 0)
			return -1;
		if (i != 3 && nullable_string(t, &v, part[i]) < 0)
			return -1;
		if (i == 3 && port < -1)
			return fail(t, "port %d", (int)port);
		if (i != 3 && !json_is_null(v) && json_object_set_new(o, part[i], v) < 0)
			return -1;
		if (i != 3 && json_is_null(v))
			json_decref(v);
		if (i == 3 && port != -1 && json_object_set_new(o, "port", json_integer(port)) < 0)
			return -1;
	}
	if (json_object_get(o, "path") == NULL)
		return fail(t, "the file's URI has no path");
	return 0;
}

static int
file_numbers(struct try *t, json_t *o)
{
	static const char *const name[] = {"offset", "length", "modification_time", "file_size"};

	for (size_t i = 0; i < 4; i++) {
		int64_t x;

		if (ckpt_fsrc_i64(&t->s, &x, name[i]) < 0)
			return -1;
		if (x < 0 && i != 2)
			return fail(t, "%s %lld below 0", name[i], (long long)x);
		if (json_object_set_new(o, name[i], json_integer(x)) < 0)
			return -1;
	}
	return 0;
}

/* The hosts (i32 count, UTF each), then the reader's checkpointed position when there is one. */
static int
file_tail(struct try *t, json_t *o)
{
	json_t *hosts = json_array();
	int32_t n;
	int present;

	if (json_object_set_new(o, "hostnames", hosts) < 0 || ckpt_fsrc_i32(&t->s, &n, "host count") < 0)
		return -1;
	if (n < 0)
		return fail(t, "host count %d", (int)n);
	for (int32_t i = 0; i < n; i++) {
		char *h;

		if (ckpt_fsrc_utf(&t->s, &h, "host") < 0)
			return -1;
		json_array_append_new(hosts, json_string(h));
		free(h);
	}
	if (bool_of(t, &present, "position flag") < 0)
		return -1;
	if (present) {
		int64_t off, after;

		if (ckpt_fsrc_i64(&t->s, &off, "position offset") < 0 ||
		    ckpt_fsrc_i64(&t->s, &after, "records after offset") < 0)
			return -1;
		if (after < 0 || (off < 0 && off != -1)) /* CheckpointedPosition.NO_OFFSET is -1 */
			return fail(t, "position %lld with %lld records after it", (long long)off, (long long)after);
		return json_object_set_new(o, "position", json_pack("{s:I, s:I}", "offset", (json_int_t)off,
								    "records_after_offset", (json_int_t)after));
	}
	return json_object_set_new(o, "position", json_null());
}

/* FileSourceSplitSerializer version 1. */
static json_t *
file_split(struct try *t)
{
	char *id = NULL;
	json_t *o = json_object(), *uri = json_object();
	int r;

	if (o == NULL || json_object_set_new(o, "split_id", json_null()) < 0 ||
	    json_object_set_new(o, "uri", uri) < 0) {
		json_decref(o);
		return NULL;
	}
	r = ckpt_fsrc_utf(&t->s, &id, "split id") < 0 || json_object_set_new(o, "split_id", json_string(id)) < 0 ||
	    file_path(t, uri) < 0 || file_numbers(t, o) < 0 || file_tail(t, o) < 0 ? -1 : 0;
	free(id);
	if (r < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int split_of(const unsigned char *p, size_t n, uint64_t at, int32_t version, int nested, json_t **v,
		    char *why, size_t nwhy);

/* HybridSourceSplitSerializer version 0: i32 source index, UTF split id, the wrapped split's
 * version and length-prefixed bytes, typed as a split of its own. */
static json_t *
hybrid_split(struct try *t, const unsigned char *p, size_t n)
{
	char *id = NULL, why[600];
	int32_t idx, ver, len;
	json_t *in = NULL;
	size_t at;

	if (ckpt_fsrc_i32(&t->s, &idx, "source index") < 0 || ckpt_fsrc_utf(&t->s, &id, "split id") < 0 ||
	    ckpt_fsrc_i32(&t->s, &ver, "wrapped version") < 0 || ckpt_fsrc_i32(&t->s, &len, "wrapped length") < 0)
		goto out;
	at = (size_t)ckpt_fsrc_tell(&t->s);
	if (idx < 0 || len < 0 || (size_t)len != n - at) {
		fail(t, "wrapped split of %d bytes, but %zu follow", (int)len, n - at);
		goto out;
	}
	if (split_of(p + at, (size_t)len, t->s.base + at, ver, 1, &in, why, sizeof why) < 0 || in == NULL) {
		fail(t, "wrapped split: %s", why);
		goto out;
	}
	t->s.wpos = t->s.wlen;
	in = json_pack("{s:i, s:s, s:o}", "source_index", (int)idx, "split_id", id, "split", in);
out:
	free(id);
	return in;
}

/* Every format the version names, tried: exactly one parsing every byte types it. */
static int
split_of(const unsigned char *p, size_t n, uint64_t at, int32_t version, int nested, json_t **v, char *why,
	 size_t nwhy)
{
	static const char *const name[] = {"kafka", "hybrid", "file", "number_sequence"};
	static const int ver[] = {0, 0, 1, 1};
	size_t used = 0, hits = 0;

	*v = NULL;
	why[0] = '\0';
	for (size_t i = 0; i < 4; i++) {
		struct try t;
		json_t *x;

		if (ver[i] != version || (nested && i == 1))
			continue;
		try_open(&t, p, n, at);
		x = i == 0 ? kafka_split(&t) : i == 1 ? hybrid_split(&t, p, n) : i == 2 ? file_split(&t) : number_split(&t);
		if (x && !ckpt_fsrc_drained(&t.s)) {
			ckpt_fsrc_fail(&t.s, "%zu byte%s after the split", (size_t)(t.s.wlen - t.s.wpos),
				       t.s.wlen - t.s.wpos == 1 ? "" : "s");
			json_decref(x);
			x = NULL;
		}
		if (x && hits++ == 0) {
			*v = json_pack("{s:s, s:i}", "connector", name[i], "version", (int)version);
			if (*v == NULL || json_object_update(*v, x) < 0) {
				json_decref(x);
				return -1;
			}
			json_decref(x);
		}
		else if (x)
			json_decref(x);
		else if (t.e.kind == CKPT_ERR_NOMEM)
			return -1;
		else if (used < nwhy)
			used += (size_t)snprintf(why + used, nwhy - used, "%s%s: %s", used ? "; " : "", name[i], t.e.text);
		ckpt_fsrc_release(&t.s);
	}
	if (hits > 1) {
		json_decref(*v);
		*v = NULL;
		snprintf(why, nwhy, "it parses as splits of more than one source");
	} else if (hits == 0 && used == 0)
		snprintf(why, nwhy, "split version %d is none of a source ckpt reads (kafka 0, file 1, number_sequence 1, "
			 "hybrid 0)", (int)version);
	return 0;
}

int
ckpt_fser_split_typed(const unsigned char *p, size_t n, uint64_t at, const char *where, json_t **v, char *why,
		  size_t nwhy, struct ckpt_err *e)
{
	int32_t version;
	uint32_t len;

	*v = NULL;
	if (n < 8)
		return ckpt_err_at(e, CKPT_ERR_INPUT, where, at, "split of %zu bytes, shorter than its version and "
				   "length", n);
	version = (int32_t)ckpt_be32(p);
	len = ckpt_be32(p + 4);
	if (len != n - 8)
		return ckpt_err_at(e, CKPT_ERR_INPUT, where, at + 4, "split length %u, but %zu bytes follow it", len, n - 8);
	if (split_of(p + 8, n - 8, at + 8, version, 0, v, why, nwhy) < 0)
		return ckpt_err_nomem(e, where);
	return 0;
}

/* ------------------------------------------------------------ enumerator checkpoints */

static int
count_of(struct try *t, int32_t *n, const char *what)
{
	if (ckpt_fsrc_i32(&t->s, n, what) < 0)
		return -1;
	if (*n < 0 || (uint64_t)*n > t->s.wlen - t->s.wpos)
		return fail(t, "%s %d, more than the bytes left", what, (int)*n);
	return 0;
}

/* An i32 length, then that many bytes of one split, read by fn to its last byte. */
static json_t *
sub_split(struct try *t, json_t *(*fn)(struct try *), int little)
{
	unsigned char b[4];
	uint32_t len;
	struct try u;
	json_t *x;

	if (ckpt_fsrc_read(&t->s, b, 4, "split length") < 0)
		return NULL;
	len = little ? (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24 : ckpt_be32(b);
	if (len > t->s.wlen - t->s.wpos) {
		fail(t, "split length %u, more than the %zu bytes left", len, (size_t)(t->s.wlen - t->s.wpos));
		return NULL;
	}
	try_open(&u, t->s.win + t->s.wpos, len, t->s.base + t->s.wpos);
	x = fn(&u);
	if (x && !ckpt_fsrc_drained(&u.s)) {
		json_decref(x);
		x = NULL;
		ckpt_fsrc_fail(&u.s, "%zu byte%s after the split", (size_t)(u.s.wlen - u.s.wpos),
			       u.s.wlen - u.s.wpos == 1 ? "" : "s");
	}
	if (x == NULL)
		t->e = u.e;
	else
		t->s.wpos += len;
	ckpt_fsrc_release(&u.s);
	return x;
}

static int
status_of(struct try *t, json_t *o)
{
	int32_t st;

	if (ckpt_fsrc_i32(&t->s, &st, "assignment status") < 0)
		return -1;
	if (st != 0 && st != 1)
		return fail_back(t, 4, "assignment status %d is neither 0 (assigned) nor 1 (unassigned)", (int)st);
	return json_object_set_new(o, "status", json_string(st == 0 ? "assigned" : "unassigned"));
}

static int
discovery(struct try *t, json_t *o)
{
	int b;

	if (bool_of(t, &b, "initial discovery finished") < 0)
		return -1;
	return json_object_set_new(o, "initial_discovery_finished", json_boolean(b));
}

/* KafkaSourceEnumStateSerializer version 0: SerdeUtils' split assignments (i32 readers, i32 split
 * version, per reader i32 subtask, i32 count, the splits). */
static int
kafka_enum0(struct try *t, json_t *o)
{
	json_t *as = json_array();
	int32_t n, ver;

	if (json_object_set_new(o, "assignments", as) < 0 || count_of(t, &n, "reader count") < 0 ||
	    ckpt_fsrc_i32(&t->s, &ver, "split version") < 0)
		return -1;
	if (ver != 0)
		return fail(t, "split version %d, not KafkaPartitionSplitSerializer's 0", (int)ver);
	for (int32_t i = 0; i < n; i++) {
		json_t *sp = json_array(), *x;
		int32_t sub, k;

		if (ckpt_fsrc_i32(&t->s, &sub, "subtask") < 0) {
			json_decref(sp);
			return -1;
		}
		if (json_array_append_new(as, json_pack("{s:i, s:o}", "subtask", (int)sub, "splits", sp)) < 0)
			return -1;
		if (sub < 0)
			return fail(t, "subtask %d", (int)sub);
		if (count_of(t, &k, "split count") < 0)
			return -1;
		for (int32_t j = 0; j < k; j++)
			if ((x = sub_split(t, kafka_split, 0)) == NULL || json_array_append_new(sp, x) < 0)
				return -1;
	}
	return 0;
}

/* Versions 1 (topic and partition, all assigned), 2 (and each one's status, then whether the
 * initial discovery finished) and 3 (the split version, then each split whole and its status). */
static int
kafka_enum(struct try *t, int32_t version, json_t *o)
{
	json_t *ps = json_array();
	int32_t n, ver;

	if (version == 0) {
		json_decref(ps);
		return kafka_enum0(t, o);
	}
	if (json_object_set_new(o, version == 3 ? "splits" : "partitions", ps) < 0 ||
	    count_of(t, &n, "partition count") < 0)
		return -1;
	if (version == 3 && ckpt_fsrc_i32(&t->s, &ver, "split version") < 0)
		return -1;
	if (version == 3 && ver != 0)
		return fail(t, "split version %d, not KafkaPartitionSplitSerializer's 0", (int)ver);
	for (int32_t i = 0; i < n; i++) {
		json_t *x = NULL;

		if (version == 3)
			x = sub_split(t, kafka_split, 0);
		else {
			char *topic = NULL;
			int32_t part;

			if (read_tp(t, &topic, &part) == 0)
				x = json_pack("{s:s, s:i}", "topic", topic, "partition", (int)part);
			free(topic);
		}
		if (x == NULL || json_array_append_new(ps, x) < 0 || (version > 1 && status_of(t, x) < 0))
			return -1;
	}
	return version > 1 ? discovery(t, o) : 0;
}

/* NumberSequenceSource's checkpoint, version 1: i32 count, the splits not assigned yet. */
static int
number_enum(struct try *t, json_t *o)
{
	json_t *ss = json_array();
	int32_t n;

	if (json_object_set_new(o, "splits", ss) < 0 || count_of(t, &n, "split count") < 0)
		return -1;
	for (int32_t i = 0; i < n; i++) {
		json_t *x = number_split(t);

		if (x == NULL || json_array_append_new(ss, x) < 0)
			return -1;
	}
	return 0;
}

static int
le32(struct try *t, int32_t *v, const char *what)
{
	unsigned char b[4];

	if (ckpt_fsrc_read(&t->s, b, 4, what) < 0)
		return -1;
	*v = (int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24);
	return 0;
}

/* PendingSplitsCheckpointSerializer version 1, little-endian: magic 0xDEADBEEF, the split version,
 * the counts of splits and of processed paths, each split and path length-prefixed. */
static int
file_enum(struct try *t, json_t *o)
{
	json_t *ss = json_array(), *ps = json_array();
	int32_t magic, ver, ns, np;

	if (json_object_set_new(o, "splits", ss) < 0 || json_object_set_new(o, "processed_paths", ps) < 0 ||
	    le32(t, &magic, "magic number") < 0)
		return -1;
	if ((uint32_t)magic != PENDING_MAGIC)
		return fail(t, "magic number %08x, not deadbeef", (unsigned)magic);
	if (le32(t, &ver, "split version") < 0 || le32(t, &ns, "split count") < 0 || le32(t, &np, "path count") < 0)
		return -1;
	if (ver != 1 || ns < 0 || np < 0 || (uint64_t)ns + (uint64_t)np > (t->s.wlen - t->s.wpos) / 4)
		return fail(t, "split version %d, %d splits and %d paths", (int)ver, (int)ns, (int)np);
	for (int32_t i = 0; i < ns; i++) {
		json_t *x = sub_split(t, file_split, 1);

		if (x == NULL || json_array_append_new(ss, x) < 0)
			return -1;
	}
	for (int32_t i = 0; i < np; i++) {
		int32_t len;

		if (le32(t, &len, "path length") < 0)
			return -1;
		if (len < 0 || (uint32_t)len > t->s.wlen - t->s.wpos)
			return fail(t, "path length %d, more than the bytes left", (int)len);
		if (json_array_append_new(ps, json_stringn((const char *)t->s.win + t->s.wpos, (size_t)len)) < 0)
			return fail(t, "path of %d bytes is not UTF-8", (int)len);
		t->s.wpos += (size_t)len;
	}
	return 0;
}

static int enum_of(const unsigned char *p, size_t n, uint64_t at, int32_t version, int nested, json_t **v,
		   char *why, size_t nwhy);

/* HybridSourceEnumeratorStateSerializer version 0: i32 source index, the wrapped enumerator's
 * version and length-prefixed checkpoint, typed as one of its own. */
static int
hybrid_enum(struct try *t, json_t *o)
{
	int32_t idx, ver, len;
	json_t *in = NULL;
	char why[600];
	size_t at;

	if (ckpt_fsrc_i32(&t->s, &idx, "source index") < 0 || ckpt_fsrc_i32(&t->s, &ver, "wrapped version") < 0 ||
	    ckpt_fsrc_i32(&t->s, &len, "wrapped length") < 0)
		return -1;
	at = (size_t)(t->s.wpos);
	if (idx < 0 || len < 0 || (size_t)len != t->s.wlen - at)
		return fail(t, "source index %d, wrapped checkpoint of %d bytes, but %zu follow", (int)idx, (int)len,
			    (size_t)(t->s.wlen - at));
	if (enum_of(t->s.win + at, (size_t)len, t->s.base + at, ver, 1, &in, why, sizeof why) < 0)
		return -1;
	if (in == NULL)
		return fail(t, "wrapped checkpoint: %s", why);
	t->s.wpos = t->s.wlen;
	return json_object_set_new(o, "source_index", json_integer(idx)) < 0 ? -1 :
	       json_object_set_new(o, "enumerator", in);
}

static int
enum_try(struct try *t, size_t i, int32_t version, json_t *o)
{
	switch (i) {
	case 0:
		return kafka_enum(t, version, o);
	case 1:
		return hybrid_enum(t, o);
	case 2:
		return file_enum(t, o);
	default:
		return number_enum(t, o);
	}
}

/* Every format the version names, tried: exactly one parsing every byte types it. */
static int
enum_of(const unsigned char *p, size_t n, uint64_t at, int32_t version, int nested, json_t **v, char *why,
	size_t nwhy)
{
	static const char *const name[] = {"kafka", "hybrid", "file", "number_sequence"};
	size_t used = 0, hits = 0;
	char both[200] = "";

	*v = NULL;
	why[0] = '\0';
	for (size_t i = 0; i < 4; i++) {
		struct try t;
		json_t *o;
		int ok;

		if (i == 0 ? version < 0 || version > 3 : i == 1 ? version != 0 || nested : version != 1)
			continue;
		try_open(&t, p, n, at);
		o = json_pack("{s:s, s:i}", "connector", name[i], "version", (int)version);
		ok = o && enum_try(&t, i, version, o) == 0;
		if (ok && !ckpt_fsrc_drained(&t.s)) {
			ckpt_fsrc_fail(&t.s, "%zu byte%s after the checkpoint", (size_t)(t.s.wlen - t.s.wpos),
				       t.s.wlen - t.s.wpos == 1 ? "" : "s");
			ok = 0;
		}
		if (ok)
			snprintf(both + strlen(both), sizeof both - strlen(both), "%s%s", hits ? " and " : "", name[i]);
		if (ok && hits++ == 0)
			*v = o;
		else
			json_decref(o);
		if (!ok && t.e.kind == CKPT_ERR_NOMEM)
			return -1;
		if (!ok && used < nwhy)
			used += (size_t)snprintf(why + used, nwhy - used, "%s%s: %s", used ? "; " : "", name[i], t.e.text);
		ckpt_fsrc_release(&t.s);
	}
	if (hits > 1) {
		json_decref(*v);
		*v = NULL;
		snprintf(why, nwhy, "it parses as the checkpoint of %s alike", both);
	} else if (hits == 0 && used == 0)
		snprintf(why, nwhy, "enumerator version %d is none of a source ckpt reads (kafka 0-3, file 1, "
			 "number_sequence 1, hybrid 0)", (int)version);
	return 0;
}

int
ckpt_fser_enum_typed(const unsigned char *p, size_t n, json_t **v, char *why, size_t nwhy)
{
	int32_t serde, version;
	uint32_t len;
	json_t *x;

	*v = NULL;
	why[0] = '\0';
	if (n < 12)
		return 0;
	serde = (int32_t)ckpt_be32(p);
	version = (int32_t)ckpt_be32(p + 4);
	len = ckpt_be32(p + 8);
	if ((serde != 0 && serde != 1) || len > n - 12 || (serde == 1 && len != n - 12))
		return 0; /* not SourceCoordinator's framing: some other coordinator's */
	if (enum_of(p + 12, len, 12, version, 0, &x, why, nwhy) < 0)
		return -1;
	if (x == NULL) {
		*v = json_pack("{s:n, s:s, s:o}", "connector", "reason", why, "bytes", ckpt_entry_to_json(p, n));
		return *v ? 0 : -1;
	}
	*v = json_pack("{s:O, s:O, s:i}", "connector", json_object_get(x, "connector"), "version",
		       json_object_get(x, "version"), "coordinator_version", (int)serde);
	if (*v == NULL || json_object_update(*v, x) < 0 ||
	    (serde == 0 && n > 12 + len &&
	     json_object_set_new(*v, "tracker_assignments", ckpt_entry_to_json(p + 12 + len, n - 12 - len)) < 0)) {
		json_decref(x);
		return -1;
	}
	json_decref(x);
	return 0;
}
