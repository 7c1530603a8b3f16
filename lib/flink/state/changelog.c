/* changelog.c: the keyed state of Flink's changelog state backend (ckpt-flink(5), CHANGELOG
 * STATE): the materialized part read by the delegate backend's reader, then the state changes of
 * the non-materialized part applied in order, as ChangelogBackendRestoreOperation restores them. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "readers.h"

/* StateChangeOperation's codes (METADATA is 8 since REMOVE_FIRST_ELEMENT left, before 1.15) */
enum { OP_CLEAR, OP_SET, OP_SET_INTERNAL, OP_ADD, OP_MERGE_NS, OP_ADD_ELEMENT, OP_ADD_OR_UPDATE_ELEMENT,
       OP_REMOVE_ELEMENT, OP_METADATA };

/* One entry of the state being rebuilt, in the heap layout: key-group prefix, key, namespace; the
 * value whole (a list or a map in one), as the delegate heap backend holds it. */
struct clent {
	unsigned char *key, *val;
	size_t kn, vn;
	uint32_t kg, state;
	size_t seq; /* when it was last put: entries come out in that order within a key group and state */
	int live;
};

struct cl {
	struct ckpt_fstate_ctx *c;
	struct ckpt_fstate_header H;   /* the states, as a keyed header would hold them */
	int borrowed;       /* H.key is a timer state's key serializer, not owned */
	struct { int16_t id; uint32_t m; } *ids; /* the short ids of the metadata changes */
	size_t nids;
	char **why;         /* per state: why it is not read (see set_why), or NULL */
	size_t nwhy;
	struct clent *e;
	size_t n, cap, seq;
	size_t *slot, nslot; /* open addressing over e: index + 1, 0 empty; nslot a power of two */
	uint32_t kg_first, kg_last;
	char meta[1024];    /* the _metadata, as errors name it */
	const unsigned char *in; /* the inline bytes the _metadata keeps for the handle, and how far read */
	size_t inlen, inpos;
	int metaonly;       /* only the metadata changes are applied (a part is not read) */
	struct ckpt_bytebuf k, ns, v, x; /* the pieces of the change being applied */
	int headeronly;     /* ckpt_fchangelog_header: the states and their bytes, no entries */
	struct ckpt_fclraw raw; /* the header's bytes (changelog-header.c) */
};

static int
buf_add(struct cl *L, struct ckpt_bytebuf *b, const void *p, size_t n)
{
	return ckpt_bytebuf_add(b, p, n, NULL) < 0 ? ckpt_err_nomem(L->c->e, L->c->where) : 0;
}

/* One value of t read (and checked) from s, its bytes appended to b. */
static int
piece(struct cl *L, struct ckpt_fsrc *s, const struct ckpt_fser *t, const char *what, struct ckpt_bytebuf *b,
      int32_t *hash, int *hashed)
{
	struct ckpt_fout o = {.mode = FOUT_NONE};
	int32_t h;
	int hd, r;

	ckpt_fsrc_capture(s, 1);
	s->what = what;
	r = ckpt_fser_emit(t, s, &o, hash ? hash : &h, hashed ? hashed : &hd);
	s->what = NULL;
	ckpt_fsrc_capture(s, 0);
	return r < 0 ? -1 : buf_add(L, b, s->cap, s->clen);
}

/* ------------------------------------------------------------ the entries */

static uint64_t
ent_hash(uint32_t state, const unsigned char *k, size_t kn, unsigned prefix)
{
	return ckpt_xxh3(k + prefix, kn - prefix) ^ ((uint64_t)state * 0x9e3779b97f4a7c15ull);
}

/* The slot of (state, key): an entry's identity is its key without the key-group prefix (a timer
 * polled under another key's context is logged with that key group). */
static size_t *
ent_slot(struct cl *L, uint32_t state, const unsigned char *k, size_t kn)
{
	unsigned p = L->c->prefix;
	size_t i = ent_hash(state, k, kn, p) & (L->nslot - 1);

	for (;; i = (i + 1) & (L->nslot - 1)) {
		struct clent *x;

		if (L->slot[i] == 0)
			return &L->slot[i];
		x = &L->e[L->slot[i] - 1];
		if (x->state == state && x->kn == kn && memcmp(x->key + p, k + p, kn - p) == 0)
			return &L->slot[i];
	}
}

static int
ent_grow(struct cl *L)
{
	size_t n = L->nslot ? L->nslot * 2 : 256, *s = calloc(n, sizeof *s);

	if (s == NULL)
		return ckpt_err_nomem(L->c->e, L->c->where);
	free(L->slot);
	L->slot = s;
	L->nslot = n;
	for (size_t i = 0; i < L->n; i++)
		*ent_slot(L, L->e[i].state, L->e[i].key, L->e[i].kn) = i + 1;
	return 0;
}

/* The live entry of (state, key), or NULL. */
static struct clent *
ent_get(struct cl *L, uint32_t state, const unsigned char *k, size_t kn)
{
	size_t *sl;

	if (L->nslot == 0)
		return NULL;
	sl = ent_slot(L, state, k, kn);
	return *sl && L->e[*sl - 1].live ? &L->e[*sl - 1] : NULL;
}

/* Set (state, key) to v[0, vn); kg is the key's group. */
static int
ent_put(struct cl *L, uint32_t state, uint32_t kg, const unsigned char *k, size_t kn, const unsigned char *v,
	size_t vn)
{
	struct clent *x;
	size_t *sl;
	unsigned char *nv;

	if ((L->n + 1) * 2 > L->nslot && ent_grow(L) < 0)
		return -1;
	sl = ent_slot(L, state, k, kn);
	if (*sl == 0) {
		if (L->n == L->cap) {
			size_t cap = L->cap ? L->cap * 2 : 64;
			struct clent *e = ckpt_reallocarray(L->e, cap, sizeof *e, L->c->e);

			if (e == NULL)
				return -1;
			L->e = e;
			L->cap = cap;
		}
		x = &L->e[L->n];
		memset(x, 0, sizeof *x);
		if ((x->key = malloc(kn)) == NULL)
			return ckpt_err_nomem(L->c->e, L->c->where);
		memcpy(x->key, k, kn);
		x->kn = kn;
		x->state = state;
		*sl = ++L->n;
	}
	x = &L->e[*sl - 1];
	if ((nv = malloc(vn ? vn : 1)) == NULL)
		return ckpt_err_nomem(L->c->e, L->c->where);
	if (vn)
		memcpy(nv, v, vn);
	free(x->val);
	x->val = nv;
	x->vn = vn;
	x->kg = kg;
	memcpy(x->key, k, L->c->prefix); /* the group it is in now */
	if (!x->live)
		x->seq = L->seq++;
	x->live = 1;
	return 0;
}

