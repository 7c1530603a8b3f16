/* shards.c: a Flink snapshot's state split into shards that read apart (ckpt-inspect --shards N,
 * -R --shard): every byte of state in one shard, shards balanced by bytes; keyed state with
 * per-key-group offsets split by key-group range, other keyed handles (RocksDB, changelog) whole,
 * operator state by subtask (ckpt-inspect(1), SHARDS). */
#include <stdlib.h>
#include <string.h>

#include "readers.h"

/* A part of a shard: one subtask's operator state (part 1), or its keyed state in key groups
 * [lo, hi) (part 2). */
struct piece {
	size_t op, st;
	int part;
	uint32_t lo, hi;
	uint64_t bytes;
	const char *whole; /* keyed state not split: the handle's kind that keeps it whole */
	unsigned shard;
};

struct plan {
	struct piece *p;
	size_t n, cap;
	uint64_t total;
};

static int
is_keyed(const struct ckpt_handle *h)
{
	return h->scope && strstr(h->scope, "_keyed") != NULL;
}

static int
is_operator(const struct ckpt_handle *h)
{
	return h->scope && strstr(h->scope, "_operator") != NULL;
}

static int
add(struct plan *P, struct piece x, struct ckpt_err *e)
{
	if (ckpt_grow(&P->p, &P->cap, P->n + 1, sizeof *P->p, 64, e) < 0)
		return -1;
	P->p[P->n++] = x;
	P->total += x.bytes;
	return 0;
}

/* The offsets of a keyed handle that splits by key group (one per key group of st), or NULL. */
static const json_t *
kg_offsets(const struct ckpt_subtask *st, const struct ckpt_handle *h)
{
	const json_t *off = json_object_get(h->detail, "offsets");

	if (h->kind == NULL || strstr(h->kind, "key_groups") == NULL || h->path == NULL || !json_is_array(off) ||
	    json_array_size(off) != (size_t)(st->kg_last - st->kg_first) + 1)
		return NULL;
	return off;
}

/* Where key group g of h begins (g past the last: its end). */
static uint64_t
kg_at(const struct ckpt_subtask *st, const struct ckpt_handle *h, const json_t *off, uint32_t g)
{
	if (g > st->kg_last)
		return h->size;
	return (uint64_t)json_integer_value(json_array_get(off, g - st->kg_first));
}

/*
 * Where each key group g of st's keyed handle h begins in bytes of h, at[g - kg_first] (at[0] 0: the
 * header with the first), and its end at[kg_last - kg_first + 1]: from its offsets, or for a RocksDB
 * handle from its table files' index blocks (rocksdb-sst.c), every byte of the handle spread over
 * its key groups as their data blocks are.  0, 1 when h does not split, -1 with e set.
 */
static int
kg_starts(struct ckpt_fstate_backing_data *b, const struct ckpt_operator *op, const struct ckpt_subtask *st,
	  const struct ckpt_handle *h, uint64_t *at, struct ckpt_err *e)
{
	const json_t *off = kg_offsets(st, h);
	uint32_t n = st->kg_last - st->kg_first + 1;
	uint64_t total = 0, run = 0;
	int rc;

	if (off) {
		for (uint32_t g = st->kg_first; g <= st->kg_last + 1; g++)
			at[g - st->kg_first] = g == st->kg_first ? 0 : kg_at(st, h, off, g);
		return 0;
	}
	if (h->kind == NULL || strcmp(h->kind, "incremental") != 0 || n < 2)
		return 1;
	memset(at, 0, (n + 1) * sizeof *at);
	if ((rc = ckpt_frocks_kg_bytes(b, op, st, h, at, e)) != 0)
		return rc;
	for (uint32_t i = 0; i < n; i++)
		total += at[i];
	if (total == 0)
		return 1;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t w = at[i];

		at[i] = i == 0 ? 0 : (uint64_t)((unsigned __int128)h->size * run / total);
		run += w;
	}
	at[n] = h->size;
	return 0;
}

/* st's keyed state: chunks of consecutive key groups of about target bytes (the header with the
 * first), or the whole of it when a handle does not split. */
