/* meta.h: the decoding state of the _metadata reader, shared by its two halves only: meta.c (the
 * header, format versions, operators, master states, properties) and meta-handle.c (the state
 * handles).  Bytes are read through base's cursor (ckpt_cur_*) and Java's writeUTF through
 * ckpt_javaser_utf; the halves meet at the ckpt_fmeta_read_* readers below. */
#ifndef CKPT_FLINK_META_H
#define CKPT_FLINK_META_H

#include "format.h"

#define FM_DEPTH 16 /* nesting of handles (changelog, key groups as stream) and of Java objects */

/* The decoding cursor (base's byte cursor: its reads fail at their offset as "where: offset N:
 * text"), and what is gathered for the snapshot's "flink" object on the way. */
struct ckpt_fmeta_reader {
	struct ckpt_cur c;
	int version;
	int depth;
	json_t *files;    /* every referenced file: {path, kind, size} */
	json_t *warnings; /* strings */
	json_t *regional; /* v7 reference checkpoint ids */
	uint64_t inline_bytes, state_size;
	size_t nhandles, nin, nout, nentries, nfinished, nfully;
	int canonical; /* saw a savepoint key-groups handle (tag 7) */
	struct ckpt_fmeta_spans *sp; /* where the rewritable fields lie, for the writer; or NULL */
	size_t op;               /* the operator being read */
	int incl;                /* inside a changelog handle: its inline bytes are kept in cl */
	unsigned char *cl;       /* those bytes, in the order of its nested handles (changelog.c) */
	size_t cln, clcap;
};

/* A warning for the snapshot's "flink" object (a failed append only loses the warning). */
#define fm_warn(r, ...) json_array_append_new((r)->warnings, json_sprintf(__VA_ARGS__))

/* ------------------------------------------------------------ JSON helpers */

static inline int
jput(struct ckpt_fmeta_reader *r, json_t *o, const char *k, json_t *v)
{
	if (v == NULL || json_object_set_new(o, k, v) < 0)
		return ckpt_err_nomem(r->c.e, r->c.where);
	return 0;
}

static inline int
jputs(struct ckpt_fmeta_reader *r, json_t *o, const char *k, const char *s)
{
	return jput(r, o, k, s ? json_string(s) : json_null());
}

static inline int
jputi(struct ckpt_fmeta_reader *r, json_t *o, const char *k, long long v)
{
	return jput(r, o, k, json_integer(v));
}

static inline int
jappend(struct ckpt_fmeta_reader *r, json_t *a, json_t *v)
{
	if (v == NULL || json_array_append_new(a, v) < 0)
		return ckpt_err_nomem(r->c.e, r->c.where);
	return 0;
}

static inline json_t *
jnew(struct ckpt_fmeta_reader *r)
{
	json_t *o = json_object();

	if (o == NULL)
		ckpt_err_nomem(r->c.e, r->c.where);
	return o;
}

static inline json_t *
jarr(struct ckpt_fmeta_reader *r)
{
	json_t *a = json_array();

	if (a == NULL)
		ckpt_err_nomem(r->c.e, r->c.where);
	return a;
}

/* ------------------------------------------------ the state handles a subtask holds: meta-handle.c */

/* A subtask's operator state of scope (managed_operator, raw_operator): a presence flag, then a handle. */
int ckpt_fmeta_read_opstate(struct ckpt_fmeta_reader *r, struct ckpt_subtask *st, const char *scope);
/* A subtask's keyed state handle of scope (managed_keyed, raw_keyed), its key groups widening st's. */
int ckpt_fmeta_read_keyed(struct ckpt_fmeta_reader *r, struct ckpt_subtask *st, const char *scope);
/* A subtask's channel state handles (versions 3 on): of its input channels, or of its result
 * subpartitions. */
int ckpt_fmeta_read_channels(struct ckpt_fmeta_reader *r, struct ckpt_subtask *st, int input);
/* The operator coordinator's state: a stream handle, inline bytes when present. */
int ckpt_fmeta_read_coordinator(struct ckpt_fmeta_reader *r, struct ckpt_operator *op);

#endif