static void
ent_del(struct cl *L, uint32_t state, const unsigned char *k, size_t kn)
{
	struct clent *x = ent_get(L, state, k, kn);

	if (x)
		x->live = 0;
}

/* ------------------------------------------------------------ the states */

static int
state_index(const struct cl *L, const char *name, uint32_t *i)
{
	for (size_t j = 0; j < L->H.n; j++)
		if (strcmp(L->H.m[j].name, name) == 0) {
			*i = (uint32_t)j;
			return 0;
		}
	return -1;
}

/* Take the states of h not in H yet (a state registered again is the same state, as Flink's
 * createKeyedState finds it), and its key serializer when H has none.  h keeps the rest. */
static int
take_states(struct cl *L, struct ckpt_fstate_header *h)
{
	for (size_t i = 0; i < h->n; i++) {
		struct ckpt_fstate_meta *m;
		uint32_t j;

		if (state_index(L, h->m[i].name, &j) == 0)
			continue;
		if ((m = ckpt_reallocarray(L->H.m, L->H.n + 1, sizeof *m, L->c->e)) == NULL)
			return -1;
		L->H.m = m;
		L->H.m[L->H.n++] = h->m[i];
		memmove(&h->m[i], &h->m[i + 1], (h->n - i - 1) * sizeof *h->m);
		h->n--;
		i--;
	}
	if (L->H.key == NULL && h->key) {
		L->H.key = h->key;
		h->key = NULL;
	}
	return 0;
}

/* The key serializer of the backend: a changelog holds none; the materialized part's header does,
 * and every timer state's serializer nests it. */
static void
find_key(struct cl *L)
{
	for (size_t i = 0; L->H.key == NULL && i < L->H.n; i++) {
		const struct ckpt_fser *t = L->H.m[i].value;

		if (L->H.m[i].type == 3 && t && t->kind == FSER_TIMER && t->nkids == 2 && t->kids[0]) {
			L->H.key = t->kids[0];
			L->borrowed = 1;
		}
	}
}

/* ------------------------------------------------------------ one change */

/* State idx cannot be read (why): its changes are skipped, the summary counts it as unknown and
 * every other reader refuses it.  The first reason stays. */
static int
set_why(struct cl *L, uint32_t idx, const char *why)
{
	if (idx >= L->nwhy) {
		char **w = ckpt_reallocarray(L->why, idx + 1, sizeof *w, L->c->e);

		if (w == NULL)
			return -1;
		memset(w + L->nwhy, 0, (idx + 1 - L->nwhy) * sizeof *w);
		L->why = w;
		L->nwhy = idx + 1;
	}
	if (L->why[idx] == NULL && (L->why[idx] = strdup(why)) == NULL)
		return ckpt_err_nomem(L->c->e, L->c->where);
	return 0;
}

static const char *
why_of(const struct cl *L, uint32_t idx)
{
	return idx < L->nwhy ? L->why[idx] : NULL;
}

/* The short id of the state to idx. */
static int
map_id(struct cl *L, int16_t id, uint32_t idx)
{
	void *ids;

	for (size_t i = 0; i < L->nids; i++)
		if (L->ids[i].id == id) {
			L->ids[i].m = idx;
			return 0;
		}
	if ((ids = ckpt_reallocarray(L->ids, L->nids + 1, sizeof *L->ids, L->c->e)) == NULL)
		return -1;
	L->ids = ids;
	L->ids[L->nids].id = id;
	L->ids[L->nids++].m = idx;
	return 0;
}

/* ChangelogBackendLogApplier.applyMetaDataChange: the meta info, TTL and default value, the short
 * id, the backend state type.  A meta info ckpt cannot read to its end makes its state unknown:
 * the change's length holds it, and its id is its last three bytes but one. */
static int
apply_meta(struct cl *L, struct ckpt_fsrc *s)
{
	struct ckpt_fstate_header h = {0};
	const char *why = NULL;
	char msg[700];
	int32_t version;
	int16_t id;
	uint8_t ttl = 0, dflt, type;
	uint32_t idx;
	int r, rc = -1;

	if (ckpt_fsrc_i32(s, &version, "meta info version") < 0)
		return -1;
	if (version != 6 && version != 7)
		return ckpt_fsrc_fail(s, "state meta info version %d (6 or 7 expected)", version);
	if ((r = ckpt_fstate_read_meta(s, &h)) < 0 || h.n == 0)
		goto out;
	if (r == 1)
		why = h.stop;
	else if ((h.m[0].type == 0 || h.m[0].type == 4) && ckpt_fsrc_u8(s, &ttl, "TTL flag") < 0)
		goto out;
	if (ttl) {
		snprintf(msg, sizeof msg, "state \"%s\" has a TTL configuration (a serialized Java object in its "
			 "changelog metadata), which ckpt does not read", h.m[0].name);
		why = msg;
	}
	if (why) {
		if (s->size < 3) {
			ckpt_fsrc_fail(s, "a metadata change of %llu bytes", (unsigned long long)s->size);
			goto out;
		}
		id = (int16_t)ckpt_load_be(s->mem + s->size - 3, 2);
	} else {
		struct ckpt_fstate_meta *m = &h.m[0];

		if (m->type == 0 || m->type == 4) { /* KEY_VALUE: default value */
			if (ckpt_fsrc_u8(s, &dflt, "default value flag") < 0 ||
			    (dflt && piece(L, s, m->value, "default value", &L->x, NULL, NULL) < 0))
				goto out;
		} else if (m->type != 3) {
			ckpt_fsrc_fail(s, "state \"%s\" of type %d in a keyed changelog", m->name, m->type);
			goto out;
		}
		if (ckpt_fsrc_i16(s, &id, "state id") < 0 || ckpt_fsrc_u8(s, &type, "state type") < 0)
			goto out;
		if (!ckpt_fsrc_drained(s)) {
			ckpt_fsrc_fail(s, "a metadata change of state \"%s\" does not end where its fields end", m->name);
			goto out;
		}
	}
	if (state_index(L, h.m[0].name, &idx) < 0)
		idx = (uint32_t)L->H.n; /* new: take_states appends it */
	if (!why && ckpt_fclraw_meta(&L->raw, idx, &h.m[0], s->mem, L->c->e, L->c->where) < 0)
		goto out;
	if ((why && set_why(L, idx, why) < 0) || take_states(L, &h) < 0 || map_id(L, id, idx) < 0)
		goto out;
	find_key(L); /* a timer state registered: the key serializer is known from here on */
	rc = 0;
out:
	ckpt_fstate_header_release(&h);
	return rc;
}

