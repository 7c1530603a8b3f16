/* readers.h: the state readers' own types and functions, shared by the files of lib/flink/state/
 * (the headers of a serialization proxy, the sinks entries go to, a reader's context); the floors
 * and layers above see only state.h. */
#ifndef CKPT_FLINK_READERS_H
#define CKPT_FLINK_READERS_H

#include <pthread.h>

#include "state.h"

/* The backing of a snapshot read from a Flink _metadata: where relative files are, the --root maps. */
struct ckpt_fstate_backing_data {
	struct ckpt_model_backing base;
	char *meta;   /* the _metadata as the user named it */
	char *dir;    /* its directory; NULL when it came from standard input */
	char **from, **to;
	size_t nroots;
	int raw;      /* -a: the raw bytes of every entry beside its typed form (ckpt_flink_state_raw) */
	struct ckpt_fselect *sel; /* --uid, --state, -k (ckpt_flink_state_select, select.c); NULL: everything */
	ckpt_verify_report *skip; /* --keep-going (ckpt_flink_state_keep_going): NULL, the first error stops */
	void *skip_arg;
	struct { const struct ckpt_subtask *st; char *why; } *skipped; /* left out, each with why */
	size_t nskipped, skipcap;
	int checked;  /* read through once: what is skipped is known */
};

/* One state of a serialization proxy's header (StateMetaInfoSnapshot). */
struct ckpt_fstate_meta {
	char *name;
	int32_t type;  /* BackendStateType: 0 key-value, 1 operator, 2 broadcast, 3 priority queue, 4 key-value v2 */
	char *kind;    /* KEYED_STATE_TYPE lower case, "timers" for priority queues */
	char *mode;    /* OPERATOR_STATE_DISTRIBUTION_MODE */
	struct ckpt_fser *key, *ns, *value;
	struct ckpt_fser *ukey; /* KEY_VALUE_V2 map state: the user key's (value: the user value's) until wrapped */
	json_t *serializers; /* option name -> class tree */
	signed char typable;  /* ckpt_fstate_typable()'s answer once asked: 0 not yet, 1 yes, -1 no */
	char kindc;           /* set with typable: kind 't'imers, 'm'ap, 'l'ist, or 0 */
	char ambiguous;       /* set with typable: key and namespace of variable length, each with a length suffix */
	uint64_t at, end;     /* where its meta info snapshot lies in its source */
};

struct ckpt_fstate_header {
	int32_t version;
	int compressed;
	struct ckpt_fser *key; /* keyed: the key serializer */
	struct ckpt_fstate_meta *m;
	size_t n, nlist;       /* operator: the first nlist states are list/union, the rest broadcast */
	size_t cap;            /* room in m (ckpt_grow) */
	int stopped;
	char stop[600];        /* why the header was not read to its end */
	uint64_t end;
};

/* The typed form of the key-value entry a sink is given: decoded when the sink asks for it
 * (ckpt_fstate_typed_emit), into a jansson value, straight into the document, or nowhere (only checked); the
 * reader checks it itself when the sink did not ask. */
struct ckpt_fstate_typed {
	struct ckpt_fstate_ctx *c;
	const struct ckpt_fstate_header *h;
	const struct ckpt_fstate_meta *m;
	const unsigned char *k, *v;
	size_t kn, vn;
	uint64_t at;
	uint32_t kg;
	json_t *ready; /* decoded already (the loader's values) */
	int heap;      /* the heap layout: the value whole (a map or list in one), no user key */
	int rocks;     /* from a RocksDB database: no offset (at is 0) */
	int done;
};

