/*
 * parse.c: the schemas of event-log payloads and NDJSON event lines, checked and decoded
 * with json-scan.c's scanner, without a JSON tree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evlog.h"

#define ATTEMPT_LIMIT INT32_MAX

struct ckpt_evparser {
	struct ckpt_jscan_buf arena; /* decoded strings, NUL-terminated */
	struct ckpt_event_task *tasks;
	size_t tcap;
	struct ckpt_event_input *inputs;
	size_t icap;
	struct ckpt_jscan_buf min; /* a minified payload */
};

static const char *const type_names[] = {NULL, "vertex_finished", "vertices_reset", "vertex_initialized"};

const char *
ckpt_event_type_name(uint32_t type)
{
	return type >= 1 && type <= 3 ? type_names[type] : NULL;
}

/* The type of a name; 0 when unknown. */
static uint32_t
event_type_parse(const char *name, size_t len)
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
	free(p->arena.p);
	free(p->tasks);
	free(p->inputs);
	free(p->min.p);
	free(p);
}

static int
key_is(const unsigned char *k, size_t kl, const char *name)
{
	return strlen(name) == kl && memcmp(k, name, kl) == 0;
}

/* Mark key number i seen; a second time is an error. */
static int
seen(struct ckpt_jscan *s, unsigned *mask, int i, const unsigned char *k, size_t kl)
{
	if (*mask & (1u << i))
		return ckpt_jscan_fail(s, k - 1, "duplicate key \"%.*s\"", (int)kl, (const char *)k);
	*mask |= 1u << i;
	return 0;
}

/* Index of the key in names (NULL-terminated); an unknown key is an error. */
static int
which_key(struct ckpt_jscan *s, const char *what, const char *const *names, const unsigned char *k, size_t kl,
	  unsigned *mask)
{
	for (int i = 0; names[i]; i++)
		if (key_is(k, kl, names[i]))
			return seen(s, mask, i, k, kl) < 0 ? -1 : i;
	return ckpt_jscan_fail(s, k - 1, "%s: unknown key \"%.*s\"", what, (int)(kl > 64 ? 64 : kl),
			       (const char *)k);
}

static int
get_string(struct ckpt_jscan *s, const char *what, const char *key, const char **out)
{
	size_t off;

	ckpt_jscan_ws(s);
	if (s->p >= s->end)
		return ckpt_jscan_syntax(s, s->p, "value expected near end of text");
	if (*s->p != '"')
		return ckpt_jscan_fail(s, s->p, "%s: \"%s\" must be a string", what, key);
	if (ckpt_jscan_string(s, NULL, NULL, &((struct ckpt_evparser *)s->arg)->arena, &off) < 0)
		return -1;
	/* the arena may move while decoding: callers resolve offsets at the end */
	*out = (const char *)(uintptr_t)(off + 1);
	return 0;
}

static int
get_uint(struct ckpt_jscan *s, const char *what, const char *key, uint64_t lo, uint64_t hi, uint32_t *out)
{
	const unsigned char *at;
	uint64_t v;
	int isint;

	ckpt_jscan_ws(s);
	at = s->p;
	if (s->p >= s->end)
		return ckpt_jscan_syntax(s, s->p, "value expected near end of text");
	if (!(*s->p == '-' || (*s->p >= '0' && *s->p <= '9')))
		return ckpt_jscan_fail(s, at, "%s: \"%s\" must be an integer", what, key);
	if (ckpt_jscan_number(s, &isint, &v) < 0)
		return -1;
	if (!isint || v < lo || v > hi)
		return ckpt_jscan_fail(s, at, "%s: \"%s\" must be an integer from %llu to %llu", what, key,
			    (unsigned long long)lo, (unsigned long long)hi);
	*out = (uint32_t)v;
	return 0;
}

