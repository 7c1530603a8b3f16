/* rowsin.c: ckpt-merge --rows and --clear: the rows -R prints, read back (NDJSON, a line each), and
 * for each keyed state they name its entries replaced by theirs, encoded by the snapshot's own
 * serializers (encode.c) and written by regroup.c's writer at the key groups Flink computes; states
 * whose values ckpt cannot write taken only as they are; operator state's rows handed to oprows.c. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readers.h"

/* Consecutive lines of one state, as spooled: n lines from byte off, the first line number line. */
struct run {
	off_t off;
	size_t line, n;
};

/* The rows of one state of one operator. */
struct rstate {
	char *op, *state;
	int keyed;      /* keyed rows (with a key group), else operator state's */
	struct run *runs;
	size_t nruns, cap, n;
	int found;      /* its operator's keyed header holds it */
	int unchanged;  /* rows ckpt cannot write, equal to the state's own: the state kept as it is */
	int recorded;   /* its entries encoded once, nrec of them at recoff in the record: read back after */
	off_t recoff;
	uint64_t nrec;
};

/* The rows' text in memory, a state's read again by its runs at each pass: a regular file mapped
 * in place (read once, no copy: page cache, released behind the reader, so the process's resident
 * size stays bounded whatever the size; the file must not be cut while ckpt-merge runs), anything
 * else (standard input, a pipe) spooled to a temporary file first (read once), that mapped. */
struct ckpt_flink_rows {
	char *name;
	struct ckpt_textmap t;    /* the rows: t.p[t.base, t.n) */
	char *line;               /* one line copied out of it, NUL-terminated, as getline gives it, */
	size_t linecap, linelen;  /* of linelen bytes */
	size_t lastline;
	char *pfx;                /* the last row up to its state (pfxn bytes; 0: none), of state pfxst */
	size_t pfxn, pfxcap, pfxst;
	struct rstate *st;
	size_t n, cap;
	FILE *rec;  /* the entries the first pass that encodes a state made, each once: later passes */
	off_t recend; /* read them back instead of parsing and encoding the rows again */
	char *recbuf; /* its buffer, REC_BUF bytes (few system calls) */
	char **clear;
	int *cleared;
	size_t nclear;
};

