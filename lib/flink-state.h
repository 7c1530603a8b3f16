/* flink-state.h: what the readers of Flink's state files share (flink-state.c, flink-source.c,
 * flink-serializer.c, flink-snappy.c; the layouts are in ckpt-flink(5), STATE FILES).  Programs
 * never include it. */
#ifndef CKPT_FLINK_STATE_H
#define CKPT_FLINK_STATE_H

#include <string.h>

#include "ckpt-internal.h"
#include "snap-internal.h"

/* ------------------------------------------------------------ flink-snappy.c */

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

/* ------------------------------------------------------------ flink-source.c */

/*
 * The bytes a reader pulls: a region of a file (read through a window, never whole) or bytes in
 * memory, plain or as Snappy-framed streams starting where the reader seeks.  Errors name the
 * file and the offset (for framed streams, the chunk's offset and the byte within the stream).
 */
struct ckpt_fsrc {
	const char *where;
	struct ckpt_err *e;
	int fd;                    /* -1 for memory or an object in S3 */
	struct ckpt_s3obj *obj;    /* an object in S3 (s3-internal.h), read by range; owned */
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
};

/* A source over size bytes of fd from base; where names it in errors.  0, or -1 with e set. */
int ckpt_fsrc_file(struct ckpt_fsrc *s, int fd, uint64_t base, uint64_t size, const char *where,
		   struct ckpt_err *e);
/* A source over size bytes from base of the S3 object o (taken: released with the source, or
 * on failure). */
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
/* Continue at region offset off, plain or at the start of a framed stream. */
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
/* Start (or stop) copying what is read into s->cap. */
void ckpt_fsrc_capture(struct ckpt_fsrc *s, int on);

/* ------------------------------------------------------------ flink-serializer.c */

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
};

struct ckpt_fser {
	enum ckpt_fser_kind kind;
	enum ckpt_fser_kind elem; /* FSER_PARRAY */
	char *cls;                /* the snapshot class */
	char *name;               /* tuple, POJO or enum class */
	int version;              /* the snapshot's version */
	int flag;                 /* ROW: row kind bits present; NULLABLE: padding length */
	struct ckpt_fser **kids;  /* nested serializers (POJO: one per field, NULL when absent) */
	char **names;             /* POJO field names, enum constants */
	size_t nkids, nnames;
};

/* Where a decoded value goes: nowhere (only checked), into a jansson value (root), or written
 * straight into a document (ckpt_jw, snap-print.c).  One decoder feeds all three. */
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
	if (o->mode == FOUT_WRITE)
		ckpt_jw_close(o->w, o->obj[o->depth] ? '}' : ']');
}
/* Drop what a failed decode left (FOUT_JSON). */
void ckpt_fout_reset(struct ckpt_fout *o);

/* One serializer snapshot, after the i32 format version of TypeSerializerSnapshotSerializationUtil
 * when proxy is set.  0; 1 when some class cannot be stepped over (*out is then the tree so far,
 * its FSER_UNKNOWN node naming the class); -1 on damaged input. */
int ckpt_fser_read(struct ckpt_fsrc *s, int proxy, struct ckpt_fser **out);
void ckpt_fser_free(struct ckpt_fser *t);
/* NULL when values of t can be decoded, else the snapshot class that stops it. */
const char *ckpt_fser_blocker(const struct ckpt_fser *t);
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
/* Flink's KeyGroupRangeAssignment: MathUtils.murmurHash(hashCode) % maxParallelism. */
uint32_t ckpt_flink_key_group(int32_t hash, uint32_t max_parallelism);

#endif
