/* assign.c: the redistribution as JSON: per new subtask, the old subtasks, elements, key groups and handles it reads. */
#include <stdlib.h>
#include <string.h>

#include "redist.h"

static int
set_range(json_t *obj, const char *key, uint64_t a, uint64_t b)
{
	char buf[48];

	if (a == b)
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)a);
	else
		snprintf(buf, sizeof buf, "%llu-%llu", (unsigned long long)a, (unsigned long long)b);
	return ckpt_json_set_new(obj, key, json_string(buf));
}

/* Offsets of name in the operator handles of st before handle h: where h's elements start. */
static uint64_t
elements_before(const struct ckpt_subtask *st, size_t h, const char *name)
{
	uint64_t n = 0;

	for (size_t k = 0; k < h; k++) {
		json_t *states = json_object_get(st->handles[k].detail, "states"), *s;
		size_t i;

		if (strstr(st->handles[k].scope, "operator") == NULL)
			continue;
		json_array_foreach(states, i, s)
			if (json_is_string(json_object_get(s, "name")) &&
			    strcmp(json_string_value(json_object_get(s, "name")), name) == 0)
				n += json_array_size(json_object_get(s, "offsets"));
	}
	return n;
}

/* The offsets of operator handle h that new subtask t takes, per state name; NULL when none. */
static json_t *
handle_states(const struct ckpt_redist_op *o, uint32_t t, uint32_t j, size_t h)
{
	const struct ckpt_subtask *st = o->at[j];
	json_t *states = json_object_get(st->handles[h].detail, "states"), *s, *out = json_object();
	size_t i;

	json_array_foreach(states, i, s) {
		const char *name = json_string_value(json_object_get(s, "name"));
		json_t *offs = json_object_get(s, "offsets"), *taken;
		const struct ckpt_redist_name *nm = name ? ckpt_redist_find_name(o, name) : NULL;
		uint64_t a, b, base;

		if (out == NULL || nm == NULL || !ckpt_redist_piece(o, nm, t, j, &a, &b))
			continue;
		base = elements_before(st, h, name);
		taken = json_array();
		for (uint64_t x = base; taken && x < base + json_array_size(offs); x++)
			if (x >= a && x < b)
				json_array_append(taken, json_array_get(offs, (size_t)(x - base)));
		if (json_array_size(taken) || (a == b && nm->mode != CKPT_MODE_LIST))
			json_object_set_new(out, name, json_pack("{s:O, s:o}", "mode", json_object_get(s, "mode"),
								 "offsets", taken));
		else
			json_decref(taken);
	}
	if (out && json_object_size(out) == 0) {
		json_decref(out);
		return NULL;
	}
	return out;
}

/* The key groups of keyed handle h inside [x, y], as a range string; NULL when none. */
static json_t *
handle_kg(const struct ckpt_handle *h, uint32_t x, uint32_t y)
{
	const char *s = json_string_value(json_object_get(h->detail, "key_groups"));
	unsigned a, b;
	char buf[48];

	if (s == NULL || sscanf(s, "%u-%u", &a, &b) < 1)
		return NULL;
	if (strchr(s, '-') == NULL)
		b = a;
	a = a > x ? a : x;
	b = b < y ? b : y;
	if (a > b)
		return NULL;
	snprintf(buf, sizeof buf, a == b ? "%u" : "%u-%u", a, b);
	return json_string(buf);
}

/* The key groups of keyed handle h as Flink hands it to a new subtask that restores clip of it:
 * KeyedStateHandle.getIntersection cuts a key-group handle (and a changelog one) down to the clip
 * but hands an incremental RocksDB handle whole, its own range kept (RocksDB clips on restore). */
static json_t *
handed_kg(const struct ckpt_handle *h, json_t *clip)
{
	json_t *own = json_object_get(h->detail, "key_groups");

	return strcmp(h->kind, "incremental") == 0 && json_is_string(own) ? own : clip;
}

/* Whether the key groups of range list v meet [x, y]. */
static int
kg_meets(const json_t *v, uint32_t x, uint32_t y)
{
	struct ckpt_bits b;
	struct ckpt_err e = {0};
	int r;

	if (v == NULL || ckpt_rangelist_from_json(v, CKPT_MAX_PARALLELISM_LIMIT, &b, &e) < 0)
		return 0;
	r = ckpt_bits_any_in(&b, x, (size_t)y + 1);
	ckpt_bits_release(&b);
	return r;
}

