/*
 * evlog-parse.c: checking event-log payloads and NDJSON event lines without a JSON tree
 * (jansson needs about a microsecond per record; a log has millions of them).
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt.h"

#define DEPTH_LIMIT 64
#define ATTEMPT_LIMIT INT32_MAX

struct ckpt_evparser {
	char *arena; /* decoded strings, NUL-terminated */
	size_t alen, acap;
	struct ckpt_event_task *tasks;
	size_t tcap;
	struct ckpt_event_input *inputs;
	size_t icap;
	unsigned char *min; /* a minified payload */
	size_t mcap;
};

/* A cursor over JSON text; on error msg and at say what and where. */
struct scan {
	const unsigned char *p, *end;
	struct ckpt_evparser *ps;
	struct ckpt_err *e;
	const unsigned char *at;
};

static const char *const type_names[] = {NULL, "vertex_finished", "vertices_reset", "vertex_initialized"};

const char *
ckpt_event_type_name(uint32_t type)
{
	return type >= 1 && type <= 3 ? type_names[type] : NULL;
}

uint32_t
ckpt_event_type_parse(const char *name, size_t len)
{
	for (uint32_t t = 1; t <= 3; t++)
		if (strlen(type_names[t]) == len && memcmp(type_names[t], name, len) == 0)
			return t;
	return 0;
}

struct ckpt_evparser *
ckpt_evparser_new(struct ckpt_err *e)
{
	return ckpt_calloc(1, sizeof(struct ckpt_evparser), e);
}

void
ckpt_evparser_free(struct ckpt_evparser *p)
{
	if (p == NULL)
		return;
	free(p->arena);
	free(p->tasks);
	free(p->inputs);
	free(p->min);
	free(p);
}

static int
fail(struct scan *s, const unsigned char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
fail(struct scan *s, const unsigned char *at, const char *fmt, ...)
{
	va_list ap;

	s->at = at;
	if (at >= s->end && strncmp(fmt, "not JSON", 8) != 0)
		return ckpt_err_set(s->e, CKPT_ERR_INPUT, "", "not JSON: unexpected end of text");
	va_start(ap, fmt);
	ckpt_err_vset(s->e, CKPT_ERR_INPUT, "", fmt, ap);
	va_end(ap);
	return -1;
}

/* A JSON syntax error (as opposed to a payload that is JSON but not an event). */
static int
syntax(struct scan *s, const unsigned char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
syntax(struct scan *s, const unsigned char *at, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	return fail(s, at, "not JSON: %s", text);
}

static int
grow(void **buf, size_t *cap, size_t need, size_t size, struct scan *s)
{
	size_t n = *cap ? *cap : 16;
	void *t;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	t = ckpt_reallocarray(*buf, n, size, s->e);
	if (t == NULL)
		return -1;
	*buf = t;
	*cap = n;
	return 0;
}

static void
ws(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

static int
expect(struct scan *s, unsigned char c)
{
	ws(s);
	if (s->p >= s->end || *s->p != c) {
		if (s->p >= s->end)
			return syntax(s, s->p, "'%c' expected near end of text", c);
		return syntax(s, s->p, "'%c' expected", c);
	}
	s->p++;
	return 0;
}

/* Length of the UTF-8 sequence at p (RFC 3629: no overlongs, surrogates or values above U+10FFFF), 0 if invalid. */
static size_t
utf8_len(const unsigned char *p, const unsigned char *end)
{
	size_t n = (size_t)(end - p);

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		return n >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (p[0] >= 0xe0 && p[0] <= 0xef) {
		if (n < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
			return 0;
		if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0))
			return 0;
		return 3;
	}
	if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		if (n < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 || (p[3] & 0xc0) != 0x80)
			return 0;
		if ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
			return 0;
		return 4;
	}
	return 0;
}

static int
hex4(const unsigned char *p, unsigned *out)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++) {
		unsigned c = p[i], d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (c | 0x20) - 'a' + 10;
		else
			return -1;
		v = v << 4 | d;
	}
	*out = v;
	return 0;
}

