/* keyed.c: a Flink snapshot's keyed states listed in its summary with their operator, their counts
 * from the state files, and their skew: entries and bytes per key group and per subtask. */
#include <stdlib.h>
#include <string.h>

#include "snap.h"

/* A state's entries and bytes on one subtask; -1: not known. */
struct load {
	json_int_t e, b;
};

static int
keyed(const json_t *st)
{
	const char *scope = json_string_value(json_object_get(st, "scope"));

	return (scope && strcmp(scope, "keyed") == 0) || json_is_object(json_object_get(st, "key_groups"));
}

static void
add(json_int_t *to, const json_t *v)
{
	if (*to >= 0)
		*to = json_is_integer(v) ? *to + json_integer_value(v) : -1;
}

static json_t *
count(json_int_t v)
{
	return v < 0 ? json_null() : json_integer(v);
}

/* The operator's parallelism and max parallelism, as the summary gives them (0: none). */
static void
op_sizes(const json_t *op, uint32_t *p, uint32_t *maxp)
{
	json_int_t a = json_integer_value(json_object_get(op, "parallelism"));
	json_int_t b = json_integer_value(json_object_get(op, "max_parallelism"));

	*p = a > 0 && a <= 65536 ? (uint32_t)a : 0;
	*maxp = b > 0 && b <= 65536 ? (uint32_t)b : 0;
}

/* Key group kg of a state's "key_groups" object, -1 when kg is not one below maxp. */
static long
kg_of(const char *k, uint32_t maxp)
{
	char *end;
	long kg = strtol(k, &end, 10);

	return *end || end == k || kg < 0 || (unsigned long)kg >= maxp ? -1 : kg;
}

/* A state's load on each of the p subtasks, from its key groups: NULL on allocation failure. */
static struct load *
loads(const json_t *kgs, uint32_t p, uint32_t maxp, struct ckpt_err *e)
{
	struct load *l = ckpt_calloc(p ? p : 1, sizeof *l, e);
	const char *k;
	json_t *v;

	if (l == NULL)
		return NULL;
	json_object_foreach((json_t *)kgs, k, v) {
		long kg = kg_of(k, maxp);
		uint32_t s;

		if (kg < 0 || p == 0)
			continue;
		s = ckpt_subtask_of_key_group((uint32_t)kg, maxp, p);
		add(&l[s].e, json_object_get(v, "entries"));
		add(&l[s].b, json_object_get(v, "bytes"));
	}
	return l;
}

/* {"subtasks", "max_entries", "max_entries_subtask", "max_bytes", "max_bytes_subtask"}: the
 * largest subtask against the others (the mean is the state's total over "subtasks"). */
static json_t *
skew(const json_t *kgs, uint32_t p, uint32_t maxp, struct ckpt_err *e)
{
	struct load *l = loads(kgs, p, maxp, e);
	size_t me = 0, mb = 0;
	int known = 1;
	json_t *o;

	if (l == NULL)
		return NULL;
	for (size_t i = 0; i < p; i++) {
		known &= l[i].e >= 0 && l[i].b >= 0;
		me = l[i].e > l[me].e ? i : me;
		mb = l[i].b > l[mb].b ? i : mb;
	}
	o = p == 0 || !known ? json_null()
			     : json_pack("{s:I, s:I, s:I, s:I, s:I}", "subtasks", (json_int_t)p, "max_entries", l[me].e,
					 "max_entries_subtask", (json_int_t)me, "max_bytes", l[mb].b, "max_bytes_subtask",
					 (json_int_t)mb);
	free(l);
	return o;
}

/* The key groups holding entries of a state, as a range list. */
static json_t *
kg_list(const json_t *kgs, uint32_t maxp)
{
	struct ckpt_bits b;
	const char *k;
	json_t *v;
	char *s;

	if (ckpt_bits_init(&b, maxp, NULL) < 0)
		return NULL;
	json_object_foreach((json_t *)kgs, k, v)
		if (kg_of(k, maxp) >= 0)
			ckpt_bits_set(&b, (size_t)kg_of(k, maxp));
	s = ckpt_rangelist_format(&b);
	ckpt_bits_release(&b);
	v = s ? json_string(s) : NULL;
	free(s);
	return v;
}

/* One keyed state of the operator's Flink state as the summary lists states. */
static json_t *
keyed_state(const json_t *op, const json_t *st, struct ckpt_err *e)
{
	const json_t *kgs = json_object_get(st, "key_groups");
	json_t *empty = json_object(), *o;
	uint32_t p, maxp;

	op_sizes(op, &p, &maxp);
	if (empty == NULL)
		return NULL;
	if (!json_is_object(kgs))
		kgs = empty;
	o = json_pack("{s:O, s:s, s:O?, s:O?, s:O?, s:o?, s:o?}", "name", json_object_get(st, "name"), "mode", "keyed",
		      "kind", json_object_get(st, "kind"), "entries", json_object_get(st, "entries"), "bytes",
		      json_object_get(st, "bytes"), "key_groups", kg_list(kgs, maxp), "skew", skew(kgs, p, maxp, e));
	if (o && json_object_get(st, "entries_not_read") &&
	    json_object_set(o, "entries_not_read", json_object_get(st, "entries_not_read")) < 0) {
		json_decref(o);
		o = NULL;
	}
	json_decref(empty);
	return o;
}

