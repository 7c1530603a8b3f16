/* types.h: the serializers floor of the Flink layer (lib/flink/types/): serializer snapshots read
 * into a tree (struct ckpt_fser) and the values they write decoded, hashed and encoded: built-in
 * types, tuples, POJOs, Avro, Scala, Kryo, Java values, SQL RowData, and keys; and the splits and
 * enumerator checkpoints of Flink's sources (connector.c).  Offered to the state
 * files (lib/flink/state/) and, through flink/flink.h, to the layers above flink/.  Uses the
 * formats floor (lib/flink/format/) and the model and base layers. */
#ifndef CKPT_FLINK_TYPES_H
#define CKPT_FLINK_TYPES_H

#include "flink/format/format.h"

/* ------------------------------------------------------------ serializer.c */

enum ckpt_fser_kind {
	FSER_UNKNOWN,  /* a snapshot class ckpt cannot step over: parsing stops there */
	FSER_OPAQUE,   /* stepped over, but its values have no layout ckpt knows (Java, Kryo, ...) */
	FSER_STRING, FSER_LONG, FSER_INT, FSER_SHORT, FSER_BYTE, FSER_BOOL, FSER_FLOAT, FSER_DOUBLE,
	FSER_CHAR, FSER_VOID,
	FSER_BYTES,    /* byte[] */
	FSER_PARRAY,   /* other primitive arrays and String[]: elem says which */
	FSER_VOIDNS, FSER_TIMEWINDOW, FSER_GLOBALWINDOW,
	FSER_TUPLE, FSER_ROW, FSER_POJO, FSER_LIST, FSER_MAP, FSER_ARRAY, FSER_TTL, FSER_NULLABLE,
	FSER_ENUM, FSER_TIMER,
	/* scala.c: Scala's and Java's Option, Either, Try, collections, Enumeration, Unit */
	FSER_OPTION, FSER_EITHER, FSER_TRY, FSER_TRAVERSABLE, FSER_SENUM, FSER_UNIT,
	FSER_KRYO,     /* kryo.c: named and kept raw, only as the last thing of an entry */
	/* rowdata.c: Flink SQL's internal data (RowData and its fields), typed by logical types */
	FSER_ROWDATA, FSER_EXTERNAL, FSER_STRINGDATA, FSER_TIMESTAMPDATA, FSER_DECIMALDATA, FSER_ARRAYDATA,
	FSER_MAPDATA, FSER_RAWDATA, FSER_LINKEDLIST,
	FSER_AVRO,     /* avro.c: AvroSerializer's values, decoded by the snapshot's schema */
	/* jvalue.c: java.math, java.util.Date, java.sql and java.time values of flink-core's
	 * serializers, and Java serialization (JavaSerializer) */
	FSER_BIGINT, FSER_BIGDEC, FSER_DATE, FSER_SQLTIMESTAMP, FSER_INSTANT, FSER_LOCALDATE, FSER_LOCALTIME,
	FSER_LOCALDATETIME, FSER_JAVA,
};
struct ckpt_frow_type;
struct ckpt_fser;
struct ckpt_fenc;
struct ckpt_fjava;

/* serializer.c's dispatcher, handed down to the readers of nested snapshots and values (pojo.c,
 * scala.c, rowdata.c, avro.c) so that they recurse without calling up (lib/README: a lower file
 * takes a callback).  The functions of the same names below. */
struct ckpt_fser_ops {
	int (*read)(struct ckpt_fsrc *s, int proxy, struct ckpt_fser **out);
	void (*free)(struct ckpt_fser *t);
	const char *(*blocker)(const struct ckpt_fser *t);
	int (*value)(const struct ckpt_fser *t, struct ckpt_fsrc *s, json_t **v, int32_t *hash, int *hashed);
	int (*emit)(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o, int32_t *hash,
		    int *hashed);
	int (*known_simple)(const char *cls, struct ckpt_fser *t); /* ckpt_fser_known_simple */
};

