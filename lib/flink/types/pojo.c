/* pojo.c: the values of Flink's PojoSerializer (null, the class's fields, a subclass's value) and
 * the subclass maps of its snapshot, whose field map serializer.c reads. */
#include <stdlib.h>
#include <string.h>

#include "types.h"

#define OPTIONAL_MAP_HEADER 0x4f2c69a3d70LL

/* PojoSerializer's flags byte. */
enum { IS_NULL = 1, NO_SUBCLASS = 2, IS_SUBCLASS = 4, IS_TAGGED_SUBCLASS = 8 };

/* One subclass: its name and its snapshot (NULL: absent or not one ckpt reads), taken. */
static int
add_sub(struct ckpt_fsrc *s, struct ckpt_fser *t, char *name, struct ckpt_fser *k, const struct ckpt_fser_ops *ops)
{
	if (ckpt_grow(&t->subs, &t->subcap, t->nsubs + 1, sizeof *t->subs, 4, NULL) < 0 ||
	    ckpt_grow(&t->subnames, &t->subnamecap, t->nsubs + 1, sizeof *t->subnames, 4, NULL) < 0) {
		free(name);
		ops->free(k);
		return ckpt_fsrc_nomem(s);
	}
	t->subs[t->nsubs] = k;
	t->subnames[t->nsubs++] = name;
	return 0;
}

/* The snapshot in a frame of n bytes at p: NULL when it is one ckpt cannot step over. */
static int
frame_snapshot(struct ckpt_fsrc *s, const unsigned char *p, size_t n, struct ckpt_fser **k,
	       const struct ckpt_fser_ops *ops)
{
	struct ckpt_fsrc f;
	int r;

	ckpt_fsrc_mem(&f, p, n, s->where, s->e);
	r = ops->read(&f, 0, k);
	if (r == 0 && !ckpt_fsrc_drained(&f))
		r = ckpt_fsrc_fail(&f, "subclass snapshot shorter than its frame");
	ckpt_fsrc_release(&f);
	if (r != 0) {
		ops->free(*k);
		*k = NULL;
	}
	return r < 0 ? -1 : 0;
}

int
ckpt_fser_optional_map_size(struct ckpt_fsrc *s, int32_t most, const char *what, int32_t *n)
{
	int64_t header;

	if (ckpt_fsrc_i64(s, &header, "optional map header") < 0)
		return -1;
	if (header != OPTIONAL_MAP_HEADER)
		return ckpt_fsrc_fail(s, "optional map header %llx (%llx expected)", (unsigned long long)header,
				      (unsigned long long)OPTIONAL_MAP_HEADER);
	if (ckpt_fsrc_i32(s, n, "optional map size") < 0)
		return -1;
	if (*n < 0 || *n > most)
		return ckpt_fsrc_fail(s, "%s %d", what, *n);
	return 0;
}

/* A LinkedOptionalMap of subclasses: per entry the class name, the class (a framed optional,
 * absent when the class is gone) and its serializer snapshot (a framed optional). */
static int
read_subclasses(struct ckpt_fsrc *s, struct ckpt_fser *t, int32_t most, const struct ckpt_fser_ops *ops)
{
	int32_t n;

	if (ckpt_fser_optional_map_size(s, most, "subclass count", &n) < 0)
		return -1;
	for (int32_t i = 0; i < n; i++) {
		struct ckpt_fser *k = NULL;
		unsigned char *frame;
		size_t len;
		char *name;
		uint8_t has;

		if (ckpt_fsrc_utf(s, &name, "subclass name") < 0)
			return -1;
		for (int part = 0; part < 2; part++) {
			if (ckpt_fsrc_u8(s, &has, "optional map flag") < 0)
				goto fail;
			if (has > 1) {
				ckpt_fsrc_fail(s, "optional map flag %u", has);
				goto fail;
			}
			if (!has)
				continue;
			if (ckpt_fsrc_blob(s, &frame, &len, "optional map frame") < 0)
				goto fail;
			if (part == 1 && frame_snapshot(s, frame, len, &k, ops) < 0) {
				free(frame);
				goto fail;
			}
			free(frame);
		}
		if (add_sub(s, t, name, k, ops) < 0)
			return -1;
		continue;
fail:
		free(name);
		return -1;
	}
	return 0;
}

int
ckpt_fser_pojo_subclasses(struct ckpt_fsrc *s, struct ckpt_fser *t, const struct ckpt_fser_ops *ops)
{
	if (read_subclasses(s, t, 127, ops) < 0) /* a tag is a byte */
		return -1;
	t->nreg = t->nsubs;
	return read_subclasses(s, t, 65535, ops);
}

