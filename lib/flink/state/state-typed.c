/* state-typed.c: the typed form of a keyed entry (key, namespace, user key, value), decoded by the
 * state's serializers when a sink asks for it, and whether a state's entries can be typed. */
#include <stdlib.h>
#include <string.h>

#include "readers.h"
#include "model/model.h"

int
ckpt_fstate_nomem(struct ckpt_fstate_ctx *c)
{
	return ckpt_err_nomem(c->e, c->where);
}

int
ckpt_fstate_kg_check(struct ckpt_fstate_ctx *c, uint64_t at, const unsigned char *k, size_t kn, const char *state,
		     uint32_t kg, int32_t hash)
{
	uint32_t want = ckpt_flink_key_group(hash, c->op->max_parallelism);
	const struct ckpt_frocks_file *f;
	char hex[2 * 48 + 4];
	size_t i;

	if (want == kg)
		return 0;
	if (k == NULL || c->rdb == NULL)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->where, "offset %llu: a key of state \"%s\" in key group "
				    "%u hashes to key group %u", (unsigned long long)at, state, kg, want);
	for (i = 0; i < kn && i < 48; i++) /* RocksDB names the table file, not where in it: the key does */
		snprintf(hex + 2 * i, 3, "%02x", k[i]);
	snprintf(hex + 2 * i, 4, "%s", i < kn ? "..." : "");
	f = ckpt_frocks_file_of(c->rdb, c->rcf, k, kn);
	return ckpt_err_set(c->e, CKPT_ERR_INPUT, f && f->path ? f->path : c->where, "%s%s%skey %s: a key of state "
			    "\"%s\" in key group %u hashes to key group %u", f && !f->path ? "inline " : "",
			    f ? f->local : "", f ? ", " : "", hex, state, kg, want);
}

/* Decode p[0, n) (at offset at of the source) as one value of t, to its last byte, into o; its hash
 * (a timer's: its key's) into *hash, *hashed set when known. */
static int
decode_out(struct ckpt_fstate_ctx *c, const struct ckpt_fser *t, const unsigned char *p, size_t n, uint64_t at,
	   const char *what, struct ckpt_fout *o, int32_t *hash, int *hashed)
{
	struct ckpt_fsrc m;
	int r;

	ckpt_fsrc_mem(&m, p, n, c->where, c->e);
	m.base = at;
	r = ckpt_fser_emit(t, &m, o, hash, hashed);
	if (r == 0 && !ckpt_fsrc_drained(&m))
		r = ckpt_fsrc_fail(&m, "%s does not end where its serializer (%s) ends", what, t->cls);
	ckpt_fsrc_release(&m);
	return r;
}

/* The length of what was read since from, as CompositeKeySerializationUtils.writeVariableIntBytes
 * writes it after a key or namespace when both are of variable length: little-endian, the bytes
 * until the rest is 0 (at least one).  Flink skips them; ckpt checks them. */
int
ckpt_fstate_length_suffix(struct ckpt_fsrc *s, uint64_t from, const char *what, const char *state)
{
	uint64_t len = ckpt_fsrc_tell(s) - from, rest = len, at = s->base + ckpt_fsrc_tell(s), got = 0;
	int shift = 0;
	uint8_t b;

	do {
		if (ckpt_fsrc_u8(s, &b, "length suffix") < 0)
			return -1;
		got |= (uint64_t)b << shift;
		shift += 8;
		rest >>= 8;
	} while (rest != 0);
	if (got != len)
		return ckpt_err_set(s->e, CKPT_ERR_INPUT, s->where, "offset %llu: %s of state \"%s\" has length "
				    "suffix %llu, not its length %llu", (unsigned long long)at, what, state,
				    (unsigned long long)got, (unsigned long long)len);
	return 0;
}

/* The key bytes of canonical entry t read through s (the caller releases it): key-group prefix, key and
 * namespace (and a map entry's user key) into o as members, to their end, the key's key group
 * checked; *vs the serializer of the value that follows (a map's: its values'). */
