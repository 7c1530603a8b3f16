/* changelog-rocks.c: a changelog's materialized part of RocksDB's files (an incremental snapshot,
 * ckpt-flink(5), CHANGELOG STATE), its entries turned into the heap layout the changelog's changes
 * apply to, as Flink's restore gives them to the delegate backend: a value and a timer as they are;
 * a list's elements (joined by ',' in RocksDB) into one ListSerializer value; a map's entries (one
 * a user key in RocksDB, the user key after the namespace, the value after a null flag) into one
 * MapSerializer value per key and namespace. */
#include <stdlib.h>
#include <string.h>

#include "readers.h"

struct rk {
	struct ckpt_fstate_ctx *c;
	struct ckpt_fstate_header *H;
	ckpt_fclrocks_put *put;
	void *arg;
	struct ckpt_bytebuf k, v; /* the map being gathered: its scope, its i32 count and entries */
	uint32_t idx, kg, n;
	int pending;
};

static int
add(struct rk *R, struct ckpt_bytebuf *b, const void *p, size_t n)
{
	return ckpt_bytebuf_add(b, p, n, NULL) < 0 ? ckpt_err_nomem(R->c->e, R->c->where) : 0;
}

/* The map gathered so far to put. */
static int
flush(struct rk *R)
{
	if (!R->pending)
		return 0;
	R->pending = 0;
	ckpt_store_be(R->v.p, R->n, 4);
	return R->put(R->arg, R->idx, R->kg, R->k.p, R->k.len, R->v.p, R->v.len, NULL);
}

/* One value of t read from s (checked), and its length suffix after it when state names the state
 * whose key and namespace have them. */
static int
skip_one(struct ckpt_fsrc *s, const struct ckpt_fser *t, const char *state, const char *what)
{
	struct ckpt_fout o = {.mode = FOUT_NONE};
	uint64_t a = ckpt_fsrc_tell(s);
	int32_t h;
	int hd, r;

	s->what = what;
	r = ckpt_fser_emit(t, s, &o, &h, &hd);
	s->what = NULL;
	if (r < 0)
		return -1;
	return state ? ckpt_fstate_length_suffix(s, a, what, state) : 0;
}

/* A map entry k[0, kn) = v[0, vn) of state idx: the scope (key-group prefix, key, namespace) split
 * from the user key, the entry added to the map of that scope (the one being gathered, or a new). */
static int
map_entry(struct rk *R, struct ckpt_fstate_meta *m, uint32_t idx, uint32_t kg, const unsigned char *k, size_t kn,
	  const unsigned char *v, size_t vn)
{
	const char *amb = m->ambiguous ? m->name : NULL;
	struct ckpt_fsrc s;
	size_t at;
	int rc;

	ckpt_fsrc_mem(&s, k, kn, R->c->where, R->c->e);
	rc = ckpt_fsrc_read(&s, NULL, R->c->prefix, "key-group prefix") < 0 ||
	     skip_one(&s, R->H->key, amb, "key") < 0 || skip_one(&s, m->ns, amb, "namespace") < 0 ? -1 : 0;
	at = (size_t)ckpt_fsrc_tell(&s);
	ckpt_fsrc_release(&s);
	if (rc < 0)
		return -1;
	if (at == kn || vn == 0)
		return ckpt_err_set(R->c->e, CKPT_ERR_INPUT, R->c->where, "map state \"%s\": an entry without %s", m->name,
				    at == kn ? "a user key" : "a null flag");
	if (!R->pending || R->idx != idx || R->k.len != at || memcmp(R->k.p + R->c->prefix, k + R->c->prefix, at - R->c->prefix) != 0) {
		if (flush(R) < 0)
			return -1;
		R->k.len = R->v.len = 0;
		if (add(R, &R->k, k, at) < 0 || add(R, &R->v, "\0\0\0\0", 4) < 0)
			return -1;
		R->pending = 1;
		R->idx = idx;
		R->kg = kg;
		R->n = 0;
	}
	R->n++;
	/* MapSerializer: the user key, the null flag, the value; RocksDB's value is the flag and the value */
	return add(R, &R->v, k + at, kn - at) < 0 ? -1 : add(R, &R->v, v, vn);
}

/* A list's value: its elements joined by ',' (StringAppendTESTOperator) into i32 count, elements. */
static int
list_entry(struct rk *R, struct ckpt_fstate_meta *m, uint32_t idx, uint32_t kg, const unsigned char *k, size_t kn,
	   const unsigned char *v, size_t vn)
{
	struct ckpt_fsrc s;
	uint32_t n = 0;
	uint8_t comma;
	int rc = -1;

	R->v.len = 0;
	if (add(R, &R->v, "\0\0\0\0", 4) < 0)
		return -1;
	ckpt_fsrc_mem(&s, v, vn, R->c->where, R->c->e);
	while (!ckpt_fsrc_drained(&s)) {
		size_t a;

		if (n > 0 && ckpt_fsrc_u8(&s, &comma, "list delimiter") < 0)
			goto out;
		if (n > 0 && comma != ',') {
			ckpt_err_set(R->c->e, CKPT_ERR_INPUT, R->c->where, "list state \"%s\": byte %u after element %u, not "
				     "the delimiter ','", m->name, comma, n);
			goto out;
		}
		a = (size_t)ckpt_fsrc_tell(&s);
		if (skip_one(&s, m->value->kids[0], NULL, "list element") < 0 ||
		    add(R, &R->v, v + a, (size_t)ckpt_fsrc_tell(&s) - a) < 0)
			goto out;
		n++;
	}
	ckpt_store_be(R->v.p, n, 4);
	rc = n ? R->put(R->arg, idx, kg, k, kn, R->v.p, R->v.len, NULL) : 0;
out:
	ckpt_fsrc_release(&s);
	return rc;
}

