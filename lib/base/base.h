/*
 * ckpt-internal.h: what the library's own files (lib/, lib/engine/) share and
 * programs must not use; the public API is ckpt.h, included here.  Sections
 * follow ckpt.h's.
 */
#ifndef CKPT_INTERNAL_H
#define CKPT_INTERNAL_H

#ifndef CKPT_LIBRARY
#error "ckpt-internal.h is for libckpt's own files; programs include ckpt.h"
#endif

#include <string.h>

#include "ckpt.h"

/* ----------------------------------------------------------------- errors and allocation: err.c */

int ckpt_err_vset(struct ckpt_err *e, enum ckpt_errkind kind, const char *where,
		  const char *fmt, va_list ap);
/* Prefix e->text with "prefix: " (for adding context such as "edge 2"). */
void ckpt_err_prefix(struct ckpt_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Give an error a callee filled a new kind and place, its text kept.  Returns -1. */
int ckpt_err_locate(struct ckpt_err *e, enum ckpt_errkind kind, const char *where);
void *ckpt_reallocarray(void *p, size_t n, size_t size, struct ckpt_err *e);
char *ckpt_strdup(const char *s, struct ckpt_err *e);

/* ----------------------------------------------------------------------- JSON documents: json.c */

/* Display name of the stream ("<stdin>" for standard input). */
const char *ckpt_jsonin_name(const struct ckpt_jsonin *in);
/* Place an error a callee filled (its text kept) at the value ptr designates, as an input error;
 * an out-of-memory error is left as it is.  Returns -1. */
int ckpt_jdoc_locate(const struct ckpt_jdoc *doc, struct ckpt_err *e, const char *ptr);
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
/* The process's umask, read without changing it for long (new files get 0666 & ~umask). */
unsigned ckpt_umask(void);
/* fsync the directory holding path (after a rename). */
int ckpt_fsync_dir_of(const char *path, struct ckpt_err *e);
/* All of f (name for errors; at most CKPT_READ_LIMIT bytes) into a new buffer *out of *len bytes; 0 or -1. */
#define CKPT_READ_LIMIT ((size_t)1 << 30)
int ckpt_read_all(FILE *f, const char *name, char **out, size_t *len, struct ckpt_err *e);

/* -------------------------------------------------------------------------- job graphs: graph.c */

const char *ckpt_exec_state_name(enum ckpt_exec_state s);
/* -1 if name is not an ExecutionState name (upper case, as Flink spells them). */
int ckpt_exec_state_parse(const char *name);
const char *ckpt_distribution_name(enum ckpt_distribution d); /* "all_to_all" | "pointwise" */
const char *ckpt_partition_name(enum ckpt_partition p);       /* "pipelined", ... */
int ckpt_partition_parse(const char *name);                   /* -1 if unknown */

/* ----------------------------------------------------------- POINTWISE edges: graph-pointwise.c */

/*
 * POINTWISE connection arithmetic (Flink's EdgeManagerBuildUtil), S upstream
 * and T downstream subtasks.  The half-open range of upstream subtasks that
 * downstream subtask j reads, and of downstream subtasks that upstream i feeds.
 */
void ckpt_pointwise_inputs(uint32_t S, uint32_t T, uint32_t j, uint32_t *lo, uint32_t *hi);
void ckpt_pointwise_outputs(uint32_t S, uint32_t T, uint32_t i, uint32_t *lo, uint32_t *hi);

/* ------------------------------------------------------------- failover and regions: failover.c */

/*
 * ckpt_failover_restart_in with the lost partitions
 * asked of loss, per edge, instead of per producing subtask.
 */
int ckpt_failover_restart_loss(const struct ckpt_graph *g, const struct ckpt_regions *r,
			       const struct ckpt_task_ref *failed, size_t nfailed,
			       const struct ckpt_partition_loss *loss, struct ckpt_bits *restart,
			       size_t *nregions, struct ckpt_err *e);

/* ---------------------- snapshots: snap.c, snap-open.c, snap-doc.c, snap-file.c, snap-summary.c */

void ckpt_subtask_unload(struct ckpt_subtask *st);
/* The operator state of st named name (st may be NULL), or NULL. */
const struct ckpt_opstate *ckpt_subtask_opstate(const struct ckpt_subtask *st, const char *name);
const char *ckpt_mode_name(enum ckpt_mode m); /* "list", "union", "broadcast" */
int ckpt_mode_parse(const char *name);        /* -1 if unknown */

/* Recompute st->kvstats (and nkv, kv_bytes, per-state n and bytes, in/out bytes) from loaded entries. */
int ckpt_subtask_recount(struct ckpt_subtask *st, struct ckpt_err *e);
/* Free everything a subtask owns (its index and flags stay); for snapshots built by hand. */
void ckpt_subtask_release(struct ckpt_subtask *st);

/* ------------------------------------------------ Flink _metadata spans: flink-meta.c, flink-meta-write.c */

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
};