static int
key_out(const struct ckpt_fstate_typed *t, struct ckpt_fsrc *s, struct ckpt_fout *o, const struct ckpt_fser **vs)
{
	struct ckpt_fstate_ctx *c = t->c;
	const struct ckpt_fstate_meta *m = t->m;
	uint64_t from;
	int32_t hash, hh;
	int hashed = 0, hd;

	*vs = m->value;
	ckpt_fsrc_mem(s, t->k, t->kn, c->where, c->e);
	s->base = t->at + 4; /* at is the entry's: the key's i32 length, the key, the value's, the value */
	if (ckpt_fsrc_read(s, NULL, c->prefix, "key-group prefix") < 0)
		return -1;
	ckpt_fout_key_lit(o, "key");
	from = ckpt_fsrc_tell(s);
	s->tail = m->ns->kind == FSER_VOIDNS; /* its one byte follows a Kryo key */
	if (ckpt_fser_emit(t->h->key, s, o, &hash, &hashed) < 0 ||
	    (m->ambiguous && ckpt_fstate_length_suffix(s, from, "key", m->name) < 0))
		return -1;
	ckpt_fout_key_lit(o, "namespace");
	from = ckpt_fsrc_tell(s);
	if (ckpt_fser_emit(m->ns, s, o, &hh, &hd) < 0 ||
	    (m->ambiguous && ckpt_fstate_length_suffix(s, from, "namespace", m->name) < 0))
		return -1;
	if (m->kindc == 'm' && !t->heap) {
		ckpt_fout_key_lit(o, "user_key");
		if (ckpt_fser_emit((*vs)->kids[0], s, o, &hh, &hd) < 0)
			return -1;
		*vs = (*vs)->kids[1];
	}
	if (!ckpt_fsrc_drained(s))
		return ckpt_fsrc_fail(s, "key of state \"%s\" does not end where its serializers end", m->name);
	return hashed ? ckpt_fstate_kg_check(c, t->at, t->rocks ? t->k : NULL, t->kn, m->name, t->kg, hash) : 0;
}

/* The next element of a canonical list's value s (ListDelimitedSerializer: elements joined by ','),
 * element i, into o. */
static int
list_elem(struct ckpt_fsrc *s, size_t i, const struct ckpt_fser *vs, struct ckpt_fout *o)
{
	int32_t hh;
	int hd;
	uint8_t comma;

	if (i > 0 && (ckpt_fsrc_u8(s, &comma, "list delimiter") < 0 ||
		      (comma != ',' && ckpt_fsrc_fail(s, "list delimiter %u", comma))))
		return -1;
	return ckpt_fser_emit(vs->kids[0], s, o, &hh, &hd);
}

/* The typed form of one canonical entry: key ‖ namespace (‖ user key) and the value, into o. */
static int
typed_out(const struct ckpt_fstate_typed *t, struct ckpt_fout *o)
{
	struct ckpt_fstate_ctx *c = t->c;
	const struct ckpt_fstate_meta *m = t->m;
	struct ckpt_fsrc s;
	const struct ckpt_fser *vs;
	int32_t hh;
	int hd, r = -1, map = m->kindc == 'm' && !t->heap; /* ckpt_fstate_typable() set kindc */

	if (m->kindc == 't') {
		if (t->vn != 0)
			return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->where, "offset %llu: a timer with a value of %zu "
					    "bytes (a timer has none)", (unsigned long long)t->at, (size_t)t->vn);
		if (decode_out(c, m->value, t->k + c->prefix, t->kn - c->prefix, t->at, "timer", o, &hh, &hd) < 0)
			return -1;
		return hd ? ckpt_fstate_kg_check(c, t->at, t->rocks ? t->k : NULL, t->kn, m->name, t->kg, hh) : 0;
	}
	if (ckpt_fout_open(o, '{') < 0)
		return ckpt_fstate_nomem(c);
	if (key_out(t, &s, o, &vs) < 0)
		goto out;
	ckpt_fsrc_mem_again(&s, t->v, t->vn);
	s.base = t->at + 8 + t->kn;
	s.tail = 0;
	ckpt_fout_key_lit(o, "value");
	if (map) {
		uint8_t isnull;

		if (ckpt_fsrc_u8(&s, &isnull, "map value null flag") < 0)
			goto out;
		if (isnull ? ckpt_fout_null(o) < 0 && ckpt_fstate_nomem(c) : ckpt_fser_emit(vs, &s, o, &hh, &hd) < 0)
			goto out;
	} else if (m->kindc == 'l' && !t->heap) {
		if (ckpt_fout_open(o, '[') < 0) {
			ckpt_fstate_nomem(c);
			goto out;
		}
		for (size_t i = 0; !ckpt_fsrc_drained(&s); i++)
			if (list_elem(&s, i, vs, o) < 0)
				goto out;
		ckpt_fout_close(o);
	} else if (ckpt_fser_emit(vs, &s, o, &hh, &hd) < 0) {
		goto out;
	}
	if (!ckpt_fsrc_drained(&s)) {
		ckpt_fsrc_fail(&s, "value of state \"%s\" does not end where its serializer ends", m->name);
		goto out;
	}
	ckpt_fout_close(o);
	r = 0;
