/* rowsin.c: ckpt-merge --rows and --clear: the rows -R prints, read back (NDJSON, a line each), and
 * for each keyed state they name its entries replaced by theirs, encoded by the snapshot's own
 * serializers (encode.c) and written by regroup.c's writer at the key groups Flink computes; states
 * whose values ckpt cannot write, and operator state, taken only as they are. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readers.h"

struct rline {
	char *text;
	size_t line;
};

/* The rows of one state of one operator. */
struct rstate {
	char *op, *state;
	int keyed;      /* keyed rows (with a key group), else operator state's */
	struct rline *rows;
	size_t n, cap;
	int found;      /* its operator's keyed header holds it */
	int unchanged;  /* rows ckpt cannot write, equal to the state's own: the state kept as it is */
};

struct ckpt_flink_rows {
	char *name;
	struct rstate *st;
	size_t n, cap;
	char **clear;
	int *cleared;
	size_t nclear;
};

/* One entry made of a row. */
struct ent {
	const char *state;
	uint32_t kg;
	unsigned char *k, *v;
	size_t kn, vn, line, order;
	int list;
};

/* The error of the row of line line: "NAME:LINE: what". */
static int
row_fail(const struct ckpt_flink_rows *r, size_t line, struct ckpt_err *e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int
row_fail(const struct ckpt_flink_rows *r, size_t line, struct ckpt_err *e, const char *fmt, ...)
{
	char where[512], what[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	snprintf(where, sizeof where, "%s:%zu", r->name, line);
	return ckpt_err_set(e, CKPT_ERR_INPUT, where, "%s", what);
}

static struct rstate *
state_of(struct ckpt_flink_rows *r, const char *op, const char *state, int keyed, struct ckpt_err *e)
{
	struct rstate *x;

	for (size_t i = r->n; i-- > 0;) /* rows come a state at a time: the last one first */
		if (strcmp(r->st[i].op, op) == 0 && strcmp(r->st[i].state, state) == 0 && r->st[i].keyed == keyed)
			return &r->st[i];
	if (ckpt_grow(&r->st, &r->cap, r->n + 1, sizeof *r->st, 8, e) < 0)
		return NULL;
	x = &r->st[r->n];
	memset(x, 0, sizeof *x);
	if ((x->op = ckpt_strdup(op, e)) == NULL || (x->state = ckpt_strdup(state, e)) == NULL) {
		free(x->op);
		return NULL;
	}
	x->keyed = keyed;
	r->n++;
	return x;
}

/* One line: a row object naming its operator and state, kept as its text. */
static int
add_line(struct ckpt_flink_rows *r, char *text, size_t line, struct ckpt_err *e)
{
	json_error_t je;
	json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
	const char *op = json_string_value(json_object_get(v, "operator"));
	const char *st = json_string_value(json_object_get(v, "state"));
	struct rstate *x;
	int rc = -1;

	if (v == NULL) { /* where: NAME:LINE:COLUMN, as every JSON input's errors */
		char where[512];

		snprintf(where, sizeof where, "%s:%zu:%d", r->name, line, je.column > 0 ? je.column : 1);
		ckpt_err_set(e, CKPT_ERR_INPUT, where, "%s", je.text);
		goto out;
	}
	if (!json_is_object(v) || op == NULL || st == NULL) {
		row_fail(r, line, e, "not a row: an object with \"operator\" and \"state\" (as ckpt-inspect -R prints "
			 "them)");
		goto out;
	}
	if ((x = state_of(r, op, st, json_object_get(v, "key_group") != NULL, e)) == NULL ||
	    ckpt_grow(&x->rows, &x->cap, x->n + 1, sizeof *x->rows, 16, e) < 0)
		goto out;
	x->rows[x->n].text = text;
	x->rows[x->n++].line = line;
	rc = 0;
out:
	json_decref(v);
	return rc;
}

struct ckpt_flink_rows *
ckpt_flink_rows_read(FILE *f, const char *name, struct ckpt_err *e)
{
	struct ckpt_flink_rows *r = ckpt_calloc(1, sizeof *r, e);
	char *line = NULL;
	size_t cap = 0, no = 0;
	ssize_t n;

	if (r == NULL || (r->name = ckpt_strdup(name, e)) == NULL)
		goto fail;
	while ((n = getline(&line, &cap, f)) >= 0) {
		no++;
		if (strspn(line, " \t\r\n") == (size_t)n)
			continue;
		if (add_line(r, line, no, e) < 0)
			goto fail;
		line = NULL;
		cap = 0;
	}
	if (ferror(f)) {
		ckpt_err_sys(e, name, "read error");
		goto fail;
	}
	free(line);
	return r;
fail:
	free(line);
	ckpt_flink_rows_free(r);
	return NULL;
}

int
ckpt_flink_rows_clear(struct ckpt_flink_rows *r, const char *state, struct ckpt_err *e)
{
	size_t n = r->nclear;

	if (ckpt_grow(&r->clear, &n, r->nclear + 1, sizeof *r->clear, 4, e) < 0)
		return -1;
	n = r->nclear;
	if (ckpt_grow(&r->cleared, &n, r->nclear + 1, sizeof *r->cleared, 4, e) < 0 ||
	    (r->clear[r->nclear] = ckpt_strdup(state, e)) == NULL)
		return -1;
	r->cleared[r->nclear++] = 0;
	return 0;
}

void
ckpt_flink_rows_free(struct ckpt_flink_rows *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->n; i++) {
		for (size_t j = 0; j < r->st[i].n; j++)
			free(r->st[i].rows[j].text);
		free(r->st[i].rows);
		free(r->st[i].op);
		free(r->st[i].state);
	}
	for (size_t i = 0; i < r->nclear; i++)
		free(r->clear[i]);
	free(r->clear);
	free(r->cleared);
	free(r->st);
	free(r->name);
	free(r);
}

/* ------------------------------------------------------------ the hook regroup.c calls */

static int
touches(void *arg, const struct ckpt_operator *op)
{
	struct ckpt_flink_rows *r = arg;

	for (size_t i = 0; i < r->n; i++)
		if (r->st[i].keyed && strcmp(r->st[i].op, op->id) == 0)
			return 1;
	return r->nclear > 0;
}

static int
replaced(void *arg, const struct ckpt_operator *op, const char *state)
{
	struct ckpt_flink_rows *r = arg;

	for (size_t i = 0; i < r->nclear; i++)
		if (strcmp(r->clear[i], state) == 0)
			return 1;
	for (size_t i = 0; i < r->n; i++)
		if (r->st[i].keyed && !r->st[i].unchanged && strcmp(r->st[i].op, op->id) == 0 &&
		    strcmp(r->st[i].state, state) == 0)
			return 1;
	return 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A row in one form whatever its writer (member order, spacing, numbers): compact, keys sorted. */
static char *
normal(const char *text)
{
	json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	char *s = v ? json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) : NULL;

	json_decref(v);
	return s;
}

/* The rows -R prints of x's state (part 1 operator state, 2 keyed), normalised and sorted, into *out. */
static int
own_rows(struct flink_backing *b, const struct ckpt_operator *op, const struct rstate *x, char ***out, size_t *nout,
	 struct ckpt_err *e)
{
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0, cap = 0;
	FILE *f = open_memstream(&buf, &len);
	struct ckpt_jw *w = f ? ckpt_jw_new(f, 0, e) : NULL;
	int rc = w ? ckpt_fstate_rows_op(b, op, x->keyed ? 2 : 1, 0, 0, w, e) : -1;

	ckpt_jw_free(w);
	if (f)
		fclose(f);
	*out = NULL;
	*nout = 0;
	for (line = rc == 0 && buf ? strtok_r(buf, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
		json_t *v = json_loads(line, JSON_ALLOW_NUL, NULL);
		int mine = json_is_string(json_object_get(v, "state")) &&
			   strcmp(json_string_value(json_object_get(v, "state")), x->state) == 0;

		json_decref(v);
		if (!mine)
			continue;
		if (ckpt_grow(out, &cap, *nout + 1, sizeof **out, 64, e) < 0 || ((*out)[*nout] = normal(line)) == NULL) {
			rc = rc < 0 ? rc : ckpt_err_set(e, CKPT_ERR_NOMEM, "", "out of memory");
			break;
		}
		++*nout;
	}
	free(buf);
	if (rc == 0)
		qsort(*out, *nout, sizeof **out, cmp_str);
	return rc;
}

/* Do x's rows equal the state's own (in any order)?  *equal; *none when the state has no row. */
static int
same_rows(struct flink_backing *b, const struct ckpt_operator *op, const struct rstate *x, int *equal, int *none,
	  struct ckpt_err *e)
{
	char **own = NULL, **given = ckpt_calloc(x->n + 1, sizeof *given, e);
	size_t n = 0;
	int rc = -1;

	if (given == NULL || own_rows(b, op, x, &own, &n, e) < 0)
		goto out;
	for (size_t i = 0; i < x->n; i++)
		if ((given[i] = normal(x->rows[i].text)) == NULL) {
			ckpt_err_set(e, CKPT_ERR_NOMEM, "", "out of memory");
			goto out;
		}
	qsort(given, x->n, sizeof *given, cmp_str);
	*none = n == 0;
	*equal = n == x->n;
	for (size_t i = 0; *equal && i < n; i++)
		*equal = strcmp(own[i], given[i]) == 0;
	rc = 0;
out:
	for (size_t i = 0; own && i < n; i++)
		free(own[i]);
	for (size_t i = 0; given && i < x->n; i++)
		free(given[i]);
	free(own);
	free(given);
	return rc;
}

/* ------------------------------------------------------------ rows into entries */

struct enc {
	struct ckpt_flink_rows *r;
	const struct fheader *h;
	struct fmeta *m;
	struct rstate *x;
	const struct ckpt_operator *op;
	uint32_t maxp, prefix;
	struct ent *ents;
	size_t n, cap;
	size_t cannot_line; /* the first row of a value ckpt cannot write, 0: none */
	char cannot_why[200];
	struct ckpt_err *e;
};

/* The serializer's name for messages: its snapshot class without package, nesting or "Snapshot". */
static const char *
short_cls(const struct ckpt_fser *t, char *buf, size_t n)
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

/* v through t into b (a value: null strings, every kind); on a mismatch the row's error. */
static int
put_json(struct enc *x, const struct ckpt_fser *t, const json_t *v, struct ckpt_fenc *b, const char *what,
	 size_t line)
{
	char why[200], cls[128];

	why[0] = '\0';
	b->why = why;
	b->whyn = sizeof why;
	b->value = 1;
	b->cannot = 0;
	if (v == NULL)
		return row_fail(x->r, line, x->e, "state %s: the row has no %s", x->x->state, what);
	if (t == NULL || ckpt_fenc(t, v, b, 0) == 0)
		return t ? 0 : row_fail(x->r, line, x->e, "state %s: no serializer for its %s", x->x->state, what);
	if (b->cannot) {
		if (x->cannot_line == 0) {
			x->cannot_line = line;
			snprintf(x->cannot_why, sizeof x->cannot_why, "%s", why);
		}
		return 1;
	}
	return row_fail(x->r, line, x->e, "state %s: the %s does not fit its serializer %s: expected %s",
			x->x->state, what, short_cls(t, cls, sizeof cls), why);
}

/* CompositeKeySerializationUtils.writeVariableIntBytes of the length written since from. */
static int
length_suffix(struct ckpt_fenc *b, size_t from)
{
	size_t len = b->n - from;

	do {
		if (ckpt_fenc_be(b, len & 0xff, 1) < 0)
			return -1;
		len >>= 8;
	} while (len != 0);
	return 0;
}

/* The key group of the key v (written by t): Flink's from its hashCode, else the row's own. */
static int
group_of(struct enc *x, const struct ckpt_fser *t, const json_t *row, size_t line, const unsigned char *p,
	 size_t n, uint32_t *kg)
{
	struct ckpt_fsrc s;
	json_t *back = NULL;
	json_int_t g = json_integer_value(json_object_get(row, "key_group"));
	char cls[128];
	int32_t hash = 0;
	int hashed = 0, r;

	ckpt_fsrc_mem(&s, p, n, x->r->name, x->e);
	r = ckpt_fser_value(t, &s, &back, &hash, &hashed);
	if (r == 0 && !ckpt_fsrc_drained(&s))
		r = -1;
	ckpt_fsrc_release(&s);
	json_decref(back);
	if (r < 0)
		return row_fail(x->r, line, x->e, "state %s: the key does not fit its serializer %s", x->x->state,
				short_cls(t, cls, sizeof cls));
	if (hashed) {
		*kg = ckpt_flink_key_group(hash, x->maxp);
		return 0;
	}
	if (!json_is_integer(json_object_get(row, "key_group")) || g < 0 || g >= (json_int_t)x->maxp)
		return row_fail(x->r, line, x->e, "state %s: ckpt cannot compute the key group of a key of the "
				"serializer %s: give the row's key_group", x->x->state, short_cls(t, cls, sizeof cls));
	*kg = (uint32_t)g;
	return 0;
}

static int
push(struct enc *x, uint32_t kg, struct ckpt_fenc *k, struct ckpt_fenc *v, size_t line)
{
	struct ent *t;

	if (ckpt_grow(&x->ents, &x->cap, x->n + 1, sizeof *x->ents, 64, x->e) < 0)
		return -1;
	t = &x->ents[x->n];
	*t = (struct ent){.state = x->x->state, .kg = kg, .k = k->p, .kn = k->n, .v = v->p, .vn = v->n,
			  .line = line, .order = x->n, .list = x->m->kindc == 'l'};
	k->p = v->p = NULL;
	x->n++;
	return 0;
}

/* A row given as bytes (an untyped state's, or "untyped"): its key with its key-group prefix. */
static int
raw_row(struct enc *x, const json_t *row, size_t line)
{
	struct ckpt_fenc k = {0}, v = {0};
	uint32_t kg = 0;
	int rc = -1;

	if (ckpt_entry_from_json(json_object_get(row, "key"), &k.p, &k.n, NULL) < 0 ||
	    ckpt_entry_from_json(json_object_get(row, "value"), &v.p, &v.n, NULL) < 0) {
		row_fail(x->r, line, x->e, "state %s: an untyped row's key and value are entries (a string or "
			 "{\"base64\"})%s%s", x->x->state, "", "");
		goto out;
	}
	for (uint32_t i = 0; i < x->prefix && i < k.n; i++)
		kg = kg << 8 | k.p[i];
	if (k.n < x->prefix || kg >= x->maxp) {
		row_fail(x->r, line, x->e, "state %s: an untyped row's key does not start with a key group of "
			 "its operator%s%s", x->x->state, "", "");
		goto out;
	}
	rc = push(x, kg, &k, &v, line);
out:
	free(k.p);
	free(v.p);
	return rc;
}

/* A typed keyed row: key-group prefix, key, namespace (map: user key), and the value. */
static int
typed_row(struct enc *x, const json_t *row, size_t line)
{
	const struct fmeta *m = x->m;
	const struct ckpt_fser *vs = m->value, *ks = x->h->key, *ns = m->ns;
	struct ckpt_fenc k = {0}, v = {0}, key = {0};
	size_t from;
	uint32_t kg = 0;
	int rc = -1, r = 0;

	if (m->kindc == 't') { /* a timer: its timestamp is the value, sign bit flipped, before key and namespace */
		ks = vs->kids[0];
		ns = vs->kids[1];
	}
	if ((r = put_json(x, ks, json_object_get(row, "key"), &key, "key", line)) != 0 ||
	    group_of(x, ks, row, line, key.p, key.n, &kg) < 0)
		goto out;
	for (uint32_t i = 0; i < x->prefix; i++)
		if (ckpt_fenc_be(&k, kg >> (8 * (x->prefix - 1 - i)), 1) < 0)
			goto out;
	if (m->kindc == 't') {
		if (!json_is_integer(json_object_get(row, "value"))) {
			row_fail(x->r, line, x->e, "state %s: a timer's value is its timestamp, an integer", m->name);
			goto out;
		}
		if (ckpt_fenc_be(&k, (uint64_t)json_integer_value(json_object_get(row, "value")) ^ (1ull << 63), 8) < 0)
			goto out;
	}
	from = k.n;
	if (ckpt_fenc_put(&k, key.p, key.n) < 0 || (m->ambiguous && length_suffix(&k, from) < 0))
		goto out;
	from = k.n;
	if ((r = put_json(x, ns, json_object_get(row, "namespace"), &k, "namespace", line)) != 0 ||
	    (m->ambiguous && length_suffix(&k, from) < 0))
		goto out;
	if (m->kindc == 'm') {
		const json_t *val = json_object_get(row, "value");

		if ((r = put_json(x, vs->kids[0], json_object_get(row, "user_key"), &k, "user key", line)) != 0 ||
		    ckpt_fenc_be(&v, val == NULL || json_is_null(val), 1) < 0 ||
		    (val && !json_is_null(val) && (r = put_json(x, vs->kids[1], val, &v, "value", line)) != 0))
			goto out;
	} else if (m->kindc != 't' &&
		   (r = put_json(x, m->kindc == 'l' ? vs->kids[0] : vs, json_object_get(row, "value"), &v, "value",
				 line)) != 0) {
		goto out;
	}
	rc = push(x, kg, &k, &v, line);
out:
	free(key.p);
	free(k.p);
	free(v.p);
	return rc < 0 && r > 0 ? 0 : rc; /* a value ckpt cannot write: the state is compared whole */
}

/* Entries by state, key (a list's elements one entry), then order. */
static int
cmp_ent(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;
	int c = strcmp(x->state, y->state);

	if (c == 0)
		c = x->kn != y->kn ? (x->kn < y->kn ? -1 : 1) : memcmp(x->k, y->k, x->kn);
	return c ? c : x->order < y->order ? -1 : x->order > y->order;
}

static int
cmp_order(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	return x->order < y->order ? -1 : x->order > y->order;
}

/* A list's elements of one key joined (ListDelimitedSerializer: ','), into the first of them; a
 * second row of one key of another state refused. */
static int
merge(struct enc *x)
{
	size_t out = 0;

	qsort(x->ents, x->n, sizeof *x->ents, cmp_ent);
	for (size_t i = 0; i < x->n; i++) {
		struct ent *a = out ? &x->ents[out - 1] : NULL, *t = &x->ents[i];

		if (a == NULL || strcmp(a->state, t->state) != 0 || a->kn != t->kn || memcmp(a->k, t->k, t->kn) != 0) {
			x->ents[out++] = *t;
			continue;
		}
		if (!t->list) {
			char where[512];

			snprintf(where, sizeof where, "%s:%zu", x->r->name, t->line);
			return ckpt_err_set(x->e, CKPT_ERR_INPUT, where, "state %s: a second row of the key of line %zu",
					    t->state, a->line);
		}
		unsigned char *p = realloc(a->v, a->vn + 1 + t->vn);

		if (p == NULL)
			return ckpt_err_set(x->e, CKPT_ERR_NOMEM, "", "out of memory");
		p[a->vn] = ',';
		memcpy(p + a->vn + 1, t->v, t->vn);
		a->v = p;
		a->vn += 1 + t->vn;
		free(t->k);
		free(t->v);
	}
	x->n = out;
	qsort(x->ents, x->n, sizeof *x->ents, cmp_order);
	return 0;
}

/* The rows of state x, each made an entry. */
static int
encode_state(struct enc *x)
{
	for (size_t i = 0; i < x->x->n; i++) {
		size_t line = x->x->rows[i].line;
		json_t *row = json_loads(x->x->rows[i].text, JSON_ALLOW_NUL, NULL);
		int rc;

		if (row == NULL)
			return ckpt_err_set(x->e, CKPT_ERR_NOMEM, "", "out of memory");
		if (!ckpt_fstate_typable(x->h, x->m) || json_object_get(row, "untyped"))
			rc = raw_row(x, row, line);
		else
			rc = typed_row(x, row, line);
		json_decref(row);
		if (rc < 0)
			return -1;
	}
	return 0;
}

static void
ents_free(struct enc *x)
{
	for (size_t i = 0; i < x->n; i++) {
		free(x->ents[i].k);
		free(x->ents[i].v);
	}
	free(x->ents);
	x->ents = NULL;
	x->n = x->cap = 0;
}

/* The rows of state x of op under header h, through put (pass 0: nothing put, a state ckpt cannot
 * write compared with its own rows). */
static int
state_entries(struct enc *x, struct flink_backing *b, int pass, frg_put *put, void *g)
{
	int rc = -1, equal = 0, none = 0;
	size_t i = 0;

	while (i < x->h->n && strcmp(x->h->m[i].name, x->x->state) != 0)
		i++;
	if (i == x->h->n) {
		char where[512];

		snprintf(where, sizeof where, "%s:%zu", x->r->name, x->x->rows[0].line);
		return ckpt_err_set(x->e, CKPT_ERR_INPUT, where, "operator %s has no keyed state %s", x->op->id,
				    x->x->state);
	}
	x->m = &x->h->m[i];
	x->x->found = 1;
	x->cannot_line = 0;
	if (encode_state(x) < 0)
		goto out;
	if (x->cannot_line && pass == 0) {
		if (same_rows(b, x->op, x->x, &equal, &none, x->e) < 0)
			goto out;
		if (!equal) {
			char where[512];

			snprintf(where, sizeof where, "%s:%zu", x->r->name, x->cannot_line);
			ckpt_err_set(x->e, CKPT_ERR_INPUT, where, "state %s: ckpt cannot write values of %s: it takes "
				     "the state's rows only as they are", x->x->state, x->cannot_why);
			goto out;
		}
		x->x->unchanged = 1;
	}
	if (!x->x->unchanged && merge(x) < 0)
		goto out;
	for (size_t j = 0; pass > 0 && !x->x->unchanged && j < x->n; j++)
		if (put(g, x->ents[j].state, x->ents[j].kg, x->ents[j].k, x->ents[j].kn, x->ents[j].v, x->ents[j].vn) < 0)
			goto out;
	rc = 0;
out:
	ents_free(x);
	return rc;
}

static int
entries(void *arg, struct flink_backing *b, const struct ckpt_operator *op, const struct ckpt_subtask *st,
	const struct ckpt_handle *hd, uint32_t maxp, int pass, frg_put *put, void *g, struct ckpt_err *e)
{
	struct ckpt_flink_rows *r = arg;
	struct fctx c = {.b = b, .op = op, .st = st, .h = hd, .e = e};
	struct fheader h = {0};
	struct ckpt_fsrc s = {0};
	struct enc x = {.r = r, .h = &h, .op = op, .maxp = maxp, .prefix = maxp > 128 ? 2 : 1, .e = e};
	int fd = -1, rc = -1;

	s.fd = -1;
	snprintf(c.where, sizeof c.where, "%s", b->meta);
	if (ckpt_fstate_open_bytes(&c, &s, &fd) < 0 || ckpt_fstate_read_keyed_header(&s, &h) < 0)
		goto out;
	for (size_t i = 0; i < r->n; i++) {
		x.x = &r->st[i];
		if (r->st[i].keyed && strcmp(r->st[i].op, op->id) == 0 && state_entries(&x, b, pass, put, g) < 0)
			goto out;
	}
	for (size_t i = 0; i < r->nclear; i++)
		for (size_t j = 0; j < h.n; j++)
			if (strcmp(h.m[j].name, r->clear[i]) == 0)
				r->cleared[i] = 1;
	rc = 0;
out:
	ckpt_fstate_header_release(&h);
	ckpt_fsrc_release(&s);
	if (fd >= 0)
		close(fd);
	return rc;
}

static const struct ckpt_operator *
op_named(const struct ckpt_snapshot *s, const char *id)
{
	for (size_t i = 0; i < s->nops; i++)
		if (strcmp(s->ops[i].id, id) == 0)
			return &s->ops[i];
	return NULL;
}

/* Once every operator is counted: each state the rows name found, operator state unchanged. */
static int
checked(void *arg, struct ckpt_snapshot *s, struct ckpt_err *e)
{
	struct ckpt_flink_rows *r = arg;
	char where[512];

	for (size_t i = 0; i < r->n; i++) {
		const struct rstate *x = &r->st[i];
		const struct ckpt_operator *op = op_named(s, x->op);
		int equal = 0, none = 0;

		snprintf(where, sizeof where, "%s:%zu", r->name, x->rows[0].line);
		if (op == NULL)
			return ckpt_err_set(e, CKPT_ERR_INPUT, where, "no operator %s in the snapshot", x->op);
		if (x->keyed && !x->found)
			return ckpt_err_set(e, CKPT_ERR_INPUT, where, "operator %s has no keyed state %s", x->op,
					    x->state);
		if (x->keyed)
			continue;
		if (same_rows((struct flink_backing *)s->backing, op, x, &equal, &none, e) < 0)
			return -1;
		if (none)
			return ckpt_err_set(e, CKPT_ERR_INPUT, where, "operator %s has no operator state %s with rows",
					    x->op, x->state);
		if (!equal)
			return ckpt_err_set(e, CKPT_ERR_REFUSED, where, "operator state %s of operator %s: ckpt writes "
					    "operator state back only as it is", x->state, x->op);
	}
	for (size_t i = 0; i < r->nclear; i++)
		if (!r->cleared[i])
			return ckpt_err_set(e, CKPT_ERR_INPUT, "--clear", "%s: no keyed state of that name in the "
					    "snapshot", r->clear[i]);
	return 0;
}

int
ckpt_flink_rows_write(const char *meta, const void *buf, size_t len, const struct ckpt_flink_edit *ed, size_t ned,
		      struct ckpt_flink_rows *rows, const char *dir, struct ckpt_bytes *out, json_t **relative,
		      struct ckpt_err *e)
{
	struct frg_hook hook = {.arg = rows, .touches = touches, .replaced = replaced, .entries = entries,
				.checked = checked};

	return ckpt_frg_run(meta, buf, len, ed, ned, 0, &hook, dir, out, relative, e);
}
