/* savepoint.c: a Flink savepoint directory written whole or not at all: an edited _metadata and
 * the state files its relative handles name (the local files of its absolute ones among them),
 * copied or hard-linked beside it, or uploaded to S3. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "redist.h"

/* Where the input is: its _metadata and the directory relative handles are resolved against (for
 * a savepoint in S3, s3://bucket/key URLs: the _metadata and the prefix). */
struct spin {
	const char *name; /* as the user named it */
	char *meta, *dir;
	int s3;
};

/* A savepoint in S3, named by its _metadata object or by its directory's prefix (as ckpt-inspect
 * takes it: lib/snap/open.c). */
static int
spin_open_s3(struct spin *in, const char *path, struct ckpt_err *e)
{
	char *url = NULL, *slash;
	uint64_t size;
	size_t n;
	int r = 1;

	in->s3 = 1;
	if (asprintf(&url, "s3://%s", strstr(path, "://") + 3) < 0)
		return ckpt_err_nomem(e, path);
	for (n = strlen(url); n > 5 && url[n - 1] == '/';)
		url[--n] = '\0';
	if (path[strlen(path) - 1] != '/' && (r = ckpt_s3_stat(url, &size, e)) < 0)
		goto fail;
	if (r == 0) { /* the _metadata object itself */
		in->meta = url;
		slash = strrchr(url + 5, '/');
		if (slash == NULL)
			return ckpt_err_set(e, CKPT_ERR_INPUT, path, "not a savepoint: a bucket, no _metadata");
		if ((in->dir = strndup(url, (size_t)(slash - url))) == NULL)
			return ckpt_err_nomem(e, path);
		return 0;
	}
	in->dir = url;
	if (asprintf(&in->meta, "%s/_metadata", url) < 0) {
		in->meta = NULL;
		return ckpt_err_nomem(e, path);
	}
	if ((r = ckpt_s3_stat(in->meta, &size, e)) == 1)
		ckpt_err_set(e, CKPT_ERR_INPUT, path, "not a savepoint: no %s", in->meta);
	return r == 0 ? 0 : -1;
fail:
	free(url);
	return -1;
}

static int
spin_open(struct spin *in, const char *path, struct ckpt_err *e)
{
	struct stat st;
	char *tmp;

	if (ckpt_s3_is_url(path))
		return spin_open_s3(in, path, e);
	if (stat(path, &st) != 0)
		return ckpt_err_sys(e, path, "cannot open");
	if (S_ISDIR(st.st_mode)) {
		in->dir = ckpt_strdup(path, e);
		if (in->dir && asprintf(&in->meta, "%s/_metadata", path) < 0)
			in->meta = NULL;
	} else {
		in->meta = ckpt_strdup(path, e);
		if ((tmp = ckpt_strdup(path, e)) != NULL)
			in->dir = ckpt_strdup(dirname(tmp), e);
		free(tmp);
	}
	if (in->meta == NULL || in->dir == NULL)
		return ckpt_err_nomem(e, "");
	return 0;
}

/* outdir, without trailing slashes, must not exist and must not lie in the input's directory. */
static int
check_outdir(const struct spin *in, const char *out, struct ckpt_err *e)
{
	char *copy = ckpt_strdup(out, e), *parent = NULL, *rin = NULL;
	struct stat st;
	size_t n;
	int rc = -1;

	if (copy == NULL)
		return -1;
	if (lstat(out, &st) == 0) {
		ckpt_err_set(e, CKPT_ERR_INPUT, out, "already exists: the savepoint is written to a new directory");
		goto out;
	}
	if ((parent = realpath(dirname(copy), NULL)) == NULL) {
		ckpt_err_sys(e, out, "cannot create");
		goto out;
	}
	if (in->s3) { /* a local directory never lies in a prefix in S3 */
		rc = 0;
		goto out;
	}
	if ((rin = realpath(in->dir, NULL)) == NULL) {
		ckpt_err_sys(e, in->dir, "cannot open");
		goto out;
	}
	n = strlen(rin);
	if (strncmp(parent, rin, n) == 0 && (parent[n] == '\0' || parent[n] == '/' || n == 1)) {
		ckpt_err_set(e, CKPT_ERR_INPUT, out, "the output would lie in the input's directory %s", in->dir);
		goto out;
	}
	rc = 0;
out:
	free(copy);
	free(parent);
	free(rin);
	return rc;
}

