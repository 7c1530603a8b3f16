/* textmap.c: a text input read in place, once: a regular file mapped, anything else (standard input,
 * a pipe) spooled to a temporary file first (ckpt_spool) and that mapped; its pages given back behind
 * the reader. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base.h"

int
ckpt_spool(FILE *f, const char *name, off_t *n, struct ckpt_err *e)
{
	FILE *t = ckpt_tmpfile(name, e);
	char buf[65536];
	size_t k;
	int fd = -1;

	if (t == NULL)
		return -1;
	while ((k = fread(buf, 1, sizeof buf, f)) > 0)
		if (fwrite(buf, 1, k, t) != k)
			break;
	if (ferror(f))
		ckpt_err_sys(e, name, "read error");
	else if (!feof(f) || fflush(t) != 0 || (*n = ftello(t)) < 0 || (fd = fcntl(fileno(t), F_DUPFD_CLOEXEC, 0)) < 0)
		ckpt_err_sys(e, name, "cannot spool the input");
	fclose(t);
	return fd;
}

int
ckpt_textmap_open(struct ckpt_textmap *m, FILE *f, const char *name, struct ckpt_err *e)
{
	struct stat sb;
	off_t at = 0, n = 0;
	int fd = fileno(f), own = 0, rc = 0;
	void *p;

	m->p = NULL;
	m->n = m->base = 0;
	if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || (at = ftello(f)) < 0) {
		at = 0;
		if ((fd = ckpt_spool(f, name, &n, e)) < 0)
			return -1;
		own = 1;
	} else {
		n = sb.st_size;
	}
	if (n > at) {
		if ((p = mmap(NULL, (size_t)n, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
			rc = ckpt_err_sys(e, name, "cannot read");
		} else {
			m->p = p;
			m->n = (size_t)n;
			m->base = (size_t)at;
			(void)madvise(p, m->n, MADV_SEQUENTIAL);
		}
	}
	if (own)
		close(fd);
	return rc;
}

size_t
ckpt_textmap_line(const struct ckpt_textmap *m, size_t off, char **buf, size_t *cap, size_t *len, struct ckpt_err *e)
{
	const unsigned char *p = m->p + off, *nl = memchr(p, '\n', m->n - off);
	size_t n = nl ? (size_t)(nl - p) + 1 : m->n - off;

	if (n == 0 || ckpt_grow(buf, cap, n + 2, 1, 256, e) < 0)
		return 0;
	memcpy(*buf, p, n);
	*len = n;
	if (nl == NULL)
		(*buf)[(*len)++] = '\n';
	(*buf)[*len] = '\0';
	return n;
}

void
ckpt_textmap_release(const struct ckpt_textmap *m, size_t *from, size_t to)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), a = (*from + pg - 1) / pg * pg, b = to / pg * pg;

	if (m->p && b > a)
		(void)madvise((void *)(m->p + a), b - a, MADV_DONTNEED);
	*from = to;
}

void
ckpt_textmap_close(struct ckpt_textmap *m)
{
	if (m->p)
		munmap((void *)m->p, m->n);
	m->p = NULL;
	m->n = m->base = 0;
}
