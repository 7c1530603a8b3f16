/*
 * paths.c: the path names discovery (list.c) and --orphans (orphans.c) both take apart and build.
 */
#include <string.h>

#include "snap.h"

const char *
ckpt_snap_path_base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

int
ckpt_snap_has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);

	return n > m && strcmp(s + n - m, suf) == 0;
}

/* ckpt's own archives (whole snapshots) by their names */
int
ckpt_snap_archive_name(const char *name)
{
	return ckpt_snap_has_suffix(name, ".tar") || ckpt_snap_has_suffix(name, ".tar.gz") ||
	       ckpt_snap_has_suffix(name, ".tgz") || ckpt_snap_has_suffix(name, ".zip");
}

/* DIR/NAME, one slash between them */
char *
ckpt_snap_path_join(const char *dir, const char *name, struct ckpt_err *e)
{
	size_t n = strlen(dir), m = strlen(name);
	char *p = ckpt_calloc(n + m + 2, 1, e);

	if (p == NULL)
		return NULL;
	memcpy(p, dir, n);
	if (n == 0 || dir[n - 1] != '/')
		p[n++] = '/';
	memcpy(p + n, name, m + 1);
	return p;
}
