/*
 * libckpt: the library behind the five ckpt programs, and its whole public API,
 * one section per concern.
 *
 * Who owns what (as jq's jv.h says it): the caller owns what a function returns.
 * A heap object struct ckpt_X * is freed with ckpt_X_free, which accepts NULL; a
 * struct the caller embeds and a function fills is emptied with ckpt_X_release;
 * every json_t * that a *_to_json function (or any other) returns is a new
 * reference, to be json_decref'd.  Arguments are borrowed: nothing passed in is
 * kept past the call unless the function's comment says so.
 *
 * The library never prints and never exits: a function that can fail returns -1
 * (or NULL) and fills the caller's struct ckpt_err, whose kind gives the exit
 * status (ckpt_err_status).  What only the library itself uses is declared in
 * the layer headers (lib/LAYER/LAYER.h, lib/README), which refuse to compile
 * outside the library, so programs never include them.
 */
#ifndef CKPT_H
#define CKPT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#define CKPT_VERSION "0.1.0"

/* ------------------------------------------------------------ errors and allocation: base/err.c */

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
/* Like ckpt_err_set with CKPT_ERR_IO and the current errno. */
int ckpt_err_sys(struct ckpt_err *e, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The whole diagnostic without the program name: "where: text[: strerror]", one line: control
 * characters (a name read from a damaged file may hold a newline) as \xHH. */
void ckpt_err_format(const struct ckpt_err *e, char *buf, size_t size);
/* The exit status the error calls for: 1 for CKPT_ERR_REFUSED, else 2. */
int ckpt_err_status(const struct ckpt_err *e);

/* Allocation that reports failure through e; size overflow is checked. */
void *ckpt_calloc(size_t n, size_t size, struct ckpt_err *e);

/* ------------------------------------------------------------------ JSON documents: base/json.c */

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

int ckpt_json_append_new(json_t *arr, json_t *v);

/* -------------------------------------------------------------------- subtask sets: base/bits.c */

/* A fixed-size bit set, the representation of subtask sets. */
struct ckpt_bits {
	uint64_t *w;
	size_t n; /* number of bits */
};

int ckpt_bits_init(struct ckpt_bits *b, size_t n, struct ckpt_err *e);
void ckpt_bits_release(struct ckpt_bits *b);
static inline void ckpt_bits_set(struct ckpt_bits *b, size_t i) { b->w[i >> 6] |= UINT64_C(1) << (i & 63); }

/* -------------------------------------------------------------------- job graphs: graph/graph.c */

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

/* An edge's partitioner (Flink's ship_strategy); CKPT_SHIP_NONE when the graph does not say. */
enum ckpt_ship {
	CKPT_SHIP_NONE, CKPT_SHIP_FORWARD, CKPT_SHIP_RESCALE, CKPT_SHIP_REBALANCE, CKPT_SHIP_HASH,
	CKPT_SHIP_BROADCAST, CKPT_SHIP_GLOBAL, CKPT_SHIP_SHUFFLE, CKPT_SHIP_CUSTOM, CKPT_NSHIPS
};

/* Upper bounds checked before anything is allocated from input. */
#define CKPT_PARALLELISM_LIMIT (1u << 24)     /* per vertex */
#define CKPT_SUBTASKS_LIMIT (UINT64_C(1) << 26) /* per graph */
#define CKPT_MAX_PARALLELISM_LIMIT 32768u     /* Flink's upper bound for max parallelism */

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
	enum ckpt_ship ship;   /* the partitioner, CKPT_SHIP_NONE when not given */
};

struct ckpt_graph {
	struct ckpt_vertex *v;
	size_t nv;
	struct ckpt_edge *e;
	size_t ne;
	size_t *topo;        /* vertex indices in topological order, ties in input order */
	uint64_t nsubtasks;  /* sum of parallelisms */
	struct ckpt_idmap *idmap; /* not visible to programs (the library's index of vertex ids) */
};

/* Validate and load a ckpt-graph(5) document. NULL on error, with the place named. */
struct ckpt_graph *ckpt_graph_from_json(const struct ckpt_jdoc *doc, struct ckpt_err *e);
/* The normalised document (tasks as arrays only when some subtask is neither RUNNING nor FINISHED). */
json_t *ckpt_graph_to_json(const struct ckpt_graph *g);
/* Index of the vertex with that id, or -1 (constant time once the graph is finished). */
long ckpt_graph_find(const struct ckpt_graph *g, const char *id);
void ckpt_graph_free(struct ckpt_graph *g);

/* -------------------------------------------------- checkpoint plans: graph/plan.c, graph/dot.c */

enum ckpt_plan_algo { CKPT_PLAN_FAST, CKPT_PLAN_REFERENCE };

struct ckpt_plan_opts {
	enum ckpt_plan_algo algo;
	int no_finished; /* -N: checkpoints after tasks finish are switched off */
};

/* The checkpoint plan of FLIP-147, one bit set per vertex (indexed like g->v). */
struct ckpt_plan {
	struct ckpt_bits *trigger, *wait_for, *finished; /* commit_to equals wait_for */
	unsigned char *fully_finished;                   /* per vertex: no RUNNING subtask */
	char **warnings;
	size_t nwarnings;
	const char *decline_reason; /* NULL unless declined, e.g. "NOT_ALL_REQUIRED_TASKS_RUNNING" */
	char *decline_message;
	size_t nvertices;           /* how many sets each of trigger, wait_for, finished holds */
};

/*
 * compute the plan.  0 whether declined or not; -1 on error.
 * A declined plan has decline_reason and decline_message set and every set
 * empty; warnings are filled either way.  Release with ckpt_plan_release.
 */
int ckpt_plan_compute(const struct ckpt_graph *g, const struct ckpt_plan_opts *o,
		      struct ckpt_plan *out, struct ckpt_err *e);
json_t *ckpt_plan_to_json(const struct ckpt_graph *g, const struct ckpt_plan *p);
void ckpt_plan_release(struct ckpt_plan *p);
/* Two plans of g compared: 0 when they agree, else 1 with the first difference named in what
 * ("decline", "trigger of \"map\"", ...). */
int ckpt_plan_diff(const struct ckpt_graph *g, const struct ckpt_plan *a, const struct ckpt_plan *b, char *what,
		   size_t size);

/* What ckpt-plan -D draws: the plan, and optionally the subtasks a failure restarts. */
struct ckpt_dot_input {
	const struct ckpt_plan *plan;
	const struct ckpt_bits *restart;     /* g->nv sets, or NULL */
	const struct ckpt_task_ref *failed;  /* nfailed subtasks drawn as failed */
	size_t nfailed;
};

/* Write g with its plan as a Graphviz DOT digraph on f; -1 on a write error. */
int ckpt_plan_dot(FILE *f, const struct ckpt_graph *g, const struct ckpt_dot_input *in);

/* ------------------------------------------------------- failover and regions: graph/failover.c */

enum ckpt_failover_strategy { CKPT_FAILOVER_FULL, CKPT_FAILOVER_REGION, CKPT_FAILOVER_APPROXIMATE };

struct ckpt_task_ref {
	size_t vertex;
	uint32_t subtask;
};

/*
 * the subtasks to restart when the failed
 * subtasks fail.  lost, when not NULL, holds one bit set per vertex naming
 * the producer subtasks whose partitions are lost.  restart receives
 * g->nv bit sets (initialised here; release each with ckpt_bits_release;
 * on failure none is left allocated).
 * full: everything.  region (Flink's RestartPipelinedRegionFailoverStrategy):
 * the failed subtasks' regions, every region consuming from a restarting one
 * (transitively), and the region of every producer whose partition a
 * restarting region reads and that is unavailable: pipelined kinds and
 * hybrid_selective cannot be read again, nor can lost ones.  approximate:
 * every edge taken as pipelined_approximate (each subtask its own region,
 * partitions available unless lost): the failed subtasks and everything
 * downstream.  Subtask states are not looked at.  Errors: a failed subtask
 * outside the graph, lost sets of the wrong size, absurd graph sizes.
 */
