/* oprows.c: ckpt-merge --rows and --clear on operator state (list, union and broadcast state): per
 * subtask, each state the rows name holds exactly their elements (broadcast: entries), encoded by
 * the state's serializers, and each handle holding one that changed is written anew as Flink's
 * DefaultOperatorStateBackendSnapshotStrategy writes it (ckpt-flink(5), STATE FILES). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readers.h"

static const char *const mode_byte[] = {"SPLIT_DISTRIBUTE", "UNION", "BROADCAST"}; /* OperatorStateHandle.Mode */
static const char *const mode_row[] = {"list", "union", "broadcast"};                 /* as -R names them */

/* One element of a state in a handle as read: its bytes (a broadcast state's map whole) and its
 * typed form as -R prints it (broadcast: the entries, [{key, value}]; NULL when not typed). */
struct hel {
	char *state;
	size_t idx;
	unsigned char *p;
	size_t n;
	json_t *typed;
};

/* A managed operator state handle of a subtask holding a state the rows write. */
struct hand {
	size_t di;                   /* its opdata */
	const struct ckpt_operator *op;
	const struct ckpt_subtask *st;
	struct ckpt_fstate_header h; /* its serialization proxy */
	unsigned char *hdr;          /* and that header's bytes */
	struct hel *el;
	size_t nel, cap;
	int rewrite;
};

/* A list element or broadcast entry written: bytes [off, off + n) of its subtask's buffer (an
 * entry's key its first kn), from the row of line. */
struct nel {
	size_t off, n, kn, line;
};

/* What one subtask of a state gets. */
struct nsub {
	struct ckpt_bytebuf b;
	struct nel *el;
	size_t nel, cap;
	size_t whole;    /* the line of an untyped broadcast row: b is the map whole (0: none) */
	long hand;       /* its handle in hands, -1: it holds the state in none */
	unsigned char *map; /* broadcast: i32 count and the entries, as written */
	size_t mapn;
};

/* One state written. */
struct tgt {
	const struct ckpt_foprows_state *in; /* NULL: cleared */
	const char *name;
	const struct ckpt_operator *op;
	const struct ckpt_fstate_meta *m;
	int mode, changed;
	struct nsub *sub; /* by subtask index, op->parallelism of them */
	struct ckpt_fjava *java; /* a list of JavaSerializer values: its own, which its rows are written by */
};

struct ctx {
	const struct ckpt_foprows_in *in;
	struct ckpt_snapshot *s;
	const unsigned char *buf;
	const struct ckpt_fmeta_spans *sp;
	struct ckpt_fstate_backing_data *b;
	struct hand *hands;
	size_t nhands, hcap;
	struct tgt *t;
	size_t nt, tcap;
	json_t *names;    /* the files written */
	struct ckpt_err *e;
	/* the row being read */
	struct tgt *x;
	char why[200];
};

const char *
ckpt_foprows_cls(const struct ckpt_fser *t, char *buf, size_t n)
{
	const char *c = t && t->cls ? t->cls : "?", *dot = strrchr(c, '.');
	size_t len;

	c = dot ? dot + 1 : c;
	len = strcspn(c, "$");
	if (len > 18 && strncmp(c + len - 18, "SerializerSnapshot", 18) == 0)
		len -= 8;
	snprintf(buf, n, "%.*s", (int)len, c);
	return buf;
}