/* The wire length of t when fixed (the bytes it writes, unlike getLength for the void namespace). */
static long
wire(const struct ckpt_fser *t)
{
	int n;

	if (t == NULL)
		return -1;
	if (t->kind == FSER_VOIDNS)
		return 1;
	n = ckpt_fser_fixed_length(t);
	return n > 0 ? n : -1;
}

/* Write the length suffix of n (CompositeKeySerializationUtils.writeVariableIntBytes). */
static int
suffix(struct cl *L, struct ckpt_bytebuf *b, size_t n)
{
	uint32_t v = (uint32_t)n;

	do {
		unsigned char c = (unsigned char)v;

		if (buf_add(L, b, &c, 1) < 0)
			return -1;
		v >>= 8;
	} while (v != 0);
	return 0;
}

/* A key of the change at offset at whose hashCode gives key group want, not the change's kg: Flink's
 * appliers put it in want, so that is where it goes (*kg and the prefix set), unless want is not
 * the subtask's, where Flink's restore fails: then named with both key groups. */
static int
rehome(struct cl *L, uint64_t at, const struct ckpt_fstate_meta *m, uint32_t *kg, uint32_t want)
{
	const struct ckpt_subtask *st = L->c->st;

	if (!st->keyed || want < st->kg_first || want > st->kg_last)
		return ckpt_err_set(L->c->e, CKPT_ERR_INPUT, L->c->where, "offset %llu: a key of state \"%s\" in key "
				    "group %u hashes to key group %u, not one of the subtask's", (unsigned long long)at,
				    m->name, *kg, want);
	*kg = want;
	L->k.p[0] = (unsigned char)(L->c->prefix == 2 ? want >> 8 : want);
	if (L->c->prefix == 2)
		L->k.p[1] = (unsigned char)want;
	return 0;
}

/*
 * The scope of a key-value change (KvStateChangeLoggerImpl.serializeScope: key, namespace) into
 * L->k as the heap layout keys an entry: key-group prefix, key, namespace.  tail: the wire length
 * of what follows the scope, needed only when the key serializer is unknown (-1: not fixed).  1
 * when state idx cannot be read so (set_why).
 */
static int
scope(struct cl *L, struct ckpt_fsrc *s, struct ckpt_fstate_meta *m, uint32_t idx, uint32_t *kg, long tail)
{
	unsigned char pre[2] = {(unsigned char)(L->c->prefix == 2 ? *kg >> 8 : *kg), (unsigned char)*kg};
	const struct ckpt_fser *key = L->H.key;
	int amb = key && m->ns && ckpt_fser_fixed_length(key) < 0 && ckpt_fser_fixed_length(m->ns) < 0;
	int32_t hash;
	int hashed = 0;
	size_t kn;
	uint64_t at = s->base + ckpt_fsrc_tell(s);

	L->k.len = L->ns.len = 0;
	if (buf_add(L, &L->k, pre, L->c->prefix) < 0)
		return -1;
	if (key && !ckpt_fser_blocker(key)) {
		if (piece(L, s, key, "key", &L->k, &hash, &hashed) < 0)
			return -1;
	} else {
		long ns = wire(m->ns), left = (long)(s->wlen - s->wpos);

		char msg[700];

		if (key)
			snprintf(msg, sizeof msg, "state \"%s\" in a changelog, whose changes have no lengths, and its key "
				 "serializer %s is not one ckpt decodes", m->name, ckpt_fser_blocker(key));
		else
			snprintf(msg, sizeof msg, "state \"%s\": the changelog records no key serializer (no materialized "
				 "part, no timer state), and its namespace and value are not of fixed length", m->name);
		if (key || ns < 0 || tail < 0 || left < ns + tail)
			return set_why(L, idx, msg) < 0 ? -1 : 1;
		if (buf_add(L, &L->k, s->win + s->wpos, (size_t)(left - ns - tail)) < 0 ||
		    ckpt_fsrc_read(s, NULL, (size_t)(left - ns - tail), "key") < 0)
			return -1;
	}
	kn = L->k.len - L->c->prefix;
	if (hashed && ckpt_flink_key_group(hash, L->c->op->max_parallelism) != *kg &&
	    rehome(L, at, m, kg, ckpt_flink_key_group(hash, L->c->op->max_parallelism)) < 0)
		return -1;
	if ((amb && suffix(L, &L->k, kn) < 0) || piece(L, s, m->ns, "namespace", &L->ns, NULL, NULL) < 0 ||
	    buf_add(L, &L->k, L->ns.p, L->ns.len) < 0 || (amb && suffix(L, &L->k, L->ns.len) < 0))
		return -1;
	return 0;
}

static int
bad_op(struct ckpt_fsrc *s, struct ckpt_fstate_meta *m, int op)
{
	return ckpt_fsrc_fail(s, "operation %d on %s state \"%s\"", op, m->kind ? m->kind : "value", m->name);
}

/* ListSerializer's form: i32 count, the elements; add n elements e[0, en) to the entry's list. */
static int
list_add(struct cl *L, struct ckpt_fstate_meta *m, uint32_t kg, const unsigned char *e, size_t en, uint32_t n, uint32_t idx)
{
	struct clent *x = ent_get(L, idx, L->k.p, L->k.len);
	uint32_t have;
	unsigned char cnt[4];

	if (x && x->vn < 4)
		return ckpt_err_set(L->c->e, CKPT_ERR_INPUT, L->c->where, "list state \"%s\": a value of %zu bytes, not "
				    "a serialized list", m->name, x->vn);
	have = x ? (uint32_t)ckpt_be32(x->val) : 0;
	L->x.len = 0;
	ckpt_store_be(cnt, have + n, 4);
	if (buf_add(L, &L->x, cnt, 4) < 0 || (x && buf_add(L, &L->x, x->val + 4, x->vn - 4) < 0) ||
	    buf_add(L, &L->x, e, en) < 0)
		return -1;
	return ent_put(L, idx, kg, L->k.p, L->k.len, L->x.p, L->x.len);
}