/* A \u escape at s->p (after the backslash and 'u'); the code point, or -1. */
static long
unicode_escape(struct scan *s)
{
	const unsigned char *start = s->p - 2;
	unsigned hi, lo;

	if (s->end - s->p < 4 || hex4(s->p, &hi) < 0)
		return syntax(s, start, "invalid \\u escape");
	s->p += 4;
	if (hi == 0)
		return syntax(s, start, "\\u0000 is not allowed");
	if (hi >= 0xdc00 && hi <= 0xdfff)
		return syntax(s, start, "invalid Unicode '\\u%04X'", hi);
	if (hi < 0xd800 || hi > 0xdbff)
		return hi;
	if (s->end - s->p < 6 || s->p[0] != '\\' || s->p[1] != 'u' || hex4(s->p + 2, &lo) < 0 ||
	    lo < 0xdc00 || lo > 0xdfff)
		return syntax(s, start, "invalid Unicode '\\u%04X'", hi);
	s->p += 6;
	return 0x10000 + ((long)(hi - 0xd800) << 10) + (lo - 0xdc00);
}

/*
 * A string at s->p (the opening quote).  *raw, *rawlen: its text between the
 * quotes.  With dec, its decoded value is appended to the arena and *dec
 * gets the arena offset.
 */
static int
string(struct scan *s, const unsigned char **raw, size_t *rawlen, size_t *dec)
{
	const unsigned char *start;
	struct ckpt_evparser *ps = s->ps;

	ws(s);
	if (s->p >= s->end || *s->p != '"')
		return syntax(s, s->p, "string expected%s", s->p >= s->end ? " near end of text" : "");
	start = ++s->p;
	if (dec) {
		if (grow((void **)&ps->arena, &ps->acap, ps->alen + (size_t)(s->end - s->p) + 1, 1, s) < 0)
			return -1;
		*dec = ps->alen;
	}
	while (s->p < s->end && *s->p != '"') {
		unsigned char c = *s->p;
		size_t n;

		if (c < 0x20)
			return syntax(s, s->p, "control character 0x%x in string", c);
		if (c == '\\') {
			long cp;
			char o = 0;

			if (++s->p >= s->end)
				break;
			switch (*s->p++) {
			case '"': o = '"'; break;
			case '\\': o = '\\'; break;
			case '/': o = '/'; break;
			case 'b': o = '\b'; break;
			case 'f': o = '\f'; break;
			case 'n': o = '\n'; break;
			case 'r': o = '\r'; break;
			case 't': o = '\t'; break;
			case 'u':
				if ((cp = unicode_escape(s)) < 0)
					return -1;
				if (dec)
					ps->alen += ckpt_utf8_put(ps->arena + ps->alen, (unsigned)cp);
				continue;
			default:
				return syntax(s, s->p - 2, "invalid escape");
			}
			if (dec)
				ps->arena[ps->alen++] = o;
			continue;
		}
		if ((n = utf8_len(s->p, s->end)) == 0)
			return syntax(s, s->p, "invalid UTF-8 in string");
		if (dec) {
			memcpy(ps->arena + ps->alen, s->p, n);
			ps->alen += n;
		}
		s->p += n;
	}
	if (s->p >= s->end)
		return syntax(s, start - 1, "unterminated string");
	if (raw) {
		*raw = start;
		*rawlen = (size_t)(s->p - start);
	}
	s->p++;
	if (dec)
		ps->arena[ps->alen++] = '\0';
	return 0;
}