static int
line_fail(struct ctx *c, size_t line, enum ckpt_errkind kind, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int
line_fail(struct ctx *c, size_t line, enum ckpt_errkind kind, const char *fmt, ...)
{
	char where[512];
	va_list ap;

	snprintf(where, sizeof where, "%s:%zu", c->in->name, line);
	va_start(ap, fmt);
	ckpt_err_vset(c->e, kind, where, fmt, ap);
	va_end(ap);
	return -1;
}

/* ------------------------------------------------------------ the handles, read */

static int
hel_op(void *arg, const char *state, size_t idx, const unsigned char *p, size_t n, json_t *typed)
{
	struct ctx *c = arg;
	struct hand *h = &c->hands[c->nhands - 1];
	struct hel *x;

	if (ckpt_grow(&h->el, &h->cap, h->nel + 1, sizeof *h->el, 16, c->e) < 0) {
		json_decref(typed);
		return -1;
	}
	x = &h->el[h->nel];
	*x = (struct hel){.idx = idx, .n = n, .typed = typed};
	if ((x->state = ckpt_strdup(state, c->e)) == NULL || (x->p = malloc(n + 1)) == NULL) {
		int had = x->state != NULL;

		free(x->state);
		json_decref(typed);
		return had ? ckpt_err_nomem(c->e, "") : -1;
	}
	memcpy(x->p, p, n);
	h->nel++;
	return 0;
}

/* Handle j of subtask st read: its header, its bytes, every element of every state. */
static int
read_hand(struct ctx *c, struct hand *h, const struct ckpt_handle *hd)
{
	struct ckpt_fstate_sink k = {.op = hel_op, .arg = c, .part = 1};
	struct ckpt_fstate_ctx x = {.b = c->b, .op = h->op, .st = h->st, .h = hd, .k = &k, .e = c->e};
	struct ckpt_fsrc src = {.fd = -1};
	int fd = -1, r, rc = -1;

	snprintf(x.where, sizeof x.where, "%s", c->b->meta);
	if (ckpt_fstate_open_bytes(&x, &src, &fd) < 0 || (r = ckpt_fstate_op_header(&src, &h->h)) < 0)
		goto out;
	if (r > 0 || h->h.stopped) {
		ckpt_err_set(c->e, CKPT_ERR_REFUSED, c->b->meta, "operator %s subtask %u: its operator state header "
			     "cannot be read: %s", h->op->id, h->st->index, h->h.stop);
		goto out;
	}
	if ((h->hdr = malloc(h->h.end + 1)) == NULL) {
		ckpt_err_nomem(c->e, "");
		goto out;
	}
	if (ckpt_fsrc_seek(&src, 0, 0) < 0 || ckpt_fsrc_read(&src, h->hdr, h->h.end, "operator state header") < 0)
		goto out;
	rc = ckpt_fstate_read_operator(&x, 1);
out:
	ckpt_fsrc_release(&src);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Does handle hd name state name? */
static int
names(const struct ckpt_handle *hd, const char *name)
{
	const json_t *v;
	size_t i;

	if (strcmp(hd->scope, "managed_operator") != 0)
		return 0;
	json_array_foreach(json_object_get(hd->detail, "states"), i, v)
		if (strcmp(json_string_value(json_object_get(v, "name")), name) == 0)
			return 1;
	return 0;
}

/* The handle j of subtask st of op, read once: its index in hands, or -1. */
static long
hand_of(struct ctx *c, const struct ckpt_operator *op, const struct ckpt_subtask *st, size_t j, const char *state)
{
	size_t k = (size_t)(op - c->s->ops), di = 0;

	for (size_t i = 0; i < c->nhands; i++)
		if (c->hands[i].st == st && c->sp->opdata[c->hands[i].di].handle == j)
			return (long)i;
	while (di < c->sp->nopdata && !(c->sp->opdata[di].op == k && c->sp->opdata[di].subtask == st->index &&
					 c->sp->opdata[di].handle == j))
		di++;
	if (di == c->sp->nopdata)
		return ckpt_err_set(c->e, CKPT_ERR_REFUSED, c->b->meta, "operator %s subtask %u: operator state %s is "
				    "in a file-merging segment, which --rows does not write yet", op->id, st->index, state);
	if (ckpt_grow(&c->hands, &c->hcap, c->nhands + 1, sizeof *c->hands, 8, c->e) < 0)
		return -1;
	c->hands[c->nhands] = (struct hand){.di = di, .op = op, .st = st};
	c->nhands++;
	return read_hand(c, &c->hands[c->nhands - 1], &st->handles[j]) < 0 ? -1 : (long)c->nhands - 1;
}

/* ------------------------------------------------------------ the states written */

static int
add_tgt(struct ctx *c, const struct ckpt_operator *op, const char *name, const struct ckpt_foprows_state *in)
{
	struct tgt *t;

	for (size_t i = 0; i < c->nt; i++)
		if (c->t[i].op == op && strcmp(c->t[i].name, name) == 0) {
			c->t[i].in = c->t[i].in ? c->t[i].in : in; /* --clear and rows: the rows */
			return 0;
		}
	if (ckpt_grow(&c->t, &c->tcap, c->nt + 1, sizeof *c->t, 8, c->e) < 0)
		return -1;
	t = &c->t[c->nt];
	*t = (struct tgt){.in = in, .name = name, .op = op};
	if ((t->sub = ckpt_calloc(op->parallelism + 1, sizeof *t->sub, c->e)) == NULL)
		return -1;
	for (uint32_t i = 0; i < op->parallelism; i++)
		t->sub[i].hand = -1;
	c->nt++;
	return 0;
}

/* The states the rows name, and those --clear names where an operator holds them. */
static int
targets(struct ctx *c)
{
	for (size_t i = 0; i < c->in->n; i++) {
		size_t k = 0;

		while (k < c->s->nops && strcmp(c->s->ops[k].id, c->in->st[i].op) != 0)
			k++;
		if (k < c->s->nops && add_tgt(c, &c->s->ops[k], c->in->st[i].state, &c->in->st[i]) < 0)
			return -1;
	}
	for (size_t i = 0; i < c->in->nclear; i++)
		for (size_t k = 0; k < c->s->nops; k++) {
			const struct ckpt_operator *op = &c->s->ops[k];
			int has = 0;

			for (size_t j = 0; j < op->nsubtasks; j++)
				for (size_t h = 0; h < op->subtasks[j].nhandles; h++)
					has |= names(&op->subtasks[j].handles[h], c->in->clear[i]);
			if (has && add_tgt(c, op, c->in->clear[i], NULL) < 0)
				return -1;
			c->in->cleared[i] |= has;
		}
	return 0;
}

/* The handles holding t, one a subtask, read; t's meta info and mode from the first. */
static int
holders(struct ctx *c, struct tgt *t)
{
	const struct ckpt_operator *op = t->op;

	for (size_t i = 0; i < op->nsubtasks; i++) {
		const struct ckpt_subtask *st = &op->subtasks[i];

		for (size_t j = 0; j < st->nhandles; j++) {
			long h;

			if (!names(&st->handles[j], t->name))
				continue;
			if (st->index >= op->parallelism)
				return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->b->meta, "operator %s: subtask %u beyond its "
						    "parallelism %u", op->id, st->index, op->parallelism);
			if (t->sub[st->index].hand >= 0)
				return ckpt_err_set(c->e, CKPT_ERR_REFUSED, c->b->meta, "operator %s subtask %u: two handles "
						    "hold operator state %s", op->id, st->index, t->name);
			if ((h = hand_of(c, op, st, j, t->name)) < 0)
				return -1;
			t->sub[st->index].hand = h;
			if (t->m == NULL && (t->m = ckpt_fstate_meta_named(&c->hands[h].h, t->name)) == NULL)
				return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->b->meta, "operator %s subtask %u: operator state "
						    "%s is not in its header", op->id, st->index, t->name);
		}
	}
	if (t->m == NULL)
		return line_fail(c, t->in->line, CKPT_ERR_INPUT, "operator %s has no operator state %s", op->id, t->name);
	for (t->mode = 0; t->mode < 2 && strcmp(t->m->mode ? t->m->mode : "", mode_byte[t->mode]) != 0;)
		t->mode++;
	t->mode = t->m->type == 2 ? 2 : t->mode;
	return 0;
}

