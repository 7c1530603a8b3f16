/*
 * doc.c: the validating loader of state documents (ckpt-state(5)) and of
 * archive manifests (ckpt-archive(5)); every error names the file:line:col of
 * the value at fault.
 */
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define PTRLEN 1024

struct ldr {
	const struct ckpt_jdoc *doc;
	struct ckpt_err *e;
	enum ckpt_model_docmode mode;
	struct ckpt_model_member *members;
	size_t nmembers;
	struct ckpt_model_arena *arena; /* the subtask being loaded (documents only) */
	const struct ckpt_model_foreign *foreign;
};

/* Append "/" and key, escaped as a JSON pointer token, to base. */
static void
ptr_key(char *out, const char *base, const char *key)
{
	size_t n = (size_t)snprintf(out, PTRLEN, "%s/", base);

	for (; *key && n + 3 < PTRLEN; key++) {
		if (*key == '~' || *key == '/') {
			out[n++] = '~';
			out[n++] = *key == '~' ? '0' : '1';
		} else {
			out[n++] = *key;
		}
	}
	out[n < PTRLEN ? n : PTRLEN - 1] = '\0';
}

static void
ptr_idx(char *out, const char *base, size_t i)
{
	snprintf(out, PTRLEN, "%s/%zu", base, i);
}

/* Element i of the array at base: its pointer p and its name w in messages ("what: label i"). */
static void
elem_place(char *p, char *w, const char *base, const char *what, const char *label, size_t i)
{
	ptr_idx(p, base, i);
	snprintf(w, PTRLEN, "%s: %s %zu", what, label, i);
}

/* Zeroed room for one element of size per member of arr (at least one). */
static void *
alloc_elems(struct ldr *L, const json_t *arr, size_t size)
{
	return ckpt_calloc(json_array_size(arr) ? json_array_size(arr) : 1, size, L->e);
}

static int
check_keys(struct ldr *L, const json_t *obj, const char *ptr, const char *what,
	   const char *const *allowed)
{
	const char *key;
	json_t *val;

	json_object_foreach((json_t *)obj, key, val) {
		const char *const *a;
		char p[PTRLEN];

		for (a = allowed; *a; a++)
			if (strcmp(*a, key) == 0)
				break;
		if (*a == NULL) {
			ptr_key(p, ptr, key);
			return ckpt_jdoc_err(L->doc, L->e, p, "%s: unknown key \"%s\"", what, key);
		}
	}
	return 0;
}

static int
need_object(struct ldr *L, const json_t *v, const char *ptr, const char *what)
{
	if (!json_is_object(v))
		return ckpt_jdoc_err(L->doc, L->e, ptr, "%s must be an object", what);
	return 0;
}

/* An optional string member: 0 absent or null, 1 present (*out strdup'd), -1 error. */
static int
opt_string(struct ldr *L, const json_t *obj, const char *key, const char *ptr, const char *what,
	   char **out)
{
	json_t *v = json_object_get(obj, key);
	char p[PTRLEN];

	*out = NULL;
	if (v == NULL || json_is_null(v))
		return 0;
	ptr_key(p, ptr, key);
	if (!json_is_string(v))
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: \"%s\" must be a string", what, key);
	*out = ckpt_strdup(json_string_value(v), L->e);
	return *out ? 1 : -1;
}

/* An integer member in [lo, hi]; when absent, *out = dflt unless required. */
static int
get_u64(struct ldr *L, const json_t *obj, const char *key, const char *ptr, const char *what,
	uint64_t lo, uint64_t hi, int required, uint64_t dflt, uint64_t *out)
{
	json_t *v = json_object_get(obj, key);
	char p[PTRLEN];
	json_int_t x;

	ptr_key(p, ptr, key);
	if (v == NULL && !required) {
		*out = dflt;
		return 0;
	}
	if (v == NULL)
		return ckpt_jdoc_err(L->doc, L->e, ptr, "%s: missing \"%s\"", what, key);
	if (!json_is_integer(v))
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: \"%s\" must be an integer", what, key);
	x = json_integer_value(v);
	if (x < 0 || (uint64_t)x < lo || (uint64_t)x > hi)
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: %s %lld out of range (%llu to %llu)", what, key,
				     (long long)x, (unsigned long long)lo, (unsigned long long)hi);
	*out = (uint64_t)x;
	return 0;
}

static int
get_u32(struct ldr *L, const json_t *obj, const char *key, const char *ptr, const char *what,
	uint64_t lo, uint64_t hi, uint32_t *out)
{
	uint64_t v;

	if (get_u64(L, obj, key, ptr, what, lo, hi, 1, 0, &v) < 0)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int
get_bool(struct ldr *L, const json_t *obj, const char *key, const char *ptr, const char *what,
	 int *out)
{
	json_t *v = json_object_get(obj, key);
	char p[PTRLEN];

	*out = 0;
	if (v == NULL)
		return 0;
	ptr_key(p, ptr, key);
	if (!json_is_boolean(v))
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: \"%s\" must be true or false", what, key);
	*out = json_is_true(v);
	return 0;
}

/* An array member (absent: NULL and 0). */
static int
get_array(struct ldr *L, const json_t *obj, const char *key, const char *ptr, const char *what,
	  json_t **out)
{
	json_t *v = json_object_get(obj, key);
	char p[PTRLEN];

	*out = v;
	if (v == NULL)
		return 0;
	ptr_key(p, ptr, key);
	if (!json_is_array(v))
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: \"%s\" must be an array", what, key);
	return 0;
}

