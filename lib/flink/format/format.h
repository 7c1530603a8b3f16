/* format.h: the formats-and-byte-streams floor of the Flink layer (lib/flink/format/): the bytes a
 * reader pulls (files, S3 objects, memory, Snappy-framed streams), the one output decoded values go
 * to, Java's serialization stream, and Flink's _metadata read and written.  Offered to the
 * serializers (lib/flink/types/) and the state files (lib/flink/state/) above it, and through
 * flink/flink.h to the layers above flink/.  Uses the model and base layers only. */
#ifndef CKPT_FLINK_FORMAT_H
#define CKPT_FLINK_FORMAT_H

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
	uint64_t limit;            /* no window filled past it, when before it (0: none; ckpt_fsrc_limit) */
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
/* Reads ahead (the window, an S3 object's read-ahead) stop at the region offset end while before
 * it (0: no limit): a reader of one byte range reads no more than it. */
void ckpt_fsrc_limit(struct ckpt_fsrc *s, uint64_t end);
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

/* ------------------------------------------------------------ fout.c */

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
/* fout.c: days since 1970-01-01 as year, month, day (proleptic Gregorian, as java.time), and back. */
void ckpt_civil(int64_t days, int64_t *y, unsigned *m, unsigned *d);
int64_t ckpt_fout_civil_days(int64_t y, unsigned m, unsigned d);
/* ISO 8601 as java.time prints it, but always with seconds: the fraction in 3, 6 or 9 digits, none
 * when 0; date 0: the time alone, 1: date and time, 2: the date alone; nanos: of the day; zone
 * appended ("Z" or "").  As ckpt_fout_str. */
int ckpt_fout_time(struct ckpt_fout *o, int64_t days, int date, int64_t nanos, const char *zone);
/* An unscaled decimal of n bytes, big-endian two's complement, with scale, as BigDecimal's
 * toPlainString ("-12.50"); *ndigits: the unscaled value's digits.  A new string for the caller to
 * free, or NULL when out of memory or |scale| > 100000. */
char *ckpt_fout_decimal_text(const unsigned char *b, size_t n, int32_t scale, int *ndigits);
/* fout.c: UTF-16 units as UTF-8 (lone surrogates U+FFFD), a double (NaN and the infinities
 * as strings) into o.  0, or -1 with the error set. */
int ckpt_fout_utf16(struct ckpt_fsrc *s, struct ckpt_fout *o, const uint16_t *u, size_t n);
int ckpt_fout_real(struct ckpt_fsrc *s, struct ckpt_fout *o, double d);

/* ------------------------------------------------ Flink _metadata spans: meta.c, meta-write.c */

/*
 * Where the fields an edit rewrites lie in a decoded _metadata, so that the writer re-encodes
 * those and copies every other byte as it is.  Offsets are into the decoded buffer.
 */
enum ckpt_fmeta_path_kind {
	CKPT_FMETA_PATH_FILE,     /* an absolute file handle's path (stream tag 2) */
	CKPT_FMETA_PATH_RELATIVE, /* a relative file handle's path (stream tag 6), relative to _metadata's directory */
	CKPT_FMETA_PATH_SEGMENT,  /* a segment file handle's path (stream tag 15) */
	CKPT_FMETA_PATH_DIR,      /* a file-merging operator state handle's directory (tag 17) */
};

struct ckpt_fmeta_path {
	size_t at, end; /* the utf field: u16 length and its bytes */
	enum ckpt_fmeta_path_kind kind;
	size_t op;      /* index of the operator it belongs to */
	char *path;     /* decoded (UTF-8), owned */
};

struct ckpt_fmeta_op {
	size_t at, body, end; /* its record; body: after the max parallelism (the coordinator on) */
	size_t count_at;      /* its subtask count (format versions 3 and up) */
	size_t coord_at;      /* its coordinator state's inline bytes (0: none) */
};