/* ------------------------------------------------------------ rows into elements */

/* The elements of a list or union state of JavaSerializer values, for its rows to be written by
 * (as rowsin.c's java_templates collects a keyed state's): gathered once, from every subtask. */
static int
java_elements(struct ctx *c, struct tgt *t)
{
	if (t->java || t->mode == 2 || t->m->value == NULL || t->m->value->kind != FSER_JAVA)
		return 0;
	if ((t->java = ckpt_fjava_new(c->e)) == NULL)
		return -1;
	for (uint32_t s = 0; s < t->op->parallelism; s++) {
		const struct hand *h = t->sub[s].hand >= 0 ? &c->hands[t->sub[s].hand] : NULL;

		for (size_t i = 0; h && i < h->nel; i++)
			if (strcmp(h->el[i].state, t->name) == 0 && h->el[i].typed &&
			    ckpt_fjava_add(t->java, h->el[i].p, h->el[i].n, h->el[i].typed, c->e) < 0)
				return -1;
	}
	return 0;
}

/* v through t appended to b: 0; 1 when ckpt cannot write it (c->why says why); -1 the row's error. */
static int
enc(struct ctx *c, const struct ckpt_fser *t, const json_t *v, const char *what, size_t line, struct ckpt_bytebuf *b)
{
	struct ckpt_fenc f = {.why = c->why, .whyn = sizeof c->why, .value = 1, .more = ckpt_fenc_more};
	char cls[128];
	int rc;

	c->why[0] = '\0';
	if (java_elements(c, c->x) < 0)
		return -1;
	f.java = t == c->x->m->value ? c->x->java : NULL;
	if (v == NULL)
		return line_fail(c, line, CKPT_ERR_INPUT, "state %s: the row has no %s", c->x->name, what);
	if (t == NULL || ckpt_fstate_is_split(c->x->name, t) || ckpt_fstate_legacy_kind(c->x->name, t)) {
		snprintf(c->why, sizeof c->why, "the serializer %s", ckpt_foprows_cls(t, cls, sizeof cls));
		return 1; /* a connector's: typed as its splits, not as its serializer writes them */
	}
	if (ckpt_fenc(t, v, &f, 0) == 0) {
		rc = ckpt_bytebuf_add(b, f.p, f.n, c->e);
		free(f.p);
		return rc;
	}
	free(f.p);
	if (f.cannot)
		return 1;
	return line_fail(c, line, CKPT_ERR_INPUT, "state %s: the %s does not fit its serializer %s: expected %s",
			 c->x->name, what, ckpt_foprows_cls(t, cls, sizeof cls), c->why);
}

