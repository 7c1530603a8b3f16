/*
 * paths.c: the path names discovery (list.c) and --orphans (orphans.c) both take apart and build, and
 * the hint of a directory that is no snapshot but holds Flink's checkpoints (open.c, verify.c).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* Flink's checkpoint directory name, chk-N (ckpt-run's archives: chk-N.tar ...): N, or -1. */
int64_t
ckpt_snap_chk_id(const char *base)
{
	char *end;
	long long v;

	if (strncmp(base, "chk-", 4) != 0 || !isdigit((unsigned char)base[4]))
		return -1;
	errno = 0;
	v = strtoll(base + 4, &end, 10);
	if (errno || v < 0 || (*end != '\0' && *end != '.'))
		return -1;
	return v;
}

/* Is dir/name there, and a regular file (after symbolic links)? */
static int
is_file(const char *dir, const char *name)
{
	char p[4096];
	struct stat sb;

	return (size_t)snprintf(p, sizeof p, "%s/%s", dir, name) < sizeof p && stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* Does dir hold a checkpoint, as dir/chk-N/_metadata or dir/chk-N.tar, or (depth 1: a job's checkpoint
 * directory's parent) one level down? */
static int
holds_checkpoints(const char *dir, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char p[4096];
	int found = 0;

	while (d && !found && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || (size_t)snprintf(p, sizeof p, "%s/%s", dir, de->d_name) >= sizeof p)
			continue;
		if (ckpt_snap_chk_id(de->d_name) >= 0) /* Flink's chk-N/, or ckpt-run's chk-N.tar */
			found = is_file(p, "_metadata") || (ckpt_snap_archive_name(de->d_name) && is_file(dir, de->d_name));
		else if (depth > 0 && strcmp(de->d_name, "shared") != 0 && strcmp(de->d_name, "taskowned") != 0)
			found = holds_checkpoints(p, depth - 1);
	}
	if (d)
		closedir(d);
	return found;
}

const char *
ckpt_snap_dir_hint(const char *dir)
{
	return holds_checkpoints(dir, 1) ? "; it holds checkpoints (the newest complete one: ckpt-inspect --latest DIR)" : "";
}