/* The fields of t, each after its null flag, as members of the object open in o. */
static int
fields(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o, const struct ckpt_fser_ops *ops)
{
	int32_t h;
	int hd;

	for (size_t i = 0; i < t->nkids; i++) {
		uint8_t isnull;

		if (ckpt_fsrc_u8(s, &isnull, "POJO field null flag") < 0)
			return -1;
		if (isnull > 1)
			return ckpt_fsrc_fail(s, "POJO field null flag %u (0 or 1 expected)", isnull);
		ckpt_fout_key(o, t->names[i]);
		if (isnull ? ckpt_fout_null(o) < 0 && ckpt_fsrc_nomem(s) : ops->emit(t->kids[i], s, o, &h, &hd) < 0)
			return -1;
	}
	return 0;
}

/* A subclass's value: {"subclass", "tag", "value"}, the value through the subclass's snapshot
 * (registered: by its tag; not registered: by its name in the snapshot's cache). */
static int
subclass(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o, uint8_t flags,
	 const struct ckpt_fser_ops *ops)
{
	const struct ckpt_fser *k = NULL;
	const char *name = NULL, *b;
	char *cls = NULL;
	int32_t h;
	int hd, r = -1, tag = -1;
	uint8_t x;

	if (flags == IS_TAGGED_SUBCLASS) {
		if (ckpt_fsrc_u8(s, &x, "POJO subclass tag") < 0)
			return -1;
		if (x >= t->nreg)
			return ckpt_fsrc_fail(s, "POJO subclass tag %u of %s, which has %zu registered subclasses", x,
					      t->name, t->nreg);
		tag = x;
		name = t->subnames[x];
		k = t->subs[x];
	} else {
		if (ckpt_fsrc_utf(s, &cls, "POJO subclass name") < 0)
			return -1;
		name = cls;
		for (size_t i = t->nreg; i < t->nsubs; i++)
			if (strcmp(t->subnames[i], cls) == 0)
				k = t->subs[i];
	}
	/* without its serializer a subclass's value has no known end: named, never guessed past */
	if (k == NULL)
		ckpt_fsrc_fail(s, "POJO subclass %s of %s: its snapshot is not %s", name, t->name,
			       tag >= 0 ? "one ckpt reads" : "in the snapshot (not registered, not cached)");
	else if ((b = ops->blocker(k)) != NULL)
		ckpt_fsrc_fail(s, "POJO subclass %s of %s: its serializer %s is not one ckpt decodes", name, t->name, b);
	else if (ckpt_fout_open(o, '{') < 0)
		ckpt_fsrc_nomem(s);
	else {
		ckpt_fout_key_lit(o, "subclass");
		r = ckpt_fout_str(o, name, strlen(name));
		ckpt_fout_key_lit(o, "tag");
		r |= tag >= 0 ? ckpt_fout_int(o, tag) : ckpt_fout_null(o);
		ckpt_fout_key_lit(o, "value");
		r = r < 0 ? ckpt_fsrc_nomem(s) : ops->emit(k, s, o, &h, &hd);
		if (r == 0)
			ckpt_fout_close(o);
	}
	free(cls);
	return r;
}

/* PojoSerializer: flags (1 null, 2 the class itself, 4 a subclass by name, 8 by tag), then per
 * field a null flag and the field, or the subclass's name or tag and its serializer's value. */
static int
pojo_value(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o, const struct ckpt_fser_ops *ops)
{
	uint8_t flags;

	if (ckpt_fsrc_u8(s, &flags, "POJO flags") < 0)
		return -1;
	switch (flags) {
	case IS_NULL:
		return ckpt_fout_null(o) < 0 ? ckpt_fsrc_nomem(s) : 0;
	case NO_SUBCLASS:
		if (ckpt_fout_open(o, '{') < 0)
			return ckpt_fsrc_nomem(s);
		if (fields(t, s, o, ops) < 0)
			return -1;
		ckpt_fout_close(o);
		return 0;
	case IS_SUBCLASS: case IS_TAGGED_SUBCLASS:
		return subclass(t, s, o, flags, ops);
	default:
		return ckpt_fsrc_fail(s, "POJO flags %u of %s (1, 2, 4 or 8 expected)", flags, t->name);
	}
}

int
ckpt_fser_pojo_value(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o,
		     const struct ckpt_fser_ops *ops)
{
	struct ckpt_fout j; /* the same decoder, into jansson; the stacks are written before read */

	if (o->mode != FOUT_WRITE)
		return pojo_value(t, s, o, ops);
	/* built first: a field name the snapshot repeats (a subclass's shadowing one) is kept once,
	 * as jansson does */
	j.mode = FOUT_JSON;
	j.root = NULL;
	j.depth = 0;
	if (pojo_value(t, s, &j, ops) < 0) {
		ckpt_fout_reset(&j);
		return -1;
	}
	return ckpt_fout_json(o, j.root) < 0 ? ckpt_fsrc_nomem(s) : 0;
}
