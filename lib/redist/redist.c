/* redist.c: a snapshot's state onto new parallelism or a new job graph, as Flink assigns it on restore. */
#include <stdlib.h>
#include <string.h>

#include "redist.h"

/*
 * The plan is made from counts (n, nkv, key-group ranges) only, so that it
 * works on a Flink _metadata whose bytes live elsewhere and, when moving
 * entries, never needs more than a few old subtasks in memory.  Names are
 * processed in bytewise order, our deterministic stand-in for the Java
 * HashMap order Flink iterates in.
 */

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

struct ckpt_redist_name *
ckpt_redist_find_name(const struct ckpt_redist_op *o, const char *name)
{
	size_t lo = 0, hi = o->nnames;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, o->names[mid].name);

		if (c == 0)
			return &o->names[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* ------------------------------------------------------------ names */

static int
collect_names(struct ckpt_redist_op *o, struct ckpt_err *e)
{
	const char **all = NULL;
	size_t n = 0, cap = 0;
	int rc = -1;

	for (uint32_t j = 0; j < o->P; j++) {
		const struct ckpt_subtask *st = o->at[j];

		for (size_t k = 0; st && k < st->nops; k++) {
			if (ckpt_grow(&all, &cap, n + 1, sizeof *all, 16, e) < 0)
				goto out;
			all[n++] = st->ops[k].name;
		}
	}
	if (n)
		qsort(all, n, sizeof *all, cmp_str);
	o->names = ckpt_calloc(n, sizeof *o->names, e);
	if (o->names == NULL)
		goto out;
	for (size_t k = 0; k < n; k++)
		if (o->nnames == 0 || strcmp(o->names[o->nnames - 1].name, all[k]) != 0)
			o->names[o->nnames++].name = all[k];
	rc = 0;
out:
	free(all);
	return rc;
}

/* Every subtask must give a name the same mode, as one Flink state has one. */
static int
check_modes(struct ckpt_redist *r, struct ckpt_redist_op *o, struct ckpt_err *e)
{
	for (size_t k = 0; k < o->nnames; k++) {
		struct ckpt_redist_name *nm = &o->names[k];
		uint32_t first = 0;
		int seen = 0;

		for (uint32_t j = 0; j < o->P; j++) {
			const struct ckpt_opstate *s = ckpt_subtask_opstate(o->at[j], nm->name);

			if (s == NULL)
				continue;
			if (!seen) {
				nm->mode = s->mode;
				first = j;
				seen = 1;
			} else if (s->mode != nm->mode) {
				return ckpt_err_set(e, CKPT_ERR_INPUT, r->name,
						    "operator %s: state \"%s\" is %s in subtask %u but %s in subtask %u",
						    ckpt_redist_opname(o->old), nm->name, ckpt_mode_name(nm->mode), first,
						    ckpt_mode_name(s->mode), j);
			}
		}
	}
	return 0;
}

/*
 * RoundRobinOperatorStateRepartitioner for one list name: the concatenation in
 * old-subtask order is cut into p runs, visited from *start; the first
 * (total mod p) get one more; the next name starts where the short runs began.
 */
static int
plan_list(struct ckpt_redist_op *o, struct ckpt_redist_name *nm, uint32_t *start, struct ckpt_err *e)
{
	uint64_t total, base, rem, lo = 0;

	nm->cum = ckpt_calloc((size_t)o->P + 1, sizeof *nm->cum, e);
	if (nm->cum == NULL)
		return -1;
	for (uint32_t j = 0; j < o->P; j++) {
		const struct ckpt_opstate *s = ckpt_subtask_opstate(o->at[j], nm->name);

		nm->cum[j + 1] = nm->cum[j] + (s ? s->n : 0);
	}
	if (o->how != RD_RESCALE)
		return 0;
	nm->lo = ckpt_calloc(o->p, sizeof *nm->lo, e);
	nm->len = ckpt_calloc(o->p, sizeof *nm->len, e);
	if (nm->lo == NULL || nm->len == NULL)
		return -1;
	total = nm->cum[o->P];
	base = total / o->p;
	rem = total % o->p;
	for (uint32_t i = 0; i < o->p; i++) {
		uint32_t t = (uint32_t)(((uint64_t)*start + i) % o->p);

		nm->lo[t] = lo;
		nm->len[t] = base + (i < rem ? 1 : 0);
		lo += nm->len[t];
	}
	*start = (uint32_t)((*start + rem) % o->p);
	return 0;
}

static int
plan_holders(struct ckpt_redist_op *o, struct ckpt_redist_name *nm, struct ckpt_err *e)
{
	nm->holders = ckpt_calloc(o->P, sizeof *nm->holders, e);
	if (nm->holders == NULL)
		return -1;
	for (uint32_t j = 0; j < o->P; j++) {
		const struct ckpt_opstate *s = ckpt_subtask_opstate(o->at[j], nm->name);

		if (s != NULL) {
			nm->holders[nm->nholders++] = j;
			nm->held += s->n;
		}
	}
	return 0;
}

static int
plan_names(struct ckpt_redist_op *o, struct ckpt_err *e)
{
	uint32_t start = 0;

	for (size_t k = 0; k < o->nnames; k++) {
		struct ckpt_redist_name *nm = &o->names[k];
		int rc = nm->mode == CKPT_MODE_LIST ? plan_list(o, nm, &start, e) : plan_holders(o, nm, e);

		if (rc < 0)
			return -1;
	}
	return 0;
}

/* ------------------------------------------------------ per operator */

static int
index_subtasks(struct ckpt_redist *r, struct ckpt_redist_op *o, struct ckpt_err *e)
{
	const struct ckpt_operator *op = o->old;

	o->at = ckpt_calloc(o->P, sizeof *o->at, e);
	if (o->at == NULL)
		return -1;
	for (size_t k = 0; k < op->nsubtasks; k++) {
		struct ckpt_subtask *st = &op->subtasks[k];

		if (st->index >= o->P || (k > 0 && st->index <= op->subtasks[k - 1].index))
			return ckpt_err_set(e, CKPT_ERR_INPUT, r->name,
					    "operator %s: subtask %u out of order or beyond parallelism %u",
					    ckpt_redist_opname(op), st->index, o->P);
		if (st->finished) {
			o->some_finished = 1;
			continue;
		}
		o->at[st->index] = st;
		if (st->keyed || st->nkv)
			o->keyed = 1;
		if (st->nin || st->nout)
			o->chan = 1;
		if (st->keyed && (st->kg_first > st->kg_last || st->kg_last >= o->old->max_parallelism))
			return ckpt_err_set(e, CKPT_ERR_INPUT, r->name,
					    "operator %s: subtask %u: key groups %u-%u outside max parallelism %u",
					    ckpt_redist_opname(op), st->index, st->kg_first, st->kg_last,
					    o->old->max_parallelism);
	}
	return 0;
}

static int
has_union(const struct ckpt_redist_op *o)
{
	for (size_t k = 0; k < o->nnames; k++)
		if (o->names[k].mode == CKPT_MODE_UNION)
			return 1;
	return 0;
}

/* What Flink refuses once it knows the operator's new parallelism. */
static int
check_refusals(struct ckpt_redist *r, struct ckpt_redist_op *o, struct ckpt_err *e)
{
	/* FLIP-147's check is at checkpoint time in Flink, whose restore accepts such state; ckpt's
	 * engine refuses it on restore too */
	if (o->some_finished && has_union(o) && r->in->flink == NULL)
		return ckpt_err_set(e, CKPT_ERR_REFUSED, r->name,
				    "The vertex %s (id = %s) has used UnionListState, but part of its tasks are FINISHED.",
				    o->vname, o->vid);
	if (o->p > o->maxp)
		return ckpt_err_set(e, CKPT_ERR_REFUSED, r->name,
				    "The state for task %s can not be restored. The maximum parallelism (%u) of the restored state is lower than the configured parallelism (%u). Please reduce the parallelism of the task to be lower or equal to the maximum parallelism.",
				    o->vid, o->maxp, o->p);
	return 0;
}

static int
plan_op(struct ckpt_redist *r, struct ckpt_redist_op *o, struct ckpt_err *e)
{
	struct ckpt_operator *op = o->old;

	o->P = op->parallelism;
	if (o->maxp == 0)
		o->maxp = op->max_parallelism;
	if (o->P == 0 || op->max_parallelism == 0 || op->max_parallelism > CKPT_MAX_PARALLELISM_LIMIT ||
	    o->P > op->max_parallelism)
		return ckpt_err_set(e, CKPT_ERR_INPUT, r->name,
				    "operator %s: parallelism %u and max parallelism %u are inconsistent",
				    ckpt_redist_opname(op), o->P, op->max_parallelism);
	if (op->fully_finished) {
		o->how = RD_FINISHED;
		return check_refusals(r, o, e);
	}
	o->how = o->p == o->P ? RD_IN_PLACE : RD_RESCALE;
	if (index_subtasks(r, o, e) < 0 || collect_names(o, e) < 0 || check_modes(r, o, e) < 0 ||
	    check_refusals(r, o, e) < 0)
		return -1;
	return plan_names(o, e);
}

/* ------------------------------------------------- new parallelism */

static const struct ckpt_par *
par_for(const struct ckpt_redist_opts *opt, const struct ckpt_operator *op)
{
	const struct ckpt_par *found = NULL;

	for (size_t k = 0; k < opt->nper_op; k++) {
		const char *w = opt->per_op[k].op;

		if (strcmp(w, op->id) == 0 || (op->uid && strcmp(w, op->uid) == 0))
			found = &opt->per_op[k];
	}
	return found;
}

static int
same_vertex(const struct ckpt_operator *a, const struct ckpt_operator *b)
{
	if (a == b)
		return 1;
	return a->vertex && b->vertex && strcmp(a->vertex, b->vertex) == 0;
}

/* -P OP=N rescales the operator's vertex, since chained operators share one parallelism. */
static int
choose_parallelism(struct ckpt_redist *r, const struct ckpt_redist_opts *opt, struct ckpt_err *e)
{
	for (size_t k = 0; k < opt->nper_op; k++) {
		int hit = 0;

		for (size_t i = 0; i < r->in->nops; i++)
			if (par_for(opt, &r->in->ops[i]) == &opt->per_op[k])
				hit = 1;
		if (!hit)
			return ckpt_err_set(e, CKPT_ERR_INPUT, r->name, "-P %s=%u: no operator with that id or uid",
					    opt->per_op[k].op, opt->per_op[k].n);
	}
	for (size_t i = 0; i < r->nops; i++) {
		struct ckpt_redist_op *o = &r->ops[i];
		const struct ckpt_par *by = NULL;

		o->p = opt->parallelism ? opt->parallelism : o->old->parallelism;
		for (size_t k = 0; k < r->in->nops; k++) {
			const struct ckpt_par *q = par_for(opt, &r->in->ops[k]);

			if (q == NULL || !same_vertex(o->old, &r->in->ops[k]))
				continue;
			if (by && by->n != q->n)
				return ckpt_err_set(e, CKPT_ERR_INPUT, r->name,
						    "-P %s=%u and -P %s=%u: operators of vertex %s share one parallelism",
						    by->op, by->n, q->op, q->n, o->old->vertex);
			by = q;
		}
		if (by)
			o->p = by->n;
	}
	return 0;
}

/* ------------------------------------------------------ the output */

static char *
dup_or_null(const char *s, int *fail)
{
	char *d;

	if (s == NULL)
		return NULL;
	d = strdup(s);
	if (d == NULL)
		*fail = 1;
	return d;
}

static int
bytes_dup(struct ckpt_bytes *to, const struct ckpt_bytes *from, struct ckpt_err *e)
{
	to->len = from->len;
	to->p = NULL;
	if (from->len == 0)
		return 0;
	to->p = malloc(from->len);
	if (to->p == NULL)
		return ckpt_err_nomem(e, "");
	memcpy(to->p, from->p, from->len);
	return 0;
}

/* How many entries of name new subtask t holds; 0 when it does not hold the name. */
static int
holds_name(const struct ckpt_redist_op *o, const struct ckpt_redist_name *nm, uint32_t t, size_t *n)
{
	const struct ckpt_opstate *s;

	switch (nm->mode) {
	case CKPT_MODE_LIST:
		if (o->how == RD_RESCALE) {
			*n = (size_t)nm->len[t];
			return nm->len[t] > 0;
		}
		s = ckpt_subtask_opstate(o->at[t], nm->name);
		*n = s ? s->n : 0;
		return s != NULL;
	case CKPT_MODE_UNION:
		*n = (size_t)nm->held;
		return nm->nholders > 0;
	default:
		if (nm->nholders == 0)
			return 0;
		s = ckpt_subtask_opstate(o->at[nm->holders[t % nm->nholders]], nm->name);
		*n = s->n;
		return 1;
	}
}

static int
skeleton_subtask(const struct ckpt_redist_op *o, uint32_t t, struct ckpt_subtask *st, struct ckpt_err *e)
{
	const struct ckpt_subtask *was = o->how == RD_IN_PLACE ? o->at[t] : NULL;
	size_t n;

	st->index = t;
	st->ops = ckpt_calloc(o->nnames, sizeof *st->ops, e);
	if (st->ops == NULL)
		return -1;
	for (size_t k = 0; k < o->nnames; k++) {
		if (!holds_name(o, &o->names[k], t, &n))
			continue;
		st->ops[st->nops].name = strdup(o->names[k].name);
		if (st->ops[st->nops].name == NULL)
			return ckpt_err_nomem(e, "");
		st->ops[st->nops].mode = o->names[k].mode;
		st->ops[st->nops++].n = n;
	}
	if (o->how == RD_RESCALE && o->keyed) {
		st->keyed = 1;
		ckpt_key_group_range(o->maxp, o->p, t, &st->kg_first, &st->kg_last);
	} else if (was && (was->keyed || was->nkv)) {
		st->keyed = 1;
		st->kg_first = was->keyed ? was->kg_first : 0;
		st->kg_last = was->keyed ? was->kg_last : o->maxp - 1;
		st->nkv = was->nkv;
		st->kv_bytes = was->kv_bytes;
	}
	if (was) {
		st->nin = was->nin, st->in_bytes = was->in_bytes;
		st->nout = was->nout, st->out_bytes = was->out_bytes;
	}
	return 0;
}

static int
skeleton_op(struct ckpt_redist_op *o, struct ckpt_operator *out, struct ckpt_err *e)
{
	int fail = 0;

	out->id = dup_or_null(o->nid, &fail);
	out->uid = dup_or_null(o->nuid, &fail);
	out->name = dup_or_null(o->nname, &fail);
	out->vertex = dup_or_null(o->nvertex, &fail);
	out->parallelism = o->p;
	out->max_parallelism = o->maxp;
	out->fully_finished = o->how == RD_FINISHED;
	if (fail)
		return ckpt_err_nomem(e, "");
	if (o->old->coordinator) {
		out->coordinator = ckpt_calloc(1, sizeof *out->coordinator, e);
		if (out->coordinator == NULL || bytes_dup(out->coordinator, o->old->coordinator, e) < 0)
			return -1;
	}
	o->out = out;
	if (o->how == RD_FINISHED)
		return 0;
	out->subtasks = ckpt_calloc(o->p, sizeof *out->subtasks, e);
	if (out->subtasks == NULL)
		return -1;
	for (uint32_t t = 0; t < o->p; t++) {
		struct ckpt_subtask *st = &out->subtasks[out->nsubtasks];

		if (skeleton_subtask(o, t, st, e) < 0) {
			out->nsubtasks++;
			return -1;
		}
		if (st->nops || st->keyed || st->nin || st->nout)
			out->nsubtasks++;
		else
			free(st->ops), memset(st, 0, sizeof *st);
	}
	return 0;
}

static int
skeleton(struct ckpt_redist *r, struct ckpt_err *e)
{
	int fail = 0;

	r->out = ckpt_calloc(1, sizeof *r->out, e);
	if (r->out == NULL)
		return -1;
	r->out->checkpoint_id = r->in->checkpoint_id;
	r->out->kind = dup_or_null(r->in->kind, &fail);
	if (r->in->flink)
		r->out->flink = json_incref(r->in->flink);
	r->out->ops = ckpt_calloc(r->nops, sizeof *r->out->ops, e);
	if (fail || r->out->ops == NULL)
		return fail ? ckpt_err_nomem(e, "") : -1;
	for (size_t i = 0; i < r->nops; i++) {
		r->out->nops++;
		if (skeleton_op(&r->ops[i], &r->out->ops[i], e) < 0)
			return -1;
	}
	return 0;
}

/* --------------------------------------------------- moving entries */

/* The elements [*a, *b) of old subtask j's list for name that new subtask t takes. */
int
ckpt_redist_piece(const struct ckpt_redist_op *o, const struct ckpt_redist_name *nm, uint32_t t, uint32_t j, uint64_t *a, uint64_t *b)
{
	const struct ckpt_opstate *s = ckpt_subtask_opstate(o->at[j], nm->name);
	uint64_t lo, hi;

	if (s == NULL)
		return 0;
	*a = 0, *b = s->n;
	switch (nm->mode) {
	case CKPT_MODE_LIST:
		if (o->how != RD_RESCALE)
			return j == t;
		lo = nm->lo[t] > nm->cum[j] ? nm->lo[t] : nm->cum[j];
		hi = nm->lo[t] + nm->len[t] < nm->cum[j + 1] ? nm->lo[t] + nm->len[t] : nm->cum[j + 1];
		if (lo >= hi)
			return 0;
		*a = lo - nm->cum[j], *b = hi - nm->cum[j];
		return 1;
	case CKPT_MODE_UNION:
		return 1;
	default:
		return nm->holders[t % nm->nholders] == j;
	}
}

/* The key groups [*a, *b] of old subtask j that new subtask t takes. */
int
ckpt_redist_kg_piece(const struct ckpt_redist_op *o, uint32_t t, uint32_t j, uint32_t *a, uint32_t *b)
{
	const struct ckpt_subtask *st = o->at[j];
	uint32_t f, l;

	if (st == NULL || !(st->keyed || st->nkv))
		return 0;
	*a = st->keyed ? st->kg_first : 0;
	*b = st->keyed ? st->kg_last : o->old->max_parallelism - 1;
	if (o->how != RD_RESCALE)
		return j == t;
	ckpt_key_group_range(o->maxp, o->p, t, &f, &l);
	if (f > *a)
		*a = f;
	if (l < *b)
		*b = l;
	return *a <= *b;
}

int
ckpt_redist_needed(const struct ckpt_redist *r, const struct ckpt_redist_op *o, uint32_t t, uint32_t j)
{
	uint64_t a, b;
	uint32_t x, y;

	if (o->at[j] == NULL)
		return 0;
	if (o->how == RD_IN_PLACE && j == t)
		return 1;
	for (size_t k = 0; k < o->nnames; k++)
		if (ckpt_redist_piece(o, &o->names[k], t, j, &a, &b))
			return 1;
	return ckpt_redist_kg_piece(o, t, j, &x, &y) || ckpt_redist_chan_needed(r, o, t, j);
}

static int
take_list(struct ckpt_redist *r, const struct ckpt_redist_op *o, struct ckpt_subtask *st, uint32_t j,
	  const struct ckpt_subtask *src, size_t *pos, struct ckpt_err *e)
{
	for (size_t k = 0; k < st->nops; k++) {
		struct ckpt_opstate *to = &st->ops[k];
		const struct ckpt_redist_name *nm = ckpt_redist_find_name(o, to->name);
		const struct ckpt_opstate *from = ckpt_subtask_opstate(src, to->name);
		uint64_t a, b;

		if (!ckpt_redist_piece(o, nm, st->index, j, &a, &b))
			continue;
		if (from->n && from->entries == NULL)
			return ckpt_err_set(e, CKPT_ERR_INPUT, r->name, "operator %s: subtask %u: entries not loaded",
					    ckpt_redist_opname(o->old), j);
		if (pos[k] + (b - a) > to->n)
			return ckpt_err_set(e, CKPT_ERR_INPUT, r->name,
					    "operator %s: subtask %u: state \"%s\" holds more entries than counted",
					    ckpt_redist_opname(o->old), j, to->name);
		for (uint64_t i = a; i < b; i++) {
			if (bytes_dup(&to->entries[pos[k]++], &from->entries[i], e) < 0)
				return -1;
			to->bytes += from->entries[i].len;
		}
	}
	return 0;
}

static int
take_kv(struct ckpt_redist *r, const struct ckpt_redist_op *o, struct ckpt_subtask *st, uint32_t j,
	const struct ckpt_subtask *from, size_t *cap, struct ckpt_err *e)
{
	uint32_t a, b;

	if (!ckpt_redist_kg_piece(o, st->index, j, &a, &b))
		return 0;
	if (from->nkv && from->kv == NULL)
		return ckpt_err_set(e, CKPT_ERR_INPUT, r->name, "operator %s: subtask %u: entries not loaded",
				    ckpt_redist_opname(o->old), j);
	for (size_t i = 0; i < from->nkv; i++) {
		const struct ckpt_kv *kv = &from->kv[i];
		struct ckpt_kv *to;

		if (kv->key_group >= o->old->max_parallelism ||
		    (from->keyed && (kv->key_group < from->kg_first || kv->key_group > from->kg_last)))
			return ckpt_err_set(e, CKPT_ERR_INPUT, r->name,
					    "operator %s: subtask %u: key group %u outside its range",
					    ckpt_redist_opname(o->old), j, kv->key_group);
		if (kv->key_group < a || kv->key_group > b)
			continue;
		if (ckpt_grow(&st->kv, cap, st->nkv + 1, sizeof *st->kv, 64, e) < 0)
			return -1;
		to = &st->kv[st->nkv];
		memset(to, 0, sizeof *to);
		st->nkv++;
		to->key_group = kv->key_group;
		to->state = strdup(kv->state);
		if (to->state == NULL)
			return ckpt_err_nomem(e, "");
		if (bytes_dup(&to->key, &kv->key, e) < 0 || bytes_dup(&to->value, &kv->value, e) < 0)
			return -1;
		st->kv_bytes += kv->key.len + kv->value.len;
	}
	return 0;
}

static int
take_chan(struct ckpt_chan **to, size_t n, const struct ckpt_chan *from, struct ckpt_err *e)
{
	*to = ckpt_calloc(n, sizeof **to, e);
	if (*to == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		(*to)[i].a = from[i].a;
		(*to)[i].b = from[i].b;
		if (bytes_dup(&(*to)[i].data, &from[i].data, e) < 0)
			return -1;
	}
	return 0;
}

static int
take_from(struct ckpt_redist *r, const struct ckpt_redist_op *o, struct ckpt_subtask *st, uint32_t j,
	  const struct ckpt_subtask *from, size_t *pos, size_t *kvcap, struct ckpt_err *e)
{
	if (take_list(r, o, st, j, from, pos, e) < 0 || take_kv(r, o, st, j, from, kvcap, e) < 0)
		return -1;
	if (o->how != RD_IN_PLACE || j != st->index)
		return 0;
	if ((from->nin && from->in == NULL) || (from->nout && from->out == NULL))
		return ckpt_err_set(e, CKPT_ERR_INPUT, r->name, "operator %s: subtask %u: entries not loaded",
				    ckpt_redist_opname(o->old), j);
	if (take_chan(&st->in, from->nin, from->in, e) < 0 || take_chan(&st->out, from->nout, from->out, e) < 0)
		return -1;
	st->nin = from->nin, st->nout = from->nout;
	return 0;
}

static struct ckpt_redist_op *
rd_op_of(struct ckpt_redist *r, const struct ckpt_operator *out)
{
	for (size_t i = 0; i < r->nops; i++)
		if (r->ops[i].out == out)
			return &r->ops[i];
	return NULL;
}

/* The same input opened again must show the same operators and subtasks. */
static int
same_layout(const struct ckpt_snapshot *a, const struct ckpt_snapshot *b)
{
	if (a->nops != b->nops)
		return 0;
	for (size_t i = 0; i < a->nops; i++) {
		if (a->ops[i].nsubtasks != b->ops[i].nsubtasks)
			return 0;
		for (size_t k = 0; k < a->ops[i].nsubtasks; k++)
			if (a->ops[i].subtasks[k].index != b->ops[i].subtasks[k].index)
				return 0;
	}
	return 1;
}

/* The reader that holds member g, else the one that reaches it going forward the least far,
 * else a new one. */
static int
pick_reader(struct ckpt_redist *r, size_t i, size_t k, size_t g, size_t *h, struct ckpt_err *e)
{
	struct ckpt_snapshot *s;

	*h = SIZE_MAX;
	for (size_t n = 0; n < r->nrd; n++) {
		if (r->rd[n].held == &r->rd[n].s->ops[i].subtasks[k]) {
			*h = n;
			return 0;
		}
		if (r->rd[n].pos <= g && (*h == SIZE_MAX || r->rd[n].pos > r->rd[*h].pos))
			*h = n;
	}
	if (*h != SIZE_MAX)
		return 0;
	*h = 0;
	if (r->reopen == NULL || r->nrd == RD_READERS)
		return 0;
	s = ckpt_snapshot_open(r->reopen, e);
	if (s == NULL)
		return -1;
	if (!same_layout(r->in, s)) {
		ckpt_snapshot_free(s);
		return ckpt_err_set(e, CKPT_ERR_INPUT, r->name, "the input changed while it was read");
	}
	*h = r->nrd;
	r->rd[r->nrd].s = s;
	r->rd[r->nrd].held = NULL;
	r->rd[r->nrd++].pos = 0;
	return 0;
}

/* Old subtask k of input operator i, loaded by some reader (which keeps it until its next load). */
static struct ckpt_subtask *
load_old(struct ckpt_redist *r, size_t i, size_t k, struct ckpt_err *e)
{
	size_t g = r->base[i] + k, h;
	struct ckpt_redist_reader *rd;
	struct ckpt_subtask *src;

	if (pick_reader(r, i, k, g, &h, e) < 0)
		return NULL;
	rd = &r->rd[h];
	src = &rd->s->ops[i].subtasks[k];
	if (src->loaded)
		return src;
	if (rd->held) {
		ckpt_subtask_unload(rd->held);
		rd->held = NULL;
	}
	if (ckpt_subtask_load(rd->s, &rd->s->ops[i], src, e) < 0)
		return NULL;
	rd->held = src;
	rd->pos = g + 1;
	return src;
}

static int
fill_from_old(struct ckpt_redist *r, struct ckpt_redist_op *o, struct ckpt_subtask *st, size_t *pos,
	      struct ckpt_err *e)
{
	size_t kvcap = 0, i = (size_t)(o->old - r->in->ops);

	for (uint32_t j = 0; j < o->P; j++) {
		struct ckpt_subtask *src;

		if (!ckpt_redist_needed(r, o, st->index, j))
			continue;
		src = load_old(r, i, (size_t)(o->at[j] - o->old->subtasks), e);
		if (src == NULL || take_from(r, o, st, j, src, pos, &kvcap, e) < 0)
			return -1;
	}
	return 0;
}

int
ckpt_redist_fill(struct ckpt_redist *r, const struct ckpt_operator *op, struct ckpt_subtask *st,
		 struct ckpt_err *e)
{
	struct ckpt_redist_op *o = rd_op_of(r, op);
	size_t *pos = NULL;
	int rc = -1;

	if (o == NULL)
		return ckpt_err_set(e, CKPT_ERR_INPUT, r->name, "operator %s is not part of the plan", op->id);
	if (st->loaded)
		return 0;
	pos = ckpt_calloc(st->nops, sizeof *pos, e);
	if (pos == NULL)
		return -1;
	st->nkv = 0, st->kv_bytes = 0;
	for (size_t k = 0; k < st->nops; k++) {
		st->ops[k].bytes = 0;
		st->ops[k].entries = ckpt_calloc(st->ops[k].n, sizeof *st->ops[k].entries, e);
		if (st->ops[k].entries == NULL)
			goto out;
	}
	if (fill_from_old(r, o, st, pos, e) < 0)
		goto out;
	for (size_t k = 0; k < st->nops; k++)
		if (pos[k] != st->ops[k].n) {
			ckpt_err_set(e, CKPT_ERR_INPUT, r->name,
				     "operator %s: state \"%s\" holds fewer entries than counted", ckpt_redist_opname(o->old),
				     st->ops[k].name);
			goto out;
		}
	st->loaded = 1;
	rc = ckpt_subtask_recount(st, e);
out:
	free(pos);
	if (rc < 0)
		ckpt_redist_release(st);
	return rc;
}

static void
free_chan(struct ckpt_chan *c, size_t n)
{
	for (size_t i = 0; c && i < n; i++)
		free(c[i].data.p);
	free(c);
}

void
ckpt_redist_release(struct ckpt_subtask *st)
{
	for (size_t k = 0; k < st->nops; k++) {
		struct ckpt_opstate *s = &st->ops[k];

		for (size_t i = 0; s->entries && i < s->n; i++)
			free(s->entries[i].p);
		free(s->entries);
		s->entries = NULL;
	}
	for (size_t i = 0; st->kv && i < st->nkv; i++) {
		free(st->kv[i].state);
		free(st->kv[i].key.p);
		free(st->kv[i].value.p);
	}
	free(st->kv);
	free_chan(st->in, st->nin);
	free_chan(st->out, st->nout);
	for (size_t i = 0; i < st->nkvstats; i++)
		free(st->kvstats[i].state);
	free(st->kvstats);
	st->kv = NULL, st->in = NULL, st->out = NULL, st->kvstats = NULL, st->nkvstats = 0;
	st->loaded = 0;
}

int
ckpt_redist_fill_all(struct ckpt_redist *r, struct ckpt_err *e)
{
	for (size_t i = 0; i < r->out->nops; i++) {
		struct ckpt_operator *op = &r->out->ops[i];

		for (size_t k = 0; k < op->nsubtasks; k++)
			if (ckpt_redist_fill(r, op, &op->subtasks[k], e) < 0)
				return -1;
	}
	return 0;
}

/* ----------------------------------------------------------- the plan */

static int
map_plain(struct ckpt_redist *r, const struct ckpt_redist_opts *opt, struct ckpt_err *e)
{
	for (size_t i = 0; i < r->in->nops; i++) {
		struct ckpt_redist_op *o = &r->ops[r->nops++];
		struct ckpt_operator *op = &r->in->ops[i];

		o->old = op;
		o->vid = op->vertex ? op->vertex : op->id;
		o->vname = op->name ? op->name : o->vid;
		o->nid = op->id, o->nuid = op->uid, o->nname = op->name, o->nvertex = op->vertex;
		o->gv = -1;
	}
	return choose_parallelism(r, opt, e);
}

struct ckpt_redist *
ckpt_redist_plan(struct ckpt_snapshot *s, const struct ckpt_redist_opts *opt, struct ckpt_err *e)
{
	struct ckpt_redist *r = ckpt_calloc(1, sizeof *r, e);

	if (r == NULL)
		return NULL;
	r->in = s;
	r->name = opt->name ? opt->name : "";
	r->graph = opt->graph;
	r->rd[0].s = s;
	r->nrd = 1;
	if (opt->reopen && ckpt_snapshot_is_archive(s))
		r->reopen = opt->reopen;
	r->ops = ckpt_calloc(s->nops, sizeof *r->ops, e);
	r->base = ckpt_calloc(s->nops, sizeof *r->base, e);
	if (r->ops == NULL || r->base == NULL)
		goto fail;
	for (size_t i = 1; i < s->nops; i++)
		r->base[i] = r->base[i - 1] + s->ops[i - 1].nsubtasks;
	if (opt->graph ? ckpt_redist_map_graph(r, opt, e) < 0 : map_plain(r, opt, e) < 0)
		goto fail;
	for (size_t i = 0; i < r->nops; i++)
		if (plan_op(r, &r->ops[i], e) < 0)
			goto fail;
	if (ckpt_redist_plan_inflight(r, e) < 0 || skeleton(r, e) < 0)
		goto fail;
	return r;
fail:
	ckpt_redist_free(r);
	return NULL;
}

struct ckpt_snapshot *
ckpt_redist_snapshot(struct ckpt_redist *r)
{
	return r->out;
}

static void
free_out(struct ckpt_snapshot *s)
{
	for (size_t i = 0; s && i < s->nops; i++) {
		struct ckpt_operator *op = &s->ops[i];

		for (size_t k = 0; k < op->nsubtasks; k++) {
			ckpt_redist_release(&op->subtasks[k]);
			for (size_t n = 0; n < op->subtasks[k].nops; n++)
				free(op->subtasks[k].ops[n].name);
			free(op->subtasks[k].ops);
		}
		free(op->subtasks);
		free(op->id), free(op->uid), free(op->name), free(op->vertex);
		if (op->coordinator)
			free(op->coordinator->p);
		free(op->coordinator);
	}
	if (s) {
		free(s->ops);
		free(s->kind);
		json_decref(s->flink);
	}
	free(s);
}

void
ckpt_redist_free(struct ckpt_redist *r)
{
	if (r == NULL)
		return;
	free_out(r->out);
	for (size_t i = 0; i < r->nops; i++) {
		struct ckpt_redist_op *o = &r->ops[i];

		for (size_t k = 0; k < o->nnames; k++) {
			free(o->names[k].cum);
			free(o->names[k].lo);
			free(o->names[k].len);
			free(o->names[k].holders);
		}
		free(o->names);
		free(o->at);
	}
	ckpt_redist_free_inflight(r);
	for (size_t k = 1; k < r->nrd; k++)
		ckpt_snapshot_free(r->rd[k].s);
	free(r->base);
	free(r->ops);
	free(r);
}
