/* summary.c: what ckpt-inspect shows of a snapshot, and the difference of two, from counts alone. */
#include <stdlib.h>
#include <string.h>

#include "snap.h"

/* Add n entries and bytes to the state called name (mode as given) in the array states. */
static int
add_state(json_t *states, const char *name, const char *mode, uint64_t n, uint64_t bytes)
{
	size_t i;
	json_t *v;

	json_array_foreach(states, i, v)
		if (strcmp(json_string_value(json_object_get(v, "name")), name) == 0 &&
		    strcmp(json_string_value(json_object_get(v, "mode")), mode) == 0) {
			json_int_t en = json_integer_value(json_object_get(v, "entries"));
			json_int_t eb = json_integer_value(json_object_get(v, "bytes"));

			if (json_object_set_new(v, "entries", json_integer(en + (json_int_t)n)) < 0 ||
			    json_object_set_new(v, "bytes", json_integer(eb + (json_int_t)bytes)) < 0)
				return -1;
			return 0;
		}
	return ckpt_json_append_new(states, json_pack("{s:s, s:s, s:I, s:I}", "name", name, "mode", mode,
						      "entries", (json_int_t)n, "bytes", (json_int_t)bytes));
}

/* Every state of an operator: operator states by name and mode, then keyed states ("keyed"). */
static json_t *
op_states(const struct ckpt_operator *op)
{
	json_t *states = json_array();

	for (size_t k = 0; states && k < op->nsubtasks; k++) {
		const struct ckpt_subtask *st = &op->subtasks[k];

		for (size_t i = 0; i < st->nops; i++)
			if (add_state(states, st->ops[i].name, ckpt_mode_name(st->ops[i].mode), st->ops[i].n,
				      st->ops[i].bytes) < 0)
				goto fail;
	}
	for (size_t k = 0; states && k < op->nsubtasks; k++) {
		const struct ckpt_subtask *st = &op->subtasks[k];

		for (size_t i = 0; i < st->nkvstats; i++)
			if (add_state(states, st->kvstats[i].state, "keyed", st->kvstats[i].n,
				      st->kvstats[i].bytes) < 0)
				goto fail;
	}
	return states;
fail:
	json_decref(states);
	return NULL;
}

static char *
finished_list(const struct ckpt_operator *op)
{
	struct ckpt_bits b;
	char *s;

	if (ckpt_bits_init(&b, op->parallelism, NULL) < 0)
		return NULL;
	for (size_t k = 0; k < op->nsubtasks; k++)
		if (op->subtasks[k].finished)
			ckpt_bits_set(&b, op->subtasks[k].index);
	s = ckpt_rangelist_format(&b);
	ckpt_bits_release(&b);
	return s;
}

struct totals {
	uint64_t subtasks, entries, bytes, inflight, handles, handle_bytes;
};

/* Key groups and handles of the subtasks, and the totals. */
static int
op_subtasks(const struct ckpt_operator *op, json_t *o, struct totals *t, uint64_t *entries,
	    uint64_t *bytes, uint64_t *inflight)
{
	json_t *kg = json_object(), *handles = json_array();
	int r = -1;

	for (size_t k = 0; kg && handles && k < op->nsubtasks; k++) {
		const struct ckpt_subtask *st = &op->subtasks[k];
		char idx[16], range[32];

		for (size_t i = 0; i < st->nops; i++) {
			*entries += st->ops[i].n;
			*bytes += st->ops[i].bytes;
		}
		*entries += st->nkv;
		*bytes += st->kv_bytes;
		*inflight += st->in_bytes + st->out_bytes;
		snprintf(idx, sizeof idx, "%u", st->index);
		if (st->kg_first == st->kg_last)
			snprintf(range, sizeof range, "%u", st->kg_first);
		else
			snprintf(range, sizeof range, "%u-%u", st->kg_first, st->kg_last);
		if (st->keyed && ckpt_json_set_new(kg, idx, json_string(range)) < 0)
			goto out;
		for (size_t i = 0; i < st->nhandles; i++) {
			const struct ckpt_handle *h = &st->handles[i];

			t->handles++;
			t->handle_bytes += h->size;
			if (ckpt_json_append_new(handles, json_pack("{s:I, s:s, s:s, s:I, s:o}", "subtask",
								    (json_int_t)st->index, "scope", h->scope, "kind",
								    h->kind, "size", (json_int_t)h->size, "path",
								    h->path ? json_string(h->path) : json_null())) < 0)
				goto out;
		}
	}
	if (ckpt_json_set_new(o, "key_groups", kg) < 0)
		goto out;
	kg = NULL;
	if (json_array_size(handles) && json_object_set(o, "handles", handles) < 0)
		goto out;
	r = 0;
out:
	json_decref(kg);
	json_decref(handles);
	return r;
}