/* Why the entries of m cannot be put into the heap layout, or NULL. */
static const char *
blocked(const struct rk *R, struct ckpt_fstate_meta *m, char *msg, size_t n)
{
	const char *b = NULL;

	if (m->kindc == 'l')
		b = m->value->kind != FSER_LIST || m->value->nkids != 1 ? m->value->cls : ckpt_fser_blocker(m->value);
	else if (m->kindc == 'm')
		b = R->H->key == NULL ? "(none)" : ckpt_fser_blocker(R->H->key) ? ckpt_fser_blocker(R->H->key) :
			ckpt_fser_blocker(m->ns);
	if (b == NULL)
		return NULL;
	snprintf(msg, n, "state \"%s\" of the changelog's materialized part (RocksDB): its entries cannot be put "
		 "together, a serializer %s being one ckpt does not decode", m->name, b);
	return msg;
}

static int
entry(void *arg, const char *state, uint32_t kg, const unsigned char *k, size_t kn, const unsigned char *v,
      size_t vn, struct ckpt_fstate_typed *typed)
{
	struct rk *R = arg;
	struct ckpt_fstate_meta *m = NULL;
	char msg[700];
	const char *why;
	uint32_t idx;

	(void)typed;
	for (idx = 0; idx < R->H->n && m == NULL; idx++)
		if (strcmp(R->H->m[idx].name, state) == 0)
			m = &R->H->m[idx];
	if (m == NULL)
		return ckpt_err_set(R->c->e, CKPT_ERR_INPUT, R->c->where, "an entry of state \"%s\", not in its header", state);
	idx--;
	ckpt_fstate_typable(R->H, m); /* sets m->kindc and m->ambiguous */
	if (m->value == NULL || (m->kindc != 'm' && flush(R) < 0))
		return m->value == NULL ? ckpt_err_set(R->c->e, CKPT_ERR_INPUT, R->c->where, "state \"%s\" without a value "
						       "serializer", state) : -1;
	if ((why = blocked(R, m, msg, sizeof msg)) != NULL)
		return R->put(R->arg, idx, kg, NULL, 0, NULL, 0, why);
	if (m->kindc == 'l')
		return list_entry(R, m, idx, kg, k, kn, v, vn);
	if (m->kindc == 'm')
		return map_entry(R, m, idx, kg, k, kn, v, vn);
	return R->put(R->arg, idx, kg, k, kn, v, vn, NULL);
}

/* The bytes the _metadata keeps of a RocksDB handle j's files (meta, shared, private), in order. */
size_t
ckpt_fclrocks_inline(const json_t *j)
{
	static const char *const lists[] = {"shared", "private"};
	const json_t *m = json_object_get(j, "meta");
	size_t n = 0;

	if (strcmp(json_string_value(json_object_get(m, "kind")) ?: "", "byte_stream") == 0)
		n += (size_t)json_integer_value(json_object_get(m, "size"));
	for (int l = 0; l < 2; l++)
		for (size_t i = 0; i < json_array_size(json_object_get(j, lists[l])); i++) {
			const json_t *f = json_array_get(json_object_get(j, lists[l]), i);

			if (strcmp(json_string_value(json_object_get(f, "kind")) ?: "", "byte_stream") == 0)
				n += (size_t)json_integer_value(json_object_get(f, "size"));
		}
	return n;
}

/* The handle whose stream opens with the keyed header: the heap snapshot's; of RocksDB's files
 * (rocks: h, their inline bytes in it), the meta data handle's, into mh. */
const struct ckpt_handle *
ckpt_fclrocks_header_handle(const json_t *j, int rocks, const struct ckpt_handle *h, struct ckpt_handle *mh)
{
	const json_t *meta = json_object_get(j, "meta");

	if (!rocks)
		return h;
	*mh = (struct ckpt_handle){.scope = h->scope, .kind = "key_groups", .data = h->data,
				   .size = (uint64_t)json_integer_value(json_object_get(meta, "size")),
				   .path = (char *)json_string_value(json_object_get(meta, "path"))};
	mh->data.len = mh->data.len < mh->size ? mh->data.len : mh->size; /* the meta's bytes come first */
	return mh;
}

static int
no_op(void *arg, const char *state, size_t idx, const unsigned char *p, size_t n, json_t *typed)
{
	(void)arg, (void)state, (void)idx, (void)p, (void)n;
	json_decref(typed);
	return 0;
}

int
ckpt_fclrocks_read(struct ckpt_fstate_ctx *c, struct ckpt_fstate_header *H, ckpt_fclrocks_put *put, void *arg)
{
	struct rk R = {.c = c, .H = H, .put = put, .arg = arg};
	const struct ckpt_fstate_sink *was = c->k, k = {.op = no_op, .kv = entry, .arg = &R, .untyped = 1};
	int rc;

	c->k = &k;
	rc = ckpt_fstate_read_rocksdb(c);
	if (rc == 0)
		rc = flush(&R);
	c->k = was;
	free(R.k.p);
	free(R.v.p);
	return rc;
}