/* A keyed state handle's record (its tag to its end), for ckpt-merge --max-parallelism. */
struct ckpt_fmeta_keyed {
	size_t at, end, op;
	uint32_t subtask;
	int managed; /* managed, else raw keyed state */
	int present; /* a handle, else the null handle (its tag 0) */
};

/* A managed operator state handle (tag 4) whose data is inline or in a file of its own (ckpt-merge
 * --set-offset): inline its bytes [at, at + n) of the buffer; in a file (file 1: a file or relative
 * file handle) at 0 and n the file's size; its states ({name, mode, offsets}) as -m prints them. */
struct ckpt_fmeta_opdata {
	size_t op, at, n;
	size_t head;    /* the handle's state count, after its tag: the states, then the data handle */
	size_t dend;    /* where the data handle ends (the handle with it) */
	size_t handle;  /* its index among the subtask's handles */
	int file;
	uint32_t subtask;
	json_t *states; /* owned */
};

struct ckpt_fmeta_spans {
	int version;
	size_t masters_at, ops_at, trailer_at; /* master state count, operator count, after the last operator */
	struct ckpt_fmeta_op *ops;                  /* one per operator, in file order */
	size_t nops;
	struct ckpt_fmeta_path *paths;              /* in file order */
	size_t npaths;
	struct ckpt_fmeta_keyed *keyed;             /* in file order */
	size_t nkeyed, keyedcap;
	struct ckpt_fmeta_opdata *opdata;           /* in file order */
	size_t nopdata, opdatacap;
};

/* What ckpt-merge --max-parallelism changes in a _metadata (regroup.c): every operator's max
 * parallelism, and the bytes [at, end) of keyed handles replaced by p[0, n), in file order. */
struct ckpt_flink_splice {
	size_t at, end;
	unsigned char *p;
	size_t n;
};
struct ckpt_flink_rekey {
	uint32_t max_parallelism; /* 0: each operator keeps its own */
	int canonical;            /* the properties (versions 4 and up) a canonical savepoint's */
	const uint32_t *parallelism; /* per operator (file order): its new parallelism, 0 its own; or NULL */
	struct ckpt_flink_splice *splices;
	size_t nsplices;
};
/* The operator of s a uid or an operator id names (ckpt-merge --uid, --drop), s->nops when none. */
size_t ckpt_fmeta_find_op(const struct ckpt_snapshot *s, const char *name);
/* Whether a --drop of ed names operator k of s. */
int ckpt_fmeta_dropped(const struct ckpt_snapshot *s, const struct ckpt_flink_edit *ed, size_t ned, size_t k);
/* ckpt_fmeta_rewrite with those changes too (rk NULL: none). */
int ckpt_fmeta_rewrite_rekeyed(const void *buf, size_t len, const char *name, const struct ckpt_flink_edit *ed,
				   size_t ned, const struct ckpt_flink_rekey *rk, struct ckpt_bytes *out,
				   json_t **relative, struct ckpt_err *e);

/* ckpt_fmeta_decode, and sp filled (release it with ckpt_fmeta_spans_release, on failure too). */
struct ckpt_snapshot *ckpt_fmeta_decode_spans(const void *buf, size_t len, const char *name,
						  struct ckpt_fmeta_spans *sp, struct ckpt_err *e);
void ckpt_fmeta_spans_release(struct ckpt_fmeta_spans *sp);
/* data written whole into dir as a new file PREFIX-SUBTASK (-2, -3, ... after it while that name is
 * taken: by a name in *names, those written so far, made when NULL; or by a file the savepoint names,
 * a relative handle's path or an absolute one's base name, but for those within operator data di, the
 * one written anew), its name added to *names, and Flink's relative file handle of it (tag 6: the
 * name, the size) appended to b, as a savepoint names its own files. */
int ckpt_fmeta_write_relative(const struct ckpt_fmeta_spans *sp, size_t di, const char *dir, const char *prefix,
			      uint32_t subtask, json_t **names, const struct ckpt_bytebuf *data, struct ckpt_bytebuf *b,
			      struct ckpt_err *e);

#endif
