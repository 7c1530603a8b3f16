/*
 * snapshot.c: the snapshot model (names, freeing, counting) and its JSON forms written: the state
 * document (ckpt-state(5)), lossless, and the manifest of an archive (ckpt-archive(5)), which is
 * the same document with counts instead of entries; doc.c reads both back.
 */
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* ---- names */

const char *
ckpt_mode_name(enum ckpt_mode m)
{
	return m == CKPT_MODE_UNION ? "union" : m == CKPT_MODE_BROADCAST ? "broadcast" : "list";
}

int
ckpt_mode_parse(const char *name)
{
	if (strcmp(name, "list") == 0)
		return CKPT_MODE_LIST;
	if (strcmp(name, "union") == 0)
		return CKPT_MODE_UNION;
	if (strcmp(name, "broadcast") == 0)
		return CKPT_MODE_BROADCAST;
	return -1;
}

const char *
ckpt_snapshot_format(const struct ckpt_snapshot *s)
{
	const struct ckpt_model_backing *b = s->backing;

	return b != NULL ? b->format : "state document";
}

int
ckpt_snapshot_is_flink_meta(const struct ckpt_snapshot *s)
{
	const struct ckpt_model_backing *b = s->backing;

	return b != NULL && b->flink_meta;
}

int
ckpt_snapshot_is_archive(const struct ckpt_snapshot *s)
{
	const struct ckpt_model_backing *b = s->backing;

	return b != NULL && b->archive;
}

/* ---- freeing */

static void
free_entries(struct ckpt_subtask *st)
{
	int own = st->arena == NULL;

	for (size_t i = 0; i < st->nops; i++) {
		if (own && st->ops[i].entries)
			for (size_t k = 0; k < st->ops[i].n; k++)
				free(st->ops[i].entries[k].p);
		free(st->ops[i].entries);
		st->ops[i].entries = NULL;
		json_decref(st->ops[i].typed);
		st->ops[i].typed = NULL;
	}
	for (size_t k = 0; st->kv && k < st->nkv; k++)
		json_decref(st->kv[k].typed);
	if (own && st->kv)
		for (size_t k = 0; k < st->nkv; k++) {
			free(st->kv[k].state);
			free(st->kv[k].key.p);
			free(st->kv[k].value.p);
		}
	if (own && st->in)
		for (size_t k = 0; k < st->nin; k++)
			free(st->in[k].data.p);
	if (own && st->out)
		for (size_t k = 0; k < st->nout; k++)
			free(st->out[k].data.p);
	free(st->kv);
	free(st->in);
	free(st->out);
	st->kv = NULL;
	st->in = st->out = NULL;
	ckpt_model_arena_free(st->arena);
	st->arena = NULL;
}

void
ckpt_subtask_unload(struct ckpt_subtask *st)
{
	if (st == NULL || !st->loaded)
		return;
	/* a subtask without a store to reload from keeps its entries */
	if (st->member == NULL && (st->nkv || st->nin || st->nout))
		return;
	for (size_t i = 0; i < st->nops; i++)
		if (st->member == NULL && st->ops[i].n)
			return;
	free_entries(st);
	st->loaded = 0;
}

static void
free_handles(struct ckpt_subtask *st)
{
	for (size_t i = 0; i < st->nhandles; i++) {
		free(st->handles[i].scope);
		free(st->handles[i].kind);
		free(st->handles[i].path);
		json_decref(st->handles[i].detail);
		free(st->handles[i].data.p);
	}
	free(st->handles);
	st->handles = NULL;
	st->nhandles = 0;
}

void
ckpt_subtask_release(struct ckpt_subtask *st)
{
	if (st == NULL)
		return;
	free_entries(st);
	for (size_t i = 0; i < st->nops; i++)
		free(st->ops[i].name);
	free(st->ops);
	st->ops = NULL;
	st->nops = 0;
	for (size_t i = 0; i < st->nkvstats; i++)
		free(st->kvstats[i].state);
	free(st->kvstats);
	st->kvstats = NULL;
	st->nkvstats = 0;
	free_handles(st);
	st->loaded = 0;
}

