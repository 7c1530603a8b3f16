/* model.h: the model layer (lib/model/): a snapshot in memory (operators, subtasks, entries in
 * arenas, the backing that loads them), its state documents read and written and its subtask
 * state files encoded and decoded, offered to the Flink readers and every layer above; a
 * snapshot owns its operators, subtasks, arenas and backing.  Uses only the base layer. */
#ifndef CKPT_MODEL_H
#define CKPT_MODEL_H

#include <stdio.h>
#include <string.h>

#include "base/base.h"

/* Many small allocations freed at once: the entries of one subtask (arena.c). */
struct ckpt_model_arena;
struct ckpt_model_arena *ckpt_model_arena_new(void);
void *ckpt_model_arena_alloc(struct ckpt_model_arena *a, size_t n);
/* Take ownership of a malloc'd block (freed with the arena); -1 on allocation failure (block freed). */
int ckpt_model_arena_adopt(struct ckpt_model_arena *a, void *block);
void ckpt_model_arena_free(struct ckpt_model_arena *a);

/* Where a snapshot's unloaded entries come from (s->backing).  check and print are optional:
 * check reads every subtask's entries through before the document is printed, print writes one
 * unloaded subtask's object as it reads it (what ckpt_model_subtask_doc would give). */
struct ckpt_model_backing {
	const char *format;
	/* Flink's _metadata (flink/ sets it): the subtasks' state is in Flink's state files, behind
	 * handles, and every subtask is loaded through load, not from an archive member. */
	int flink_meta;
	/* A tar or zip ckpt wrote (snap/ sets it), read in one pass: reading it out of order means
	 * opening it again. */
	int archive;
	int (*load)(struct ckpt_snapshot *s, struct ckpt_operator *op, struct ckpt_subtask *st,
		    struct ckpt_err *e);
	void (*free)(struct ckpt_model_backing *b);
	int (*check)(struct ckpt_snapshot *s, struct ckpt_err *e);
	int (*print)(struct ckpt_snapshot *s, struct ckpt_operator *op, struct ckpt_subtask *st,
		     struct ckpt_jw *w, struct ckpt_err *e);
	/* optional: what the backing adds to an operator's head in the document (a source's
	 * coordinator state typed); -1 when out of memory */
	int (*head)(struct ckpt_snapshot *s, const struct ckpt_operator *op, json_t *head);
	/* optional: ends what check began, when the printing ends (flink/: the progress of the bytes
	 * of its state files read) */
	void (*done)(struct ckpt_snapshot *s);
};

/* An archive member as the manifest lists it (st->member points at one). */
struct ckpt_model_member {
	char *name;
	uint64_t size, xxh3;
	int seen;
};

/* The state document loader also reads manifests, where entries are replaced by counts. */
enum ckpt_model_docmode { SNAP_DOC, SNAP_MANIFEST };
/* Entries of another form than the document's, given by the layer that prints them (flink/'s
 * typed entries): an entry with any of keys is refused as "WHAT: ABOUT (it has "KEY"): HINT". */
struct ckpt_model_foreign {
	const char *const *keys; /* NULL-terminated */
	const char *about, *hint;
};
/* foreign may be NULL: such an entry is refused as any entry with a key it does not take. */
struct ckpt_snapshot *ckpt_model_from_json(const struct ckpt_jdoc *doc, enum ckpt_model_docmode mode,
					   const struct ckpt_model_foreign *foreign,
				     struct ckpt_model_member **members, size_t *nmembers, struct ckpt_err *e);
/* One subtask as a manifest lists it (counts, not entries), member named when not NULL. */
json_t *ckpt_model_subtask_manifest(const struct ckpt_subtask *st, const char *member);
/* The document's members before "operators". */
json_t *ckpt_model_head(const struct ckpt_snapshot *s);
/* One subtask of the state document, loaded for it (and unloaded after) when it has to be. */
json_t *ckpt_model_subtask_doc(struct ckpt_snapshot *s, struct ckpt_operator *op, struct ckpt_subtask *st,
			      struct ckpt_err *e);
/* An operator without its subtasks, as both documents show it. */
json_t *ckpt_model_operator_head(const struct ckpt_operator *op);
/* The handles of a subtask as JSON. */
json_t *ckpt_model_handles_json(const struct ckpt_subtask *st);
void ckpt_model_members_free(struct ckpt_model_member *m, size_t n);
/* The state file of one subtask (ckpt-archive(5)): encoder and decoder. */
#define SNAP_MAGIC "ckptsub1"
#define SNAP_MAGIC_LEN 8
struct ckpt_model_out; /* a buffered sink that counts and hashes */
struct ckpt_model_out *ckpt_model_out_new(FILE *f);
int ckpt_model_out_subtask(struct ckpt_model_out *o, const struct ckpt_subtask *st);
/* Flush; the size and XXH3-64 of what was written since the last reset. -1 on write error. */
int ckpt_model_out_finish(struct ckpt_model_out *o, uint64_t *size, uint64_t *xxh3);
void ckpt_model_out_free(struct ckpt_model_out *o);
/* Parse the member bytes (buf, len; adopted by the subtask's arena) into st, checking them
 * against the counts the manifest gave; where names the member in errors. */
int ckpt_model_decode_subtask(struct ckpt_subtask *st, void *buf, size_t len, const char *where,
			struct ckpt_err *e);

/* A state file checked as its bytes stream past, block by block, without holding them: what the
 * decoder would refuse, in its words, at the same byte.  st gives the manifest's counts, size the
 * member's size; feed every byte, then end: 0, or -1 and what ("damaged state file: ... at byte N"). */
struct ckpt_model_check;
struct ckpt_model_check *ckpt_model_check_new(const struct ckpt_subtask *st, uint64_t size);
void ckpt_model_check_feed(struct ckpt_model_check *c, const void *p, size_t n);
int ckpt_model_check_end(struct ckpt_model_check *c, char *what, size_t size);
void ckpt_model_check_free(struct ckpt_model_check *c);

/* ---------------------------------------------- the model: snapshot.c */

void ckpt_subtask_unload(struct ckpt_subtask *st);
/* The operator state of st named name (st may be NULL), or NULL. */
const struct ckpt_opstate *ckpt_subtask_opstate(const struct ckpt_subtask *st, const char *name);
const char *ckpt_mode_name(enum ckpt_mode m); /* "list", "union", "broadcast" */
int ckpt_mode_parse(const char *name);        /* -1 if unknown */
/* Was s read from a tar or zip archive of ckpt's own (its backing's archive)? */
int ckpt_snapshot_is_archive(const struct ckpt_snapshot *s);

/* Recompute st->kvstats (and nkv, kv_bytes, per-state n and bytes, in/out bytes) from loaded entries. */
int ckpt_subtask_recount(struct ckpt_subtask *st, struct ckpt_err *e);
/* Free everything a subtask owns (its index and flags stay); for snapshots built by hand. */
void ckpt_subtask_release(struct ckpt_subtask *st);

#endif
