/* state-op.c: operator state (ckpt-flink(5), STATE FILES): list, union and broadcast state cut by
 * the offsets the _metadata records, or by decoding them where Snappy left no lengths. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readers.h"
#include "model/model.h"

#define SNAPPY_ID 10 /* a Snappy stream identifier chunk; compressed operator state offsets come after it */

/* A value's bytes p[0, n) (at offset at of the source) decoded as one value of t, to its last byte, as a
 * jansson value. */
static int
decode_all(struct ckpt_fstate_ctx *c, const struct ckpt_fser *t, const unsigned char *p, size_t n, uint64_t at,
	   const char *what, json_t **v)
{
	struct ckpt_fsrc m;
	int32_t h;
	int hd, r;

	ckpt_fsrc_mem(&m, p, n, c->where, c->e);
	m.base = at;
	r = ckpt_fser_value(t, &m, v, &h, &hd);
	if (r == 0 && !ckpt_fsrc_drained(&m)) {
		json_decref(*v);
		*v = NULL;
		r = ckpt_fsrc_fail(&m, "%s does not end where its serializer (%s) ends", what, t->cls);
	}
	ckpt_fsrc_release(&m);
	return r;
}

struct opel {
	uint64_t off;
	size_t state, idx;
};

static int
cmp_opel(const void *a, const void *b)
{
	const struct opel *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	if (x->state != y->state)
		return x->state < y->state ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* A broadcast state's bytes: i32 size, then size (key, value) pairs. */
static int
decode_broadcast(struct ckpt_fstate_ctx *c, const struct ckpt_fstate_meta *m, const unsigned char *p, size_t n, uint64_t at, json_t **v)
{
	struct ckpt_fsrc s;
	int32_t cnt, h;
	int hd, r;

	ckpt_fsrc_mem(&s, p, n, c->where, c->e);
	s.base = at;
	*v = json_array();
	r = *v ? ckpt_fstate_read_count(&s, &cnt, INT32_MAX, "broadcast state size") : -1;
	for (int32_t i = 0; r == 0 && i < cnt; i++) {
		json_t *k = NULL, *x = NULL;

		r = ckpt_fser_value(m->key, &s, &k, &h, &hd);
		if (r == 0 && (r = ckpt_fser_value(m->value, &s, &x, &h, &hd)) < 0)
			json_decref(k);
		if (r == 0)
			json_array_append_new(*v, json_pack("{s:o, s:o}", "key", k, "value", x));
	}
	if (r == 0 && !ckpt_fsrc_drained(&s))
		r = ckpt_fsrc_fail(&s, "broadcast state \"%s\" does not end where its entries end", m->name);
	ckpt_fsrc_release(&s);
	if (r < 0) {
		json_decref(*v);
		*v = NULL;
	}
	return r;
}

static int
emit_op(struct ckpt_fstate_ctx *c, const struct ckpt_fstate_header *h, const char *name, size_t idx, const unsigned char *p, size_t n,
	uint64_t at)
{
	const struct ckpt_fstate_meta *m = h && !c->k->untyped ? ckpt_fstate_meta_named(h, name) : NULL;
	json_t *typed = NULL;
	int broadcast = m && m->type == 2, lk = 0, whole;

	if (c->k->only && strcmp(name, c->k->only) != 0)
		return 0;

	if (m && !broadcast && m->value && !ckpt_fser_blocker_tail(m->value) && /* each element its own bytes */
	    decode_all(c, m->value, p, n, at, "list element", &typed) < 0) {
		if (ckpt_fstate_legacy_kind(name, m->value)) /* a sink's state: where, as its framing does */
			ckpt_err_prefix(c->e, "operator %s subtask %u: %s element %zu", c->op->id, c->st->index, name, idx);
		return -1;
	}
	if (typed && ckpt_fstate_is_split(name, m->value) && ckpt_fstate_split(c, idx, p + 4, n - 4, at + 4, &typed) < 0) {
		json_decref(typed);
		return -1;
	}
	whole = m && (lk = ckpt_fstate_legacy_kind(name, m->value)) != 0 && (lk == FLEGACY_CONSUMER || lk >= FLEGACY_PRODUCER_HINT);
	if (m && lk != 0 && (whole || typed) && /* the sinks': the bytes of their byte[] */
	    ckpt_fstate_legacy(c, lk, name, idx, whole ? p : p + 4, whole ? n : n - 4, whole ? at : at + 4, &typed) < 0) {
		json_decref(typed);
		return -1;
	}
	if (broadcast && m->key && m->value && !ckpt_fser_blocker(m->key) && !ckpt_fser_blocker(m->value) &&
	    decode_broadcast(c, m, p, n, at, &typed) < 0)
		return -1;
	return c->k->op(c->k->arg, name, idx, p, n, typed);
}

/* Every element of every state, cut by the offsets the _metadata records. */
static int
cut_plain(struct ckpt_fstate_ctx *c, struct ckpt_fsrc *s, const struct ckpt_fstate_header *h, const json_t *states, struct opel *el,
	  size_t nel)
{
	for (size_t i = 0; i < nel; i++) {
		uint64_t end = i + 1 < nel ? el[i + 1].off : c->h->size;
		const char *name = json_string_value(json_object_get(json_array_get(states, el[i].state), "name"));
		unsigned char *p;
		int r;

		if (end > c->h->size)
			return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->where,
					    "offset %llu of operator state \"%s\" lies past the end (%llu bytes)",
					    (unsigned long long)end, json_string_value(json_object_get(
						    json_array_get(states, el[i + 1].state), "name")),
					    (unsigned long long)c->h->size);
		if ((p = malloc(end - el[i].off + 1)) == NULL)
			return ckpt_err_nomem(c->e, c->where);
		r = ckpt_fsrc_seek(s, el[i].off, 0) < 0 ||
		    ckpt_fsrc_read(s, p, (size_t)(end - el[i].off), "operator state element") < 0 ? -1 :
		    emit_op(c, h, name, el[i].idx, p, (size_t)(end - el[i].off), el[i].off);
		free(p);
		if (r < 0)
			return -1;
	}
	return 0;
}