/* Where entries go: the loader keeps them, the summary and -c count them.  typed is given away. */
struct ckpt_fstate_sink {
	int (*header)(void *arg, const char *scope, const struct ckpt_fstate_header *h);
	int (*op)(void *arg, const char *state, size_t idx, const unsigned char *p, size_t n, json_t *typed);
	int (*kv)(void *arg, const char *state, uint32_t kg, const unsigned char *k, size_t kn,
		  const unsigned char *v, size_t vn, struct ckpt_fstate_typed *typed); /* typed NULL: none */
	/* the summary: a state whose entries ckpt cannot read (no lengths and a serializer ckpt cannot
	 * walk; a changelog's state it does not read) is passed over, its entries (n; -1 when not
	 * known) in key group kg (-1: operator state, or not known) said here with why (state NULL:
	 * states the header does not name may follow); without it such a state is refused */
	int (*skip)(void *arg, const char *state, long kg, long n, const char *why);
	/* with skip: heap key group kg read only up to a state passed over, ids[0, n) the states
	 * found in it; the entries there of every other keyed state are not known */
	int (*cut)(void *arg, const struct ckpt_fstate_header *h, uint32_t kg, const int16_t *ids, size_t n);
	void *arg;
	int untyped; /* skip decoding values where the layout does not need it (counting only) */
	int layout;  /* with untyped: heap-layout entries still come with their ftyped (heap set), unchecked */
	int part;    /* 0 every handle; 1 operator state handles only; 2 keyed state handles only */
	const char *only; /* give (and decode) only this state's elements (operator state), entries (RocksDB:
			   * its column family alone opened and read) */
	uint32_t kg_lo, kg_hi; /* keyed state: only key groups in [kg_lo, kg_hi) when kg_hi > 0 */
	/* keyed state: only the entries whose key (after its key-group prefix) begins with key[0, keyn),
	 * when key is set (-k): what can seek (RocksDB) reads those alone; timers (key after the timestamp) all */
	const unsigned char *key;
	size_t keyn;
};

/* Is key group kg outside the sink's window? */
static inline int
kg_skipped(const struct ckpt_fstate_sink *k, uint32_t kg)
{
	return k->kg_hi > 0 && (kg < k->kg_lo || kg >= k->kg_hi);
}

struct ckpt_fstate_ctx {
	struct ckpt_fstate_backing_data *b;
	const struct ckpt_operator *op;
	const struct ckpt_subtask *st;
	const struct ckpt_handle *h;
	const struct ckpt_fstate_sink *k;
	struct ckpt_err *e;
	char where[1024];
	unsigned prefix; /* key-group prefix bytes */
	struct ckpt_fstate_heapbuf *heap; /* read_heap's entry buffers, reused */
	struct ckpt_frocks_db *rdb; /* the RocksDB database being scanned, column family rcf (else NULL) */
	size_t rcf;
};

struct ckpt_fstate_heapbuf {
	unsigned char *key, *ns, *val;
	size_t kcap, ncap, vcap;
};

/* A key group's offset in a keyed state file (read_canonical, -d's key group sizes sort them). */
struct ckpt_fstate_kgoff {
	uint64_t off;
	uint32_t kg;
};

/* ------------------------------------------------------------ sources.c */

/* Is state (its element serializer value) a source operator's SourceReaderState? */
int ckpt_fstate_is_split(const char *state, const struct ckpt_fser *value);
/* Its element idx, p[0, n) at offset at (the bytes of its byte[]), typed as a split into *typed
 * (replaced; {"connector": null, "reason", "bytes"} when none parses): -1 with the operator,
 * subtask, element and offset named when its framing is broken. */
int ckpt_fstate_split(struct ckpt_fstate_ctx *c, size_t idx, const unsigned char *p, size_t n, uint64_t at, json_t **typed);
/* Which state of a connector before the Source API, or of a sink, name is (FLEGACY_*, the sinks'
 * only when their elements are byte[]), 0 when none. */
int ckpt_fstate_legacy_kind(const char *name, const struct ckpt_fser *value);
/* Its element idx typed into *typed (replaced; {"connector": null, "reason", "bytes"} when none
 * parses): p[0, n) at at the consumer's or FlinkKafkaProducer's element, or the bytes of a sink's
 * byte[]; -1 with the operator, subtask, element and offset named when a sink's framing is broken
 * or the producer's element does not parse. */
int ckpt_fstate_legacy(struct ckpt_fstate_ctx *c, int kind, const char *name, size_t idx, const unsigned char *p, size_t n, uint64_t at,
		       json_t **typed);
/* The backing's hook typing a source's coordinator state in -a. */
void ckpt_fstate_sources_init(struct ckpt_fstate_backing_data *b);

/* ------------------------------------------------------------ state-meta.c */