/* The size of changelog handle h as Flink hands it to a new subtask restoring [x, y] of it at a new
 * parallelism (ChangelogStateBackendHandleImpl.getIntersection, getStateSize): each materialized
 * part whose key groups meet the range, whole; each change set held in _metadata with a change in
 * the range (InMemoryChangelogStateHandle), whole; a change set in files at 0 (Flink's
 * ChangelogStateHandleStreamImpl cut is of unknown size). */
static uint64_t
changelog_cut_size(const struct ckpt_handle *h, uint32_t x, uint32_t y)
{
	json_t *v;
	uint64_t size = 0;
	size_t i;

	json_array_foreach(json_object_get(h->detail, "materialized"), i, v)
		if (kg_meets(json_object_get(v, "key_groups"), x, y))
			size += (uint64_t)json_integer_value(json_object_get(v, "size"));
	json_array_foreach(json_object_get(h->detail, "non_materialized"), i, v) {
		const char *kind = json_string_value(json_object_get(v, "kind"));

		if (kind && strcmp(kind, "changelog_bytes") == 0 &&
		    kg_meets(json_object_get(v, "change_key_groups"), x, y))
			size += (uint64_t)json_integer_value(json_object_get(v, "size"));
	}
	return size;
}

/* A channel handle's gate and channel (partition and subpartition) and its offsets in the file, or its
 * merged channels (each with its own). */
static void
chan_where(json_t *v, const struct ckpt_handle *h)
{
	static const char *const keys[] = {"gate", "channel", "partition", "subpartition", "offsets", "channels"};

	for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
		json_t *x = json_object_get(h->detail, keys[k]);

		if (x)
			json_object_set(v, keys[k], x);
	}
}

