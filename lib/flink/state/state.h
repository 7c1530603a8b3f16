/* state.h: the state-files floor of the Flink layer (lib/flink/state/): the files a _metadata's
 * handles point to (heap and canonical keyed state, operator state, RocksDB, the changelog) read,
 * checked, summarised, compared and printed as rows, regrouped and written; the backing a Flink
 * snapshot gets.  Offered through flink/flink.h to the layers above flink/; readers.h holds what
 * the readers share among themselves.  Uses the serializers and formats floors below it and the
 * model and base layers. */
#ifndef CKPT_FLINK_STATE_H
#define CKPT_FLINK_STATE_H

#include "flink/types/types.h"

/* ------------------------------------------ Flink state files: state-*.c (state.h: their own) */

/* The backing of a snapshot decoded from the _metadata named meta ("<stdin>" for standard input):
 * its subtasks load nothing until ckpt_flink_state_enable (snap/open.c gives it to a Flink snapshot;
 * the state readers share flink.h). */
struct ckpt_model_backing;
struct ckpt_model_backing *ckpt_flink_backing_new(const char *meta, struct ckpt_err *e);
/* The entries the backing prints typed (ckpt-inspect -a without --raw), which a state document
 * does not take: what the model's loader says of them. */
extern const struct ckpt_model_foreign ckpt_flink_typed_entries;
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
	uint64_t end;     /* where the last whole row ends (the writer's flushed + len) */
	/* rows.c's copy of the last row's opening columns (uid to subtask) as written, for the next
	 * row of the same state and kind: the same bytes without escaping them again */
	char pre[512], pstate[128], pkind[16];
	size_t npre;      /* 0: none */
};
/* One keyed entry, its typed form t ({key, namespace[, user_key], value} or a timer's; NULL: not
 * typed, the bytes written and why not); kind is the state's (NULL: not known).  0, or -1 on a
 * failed write. */
/* A row begun and not ended (a read failed inside it) taken back: what is written ends at a row's end. */
void ckpt_frows_cut(struct ckpt_frows *r);
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
/* The files opened as one read-only database (every column family, or with only set "default" and
 * the column family named only: the others' table files are not opened; a small block cache,
 * Flink's merge operator) from a temporary directory of links, removed before this returns (and by
 * a signal arriving meanwhile).  The files are kept by the caller while the database is open.  NULL
 * with e set: a file missing or of another size (where: its path), or what RocksDB says (where: the
 * file it names, else the handle's where). */
struct ckpt_frocks_db *ckpt_frocks_open(const struct ckpt_frocks_file *f, size_t n, const char *only,
					const char *where, struct ckpt_err *e);
void ckpt_frocks_close(struct ckpt_frocks_db *d);
/* Its column families, in the order RocksDB lists them (those not opened too: scanning one fails). */
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