/* A number; *isint and *v (when it is a non-negative integer below 2^63). */
static int
number(struct scan *s, int *isint, uint64_t *v)
{
	const unsigned char *start = s->p;
	int digits = 0, neg = 0, frac = 0;
	uint64_t x = 0;

	if (s->p < s->end && *s->p == '-') {
		neg = 1;
		s->p++;
	}
	if (s->p >= s->end || *s->p < '0' || *s->p > '9')
		return syntax(s, start, "invalid token");
	if (*s->p == '0' && s->p + 1 < s->end && s->p[1] >= '0' && s->p[1] <= '9')
		return syntax(s, start, "invalid token");
	while (s->p < s->end && *s->p >= '0' && *s->p <= '9') {
		if (++digits <= 18)
			x = x * 10 + (uint64_t)(*s->p - '0');
		s->p++;
	}
	if (s->p < s->end && *s->p == '.') {
		frac = 1;
		if (++s->p >= s->end || *s->p < '0' || *s->p > '9')
			return syntax(s, start, "invalid token");
		while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
			s->p++;
	}
	if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
		frac = 1;
		s->p++;
		if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
			s->p++;
		if (s->p >= s->end || *s->p < '0' || *s->p > '9')
			return syntax(s, start, "invalid token");
		while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
			s->p++;
	}
	if (!frac && digits > 18)
		return syntax(s, start, "too big integer");
	if (frac) {
		char buf[64];
		size_t n = (size_t)(s->p - start);

		if (n < sizeof buf) {
			memcpy(buf, start, n);
			buf[n] = '\0';
			if (isinf(strtod(buf, NULL)))
				return syntax(s, start, "real number overflow");
		}
	}
	*isint = !frac && !neg;
	*v = x;
	return 0;
}

static int value(struct scan *s, int depth);

static int
literal(struct scan *s, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
		return syntax(s, s->p, "invalid token");
	s->p += n;
	return 0;
}

/* Walk an object: first call with *first = 1; 1 with the key read and ':' passed, 0 after '}'. */
static int
members(struct scan *s, int *first, const unsigned char **key, size_t *klen)
{
	ws(s);
	if (*first) {
		if (expect(s, '{') < 0)
			return -1;
		ws(s);
		if (s->p < s->end && *s->p == '}') {
			s->p++;
			return 0;
		}
		*first = 0;
	} else {
		if (s->p < s->end && *s->p == '}') {
			s->p++;
			return 0;
		}
		if (s->p >= s->end || *s->p != ',')
			return syntax(s, s->p, "',' or '}' expected%s", s->p >= s->end ? " near end of text" : "");
		s->p++;
	}
	if (string(s, key, klen, NULL) < 0 || expect(s, ':') < 0)
		return -1;
	ws(s);
	return 1;
}

/* Walk an array: 1 before each element, 0 after ']'. */
static int
elements(struct scan *s, int *first)
{
	ws(s);
	if (*first) {
		if (expect(s, '[') < 0)
			return -1;
		ws(s);
		if (s->p < s->end && *s->p == ']') {
			s->p++;
			return 0;
		}
		*first = 0;
		return 1;
	}
	if (s->p < s->end && *s->p == ']') {
		s->p++;
		return 0;
	}
	if (s->p >= s->end || *s->p != ',')
		return syntax(s, s->p, "',' or ']' expected%s", s->p >= s->end ? " near end of text" : "");
	s->p++;
	ws(s);
	return 1;
}

static int
value(struct scan *s, int depth)
{
	const unsigned char *k;
	size_t kl;
	uint64_t v;
	int first = 1, r, isint;

	ws(s);
	if (s->p >= s->end)
		return syntax(s, s->p, "value expected near end of text");
	if (depth > DEPTH_LIMIT)
		return syntax(s, s->p, "nesting deeper than %d", DEPTH_LIMIT);
	switch (*s->p) {
	case '{':
		while ((r = members(s, &first, &k, &kl)) > 0)
			if (value(s, depth + 1) < 0)
				return -1;
		return r;
	case '[':
		while ((r = elements(s, &first)) > 0)
			if (value(s, depth + 1) < 0)
				return -1;
		return r;
	case '"':
		return string(s, NULL, NULL, NULL);
	case 't':
		return literal(s, "true");
	case 'f':
		return literal(s, "false");
	case 'n':
		return literal(s, "null");
	default:
		return number(s, &isint, &v);
	}
}

/* ---- the payload schemas */