/* MapSerializer's form: i32 count, then per entry the user key, a null flag, the value unless null.
 * Put (v non-NULL) or remove the user key uk of the entry's map. */
static int
map_set(struct cl *L, struct ckpt_fstate_meta *m, uint32_t kg, uint32_t idx, const struct ckpt_bytebuf *uk,
	const struct ckpt_bytebuf *v)
{
	struct clent *x = ent_get(L, idx, L->k.p, L->k.len);
	struct ckpt_fsrc s;
	struct ckpt_bytebuf ek = {0}, ev = {0};
	uint32_t n = 0, have;
	unsigned char cnt[4], flag;
	int rc = -1;

	if (x && x->vn < 4)
		return ckpt_err_set(L->c->e, CKPT_ERR_INPUT, L->c->where, "map state \"%s\": a value of %zu bytes, not "
				    "a serialized map", m->name, x->vn);
	L->x.len = 0;
	if (buf_add(L, &L->x, "\0\0\0\0", 4) < 0)
		return -1;
	ckpt_fsrc_mem(&s, x ? x->val + 4 : NULL, x ? x->vn - 4 : 0, L->c->where, L->c->e);
	have = x ? (uint32_t)ckpt_be32(x->val) : 0;
	for (uint32_t i = 0; i < have; i++) {
		ek.len = ev.len = 0;
		if (piece(L, &s, m->value->kids[0], "map key", &ek, NULL, NULL) < 0 ||
		    ckpt_fsrc_u8(&s, &flag, "map value null flag") < 0 ||
		    (!flag && piece(L, &s, m->value->kids[1], "map value", &ev, NULL, NULL) < 0))
			goto out;
		if (ek.len == uk->len && memcmp(ek.p, uk->p, uk->len) == 0)
			continue;
		if (buf_add(L, &L->x, ek.p, ek.len) < 0 || buf_add(L, &L->x, &flag, 1) < 0 ||
		    buf_add(L, &L->x, ev.p, flag ? 0 : ev.len) < 0)
			goto out;
		n++;
	}
	flag = 0;
	if (v && (buf_add(L, &L->x, uk->p, uk->len) < 0 || buf_add(L, &L->x, &flag, 1) < 0 ||
		  buf_add(L, &L->x, v->p, v->len) < 0))
		goto out;
	n += v != NULL;
	ckpt_store_be(cnt, n, 4);
	memcpy(L->x.p, cnt, 4);
	if (n == 0) /* HeapMapState: the last key removed clears the state */
		ent_del(L, idx, L->k.p, L->k.len);
	else if (ent_put(L, idx, kg, L->k.p, L->k.len, L->x.p, L->x.len) < 0)
		goto out;
	rc = 0;
out:
	ckpt_fsrc_release(&s);
	free(ek.p);
	free(ev.p);
	return rc;
}

/* ADD of a map state: putAll of a serialized map. */
static int
map_add_all(struct cl *L, struct ckpt_fsrc *s, struct ckpt_fstate_meta *m, uint32_t kg, uint32_t idx)
{
	struct ckpt_bytebuf uk = {0}, v = {0};
	int32_t n;
	uint8_t flag;
	int rc = -1;

	if (ckpt_fsrc_i32(s, &n, "map size") < 0)
		return -1;
	for (int32_t i = 0; i < n; i++) {
		uk.len = v.len = 0;
		if (piece(L, s, m->value->kids[0], "map key", &uk, NULL, NULL) < 0 ||
		    ckpt_fsrc_u8(s, &flag, "map value null flag") < 0 ||
		    (!flag && piece(L, s, m->value->kids[1], "map value", &v, NULL, NULL) < 0))
			goto out;
		if (flag) {
			ckpt_fsrc_fail(s, "a null value in a changelog map put");
			goto out;
		}
		if (map_set(L, m, kg, idx, &uk, &v) < 0)
			goto out;
	}
	rc = 0;
out:
	free(uk.p);
	free(v.p);
	return rc;
}

/* PriorityQueueStateChangeApplier: ADD_ELEMENT (i32 count, the elements), REMOVE_ELEMENT (one). */
static int
apply_pq(struct cl *L, struct ckpt_fsrc *s, struct ckpt_fstate_meta *m, uint32_t kg, uint32_t idx, int op)
{
	unsigned char pre[2] = {(unsigned char)(L->c->prefix == 2 ? kg >> 8 : kg), (unsigned char)kg};
	int32_t n = 1;

	if (op != OP_ADD_ELEMENT && op != OP_REMOVE_ELEMENT)
		return bad_op(s, m, op);
	if (op == OP_ADD_ELEMENT && ckpt_fsrc_i32(s, &n, "element count") < 0)
		return -1;
	for (int32_t i = 0; i < n; i++) {
		int32_t hash;
		int hashed = 0;

		uint64_t at = s->base + ckpt_fsrc_tell(s);

		L->k.len = 0;
		if (buf_add(L, &L->k, pre, L->c->prefix) < 0 || piece(L, s, m->value, "timer", &L->k, &hash, &hashed) < 0)
			return -1;
		if (hashed && ckpt_flink_key_group(hash, L->c->op->max_parallelism) != kg &&
		    rehome(L, at, m, &kg, ckpt_flink_key_group(hash, L->c->op->max_parallelism)) < 0)
			return -1;
		if (op == OP_REMOVE_ELEMENT)
			ent_del(L, idx, L->k.p, L->k.len);
		else if (ent_put(L, idx, kg, L->k.p, L->k.len, NULL, 0) < 0)
			return -1;
	}
	return 0;
}

