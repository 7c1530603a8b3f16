/* serializer.c: Flink's serializer snapshots (the classes ckpt can step over, since the
 * framing has no length) and the values of the built-in serializers they describe. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "types.h"
#include "model/model.h"

#define FSER_DEPTH 32
#define COMPOSITE_MAGIC 911108
#define NESTED_MAGIC 1333245

/* How a snapshot's payload is laid out. */
enum shape {
	SIMPLE,    /* SimpleTypeSerializerSnapshot: nothing (version 3) or the serializer class (2) */
	COMPOSITE, /* CompositeTypeSerializerSnapshot: outer snapshot, then nested snapshots */
	ENUMS,     /* EnumSerializerSnapshot: class, constant names */
	POJO,      /* PojoSerializerSnapshot: class, framed field snapshots */
	SENUM,     /* ScalaEnumSerializerSnapshot: class, (name, id) pairs */
	KRYO,      /* KryoSerializerSnapshot: class, three optional maps (registrations, serializers) */
	TABLE,     /* rowdata.c: the table runtime's snapshots of internal data */
	AVRO,      /* AvroSerializerSnapshot: class and schema (avro.c) */
};

/* Outer snapshots of the composite classes. */
enum outer { NONE, CLASSNAME, PADDING, TABLE_OUTER, TWOPC };

struct known {
	const char *cls;
	enum shape shape;
	enum ckpt_fser_kind kind, elem;
	enum outer outer;
};