void
ckpt_snapshot_free(struct ckpt_snapshot *s)
{
	struct ckpt_model_backing *b;

	if (s == NULL)
		return;
	for (size_t i = 0; i < s->nops; i++) {
		struct ckpt_operator *op = &s->ops[i];

		for (size_t k = 0; k < op->nsubtasks; k++)
			ckpt_subtask_release(&op->subtasks[k]);
		free(op->subtasks);
		free(op->id);
		free(op->uid);
		free(op->name);
		free(op->vertex);
		if (op->coordinator)
			free(op->coordinator->p);
		free(op->coordinator);
	}
	free(s->ops);
	free(s->kind);
	json_decref(s->flink);
	b = s->backing;
	if (b)
		b->free(b);
	free(s);
}

void
ckpt_model_members_free(struct ckpt_model_member *m, size_t n)
{
	if (m == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		free(m[i].name);
	free(m);
}

/* ---- counting */

/* The kvstat of name, added when new; last caches the previous hit. */
static struct ckpt_kvstat *
kvstat_find(struct ckpt_kvstat **v, size_t *n, size_t *cap, const char *name, size_t *last,
	    struct ckpt_err *e)
{
	if (*last < *n && strcmp((*v)[*last].state, name) == 0)
		return &(*v)[*last];
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*v)[i].state, name) == 0) {
			*last = i;
			return &(*v)[i];
		}
	if (ckpt_grow(v, cap, *n + 1, sizeof **v, 4, e) < 0)
		return NULL;
	(*v)[*n].state = ckpt_strdup(name, e);
	if ((*v)[*n].state == NULL)
		return NULL;
	(*v)[*n].n = 0;
	(*v)[*n].bytes = 0;
	*last = (*n)++;
	return &(*v)[*last];
}

int
ckpt_subtask_recount(struct ckpt_subtask *st, struct ckpt_err *e)
{
	struct ckpt_kvstat *v = NULL;
	size_t n = 0, cap = 0, last = 0;

	if (!st->loaded)
		return 0;
	for (size_t i = 0; i < st->nops; i++) {
		st->ops[i].bytes = 0;
		for (size_t k = 0; k < st->ops[i].n; k++)
			st->ops[i].bytes += st->ops[i].entries[k].len;
	}
	st->kv_bytes = 0;
	for (size_t k = 0; k < st->nkv; k++) {
		struct ckpt_kvstat *ks = kvstat_find(&v, &n, &cap, st->kv[k].state, &last, e);
		uint64_t b = st->kv[k].key.len + st->kv[k].value.len;

		if (ks == NULL)
			goto fail;
		ks->n++;
		ks->bytes += b;
		st->kv_bytes += b;
	}
	st->in_bytes = st->out_bytes = 0;
	for (size_t k = 0; k < st->nin; k++)
		st->in_bytes += st->in[k].data.len;
	for (size_t k = 0; k < st->nout; k++)
		st->out_bytes += st->out[k].data.len;
	for (size_t i = 0; i < st->nkvstats; i++)
		free(st->kvstats[i].state);
	free(st->kvstats);
	st->kvstats = v;
	st->nkvstats = n;
	return 0;
fail:
	for (size_t i = 0; i < n; i++)
		free(v[i].state);
	free(v);
	return -1;
}

/* ---- writing the JSON forms */

static json_t *
opt_str(const char *s)
{
	return s ? json_string(s) : json_null();
}