static int
key_is(const unsigned char *k, size_t kl, const char *name)
{
	return strlen(name) == kl && memcmp(k, name, kl) == 0;
}

/* Mark key number i seen; a second time is an error. */
static int
seen(struct scan *s, unsigned *mask, int i, const unsigned char *k, size_t kl)
{
	if (*mask & (1u << i))
		return fail(s, k - 1, "duplicate key \"%.*s\"", (int)kl, (const char *)k);
	*mask |= 1u << i;
	return 0;
}

/* Index of the key in names (NULL-terminated); an unknown key is an error. */
static int
which_key(struct scan *s, const char *what, const char *const *names, const unsigned char *k, size_t kl,
	  unsigned *mask)
{
	for (int i = 0; names[i]; i++)
		if (key_is(k, kl, names[i]))
			return seen(s, mask, i, k, kl) < 0 ? -1 : i;
	return fail(s, k - 1, "%s: unknown key \"%.*s\"", what, (int)(kl > 64 ? 64 : kl), (const char *)k);
}

static int
get_string(struct scan *s, const char *what, const char *key, const char **out)
{
	size_t off;

	ws(s);
	if (s->p >= s->end)
		return syntax(s, s->p, "value expected near end of text");
	if (*s->p != '"')
		return fail(s, s->p, "%s: \"%s\" must be a string", what, key);
	if (string(s, NULL, NULL, &off) < 0)
		return -1;
	/* the arena may move while decoding: callers resolve offsets at the end */
	*out = (const char *)(uintptr_t)(off + 1);
	return 0;
}

static int
get_uint(struct scan *s, const char *what, const char *key, uint64_t lo, uint64_t hi, uint32_t *out)
{
	const unsigned char *at;
	uint64_t v;
	int isint;

	ws(s);
	at = s->p;
	if (s->p >= s->end)
		return syntax(s, s->p, "value expected near end of text");
	if (!(*s->p == '-' || (*s->p >= '0' && *s->p <= '9')))
		return fail(s, at, "%s: \"%s\" must be an integer", what, key);
	if (number(s, &isint, &v) < 0)
		return -1;
	if (!isint || v < lo || v > hi)
		return fail(s, at, "%s: \"%s\" must be an integer from %llu to %llu", what, key,
			    (unsigned long long)lo, (unsigned long long)hi);
	*out = (uint32_t)v;
	return 0;
}

/* An entry: a string or {"base64": string}. */
static int
entry(struct scan *s, const char *what)
{
	const unsigned char *k;
	size_t kl;
	unsigned mask = 0;
	int first = 1, r;
	static const char *const keys[] = {"base64", NULL};

	ws(s);
	if (s->p < s->end && *s->p == '"')
		return string(s, NULL, NULL, NULL);
	if (s->p >= s->end || *s->p != '{')
		return fail(s, s->p, "%s must be a string or {\"base64\": ...}", what);
	while ((r = members(s, &first, &k, &kl)) > 0) {
		if (which_key(s, what, keys, k, kl, &mask) < 0)
			return -1;
		ws(s);
		if (s->p >= s->end || *s->p != '"')
			return fail(s, s->p, "%s: \"base64\" must be a string", what);
		if (string(s, NULL, NULL, NULL) < 0)
			return -1;
	}
	if (r == 0 && mask == 0)
		return fail(s, s->p - 1, "%s must be a string or {\"base64\": ...}", what);
	return r;
}

static int
shuffle(struct scan *s)
{
	static const char *const keys[] = {"incremental", "state", NULL};
	const unsigned char *k, *start;
	size_t kl;
	unsigned mask = 0;
	int first = 1, r, i;

	ws(s);
	if (s->p < s->end && *s->p == 'n')
		return literal(s, "null");
	start = s->p;
	if (s->p >= s->end || *s->p != '{')
		return fail(s, s->p, "\"shuffle\" must be an object or null");
	while ((r = members(s, &first, &k, &kl)) > 0) {
		if ((i = which_key(s, "shuffle", keys, k, kl, &mask)) < 0)
			return -1;
		if (i == 0) {
			if (s->p < s->end && *s->p == 't')
				r = literal(s, "true");
			else if (s->p < s->end && *s->p == 'f')
				r = literal(s, "false");
			else
				r = fail(s, s->p, "shuffle: \"incremental\" must be true or false");
		} else {
			r = entry(s, "shuffle: \"state\"");
		}
		if (r < 0)
			return -1;
	}
	if (r == 0 && mask != 3)
		return fail(s, start, "shuffle: needs \"incremental\" and \"state\"");
	return r;
}