#define B "org.apache.flink.api.common.typeutils.base."
#define R "org.apache.flink.api.java.typeutils.runtime."
#define W "org.apache.flink.streaming.api.windowing.windows."
#define S "org.apache.flink.api.scala.typeutils."
#define T "org.apache.flink.table.runtime.typeutils."
#define K "org.apache.flink.streaming.connectors.kafka.FlinkKafkaProducer$"
static const struct known known[] = {
	{B "StringSerializer$StringSerializerSnapshot", SIMPLE, FSER_STRING, 0, NONE},
	{B "LongSerializer$LongSerializerSnapshot", SIMPLE, FSER_LONG, 0, NONE},
	{B "IntSerializer$IntSerializerSnapshot", SIMPLE, FSER_INT, 0, NONE},
	{B "ShortSerializer$ShortSerializerSnapshot", SIMPLE, FSER_SHORT, 0, NONE},
	{B "ByteSerializer$ByteSerializerSnapshot", SIMPLE, FSER_BYTE, 0, NONE},
	{B "BooleanSerializer$BooleanSerializerSnapshot", SIMPLE, FSER_BOOL, 0, NONE},
	{B "FloatSerializer$FloatSerializerSnapshot", SIMPLE, FSER_FLOAT, 0, NONE},
	{B "DoubleSerializer$DoubleSerializerSnapshot", SIMPLE, FSER_DOUBLE, 0, NONE},
	{B "CharSerializer$CharSerializerSnapshot", SIMPLE, FSER_CHAR, 0, NONE},
	{B "VoidSerializer$VoidSerializerSnapshot", SIMPLE, FSER_VOID, 0, NONE},
	{B "array.BytePrimitiveArraySerializer$BytePrimitiveArraySerializerSnapshot", SIMPLE, FSER_BYTES, 0, NONE},
	{B "array.IntPrimitiveArraySerializer$IntPrimitiveArraySerializerSnapshot", SIMPLE, FSER_PARRAY, FSER_INT, NONE},
	{B "array.LongPrimitiveArraySerializer$LongPrimitiveArraySerializerSnapshot", SIMPLE, FSER_PARRAY, FSER_LONG, NONE},
	{B "array.ShortPrimitiveArraySerializer$ShortPrimitiveArraySerializerSnapshot", SIMPLE, FSER_PARRAY, FSER_SHORT, NONE},
	{B "array.FloatPrimitiveArraySerializer$FloatPrimitiveArraySerializerSnapshot", SIMPLE, FSER_PARRAY, FSER_FLOAT, NONE},
	{B "array.DoublePrimitiveArraySerializer$DoublePrimitiveArraySerializerSnapshot", SIMPLE, FSER_PARRAY, FSER_DOUBLE, NONE},
	{B "array.CharPrimitiveArraySerializer$CharPrimitiveArraySerializerSnapshot", SIMPLE, FSER_PARRAY, FSER_CHAR, NONE},
	{B "array.BooleanPrimitiveArraySerializer$BooleanPrimitiveArraySerializerSnapshot", SIMPLE, FSER_PARRAY, FSER_BOOL, NONE},
	{B "array.StringArraySerializer$StringArraySerializerSnapshot", SIMPLE, FSER_PARRAY, FSER_STRING, NONE},
	{"org.apache.flink.runtime.state.VoidNamespaceSerializer$VoidNamespaceSerializerSnapshot", SIMPLE, FSER_VOIDNS, 0, NONE},
	{W "TimeWindow$Serializer$TimeWindowSerializerSnapshot", SIMPLE, FSER_TIMEWINDOW, 0, NONE},
	{W "GlobalWindow$Serializer$GlobalWindowSerializerSnapshot", SIMPLE, FSER_GLOBALWINDOW, 0, NONE},
	{"org.apache.flink.runtime.state.JavaSerializer$JavaSerializerSnapshot", SIMPLE, FSER_JAVA, 0, NONE},
	{B "BigIntSerializer$BigIntSerializerSnapshot", SIMPLE, FSER_BIGINT, 0, NONE},
	{B "BigDecSerializer$BigDecSerializerSnapshot", SIMPLE, FSER_BIGDEC, 0, NONE},
	{B "DateSerializer$DateSerializerSnapshot", SIMPLE, FSER_DATE, 0, NONE},
	{B "SqlDateSerializer$SqlDateSerializerSnapshot", SIMPLE, FSER_DATE, 0, NONE},
	{B "SqlTimeSerializer$SqlTimeSerializerSnapshot", SIMPLE, FSER_DATE, 0, NONE},
	{B "SqlTimestampSerializer$SqlTimestampSerializerSnapshot", SIMPLE, FSER_SQLTIMESTAMP, 0, NONE},
	{B "InstantSerializer$InstantSerializerSnapshot", SIMPLE, FSER_INSTANT, 0, NONE},
	{B "LocalDateSerializer$LocalDateSerializerSnapshot", SIMPLE, FSER_LOCALDATE, 0, NONE},
	{B "LocalTimeSerializer$LocalTimeSerializerSnapshot", SIMPLE, FSER_LOCALTIME, 0, NONE},
	{B "LocalDateTimeSerializer$LocalDateTimeSerializerSnapshot", SIMPLE, FSER_LOCALDATETIME, 0, NONE},
	{B "ListSerializerSnapshot", COMPOSITE, FSER_LIST, 0, NONE},
	{B "MapSerializerSnapshot", COMPOSITE, FSER_MAP, 0, NONE},
	{B "GenericArraySerializerSnapshot", COMPOSITE, FSER_ARRAY, 0, CLASSNAME},
	{R "TupleSerializerSnapshot", COMPOSITE, FSER_TUPLE, 0, CLASSNAME},
	{R "RowSerializer$RowSerializerSnapshot", COMPOSITE, FSER_ROW, 0, NONE},
	{R "NullableSerializer$NullableSerializerSnapshot", COMPOSITE, FSER_NULLABLE, 0, PADDING},
	{"org.apache.flink.runtime.state.ttl.TtlStateFactory$TtlSerializerSnapshot", COMPOSITE, FSER_TTL, 0, NONE},
	/* State V2 (Flink 2.x asynchronous state): the same snapshot and serializer, another class */
	{"org.apache.flink.runtime.state.v2.ttl.TtlStateFactory$TtlSerializerSnapshot", COMPOSITE, FSER_TTL, 0, NONE},
	{"org.apache.flink.streaming.api.operators.TimerSerializerSnapshot", COMPOSITE, FSER_TIMER, 0, NONE},
	{B "EnumSerializer$EnumSerializerSnapshot", ENUMS, FSER_ENUM, 0, NONE},
	{R "PojoSerializerSnapshot", POJO, FSER_POJO, 0, NONE},
	{R "JavaEitherSerializerSnapshot", COMPOSITE, FSER_EITHER, 0, NONE},
	{R "EitherSerializerSnapshot", COMPOSITE, FSER_EITHER, 0, NONE}, /* Flink 1.6 to 1.7: version 2, nested only */
	{R "kryo.KryoSerializerSnapshot", KRYO, FSER_KRYO, 0, NONE},
	{S "ScalaCaseClassSerializerSnapshot", COMPOSITE, FSER_TUPLE, 0, CLASSNAME},
	{S "Tuple2CaseClassSerializerSnapshot", COMPOSITE, FSER_TUPLE, 0, CLASSNAME},
	{S "ScalaOptionSerializerSnapshot", COMPOSITE, FSER_OPTION, 0, NONE},
	{S "ScalaEitherSerializerSnapshot", COMPOSITE, FSER_EITHER, 0, NONE},
	{S "ScalaTrySerializerSnapshot", COMPOSITE, FSER_TRY, 0, NONE},
	{S "TraversableSerializerSnapshot", COMPOSITE, FSER_TRAVERSABLE, 0, CLASSNAME},
	{S "ScalaEnumSerializerSnapshot", SENUM, FSER_SENUM, 0, NONE},
	{S "UnitSerializer$UnitSerializerSnapshot", SIMPLE, FSER_UNIT, 0, NONE},
	{T "RowDataSerializer$RowDataSerializerSnapshot", TABLE, FSER_ROWDATA, 0, NONE},
	{T "ExternalSerializer$ExternalSerializerSnapshot", COMPOSITE, FSER_EXTERNAL, 0, TABLE_OUTER},
	{T "LinkedListSerializer$LinkedListSerializerSnapshot", COMPOSITE, FSER_LINKEDLIST, 0, TABLE_OUTER},
	{T "RawValueDataSerializer$RawValueDataSerializerSnapshot", COMPOSITE, FSER_RAWDATA, 0, NONE},
	{T "ArrayDataSerializer$ArrayDataSerializerSnapshot", TABLE, FSER_ARRAYDATA, 0, NONE},
	{T "MapDataSerializer$MapDataSerializerSnapshot", TABLE, FSER_MAPDATA, 0, NONE},
	{"org.apache.flink.table.dataview.NullSerializer$NullSerializerSnapshot", SIMPLE, FSER_VOID, 0, NONE},
	{T "StringDataSerializer$StringDataSerializerSnapshot", SIMPLE, FSER_STRINGDATA, 0, NONE},
	{T "TimestampDataSerializer$TimestampDataSerializerSnapshot", TABLE, FSER_TIMESTAMPDATA, 0, NONE},
	{T "DecimalDataSerializer$DecimalSerializerSnapshot", TABLE, FSER_DECIMALDATA, 0, NONE},
	{"org.apache.flink.table.runtime.operators.window.TimeWindow$Serializer$TimeWindowSerializerSnapshot", SIMPLE,
	 FSER_TIMEWINDOW, 0, NONE},
	{"org.apache.flink.formats.avro.typeutils.AvroSerializerSnapshot", AVRO, FSER_AVRO, 0, NONE},
	/* FlinkKafkaProducer's operator states: stepped over, their values typed by legacyconn.c */
	{K "NextTransactionalIdHintSerializer$NextTransactionalIdHintSerializerSnapshot", SIMPLE, FSER_OPAQUE, 0, NONE},
	{K "TransactionStateSerializer$TransactionStateSerializerSnapshot", SIMPLE, FSER_OPAQUE, 0, NONE},
	{K "ContextStateSerializer$ContextStateSerializerSnapshot", SIMPLE, FSER_OPAQUE, 0, NONE},
	{"org.apache.flink.streaming.api.functions.sink.TwoPhaseCommitSinkFunction$StateSerializerSnapshot", COMPOSITE,
	 FSER_OPAQUE, 0, TWOPC},
};
#undef B
#undef R
#undef W
#undef S
#undef T
#undef K

/* This file's dispatcher, as the readers of nested snapshots and values take it. */
static const struct ckpt_fser_ops ops = {
	.read = ckpt_fser_read, .free = ckpt_fser_free, .blocker = ckpt_fser_blocker, .value = ckpt_fser_value,
	.emit = ckpt_fser_emit, .known_simple = ckpt_fser_known_simple,
};