/* One StateMetaInfoSnapshot into h (meta-info versions 6 and 7). */
int ckpt_fstate_read_meta(struct ckpt_fsrc *s, struct ckpt_fstate_header *h);
/* A new state at the end of h, zeroed but for its serializers object (NULL when out of memory). */
struct ckpt_fstate_meta *ckpt_fstate_meta_add(struct ckpt_fsrc *s, struct ckpt_fstate_header *h);
/* Fails when the last state of h has the name of one before it. */
int ckpt_fstate_meta_unique(struct ckpt_fsrc *s, const struct ckpt_fstate_header *h);
/* A meta info's options map (i32 count, UTF pairs): the state kind and distribution mode into m. */
int ckpt_fstate_read_options(struct ckpt_fsrc *s, struct ckpt_fstate_meta *m);
/* A Java boolean into *v, failing on any byte but 0 and 1. */
int ckpt_fstate_read_flag(struct ckpt_fsrc *s, int *v, const char *what);
/* The header stops here, h->stop saying why: returns 1. */
int ckpt_fstate_header_stop(struct ckpt_fstate_header *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ckpt_fstate_header_release(struct ckpt_fstate_header *h);
/* An i32 count into *n, failing outside 0 to max. */
int ckpt_fstate_read_count(struct ckpt_fsrc *s, int32_t *n, int32_t max, const char *what);
/* The state of h named name (NULL: none), and its kind as the summary and rows name it. */
const struct ckpt_fstate_meta *ckpt_fstate_meta_named(const struct ckpt_fstate_header *h, const char *name);
const char *ckpt_fstate_meta_kind(const struct ckpt_fstate_meta *m);

/* ------------------------------------------------------------ state-header.c */

/* The operator and the keyed serialization proxy of s from its start; 1 when the header stops early
 * (h->stop says why). */
int ckpt_fstate_op_header(struct ckpt_fsrc *s, struct ckpt_fstate_header *h);
int ckpt_fstate_read_keyed_header(struct ckpt_fsrc *s, struct ckpt_fstate_header *h);
int ckpt_fstate_keyed_header(struct ckpt_fstate_ctx *c, struct ckpt_fstate_header *h);        /* the header of c->h's keyed stream */

/* ------------------------------------------------------------ state-locate.c */

/* The local path of a file the _metadata names (kind: file, relative_file, segment_file). */
int ckpt_fstate_local_path(struct ckpt_fstate_ctx *c, const char *kind, const char *p, char *out, size_t n);
/* Open the bytes of handle c->h's delegate: *fd >= 0 for a file (close it), -1 inline. */
int ckpt_fstate_open_bytes(struct ckpt_fstate_ctx *c, struct ckpt_fsrc *s, int *fd);

/* ------------------------------------------------------------ state-read.c */

/* Which handles hold state ckpt reads: 1 operator (managed), 2 raw operator, 3 keyed, 4 RocksDB
 * (incremental), 5 keyed in a changelog, 0 none. */
int ckpt_fstate_handle_role(const struct ckpt_handle *h);
/* Every handle of st that k wants (k->part), to k. */
int ckpt_fstate_read_subtask(struct ckpt_fstate_backing_data *b, const struct ckpt_operator *op, const struct ckpt_subtask *st,
			     const struct ckpt_fstate_sink *k, struct ckpt_err *e);

/* ------------------------------------------------------------ state-old.c */

/* The rest of an operator serialization proxy of versions 1 to 4 (Flink 1.2 to 1.6) and of a keyed
 * one of versions 1 to 5, after the version h->version: as ckpt_fstate_op_header. */
int ckpt_fstate_old_op_header(struct ckpt_fsrc *s, struct ckpt_fstate_header *h);
int ckpt_fstate_old_keyed_header(struct ckpt_fsrc *s, struct ckpt_fstate_header *h);

/* ------------------------------------------------------------ state-op.c */

/* c->h's operator state (managed: with its serialization proxy; raw: bytes only), to c->k. */
int ckpt_fstate_read_operator(struct ckpt_fstate_ctx *c, int managed);

/* ------------------------------------------------------------ state-typed.c */

int ckpt_fstate_nomem(struct ckpt_fstate_ctx *c); /* "out of memory" at c->where: -1 */
/* Can entries of m be typed?  Asked once a state (an entry's question, in the hot loop). */
int ckpt_fstate_typable(const struct ckpt_fstate_header *h, struct ckpt_fstate_meta *m);
/* What a sink calls to have the typed form: into o (FOUT_JSON's root, the document, or nowhere). */
int ckpt_fstate_typed_emit(struct ckpt_fstate_typed *t, struct ckpt_fout *o);
/* The typed form as a new jansson value (*v NULL when there is none). */
int ckpt_fstate_typed_json(struct ckpt_fstate_typed *t, json_t **v);
/* A key's hashCode against the key group it is stored in: 0, or -1 with c->e set naming the file,
 * the offset at, state and both key groups; in a RocksDB database (k the entry's key), the table file
 * and the key, RocksDB saying no offset. */
int ckpt_fstate_kg_check(struct ckpt_fstate_ctx *c, uint64_t at, const unsigned char *k, size_t kn, const char *state,
			 uint32_t kg, int32_t hash);
/* Check the typed form the sink did not ask for. */
int ckpt_fstate_typed_check(struct ckpt_fstate_typed *t);
/* -R: a canonical list entry's rows, one an element, written into r as they are decoded (state and
 * kind name them).  0, or -1 with the reader's error set (or r's writer failed). */
int ckpt_fstate_typed_list_rows(struct ckpt_fstate_typed *t, struct ckpt_frows *r, const char *state, const char *kind);

/* ------------------------------------------------------------ state-keyed.c */

int ckpt_fstate_read_keyed(struct ckpt_fstate_ctx *c);                             /* c->h's key-groups handle, to c->k */
int ckpt_fstate_read_rocksdb(struct ckpt_fstate_ctx *c);                           /* c->h's RocksDB files, to c->k */
/* The keyed state header of c->h's RocksDB handle (its meta data handle) into h, s open on its bytes
 * (*fd >= 0: a file to close), from offset 0 to h->end: 0, or -1 with c->e set. */
int ckpt_fstate_rocks_header(struct ckpt_fstate_ctx *c, struct ckpt_fsrc *s, int *fd, struct ckpt_fstate_header *h);
/* The files of c->h's RocksDB handle, its meta data's bytes first, into f (one a file the handle
 * lists; a local path into paths, inline bytes by address), *n of them: 0, or -1 with c->e set. */
int ckpt_fstate_rocks_files(struct ckpt_fstate_ctx *c, struct ckpt_frocks_file *f, char (*paths)[1024], size_t *n);

/* ------------------------------------------------------------ rocksdb-sst.c */

/* The bytes of each data block of table file f added to w[g - first] for the key groups g in
 * [first, last] it holds (keys with a key-group prefix of prefix bytes), estimated from its footer,
 * meta index, properties and index block alone: 0, 1 when f is not a table ckpt estimates (a
 * partitioned index, another format_version, compression other than Snappy and ZSTD), or -1 with
 * e set (where: f's path, else where). */
int ckpt_frocks_sst_groups(const struct ckpt_frocks_file *f, unsigned prefix, uint32_t first, uint32_t last, uint64_t *w,
			   const char *where, struct ckpt_err *e);
/* The same over every table file of st's RocksDB handle h, into w[0, kg_last - kg_first]; 1 too
 * when a file is on S3 (a part of the handle would fetch every file whole). */
int ckpt_frocks_kg_bytes(struct ckpt_fstate_backing_data *b, const struct ckpt_operator *op, const struct ckpt_subtask *st,
			 const struct ckpt_handle *h, uint64_t *w, struct ckpt_err *e);
/* One entry of a RocksDB column family of state name (m its meta info, NULL when the header stopped
 * before it), read from key group kg, to c->k: the key-group prefix checked, the entry typed or
 * checked.  0, or -1 with c->e set.  No database needed (t/fuzz/fuzz_rocksentry.c). */
int ckpt_fstate_rocks_entry(struct ckpt_fstate_ctx *c, const struct ckpt_fstate_header *h, struct ckpt_fstate_meta *m, const char *name, uint32_t kg,
			    const unsigned char *k, size_t kn, const unsigned char *v, size_t vn);
/* One entry in the heap layout (key-group prefix, key, namespace; the value whole) to c->k. */
int ckpt_fstate_kv(struct ckpt_fstate_ctx *c, const struct ckpt_fstate_header *h, struct ckpt_fstate_meta *m, uint32_t kg, const unsigned char *k,
		   size_t kn, const unsigned char *v, size_t vn);
/* The state of id within the header, or a stand-in "#id" when the header stopped before it. */
const char *ckpt_fstate_state_name(const struct ckpt_fstate_header *h, int16_t id, char buf[16]);
/* What stops ckpt from walking the entries of m in a heap snapshot (NULL: nothing). */
const char *ckpt_fstate_heap_stop(const struct ckpt_fstate_header *h, const struct ckpt_fstate_meta *m);
int ckpt_fstate_cmp_kgoff(const void *a, const void *b); /* struct ckpt_fstate_kgoff by offset, for qsort */
/* A sink's op and kv that keep nothing (typed freed). */
int ckpt_fstate_dry_op(void *arg, const char *state, size_t idx, const unsigned char *p, size_t n, json_t *typed);
int ckpt_fstate_dry_kv(void *arg, const char *state, uint32_t kg, const unsigned char *k, size_t kn,
		       const unsigned char *v, size_t vn, struct ckpt_fstate_typed *typed);

/* ------------------------------------------------------------ state-backing.c */

/* s's backing when s is a Flink snapshot, else NULL with e set. */
struct ckpt_fstate_backing_data *ckpt_fstate_backing(struct ckpt_snapshot *s, struct ckpt_err *e);
/* Tasks [0, n) through fn(arg, t, e) on as many threads as there are processors (CKPT_THREADS in
 * the environment: that many), each thread taking the next task; fn runs on several threads at
 * once.  each NULL: stop at the first failure, and -1 with e set to the error of the first task
 * that failed in their order (as one thread running them in order would say it); else every task
 * runs and each[t] gets its error (kind 0: none), and 0. */
int ckpt_fstate_run(size_t n, int (*fn)(void *arg, size_t t, struct ckpt_err *e), void *arg, struct ckpt_err *each,
		    struct ckpt_err *e);
/* Under --keep-going: why st's state is left out (NULL: it is not). */
const char *ckpt_fstate_skipped(const struct ckpt_fstate_backing_data *b, const struct ckpt_subtask *st);
/* Every subtask of s read through on all processors: under --keep-going, those that cannot be read
 * left out (ckpt_fstate_skipped) and said, once; else 0, or -1 with the first error. */
int ckpt_fstate_check_all(struct ckpt_snapshot *s, struct ckpt_err *e);
/* --keep-going in a shard (b->skip set): st's part (1 operator state, 2 keyed state in key groups
 * [lo, hi)) read through; when it cannot be read, st left out and said; 0, or -1 (no memory). */
int ckpt_fstate_check_part(struct ckpt_fstate_backing_data *b, const struct ckpt_operator *op, const struct ckpt_subtask *st,
			   int part, uint32_t lo, uint32_t hi, struct ckpt_err *e);
/* Report the bytes of state files read as progress (base/progress.c, its work s) for passes reads of
 * every file of s and also (NULL: none); the total not known when something narrows the reading. */
void ckpt_fstate_progress(struct ckpt_snapshot *s, struct ckpt_snapshot *also, unsigned passes);
/* op's rows (-R) into w: part 1 its operator state, 2 its keyed state (key groups [lo, hi) when hi > 0), 0 both. */
int ckpt_fstate_rows_op(struct ckpt_fstate_backing_data *b, const struct ckpt_operator *op, int part, uint32_t lo, uint32_t hi,
			struct ckpt_jw *w, struct ckpt_err *e);
int ckpt_fstate_rows_subtask(struct ckpt_fstate_backing_data *b, const struct ckpt_operator *op, const struct ckpt_subtask *st,
			     int part, uint32_t lo, uint32_t hi, struct ckpt_jw *w, struct ckpt_err *e);
/* -c: every subtask of s read through on all processors; *each (the caller frees it) the error of
 * each in the document's order, kind 0 where none, *n of them.  0, or -1 with e set (no memory). */
int ckpt_fstate_verify_all(struct ckpt_snapshot *s, struct ckpt_err **each, size_t *n, struct ckpt_err *e);

/* ------------------------------------------------------------ state-summary.c */

/* Add v to the count k of o; a count not known (null) stays so, and v < 0 makes it so. */
void ckpt_fstate_add_int(json_t *o, const char *k, json_int_t v);

/* ------------------------------------------------------------ changelog-header.c */

/* The bytes of a keyed header kept while a changelog is read: the key serializer's snapshot as a
 * keyed header writes it, and per state its meta info snapshot. */
struct ckpt_fclraw {
	struct ckpt_bytebuf key;
	struct ckpt_bytebuf *m;
	size_t n;
};
/* State idx's meta info m, read from p (and the key serializer, when m is a timer state's), kept. */
int ckpt_fclraw_meta(struct ckpt_fclraw *r, size_t idx, const struct ckpt_fstate_meta *m, const unsigned char *p,
		     struct ckpt_err *e, const char *where);
/* The key serializer and the states not in H of c->h's header hd (a changelog's materialized part). */
int ckpt_fclraw_materialized(struct ckpt_fclraw *r, struct ckpt_fstate_ctx *c, const struct ckpt_fstate_header *H,
			     const struct ckpt_fstate_header *hd);
/* The header of H's states (why[i]: why state i is not read, or NULL) as ckpt_fchangelog_header gives it. */
int ckpt_fclraw_header(const struct ckpt_fclraw *r, const struct ckpt_fstate_header *H, const char *const *why,
		       size_t nwhy, struct ckpt_fstate_ctx *c, const char *where, struct ckpt_fstate_header *h,
		       unsigned char **out);
void ckpt_fclraw_free(struct ckpt_fclraw *r);

/* ------------------------------------------------------------ changelog-rocks.c */

/* What a changelog's materialized part of RocksDB's files is read into: state idx of the header
 * (key group kg) set to v[0, vn) in the heap layout (key-group prefix, key, namespace; a list's or a
 * map's value whole); or, why non-NULL, state idx not read, for that reason. */
typedef int ckpt_fclrocks_put(void *arg, uint32_t idx, uint32_t kg, const unsigned char *k, size_t kn,
			      const unsigned char *v, size_t vn, const char *why);
/* The entries of the RocksDB handle c->h (kind "incremental"), whose states H holds, to put: 0, or -1
 * with c->e set. */
int ckpt_fclrocks_read(struct ckpt_fstate_ctx *c, struct ckpt_fstate_header *H, ckpt_fclrocks_put *put, void *arg);
/* The bytes the _metadata keeps of RocksDB handle j's files (meta, shared, private), in order. */
size_t ckpt_fclrocks_inline(const json_t *j);
/* The handle whose stream opens with the keyed header: h itself (a heap snapshot's); of RocksDB's
 * files (rocks: h holding their inline bytes), their meta data handle, made in mh. */
const struct ckpt_handle *ckpt_fclrocks_header_handle(const json_t *j, int rocks, const struct ckpt_handle *h,
						      struct ckpt_handle *mh);

/* ------------------------------------------------------------ changelog.c */

/* The keyed state of a changelog handle (c->h, kind "changelog") as Flink's changelog restore
 * rebuilds it, to c->k: 0, or -1 with c->e set (CKPT_ERR_REFUSED: a part ckpt does not read). */
int ckpt_fchangelog_read(struct ckpt_fstate_ctx *c);
/* The keyed header (KeyedBackendSerializationProxy, version 6, uncompressed) of the states of changelog
 * handle c->h, made of the materialized part's header and the metadata changes: its bytes in *out
 * (h->end of them, and a byte more; free it) and h read from them.  A state whose meta info or key
 * serializer is nowhere is refused, named. */
int ckpt_fchangelog_header(struct ckpt_fstate_ctx *c, struct ckpt_fstate_header *h, unsigned char **out);
/* A changelog file is a flag byte z, then the rest, whose length (uncompressed) size the _metadata
 * records: 0 when st bytes fit, else 1 and the problem in -c's words in what (changelog-size.c). */
int ckpt_fchangelog_size_problem(int z, uint64_t st, uint64_t size, char *what, size_t n);
/* -c's size check of a file the _metadata names (name; path, local, of st bytes): -1 when it is no
 * changelog file, else 0 when the size fits, or 1 with the problem in what. */
int ckpt_fchangelog_size(const struct ckpt_snapshot *s, const char *name, const char *path, uint64_t st, char *what,
			 size_t n);

/* ------------------------------------------------------------ select.c */

/* --uid, --state, -k (ckpt_flink_state_select) over a snapshot's operators. */
struct ckpt_fselect;
struct ckpt_fselect *ckpt_fselect_new(const struct ckpt_snapshot *s, const struct ckpt_flink_select *sel,
				 struct ckpt_err *e);
void ckpt_fselect_free(struct ckpt_fselect *f);
/* Is op selected (f NULL: every operator)? */
int ckpt_fselect_operator(const struct ckpt_fselect *f, const struct ckpt_operator *op);
/* Does the caller keep what is printed until the read ends (ckpt_flink_select.buffered)? */
int ckpt_fselect_buffered(const struct ckpt_fselect *f);
/* Does f keep some entries of a selected operator from its sinks (a state or a key named)? */
int ckpt_fselect_partial(const struct ckpt_fselect *f);
/* ckpt_flink_state_found's answer for f (NULL: 1, nothing narrowed). */
int ckpt_fselect_found(struct ckpt_fselect *f, char *names, size_t size);
/* A sink in's entries pass through, narrowed to f, for one subtask of op (meta: the _metadata for
 * messages): 1 and w->k the sink to read with, or 0 when nothing of it is asked for (read nothing).
 * ckpt_fselect_unwrap releases w after the read. */
struct ckpt_fstate_wrap {
	struct ckpt_fstate_sink k;
	const struct ckpt_fstate_sink *in;
	struct ckpt_fselect *f;
	const struct ckpt_operator *op;
	const struct ckpt_fstate_header *h; /* the keyed header being read */
	const char *meta;
	struct ckpt_err *e;
	unsigned prefix;
	struct ckpt_fkey key;    /* the key under this handle's key serializer, once its header is read */
	struct ckpt_fstate_header hstate;   /* --state: the header as the sink is told it, that state's meta alone */
};
int ckpt_fselect_wrap(struct ckpt_fselect *f, struct ckpt_fstate_wrap *w, const struct ckpt_fstate_sink *in, const struct ckpt_operator *op,
		      const char *meta, struct ckpt_err *e);
void ckpt_fselect_unwrap(struct ckpt_fstate_wrap *w);

/* ------------------------------------------------------------ regroup.c, rowsin.c */

/* ckpt-merge --rows (rowsin.c) asks of regroup.c's writer: which operators it rewrites, which states
 * lose their entries, and the rows' entries (each through put: state, key group, key with its
 * key-group prefix, value), given in pass 1 (counted) and pass 2 (written), for the operator whose
 * keyed header is that of handle hd of subtask st; checked once every operator is counted. */
typedef int ckpt_frg_put(void *g, const char *state, uint32_t kg, const unsigned char *k, size_t kn,
		    const unsigned char *v, size_t vn);
struct ckpt_frg_hook {
	void *arg;
	int (*touches)(void *arg, const struct ckpt_operator *op);
	int (*replaced)(void *arg, const struct ckpt_operator *op, const char *state);
	int (*entries)(void *arg, struct ckpt_fstate_backing_data *b, const struct ckpt_operator *op,
		       const struct ckpt_subtask *st, const struct ckpt_handle *hd, uint32_t maxp, int pass,
		       ckpt_frg_put *put, void *g, struct ckpt_err *e);
	int (*checked)(void *arg, struct ckpt_snapshot *s, struct ckpt_err *e);
	/* then, before the keyed files are written: operator state's new handles as splices of rk
	 * (buf: the _metadata sp spans), their files into dir; NULL: none */
	int (*opstate)(void *arg, struct ckpt_snapshot *s, const void *buf, const struct ckpt_fmeta_spans *sp,
		       const char *dir, struct ckpt_flink_rekey *rk, struct ckpt_err *e);
};
/* ckpt_flink_regroup with the hook (NULL: none).  The rows' entries come at the operator's own max
 * parallelism (their key-group prefix its), and are moved with the input's to the new one. */
int ckpt_frg_run(const char *meta, const void *buf, size_t len, const struct ckpt_flink_write_opts *o,
		 const struct ckpt_frg_hook *hook, const char *dir, struct ckpt_bytes *out, json_t **relative,
		 struct ckpt_err *e);

/* ------------------------------------------------------------ oppar.c */

/* ckpt-merge -P on an operator (opk, op in the _metadata buf's spans sp) holding operator state
 * (beside keyed state or alone): refused (CKPT_ERR_REFUSED, naming meta) what ckpt_foppar_split does not
 * move (a stream in a file-merging segment; rows: with --rows in the same write). */
int ckpt_foppar_check(const void *buf, const struct ckpt_fmeta_spans *sp, size_t opk, const struct ckpt_operator *op,
		      int rows, const char *meta, struct ckpt_err *e);
/* Its managed operator state at par subtasks, as Flink's RoundRobinOperatorStateRepartitioner gives
 * it on a restore at par: per new subtask t, out[t] gets the _metadata's managed operator state
 * collection (the handle count, each handle: an old stream with the offsets t restores; a stream in
 * a file of the savepoint copied once into dir, oprows.c's file name). */
struct ckpt_foppar_in {
	const void *buf;
	const struct ckpt_fmeta_spans *sp;
	size_t opk;
	struct ckpt_fstate_backing_data *b;
	const struct ckpt_operator *op;
	uint32_t par;
	const char *dir;
};
int ckpt_foppar_split(const struct ckpt_foppar_in *in, struct ckpt_bytebuf *out, struct ckpt_err *e);

/* ------------------------------------------------------------ oprows.c */

/* ckpt-merge --rows and --clear on operator state (rowsin.c gives the rows): each operator state the
 * rows name (its rows iterated by each) and each --clear names (cleared[i] set where an operator
 * holds clear[i]) holds per subtask exactly its rows, encoded by its serializers; the handles whose
 * states so change written anew (their streams into dir, files of their own or inline as they
 * were), each as a splice of rk.  Every row is checked before anything is written: -1 with e set,
 * "NAME:LINE" for a row (CKPT_ERR_INPUT), CKPT_ERR_REFUSED for what ckpt does not write. */
struct ckpt_foprows_state {
	const char *op, *state;
	size_t line;        /* its first row's */
	const void *rows;   /* what each iterates */
};
struct ckpt_foprows_in {
	const char *name;   /* the rows' file, for messages */
	const char *dir;
	const struct ckpt_foprows_state *st;
	size_t n;
	char *const *clear;
	int *cleared;
	size_t nclear;
	int (*each)(void *arg, const void *rows, int (*fn)(void *fa, char *text, size_t line), void *fa,
		    struct ckpt_err *e);
	void *arg;
};
int ckpt_foprows_run(const struct ckpt_foprows_in *in, struct ckpt_snapshot *s, const void *buf,
		     const struct ckpt_fmeta_spans *sp, struct ckpt_flink_rekey *rk, struct ckpt_err *e);
/* A serializer's name for messages: its snapshot class without package, nesting or "Snapshot". */
const char *ckpt_foprows_cls(const struct ckpt_fser *t, char *buf, size_t n);


/* ------------------------------------------------------------ setoffset.c, setoffhandle.c, consumeroff.c */

/* ckpt-merge --set-offset, --add-partition, --remove-partition (setoffset.c, a KafkaSource's
 * splits; consumeroff.c, FlinkKafkaConsumer's union state) over what setoffhandle.c shares. */
#define CKPT_FSETOFF_READER "SourceReaderState"
/* One reader split: where its starting offset lies in the buffer (in the file, for a handle of a
 * file), and its value; its element [eoff, eend) in the data of handle d (an index of the spans'
 * opdata). */
struct ckpt_fsetoff_split {
	char *topic;
	int32_t partition;
	int64_t start, stop;
	size_t at;
	uint32_t subtask;
	size_t d, eoff, eend;
	int removed, set; /* --remove-partition; --set-offset to v */
	int64_t v;
};
/* One --set-offset at work: the _metadata and its spans, the splits (or consumer elements) read. */
struct ckpt_fsetoff {
	const char *meta;
	const unsigned char *buf;
	const struct ckpt_snapshot *s;
	const struct ckpt_fmeta_spans *sp;
	struct ckpt_fsetoff_split *sl;
	size_t nsl, slcap;
	size_t coord_at, coord_len; /* the enumerator's bytes, when it records splits (else 0) */
	char untyped[1400];         /* a source whose enumerator no format parses, and why */
	const char *dir;            /* where the new state files go (the savepoint being written) */
	struct ckpt_fstate_backing_data *b;
	struct ckpt_bytes *fdata;   /* per opdata: the bytes of a handle's file, once read */
	char **fwhere;              /* and that file's path, for messages */
	json_t *names;              /* the names of the state files written */
	struct ckpt_err *e;
};
extern const char *const ckpt_fsetoff_optname[]; /* by enum ckpt_flink_offset_kind */
/* Handle di's bytes (inline in the _metadata, or its file's once read) and what holds them. */
const unsigned char *ckpt_fsetoff_hdata(const struct ckpt_fsetoff *c, size_t di);
const char *ckpt_fsetoff_hwhere(const struct ckpt_fsetoff *c, size_t di);
int ckpt_fsetoff_read_file(struct ckpt_fsetoff *c, size_t di);
/* Is op a Kafka source (its enumerator typed as Kafka's)?  1, 0, or -1. */
int ckpt_fsetoff_kafka_source(struct ckpt_fsetoff *c, const struct ckpt_operator *op);
void ckpt_fsetoff_held(const struct ckpt_fsetoff *c, char *b, size_t n);
int ckpt_fsetoff_splice_at(struct ckpt_fsetoff *c, struct ckpt_flink_rekey *rk, size_t at, int64_t v);
int ckpt_fsetoff_named_twice(struct ckpt_fsetoff *c, const struct ckpt_flink_offset_set *sets, size_t nsets);
int ckpt_fsetoff_rebuild_handle(struct ckpt_fsetoff *c, size_t di, const struct ckpt_bytebuf *ins, size_t nadd,
				struct ckpt_flink_rekey *rk);
/* consumeroff.c: the FlinkKafkaConsumer operator (-1 none, -2 refused), its elements read, the sets. */
long ckpt_fsetoff_pick_consumer(struct ckpt_fsetoff *c, const char *source);
int ckpt_fsetoff_consumer_elements(struct ckpt_fsetoff *c, size_t k);
int ckpt_fsetoff_set_consumer(struct ckpt_fsetoff *c, size_t k, const struct ckpt_flink_offset_set *sets, size_t nsets,
			      struct ckpt_flink_rekey *rk);

/* The length suffix after a key or namespace read since from (both of variable length), checked. */
int ckpt_fstate_length_suffix(struct ckpt_fsrc *s, uint64_t from, const char *what, const char *state);

#endif