/* Add a count to a total of the summary: null stays null, and a null count makes it null. */
static int
total(json_t *o, const char *k, const json_t *v)
{
	json_int_t t = json_is_integer(json_object_get(o, k)) ? json_integer_value(json_object_get(o, k)) : -1;

	add(&t, v);
	return json_object_set_new(o, k, count(t));
}

/* The operator's Flink state as "flink_state", its keyed states among its "states", their counts
 * in its totals and the summary's. */
static int
add_op(json_t *sum, json_t *op, json_t *fs, struct ckpt_err *e)
{
	json_t *states = json_object_get(op, "states"), *st;
	size_t i;

	if (json_object_set(op, "flink_state", fs) < 0)
		return -1;
	json_array_foreach(json_object_get(fs, "states"), i, st) {
		if (!keyed(st))
			continue;
		if (ckpt_json_append_new(states, keyed_state(op, st, e)) < 0 ||
		    total(op, "entries", json_object_get(st, "entries")) < 0 ||
		    total(op, "bytes", json_object_get(st, "bytes")) < 0 ||
		    total(json_object_get(sum, "totals"), "entries", json_object_get(st, "entries")) < 0 ||
		    total(json_object_get(sum, "totals"), "bytes", json_object_get(st, "bytes")) < 0)
			return -1;
	}
	return 0;
}

int
ckpt_snapshot_summary_flink(json_t *sum, const json_t *fstate, struct ckpt_err *e)
{
	json_t *op;
	size_t i;

	json_array_foreach(json_object_get(sum, "operators"), i, op) {
		json_t *fs = json_object_get(fstate, json_string_value(json_object_get(op, "id")));

		if (fs && add_op(sum, op, fs, e) < 0)
			return ckpt_err_nomem(e, "");
	}
	return 0;
}

/* ------------------------------------------------------------ --skew */

/* A row of the skew: the operator and state named, then the counts. */
static int
row(json_t *rows, const json_t *op, const json_t *st, json_t *where, json_int_t e, json_int_t b)
{
	json_t *r = json_pack("{s:O, s:O?, s:O?, s:O}", "operator", json_object_get(op, "id"), "uid",
			      json_object_get(op, "uid"), "name", json_object_get(op, "name"), "state",
			      json_object_get(st, "name"));

	if (r == NULL || where == NULL || json_object_update(r, where) < 0 ||
	    json_object_set_new(r, "entries", count(e)) < 0 || json_object_set_new(r, "bytes", count(b)) < 0) {
		json_decref(r);
		json_decref(where);
		return -1;
	}
	json_decref(where);
	return json_array_append_new(rows, r);
}

/* One keyed state's rows: each subtask (with its key-group range), then each key group holding
 * entries, ascending. */
static int
state_rows(json_t *rows, const json_t *op, const json_t *st, struct ckpt_err *e)
{
	const json_t *kgs = json_object_get(st, "key_groups");
	struct load *l;
	uint32_t p, maxp, first, last;
	char range[32], k[16];
	int r = 0;

	op_sizes(op, &p, &maxp);
	if (p == 0 || maxp == 0 || (l = loads(kgs, p, maxp, e)) == NULL)
		return p == 0 || maxp == 0 ? 0 : -1;
	for (uint32_t s = 0; s < p && r == 0; s++) {
		ckpt_key_group_range(maxp, p, s, &first, &last);
		if (first == last)
			snprintf(range, sizeof range, "%u", first);
		else
			snprintf(range, sizeof range, "%u-%u", first, last);
		r = row(rows, op, st, json_pack("{s:I, s:s}", "subtask", (json_int_t)s, "key_groups", range), l[s].e, l[s].b);
	}
	free(l);
	for (uint32_t kg = 0; kg < maxp && r == 0 && json_is_object(kgs); kg++) {
		json_t *v;

		snprintf(k, sizeof k, "%u", kg);
		if ((v = json_object_get(kgs, k)) != NULL) {
			json_int_t ce = 0, cb = 0;

			add(&ce, json_object_get(v, "entries"));
			add(&cb, json_object_get(v, "bytes"));
			r = row(rows, op, st, json_pack("{s:I, s:I}", "key_group", (json_int_t)kg, "subtask",
							(json_int_t)ckpt_subtask_of_key_group(kg, maxp, p)), ce, cb);
		}
	}
	return r;
}

json_t *
ckpt_snapshot_skew(const json_t *sum, struct ckpt_err *e)
{
	json_t *rows = json_array(), *op, *st;
	size_t i, j;

	json_array_foreach(json_object_get(sum, "operators"), i, op)
		json_array_foreach(json_object_get(json_object_get(op, "flink_state"), "states"), j, st)
			if (rows && keyed(st) && state_rows(rows, op, st, e) < 0) {
				json_decref(rows);
				rows = NULL;
			}
	if (rows == NULL)
		ckpt_err_nomem(e, "");
	return rows;
}