void
ckpt_fser_free(struct ckpt_fser *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->nkids; i++)
		ckpt_fser_free(t->kids[i]);
	for (size_t i = 0; i < t->nnames; i++)
		free(t->names[i]);
	free(t->kids);
	free(t->names);
	free(t->ids);
	ckpt_frow_free(t->rd);
	for (size_t i = 0; i < t->nsubs; i++) { /* pojo.c's subclasses */
		ckpt_fser_free(t->subs[i]);
		free(t->subnames[i]);
	}
	free(t->subs);
	free(t->subnames);
	if (t->ext) /* avro.c's schema */
		ckpt_fser_avro_free(t->ext);
	free(t->cls);
	free(t->name);
	free(t);
}

struct ckpt_fser *
ckpt_fser_composite(enum ckpt_fser_kind kind, const char *cls, struct ckpt_fser *a, struct ckpt_fser *b)
{
	struct ckpt_fser *t = calloc(1, sizeof *t);
	size_t n = b ? 2 : 1;

	if (t == NULL || (t->cls = strdup(cls)) == NULL || (t->kids = calloc(n, sizeof *t->kids)) == NULL) {
		if (t)
			free(t->cls);
		free(t);
		return NULL;
	}
	t->kind = kind;
	t->version = 1;
	t->kids[0] = a;
	if (b)
		t->kids[1] = b;
	t->nkids = n;
	return t;
}

static int
add_kid(struct ckpt_fsrc *s, struct ckpt_fser *t, struct ckpt_fser *k)
{
	if (ckpt_grow(&t->kids, &t->kidcap, t->nkids + 1, sizeof *t->kids, 4, NULL) < 0) {
		ckpt_fser_free(k);
		return ckpt_fsrc_nomem(s);
	}
	t->kids[t->nkids++] = k;
	return 0;
}

static int
add_name(struct ckpt_fsrc *s, struct ckpt_fser *t, char *name)
{
	if (ckpt_grow(&t->names, &t->namecap, t->nnames + 1, sizeof *t->names, 4, NULL) < 0) {
		free(name);
		return ckpt_fsrc_nomem(s);
	}
	t->names[t->nnames++] = name;
	return 0;
}

static int read_versioned(struct ckpt_fsrc *s, struct ckpt_fser **out);

/* The nested snapshots of a composite (NestedSerializersSnapshotDelegate). */
static int
read_nested(struct ckpt_fsrc *s, struct ckpt_fser *t)
{
	int32_t magic, version, n;

	if (ckpt_fsrc_i32(s, &magic, "nested serializers magic number") < 0)
		return -1;
	if (magic != NESTED_MAGIC)
		return ckpt_fsrc_fail(s, "nested serializers magic number %d (%d expected)", magic, NESTED_MAGIC);
	if (ckpt_fsrc_i32(s, &version, "nested serializers version") < 0 ||
	    ckpt_fsrc_i32(s, &n, "nested serializer count") < 0)
		return -1;
	if (version != 1)
		return ckpt_fsrc_fail(s, "nested serializers version %d (1 expected)", version);
	if (n < 0 || n > 65535)
		return ckpt_fsrc_fail(s, "nested serializer count %d (0 to 65535 expected)", n);
	for (int32_t i = 0; i < n; i++) {
		struct ckpt_fser *k = NULL;
		int r = read_versioned(s, &k);

		if (r < 0) {
			ckpt_fser_free(k);
			return -1;
		}
		if (add_kid(s, t, k) < 0)
			return -1;
		if (r == 1)
			return 1;
	}
	return 0;
}

static int
read_composite(struct ckpt_fsrc *s, struct ckpt_fser *t, const struct known *k)
{
	int32_t outer = t->version;

	if (t->version >= 3) {
		int32_t magic;

		if (ckpt_fsrc_i32(s, &magic, "composite snapshot magic number") < 0)
			return -1;
		if (magic != COMPOSITE_MAGIC)
			return ckpt_fsrc_fail(s, "composite snapshot magic number %d (%d expected) in %s", magic,
					      COMPOSITE_MAGIC, t->cls);
		if (ckpt_fsrc_i32(s, &outer, "outer snapshot version") < 0)
			return -1;
	}
	if (k->outer == CLASSNAME && ckpt_fsrc_utf(s, &t->name, "class name") < 0)
		return -1;
	if (k->outer == PADDING) {
		int32_t pad;

		if (ckpt_fsrc_i32(s, &pad, "null padding length") < 0)
			return -1;
		if (pad < 0 || pad > 65536)
			return ckpt_fsrc_fail(s, "null padding length %d", pad);
		t->flag = pad;
	}
	if (k->outer == TABLE_OUTER) {
		int r;

		t->flag = outer;
		if ((r = ckpt_frow_read(s, t)) != 0)
			return r;
	}
	if (k->outer == TWOPC) { /* outer version 3 on: the pending transaction may be null; 4 on: whether */
		uint8_t b = outer >= 3;

		if (outer >= 4 && ckpt_fsrc_u8(s, &b, "null transaction flag") < 0)
			return -1;
		if (b > 1)
			return ckpt_fsrc_fail(s, "null transaction flag %u", b);
		t->flag = b;
	}
	if (k->kind == FSER_ROW)
		t->flag = outer >= 3; /* RowSerializerSnapshot before version 3 wrote no row kind */
	if (k->kind == FSER_TUPLE) /* a Scala case class: its hashCode is Scala's, not TupleN's */
		t->flag = strncmp(t->cls, "org.apache.flink.api.scala.", 27) == 0;
	return read_nested(s, t);
}

static int
read_enum(struct ckpt_fsrc *s, struct ckpt_fser *t)
{
	int32_t n;

	if (ckpt_fsrc_utf(s, &t->name, "enum class") < 0 || ckpt_fsrc_i32(s, &n, "enum constant count") < 0)
		return -1;
	if (n < 0 || n > 65535)
		return ckpt_fsrc_fail(s, "enum constant count %d", n);
	for (int32_t i = 0; i < n; i++) {
		char *c;

		if (ckpt_fsrc_utf(s, &c, "enum constant") < 0 || add_name(s, t, c) < 0)
			return -1;
	}
	return 0;
}

