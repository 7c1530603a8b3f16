/*
 * base.h: the base layer (lib/base/), which every other layer of libckpt uses and which uses none:
 * errors and checked allocation, the growing array, the byte cursor (big-endian reads that fail at
 * their offset) and the growing byte buffer, bytes and entries, hashing (XXH3-64 and
 * Flink's murmur3), bit sets and range lists, JSON read (documents, streams, the in-place scanner)
 * and the one JSON writer (ckpt_jw_*), files written atomically (their temporary names removed on a
 * fatal signal: cleanup.c), key groups, progress, and objects
 * in S3 (ckpt_s3_*, through libcurl).  It owns nothing beyond what each call returns (and the names
 * cleanup.c keeps until they are forgotten).  The public
 * API is ckpt.h, included here; programs never include this header.
 */
#ifndef CKPT_INTERNAL_H
#define CKPT_INTERNAL_H

#ifndef CKPT_LIBRARY
#error "base.h is for libckpt's own files; programs include ckpt.h"
#endif

#include <string.h>

#include "ckpt.h"

/* ----------------------------------------------------------------- errors and allocation: err.c */

int ckpt_err_vset(struct ckpt_err *e, enum ckpt_errkind kind, const char *where,
		  const char *fmt, va_list ap);
/* The one way to fail at a byte offset of where: text "offset OFF: TEXT".  These and
 * ckpt_err_set format first, so their arguments may point into e (e->text, e->where). */
int ckpt_err_at(struct ckpt_err *e, enum ckpt_errkind kind, const char *where, uint64_t off,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int ckpt_err_vat(struct ckpt_err *e, enum ckpt_errkind kind, const char *where, uint64_t off,
		 const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));