/* An entry: a string or {"base64": string}. */
static int
entry(struct ckpt_jscan *s, const char *what)
{
	const unsigned char *k;
	size_t kl;
	unsigned mask = 0;
	int first = 1, r;
	static const char *const keys[] = {"base64", NULL};

	ckpt_jscan_ws(s);
	if (s->p < s->end && *s->p == '"')
		return ckpt_jscan_string(s, NULL, NULL, NULL, NULL);
	if (s->p >= s->end || *s->p != '{')
		return ckpt_jscan_fail(s, s->p, "%s must be a string or {\"base64\": ...}", what);
	while ((r = ckpt_jscan_members(s, &first, &k, &kl)) > 0) {
		if (which_key(s, what, keys, k, kl, &mask) < 0)
			return -1;
		ckpt_jscan_ws(s);
		if (s->p >= s->end || *s->p != '"')
			return ckpt_jscan_fail(s, s->p, "%s: \"base64\" must be a string", what);
		if (ckpt_jscan_string(s, NULL, NULL, NULL, NULL) < 0)
			return -1;
	}
	if (r == 0 && mask == 0)
		return ckpt_jscan_fail(s, s->p - 1, "%s must be a string or {\"base64\": ...}", what);
	return r;
}

static int
shuffle(struct ckpt_jscan *s)
{
	static const char *const keys[] = {"incremental", "state", NULL};
	const unsigned char *k, *start;
	size_t kl;
	unsigned mask = 0;
	int first = 1, r, i;

	ckpt_jscan_ws(s);
	if (s->p < s->end && *s->p == 'n')
		return ckpt_jscan_literal(s, "null");
	start = s->p;
	if (s->p >= s->end || *s->p != '{')
		return ckpt_jscan_fail(s, s->p, "\"shuffle\" must be an object or null");
	while ((r = ckpt_jscan_members(s, &first, &k, &kl)) > 0) {
		if ((i = which_key(s, "shuffle", keys, k, kl, &mask)) < 0)
			return -1;
		if (i == 0) {
			if (s->p < s->end && *s->p == 't')
				r = ckpt_jscan_literal(s, "true");
			else if (s->p < s->end && *s->p == 'f')
				r = ckpt_jscan_literal(s, "false");
			else
				r = ckpt_jscan_fail(s, s->p, "shuffle: \"incremental\" must be true or false");
		} else {
			r = entry(s, "shuffle: \"state\"");
		}
		if (r < 0)
			return -1;
	}
	if (r == 0 && mask != 3)
		return ckpt_jscan_fail(s, start, "shuffle: needs \"incremental\" and \"state\"");
	return r;
}