/* Compressed operator state: its elements one after the other with no lengths, so they are cut by
 * decoding them.  Flink 1.17 (and 1.18 before FLINK-34063) began a Snappy stream for each state,
 * its identifier just before the state's first offset; since FLINK-34063 (1.19) one stream holds
 * them all, flushed at each offset, so a state starts at the chunk where the one before ends.
 * Flink's restore reads both alike: one stream from the header's end, chunks from each offset on. */
static int
cut_snappy(struct ckpt_fstate_ctx *c, struct ckpt_fsrc *s, const struct ckpt_fstate_header *h, const json_t *states, struct opel *el,
	   size_t nel)
{
	for (size_t i = 0; i < nel;) {
		const char *name = json_string_value(json_object_get(json_array_get(states, el[i].state), "name"));
		const struct ckpt_fstate_meta *m = ckpt_fstate_meta_named(h, name);
		const char *stop = m == NULL ? "(not in the header)" :
			m->type == 2 ? (ckpt_fser_blocker(m->key) ? ckpt_fser_blocker(m->key) : ckpt_fser_blocker(m->value)) :
			ckpt_fser_blocker(m->value);
		size_t j = i;

		if (stop && c->k->skip == NULL)
			return ckpt_err_set(c->e, CKPT_ERR_REFUSED, c->where,
					    "compressed operator state \"%s\" has no lengths and its serializer %s is "
					    "not one ckpt decodes", name, stop);
		if (stop) { /* the summary: counted by its offsets; the next state read from its own offset */
			char why[600];

			while (j < nel && el[j].state == el[i].state)
				j++;
			snprintf(why, sizeof why, "compressed operator state has no lengths, and its serializer %s is not "
				 "one ckpt decodes", stop);
			if (c->k->skip(c->k->arg, name, -1, (long)(j - i), why) < 0)
				return -1;
			/* Flink's restore seeks to each state's offset in one stream: a chunk starts there in
			 * both layouts (after the state's own identifier in 1.17's, ckpt-flink(5)). */
			if (j < nel && ckpt_fsrc_seek(s, el[j].off, 2) < 0)
				return -1;
			i = j;
			continue;
		}
		if ((i == 0 || ckpt_fsrc_tell(s) != el[i].off) &&
		    (el[i].off < SNAPPY_ID || ckpt_fsrc_seek(s, el[i].off - SNAPPY_ID, 1) < 0))
			return el[i].off < SNAPPY_ID ? ckpt_err_set(c->e, CKPT_ERR_INPUT, c->where, "offset %llu of compressed "
								  "operator state \"%s\" leaves no room for its stream "
								  "identifier", (unsigned long long)el[i].off, name) : -1;
		for (; j < nel && el[j].state == el[i].state; j++) {
			json_t *v = NULL;
			int32_t hh, cnt;
			int hd, r;

			ckpt_fsrc_capture(s, 1);
			if (m->type == 2) {
				r = ckpt_fstate_read_count(s, &cnt, INT32_MAX, "broadcast state size");
				for (int32_t k = 0; r == 0 && k < cnt; k++) {
					json_t *a = NULL, *b = NULL;

					r = ckpt_fser_value(m->key, s, &a, &hh, &hd) < 0 ||
					    ckpt_fser_value(m->value, s, &b, &hh, &hd) < 0 ? -1 : 0;
					json_decref(a);
					json_decref(b);
				}
			} else {
				r = ckpt_fser_value(m->value, s, &v, &hh, &hd);
			}
			json_decref(v);
			ckpt_fsrc_capture(s, 0);
			if (r < 0 || emit_op(c, h, name, el[j].idx, s->cap, s->clen, el[j].off) < 0)
				return -1;
		}
		if (!ckpt_fsrc_drained(s) || (ckpt_fsrc_tell(s) != (j < nel ? el[j].off : c->h->size) &&
					      (j == nel || ckpt_fsrc_tell(s) != el[j].off - SNAPPY_ID)))
			return ckpt_fsrc_fail(s, "compressed operator state \"%s\" does not end where the next begins", name);
		i = j;
	}
	return 0;
}