/* A LinkedOptionalMap: header, count, then per entry a name and two framed optionals. */
static int
read_optional_map(struct ckpt_fsrc *s, struct ckpt_fser *t, int fields)
{
	int32_t n;

	if (ckpt_fser_optional_map_size(s, 65535, "optional map size", &n) < 0)
		return -1;
	for (int32_t i = 0; i < n; i++) {
		struct ckpt_fser *k = NULL;
		unsigned char *frame = NULL;
		size_t len;
		uint8_t has;
		char *name;
		int r = 0;

		if (ckpt_fsrc_utf(s, &name, "optional map key") < 0)
			return -1;
		if (fields && add_name(s, t, name) < 0)
			return -1;
		if (!fields)
			free(name);
		for (int part = 0; part < 2; part++) {
			if (ckpt_fsrc_u8(s, &has, "optional map flag") < 0)
				return -1;
			if (has > 1)
				return ckpt_fsrc_fail(s, "optional map flag %u", has);
			if (!has)
				continue;
			if (ckpt_fsrc_blob(s, &frame, &len, "optional map frame") < 0)
				return -1;
			if (part == 1 && fields) { /* a field's snapshot: read it from its frame */
				struct ckpt_fsrc f;

				ckpt_fsrc_mem(&f, frame, len, s->where, s->e);
				r = read_versioned(&f, &k);
				if (r == 0 && !ckpt_fsrc_drained(&f))
					r = ckpt_fsrc_fail(&f, "field snapshot shorter than its frame");
				ckpt_fsrc_release(&f);
			}
			free(frame);
			if (r < 0) {
				ckpt_fser_free(k);
				return -1;
			}
		}
		/* a field whose snapshot ckpt cannot read stays absent: its POJO values stay opaque */
		if (fields && (r == 1 || k == NULL)) {
			ckpt_fser_free(k);
			k = NULL;
		}
		if (fields && add_kid(s, t, k) < 0)
			return -1;
	}
	return 0;
}

static int
read_pojo(struct ckpt_fsrc *s, struct ckpt_fser *t)
{
	if (t->version != 2)
		return 1;
	if (ckpt_fsrc_utf(s, &t->name, "POJO class") < 0 || read_optional_map(s, t, 1) < 0 ||
	    ckpt_fser_pojo_subclasses(s, t, &ops) < 0) /* registered and non-registered subclasses */
		return -1;
	return 0;
}

/* KryoSerializerSnapshotData: the type's class, then registrations, default serializers and
 * default serializer classes, each a LinkedOptionalMap of Java-serialized values, stepped over. */
static int
read_kryo(struct ckpt_fsrc *s, struct ckpt_fser *t)
{
	if (ckpt_fsrc_utf(s, &t->name, "Kryo type class") < 0)
		return -1;
	for (int i = 0; i < 3; i++)
		if (read_optional_map(s, t, 0) < 0)
			return -1;
	return 0;
}

static const struct known *
find_known(const char *cls)
{
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (strcmp(known[i].cls, cls) == 0)
			return &known[i];
	return NULL;
}

int
ckpt_fser_known_simple(const char *cls, struct ckpt_fser *t)
{
	const struct known *k = find_known(cls);

	if (k == NULL || k->shape != SIMPLE)
		return 0;
	t->kind = k->kind;
	t->elem = k->elem;
	return 1;
}

/* The payload of a snapshot of class t->cls at t->version. */
static int
read_payload(struct ckpt_fsrc *s, struct ckpt_fser *t)
{
	const struct known *k = find_known(t->cls);

	if (k == NULL && t->version == CKPT_FSER_LEGACY_ADAPTER)
		return ckpt_fser_legacy(s, t, &ops);
	if (k == NULL)
		return 1;
	t->kind = k->kind;
	t->elem = k->elem;
	switch (k->shape) {
	case SIMPLE:
		if (t->version == 2) {
			char *c;

			if (ckpt_fsrc_utf(s, &c, "serializer class") < 0)
				return -1;
			free(c);
		} else if (t->version != 3) {
			t->kind = FSER_UNKNOWN;
			return 1;
		}
		return 0;
	case COMPOSITE:
		if (t->version < 1 || t->version > 3) {
			t->kind = FSER_UNKNOWN;
			return 1;
		}
		return read_composite(s, t, k);
	case ENUMS:
		if (t->version < 2 || t->version > 3) {
			t->kind = FSER_UNKNOWN;
			return 1;
		}
		return read_enum(s, t);
	case POJO:
		if (read_pojo(s, t) == 1) {
			t->kind = FSER_UNKNOWN;
			return 1;
		}
		return 0;
	case SENUM:
		if (t->version != 3) {
			t->kind = FSER_UNKNOWN;
			return 1;
		}
		return ckpt_fser_scala_enum(s, t);
	case KRYO:
		if (t->version != 2) {
			t->kind = FSER_UNKNOWN;
			return 1;
		}
		return read_kryo(s, t);
	case TABLE: { /* 2: the nested snapshots follow, as a composite's */
		int r = ckpt_frow_read(s, t);

		return r == 2 ? read_nested(s, t) : r;
	}
	case AVRO:
		return ckpt_fser_avro_snapshot(s, t, &ops);
	}
	return 1;
}

/* TypeSerializerSnapshot.readVersionedSnapshot: class, version, payload. */
static int
read_versioned(struct ckpt_fsrc *s, struct ckpt_fser **out)
{
	struct ckpt_fser *t = calloc(1, sizeof *t);
	int32_t version;
	int r;

	*out = t;
	if (t == NULL)
		return ckpt_fsrc_nomem(s);
	if (s->depth >= FSER_DEPTH)
		return ckpt_fsrc_fail(s, "serializer snapshots nested more than %d deep", FSER_DEPTH);
	t->at = ckpt_fsrc_tell(s);
	if (ckpt_fsrc_utf(s, &t->cls, "serializer snapshot class") < 0 ||
	    ckpt_fsrc_i32(s, &version, "serializer snapshot version") < 0)
		return -1;
	t->version = version;
	s->depth++;
	r = read_payload(s, t);
	s->depth--;
	t->end = ckpt_fsrc_tell(s);
	return r;
}

int
ckpt_fser_read(struct ckpt_fsrc *s, int proxy, struct ckpt_fser **out)
{
	*out = NULL;
	if (proxy) {
		int32_t v;

		if (ckpt_fsrc_i32(s, &v, "serializer snapshot format version") < 0)
			return -1;
		if (v != 2)
			return ckpt_fsrc_fail(s, "serializer snapshot format version %d (2, Flink 1.7 on, expected)", v);
	}
	return read_versioned(s, out);
}

