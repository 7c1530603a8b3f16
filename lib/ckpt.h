/*
 * libckpt: the library behind the ckpt programs.  It never prints and never
 * exits; every function that can fail fills a caller's struct ckpt_err.
 * This header is the whole public API, one section per concern (lib/<concern>.c).
 */
#ifndef CKPT_H
#define CKPT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#define CKPT_VERSION "0.1.0"

/* ---------------------------------------------------------------- err.c */

enum ckpt_errkind {
	CKPT_ERR_NONE = 0,
	CKPT_ERR_INPUT,   /* malformed or unreadable input (exit 2) */
	CKPT_ERR_IO,      /* a system call failed; sys_errno says why (exit 2) */
	CKPT_ERR_NOMEM,   /* allocation failed (exit 2) */
	CKPT_ERR_REFUSED, /* a defined negative answer: decline, mismatch, refusal, corruption (exit 1) */
};

struct ckpt_err {
	enum ckpt_errkind kind;
	int sys_errno;     /* errno for CKPT_ERR_IO, else 0 */
	char where[512];   /* "file", "file:line:col", "archive:member", or "" */
	char text[1024];   /* lowercase, no final period, no strerror */
};

/* Fill e (may be NULL) and return -1, so callers can write `return ckpt_err_set(...)`. */
int ckpt_err_set(struct ckpt_err *e, enum ckpt_errkind kind, const char *where,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int ckpt_err_vset(struct ckpt_err *e, enum ckpt_errkind kind, const char *where,
		  const char *fmt, va_list ap);
/* Like ckpt_err_set with CKPT_ERR_IO and the current errno. */
int ckpt_err_sys(struct ckpt_err *e, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Prefix e->text with "prefix: " (for adding context such as "edge 2"). */
void ckpt_err_prefix(struct ckpt_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The whole diagnostic without the program name: "where: text[: strerror]". */
void ckpt_err_format(const struct ckpt_err *e, char *buf, size_t size);
/* The exit status the error calls for: 1 for CKPT_ERR_REFUSED, else 2. */
int ckpt_err_status(const struct ckpt_err *e);
void ckpt_err_clear(struct ckpt_err *e);

/* Allocation that reports failure through e; size overflow is checked. */
void *ckpt_calloc(size_t n, size_t size, struct ckpt_err *e);
void *ckpt_reallocarray(void *p, size_t n, size_t size, struct ckpt_err *e);
char *ckpt_strdup(const char *s, struct ckpt_err *e);

/* --------------------------------------------------------------- json.c */

/*
 * A JSON document with where it came from, so that validators can name the
 * place of an error ("file:line:col") by a JSON pointer ("/edges/2/target").
 */
struct ckpt_jdoc {
	json_t *root;          /* owned by the document */
	const char *name;      /* file name as the user gave it ("-" shows as "<stdin>") */
	const char *src;       /* the document's text, or NULL when built in memory */
	size_t len;            /* length of src */
	size_t line0, col0;    /* line and column (1-based) where src starts in its file */
};

/* A stream of JSON documents read from one file or stdin (path NULL or "-"). */
struct ckpt_jsonin;

/* Open path for reading documents; NULL on failure. The file is read whole (up to 1 GiB). */
struct ckpt_jsonin *ckpt_jsonin_open(const char *path, struct ckpt_err *e);
/* Next document: 1 and *doc filled (valid until the next call or free), 0 at the end, -1 on error. */
int ckpt_jsonin_next(struct ckpt_jsonin *in, struct ckpt_jdoc **doc, struct ckpt_err *e);
/* Display name of the stream ("<stdin>" for standard input). */
const char *ckpt_jsonin_name(const struct ckpt_jsonin *in);
void ckpt_jsonin_free(struct ckpt_jsonin *in);

/* Read exactly one document from path (error if none or more than one). Caller frees with ckpt_jdoc_free. */
struct ckpt_jdoc *ckpt_jdoc_load(const char *path, struct ckpt_err *e);
/* Wrap an in-memory value (takes the reference) so validators can report against name. */
struct ckpt_jdoc *ckpt_jdoc_wrap(json_t *root, const char *name, struct ckpt_err *e);
void ckpt_jdoc_free(struct ckpt_jdoc *doc);

/*
 * Set an input error located at the value that ptr (a JSON pointer into the
 * document, "" for the root) designates: where = "name:line:col". Returns -1.
 */
int ckpt_jdoc_err(const struct ckpt_jdoc *doc, struct ckpt_err *e, const char *ptr,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Print v on f: compact on one line, or indented by 2 when pretty; then a newline. -1 on write error. */
int ckpt_json_print(FILE *f, const json_t *v, int pretty);

/* Small helpers for building output: they abort nothing and return -1 on allocation failure. */
int ckpt_json_set_new(json_t *obj, const char *key, json_t *v);
int ckpt_json_append_new(json_t *arr, json_t *v);

/* --------------------------------------------------------------- bits.c */

/* A fixed-size bit set, the representation of subtask sets. */
struct ckpt_bits {
	uint64_t *w;
	size_t n; /* number of bits */
};

int ckpt_bits_init(struct ckpt_bits *b, size_t n, struct ckpt_err *e);
void ckpt_bits_release(struct ckpt_bits *b);
static inline void ckpt_bits_set(struct ckpt_bits *b, size_t i) { b->w[i >> 6] |= UINT64_C(1) << (i & 63); }
static inline void ckpt_bits_clear(struct ckpt_bits *b, size_t i) { b->w[i >> 6] &= ~(UINT64_C(1) << (i & 63)); }
static inline int ckpt_bits_test(const struct ckpt_bits *b, size_t i) { return (b->w[i >> 6] >> (i & 63)) & 1; }
/* Set bits [lo, hi). */
void ckpt_bits_set_range(struct ckpt_bits *b, size_t lo, size_t hi);
size_t ckpt_bits_count(const struct ckpt_bits *b);
/* Index of the first set bit at or after i, or b->n when none. */
size_t ckpt_bits_next(const struct ckpt_bits *b, size_t i);
/* Any set bit in [lo, hi)? */
int ckpt_bits_any_in(const struct ckpt_bits *b, size_t lo, size_t hi);

/* ---------------------------------------------------------- rangelist.c */

/*
 * Range lists in cpuset syntax ("0-3,7,9-10"; "" is empty), ascending and
 * within [0, n).  Parse into a fresh bit set of n bits; on error the message
 * says what is wrong (the caller adds where).
 */
int ckpt_rangelist_parse(const char *s, size_t n, struct ckpt_bits *out, struct ckpt_err *e);
/* Accept a range-list string or a JSON array of integers. */
int ckpt_rangelist_from_json(const json_t *v, size_t n, struct ckpt_bits *out, struct ckpt_err *e);
/* The canonical range list of b; malloc'd, NULL on allocation failure. */
char *ckpt_rangelist_format(const struct ckpt_bits *b);

/* --------------------------------------------------------------- hash.c */

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

/* -------------------------------------------------------------- bytes.c */

/* An entry (list element, key, value, channel data, coordinator state) as JSON:
 * a string when the bytes are valid UTF-8 without NUL, else {"base64": "..."}. */
json_t *ckpt_entry_to_json(const void *p, size_t len);
/* The bytes of an entry; *out is malloc'd (may be NULL when *len is 0). -1 with a message if v is not an entry. */
int ckpt_entry_from_json(const json_t *v, unsigned char **out, size_t *len, struct ckpt_err *e);
int ckpt_utf8_valid(const void *p, size_t len);
char *ckpt_base64_encode(const void *p, size_t len);
int ckpt_base64_decode(const char *s, size_t slen, unsigned char **out, size_t *len);

/* ------------------------------------------------------------- atomic.c */

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
/* fsync the directory holding path (after a rename). */
int ckpt_fsync_dir_of(const char *path, struct ckpt_err *e);

/* -------------------------------------------------------------- graph.c */

enum ckpt_exec_state {
	CKPT_CREATED, CKPT_SCHEDULED, CKPT_DEPLOYING, CKPT_INITIALIZING, CKPT_RUNNING,
	CKPT_FINISHED, CKPT_CANCELING, CKPT_CANCELED, CKPT_FAILED, CKPT_RECONCILING,
	CKPT_NSTATES
};

enum ckpt_distribution { CKPT_ALL_TO_ALL, CKPT_POINTWISE };

enum ckpt_partition {
	CKPT_PIPELINED, CKPT_PIPELINED_BOUNDED, CKPT_BLOCKING, CKPT_HYBRID_FULL,
	CKPT_HYBRID_SELECTIVE, CKPT_PIPELINED_APPROXIMATE, CKPT_NPARTITIONS
};

/* Upper bounds checked before anything is allocated from input. */
#define CKPT_PARALLELISM_LIMIT (1u << 24)     /* per vertex */
#define CKPT_SUBTASKS_LIMIT (UINT64_C(1) << 26) /* per graph */
#define CKPT_MAX_PARALLELISM_LIMIT 32768u     /* Flink's upper bound for max parallelism */

const char *ckpt_exec_state_name(enum ckpt_exec_state s);
/* -1 if name is not an ExecutionState name (upper case, as Flink spells them). */
int ckpt_exec_state_parse(const char *name);
const char *ckpt_distribution_name(enum ckpt_distribution d); /* "all_to_all" | "pointwise" */
const char *ckpt_partition_name(enum ckpt_partition p);       /* "pipelined", ... */
int ckpt_partition_parse(const char *name);                   /* -1 if unknown */

struct ckpt_state_decl {
	char *name;
	char *mode; /* "list", "union", "broadcast", "keyed", ... as given */
};

struct ckpt_operator_decl {
	char *id, *uid, *name; /* any may be NULL */
	struct ckpt_state_decl *state;
	size_t nstate;
};

struct ckpt_vertex {
	char *id;
	char *name;               /* NULL when not given */
	uint32_t parallelism;
	uint32_t max_parallelism; /* 0 when not given */
	unsigned char *tasks;     /* parallelism entries of enum ckpt_exec_state */
	struct ckpt_operator_decl *ops;
	size_t nops;
	int batch_snapshot;       /* 1 unless the input says false */
	size_t *in, *out;         /* indices of input and output edges, in edge order */
	size_t nin, nout;
};

struct ckpt_edge {
	size_t source, target; /* vertex indices */
	enum ckpt_distribution distribution;
	enum ckpt_partition partition;
};

struct ckpt_graph {
	struct ckpt_vertex *v;
	size_t nv;
	struct ckpt_edge *e;
	size_t ne;
	size_t *topo;        /* vertex indices in topological order, ties in input order */
	uint64_t nsubtasks;  /* sum of parallelisms */
};

/* Validate and load a ckpt-graph(5) document. NULL on error, with the place named. */
struct ckpt_graph *ckpt_graph_from_json(const struct ckpt_jdoc *doc, struct ckpt_err *e);
/* The normalised document (tasks as arrays only when some subtask is neither RUNNING nor FINISHED). */
json_t *ckpt_graph_to_json(const struct ckpt_graph *g);
/* Index of the vertex with that id, or -1. */
long ckpt_graph_find(const struct ckpt_graph *g, const char *id);
/* Fill g->topo and each vertex's in/out lists; -1 with the vertices of a cycle named. */
int ckpt_graph_finish(struct ckpt_graph *g, struct ckpt_err *e);
void ckpt_graph_free(struct ckpt_graph *g);

/* ----------------------------------------------------------- pointwise.c */

/*
 * POINTWISE connection arithmetic (Flink's EdgeManagerBuildUtil), S upstream
 * and T downstream subtasks.  The half-open range of upstream subtasks that
 * downstream subtask j reads, and of downstream subtasks that upstream i feeds.
 */
void ckpt_pointwise_inputs(uint32_t S, uint32_t T, uint32_t j, uint32_t *lo, uint32_t *hi);
void ckpt_pointwise_outputs(uint32_t S, uint32_t T, uint32_t i, uint32_t *lo, uint32_t *hi);

#endif