/* The bytes of an entry, copied into the subtask's arena. */
static int
get_entry(struct ldr *L, const json_t *v, const char *ptr, const char *what, struct ckpt_bytes *out)
{
	unsigned char *tmp;
	size_t len;

	if (json_is_string(v)) {
		len = json_string_length(v);
		out->p = ckpt_model_arena_alloc(L->arena, len);
		if (out->p == NULL)
			return ckpt_err_nomem(L->e, L->doc->name);
		memcpy(out->p, json_string_value(v), len);
		out->len = len;
		return 0;
	}
	if (ckpt_entry_from_json(v, &tmp, &len, L->e) < 0) {
		if (L->e && L->e->kind != CKPT_ERR_NOMEM)
			ckpt_err_prefix(L->e, "%s", what);
		return ckpt_jdoc_locate(L->doc, L->e, ptr);
	}
	out->p = ckpt_model_arena_alloc(L->arena, len);
	if (out->p == NULL) {
		free(tmp);
		return ckpt_err_nomem(L->e, L->doc->name);
	}
	if (len)
		memcpy(out->p, tmp, len);
	free(tmp);
	out->len = len;
	return 0;
}

/* ---- operator state */

static int
load_list_entries(struct ldr *L, struct ckpt_opstate *os, const json_t *arr, const char *ptr,
		  const char *what)
{
	size_t i;
	json_t *v;

	if ((os->entries = alloc_elems(L, arr, sizeof *os->entries)) == NULL)
		return -1;
	json_array_foreach(arr, i, v) {
		char p[PTRLEN], w[PTRLEN];

		elem_place(p, w, ptr, what, "entry", i);
		if (get_entry(L, v, p, w, &os->entries[i]) < 0)
			return -1;
		os->n++;
		os->bytes += os->entries[i].len;
	}
	return 0;
}

static int
load_opstate(struct ldr *L, struct ckpt_opstate *os, const char *name, const json_t *v,
	     const char *ptr, const char *what, json_t *modes)
{
	static const char *const dkeys[] = {"mode", "entries", "typed", NULL};
	static const char *const mkeys[] = {"mode", "entries", "bytes", NULL};
	const char *mname;
	json_t *m = json_object_get(v, "mode"), *seen;
	char p[PTRLEN];
	int mode;

	if (need_object(L, v, ptr, what) < 0 ||
	    check_keys(L, v, ptr, what, L->mode == SNAP_DOC ? dkeys : mkeys) < 0)
		return -1;
	os->name = ckpt_strdup(name, L->e);
	if (os->name == NULL)
		return -1;
	if (m == NULL)
		return ckpt_jdoc_err(L->doc, L->e, ptr, "%s: missing \"mode\"", what);
	ptr_key(p, ptr, "mode");
	mname = json_is_string(m) ? json_string_value(m) : NULL;
	mode = mname ? ckpt_mode_parse(mname) : -1;
	if (mode < 0)
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: unknown mode %s%s%s (list, union or broadcast)",
				     what, mname ? "\"" : "", mname ? mname : "", mname ? "\"" : "that is not a string");
	os->mode = (enum ckpt_mode)mode;
	seen = json_object_get(modes, name);
	if (seen && strcmp(json_string_value(seen), mname) != 0)
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: mode %s differs from %s in an earlier subtask",
				     what, mname, json_string_value(seen));
	if (seen == NULL && json_object_set_new(modes, name, json_string(mname)) < 0)
		return ckpt_err_nomem(L->e, L->doc->name);
	if (L->mode == SNAP_MANIFEST) {
		uint64_t n;

		if (get_u64(L, v, "entries", ptr, what, 0, UINT64_MAX >> 4, 1, 0, &n) < 0 ||
		    get_u64(L, v, "bytes", ptr, what, 0, UINT64_MAX >> 4, 1, 0, &os->bytes) < 0)
			return -1;
		os->n = (size_t)n;
		return 0;
	}
	{
		json_t *arr;

		if (get_array(L, v, "entries", ptr, what, &arr) < 0)
			return -1;
		ptr_key(p, ptr, "entries");
		return arr ? load_list_entries(L, os, arr, p, what) : 0;
	}
}

static int
load_opstates(struct ldr *L, struct ckpt_subtask *st, const json_t *obj, const char *ptr,
	      const char *what, json_t *modes)
{
	const char *name;
	json_t *v;

	if (need_object(L, obj, ptr, what) < 0)
		return -1;
	st->ops = ckpt_calloc(json_object_size(obj) ? json_object_size(obj) : 1, sizeof *st->ops, L->e);
	if (st->ops == NULL)
		return -1;
	json_object_foreach((json_t *)obj, name, v) {
		char p[PTRLEN], w[PTRLEN];

		ptr_key(p, ptr, name);
		snprintf(w, sizeof w, "%s: state \"%s\"", what, name);
		if (name[0] == '\0')
			return ckpt_jdoc_err(L->doc, L->e, p, "%s: a state name is empty", what);
		st->nops++;
		if (load_opstate(L, &st->ops[st->nops - 1], name, v, p, w, modes) < 0)
			return -1;
	}
	return 0;
}

/* ---- keyed state */