struct ckpt_fser {
	enum ckpt_fser_kind kind;
	enum ckpt_fser_kind elem; /* FSER_PARRAY */
	char *cls;                /* the snapshot class */
	char *name;               /* tuple, POJO or enum class */
	int version;              /* the snapshot's version */
	int flag;                 /* ROW: row kind bits present; NULLABLE: padding length; TwoPhaseCommitSinkFunction's
				   * state (FSER_OPAQUE): a flag before the pending transaction */
	int32_t *ids;             /* SENUM: the id of each constant of names */
	struct ckpt_fser **kids;  /* nested serializers (POJO: one per field, NULL when absent) */
	struct ckpt_frow_type *rd;   /* rowdata.c: the logical type (ROWDATA: a ROW of the fields) */
	char **names;             /* POJO field names, enum constants */
	size_t nkids, nnames, kidcap, namecap; /* the counts; the room (ckpt_grow) */
	struct ckpt_fser **subs;  /* POJO (pojo.c): registered subclasses (tag order), then cached ones; NULL when unread */
	char **subnames;          /* their class names */
	size_t nsubs, nreg;       /* all of them, the registered ones */
	size_t subcap, subnamecap; /* the room of subs and subnames (ckpt_grow) */
	void *ext;                /* AVRO: the schema (avro.c), freed by ckpt_fser_avro_free */
	uint64_t at, end;         /* where its versioned snapshot (class name to payload end) lies in its source */
};



/* One serializer snapshot, after the i32 format version of TypeSerializerSnapshotSerializationUtil
 * when proxy is set.  0; 1 when some class cannot be stepped over (*out is then the tree so far,
 * its FSER_UNKNOWN node naming the class); -1 on damaged input. */
int ckpt_fser_read(struct ckpt_fsrc *s, int proxy, struct ckpt_fser **out);
void ckpt_fser_free(struct ckpt_fser *t);
/* A composite serializer of kind (FSER_LIST: a over elements; FSER_MAP: keys a, values b) named
 * by the snapshot class cls, owning a and b; NULL when out of memory (a and b still the caller's). */
struct ckpt_fser *ckpt_fser_composite(enum ckpt_fser_kind kind, const char *cls, struct ckpt_fser *a, struct ckpt_fser *b);
/* NULL when values of t can be decoded, else the snapshot class that stops it. */
const char *ckpt_fser_blocker(const struct ckpt_fser *t);
/* The same where the value ends where its source does (less s->tail bytes): a Kryo value last
 * in it (nothing of t read after it) does not stop it. */
const char *ckpt_fser_blocker_tail(const struct ckpt_fser *t);
/* The serialized length Flink's getLength() gives, -1 when not fixed (CompositeKeySerializationUtils'
 * ambiguity test: key and namespace both -1 get length suffixes). */
int ckpt_fser_fixed_length(const struct ckpt_fser *t);
/* Decode one value (t must have no blocker): 0 and *v a new reference, or -1 with the error set.
 * *hashed is set when *hash is the value's Java hashCode (built-in key types). */
int ckpt_fser_value(const struct ckpt_fser *t, struct ckpt_fsrc *s, json_t **v, int32_t *hash, int *hashed);
/* The same, the value emitted into o (nothing emitted for FOUT_NONE, but every check made). */
int ckpt_fser_emit(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o, int32_t *hash, int *hashed);
/* The class names, nested: "C" or {"class": C, "nested": [...]} (for the summary). */
json_t *ckpt_fser_json(const struct ckpt_fser *t);

/* ------------------------------------------------------------ scala.c */

/* The payload of a ScalaEnumSerializerSnapshot (class, then each constant's name and id) into t.
 * 0, or -1 with the error set. */
int ckpt_fser_scala_enum(struct ckpt_fsrc *s, struct ckpt_fser *t);
/* One value of the kinds of scala.c (FSER_OPTION .. FSER_UNIT), its nested values through
 * ops->emit.  0, or -1 with the error set. */
int ckpt_fser_scala_value(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o,
			  const struct ckpt_fser_ops *ops);

/* ------------------------------------------------------------ kryo.c */

/* A Kryo value: the rest of s (a memory source) less s->tail bytes, emitted as {"kryo_class",
 * "kryo_id", "typed": null, "reason", "bytes"}.  0, or -1 with the error set. */
/* A KryoSerializer's value; the hashCode of one of Kryo's default classes (Integer, String, Long,
 * ...) into *hash, *hashed set, when asked for (hash not NULL). */
int ckpt_fser_kryo_value(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o, int32_t *hash,
			 int *hashed);