/* Broadcast entry i of map p[0, n) (key at *k, its value after, *end past it), through m's serializers. */
static int
map_entry(struct ctx *c, const struct ckpt_fstate_meta *m, const unsigned char *p, size_t n, size_t i, size_t *k,
	  size_t *mid, size_t *end)
{
	struct ckpt_fsrc s;
	int32_t cnt, hash;
	int hashed, rc = -1;

	ckpt_fsrc_mem(&s, p, n, c->b->meta, c->e);
	if (ckpt_fsrc_i32(&s, &cnt, "broadcast state size") < 0)
		goto out;
	for (size_t j = 0; j <= i; j++) {
		json_t *v = NULL;

		*k = ckpt_fsrc_tell(&s);
		if (ckpt_fser_value(m->key, &s, &v, &hash, &hashed) < 0)
			goto out;
		json_decref(v);
		v = NULL;
		*mid = ckpt_fsrc_tell(&s);
		if (ckpt_fser_value(m->value, &s, &v, &hash, &hashed) < 0)
			goto out;
		json_decref(v);
		*end = ckpt_fsrc_tell(&s);
	}
	rc = 0;
out:
	ckpt_fsrc_release(&s);
	return rc;
}

/* A row ckpt cannot encode: the bytes of an element (broadcast: entry) of the state that -R prints
 * as it (value v, key k), in any subtask, appended to b (*kn: the key's length); else refused. */
static int
as_held(struct ctx *c, const json_t *k, const json_t *v, size_t line, struct ckpt_bytebuf *b, size_t *kn)
{
	struct tgt *t = c->x;

	for (uint32_t s = 0; s < t->op->parallelism; s++) {
		struct hand *h = t->sub[s].hand >= 0 ? &c->hands[t->sub[s].hand] : NULL;

		for (size_t i = 0; h && i < h->nel; i++) {
			const struct hel *x = &h->el[i];
			const json_t *e;
			size_t j, a, mid, end;

			if (strcmp(x->state, t->name) != 0 || x->typed == NULL)
				continue;
			if (t->mode != 2 && json_equal(x->typed, v))
				return ckpt_bytebuf_add(b, x->p, x->n, c->e);
			json_array_foreach(t->mode == 2 ? x->typed : NULL, j, e)
				if (json_equal(json_object_get(e, "key"), k) && json_equal(json_object_get(e, "value"), v)) {
					if (map_entry(c, t->m, x->p, x->n, j, &a, &mid, &end) < 0)
						return -1;
					*kn = mid - a;
					return ckpt_bytebuf_add(b, x->p + a, end - a, c->e);
				}
		}
	}
	return line_fail(c, line, CKPT_ERR_INPUT, "state %s: ckpt cannot write values of %s: it takes a row of it only "
			 "as the state holds it", t->name, c->why);
}