/*
 * A key-group range: one contiguous non-empty range list within [0, maxp),
 * overlapping no other; taken is NULL for a finished subtask, whose range
 * holds nothing and is dropped.
 */
static int
load_key_groups(struct ldr *L, struct ckpt_subtask *st, const json_t *v, uint32_t maxp,
		const char *ptr, const char *what, struct ckpt_bits *taken)
{
	struct ckpt_bits b;
	size_t first, last, count;
	char p[PTRLEN];

	if (v == NULL)
		return ckpt_jdoc_err(L->doc, L->e, ptr, "%s: missing \"key_groups\"", what);
	ptr_key(p, ptr, "key_groups");
	if (ckpt_rangelist_from_json(v, maxp, &b, L->e) < 0) {
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: key_groups must be a range within 0-%u (max parallelism %u)",
				     what, maxp - 1, maxp);
	}
	first = last = ckpt_bits_next(&b, 0);
	count = ckpt_bits_count(&b);
	for (size_t i = first; i < b.n; i = ckpt_bits_next(&b, i + 1))
		last = i;
	ckpt_bits_release(&b);
	if (count == 0)
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: key_groups is empty", what);
	if (last - first + 1 != count)
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: key_groups is not one contiguous range", what);
	if (taken != NULL && ckpt_bits_any_in(taken, first, last + 1))
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: key groups %zu-%zu overlap another subtask's",
				     what, first, last);
	if (taken != NULL)
		ckpt_bits_set_range(taken, first, last + 1);
	st->kg_first = (uint32_t)first;
	st->kg_last = (uint32_t)last;
	return 0;
}

static int
load_kv(struct ldr *L, struct ckpt_subtask *st, struct ckpt_kv *kv, const json_t *v,
	const char *ptr, const char *what)
{
	static const char *const keys[] = {"state", "key_group", "key", "value", "typed", NULL};
	json_t *s = json_object_get(v, "state");
	char p[PTRLEN];
	size_t len;

	if (need_object(L, v, ptr, what) < 0)
		return -1;
	for (const char *const *f = L->foreign ? L->foreign->keys : NULL; f && *f; f++)
		if (json_object_get(v, *f))
			return ckpt_jdoc_err(L->doc, L->e, ptr, "%s: %s (it has \"%s\"): %s", what, L->foreign->about, *f,
					     L->foreign->hint);
	if (check_keys(L, v, ptr, what, keys) < 0)
		return -1;
	ptr_key(p, ptr, "state");
	if (s == NULL)
		return ckpt_jdoc_err(L->doc, L->e, ptr, "%s: missing \"state\"", what);
	if (!json_is_string(s) || json_string_length(s) == 0 ||
	    strlen(json_string_value(s)) != json_string_length(s))
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: \"state\" must be a non-empty string", what);
	len = json_string_length(s);
	kv->state = ckpt_model_arena_alloc(L->arena, len + 1);
	if (kv->state == NULL)
		return ckpt_err_nomem(L->e, L->doc->name);
	memcpy(kv->state, json_string_value(s), len + 1);
	if (get_u32(L, v, "key_group", ptr, what, 0, UINT32_MAX, &kv->key_group) < 0)
		return -1;
	if (kv->key_group < st->kg_first || kv->key_group > st->kg_last) {
		ptr_key(p, ptr, "key_group");
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: key group %u outside the subtask's %u-%u", what,
				     kv->key_group, st->kg_first, st->kg_last);
	}
	if (json_object_get(v, "key") == NULL || json_object_get(v, "value") == NULL)
		return ckpt_jdoc_err(L->doc, L->e, ptr, "%s: needs \"key\" and \"value\"", what);
	ptr_key(p, ptr, "key");
	if (get_entry(L, json_object_get(v, "key"), p, what, &kv->key) < 0)
		return -1;
	ptr_key(p, ptr, "value");
	return get_entry(L, json_object_get(v, "value"), p, what, &kv->value);
}

static int
load_kvstats(struct ldr *L, struct ckpt_subtask *st, const json_t *obj, const char *ptr,
	     const char *what)
{
	static const char *const keys[] = {"entries", "bytes", NULL};
	const char *name;
	json_t *v;

	if (need_object(L, obj, ptr, what) < 0)
		return -1;
	st->kvstats = ckpt_calloc(json_object_size(obj) ? json_object_size(obj) : 1, sizeof *st->kvstats, L->e);
	if (st->kvstats == NULL)
		return -1;
	json_object_foreach((json_t *)obj, name, v) {
		struct ckpt_kvstat *ks = &st->kvstats[st->nkvstats];
		char p[PTRLEN], w[PTRLEN];
		uint64_t n;

		ptr_key(p, ptr, name);
		snprintf(w, sizeof w, "%s: keyed state \"%s\"", what, name);
		if (need_object(L, v, p, w) < 0 || check_keys(L, v, p, w, keys) < 0)
			return -1;
		ks->state = ckpt_strdup(name, L->e);
		if (ks->state == NULL)
			return -1;
		st->nkvstats++;
		if (get_u64(L, v, "entries", p, w, 0, UINT64_MAX >> 4, 1, 0, &n) < 0 ||
		    get_u64(L, v, "bytes", p, w, 0, UINT64_MAX >> 4, 1, 0, &ks->bytes) < 0)
			return -1;
		ks->n = (size_t)n;
	}
	return 0;
}