int ckpt_failover_restart(const struct ckpt_graph *g, enum ckpt_failover_strategy s,
			  const struct ckpt_task_ref *failed, size_t nfailed,
			  const struct ckpt_bits *lost, struct ckpt_bits *restart, struct ckpt_err *e);

/*
 * Failover regions at subtask level.  Subtasks are numbered globally in
 * topological order of their vertices (base[v] + subtask); regions are
 * numbered by their first subtask, and list their members ascending.
 * Region: the connected sets over pipelined and pipelined_bounded edges with
 * regions that depend on each other in a cycle merged; approximate: one
 * region per subtask; full: one region holding everything.
 */
struct ckpt_regions {
	enum ckpt_failover_strategy strategy;
	size_t n;          /* number of regions */
	uint64_t *base;    /* per vertex (indexed like g->v): global number of its subtask 0 */
	uint32_t *of;      /* per global subtask: its region */
	uint32_t *first;   /* n + 1 offsets into members */
	uint32_t *members; /* global subtask numbers, region by region, ascending */
};

/* Compute the regions of g under s into out (release with ckpt_regions_release). */
int ckpt_regions_compute(const struct ckpt_graph *g, enum ckpt_failover_strategy s,
			 struct ckpt_regions *out, struct ckpt_err *e);
void ckpt_regions_release(struct ckpt_regions *r);
/* {"strategy": ..., "regions": [[{"vertex": ..., "subtasks": "0-3"}, ...], ...]}; NULL on allocation failure. */
json_t *ckpt_regions_to_json(const struct ckpt_graph *g, const struct ckpt_regions *r);
/*
 * ckpt_failover_restart over regions already computed (r->strategy decides);
 * *nregions (may be NULL) receives how many regions restart.
 */
int ckpt_failover_restart_in(const struct ckpt_graph *g, const struct ckpt_regions *r,
			     const struct ckpt_task_ref *failed, size_t nfailed,
			     const struct ckpt_bits *lost, struct ckpt_bits *restart,
			     size_t *nregions, struct ckpt_err *e);
/*
 * Lost partitions one by one (Flink tracks each result partition on its
 * own): lost(arg, k, j) is nonzero when the partition that subtask j of
 * g->e[k].source produces for edge k is gone.
 */
struct ckpt_partition_loss {
	int (*lost)(void *arg, size_t edge, uint32_t j);
	void *arg;
};
/* The name of a strategy ("full", "region", "approximate"), and back (-1 if unknown). */
const char *ckpt_failover_strategy_name(enum ckpt_failover_strategy s);
int ckpt_failover_strategy_parse(const char *name);
/* Per-vertex subtask sets as [{"vertex": id, "subtasks": "0-3"}, ...] in topological order, empty sets left out. */
json_t *ckpt_vertex_sets_to_json(const struct ckpt_graph *g, const struct ckpt_bits *sets);

/* ----------------------------------------------------------- Flink REST responses: graph/rest.c */

/*
 * Graphs from a stream of documents: ckpt-graph(5) documents, or Flink REST
 * responses (a GET /jobs/:jobid document followed by the
 * GET /jobs/:jobid/vertices/:vertexid documents of its vertices), which are
 * converted.  Where the REST documents cannot decide the graph (placeholder
 * ids, counts without per-subtask states) the reader says so.
 */
struct ckpt_graphin;

/*
 * Read the named files one after the other as one stream (so that vertex
 * documents may come in files of their own), or standard input when npaths
 * is 0 ("-" names it too).  A file holding no document is an error.  The
 * paths must outlive the reader.
 */
struct ckpt_graphin *ckpt_graphin_open(char *const *paths, size_t npaths, struct ckpt_err *e);
/*
 * The next graph: 1 with *g (the caller frees it) and *doc (the document it
 * came from, valid until the next call), 0 at the end, -1 on error.
 */
int ckpt_graphin_next(struct ckpt_graphin *in, struct ckpt_graph **g, const struct ckpt_jdoc **doc,
		      struct ckpt_err *e);
void ckpt_graphin_free(struct ckpt_graphin *in);

/* --------------- snapshots: model/snapshot.c, doc.c, print.c; snap/open.c, summary.c, rowsout.c */

/* Bytes of an entry (list element, key, value, channel data, coordinator state). */
struct ckpt_bytes {
	unsigned char *p;
	size_t len;
};

/* Distribution mode of a named operator state. */
enum ckpt_mode { CKPT_MODE_LIST, CKPT_MODE_UNION, CKPT_MODE_BROADCAST };

/* Keyed state of one subtask summed per state name. */
struct ckpt_kvstat {
	char *state;
	size_t n;
	uint64_t bytes; /* keys and values */
};

/* One named operator state of one subtask; n and bytes are valid even when entries are not loaded. */
struct ckpt_opstate {
	char *name;
	enum ckpt_mode mode;
	size_t n;
	uint64_t bytes;
	struct ckpt_bytes *entries; /* n entries, or NULL when not loaded */
	json_t *typed; /* Flink state: the entries decoded by their serializers (array, null where not), or NULL */
};

struct ckpt_kv {
	char *state;
	uint32_t key_group;
	struct ckpt_bytes key, value;
	json_t *typed; /* Flink state: key, namespace and value decoded by their serializers, or NULL (owned) */
};

/* In-flight data: input (a = gate, b = channel) or output (a = partition, b = subpartition). */
struct ckpt_chan {
	uint32_t a, b;
	struct ckpt_bytes data;
};

/* A state handle of a Flink _metadata: the state lives in another file (or inline). */
struct ckpt_handle {
	char *scope;   /* "managed_operator", "raw_operator", "managed_keyed", "raw_keyed",
			  "input_channel", "output_channel" */
	char *kind;    /* "file", "relative_file", "byte_stream", "key_groups", "incremental", ... */
	uint64_t size; /* bytes, as the file records them */
	char *path;    /* the file it names, NULL when the bytes are inline */
	json_t *detail; /* everything else the decoder knows: key groups, offsets per name, ... (owned) */
	struct ckpt_bytes data; /* the bytes of an inline (byte_stream) delegate, owned; p NULL otherwise */
};

struct ckpt_subtask {
	uint32_t index;
	int finished;
	struct ckpt_opstate *ops; /* operator state by name, names unique */
	size_t nops;
	int keyed;                   /* has a keyed-state section */
	uint32_t kg_first, kg_last;  /* its key-group range, inclusive, when keyed */
	size_t nkv;
	uint64_t kv_bytes;
	struct ckpt_kv *kv;          /* nkv entries, or NULL when not loaded */
	size_t nin, nout;
	uint64_t in_bytes, out_bytes;
	struct ckpt_chan *in, *out;  /* or NULL when not loaded */
	struct ckpt_handle *handles; /* Flink _metadata only */
	size_t nhandles;
	int loaded;                  /* entries, kv, in and out are present */
	struct ckpt_kvstat *kvstats; /* keyed entries and bytes per state name, first-seen order, or NULL */
	size_t nkvstats;
	void *arena;  /* when not NULL, loaded bytes and kv state names point into it (freed on unload) */
	void *member; /* private: where the entries are stored (archive member) */
};

struct ckpt_operator {
	char *id, *uid, *name, *vertex; /* uid, name, vertex may be NULL */
	uint32_t parallelism, max_parallelism;
	int fully_finished;
	struct ckpt_bytes *coordinator; /* NULL when none */
	struct ckpt_subtask *subtasks;  /* ascending index; a subtask holding nothing may be absent */
	size_t nsubtasks;
};

