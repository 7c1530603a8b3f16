/* state-keyed.c: keyed state (ckpt-flink(5), STATE FILES): the key groups of the canonical
 * savepoint layout and of the heap layout, and the column families of RocksDB's files. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readers.h"
#include "model/model.h"

#define END_OF_KEY_GROUP 0xffff
#define MAX_STATES 32767

/* ------------------------------------------------------------ keyed state */

struct kgs {
	uint32_t first, n;
	uint64_t *off;
};

static int
read_kgs(struct ckpt_fstate_ctx *c, struct kgs *g)
{
	const char *r = json_string_value(json_object_get(c->h->detail, "key_groups"));
	const json_t *offs = json_object_get(c->h->detail, "offsets");
	unsigned a = 0, b = 0;
	int k;

	memset(g, 0, sizeof *g);
	if (r == NULL || *r == '\0')
		return 0;
	k = sscanf(r, "%u-%u", &a, &b);
	if (k == 1)
		b = a;
	g->first = a;
	g->n = b - a + 1;
	if (json_array_size(offs) != g->n)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->b->meta, "a key-groups handle with %zu offsets for %u key groups",
				    json_array_size(offs), g->n);
	if ((g->off = ckpt_calloc(g->n, sizeof *g->off, c->e)) == NULL)
		return -1;
	for (uint32_t i = 0; i < g->n; i++)
		g->off[i] = (uint64_t)json_integer_value(json_array_get(offs, i));
	return 0;
}

/* The state of id within the header, or a stand-in "#id" when the header stopped before it. */
const char *
ckpt_fstate_state_name(const struct ckpt_fstate_header *h, int16_t id, char buf[16])
{
	if ((size_t)id < h->n)
		return h->m[id].name;
	snprintf(buf, 16, "#%d", id);
	return buf;
}

/* Write the length suffix of n at o (CompositeKeySerializationUtils.writeVariableIntBytes: its
 * bytes from the lowest, at least one, at most 5); returns how many. */
static size_t
length_suffix_put(unsigned char *o, size_t n)
{
	size_t k = 0;
	uint32_t v = (uint32_t)n;

	do {
		o[k++] = (unsigned char)v;
		v >>= 8;
	} while (v != 0);
	return k;
}

/* One key group of the canonical layout, from its offset to its end-of-key-group mark. */
static int
canonical_group(struct ckpt_fstate_ctx *c, struct ckpt_fsrc *s, const struct ckpt_fstate_header *h, uint32_t kg, uint64_t off)
{
	unsigned char *k = NULL, *v = NULL; /* each entry's key and value, the buffers reused */
	size_t kcap = 0, vcap = 0;
	int16_t id;
	char buf[16];
	int rc = -1;

	if (ckpt_fsrc_seek(s, off, h->compressed) < 0 || ckpt_fsrc_i16(s, &id, "state id") < 0)
		return -1;
	for (;;) {
		size_t kn, vn = 0;
		uint64_t at;
		int more, r;
		struct ckpt_fstate_typed t;
		uint32_t pk;

		if (id < 0 || id >= MAX_STATES || (!h->stopped && (size_t)id >= h->n)) {
			ckpt_fsrc_fail(s, "state id %d (the header has %zu states)", id, h->n);
			break;
		}
		at = ckpt_fsrc_tell(s);
		if (ckpt_fsrc_blob_buf(s, &k, &kcap, &kn, "key") < 0)
			break;
		if (kn < c->prefix) {
			ckpt_fsrc_fail(s, "a key of %zu bytes, shorter than its key-group prefix", kn);
			break;
		}
		more = k[0] & 0x80;
		k[0] &= 0x7f;
		pk = c->prefix == 2 ? (uint32_t)k[0] << 8 | k[1] : k[0];
		r = 0;
		t.c = NULL;
		if (pk != kg)
			r = ckpt_fsrc_fail(s, "a key of key group %u at the offset of key group %u", pk, kg);
		if (r == 0)
			r = ckpt_fsrc_blob_buf(s, &v, &vcap, &vn, "value");
		if (r == 0 && !c->k->untyped && ckpt_fstate_typable(h, (size_t)id < h->n ? &h->m[id] : NULL))
			t = (struct ckpt_fstate_typed){.c = c, .h = h, .m = &h->m[id], .k = k, .kn = kn, .v = v ? v : (unsigned char *)"",
					    .vn = vn, .at = at, .kg = kg};
		if (r == 0)
			r = c->k->kv(c->k->arg, ckpt_fstate_state_name(h, id, buf), kg, k, kn, v ? v : (unsigned char *)"",
				     vn, t.c ? &t : NULL);
		if (r == 0)
			r = ckpt_fstate_typed_check(t.c ? &t : NULL);
		if (r < 0)
			break;
		if (!more)
			continue;
		if (ckpt_fsrc_i16(s, &id, "state id or end of key group") < 0)
			break;
		if ((uint16_t)id == END_OF_KEY_GROUP) {
			rc = 0;
			break;
		}
	}
	free(k);
	free(v);
	return rc;
}