/* Whether the kid i of t is read last of t, so last of the entry when t is. */
static int
last_kid(const struct ckpt_fser *t, size_t i)
{
	switch (t->kind) {
	case FSER_TUPLE: case FSER_POJO: case FSER_ROW: case FSER_TTL:
		return i + 1 == t->nkids;
	case FSER_OPTION: case FSER_NULLABLE: case FSER_EITHER: case FSER_TRY:
		return 1;
	default:
		return 0;
	}
}

/* The class of a snapshot that stopped the reading, if any. */
static const char *
stopped_at(const struct ckpt_fser *t)
{
	const char *b = NULL;

	if (t == NULL || t->kind == FSER_UNKNOWN)
		return t ? t->cls : NULL;
	for (size_t i = 0; i < t->nkids && b == NULL; i++)
		b = stopped_at(t->kids[i]);
	return b;
}

static const char *
blocker_at(const struct ckpt_fser *t, int tail)
{
	if (t == NULL)
		return "(a field without a snapshot)";
	if (t->kind == FSER_KRYO)
		return tail ? NULL : t->cls;
	if (t->kind == FSER_UNKNOWN || t->kind == FSER_OPAQUE)
		return t->cls;
	if (t->kind == FSER_ROWDATA || t->kind == FSER_RAWDATA) /* its nested snapshots only read */
		return t->rd || t->kind == FSER_RAWDATA ? stopped_at(t) : t->cls;
	if (t->kind == FSER_POJO && t->nkids != t->nnames)
		return t->cls;
	for (size_t i = 0; i < t->nkids; i++) {
		const char *b = blocker_at(t->kids[i], tail && last_kid(t, i));

		if (b)
			return b;
	}
	if ((t->kind == FSER_LIST || t->kind == FSER_ARRAY || t->kind == FSER_EXTERNAL || t->kind == FSER_LINKEDLIST ||
	     t->kind == FSER_NULLABLE || t->kind == FSER_OPTION || t->kind == FSER_TRAVERSABLE) && t->nkids != 1)
		return t->cls;
	if ((t->kind == FSER_MAP || t->kind == FSER_TTL || t->kind == FSER_TIMER || t->kind == FSER_EITHER ||
	     t->kind == FSER_TRY) && t->nkids != 2)
		return t->cls;
	return NULL;
}

const char *
ckpt_fser_blocker(const struct ckpt_fser *t)
{
	return blocker_at(t, 0);
}

const char *
ckpt_fser_blocker_tail(const struct ckpt_fser *t)
{
	return blocker_at(t, 1);
}

int
ckpt_fser_fixed_length(const struct ckpt_fser *t)
{
	/* what each serializer's getLength() says (VoidNamespaceSerializer: 0, though it writes a byte) */
	static const int len[] = {
		[FSER_LONG] = 8, [FSER_INT] = 4, [FSER_SHORT] = 2, [FSER_BYTE] = 1, [FSER_BOOL] = 1,
		[FSER_FLOAT] = 4, [FSER_DOUBLE] = 8, [FSER_CHAR] = 2, [FSER_VOID] = 1, [FSER_VOIDNS] = 0,
		[FSER_TIMEWINDOW] = 16, [FSER_GLOBALWINDOW] = 1, [FSER_ENUM] = 4, [FSER_SENUM] = 4, [FSER_UNIT] = 1,
		[FSER_DATE] = 8, [FSER_SQLTIMESTAMP] = 12, [FSER_INSTANT] = 12, [FSER_LOCALDATE] = 6,
		[FSER_LOCALTIME] = 7, [FSER_LOCALDATETIME] = 13,
	};
	int sum = 0;

	switch (t->kind) {
	case FSER_LONG: case FSER_INT: case FSER_SHORT: case FSER_BYTE: case FSER_BOOL:
	case FSER_FLOAT: case FSER_DOUBLE: case FSER_CHAR: case FSER_VOID: case FSER_VOIDNS:
	case FSER_TIMEWINDOW: case FSER_GLOBALWINDOW: case FSER_ENUM: case FSER_SENUM: case FSER_UNIT:
	case FSER_DATE: case FSER_SQLTIMESTAMP: case FSER_INSTANT: case FSER_LOCALDATE: case FSER_LOCALTIME:
	case FSER_LOCALDATETIME:
		return len[t->kind];
	case FSER_NULLABLE: /* padded (the padding is the wrapped serializer's length): the flag and it */
		return t->flag > 0 ? 1 + t->flag : -1;
	case FSER_TUPLE: /* TupleSerializerBase: fixed when every field's length is above 0 */
		for (size_t i = 0; i < t->nkids; i++) {
			int k = t->kids[i] ? ckpt_fser_fixed_length(t->kids[i]) : -1;

			if (k <= 0)
				return -1;
			sum += k;
		}
		return sum;
	default:
		return ckpt_frow_fixed_length(t);
	}
}

/* ---------------------------------------------------------------- values */

static int32_t
long_hash(int64_t v)
{
	uint64_t u = (uint64_t)v;

	return (int32_t)(uint32_t)(u ^ (u >> 32));
}

/* StringValue's variable-length unsigned int: 7 bits a byte, low first. */
static int read_varint_slow(struct ckpt_fsrc *s, uint32_t *v, const char *what);
static inline int
read_varint(struct ckpt_fsrc *s, uint32_t *v, const char *what)
{
	if (s->wpos < s->wlen && s->win[s->wpos] < 0x80 && !s->capture) { /* one byte: the common case */
		*v = s->win[s->wpos++];
		return 0;
	}
	return read_varint_slow(s, v, what);
}

static int
read_varint_slow(struct ckpt_fsrc *s, uint32_t *v, const char *what)
{
	uint32_t x = 0;

	for (int shift = 0;; shift += 7) {
		uint8_t b;

		if (ckpt_fsrc_u8(s, &b, what) < 0)
			return -1;
		if (shift > 28 || (shift == 28 && (b & 0x7f) > 0xf))
			return ckpt_fsrc_fail(s, "%s longer than 32 bits", what);
		x |= (uint32_t)(b & 0x7f) << shift;
		if (b < 0x80)
			break;
	}
	*v = x;
	return 0;
}