static int
load_keyed(struct ldr *L, struct ckpt_subtask *st, const json_t *obj, uint32_t maxp,
	   const char *ptr, const char *what, struct ckpt_bits *taken)
{
	static const char *const dkeys[] = {"key_groups", "entries", NULL};
	static const char *const mkeys[] = {"key_groups", "entries", "bytes", "states", NULL};
	json_t *arr, *v;
	char p[PTRLEN];
	size_t i;

	if (need_object(L, obj, ptr, what) < 0 ||
	    check_keys(L, obj, ptr, what, L->mode == SNAP_DOC ? dkeys : mkeys) < 0)
		return -1;
	st->keyed = 1;
	if (load_key_groups(L, st, json_object_get(obj, "key_groups"), maxp, ptr, what, taken) < 0)
		return -1;
	if (L->mode == SNAP_MANIFEST) {
		uint64_t n;
		json_t *states = json_object_get(obj, "states");

		if (get_u64(L, obj, "entries", ptr, what, 0, UINT64_MAX >> 4, 1, 0, &n) < 0 ||
		    get_u64(L, obj, "bytes", ptr, what, 0, UINT64_MAX >> 4, 1, 0, &st->kv_bytes) < 0)
			return -1;
		st->nkv = (size_t)n;
		ptr_key(p, ptr, "states");
		return states ? load_kvstats(L, st, states, p, what) : 0;
	}
	if (get_array(L, obj, "entries", ptr, what, &arr) < 0)
		return -1;
	if (arr == NULL)
		return 0;
	if ((st->kv = alloc_elems(L, arr, sizeof *st->kv)) == NULL)
		return -1;
	ptr_key(p, ptr, "entries");
	json_array_foreach(arr, i, v) {
		char ep[PTRLEN], w[PTRLEN];

		elem_place(ep, w, p, what, "keyed entry", i);
		if (load_kv(L, st, &st->kv[i], v, ep, w) < 0)
			return -1;
		st->nkv++;
	}
	return 0;
}

/* ---- channel state */

static int
load_chans(struct ldr *L, const json_t *arr, const char *ptr, const char *what, int input,
	   struct ckpt_chan **out, size_t *n)
{
	static const char *const ikeys[] = {"gate", "channel", "data", NULL};
	static const char *const okeys[] = {"partition", "subpartition", "data", NULL};
	const char *const *keys = input ? ikeys : okeys;
	size_t i;
	json_t *v;

	if ((*out = alloc_elems(L, arr, sizeof **out)) == NULL)
		return -1;
	json_array_foreach(arr, i, v) {
		struct ckpt_chan *c = &(*out)[i];
		char p[PTRLEN], w[PTRLEN], dp[PTRLEN];

		elem_place(p, w, ptr, what, input ? "input" : "output", i);
		if (need_object(L, v, p, w) < 0 || check_keys(L, v, p, w, keys) < 0 ||
		    get_u32(L, v, keys[0], p, w, 0, UINT32_MAX, &c->a) < 0 ||
		    get_u32(L, v, keys[1], p, w, 0, UINT32_MAX, &c->b) < 0)
			return -1;
		if (json_object_get(v, "data") == NULL)
			return ckpt_jdoc_err(L->doc, L->e, p, "%s: missing \"data\"", w);
		ptr_key(dp, p, "data");
		if (get_entry(L, json_object_get(v, "data"), dp, w, &c->data) < 0)
			return -1;
		(*n)++;
	}
	return 0;
}

static int
load_channel(struct ldr *L, struct ckpt_subtask *st, const json_t *obj, const char *ptr,
	     const char *what)
{
	static const char *const dkeys[] = {"input", "output", NULL};
	static const char *const mkeys[] = {"input", "input_bytes", "output", "output_bytes", NULL};
	json_t *in, *out;
	char p[PTRLEN];

	if (need_object(L, obj, ptr, what) < 0 ||
	    check_keys(L, obj, ptr, what, L->mode == SNAP_DOC ? dkeys : mkeys) < 0)
		return -1;
	if (L->mode == SNAP_MANIFEST) {
		uint64_t ni, no;

		if (get_u64(L, obj, "input", ptr, what, 0, UINT64_MAX >> 4, 1, 0, &ni) < 0 ||
		    get_u64(L, obj, "input_bytes", ptr, what, 0, UINT64_MAX >> 4, 1, 0, &st->in_bytes) < 0 ||
		    get_u64(L, obj, "output", ptr, what, 0, UINT64_MAX >> 4, 1, 0, &no) < 0 ||
		    get_u64(L, obj, "output_bytes", ptr, what, 0, UINT64_MAX >> 4, 1, 0, &st->out_bytes) < 0)
			return -1;
		st->nin = (size_t)ni;
		st->nout = (size_t)no;
		return 0;
	}
	if (get_array(L, obj, "input", ptr, what, &in) < 0 || get_array(L, obj, "output", ptr, what, &out) < 0)
		return -1;
	ptr_key(p, ptr, "input");
	if (in && load_chans(L, in, p, what, 1, &st->in, &st->nin) < 0)
		return -1;
	ptr_key(p, ptr, "output");
	if (out && load_chans(L, out, p, what, 0, &st->out, &st->nout) < 0)
		return -1;
	return 0;
}

/* ---- handles (Flink _metadata, as ckpt-inspect -a prints them) */