/* A prefix in S3 that holds a _metadata already is refused, as an existing directory is. */
static int
check_s3out(const char *out, struct ckpt_err *e)
{
	char *meta = NULL;
	uint64_t size;
	int r;

	if (asprintf(&meta, "%s/_metadata", out) < 0)
		return ckpt_err_nomem(e, out);
	r = ckpt_s3_stat(meta, &size, e);
	if (r == 0)
		ckpt_err_set(e, CKPT_ERR_INPUT, meta, "already exists: the savepoint is written to a new prefix");
	free(meta);
	return r == 1 ? 0 : -1;
}

/* The temporary directory the savepoint is written into: beside out, or for S3 under TMPDIR. */
static char *
temp_dir(const char *out, int s3, struct ckpt_err *e)
{
	char *tmp = NULL;

	if ((s3 ? asprintf(&tmp, "%s/ckpt-s3.XXXXXX", ckpt_tmpdir()) : asprintf(&tmp, "%s.tmp.XXXXXX", out)) < 0) {
		ckpt_err_nomem(e, "");
		return NULL;
	}
	if (ckpt_cleanup_mkdtemp(tmp) == NULL) {
		ckpt_err_sys(e, s3 ? tmp : out, "cannot create");
		free(tmp);
		return NULL;
	}
	return tmp;
}

/* A relative handle's path must stay inside the directory: no absolute path, no "..", nothing empty. */
static int
check_relative(const char *meta, const char *rel, struct ckpt_err *e)
{
	const char *p = rel;

	if (*rel == '\0' || *rel == '/')
		goto bad;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 0 || (n == 2 && strncmp(p, "..", 2) == 0) || (n == 1 && *p == '.'))
			goto bad;
		p += n + (p[n] == '/');
	}
	return 0;
bad:
	return ckpt_err_set(e, CKPT_ERR_INPUT, meta, "relative path \"%s\" leaves the savepoint directory", rel);
}

/* Create the directories of dst below base (mode as any new directory). */
static int
make_parents(const char *dst, size_t base, struct ckpt_err *e)
{
	char *p = ckpt_strdup(dst, e), *s;
	int rc = 0;

	if (p == NULL)
		return -1;
	for (s = p + base; (s = strchr(s + 1, '/')) != NULL;) {
		*s = '\0';
		if (mkdir(p, 0777) != 0 && errno != EEXIST) {
			rc = ckpt_err_sys(e, p, "cannot create");
			break;
		}
		*s = '/';
	}
	free(p);
	return rc;
}

static int
copy_file(const char *src, const char *dst, struct ckpt_err *e)
{
	char buf[1 << 16];
	int in = open(src, O_RDONLY | O_CLOEXEC), out = -1, rc = -1;
	ssize_t n;

	if (in < 0)
		return ckpt_err_sys(e, src, "cannot open");
	if ((out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666)) < 0) {
		ckpt_err_sys(e, dst, "cannot create");
		goto out;
	}
	while ((n = read(in, buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ckpt_err_sys(e, src, "read error");
			goto out;
		}
		for (ssize_t w, off = 0; off < n; off += w) {
			if ((w = write(out, buf + off, (size_t)(n - off))) < 0 && errno != EINTR) {
				ckpt_err_sys(e, dst, "write error");
				goto out;
			}
			w = w < 0 ? 0 : w;
		}
		ckpt_progress_add((uint64_t)n);
	}
	if (fsync(out) != 0) {
		ckpt_err_sys(e, dst, "write error");
		goto out;
	}
	rc = 0;
out:
	close(in);
	if (out >= 0 && close(out) != 0 && rc == 0)
		rc = ckpt_err_sys(e, dst, "write error");
	return rc;
}

/* The object at url into the new local file dst, whole (its ETag the same throughout). */
static int
fetch_file(const char *url, const char *dst, struct ckpt_err *e)
{
	struct ckpt_s3obj *o = ckpt_s3obj_open(url, e);
	int out, rc = -1;

	if (o == NULL)
		return -1;
	if ((out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666)) < 0) {
		ckpt_err_sys(e, dst, "cannot create");
		ckpt_s3obj_close(o);
		return -1;
	}
	if (ckpt_s3obj_copy(o, out, dst, e) == 0) {
		if (fsync(out) != 0)
			ckpt_err_sys(e, dst, "write error");
		else
			rc = 0;
	}
	ckpt_s3obj_close(o);
	if (close(out) != 0 && rc == 0)
		rc = ckpt_err_sys(e, dst, "write error");
	return rc;
}

