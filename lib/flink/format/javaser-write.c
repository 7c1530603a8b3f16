/* javaser-write.c: a writer of Java's serialization stream, the inverse of javaser.c: the values
 * that reader returns written back as java.io.ObjectOutputStream writes them (protocol 2): the
 * same handles in the same order, a back-reference wherever the stream read had one (a value or a
 * string reached again is the same pointer; a class, the same name), class descriptors as read. */
#include <stdlib.h>
#include <string.h>

#include "javaser.h"

struct jw {
	struct ckpt_bytebuf *out;
	const void **keys; /* what each handle was assigned to (NULL: nothing refers to it again) */
	size_t n, cap;
	struct jwclass { const char *name; size_t h; } *cl; /* the class descriptors written, by name */
	size_t ncl, clcap;
	int depth, limit;
	struct ckpt_err *e;
};

static int wcontent(struct jw *w, const struct ckpt_javaser_value *v);

static int
u8(struct jw *w, unsigned x)
{
	unsigned char c = (unsigned char)x;

	return ckpt_bytebuf_add(w->out, &c, 1, w->e);
}

static int
be(struct jw *w, uint64_t x, size_t n)
{
	return ckpt_bytebuf_be(w->out, x, n, w->e);
}

/* A handle for key, in order (ObjectOutputStream's HandleTable.assign). */
static int
assign(struct jw *w, const void *key)
{
	if (ckpt_grow(&w->keys, &w->cap, w->n + 1, sizeof *w->keys, 16, w->e) < 0)
		return -1;
	w->keys[w->n++] = key;
	return 0;
}

/* TC_REFERENCE to key's handle: 1; 0 when key has none. */
static int
reference(struct jw *w, const void *key)
{
	for (size_t i = w->n; key && i-- > 0;)
		if (w->keys[i] == key)
			return u8(w, TC_REFERENCE) < 0 || be(w, BASE_HANDLE + i, 4) < 0 ? -1 : 1;
	return 0;
}

/* The modified UTF-8 of UTF-8 s (DataOutput.writeUTF's bytes, without their length): U+0000 in
 * two bytes, a supplementary character as its two surrogates of three bytes each. */
static int
mutf8(struct jw *w, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		uint32_t c = *p, k = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4, hi, lo;

		if (k < 4) {
			if (ckpt_bytebuf_add(w->out, p, k, w->e) < 0)
				return -1;
		} else {
			c = ((c & 7) << 18 | (p[1] & 0x3fu) << 12 | (p[2] & 0x3fu) << 6 | (p[3] & 0x3fu)) - 0x10000;
			hi = 0xd800 | c >> 10;
			lo = 0xdc00 | (c & 0x3ff);
			if (be(w, 0xe08080 | (hi >> 12) << 16 | (hi >> 6 & 0x3f) << 8 | (hi & 0x3f), 3) < 0 ||
			    be(w, 0xe08080 | (lo >> 12) << 16 | (lo >> 6 & 0x3f) << 8 | (lo & 0x3f), 3) < 0)
				return -1;
		}
		p += k;
	}
	return 0;
}

/* Its length in modified UTF-8. */
static uint64_t
mutf8_len(const char *s)
{
	uint64_t n = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		n += (*p & 0xc0) == 0x80 ? 0 : *p >= 0xf0 ? 6 : *p >= 0xe0 ? 3 : *p >= 0xc0 ? 2 : 1;
	return n;
}

/* writeUTF: the u16 length, then the bytes. */
static int
utf(struct jw *w, const char *s)
{
	uint64_t n = mutf8_len(s);

	if (n > 0xffff)
		return ckpt_err_set(w->e, CKPT_ERR_INPUT, "", "a Java name of %llu bytes, more than 65535",
				    (unsigned long long)n);
	return be(w, n, 2) < 0 ? -1 : mutf8(w, s);
}

/* A string object (writeString): TC_STRING or TC_LONGSTRING, its handle keyed by key. */
static int
wstring(struct jw *w, const char *s, const void *key)
{
	uint64_t n = mutf8_len(s);

	if (assign(w, key) < 0)
		return -1;
	if (n <= 0xffff)
		return u8(w, TC_STRING) < 0 || be(w, n, 2) < 0 ? -1 : mutf8(w, s);
	return u8(w, TC_LONGSTRING) < 0 || be(w, n, 8) < 0 ? -1 : mutf8(w, s);
}

/* Contents, then TC_ENDBLOCKDATA (annotations, what writeObject and writeExternal wrote). */
static int
wannotation(struct jw *w, struct ckpt_javaser_value *const *items, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (wcontent(w, items[i]) < 0)
			return -1;
	return u8(w, TC_ENDBLOCKDATA);
}

/* A class descriptor (writeNonProxyDesc), a reference to one written before, or TC_NULL. */
static int
wclassdesc(struct jw *w, const struct ckpt_javaser_class *c)
{
	int r;

	if (c == NULL)
		return u8(w, TC_NULL);
	for (size_t i = 0; i < w->ncl; i++) /* one descriptor a class, whichever stream it was read from */
		if (strcmp(w->cl[i].name, c->name) == 0)
			return u8(w, TC_REFERENCE) < 0 || be(w, BASE_HANDLE + w->cl[i].h, 4) < 0 ? -1 : 0;
	if (ckpt_grow(&w->cl, &w->clcap, w->ncl + 1, sizeof *w->cl, 8, w->e) < 0)
		return -1;
	w->cl[w->ncl++] = (struct jwclass){c->name, w->n};
	if (w->depth++ >= w->limit)
		return ckpt_err_set(w->e, CKPT_ERR_INPUT, "", "Java classes nested more than %d deep", w->limit);
	if (u8(w, TC_CLASSDESC) < 0 || assign(w, c) < 0 || utf(w, c->name) < 0 || be(w, (uint64_t)c->suid, 8) < 0 ||
	    u8(w, c->flags) < 0 || be(w, c->nfields, 2) < 0)
		return -1;
	for (size_t i = 0; i < c->nfields; i++) {
		const struct ckpt_javaser_field *f = &c->fields[i];

		if (u8(w, (unsigned char)f->type) < 0 || utf(w, f->name) < 0)
			return -1;
		if ((f->type == 'L' || f->type == '[') && (r = reference(w, f->sig)) == 0)
			r = wstring(w, f->sig, f->sig); /* writeTypeString */
		if (r < 0)
			return -1;
	}
	if (wannotation(w, c->annotations, c->nannotations) < 0 || wclassdesc(w, c->super) < 0)
		return -1;
	w->depth--;
	return 0;
}