static int
load_handle(struct ldr *L, struct ckpt_handle *h, const json_t *v, const char *ptr, const char *what)
{
	const char *key;
	json_t *x;

	if (need_object(L, v, ptr, what) < 0)
		return -1;
	if (opt_string(L, v, "scope", ptr, what, &h->scope) < 0 || opt_string(L, v, "kind", ptr, what, &h->kind) < 0 ||
	    opt_string(L, v, "path", ptr, what, &h->path) < 0)
		return -1;
	if (h->scope == NULL || h->kind == NULL)
		return ckpt_jdoc_err(L->doc, L->e, ptr, "%s: needs \"scope\" and \"kind\"", what);
	if (get_u64(L, v, "size", ptr, what, 0, INT64_MAX, 1, 0, &h->size) < 0)
		return -1;
	json_object_foreach((json_t *)v, key, x) {
		if (!strcmp(key, "scope") || !strcmp(key, "kind") || !strcmp(key, "size") || !strcmp(key, "path"))
			continue;
		if (h->detail == NULL && (h->detail = json_object()) == NULL)
			return ckpt_err_nomem(L->e, L->doc->name);
		if (json_object_set(h->detail, key, x) < 0)
			return ckpt_err_nomem(L->e, L->doc->name);
	}
	return 0;
}

static int
load_handles(struct ldr *L, struct ckpt_subtask *st, const json_t *arr, const char *ptr,
	     const char *what)
{
	size_t i;
	json_t *v;

	if ((st->handles = alloc_elems(L, arr, sizeof *st->handles)) == NULL)
		return -1;
	json_array_foreach(arr, i, v) {
		char p[PTRLEN], w[PTRLEN];

		elem_place(p, w, ptr, what, "handle", i);
		st->nhandles++;
		if (load_handle(L, &st->handles[i], v, p, w) < 0)
			return -1;
	}
	return 0;
}

/* ---- subtasks */

static int
load_member_ref(struct ldr *L, struct ckpt_subtask *st, const json_t *obj, const char *ptr,
		const char *what)
{
	json_t *m = json_object_get(obj, "member");
	char p[PTRLEN];

	if (m == NULL)
		return 0;
	ptr_key(p, ptr, "member");
	if (!json_is_string(m))
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: \"member\" must be a string", what);
	for (size_t i = 0; i < L->nmembers; i++)
		if (strcmp(L->members[i].name, json_string_value(m)) == 0) {
			if (L->members[i].seen)
				return ckpt_jdoc_err(L->doc, L->e, p, "%s: member \"%s\" belongs to two subtasks",
						     what, json_string_value(m));
			L->members[i].seen = 1;
			st->member = &L->members[i];
			return 0;
		}
	return ckpt_jdoc_err(L->doc, L->e, p, "%s: member \"%s\" is not in \"members\"", what,
			     json_string_value(m));
}

static int
load_subtask_parts(struct ldr *L, const struct ckpt_operator *op, struct ckpt_subtask *st,
		   const json_t *obj, const char *ptr, const char *what, json_t *modes,
		   struct ckpt_bits *taken)
{
	json_t *v, *arr;
	char p[PTRLEN];

	if ((v = json_object_get(obj, "operator_state")) != NULL) {
		ptr_key(p, ptr, "operator_state");
		if (load_opstates(L, st, v, p, what, modes) < 0)
			return -1;
	}
	if ((v = json_object_get(obj, "keyed_state")) != NULL) {
		ptr_key(p, ptr, "keyed_state");
		if (load_keyed(L, st, v, op->max_parallelism, p, what, st->finished ? NULL : taken) < 0)
			return -1;
	}
	if ((v = json_object_get(obj, "channel_state")) != NULL) {
		ptr_key(p, ptr, "channel_state");
		if (load_channel(L, st, v, p, what) < 0)
			return -1;
	}
	if (get_array(L, obj, "handles", ptr, what, &arr) < 0)
		return -1;
	ptr_key(p, ptr, "handles");
	if (arr && load_handles(L, st, arr, p, what) < 0)
		return -1;
	if (L->mode == SNAP_MANIFEST)
		return load_member_ref(L, st, obj, ptr, what);
	return 0;
}

/* How many keyed entries of the first state named st holds, and that name (NULL when not known). */
static size_t
first_keyed_state(const struct ckpt_subtask *st, const char **name)
{
	size_t n = 0;

	*name = NULL;
	if (st->kv != NULL && st->nkv > 0) {
		*name = st->kv[0].state;
		for (size_t k = 0; k < st->nkv; k++)
			n += strcmp(st->kv[k].state, *name) == 0;
		return n;
	}
	for (size_t i = 0; i < st->nkvstats; i++)
		if (st->kvstats[i].n > 0) {
			*name = st->kvstats[i].state;
			return st->kvstats[i].n;
		}
	return st->nkv;
}

static const char *
entries(size_t n)
{
	return n == 1 ? "entry" : "entries";
}

/*
 * A finished subtask holds no state: empty containers are dropped, and the
 * first thing it does hold is named, at the value holding it.
 */