static json_t *
op_summary(const struct ckpt_operator *op, struct totals *t)
{
	char *fin = finished_list(op);
	uint64_t entries = 0, bytes = 0, inflight = 0;
	json_t *o = fin ? json_pack("{s:s, s:o, s:o, s:I, s:I, s:I, s:s, s:b, s:o, s:o}", "id", op->id, "uid",
				    op->uid ? json_string(op->uid) : json_null(), "name",
				    op->name ? json_string(op->name) : json_null(), "parallelism",
				    (json_int_t)op->parallelism, "max_parallelism", (json_int_t)op->max_parallelism,
				    "subtasks", (json_int_t)op->nsubtasks, "finished_subtasks", fin, "fully_finished",
				    op->fully_finished, "coordinator_bytes",
				    op->coordinator ? json_integer((json_int_t)op->coordinator->len) : json_null(),
				    "states", op_states(op)) : NULL;

	free(fin);
	if (o == NULL || op_subtasks(op, o, t, &entries, &bytes, &inflight) < 0 ||
	    ckpt_json_set_new(o, "in_flight_bytes", json_integer((json_int_t)inflight)) < 0 ||
	    ckpt_json_set_new(o, "entries", json_integer((json_int_t)entries)) < 0 ||
	    ckpt_json_set_new(o, "bytes", json_integer((json_int_t)bytes)) < 0) {
		json_decref(o);
		return NULL;
	}
	t->subtasks += op->nsubtasks;
	t->entries += entries;
	t->bytes += bytes;
	t->inflight += inflight;
	return o;
}

json_t *
ckpt_snapshot_summary(struct ckpt_snapshot *s, const char *file, struct ckpt_err *e)
{
	struct totals t = {0};
	json_t *o = json_pack("{s:s, s:s, s:I, s:o}", "file", file, "format", ckpt_snapshot_format(s),
			      "checkpoint_id", (json_int_t)s->checkpoint_id, "kind", s->kind ? json_string(s->kind) : json_null());
	json_t *ops = json_array(), *tot;

	if (o == NULL || ops == NULL)
		goto fail;
	if (ckpt_snap_members_check(s, e) < 0) {
		json_decref(o);
		json_decref(ops);
		return NULL;
	}
	if (s->flink && json_object_set(o, "flink", s->flink) < 0)
		goto fail;
	for (size_t i = 0; i < s->nops; i++)
		if (ckpt_json_append_new(ops, op_summary(&s->ops[i], &t)) < 0)
			goto fail;
	tot = json_pack("{s:I, s:I, s:I, s:I, s:I}", "operators", (json_int_t)s->nops, "subtasks",
			(json_int_t)t.subtasks, "entries", (json_int_t)t.entries, "bytes", (json_int_t)t.bytes,
			"in_flight_bytes", (json_int_t)t.inflight);
	if (tot && t.handles &&
	    (ckpt_json_set_new(tot, "handles", json_integer((json_int_t)t.handles)) < 0 ||
	     ckpt_json_set_new(tot, "handle_bytes", json_integer((json_int_t)t.handle_bytes)) < 0)) {
		json_decref(tot);
		tot = NULL;
	}
	if (json_object_set(o, "operators", ops) < 0 || ckpt_json_set_new(o, "totals", tot) < 0)
		goto fail;
	json_decref(ops);
	return o;
fail:
	json_decref(o);
	json_decref(ops);
	ckpt_err_nomem(e, file);
	return NULL;
}

/* ---- difference */

static const struct ckpt_operator *
find_op(const struct ckpt_snapshot *s, const char *id)
{
	for (size_t i = 0; i < s->nops; i++)
		if (strcmp(s->ops[i].id, id) == 0)
			return &s->ops[i];
	return NULL;
}