static int
keyed_pieces(struct plan *P, const struct ckpt_snapshot *s, size_t i, size_t j, uint64_t target, struct ckpt_err *e)
{
	const struct ckpt_subtask *st = &s->ops[i].subtasks[j];
	struct piece x = {.op = i, .st = j, .part = 2, .lo = st->kg_first, .hi = st->kg_last + 1};
	size_t n = (size_t)(st->kg_last - st->kg_first) + 2;
	uint64_t b = 0, *at = ckpt_calloc(st->nhandles * n + 1, sizeof *at, e);
	int rc = -1;

	if (at == NULL)
		return -1;
	for (size_t h = 0; h < st->nhandles; h++)
		if (is_keyed(&st->handles[h])) {
			int r = kg_starts(s->backing, &s->ops[i], st, &st->handles[h], at + h * n, e);

			if (r < 0)
				goto out;
			x.bytes += st->handles[h].size;
			if (r > 0)
				x.whole = st->handles[h].kind ? st->handles[h].kind : "?";
		}
	if (x.whole) {
		rc = add(P, x, e);
		goto out;
	}
	for (uint32_t g = st->kg_first; g <= st->kg_last; g++) {
		for (size_t h = 0; h < st->nhandles; h++)
			if (is_keyed(&st->handles[h]))
				b += at[h * n + g + 1 - st->kg_first] - at[h * n + g - st->kg_first];
		if (b >= target || g == st->kg_last) {
			x.hi = g + 1;
			x.bytes = b;
			if (add(P, x, e) < 0)
				goto out;
			x.lo = g + 1;
			b = 0;
		}
	}
	rc = 0;
out:
	free(at);
	return rc;
}

/* The operators a plan covers: those -u chose (select.c), else all. */
static int
planned_op(const struct ckpt_snapshot *s, size_t i)
{
	return ckpt_fselect_operator(((struct ckpt_fstate_backing_data *)s->backing)->sel, &s->ops[i]);
}

static int
pieces(struct plan *P, const struct ckpt_snapshot *s, unsigned n, struct ckpt_err *e)
{
	uint64_t total = 0, target;

	for (size_t i = 0; i < s->nops; i++)
		for (size_t j = 0; planned_op(s, i) && j < s->ops[i].nsubtasks; j++)
			for (size_t h = 0; h < s->ops[i].subtasks[j].nhandles; h++)
				total += s->ops[i].subtasks[j].handles[h].size;
	target = total / n / 8 ? total / n / 8 : 1; /* pieces of an eighth of a shard at most, where they split */
	for (size_t i = 0; i < s->nops; i++)
		for (size_t j = 0; planned_op(s, i) && j < s->ops[i].nsubtasks; j++) {
			const struct ckpt_subtask *st = &s->ops[i].subtasks[j];
			struct piece x = {.op = i, .st = j, .part = 1};

			if (st->finished)
				continue;
			for (size_t h = 0; h < st->nhandles; h++)
				x.bytes += is_operator(&st->handles[h]) ? st->handles[h].size : 0;
			if ((st->nops > 0 || x.bytes > 0) && add(P, x, e) < 0)
				return -1;
			if (st->keyed && keyed_pieces(P, s, i, j, target, e) < 0)
				return -1;
		}
	return 0;
}

/* Largest first, each to the shard holding least (the lowest of those): the largest shard at most
 * the mean plus the largest piece. */
static int
by_bytes(const void *a, const void *b)
{
	const struct piece *x = *(struct piece *const *)a, *y = *(struct piece *const *)b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return x < y ? -1 : x > y;
}

static int
assign(struct plan *P, unsigned n, uint64_t *load, struct ckpt_err *e)
{
	struct piece **order = ckpt_calloc(P->n + 1, sizeof *order, e);

	if (order == NULL)
		return -1;
	for (size_t k = 0; k < P->n; k++)
		order[k] = &P->p[k];
	qsort(order, P->n, sizeof *order, by_bytes);
	for (size_t k = 0; k < P->n; k++) {
		unsigned best = 0;

		for (unsigned i = 1; i < n; i++)
			if (load[i] < load[best])
				best = i;
		order[k]->shard = best;
		load[best] += order[k]->bytes;
	}
	free(order);
	return 0;
}