static int
snapshots(struct ckpt_jscan *s)
{
	static const char *const keys[] = {"coordinators", "shuffle", NULL};
	const unsigned char *k, *ck;
	size_t kl, ckl;
	unsigned mask = 0;
	int first = 1, r, i;

	if (s->p >= s->end || *s->p != '{')
		return ckpt_jscan_fail(s, s->p, "vertex_finished: \"snapshots\" must be an object or null");
	while ((r = ckpt_jscan_members(s, &first, &k, &kl)) > 0) {
		if ((i = which_key(s, "snapshots", keys, k, kl, &mask)) < 0)
			return -1;
		if (i == 1) {
			if (shuffle(s) < 0)
				return -1;
			continue;
		}
		if (s->p >= s->end || *s->p != '{')
			return ckpt_jscan_fail(s, s->p, "snapshots: \"coordinators\" must be an object");
		{
			const unsigned char *keys_seen[64];
			size_t lens[64], n = 0;
			int f2 = 1;

			while ((r = ckpt_jscan_members(s, &f2, &ck, &ckl)) > 0) {
				for (size_t j = 0; j < n && j < 64; j++)
					if (lens[j] == ckl && memcmp(keys_seen[j], ck, ckl) == 0)
						return ckpt_jscan_fail(s, ck - 1, "duplicate key \"%.*s\"", (int)ckl,
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
reset_task(struct ckpt_jscan *s, struct ckpt_event_task *t)
{
	static const char *const keys[] = {"vertex", "subtask", NULL};
	const unsigned char *k, *start;
	size_t kl;
	unsigned mask = 0;
	int first = 1, r, i;

	ckpt_jscan_ws(s);
	start = s->p;
	if (s->p >= s->end || *s->p != '{')
		return ckpt_jscan_fail(s, s->p, "vertices_reset: each subtask must be an object");
	while ((r = ckpt_jscan_members(s, &first, &k, &kl)) > 0) {
		if ((i = which_key(s, "vertices_reset", keys, k, kl, &mask)) < 0)
			return -1;
		r = i == 0 ? get_string(s, "vertices_reset", "vertex", &t->vertex)
			   : get_uint(s, "vertices_reset", "subtask", 0, CKPT_PARALLELISM_LIMIT - 1, &t->subtask);
		if (r < 0)
			return -1;
	}
	if (r == 0 && mask != 3)
		return ckpt_jscan_fail(s, start, "vertices_reset: each subtask needs \"vertex\" and \"subtask\"");
	return r;
}

static int
reset_list(struct ckpt_jscan *s, struct ckpt_event *ev)
{
	struct ckpt_evparser *ps = s->arg;
	int first = 1, r;

	ckpt_jscan_ws(s);
	if (s->p >= s->end || *s->p != '[')
		return ckpt_jscan_fail(s, s->p, "vertices_reset: \"subtasks\" must be an array");
	while ((r = ckpt_jscan_elements(s, &first)) > 0) {
		if (ckpt_grow(&ps->tasks, &ps->tcap, ev->ntasks + 1, sizeof *ps->tasks, 16, s->e) < 0)
			return -1;
		if (reset_task(s, &ps->tasks[ev->ntasks]) < 0)
			return -1;
		ev->ntasks++;
	}
	return r;
}

static int
input_member(struct ckpt_jscan *s, struct ckpt_event_input *in, int i)
{
	const unsigned char *raw, *at;
	size_t len;
	char name[32];
	int k;

	if (i == 0)
		return get_string(s, "inputs", "vertex", &in->vertex);
	ckpt_jscan_ws(s);
	at = s->p;
	if (s->p >= s->end || *s->p != '"' || ckpt_jscan_string(s, &raw, &len, NULL, NULL) < 0)
		return ckpt_jscan_fail(s, at, "inputs: \"%s\" must be a string", i == 1 ? "distribution" : "partition");
	snprintf(name, sizeof name, "%.*s", (int)(len < 31 ? len : 31), (const char *)raw);
	if (i == 1) {
		if (len == 9 && memcmp(raw, "pointwise", 9) == 0)
			in->distribution = CKPT_POINTWISE;
		else if (len == 10 && memcmp(raw, "all_to_all", 10) == 0)
			in->distribution = CKPT_ALL_TO_ALL;
		else
			return ckpt_jscan_fail(s, at, "inputs: distribution must be \"all_to_all\" or \"pointwise\"");
		return 0;
	}
	if (len > 30 || (k = ckpt_partition_parse(name)) < 0)
		return ckpt_jscan_fail(s, at, "inputs: unknown partition type \"%s\"", name);
	in->partition = (enum ckpt_partition)k;
	return 0;
}

static int
input(struct ckpt_jscan *s, struct ckpt_event_input *in)
{
	static const char *const keys[] = {"vertex", "distribution", "partition", NULL};
	const unsigned char *k, *start;
	size_t kl;
	unsigned mask = 0;
	int first = 1, r, i;

	in->distribution = CKPT_ALL_TO_ALL;
	in->partition = CKPT_BLOCKING;
	ckpt_jscan_ws(s);
	start = s->p;
	if (s->p < s->end && *s->p == '"')
		return get_string(s, "inputs", "vertex", &in->vertex);
	if (s->p >= s->end || *s->p != '{')
		return ckpt_jscan_fail(s, s->p, "vertex_initialized: each input must be a vertex id or an object");
	while ((r = ckpt_jscan_members(s, &first, &k, &kl)) > 0) {
		if ((i = which_key(s, "inputs", keys, k, kl, &mask)) < 0 || input_member(s, in, i) < 0)
			return -1;
	}
	if (r == 0 && !(mask & 1))
		return ckpt_jscan_fail(s, start, "inputs: missing \"vertex\"");
	return r;
}

static int
input_list(struct ckpt_jscan *s, struct ckpt_event *ev)
{
	struct ckpt_evparser *ps = s->arg;
	int first = 1, r;

	ckpt_jscan_ws(s);
	if (s->p >= s->end || *s->p != '[')
		return ckpt_jscan_fail(s, s->p, "vertex_initialized: \"inputs\" must be an array");
	while ((r = ckpt_jscan_elements(s, &first)) > 0) {
		if (ckpt_grow(&ps->inputs, &ps->icap, ev->ninputs + 1, sizeof *ps->inputs, 16, s->e) < 0)
			return -1;
		if (input(s, &ps->inputs[ev->ninputs]) < 0)
			return -1;
		ev->ninputs++;
	}
	return r;
}

static int
finished_member(struct ckpt_jscan *s, struct ckpt_event *ev, int i)
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
			return ckpt_jscan_literal(s, "null");
		start = s->p;
		if (snapshots(s) < 0)
			return -1;
		ev->snapshots = (const char *)start;
		ev->snapshots_len = (size_t)(s->p - start);
		return 0;
	default: /* partitions, metrics: free-form */
		return ckpt_jscan_value(s, 1);
	}
}

static int
payload_members(struct ckpt_jscan *s, struct ckpt_event *ev)
{
	static const char *const fin[] = {"vertex", "subtask", "attempt", "partitions", "metrics", "snapshots", NULL};
	static const char *const rst[] = {"subtasks", NULL};
	static const char *const ini[] = {"vertex", "parallelism", "inputs", NULL};
	const char *what = ckpt_event_type_name(ev->type);
	const unsigned char *k, *start = s->p;
	size_t kl;
	unsigned mask = 0, need;
	int first = 1, r, i;

	while ((r = ckpt_jscan_members(s, &first, &k, &kl)) > 0) {
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
		return ckpt_jscan_fail(s, start, "%s: missing \"%s\"", what, names[i]);
	}
	return 0;
}

/* Turn the arena offsets get_string left into pointers, now that the arena stays put. */
static void
resolve(struct ckpt_evparser *ps, const char **p)
{
	if (*p != NULL)
		*p = ps->arena.p + ((uintptr_t)*p - 1);
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
	ps->arena.len = 0;
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
payload(struct ckpt_jscan *s, struct ckpt_event *ev)
{
	ckpt_jscan_ws(s);
	if (s->p >= s->end || *s->p != '{')
		return ckpt_jscan_fail(s, s->p, "the payload must be a JSON object");
	if (payload_members(s, ev) < 0)
		return -1;
	return 0;
}

int
ckpt_evparser_decode(struct ckpt_evparser *p, uint32_t type, const void *buf, size_t len,
		     struct ckpt_event *ev, const char **at, struct ckpt_err *e)
{
	struct ckpt_jscan s = {.p = buf, .end = (const unsigned char *)buf + len, .e = e, .arg = p};

	reset_event(p, ev, type);
	if (ckpt_event_type_name(type) == NULL) {
		s.at = s.p;
		ckpt_err_set(e, CKPT_ERR_INPUT, "", "unknown record type %u", type);
		goto fail;
	}
	if (payload(&s, ev) < 0)
		goto fail;
	ckpt_jscan_ws(&s);
	if (s.p != s.end) {
		ckpt_jscan_fail(&s, s.p, "end of payload expected after the object");
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

/* The "type" member of an event line: a name or a numeric id. */
static int
line_type(struct ckpt_jscan *s, uint32_t *type)
{
	const unsigned char *at, *raw;
	size_t len;
	uint64_t v;
	int isint;

	ckpt_jscan_ws(s);
	at = s->p;
	if (s->p < s->end && *s->p == '"') {
		if (ckpt_jscan_string(s, &raw, &len, NULL, NULL) < 0)
			return -1;
		if ((*type = event_type_parse((const char *)raw, len)) == 0)
			return ckpt_jscan_fail(s, at, "unknown event type \"%.*s\"", (int)(len > 64 ? 64 : len),
					       (const char *)raw);
		return 0;
	}
	if (s->p < s->end && *s->p >= '0' && *s->p <= '9') {
		if (ckpt_jscan_number(s, &isint, &v) < 0)
			return -1;
		if (!isint || ckpt_event_type_name(v > 3 ? 0 : (uint32_t)v) == NULL)
			return ckpt_jscan_fail(s, at, "unknown event type %.*s", (int)(s->p - at), (const char *)at);
		*type = (uint32_t)v;
		return 0;
	}
	return ckpt_jscan_fail(s, at, "\"type\" must be an event type name or id");
}

int
ckpt_evparser_line(struct ckpt_evparser *p, const char *line, size_t len, struct ckpt_event *ev,
		   const char **at, struct ckpt_err *e)
{
	static const char *const keys[] = {"type", "payload", NULL};
	struct ckpt_jscan s = {.p = (const unsigned char *)line, .end = (const unsigned char *)line + len,
			       .e = e, .arg = p};
	const unsigned char *k, *pl = NULL, *plend = NULL, *start;
	size_t kl;
	uint32_t type = 0;
	unsigned mask = 0;
	int first = 1, r, i, decoded = 0;

	ckpt_jscan_ws(&s);
	start = s.p;
	if (s.p >= s.end || *s.p != '{') {
		ckpt_jscan_fail(&s, s.p, "an event must be an object");
		goto fail;
	}
	while ((r = ckpt_jscan_members(&s, &first, &k, &kl)) > 0) {
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
			if ((decoded ? payload(&s, ev) : ckpt_jscan_value(&s, 1)) < 0)
				goto fail;
			plend = s.p;
		}
	}
	ckpt_jscan_ws(&s);
	if (r < 0 ||
	    (r == 0 && s.p != s.end && ckpt_jscan_fail(&s, s.p, "end of line expected after the event") < 0))
		goto fail;
	if (mask != 3) {
		ckpt_jscan_fail(&s, start, "event: missing \"%s\"", mask & 1 ? "payload" : "type");
		goto fail;
	}
	if (!decoded) {
		reset_event(p, ev, type);
		s.p = pl;
		s.end = plend;
		if (payload(&s, ev) < 0)
			goto fail;
	}
	if (ckpt_jscan_minify(&s, pl, plend, &p->min) < 0)
		goto fail;
	resolve_all(p, ev);
	ev->payload = (const unsigned char *)p->min.p;
	ev->len = p->min.len;
	return 0;
fail:
	if (at)
		*at = (const char *)s.at;
	return -1;
}

int
ckpt_event_print(FILE *f, const struct ckpt_event *ev)
{
	struct ckpt_minify m = {0};
	char buf[4096];
	const char *name = ckpt_event_type_name(ev->type);

	if (name == NULL || fprintf(f, "{\"type\":\"%s\",\"payload\":", name) < 0)
		return -1;
	for (size_t at = 0; at < ev->len; at += sizeof buf) {
		size_t n = ev->len - at < sizeof buf ? ev->len - at : sizeof buf;

		n = ckpt_minify_chunk(&m, buf, ev->payload + at, n);
		if (fwrite(buf, 1, n, f) != n)
			return -1;
	}
	return fputs("}\n", f) == EOF ? -1 : 0;
}