json_t *
ckpt_model_operator_head(const struct ckpt_operator *op)
{
	json_t *o = json_object();

	if (o == NULL)
		return NULL;
	if (ckpt_json_set_new(o, "id", json_string(op->id)) < 0 ||
	    ckpt_json_set_new(o, "uid", opt_str(op->uid)) < 0 ||
	    ckpt_json_set_new(o, "name", opt_str(op->name)) < 0 ||
	    ckpt_json_set_new(o, "vertex", opt_str(op->vertex)) < 0 ||
	    ckpt_json_set_new(o, "parallelism", json_integer(op->parallelism)) < 0 ||
	    ckpt_json_set_new(o, "max_parallelism", json_integer(op->max_parallelism)) < 0 ||
	    ckpt_json_set_new(o, "fully_finished", json_boolean(op->fully_finished)) < 0 ||
	    ckpt_json_set_new(o, "coordinator", op->coordinator ?
			      ckpt_entry_to_json(op->coordinator->p, op->coordinator->len) : json_null()) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *
ckpt_model_handles_json(const struct ckpt_subtask *st)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < st->nhandles; i++) {
		const struct ckpt_handle *h = &st->handles[i];
		json_t *o = json_pack("{s:s, s:s, s:I, s:o}", "scope", h->scope ? h->scope : "",
				      "kind", h->kind ? h->kind : "", "size", (json_int_t)h->size,
				      "path", opt_str(h->path));

		if (o && h->detail && json_object_update_missing(o, h->detail) < 0) {
			json_decref(o);
			o = NULL;
		}
		if (ckpt_json_append_new(arr, o) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

static char *
kg_string(const struct ckpt_subtask *st, char buf[32])
{
	if (st->kg_first == st->kg_last)
		snprintf(buf, 32, "%u", st->kg_first);
	else
		snprintf(buf, 32, "%u-%u", st->kg_first, st->kg_last);
	return buf;
}

static json_t *
entries_json(const struct ckpt_bytes *v, size_t n)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < n; i++)
		if (ckpt_json_append_new(arr, ckpt_entry_to_json(v[i].p, v[i].len)) < 0) {
			json_decref(arr);
			return NULL;
		}
	return arr;
}

static json_t *
opstates_json(const struct ckpt_subtask *st, int counts)
{
	json_t *o = json_object();

	for (size_t i = 0; o && i < st->nops; i++) {
		const struct ckpt_opstate *os = &st->ops[i];
		json_t *v = counts ?
			json_pack("{s:s, s:I, s:I}", "mode", ckpt_mode_name(os->mode), "entries", (json_int_t)os->n,
				  "bytes", (json_int_t)os->bytes) :
			json_pack("{s:s, s:o}", "mode", ckpt_mode_name(os->mode), "entries",
				  entries_json(os->entries, os->n));

		if (v && !counts && os->typed && json_object_set(v, "typed", os->typed) < 0) {
			json_decref(v);
			v = NULL;
		}

		if (ckpt_json_set_new(o, os->name, v) < 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

static json_t *
kv_json(const struct ckpt_kv *kv)
{
	json_t *o = json_pack("{s:s, s:I, s:o, s:o}", "state", kv->state, "key_group", (json_int_t)kv->key_group,
			      "key", ckpt_entry_to_json(kv->key.p, kv->key.len), "value",
			      ckpt_entry_to_json(kv->value.p, kv->value.len));

	if (o && kv->typed && json_object_set(o, "typed", kv->typed) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *
keyed_json(const struct ckpt_subtask *st, int counts)
{
	char kg[32];
	json_t *o = json_pack("{s:s}", "key_groups", kg_string(st, kg)), *arr;

	if (o == NULL)
		return NULL;
	if (counts) {
		json_t *states = json_object();

		for (size_t i = 0; states && i < st->nkvstats; i++)
			if (ckpt_json_set_new(states, st->kvstats[i].state,
					      json_pack("{s:I, s:I}", "entries", (json_int_t)st->kvstats[i].n,
							"bytes", (json_int_t)st->kvstats[i].bytes)) < 0) {
				json_decref(states);
				states = NULL;
			}
		if (ckpt_json_set_new(o, "entries", json_integer((json_int_t)st->nkv)) < 0 ||
		    ckpt_json_set_new(o, "bytes", json_integer((json_int_t)st->kv_bytes)) < 0 ||
		    ckpt_json_set_new(o, "states", states) < 0)
			goto fail;
		return o;
	}
	if (st->nkv == 0 && st->nhandles > 0)
		return o;
	arr = json_array();
	if (ckpt_json_set_new(o, "entries", arr) < 0)
		goto fail;
	for (size_t i = 0; i < st->nkv; i++)
		if (ckpt_json_append_new(arr, kv_json(&st->kv[i])) < 0)
			goto fail;
	return o;
fail:
	json_decref(o);
	return NULL;
}

static json_t *
chans_json(const struct ckpt_chan *c, size_t n, int input)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < n; i++)
		if (ckpt_json_append_new(arr, json_pack("{s:I, s:I, s:o}", input ? "gate" : "partition",
							(json_int_t)c[i].a, input ? "channel" : "subpartition",
							(json_int_t)c[i].b, "data",
							ckpt_entry_to_json(c[i].data.p, c[i].data.len))) < 0) {
			json_decref(arr);
			return NULL;
		}
	return arr;
}

static json_t *
channel_json(const struct ckpt_subtask *st, int counts)
{
	if (counts)
		return json_pack("{s:I, s:I, s:I, s:I}", "input", (json_int_t)st->nin, "input_bytes",
				 (json_int_t)st->in_bytes, "output", (json_int_t)st->nout, "output_bytes",
				 (json_int_t)st->out_bytes);
	return json_pack("{s:o, s:o}", "input", chans_json(st->in, st->nin, 1), "output",
			 chans_json(st->out, st->nout, 0));
}

/*
 * One subtask in the normal form: operator_state unless the subtask holds only
 * handles, keyed_state when keyed, channel_state when it holds in-flight data.
 */
static json_t *
subtask_json(const struct ckpt_subtask *st, int counts, const char *member)
{
	json_t *o = json_pack("{s:I, s:b}", "index", (json_int_t)st->index, "finished", st->finished);

	if (o == NULL)
		return NULL;
	if (member && ckpt_json_set_new(o, "member", json_string(member)) < 0)
		goto fail;
	if (!counts && !st->loaded) { /* only handles: the entries live in Flink's files */
		if (st->keyed && ckpt_json_set_new(o, "keyed_state", keyed_json(st, counts)) < 0)
			goto fail;
		if (st->nhandles && ckpt_json_set_new(o, "handles", ckpt_model_handles_json(st)) < 0)
			goto fail;
		return o;
	}
	if (!st->finished && (st->nops > 0 || st->nhandles == 0) &&
	    ckpt_json_set_new(o, "operator_state", opstates_json(st, counts)) < 0)
		goto fail;
	if (st->keyed && ckpt_json_set_new(o, "keyed_state", keyed_json(st, counts)) < 0)
		goto fail;
	if ((st->nin || st->nout) && ckpt_json_set_new(o, "channel_state", channel_json(st, counts)) < 0)
		goto fail;
	if (st->nhandles && ckpt_json_set_new(o, "handles", ckpt_model_handles_json(st)) < 0)
		goto fail;
	return o;
fail:
	json_decref(o);
	return NULL;
}

/* Counts are taken from the entries when loaded (a caller's fields may be stale). */
json_t *
ckpt_model_subtask_manifest(const struct ckpt_subtask *st, const char *member)
{
	struct ckpt_subtask c = *st;
	json_t *v = NULL;

	if (!st->loaded)
		return subtask_json(st, 1, member);
	c.kvstats = NULL;
	c.nkvstats = 0;
	c.ops = calloc(st->nops ? st->nops : 1, sizeof *c.ops);
	if (c.ops == NULL)
		return NULL;
	if (st->nops)
		memcpy(c.ops, st->ops, st->nops * sizeof *c.ops);
	if (ckpt_subtask_recount(&c, NULL) == 0)
		v = subtask_json(&c, 1, member);
	for (size_t i = 0; i < c.nkvstats; i++)
		free(c.kvstats[i].state);
	free(c.kvstats);
	free(c.ops);
	return v;
}

json_t *
ckpt_model_head(const struct ckpt_snapshot *s)
{
	json_t *o = json_pack("{s:s, s:i, s:I, s:o}", "format", "ckpt-state", "version", 1, "checkpoint_id",
			      (json_int_t)s->checkpoint_id, "kind", s->kind ? json_string(s->kind) : json_null());

	if (o && s->flink && json_object_set(o, "flink", s->flink) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* A subtask is loaded for printing (and unloaded after) unless it holds only handles whose state
 * nobody asked to read (ckpt_flink_state_enable). */
json_t *
ckpt_model_subtask_doc(struct ckpt_snapshot *s, struct ckpt_operator *op, struct ckpt_subtask *st,
		      struct ckpt_err *e)
{
	const struct ckpt_model_backing *b = s->backing;
	int was = st->loaded;
	json_t *v;

	if (!st->loaded && (st->nhandles == 0 || (b && b->load && b->flink_meta)) &&
	    ckpt_subtask_load(s, op, st, e) < 0)
		return NULL;
	v = subtask_json(st, 0, NULL);
	if (!was)
		ckpt_subtask_unload(st);
	if (v == NULL)
		ckpt_err_nomem(e, "");
	return v;
}

json_t *
ckpt_snapshot_to_json(struct ckpt_snapshot *s, struct ckpt_err *e)
{
	json_t *root = ckpt_model_head(s), *ops = json_array();
	uint64_t done = 0;

	if (ckpt_json_set_new(root, "operators", ops) < 0)
		goto nomem;
	for (size_t i = 0; i < s->nops; i++) {
		struct ckpt_operator *op = &s->ops[i];
		json_t *o = ckpt_model_operator_head(op), *subs = json_array();

		const struct ckpt_model_backing *b = s->backing;

		if (ckpt_json_append_new(ops, o) < 0 || (b && b->head && b->head(s, op, o) < 0) || ckpt_json_set_new(o, "subtasks", subs) < 0)
			goto nomem;
		for (size_t k = 0; k < op->nsubtasks; k++) {
			json_t *v = ckpt_model_subtask_doc(s, op, &op->subtasks[k], e);

			if (v == NULL)
				goto fail;
			if (json_array_append_new(subs, v) < 0)
				goto nomem;
			ckpt_progress_at(s, ++done); /* when -a reports it (print.c) */
		}
	}
	return root;
nomem:
	ckpt_err_nomem(e, "");
fail:
	json_decref(root);
	return NULL;
}

const struct ckpt_opstate *
ckpt_subtask_opstate(const struct ckpt_subtask *st, const char *name)
{
	for (size_t k = 0; st != NULL && k < st->nops; k++)
		if (strcmp(st->ops[k].name, name) == 0)
			return &st->ops[k];
	return NULL;
}

size_t
ckpt_snapshot_match_uid(const struct ckpt_snapshot *s, const char *uid, size_t from, char id[33])
{
	ckpt_flink_operator_id(uid, strlen(uid), id);
	for (size_t i = from; i < s->nops; i++) {
		const struct ckpt_operator *op = &s->ops[i];

		if (strcasecmp(op->id, id) == 0 || strcmp(op->id, uid) == 0 || (op->uid && strcmp(op->uid, uid) == 0))
			return i;
	}
	return s->nops;
}

int
ckpt_subtask_load(struct ckpt_snapshot *s, struct ckpt_operator *op, struct ckpt_subtask *st,
		  struct ckpt_err *e)
{
	struct ckpt_model_backing *b = s->backing;

	if (st->loaded)
		return 0;
	if (b && b->load && b->flink_meta) /* ckpt_flink_state_enable */
		return b->load(s, op, st, e);
	if (st->member == NULL || b == NULL || b->load == NULL) {
		if (st->nhandles)
			return ckpt_err_set(e, CKPT_ERR_INPUT, "",
					    "operator \"%s\": subtask %u: its state is in Flink's state files, "
					    "not in the snapshot", op->id, st->index);
		st->loaded = 1; /* nothing stored: no entries */
		return 0;
	}
	return b->load(s, op, st, e);
}