struct ckpt_fmspans {
	int version;
	size_t masters_at, ops_at, trailer_at; /* master state count, operator count, after the last operator */
	struct ckpt_fmop *ops;                  /* one per operator, in file order */
	size_t nops;
	struct ckpt_fmpath *paths;              /* in file order */
	size_t npaths;
};

/* ckpt_flinkmeta_decode, and sp filled (release it with ckpt_fmspans_release, on failure too). */
struct ckpt_snapshot *ckpt_flinkmeta_decode_spans(const void *buf, size_t len, const char *name,
						  struct ckpt_fmspans *sp, struct ckpt_err *e);
void ckpt_fmspans_release(struct ckpt_fmspans *sp);

/* ------------------------------------------------------- Flink state files: flink-state.c */

/* The backing of a snapshot decoded from the _metadata named meta ("<stdin>" for standard input):
 * its subtasks load nothing until ckpt_flink_state_enable (snap-open.c gives it to a Flink snapshot;
 * the state readers share flink-state.h). */
struct ckpt_snap_backing;
struct ckpt_snap_backing *ckpt_flink_backing_new(const char *meta, struct ckpt_err *e);

/* ------------------------------------------------------- job event logs: evlog.c, evlog-parse.c */

/* "vertex_finished", ...; NULL for an unknown type. */
const char *ckpt_event_type_name(uint32_t type);

/*
 * Check and decode a payload of a known type into ev (strings live in p).  On
 * error -1, e->text says what is wrong and *at (when not NULL) points at the
 * offending byte of payload; the caller sets where and the kind.
 */
int ckpt_evparser_decode(struct ckpt_evparser *p, uint32_t type, const void *payload, size_t len,
			 struct ckpt_event *ev, const char **at, struct ckpt_err *e);
/* Append json_dumps(payload) (compact). */
int ckpt_evwriter_append_json(struct ckpt_evwriter *w, uint32_t type, const json_t *payload,
			      struct ckpt_err *e);
/* Write the buffer out; with sync, fsync too. */
int ckpt_evwriter_flush(struct ckpt_evwriter *w, int sync, struct ckpt_err *e);
/* End the current segment (Flink's cutBlock); the next record starts a new one. */
int ckpt_evwriter_cut(struct ckpt_evwriter *w, struct ckpt_err *e);
/*
 * Flink's job event log (FileSystemJobEventStore, evlog-flink.c): a record is a big-endian int
 * type and int length, then the payload, Java serialization.  The first 16 bytes of a segment
 * tell the formats apart (ckpt_evlog_is_flink).
 */
#define CKPT_EVFLINK_HEADER 8
int ckpt_evlog_is_flink(const unsigned char *p, size_t n);
struct ckpt_evflink;
struct ckpt_evflink *ckpt_evflink_new(struct ckpt_err *e);
void ckpt_evflink_free(struct ckpt_evflink *f);
/*
 * The payload of a Flink record of a known type decoded into ev, whose payload is the event's
 * ckpt-events(5) payload as json_dumps writes it (compact); what ev points to is owned by f and
 * valid until the next call.  Segment and offset are the caller's to set.  On error -1, e->text
 * says what is wrong and *at is the payload byte at fault; the caller sets where.
 */
int ckpt_evflink_decode(struct ckpt_evflink *f, uint32_t type, const unsigned char *p, size_t len,
			struct ckpt_event *ev, size_t *at, struct ckpt_err *e);
/* Set an error of kind at ev's record ("dir/events.N", "offset X: ..."); returns -1. */
int ckpt_evreader_err(const struct ckpt_evreader *r, const struct ckpt_event *ev, struct ckpt_err *e,
		      enum ckpt_errkind kind, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