/* StringValue.writeString: length + 1 (0 for null), then each UTF-16 unit as a varint. */
static int
read_string(struct ckpt_fsrc *s, struct ckpt_fout *o, int32_t *hash)
{
	uint16_t small[128], *u = small;
	uint32_t len;
	size_t cap = sizeof small / sizeof *small;
	int32_t h = 0;
	int r;

	if (read_varint(s, &len, "string length") < 0)
		return -1;
	*hash = 0;
	if (len == 0)
		return ckpt_fout_null(o) < 0 ? ckpt_fsrc_nomem(s) : 0;
	len--;
	if (len <= s->wlen - s->wpos && !s->capture) { /* ASCII in the window: its bytes are its UTF-8 */
		const unsigned char *p = s->win + s->wpos;
		uint32_t i = 0;

		while (i < len && p[i] < 0x80) {
			h = (int32_t)((uint32_t)h * 31u + p[i]);
			i++;
		}
		if (i == len) {
			s->wpos += len;
			*hash = h;
			return ckpt_fout_str(o, (const char *)p, len) < 0 ? ckpt_fsrc_nomem(s) : 0;
		}
		h = 0;
	}
	for (uint32_t i = 0; i < len; i++) {
		uint32_t c;

		if (read_varint(s, &c, "string character") < 0)
			goto fail;
		if (c > 0xffff) {
			ckpt_fsrc_fail(s, "string character %u beyond UTF-16", c);
			goto fail;
		}
		if (i == cap) {
			uint16_t *n;

			cap *= 2;
			if ((n = realloc(u == small ? NULL : u, cap * sizeof *u)) == NULL) {
				ckpt_fsrc_nomem(s);
				goto fail;
			}
			if (u == small)
				memcpy(n, small, sizeof small);
			u = n;
		}
		u[i] = (uint16_t)c;
		h = (int32_t)((uint32_t)h * 31u + c);
	}
	r = ckpt_fout_utf16(s, o, u, len);
	if (u != small)
		free(u);
	*hash = h;
	return r;
fail:
	if (u != small)
		free(u);
	return -1;
}

/* The primitive kinds: value and Java hashCode. */
static int
read_primitive(struct ckpt_fsrc *s, enum ckpt_fser_kind kind, struct ckpt_fout *o, int32_t *hash)
{
	unsigned char b[8];
	uint64_t x;
	static const size_t size[] = {
		[FSER_LONG] = 8, [FSER_INT] = 4, [FSER_SHORT] = 2, [FSER_BYTE] = 1, [FSER_BOOL] = 1,
		[FSER_FLOAT] = 4, [FSER_DOUBLE] = 8, [FSER_CHAR] = 2,
	};
	size_t n = size[kind];
	const unsigned char *q = b;
	int r;

	if (n <= s->wlen - s->wpos && !s->capture) { /* in the window: read in place */
		q = s->win + s->wpos;
		s->wpos += n;
	} else if (ckpt_fsrc_read_slow(s, b, n, s->what ? s->what : "value") < 0) {
		return -1;
	}
	switch (n) {
	case 8: x = ckpt_be64(q); break;
	case 4: x = ckpt_be32(q); break;
	case 2: x = ckpt_be16(q); break;
	default: x = q[0];
	}
	switch (kind) {
	case FSER_LONG:
		r = ckpt_fout_int(o, (int64_t)x);
		*hash = long_hash((int64_t)x);
		break;
	case FSER_INT:
		r = ckpt_fout_int(o, (int32_t)(uint32_t)x);
		*hash = (int32_t)(uint32_t)x;
		break;
	case FSER_SHORT:
		r = ckpt_fout_int(o, (int16_t)(uint16_t)x);
		*hash = (int16_t)(uint16_t)x;
		break;
	case FSER_BYTE:
		r = ckpt_fout_int(o, (int8_t)(uint8_t)x);
		*hash = (int8_t)(uint8_t)x;
		break;
	case FSER_BOOL:
		r = ckpt_fout_bool(o, x != 0);
		*hash = x != 0 ? 1231 : 1237;
		break;
	case FSER_FLOAT: {
		uint32_t bits = (uint32_t)x;
		float f;

		memcpy(&f, &bits, 4);
		*hash = (int32_t)(isnan(f) ? 0x7fc00000u : bits);
		return ckpt_fout_real(s, o, f);
	}
	case FSER_DOUBLE: {
		double d;

		memcpy(&d, &x, 8);
		*hash = long_hash((int64_t)(isnan(d) ? 0x7ff8000000000000ull : x));
		return ckpt_fout_real(s, o, d);
	}
	default: { /* FSER_CHAR */
		uint16_t c = (uint16_t)x;

		*hash = c;
		return ckpt_fout_utf16(s, o, &c, 1);
	}
	}
	return r < 0 ? ckpt_fsrc_nomem(s) : 0;
}

static int value(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o, int32_t *hash, int *hashed);

static int
read_count(struct ckpt_fsrc *s, int32_t *n, const char *what)
{
	if (ckpt_fsrc_i32(s, n, what) < 0)
		return -1;
	if (*n < 0)
		return ckpt_fsrc_fail(s, "negative %s %d", what, *n);
	return 0;
}

static int
out_open(struct ckpt_fsrc *s, struct ckpt_fout *o, char c)
{
	return ckpt_fout_open(o, c) < 0 ? ckpt_fsrc_nomem(s) : 0;
}

/* n values of t (a NULL t: elem primitives), as elements of the array open in o. */
static int
read_elements(struct ckpt_fsrc *s, const struct ckpt_fser *t, enum ckpt_fser_kind elem, int32_t n,
	      struct ckpt_fout *o, int nullable)
{
	for (int32_t i = 0; i < n; i++) {
		int32_t h;
		int hd, r;

		if (nullable) {
			uint8_t present;

			if (ckpt_fsrc_u8(s, &present, "array element flag") < 0)
				return -1;
			if (!present) {
				if (ckpt_fout_null(o) < 0)
					return ckpt_fsrc_nomem(s);
				continue;
			}
		}
		if (t)
			r = value(t, s, o, &h, &hd);
		else if (elem == FSER_STRING)
			r = read_string(s, o, &h);
		else
			r = read_primitive(s, elem, o, &h);
		if (r < 0)
			return -1;
	}
	return 0;
}