struct ckpt_snapshot {
	uint64_t checkpoint_id;
	char *kind;        /* "checkpoint" or "savepoint" */
	struct ckpt_operator *ops;
	size_t nops;
	json_t *flink;     /* Flink _metadata facts (format version, properties, master states), else NULL */
	void *backing;     /* private: where unloaded entries come from */
};

/* open any snapshot: an archive (tar, tar.gz, zip), a directory, a state document, a
 * Flink _metadata (or a directory holding one).  Entries may be left unloaded. */
struct ckpt_snapshot *ckpt_snapshot_open(const char *path, struct ckpt_err *e);
/* Is path a Flink _metadata (by its first bytes, or a file called _metadata, however damaged), or a
 * directory holding one and no MANIFEST.json?  (Standard input and other unreadable paths: no.)
 * What ckpt_snapshot_open would open as a Flink snapshot. */
int ckpt_snapshot_is_flink(const char *path);
/* load (or unload) the entries of one subtask; loading a loaded subtask does nothing. */
int ckpt_subtask_load(struct ckpt_snapshot *s, struct ckpt_operator *op, struct ckpt_subtask *st,
		      struct ckpt_err *e);
/* Its state as rows to f (ckpt-state(5), ROWS; ckpt-inspect -R): one JSON object a line per entry,
 * map entry or list element, subtask by subtask, every file read through first (a damaged one
 * prints nothing); for a Flink snapshot, once ckpt_flink_state_enable.  0, or -1 with e set. */
int ckpt_snapshot_rows(struct ckpt_snapshot *s, FILE *f, struct ckpt_err *e);
/* a state document (ckpt-state(5)) to a snapshot, and back (loads every subtask). */
struct ckpt_snapshot *ckpt_snapshot_from_json(const struct ckpt_jdoc *doc, struct ckpt_err *e);
json_t *ckpt_snapshot_to_json(struct ckpt_snapshot *s, struct ckpt_err *e);
/* The state document written to f (pretty: indented), byte for byte what ckpt_json_print of
 * ckpt_snapshot_to_json writes.  A Flink snapshot whose state is read (ckpt_flink_state_enable)
 * is written as it is read, in memory bounded whatever its size: its state files are read through
 * once, checked, before anything is written, then entry by entry.  Other snapshots are built
 * whole first.  0, or -1 with e set; a -1 after the first byte (a write error, a state file
 * changed between the two reads) leaves the document cut, never closed. */
int ckpt_snapshot_print(struct ckpt_snapshot *s, FILE *f, int pretty, struct ckpt_err *e);
void ckpt_snapshot_free(struct ckpt_snapshot *s);
/*
 * Ownership: ckpt_snapshot_free frees everything reachable from s.  A subtask's
 * entries are malloc'd piece by piece (entries[i].p, kv[i].state, kv[i].key.p,
 * kv[i].value.p, in[i].data.p, out[i].data.p, and the arrays), unless st->arena
 * is set: then the pieces point into the arena and only the arrays and the arena
 * are freed.  Copy the bytes out (or keep the subtask loaded) before unloading.
 * Unloading frees entries only when they can be loaded again (an archive member,
 * st->member set); subtasks of state documents and hand-built ones keep theirs.
 * Archive members are read front to back: loading subtasks in the order of the
 * snapshot reads a tar or zip once (out of order, it is read again from the start).
 */
/* A short word for what ckpt_snapshot_open found: "tar", "tar.gz", "zip", "directory",
 * "state document", "flink metadata". */
const char *ckpt_snapshot_format(const struct ckpt_snapshot *s);
/* Was s read from Flink's _metadata (its format "flink metadata")?  Ask this, not the word. */
int ckpt_snapshot_is_flink_meta(const struct ckpt_snapshot *s);

/* The summary ckpt-inspect prints (ckpt-inspect(1)); file is how the input is named. */
json_t *ckpt_snapshot_summary(struct ckpt_snapshot *s, const char *file, struct ckpt_err *e);
/* Complete the summary sum of a Flink snapshot with what its state files hold (fstate, of
 * ckpt_flink_state_summary): each operator's "flink_state", its keyed states among its "states"
 * (mode keyed, kind, entries, bytes, key groups holding entries, skew), their counts in its
 * totals and the summary's (null where one is not known). */
int ckpt_snapshot_summary_flink(json_t *sum, const json_t *fstate, struct ckpt_err *e);
/* The skew of the keyed states of a summary completed so (ckpt-inspect --skew): per state, a row
 * per subtask (its key-group range) and per key group holding entries, with their entries and bytes. */
json_t *ckpt_snapshot_skew(const json_t *sum, struct ckpt_err *e);
/* Operators added, removed and rescaled, states added, removed and resized from a to b;
 * *differ is set when anything differs. */
json_t *ckpt_snapshot_diff(struct ckpt_snapshot *a, struct ckpt_snapshot *b, int *differ,
			   struct ckpt_err *e);

/* --------------------------------------------------------------- finding snapshots: snap/list.c */

/* A checkpoint or savepoint found under a directory (ckpt-inspect -l). */
struct ckpt_found {
	char *path;            /* a Flink snapshot's directory, ckpt's archive or directory, as found */
	const char *kind;      /* "checkpoint", "savepoint", or NULL when neither file nor name says (static) */
	const char *format;    /* "flink metadata", "tar", "tar.gz", "zip", "directory" (static) */
	int64_t checkpoint_id; /* -1 when not known (a _metadata that does not decode, not named chk-N) */
	int64_t mtime_sec;     /* when written: the _metadata's (the archive's, the manifest's) mtime; -1: not known */
	long mtime_nsec;
	uint64_t size;         /* bytes: the _metadata and what it records of each file it names; the archive
				  file; the manifest and its members */
	uint64_t files;        /* files the _metadata names, members the manifest lists */
	int complete;          /* every file named is there with its size (check: and parses, its checksum) */
	char *reason;          /* why it is not complete, one line ("where: what"); NULL when complete */
};

struct ckpt_list_opts {
	int check;                /* also parse each Flink snapshot's state and verify each archive's
				     checksums (what ckpt-inspect -c checks) */
	const char *const *roots; /* OLDPREFIX=DIR maps for Flink state files (ckpt_flink_state_enable) */
	size_t nroots;
};

/*
 * Every snapshot under root (a directory tree, or one snapshot: a _metadata, an archive): a directory
 * holding _metadata (Flink) or MANIFEST.json (ckpt), a chk-N directory without _metadata, a file named
 * .tar, .tar.gz, .tgz or .zip that is ckpt's archive.  Snapshots are not entered; shared/ and
 * taskowned/ beside chk-N are not either; a directory met twice (symbolic links) is entered once.
 * Names are sorted with numbers as numbers (chk-9 before chk-10), depth first.  Snapshots are read
 * in parallel.  *out (n of them; free with ckpt_found_free) or -1: a directory that cannot be
 * read, out of memory.  A snapshot that is damaged is no error: it is not complete, and says why.
 */
int ckpt_snapshot_list(const char *root, const struct ckpt_list_opts *o, struct ckpt_found **out, size_t *n,
		       struct ckpt_err *e);
void ckpt_found_free(struct ckpt_found *f, size_t n);
/*
 * The newest complete one (--latest): 0 and *best its index (n when none is), or -1 on no memory.
 * Checkpoints side by side in one directory are one job's, of which only the highest checkpoint id
 * counts (Flink restores its latest completed checkpoint by id); then, across jobs, savepoints and
 * archives, the latest time written (then the higher id, then the first found).
 */
int ckpt_found_latest(const struct ckpt_found *f, size_t n, size_t *best, struct ckpt_err *e);
/* {"path", "kind", "format", "checkpoint_id", "time" (ISO 8601 UTC), "size", "files", "complete",
 * "reason"}; NULL on no memory. */