/* The wire length of what follows the scope of op on m, when fixed. */
static long
tail_of(const struct ckpt_fstate_meta *m, char kind, int op)
{
	const struct ckpt_fser *v = m->value;
	long a, b;

	if (op == OP_CLEAR)
		return 0;
	if (kind == 'v' && (op == OP_SET || op == OP_SET_INTERNAL))
		return wire(v);
	if (kind == 'l' && op == OP_ADD_ELEMENT)
		return v && v->nkids == 1 ? wire(v->kids[0]) : -1;
	if (kind == 'm' && v && v->nkids == 2) {
		a = wire(v->kids[0]);
		b = wire(v->kids[1]);
		if (op == OP_REMOVE_ELEMENT)
			return a;
		if (op == OP_ADD_ELEMENT || op == OP_ADD_OR_UPDATE_ELEMENT)
			return a < 0 || b < 0 ? -1 : a + b;
	}
	return -1;
}

/* The value, list and map appliers (Value-, Reducing-, Aggregating-, List-, MapStateChangeApplier). */
static int
apply_kv(struct cl *L, struct ckpt_fsrc *s, struct ckpt_fstate_meta *m, uint32_t kg, uint32_t idx, int op)
{
	const char *k = m->kind ? m->kind : "value";
	char kind = strcmp(k, "list") == 0 ? 'l' : strcmp(k, "map") == 0 ? 'm' : 'v';
	const char *stop = ckpt_fser_blocker(m->ns) ? ckpt_fser_blocker(m->ns) : ckpt_fser_blocker(m->value);
	struct ckpt_bytebuf *v = &L->v;
	char msg[700];
	int r;

	if (stop) {
		snprintf(msg, sizeof msg, "state \"%s\" in a changelog, whose changes have no lengths, and its "
			 "serializer %s is not one ckpt decodes", m->name, stop);
		return set_why(L, idx, msg);
	}
	if ((kind == 'l' && m->value->kind != FSER_LIST) || (kind == 'm' && m->value->kind != FSER_MAP))
		return ckpt_fsrc_fail(s, "%s state \"%s\" with a serializer %s", k, m->name, m->value->cls);
	if (op == OP_MERGE_NS) {
		snprintf(msg, sizeof msg, "state \"%s\" has a MERGE_NS change (merging windows: it needs the "
			 "state's function), which ckpt does not apply", m->name);
		return set_why(L, idx, msg);
	}
	if ((r = scope(L, s, m, idx, &kg, tail_of(m, kind, op))) != 0)
		return r < 0 ? -1 : 0;
	v->len = 0;
	if (op == OP_CLEAR) {
		ent_del(L, idx, L->k.p, L->k.len);
		return 0;
	}
	if (kind == 'v' && (op == OP_SET || op == OP_SET_INTERNAL))
		return piece(L, s, m->value, "value", v, NULL, NULL) < 0 ? -1 :
			ent_put(L, idx, kg, L->k.p, L->k.len, v->p, v->len);
	if (kind == 'l' && (op == OP_SET || op == OP_SET_INTERNAL || op == OP_ADD)) {
		if (piece(L, s, m->value, "list", v, NULL, NULL) < 0)
			return -1;
		if (op == OP_ADD)
			return list_add(L, m, kg, v->p + 4, v->len - 4, (uint32_t)ckpt_be32(v->p), idx);
		if (ckpt_be32(v->p) == 0) { /* an empty list clears the state */
			ent_del(L, idx, L->k.p, L->k.len);
			return 0;
		}
		return ent_put(L, idx, kg, L->k.p, L->k.len, v->p, v->len);
	}
	if (kind == 'l' && op == OP_ADD_ELEMENT)
		return piece(L, s, m->value->kids[0], "list element", v, NULL, NULL) < 0 ? -1 :
			list_add(L, m, kg, v->p, v->len, 1, idx);
	if (kind == 'm' && op == OP_ADD)
		return map_add_all(L, s, m, kg, idx);
	if (kind == 'm' && (op == OP_ADD_ELEMENT || op == OP_ADD_OR_UPDATE_ELEMENT || op == OP_REMOVE_ELEMENT)) {
		struct ckpt_bytebuf uk = {0};
		int rc = piece(L, s, m->value->kids[0], "map key", &uk, NULL, NULL) < 0 ||
			 (op != OP_REMOVE_ELEMENT && piece(L, s, m->value->kids[1], "map value", v, NULL, NULL) < 0) ||
			 map_set(L, m, kg, idx, &uk, op == OP_REMOVE_ELEMENT ? NULL : v) < 0 ? -1 : 0;

		free(uk.p);
		return rc;
	}
	return bad_op(s, m, op);
}

/* ChangelogBackendLogApplier.apply: one change of key group kg, its bytes p[0, n) at offset at. */
static int
apply(struct cl *L, int32_t kg, const unsigned char *p, size_t n, uint64_t at)
{
	struct ckpt_fsrc s;
	uint8_t op;
	int16_t id;
	size_t i;
	int rc = -1;

	ckpt_fsrc_mem(&s, p, n, L->c->where, L->c->e);
	s.base = at;
	if (ckpt_fsrc_u8(&s, &op, "operation") < 0)
		goto out;
	if (op > OP_METADATA) {
		ckpt_fsrc_fail(&s, "state change operation %u (0 to %d expected)", op, OP_METADATA);
		goto out;
	}
	if (op == OP_METADATA) {
		rc = apply_meta(L, &s);
		goto out;
	}
	if (L->metaonly || kg < 0 || (uint32_t)kg < L->kg_first || (uint32_t)kg > L->kg_last) {
		rc = 0; /* Flink applies the data changes of its key groups only */
		goto out;
	}
	if (ckpt_fsrc_i16(&s, &id, "state id") < 0)
		goto out;
	for (i = 0; i < L->nids && L->ids[i].id != id; i++)
		;
	if (i == L->nids) {
		ckpt_fsrc_fail(&s, "a change of state id %d, which no metadata change registered", id);
		goto out;
	}
	if (why_of(L, L->ids[i].m)) {
		rc = 0; /* a state not read */
		goto out;
	}
	if (L->H.m[L->ids[i].m].type == 3)
		rc = apply_pq(L, &s, &L->H.m[L->ids[i].m], (uint32_t)kg, L->ids[i].m, op);
	else
		rc = apply_kv(L, &s, &L->H.m[L->ids[i].m], (uint32_t)kg, L->ids[i].m, op);
	if (rc == 0 && !why_of(L, L->ids[i].m) && !ckpt_fsrc_drained(&s))
		rc = ckpt_fsrc_fail(&s, "a change of state \"%s\" does not end where its fields end",
				    L->H.m[L->ids[i].m].name);
out:
	ckpt_fsrc_release(&s);
	return rc;
}