/* The row's subtask: its nsub, or NULL with the row's error. */
static struct nsub *
row_subtask(struct ctx *c, const json_t *row, size_t line)
{
	struct tgt *t = c->x;
	const json_t *s = json_object_get(row, "subtask"), *kind = json_object_get(row, "kind");
	json_int_t n = json_integer_value(s);

	if (!json_is_integer(s))
		line_fail(c, line, CKPT_ERR_INPUT, "state %s: a row of operator state names its subtask (an integer)",
			  t->name);
	else if (n < 0 || n >= (json_int_t)t->op->parallelism)
		line_fail(c, line, CKPT_ERR_INPUT, "operator %s has no subtask %lld (its parallelism is %u)", t->op->id,
			  (long long)n, t->op->parallelism);
	else if (t->sub[n].hand < 0)
		line_fail(c, line, CKPT_ERR_INPUT, "operator %s subtask %lld holds no operator state %s to write into "
			  "(finished, or the state was never registered there)", t->op->id, (long long)n, t->name);
	else if (json_is_string(kind) && strcmp(json_string_value(kind), mode_row[t->mode]) != 0)
		line_fail(c, line, CKPT_ERR_INPUT, "state %s: the row's kind is %s, the state's %s", t->name,
			  json_string_value(kind), mode_row[t->mode]);
	else
		return &t->sub[n];
	return NULL;
}

/* A broadcast row's entry into u: its key and value; a second row of one key refused. */
static int
entry_row(struct ctx *c, struct nsub *u, const json_t *row, size_t line)
{
	const json_t *k = json_object_get(row, "user_key"), *v = json_object_get(row, "value");
	size_t at = u->b.len, kn = 0;
	int r;

	if (u->whole)
		return line_fail(c, line, CKPT_ERR_INPUT, "state %s: the untyped row of line %zu holds the subtask's map "
				 "whole", c->x->name, u->whole);
	if ((r = enc(c, c->x->m->key, k, "user_key", line, &u->b)) == 0) {
		kn = u->b.len - at;
		r = enc(c, c->x->m->value, v, "value", line, &u->b);
	}
	if (r > 0) {
		u->b.len = at;
		if (v == NULL)
			return line_fail(c, line, CKPT_ERR_INPUT, "state %s: the row has no value", c->x->name);
		r = as_held(c, k, v, line, &u->b, &kn);
	}
	if (r < 0)
		return -1;
	for (size_t i = 0; i < u->nel; i++)
		if (u->el[i].kn == kn && memcmp(u->b.p + u->el[i].off, u->b.p + at, kn) == 0)
			return line_fail(c, line, CKPT_ERR_INPUT, "state %s: a second row of the key of line %zu",
					 c->x->name, u->el[i].line);
	if (ckpt_grow(&u->el, &u->cap, u->nel + 1, sizeof *u->el, 16, c->e) < 0)
		return -1;
	u->el[u->nel++] = (struct nel){.off = at, .n = u->b.len - at, .kn = kn, .line = line};
	return 0;
}

/* A list row's element into u (an untyped row's: its bytes as given). */
static int
element_row(struct ctx *c, struct nsub *u, const json_t *row, size_t line)
{
	const json_t *v = json_object_get(row, "value");
	size_t at = u->b.len, kn = 0;
	unsigned char *p = NULL;
	size_t n = 0;
	int r;

	if (json_object_get(row, "untyped")) {
		if (ckpt_entry_from_json(v, &p, &n, NULL) < 0)
			return line_fail(c, line, CKPT_ERR_INPUT, "state %s: an untyped row's value is an entry (a string "
					 "or {\"base64\"})", c->x->name);
		r = ckpt_bytebuf_add(&u->b, p, n, c->e);
		free(p);
	} else if ((r = enc(c, c->x->m->value, v, "value", line, &u->b)) > 0) {
		r = as_held(c, NULL, v, line, &u->b, &kn);
	}
	if (r < 0 || ckpt_grow(&u->el, &u->cap, u->nel + 1, sizeof *u->el, 16, c->e) < 0)
		return -1;
	u->el[u->nel++] = (struct nel){.off = at, .n = u->b.len - at, .line = line};
	return 0;
}