/* The error of the row of line line: "NAME:LINE: what". */
static int
row_fail(const struct ckpt_flink_rows *r, size_t line, struct ckpt_err *e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int
row_fail(const struct ckpt_flink_rows *r, size_t line, struct ckpt_err *e, const char *fmt, ...)
{
	char where[512];
	va_list ap;

	snprintf(where, sizeof where, "%s:%zu", r->name, line);
	va_start(ap, fmt);
	ckpt_err_vset(e, CKPT_ERR_INPUT, where, fmt, ap);
	va_end(ap);
	return -1;
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
/* The string member at p ("NAME":"VALUE", no escape in it) copied into out: the end of it, or NULL. */
static const char *
plain_member(const char *p, const char *name, char *out, size_t n)
{
	size_t k = strlen(name), len;

	if (strncmp(p, name, k) != 0 || p[k] != '"')
		return NULL;
	p += k + 1;
	len = strcspn(p, "\\\"");
	if (p[len] != '"' || len >= n)
		return NULL;
	memcpy(out, p, len);
	out[len] = '\0';
	return p + len + 1;
}

/* After a row's state as -R prints it (p: at ",\"kind\":"): whether keyed: 1; 0 when not in that form. */
static int
fast_kind(const char *p, int *keyed)
{
	/* the kind, a string or null, then the subtask, then the key group when keyed */
	if (strncmp(p, ",\"kind\":", 8) != 0)
		return 0;
	p += 8;
	p += *p == 'n' ? 4 : *p == '"' ? strcspn(p + 1, "\\\"") + 2 : 0;
	if (strncmp(p, ",\"subtask\":", 11) != 0)
		return 0;
	p += 11 + strspn(p + 11, "0123456789");
	*keyed = strncmp(p, ",\"key_group\":", 13) == 0;
	return 1;
}

/* The operator, state and whether keyed of a row as -R prints it, its members in their order,
 * without parsing it all: the end of its state member; NULL when the line is not in that form. */
static const char *
fast_row(const char *t, char *op, size_t opn, char *st, size_t stn, int *keyed)
{
	const char *p = strstr(t, ",\"operator\":");

	if (strncmp(t, "{\"uid\":", 7) != 0 || p == NULL || memchr(t, '\\', (size_t)(p - t)) != NULL ||
	    (p = plain_member(p + 1, "\"operator\":", op, opn)) == NULL ||
	    (p = plain_member(p + 1, "\"state\":", st, stn)) == NULL)
		return NULL;
	return fast_kind(p, keyed) ? p : NULL;
}

/* The operator, state and whether keyed of a row (parsed when not in -R's form). */
static int
row_names(struct ckpt_flink_rows *r, const char *text, size_t line, char *op, size_t opn, char *st, size_t stn,
	  int *keyed, struct ckpt_err *e)
{
	json_error_t je;
	json_t *v;
	const char *o, *t;
	int rc = -1;

	if (fast_row(text, op, opn, st, stn, keyed) != NULL)
		return 0;
	if ((v = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je)) == NULL) {
		char where[512]; /* where: NAME:LINE:COLUMN, as every JSON input's errors */

		snprintf(where, sizeof where, "%s:%zu:%d", r->name, line, je.column > 0 ? je.column : 1);
		return ckpt_err_set(e, CKPT_ERR_INPUT, where, "%s", je.text);
	}
	o = json_string_value(json_object_get(v, "operator"));
	t = json_string_value(json_object_get(v, "state"));
	if (!json_is_object(v) || o == NULL || t == NULL)
		row_fail(r, line, e, "not a row: an object with \"operator\" and \"state\" (as ckpt-inspect -R prints "
			 "them)");
	else if (strlen(o) >= opn || strlen(t) >= stn)
		row_fail(r, line, e, "an operator or state name longer than %zu bytes", stn - 1);
	else {
		strcpy(op, o);
		strcpy(st, t);
		*keyed = json_object_get(v, "key_group") != NULL;
		rc = 0;
	}
	json_decref(v);
	return rc;
}

/* The state of a row: the last row's when the row begins as it did up to its state (-R's rows come
 * a state at a time), else its names read. */
static struct rstate *
row_state(struct ckpt_flink_rows *r, const char *text, size_t line, struct ckpt_err *e)
{
	char op[256], st[1024];
	const char *end;
	struct rstate *x;
	int keyed = 0;

	if (r->pfxn && strncmp(text, r->pfx, r->pfxn) == 0 && fast_kind(text + r->pfxn, &keyed) &&
	    keyed == r->st[r->pfxst].keyed)
		return &r->st[r->pfxst];
	r->pfxn = 0;
	if ((end = fast_row(text, op, sizeof op, st, sizeof st, &keyed)) == NULL &&
	    row_names(r, text, line, op, sizeof op, st, sizeof st, &keyed, e) < 0)
		return NULL;
	if ((x = state_of(r, op, st, keyed, e)) != NULL && end) {
		if (ckpt_grow(&r->pfx, &r->pfxcap, (size_t)(end - text), 1, 256, e) < 0)
			return NULL;
		memcpy(r->pfx, text, (size_t)(end - text));
		r->pfxn = (size_t)(end - text);
		r->pfxst = (size_t)(x - r->st);
	}
	return x;
}

/* One line at off, in the run of its state. */
static int
add_line(struct ckpt_flink_rows *r, const char *text, off_t off, size_t line, struct ckpt_err *e)
{
	struct rstate *x = row_state(r, text, line, e);
	struct run *u;

	if (x == NULL)
		return -1;
	u = x->nruns ? &x->runs[x->nruns - 1] : NULL;
	if (u && r->lastline == line - 1 && u->line + u->n == line) {
		u->n++;
	} else {
		if (ckpt_grow(&x->runs, &x->cap, x->nruns + 1, sizeof *x->runs, 4, e) < 0)
			return -1;
		x->runs[x->nruns++] = (struct run){.off = off, .line = line, .n = 1};
	}
	x->n++;
	r->lastline = line;
	return 0;
}

#define REC_BUF (1u << 20)
#define RELEASE_STEP (2u << 20) /* the mapping's pages given back every 2 MiB read */

struct ckpt_flink_rows *
ckpt_flink_rows_read(FILE *f, const char *name, struct ckpt_err *e)
{
	struct ckpt_flink_rows *r = ckpt_calloc(1, sizeof *r, e);
	size_t off, len, n, no = 0, done;

	if (r == NULL || (r->name = ckpt_strdup(name, e)) == NULL || ckpt_textmap_open(&r->t, f, name, e) < 0)
		goto fail;
	done = r->t.base;
	for (off = r->t.base; off < r->t.n; off += n) {
		if ((n = ckpt_textmap_line(&r->t, off, &r->line, &r->linecap, &len, e)) == 0)
			goto fail;
		no++;
		if (strspn(r->line, " \t\r\n") != len && add_line(r, r->line, (off_t)off, no, e) < 0)
			goto fail;
		if (off + n - done >= RELEASE_STEP)
			ckpt_textmap_release(&r->t, &done, off + n);
	}
	ckpt_textmap_release(&r->t, &done, r->t.n);
	return r;
fail:
	ckpt_flink_rows_free(r);
	return NULL;
}

/* Each row of x through fn (its text, its line), in the order given. */
static int
rows_each(struct ckpt_flink_rows *r, const struct rstate *x, int (*fn)(void *arg, char *text, size_t line),
	  void *arg, struct ckpt_err *e)
{
	size_t off, len, n, done;
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < x->nruns; i++) {
		off = done = (size_t)x->runs[i].off;
		for (size_t j = 0; rc == 0 && j < x->runs[i].n; j++, off += n) {
			if ((n = off < r->t.n ? ckpt_textmap_line(&r->t, off, &r->line, &r->linecap, &len, e) : 0) == 0)
				return e->kind == CKPT_ERR_NONE ? ckpt_err_set(e, CKPT_ERR_INPUT, r->name, "the rows changed "
									       "while they were read") : -1;
			r->linelen = len;
			rc = fn(arg, r->line, x->runs[i].line + j);
			if (off + n - done >= RELEASE_STEP)
				ckpt_textmap_release(&r->t, &done, off + n);
		}
		ckpt_textmap_release(&r->t, &done, off);
	}
	return rc;
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
	ckpt_textmap_close(&r->t);
	free(r->line);
	free(r->pfx);
	if (r->rec)
		fclose(r->rec);
	free(r->recbuf);
	for (size_t i = 0; i < r->n; i++) {
		free(r->st[i].runs);
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
own_rows(struct ckpt_fstate_backing_data *b, const struct ckpt_operator *op, const struct rstate *x, char ***out, size_t *nout,
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
			rc = rc < 0 ? rc : ckpt_err_nomem(e, "");
			break;
		}
		++*nout;
	}
	free(buf);
	if (rc == 0)
		qsort(*out, *nout, sizeof **out, cmp_str);
	return rc;
}