out:
	ckpt_fsrc_release(&s);
	return r;
}

/* A row's key and namespace members as the first row wrote them, to copy into the next rows. */
struct khead {
	char b[512];
	size_t n, items; /* bytes; members they add to the row */
};

/* Key and namespace of t into o's row: copied from h when it holds them, else decoded (and kept in
 * h when the writer still holds all they wrote and they fit). */
static int
key_row(const struct ckpt_fstate_typed *t, struct ckpt_fout *o, struct khead *h, const struct ckpt_fser **vs)
{
	struct ckpt_jw *w = o->w;
	struct ckpt_fsrc k;
	uint64_t flushed = w->flushed;
	size_t start = w->len, items = w->depth > 0 && (size_t)w->depth <= w->cap ? w->count[w->depth - 1] : 0;
	int rc;

	if (h->n > 0) {
		memcpy(ckpt_jw_room(w, h->n), h->b, h->n);
		w->len += h->n;
		w->count[w->depth - 1] += h->items;
		return 0;
	}
	rc = key_out(t, &k, o, vs);
	ckpt_fsrc_release(&k);
	if (rc == 0 && w->flushed == flushed && w->len - start <= sizeof h->b && w->depth > 0 &&
	    (size_t)w->depth <= w->cap && !w->failed) {
		h->n = w->len - start;
		h->items = w->count[w->depth - 1] - items;
		memcpy(h->b, w->buf + start, h->n);
	}
	return rc;
}

/*
 * -R: a canonical list entry as rows, one per element, written as decoded (no jansson value): each
 * row opened by r, then its key and namespace (decoded for the first row, copied into the next
 * ones), index and value.  An empty list has no row; its key is checked all the same.
 */
int
ckpt_fstate_typed_list_rows(struct ckpt_fstate_typed *t, struct ckpt_frows *r, const char *state, const char *kind)
{
	struct ckpt_fstate_ctx *c = t->c;
	struct ckpt_fsrc k, v;
	struct ckpt_fout o; /* the stacks are written before they are read: not cleared */
	const struct ckpt_fser *vs = t->m->value;
	struct khead h;
	int rc = -1;

	t->done = 1;
	ckpt_fsrc_mem(&v, t->v, t->vn, c->where, c->e);
	v.base = t->at + 8 + t->kn;
	if (ckpt_fsrc_drained(&v)) {
		o.mode = FOUT_NONE;
		o.depth = 0;
		rc = key_out(t, &k, &o, &vs);
		ckpt_fsrc_release(&k);
		goto out;
	}
	h.n = 0;
	for (size_t i = 0; !ckpt_fsrc_drained(&v); i++) {
		o.mode = FOUT_WRITE;
		o.w = r->w;
		o.flat = 1;
		o.depth = 0;
		ckpt_frows_open(r, state, kind, t->kg);
		ckpt_fout_open(&o, '{'); /* flat: the row's object */
		if (key_row(t, &o, &h, &vs) < 0)
			goto out;
		ckpt_fout_key_lit(&o, "index");
		ckpt_fout_int(&o, (long long)i);
		ckpt_fout_key_lit(&o, "value");
		if (list_elem(&v, i, vs, &o) < 0)
			goto out;
		ckpt_fout_close(&o);
		if (ckpt_frows_close(r) < 0)
			goto out;
	}
	rc = 0;
out:
	ckpt_fsrc_release(&v);
	return rc;
}