static int
check_finished(struct ldr *L, struct ckpt_subtask *st, const char *ptr, const char *what)
{
	char p[PTRLEN], q[PTRLEN];
	const char *name;
	size_t n;

	for (size_t i = 0; i < st->nops; i++)
		if (st->ops[i].n > 0) {
			ptr_key(q, ptr, "operator_state");
			ptr_key(p, q, st->ops[i].name);
			return ckpt_jdoc_err(L->doc, L->e, p, "%s: finished, but holds %zu %s of %s state \"%s\"",
					     what, st->ops[i].n, entries(st->ops[i].n), ckpt_mode_name(st->ops[i].mode),
					     st->ops[i].name);
		}
	ptr_key(p, ptr, "keyed_state");
	if (st->nkv > 0 && (n = first_keyed_state(st, &name), name != NULL))
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: finished, but holds %zu %s of keyed state \"%s\"",
				     what, n, entries(n), name);
	if (st->nkv > 0)
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: finished, but holds %zu %s of keyed state", what,
				     st->nkv, entries(st->nkv));
	ptr_key(q, ptr, "channel_state");
	ptr_key(p, q, st->nin > 0 ? "input" : "output");
	if (st->nin > 0 || st->nout > 0)
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: finished, but holds %zu %s of %s channel state", what,
				     st->nin ? st->nin : st->nout, entries(st->nin ? st->nin : st->nout),
				     st->nin ? "input" : "output");
	ptr_key(p, ptr, "handles");
	if (st->nhandles > 0)
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: finished, but holds %zu state handle%s", what,
				     st->nhandles, st->nhandles == 1 ? "" : "s");
	ckpt_subtask_release(st);
	L->arena = NULL;
	st->keyed = 0;
	st->kg_first = st->kg_last = 0;
	st->nkv = st->nin = st->nout = 0;
	st->kv_bytes = st->in_bytes = st->out_bytes = 0;
	return 0;
}

static int
load_subtask(struct ldr *L, struct ckpt_operator *op, size_t k, const json_t *obj, const char *optr,
	     const char *owhat, json_t *modes, struct ckpt_bits *taken)
{
	static const char *const dkeys[] = {"index", "finished", "operator_state", "keyed_state",
					    "channel_state", "handles", NULL};
	static const char *const mkeys[] = {"index", "finished", "operator_state", "keyed_state",
					    "channel_state", "handles", "member", NULL};
	struct ckpt_subtask *st = &op->subtasks[k];
	char ptr[PTRLEN], what[PTRLEN], p[PTRLEN];

	snprintf(ptr, sizeof ptr, "%s/subtasks/%zu", optr, k);
	snprintf(what, sizeof what, "%s: subtask %zu", owhat, k);
	if (need_object(L, obj, ptr, what) < 0 ||
	    check_keys(L, obj, ptr, what, L->mode == SNAP_DOC ? dkeys : mkeys) < 0)
		return -1;
	if (get_u32(L, obj, "index", ptr, what, 0, op->parallelism - 1, &st->index) < 0)
		return -1;
	ptr_key(p, ptr, "index");
	if (k > 0 && st->index <= op->subtasks[k - 1].index)
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: index %u %s", what, st->index,
				     st->index == op->subtasks[k - 1].index ? "appears twice" :
				     "out of order (subtasks go by ascending index)");
	snprintf(what, sizeof what, "%s: subtask %u", owhat, st->index);
	if (get_bool(L, obj, "finished", ptr, what, &st->finished) < 0)
		return -1;
	if (L->mode == SNAP_DOC && (L->arena = st->arena = ckpt_model_arena_new()) == NULL)
		return ckpt_err_nomem(L->e, L->doc->name);
	if (load_subtask_parts(L, op, st, obj, ptr, what, modes, taken) < 0)
		return -1;
	if (st->finished && check_finished(L, st, ptr, what) < 0)
		return -1;
	if (op->fully_finished && !st->finished)
		return ckpt_jdoc_err(L->doc, L->e, ptr, "%s: not finished in a fully finished operator", what);
	if (L->mode == SNAP_DOC) {
		st->loaded = 1;
		return ckpt_subtask_recount(st, L->e);
	}
	st->loaded = st->member == NULL && st->nkv == 0 && st->nin == 0 && st->nout == 0;
	for (size_t i = 0; i < st->nops; i++)
		if (st->ops[i].n)
			st->loaded = 0;
	if (!st->loaded && st->member == NULL && st->nhandles == 0)
		return ckpt_jdoc_err(L->doc, L->e, ptr, "%s: holds entries but names no member", what);
	return 0;
}

/* ---- operators */

static int
load_coordinator(struct ldr *L, struct ckpt_operator *op, const json_t *obj, const char *ptr,
		 const char *what)
{
	json_t *v = json_object_get(obj, "coordinator");
	unsigned char *p;
	size_t len;
	char cp[PTRLEN];

	if (v == NULL || json_is_null(v))
		return 0;
	ptr_key(cp, ptr, "coordinator");
	if (ckpt_entry_from_json(v, &p, &len, L->e) < 0) {
		ckpt_err_prefix(L->e, "%s: coordinator", what);
		return ckpt_jdoc_locate(L->doc, L->e, cp);
	}
	op->coordinator = ckpt_calloc(1, sizeof *op->coordinator, L->e);
	if (op->coordinator == NULL) {
		free(p);
		return -1;
	}
	op->coordinator->p = p;
	op->coordinator->len = len;
	return 0;
}