static json_t *
find_state(json_t *states, const char *name)
{
	size_t i;
	json_t *v;

	json_array_foreach(states, i, v)
		if (strcmp(json_string_value(json_object_get(v, "name")), name) == 0)
			return v;
	return NULL;
}

static json_t *
pair(json_t *a, json_t *b)
{
	return json_pack("[O, O]", a, b);
}

/* States of one operator present in both snapshots. */
static int
diff_states(const struct ckpt_operator *oa, const struct ckpt_operator *ob, json_t *added,
	    json_t *removed, json_t *resized)
{
	json_t *sa = op_states(oa), *sb = op_states(ob), *v, *w;
	int r = -1;
	size_t i;

	if (sa == NULL || sb == NULL)
		goto out;
	json_array_foreach(sa, i, v) {
		w = find_state(sb, json_string_value(json_object_get(v, "name")));
		if (w == NULL) {
			if (ckpt_json_append_new(removed, json_pack("{s:s, s:O}", "operator", oa->id, "state", v)) < 0)
				goto out;
		} else if (!json_equal(v, w) &&
			   ckpt_json_append_new(resized, json_pack("{s:s, s:O, s:o, s:o, s:o}", "operator", oa->id,
								   "state", json_object_get(v, "name"),
								   "mode", pair(json_object_get(v, "mode"), json_object_get(w, "mode")),
								   "entries", pair(json_object_get(v, "entries"), json_object_get(w, "entries")),
								   "bytes", pair(json_object_get(v, "bytes"), json_object_get(w, "bytes")))) < 0) {
			goto out;
		}
	}
	json_array_foreach(sb, i, w)
		if (find_state(sa, json_string_value(json_object_get(w, "name"))) == NULL &&
		    ckpt_json_append_new(added, json_pack("{s:s, s:O}", "operator", ob->id, "state", w)) < 0)
			goto out;
	r = 0;
out:
	json_decref(sa);
	json_decref(sb);
	return r;
}

static json_t *
op_brief(const struct ckpt_operator *op)
{
	return json_pack("{s:s, s:o, s:o, s:I, s:I}", "id", op->id, "uid", op->uid ? json_string(op->uid) : json_null(),
			 "name", op->name ? json_string(op->name) : json_null(), "parallelism",
			 (json_int_t)op->parallelism, "max_parallelism", (json_int_t)op->max_parallelism);
}

json_t *
ckpt_snapshot_diff(struct ckpt_snapshot *a, struct ckpt_snapshot *b, int *differ, struct ckpt_err *e)
{
	json_t *o = json_pack("{s:[], s:[], s:[], s:[], s:[], s:[]}", "operators_added", "operators_removed",
			      "operators_rescaled", "states_added", "states_removed", "states_resized");
	const char *key;
	json_t *v;

	if (o == NULL)
		goto fail;
	for (size_t i = 0; i < a->nops; i++) {
		const struct ckpt_operator *oa = &a->ops[i], *ob = find_op(b, oa->id);

		if (ob == NULL) {
			if (ckpt_json_append_new(json_object_get(o, "operators_removed"), op_brief(oa)) < 0)
				goto fail;
			continue;
		}
		if ((oa->parallelism != ob->parallelism || oa->max_parallelism != ob->max_parallelism) &&
		    ckpt_json_append_new(json_object_get(o, "operators_rescaled"),
					 json_pack("{s:s, s:[I, I], s:[I, I]}", "id", oa->id, "parallelism",
						   (json_int_t)oa->parallelism, (json_int_t)ob->parallelism,
						   "max_parallelism", (json_int_t)oa->max_parallelism,
						   (json_int_t)ob->max_parallelism)) < 0)
			goto fail;
		if (diff_states(oa, ob, json_object_get(o, "states_added"), json_object_get(o, "states_removed"),
				json_object_get(o, "states_resized")) < 0)
			goto fail;
	}
	for (size_t i = 0; i < b->nops; i++)
		if (find_op(a, b->ops[i].id) == NULL &&
		    ckpt_json_append_new(json_object_get(o, "operators_added"), op_brief(&b->ops[i])) < 0)
			goto fail;
	*differ = 0;
	json_object_foreach(o, key, v)
		if (json_array_size(v))
			*differ = 1;
	return o;
fail:
	json_decref(o);
	ckpt_err_nomem(e, "");
	return NULL;
}
