/* err.c: the one error type, and checked allocation that reports through it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

int
ckpt_err_vset(struct ckpt_err *e, enum ckpt_errkind kind, const char *where,
	      const char *fmt, va_list ap)
{
	char text[sizeof e->text];

	if (e == NULL)
		return -1;
	vsnprintf(text, sizeof text, fmt, ap); /* first: the arguments may point into e */
	ckpt_err_locate(e, kind, where);
	memcpy(e->text, text, sizeof text);
	return -1;
}

int
ckpt_err_set(struct ckpt_err *e, enum ckpt_errkind kind, const char *where,
	     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ckpt_err_vset(e, kind, where, fmt, ap);
	va_end(ap);
	return -1;
}

int
ckpt_err_vat(struct ckpt_err *e, enum ckpt_errkind kind, const char *where, uint64_t off,
	     const char *fmt, va_list ap)
{
	ckpt_err_vset(e, kind, where, fmt, ap);
	ckpt_err_prefix(e, "offset %llu", (unsigned long long)off);
	return -1;
}

int
ckpt_err_at(struct ckpt_err *e, enum ckpt_errkind kind, const char *where, uint64_t off,
	    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ckpt_err_vat(e, kind, where, off, fmt, ap);
	va_end(ap);
	return -1;
}

int
ckpt_err_nomem(struct ckpt_err *e, const char *where)
{
	return ckpt_err_set(e, CKPT_ERR_NOMEM, where, "out of memory");
}

int
ckpt_err_sys(struct ckpt_err *e, const char *where, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	ckpt_err_vset(e, CKPT_ERR_IO, where, fmt, ap);
	va_end(ap);
	if (e != NULL)
		e->sys_errno = saved;
	errno = saved;
	return -1;
}

void
ckpt_err_prefix(struct ckpt_err *e, const char *fmt, ...)
{
	char pre[512], old[sizeof e->text];
	va_list ap;

	if (e == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(pre, sizeof pre, fmt, ap);
	va_end(ap);
	memcpy(old, e->text, sizeof old);
	snprintf(e->text, sizeof e->text, "%s: %s", pre, old);
}

int
ckpt_err_locate(struct ckpt_err *e, enum ckpt_errkind kind, const char *where)
{
	if (e != NULL) {
		e->kind = kind;
		e->sys_errno = 0;
		snprintf(e->where, sizeof e->where, "%s", where ? where : "");
	}
	return -1;
}

/* s into buf (size > 0), each control character as \xHH: names read from a damaged file (a state
 * name, a class name) may hold a newline, and a diagnostic is one line. */
static void
one_line(const char *s, char *buf, size_t size)
{
	size_t n = 0;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f) {
			if (n + 4 >= size)
				break;
			snprintf(buf + n, 5, "\\x%02x", c);
			n += 4;
		} else {
			if (n + 1 >= size)
				break;
			buf[n++] = (char)c;
		}
	}
	buf[n] = '\0';
}

void
ckpt_err_format(const struct ckpt_err *e, char *buf, size_t size)
{
	const char *sep = e->where[0] ? ": " : "";
	char raw[sizeof e->where + sizeof e->text + 256];

	if (size == 0)
		return;
	if (e->sys_errno)
		snprintf(raw, sizeof raw, "%s%s%s: %s", e->where, sep, e->text, strerror(e->sys_errno));
	else
		snprintf(raw, sizeof raw, "%s%s%s", e->where, sep, e->text);
	one_line(raw, buf, size);
}

int
ckpt_err_status(const struct ckpt_err *e)
{
	return e->kind == CKPT_ERR_REFUSED ? 1 : 2;
}


void *
ckpt_calloc(size_t n, size_t size, struct ckpt_err *e)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		ckpt_err_nomem(e, "");
	return p;
}

void *
ckpt_reallocarray(void *p, size_t n, size_t size, struct ckpt_err *e)
{
	void *q;

	if (size && n > SIZE_MAX / size) {
		ckpt_err_nomem(e, "");
		return NULL;
	}
	q = realloc(p, n && size ? n * size : 1);
	if (q == NULL)
		ckpt_err_nomem(e, "");
	return q;
}

int
ckpt_grow(void *arrp, size_t *cap, size_t need, size_t size, size_t first, struct ckpt_err *e)
{
	size_t n = *cap ? *cap : first ? first : 1;
	void *p, *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n = n > SIZE_MAX / 2 ? need : 2 * n;
	memcpy(&p, arrp, sizeof p); /* arrp is a T **: its pointer read and written as bytes */
	if ((q = ckpt_reallocarray(p, n, size, e)) == NULL)
		return -1;
	memcpy(arrp, &q, sizeof q);
	*cap = n;
	return 0;
}

char *
ckpt_vstrdupf(struct ckpt_err *e, size_t max, const char *fmt, va_list ap)
{
	char *p = ckpt_reallocarray(NULL, max, 1, e);

	if (p != NULL)
		vsnprintf(p, max, fmt, ap);
	return p;
}

char *
ckpt_strdup(const char *s, struct ckpt_err *e)
{
	char *d = strdup(s);

	if (d == NULL)
		ckpt_err_nomem(e, "");
	return d;
}
