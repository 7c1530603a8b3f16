/* state.h: the state readers' own types, shared by state.c and changelog.c within the
 * flink layer (the headers of a serialization proxy, the sinks entries go to, a reader's context);
 * the layers above see only flink.h. */
#ifndef CKPT_FLINK_STATE_H
#define CKPT_FLINK_STATE_H

#include "flink.h"

struct flink_backing;

/* One state of a serialization proxy's header (StateMetaInfoSnapshot). */
struct fmeta {
	char *name;
	int32_t type;  /* BackendStateType: 0 key-value, 1 operator, 2 broadcast, 3 priority queue, 4 key-value v2 */
	char *kind;    /* KEYED_STATE_TYPE lower case, "timers" for priority queues */
	char *mode;    /* OPERATOR_STATE_DISTRIBUTION_MODE */
	struct ckpt_fser *key, *ns, *value;
	json_t *serializers; /* option name -> class tree */
	signed char typable;  /* typable()'s answer once asked: 0 not yet, 1 yes, -1 no */
	char kindc;           /* set with typable: kind 't'imers, 'm'ap, 'l'ist, or 0 */
	char ambiguous;       /* set with typable: key and namespace of variable length, each with a length suffix */
};

struct fheader {
	int32_t version;
	int compressed;
	struct ckpt_fser *key; /* keyed: the key serializer */
	struct fmeta *m;
	size_t n, nlist;       /* operator: the first nlist states are list/union, the rest broadcast */
	int stopped;
	char stop[600];        /* why the header was not read to its end */
	uint64_t end;
};

/* The typed form of the key-value entry a sink is given: decoded when the sink asks for it
 * (typed_emit), into a jansson value, straight into the document, or nowhere (only checked); the
 * reader checks it itself when the sink did not ask. */
struct ftyped {
	struct fctx *c;
	const struct fheader *h;
	const struct fmeta *m;
	const unsigned char *k, *v;
	size_t kn, vn;
	uint64_t at;
	uint32_t kg;
	json_t *ready; /* decoded already (the loader's values) */
	int heap;      /* the heap layout: the value whole (a map or list in one), no user key */
	int done;
};

/* Where entries go: the loader keeps them, the summary and -c count them.  typed is given away. */
struct fsink {
	int (*header)(void *arg, const char *scope, const struct fheader *h);
	int (*op)(void *arg, const char *state, size_t idx, const unsigned char *p, size_t n, json_t *typed);
	int (*kv)(void *arg, const char *state, uint32_t kg, const unsigned char *k, size_t kn,
		  const unsigned char *v, size_t vn, struct ftyped *typed); /* typed NULL: none */
	/* the summary: a state whose entries ckpt cannot read (no lengths and a serializer ckpt cannot
	 * walk; a changelog's state it does not read) is passed over, its entries (n; -1 when not
	 * known) in key group kg (-1: operator state, or not known) said here with why (state NULL:
	 * states the header does not name may follow); without it such a state is refused */
	int (*skip)(void *arg, const char *state, long kg, long n, const char *why);
	/* with skip: heap key group kg read only up to a state passed over, ids[0, n) the states
	 * found in it; the entries there of every other keyed state are not known */
	int (*cut)(void *arg, const struct fheader *h, uint32_t kg, const int16_t *ids, size_t n);
	void *arg;
	int untyped; /* skip decoding values where the layout does not need it (counting only) */
	int part;    /* 0 every handle; 1 operator state handles only; 2 keyed state handles only */
	const char *only; /* operator state: give (and decode) only this state's elements */
	uint32_t kg_lo, kg_hi; /* keyed state: only key groups in [kg_lo, kg_hi) when kg_hi > 0 */
};

/* Is key group kg outside the sink's window? */
static inline int
kg_skipped(const struct fsink *k, uint32_t kg)
{
	return k->kg_hi > 0 && (kg < k->kg_lo || kg >= k->kg_hi);
}

struct fctx {
	struct flink_backing *b;
	const struct ckpt_operator *op;
	const struct ckpt_subtask *st;
	const struct ckpt_handle *h;
	const struct fsink *k;
	struct ckpt_err *e;
	char where[1024];
	unsigned prefix; /* key-group prefix bytes */
	struct heapbuf *heap; /* read_heap's entry buffers, reused */
};

struct heapbuf {
	unsigned char *key, *ns, *val;
	size_t kcap, ncap, vcap;
};

/* What changelog.c takes from state.c's readers. */
int ckpt_fstate_read_meta(struct ckpt_fsrc *s, struct fheader *h);      /* one StateMetaInfoSnapshot into h */
void ckpt_fstate_header_release(struct fheader *h);
int ckpt_fstate_keyed_header(struct fctx *c, struct fheader *h);        /* the header of c->h's keyed stream */
int ckpt_fstate_read_keyed(struct fctx *c);                             /* c->h's key-groups handle, to c->k */
int ckpt_fstate_local_path(struct fctx *c, const char *kind, const char *p, char *out, size_t n);
/* One entry in the heap layout (key-group prefix, key, namespace; the value whole) to c->k. */
int ckpt_fstate_kv(struct fctx *c, const struct fheader *h, struct fmeta *m, uint32_t kg, const unsigned char *k,
		   size_t kn, const unsigned char *v, size_t vn);

/* ------------------------------------------------------------ changelog.c */

/* The keyed state of a changelog handle (c->h, kind "changelog") as Flink's changelog restore
 * rebuilds it, to c->k: 0, or -1 with c->e set (CKPT_ERR_REFUSED: a part ckpt does not read). */
int ckpt_fchangelog_read(struct fctx *c);
/* -c's size check of a file the _metadata names (name; path, local, of st bytes): -1 when it is no
 * changelog file, else 0 when the size fits, or 1 with the problem in what. */
int ckpt_fchangelog_size(const struct ckpt_snapshot *s, const char *name, const char *path, uint64_t st, char *what,
			 size_t n);

#endif
