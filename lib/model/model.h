/* snap-internal.h: what the snapshot files (snap*.c, archive.c) share and nobody else sees. */
#ifndef CKPT_SNAP_INTERNAL_H
#define CKPT_SNAP_INTERNAL_H

#include <stdio.h>
#include <string.h>

#include "base/base.h"

/* Many small allocations freed at once: the entries of one subtask (snap-arena.c). */
struct ckpt_snap_arena;
struct ckpt_snap_arena *ckpt_snap_arena_new(void);
void *ckpt_snap_arena_alloc(struct ckpt_snap_arena *a, size_t n);
/* Take ownership of a malloc'd block (freed with the arena); -1 on allocation failure (block freed). */
int ckpt_snap_arena_adopt(struct ckpt_snap_arena *a, void *block);
void ckpt_snap_arena_free(struct ckpt_snap_arena *a);

/* The state document written as it is read (snap-print.c): containers opened and closed, keys and
 * values, in jansson's compact or indented form.  Write errors are kept and told by ckpt_jw_failed.
 * The writer is here, not opaque, so that the hot calls (an entry's keys, separators, integers and
 * plain strings) are inline; what is rare or long is in snap-print.c. */
#define CKPT_JW_BUF ((size_t)1 << 16)
struct ckpt_jw {
	FILE *f;
	int pretty, depth, failed;
	size_t *count; /* items written in each open container: cap of them, grown as deep as the value */
	size_t cap;
	size_t len;
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

/* Where a snapshot's unloaded entries come from (s->backing).  check and print are optional:
 * check reads every subtask's entries through before the document is printed, print writes one
 * unloaded subtask's object as it reads it (what ckpt_snap_subtask_doc would give). */
struct ckpt_snap_backing {
	const char *format;
	int (*load)(struct ckpt_snapshot *s, struct ckpt_operator *op, struct ckpt_subtask *st,
		    struct ckpt_err *e);
	void (*free)(struct ckpt_snap_backing *b);
	int (*check)(struct ckpt_snapshot *s, struct ckpt_err *e);
	int (*print)(struct ckpt_snapshot *s, struct ckpt_operator *op, struct ckpt_subtask *st,
		     struct ckpt_jw *w, struct ckpt_err *e);
};

/* An archive member as the manifest lists it (st->member points at one). */
struct ckpt_snap_member {
	char *name;
	uint64_t size, xxh3;
	int seen;
};

/* The state document loader also reads manifests, where entries are replaced by counts. */
enum ckpt_snap_docmode { SNAP_DOC, SNAP_MANIFEST };
struct ckpt_snapshot *ckpt_snap_from_json(const struct ckpt_jdoc *doc, enum ckpt_snap_docmode mode,
				     struct ckpt_snap_member **members, size_t *nmembers, struct ckpt_err *e);
/* One subtask as a manifest lists it (counts, not entries), member named when not NULL. */
json_t *ckpt_snap_subtask_manifest(const struct ckpt_subtask *st, const char *member);
/* The document's members before "operators". */
json_t *ckpt_snap_head(const struct ckpt_snapshot *s);
/* One subtask of the state document, loaded for it (and unloaded after) when it has to be. */
json_t *ckpt_snap_subtask_doc(struct ckpt_snapshot *s, struct ckpt_operator *op, struct ckpt_subtask *st,
			      struct ckpt_err *e);
/* An operator without its subtasks, as both documents show it. */
json_t *ckpt_snap_operator_head(const struct ckpt_operator *op);
/* The handles of a subtask as JSON. */
json_t *ckpt_snap_handles_json(const struct ckpt_subtask *st);
void ckpt_snap_members_free(struct ckpt_snap_member *m, size_t n);
/* For the summary: every member the manifest lists is there, whole, by its header or file size
 * (a tar's data is skipped by seeking; a tar.gz is decompressed).  0 for other snapshots. */
int ckpt_snap_members_check(struct ckpt_snapshot *s, struct ckpt_err *e);

/* The state file of one subtask (ckpt-archive(5)): encoder and decoder. */
#define SNAP_MAGIC "ckptsub1"
#define SNAP_MAGIC_LEN 8
struct ckpt_snap_out; /* a buffered sink that counts and hashes */
struct ckpt_snap_out *ckpt_snap_out_new(FILE *f);
int ckpt_snap_out_subtask(struct ckpt_snap_out *o, const struct ckpt_subtask *st);
/* Flush; the size and XXH3-64 of what was written since the last reset. -1 on write error. */
int ckpt_snap_out_finish(struct ckpt_snap_out *o, uint64_t *size, uint64_t *xxh3);
void ckpt_snap_out_free(struct ckpt_snap_out *o);
/* Parse the member bytes (buf, len; adopted by the subtask's arena) into st, checking them
 * against the counts the manifest gave; where names the member in errors. */
int ckpt_snap_decode_subtask(struct ckpt_subtask *st, void *buf, size_t len, const char *where,
			struct ckpt_err *e);

/* A state file checked as its bytes stream past, block by block, without holding them: what the
 * decoder would refuse, in its words, at the same byte.  st gives the manifest's counts, size the
 * member's size; feed every byte, then end: 0, or -1 and what ("damaged state file: ... at byte N"). */
struct ckpt_snap_check;
struct ckpt_snap_check *ckpt_snap_check_new(const struct ckpt_subtask *st, uint64_t size);
void ckpt_snap_check_feed(struct ckpt_snap_check *c, const void *p, size_t n);
int ckpt_snap_check_end(struct ckpt_snap_check *c, char *what, size_t size);
void ckpt_snap_check_free(struct ckpt_snap_check *c);

/* The libarchive helper (archive.c), for the readers (snap-open.c, snap-verify.c) and the writer. */
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

/* What snap-open.c shares with snap-verify.c. */
#define SNAP_MANIFEST_LIMIT ((uint64_t)1 << 30)
/* The backing of an archive or a directory (its load is ckpt_snap_arch_load). */
struct ckpt_snap_arch {
	struct ckpt_snap_backing base;
	char *name;        /* as the user named it ("<stdin>" for standard input) */
	int fd;            /* archives; -1 for directories */
	char *dir;         /* directories */
	struct ckpt_snap_member *members;
	size_t nmembers;
	struct archive *a; /* reader left after the last member it read, or NULL */
	int fresh;         /* a has read only the manifest */
};
int ckpt_snap_arch_load(struct ckpt_snapshot *s, struct ckpt_operator *op, struct ckpt_subtask *st,
			struct ckpt_err *e);
/* A member's size as found (header or file) against the manifest: -c's words; 0 or -1. */
int ckpt_snap_member_size(const struct ckpt_snap_member *m, uint64_t got, const char *where,
			  struct ckpt_err *e);
/* A member read whole (got bytes hashing to hash) against the manifest: size, then checksum. */
int ckpt_snap_member_verify(const struct ckpt_snap_member *m, uint64_t got, uint64_t hash, const char *where,
			    struct ckpt_err *e);
/* Read up to size bytes of fd into buf (NULL: only hash, and check with chk when not NULL), then
 * look for one more; the count or -1. */
int64_t ckpt_snap_read_fd(int fd, unsigned char *buf, uint64_t size, struct ckpt_hasher *h,
			  struct ckpt_snap_check *chk, const char *where, struct ckpt_err *e);
/* Parse a manifest's text (name: the archive or directory); NULL with e set. */
struct ckpt_snapshot *ckpt_snap_read_manifest(char *text, size_t len, const char *name,
					      struct ckpt_snap_member **members, size_t *nmembers,
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
int ckpt_snap_is_json_start(int c);

#endif