static int
snapshots(struct scan *s)
{
	static const char *const keys[] = {"coordinators", "shuffle", NULL};
	const unsigned char *k, *ck;
	size_t kl, ckl;
	unsigned mask = 0;
	int first = 1, r, i;

	if (s->p >= s->end || *s->p != '{')
		return fail(s, s->p, "vertex_finished: \"snapshots\" must be an object or null");
	while ((r = members(s, &first, &k, &kl)) > 0) {
		if ((i = which_key(s, "snapshots", keys, k, kl, &mask)) < 0)
			return -1;
		if (i == 1) {
			if (shuffle(s) < 0)
				return -1;
			continue;
		}
		if (s->p >= s->end || *s->p != '{')
			return fail(s, s->p, "snapshots: \"coordinators\" must be an object");
		{
			const unsigned char *keys_seen[64];
			size_t lens[64], n = 0;
			int f2 = 1;

			while ((r = members(s, &f2, &ck, &ckl)) > 0) {
				for (size_t j = 0; j < n && j < 64; j++)
					if (lens[j] == ckl && memcmp(keys_seen[j], ck, ckl) == 0)
						return fail(s, ck - 1, "duplicate key \"%.*s\"", (int)ckl,
							    (const char *)ck);
				if (n < 64) {
					keys_seen[n] = ck;
					lens[n++] = ckl;
				}
				if (entry(s, "a coordinator's state") < 0)
					return -1;
			}
			if (r < 0)
				return -1;
		}
	}
	return r;
}

/* A {vertex, subtask} of vertices_reset. */
static int
reset_task(struct scan *s, struct ckpt_event_task *t)
{
	static const char *const keys[] = {"vertex", "subtask", NULL};
	const unsigned char *k, *start;
	size_t kl;
	unsigned mask = 0;
	int first = 1, r, i;

	ws(s);
	start = s->p;
	if (s->p >= s->end || *s->p != '{')
		return fail(s, s->p, "vertices_reset: each subtask must be an object");
	while ((r = members(s, &first, &k, &kl)) > 0) {
		if ((i = which_key(s, "vertices_reset", keys, k, kl, &mask)) < 0)
			return -1;
		r = i == 0 ? get_string(s, "vertices_reset", "vertex", &t->vertex)
			   : get_uint(s, "vertices_reset", "subtask", 0, CKPT_PARALLELISM_LIMIT - 1, &t->subtask);
		if (r < 0)
			return -1;
	}
	if (r == 0 && mask != 3)
		return fail(s, start, "vertices_reset: each subtask needs \"vertex\" and \"subtask\"");
	return r;
}

static int
reset_list(struct scan *s, struct ckpt_event *ev)
{
	struct ckpt_evparser *ps = s->ps;
	int first = 1, r;

	ws(s);
	if (s->p >= s->end || *s->p != '[')
		return fail(s, s->p, "vertices_reset: \"subtasks\" must be an array");
	while ((r = elements(s, &first)) > 0) {
		if (grow((void **)&ps->tasks, &ps->tcap, ev->ntasks + 1, sizeof *ps->tasks, s) < 0)
			return -1;
		if (reset_task(s, &ps->tasks[ev->ntasks]) < 0)
			return -1;
		ev->ntasks++;
	}
	return r;
}

