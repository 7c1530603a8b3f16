/* javaser.c: Java's object serialization stream (the java.io.ObjectOutputStream protocol)
 * read strictly into a small graph of values, for Flink's CheckpointProperties and job events. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "javaser.h"

#define ARENA_CHUNK 8192
#define DESC_SLOTS 256             /* remembered class descriptors, by where they are */
#define DESC_MAX 1024              /* how many, and */
#define DESC_POOL_LIMIT (4u << 20) /* the bytes, kept before they are all forgotten */

struct jhandle {
	struct ckpt_javaser_class *cls; /* a class descriptor, or */
	struct ckpt_javaser_value *v;   /* a string, object, array, enum constant or Class */
	int building; /* an object or array being read: a reference to it is a cycle */
};

/* Allocations freed together: small blocks from chunks, big ones on their own. */
struct pool {
	void **mem;
	size_t nmem, memcap;
	unsigned char *arena; /* the chunk small blocks come from, zero past arena_used */
	size_t arena_used;
	size_t bytes;         /* held, for the descriptor pool's limit */
};

/* A reference a remembered descriptor made to a handle from before it. */
struct jref {
	size_t i;
	struct jhandle h;
};

/*
 * A class descriptor read before (Flink writes each job event as a new stream that repeats the
 * same descriptors): the same bytes at the same place, with the same handles before them where it
 * refers back, read the same, so they are taken as read.
 */
struct jdesc {
	size_t at, nh, len; /* its offset, the handles before it, its bytes */
	int depth;          /* nesting at its start */
	const unsigned char *bytes;
	struct ckpt_javaser_class *cls;
	struct jhandle *h;  /* the handles it assigned */
	size_t nhnew;
	struct jref *refs;  /* its references to earlier handles */
	size_t nrefs;
	struct jdesc *next; /* in its slot */
};

struct ckpt_javaser {
	struct ckpt_cur c;   /* the stream; its errors read "offset N: text" */
	unsigned flags;
	int limit, depth;
	struct jhandle *h;
	size_t nh, cap;
	struct pool vals;    /* the values of the stream, freed by ckpt_javaser_reset */
	struct pool classes; /* class descriptors and what they hold, kept with the remembered ones */
	struct pool *pool;   /* where jalloc takes from */
	struct jdesc *desc[DESC_SLOTS];
	size_t ndesc;
	int in_desc;         /* reading a class descriptor (outermost), recording it */
	size_t desc_nh;      /* the handles before it */
	struct jref *refs;   /* its references to handles before it */
	size_t nrefs, refcap;
};

/* Take ownership of a malloc'd block of size bytes (freed now if it cannot be recorded). */
static void *
adopt(struct ckpt_javaser *j, void *p, size_t size)
{
	struct pool *pl = j->pool;

	if (p == NULL) {
		ckpt_err_nomem(j->c.e, j->c.where);
		return NULL;
	}
	if (ckpt_grow(&pl->mem, &pl->memcap, pl->nmem + 1, sizeof *pl->mem, 64, NULL) < 0) {
		free(p);
		ckpt_err_nomem(j->c.e, j->c.where);
		return NULL;
	}
	pl->bytes += size;
	return pl->mem[pl->nmem++] = p;
}

/*
 * Zeroed memory for n objects of size bytes from the current pool: small blocks come from
 * chunks, as a stream makes many small values (a job event holds hundreds).
 */
static void *
jalloc(struct ckpt_javaser *j, size_t n, size_t size)
{
	struct pool *pl = j->pool;
	size_t total;

	if (n == 0 || size == 0)
		n = size = 1;
	if (n > SIZE_MAX / size) {
		ckpt_err_nomem(j->c.e, j->c.where);
		return NULL;
	}
	total = (n * size + 15) & ~(size_t)15;
	if (total > ARENA_CHUNK / 4)
		return adopt(j, calloc(n, size), n * size);
	if (pl->arena == NULL || ARENA_CHUNK - pl->arena_used < total) {
		if ((pl->arena = adopt(j, calloc(1, ARENA_CHUNK), ARENA_CHUNK)) == NULL)
			return NULL;
		pl->arena_used = 0;
	}
	pl->arena_used += total;
	return pl->arena + pl->arena_used - total;
}

/* Free what the pool holds; with keep, all but its current chunk, which is used again. */
static void
pool_clear(struct pool *pl, int keep)
{
	int kept = 0;

	for (size_t i = 0; i < pl->nmem; i++)
		if (keep && pl->mem[i] == pl->arena)
			kept = 1;
		else
			free(pl->mem[i]);
	pl->nmem = 0;
	pl->bytes = 0;
	if (kept) {
		memset(pl->arena, 0, pl->arena_used);
		pl->mem[pl->nmem++] = pl->arena;
		pl->bytes = ARENA_CHUNK;
	} else {
		pl->arena = NULL;
	}
	pl->arena_used = 0;
	if (!keep) {
		free(pl->mem);
		pl->mem = NULL;
		pl->memcap = 0;
	}
}

