/* archive.c: STUB until the snapshot concern lands; see ckpt.h. */
#include "ckpt.h"

int
ckpt_archive_kind_of(const char *path)
{
	(void)path;
	return -1;
}

int
ckpt_snapshot_write(struct ckpt_snapshot *s, const char *path, enum ckpt_archive_kind kind,
		    struct ckpt_err *e)
{
	(void)s, (void)kind;
	return ckpt_err_set(e, CKPT_ERR_INPUT, path, "archives are not implemented yet");
}
