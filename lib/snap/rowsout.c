/* rowsout.c: any snapshot's state as rows (ckpt-inspect -R; ckpt-state(5), ROWS): a Flink snapshot's
 * through its state files (flink/rows.c), ckpt's own from their loaded entries. */
#include <stdlib.h>
#include <string.h>

#include "snap.h"

/* ckpt's own snapshot: every subtask loaded once through (a damaged member prints nothing), then
 * loaded again and written a subtask at a time; the subtasks loaded reported as progress. */
static int
rows_loaded(struct ckpt_snapshot *s, struct ckpt_jw *w, struct ckpt_err *e)
{
	uint64_t done = 0;

	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < s->nops; i++)
			for (size_t j = 0; j < s->ops[i].nsubtasks; j++) {
				struct ckpt_operator *op = &s->ops[i];
				struct ckpt_subtask *st = &op->subtasks[j];
				struct ckpt_frows r = {.w = w, .uid = op->uid, .op = op->id, .subtask = st->index};
				int was = st->loaded;

				if (st->finished)
					continue;
				if (ckpt_subtask_load(s, op, st, e) < 0)
					return -1;
				if (pass == 1 && ckpt_frows_model(&r, st) < 0)
					return ckpt_jw_failed(w, e);
				if (!was)
					ckpt_subtask_unload(st);
				ckpt_progress_at(s, ++done);
			}
	return 0;
}

static int
model_rows(struct ckpt_snapshot *s, struct ckpt_jw *w, struct ckpt_err *e)
{
	uint64_t n = 0;
	int rc;

	for (size_t i = 0; i < s->nops; i++)
		for (size_t j = 0; j < s->ops[i].nsubtasks; j++)
			n += !s->ops[i].subtasks[j].finished;
	ckpt_progress_begin(s, "subtasks", 2 * n); /* each loaded twice */
	rc = rows_loaded(s, w, e);
	ckpt_progress_end(s);
	return rc;
}

int
ckpt_snapshot_rows(struct ckpt_snapshot *s, FILE *f, struct ckpt_err *e)
{
	const struct ckpt_model_backing *b = s->backing;
	struct ckpt_jw *w = ckpt_jw_new(f, 0, e);
	int rc;

	if (w == NULL)
		return -1;
	if (s->flink && (b == NULL || b->print == NULL) && ckpt_snapshot_is_flink_meta(s))
		rc = ckpt_err_set(e, CKPT_ERR_INPUT, "", "-R reads the state files: not with -m");
	else if (s->flink && (b == NULL || b->print == NULL)) /* ckpt-inspect -a of a Flink snapshot, or an archive of it */
		rc = ckpt_err_set(e, CKPT_ERR_INPUT, "", "a Flink snapshot's entries without its state files, whose "
				  "serializers type them: give -R the Flink snapshot itself");
	else
		rc = s->flink ? ckpt_flink_state_rows(s, w, e) : model_rows(s, w, e);
	ckpt_jw_flush(w);
	if (rc == 0 && ckpt_jw_failed(w, e) < 0)
		rc = -1;
	ckpt_jw_free(w);
	return rc;
}