/* One UTF-16 unit of Java's modified UTF-8 at s[*i]; -1 if malformed. */
static long
mutf8_unit(const unsigned char *s, size_t n, size_t *i)
{
	unsigned c = s[*i];

	if (c < 0x80) {
		*i += 1;
		return c;
	}
	if ((c & 0xe0) == 0xc0 && *i + 1 < n && (s[*i + 1] & 0xc0) == 0x80) {
		*i += 2;
		return (long)((c & 0x1f) << 6 | (s[*i - 1] & 0x3f));
	}
	if ((c & 0xf0) == 0xe0 && *i + 2 < n && (s[*i + 1] & 0xc0) == 0x80 && (s[*i + 2] & 0xc0) == 0x80) {
		*i += 3;
		return (long)((c & 0x0f) << 12 | (s[*i - 2] & 0x3f) << 6 | (s[*i - 1] & 0x3f));
	}
	return -1;
}

/* Modified UTF-8 into o, n + 1 bytes (a UTF-16 unit takes no more bytes in UTF-8, a pair fewer). */
static int
mutf8_into(const unsigned char *s, size_t n, char *o, size_t *bad)
{
	size_t i = 0, k = 0;

	/* names of classes and fields are ASCII */
	while (i < n && s[i] != 0 && s[i] < 0x80)
		i++;
	memcpy(o, s, i);
	k = i;
	while (i < n) {
		long u, lo;

		*bad = i;
		u = mutf8_unit(s, n, &i);
		if (u < 0 || (u == 0 && s[*bad] == 0)) /* Java writes U+0000 as c0 80, never as a 0 byte */
			return CKPT_JAVASER_EUTF;
		if (u == 0)
			return CKPT_JAVASER_ENUL;
		if (u >= 0xdc00 && u <= 0xdfff)
			return CKPT_JAVASER_EUTF;
		if (u >= 0xd800 && u <= 0xdbff) {
			*bad = i;
			if (i >= n || (lo = mutf8_unit(s, n, &i)) < 0xdc00 || lo > 0xdfff)
				return CKPT_JAVASER_EUTF;
			u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
		}
		k += ckpt_utf8_put(o + k, (uint32_t)u);
	}
	o[k] = '\0';
	return 0;
}

int
ckpt_javaser_mutf8(const unsigned char *s, size_t n, char **out, size_t *bad)
{
	char *o = malloc(n + 1);
	int rc;

	*out = NULL;
	*bad = 0;
	if (o == NULL)
		return CKPT_JAVASER_ENOMEM;
	if ((rc = mutf8_into(s, n, o, bad)) < 0) {
		free(o);
		return rc;
	}
	*out = o;
	return 0;
}

void
ckpt_javaser_mutf8_why(int rc, const unsigned char *s, size_t n, size_t bad, const char *what, char *buf,
		       size_t size)
{
	if (rc == CKPT_JAVASER_ENUL)
		snprintf(buf, size, "%s holds U+0000 (c0 80), which ckpt does not read", what);
	else if (bad < n && s[bad] == 0)
		snprintf(buf, size, "damaged %s: a 0 byte, which modified UTF-8 never holds (U+0000 is c0 80)", what);
	else
		snprintf(buf, size, "damaged %s: byte 0x%02x is not modified UTF-8", what, bad < n ? s[bad] : 0);
}

/* n bytes of modified UTF-8 at the cursor into o (n + 1 bytes); a fault is named at its byte. */
static int
cur_mutf8(struct ckpt_cur *c, size_t n, char *o, const char *what)
{
	const unsigned char *s = c->p + c->pos;
	size_t bad = 0;
	char why[300];
	int rc;

	c->pos += n;
	if ((rc = mutf8_into(s, n, o, &bad)) == 0)
		return 0;
	ckpt_javaser_mutf8_why(rc, s, n, bad, what, why, sizeof why);
	return ckpt_cur_fail(c, (size_t)(s - c->p) + bad, "%s", why);
}