static json_t *
file_json(const struct ckpt_handle *h, uint64_t from, uint64_t to)
{
	return json_pack("{s:s?,s:s?,s:I,s:I}", "path", h->path, "kind", h->kind, "from", (json_int_t)from, "to",
			 (json_int_t)to);
}

/* The files a part reads and the bytes of each it covers. */
static json_t *
files_json(const struct ckpt_subtask *st, const struct piece *x)
{
	json_t *a = json_array();

	for (size_t h = 0; a && h < st->nhandles; h++) {
		const struct ckpt_handle *k = &st->handles[h];
		const json_t *off = x->part == 2 && is_keyed(k) ? kg_offsets(st, k) : NULL;

		if (x->part == 1 ? is_operator(k) : is_keyed(k))
			json_array_append_new(a, off ? file_json(k, x->lo == st->kg_first ? 0 : kg_at(st, k, off, x->lo),
								 kg_at(st, k, off, x->hi))
						     : file_json(k, 0, k->size));
	}
	return a;
}

static json_t *
part_json(const struct ckpt_snapshot *s, const struct piece *x, uint32_t hi, uint64_t bytes)
{
	const struct ckpt_operator *op = &s->ops[x->op];
	const struct ckpt_subtask *st = &op->subtasks[x->st];
	struct piece y = *x;
	json_t *p;
	char kg[32];

	y.hi = hi;
	p = json_pack("{s:s,s:s?,s:I,s:s,s:I,s:o}", "operator", op->id, "uid", op->uid, "subtask",
		      (json_int_t)st->index, "state", x->part == 1 ? "operator" : "keyed", "bytes", (json_int_t)bytes,
		      "files", files_json(st, &y));
	if (p && x->part == 2) {
		if (x->lo + 1 == hi)
			snprintf(kg, sizeof kg, "%u", x->lo);
		else
			snprintf(kg, sizeof kg, "%u-%u", x->lo, hi - 1);
		json_object_set_new(p, "key_groups", json_string(kg));
		if (x->whole)
			json_object_set_new(p, "whole", json_string(x->whole));
	}
	return p;
}

