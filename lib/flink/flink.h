/* flink.h: the Flink layer (lib/flink/): Flink's formats read strictly and written as Flink does
 * (_metadata, Java serialization, serializer snapshots, state files, Snappy framing; the layouts
 * are in ckpt-flink(5)), offered to the snapshot, redistribution and event-log layers; it owns
 * its readers and the backing it gives a Flink snapshot.  Uses the model and base layers. */
#ifndef CKPT_FLINK_H
#define CKPT_FLINK_H

#include <string.h>

#include "base/base.h"
#include "model/model.h"
#include "javaser.h"

/* ------------------------------------------------------------ snappy.c */

#define CKPT_FSNAPPY_BLOCK 65536u  /* the most data one chunk holds */
#define CKPT_FSNAPPY_BODY 76494u   /* the longest chunk body: checksum and the worst Snappy expansion */

/* CRC-32C (Castagnoli) of p. */
uint32_t ckpt_fsnappy_crc32c(const void *p, size_t n);
/* A chunk's 4-byte header: its type and body length. */
void ckpt_fsnappy_header(const unsigned char hdr[4], unsigned *type, size_t *len);
/* Check a chunk body; a data chunk is decoded into out (CKPT_FSNAPPY_BLOCK bytes) and its masked
 * CRC-32C verified, every other kind gives *n = 0.  0, or -1 with *why a static message. */
int ckpt_fsnappy_body(unsigned type, const unsigned char *body, size_t len, unsigned char *out, size_t *n,
		      const char **why);

/* ------------------------------------------------------------ source.c */

/*
 * The bytes a reader pulls: a region of a file (read through a window, never whole) or bytes in
 * memory, plain or as Snappy-framed streams starting where the reader seeks.  Errors name the
 * file and the offset (for framed streams, the chunk's offset and the byte within the stream).
 */
struct ckpt_fsrc {
	const char *where;
	struct ckpt_err *e;
	int fd;                    /* -1 for memory or an object in S3 */
	struct ckpt_s3obj *obj;    /* an object in S3 (base.h), read by range; owned */
	const unsigned char *mem;
	uint64_t base, size;       /* the region: [base, base + size) of fd, or mem[0, size) */
	uint64_t raw;              /* region offset of the next raw byte not yet taken */
	const unsigned char *win;  /* the window: plain bytes, or one chunk's data */
	unsigned char *buf;        /* the window's storage (NULL while the window is mem itself) */
	size_t wpos, wlen;
	uint64_t wat;              /* region offset of win[0] (plain) or of the chunk (framed) */
	int snappy, zstarted;
	uint64_t zdone;            /* data bytes of the framed stream before win[0] */
	unsigned char *zbody;
	unsigned char *cap;        /* when capturing, every byte read is appended here */
	size_t clen, ccap;
	int capture;
	int depth;                 /* nesting of the value being decoded */
	const char *what;          /* what a fixed-size read cut short is called ("key"; NULL: "value") */
	size_t tail;               /* memory: the bytes at the end a Kryo value leaves to what follows it */
};

/* A local file of state opened for reading: its directory noted for ckpt_flink_state_read_dirs. */
void ckpt_fsrc_note_read(const char *path);
/* A source over size bytes of fd from base; where names it in errors.  0, or -1 with e set. */
int ckpt_fsrc_file(struct ckpt_fsrc *s, int fd, uint64_t base, uint64_t size, const char *where,
		   struct ckpt_err *e);
/* A source over size bytes from base of the S3 object o (taken: released with the source, or on
 * failure). */
int ckpt_fsrc_s3(struct ckpt_fsrc *s, struct ckpt_s3obj *o, uint64_t base, uint64_t size, const char *where,
		 struct ckpt_err *e);
/* A source over p[0, n) (kept by the caller).  Inline, as the typed form of every entry is read
 * through one. */