static int
input_member(struct scan *s, struct ckpt_event_input *in, int i)
{
	const unsigned char *raw, *at;
	size_t len;
	char name[32];
	int k;

	if (i == 0)
		return get_string(s, "inputs", "vertex", &in->vertex);
	ws(s);
	at = s->p;
	if (s->p >= s->end || *s->p != '"' || string(s, &raw, &len, NULL) < 0)
		return fail(s, at, "inputs: \"%s\" must be a string", i == 1 ? "distribution" : "partition");
	snprintf(name, sizeof name, "%.*s", (int)(len < 31 ? len : 31), (const char *)raw);
	if (i == 1) {
		if (len == 9 && memcmp(raw, "pointwise", 9) == 0)
			in->distribution = CKPT_POINTWISE;
		else if (len == 10 && memcmp(raw, "all_to_all", 10) == 0)
			in->distribution = CKPT_ALL_TO_ALL;
		else
			return fail(s, at, "inputs: distribution must be \"all_to_all\" or \"pointwise\"");
		return 0;
	}
	if (len > 30 || (k = ckpt_partition_parse(name)) < 0)
		return fail(s, at, "inputs: unknown partition type \"%s\"", name);
	in->partition = (enum ckpt_partition)k;
	return 0;
}

static int
input(struct scan *s, struct ckpt_event_input *in)
{
	static const char *const keys[] = {"vertex", "distribution", "partition", NULL};
	const unsigned char *k, *start;
	size_t kl;
	unsigned mask = 0;
	int first = 1, r, i;

	in->distribution = CKPT_ALL_TO_ALL;
	in->partition = CKPT_BLOCKING;
	ws(s);
	start = s->p;
	if (s->p < s->end && *s->p == '"')
		return get_string(s, "inputs", "vertex", &in->vertex);
	if (s->p >= s->end || *s->p != '{')
		return fail(s, s->p, "vertex_initialized: each input must be a vertex id or an object");
	while ((r = members(s, &first, &k, &kl)) > 0) {
		if ((i = which_key(s, "inputs", keys, k, kl, &mask)) < 0 || input_member(s, in, i) < 0)
			return -1;
	}
	if (r == 0 && !(mask & 1))
		return fail(s, start, "inputs: missing \"vertex\"");
	return r;
}

static int
input_list(struct scan *s, struct ckpt_event *ev)
{
	struct ckpt_evparser *ps = s->ps;
	int first = 1, r;

	ws(s);
	if (s->p >= s->end || *s->p != '[')
		return fail(s, s->p, "vertex_initialized: \"inputs\" must be an array");
	while ((r = elements(s, &first)) > 0) {
		if (grow((void **)&ps->inputs, &ps->icap, ev->ninputs + 1, sizeof *ps->inputs, s) < 0)
			return -1;
		if (input(s, &ps->inputs[ev->ninputs]) < 0)
			return -1;
		ev->ninputs++;
	}
	return r;
}

static int
finished_member(struct scan *s, struct ckpt_event *ev, int i)
{
	const unsigned char *start;

	switch (i) {
	case 0:
		return get_string(s, "vertex_finished", "vertex", &ev->vertex);
	case 1:
		return get_uint(s, "vertex_finished", "subtask", 0, CKPT_PARALLELISM_LIMIT - 1, &ev->subtask);
	case 2:
		return get_uint(s, "vertex_finished", "attempt", 0, ATTEMPT_LIMIT, &ev->attempt);
	case 5:
		if (s->p < s->end && *s->p == 'n')
			return literal(s, "null");
		start = s->p;
		if (snapshots(s) < 0)
			return -1;
		ev->snapshots = (const char *)start;
		ev->snapshots_len = (size_t)(s->p - start);
		return 0;
	default: /* partitions, metrics: free-form */
		return value(s, 1);
	}
}