static int
load_op_head(struct ldr *L, struct ckpt_snapshot *s, size_t i, const json_t *o, const char *ptr,
	     char *what)
{
	struct ckpt_operator *op = &s->ops[i];
	uint64_t maxp;
	char p[PTRLEN];

	if (opt_string(L, o, "id", ptr, what, &op->id) < 0)
		return -1;
	if (op->id == NULL || op->id[0] == '\0')
		return ckpt_jdoc_err(L->doc, L->e, ptr, "%s: missing \"id\"", what);
	ptr_key(p, ptr, "id");
	for (size_t k = 0; k < i; k++)
		if (strcmp(s->ops[k].id, op->id) == 0)
			return ckpt_jdoc_err(L->doc, L->e, p, "%s: duplicate operator \"%s\"", what, op->id);
	snprintf(what, PTRLEN, "operator \"%s\"", op->id);
	if (opt_string(L, o, "uid", ptr, what, &op->uid) < 0 || opt_string(L, o, "name", ptr, what, &op->name) < 0 ||
	    opt_string(L, o, "vertex", ptr, what, &op->vertex) < 0)
		return -1;
	ptr_key(p, ptr, "uid");
	for (size_t k = 0; op->uid && k < i; k++)
		if (s->ops[k].uid && strcmp(s->ops[k].uid, op->uid) == 0)
			return ckpt_jdoc_err(L->doc, L->e, p, "%s: uid \"%s\" is also operator \"%s\"'s", what,
					     op->uid, s->ops[k].id);
	if (get_u64(L, o, "max_parallelism", ptr, what, 1, CKPT_MAX_PARALLELISM_LIMIT, 1, 0, &maxp) < 0 ||
	    get_u32(L, o, "parallelism", ptr, what, 1, CKPT_PARALLELISM_LIMIT, &op->parallelism) < 0)
		return -1;
	op->max_parallelism = (uint32_t)maxp;
	ptr_key(p, ptr, "parallelism");
	if (op->parallelism > op->max_parallelism)
		return ckpt_jdoc_err(L->doc, L->e, p, "%s: parallelism %u exceeds max parallelism %u", what,
				     op->parallelism, op->max_parallelism);
	if (get_bool(L, o, "fully_finished", ptr, what, &op->fully_finished) < 0)
		return -1;
	return load_coordinator(L, op, o, ptr, what);
}

static int
load_operator(struct ldr *L, struct ckpt_snapshot *s, size_t i, const json_t *o)
{
	/* coordinator_typed: -a --raw's typed form of a source's coordinator state, beside its bytes */
	static const char *const keys[] = {"id", "uid", "name", "vertex", "parallelism", "max_parallelism",
					   "fully_finished", "coordinator", "coordinator_typed", "subtasks", NULL};
	struct ckpt_operator *op = &s->ops[i];
	char ptr[PTRLEN], what[PTRLEN];
	struct ckpt_bits taken = {0};
	json_t *arr, *modes = NULL, *v;
	int r = -1;
	size_t k;

	snprintf(ptr, sizeof ptr, "/operators/%zu", i);
	snprintf(what, sizeof what, "operator %zu", i);
	if (need_object(L, o, ptr, what) < 0 || check_keys(L, o, ptr, what, keys) < 0)
		return -1;
	s->nops++;
	if (load_op_head(L, s, i, o, ptr, what) < 0 || get_array(L, o, "subtasks", ptr, what, &arr) < 0)
		return -1;
	if (arr == NULL)
		return 0;
	if (ckpt_bits_init(&taken, op->max_parallelism, L->e) < 0)
		return -1;
	if ((modes = json_object()) == NULL) {
		ckpt_err_nomem(L->e, L->doc->name);
		goto out;
	}
	op->subtasks = ckpt_calloc(json_array_size(arr) ? json_array_size(arr) : 1, sizeof *op->subtasks, L->e);
	if (op->subtasks == NULL)
		goto out;
	json_array_foreach(arr, k, v) {
		op->nsubtasks++;
		if (load_subtask(L, op, k, v, ptr, what, modes, &taken) < 0)
			goto out;
	}
	r = 0;
out:
	json_decref(modes);
	ckpt_bits_release(&taken);
	return r;
}

/* ---- the document */

/* A relative path of plain components: no "", ".", ".." or leading '/', nothing a directory could escape by. */
static int
safe_name(const char *s)
{
	const char *c = s;

	if (strlen(s) > 1024)
		return 0;
	for (;;) {
		size_t n = strcspn(c, "/");

		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return 0;
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)c[i] < 0x20)
				return 0;
		if (c[n] == '\0')
			return 1;
		c += n + 1;
	}
}