/* ------------------------------------------------------------ the handles */

/* The next n of the inline bytes the _metadata keeps for this handle. */
static const unsigned char *
take_inline(struct cl *L, size_t n)
{
	const unsigned char *p = L->in + L->inpos;

	if (n > L->inlen - L->inpos) {
		ckpt_err_set(L->c->e, CKPT_ERR_INPUT, L->meta, "the inline bytes of a changelog handle end early");
		return NULL;
	}
	L->inpos += n;
	return p;
}

/* InMemoryChangelogStateHandle: n changes, each i32 key group, i32 length, the bytes. */
static int
read_inline(struct cl *L, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const unsigned char *h = take_inline(L, 8), *p;
		size_t len;

		if (h == NULL || (p = take_inline(L, len = ckpt_be32(h + 4))) == NULL ||
		    apply(L, (int32_t)ckpt_be32(h), p, len, (uint64_t)(p - L->in)) < 0)
			return -1;
	}
	return 0;
}

/* StateChangeFormat.read: one change set, i32 group count, per group i32 change count, i32 key
 * group, the changes (i32 length, the bytes). */
static int
read_set(struct cl *L, struct ckpt_fsrc *s)
{
	unsigned char *p = NULL;
	size_t cap = 0, n;
	int32_t groups, count, kg;
	int rc = -1;

	if (ckpt_fsrc_i32(s, &groups, "group count") < 0)
		return -1;
	if (groups < 0)
		return ckpt_fsrc_fail(s, "negative group count %d", groups);
	for (int32_t g = 0; g < groups; g++) {
		if (ckpt_fsrc_i32(s, &count, "change count") < 0 || ckpt_fsrc_i32(s, &kg, "key group") < 0)
			goto out;
		if (count <= 0) {
			ckpt_fsrc_fail(s, "change count %d of key group %d (above 0 expected)", count, kg);
			goto out;
		}
		for (int32_t i = 0; i < count; i++) {
			uint64_t at = ckpt_fsrc_tell(s) + 4;

			if (ckpt_fsrc_blob_buf(s, &p, &cap, &n, "state change") < 0 || apply(L, kg, p, n, at) < 0)
				goto out;
		}
	}
	rc = 0;
out:
	free(p);
	return rc;
}


/* The changelog file at L->c->where in S3, read by range as a local one is. */
static int
open_s3(struct cl *L, struct ckpt_fsrc *s)
{
	struct ckpt_s3obj *o = ckpt_s3obj_open(L->c->where, L->c->e);

	if (o == NULL)
		return -1;
	return ckpt_fsrc_s3(s, o, 0, ckpt_s3obj_size(o), L->c->where, L->c->e);
}

/* One (file, offset) of a ChangelogStateHandleStreamImpl: FsStateChangelogWriter's file, a byte
 * saying whether the rest is Snappy-framed, then change sets; the offset is into the rest. */
static int
read_file(struct cl *L, const json_t *f)
{
	const char *kind = json_string_value(json_object_get(f, "kind")), *path = json_string_value(json_object_get(f, "path"));
	json_int_t off = json_integer_value(json_object_get(f, "offset"));
	uint64_t size = (uint64_t)json_integer_value(json_object_get(f, "size"));
	struct ckpt_fsrc s = {0};
	struct stat sb;
	char what[256];
	uint8_t z;
	int fd = -1, rc = -1, remote = 0;

	s.fd = -1;
	if (kind && strcmp(kind, "byte_stream") == 0) {
		size_t n = (size_t)json_integer_value(json_object_get(f, "size"));
		const unsigned char *p = take_inline(L, n);

		if (p == NULL)
			return -1;
		ckpt_fsrc_mem(&s, p, n, L->c->where, L->c->e);
	} else {
		if (kind == NULL || path == NULL || strcmp(kind, "segment_file") == 0)
			return ckpt_err_set(L->c->e, CKPT_ERR_INPUT, L->c->where, "a changelog file handle of kind %s",
					    kind ? kind : "null");
		if (ckpt_fstate_local_path(L->c, kind, path, L->c->where, sizeof L->c->where) < 0)
			return -1;
		if (ckpt_s3_is_url(L->c->where)) {
			if (open_s3(L, &s) < 0)
				goto out;
			remote = 1;
		} else if ((fd = open(L->c->where, O_RDONLY)) < 0)
			return ckpt_err_sys(L->c->e, L->c->where, "cannot open the changelog file of operator %s subtask %u",
					    L->c->op->id, L->c->st->index);
		else if (ckpt_fsrc_note_read(L->c->where), fstat(fd, &sb) < 0) {
			ckpt_err_sys(L->c->e, L->c->where, "cannot stat");
			goto out;
		} else if (ckpt_fsrc_file(&s, fd, 0, (uint64_t)sb.st_size, L->c->where, L->c->e) < 0)
			goto out;
	}
	if ((fd >= 0 || remote) && s.size == 0 && ckpt_fchangelog_size_problem(0, 0, size, what, sizeof what)) {
		ckpt_err_set(L->c->e, CKPT_ERR_INPUT, L->c->where, "%s", what);
		goto out;
	}
	if (ckpt_fsrc_u8(&s, &z, "compression flag") < 0)
		goto out;
	if (z > 1) {
		ckpt_fsrc_fail(&s, "compression flag %u (0 or 1 expected)", z);
		goto out;
	}
	if ((fd >= 0 || remote) && ckpt_fchangelog_size_problem(z, s.size, size, what, sizeof what)) {
		ckpt_err_set(L->c->e, CKPT_ERR_INPUT, L->c->where, "%s", what);
		goto out;
	}
	if (off < 0 || (!z && (uint64_t)off > s.size - 1)) {
		ckpt_err_set(L->c->e, CKPT_ERR_INPUT, L->c->where, "changelog offset %lld past the end (%llu bytes)",
			     (long long)off, (unsigned long long)s.size);
		goto out;
	}
	if (ckpt_fsrc_seek(&s, z ? 1 : 1 + (uint64_t)off, z) < 0 || (z && ckpt_fsrc_read(&s, NULL, (size_t)off, "changes") < 0))
		goto out;
	rc = read_set(L, &s);
out:
	ckpt_fsrc_release(&s);
	if (fd >= 0)
		close(fd);
	snprintf(L->c->where, sizeof L->c->where, "%s", L->meta);
	return rc;
}