json_t *ckpt_found_to_json(const struct ckpt_found *f);

/* ------------------------------------------------------ what no snapshot needs: snap/orphans.c */

/* A file under the directory that no complete checkpoint or savepoint there references. */
struct ckpt_orphan {
	char *path;         /* as found: the directory as named, then the names down to it */
	uint64_t size;
	int64_t mtime_sec;
	long mtime_nsec;
	const char *reason; /* "unreferenced shared file", "aborted checkpoint", ... (static) */
};

struct ckpt_orphans_opts {
	int64_t older_than;       /* seconds: files written since now minus this are kept */
	int64_t now;              /* seconds since the epoch */
	const char *const *roots; /* OLDPREFIX=DIR maps for the files a _metadata names */
	size_t nroots;
};

struct ckpt_orphans {
	struct ckpt_orphan *v; /* sorted by path */
	size_t n;
	uint64_t bytes;        /* of all n */
	uint64_t outside;      /* files a complete _metadata names that are not under the directory */
};

/*
 * ckpt-inspect --orphans (ckpt-inspect(1), ORPHANS, has the rules): every file under dir that no
 * complete _metadata under it names and that may not be in use yet; nothing is deleted.  0 and *out
 * (free with ckpt_orphans_free), or -1 with e set and nothing found: a _metadata that cannot be read
 * whole (where: it), a directory that cannot be listed, a symbolic link loop, out of memory.
 */
int ckpt_snapshot_orphans(const char *dir, const struct ckpt_orphans_opts *o, struct ckpt_orphans *out,
			  struct ckpt_err *e);
void ckpt_orphans_free(struct ckpt_orphans *o);
/* {"path", "size", "mtime" (ISO 8601 UTC), "reason"}; NULL on no memory. */
json_t *ckpt_orphan_to_json(const struct ckpt_orphan *f);

/* ------------------------------------------------------- progress of long work: base/progress.c */

/*
 * Progress of long work: ckpt_archive_verify (bytes of the archive file),
 * ckpt_snapshot_write and ckpt_snapshot_write_with (subtasks written), the
 * event log reader (bytes of its segments), the reading of a Flink snapshot's
 * state files (bytes read: the summary, -c, -a, -R, -d; update may then be
 * called from the reading threads, one at a time) and their copy into a Flink
 * savepoint directory written again (bytes copied).  update gets what is done of the
 * total (0 when unknown) often, every block or subtask: the caller decides
 * what to show and how often; end is called once when that work is over.  The
 * library never prints.  One hook for the process; NULL turns it off.
 */
struct ckpt_progress {
	void (*update)(void *arg, const char *unit, uint64_t done, uint64_t total);
	void (*end)(void *arg);
	void *arg;
};
void ckpt_progress_set(const struct ckpt_progress *p);

/* ------------------------------------------- temporary files on a fatal signal: base/cleanup.c */

/*
 * Removes the temporary files and directories the library has made and not yet renamed into place
 * (a savepoint directory or part file being written, OUT.tmp.XXXXXX, FILE.tmp.XXXXXX).  Only
 * async-signal-safe calls: for the program's handler of SIGINT, SIGTERM and SIGHUP, which then
 * takes the signal's default action.  (The RocksDB reader's directories are removed too: it installs
 * its own handler only for a signal the program left at SIG_DFL.)
 */
void ckpt_cleanup_signal(void);

/* --------------------------------- writing and verifying snapshots: snap/write.c, snap/verify.c */

enum ckpt_archive_kind { CKPT_ARCHIVE_TAR, CKPT_ARCHIVE_TARGZ, CKPT_ARCHIVE_ZIP, CKPT_ARCHIVE_DIR };

/* The kind a path asks for: .tar, .tar.gz (.tgz), .zip, or a trailing '/' for a directory; -1 otherwise. */
int ckpt_archive_kind_of(const char *path);
/* write s as an archive, whole or not at all (the target appears only when complete). */
int ckpt_snapshot_write(struct ckpt_snapshot *s, const char *path, enum ckpt_archive_kind kind,
			struct ckpt_err *e);
/* The same, with each subtask's bytes from fill (0, or -1 with e set) and given back with drop after it
 * is written: the snapshot's own subtasks are loaded and unloaded this way. */
int ckpt_snapshot_write_with(struct ckpt_snapshot *s, const char *path, enum ckpt_archive_kind kind,
			     int (*fill)(void *arg, struct ckpt_operator *op, struct ckpt_subtask *st,
					 struct ckpt_err *e),
			     void (*drop)(void *arg, struct ckpt_subtask *st), void *arg, struct ckpt_err *e);

/*
 * Verify every member of an archive or directory against its manifest, streaming.
 * Each problem (checksum mismatch, size mismatch, truncated, missing, extra or
 * duplicate member, damaged manifest) is passed to report (where: "archive:member")
 * as it is found.  Returns the number of problems, or -1 on an error that stops
 * the verification (also reported through e).  *members and *bytes count what was checked.
 * A member there that cannot be read is a problem too, and the first such leaves e set
 * (CKPT_ERR_IO) beside a count > 0: the check could not answer.
 */
typedef void ckpt_verify_report(void *arg, const char *where, const char *what);
long ckpt_archive_verify(const char *path, ckpt_verify_report *report, void *arg,
			 uint64_t *members, uint64_t *bytes, struct ckpt_err *e);

/* ------------------------------------------------ Flink _metadata: flink/meta.c, base/murmur3.c */

/* does buf start like a Flink _metadata file (magic 0x4960672d, or 1 to 3 bytes of it: a cut one)? */
int ckpt_fmeta_sniff(const void *buf, size_t len);
/* decode a Flink _metadata (format versions 2 to 7) into a snapshot whose subtasks hold
 * handles, not entries; name is used in errors.  Decodes to the last byte or fails. */
struct ckpt_snapshot *ckpt_fmeta_decode(const void *buf, size_t len, const char *name,
					    struct ckpt_err *e);
/* the operator id Flink derives from a uid (murmur3_128, seed 0), as Flink prints it. */
void ckpt_flink_operator_id(const char *uid, size_t len, char out[33]);
/* The first operator of s at or after index from that uid names (its stored uid, the operator id
 * Flink derives from uid, or uid as an id itself): its index, or s->nops when none.  id receives
 * the derived operator id. */
size_t ckpt_snapshot_match_uid(const struct ckpt_snapshot *s, const char *uid, size_t from, char id[33]);

/* ----------------------------- editing Flink savepoints: flink/meta-write.c, redist/savepoint.c */

enum ckpt_flink_edit_kind { CKPT_FLINK_UID, CKPT_FLINK_DROP, CKPT_FLINK_RELOCATE };

/* One edit, as ckpt-merge(1) takes it: --uid FROM=TO, --drop FROM, --relocate FROM=TO. */
struct ckpt_flink_edit {
	enum ckpt_flink_edit_kind kind;
	const char *from; /* a uid or a 32-hex operator id; for RELOCATE a path prefix */
	const char *to;   /* the new uid; for RELOCATE the new prefix; NULL for DROP */
};

/*
 * Encode the _metadata in buf (format versions 3 to 7) again with the edits applied: every byte
 * the edits do not change is kept.  out->p is new (the caller frees it).  When relative is not
 * NULL, the result is a savepoint directory's: a file handle naming a local absolute path (file:/x
 * or /x) that no --relocate moves becomes a relative one of the file's name (carried into the
 * directory), and *relative is a new object of the relative paths the result names, each with the
 * local file to copy (a string) or null (the input's own relative file).  -1 with e set:
 * CKPT_ERR_INPUT for input that does not decode, version 2, two edits of one operator that
 * conflict, two files of one name; CKPT_ERR_REFUSED for an edit naming no operator or path, a new
 * uid or id colliding.
 */