/* "out of memory" (CKPT_ERR_NOMEM) at where (may be ""); returns -1.  The one such helper. */
int ckpt_err_nomem(struct ckpt_err *e, const char *where);
/* Prefix e->text with "prefix: " (for adding context such as "edge 2"). */
void ckpt_err_prefix(struct ckpt_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Give an error a callee filled a new kind and place, its text kept.  Returns -1. */
int ckpt_err_locate(struct ckpt_err *e, enum ckpt_errkind kind, const char *where);
void *ckpt_reallocarray(void *p, size_t n, size_t size, struct ckpt_err *e);
char *ckpt_strdup(const char *s, struct ckpt_err *e);
/* The text fmt makes, cut to max - 1 bytes, malloc'd (NULL with e set on no memory): the one
 * formatting of a message kept beside an error (a plan's decline, a redistribution's warning). */
char *ckpt_vstrdupf(struct ckpt_err *e, size_t max, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
/* The one growing array: room for need elements of size bytes in the array whose pointer arrp
 * points to (a T **), of *cap elements; the capacity doubles (from first when it is 0) until need
 * fits.  0, or -1 with e set (e may be NULL) and the array and *cap as they were. */
int ckpt_grow(void *arrp, size_t *cap, size_t need, size_t size, size_t first, struct ckpt_err *e);

/* ----------------------------------------------------------------------- JSON documents: json.c */

/* Display name of the stream ("<stdin>" for standard input). */
const char *ckpt_jsonin_name(const struct ckpt_jsonin *in);
/* Place an error a callee filled (its text kept) at the value ptr designates, as an input error;
 * an out-of-memory error is left as it is.  Returns -1. */
int ckpt_jdoc_locate(const struct ckpt_jdoc *doc, struct ckpt_err *e, const char *ptr);
/* A float or double as -a prints one: a JSON number, or the string "NaN", "Infinity" or
 * "-Infinity".  0 with *d set, or -1 when v is none of them. */
int ckpt_json_real(const json_t *v, double *d);
/* Small helpers for building output: they abort nothing and return -1 on allocation failure. */
int ckpt_json_set_new(json_t *obj, const char *key, json_t *v);

/* ------------------------------------------------------------------------- subtask sets: bits.c */

static inline void ckpt_bits_clear(struct ckpt_bits *b, size_t i) { b->w[i >> 6] &= ~(UINT64_C(1) << (i & 63)); }
static inline int ckpt_bits_test(const struct ckpt_bits *b, size_t i) { return (b->w[i >> 6] >> (i & 63)) & 1; }
/* Set bits [lo, hi). */
void ckpt_bits_set_range(struct ckpt_bits *b, size_t lo, size_t hi);
size_t ckpt_bits_count(const struct ckpt_bits *b);
/* Index of the first set bit at or after i, or b->n when none. */
size_t ckpt_bits_next(const struct ckpt_bits *b, size_t i);
/* Any set bit in [lo, hi)? */
int ckpt_bits_any_in(const struct ckpt_bits *b, size_t lo, size_t hi);
/* Bits [base, base + 64) from w (base a multiple of 64; bits past b->n must be 0 in w). */
static inline void ckpt_bits_store64(struct ckpt_bits *b, size_t base, uint64_t w) { b->w[base >> 6] = w; }
/* dst = src, or its complement within dst->n bits (both of dst->n bits). */
void ckpt_bits_copy(struct ckpt_bits *dst, const struct ckpt_bits *src, int complement);
/* Same size and the same bits? */
int ckpt_bits_equal(const struct ckpt_bits *a, const struct ckpt_bits *b);
/* Set every bit of b; whether any was clear. */
int ckpt_bits_fill(struct ckpt_bits *b);
/* dst |= src (both of dst->n bits); whether dst changed. */
int ckpt_bits_or(struct ckpt_bits *dst, const struct ckpt_bits *src);
/* dst |= the complement of src within dst->n bits; whether dst changed. */
int ckpt_bits_or_not(struct ckpt_bits *dst, const struct ckpt_bits *src);
/* dst &= the complement of src (both of dst->n bits). */
void ckpt_bits_andnot(struct ckpt_bits *dst, const struct ckpt_bits *src);
/* Clear every bit. */
void ckpt_bits_clear_all(struct ckpt_bits *b);

/* ----------------------------------------------------------------------- key groups: keygroup.c */

/*
 * Flink's KeyGroupRangeAssignment: subtask i of p holds the key groups
 * [ceil(i*maxp/p), ((i+1)*maxp-1) div p]; key group kg belongs to subtask kg*p div maxp.
 */
void ckpt_key_group_range(uint32_t maxp, uint32_t p, uint32_t i, uint32_t *first, uint32_t *last);
uint32_t ckpt_subtask_of_key_group(uint32_t kg, uint32_t maxp, uint32_t p);

/* --------------------------------------------------------------------- keys to indices: idmap.c */

/*
 * The library's open-addressing hash (linear probing, at most half full) from
 * the keys of a caller's array to their indices: a slot holds index + 1, 0
 * when free.  The caller hashes keys and says whether index i holds a key
 * (eq); growing asks it the hash of each index again (hash).  No deletion.
 * Zero-initialised it is empty; ckpt_idmap_release frees it.
 */
struct ckpt_idmap {
	size_t *slot;
	size_t cap, n; /* cap a power of two, or 0 */
};
typedef uint64_t ckpt_idmap_hash_fn(const void *ctx, size_t i);
typedef int ckpt_idmap_eq_fn(const void *ctx, size_t i, const void *key);

/* Empty, with room for n indices before it grows. */
int ckpt_idmap_init(struct ckpt_idmap *m, size_t n, struct ckpt_err *e);
/* Add index i, whose key (of hash h) is not in m yet. */
int ckpt_idmap_add(struct ckpt_idmap *m, uint64_t h, size_t i, ckpt_idmap_hash_fn *hash, const void *ctx,
		   struct ckpt_err *e);
void ckpt_idmap_release(struct ckpt_idmap *m);
/* The index holding key (of hash h), or -1.  Inline, so that the callers' eq is inlined too. */
static inline long
ckpt_idmap_find(const struct ckpt_idmap *m, uint64_t h, const void *key, ckpt_idmap_eq_fn *eq, const void *ctx)
{
	if (m->cap == 0)
		return -1;
	for (size_t k = (size_t)h & (m->cap - 1);; k = (k + 1) & (m->cap - 1)) {
		if (m->slot[k] == 0)
			return -1;
		if (eq(ctx, m->slot[k] - 1, key))
			return (long)(m->slot[k] - 1);
	}
}

/* ------------------------------------------------------------ subtask sets as text: rangelist.c */

/* Accept a range-list string or a JSON array of integers. */
int ckpt_rangelist_from_json(const json_t *v, size_t n, struct ckpt_bits *out, struct ckpt_err *e);
/* The canonical range list of b; malloc'd, NULL on allocation failure. */
char *ckpt_rangelist_format(const struct ckpt_bits *b);

/* a / b rounded toward minus infinity (Java's Math.floorDiv; C's / rounds toward zero). */
static inline int64_t
ckpt_floordiv(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* ------------------------------------------------------------------------------ hashing: hash.c */

/* XXH3-64 of a buffer; the one hashing helper. */
uint64_t ckpt_xxh3(const void *p, size_t len);
/* Streaming XXH3-64. */
struct ckpt_hasher;
struct ckpt_hasher *ckpt_hasher_new(void);
void ckpt_hasher_reset(struct ckpt_hasher *h);
void ckpt_hasher_update(struct ckpt_hasher *h, const void *p, size_t len);
uint64_t ckpt_hasher_digest(const struct ckpt_hasher *h);
void ckpt_hasher_free(struct ckpt_hasher *h);
/* MurmurHash3_x86_32's steps, as Flink's MathUtils.murmurHash and MurmurHashUtil take them: one
 * 4-byte word k mixed into h, and the final mix over len bytes (murmur3.c has the x64_128 one). */
static inline uint32_t
ckpt_murmur32_word(uint32_t h, uint32_t k)
{
	k *= 0xcc9e2d51u;
	k = k << 15 | k >> 17;
	k *= 0x1b873593u;
	h ^= k;
	h = h << 13 | h >> 19;
	return h * 5 + 0xe6546b64u;
}
static inline uint32_t
ckpt_murmur32_final(uint32_t h, uint32_t len)
{
	h ^= len;
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	return h ^ h >> 16;
}
/* 16 lowercase hex digits and a NUL. */
void ckpt_hex64(uint64_t v, char out[17]);
/* Parse exactly 16 hex digits; -1 if s is not that. */
int ckpt_parse_hex64(const char *s, uint64_t *out);

/* --------------------------------------------------------------------- entries as JSON: bytes.c */

/* The number in the n (<= 8) bytes at p, big- or little-endian, whatever the host's byte order. */
static inline uint64_t
ckpt_load_be(const unsigned char *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}
/* The same for 2, 4 and 8 bytes, in one load where the host allows. */
static inline uint64_t
ckpt_be64(const unsigned char *p)
{
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t v;

	memcpy(&v, p, 8);
	return __builtin_bswap64(v);
#else
	return ckpt_load_be(p, 8);
#endif
}
static inline uint32_t
ckpt_be32(const unsigned char *p)
{
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint32_t v;

	memcpy(&v, p, 4);
	return __builtin_bswap32(v);
#else
	return (uint32_t)ckpt_load_be(p, 4);
#endif
}
static inline uint16_t
ckpt_be16(const unsigned char *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}
static inline uint64_t
ckpt_load_le(const unsigned char *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}
/* The one big-endian writer: the low n (<= 8) bytes of v at p, most significant first (Java's
 * DataOutputStream, Flink's and ckpt's framing). */
static inline void
ckpt_store_be(unsigned char *p, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * (n - 1 - i)));
}

/* ------------------------------------------------- the byte cursor and the byte buffer: cursor.c */

/*
 * The one byte cursor: big-endian reads over p[0, len) from pos, each failing through
 * ckpt_err_at() as an input error of where, "offset N: truncated WHAT" when the bytes run out.
 * The reads are inline (the readers of _metadata and Java's serialization call them per field);
 * what fails is out of line.  Readers that need more (Java's writeUTF) build on it.
 */
struct ckpt_cur {
	const unsigned char *p;
	size_t len, pos;
	const char *where;
	struct ckpt_err *e;
};
/* Fail at offset at: "offset AT: TEXT" as an input error of c->where.  Returns -1. */
int ckpt_cur_fail(const struct ckpt_cur *c, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "truncated WHAT" at the cursor.  Returns -1. */
int ckpt_cur_short(const struct ckpt_cur *c, const char *what) __attribute__((cold));
/* A non-negative i64 (sizes, ids): "negative WHAT X" when it is not. */
int ckpt_cur_u63(struct ckpt_cur *c, uint64_t *v, const char *what);
/* An i32 count of items of at least min bytes each, checked against what is left before anyone
 * allocates. */
int ckpt_cur_count(struct ckpt_cur *c, size_t *n, size_t min, const char *what);

static inline size_t
ckpt_cur_left(const struct ckpt_cur *c)
{
	return c->len - c->pos;
}
static inline int
ckpt_cur_need(const struct ckpt_cur *c, size_t n, const char *what)
{
	if (c->len - c->pos < n) {
		ckpt_cur_short(c, what);
		return -1;
	}
	return 0;
}
/* n (<= 8) big-endian bytes. */
static inline int
ckpt_cur_be(struct ckpt_cur *c, size_t n, uint64_t *v, const char *what)
{
	if (c->len - c->pos < n) {
		ckpt_cur_short(c, what);
		return -1;
	}
	*v = ckpt_load_be(c->p + c->pos, n);
	c->pos += n;
	return 0;
}
static inline int
ckpt_cur_u8(struct ckpt_cur *c, uint8_t *v, const char *what)
{
	if (c->len == c->pos) {
		ckpt_cur_short(c, what);
		return -1;
	}
	*v = c->p[c->pos++];
	return 0;
}
static inline int
ckpt_cur_u16(struct ckpt_cur *c, uint16_t *v, const char *what)
{
	if (c->len - c->pos < 2) {
		ckpt_cur_short(c, what);
		return -1;
	}
	*v = ckpt_be16(c->p + c->pos);
	c->pos += 2;
	return 0;
}
static inline int
ckpt_cur_i32(struct ckpt_cur *c, int32_t *v, const char *what)
{
	if (c->len - c->pos < 4) {
		ckpt_cur_short(c, what);
		return -1;
	}
	*v = (int32_t)ckpt_be32(c->p + c->pos);
	c->pos += 4;
	return 0;
}
static inline int
ckpt_cur_i64(struct ckpt_cur *c, int64_t *v, const char *what)
{
	if (c->len - c->pos < 8) {
		ckpt_cur_short(c, what);
		return -1;
	}
	*v = (int64_t)ckpt_be64(c->p + c->pos);
	c->pos += 8;
	return 0;
}
static inline int
ckpt_cur_f64(struct ckpt_cur *c, double *v, const char *what)
{
	int64_t x;

	if (ckpt_cur_i64(c, &x, what) < 0)
		return -1;
	memcpy(v, &x, sizeof *v);
	return 0;
}
/* n bytes in place: *out points into c->p. */
static inline int
ckpt_cur_bytes(struct ckpt_cur *c, size_t n, const unsigned char **out, const char *what)
{
	if (c->len - c->pos < n) {
		ckpt_cur_short(c, what);
		return -1;
	}
	*out = c->p + c->pos;
	c->pos += n;
	return 0;
}

/* The one growing byte buffer (what writers build before they write it whole): zeroed it is
 * empty; ckpt_bytebuf_release frees it.  Adding fails only for memory: -1, e set when not NULL. */
struct ckpt_bytebuf {
	unsigned char *p;
	size_t len, cap;
};
static inline int
ckpt_bytebuf_add(struct ckpt_bytebuf *b, const void *p, size_t n, struct ckpt_err *e)
{
	if (b->cap - b->len < n && ckpt_grow(&b->p, &b->cap, b->len + n, 1, 64, e) < 0)
		return -1;
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}
/* The low n (<= 8) bytes of v, big-endian (ckpt_store_be). */
static inline int
ckpt_bytebuf_be(struct ckpt_bytebuf *b, uint64_t v, size_t n, struct ckpt_err *e)
{
	unsigned char o[8];

	ckpt_store_be(o, v, n);
	return ckpt_bytebuf_add(b, o, n, e);
}
void ckpt_bytebuf_release(struct ckpt_bytebuf *b);

/* An entry (list element, key, value, channel data, coordinator state) as JSON:
 * a string when the bytes are valid UTF-8 without NUL, else {"base64": "..."}. */
json_t *ckpt_entry_to_json(const void *p, size_t len);
/* The bytes of an entry; *out is malloc'd (may be NULL when *len is 0). -1 with a message if v is not an entry. */
int ckpt_entry_from_json(const json_t *v, unsigned char **out, size_t *len, struct ckpt_err *e);
/* UTF-8 checked chunk by chunk: start zeroed, feed (-1 once invalid; NUL counts as invalid),
 * and at the end ask ckpt_utf8_done (no sequence left open). */
struct ckpt_utf8 {
	uint32_t cp;
	unsigned char need, n, bad;
};
int ckpt_utf8_feed(struct ckpt_utf8 *u, const void *p, size_t len);
static inline int ckpt_utf8_done(const struct ckpt_utf8 *u) { return !u->bad && u->need == 0; }
/* Write the UTF-8 form of code point cp (at most 4 bytes) at o; its length. */
size_t ckpt_utf8_put(char *o, uint32_t cp);
/* Is [p, p + len) valid UTF-8 without NUL (the rule that makes an entry a string)? */
int ckpt_utf8_valid(const void *p, size_t len);
/* Standard base64 with padding of [p, p + len) at o: writes (len + 2) / 3 * 4 bytes, returns that. */
size_t ckpt_base64_put(char *o, const void *p, size_t len);
/* v in decimal, as printf's %lld, at o (room for CKPT_DEC_MAX bytes, no NUL); returns the length. */
#define CKPT_DEC_MAX 20
size_t ckpt_dec_put(char *o, long long v);

/* ------------------------------------------------------- files written and read whole: atomic.c */

/*
 * Files written whole or not at all: a temporary name in the same
 * directory, fsync, rename.  ckpt_atomic_commit closes and renames;
 * ckpt_atomic_abort closes and removes.  Both free w.
 */
struct ckpt_atomic;
struct ckpt_atomic *ckpt_atomic_open(const char *path, struct ckpt_err *e);
FILE *ckpt_atomic_file(struct ckpt_atomic *w);
int ckpt_atomic_commit(struct ckpt_atomic *w, struct ckpt_err *e);
void ckpt_atomic_abort(struct ckpt_atomic *w);
/*
 * Temporary files and directories removed by ckpt_cleanup_signal (ckpt.h) when a fatal signal
 * comes before they are put in place: made by mkstemp and mkdtemp with the signals held, named
 * until ckpt_cleanup_forget(path) (after the rename, or the removal).  hook: a function of a
 * file with temporary names of its own, run by ckpt_cleanup_signal first (async-signal-safe).
 */
int ckpt_cleanup_mkstemp(char *tmpl);
char *ckpt_cleanup_mkdtemp(char *tmpl);
void ckpt_cleanup_forget(const char *path);
void ckpt_cleanup_hook(void (*fn)(void));
/* The directory temporary files go to: $TMPDIR when set and not empty, else /tmp. */
const char *ckpt_tmpdir(void);
/* An unlinked temporary file in ckpt_tmpdir(), read and written: NULL with e set (where: name). */
FILE *ckpt_tmpfile(const char *name, struct ckpt_err *e);
/* The process's umask, read without changing it for long (new files get 0666 & ~umask). */
unsigned ckpt_umask(void);
/* fsync the directory holding path (after a rename). */
int ckpt_fsync_dir_of(const char *path, struct ckpt_err *e);
/* All of f (name for errors; at most CKPT_READ_LIMIT bytes) into a new buffer *out of *len bytes; 0 or -1. */
#define CKPT_READ_LIMIT ((size_t)1 << 30)
int ckpt_read_all(FILE *f, const char *name, char **out, size_t *len, struct ckpt_err *e);

/* ------------------------------------------------------------ a text input in place: textmap.c */

/*
 * A text input read in place without a copy: a regular file mapped (from where f is; page cache,
 * so the file must not be cut while it is read), anything else (standard input, a pipe) spooled to
 * a temporary file first and that mapped.  Its bytes p[base, n); p NULL when there are none.
 * ckpt_textmap_release gives back the pages of [*from, to) once read (read again from the page
 * cache if touched again): the resident size stays bounded however large the input; *from = to.
 */
struct ckpt_textmap {
	const unsigned char *p;
	size_t n, base;
};
int ckpt_textmap_open(struct ckpt_textmap *m, FILE *f, const char *name, struct ckpt_err *e);
/* What is left of f copied to a ckpt_tmpfile: its descriptor (at its end), its size in *n; -1 with e
 * set.  Standard input read more than once (a snapshot, rows). */
int ckpt_spool(FILE *f, const char *name, off_t *n, struct ckpt_err *e);
/* The line at byte off (< n) copied into *buf (of *cap bytes, grown) as getline reads it: its '\n'
 * kept, one added to a last line without it, NUL-terminated, *len bytes; its length in m, 0 on error. */
size_t ckpt_textmap_line(const struct ckpt_textmap *m, size_t off, char **buf, size_t *cap, size_t *len,
			 struct ckpt_err *e);
void ckpt_textmap_release(const struct ckpt_textmap *m, size_t *from, size_t to);
void ckpt_textmap_close(struct ckpt_textmap *m);

/* ------------------------------------------------------------- the one JSON writer: jw.c */

/* The state document written as it is read (jw.c): containers opened and closed, keys and
 * values, in jansson's compact or indented form.  Write errors are kept and told by ckpt_jw_failed.
 * The writer is here, not opaque, so that the hot calls (an entry's keys, separators, integers and
 * plain strings) are inline; what is rare or long is in jw.c. */
#define CKPT_JW_BUF ((size_t)1 << 16)
struct ckpt_jw {
	FILE *f;
	int pretty, depth, failed;
	size_t *count; /* items written in each open container: cap of them, grown as deep as the value */
	size_t cap;
	size_t len;
	uint64_t flushed; /* bytes handed to f so far: flushed + len is where the writer is */
	char buf[CKPT_JW_BUF];
};
/* A writer to f, pretty (indented) or compact; NULL with e set on no memory. */
struct ckpt_jw *ckpt_jw_new(FILE *f, int pretty, struct ckpt_err *e);
/* What is still buffered written to f, then the writer freed; NULL is accepted. */
void ckpt_jw_free(struct ckpt_jw *w);
void ckpt_jw_flush(struct ckpt_jw *w);
int ckpt_jw_deeper(struct ckpt_jw *w); /* room for one more level; -1 (failed) on no memory */
void ckpt_jw_indent(struct ckpt_jw *w, int depth); /* a new line and two spaces a level (pretty) */
void ckpt_jw_string(struct ckpt_jw *w, const char *p, size_t n); /* any valid UTF-8, escaped */
void ckpt_jw_entry(struct ckpt_jw *w, const void *p, size_t n); /* as ckpt_entry_to_json */
void ckpt_jw_json(struct ckpt_jw *w, const json_t *v);
void ckpt_jw_members(struct ckpt_jw *w, const json_t *o); /* o's members, into the object open */
/* -1 with e set ("stdout: write error") once a write failed. */
int ckpt_jw_failed(struct ckpt_jw *w, struct ckpt_err *e);

/* Room for n more bytes (n <= CKPT_JW_BUF) at the returned place; the caller adds what it wrote
 * to w->len. */
static inline char *
ckpt_jw_room(struct ckpt_jw *w, size_t n)
{
	if (w->len + n > CKPT_JW_BUF)
		ckpt_jw_flush(w);
	return w->buf + w->len;
}
static inline void
ckpt_jw_byte(struct ckpt_jw *w, char c)
{
	*ckpt_jw_room(w, 1) = c;
	w->len++;
}
/* Before an item of the innermost container: its separator and indentation. */
static inline void
ckpt_jw_elem(struct ckpt_jw *w)
{
	if (w->depth == 0 || (size_t)w->depth > w->cap) /* deeper only when out of memory (failed) */
		return;
	if (w->count[w->depth - 1]++ > 0)
		ckpt_jw_byte(w, ',');
	if (w->pretty)
		ckpt_jw_indent(w, w->depth);
}
static inline void
ckpt_jw_open(struct ckpt_jw *w, char c) /* '{' or '[' */
{
	ckpt_jw_byte(w, c);
	if ((size_t)w->depth < w->cap || ckpt_jw_deeper(w) == 0)
		w->count[w->depth] = 0;
	w->depth++;
}
static inline void
ckpt_jw_close(struct ckpt_jw *w, char c) /* '}' or ']' */
{
	w->depth--;
	if (w->pretty && (size_t)w->depth < w->cap && w->count[w->depth] > 0)
		ckpt_jw_indent(w, w->depth);
	ckpt_jw_byte(w, c);
}
/* A string of n bytes when it is short and needs no escape (nor, with ascii, holds a byte over
 * 0x7f), followed by tail (ntail bytes): 1, or 0 with nothing written. */
static inline int
ckpt_jw_plain(struct ckpt_jw *w, const unsigned char *s, size_t n, int ascii, const char *tail, size_t ntail)
{
	char *o;

	if (n > CKPT_JW_BUF / 4)
		return 0;
	o = ckpt_jw_room(w, n + 2 + ntail);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];

		if (c < 0x20 || c == '"' || c == '\\' || (ascii && c >= 0x80))
			return 0;
		o[i + 1] = (char)c;
	}
	o[0] = '"';
	o[n + 1] = '"';
	memcpy(o + n + 2, tail, ntail);
	w->len += n + 2 + ntail;
	return 1;
}
static inline void
ckpt_jw_strn(struct ckpt_jw *w, const char *s, size_t n) /* valid UTF-8 */
{
	if (!ckpt_jw_plain(w, (const unsigned char *)s, n, 0, "", 0))
		ckpt_jw_string(w, s, n);
}
static inline void
ckpt_jw_str(struct ckpt_jw *w, const char *s)
{
	ckpt_jw_strn(w, s, strlen(s));
}
/* A member's key (n bytes of valid UTF-8): its value follows. */
static inline void
ckpt_jw_keyn(struct ckpt_jw *w, const char *k, size_t n)
{
	ckpt_jw_elem(w);
	if (ckpt_jw_plain(w, (const unsigned char *)k, n, 0, ": ", w->pretty ? 2 : 1))
		return;
	ckpt_jw_string(w, k, n);
	ckpt_jw_byte(w, ':');
	if (w->pretty)
		ckpt_jw_byte(w, ' ');
}
static inline void
ckpt_jw_key(struct ckpt_jw *w, const char *k)
{
	ckpt_jw_keyn(w, k, strlen(k));
}
/* The same for a key given quoted, with its colon and a space after: "\"k\": ", n bytes without
 * the space (ckpt_jw_key_lit takes a string literal, which needs no escape). */