/* What a sink calls to have the typed form: into o (FOUT_JSON's root, the document, or nowhere). */
int
ckpt_fstate_typed_emit(struct ckpt_fstate_typed *t, struct ckpt_fout *o)
{
	json_t *v = t->ready;

	t->done = 1;
	if (v == NULL)
		return typed_out(t, o);
	t->ready = NULL;
	return ckpt_fout_json(o, v) < 0 ? ckpt_fstate_nomem(t->c) : 0;
}

/* The typed form as a new jansson value (*v NULL when there is none). */
int
ckpt_fstate_typed_json(struct ckpt_fstate_typed *t, json_t **v)
{
	struct ckpt_fout o; /* the stacks are written before they are read: not cleared */

	*v = NULL;
	if (t == NULL)
		return 0;
	o.mode = FOUT_JSON;
	o.root = NULL;
	o.depth = 0;
	if (ckpt_fstate_typed_emit(t, &o) < 0) {
		ckpt_fout_reset(&o);
		return -1;
	}
	*v = o.root;
	return 0;
}

/* Check the typed form the sink did not ask for. */
int
ckpt_fstate_typed_check(struct ckpt_fstate_typed *t)
{
	struct ckpt_fout o;

	if (t == NULL || t->done)
		return 0;
	o.mode = FOUT_NONE;
	o.depth = 0;
	return ckpt_fstate_typed_emit(t, &o);
}

static int typable_of(const struct ckpt_fstate_header *h, const struct ckpt_fstate_meta *m);

/* Can entries of m be typed?  Asked once a state (an entry's question, in the hot loop). */
int
ckpt_fstate_typable(const struct ckpt_fstate_header *h, struct ckpt_fstate_meta *m)
{
	if (m == NULL)
		return 0;
	if (m->typable == 0) {
		m->typable = typable_of(h, m) ? 1 : -1;
		m->ambiguous = m->ns && h->key && ckpt_fser_fixed_length(h->key) < 0 &&
			       ckpt_fser_fixed_length(m->ns) < 0;
		m->kindc = strcmp(m->kind ? m->kind : "", "timers") == 0 ? 't' :
			   strcmp(m->kind ? m->kind : "", "map") == 0 ? 'm' :
			   strcmp(m->kind ? m->kind : "", "list") == 0 ? 'l' : 0;
	}
	return m->typable > 0;
}

/* Can entries of m be typed? */
static int
typable_of(const struct ckpt_fstate_header *h, const struct ckpt_fstate_meta *m)
{
	int plain = !m || !m->kind || (strcmp(m->kind, "map") != 0 && strcmp(m->kind, "list") != 0);

	if (h->stopped || m == NULL || m->value == NULL)
		return 0;
	if (strcmp(m->kind ? m->kind : "", "timers") == 0)
		return !ckpt_fser_blocker(m->value);
	/* a Kryo value last of a canonical entry's value, or its key before a VoidNamespace (typed_out) */
	if (plain ? ckpt_fser_blocker_tail(m->value) != NULL : ckpt_fser_blocker(m->value) != NULL)
		return 0;
	if (m->ns == NULL || ckpt_fser_blocker(m->ns) ||
	    (m->ns->kind == FSER_VOIDNS && plain ? ckpt_fser_blocker_tail(h->key) : ckpt_fser_blocker(h->key)))
		return 0;
	if (m->kind && strcmp(m->kind, "map") == 0)
		return m->value->kind == FSER_MAP;
	if (m->kind && strcmp(m->kind, "list") == 0)
		return m->value->kind == FSER_LIST;
	return 1;
}