int ckpt_fmeta_rewrite(const void *buf, size_t len, const char *name, const struct ckpt_flink_edit *ed,
			   size_t ned, struct ckpt_bytes *out, json_t **relative, struct ckpt_err *e);

struct ckpt_flink_write_opts {
	const struct ckpt_flink_edit *edits;
	size_t nedits;
	int link;                       /* hard-link the state files (copied across file systems) */
	const struct ckpt_graph *graph; /* first check that the result restores onto it, or NULL */
	int allow_non_restored;         /* with graph: state no operator takes is dropped, not refused */
	uint32_t max_parallelism;       /* not 0: every operator's, its keyed state regrouped (canonical only) */
	uint32_t parallelism;           /* -P N: not 0, each operator with keyed state split into N subtasks */
	const struct ckpt_par *per_op;  /* -P OP=N: that operator's (its id or uid), over parallelism */
	size_t nper_op;
	struct ckpt_flink_rows *rows;   /* not NULL: --rows and --clear (ckpt_flink_rows_write) */
	int canonical;                  /* keyed state of any form written as a canonical savepoint's */
	const struct ckpt_flink_offset_set *offsets; /* --set-offset (ckpt_flink_set_offsets), or NULL */
	size_t noffsets;
	const char *source;             /* with offsets: the source's uid or id (--source), or NULL */
};

/*
 * ckpt-merge --max-parallelism: the _metadata in buf (of the file meta) rewritten (with the edits ed,
 * as ckpt_fmeta_rewrite) with every operator's max parallelism maxp, the keyed state of a
 * canonical savepoint moved to the key groups Flink computes for each key at maxp, one new file a
 * subtask written into dir (its key-group range Flink's), the keyed handles naming them.  Two
 * passes over the state files (the second once per 256 subtasks), memory bounded by maxp x states.  -1 with e set: CKPT_ERR_REFUSED
 * for what it cannot do (a non-canonical form, a key whose hashCode ckpt does not know, a
 * parallelism above maxp), found before any file is written; the errors of reading and writing.
 * maxp 0: each operator keeps its own.  The options are o's (edits, max_parallelism, canonical,
 * parallelism, per_op).  -P (parallelism, per_op): an operator with keyed state is written at its new
 * parallelism, a subtask record each with the key-group range Flink gives it at maxp; refused
 * (CKPT_ERR_REFUSED) when it is above maxp, when the operator holds raw operator state (or operator
 * state in a file-merging segment) beside its keyed state, when -P names no operator (CKPT_ERR_INPUT);
 * its managed operator state is redistributed as Flink's RoundRobinOperatorStateRepartitioner hands
 * it over on a restore at the new parallelism, one new stream a subtask (lib/flink/state/oppar.c);
 * operators without keyed state keep theirs (Flink redistributes their operator state on restore).  canonical (ckpt-merge --canonical): the keyed state of any
 * form ckpt reads (canonical, heap, RocksDB) is taken, heap entries re-framed as a canonical
 * savepoint frames them, and the result is a canonical savepoint's _metadata (its properties those
 * of a canonical savepoint); refused (CKPT_ERR_REFUSED, before anything is written): in-flight data,
 * a changelog handle, a heap state whose serializer ckpt cannot walk.
 */
/* ckpt-merge --set-offset TOPIC:PARTITION=OFFSET: value is the offset (rel 0; Flink's sentinels
 * -2 earliest, -1 latest, -3 committed) or added to the current one (rel 1).  --add-partition
 * TOPIC:PARTITION=OFFSET (kind ADD, rel 0) and --remove-partition TOPIC:PARTITION (kind REMOVE). */
enum ckpt_flink_offset_kind { CKPT_OFFSET_SET, CKPT_OFFSET_ADD, CKPT_OFFSET_REMOVE };
struct ckpt_flink_offset_set {
	const char *topic;
	int32_t partition;
	int64_t value;
	int rel;
	const char *text; /* the option's argument, for messages */
	enum ckpt_flink_offset_kind kind;
};
/*
 * The _metadata in buf rewritten (with the edits ed, as ckpt_fmeta_rewrite) with the Kafka reader
 * split of each set's partition starting at the new offset.  Reader state in a file (a file or
 * relative file handle, read through the _metadata's directory) that changes is written whole into
 * dir as a new file, its handle a relative one naming it.  -1 with e set (CKPT_ERR_INPUT),
 * nothing changed: a partition no reader holds (naming those that exist), no Kafka source, or two
 * without source (a uid or id) or topics held by one alone to choose, a relative offset from a
 * sentinel or below 0, a Kafka source's split ckpt cannot type (naming why), a state file cut or
 * damaged (naming it), and what is not supported yet (reader state in a file-merging segment).  An
 * enumerator state recording splits (versions 0 and 3) has the split set alike.
 * ADD: a split of the partition joins the reader state of the subtask Flink's enumerator assigns it
 * to (KafkaSourceEnumerator.getSplitOwner at the operator's parallelism), the enumerator lists it
 * as assigned; refused when a reader holds it.  REMOVE: the reader's split leaves, the enumerator
 * keeps the partition as assigned (so that its discovery does not read it again); refused when
 * no reader holds it.
 */
int ckpt_flink_set_offsets(const char *meta, const void *buf, size_t len, const struct ckpt_flink_edit *ed,
			   size_t ned, const struct ckpt_flink_offset_set *sets, size_t nsets, const char *source,
			   const char *dir, struct ckpt_bytes *out, json_t **relative, struct ckpt_err *e);

int ckpt_flink_regroup(const char *meta, const void *buf, size_t len, const struct ckpt_flink_write_opts *o,
		       const char *dir, struct ckpt_bytes *out, json_t **relative, struct ckpt_err *e);

/*
 * ckpt-merge --rows: the rows -R prints (NDJSON, blank lines skipped) read from f (name: for
 * messages, "NAME:LINE"), each kept as its text, by operator and state.  NULL with e set: a line
 * that is not JSON or not a row (naming its operator and state), a read error.
 */
struct ckpt_flink_rows;
struct ckpt_flink_rows *ckpt_flink_rows_read(FILE *f, const char *name, struct ckpt_err *e);
/* --clear STATE: the state of that name (keyed or operator state) emptied in every operator holding it. */
int ckpt_flink_rows_clear(struct ckpt_flink_rows *r, const char *state, struct ckpt_err *e);
void ckpt_flink_rows_free(struct ckpt_flink_rows *r);
/*
 * The _metadata in buf rewritten (as ckpt_flink_regroup, every max parallelism kept) with each keyed
 * state the rows name holding exactly their entries, encoded by the state's serializers at the key
 * group Flink computes for each key, the cleared states empty, every other state as it was; the
 * new keyed state files of the operators the rows touch written into dir.  Rows of a keyed value
 * ckpt cannot write are taken when they equal the state's own rows (the state kept as it is).  Each
 * operator state the rows name holds per subtask exactly the rows naming that subtask (a list's
 * elements in their order, a broadcast state's entries, the same on every subtask), a value ckpt
 * cannot write taken as one of the state's own; each operator state handle that so changes written
 * anew into dir (or inline, where it was), its offsets and modes in the _metadata.  -1 with e set
 * before any file is written: CKPT_ERR_INPUT naming "NAME:LINE" for a row that names no operator or
 * state, a value or key that does not fit its serializer, a subtask that holds no such operator
 * state; CKPT_ERR_REFUSED for keyed state of a non-canonical snapshot, operator state in a
 * file-merging segment.
 */
int ckpt_flink_rows_write(const char *meta, const void *buf, size_t len, const struct ckpt_flink_write_opts *o,
			  const char *dir, struct ckpt_bytes *out, json_t **relative, struct ckpt_err *e);