/* The materialized part: a handle the delegate backend wrote, read by its reader into the entries. */
static int
collect_op(void *arg, const char *state, size_t idx, const unsigned char *p, size_t n, json_t *typed)
{
	(void)arg, (void)state, (void)idx, (void)p, (void)n;
	json_decref(typed);
	return 0;
}

static int
collect_kv(void *arg, const char *state, uint32_t kg, const unsigned char *k, size_t kn, const unsigned char *v,
	   size_t vn, struct ckpt_fstate_typed *typed)
{
	struct cl *L = arg;
	uint32_t idx;

	(void)typed;
	if (state_index(L, state, &idx) < 0)
		return ckpt_err_set(L->c->e, CKPT_ERR_INPUT, L->c->where, "an entry of state \"%s\", not in its header", state);
	return ent_put(L, idx, kg, k, kn, v, vn);
}

/* NULL when the materialized handle j is one ckpt reads, else why not. */
static const char *
unread(const json_t *j)
{
	const char *kind = json_string_value(json_object_get(j, "kind"));

	if (kind && (strcmp(kind, "key_groups") == 0 || strcmp(kind, "incremental") == 0))
		return NULL;
	return "the changelog's materialized part is a handle of a kind ckpt does not read";
}

/* An entry of the materialized part of RocksDB's files in the heap layout (changelog-rocks.c): each
 * (state, key, namespace) once, as RocksDB keeps it. */
static int
collect_rocks(void *arg, uint32_t idx, uint32_t kg, const unsigned char *k, size_t kn, const unsigned char *v,
	      size_t vn, const char *why)
{
	struct cl *L = arg;

	if (why)
		return set_why(L, idx, why);
	if (ent_get(L, idx, k, kn))
		return ckpt_err_set(L->c->e, CKPT_ERR_INPUT, L->c->where, "state \"%s\": a key and namespace twice in "
				    "RocksDB's files", L->H.m[idx].name);
	return ent_put(L, idx, kg, k, kn, v, vn);
}

static int
read_materialized(struct cl *L, const json_t *j)
{
	const json_t *d = json_object_get(j, "delegate");
	const char *dk = json_string_value(json_object_get(d, "kind"));
	int rocks = strcmp(json_string_value(json_object_get(j, "kind")) ?: "", "incremental") == 0;
	struct ckpt_handle h = {.scope = "managed_keyed", .kind = rocks ? "incremental" : "key_groups",
				.size = (uint64_t)json_integer_value(json_object_get(j, "size")),
				.path = (char *)json_string_value(json_object_get(j, "path")), .detail = (json_t *)j}, mh = {0};
	const struct ckpt_handle *saved = L->c->h;
	const struct ckpt_fstate_sink *k = L->c->k, col = {.op = collect_op, .kv = collect_kv, .arg = L, .untyped = 1};
	struct ckpt_fstate_header hd = {0};
	int rc = -1;

	if (rocks || (dk && (strcmp(dk, "byte_stream") == 0))) {
		h.data.len = rocks ? ckpt_fclrocks_inline(j) : (size_t)json_integer_value(json_object_get(d, "size"));
		if ((h.data.p = (unsigned char *)take_inline(L, h.data.len)) == NULL)
			return -1;
	}
	L->c->h = ckpt_fclrocks_header_handle(j, rocks, &h, &mh);
	snprintf(L->c->where, sizeof L->c->where, "%s", L->meta);
	if (rocks && (mh.detail = json_pack("{s:O}", "delegate", json_object_get(j, "meta") ?: json_null())) == NULL) {
		ckpt_err_nomem(L->c->e, L->meta);
		goto out;
	}
	if (ckpt_fstate_keyed_header(L->c, &hd) < 0)
		goto out;
	if (hd.stopped) {
		ckpt_err_set(L->c->e, CKPT_ERR_REFUSED, L->c->where, "the materialized part of a changelog: %s", hd.stop);
		goto out;
	}
	if ((L->headeronly && ckpt_fclraw_materialized(&L->raw, L->c, &L->H, &hd) < 0) || take_states(L, &hd) < 0)
		goto out;
	if (L->headeronly) {
		rc = 0;
		goto out;
	}
	L->c->h = &h;
	L->c->k = &col;
	rc = rocks ? ckpt_fclrocks_read(L->c, &L->H, collect_rocks, L) : ckpt_fstate_read_keyed(L->c);
out:
	L->c->k = k;
	L->c->h = saved;
	json_decref(rocks ? mh.detail : NULL);
	ckpt_fstate_header_release(&hd);
	return rc;
}

/* ------------------------------------------------------------ the whole handle */