/* A primitive, big-endian, as DataOutput writes it (floats by their canonical bits). */
static int
wprim(struct jw *w, const struct ckpt_javaser_value *v)
{
	union { double d; uint64_t u; } dv;
	union { float f; uint32_t u; } fv;

	switch (v->type) {
	case 'D':
		dv.d = v->d;
		return be(w, v->d != v->d ? 0x7ff8000000000000ull : dv.u, 8);
	case 'F':
		fv.f = (float)v->d;
		return be(w, v->d != v->d ? 0x7fc00000u : fv.u, 4);
	case 'J':
		return be(w, (uint64_t)v->i, 8);
	case 'I':
		return be(w, (uint64_t)v->i, 4);
	case 'C': case 'S':
		return be(w, (uint64_t)v->i, 2);
	default: /* B Z */
		return be(w, (uint64_t)v->i, 1);
	}
}

/* writeSerialData: each class's fields (the top-most class first), and what a writeObject wrote;
 * an externalizable class's writeExternal data. */
static int
wobject(struct jw *w, const struct ckpt_javaser_value *v)
{
	if (u8(w, TC_OBJECT) < 0 || wclassdesc(w, v->cls) < 0 || assign(w, v) < 0)
		return -1;
	for (size_t i = 0; i < v->n; i++) {
		const struct ckpt_javaser_classdata *d = &v->data[i];

		if (d->cls->flags & CKPT_JAVASER_SC_EXTERNALIZABLE)
			return wannotation(w, d->extra, d->nextra);
		for (size_t k = 0; k < d->cls->nfields; k++)
			if ((d->fields[k]->kind == CKPT_JAVASER_PRIM ? wprim(w, d->fields[k]) : wcontent(w, d->fields[k])) < 0)
				return -1;
		if ((d->cls->flags & CKPT_JAVASER_SC_WRITE_METHOD) && wannotation(w, d->extra, d->nextra) < 0)
			return -1;
	}
	return 0;
}

static int
warray(struct jw *w, const struct ckpt_javaser_value *v)
{
	if (u8(w, TC_ARRAY) < 0 || wclassdesc(w, v->cls) < 0 || assign(w, v) < 0 || be(w, v->n, 4) < 0)
		return -1;
	for (size_t i = 0; i < v->n; i++)
		if ((v->items[i]->kind == CKPT_JAVASER_PRIM ? wprim(w, v->items[i]) : wcontent(w, v->items[i])) < 0)
			return -1;
	return 0;
}

static int
wcontent(struct jw *w, const struct ckpt_javaser_value *v)
{
	int r;

	if (w->depth++ >= w->limit)
		return ckpt_err_set(w->e, CKPT_ERR_INPUT, "", "Java objects nested more than %d deep", w->limit);
	switch (v->kind) {
	case CKPT_JAVASER_NULL:
		r = u8(w, TC_NULL);
		break;
	case CKPT_JAVASER_PRIM:
		r = wprim(w, v);
		break;
	case CKPT_JAVASER_BLOCK:
		r = (v->len <= 0xff ? u8(w, TC_BLOCKDATA) < 0 || be(w, v->len, 1) < 0
				    : u8(w, 0x7a) < 0 || be(w, v->len, 4) < 0) ||
		    ckpt_bytebuf_add(w->out, v->bytes, v->len, w->e) < 0 ? -1 : 0;
		break;
	case CKPT_JAVASER_STRING: /* reached again: the same string (by its text's pointer) */
		if ((r = reference(w, v->str)) == 0)
			r = wstring(w, v->str, v->str);
		break;
	default:
		if ((r = reference(w, v)) != 0)
			break;
		if (v->kind == CKPT_JAVASER_OBJECT)
			r = wobject(w, v);
		else if (v->kind == CKPT_JAVASER_ARRAY)
			r = warray(w, v);
		else if (v->kind == CKPT_JAVASER_CLASS)
			r = u8(w, TC_CLASS) < 0 || wclassdesc(w, v->cls) < 0 || assign(w, v) < 0 ? -1 : 0;
		else /* ENUM: its name a new string, nothing refers to again (writeEnum) */
			r = u8(w, TC_ENUM) < 0 || wclassdesc(w, v->cls) < 0 || assign(w, v) < 0 ||
			    wstring(w, v->str, NULL) < 0 ? -1 : 0;
	}
	w->depth--;
	return r < 0 ? -1 : 0;
}

int
ckpt_javaser_write(const struct ckpt_javaser_value *v, int depth, struct ckpt_bytebuf *out, struct ckpt_err *e)
{
	struct jw w = {.out = out, .limit = depth, .e = e};
	int r = be(&w, CKPT_JAVASER_MAGIC, 4) < 0 || wcontent(&w, v) < 0 ? -1 : 0;

	free(w.keys);
	free(w.cl);
	return r;
}