/*
 * Write the savepoint directory outdir from the Flink snapshot in (a directory holding _metadata, or
 * the file): the edited _metadata and the files its relative handles name, whole or not at all
 * (built in a temporary directory beside outdir, renamed at the end).  outdir must not exist nor lie
 * in the input's directory.  -1 with e set (nothing written): the errors of ckpt_fmeta_rewrite,
 * CKPT_ERR_REFUSED for state the graph would not restore, CKPT_ERR_INPUT or CKPT_ERR_IO else.
 */
int ckpt_flink_savepoint_write(const char *in, const char *outdir, const struct ckpt_flink_write_opts *o,
			       struct ckpt_err *e);

/* ----------------------------------------------------------- Flink state files: flink/state-*.c */

/*
 * Read the state a Flink snapshot's handles point to (ckpt-flink(5), STATE FILES) when its
 * subtasks are loaded: operator state, and keyed state of canonical savepoints and heap snapshots;
 * files named relative to the _metadata's directory, absolute local paths, or under a prefix
 * mapped by a root "OLDPREFIX=DIR".  -1 when s is not a Flink snapshot.
 */
int ckpt_flink_state_enable(struct ckpt_snapshot *s, const char *const *roots, size_t nroots,
			    struct ckpt_err *e);
/* The state document (ckpt_snapshot_print) of a Flink snapshot prints each entry typed where its
 * serializers are known, its raw bytes and the serializer that stops the typing where not; raw set:
 * the raw bytes of every entry, the typed form beside them (--raw).  0 when s is not a Flink snapshot. */
int ckpt_flink_state_raw(struct ckpt_snapshot *s, int raw);
/* Per operator id: its states (scope, kind or mode, serializer classes, entries and bytes, per key
 * group too) and the files of state ckpt does not read (RocksDB SST, changelog); reads every state. */
json_t *ckpt_flink_state_summary(struct ckpt_snapshot *s, struct ckpt_err *e);
/* The files the _metadata names that are not there (local paths, or the path as named when it
 * is not local and no root maps it), in the _metadata's order: a new array, empty when none. */
json_t *ckpt_flink_state_missing(struct ckpt_snapshot *s, struct ckpt_err *e);
/* -c for a Flink snapshot: every file the _metadata names is there with its recorded size, and the
 * state ckpt reads parses to its end.  Each problem goes to report (where: the file); returns the
 * number of problems, or -1 on an error that stops the check.  *files and *bytes count what was checked.
 * A file there that cannot be read (other than absent) is a problem, and leaves e set (CKPT_ERR_IO). */
long ckpt_flink_state_verify(struct ckpt_snapshot *s, ckpt_verify_report *report, void *arg,
			     uint64_t *files, uint64_t *bytes, struct ckpt_err *e);
/* The first half of ckpt_flink_state_verify alone: every file the _metadata names is there with its
 * recorded size (nothing is read).  Problems, counts and return as there. */
long ckpt_flink_state_files(struct ckpt_snapshot *s, ckpt_verify_report *report, void *arg,
			    uint64_t *files, uint64_t *bytes, struct ckpt_err *e);
/* What a Flink snapshot's state reads are narrowed to (ckpt-inspect --uid, --state, -k): operators
 * named by uid, by operator id, or by the id Flink derives from a uid (none named: every one); one
 * state by name (NULL: every one); one key (NULL: every one), JSON typed by the key serializer, whose
 * key group (murmur3 of its Java hashCode, modulo the max parallelism) is the only one read. */
struct ckpt_flink_select {
	const char *const *uids;
	size_t nuids;
	const char *state;
	const json_t *key;
	const char *key_text; /* the key as the user wrote it, for messages */
	/* the caller keeps what -a and -R print (ckpt_snapshot_print, ckpt_snapshot_rows) until they
	 * return and drops it when they fail: the state is then read once, without the check pass
	 * that otherwise keeps a damaged file from printing anything (-k: one key's entries, small) */
	int buffered;
};
/* Narrow every later read of s's state (summary, -a, rows, check) to sel.  A key that does not fit
 * the key serializer, or whose serializer ckpt cannot write, fails the read that meets it
 * (CKPT_ERR_INPUT, naming the key and the serializer).  0, or -1 with e set. */
int ckpt_flink_state_select(struct ckpt_snapshot *s, const struct ckpt_flink_select *sel, struct ckpt_err *e);
/* After reads narrowed by --state: 0 when state files of the operators were read and none holds that
 * state, with the states they do hold, sorted, ", " between, in names (cut to size); else 1. */
int ckpt_flink_state_found(struct ckpt_snapshot *s, char *names, size_t size);
/* ckpt-inspect --offsets: one NDJSON row a split or partition of every source operator of a Flink
 * snapshot whose state is enabled, to f (its readers' SourceReaderState, then what the enumerator
 * holds that no reader does); only operator state and coordinator state are read. */
int ckpt_flink_offsets(struct ckpt_snapshot *s, FILE *f, struct ckpt_err *e);
/* --keep-going: a subtask whose state files cannot be read is left out of -a (its subtask there
 * with "unread": why), -R and -d (its operator, under -d), and said to skip (where: "operator ID
 * [(uid U)] subtask N", what: the error), instead of stopping the read with an error. */
void ckpt_flink_state_keep_going(struct ckpt_snapshot *s, ckpt_verify_report *skip, void *arg);
/* --shards N: a Flink snapshot's state (enabled) split into n shards that read apart, a new array
 * of n descriptors ({"shard", "shards", "checkpoint", "bytes", "parts": [{"operator", "uid",
 * "subtask", "state": "operator" or "keyed", "key_groups", "bytes", "files"}], "over"}): every byte
 * of state in one shard, balanced by bytes (largest first to the shard holding least); keyed state
 * with per-key-group offsets split by key-group range, other keyed handles whole, operator state by
 * subtask.  A shard over 1.25 times the mean says why in "over" and, the first, in note (NULL: not
 * wanted; "" when none is).  NULL with e set on no memory or not a Flink snapshot. */
json_t *ckpt_flink_shards(struct ckpt_snapshot *s, unsigned n, char *note, size_t notesize, struct ckpt_err *e);
/* -R --shard: the rows of one shard to f (desc: a descriptor as ckpt_flink_shards gives it, as JSON
 * text, or "I/N": shard I of n), only its bytes read; the union of a plan's shards' rows is -R's.
 * 0, or -1 with e set (a descriptor that does not fit s: CKPT_ERR_INPUT, before any row). */
int ckpt_flink_shard_rows(struct ckpt_snapshot *s, const char *desc, FILE *f, struct ckpt_err *e);
/* -R --shard -o OUT: the shard's rows into OUT/part-NNNNN.ndjson (NNNNN its number; ".gz" or ".zst"
 * after it and compressed so when compress is "gz" or "zst"), OUT a directory or s3://bucket/prefix;
 * written whole or not at all (a temporary file renamed, or uploaded once complete).  The name
 * written into name (n bytes).  0, or -1 with e set. */
int ckpt_flink_shard_write(struct ckpt_snapshot *s, const char *desc, const char *out, const char *compress,
			   char *name, size_t n, struct ckpt_err *e);
/* Bytes this process read from Flink state files so far (not the _metadata, not RocksDB's). */
uint64_t ckpt_flink_state_bytes_read(void);
/* The directories local state files (RocksDB's too) were read from since the last call, joined by
 * ", " into out (cut at n bytes; " and N more" past the first 8); how many. */
size_t ckpt_flink_state_read_dirs(char *out, size_t n);
/* Bytes this process fetched from S3 so far (the _metadata, ranges read ahead and RocksDB's files
 * included): what reading a snapshot there cost. */