static int
read_map(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o)
{
	int32_t n, h;
	int hd;

	if (read_count(s, &n, "map size") < 0)
		return -1;
	for (int32_t i = 0; i < n; i++) {
		uint8_t isnull;

		if (out_open(s, o, '{') < 0)
			return -1;
		ckpt_fout_key_lit(o, "key");
		if (value(t->kids[0], s, o, &h, &hd) < 0 || ckpt_fsrc_u8(s, &isnull, "map value null flag") < 0)
			return -1;
		ckpt_fout_key_lit(o, "value");
		if (isnull ? ckpt_fout_null(o) < 0 && ckpt_fsrc_nomem(s) : value(t->kids[1], s, o, &h, &hd) < 0)
			return -1;
		ckpt_fout_close(o);
	}
	return 0;
}

static const char *const row_kinds[] = {"+I", "-U", "+U", "-D"};

/* Row: a mask (row kind bits, then one null bit per field, high bit first), then the fields. */
static int
read_row(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o)
{
	size_t off = t->flag ? 2 : 0, bits = off + t->nkids;
	unsigned char mask[8192];
	int32_t h;
	int hd;

	if ((bits + 7) / 8 > sizeof mask)
		return ckpt_fsrc_fail(s, "row of %zu fields", t->nkids);
	if (ckpt_fsrc_read(s, mask, (bits + 7) / 8, "row null mask") < 0)
		return -1;
#define BIT(i) ((mask[(i) / 8] >> (7 - (i) % 8)) & 1)
	if (out_open(s, o, '{') < 0)
		return -1;
	ckpt_fout_key_lit(o, "kind");
	if ((t->flag ? ckpt_fout_str(o, row_kinds[BIT(0) | BIT(1) << 1], 2) : ckpt_fout_null(o)) < 0)
		return ckpt_fsrc_nomem(s);
	ckpt_fout_key_lit(o, "fields");
	if (out_open(s, o, '[') < 0)
		return -1;
	for (size_t i = 0; i < t->nkids; i++)
		if (BIT(off + i) ? ckpt_fout_null(o) < 0 && ckpt_fsrc_nomem(s) : value(t->kids[i], s, o, &h, &hd) < 0)
			return -1;
#undef BIT
	ckpt_fout_close(o);
	ckpt_fout_close(o);
	return 0;
}

/* A TupleN: its fields in a list, hashed as TupleN.hashCode */
static int
read_tuple(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o, int32_t *hash, int *hashed)
{
	int32_t h = 0, h1;
	int hd1;

	if (out_open(s, o, '[') < 0)
		return -1;
	*hashed = 1;
	for (size_t i = 0; i < t->nkids; i++) {
		if (value(t->kids[i], s, o, &h1, &hd1) < 0)
			return -1;
		h = (int32_t)((uint32_t)h * (i ? 31u : 0u) + (uint32_t)h1); /* TupleN.hashCode */
		*hashed &= hd1 && !t->flag;
	}
	ckpt_fout_close(o);
	*hash = h;
	return 0;
}

/* A timer: timestamp, key, namespace; its hash is its key's (its key group) */
static int
read_timer(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o, int32_t *hash, int *hashed)
{
	int32_t h1;
	int64_t ts;
	int hd1;

	if (ckpt_fsrc_i64(s, &ts, "timer timestamp") < 0 || out_open(s, o, '{') < 0)
		return -1;
	ckpt_fout_key_lit(o, "timestamp");
	if (ckpt_fout_int(o, (int64_t)((uint64_t)ts ^ (1ull << 63))) < 0)
		return ckpt_fsrc_nomem(s);
	ckpt_fout_key_lit(o, "key");
	if (value(t->kids[0], s, o, hash, hashed) < 0)
		return -1;
	ckpt_fout_key_lit(o, "namespace");
	if (value(t->kids[1], s, o, &h1, &hd1) < 0)
		return -1;
	ckpt_fout_close(o);
	return 0;
}

static int
read_composite_value(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o, int32_t *hash,
		     int *hashed)
{
	int32_t n, h = 0;
	int hd = 0;
	uint8_t flag;

	switch (t->kind) {
	case FSER_TUPLE:
		return read_tuple(t, s, o, hash, hashed);
	case FSER_LIST: case FSER_ARRAY:
		if (read_count(s, &n, t->kind == FSER_LIST ? "list size" : "array length") < 0 || out_open(s, o, '[') < 0 ||
		    read_elements(s, t->kids[0], 0, n, o, t->kind == FSER_ARRAY) < 0)
			return -1;
		ckpt_fout_close(o);
		return 0;
	case FSER_MAP:
		if (out_open(s, o, '[') < 0 || read_map(t, s, o) < 0)
			return -1;
		ckpt_fout_close(o);
		return 0;
	case FSER_TTL:
		if (out_open(s, o, '{') < 0)
			return -1;
		ckpt_fout_key_lit(o, "last_access");
		if (value(t->kids[0], s, o, &h, &hd) < 0)
			return -1;
		ckpt_fout_key_lit(o, "value");
		if (value(t->kids[1], s, o, &h, &hd) < 0)
			return -1;
		ckpt_fout_close(o);
		return 0;
	case FSER_TIMER:
		return read_timer(t, s, o, hash, hashed);
	case FSER_NULLABLE:
		if (ckpt_fsrc_u8(s, &flag, "null flag") < 0)
			return -1;
		if (flag) {
			if (ckpt_fsrc_read(s, NULL, (size_t)t->flag, "null padding") < 0)
				return -1;
			return ckpt_fout_null(o) < 0 ? ckpt_fsrc_nomem(s) : 0;
		}
		return value(t->kids[0], s, o, hash, hashed);
	case FSER_ROW:
		return read_row(t, s, o);
	case FSER_OPTION: case FSER_EITHER: case FSER_TRY: case FSER_TRAVERSABLE: case FSER_SENUM: case FSER_UNIT:
		return ckpt_fser_scala_value(t, s, o, &ops);
	case FSER_KRYO:
		return ckpt_fser_kryo_value(t, s, o, hash, hashed);
	case FSER_ROWDATA: case FSER_EXTERNAL: case FSER_STRINGDATA: case FSER_TIMESTAMPDATA: case FSER_DECIMALDATA:
	case FSER_ARRAYDATA: case FSER_MAPDATA: case FSER_RAWDATA: case FSER_LINKEDLIST:
		return ckpt_frow_value(t, s, o, hash, hashed, &ops);
	case FSER_AVRO:
		return ckpt_fser_avro_value(t, s, o);
	case FSER_BIGINT: case FSER_BIGDEC: case FSER_DATE: case FSER_SQLTIMESTAMP: case FSER_INSTANT:
	case FSER_LOCALDATE: case FSER_LOCALTIME: case FSER_LOCALDATETIME: case FSER_JAVA:
		return ckpt_fser_jvalue(t, s, o);
	default:
		return ckpt_fser_pojo_value(t, s, o, &ops);
	}
}