/* The handles of old subtask j that new subtask t reads, with what it takes from each. */
static json_t *
handles_json(const struct ckpt_redist *r, const struct ckpt_redist_op *o, uint32_t t, uint32_t j, int kg, uint32_t x,
	     uint32_t y)
{
	const struct ckpt_subtask *st = o->at[j];
	json_t *arr = json_array();

	for (size_t k = 0; arr && k < st->nhandles; k++) {
		const struct ckpt_handle *h = &st->handles[k];
		json_t *what = NULL, *v;
		const char *key = "states";

		if (strstr(h->scope, "operator"))
			what = handle_states(o, t, j, k);
		else if (strstr(h->scope, "keyed"))
			what = kg ? handle_kg(h, x, y) : NULL, key = "restored_key_groups";
		else if (ckpt_redist_chan_to(r, o, t, j, h))
			what = json_boolean(o->how == RD_IN_PLACE), key = "in_place";
		if (what == NULL)
			continue;
		v = json_pack("{s:s, s:s, s:I, s:s?, s:o}", "scope", h->scope, "kind", h->kind, "size",
			      (json_int_t)h->size, "path", h->path, key, what);
		if (v && strstr(h->scope, "keyed")) { /* what Flink hands, then the clip restored */
			json_t *clip = json_incref(json_object_get(v, key));

			json_object_del(v, key);
			json_object_set(v, "key_groups", handed_kg(h, clip));
			json_object_set_new(v, key, clip);
			if (o->how == RD_RESCALE && strcmp(h->kind, "changelog") == 0) /* a new, cut handle */
				json_object_set_new(v, "size", json_integer((json_int_t)changelog_cut_size(h, x, y)));
		}
		if (v && strstr(h->scope, "channel"))
			chan_where(v, h);
		if (ckpt_json_append_new(arr, v) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

static json_t *
from_json(const struct ckpt_redist *r, const struct ckpt_redist_op *o, uint32_t t, uint32_t j)
{
	json_t *f = json_pack("{s:i}", "subtask", (json_int_t)j);
	json_t *list = json_object(), *uni = json_array(), *bc = json_array();
	uint32_t x = 0, y = 0;
	int kg = ckpt_redist_kg_piece(o, t, j, &x, &y);
	int chan = (o->how == RD_IN_PLACE && j == t && (o->at[j]->nin || o->at[j]->nout || o->at[j]->nhandles)) ||
		   (o->how == RD_RESCALE && ckpt_redist_chan_needed(r, o, t, j));

	for (size_t k = 0; f && list && uni && bc && k < o->nnames; k++) {
		const struct ckpt_redist_name *nm = &o->names[k];
		uint64_t a, b;

		if (!ckpt_redist_piece(o, nm, t, j, &a, &b))
			continue;
		if (nm->mode == CKPT_MODE_LIST) {
			json_t *run = json_object();

			if (b > a)
				set_range(run, "elements", a, b - 1);
			json_object_set_new(run, "count", json_integer((json_int_t)(b - a)));
			json_object_set_new(list, nm->name, run);
		} else {
			json_array_append_new(nm->mode == CKPT_MODE_UNION ? uni : bc, json_string(nm->name));
		}
	}
	if (f && list && uni && bc) {
		json_object_set_new(f, "list", list);
		json_object_set_new(f, "union", uni);
		json_object_set_new(f, "broadcast", bc);
		if (kg)
			set_range(f, "key_groups", x, y);
		json_object_set_new(f, "channel_state", json_boolean(chan));
		if (o->at[j]->nhandles)
			ckpt_json_set_new(f, "handles", handles_json(r, o, t, j, kg, x, y));
		return f;
	}
	json_decref(f), json_decref(list), json_decref(uni), json_decref(bc);
	return NULL;
}

static json_t *
new_subtask_json(const struct ckpt_redist *r, const struct ckpt_redist_op *o, uint32_t t)
{
	json_t *s = json_pack("{s:i, s:[]}", "index", (json_int_t)t, "from");
	json_t *from = s ? json_object_get(s, "from") : NULL;
	uint32_t f, l;

	if (s && o->how == RD_RESCALE && o->keyed) {
		ckpt_key_group_range(o->maxp, o->p, t, &f, &l);
		set_range(s, "key_groups", f, l);
	}
	for (uint32_t j = 0; s && j < o->P; j++) {
		if (!ckpt_redist_needed(r, o, t, j))
			continue;
		if (ckpt_json_append_new(from, from_json(r, o, t, j)) < 0) {
			json_decref(s);
			return NULL;
		}
	}
	for (int input = 1; s && input >= 0; input--) {
		json_t *d = ckpt_redist_descriptor(r, o, t, input);

		if (d && ckpt_json_set_new(s, input ? "input_rescaling" : "output_rescaling", d) < 0) {
			json_decref(s);
			return NULL;
		}
	}
	return s;
}

static json_t *
op_json(const struct ckpt_redist *r, const struct ckpt_redist_op *o)
{
	json_t *v = json_pack("{s:s, s:s?, s:s?, s:s?, s:i, s:i, s:i, s:b, s:[]}", "id", o->nid, "uid",
			      o->nuid, "name", o->nname, "vertex", o->nvertex, "old_parallelism",
			      (json_int_t)o->P, "parallelism", (json_int_t)o->p, "max_parallelism",
			      (json_int_t)o->maxp, "fully_finished", o->how == RD_FINISHED, "subtasks");
	json_t *subs = v ? json_object_get(v, "subtasks") : NULL;

	for (uint32_t t = 0; v && o->how != RD_FINISHED && t < o->p; t++)
		if (ckpt_json_append_new(subs, new_subtask_json(r, o, t)) < 0) {
			json_decref(v);
			return NULL;
		}
	return v;
}

json_t *
ckpt_redist_to_json(const struct ckpt_redist *r, struct ckpt_err *e)
{
	json_t *doc = json_pack("{s:s, s:i, s:I, s:[]}", "format", "ckpt-assignment", "version", 1,
				"checkpoint_id", (json_int_t)r->in->checkpoint_id, "operators");
	json_t *ops = doc ? json_object_get(doc, "operators") : NULL;

	for (size_t i = 0; doc && i < r->nops; i++)
		if (ckpt_json_append_new(ops, op_json(r, &r->ops[i])) < 0) {
			json_decref(doc);
			doc = NULL;
		}
	if (doc == NULL)
		ckpt_err_nomem(e, "");
	return doc;
}