static int
payload_members(struct scan *s, struct ckpt_event *ev)
{
	static const char *const fin[] = {"vertex", "subtask", "attempt", "partitions", "metrics", "snapshots", NULL};
	static const char *const rst[] = {"subtasks", NULL};
	static const char *const ini[] = {"vertex", "parallelism", "inputs", NULL};
	const char *what = ckpt_event_type_name(ev->type);
	const unsigned char *k, *start = s->p;
	size_t kl;
	unsigned mask = 0, need;
	int first = 1, r, i;

	while ((r = members(s, &first, &k, &kl)) > 0) {
		switch (ev->type) {
		case CKPT_EVENT_VERTEX_FINISHED:
			if ((i = which_key(s, what, fin, k, kl, &mask)) < 0 || finished_member(s, ev, i) < 0)
				return -1;
			break;
		case CKPT_EVENT_VERTICES_RESET:
			if ((i = which_key(s, what, rst, k, kl, &mask)) < 0 || reset_list(s, ev) < 0)
				return -1;
			break;
		default:
			if ((i = which_key(s, what, ini, k, kl, &mask)) < 0)
				return -1;
			r = i == 0 ? get_string(s, what, "vertex", &ev->vertex)
			    : i == 1 ? get_uint(s, what, "parallelism", 1, CKPT_PARALLELISM_LIMIT, &ev->parallelism)
				     : input_list(s, ev);
			if (r < 0)
				return -1;
		}
	}
	if (r < 0)
		return -1;
	need = ev->type == CKPT_EVENT_VERTEX_FINISHED ? 7 : ev->type == CKPT_EVENT_VERTICES_RESET ? 1 : 3;
	if ((mask & need) != need) {
		const char *const *names = ev->type == 1 ? fin : ev->type == 2 ? rst : ini;

		for (i = 0; (need >> i) & 1; i++)
			if (!(mask & (1u << i)))
				break;
		return fail(s, start, "%s: missing \"%s\"", what, names[i]);
	}
	return 0;
}

/* Turn the arena offsets get_string left into pointers, now that the arena stays put. */
static void
resolve(struct ckpt_evparser *ps, const char **p)
{
	if (*p != NULL)
		*p = ps->arena + ((uintptr_t)*p - 1);
}

static void
resolve_all(struct ckpt_evparser *ps, struct ckpt_event *ev)
{
	resolve(ps, &ev->vertex);
	ev->tasks = ps->tasks;
	ev->inputs = ps->inputs;
	for (size_t i = 0; i < ev->ntasks; i++)
		resolve(ps, &ev->tasks[i].vertex);
	for (size_t i = 0; i < ev->ninputs; i++)
		resolve(ps, &ev->inputs[i].vertex);
}

static void
reset_event(struct ckpt_evparser *ps, struct ckpt_event *ev, uint32_t type)
{
	ps->alen = 0;
	ev->type = type;
	ev->vertex = NULL;
	ev->subtask = ev->attempt = ev->parallelism = 0;
	ev->snapshots = NULL;
	ev->snapshots_len = 0;
	ev->tasks = NULL;
	ev->ntasks = 0;
	ev->inputs = NULL;
	ev->ninputs = 0;
}

/* The payload object at s->p, which must end the text. */
static int
payload(struct scan *s, struct ckpt_event *ev)
{
	ws(s);
	if (s->p >= s->end || *s->p != '{')
		return fail(s, s->p, "the payload must be a JSON object");
	if (payload_members(s, ev) < 0)
		return -1;
	return 0;
}

int
ckpt_evparser_decode(struct ckpt_evparser *p, uint32_t type, const void *buf, size_t len,
		     struct ckpt_event *ev, const char **at, struct ckpt_err *e)
{
	struct scan s = {buf, (const unsigned char *)buf + len, p, e, NULL};

	reset_event(p, ev, type);
	if (ckpt_event_type_name(type) == NULL) {
		s.at = s.p;
		ckpt_err_set(e, CKPT_ERR_INPUT, "", "unknown record type %u", type);
		goto fail;
	}
	if (payload(&s, ev) < 0)
		goto fail;
	ws(&s);
	if (s.p != s.end) {
		fail(&s, s.p, "end of payload expected after the object");
		goto fail;
	}
	resolve_all(p, ev);
	ev->payload = buf;
	ev->len = len;
	return 0;
fail:
	if (at)
		*at = (const char *)s.at;
	return -1;
}