#define ckpt_jw_key_lit(w, k) ckpt_jw_key_raw((w), "\"" k "\": ", sizeof(k) + 2)
static inline void
ckpt_jw_key_raw(struct ckpt_jw *w, const char *quoted, size_t n)
{
	ckpt_jw_elem(w);
	memcpy(ckpt_jw_room(w, n + 1), quoted, n + 1);
	w->len += n + (w->pretty != 0);
}
static inline void
ckpt_jw_null(struct ckpt_jw *w)
{
	memcpy(ckpt_jw_room(w, 4), "null", 4);
	w->len += 4;
}
static inline void
ckpt_jw_bool(struct ckpt_jw *w, int v)
{
	memcpy(ckpt_jw_room(w, 5), v ? "true" : "false", v ? 4 : 5);
	w->len += v ? 4 : 5;
}
static inline void
ckpt_jw_int(struct ckpt_jw *w, long long v)
{
	w->len += ckpt_dec_put(ckpt_jw_room(w, CKPT_DEC_MAX), v);
}

/* ------------------------------------------------------- objects in S3: s3.c, s3-request.c */

/*
 * Where bytes come from when a path is s3://bucket/key (or Flink's s3a://, s3p://): S3 or an
 * S3-compatible store through libcurl, configured from the AWS environment and files (ckpt(7),
 * ENVIRONMENT).  Errors name s3://bucket/key and the server's error code, never a secret.
 */