static int
one_row(void *arg, char *text, size_t line)
{
	struct ctx *c = arg;
	json_error_t je;
	json_t *row = json_loads(text, JSON_ALLOW_NUL, &je);
	struct nsub *u;
	int rc = -1;

	if (row == NULL) {
		char where[512];

		snprintf(where, sizeof where, "%s:%zu:%d", c->in->name, line, je.column > 0 ? je.column : 1);
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, where, "%s", je.text);
	}
	if ((u = row_subtask(c, row, line)) == NULL)
		goto out;
	if (c->x->mode == 2 && json_object_get(row, "untyped")) { /* the map whole, as -R gave it */
		unsigned char *p = NULL;
		size_t n = 0;

		if (u->nel || u->whole)
			line_fail(c, line, CKPT_ERR_INPUT, "state %s: an untyped row holds the subtask's map whole: "
				  "no other row of it", c->x->name);
		else if (ckpt_entry_from_json(json_object_get(row, "value"), &p, &n, NULL) < 0)
			line_fail(c, line, CKPT_ERR_INPUT, "state %s: an untyped row's value is an entry (a string or "
				  "{\"base64\"})", c->x->name);
		else if (ckpt_bytebuf_add(&u->b, p, n, c->e) == 0)
			u->whole = line, rc = 0;
		free(p);
		goto out;
	}
	rc = c->x->mode == 2 ? entry_row(c, u, row, line) : element_row(c, u, row, line);
out:
	json_decref(row);
	return rc;
}

/* ------------------------------------------------------------ what changed */

/* Subtask u's broadcast map: its i32 size, then the entries in the rows' order. */
static int
make_map(struct ctx *c, struct nsub *u)
{
	size_t n = u->whole ? u->b.len : 4 + u->b.len;

	if ((u->map = malloc(n + 1)) == NULL)
		return ckpt_err_nomem(c->e, "");
	u->mapn = n;
	if (u->whole) {
		memcpy(u->map, u->b.p, n);
		return 0;
	}
	ckpt_store_be(u->map, u->nel, 4);
	if (u->b.len)
		memcpy(u->map + 4, u->b.p, u->b.len);
	return 0;
}

/* Do subtask u's new elements differ from those its handle holds of t? */
static int
differs(struct ctx *c, const struct tgt *t, const struct nsub *u)
{
	const struct hand *h = &c->hands[u->hand];
	size_t k = 0;

	for (size_t i = 0; i < h->nel; i++) {
		const struct hel *x = &h->el[i];

		if (strcmp(x->state, t->name) != 0)
			continue;
		if (t->mode == 2 ? x->n != u->mapn || memcmp(x->p, u->map, x->n) != 0 :
		    k >= u->nel || x->idx != k || x->n != u->el[k].n || memcmp(x->p, u->b.p + u->el[k].off, x->n) != 0)
			return 1;
		k++;
	}
	return t->mode == 2 ? k != 1 : k != u->nel;
}

/* Is entry a of u among the entries of v (key and value alike)? */
static int
has_entry(const struct nsub *u, size_t a, const struct nsub *v)
{
	for (size_t i = 0; i < v->nel; i++)
		if (v->el[i].n == u->el[a].n && memcmp(v->b.p + v->el[i].off, u->b.p + u->el[a].off, u->el[a].n) == 0)
			return 1;
	return 0;
}

/* A broadcast state written is one map on every subtask (Flink restores subtask i's copy on i). */
static int
same_maps(struct ctx *c, struct tgt *t)
{
	const struct nsub *first = NULL;
	uint32_t f = 0;

	for (uint32_t s = 0; s < t->op->parallelism; s++) {
		const struct nsub *u = &t->sub[s];
		size_t bad = 0;

		if (u->hand < 0)
			continue;
		if (first == NULL) {
			first = u;
			f = s;
			continue;
		}
		if (u->whole || first->whole)
			bad = u->mapn != first->mapn || memcmp(u->map, first->map, u->mapn) != 0 ? (u->whole ? u->whole : first->whole) : 0;
		for (size_t i = 0; !bad && !u->whole && !first->whole && i < u->nel; i++)
			bad = has_entry(u, i, first) ? 0 : u->el[i].line;
		for (size_t i = 0; !bad && !u->whole && !first->whole && i < first->nel; i++)
			bad = has_entry(first, i, u) ? 0 : first->el[i].line;
		if (bad)
			return line_fail(c, bad, CKPT_ERR_INPUT, "state %s: subtask %u's entries differ from subtask %u's (a "
					 "broadcast state is one map, the same on every subtask)", t->name, s, f);
	}
	return 0;
}

