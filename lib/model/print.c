/*
 * print.c: the state document (ckpt-state(5)) of a Flink snapshot written as it is read,
 * entry by entry, byte for byte what ckpt_json_print of ckpt_snapshot_to_json writes (jansson's
 * compact and two-space indented forms), in bounded memory; other snapshots are built whole.
 * The writer is the base layer's (base/jw.c).
 */
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* One subtask: streamed by the backing, or built whole when it is loaded already. */
static int
print_subtask(struct ckpt_snapshot *s, struct ckpt_operator *op, struct ckpt_subtask *st, struct ckpt_jw *w,
	      struct ckpt_err *e)
{
	const struct ckpt_model_backing *b = s->backing;
	json_t *v;

	ckpt_jw_elem(w);
	if (b && b->print && !st->loaded)
		return b->print(s, op, st, w, e);
	if ((v = ckpt_model_subtask_doc(s, op, st, e)) == NULL)
		return -1;
	ckpt_jw_json(w, v);
	json_decref(v);
	return 0;
}

static int
print_operator(struct ckpt_snapshot *s, struct ckpt_operator *op, struct ckpt_jw *w, struct ckpt_err *e)
{
	json_t *head = ckpt_model_operator_head(op);

	const struct ckpt_model_backing *b = s->backing;

	if (head && b && b->head && b->head(s, op, head) < 0) {
		json_decref(head);
		head = NULL;
	}
	if (head == NULL)
		return ckpt_err_nomem(e, "");
	ckpt_jw_open(w, '{');
	ckpt_jw_members(w, head);
	json_decref(head);
	ckpt_jw_key_lit(w, "subtasks");
	ckpt_jw_open(w, '[');
	for (size_t k = 0; k < op->nsubtasks; k++)
		if (print_subtask(s, op, &op->subtasks[k], w, e) < 0 || ckpt_jw_failed(w, e) < 0)
			return -1;
	ckpt_jw_close(w, ']');
	ckpt_jw_close(w, '}');
	return 0;
}

int
ckpt_snapshot_print(struct ckpt_snapshot *s, FILE *f, int pretty, struct ckpt_err *e)
{
	const struct ckpt_model_backing *b = s->backing;
	struct ckpt_jw *w = NULL;
	json_t *head;
	int rc = -1;

	/* archives are checked member by member as they are loaded: built whole, as before, so
	 * that a damaged member prints nothing */
	if (b == NULL || b->print == NULL) {
		json_t *v;
		uint64_t n = 0;

		for (size_t i = 0; i < s->nops; i++)
			n += s->ops[i].nsubtasks;
		ckpt_progress_begin(s, "subtasks", n); /* their members read */
		v = ckpt_snapshot_to_json(s, e);
		ckpt_progress_end(s);
		if (v == NULL)
			return -1;
		rc = ckpt_json_print(f, v, pretty);
		json_decref(v);
		return rc < 0 ? ckpt_err_sys(e, "stdout", "write error") : 0;
	}
	/* every state file is read through once before anything is printed: what would stop the
	 * document half-way stops it before it starts */
	if (b->check && b->check(s, e) < 0)
		goto out;
	if ((w = ckpt_jw_new(f, pretty, e)) == NULL)
		goto out;
	if ((head = ckpt_model_head(s)) == NULL) {
		ckpt_err_nomem(e, "");
		goto out;
	}
	ckpt_jw_open(w, '{');
	ckpt_jw_members(w, head);
	json_decref(head);
	ckpt_jw_key_lit(w, "operators");
	ckpt_jw_open(w, '[');
	for (size_t i = 0; i < s->nops; i++) {
		ckpt_jw_elem(w);
		if (print_operator(s, &s->ops[i], w, e) < 0)
			goto out;
	}
	ckpt_jw_close(w, ']');
	ckpt_jw_close(w, '}');
	ckpt_jw_byte(w, '\n');
	ckpt_jw_flush(w);
	rc = ckpt_jw_failed(w, e);
out:
	if (b->done)
		b->done(s); /* what its check began */
	ckpt_jw_free(w); /* what was printed stays printed: the document is cut, never closed */
	return rc;
}
