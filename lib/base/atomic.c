/* atomic.c: files that appear whole or not at all (temporary name, fsync, rename), and files read whole. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base.h"

struct ckpt_atomic {
	char *path, *tmp;
	FILE *f;
};

struct ckpt_atomic *
ckpt_atomic_open(const char *path, struct ckpt_err *e)
{
	struct ckpt_atomic *w = ckpt_calloc(1, sizeof *w, e);
	int fd;

	if (w == NULL)
		return NULL;
	w->path = ckpt_strdup(path, e);
	w->tmp = malloc(strlen(path) + 16);
	if (w->path == NULL || w->tmp == NULL) {
		ckpt_err_nomem(e, path);
		goto fail;
	}
	sprintf(w->tmp, "%s.tmp.XXXXXX", path);
	fd = ckpt_cleanup_mkstemp(w->tmp);
	if (fd < 0) {
		ckpt_err_sys(e, path, "cannot create");
		goto fail;
	}
	/* mkstemp makes 0600; the file gets what any new file would */
	if (fchmod(fd, 0666 & ~(mode_t)ckpt_umask()) != 0) {
		ckpt_err_sys(e, path, "cannot set permissions");
		close(fd);
		unlink(w->tmp);
		ckpt_cleanup_forget(w->tmp);
		goto fail;
	}
	w->f = fdopen(fd, "wb");
	if (w->f == NULL) {
		ckpt_err_sys(e, path, "cannot create");
		close(fd);
		unlink(w->tmp);
		ckpt_cleanup_forget(w->tmp);
		goto fail;
	}
	return w;
fail:
	free(w->path);
	free(w->tmp);
	free(w);
	return NULL;
}

FILE *
ckpt_atomic_file(struct ckpt_atomic *w)
{
	return w->f;
}

static void
atomic_free(struct ckpt_atomic *w)
{
	ckpt_cleanup_forget(w->tmp);
	free(w->path);
	free(w->tmp);
	free(w);
}

int
ckpt_atomic_commit(struct ckpt_atomic *w, struct ckpt_err *e)
{
	int r = -1;

	if (fflush(w->f) != 0 || ferror(w->f) || fsync(fileno(w->f)) != 0) {
		ckpt_err_sys(e, w->path, "write error");
		fclose(w->f);
		unlink(w->tmp);
		goto out;
	}
	if (fclose(w->f) != 0) {
		ckpt_err_sys(e, w->path, "write error");
		unlink(w->tmp);
		goto out;
	}
	if (rename(w->tmp, w->path) != 0) {
		ckpt_err_sys(e, w->path, "cannot rename into place");
		unlink(w->tmp);
		goto out;
	}
	r = ckpt_fsync_dir_of(w->path, e);
out:
	atomic_free(w);
	return r;
}

void
ckpt_atomic_abort(struct ckpt_atomic *w)
{
	if (w == NULL)
		return;
	fclose(w->f);
	unlink(w->tmp);
	atomic_free(w);
}

unsigned
ckpt_umask(void)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	mode_t m;

	pthread_mutex_lock(&lock);
	m = umask(022);
	umask(m);
	pthread_mutex_unlock(&lock);
	return m;
}

int
ckpt_fsync_dir_of(const char *path, struct ckpt_err *e)
{
	char *copy = ckpt_strdup(path, e);
	int fd, r = 0;

	if (copy == NULL)
		return -1;
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY);
	if (fd < 0 || fsync(fd) != 0)
		r = ckpt_err_sys(e, path, "cannot sync directory");
	if (fd >= 0)
		close(fd);
	free(copy);
	return r;
}

int
ckpt_read_all(FILE *f, const char *name, char **out, size_t *outlen, struct ckpt_err *e)
{
	size_t cap = 0, len = 0, n;
	char *buf = NULL, *t;

	do {
		if (len == cap) {
			size_t nc = cap ? 2 * cap : (size_t)1 << 16;

			if (len > CKPT_READ_LIMIT) {
				free(buf);
				return ckpt_err_set(e, CKPT_ERR_INPUT, name, "input larger than 1 GiB");
			}
			if (nc > CKPT_READ_LIMIT + 1)
				nc = CKPT_READ_LIMIT + 1; /* the byte past the limit tells a larger input */
			if ((t = realloc(buf, nc)) == NULL) {
				free(buf);
				return ckpt_err_nomem(e, name);
			}
			buf = t;
			cap = nc;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	if (ferror(f)) {
		free(buf);
		return ckpt_err_sys(e, name, "read error");
	}
	*out = buf;
	*outlen = len;
	return 0;
}