static int
load_members(struct ldr *L, const json_t *root)
{
	static const char *const keys[] = {"name", "size", "xxh3", NULL};
	json_t *arr = json_object_get(root, "members"), *v;
	size_t i;

	if (arr == NULL)
		return ckpt_jdoc_err(L->doc, L->e, "", "manifest: missing \"members\"");
	if (!json_is_array(arr))
		return ckpt_jdoc_err(L->doc, L->e, "/members", "manifest: \"members\" must be an array");
	L->members = ckpt_calloc(json_array_size(arr) ? json_array_size(arr) : 1, sizeof *L->members, L->e);
	if (L->members == NULL)
		return -1;
	json_array_foreach(arr, i, v) {
		struct ckpt_model_member *m = &L->members[i];
		char p[PTRLEN], w[PTRLEN], hp[PTRLEN];
		json_t *h;

		ptr_idx(p, "/members", i);
		snprintf(w, sizeof w, "member %zu", i);
		if (need_object(L, v, p, w) < 0 || check_keys(L, v, p, w, keys) < 0 ||
		    opt_string(L, v, "name", p, w, &m->name) < 0)
			return -1;
		L->nmembers++;
		if (m->name == NULL || m->name[0] == '\0' || strcmp(m->name, "MANIFEST.json") == 0)
			return ckpt_jdoc_err(L->doc, L->e, p, "%s: needs a \"name\" other than MANIFEST.json", w);
		if (!safe_name(m->name))
			return ckpt_jdoc_err(L->doc, L->e, p, "%s: unsafe member name \"%s\"", w, m->name);
		for (size_t k = 0; k < i; k++)
			if (strcmp(L->members[k].name, m->name) == 0)
				return ckpt_jdoc_err(L->doc, L->e, p, "%s: \"%s\" listed twice", w, m->name);
		if (get_u64(L, v, "size", p, w, 0, INT64_MAX, 1, 0, &m->size) < 0)
			return -1;
		h = json_object_get(v, "xxh3");
		ptr_key(hp, p, "xxh3");
		if (!json_is_string(h) || ckpt_parse_hex64(json_string_value(h), &m->xxh3) < 0)
			return ckpt_jdoc_err(L->doc, L->e, h ? hp : p,
					     "%s: \"xxh3\" must be 16 lowercase hex digits", w);
	}
	return 0;
}

static int
load_head(struct ldr *L, struct ckpt_snapshot *s, const json_t *root)
{
	static const char *const dkeys[] = {"format", "version", "checkpoint_id", "kind", "operators", "flink", NULL};
	static const char *const mkeys[] = {"format", "version", "checkpoint_id", "kind", "operators", "flink",
					    "members", NULL};
	const char *want = L->mode == SNAP_DOC ? "ckpt-state" : "ckpt-archive";
	const char *what = L->mode == SNAP_DOC ? "state document" : "manifest";
	json_t *f = json_object_get(root, "format"), *fl;
	uint64_t version;

	if (need_object(L, root, "", what) < 0)
		return -1;
	if (f == NULL || !json_is_string(f) || strcmp(json_string_value(f), want) != 0)
		return ckpt_jdoc_err(L->doc, L->e, f ? "/format" : "", "not a %s: \"format\" must be \"%s\"",
				     what, want);
	if (check_keys(L, root, "", what, L->mode == SNAP_DOC ? dkeys : mkeys) < 0 ||
	    get_u64(L, root, "version", "", what, 0, INT64_MAX, 1, 0, &version) < 0)
		return -1;
	if (version != 1)
		return ckpt_jdoc_err(L->doc, L->e, "/version", "%s: unsupported version %llu (this is version 1)",
				     what, (unsigned long long)version);
	if (get_u64(L, root, "checkpoint_id", "", what, 0, INT64_MAX, 1, 0, &s->checkpoint_id) < 0 ||
	    opt_string(L, root, "kind", "", what, &s->kind) < 0)
		return -1;
	/* null: unknown, as in a Flink _metadata before version 4 */
	if (json_object_get(root, "kind") == NULL || (s->kind && strcmp(s->kind, "checkpoint") && strcmp(s->kind, "savepoint")))
		return ckpt_jdoc_err(L->doc, L->e, s->kind ? "/kind" : "",
				     "%s: \"kind\" must be \"checkpoint\", \"savepoint\" or null", what);
	fl = json_object_get(root, "flink");
	if (fl && !json_is_null(fl) && !json_is_object(fl))
		return ckpt_jdoc_err(L->doc, L->e, "/flink", "%s: \"flink\" must be an object", what);
	if (fl && json_is_object(fl))
		s->flink = json_incref(fl);
	return 0;
}

struct ckpt_snapshot *
ckpt_model_from_json(const struct ckpt_jdoc *doc, enum ckpt_model_docmode mode, const struct ckpt_model_foreign *foreign,
		     struct ckpt_model_member **members, size_t *nmembers, struct ckpt_err *e)
{
	struct ldr L = {.doc = doc, .e = e, .mode = mode, .foreign = foreign};
	struct ckpt_snapshot *s = ckpt_calloc(1, sizeof *s, e);
	json_t *root = doc->root, *arr, *o;
	size_t i;

	if (s == NULL)
		return NULL;
	if (load_head(&L, s, root) < 0)
		goto fail;
	if (mode == SNAP_MANIFEST && load_members(&L, root) < 0)
		goto fail;
	if (get_array(&L, root, "operators", "", "state document", &arr) < 0)
		goto fail;
	if (arr == NULL) {
		ckpt_jdoc_err(doc, e, "", "%s: missing \"operators\"", mode == SNAP_DOC ? "state document" : "manifest");
		goto fail;
	}
	s->ops = ckpt_calloc(json_array_size(arr) ? json_array_size(arr) : 1, sizeof *s->ops, e);
	if (s->ops == NULL)
		goto fail;
	json_array_foreach(arr, i, o)
		if (load_operator(&L, s, i, o) < 0)
			goto fail;
	if (members) {
		*members = L.members;
		*nmembers = L.nmembers;
	} else {
		ckpt_model_members_free(L.members, L.nmembers);
	}
	return s;
fail:
	ckpt_snapshot_free(s);
	ckpt_model_members_free(L.members, L.nmembers);
	return NULL;
}