/* Sort the non-empty key groups by offset, so each one's end is the next one's start. */
int
ckpt_fstate_cmp_kgoff(const void *a, const void *b)
{
	const struct ckpt_fstate_kgoff *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

static int
read_canonical(struct ckpt_fstate_ctx *c, struct ckpt_fsrc *s, const struct ckpt_fstate_header *h, const struct kgs *g)
{
	struct ckpt_fstate_kgoff *o = ckpt_calloc(g->n + 1, sizeof *o, c->e);
	size_t n = 0;
	int rc = -1;

	if (o == NULL)
		return -1;
	for (uint32_t i = 0; i < g->n; i++)
		if (g->off[i] != 0)
			o[n++] = (struct ckpt_fstate_kgoff){g->off[i], g->first + i};
	qsort(o, n, sizeof *o, ckpt_fstate_cmp_kgoff);
	if (!h->stopped && (n ? o[0].off : c->h->size) != h->end) {
		ckpt_err_set(c->e, CKPT_ERR_INPUT, c->where, "offset %llu: the header ends here, but the first key group "
			     "starts at %llu", (unsigned long long)h->end, (unsigned long long)(n ? o[0].off : c->h->size));
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t end = i + 1 < n ? o[i + 1].off : c->h->size;

		if (o[i].off > c->h->size) {
			ckpt_err_set(c->e, CKPT_ERR_INPUT, c->where, "key group %u at offset %llu, past the end (%llu bytes)",
				     o[i].kg, (unsigned long long)o[i].off, (unsigned long long)c->h->size);
			goto out;
		}
		if (kg_skipped(c->k, o[i].kg))
			continue;
		if (canonical_group(c, s, h, o[i].kg, o[i].off) < 0)
			goto out;
		if ((h->compressed && !ckpt_fsrc_drained(s)) || ckpt_fsrc_tell(s) != end) {
			ckpt_fsrc_fail(s, "key group %u ends here, but the next data starts at %llu", o[i].kg,
				       (unsigned long long)end);
			goto out;
		}
	}
	rc = 0;
out:
	free(o);
	return rc;
}

/* One value read (and checked) with t, its bytes captured (appended to buf at *len, of *cap
 * bytes); what names it in errors. */
static int
heap_piece(struct ckpt_fsrc *s, const struct ckpt_fser *t, const char *what, unsigned char **buf, size_t *cap,
	   size_t *len, int32_t *hash, int *hashed)
{
	struct ckpt_fout o = {.mode = FOUT_NONE};
	int r;

	ckpt_fsrc_capture(s, 1);
	s->what = what;
	r = ckpt_fser_emit(t, s, &o, hash, hashed);
	s->what = NULL;
	ckpt_fsrc_capture(s, 0);
	if (r < 0)
		return -1;
	if (ckpt_grow(buf, cap, *len + s->clen, 1, 64, NULL) < 0)
		return ckpt_err_nomem(s->e, s->where);
	if (s->clen)
		memcpy(*buf + *len, s->cap, s->clen);
	*len += s->clen;
	return 0;
}

/* One (namespace, key, state) of a heap state map, or one timer, as a canonical key (key-group
 * prefix, key, namespace) and value; its typed form is decoded again from them when asked. */
static int
heap_entry(struct ckpt_fstate_ctx *c, struct ckpt_fsrc *s, const struct ckpt_fstate_header *h, struct ckpt_fstate_meta *m, uint32_t kg)
{
	struct ckpt_fstate_heapbuf *B = c->heap;
	size_t nn = 0, kn = c->prefix, vn = 0;
	int32_t hash = 0, hh;
	int hashed = 0, hd;
	uint64_t at = ckpt_fsrc_tell(s);

	ckpt_fstate_typable(h, m); /* sets m->kindc */
	B->key[0] = (unsigned char)(c->prefix == 2 ? kg >> 8 : kg);
	if (c->prefix == 2)
		B->key[1] = (unsigned char)kg;
	if (m->kindc == 't') {
		if (heap_piece(s, m->value, "timer", &B->key, &B->kcap, &kn, &hash, &hashed) < 0 ||
		    (hashed && ckpt_fstate_kg_check(c, at, NULL, 0, m->name, kg, hash) < 0))
			return -1;
	} else {
		if (heap_piece(s, m->ns, "namespace", &B->ns, &B->ncap, &nn, &hh, &hd) < 0 ||
		    heap_piece(s, h->key, "key", &B->key, &B->kcap, &kn, &hash, &hashed) < 0 ||
		    heap_piece(s, m->value, "value", &B->val, &B->vcap, &vn, &hh, &hd) < 0)
			return -1;
		if (hashed && ckpt_fstate_kg_check(c, at, NULL, 0, m->name, kg, hash) < 0)
			return -1;
		/* the canonical order: key, then namespace, each with its length after it when both
		 * are of variable length (as the canonical layout has them) */
		if (ckpt_grow(&B->key, &B->kcap, kn + nn + 10, 1, 64, NULL) < 0)
			return ckpt_err_nomem(c->e, c->where);
		if (m->ambiguous)
			kn += length_suffix_put(B->key + kn, kn - c->prefix);
		if (nn)
			memcpy(B->key + kn, B->ns, nn);
		kn += nn;
		if (m->ambiguous)
			kn += length_suffix_put(B->key + kn, nn);
	}
	{
		struct ckpt_fstate_typed t = {.c = c, .h = h, .m = m, .k = B->key, .kn = kn, .v = vn ? B->val : (unsigned char *)"",
				   .vn = vn, .at = at, .kg = kg, .heap = 1};

		if (c->k->kv(c->k->arg, m->name, kg, B->key, kn, t.v, vn, c->k->untyped && !c->k->layout ? NULL : &t) < 0)
			return -1;
		return c->k->untyped ? 0 : ckpt_fstate_typed_check(&t);
	}
}

/* What stops ckpt from walking the entries of m in a heap snapshot (NULL: nothing); m is NULL for
 * a state the header does not name, as the last state named is for a header that stopped early:
 * then its serializers are not all known. */
const char *
ckpt_fstate_heap_stop(const struct ckpt_fstate_header *h, const struct ckpt_fstate_meta *m)
{
	const char *stop;

	if (m == NULL || (h->stopped && m == &h->m[h->n - 1]))
		return h->stop;
	stop = strcmp(m->kind ? m->kind : "", "timers") == 0 ? ckpt_fser_blocker(m->value) :
		ckpt_fser_blocker(m->ns) ? ckpt_fser_blocker(m->ns) : ckpt_fser_blocker(m->value);
	return stop ? stop : ckpt_fser_blocker(h->key);
}

/* One state block of a heap key group: i16 state id, i32 count, the entries with no lengths.
 * 1 when the summary passes a state over (the sink's skip): nothing after it in the key group
 * can be found; *id is its id. */
static int
heap_state(struct ckpt_fstate_ctx *c, struct ckpt_fsrc *s, const struct ckpt_fstate_header *h, uint32_t kg, unsigned char *seen,
	   int16_t *idp)
{
	struct ckpt_fstate_meta *m = NULL;
	const char *stop;
	char why[700], buf[16];
	int16_t id;
	int32_t n;

	if (h->compressed && ckpt_fsrc_seek(s, ckpt_fsrc_tell(s), 1) < 0)
		return -1;
	if (ckpt_fsrc_i16(s, &id, "state id") < 0)
		return -1;
	if (id < 0 || id >= MAX_STATES || ((size_t)id >= h->n && !h->stopped) || seen[id])
		return ckpt_fsrc_fail(s, "state id %d in key group %u (%zu states, each once)", id, kg, h->n);
	*idp = id;
	seen[id] = 1;
	if ((size_t)id < h->n)
		m = &h->m[id];
	stop = ckpt_fstate_heap_stop(h, m);
	if (stop && c->k->skip == NULL)
		return ckpt_err_set(c->e, CKPT_ERR_REFUSED, c->where, "state \"%s\" of a heap snapshot has no lengths, "
				    "and its serializer %s is not one ckpt decodes", m->name, stop);
	if (ckpt_fstate_read_count(s, &n, INT32_MAX, "entry count") < 0)
		return -1;
	if (stop) { /* with no entries, nothing to step over */
		if (stop == h->stop)
			snprintf(why, sizeof why, "a heap snapshot has no lengths, and %s", h->stop);
		else
			snprintf(why, sizeof why, "a heap snapshot has no lengths, and its serializer %s is not one "
				 "ckpt decodes", stop);
		if (c->k->skip(c->k->arg, ckpt_fstate_state_name(h, id, buf), kg, n, why) < 0)
			return -1;
		if (n > 0)
			return 1;
	}
	for (int32_t i = 0; i < n; i++)
		if (heap_entry(c, s, h, m, kg) < 0)
			return -1;
	if (h->compressed && !ckpt_fsrc_drained(s))
		return ckpt_fsrc_fail(s, "state \"%s\" in key group %u does not end with its compressed stream",
				      ckpt_fstate_state_name(h, id, buf), kg);
	return 0;
}

/* HeapSnapshotStrategy: per key group in the range, i32 key group, then one block per state.
 * The summary reads a key group up to the first state it passes over (heap_state); every state
 * is in every key group, so a state found in none read whole, when the header stopped early, may
 * be missing (the sink's skip is told, with state NULL). */
static int
read_heap(struct ckpt_fstate_ctx *c, struct ckpt_fsrc *s, const struct ckpt_fstate_header *h, const struct kgs *g)
{
	size_t nid = h->stopped ? MAX_STATES : h->n, nseen = 0;
	unsigned char *seen = ckpt_calloc(nid + 1, 1, c->e);
	int16_t *ids = ckpt_calloc(nid + 1, sizeof *ids, c->e), id = 0;
	struct ckpt_fstate_heapbuf B = {.key = malloc(2), .kcap = 2};
	int rc = -1, cut = 0, whole = 0; /* cut: the key group before was passed over from a state on */

	c->heap = &B;
	if (seen == NULL || ids == NULL || (B.key == NULL && ckpt_err_nomem(c->e, c->where)))
		goto out;
	if (h->stopped && c->k->skip == NULL) {
		ckpt_err_set(c->e, CKPT_ERR_REFUSED, c->where, "a heap snapshot, whose entries have no lengths, and %s",
			     h->stop);
		goto out;
	}
	for (uint32_t i = 0; i < g->n; i++) {
		uint64_t end = i + 1 < g->n ? g->off[i + 1] : c->h->size;
		int known = i == 0 ? !h->stopped : !cut && !kg_skipped(c->k, g->first + i - 1);
		int32_t kg;

		if (kg_skipped(c->k, g->first + i))
			continue;
		if (known && g->off[i] != (i ? ckpt_fsrc_tell(s) : h->end)) {
			ckpt_err_set(c->e, CKPT_ERR_INPUT, c->where, "key group %u at offset %llu, but the data before it "
				     "ends at %llu", g->first + i, (unsigned long long)g->off[i],
				     (unsigned long long)(i ? ckpt_fsrc_tell(s) : h->end));
			goto out;
		}
		if (ckpt_fsrc_seek(s, g->off[i], 0) < 0 || ckpt_fsrc_i32(s, &kg, "key group") < 0)
			goto out;
		if ((uint32_t)kg != g->first + i) {
			ckpt_fsrc_fail(s, "key group %d where key group %u starts", kg, g->first + i);
			goto out;
		}
		while (nseen > 0)
			seen[ids[--nseen]] = 0;
		cut = 0;
		for (size_t k = 0; !cut && (h->stopped ? ckpt_fsrc_tell(s) < end : k < h->n); k++) {
			if ((cut = heap_state(c, s, h, (uint32_t)kg, seen, &id)) < 0)
				goto out;
			ids[nseen++] = id;
		}
		if (cut && c->k->cut(c->k->arg, h, (uint32_t)kg, ids, nseen) < 0)
			goto out;
		if (!cut && ckpt_fsrc_tell(s) != end) {
			ckpt_fsrc_fail(s, "key group %d ends here, but the next data starts at %llu", kg,
				       (unsigned long long)end);
			goto out;
		}
		whole |= !cut;
	}
	if (h->stopped && !whole && g->n > 0) {
		char why[200], buf[16];

		snprintf(why, sizeof why, "subtask %u may hold states not listed here: its header was not read to its "
			 "end, and in each of its key groups the states after \"%s\" cannot be found, a heap snapshot "
			 "having no lengths", c->st->index, ckpt_fstate_state_name(h, id, buf));
		if (c->k->skip(c->k->arg, NULL, -1, -1, why) < 0)
			goto out;
	}
	rc = 0;
out:
	free(seen);
	free(ids);
	free(B.key);
	free(B.ns);
	free(B.val);
	c->heap = NULL;
	return rc;
}

/* Tags 3 and 12 are written by the heap backend and by full RocksDB snapshots alike: the heap
 * layout has every key group, each opening with its number. */
static int
is_heap(struct ckpt_fsrc *s, const struct ckpt_fstate_header *h, const struct kgs *g)
{
	int32_t kg;

	for (uint32_t i = 0; i < g->n; i++)
		if (g->off[i] == 0)
			return 0;
	(void)h;
	if (g->n == 0 || ckpt_fsrc_seek(s, g->off[0], 0) < 0 || g->off[0] + 4 > s->size)
		return 0;
	return ckpt_fsrc_i32(s, &kg, "key group") == 0 && (uint32_t)kg == g->first;
}

int
ckpt_fstate_dry_op(void *arg, const char *state, size_t idx, const unsigned char *p, size_t n, json_t *typed)
{
	(void)arg, (void)state, (void)idx, (void)p, (void)n;
	json_decref(typed);
	return 0;
}

int
ckpt_fstate_dry_kv(void *arg, const char *state, uint32_t kg, const unsigned char *k, size_t kn,
		   const unsigned char *v, size_t vn, struct ckpt_fstate_typed *typed)
{
	(void)arg, (void)state, (void)kg, (void)k, (void)kn, (void)v, (void)vn, (void)typed;
	return 0;
}

/* When key group 0 comes first (its number and a state id with a key length look alike) or the
 * header stopped early, the layout is the one that parses to its end: 1 heap, 0 canonical. */
static int
which_layout(struct ckpt_fstate_ctx *c, struct ckpt_fsrc *s, const struct ckpt_fstate_header *h, const struct kgs *g)
{
	const struct ckpt_fstate_sink dry = {.op = ckpt_fstate_dry_op, .kv = ckpt_fstate_dry_kv, .untyped = 1,
				  .kg_lo = c->k->kg_lo, .kg_hi = c->k->kg_hi}, *k = c->k; /* -k: its key group alone */
	struct ckpt_err scratch = {0}, *e = c->e;
	int heap = 1;

	c->k = &dry;
	c->e = s->e = &scratch;
	if (h->stopped || read_heap(c, s, h, g) < 0)
		heap = read_canonical(c, s, h, g) < 0;
	c->k = k;
	c->e = s->e = e;
	return heap;
}

/* Where the header ends: the first key group's offset (0: none recorded). */
static uint64_t
first_offset(const struct kgs *g)
{
	uint64_t first = 0;

	for (uint32_t i = 0; i < g->n; i++)
		if (g->off[i] && (first == 0 || g->off[i] < first))
			first = g->off[i];
	return first;
}

/* The end of the bytes of the key groups read (-k's, a shard's; 0: all are): the last of them ends
 * where the next key group in the file starts, or at the file's end.  A shard then fetches its
 * bytes alone. */
static uint64_t
window_end(const struct ckpt_fstate_ctx *c, const struct kgs *g)
{
	uint64_t last = 0, end = c->h->size;

	if (c->k->kg_hi == 0)
		return 0;
	for (uint32_t i = 0; i < g->n; i++)
		if (!kg_skipped(c->k, g->first + i) && g->off[i] > last)
			last = g->off[i];
	if (last == 0)
		return 0;
	for (uint32_t i = 0; i < g->n; i++)
		if (g->off[i] > last && g->off[i] < end)
			end = g->off[i];
	return end;
}

int
ckpt_fstate_read_keyed(struct ckpt_fstate_ctx *c)
{
	struct ckpt_fstate_header h = {0};
	struct ckpt_fsrc s = {0};
	struct kgs g = {0};
	int fd = -1, rc = -1, heap;

	s.fd = -1;
	c->prefix = ckpt_flink_kg_prefix(c->op->max_parallelism);
	if (read_kgs(c, &g) < 0)
		goto out;
	if (c->k->kg_hi > 0 && (g.n == 0 || g.first >= c->k->kg_hi || g.first + g.n <= c->k->kg_lo)) {
		rc = 0; /* nothing in the window */
		goto out;
	}
	if (ckpt_fstate_open_bytes(c, &s, &fd) < 0)
		goto out;
	ckpt_fsrc_limit(&s, first_offset(&g)); /* the header */
	if (ckpt_fstate_read_keyed_header(&s, &h) < 0)
		goto out;
	if (c->k->header && c->k->header(c->k->arg, "keyed", &h) < 0)
		goto out;
	ckpt_fsrc_limit(&s, g.n ? g.off[0] + 4 : 0);
	heap = strcmp(c->h->kind, "key_groups") == 0 && is_heap(&s, &h, &g);
	ckpt_fsrc_limit(&s, window_end(c, &g)); /* the key groups read */
	if (heap && (h.stopped || g.first == 0))
		heap = which_layout(c, &s, &h, &g);
	rc = heap ? read_heap(c, &s, &h, &g) : read_canonical(c, &s, &h, &g);
out:
	free(g.off);
	ckpt_fstate_header_release(&h);
	ckpt_fsrc_release(&s);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* One entry in the heap layout to c->k, for changelog.c. */
int
ckpt_fstate_kv(struct ckpt_fstate_ctx *c, const struct ckpt_fstate_header *h, struct ckpt_fstate_meta *m, uint32_t kg, const unsigned char *k,
	       size_t kn, const unsigned char *v, size_t vn)
{
	struct ckpt_fstate_typed t = {.c = c, .h = h, .m = m, .k = k, .kn = kn, .v = vn ? v : (const unsigned char *)"",
			   .vn = vn, .kg = kg, .heap = 1};
	int typed = !c->k->untyped && ckpt_fstate_typable(h, m);

	if (kg_skipped(c->k, kg))
		return 0;
	if (c->k->layout)
		ckpt_fstate_typable(h, m); /* sets m->kindc, which the layout's reader reframes by */
	if (c->k->kv(c->k->arg, m->name, kg, k, kn, t.v, vn, typed || c->k->layout ? &t : NULL) < 0)
		return -1;
	return typed ? ckpt_fstate_typed_check(&t) : 0;
}

/* ------------------------------------------------------------ RocksDB state (rocksdb.c) */

/* The entries of a RocksDB handle's column families are the canonical layout's keys and values
 * (ckpt-flink(5), ROCKSDB), typed as those are. */
struct rocks {
	struct ckpt_fstate_ctx *c;
	struct ckpt_fstate_header *h;
	const char *name; /* the column family's state */
	struct ckpt_fstate_meta *m;  /* its meta info, NULL when the header stopped before it */
	uint32_t kg;
};

/* One entry of a RocksDB column family (ckpt-flink(5), ROCKSDB) to c->k: its key-group prefix
 * checked against kg, typed (when the sink asks) or checked as the canonical layout's entries are.
 * Needs no database: fuzz_rocksentry calls it on any bytes. */
int
ckpt_fstate_rocks_entry(struct ckpt_fstate_ctx *c, const struct ckpt_fstate_header *h, struct ckpt_fstate_meta *m, const char *name, uint32_t kg,
			const unsigned char *k, size_t kn, const unsigned char *v, size_t vn)
{
	struct ckpt_fstate_typed t = {0};
	uint32_t pk;

	if (kn < c->prefix)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->where, "a key of %zu bytes in key group %u, shorter than its "
				    "key-group prefix", kn, kg);
	if ((pk = c->prefix == 2 ? (uint32_t)k[0] << 8 | k[1] : k[0]) != kg)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->where, "a key of key group %u read in key group %u", pk, kg);
	if (!c->k->untyped && ckpt_fstate_typable(h, m))
		t = (struct ckpt_fstate_typed){.c = c, .h = h, .m = m, .k = k, .kn = kn, .v = v ? v : (unsigned char *)"",
				    .vn = vn, .kg = kg, .rocks = 1};
	if (c->k->kv(c->k->arg, name, kg, k, kn, v ? v : (unsigned char *)"", vn, t.c ? &t : NULL) < 0)
		return -1;
	return ckpt_fstate_typed_check(t.c ? &t : NULL);
}