int
ckpt_javaser_utf(struct ckpt_cur *c, char **out, const char *what)
{
	uint16_t n;

	*out = NULL;
	if (ckpt_cur_u16(c, &n, what) < 0 || ckpt_cur_need(c, n, what) < 0)
		return -1;
	if ((*out = malloc((size_t)n + 1)) == NULL)
		return ckpt_err_nomem(c->e, c->where);
	if (cur_mutf8(c, n, *out, what) < 0) {
		free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

/* n bytes of modified UTF-8 at the cursor, into the stream's pool. */
static int
rd_mutf8(struct ckpt_javaser *j, size_t n, char **out, const char *what)
{
	if ((*out = jalloc(j, n + 1, 1)) == NULL)
		return -1;
	return cur_mutf8(&j->c, n, *out, what);
}

/* u16 length, then modified UTF-8 (DataOutput.writeUTF). */
static int
rd_utf(struct ckpt_javaser *j, char **out, const char *what)
{
	uint16_t n;

	*out = NULL;
	if (ckpt_cur_u16(&j->c, &n, what) < 0 || ckpt_cur_need(&j->c, n, what) < 0)
		return -1;
	return rd_mutf8(j, n, out, what);
}

/* ------------------------------------------------------------ handles */

static int
assign(struct ckpt_javaser *j, struct ckpt_javaser_class *c, struct ckpt_javaser_value *v)
{
	if (ckpt_grow(&j->h, &j->cap, j->nh + 1, sizeof *j->h, 16, j->c.e) < 0)
		return -1;
	if (v)
		v->handle = j->nh;
	j->h[j->nh++] = (struct jhandle){c, v, 0};
	return 0;
}

static int
reference(struct ckpt_javaser *j, struct jhandle **out)
{
	size_t at = j->c.pos;
	int32_t h;

	if (ckpt_cur_i32(&j->c, &h, "Java reference") < 0)
		return -1;
	if (h < BASE_HANDLE || (size_t)(h - BASE_HANDLE) >= j->nh)
		return ckpt_cur_fail(&j->c, at, "invalid Java reference 0x%x", (unsigned)h);
	*out = &j->h[h - BASE_HANDLE];
	if (j->in_desc && (size_t)(h - BASE_HANDLE) < j->desc_nh) {
		if (ckpt_grow(&j->refs, &j->refcap, j->nrefs + 1, sizeof *j->refs, 16, j->c.e) < 0)
			return -1;
		j->refs[j->nrefs++] = (struct jref){(size_t)(h - BASE_HANDLE), **out};
	}
	return 0;
}

static struct ckpt_javaser_value *
value_new(struct ckpt_javaser *j, enum ckpt_javaser_kind kind, size_t at)
{
	struct ckpt_javaser_value *v = jalloc(j, 1, sizeof *v);

	if (v) {
		v->kind = kind;
		v->at = at;
		v->handle = SIZE_MAX;
	}
	return v;
}

/* ------------------------------------------------------------ class descriptors */

static int content(struct ckpt_javaser *j, struct ckpt_javaser_value **out);
static int classdesc(struct ckpt_javaser *j, struct ckpt_javaser_class **out);

/* A string object (TC_STRING, or TC_REFERENCE to one); *out belongs to j. */
static int
string(struct ckpt_javaser *j, const char **out)
{
	size_t at = j->c.pos;
	struct ckpt_javaser_value *v;

	if (content(j, &v) < 0)
		return -1;
	if (v->kind != CKPT_JAVASER_STRING)
		return ckpt_cur_fail(&j->c, at, "Java string expected");
	*out = v->str;
	return 0;
}

static int
fields(struct ckpt_javaser *j, struct ckpt_javaser_class *c)
{
	size_t at = j->c.pos;
	uint64_t n;

	if (ckpt_cur_be(&j->c, 2, &n, "Java field count") < 0)
		return -1;
	if (n * 3 > ckpt_cur_left(&j->c))
		return ckpt_cur_fail(&j->c, at, "Java field count %u is more than the remaining %zu bytes can hold",
			    (unsigned)n, ckpt_cur_left(&j->c));
	if ((c->fields = jalloc(j, n, sizeof *c->fields)) == NULL)
		return -1;
	while (c->nfields < n) {
		struct ckpt_javaser_field *f = &c->fields[c->nfields++];
		uint8_t t;

		at = j->c.pos;
		if (ckpt_cur_u8(&j->c, &t, "Java field type") < 0 || rd_utf(j, &f->name, "Java field name") < 0)
			return -1;
		if (strchr("BCDFIJSZL[", t) == NULL || t == 0)
			return ckpt_cur_fail(&j->c, at, "invalid Java field type 0x%02x", t);
		f->type = (char)t;
		f->len = strlen(f->name);
		if ((t == 'L' || t == '[') && string(j, &f->sig) < 0)
			return -1;
	}
	return 0;
}

/* Contents up to TC_ENDBLOCKDATA (classAnnotation, objectAnnotation), as a new array. */
static int
annotation(struct ckpt_javaser *j, struct ckpt_javaser_value ***items, size_t *n)
{
	size_t cap = 0;

	*items = NULL;
	*n = 0;
	for (;;) {
		struct ckpt_javaser_value *v, **a;

		if (ckpt_cur_need(&j->c, 1, "Java annotation end") < 0)
			return -1;
		if (j->c.p[j->c.pos] == TC_ENDBLOCKDATA) {
			j->c.pos++;
			return 0;
		}
		if (content(j, &v) < 0)
			return -1;
		if (*n == cap) {
			cap = cap ? 2 * cap : 4;
			if ((a = jalloc(j, cap, sizeof *a)) == NULL)
				return -1;
			if (*n)
				memcpy(a, *items, *n * sizeof *a);
			*items = a;
		}
		(*items)[(*n)++] = v;
	}
}

/* What the protocol allows (and, with CKPT_JAVASER_PLAIN, what plain classes produce). */
static int
check_flags(struct ckpt_javaser *j, const struct ckpt_javaser_class *c, size_t at)
{
	uint8_t f = c->flags;
	int ser = f & CKPT_JAVASER_SC_SERIALIZABLE, ext = f & CKPT_JAVASER_SC_EXTERNALIZABLE;

	if (j->flags & CKPT_JAVASER_PLAIN) {
		if (f != 0x02 && f != 0x12)
			return ckpt_cur_fail(&j->c, at, "unsupported Java class flags 0x%02x of %s", f, c->name);
		return 0;
	}
	if ((f & ~0x1fu) || (ser && ext) || ((f & CKPT_JAVASER_SC_ENUM) && !ser) ||
	    ((f & CKPT_JAVASER_SC_WRITE_METHOD) && !ser) || ((f & CKPT_JAVASER_SC_BLOCK_DATA) && !ext))
		return ckpt_cur_fail(&j->c, at, "invalid Java class flags 0x%02x of %s", f, c->name);
	if (ext && !(f & CKPT_JAVASER_SC_BLOCK_DATA))
		return ckpt_cur_fail(&j->c, at, "unsupported Java class flags 0x%02x of %s (externalizable without block data)",
			    f, c->name);
	return 0;
}

static int
newclass(struct ckpt_javaser *j, struct ckpt_javaser_class **out, size_t at)
{
	struct ckpt_javaser_class *c, *super;
	uint64_t suid;

	if ((c = jalloc(j, 1, sizeof *c)) == NULL)
		return -1;
	c->at = at;
	if (rd_utf(j, &c->name, "Java class name") < 0 || ckpt_cur_be(&j->c, 8, &suid, "serialVersionUID") < 0 ||
	    assign(j, c, NULL) < 0)
		return -1;
	c->suid = (int64_t)suid;
	at = j->c.pos;
	if (ckpt_cur_u8(&j->c, &c->flags, "Java class flags") < 0 || check_flags(j, c, at) < 0 || fields(j, c) < 0)
		return -1;
	at = j->c.pos;
	if (j->flags & CKPT_JAVASER_PLAIN) {
		uint8_t end;

		if (ckpt_cur_u8(&j->c, &end, "Java class annotation") < 0)
			return -1;
		if (end != TC_ENDBLOCKDATA && (end < TC_NULL || end > TC_ENUM))
			return ckpt_cur_fail(&j->c, at, "damaged Java class descriptor of %s: byte 0x%02x where its annotations end "
				    "(0x78)", c->name, end);
		if (end != TC_ENDBLOCKDATA)
			return ckpt_cur_fail(&j->c, at, "unsupported Java class annotation in %s (token 0x%02x where 0x78 ends them)",
				    c->name, end);
	} else if (annotation(j, &c->annotations, &c->nannotations) < 0) {
		return -1;
	}
	if (classdesc(j, &super) < 0)
		return -1;
	c->super = super;
	*out = c;
	return 0;
}

/* The slot of a descriptor at at with nh handles before it, and in it the one at depth. */
static struct jdesc **
desc_find(struct ckpt_javaser *j, size_t at, size_t nh, int depth)
{
	struct jdesc **d = &j->desc[(at * 0x9e3779b1u ^ nh) % DESC_SLOTS];

	while (*d != NULL && !((*d)->at == at && (*d)->nh == nh && (*d)->depth == depth))
		d = &(*d)->next;
	return d;
}

/* Whether what the descriptor just read holds can be kept past the stream: classes without
 * annotations (which may hold block data, pointing into the stream) and strings. */
static int
keepable(const struct jhandle *h)
{
	if (h->cls)
		return h->cls->nannotations == 0;
	return h->v != NULL && h->v->kind == CKPT_JAVASER_STRING;
}

/* Remember the class descriptor just read at at, from the TC_CLASSDESC up to j->c.pos. */
static int
desc_remember(struct ckpt_javaser *j, size_t at, struct ckpt_javaser_class *c)
{
	size_t len = j->c.pos - at, nhnew = j->nh - j->desc_nh;
	struct jdesc *d, **slot;
	unsigned char *bytes;
	struct jhandle *h;
	struct jref *refs;
	int rc = -1;

	for (size_t i = j->desc_nh; i < j->nh; i++)
		if (!keepable(&j->h[i]))
			return 0;
	for (size_t i = 0; i < j->nrefs; i++)
		if (!keepable(&j->refs[i].h))
			return 0;
	j->pool = &j->classes;
	if ((d = jalloc(j, 1, sizeof *d)) == NULL || (bytes = jalloc(j, len, 1)) == NULL ||
	    (h = jalloc(j, nhnew, sizeof *h)) == NULL || (refs = jalloc(j, j->nrefs, sizeof *refs)) == NULL)
		goto out;
	memcpy(bytes, j->c.p + at, len);
	memcpy(h, j->h + j->desc_nh, nhnew * sizeof *h);
	if (j->nrefs > 0) /* j->refs is NULL until a descriptor refers back */
		memcpy(refs, j->refs, j->nrefs * sizeof *refs);
	*d = (struct jdesc){at, j->desc_nh, len, j->depth, bytes, c, h, nhnew, refs, j->nrefs, NULL};
	slot = desc_find(j, at, d->nh, d->depth);
	if (*slot != NULL)
		d->next = (*slot)->next; /* replaced: its memory stays in the pool until the pool is cleared */
	else
		j->ndesc++;
	*slot = d;
	rc = 0;
out:
	j->pool = &j->vals;
	return rc;
}

/* The class descriptor at at read before, taken as read: 1, or 0 if it was not, -1 on no memory. */
static int
desc_again(struct ckpt_javaser *j, size_t at, struct ckpt_javaser_class **out)
{
	const struct jdesc *d = *desc_find(j, at, j->nh, j->depth);

	if (d == NULL || d->len > j->c.len - at || memcmp(d->bytes, j->c.p + at, d->len) != 0)
		return 0;
	for (size_t i = 0; i < d->nrefs; i++) {
		const struct jhandle *h = &j->h[d->refs[i].i];

		if (h->cls != d->refs[i].h.cls || h->v != d->refs[i].h.v || h->building)
			return 0;
	}
	for (size_t i = 0; i < d->nhnew; i++)
		if (assign(j, d->h[i].cls, d->h[i].v) < 0)
			return -1;
	j->c.pos = at + d->len;
	*out = d->cls;
	return 1;
}

/* TC_CLASSDESC, TC_REFERENCE to one, or TC_NULL. */
static int
classdesc(struct ckpt_javaser *j, struct ckpt_javaser_class **out)
{
	size_t at = j->c.pos;
	struct jhandle *h;
	uint8_t t;
	int rc;

	*out = NULL;
	if (ckpt_cur_u8(&j->c, &t, "Java class descriptor") < 0)
		return -1;
	if (t == TC_NULL)
		return 0;
	if (t == TC_REFERENCE) {
		if (reference(j, &h) < 0)
			return -1;
		if (h->cls == NULL)
			return ckpt_cur_fail(&j->c, at, "Java reference to an object where a class was expected");
		*out = h->cls;
		return 0;
	}
	if (t != TC_CLASSDESC)
		return ckpt_cur_fail(&j->c, at, "unsupported Java class descriptor 0x%02x", t);
	if (!j->in_desc && (rc = desc_again(j, at, out)) != 0)
		return rc < 0 ? -1 : 0;
	if (j->depth >= j->limit)
		return ckpt_cur_fail(&j->c, at, "Java classes nested more than %d deep", j->limit);
	if (j->in_desc) {
		j->depth++;
		rc = newclass(j, out, at);
		j->depth--;
		return rc;
	}
	j->in_desc = 1;
	j->desc_nh = j->nh;
	j->nrefs = 0;
	j->pool = &j->classes;
	j->depth++;
	rc = newclass(j, out, at);
	j->depth--;
	j->pool = &j->vals;
	j->in_desc = 0;
	if (rc == 0)
		return desc_remember(j, at, *out);
	return rc;
}

/* ------------------------------------------------------------ values */

static const char prim_codes[] = "BCDFIJSZ";

/* The size of primitive type t (one of prim_codes): a switch, as every field value asks. */
static size_t
prim_size(char t)
{
	switch (t) {
	case 'D': case 'J': return 8;
	case 'F': case 'I': return 4;
	case 'C': case 'S': return 2;
	default: return 1;
	}
}

static int
primitive(struct ckpt_javaser *j, char t, struct ckpt_javaser_value **out)
{
	size_t n = prim_size(t);
	struct ckpt_javaser_value *v;
	union { uint64_t u; double d; } dv;
	union { uint32_t u; float f; } fv;
	uint64_t x;

	if (ckpt_cur_need(&j->c, n, "Java field value") < 0 || (v = value_new(j, CKPT_JAVASER_PRIM, j->c.pos)) == NULL)
		return -1;
	x = ckpt_load_be(j->c.p + j->c.pos, n);
	j->c.pos += n;
	v->type = t;
	if (t == 'D')
		dv.u = x, v->d = dv.d;
	else if (t == 'F')
		fv.u = (uint32_t)x, v->d = fv.f;
	else if (t == 'B')
		v->i = (int8_t)x;
	else if (t == 'S')
		v->i = (int16_t)x;
	else if (t == 'I')
		v->i = (int32_t)x;
	else if (t == 'J')
		v->i = (int64_t)x;
	else if (t == 'Z')
		v->i = x != 0;
	else
		v->i = (int64_t)x;
	*out = v;
	return 0;
}

static int
field_values(struct ckpt_javaser *j, struct ckpt_javaser_classdata *d)
{
	const struct ckpt_javaser_class *c = d->cls;

	if ((d->fields = jalloc(j, c->nfields, sizeof *d->fields)) == NULL)
		return -1;
	for (size_t i = 0; i < c->nfields; i++) {
		char t = c->fields[i].type;

		if (t == 'L' || t == '[' ? content(j, &d->fields[i]) < 0 : primitive(j, t, &d->fields[i]) < 0)
			return -1;
	}
	return 0;
}

/* classdata[]: each class's fields (and writeObject data), the top-most serializable class first. */
static int
class_data(struct ckpt_javaser *j, struct ckpt_javaser_value *o)
{
	const struct ckpt_javaser_class *c = o->cls;
	size_t n = 0;

	if (c->flags & CKPT_JAVASER_SC_EXTERNALIZABLE) {
		if ((o->data = jalloc(j, 1, sizeof *o->data)) == NULL)
			return -1;
		o->n = 1;
		o->data->cls = c;
		return annotation(j, &o->data->extra, &o->data->nextra);
	}
	for (const struct ckpt_javaser_class *s = c; s; s = s->super)
		if (n++ > (size_t)j->limit) /* a super class chain that loops */
			return ckpt_cur_fail(&j->c, j->c.pos, "Java class hierarchy deeper than %d", j->limit);
	if ((o->data = jalloc(j, n, sizeof *o->data)) == NULL)
		return -1;
	o->n = n;
	for (const struct ckpt_javaser_class *s = c; s; s = s->super)
		o->data[--n].cls = s;
	for (size_t i = 0; i < o->n; i++) {
		struct ckpt_javaser_classdata *d = &o->data[i];

		if (field_values(j, d) < 0)
			return -1;
		if ((d->cls->flags & CKPT_JAVASER_SC_WRITE_METHOD) && annotation(j, &d->extra, &d->nextra) < 0)
			return -1;
	}
	return 0;
}

static int
object(struct ckpt_javaser *j, struct ckpt_javaser_value **out, size_t at)
{
	struct ckpt_javaser_class *c;
	struct ckpt_javaser_value *o;
	size_t slot;

	if (classdesc(j, &c) < 0)
		return -1;
	if (c == NULL || (c->flags & CKPT_JAVASER_SC_ENUM) ||
	    !(c->flags & (CKPT_JAVASER_SC_SERIALIZABLE | CKPT_JAVASER_SC_EXTERNALIZABLE)))
		return ckpt_cur_fail(&j->c, at, "Java object without a serializable class");
	if ((o = value_new(j, CKPT_JAVASER_OBJECT, at)) == NULL || assign(j, NULL, o) < 0)
		return -1;
	o->cls = c;
	slot = j->nh - 1;
	j->h[slot].building = 1;
	if (class_data(j, o) < 0)
		return -1;
	j->h[slot].building = 0;
	*out = o;
	return 0;
}

static int
enumconst(struct ckpt_javaser *j, struct ckpt_javaser_value **out, size_t at)
{
	struct ckpt_javaser_class *c;
	struct ckpt_javaser_value *v;
	size_t slot;

	if (classdesc(j, &c) < 0)
		return -1;
	if (c == NULL || !(c->flags & CKPT_JAVASER_SC_ENUM))
		return ckpt_cur_fail(&j->c, at, "Java enum without an enum class");
	if ((v = value_new(j, CKPT_JAVASER_ENUM, at)) == NULL)
		return -1;
	v->cls = c;
	slot = j->nh;
	/* the handle is the constant's, but nothing may refer to it before its name is read */
	if (assign(j, NULL, NULL) < 0 || string(j, &v->str) < 0)
		return -1;
	v->len = strlen(v->str);
	v->handle = slot;
	j->h[slot].v = v;
	*out = v;
	return 0;
}

static int
array(struct ckpt_javaser *j, struct ckpt_javaser_value **out, size_t at)
{
	struct ckpt_javaser_class *c;
	struct ckpt_javaser_value *a;
	const char *prim;
	size_t slot, min;
	char t;
	int32_t n;

	if (classdesc(j, &c) < 0)
		return -1;
	t = c && c->name[0] == '[' ? c->name[1] : '\0';
	if (t == '\0' || strchr("BCDFIJSZL[", t) == NULL)
		return ckpt_cur_fail(&j->c, at, "Java array of %s, which is not an array class", c ? c->name : "no class");
	if ((a = value_new(j, CKPT_JAVASER_ARRAY, at)) == NULL || assign(j, NULL, a) < 0)
		return -1;
	a->cls = c;
	slot = j->nh - 1;
	at = j->c.pos;
	if (ckpt_cur_i32(&j->c, &n, "Java array length") < 0)
		return -1;
	prim = t == 'L' || t == '[' ? NULL : strchr(prim_codes, t);
	min = prim ? prim_size(t) : 1;
	if (n < 0 || (uint64_t)n * min > ckpt_cur_left(&j->c))
		return ckpt_cur_fail(&j->c, at, "Java array length %d is more than the remaining %zu bytes can hold", n, ckpt_cur_left(&j->c));
	if ((a->items = jalloc(j, (size_t)n, sizeof *a->items)) == NULL)
		return -1;
	j->h[slot].building = 1;
	for (a->n = 0; a->n < (size_t)n; a->n++)
		if (prim ? primitive(j, t, &a->items[a->n]) < 0 : content(j, &a->items[a->n]) < 0)
			return -1;
	j->h[slot].building = 0;
	*out = a;
	return 0;
}

static int
classobj(struct ckpt_javaser *j, struct ckpt_javaser_value **out, size_t at)
{
	struct ckpt_javaser_class *c;
	struct ckpt_javaser_value *v;

	if (classdesc(j, &c) < 0)
		return -1;
	if (c == NULL)
		return ckpt_cur_fail(&j->c, at, "Java Class object without a class descriptor");
	if ((v = value_new(j, CKPT_JAVASER_CLASS, at)) == NULL || assign(j, NULL, v) < 0)
		return -1;
	v->cls = c;
	*out = v;
	return 0;
}

static int
strvalue(struct ckpt_javaser *j, struct ckpt_javaser_value **out, size_t at, int lng)
{
	struct ckpt_javaser_value *v;
	char *s;
	uint64_t n;

	if (!lng) {
		if (rd_utf(j, &s, "Java string") < 0)
			return -1;
	} else if (ckpt_cur_be(&j->c, 8, &n, "Java long string") < 0) {
		return -1;
	} else if (n > ckpt_cur_left(&j->c)) {
		return ckpt_cur_fail(&j->c, at + 1, "Java long string length %llu is more than the remaining %zu bytes",
			    (unsigned long long)n, ckpt_cur_left(&j->c));
	} else if (rd_mutf8(j, (size_t)n, &s, "Java long string") < 0) {
		return -1;
	}
	if ((v = value_new(j, CKPT_JAVASER_STRING, at)) == NULL || assign(j, NULL, v) < 0)
		return -1;
	v->str = s;
	v->len = strlen(s);
	*out = v;
	return 0;
}

static int
block(struct ckpt_javaser *j, struct ckpt_javaser_value **out, size_t at, int lng)
{
	struct ckpt_javaser_value *v;
	uint64_t n;

	if (ckpt_cur_be(&j->c, lng ? 4 : 1, &n, "Java block data length") < 0)
		return -1;
	if (lng && (int32_t)(uint32_t)n < 0)
		return ckpt_cur_fail(&j->c, at + 1, "negative Java block data length %d", (int32_t)(uint32_t)n);
	if (ckpt_cur_need(&j->c, n, "Java block data") < 0 || (v = value_new(j, CKPT_JAVASER_BLOCK, at)) == NULL)
		return -1;
	v->bytes = j->c.p + j->c.pos;
	v->len = (size_t)n;
	j->c.pos += n;
	*out = v;
	return 0;
}

static int
token(struct ckpt_javaser *j, uint8_t t, struct ckpt_javaser_value **out, size_t at)
{
	struct jhandle *h;

	switch (t) {
	case TC_NULL:
		return (*out = value_new(j, CKPT_JAVASER_NULL, at)) ? 0 : -1;
	case TC_REFERENCE:
		if (reference(j, &h) < 0)
			return -1;
		if (h->v == NULL)
			return ckpt_cur_fail(&j->c, at, "Java reference to a class where an object was expected");
		if (h->building)
			return ckpt_cur_fail(&j->c, at, "Java object refers to itself");
		*out = h->v;
		return 0;
	case TC_STRING: return strvalue(j, out, at, 0);
	case TC_OBJECT: return object(j, out, at);
	case TC_ENUM: return enumconst(j, out, at);
	}
	if (!(j->flags & CKPT_JAVASER_PLAIN)) {
		switch (t) {
		case TC_LONGSTRING: return strvalue(j, out, at, 1);
		case TC_ARRAY: return array(j, out, at);
		case TC_CLASS: return classobj(j, out, at);
		case TC_BLOCKDATA: return block(j, out, at, 0);
		case TC_BLOCKDATALONG: return block(j, out, at, 1);
		}
	}
	if (t < TC_NULL || t > TC_ENUM)
		return ckpt_cur_fail(&j->c, at, "damaged Java serialization stream: byte 0x%02x where a token (0x70 to 0x7e) belongs", t);
	return ckpt_cur_fail(&j->c, at, "unsupported Java serialization token 0x%02x", t);
}

/* Any content; *out belongs to j. */
static int
content(struct ckpt_javaser *j, struct ckpt_javaser_value **out)
{
	size_t at = j->c.pos;
	uint8_t t;
	int rc;

	if (ckpt_cur_u8(&j->c, &t, "Java object") < 0)
		return -1;
	if (j->depth >= j->limit)
		return ckpt_cur_fail(&j->c, at, "Java objects nested more than %d deep", j->limit);
	j->depth++;
	rc = token(j, t, out, at);
	j->depth--;
	return rc;
}

/* ------------------------------------------------------------ the API */

struct ckpt_javaser *
ckpt_javaser_new(const void *buf, size_t len, const char *name, unsigned flags, int depth,
		 struct ckpt_err *e)
{
	struct ckpt_javaser *j = ckpt_calloc(1, sizeof *j, e);

	if (j) {
		j->c.p = buf;
		j->c.len = len;
		j->c.where = name;
		j->c.e = e;
		j->flags = flags;
		j->limit = depth;
		j->pool = &j->vals;
	}
	return j;
}

void
ckpt_javaser_reset(struct ckpt_javaser *j, const void *buf, size_t len, struct ckpt_err *e)
{
	j->c.p = buf;
	j->c.len = len;
	j->c.pos = 0;
	j->c.e = e;
	j->nh = 0;
	pool_clear(&j->vals, 1);
	if (j->classes.bytes > DESC_POOL_LIMIT || j->ndesc > DESC_MAX) {
		pool_clear(&j->classes, 1);
		memset(j->desc, 0, sizeof j->desc);
		j->ndesc = 0;
	}
}

void
ckpt_javaser_free(struct ckpt_javaser *j)
{
	if (j == NULL)
		return;
	pool_clear(&j->vals, 0);
	pool_clear(&j->classes, 0);
	free(j->refs);
	free(j->h);
	free(j);
}

int
ckpt_javaser_header(struct ckpt_javaser *j, size_t *pos)
{
	j->c.pos = *pos;
	if (ckpt_cur_need(&j->c, 4, "Java serialization stream header") < 0)
		return -1;
	if (ckpt_load_be(j->c.p + j->c.pos, 4) != CKPT_JAVASER_MAGIC)
		return ckpt_cur_fail(&j->c, j->c.pos, "not a Java serialization stream (0x%08x, want 0x%08x)",
			    (unsigned)ckpt_load_be(j->c.p + j->c.pos, 4), CKPT_JAVASER_MAGIC);
	*pos = j->c.pos + 4;
	return 0;
}

int
ckpt_javaser_read(struct ckpt_javaser *j, size_t *pos, const struct ckpt_javaser_value **out)
{
	struct ckpt_javaser_value *v;

	j->c.pos = *pos;
	j->depth = 0;
	if (content(j, &v) < 0)
		return -1;
	*pos = j->c.pos;
	*out = v;
	return 0;
}

size_t
ckpt_javaser_handles(const struct ckpt_javaser *j)
{
	return j->nh;
}

const struct ckpt_javaser_value *
ckpt_javaser_field(const struct ckpt_javaser_value *obj, const char *name)
{
	size_t len = strlen(name);

	if (obj == NULL || obj->kind != CKPT_JAVASER_OBJECT)
		return NULL;
	for (size_t i = obj->n; i-- > 0;) {
		const struct ckpt_javaser_classdata *d = &obj->data[i];

		for (size_t k = 0; d->fields && k < d->cls->nfields; k++)
			if (d->cls->fields[k].len == len && memcmp(d->cls->fields[k].name, name, len) == 0)
				return d->fields[k];
	}
	return NULL;
}