/* ------------------------------------------------------------ rowdata.c */

/* The payload of a table runtime snapshot (t->kind one of rowdata.c's) into t; EXTERNAL and
 * LINKEDLIST: only their outer snapshot (t->flag its version).  0; 2 when a composite's nested
 * snapshots follow; 1 when it cannot be stepped over (a source it cannot read a Java stream of),
 * or -1 with the error set. */
int ckpt_frow_read(struct ckpt_fsrc *s, struct ckpt_fser *t);
void ckpt_frow_free(struct ckpt_frow_type *rd);
/* getLength() of the kinds of rowdata.c: -1 when not fixed. */
int ckpt_frow_fixed_length(const struct ckpt_fser *t);
/* The bytes a BinaryArrayData element of type t takes in its fixed part (1, 2, 4 or 8). */
size_t ckpt_frow_elem_size(const struct ckpt_frow_type *t);
/* One value of the kinds of rowdata.c: 0, or -1 with the error set.  A RowData's hashCode (that of
 * the BinaryRowData it is written as) into *hash, with *hashed set. */
int ckpt_frow_value(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o, int32_t *hash,
		       int *hashed, const struct ckpt_fser_ops *ops);
/* Can ckpt write keys of t (a RowDataSerializer of fields of the types it decodes) for -k, or values
 * of t (also an ArrayDataSerializer or MapDataSerializer)?  1; else 0 with why the field that stops it. */
int ckpt_frow_key_writable(const struct ckpt_fser *t, char *why, size_t n);
/* The key v (as -a prints a row, or an array of its fields) as t serializes it, its length first,
 * into a new *p: 0; or -1 with what was expected in why.  Also an ArrayData, MapData (as -R prints
 * them, their length first), TimestampData or DecimalData value of t. */
int ckpt_frow_key(const struct ckpt_fser *t, const json_t *v, unsigned char **p, size_t *n, char *why,
		     size_t whyn);
/* ------------------------------------------------------------ pojo.c */

/* A PojoSerializerSnapshot's two subclass maps (registered, then the non-registered cache), their
 * snapshots read into t->subs.  0, or -1 with the error set. */
int ckpt_fser_pojo_subclasses(struct ckpt_fsrc *s, struct ckpt_fser *t, const struct ckpt_fser_ops *ops);
/* A POJO value (PojoSerializer): null, the class's fields by name, or a subclass's value. */
int ckpt_fser_pojo_value(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o,
			 const struct ckpt_fser_ops *ops);
/* A LinkedOptionalMap's header and entry count (at most most; what names the count in the
 * error), as PojoSerializerSnapshot writes its field and subclass maps.  0, or -1. */
int ckpt_fser_optional_map_size(struct ckpt_fsrc *s, int32_t most, const char *what, int32_t *n);

/* ------------------------------------------------------------ avro.c */

/* An AvroSerializerSnapshot's payload at t->version (the class, the writer's schema): the schema
 * parsed into t->ext; a schema ckpt does not understand leaves t FSER_OPAQUE.  0, 1 for a version
 * ckpt does not know, or -1 with the error set. */
int ckpt_fser_avro_snapshot(struct ckpt_fsrc *s, struct ckpt_fser *t, const struct ckpt_fser_ops *ops);

/* serializer.c: t typed as the simple snapshot of class cls (1), or not one (0, t unchanged). */
int ckpt_fser_known_simple(const char *cls, struct ckpt_fser *t);
/* legacy.c: a TypeSerializerConfigSnapshot at the adapter version (Flink 1.7 writing the way of
 * 1.6) after its class and version: ParameterlessTypeSerializerConfig and
 * TupleSerializerConfigSnapshot.  0 typed, 1 a class ckpt does not know (t->cls names it), -1. */
#define CKPT_FSER_LEGACY_ADAPTER 0x7a53c4f0 /* TypeSerializerConfigSnapshot.ADAPTER_VERSION */
#define CKPT_FSER_PARAMETERLESS "org.apache.flink.api.common.typeutils.ParameterlessTypeSerializerConfig"
int ckpt_fser_legacy(struct ckpt_fsrc *s, struct ckpt_fser *t, const struct ckpt_fser_ops *ops);
/* One value in the encoding of flink-avro's DataOutputEncoder.  0, or -1 with the error set. */
int ckpt_fser_avro_value(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o);
/* avro-enc.c: the same written from its JSON (as -R prints it; a union's branch: the first it fits),
 * for ckpt-merge --rows: 0, or -1 with b->why saying what was expected. */