uint64_t ckpt_s3_fetched(void);
/* Entries added, removed and changed from Flink snapshot a to b, by operator, state and key group
 * (narrowed as ckpt_flink_state_select narrows each).  The timers of processing-time timer states
 * are compared by key and namespace: their timestamps changed are counted apart, in timers (the
 * same shape, by operator and state), and not in differ (set to 1 when anything else differs).
 * With rows, each entry added, removed or changed is written there too, as -R's row with "change"
 * ("added", "removed", "changed" with "old" and "new" for "value", "timestamp" for a timer). */
struct ckpt_flink_diff {
	int differ;
	json_t *timers; /* set by ckpt_flink_state_diff: the caller's */
	json_t *unread; /* set too, the caller's: the ids of the operators --keep-going left out */
	FILE *rows;     /* NULL: no rows */
};
json_t *ckpt_flink_state_diff(struct ckpt_snapshot *a, struct ckpt_snapshot *b, struct ckpt_flink_diff *d,
			      struct ckpt_err *e);

/* ------------------------------------------------- job event logs: evlog/evlog.c, evlog/parse.c */

/*
 * The job event log (ckpt-events(5), FLIP-383): a directory of segments
 * events.0, events.1, ... read in order while contiguous.  A record is,
 * big-endian: u32 payload length, u32 type, u64 XXH3-64 of the payload, then
 * the payload, a UTF-8 JSON object.
 */
enum ckpt_event_type {
	CKPT_EVENT_VERTEX_FINISHED = 1,    /* {vertex, subtask, attempt, partitions?, metrics?, snapshots?} */
	CKPT_EVENT_VERTICES_RESET = 2,     /* {subtasks: [{vertex, subtask}]} */
	CKPT_EVENT_VERTEX_INITIALIZED = 3, /* {vertex, parallelism, inputs?} */
};

#define CKPT_EVENT_HEADER 16               /* bytes before the payload */
#define CKPT_EVENT_PAYLOAD_LIMIT (64u << 20) /* larger payloads are refused as corruption */
#define CKPT_EVENT_BUFFER (1u << 20)       /* the writer's buffer (Flink's write-buffer.size) */

struct ckpt_event_task {
	const char *vertex;
	uint32_t subtask;
};

struct ckpt_event_input {
	const char *vertex;
	enum ckpt_distribution distribution; /* default all_to_all */
	enum ckpt_partition partition;       /* default blocking: the log is written by batch jobs */
};

/* One record, decoded.  Every pointer is valid until the next record is read. */
struct ckpt_event {
	uint32_t type;
	uint32_t segment;              /* N of events.N */
	uint64_t offset;               /* byte offset of the record in its segment */
	const unsigned char *payload;  /* the payload as stored (len bytes, not NUL-terminated) */
	size_t len;
	const char *vertex;            /* finished, initialized */
	uint32_t subtask, attempt;     /* finished */
	uint32_t parallelism;          /* initialized */
	const char *snapshots;         /* finished: the "snapshots" object's text, NULL when absent or null */
	size_t snapshots_len;
	struct ckpt_event_task *tasks; /* reset */
	size_t ntasks;
	struct ckpt_event_input *inputs; /* initialized */
	size_t ninputs;
};

/* Print ev as one NDJSON event line, {"type": NAME, "payload": ...} with the payload's white space
 * outside strings dropped (a stored payload may hold newlines); -1 on a write error. */
int ckpt_event_print(FILE *f, const struct ckpt_event *ev);

/*
 * Payload checking and NDJSON event lines ({"type": NAME or id, "payload": {...}}),
 * without building a JSON tree, so that a million records take well under a
 * second (lib/evlog/parse.c).
 */
struct ckpt_evparser;
struct ckpt_evparser *ckpt_evparser_new(struct ckpt_err *e);
void ckpt_evparser_free(struct ckpt_evparser *p);
/*
 * Parse one NDJSON event line: ev is decoded and ev->payload/len is the payload
 * with insignificant white space removed (owned by p).  Errors as above.
 */
int ckpt_evparser_line(struct ckpt_evparser *p, const char *line, size_t len, struct ckpt_event *ev,
		       const char **at, struct ckpt_err *e);

/*
 * The writer.  A session writes new segments only (the first one numbered
 * after the last existing segment) and never touches old ones.  Flush and
 * fsync policy: records are buffered (CKPT_EVENT_BUFFER); the buffer is
 * written when full, when an append comes a second or more after the last
 * write, and at ckpt_evwriter_flush; fsync happens at ckpt_evwriter_flush
 * with sync set, at ckpt_evwriter_cut and at ckpt_evwriter_close.  Only whole
 * records are buffered, and a failed write truncates the segment back to its
 * last whole record and stops the writer: every later call fails.
 */
struct ckpt_evwriter;
enum {
	CKPT_EVW_WHOLE = 1,    /* a segment appears (under its name) only when complete: cut or close */
	CKPT_EVW_CUT_TORN = 2, /* cut a torn tail off the last segment instead of refusing to write */
};
/*
 * Open a session on dir (created when missing).  Refuses (CKPT_ERR_REFUSED)
 * a log with a gap in its segment numbers or, without CKPT_EVW_CUT_TORN,
 * one whose last segment ends in a torn record.  NULL on error.
 */
struct ckpt_evwriter *ckpt_evwriter_open(const char *dir, unsigned flags, struct ckpt_err *e);
/* Append one record; payload must be a JSON object's text (not checked here). */
int ckpt_evwriter_append(struct ckpt_evwriter *w, uint32_t type, const void *payload, size_t len,
			 struct ckpt_err *e);
/* Cut, close and free w (NULL is fine); -1 if anything failed, w is freed anyway. */
int ckpt_evwriter_close(struct ckpt_evwriter *w, struct ckpt_err *e);
/* Free w without writing what is buffered; with CKPT_EVW_WHOLE the unfinished segment is removed. */
void ckpt_evwriter_abort(struct ckpt_evwriter *w);

/* What reading a log found. */
struct ckpt_evlog_stats {
	uint32_t segments;      /* contiguous segments read */
	uint64_t records;       /* whole records read */
	uint64_t torn_bytes;    /* bytes of the torn record at the end of the last segment */
	uint64_t torn_offset;   /* where it starts (valid when torn_bytes > 0) */
	uint32_t torn_segment;  /* in which segment (valid when torn_bytes > 0) */
	uint32_t torn_tails;    /* records cut short: at most 1 in ckpt's format, one a segment in Flink's */
	int flink;              /* the log is Flink's (FileSystemJobEventStore), not ckpt-events(5) */
	uint32_t ignored;       /* events.N files after a gap, not read */
	uint32_t gap;           /* the first missing segment number (valid when ignored > 0) */
};

/*
 * The reader: records in order, each checked (length, checksum, type,
 * payload).  A record cut short at the end of the last segment is a torn
 * write: not returned, counted in the stats.  Anything else wrong is
 * corruption: CKPT_ERR_REFUSED, where "dir/events.N", text "offset X: ...".
 * Memory is bounded by the largest record, not by the log.
 */
struct ckpt_evreader;
/* NULL on error (a missing directory is an error; an empty one is an empty log). */
struct ckpt_evreader *ckpt_evreader_open(const char *dir, struct ckpt_err *e);
/* 1 and ev filled, 0 at the end of the log, -1 on error. */
int ckpt_evreader_next(struct ckpt_evreader *r, struct ckpt_event *ev, struct ckpt_err *e);
const struct ckpt_evlog_stats *ckpt_evreader_stats(const struct ckpt_evreader *r);
void ckpt_evreader_free(struct ckpt_evreader *r);

/*
 * Copy the log in dir to the new directory out, whole or not at all, with a
 * torn tail cut off; out must not exist.  st (may be NULL) receives what was read.
 */
int ckpt_evlog_copy(const char *dir, const char *out, struct ckpt_evlog_stats *st, struct ckpt_err *e);

/* ------------------------------------------------ recovery plans: evlog/replay.c, evlog/reset.c */