static int
value(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o, int32_t *hash, int *hashed)
{
	unsigned char *p;
	size_t n;
	int32_t len, i;
	int64_t a, b;
	uint8_t z;
	int r;

	*hashed = 0;
	*hash = 0;
	if (s->depth >= FSER_DEPTH)
		return ckpt_fsrc_fail(s, "value nested more than %d deep", FSER_DEPTH);
	s->depth++;
	switch (t->kind) {
	case FSER_STRING:
		r = read_string(s, o, hash);
		*hashed = r == 0;
		break;
	case FSER_LONG: case FSER_INT: case FSER_SHORT: case FSER_BYTE: case FSER_BOOL:
	case FSER_FLOAT: case FSER_DOUBLE: case FSER_CHAR:
		r = read_primitive(s, t->kind, o, hash);
		*hashed = r == 0;
		break;
	case FSER_VOID: /* VoidSerializer writes one byte, to make progress in the stream */
		r = ckpt_fsrc_u8(s, &z, "void byte");
		if (r == 0 && ckpt_fout_null(o) < 0)
			r = ckpt_fsrc_nomem(s);
		break;
	case FSER_VOIDNS: case FSER_GLOBALWINDOW:
		if ((r = ckpt_fsrc_u8(s, &z, "namespace byte")) == 0 && z != 0)
			r = ckpt_fsrc_fail(s, "namespace byte %u (0 expected)", z);
		if (r == 0 && ckpt_fout_null(o) < 0)
			r = ckpt_fsrc_nomem(s);
		break;
	case FSER_TIMEWINDOW:
		r = ckpt_fsrc_i64(s, &a, "window start") < 0 || ckpt_fsrc_i64(s, &b, "window end") < 0 ? -1 : 0;
		if (r == 0) {
			if (out_open(s, o, '{') < 0)
				r = -1;
			else {
				ckpt_fout_key_lit(o, "start");
				r = ckpt_fout_int(o, a);
				ckpt_fout_key_lit(o, "end");
				r |= ckpt_fout_int(o, b);
				ckpt_fout_close(o);
				r = r < 0 ? ckpt_fsrc_nomem(s) : 0;
			}
		}
		break;
	case FSER_BYTES:
		r = ckpt_fsrc_blob(s, &p, &n, "byte array");
		if (r == 0) {
			if (ckpt_fout_entry(o, p ? p : (const unsigned char *)"", n) < 0)
				r = ckpt_fsrc_nomem(s);
			free(p);
		}
		break;
	case FSER_PARRAY:
		r = read_count(s, &len, "array length");
		if (r == 0)
			r = out_open(s, o, '[');
		if (r == 0 && (r = read_elements(s, NULL, t->elem, len, o, 0)) == 0)
			ckpt_fout_close(o);
		break;
	case FSER_ENUM:
		r = ckpt_fsrc_i32(s, &i, "enum ordinal");
		if (r == 0 && (i < 0 || (size_t)i >= t->nnames))
			r = ckpt_fsrc_fail(s, "enum ordinal %d of %s, which has %zu constants", i, t->name, t->nnames);
		if (r == 0 && ckpt_fout_str(o, t->names[i], strlen(t->names[i])) < 0)
			r = ckpt_fsrc_nomem(s);
		break;
	default:
		r = read_composite_value(t, s, o, hash, hashed);
		break;
	}
	s->depth--;
	return r;
}

int
ckpt_fser_emit(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o, int32_t *hash, int *hashed)
{
	/* the common leaves without value()'s frame: they nest nothing */
	switch (t->kind) {
	case FSER_STRING:
		*hashed = read_string(s, o, hash) == 0;
		return *hashed ? 0 : -1;
	case FSER_LONG: case FSER_INT:
		*hashed = read_primitive(s, t->kind, o, hash) == 0;
		return *hashed ? 0 : -1;
	default:
		return value(t, s, o, hash, hashed);
	}
}

int
ckpt_fser_value(const struct ckpt_fser *t, struct ckpt_fsrc *s, json_t **v, int32_t *hash, int *hashed)
{
	struct ckpt_fout o; /* the stacks are written before they are read: not cleared */
	int r;

	o.mode = FOUT_JSON;
	o.root = NULL;
	o.depth = 0;
	r = value(t, s, &o, hash, hashed);
	*v = r == 0 ? o.root : NULL;
	if (r < 0)
		ckpt_fout_reset(&o);
	return r;
}

json_t *
ckpt_fser_json(const struct ckpt_fser *t)
{
	json_t *o, *a;

	if (t == NULL)
		return json_null();
	if (t->nkids == 0)
		return json_string(t->cls);
	a = json_array();
	for (size_t i = 0; a && i < t->nkids; i++)
		if (json_array_append_new(a, ckpt_fser_json(t->kids[i])) < 0) {
			json_decref(a);
			a = NULL;
		}
	o = a ? json_pack("{s:s, s:o}", "class", t->cls, "nested", a) : NULL;
	return o;
}

uint32_t
ckpt_flink_key_group(int32_t hash, uint32_t max_parallelism)
{
	int32_t r = (int32_t)ckpt_murmur32_final(ckpt_murmur32_word(0, (uint32_t)hash), 4);

	if (r < 0)
		r = r == INT32_MIN ? 0 : -r;
	if ((max_parallelism & (max_parallelism - 1)) == 0) /* Flink's default and usual: no division */
		return (uint32_t)r & (max_parallelism - 1);
	return (uint32_t)r % max_parallelism;
}