int ckpt_fser_avro_enc(const struct ckpt_fser *t, const json_t *v, struct ckpt_fenc *b, int depth);
void ckpt_fser_avro_free(void *schema);

/* ------------------------------------------------------------ jvalue.c */

/* One value of the kinds of jvalue.c: BigInteger and BigDecimal as plain decimal strings, dates
 * and times as ISO 8601 strings (instants with "Z"), null as null; a Java-serialized value (the
 * rest of a memory source is its bytes: the stream says where it ends) typed as far as the stream
 * says.  0, or -1 with the error set. */
int ckpt_fser_jvalue(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o);

/* ------------------------------------------------------------ key.c */

/* One key (ckpt-inspect -k): its bytes as its key serializer writes them, its Java hashCode and its
 * typed form as -a prints it. */
struct ckpt_fkey {
	unsigned char *bytes;
	size_t n;
	int32_t hash;
	json_t *typed;
};
/* The key v (text: as the user wrote it, for messages) under key serializer t: 0, or -1 with e set
 * (CKPT_ERR_INPUT, where): v does not fit t, or t is a serializer ckpt cannot write or hash (named). */
int ckpt_fkey_make(struct ckpt_fkey *k, const struct ckpt_fser *t, const json_t *v, const char *text,
		   const char *where, struct ckpt_err *e);
void ckpt_fkey_release(struct ckpt_fkey *k);
/* Is k the key of an entry whose composite key is p[0, n) (prefix key-group bytes, the key, ...)? */
int ckpt_fkey_matches(const struct ckpt_fkey *k, const unsigned char *p, size_t n, unsigned prefix);

/* A value written as its serializer writes it, into p (grown): -k's keys (key.c), ckpt-merge --rows's
 * keys and values (value set: the kinds beyond the keys' through more, encode.c's ckpt_fenc_more,
 * which key.c below it takes as a callback).  -1 with what was expected in why, and cannot set when
 * the serializer is one ckpt cannot write (named in why). */
struct ckpt_fenc {
	unsigned char *p;
	size_t n, cap;
	char *why;
	size_t whyn;
	int value, cannot;
	int (*more)(const struct ckpt_fser *t, const json_t *v, struct ckpt_fenc *b, int depth);
	struct ckpt_fjava *java; /* the state's Java-serialized values, or NULL */
};
int ckpt_fenc(const struct ckpt_fser *t, const json_t *v, struct ckpt_fenc *b, int depth);
/* jenc.c: a state's Java-serialized values (JavaSerializer), each with its row's value, which a
 * value given is written by: one of them byte for byte, a changed one with their class descriptors
 * (ckpt_fenc's java; without it such values cannot be written).  Add keeps at most 64 MiB (the rest
 * is left out).  Enc: the value v into a new *out, 0; or -1 with what was expected in why. */
struct ckpt_fjava *ckpt_fjava_new(struct ckpt_err *e);
int ckpt_fjava_add(struct ckpt_fjava *j, const unsigned char *p, size_t n, const json_t *typed, struct ckpt_err *e);
int ckpt_fjava_enc(struct ckpt_fjava *j, const json_t *v, unsigned char **out, size_t *n, char *why, size_t whyn);
void ckpt_fjava_free(struct ckpt_fjava *j);
/* jvalue.c: what -R prints of the Java-serialized value v (a new reference), or NULL. */
json_t *ckpt_fjava_render(const struct ckpt_javaser_value *v);
int ckpt_fenc_put(struct ckpt_fenc *b, const void *p, size_t n);
int ckpt_fenc_be(struct ckpt_fenc *b, uint64_t x, size_t n);
int ckpt_fenc_fail(struct ckpt_fenc *b, const char *expected);
/* encode.c: the kinds beyond the keys' (composites, wrappers, Scala's, Kryo's kept bytes). */
int ckpt_fenc_more(const struct ckpt_fser *t, const json_t *v, struct ckpt_fenc *b, int depth);
/* encode.c: could a value of t (nested depth deep) be one ckpt cannot write?  1 or 0. */
int ckpt_fenc_may_refuse(const struct ckpt_fser *t, int depth);