/* Copy the JSON text [from, to) to ps->min without white space outside strings; *n its length. */
static int
minify(struct scan *s, const unsigned char *from, const unsigned char *to, size_t *n)
{
	struct ckpt_evparser *ps = s->ps;
	int instr = 0;
	size_t k = 0;

	if (grow((void **)&ps->min, &ps->mcap, (size_t)(to - from) + 1, 1, s) < 0)
		return -1;
	for (const unsigned char *q = from; q < to; q++) {
		if (instr) {
			if (*q == '\\')
				ps->min[k++] = *q++;
			else if (*q == '"')
				instr = 0;
		} else if (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r') {
			continue;
		} else if (*q == '"') {
			instr = 1;
		}
		ps->min[k++] = *q;
	}
	*n = k;
	return 0;
}

/* The "type" member of an event line: a name or a numeric id. */
static int
line_type(struct scan *s, uint32_t *type)
{
	const unsigned char *at, *raw;
	size_t len;
	uint64_t v;
	int isint;

	ws(s);
	at = s->p;
	if (s->p < s->end && *s->p == '"') {
		if (string(s, &raw, &len, NULL) < 0)
			return -1;
		if ((*type = ckpt_event_type_parse((const char *)raw, len)) == 0)
			return fail(s, at, "unknown event type \"%.*s\"", (int)(len > 64 ? 64 : len), (const char *)raw);
		return 0;
	}
	if (s->p < s->end && *s->p >= '0' && *s->p <= '9') {
		if (number(s, &isint, &v) < 0)
			return -1;
		if (!isint || ckpt_event_type_name(v > 3 ? 0 : (uint32_t)v) == NULL)
			return fail(s, at, "unknown event type %.*s", (int)(s->p - at), (const char *)at);
		*type = (uint32_t)v;
		return 0;
	}
	return fail(s, at, "\"type\" must be an event type name or id");
}

int
ckpt_evparser_line(struct ckpt_evparser *p, const char *line, size_t len, struct ckpt_event *ev,
		   const char **at, struct ckpt_err *e)
{
	static const char *const keys[] = {"type", "payload", NULL};
	struct scan s = {(const unsigned char *)line, (const unsigned char *)line + len, p, e, NULL};
	const unsigned char *k, *pl = NULL, *plend = NULL, *start;
	size_t kl, n;
	uint32_t type = 0;
	unsigned mask = 0;
	int first = 1, r, i, decoded = 0;

	ws(&s);
	start = s.p;
	if (s.p >= s.end || *s.p != '{') {
		fail(&s, s.p, "an event must be an object");
		goto fail;
	}
	while ((r = members(&s, &first, &k, &kl)) > 0) {
		if ((i = which_key(&s, "event", keys, k, kl, &mask)) < 0)
			goto fail;
		if (i == 0 && line_type(&s, &type) < 0)
			goto fail;
		if (i == 1) {
			/* with the type known, check the payload in the same pass */
			pl = s.p;
			if (mask & 1) {
				reset_event(p, ev, type);
				decoded = 1;
			}
			if ((decoded ? payload(&s, ev) : value(&s, 1)) < 0)
				goto fail;
			plend = s.p;
		}
	}
	ws(&s);
	if (r < 0 || (r == 0 && s.p != s.end && fail(&s, s.p, "end of line expected after the event") < 0))
		goto fail;
	if (mask != 3) {
		fail(&s, start, "event: missing \"%s\"", mask & 1 ? "payload" : "type");
		goto fail;
	}
	if (!decoded) {
		reset_event(p, ev, type);
		s.p = pl;
		s.end = plend;
		if (payload(&s, ev) < 0)
			goto fail;
	}
	if (minify(&s, pl, plend, &n) < 0)
		goto fail;
	resolve_all(p, ev);
	ev->payload = p->min;
	ev->len = n;
	return 0;
fail:
	if (at)
		*at = (const char *)s.at;
	return -1;
}