/* t's rows read into its subtasks (none: cleared), checked, compared with what the handles hold. */
static int
fill(struct ctx *c, struct tgt *t)
{
	c->x = t;
	if (t->in && c->in->each(c->in->arg, t->in->rows, one_row, c, c->e) < 0)
		return -1;
	for (uint32_t s = 0; s < t->op->parallelism; s++) {
		struct nsub *u = &t->sub[s];

		if (u->hand < 0)
			continue;
		if (t->mode == 2 && make_map(c, u) < 0)
			return -1;
		t->changed |= differs(c, t, u);
	}
	if (t->changed && t->mode == 2 && same_maps(c, t) < 0)
		return -1;
	for (uint32_t s = 0; t->changed && s < t->op->parallelism; s++)
		if (t->sub[s].hand >= 0)
			c->hands[t->sub[s].hand].rewrite = 1;
	return 0;
}

/* ------------------------------------------------------------ handles written */

/* The new elements of state name in handle hi, when the rows write it there (NULL: its own). */
static const struct nsub *
written(const struct ctx *c, size_t hi, const char *name)
{
	for (size_t i = 0; i < c->nt; i++)
		for (uint32_t s = 0; strcmp(c->t[i].name, name) == 0 && s < c->t[i].op->parallelism; s++)
			if (c->t[i].sub[s].hand == (long)hi)
				return &c->t[i].sub[s];
	return NULL;
}

/* Handle hi's data after its header: each state of the header in its order (the list states', then
 * the broadcast states', as Flink writes and restores them), each element's offset into offs[state]. */
static int
w_data(struct ctx *c, size_t hi, struct ckpt_bytebuf *d, struct ckpt_bytebuf *offs)
{
	const struct hand *h = &c->hands[hi];

	for (size_t i = 0; i < h->h.n; i++) {
		const char *name = h->h.m[i].name;
		const struct nsub *u = written(c, hi, name);

		for (size_t k = 0; u && k < (h->h.m[i].type == 2 ? 1 : u->nel); k++)
			if (ckpt_bytebuf_be(&offs[i], d->len, 8, c->e) < 0 ||
			    (h->h.m[i].type == 2 ? ckpt_bytebuf_add(d, u->map, u->mapn, c->e) :
			     ckpt_bytebuf_add(d, u->b.p + u->el[k].off, u->el[k].n, c->e)) < 0)
				return -1;
		for (size_t idx = 0; !u; idx++) { /* its own, in their order */
			size_t j = 0;

			while (j < h->nel && !(h->el[j].idx == idx && strcmp(h->el[j].state, name) == 0))
				j++;
			if (j == h->nel)
				break;
			if (ckpt_bytebuf_be(&offs[i], d->len, 8, c->e) < 0 ||
			    ckpt_bytebuf_add(d, h->el[j].p, h->el[j].n, c->e) < 0)
				return -1;
		}
	}
	return 0;
}

/* Handle hi's states in the _metadata (OperatorStateHandle's map, in its order: name, mode, offsets)
 * with the new offsets into b; *end: where its data handle starts. */
static int
w_states(struct ctx *c, size_t hi, const struct ckpt_bytebuf *offs, struct ckpt_bytebuf *b, size_t *end)
{
	const struct hand *h = &c->hands[hi];
	const struct ckpt_fmeta_opdata *d = &c->sp->opdata[h->di];
	const unsigned char *q = c->buf + d->head;
	size_t pos = 4, ns = ckpt_load_be(q, 4);

	if (ckpt_bytebuf_add(b, q, 4, c->e) < 0)
		return -1;
	for (size_t i = 0; i < ns; i++) {
		size_t nl = ckpt_load_be(q + pos, 2), no = ckpt_load_be(q + pos + 3 + nl, 4), k = 0;
		const char *name = json_string_value(json_object_get(json_array_get(d->states, i), "name"));

		while (k < h->h.n && strcmp(h->h.m[k].name, name) != 0)
			k++;
		if (k == h->h.n)
			return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->b->meta, "operator %s subtask %u: operator state %s "
					    "is not in its header", h->op->id, h->st->index, name);
		if (ckpt_bytebuf_add(b, q + pos, 3 + nl, c->e) < 0 || ckpt_bytebuf_be(b, offs[k].len / 8, 4, c->e) < 0 ||
		    ckpt_bytebuf_add(b, offs[k].p, offs[k].len, c->e) < 0)
			return -1;
		pos += 7 + nl + 8 * no;
	}
	*end = d->head + pos;
	return 0;
}