/* Flink's KeyGroupRangeAssignment: MathUtils.murmurHash(hashCode) % maxParallelism. */
uint32_t ckpt_flink_key_group(int32_t hash, uint32_t max_parallelism);
/* The bytes of a key's key-group prefix in the RocksDB and canonical layouts at that max parallelism
 * (CompositeKeySerializationUtils.computeRequiredBytesInKeyGroupPrefix): 1 up to 128, else 2. */
static inline unsigned
ckpt_flink_kg_prefix(uint32_t max_parallelism)
{
	return max_parallelism > 128 ? 2 : 1;
}

/* ------------------------------------------------------------ connector.c */

/* Whether s is a name Kafka takes for a topic: 1 to 249 of [a-zA-Z0-9._-]. */
int ckpt_fser_kafka_topic_ok(const char *s);
/* One element of a source operator's SourceReaderState, p[0, n) at offset at of where: its
 * SimpleVersionedSerialization framing (i32 version, i32 length, the split), the split typed into
 * *v ({"connector": ..., "version": ..., its fields}) when exactly one format ckpt knows parses all
 * of it with sane values, else *v NULL and why says what each tried found.  -1 with e set when the
 * framing itself is broken (too short, a length that is not what follows). */
int ckpt_fser_split_typed(const unsigned char *p, size_t n, uint64_t at, const char *where, json_t **v, char *why,
		      size_t nwhy, struct ckpt_err *e);
/* An operator coordinator's state p[0, n): in SourceCoordinator's framing, the enumerator's
 * checkpoint typed into *v as above, or {"connector": null, "reason", "bytes"} when none parses;
 * *v NULL when the bytes are not in that framing.  -1 only when out of memory. */
int ckpt_fser_enum_typed(const unsigned char *p, size_t n, json_t **v, char *why, size_t nwhy);
/* A Kafka split's offset v as -a prints it: the number, or Flink's sentinel named ("earliest",
 * "latest", "committed"; "migrated" starting, null stopping for Long.MIN_VALUE); NULL when v is
 * neither (a stopping offset of -2 included). */
json_t *ckpt_fser_split_offset(int64_t v, int stopping);

/* ------------------------------------------------------------ legacyconn.c */

/* The operator states of connectors before the Source API, and of the sinks, by state name. */
enum {
	FLEGACY_CONSUMER = 1,
	FLEGACY_WRITER, /* "writer_raw_states": the KafkaSink's or the FileSink's */
	FLEGACY_COMMITTER,
	FLEGACY_BUCKETS, /* StreamingFileSink's "bucket-states" */
	/* FlinkKafkaProducer's, by its value serializer: the hint; the transactions (TwoPhaseCommitSinkFunction's
	 * state) with the flag before the pending one (outer snapshot version 3 on), or without (2) */
	FLEGACY_PRODUCER_HINT, FLEGACY_PRODUCER_TXN, FLEGACY_PRODUCER_TXN2,
};
/* Which of them state is (FLEGACY_*) by its name, or by value, its value serializer's snapshot (NULL
 * when unknown); 0 when none. */
int ckpt_fser_legacy_kind(const char *state, const struct ckpt_fser *value);
/* String.hashCode of an ASCII string: a Kafka topic's, for KafkaTopicPartition's cached hash and the
 * reader KafkaSourceEnumerator.getSplitOwner picks. */
int32_t ckpt_fser_java_mutf8_hash(const unsigned char *p, size_t n);
/* One element p[0, n) at offset at of where (a consumer's Tuple2 as cut by the offsets; the sinks'
 * the bytes of their byte[]) typed into *v ({"connector", ...}; the committer's {"state":
 * "committables", ...}), or *v NULL and why says what the format found.  -1 with e set when the
 * sinks' framing is broken (too short, a length that is not what follows), when FlinkKafkaProducer's
 * element (its serializer known from its snapshot) does not parse, or out of memory. */
int ckpt_fser_legacy_typed(int kind, const unsigned char *p, size_t n, uint64_t at, const char *where, json_t **v,
			   char *why, size_t nwhy, struct ckpt_err *e);

#endif