/* Is p an S3 URL (s3://, s3a://, s3p://)? */
int ckpt_s3_is_url(const char *p);
/* An object open for ranged reads: its size and ETag taken once for the run (its first HEAD, or
 * the listing that named it: then no HEAD); every later read must see the same ETag, or fails.
 * Used by one thread at a time; ckpt_s3obj_close accepts NULL. */
struct ckpt_s3obj;
struct ckpt_s3obj *ckpt_s3obj_open(const char *url, struct ckpt_err *e);
uint64_t ckpt_s3obj_size(const struct ckpt_s3obj *o);
/* Exactly n bytes at off (read ahead by ranges, several in flight): 0, or -1 with e set. */
int ckpt_s3obj_pread(struct ckpt_s3obj *o, void *p, size_t n, uint64_t off, struct ckpt_err *e);
void ckpt_s3obj_close(struct ckpt_s3obj *o);
/* Reads ahead stop at end (0: the object's end), reads asked for past it do not: a reader of one
 * range of an object (a shard's key groups) fetches no more of it than its bytes. */
void ckpt_s3obj_limit(struct ckpt_s3obj *o, uint64_t end);
/* All of o written to fd (path names it in errors): 0, or -1 with e set. */
int ckpt_s3obj_copy(struct ckpt_s3obj *o, int fd, const char *path, struct ckpt_err *e);
/* The whole object into *p (malloc'd, *n bytes): 0, or -1 with e set. */
int ckpt_s3_get(const char *url, unsigned char **p, size_t *n, struct ckpt_err *e);
/* The object's size: 0, 1 when it does not exist (bucket there, key not), -1 with e set. */
int ckpt_s3_stat(const char *url, uint64_t *size, struct ckpt_err *e);
/* An object a listing names. */
struct ckpt_s3_entry {
	const char *url;       /* s3://bucket/key */
	uint64_t size;
	int64_t mtime_sec;     /* LastModified; -1 when the listing does not say */
	long mtime_nsec;
};
/* Every key under the prefix url names (ListObjectsV2, every page through its continuation
 * tokens, keys in the store's order), fn called with each but directory markers; fn returning
 * non-zero stops with that value.  Each object listed with its ETag is pinned with its size and
 * ETag as a HEAD would pin it (ckpt_s3obj_open, ckpt_s3_stat then ask none).  0, or -1 with e set. */
int ckpt_s3_list(const char *url, int (*fn)(void *arg, const struct ckpt_s3_entry *o), void *arg,
		 struct ckpt_err *e);
/* Upload the local file path to url (multipart above a size): 0, or -1 with e set (a multipart
 * upload that failed is aborted). */
int ckpt_s3_put_file(const char *path, const char *url, struct ckpt_err *e);
/* Delete the object: 0, or -1 with e set. */
int ckpt_s3_delete(const char *url, struct ckpt_err *e);
/* Upload the files under the local directory dir under the prefix url (url/NAME, subdirectories
 * as url/DIR/NAME), the file named last last (NULL: none); on any failure delete what was
 * uploaded.  0, or -1 with e set. */
int ckpt_s3_put_dir(const char *dir, const char *url, const char *last, struct ckpt_err *e);
/* Report progress (progress.h) as the bytes fetched from now on of need, until
 * ckpt_s3_progress_end. */
void ckpt_s3_progress_begin(uint64_t need);
void ckpt_s3_progress_end(void);

#include "progress.h"
#include "json-scan.h"

#endif