static int
cmp_ent(const void *a, const void *b)
{
	const struct clent *x = *(const struct clent *const *)a, *y = *(const struct clent *const *)b;

	if (x->kg != y->kg)
		return x->kg < y->kg ? -1 : 1;
	if (x->state != y->state)
		return x->state < y->state ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The live entries to the caller's sink: by key group, then state, then when each was put.  A state
 * not read (its why, or all: the whole handle's) is counted as unknown by the summary, refused by
 * every other reader. */
static int
emit(struct cl *L, const char *all)
{
	struct clent **v = ckpt_calloc(L->n + 1, sizeof *v, L->c->e);
	const struct ckpt_fstate_sink *k = L->c->k;
	size_t n = 0;
	int rc = -1;

	if (v == NULL)
		return -1;
	snprintf(L->c->where, sizeof L->c->where, "%s", L->meta);
	for (size_t i = 0; i < L->H.n; i++) {
		const char *why = all ? all : why_of(L, (uint32_t)i);

		if (why && k->skip == NULL) {
			ckpt_err_set(L->c->e, CKPT_ERR_REFUSED, L->meta, "operator %s subtask %u: state \"%s\" not read: %s",
				     L->c->op->id, L->c->st->index, L->H.m[i].name, why);
			goto out;
		}
	}
	if (all && L->H.n == 0) {
		rc = k->skip ? k->skip(k->arg, "(materialized)", -1, -1, all) :
			ckpt_err_set(L->c->e, CKPT_ERR_REFUSED, L->meta, "operator %s subtask %u: keyed state not read: %s",
				     L->c->op->id, L->c->st->index, all);
		goto out;
	}
	if (k->header && k->header(k->arg, "keyed", &L->H) < 0)
		goto out;
	for (size_t i = 0; i < L->H.n; i++) {
		const char *why = all ? all : why_of(L, (uint32_t)i);

		if (why && k->skip(k->arg, L->H.m[i].name, -1, -1, why) < 0)
			goto out;
	}
	for (size_t i = 0; !all && i < L->n; i++)
		if (L->e[i].live && !why_of(L, L->e[i].state))
			v[n++] = &L->e[i];
	qsort(v, n, sizeof *v, cmp_ent);
	for (size_t i = 0; i < n; i++)
		if (ckpt_fstate_kv(L->c, &L->H, &L->H.m[v[i]->state], v[i]->kg, v[i]->key, v[i]->kn, v[i]->val,
				   v[i]->vn) < 0)
			goto out;
	rc = 0;
out:
	free(v);
	return rc;
}

/* The changes of the non-materialized part applied in order (the metadata changes only, metaonly). */
static int
read_changes(struct cl *L)
{
	const json_t *non = json_object_get(L->c->h->detail, "non_materialized");

	for (size_t i = 0; i < json_array_size(non); i++) {
		const json_t *j = json_array_get(non, i), *files = json_object_get(j, "files");
		const char *kind = json_string_value(json_object_get(j, "kind"));

		if (kind && strcmp(kind, "changelog_bytes") == 0) {
			if (read_inline(L, (size_t)json_integer_value(json_object_get(j, "changes"))) < 0)
				return -1;
			continue;
		}
		if (kind == NULL || strcmp(kind, "changelog_files") != 0)
			return ckpt_err_set(L->c->e, CKPT_ERR_INPUT, L->meta, "operator %s subtask %u: a %s handle among the "
					    "changes of a changelog", L->c->op->id, L->c->st->index, kind ? kind : "null");
		for (size_t f = 0; f < json_array_size(files); f++)
			if (read_file(L, json_array_get(files, f)) < 0)
				return -1;
	}
	if (L->inpos != L->inlen)
		return ckpt_err_set(L->c->e, CKPT_ERR_INPUT, L->meta, "operator %s subtask %u: %zu inline bytes of a "
				    "changelog handle not read", L->c->op->id, L->c->st->index, L->inlen - L->inpos);
	return 0;
}

/* The materialized part, then the changes.  Without a key serializer from the materialized part,
 * the metadata changes are read first: a timer state registered after the first change of another
 * state still gives the key serializer of all (Flink's restore takes it from the job). */
static int
read_parts(struct cl *L)
{
	const json_t *mat = json_object_get(L->c->h->detail, "materialized");
	const char *why = NULL;

	for (size_t i = 0; why == NULL && i < json_array_size(mat); i++)
		why = unread(json_array_get(mat, i));
	L->metaonly = why != NULL;
	for (size_t i = 0; why == NULL && i < json_array_size(mat); i++)
		if (read_materialized(L, json_array_get(mat, i)) < 0)
			return -1;
	if (L->headeronly && why)
		return ckpt_err_set(L->c->e, CKPT_ERR_REFUSED, L->meta, "operator %s subtask %u: %s", L->c->op->id,
				    L->c->st->index, why);
	if (why == NULL && (L->headeronly || L->H.key == NULL)) {
		size_t at = L->inpos; /* after the materialized part's inline bytes */

		L->metaonly = 1;
		if (read_changes(L) < 0)
			return -1;
		if (L->headeronly)
			return 0;
		L->metaonly = 0;
		L->inpos = at;
	}
	if (read_changes(L) < 0)
		return -1;
	find_key(L);
	return emit(L, why);
}

/* L set up for handle c->h: its key groups. */
static int
cl_init(struct cl *L, struct ckpt_fstate_ctx *c)
{
	const char *r = json_string_value(json_object_get(c->h->detail, "key_groups"));
	unsigned a = 0, b = 0;

	L->c = c;
	L->in = c->h->data.p;
	L->inlen = c->h->data.len;
	snprintf(L->meta, sizeof L->meta, "%s", c->where);
	c->prefix = ckpt_flink_kg_prefix(c->op->max_parallelism);
	if (r == NULL || sscanf(r, "%u-%u", &a, &b) < 1)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, L->meta, "operator %s subtask %u: a changelog handle without "
				    "key groups", c->op->id, c->st->index);
	L->kg_first = a;
	L->kg_last = strchr(r, '-') ? b : a;
	return 0;
}

static void
cl_free(struct cl *L)
{
	for (size_t i = 0; i < L->n; i++) {
		free(L->e[i].key);
		free(L->e[i].val);
	}
	free(L->e);
	free(L->slot);
	free(L->ids);
	for (size_t i = 0; i < L->nwhy; i++)
		free(L->why[i]);
	free(L->why);
	ckpt_fclraw_free(&L->raw);
	free(L->k.p);
	free(L->ns.p);
	free(L->v.p);
	free(L->x.p);
	if (L->borrowed)
		L->H.key = NULL;
	ckpt_fstate_header_release(&L->H);
}

int
ckpt_fchangelog_read(struct ckpt_fstate_ctx *c)
{
	struct cl L = {0};
	int rc = cl_init(&L, c);

	if (rc == 0 && !(c->k->kg_hi > 0 && (L.kg_first >= c->k->kg_hi || L.kg_last < c->k->kg_lo)))
		rc = read_parts(&L); /* else nothing in the window */
	snprintf(c->where, sizeof c->where, "%s", L.meta);
	cl_free(&L);
	return rc;
}

int
ckpt_fchangelog_header(struct ckpt_fstate_ctx *c, struct ckpt_fstate_header *h, unsigned char **out)
{
	struct cl L = {.headeronly = 1};
	int rc = cl_init(&L, c);

	*out = NULL;
	if (rc == 0 && (rc = read_parts(&L)) == 0)
		rc = ckpt_fclraw_header(&L.raw, &L.H, (const char *const *)L.why, L.nwhy, c, L.meta, h, out);
	snprintf(c->where, sizeof c->where, "%s", L.meta);
	cl_free(&L);
	return rc;
}