/* Shard i's parts in the document's order, consecutive key groups of one subtask as one. */
static json_t *
parts_json(const struct ckpt_snapshot *s, const struct plan *P, unsigned i)
{
	json_t *a = json_array();

	for (size_t k = 0; a && k < P->n; k++) {
		const struct piece *x = &P->p[k];
		uint64_t bytes = x->bytes;
		uint32_t hi = x->hi;

		if (x->shard != i)
			continue;
		while (x->part == 2 && k + 1 < P->n && P->p[k + 1].shard == i && P->p[k + 1].part == 2 &&
		       P->p[k + 1].op == x->op && P->p[k + 1].st == x->st && P->p[k + 1].lo == hi) {
			hi = P->p[++k].hi;
			bytes += P->p[k].bytes;
		}
		if (json_array_append_new(a, part_json(s, x, hi, bytes)) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* The largest part that ckpt does not split, for a shard over 1.25 times the mean. */
static void
why_over(const struct plan *P, unsigned i, const struct ckpt_snapshot *s, char *why, size_t n)
{
	const struct piece *big = NULL;

	for (size_t k = 0; k < P->n; k++)
		if (P->p[k].shard == i && (big == NULL || P->p[k].bytes > big->bytes))
			big = &P->p[k];
	if (big == NULL)
		return;
	snprintf(why, n, "%s state of operator %s subtask %u, %llu bytes in %s handles that ckpt does not split",
		 big->part == 1 ? "the operator" : "the keyed", s->ops[big->op].id,
		 s->ops[big->op].subtasks[big->st].index, (unsigned long long)big->bytes,
		 big->part == 1 ? "operator state" : big->whole ? big->whole : "key-group");
}

static json_t *
shards_json(const struct ckpt_snapshot *s, const struct plan *P, unsigned n, const uint64_t *load, char *note,
	    size_t notesize)
{
	json_t *all = json_array();
	double mean = (double)P->total / n;

	for (unsigned i = 0; all && i < n; i++) {
		json_t *d = json_pack("{s:I,s:I,s:I,s:I,s:o}", "shard", (json_int_t)i, "shards", (json_int_t)n,
				      "checkpoint", (json_int_t)s->checkpoint_id, "bytes", (json_int_t)load[i],
				      "parts", parts_json(s, P, i));
		char why[512] = "";

		if (d && n > 1 && (double)load[i] > 1.25 * mean) {
			why_over(P, i, s, why, sizeof why);
			json_object_set_new(d, "over", json_sprintf("%.2f times the mean: %s", load[i] / mean, why));
			if (note && *note == '\0')
				snprintf(note, notesize, "shard %u holds %.2f times the mean bytes: %s", i, load[i] / mean, why);
		}
		if (d == NULL || json_array_append_new(all, d) < 0) {
			json_decref(all);
			return NULL;
		}
	}
	return all;
}

json_t *
ckpt_flink_shards(struct ckpt_snapshot *s, unsigned n, char *note, size_t notesize, struct ckpt_err *e)
{
	struct plan P = {0};
	uint64_t *load = NULL;
	json_t *all = NULL;

	if (note)
		*note = '\0';
	if (n == 0)
		return ckpt_err_set(e, CKPT_ERR_INPUT, "", "--shards: at least one shard"), NULL;
	if (ckpt_fstate_backing(s, e) == NULL || pieces(&P, s, n, e) < 0 ||
	    (load = ckpt_calloc(n, sizeof *load, e)) == NULL || assign(&P, n, load, e) < 0)
		goto out;
	if ((all = shards_json(s, &P, n, load, note, notesize)) == NULL)
		ckpt_err_nomem(e, "");
out:
	free(P.p);
	free(load);
	return all;
}

/* ------------------------------------------------------------ reading one shard */

static int
bad_desc(struct ckpt_err *e, const char *what)
{
	return ckpt_err_set(e, CKPT_ERR_INPUT, "", "--shard: %s (a line of ckpt-inspect --shards N, or I/N)", what);
}

/* "I/N": shard I of the plan of N, which the same snapshot always gives. */
static json_t *
planned(struct ckpt_snapshot *s, const char *desc, struct ckpt_err *e)
{
	char *end;
	unsigned long i = strtoul(desc, &end, 10), n;
	json_t *all, *d;

	if (end == desc || *end != '/' || desc[0] == '-' || end[1] == '-' || end[1] == '+')
		return bad_desc(e, "not a shard descriptor"), NULL;
	n = strtoul(end + 1, &end, 10);
	if (*end != '\0' || n == 0 || n > 1000000)
		return bad_desc(e, "N of I/N is 1 to 1000000"), NULL;
	if (i >= n)
		return ckpt_err_set(e, CKPT_ERR_INPUT, "", "--shard: shard %lu of %lu: shards count from 0", i, n), NULL;
	if ((all = ckpt_flink_shards(s, (unsigned)n, NULL, 0, e)) == NULL)
		return NULL;
	d = json_incref(json_array_get(all, i));
	json_decref(all);
	return d;
}

/* The operator and subtask a part names, and its key groups [*lo, *hi). */
static int
part_of(const struct ckpt_snapshot *s, const json_t *p, const struct ckpt_operator **op,
	const struct ckpt_subtask **st, uint32_t *lo, uint32_t *hi, struct ckpt_err *e)
{
	const char *id = json_string_value(json_object_get(p, "operator"));
	const char *state = json_string_value(json_object_get(p, "state"));
	const char *kg = json_string_value(json_object_get(p, "key_groups"));
	json_t *sub = json_object_get(p, "subtask");
	unsigned a, b;
	int k = 0;

	*op = NULL;
	*st = NULL;
	for (size_t i = 0; id && i < s->nops && !*op; i++)
		*op = strcmp(s->ops[i].id, id) == 0 ? &s->ops[i] : NULL;
	for (size_t j = 0; *op && json_is_integer(sub) && j < (*op)->nsubtasks; j++)
		if ((json_int_t)(*op)->subtasks[j].index == json_integer_value(sub))
			*st = &(*op)->subtasks[j];
	if (!json_is_object(p) || state == NULL || (strcmp(state, "operator") != 0 && strcmp(state, "keyed") != 0))
		return bad_desc(e, "a part without its state (operator or keyed)");
	if (*st == NULL)
		return ckpt_err_set(e, CKPT_ERR_INPUT, "", "--shard: operator %s subtask %s is not in this snapshot",
				    id ? id : "(none)", json_is_integer(sub) ? "" : "(none)");
	if (strcmp(state, "operator") == 0)
		return 1;
	if (kg == NULL || ((k = sscanf(kg, "%u-%u", &a, &b)) != 1 && k != 2))
		return bad_desc(e, "a keyed part without its key groups");
	b = k == 1 ? a : b;
	if (!(*st)->keyed || a > b || a < (*st)->kg_first || b > (*st)->kg_last)
		return ckpt_err_set(e, CKPT_ERR_INPUT, "", "--shard: key groups %s are not operator %s subtask %u's",
				    kg, (*op)->id, (*st)->index);
	*lo = a;
	*hi = b + 1;
	return 2;
}

static json_t *
descriptor(struct ckpt_snapshot *s, const char *desc, struct ckpt_err *e)
{
	json_t *d, *c;

	if (desc[0] != '{')
		return planned(s, desc, e);
	if ((d = json_loads(desc, JSON_REJECT_DUPLICATES, NULL)) == NULL)
		return bad_desc(e, "not JSON"), NULL;
	c = json_object_get(d, "checkpoint");
	if (!json_is_array(json_object_get(d, "parts")) || !json_is_integer(c)) {
		json_decref(d);
		return bad_desc(e, "no parts or no checkpoint"), NULL;
	}
	if ((uint64_t)json_integer_value(c) != s->checkpoint_id) {
		ckpt_err_set(e, CKPT_ERR_INPUT, "", "--shard: a shard of checkpoint %lld, and this is checkpoint %llu",
			     (long long)json_integer_value(c), (unsigned long long)s->checkpoint_id);
		json_decref(d);
		return NULL;
	}
	return d;
}

/* Each part of the descriptor d in turn: pass 0 what it names checked, 1 read through (--keep-going:
 * a subtask that cannot be read left out and said), 2 its rows to w. */
static int
each_part(struct ckpt_snapshot *s, struct ckpt_fstate_backing_data *b, json_t *d, int pass, struct ckpt_jw *w,
	  struct ckpt_err *e)
{
	json_t *p;
	size_t i;

	json_array_foreach(json_object_get(d, "parts"), i, p) {
		const struct ckpt_operator *op;
		const struct ckpt_subtask *st;
		uint32_t lo = 0, hi = 0;
		int part = part_of(s, p, &op, &st, &lo, &hi, e);

		if (part < 0 || (pass == 1 && ckpt_fstate_check_part(b, op, st, part, lo, hi, e) < 0) ||
		    (pass == 2 && ckpt_fstate_rows_subtask(b, op, st, part, lo, hi, w, e) < 0))
			return -1;
	}
	return 0;
}

int
ckpt_flink_shard_rows(struct ckpt_snapshot *s, const char *desc, FILE *f, struct ckpt_err *e)
{
	struct ckpt_fstate_backing_data *b = ckpt_fstate_backing(s, e);
	json_t *d = b ? descriptor(s, desc, e) : NULL;
	struct ckpt_jw *w = d ? ckpt_jw_new(f, 0, e) : NULL;
	int rc = d && w ? 0 : -1;

	/* every part checked before a row is read */
	if (rc == 0 && (each_part(s, b, d, 0, w, e) < 0 || (b->skip && each_part(s, b, d, 1, w, e) < 0) ||
			each_part(s, b, d, 2, w, e) < 0))
		rc = -1;
	if (w) {
		ckpt_jw_flush(w);
		if (rc == 0 && ckpt_jw_failed(w, e) < 0)
			rc = -1;
		ckpt_jw_free(w);
	}
	json_decref(d);
	return rc;
}
