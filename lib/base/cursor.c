/* cursor.c: the byte cursor's failures and its checked reads that are not hot (base.h has the
 * inline ones), and the byte buffer's release. */
#include <stdarg.h>
#include <stdlib.h>

#include "base.h"

int
ckpt_cur_fail(const struct ckpt_cur *c, size_t at, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ckpt_err_vat(c->e, CKPT_ERR_INPUT, c->where, at, fmt, ap);
	va_end(ap);
	return -1;
}

int
ckpt_cur_short(const struct ckpt_cur *c, const char *what)
{
	return ckpt_cur_fail(c, c->pos, "truncated %s", what);
}

int
ckpt_cur_u63(struct ckpt_cur *c, uint64_t *v, const char *what)
{
	size_t at = c->pos;
	int64_t x = 0;

	if (ckpt_cur_i64(c, &x, what) < 0)
		return -1;
	if (x < 0)
		return ckpt_cur_fail(c, at, "negative %s %lld", what, (long long)x);
	*v = (uint64_t)x;
	return 0;
}

int
ckpt_cur_count(struct ckpt_cur *c, size_t *n, size_t min, const char *what)
{
	size_t at = c->pos;
	int32_t x = 0;

	if (ckpt_cur_i32(c, &x, what) < 0)
		return -1;
	if (x < 0)
		return ckpt_cur_fail(c, at, "negative %s %d", what, x);
	if ((uint64_t)x * min > ckpt_cur_left(c))
		return ckpt_cur_fail(c, at, "%s %d is more than the remaining %zu bytes can hold", what, x,
				     ckpt_cur_left(c));
	*n = (size_t)x;
	return 0;
}

void
ckpt_bytebuf_release(struct ckpt_bytebuf *b)
{
	free(b->p);
	*b = (struct ckpt_bytebuf){0};
}