static inline int
ckpt_fsrc_mem(struct ckpt_fsrc *s, const void *p, size_t n, const char *where, struct ckpt_err *e)
{
	*s = (struct ckpt_fsrc){.where = where, .e = e, .fd = -1, .mem = p, .size = n, .raw = n, .win = p, .wlen = n};
	return 0;
}
void ckpt_fsrc_release_slow(struct ckpt_fsrc *s);
/* What the source holds freed (nothing, for a memory source that captured nothing). */
static inline void
ckpt_fsrc_release(struct ckpt_fsrc *s)
{
	if (s->buf || s->zbody || s->cap || s->obj)
		ckpt_fsrc_release_slow(s);
}
/* A memory source (nothing read with capture, no window of its own) over p[0, n) instead. */
void ckpt_fsrc_mem_again(struct ckpt_fsrc *s, const void *p, size_t n);
/* Continue at region offset off: plain (snappy 0), at the start of a framed stream (1: its stream
 * identifier there), or at a chunk of a framed stream begun before (2). */
int ckpt_fsrc_seek(struct ckpt_fsrc *s, uint64_t off, int snappy);
/* Exactly n bytes (what names them in the error when they are not there). */
int ckpt_fsrc_read_slow(struct ckpt_fsrc *s, void *p, size_t n, const char *what);
static inline int
ckpt_fsrc_read(struct ckpt_fsrc *s, void *p, size_t n, const char *what)
{
	if (n <= s->wlen - s->wpos && !s->capture) { /* the common case: all in the window */
		if (p)
			memcpy(p, s->win + s->wpos, n);
		s->wpos += n;
		return 0;
	}
	return ckpt_fsrc_read_slow(s, p, n, what);
}
/* Big-endian integers, read inline when the window holds them (the hot loops read millions). */
static inline int
ckpt_fsrc_u8(struct ckpt_fsrc *s, uint8_t *v, const char *what)
{
	if (s->wpos < s->wlen && !s->capture) {
		*v = s->win[s->wpos++];
		return 0;
	}
	return ckpt_fsrc_read_slow(s, v, 1, what);
}
static inline int
ckpt_fsrc_i16(struct ckpt_fsrc *s, int16_t *v, const char *what)
{
	unsigned char b[2];

	if (ckpt_fsrc_read(s, b, 2, what) < 0)
		return -1;
	*v = (int16_t)ckpt_be16(b);
	return 0;
}
static inline int
ckpt_fsrc_i32(struct ckpt_fsrc *s, int32_t *v, const char *what)
{
	unsigned char b[4];

	if (ckpt_fsrc_read(s, b, 4, what) < 0)
		return -1;
	*v = (int32_t)ckpt_be32(b);
	return 0;
}
static inline int
ckpt_fsrc_i64(struct ckpt_fsrc *s, int64_t *v, const char *what)
{
	unsigned char b[8];

	if (ckpt_fsrc_read(s, b, 8, what) < 0)
		return -1;
	*v = (int64_t)ckpt_be64(b);
	return 0;
}
/* Java's writeUTF (modified UTF-8, u16 length) as a NUL-terminated UTF-8 string (malloc'd). */
int ckpt_fsrc_utf(struct ckpt_fsrc *s, char **out, const char *what);
/* An i32 length then that many bytes (malloc'd, never more than the region holds when plain). */
int ckpt_fsrc_blob(struct ckpt_fsrc *s, unsigned char **out, size_t *n, const char *what);
/* The same into *out, a buffer of *cap bytes (grown, kept by the caller even on failure). */
int ckpt_fsrc_blob_buf(struct ckpt_fsrc *s, unsigned char **out, size_t *cap, size_t *n, const char *what);
/* Nothing is left in the window (a framed stream may end here). */
static inline int
ckpt_fsrc_drained(const struct ckpt_fsrc *s)
{
	return s->wpos == s->wlen;
}
/* Region offset of the next byte (plain), or of the next chunk once drained (framed). */
static inline uint64_t
ckpt_fsrc_tell(const struct ckpt_fsrc *s)
{
	if (s->snappy)
		return s->wpos == s->wlen ? s->raw : s->wat;
	return s->wat + s->wpos;
}
/* Fail at the current position: "where: offset N: text". */
int ckpt_fsrc_fail(struct ckpt_fsrc *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "where: out of memory" (ckpt_err_nomem at s->where); -1. */
int ckpt_fsrc_nomem(struct ckpt_fsrc *s);
/* Start (or stop) copying what is read into s->cap. */
void ckpt_fsrc_capture(struct ckpt_fsrc *s, int on);

/* ------------------------------------------------------------ serializer.c, fout.c */

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
struct ckpt_rdtype;

struct ckpt_fser {
	enum ckpt_fser_kind kind;
	enum ckpt_fser_kind elem; /* FSER_PARRAY */
	char *cls;                /* the snapshot class */
	char *name;               /* tuple, POJO or enum class */
	int version;              /* the snapshot's version */
	int flag;                 /* ROW: row kind bits present; NULLABLE: padding length */
	int32_t *ids;             /* SENUM: the id of each constant of names */
	struct ckpt_fser **kids;  /* nested serializers (POJO: one per field, NULL when absent) */
	struct ckpt_rdtype *rd;   /* rowdata.c: the logical type (ROWDATA: a ROW of the fields) */
	char **names;             /* POJO field names, enum constants */
	size_t nkids, nnames;
	struct ckpt_fser **subs;  /* POJO (pojo.c): registered subclasses (tag order), then cached ones; NULL when unread */
	char **subnames;          /* their class names */
	size_t nsubs, nreg;       /* all of them, the registered ones */
	void *ext;                /* AVRO: the schema (avro.c), freed by ckpt_fser_avro_free */
};

/* Where a decoded value goes: nowhere (only checked), into a jansson value (root), or written
 * straight into a document (ckpt_jw, base/jw.c).  One decoder feeds all three. */
enum ckpt_fout_mode { FOUT_NONE, FOUT_JSON, FOUT_WRITE };
#define FOUT_DEPTH 160
struct ckpt_jw;
struct ckpt_fout {
	enum ckpt_fout_mode mode;
	struct ckpt_jw *w;          /* FOUT_WRITE */
	json_t *root;               /* FOUT_JSON: the value built (a new reference; NULL before) */
	json_t *stack[FOUT_DEPTH];  /* FOUT_JSON: the open containers (borrowed) */
	const char *key;            /* FOUT_JSON: the key of the next member */
	unsigned char obj[FOUT_DEPTH]; /* FOUT_WRITE: the open container is an object */
	int depth;
	int flat;                   /* FOUT_WRITE: the outermost object's members go into the object open in w */
};
/* Emit one value or container boundary: 0, or -1 when out of memory (FOUT_JSON).  The common ones
 * are inline: the hot loops emit tens of millions. */
int ckpt_fout_put(struct ckpt_fout *o, json_t *x); /* FOUT_JSON: x (taken) where it belongs */
int ckpt_fout_entry(struct ckpt_fout *o, const void *p, size_t n); /* bytes, as ckpt_entry_to_json */
int ckpt_fout_json(struct ckpt_fout *o, json_t *v);   /* v is taken */
int ckpt_fout_open(struct ckpt_fout *o, char c);      /* '{' or '[' */
/* FOUT_WRITE: an element of an open array is preceded by its separator (a member by its key). */
static inline void
ckpt_fout_elem(struct ckpt_fout *o)
{
	if (o->depth > 0 && !o->obj[o->depth - 1])
		ckpt_jw_elem(o->w);
}
static inline int
ckpt_fout_null(struct ckpt_fout *o)
{
	if (o->mode == FOUT_WRITE) {
		ckpt_fout_elem(o);
		ckpt_jw_null(o->w);
		return 0;
	}
	return o->mode == FOUT_JSON ? ckpt_fout_put(o, json_null()) : 0;
}
static inline int
ckpt_fout_int(struct ckpt_fout *o, long long v)
{
	if (o->mode == FOUT_WRITE) {
		ckpt_fout_elem(o);
		ckpt_jw_int(o->w, v);
		return 0;
	}
	return o->mode == FOUT_JSON ? ckpt_fout_put(o, json_integer((json_int_t)v)) : 0;
}
static inline int
ckpt_fout_bool(struct ckpt_fout *o, int v)
{
	if (o->mode == FOUT_WRITE) {
		ckpt_fout_elem(o);
		ckpt_jw_bool(o->w, v);
		return 0;
	}
	return o->mode == FOUT_JSON ? ckpt_fout_put(o, json_boolean(v)) : 0;
}
static inline int
ckpt_fout_str(struct ckpt_fout *o, const char *p, size_t n) /* valid UTF-8 */
{
	if (o->mode == FOUT_WRITE) {
		ckpt_fout_elem(o);
		ckpt_jw_strn(o->w, p, n);
		return 0;
	}
	return o->mode == FOUT_JSON ? ckpt_fout_put(o, json_stringn(p, n)) : 0;
}
/* The key of the next member (kept until its value is emitted). */
static inline void
ckpt_fout_key(struct ckpt_fout *o, const char *k)
{
	if (o->mode == FOUT_WRITE)
		ckpt_jw_key(o->w, k);
	else
		o->key = k;
}
/* The same for a string literal, which needs no escape. */
#define ckpt_fout_key_lit(o, k) ckpt_fout_key_raw((o), (k), "\"" k "\": ", sizeof(k) + 2)
static inline void
ckpt_fout_key_raw(struct ckpt_fout *o, const char *k, const char *quoted, size_t n)
{
	if (o->mode == FOUT_WRITE)
		ckpt_jw_key_raw(o->w, quoted, n);
	else
		o->key = k;
}
static inline void
ckpt_fout_close(struct ckpt_fout *o)
{
	o->depth--;
	if (o->mode == FOUT_WRITE && !(o->flat && o->depth == 0))
		ckpt_jw_close(o->w, o->obj[o->depth] ? '}' : ']');
}
/* Drop what a failed decode left (FOUT_JSON). */
void ckpt_fout_reset(struct ckpt_fout *o);

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
/* fout.c: days since 1970-01-01 as year, month, day (proleptic Gregorian, as java.time), and back. */
void ckpt_civil(int64_t days, int64_t *y, unsigned *m, unsigned *d);
int64_t ckpt_civil_days(int64_t y, unsigned m, unsigned d);
/* ISO 8601 as java.time prints it, but always with seconds: the fraction in 3, 6 or 9 digits, none
 * when 0; date 0: the time alone, 1: date and time, 2: the date alone; nanos: of the day; zone
 * appended ("Z" or "").  As ckpt_fout_str. */
int ckpt_fout_time(struct ckpt_fout *o, int64_t days, int date, int64_t nanos, const char *zone);
/* An unscaled decimal of n bytes, big-endian two's complement, with scale, as BigDecimal's
 * toPlainString ("-12.50"); *ndigits: the unscaled value's digits.  A new string for the caller to
 * free, or NULL when out of memory or |scale| > 100000. */
char *ckpt_decimal_text(const unsigned char *b, size_t n, int32_t scale, int *ndigits);
/* serializer.c: UTF-16 units as UTF-8 (lone surrogates U+FFFD), a double (NaN and the infinities
 * as strings) into o.  0, or -1 with the error set. */
int ckpt_fser_utf16_out(struct ckpt_fsrc *s, struct ckpt_fout *o, const uint16_t *u, size_t n);
int ckpt_fser_real_out(struct ckpt_fsrc *s, struct ckpt_fout *o, double d);

/* ------------------------------------------------------------ scala.c */

/* The payload of a ScalaEnumSerializerSnapshot (class, then each constant's name and id) into t.
 * 0, or -1 with the error set. */
int ckpt_fser_scala_enum(struct ckpt_fsrc *s, struct ckpt_fser *t);
/* One value of the kinds of scala.c (FSER_OPTION .. FSER_UNIT), its nested values through
 * ckpt_fser_emit.  0, or -1 with the error set. */
int ckpt_fser_scala_value(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o);

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
int ckpt_fser_rd_read(struct ckpt_fsrc *s, struct ckpt_fser *t);
void ckpt_fser_rd_free(struct ckpt_rdtype *rd);
/* getLength() of the kinds of rowdata.c: -1 when not fixed. */
int ckpt_fser_rd_fixed_length(const struct ckpt_fser *t);
/* One value of the kinds of rowdata.c: 0, or -1 with the error set.  A RowData's hashCode (that of
 * the BinaryRowData it is written as) into *hash, with *hashed set. */
int ckpt_fser_rd_value(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o, int32_t *hash,
		       int *hashed);
/* Can ckpt write keys of t (a RowDataSerializer of fields it can write: numbers, strings, dates,
 * compact decimals and timestamps) for -k?  1; else 0 with why the field that stops it. */
int ckpt_fser_rd_key_writable(const struct ckpt_fser *t, char *why, size_t n);
/* The key v (as -a prints a row, or an array of its fields) as t serializes it, its length first,
 * into a new *p: 0; or -1 with what was expected in why. */
int ckpt_fser_rd_key(const struct ckpt_fser *t, const json_t *v, unsigned char **p, size_t *n, char *why,
		     size_t whyn);
/* ------------------------------------------------------------ pojo.c */

/* A PojoSerializerSnapshot's two subclass maps (registered, then the non-registered cache), their
 * snapshots read into t->subs.  0, or -1 with the error set. */
int ckpt_fser_pojo_subclasses(struct ckpt_fsrc *s, struct ckpt_fser *t);
/* A POJO value (PojoSerializer): null, the class's fields by name, or a subclass's value. */
int ckpt_fser_pojo_value(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o);
/* A LinkedOptionalMap's header and entry count (at most most; what names the count in the
 * error), as PojoSerializerSnapshot writes its field and subclass maps.  0, or -1. */
int ckpt_fser_optional_map_size(struct ckpt_fsrc *s, int32_t most, const char *what, int32_t *n);
/* What pojo.c and avro.c hang on t (subclasses, an Avro schema) freed. */
void ckpt_fser_ext_free(struct ckpt_fser *t);

/* ------------------------------------------------------------ avro.c */

/* An AvroSerializerSnapshot's payload at t->version (the class, the writer's schema): the schema
 * parsed into t->ext; a schema ckpt does not understand leaves t FSER_OPAQUE.  0, 1 for a version
 * ckpt does not know, or -1 with the error set. */
int ckpt_fser_avro_snapshot(struct ckpt_fsrc *s, struct ckpt_fser *t);
/* One value in the encoding of flink-avro's DataOutputEncoder.  0, or -1 with the error set. */
int ckpt_fser_avro_value(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o);
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

/* Flink's KeyGroupRangeAssignment: MathUtils.murmurHash(hashCode) % maxParallelism. */
uint32_t ckpt_flink_key_group(int32_t hash, uint32_t max_parallelism);

/* ------------------------------------------------ Flink _metadata spans: meta.c, meta-write.c */

/*
 * Where the fields an edit rewrites lie in a decoded _metadata, so that the writer re-encodes
 * those and copies every other byte as it is.  Offsets are into the decoded buffer.
 */
enum ckpt_fmpath_kind {
	CKPT_FMPATH_FILE,     /* an absolute file handle's path (stream tag 2) */
	CKPT_FMPATH_RELATIVE, /* a relative file handle's path (stream tag 6), relative to _metadata's directory */
	CKPT_FMPATH_SEGMENT,  /* a segment file handle's path (stream tag 15) */
	CKPT_FMPATH_DIR,      /* a file-merging operator state handle's directory (tag 17) */
};

struct ckpt_fmpath {
	size_t at, end; /* the utf field: u16 length and its bytes */
	enum ckpt_fmpath_kind kind;
	size_t op;      /* index of the operator it belongs to */
	char *path;     /* decoded (UTF-8), owned */
};

struct ckpt_fmop {
	size_t at, body, end; /* its record; body: after the max parallelism (the coordinator on) */
	size_t count_at;      /* its subtask count (format versions 3 and up) */
};

/* A keyed state handle's record (its tag to its end), for ckpt-merge --max-parallelism. */
struct ckpt_fmkeyed {
	size_t at, end, op;
	uint32_t subtask;
	int managed; /* managed, else raw keyed state */
	int present; /* a handle, else the null handle (its tag 0) */
};

struct ckpt_fmspans {
	int version;
	size_t masters_at, ops_at, trailer_at; /* master state count, operator count, after the last operator */
	struct ckpt_fmop *ops;                  /* one per operator, in file order */
	size_t nops;
	struct ckpt_fmpath *paths;              /* in file order */
	size_t npaths;
	struct ckpt_fmkeyed *keyed;             /* in file order */
	size_t nkeyed, keyedcap;
};

/* What ckpt-merge --max-parallelism changes in a _metadata (regroup.c): every operator's max
 * parallelism, and the bytes [at, end) of keyed handles replaced by p[0, n), in file order. */
struct ckpt_flink_splice {
	size_t at, end;
	unsigned char *p;
	size_t n;
};
struct ckpt_flink_rekey {
	uint32_t max_parallelism;
	struct ckpt_flink_splice *splices;
	size_t nsplices;
};
/* ckpt_flinkmeta_rewrite with those changes too (rk NULL: none). */
int ckpt_flinkmeta_rewrite_rekeyed(const void *buf, size_t len, const char *name, const struct ckpt_flink_edit *ed,
				   size_t ned, const struct ckpt_flink_rekey *rk, struct ckpt_bytes *out,
				   json_t **relative, struct ckpt_err *e);

/* ckpt_flinkmeta_decode, and sp filled (release it with ckpt_fmspans_release, on failure too). */
struct ckpt_snapshot *ckpt_flinkmeta_decode_spans(const void *buf, size_t len, const char *name,
						  struct ckpt_fmspans *sp, struct ckpt_err *e);
void ckpt_fmspans_release(struct ckpt_fmspans *sp);

/* ------------------------------------------ Flink state files: state-*.c (state.h: their own) */

/* The backing of a snapshot decoded from the _metadata named meta ("<stdin>" for standard input):
 * its subtasks load nothing until ckpt_flink_state_enable (snap/open.c gives it to a Flink snapshot;
 * the state readers share flink.h). */
struct ckpt_snap_backing;
struct ckpt_snap_backing *ckpt_flink_backing_new(const char *meta, struct ckpt_err *e);
/* Each file the _metadata names (s's state enabled), in its order, to fn: its local path (local 1),
 * or its name as named when it is not local and no root maps it (local 0); fn's -1 stops (e set). */
int ckpt_flink_state_each_file(struct ckpt_snapshot *s, int (*fn)(void *arg, const char *path, int local),
			       void *arg, struct ckpt_err *e);

/* ------------------------------------------------------------ rows.c */

/* Rows (ckpt-inspect -R): one JSON object a line, one per entry, map entry or list element, of one
 * subtask of one operator at a time, written to w. */
struct ckpt_frows {
	struct ckpt_jw *w;
	const char *uid;  /* NULL: null */
	const char *op;   /* the operator id */
	uint32_t subtask;
	uint64_t n;       /* rows written */
	/* rows.c's copy of the last row's opening columns (uid to subtask) as written, for the next
	 * row of the same state and kind: the same bytes without escaping them again */
	char pre[512], pstate[128], pkind[16];
	size_t npre;      /* 0: none */
};
/* One keyed entry, its typed form t ({key, namespace[, user_key], value} or a timer's; NULL: not
 * typed, the bytes written and why not); kind is the state's (NULL: not known).  0, or -1 on a
 * failed write. */
int ckpt_frows_keyed(struct ckpt_frows *r, const char *state, const char *kind, uint32_t kg, const json_t *t,
		     const void *k, size_t kn, const void *v, size_t vn, const char *why);
/* A keyed row written as it is decoded: its columns to the key group, then (the caller) key,
 * namespace (user key) and value, then closed (0, or -1 on a failed write). */
void ckpt_frows_open(struct ckpt_frows *r, const char *state, const char *kind, uint32_t kg);
int ckpt_frows_close(struct ckpt_frows *r);
/* One operator state element (mode "list", "union", "broadcast"), typed t or not (p, n and why). */
int ckpt_frows_op(struct ckpt_frows *r, const char *state, const char *mode, size_t idx, const json_t *t,
		  const void *p, size_t n, const char *why);
/* The loaded entries of a subtask of ckpt's own snapshots (bytes: their typed form). */
int ckpt_frows_model(struct ckpt_frows *r, const struct ckpt_subtask *st);

/* state-backing.c: the rows of a Flink snapshot whose state is read, after a check pass as -a's. */
int ckpt_flink_state_rows(struct ckpt_snapshot *s, struct ckpt_jw *w, struct ckpt_err *e);

/* ------------------------------------------------------------ rocksdb.c */

/* One file of a RocksDB handle: its local name (000012.sst, MANIFEST-000005, CURRENT, OPTIONS-...)
 * and its bytes: a local file of size bytes (path), or size bytes at mem (path NULL). */
struct ckpt_frocks_file {
	const char *local;
	const char *path;
	const unsigned char *mem;
	uint64_t size;
};
struct ckpt_frocks_db;
/* The files opened as one read-only database (every column family, a small block cache, Flink's
 * merge operator) from a temporary directory of links, removed before this returns (and by a
 * signal arriving meanwhile).  The files are kept by the caller while the database is open.  NULL
 * with e set: a file missing or of another size (where: its path), or what RocksDB says (where: the
 * file it names, else the handle's where). */
struct ckpt_frocks_db *ckpt_frocks_open(const struct ckpt_frocks_file *f, size_t n, const char *where,
					struct ckpt_err *e);
void ckpt_frocks_close(struct ckpt_frocks_db *d);
/* Its column families, in the order RocksDB lists them. */
size_t ckpt_frocks_ncf(const struct ckpt_frocks_db *d);
const char *ckpt_frocks_cf(const struct ckpt_frocks_db *d, size_t i);
/* Every entry of column family cf with lo <= key < hi (lo NULL: from the first; hi NULL: to the
 * last), in key order, given to fn (0 to go on, -1 to stop, e set).  0, or -1 with e set. */
typedef int ckpt_frocks_fn(void *arg, const unsigned char *k, size_t kn, const unsigned char *v, size_t vn);
int ckpt_frocks_scan(struct ckpt_frocks_db *d, size_t cf, const void *lo, size_t nlo, const void *hi, size_t nhi,
		     ckpt_frocks_fn *fn, void *arg, const char *where, struct ckpt_err *e);
/* The file of column family cf whose key range holds key k, NULL when none does (RocksDB says
 * which file, never where in it). */
const struct ckpt_frocks_file *ckpt_frocks_file_of(struct ckpt_frocks_db *d, size_t cf, const unsigned char *k,
						   size_t kn);

#endif