static int
rocks_kv(void *arg, const unsigned char *k, size_t kn, const unsigned char *v, size_t vn)
{
	struct rocks *R = arg;

	return ckpt_fstate_rocks_entry(R->c, R->h, R->m, R->name, R->kg, k, kn, v, vn);
}

static int
rocks_default(void *arg, const unsigned char *k, size_t kn, const unsigned char *v, size_t vn)
{
	struct ckpt_fstate_ctx *c = arg;

	(void)k, (void)kn, (void)v, (void)vn;
	return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->where, "operator %s subtask %u: an entry in the default column "
			    "family, which Flink leaves empty", c->op->id, c->st->index);
}

/* The handle's files, meta first: local paths, or the inline bytes meta-handle.c kept in order. */
int
ckpt_fstate_rocks_files(struct ckpt_fstate_ctx *c, struct ckpt_frocks_file *f, char (*paths)[1024], size_t *n)
{
	static const char *const lists[] = {"shared", "private"};
	const json_t *meta = json_object_get(c->h->detail, "meta");
	uint64_t off = 0;

	if (strcmp(json_string_value(json_object_get(meta, "kind")) ?: "", "byte_stream") == 0)
		off = (uint64_t)json_integer_value(json_object_get(meta, "size"));
	*n = 0;
	for (int l = 0; l < 2; l++) {
		const json_t *a = json_object_get(c->h->detail, lists[l]);

		for (size_t i = 0; i < json_array_size(a); i++) {
			const json_t *x = json_array_get(a, i);
			const char *kind = json_string_value(json_object_get(x, "kind")) ?: "";
			struct ckpt_frocks_file *o = &f[(*n)++];

			o->local = json_string_value(json_object_get(x, "local_name")) ?: "";
			o->size = (uint64_t)json_integer_value(json_object_get(x, "size"));
			if (strcmp(kind, "byte_stream") == 0) {
				if (off + o->size > c->h->data.len)
					return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->b->meta, "operator %s subtask %u: the "
							    "inline RocksDB file %s is not there", c->op->id, c->st->index, o->local);
				o->mem = c->h->data.p + off;
				off += o->size;
			} else if (strcmp(kind, "file") == 0 || strcmp(kind, "relative_file") == 0) {
				if (ckpt_fstate_local_path(c, kind, json_string_value(json_object_get(x, "path")) ?: "",
							   paths[*n - 1], sizeof paths[0]) < 0)
					return -1;
				o->path = paths[*n - 1];
			} else {
				return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->b->meta, "operator %s subtask %u: the RocksDB "
						    "file %s in a %s handle", c->op->id, c->st->index, o->local, kind);
			}
		}
	}
	return 0;
}