/* The stream (header, compression off, then data) written into dir as operator-OPID-SUBTASK, named
 * in b as Flink's relative file handle (tag 6: the name, the size). */
static int
w_file(struct ctx *c, size_t hi, const struct ckpt_bytebuf *data, struct ckpt_bytebuf *b)
{
	const struct hand *h = &c->hands[hi];
	char prefix[80];

	snprintf(prefix, sizeof prefix, "operator-%s", h->op->id);
	return ckpt_fmeta_write_relative(c->sp, h->di, c->in->dir, prefix, h->st->index, &c->names, data, b, c->e);
}

/* Handle hi written anew: its stream, and the _metadata's bytes from its state count to the end of
 * its data handle as a splice of rk (the data inline as it was, or in a new file). */
static int
rewrite(struct ctx *c, size_t hi, struct ckpt_flink_rekey *rk)
{
	const struct hand *h = &c->hands[hi];
	const struct ckpt_fmeta_opdata *d = &c->sp->opdata[h->di];
	struct ckpt_bytebuf *offs = ckpt_calloc(h->h.n + 1, sizeof *offs, c->e), data = {0}, b = {0};
	size_t end = 0;
	int rc = -1;

	if (offs == NULL || ckpt_bytebuf_add(&data, h->hdr, h->h.end, c->e) < 0)
		goto out;
	if (h->h.version == 6)
		data.p[4] = 0; /* the proxy's compression flag: the elements are written plain */
	if (w_data(c, hi, &data, offs) < 0 || w_states(c, hi, offs, &b, &end) < 0 ||
	    (d->file ? w_file(c, hi, &data, &b) < 0 :
	     ckpt_bytebuf_add(&b, c->buf + end, d->at - 4 - end, c->e) < 0 || ckpt_bytebuf_be(&b, data.len, 4, c->e) < 0 ||
	     ckpt_bytebuf_add(&b, data.p, data.len, c->e) < 0))
		goto out;
	rk->splices[rk->nsplices++] = (struct ckpt_flink_splice){.at = d->head, .end = d->dend, .p = b.p, .n = b.len};
	b.p = NULL;
	rc = 0;
out:
	for (size_t i = 0; offs && i < h->h.n; i++)
		ckpt_bytebuf_release(&offs[i]);
	free(offs);
	ckpt_bytebuf_release(&data);
	ckpt_bytebuf_release(&b);
	return rc;
}

static void
release(struct ctx *c)
{
	for (size_t i = 0; i < c->nhands; i++) {
		struct hand *h = &c->hands[i];

		for (size_t j = 0; j < h->nel; j++) {
			free(h->el[j].state);
			free(h->el[j].p);
			json_decref(h->el[j].typed);
		}
		free(h->el);
		free(h->hdr);
		ckpt_fstate_header_release(&h->h);
	}
	for (size_t i = 0; i < c->nt; i++) {
		for (uint32_t s = 0; c->t[i].sub && s < c->t[i].op->parallelism; s++) {
			ckpt_bytebuf_release(&c->t[i].sub[s].b);
			free(c->t[i].sub[s].el);
			free(c->t[i].sub[s].map);
		}
		free(c->t[i].sub);
		ckpt_fjava_free(c->t[i].java);
	}
	free(c->hands);
	free(c->t);
	json_decref(c->names);
}

int
ckpt_foprows_run(const struct ckpt_foprows_in *in, struct ckpt_snapshot *s, const void *buf,
		 const struct ckpt_fmeta_spans *sp, struct ckpt_flink_rekey *rk, struct ckpt_err *e)
{
	struct ctx c = {.in = in, .s = s, .buf = buf, .sp = sp, .e = e};
	int rc = -1;

	if ((c.b = ckpt_fstate_backing(s, e)) == NULL || targets(&c) < 0)
		goto out;
	for (size_t i = 0; i < c.nt; i++) /* every state read and checked before anything is written */
		if (holders(&c, &c.t[i]) < 0 || fill(&c, &c.t[i]) < 0)
			goto out;
	for (size_t i = 0; i < c.nhands; i++)
		if (c.hands[i].rewrite && rewrite(&c, i, rk) < 0)
			goto out;
	rc = 0;
out:
	release(&c);
	return rc;
}