static int
collect_offsets(struct ckpt_fstate_ctx *c, const json_t *states, struct opel **out, size_t *n)
{
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < json_array_size(states); i++) {
		const json_t *offs = json_object_get(json_array_get(states, i), "offsets");

		for (size_t k = 0; k < json_array_size(offs); k++) {
			if (ckpt_grow(out, &cap, *n + 1, sizeof **out, 16, c->e) < 0)
				return -1;
			(*out)[(*n)++] = (struct opel){(uint64_t)json_integer_value(json_array_get(offs, k)), i, k};
		}
	}
	if (*n)
		qsort(*out, *n, sizeof **out, cmp_opel);
	return 0;
}

int
ckpt_fstate_read_operator(struct ckpt_fstate_ctx *c, int managed)
{
	const json_t *states = json_object_get(c->h->detail, "states");
	struct ckpt_fstate_header h = {0};
	struct ckpt_fsrc s = {0};
	struct opel *el = NULL;
	size_t nel = 0;
	int fd = -1, rc = -1, r = 0;

	s.fd = -1;
	if (ckpt_fstate_open_bytes(c, &s, &fd) < 0 || collect_offsets(c, states, &el, &nel) < 0)
		goto out;
	if (managed && (r = ckpt_fstate_op_header(&s, &h)) < 0)
		goto out;
	if (managed && c->k->header && c->k->header(c->k->arg, "operator", &h) < 0)
		goto out;
	if (managed && !h.stopped && nel > 0 && el[0].off != h.end + (h.compressed ? SNAPPY_ID : 0)) {
		ckpt_err_set(c->e, CKPT_ERR_INPUT, c->where, "offset %llu: the first element starts at %llu, not where "
			     "the header ends%s", (unsigned long long)h.end, (unsigned long long)el[0].off,
			     h.compressed ? " and the Snappy stream identifier after it" : "");
		goto out;
	}
	if (h.compressed)
		rc = cut_snappy(c, &s, &h, states, el, nel);
	else
		rc = cut_plain(c, &s, managed && !h.stopped ? &h : NULL, states, el, nel);
out:
	free(el);
	ckpt_fstate_header_release(&h);
	ckpt_fsrc_release(&s);
	if (fd >= 0)
		close(fd);
	return rc;
}
