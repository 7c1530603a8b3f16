/* snap.h: the snapshot layer (lib/snap/): any snapshot opened (archive, directory, state
 * document, Flink _metadata), verified, summarised and written, offered to the layers above; it
 * owns the archive readers and writers (the one libarchive helper) and uses the Flink, model and
 * base layers. */
#ifndef CKPT_SNAP_H
#define CKPT_SNAP_H

#include "base/base.h"
#include "model/model.h"
#include "flink/flink.h"

/* For the summary: every member the manifest lists is there, whole, by its header or file size
 * (a tar's data is skipped by seeking; a tar.gz is decompressed).  0 for other snapshots. */
int ckpt_snap_members_check(struct ckpt_snapshot *s, struct ckpt_err *e);

/* The libarchive helper (archive.c), for the readers (open.c, verify.c) and the writer. */
struct archive;
struct archive_entry;
#define SNAP_MANIFEST_NAME "MANIFEST.json"
#define SNAP_BLOCK ((size_t)1 << 20)
/* A reader over fd from its start (tar or zip, plain or compressed); NULL with e set. */
struct archive *ckpt_arc_open_read(int fd, const char *name, struct ckpt_err *e);
/* Next member: 1 and *ent, 0 at the end, -1 on error. */
int ckpt_arc_next(struct archive *a, struct archive_entry **ent, const char *name, struct ckpt_err *e);
/* Feed the current member's data to fn block by block; the byte count, or -1. */
int64_t ckpt_arc_stream(struct archive *a, int (*fn)(void *arg, const void *p, size_t n, int64_t off),
		   void *arg, const char *where, struct ckpt_err *e);
/* Skip the current member's data; -1 with e set like ckpt_arc_stream. */
int ckpt_arc_skip(struct archive *a, const char *where, struct ckpt_err *e);
void ckpt_arc_close(struct archive *a);
/* A writer onto fd: pax tar (gzip'd without a time stamp for tar.gz) or zip; NULL on failure. */
struct archive *ckpt_arc_open_write(enum ckpt_archive_kind kind, int fd);
/* A member's header: a regular file of size bytes, fixed mode and time; libarchive's status. */
int ckpt_arc_write_header(struct archive *a, const char *name, uint64_t size);
/* All n bytes of the current member's data; -1 on failure (archive_errno tells). */
int ckpt_arc_write_all(struct archive *a, const void *p, size_t n);

/* What open.c shares with verify.c. */
#define SNAP_MANIFEST_LIMIT ((uint64_t)1 << 30)
/* The backing of an archive or a directory (its load is ckpt_snap_arch_load). */
struct ckpt_snap_arch {
	struct ckpt_model_backing base;
	char *name;        /* as the user named it ("<stdin>" for standard input) */
	int fd;            /* archives; -1 for directories */
	char *dir;         /* directories */
	struct ckpt_model_member *members;
	size_t nmembers;
	struct archive *a; /* reader left after the last member it read, or NULL */
	int fresh;         /* a has read only the manifest */
};
int ckpt_snap_arch_load(struct ckpt_snapshot *s, struct ckpt_operator *op, struct ckpt_subtask *st,
			struct ckpt_err *e);
/* A member's size as found (header or file) against the manifest: -c's words; 0 or -1. */
int ckpt_snap_member_size(const struct ckpt_model_member *m, uint64_t got, const char *where,
			  struct ckpt_err *e);
/* A member read whole (got bytes hashing to hash) against the manifest: size, then checksum. */
int ckpt_snap_member_verify(const struct ckpt_model_member *m, uint64_t got, uint64_t hash, const char *where,
			    struct ckpt_err *e);
/* Read up to size bytes of fd into buf (NULL: only hash, and check with chk when not NULL), then
 * look for one more; the count or -1. */
int64_t ckpt_snap_read_fd(int fd, unsigned char *buf, uint64_t size, struct ckpt_hasher *h,
			  struct ckpt_model_check *chk, const char *where, struct ckpt_err *e);
/* Parse a manifest's text (name: the archive or directory); NULL with e set. */
struct ckpt_snapshot *ckpt_snap_read_manifest(char *text, size_t len, const char *name,
					      struct ckpt_model_member **members, size_t *nmembers,
					      struct ckpt_err *e);
/* A growing buffer, fed by ckpt_arc_stream; at most SNAP_MANIFEST_LIMIT bytes. */
struct ckpt_snap_grow {
	char *buf;
	size_t len, cap;
	const char *where;
	struct ckpt_err *e;
};
/* Open fd as an archive whose first member, the manifest, is read into g; the reader after it,
 * or NULL with e set (g->buf may hold bytes to free either way). */
struct archive *ckpt_snap_open_manifest(int fd, const char *name, struct ckpt_snap_grow *g,
					struct ckpt_err *e);
/* Can a state document start with byte c (an opening brace or white space)? */
/* chk-N (ckpt-run's archives: chk-N.tar ...): N, or -1 */
int64_t ckpt_snap_chk_id(const char *base);
/* What follows "not a snapshot: ..." for directory dir: where it holds Flink's checkpoints, so. */
const char *ckpt_snap_dir_hint(const char *dir);
int ckpt_snap_is_json_start(int c);

/* paths.c: path names as discovery and --orphans take them apart and build them */
const char *ckpt_snap_path_base(const char *path);             /* after the last slash */
int ckpt_snap_has_suffix(const char *s, const char *suf);        /* and is longer than it */
int ckpt_snap_archive_name(const char *name);                    /* .tar, .tar.gz, .tgz, .zip */
char *ckpt_snap_path_join(const char *dir, const char *name, struct ckpt_err *e); /* DIR/NAME */

/* pool.c: fn(arg, i, e) for each i < n on threads (one a core, at most CKPT_SNAP_THREADS), each
 * taking the next i; the first -1 of fn stops the rest and is the answer, with its e. */
#define CKPT_SNAP_THREADS 8
int ckpt_snap_each(size_t n, int (*fn)(void *arg, size_t i, struct ckpt_err *e), void *arg,
		   struct ckpt_err *e);

#endif
