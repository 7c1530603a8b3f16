/* state-read.c: each subtask's state handles given to the reader of their kind (state-op.c,
 * state-keyed.c, changelog.c), through select.c's narrowing. */
#include <stdio.h>
#include <string.h>

#include "readers.h"
#include "model/model.h"

/* Which handles hold state ckpt reads: 1 operator (managed), 2 raw operator, 3 keyed, 4 RocksDB
 * (incremental), 5 keyed in a changelog, 0 none. */
int
ckpt_fstate_handle_role(const struct ckpt_handle *h)
{
	if (strcmp(h->kind, "operator_stream") == 0 || strcmp(h->kind, "file_merging_operator_stream") == 0)
		return strcmp(h->scope, "managed_operator") == 0 ? 1 : 2;
	if (strcmp(h->scope, "managed_keyed") == 0 &&
	    (strcmp(h->kind, "savepoint_key_groups") == 0 || strcmp(h->kind, "key_groups") == 0))
		return 3;
	if (strcmp(h->scope, "managed_keyed") == 0 && strcmp(h->kind, "incremental") == 0)
		return 4;
	if (strcmp(h->scope, "managed_keyed") == 0 && strcmp(h->kind, "changelog") == 0)
		return 5;
	return 0;
}

int
ckpt_fstate_read_subtask(struct ckpt_fstate_backing_data *b, const struct ckpt_operator *op, const struct ckpt_subtask *st,
			 const struct ckpt_fstate_sink *k, struct ckpt_err *e)
{
	struct ckpt_fstate_ctx c = {.b = b, .op = op, .st = st, .k = k, .e = e};
	struct ckpt_fstate_wrap w;
	int rc = -1;

	if (b->sel) { /* narrowed: what is not asked for is not opened */
		if (!ckpt_fselect_wrap(b->sel, &w, k, op, b->meta, e))
			return 0;
		c.k = k = &w.k;
	}
	for (size_t i = 0; i < st->nhandles; i++) {
		int role = ckpt_fstate_handle_role(&st->handles[i]), r = 0;

		c.h = &st->handles[i];
		snprintf(c.where, sizeof c.where, "%s", b->meta);
		if ((k->part == 1 && role >= 3) || (k->part == 2 && role < 3))
			continue;
		if (role == 1 || role == 2)
			r = ckpt_fstate_read_operator(&c, role == 1);
		else if (role == 3)
			r = ckpt_fstate_read_keyed(&c);
		else if (role == 4)
			r = ckpt_fstate_read_rocksdb(&c);
		else if (role == 5)
			r = ckpt_fchangelog_read(&c);
		if (r < 0)
			goto out;
	}
	rc = 0;
out:
	if (b->sel)
		ckpt_fselect_unwrap(&w);
	return rc;
}