/* The keyed backend's serialization proxy in the handle's meta data handle, to c->k's header. */
static int
rocks_header(struct ckpt_fstate_ctx *c, struct ckpt_fsrc *s, int *fd, struct ckpt_fstate_header *h)
{
	int rc = ckpt_fstate_rocks_header(c, s, fd, h);

	if (rc == 0 && c->k->header)
		rc = c->k->header(c->k->arg, "keyed", h) < 0 ? -1 : rc;
	return rc;
}

int
ckpt_fstate_rocks_header(struct ckpt_fstate_ctx *c, struct ckpt_fsrc *s, int *fd, struct ckpt_fstate_header *h)
{
	const json_t *meta = json_object_get(c->h->detail, "meta");
	struct ckpt_handle mh = {.kind = c->h->kind, .scope = c->h->scope, .data = c->h->data,
				 .size = (uint64_t)json_integer_value(json_object_get(meta, "size")),
				 .path = (char *)json_string_value(json_object_get(meta, "path"))};
	const struct ckpt_handle *was = c->h;
	int rc;

	if ((mh.detail = json_pack("{s:O}", "delegate", meta ? meta : json_null())) == NULL)
		return ckpt_fstate_nomem(c);
	mh.data.len = mh.data.len < mh.size ? mh.data.len : mh.size; /* the meta's bytes come first */
	c->h = &mh;
	rc = ckpt_fstate_open_bytes(c, s, fd);
	if (rc == 0 && (rc = ckpt_fstate_read_keyed_header(s, h)) == 0 && h->end != mh.size)
		rc = ckpt_fsrc_fail(s, "the keyed state header ends here, but its meta data handle holds %llu bytes",
				    (unsigned long long)mh.size);
	c->h = was;
	json_decref(mh.detail);
	return rc < 0 ? -1 : 0;
}

