/* state.c: STUB until the snapshot concern lands; see ckpt.h. */
#include "ckpt.h"

struct ckpt_snapshot *
ckpt_snapshot_open(const char *path, struct ckpt_err *e)
{
	ckpt_err_set(e, CKPT_ERR_INPUT, path, "snapshots are not implemented yet");
	return NULL;
}

int
ckpt_subtask_load(struct ckpt_snapshot *s, struct ckpt_operator *op, struct ckpt_subtask *st,
		  struct ckpt_err *e)
{
	(void)s, (void)op, (void)st;
	return ckpt_err_set(e, CKPT_ERR_INPUT, "", "snapshots are not implemented yet");
}

void
ckpt_subtask_unload(struct ckpt_subtask *st)
{
	(void)st;
}

struct ckpt_snapshot *
ckpt_snapshot_from_json(const struct ckpt_jdoc *doc, struct ckpt_err *e)
{
	ckpt_err_set(e, CKPT_ERR_INPUT, doc->name, "snapshots are not implemented yet");
	return NULL;
}

json_t *
ckpt_snapshot_to_json(struct ckpt_snapshot *s, struct ckpt_err *e)
{
	(void)s;
	ckpt_err_set(e, CKPT_ERR_INPUT, "", "snapshots are not implemented yet");
	return NULL;
}

void
ckpt_snapshot_free(struct ckpt_snapshot *s)
{
	(void)s;
}

const char *
ckpt_mode_name(enum ckpt_mode m)
{
	return m == CKPT_MODE_UNION ? "union" : m == CKPT_MODE_BROADCAST ? "broadcast" : "list";
}

int
ckpt_mode_parse(const char *name)
{
	(void)name;
	return -1;
}
