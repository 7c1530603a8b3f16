/* rangelist.c: subtask sets in Linux cpuset syntax ("0-3,7,9-10"), parsed and printed. */
#include <stdlib.h>
#include <string.h>

#include "base.h"

/* Read a decimal number of at most 10 digits at *p; -1 if there is none. */
static int
read_num(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int n = 0;

	while (*s >= '0' && *s <= '9') {
		if (++n > 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
		s++;
	}
	if (n == 0)
		return -1;
	*p = s;
	*out = v;
	return 0;
}

/*
 * Range lists in cpuset syntax ("0-3,7,9-10"; "" is empty), ascending and
 * within [0, n).  Parse into a fresh bit set of n bits; on error the message
 * says what is wrong (the caller adds where).
 */
static int
rangelist_parse(const char *s, size_t n, struct ckpt_bits *out, struct ckpt_err *e)
{
	const char *p = s;

	if (ckpt_bits_init(out, n, e) < 0)
		return -1;
	if (*p == '\0')
		return 0;
	for (;;) {
		uint64_t lo, hi;

		if (read_num(&p, &lo) < 0)
			goto bad;
		hi = lo;
		if (*p == '-') {
			p++;
			if (read_num(&p, &hi) < 0)
				goto bad;
			if (hi < lo) {
				ckpt_err_set(e, CKPT_ERR_INPUT, "", "bad range list \"%s\": range %llu-%llu is descending",
					     s, (unsigned long long)lo, (unsigned long long)hi);
				goto fail;
			}
		}
		if (hi >= n) {
			ckpt_err_set(e, CKPT_ERR_INPUT, "",
				     "range list \"%s\": subtask %llu out of range (parallelism %zu)",
				     s, (unsigned long long)hi, n);
			goto fail;
		}
		ckpt_bits_set_range(out, (size_t)lo, (size_t)hi + 1);
		if (*p == '\0')
			return 0;
		if (*p++ != ',')
			goto bad;
	}
bad:
	ckpt_err_set(e, CKPT_ERR_INPUT, "", "bad range list \"%s\"", s);
fail:
	ckpt_bits_release(out);
	return -1;
}

int
ckpt_rangelist_from_json(const json_t *v, size_t n, struct ckpt_bits *out, struct ckpt_err *e)
{
	size_t i;
	json_t *x;

	if (json_is_string(v))
		return rangelist_parse(json_string_value(v), n, out, e);
	if (!json_is_array(v))
		return ckpt_err_set(e, CKPT_ERR_INPUT, "", "expected a range list or an array of subtask indices");
	if (ckpt_bits_init(out, n, e) < 0)
		return -1;
	json_array_foreach(v, i, x) {
		json_int_t k;

		if (!json_is_integer(x)) {
			ckpt_err_set(e, CKPT_ERR_INPUT, "", "subtask list element %zu is not an integer", i);
			goto fail;
		}
		k = json_integer_value(x);
		if (k < 0 || (uint64_t)k >= n) {
			ckpt_err_set(e, CKPT_ERR_INPUT, "", "subtask %lld out of range (parallelism %zu)",
				     (long long)k, n);
			goto fail;
		}
		ckpt_bits_set(out, (size_t)k);
	}
	return 0;
fail:
	ckpt_bits_release(out);
	return -1;
}

/* The first clear bit at or after i (b->n when none), a word at a time. */
static size_t
next_zero(const struct ckpt_bits *b, size_t i)
{
	size_t k = i >> 6, nw = (b->n + 63) / 64;
	uint64_t w;

	if (i >= b->n)
		return b->n;
	w = ~b->w[k] & (~UINT64_C(0) << (i & 63));
	while (w == 0) {
		if (++k >= nw)
			return b->n;
		w = ~b->w[k];
	}
	i = k * 64 + (size_t)__builtin_ctzll(w);
	return i < b->n ? i : b->n;
}

char *
ckpt_rangelist_format(const struct ckpt_bits *b)
{
	size_t cap = 64, len = 0, i = ckpt_bits_next(b, 0);
	char *s = malloc(cap);

	if (s == NULL)
		return NULL;
	s[0] = '\0';
	while (i < b->n) {
		size_t j = next_zero(b, i) - 1; /* the last of the run starting at i */
		char tmp[48];
		int k;

		if (j == i)
			k = snprintf(tmp, sizeof tmp, "%s%zu", len ? "," : "", i);
		else
			k = snprintf(tmp, sizeof tmp, "%s%zu-%zu", len ? "," : "", i, j);
		if (ckpt_grow(&s, &cap, len + (size_t)k + 1, 1, 64, NULL) < 0) {
			free(s);
			return NULL;
		}
		memcpy(s + len, tmp, (size_t)k + 1);
		len += (size_t)k;
		i = ckpt_bits_next(b, j + 1);
	}
	return s;
}