/*
 * The keys to scan in key group kg: from a[0, *an) to before b[0, *bn) (*bn 0: to the end), the
 * key-group prefix and, when key is set (-k), the key's bytes after it: every entry whose key begins
 * so, the only ones -k keeps, and not the rest of the key group.  a and b hold 2 + keyn bytes.
 */
static void
rocks_range(unsigned prefix, uint32_t kg, const unsigned char *key, size_t keyn, unsigned char *a, size_t *an,
	    unsigned char *b, size_t *bn)
{
	a[0] = (unsigned char)(prefix == 2 ? kg >> 8 : kg), a[1] = (unsigned char)kg;
	*an = prefix;
	if (key) {
		memcpy(a + prefix, key, keyn);
		*an += keyn;
	}
	memcpy(b, a, *an); /* the least key above every key beginning with a: a's last byte below 0xff, plus one */
	for (*bn = *an; *bn > 0 && b[*bn - 1] == 0xff; --*bn)
		;
	if (*bn > 0)
		b[*bn - 1]++;
}

/* Each key group of the range, each state in the header's order (the canonical order). */
static int
rocks_groups(struct ckpt_fstate_ctx *c, struct ckpt_fstate_header *h, struct ckpt_frocks_db *db, uint32_t lo, uint32_t hi)
{
	size_t ncf = ckpt_frocks_ncf(db), *order = ckpt_calloc(ncf + 1, sizeof *order, c->e), n = 0;
	struct ckpt_fstate_meta **m = ckpt_calloc(ncf + 1, sizeof *m, c->e);
	unsigned char *a = ckpt_calloc(2, 2 + c->k->keyn, c->e), *b = a ? a + 2 + c->k->keyn : NULL;
	char where[1024];
	int rc = -1;

	snprintf(where, sizeof where, "%s", c->where);
	if (order == NULL || m == NULL || a == NULL)
		goto out;
	for (size_t j = 0; j <= h->n; j++) /* the header's states, then those it stopped before */
		for (size_t i = 0; i < ncf; i++) {
			const char *name = ckpt_frocks_cf(db, i);
			struct ckpt_fstate_meta *x = j < h->n && strcmp(h->m[j].name, name) == 0 ? &h->m[j] : NULL;

			if (x == NULL && (j < h->n || ckpt_fstate_meta_named(h, name) || strcmp(name, "default") == 0))
				continue;
			if (x == NULL && !h->stopped) {
				ckpt_err_set(c->e, CKPT_ERR_INPUT, where, "operator %s subtask %u: column family \"%s\" has "
					     "no meta info in the state's header", c->op->id, c->st->index, name);
				goto out;
			}
			if (c->k->only && strcmp(name, c->k->only) != 0)
				continue; /* --state: another state's column family, not opened */
			m[n] = x;
			order[n++] = i;
		}
	for (size_t i = 0; i < ncf; i++)
		if (strcmp(ckpt_frocks_cf(db, i), "default") == 0 && !ckpt_fstate_meta_named(h, "default") &&
		    ckpt_frocks_scan(db, i, NULL, 0, NULL, 0, rocks_default, c, where, c->e) < 0)
			goto out;
	for (uint32_t kg = lo; kg < hi; kg++)
		for (size_t i = 0; i < n; i++) {
			const char *name = ckpt_frocks_cf(db, order[i]);
			struct rocks R = {.c = c, .h = h, .m = m[i], .kg = kg, .name = name};
			size_t an, bn;
			int whole = c->k->key == NULL || m[i] == NULL || strcmp(m[i]->kind ? m[i]->kind : "", "timers") == 0;

			rocks_range(c->prefix, kg, whole ? NULL : c->k->key, c->k->keyn, a, &an, b, &bn);
			snprintf(c->where, sizeof c->where, "%s:rocksdb:%s", where, name);
			c->rdb = db;
			c->rcf = order[i];
			if (ckpt_frocks_scan(db, order[i], a, an, bn ? b : NULL, bn, rocks_kv, &R, where, c->e) < 0)
				goto out;
		}
	rc = 0;
out:
	c->rdb = NULL;
	snprintf(c->where, sizeof c->where, "%s", where);
	free(order);
	free(m);
	free(a);
	return rc;
}