struct ckpt_replay_opts {
	/* The job graph, or NULL to build it from the log's vertex_initialized records. */
	const struct ckpt_graph *graph;
	/* A JSON array of available partition ids "vertex:subtask", or NULL: all available. */
	const struct ckpt_jdoc *available;
};

/* A vertex the log initialized, as recovery leaves it. */
struct ckpt_replay_vertex {
	char *id;
	size_t graph_index;       /* index in ckpt_replay.graph */
	uint32_t parallelism;     /* decided parallelism, from the log */
	struct ckpt_bits finished; /* restored as FINISHED; the others are reset */
	uint32_t *attempt;        /* attempt number of each finished subtask; NULL when none finished */
	int unrecovered;          /* fully finished with a coordinator that cannot snapshot in batch:
				     a later restart of any subtask restarts all */
};

struct ckpt_replay_coordinator {
	char *op;
	size_t vertex;            /* index in ckpt_replay.v */
	json_t *state;            /* the entry (owned) */
};

/* The recovery plan of ckpt-replay(1). */
struct ckpt_replay {
	struct ckpt_replay_vertex *v; /* in the order the log initialized them */
	size_t nv;
	struct ckpt_replay_coordinator *coord;
	size_t ncoord;
	json_t *shuffle;              /* array of {incremental, state} in restore order (owned) */
	struct ckpt_task_ref *lost;   /* lost partitions that caused a reset (vertex: index in v) */
	size_t nlost;
	struct ckpt_evlog_stats log;
	uint64_t dropped_tail_events;
	struct ckpt_graph *graph;     /* the graph replay used (owned) */
};

/*
 * replay the log in dir and compute the recovery plan.
 * 0 and out filled, or -1 (corruption is CKPT_ERR_REFUSED).  Memory grows
 * with the subtasks the finished records name, plus a few bits per claimed
 * subtask (a word per subtask only when an edge is pipelined).
 */
int ckpt_replay_run(const char *dir, const struct ckpt_replay_opts *o, struct ckpt_replay *out,
		    struct ckpt_err *e);
/* the plan as ckpt-replay prints it; NULL on allocation failure. */
json_t *ckpt_replay_to_json(const struct ckpt_replay *r);
void ckpt_replay_release(struct ckpt_replay *r);

/* --------------------------- redistribution: redist/redist.c, redist/restore.c, redist/assign.c */

/*
 * Redistribution of a snapshot onto new parallelism or a new job graph, as
 * Flink assigns state on restore (RoundRobinOperatorStateRepartitioner,
 * key-group ranges, FLIP-147 finished state).  The plan is computed from
 * counts alone; entries then move one new subtask at a time, loading one old
 * subtask at a time, so memory is bounded by a few members, not the snapshot.
 * (redist/redist.c; redist/restore.c restores onto a job graph, redist/assign.c prints the plan.)
 */

/* -P OP=N: op names an operator by id or uid. */
struct ckpt_par {
	const char *op;
	uint32_t n;
};

struct ckpt_redist_opts {
	const char *name;               /* the input as messages name it */
	uint32_t parallelism;           /* -P N: every operator not named; 0 keeps each one's */
	const struct ckpt_par *per_op;  /* -P OP=N, applied to the operator's whole vertex */
	size_t nper_op;
	const struct ckpt_graph *graph; /* -g: restore onto this job graph, or NULL */
	int allow_non_restored;         /* -n: drop state no operator of the graph takes */
	const char *reopen;             /* the input's path, so that an archive can be read by a few
					   readers, each going forward only; NULL for standard input */
};

struct ckpt_redist;

/*
 * Plan the redistribution of s, which must outlive the plan.  NULL on error:
 * CKPT_ERR_REFUSED (exit 1) for what Flink refuses, with its words; CKPT_ERR_INPUT
 * for inconsistent input or an unknown operator named by -P.
 */
struct ckpt_redist *ckpt_redist_plan(struct ckpt_snapshot *s, const struct ckpt_redist_opts *o,
				     struct ckpt_err *e);
/* The redistributed snapshot, owned by the plan: operators and the subtasks that will hold
 * something, with entries not loaded (counts of keyed entries are known only once filled). */
struct ckpt_snapshot *ckpt_redist_snapshot(struct ckpt_redist *r);
/* Fill the entries of subtask st of operator op of ckpt_redist_snapshot(r), loading the old
 * subtasks it takes from one at a time; ckpt_redist_release frees them again.  -1 on error. */
int ckpt_redist_fill(struct ckpt_redist *r, const struct ckpt_operator *op, struct ckpt_subtask *st,
		     struct ckpt_err *e);
void ckpt_redist_release(struct ckpt_subtask *st);
/* Fill every subtask (for printing a whole document). */
int ckpt_redist_fill_all(struct ckpt_redist *r, struct ckpt_err *e);
/* The assignment itself: per new subtask, which old subtasks (and their handles, for a Flink
 * _metadata), which list elements, union and broadcast copies and key groups.  NULL on no memory. */
json_t *ckpt_redist_to_json(const struct ckpt_redist *r, struct ckpt_err *e);
/* The i-th warning of the plan (state Flink's restore drops silently, which ckpt-merge names), or
 * NULL past the last; owned by the plan. */
const char *ckpt_redist_warning(const struct ckpt_redist *r, size_t i);
void ckpt_redist_free(struct ckpt_redist *r);

/* ---------------------------------------------------------- the engine of ckpt-run: lib/engine/ */

/* A pipeline (ckpt-pipeline(5)): vertices with built-in operators, edges, settings. */
struct ckpt_pipeline;

/* Load and validate a pipeline file (path "-" or NULL: stdin); errors name file:line:col. */
struct ckpt_pipeline *ckpt_pipeline_load(const char *path, struct ckpt_err *e);
void ckpt_pipeline_free(struct ckpt_pipeline *p);

struct ckpt_run_opts {
	const char *restore;     /* -r: start from this snapshot, or NULL */
	int allow_non_restored;  /* -a: drop state that no operator of the pipeline takes */
	const char *dir;         /* overrides the pipeline's checkpoint directory, or NULL */
	const char *savepoint;   /* where the stop savepoint goes, or NULL (the checkpoint directory) */
	int64_t stop_after_ms;   /* stop with a savepoint after this long (0: never) */
	int64_t stop_after_cps;  /* stop with a savepoint after this many completed checkpoints (0: never) */
	int drain;               /* the stop drains (MAX_WATERMARK, finish) */
	const char *log;         /* batch mode: the job event log directory, or NULL (the pipeline's) */
	int recover;             /* batch mode: -R: recover from the log instead of starting afresh */
	const char *partitions;  /* batch mode: the blocking partitions' directory, or NULL (the pipeline's) */
	volatile int *stop;      /* changed asynchronously (SIGTERM): each change asks to stop with a savepoint */
	volatile int *cancel;    /* set asynchronously (SIGINT): cancel the job */
	/* Called for every event, one at a time, from engine threads; the event is borrowed. */
	void (*event)(void *arg, const json_t *ev);
	void *arg;
	/* When set, every archive written is read back whole and compared with the snapshot meant;
	 * when they differ, called with why ("ARCHIVE: reads back other than written", or what reading
	 * it back found) before the snapshot is reported complete; if it returns, the checkpoint fails. */
	void (*unverified)(void *arg, const char *why);
};

/*
 * Run the pipeline to its end.  0 when the job finished (or was stopped with a
 * savepoint); -1 with e set when it failed (CKPT_ERR_REFUSED: the job failed,
 * e.g. the restart limit was reached, was cancelled, or finished without the
 * savepoint a stop asked for; other kinds: it could not run).
 */
int ckpt_pipeline_run(struct ckpt_pipeline *p, const struct ckpt_run_opts *o, struct ckpt_err *e);

#endif