struct given {
	char **p;
	size_t n;
};

static int
give(void *arg, char *text, size_t line)
{
	struct given *g = arg;

	(void)line;
	return (g->p[g->n] = normal(text)) == NULL ? -1 : (g->n++, 0);
}

/* Do x's rows equal the state's own (in any order)?  *equal; *none when the state has no row. */
static int
same_rows(struct ckpt_flink_rows *r, struct ckpt_fstate_backing_data *b, const struct ckpt_operator *op, const struct rstate *x,
	  int *equal, int *none, struct ckpt_err *e)
{
	char **own = NULL, **given = ckpt_calloc(x->n + 1, sizeof *given, e);
	struct given g = {.p = given};
	size_t n = 0;
	int rc = -1;

	if (given == NULL || own_rows(b, op, x, &own, &n, e) < 0)
		goto out;
	if (rows_each(r, x, give, &g, e) < 0) {
		if (e->kind == CKPT_ERR_NONE)
			ckpt_err_nomem(e, "");
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
	for (size_t i = 0; i < g.n; i++)
		free(given[i]);
	free(own);
	free(given);
	return rc;
}

/* ------------------------------------------------------------ rows into entries */

struct enc {
	struct ckpt_flink_rows *r;
	const struct ckpt_fstate_header *h;
	struct ckpt_fstate_meta *m;
	struct rstate *x;
	const struct ckpt_operator *op;
	uint32_t maxp, prefix;
	int pass;
	ckpt_frg_put *put;
	void *g;
	struct ckpt_fenc pk, pv; /* the entry pending (a list's elements of one key joined into it) */
	uint32_t pkg;
	size_t pline;
	uint64_t ph;        /* the hash of its key (pass 1; 0: not computed) */
	int pending;
	struct seen {       /* pass 1: a hash table of the keys written (a second row of one is refused), */
		uint64_t h; /* with each one's line (saturated), side by side (one cache miss a key) */
		uint32_t line;
	} *seen;
	size_t nseen, seencap;
	struct ckpt_fjava *java; /* a JavaSerializer state's own values, which its rows are written by, */
	const struct rstate *javafor; /* of this state */
	size_t cannot_line; /* the first row of a value ckpt cannot write, 0: none */
	char cannot_why[200];
	int record;         /* this pass encodes the state: its entries go to the record */
	struct ckpt_fenc ek, ev, ekey; /* a row's key, value and key alone, as they are encoded */
	struct ckpt_jscan_buf tmp;     /* the strings of a row as they are decoded */
	struct ckpt_err *e;
};

/* The members of a row the encoders read (new references, NULL when absent); untyped: present. */
struct rowv {
	json_t *kg, *key, *ns, *value, *ukey;
	int untyped;
};

static void
rowv_release(struct rowv *v)
{
	json_decref(v->kg);
	json_decref(v->key);
	json_decref(v->ns);
	json_decref(v->value);
	json_decref(v->ukey);
	memset(v, 0, sizeof *v);
}

/* Where the member named k[0, n) (its text as written) goes; NULL: one the encoders do not read. */
static json_t **
rowv_slot(struct rowv *v, const unsigned char *k, size_t n)
{
	switch (n) {
	case 3:
		return memcmp(k, "key", 3) == 0 ? &v->key : NULL;
	case 5:
		return memcmp(k, "value", 5) == 0 ? &v->value : NULL;
	case 8:
		return memcmp(k, "user_key", 8) == 0 ? &v->ukey : NULL;
	case 9:
		return memcmp(k, "key_group", 9) == 0 ? &v->kg : memcmp(k, "namespace", 9) == 0 ? &v->ns : NULL;
	default:
		return NULL;
	}
}

/* The members of the row text in one scan, with no tree of the row itself built (jansson's
 * json_loads of the whole row took most of the time): 0; -1 where the scanner stops, for jansson
 * to read the row (the values the scanner does not take, and the words of its errors). */
static int
scan_row(const char *text, size_t len, struct rowv *v, struct ckpt_jscan_buf *tmp)
{
	struct ckpt_err scratch;
	struct ckpt_jscan s = {.p = (const unsigned char *)text, .end = (const unsigned char *)text + len, .e = &scratch};
	const unsigned char *k, *q;
	json_t **slot;
	size_t n;
	int first = 1, r;

	while ((r = ckpt_jscan_members(&s, &first, &k, &n)) > 0) {
		if (memchr(k, '\\', n) != NULL) /* a name written with escapes: jansson's */
			return -1;
		v->untyped |= n == 7 && memcmp(k, "untyped", 7) == 0;
		if ((slot = rowv_slot(v, k, n)) == NULL) {
			if ((q = ckpt_jscan_plain(s.p, s.end)) != NULL)
				s.p = q; /* a name, an id: skipped */
			else if (ckpt_jscan_value(&s, 1) < 0)
				return -1;
			continue;
		}
		json_decref(*slot); /* a member given twice: the last, as jansson keeps it */
		if ((*slot = ckpt_jscan_build(&s, tmp, 1)) == NULL)
			return -1;
	}
	ckpt_jscan_ws(&s);
	return r == 0 && s.p == s.end ? 0 : -1;
}

/* The row of line line read into v: scanned, else read by jansson (its error the row's). */
static int
read_row(struct enc *x, const char *text, size_t line, struct rowv *v)
{
	json_error_t je;
	json_t *row;
	char where[512];

	/* the line's length as read (strlen but for a NUL in it, which the scanner refuses, as jansson
	 * stops there: its value then jansson's) */
	if (scan_row(text, text == x->r->line ? x->r->linelen : strlen(text), v, &x->tmp) == 0)
		return 0;
	rowv_release(v);
	if ((row = json_loads(text, JSON_ALLOW_NUL, &je)) == NULL) { /* its names were read, not all of it */
		snprintf(where, sizeof where, "%s:%zu:%d", x->r->name, line, je.column > 0 ? je.column : 1);
		return ckpt_err_set(x->e, CKPT_ERR_INPUT, where, "%s", je.text);
	}
	v->kg = json_incref(json_object_get(row, "key_group"));
	v->key = json_incref(json_object_get(row, "key"));
	v->ns = json_incref(json_object_get(row, "namespace"));
	v->value = json_incref(json_object_get(row, "value"));
	v->ukey = json_incref(json_object_get(row, "user_key"));
	v->untyped = json_object_get(row, "untyped") != NULL;
	json_decref(row);
	return 0;
}

/* b emptied for the next row (its buffer kept). */
static struct ckpt_fenc *
fresh(struct ckpt_fenc *b)
{
	b->n = 0;
	b->why = NULL;
	b->whyn = 0;
	return b;
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
	b->more = ckpt_fenc_more;
	b->java = strcmp(what, "value") == 0 ? x->java : NULL;
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
			x->x->state, what, ckpt_foprows_cls(t, cls, sizeof cls), why);
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
group_of(struct enc *x, const struct ckpt_fser *t, const struct rowv *row, size_t line, const unsigned char *p,
	 size_t n, uint32_t *kg)
{
	struct ckpt_fsrc s;
	struct ckpt_fout o; /* read back, not kept: only its hashCode is wanted */
	json_int_t g = json_integer_value(row->kg);
	char cls[128];
	int32_t hash = 0;
	int hashed = 0, r;

	o.mode = FOUT_NONE;
	o.root = NULL;
	o.depth = 0;
	ckpt_fsrc_mem(&s, p, n, x->r->name, x->e);
	r = ckpt_fser_emit(t, &s, &o, &hash, &hashed);
	if (r == 0 && !ckpt_fsrc_drained(&s))
		r = -1;
	ckpt_fsrc_release(&s);
	if (r < 0)
		return row_fail(x->r, line, x->e, "state %s: the key does not fit its serializer %s", x->x->state,
				ckpt_foprows_cls(t, cls, sizeof cls));
	if (hashed) {
		*kg = ckpt_flink_key_group(hash, x->maxp);
		return 0;
	}
	if (!json_is_integer(row->kg) || g < 0 || g >= (json_int_t)x->maxp)
		return row_fail(x->r, line, x->e, "state %s: ckpt cannot compute the key group of a key of the "
				"serializer %s: give the row's key_group", x->x->state, ckpt_foprows_cls(t, cls, sizeof cls));
	*kg = (uint32_t)g;
	return 0;
}

/* The hash of a key in the table of keys written (0: an empty slot). */
static uint64_t
key_hash(const unsigned char *k, size_t n)
{
	return ckpt_xxh3(k, n) | 1;
}

/* Pass 1: has a row of this key (hash h) come before?  The row's error, naming that line. */
static int
seen_before(struct enc *x, uint64_t h, size_t line)
{
	size_t i, cap = x->seencap;

	if (4 * (x->nseen + 1) > 3 * cap) { /* grown to twice: every key again */
		struct seen *old = x->seen;
		size_t oc = cap;

		cap = cap ? 2 * cap : 1024;
		if ((x->seen = ckpt_calloc(cap, sizeof *x->seen, x->e)) == NULL) {
			x->seen = old;
			return -1;
		}
		x->seencap = cap;
		for (size_t j = 0; j < oc; j++)
			if (old[j].h) {
				for (i = old[j].h & (cap - 1); x->seen[i].h; i = (i + 1) & (cap - 1))
					;
				x->seen[i] = old[j];
			}
		free(old);
	}
	for (i = h & (cap - 1); x->seen[i].h; i = (i + 1) & (cap - 1))
		if (x->seen[i].h == h)
			return x->m->kindc == 'l' ?
			       row_fail(x->r, line, x->e, "state %s: an element of the list of line %zu apart from it "
					"(a list's elements come in consecutive rows)", x->x->state, (size_t)x->seen[i].line) :
			       row_fail(x->r, line, x->e, "state %s: a second row of the key of line %zu", x->x->state,
					(size_t)x->seen[i].line);
	x->seen[i] = (struct seen){.h = h, .line = line > UINT32_MAX ? UINT32_MAX : (uint32_t)line};
	x->nseen++;
	return 0;
}

/* An entry of the state: pass 1 its key (hash h, 0: not known yet) checked and the entry counted,
 * pass 2 written; pass 0 nothing. */
static int
emit(struct enc *x, uint32_t kg, const unsigned char *k, size_t kn, const unsigned char *v, size_t vn, size_t line,
     uint64_t h)
{
	if (x->pass == 1 && seen_before(x, h ? h : key_hash(k, kn), line) < 0)
		return -1;
	return x->pass > 0 ? x->put(x->g, x->x->state, kg, k, kn, v, vn) : 0;
}

/* An entry in the record, as written: its key group, line and lengths, then its key and value. */
struct rec {
	uint64_t line, kn, vn;
	uint32_t kg, pad;
};

/* The entry pending kept in the record (the pass encoding the state). */
static int
record(struct enc *x)
{
	struct ckpt_flink_rows *r = x->r;
	struct rec h = {.line = x->pline, .kn = x->pk.n, .vn = x->pv.n, .kg = x->pkg};

	if (r->rec == NULL) {
		if ((r->rec = ckpt_tmpfile(r->name, x->e)) == NULL)
			return -1;
		if ((r->recbuf = malloc(REC_BUF)) == NULL || setvbuf(r->rec, r->recbuf, _IOFBF, REC_BUF) != 0)
			return ckpt_err_nomem(x->e, r->name);
	}
	if (fwrite(&h, sizeof h, 1, r->rec) != 1 || fwrite(x->pk.p, 1, h.kn, r->rec) != h.kn ||
	    fwrite(x->pv.p, 1, h.vn, r->rec) != h.vn)
		return ckpt_err_sys(x->e, r->name, "cannot spool the rows' entries");
	r->recend += (off_t)(sizeof h + h.kn + h.vn);
	x->x->nrec++;
	return 0;
}

/* The entry pending recorded (when this pass encodes the state) and emitted. */
static int
flush_pending(struct enc *x)
{
	if (!x->pending)
		return 0;
	x->pending = 0;
	if (x->record && record(x) < 0)
		return -1;
	return emit(x, x->pkg, x->pk.p, x->pk.n, x->pv.p, x->pv.n, x->pline, x->ph);
}

/* The state's entries read back from the record (an earlier pass encoded them) and emitted. */
static int
replay(struct enc *x)
{
	FILE *f = x->r->rec;
	struct rec h;

	if (x->x->nrec == 0)
		return 0;
	if (fflush(f) != 0 || fseeko(f, x->x->recoff, SEEK_SET) != 0)
		return ckpt_err_sys(x->e, x->r->name, "cannot read the spooled rows' entries");
	for (uint64_t i = 0; i < x->x->nrec; i++) {
		if (fread(&h, sizeof h, 1, f) != 1 || h.kn > SIZE_MAX - h.vn - 1)
			return ckpt_err_sys(x->e, x->r->name, "cannot read the spooled rows' entries");
		if (ckpt_grow(&x->pk.p, &x->pk.cap, h.kn + h.vn + 1, 1, 256, x->e) < 0)
			return -1;
		if (fread(x->pk.p, 1, h.kn + h.vn, f) != h.kn + h.vn)
			return ckpt_err_sys(x->e, x->r->name, "cannot read the spooled rows' entries");
		if (emit(x, h.kg, x->pk.p, h.kn, x->pk.p + h.kn, h.vn, h.line, 0) < 0)
			return -1;
	}
	return fseeko(f, x->r->recend, SEEK_SET) == 0 ? 0 : ckpt_err_sys(x->e, x->r->name, "cannot spool the rows' entries");
}

/* A row's entry (k with its key-group prefix, v): a list's element of the key pending joined to it
 * (ListDelimitedSerializer: ','), else the pending entry written and this one pending. */
static int
push(struct enc *x, uint32_t kg, struct ckpt_fenc *k, struct ckpt_fenc *v, size_t line)
{
	if (x->pending && x->m->kindc == 'l' && x->pk.n == k->n && memcmp(x->pk.p, k->p, k->n) == 0)
		return ckpt_fenc_be(&x->pv, ',', 1) < 0 || ckpt_fenc_put(&x->pv, v->p, v->n) < 0 ?
		       ckpt_err_nomem(x->e, "") : 0;
	if (flush_pending(x) < 0)
		return -1;
	x->pk.n = x->pv.n = 0;
	if (ckpt_fenc_put(&x->pk, k->p, k->n) < 0 || ckpt_fenc_put(&x->pv, v->p, v->n) < 0)
		return ckpt_err_nomem(x->e, "");
	x->pkg = kg;
	x->pline = line;
	x->pending = 1;
	x->ph = 0;
	if (x->pass == 1 && x->seencap) { /* its slot fetched while the next row is read: a miss a key less */
		x->ph = key_hash(k->p, k->n);
		__builtin_prefetch(&x->seen[x->ph & (x->seencap - 1)]);
	}
	return 0;
}

/* A row given as bytes (an untyped state's, or "untyped"): its key with its key-group prefix. */
static int
raw_row(struct enc *x, const struct rowv *row, size_t line)
{
	struct ckpt_fenc k = {0}, v = {0};
	uint32_t kg = 0;
	int rc = -1;

	if (ckpt_entry_from_json(row->key, &k.p, &k.n, NULL) < 0 ||
	    ckpt_entry_from_json(row->value, &v.p, &v.n, NULL) < 0) {
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

/* A typed row's key into k: key-group prefix (*kg Flink's), a timer's timestamp (sign bit flipped),
 * key and namespace (each with its length after it when both are of variable length). */
static int
key_part(struct enc *x, const struct rowv *row, size_t line, struct ckpt_fenc *k, uint32_t *kg)
{
	const struct ckpt_fstate_meta *m = x->m;
	const struct ckpt_fser *ks = m->kindc == 't' ? m->value->kids[0] : x->h->key;
	const struct ckpt_fser *ns = m->kindc == 't' ? m->value->kids[1] : m->ns;
	int amb = m->ambiguous && m->kindc != 't', r;
	struct ckpt_fenc *key = fresh(&x->ekey);
	size_t from;

	if ((r = put_json(x, ks, row->key, key, "key", line)) != 0 ||
	    (r = group_of(x, ks, row, line, key->p, key->n, kg)) != 0)
		return r;
	for (uint32_t i = 0; i < x->prefix; i++)
		if ((r = ckpt_fenc_be(k, *kg >> (8 * (x->prefix - 1 - i)), 1)) != 0)
			return r;
	if (m->kindc == 't' && !json_is_integer(row->value))
		return row_fail(x->r, line, x->e, "state %s: a timer's value is its timestamp, an integer", m->name);
	if (m->kindc == 't' && (r = ckpt_fenc_be(k, (uint64_t)json_integer_value(row->value) ^ (1ull << 63), 8)) != 0)
		return r;
	from = k->n;
	if ((r = ckpt_fenc_put(k, key->p, key->n)) != 0 || (amb && (r = length_suffix(k, from)) != 0))
		return r;
	from = k->n;
	if ((r = put_json(x, ns, row->ns, k, "namespace", line)) == 0 && amb)
		r = length_suffix(k, from);
	return r;
}

/* A typed keyed row: its key (map: and user key) and its value, an entry. */
static int
typed_row(struct enc *x, const struct rowv *row, size_t line)
{
	const struct ckpt_fstate_meta *m = x->m;
	const struct ckpt_fser *vs = m->value;
	const json_t *val = row->value;
	struct ckpt_fenc *k = fresh(&x->ek), *v = fresh(&x->ev);
	uint32_t kg = 0;
	int r;

	if ((r = key_part(x, row, line, k, &kg)) != 0)
		goto out;
	if (m->kindc == 'm') {
		if ((r = put_json(x, vs->kids[0], row->ukey, k, "user key", line)) != 0 ||
		    (r = ckpt_fenc_be(v, val == NULL || json_is_null(val), 1)) != 0 ||
		    (val && !json_is_null(val) && (r = put_json(x, vs->kids[1], val, v, "value", line)) != 0))
			goto out;
	} else if (m->kindc != 't' && (r = put_json(x, m->kindc == 'l' ? vs->kids[0] : vs, val, v, "value", line)) != 0) {
		goto out;
	}
	r = push(x, kg, k, v, line);
out:
	return r > 0 ? 0 : r; /* a value ckpt cannot write (r 1): the state is compared whole */
}

static int
one_row(void *arg, char *text, size_t line)
{
	struct enc *x = arg;
	struct rowv row = {0};
	int rc;

	if (read_row(x, text, line, &row) < 0)
		return -1;
	if (!ckpt_fstate_typable(x->h, x->m) || row.untyped)
		rc = raw_row(x, &row, line);
	else
		rc = typed_row(x, &row, line);
	rowv_release(&row);
	return rc;
}

/* Pass 0, a row of x ckpt cannot write met: the state kept when its rows are its own, else refused. */
static int
decide(struct enc *x, struct ckpt_fstate_backing_data *b)
{
	int equal = 0, none = 0;
	char where[512];

	if (same_rows(x->r, b, x->op, x->x, &equal, &none, x->e) < 0)
		return -1;
	if (equal) {
		x->x->unchanged = 1;
		return 0;
	}
	snprintf(where, sizeof where, "%s:%zu", x->r->name, x->cannot_line);
	return ckpt_err_set(x->e, CKPT_ERR_INPUT, where, "state %s: ckpt cannot write values of %s: it takes the "
			    "state's rows only as they are", x->x->state, x->cannot_why);
}

/* The serializer of a value, map or list state's values (a list's: of its elements) when it is
 * JavaSerializer, else NULL. */
static const struct ckpt_fser *
java_values(const struct ckpt_fstate_header *h, struct ckpt_fstate_meta *m)
{
	const struct ckpt_fser *t;

	if (!ckpt_fstate_typable(h, m))
		return NULL;
	t = m->kindc == 'm' && m->value && m->value->nkids == 2 ? m->value->kids[1] :
	    m->kindc == 'l' && m->value && m->value->nkids == 1 ? m->value->kids[0] :
	    m->kindc == 0 ? m->value : NULL; /* value, reducing, aggregating */
	return t && t->kind == FSER_JAVA ? t : NULL;
}

struct jcollect {
	struct enc *x;
	const struct ckpt_fser *t;
	struct ckpt_fsrc s; /* the entry's value */
	const unsigned char *v;
};

/* The state's value at c->s kept with its row's value: 0; 1 when it cannot be read (none kept). */
static int
java_one(struct jcollect *c)
{
	size_t at = ckpt_fsrc_tell(&c->s);
	json_t *j = NULL;
	int32_t hash;
	int hashed, r;

	if (ckpt_fser_value(c->t, &c->s, &j, &hash, &hashed) < 0)
		return 1;
	r = ckpt_fjava_add(c->x->java, c->v + at, ckpt_fsrc_tell(&c->s) - at, j, c->x->e);
	json_decref(j);
	return r;
}

/* The values of an entry of the state at c->s: a value state's one; a map's (canonical: its null
 * flag, then the value; heap: the map whole, i32 count and each user key, null flag and value);
 * a list's elements (canonical: joined by ','; heap: i32 count, then the elements). */
static int
java_values_of(struct jcollect *c, char kind, int heap)
{
	int32_t n = 1;
	uint8_t b;
	int r = 0;

	if (kind == 0)
		return java_one(c);
	if (heap && ckpt_fsrc_i32(&c->s, &n, "element count") < 0)
		return 1;
	for (int32_t i = 0; r == 0 && (heap ? i < n : kind == 'm' ? i < 1 : !ckpt_fsrc_drained(&c->s)); i++) {
		json_t *uk = NULL;
		int32_t hash;
		int hashed;

		if (kind == 'l' && !heap && i > 0 && (ckpt_fsrc_u8(&c->s, &b, "list delimiter") < 0 || b != ','))
			return 1;
		if (kind == 'm' && heap && ckpt_fser_value(c->x->m->value->kids[0], &c->s, &uk, &hash, &hashed) < 0)
			return 1;
		json_decref(uk);
		if (kind == 'm' && ckpt_fsrc_u8(&c->s, &b, "map value null flag") < 0)
			return 1;
		r = kind == 'm' && b ? 0 : java_one(c);
	}
	return r;
}

/* One entry of the operator's keyed state: the values of x's state in it kept with their rows' values. */
static int
java_entry(void *arg, const char *state, uint32_t kg, const unsigned char *k, size_t kn, const unsigned char *v,
	   size_t vn, struct ckpt_fstate_typed *typed)
{
	struct jcollect *c = arg;
	struct ckpt_err scratch = {0}; /* a value it cannot read is not kept: not an error */
	int r;

	(void)kg, (void)k, (void)kn;
	if (strcmp(state, c->x->x->state) != 0)
		return 0;
	c->v = v;
	ckpt_fsrc_mem(&c->s, v, vn, c->x->r->name, &scratch);
	r = java_values_of(c, c->x->m->kindc, typed && typed->heap);
	ckpt_fsrc_release(&c->s);
	return r < 0 ? -1 : 0;
}

/* A JavaSerializer state's own values, read once, for its rows to be written by. */
static int
java_templates(struct enc *x, struct ckpt_fstate_backing_data *b)
{
	struct jcollect c = {.x = x, .t = java_values(x->h, x->m)};
	/* heap-layout entries come with their ftyped, saying so */
	struct ckpt_fstate_sink k = {.kv = java_entry, .op = ckpt_fstate_dry_op, .arg = &c, .untyped = 1, .layout = 1,
				      .part = 2};

	if (c.t == NULL || x->java)
		return 0;
	if ((x->java = ckpt_fjava_new(x->e)) == NULL)
		return -1;
	for (size_t i = 0; i < x->op->nsubtasks; i++)
		if (ckpt_fstate_read_subtask(b, x->op, &x->op->subtasks[i], &k, x->e) < 0)
			return -1;
	return 0;
}

/* The rows of state x of op under header h, through put (pass 0: nothing put, a state ckpt cannot
 * write compared with its own rows). */
static int
state_entries(struct enc *x, struct ckpt_fstate_backing_data *b, int pass, ckpt_frg_put *put, void *g)
{
	char where[512];
	size_t i = 0;

	while (i < x->h->n && strcmp(x->h->m[i].name, x->x->state) != 0)
		i++;
	snprintf(where, sizeof where, "%s:%zu", x->r->name, x->x->runs[0].line);
	if (i == x->h->n)
		return ckpt_err_set(x->e, CKPT_ERR_INPUT, where, "operator %s has no keyed state %s", x->op->id,
				    x->x->state);
	x->m = &x->h->m[i];
	(void)ckpt_fstate_typable(x->h, x->m); /* its kind (kindc) known, for a replay's messages too */
	x->x->found = 1;
	if (x->x->unchanged)
		return 0; /* kept as it is */
	if (x->java && x->javafor != x->x) { /* another state's */
		ckpt_fjava_free(x->java);
		x->java = NULL;
	}
	*x = (struct enc){.r = x->r, .h = x->h, .m = x->m, .x = x->x, .op = x->op, .maxp = x->maxp, .prefix = x->prefix,
			  .e = x->e, .pass = pass, .put = put, .g = g, .pk = x->pk, .pv = x->pv, .seen = x->seen,
			  .seencap = x->seencap, .java = x->java, .javafor = x->x, .ek = x->ek,
			  .ev = x->ev, .ekey = x->ekey, .tmp = x->tmp};
	if (x->seen)
		memset(x->seen, 0, x->seencap * sizeof *x->seen);
	if (pass == 0)
		x->x->recorded = 0;
	if (x->x->recorded)
		return replay(x); /* encoded by an earlier pass */
	if (pass == 0 && ckpt_fstate_typable(x->h, x->m) && !ckpt_fenc_may_refuse(x->m->value, 0) &&
	    !ckpt_fenc_may_refuse(x->m->ns, 0) && !ckpt_fenc_may_refuse(x->h->key, 0))
		return 0; /* every value of it written, or refused with its row: nothing to decide */
	if (java_templates(x, b) < 0)
		return -1;
	x->record = 1;
	x->x->recoff = x->r->recend;
	x->x->nrec = 0;
	if (rows_each(x->r, x->x, one_row, x, x->e) < 0 || (x->cannot_line == 0 && flush_pending(x) < 0))
		return -1;
	if (x->cannot_line && pass == 0)
		return decide(x, b);
	if (x->cannot_line) { /* pass 0 found none: a value only some rows hold */
		snprintf(where, sizeof where, "%s:%zu", x->r->name, x->cannot_line);
		return ckpt_err_set(x->e, CKPT_ERR_INPUT, where, "state %s: ckpt cannot write values of %s",
				    x->x->state, x->cannot_why);
	}
	x->x->recorded = 1;
	return 0;
}

static int
entries(void *arg, struct ckpt_fstate_backing_data *b, const struct ckpt_operator *op, const struct ckpt_subtask *st,
	const struct ckpt_handle *hd, uint32_t maxp, int pass, ckpt_frg_put *put, void *g, struct ckpt_err *e)
{
	struct ckpt_flink_rows *r = arg;
	struct ckpt_fstate_ctx c = {.b = b, .op = op, .st = st, .h = hd, .e = e};
	struct ckpt_fstate_header h = {0};
	struct ckpt_fsrc s = {0};
	struct enc x = {.r = r, .h = &h, .op = op, .maxp = maxp, .prefix = ckpt_flink_kg_prefix(maxp), .e = e};
	int fd = -1, rc = -1;

	s.fd = -1;
	snprintf(c.where, sizeof c.where, "%s", b->meta);
	if (ckpt_fstate_handle_role(hd) == 4 ? ckpt_fstate_rocks_header(&c, &s, &fd, &h) < 0 : /* --canonical */
	    ckpt_fstate_open_bytes(&c, &s, &fd) < 0 || ckpt_fstate_read_keyed_header(&s, &h) < 0)
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
	free(x.pk.p);
	free(x.pv.p);
	free(x.ek.p);
	free(x.ev.p);
	free(x.ekey.p);
	free(x.tmp.p);
	free(x.seen);
	ckpt_fjava_free(x.java);
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

		snprintf(where, sizeof where, "%s:%zu", r->name, x->runs[0].line);
		if (op == NULL)
			return ckpt_err_set(e, CKPT_ERR_INPUT, where, "no operator %s in the snapshot", x->op);
		if (x->keyed && !x->found)
			return ckpt_err_set(e, CKPT_ERR_INPUT, where, "operator %s has no keyed state %s", x->op,
					    x->state);
	}
	return 0; /* operator state: opstate */
}

static int
each_row(void *arg, const void *rows, int (*fn)(void *fa, char *text, size_t line), void *fa, struct ckpt_err *e)
{
	return rows_each(arg, rows, fn, fa, e);
}

/* The rows of operator state written (oprows.c), then each --clear found in some state. */
static int
opstate(void *arg, struct ckpt_snapshot *s, const void *buf, const struct ckpt_fmeta_spans *sp, const char *dir,
	struct ckpt_flink_rekey *rk, struct ckpt_err *e)
{
	struct ckpt_flink_rows *r = arg;
	struct ckpt_foprows_state *st = ckpt_calloc(r->n + 1, sizeof *st, e);
	struct ckpt_foprows_in in = {.name = r->name, .dir = dir, .st = st, .clear = r->clear, .cleared = r->cleared,
				     .nclear = r->nclear, .each = each_row, .arg = r};
	int rc = -1;

	for (size_t i = 0; st && i < r->n; i++)
		if (!r->st[i].keyed)
			st[in.n++] = (struct ckpt_foprows_state){.op = r->st[i].op, .state = r->st[i].state,
								 .line = r->st[i].runs[0].line, .rows = &r->st[i]};
	if (st && ckpt_foprows_run(&in, s, buf, sp, rk, e) == 0)
		rc = 0;
	for (size_t i = 0; rc == 0 && i < r->nclear; i++)
		if (!r->cleared[i])
			rc = ckpt_err_set(e, CKPT_ERR_INPUT, "--clear", "%s: no state of that name in the snapshot",
					  r->clear[i]);
	free(st);
	return rc;
}

int
ckpt_flink_rows_write(const char *meta, const void *buf, size_t len, const struct ckpt_flink_write_opts *o,
		      const char *dir, struct ckpt_bytes *out, json_t **relative, struct ckpt_err *e)
{
	struct ckpt_frg_hook hook = {.arg = o->rows, .touches = touches, .replaced = replaced, .entries = entries,
				.checked = checked, .opstate = opstate};

	return ckpt_frg_run(meta, buf, len, o, &hook, dir, out, relative, e);
}