/* An incremental handle (a checkpoint's or a native savepoint's RocksDB files), clipped to its
 * key-group range and the sink's window. */
int
ckpt_fstate_read_rocksdb(struct ckpt_fstate_ctx *c)
{
	const json_t *sh = json_object_get(c->h->detail, "shared"), *pr = json_object_get(c->h->detail, "private");
	const char *r = json_string_value(json_object_get(c->h->detail, "key_groups"));
	size_t nf = json_array_size(sh) + json_array_size(pr), n;
	struct ckpt_frocks_file *f = ckpt_calloc(nf + 1, sizeof *f, c->e);
	char (*paths)[1024] = ckpt_calloc(nf + 1, sizeof *paths, c->e);
	struct ckpt_frocks_db *db = NULL;
	struct ckpt_fstate_header h = {0};
	struct ckpt_fsrc s = {0};
	unsigned lo = 0, hi = 0;
	int fd = -1, rc = -1;

	s.fd = -1;
	c->prefix = ckpt_flink_kg_prefix(c->op->max_parallelism);
	if (f == NULL || paths == NULL)
		goto out;
	if (r == NULL || *r == '\0' || sscanf(r, "%u-%u", &lo, &hi) < 1) {
		rc = 0; /* no key groups */
		goto out;
	}
	hi = strchr(r, '-') ? hi + 1 : lo + 1;
	for (int pass = 0; pass < 2; pass++) { /* before the header, and after it: -k's window is set there */
		if (c->k->kg_hi > 0) {
			lo = lo > c->k->kg_lo ? lo : c->k->kg_lo;
			hi = hi < c->k->kg_hi ? hi : c->k->kg_hi;
		}
		if (lo >= hi || hi > (c->prefix == 2 ? 65536u : 256u)) {
			rc = 0;
			goto out;
		}
		if (pass == 0 && rocks_header(c, &s, &fd, &h) < 0)
			goto out;
	}
	if (ckpt_fstate_rocks_files(c, f, paths, &n) < 0)
		goto out;
	snprintf(c->where, sizeof c->where, "%s", c->b->meta);
	if ((db = ckpt_frocks_open(f, n, c->k->only, c->b->meta, c->e)) == NULL)
		goto out;
	rc = rocks_groups(c, &h, db, lo, hi);
out:
	ckpt_frocks_close(db);
	ckpt_fstate_header_release(&h);
	ckpt_fsrc_release(&s);
	if (fd >= 0)
		close(fd);
	free(f);
	free(paths);
	return rc;
}