/* The source of relative file r: the local file the input named by its absolute path (carried),
 * or r under the input's directory.  NULL when out of memory. */
static char *
rel_source(const struct spin *in, const char *r, const json_t *v)
{
	char *src = NULL;

	if (json_is_string(v))
		return strdup(json_string_value(v));
	return asprintf(&src, "%s/%s", in->dir, r) < 0 ? NULL : src;
}

/* place_files' loop: each file placed, what a copy or a link placed counted as progress. */
static int
place_each(const struct spin *in, const char *tmp, json_t *rel, int link_files, struct ckpt_err *e)
{
	struct stat sb;
	const char *r;
	json_t *v;
	int rc = 0;

	json_object_foreach(rel, r, v) {
		int carried = json_is_string(v); /* a local file the input named by its absolute path */
		char *src = NULL, *dst = NULL;

		if (check_relative(in->meta, r, e) < 0)
			return -1;
		if ((src = rel_source(in, r, v)) == NULL || asprintf(&dst, "%s/%s", tmp, r) < 0) {
			free(src);
			return ckpt_err_nomem(e, "");
		}
		if (make_parents(dst, strlen(tmp), e) < 0)
			rc = -1;
		else if (in->s3 && !carried)
			rc = fetch_file(src, dst, e);
		else if (!link_files || linkat(AT_FDCWD, src, AT_FDCWD, dst, AT_SYMLINK_FOLLOW) != 0) {
			if (link_files && errno != EXDEV && errno != EPERM && errno != EMLINK)
				rc = ckpt_err_sys(e, src, "cannot link");
			else
				rc = copy_file(src, dst, e);
		} else if (ckpt_progress_on() && stat(dst, &sb) == 0) {
			ckpt_progress_add((uint64_t)sb.st_size); /* linked: as good as copied */
		}
		free(src);
		free(dst);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* The bytes of the relative files of a local savepoint, for the progress of their copy. */
static uint64_t
rel_bytes(const struct spin *in, json_t *rel)
{
	uint64_t total = 0;
	struct stat sb;
	const char *r;
	json_t *v;

	json_object_foreach(rel, r, v) {
		char *src = rel_source(in, r, v);

		if (src && stat(src, &sb) == 0)
			total += (uint64_t)sb.st_size;
		free(src);
	}
	return total;
}

/* Each relative file into tmp (fetched, from a savepoint in S3): a hard link when asked (a copy
 * across file systems), else a copy, its bytes reported as progress. */
static int
place_files(const struct spin *in, const char *tmp, json_t *rel, int link_files, struct ckpt_err *e)
{
	int rc = ckpt_progress_on() && !in->s3 ? 0 : 1;

	if (rc == 0)
		ckpt_progress_begin(rel, "bytes", rel_bytes(in, rel));
	rc = place_each(in, tmp, rel, link_files, e);
	ckpt_progress_end(rel);
	return rc;
}

static int
write_meta(const char *tmp, const struct ckpt_bytes *b, struct ckpt_err *e)
{
	char *path;
	FILE *f;
	int rc = -1;

	if (asprintf(&path, "%s/_metadata", tmp) < 0)
		return ckpt_err_nomem(e, "");
	if ((f = fopen(path, "wbx")) == NULL) {
		ckpt_err_sys(e, path, "cannot create");
		goto out;
	}
	if (fwrite(b->p, 1, b->len, f) != b->len || fflush(f) != 0 || fsync(fileno(f)) != 0) {
		ckpt_err_sys(e, path, "write error");
		fclose(f);
		goto out;
	}
	if (fclose(f) != 0) {
		ckpt_err_sys(e, path, "write error");
		goto out;
	}
	rc = ckpt_fsync_dir_of(path, e); /* the directory's entries: _metadata and the state files */
out:
	free(path);
	return rc;
}

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

/* The result restores onto the graph, as ckpt-merge -g checks an unedited snapshot. */
static int
check_graph(const struct ckpt_bytes *b, const char *name, const struct ckpt_flink_write_opts *o,
	    struct ckpt_err *e)
{
	struct ckpt_redist_opts ro = {.name = name, .graph = o->graph, .allow_non_restored = o->allow_non_restored};
	struct ckpt_snapshot *s = ckpt_fmeta_decode(b->p, b->len, name, e);
	struct ckpt_redist *r = s ? ckpt_redist_plan(s, &ro, e) : NULL;

	ckpt_redist_free(r);
	ckpt_snapshot_free(s);
	return r ? 0 : -1;
}

/* Read, edit and check the input, before anything is written. */
static int
prepare(const struct spin *in, const struct ckpt_flink_write_opts *o, const char *tmp, struct ckpt_bytes *b,
	json_t **rel, struct ckpt_err *e)
{
	FILE *f = in->s3 ? NULL : fopen(in->meta, "rb");
	unsigned char *sbuf = NULL;
	char *buf = NULL;
	size_t len = 0;
	int rc = -1;

	if (in->s3) {
		if (ckpt_s3_get(in->meta, &sbuf, &len, e) < 0)
			return -1;
		buf = (char *)sbuf;
	} else if (f == NULL)
		return ckpt_err_sys(e, in->meta, "cannot open");
	else if (ckpt_read_all(f, in->meta, &buf, &len, e) < 0)
		goto out;
	if (!ckpt_fmeta_sniff(buf, len)) {
		ckpt_err_set(e, CKPT_ERR_INPUT, in->meta, "not a Flink _metadata file");
		goto out;
	}
	if ((o->noffsets ? ckpt_flink_set_offsets(in->meta, buf, len, o->edits, o->nedits, o->offsets, o->noffsets,
						  o->source, tmp, b, rel, e) :
	     o->rows ? ckpt_flink_rows_write(in->meta, buf, len, o, tmp, b, rel, e) :
	     o->max_parallelism || o->canonical || o->parallelism || o->nper_op ?
	     ckpt_flink_regroup(in->meta, buf, len, o, tmp, b, rel, e) :
	     ckpt_fmeta_rewrite(buf, len, in->meta, o->edits, o->nedits, b, rel, e)) < 0)
		goto out;
	if (o->graph && check_graph(b, in->name, o, e) < 0)
		goto out;
	rc = 0;
out:
	if (f)
		fclose(f);
	free(buf);
	return rc;
}

int
ckpt_flink_savepoint_write(const char *in_path, const char *outdir, const struct ckpt_flink_write_opts *o,
			   struct ckpt_err *e)
{
	struct spin in = {.name = in_path};
	struct ckpt_bytes b = {0};
	int s3 = ckpt_s3_is_url(outdir);
	json_t *rel = NULL;
	char *out = NULL, *tmp = NULL;
	size_t n;
	int rc = -1;

	if ((out = ckpt_strdup(outdir, e)) == NULL)
		goto out;
	for (n = strlen(out); n > 1 && out[n - 1] == '/';)
		out[--n] = '\0';
	/* --max-parallelism and --set-offset write the new state files into the temporary directory (after every check) */
	if (spin_open(&in, in_path, e) < 0 || (s3 ? check_s3out(out, e) : check_outdir(&in, out, e)) < 0 ||
	    ((o->max_parallelism || o->rows || o->canonical || o->noffsets || o->parallelism || o->nper_op) &&
	     (tmp = temp_dir(out, s3, e)) == NULL) ||
	    prepare(&in, o, tmp, &b, &rel, e) < 0 ||
	    (tmp == NULL && (tmp = temp_dir(out, s3, e)) == NULL))
		goto out;
	if (chmod(tmp, 0777 & ~(mode_t)ckpt_umask()) != 0 || place_files(&in, tmp, rel, s3 ? 0 : o->link, e) < 0 ||
	    write_meta(tmp, &b, e) < 0)
		goto out;
	if (s3) { /* written whole locally, then uploaded: the state files, the _metadata last */
		rc = ckpt_s3_put_dir(tmp, out, "_metadata", e);
		goto out;
	}
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, out, RENAME_NOREPLACE) != 0) {
		ckpt_err_sys(e, out, "cannot create");
		goto out;
	}
	ckpt_cleanup_forget(tmp);
	free(tmp);
	tmp = NULL;
	if (ckpt_fsync_dir_of(out, e) < 0)
		goto out;
	rc = 0;
out:
	if (tmp) {
		nftw(tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		ckpt_cleanup_forget(tmp);
	}
	free(tmp);
	free(out);
	free(in.meta);
	free(in.dir);
	free(b.p);
	json_decref(rel);
	return rc;
}
