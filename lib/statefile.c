/*
 * statefile.c: the state file of one operator subtask inside an archive
 * (ckpt-archive(5)): tagged, length-prefixed little-endian records, so that
 * any bytes survive and a reader knows every length before it reads.
 */
#include <stdlib.h>
#include <string.h>

#include "snapshot-int.h"

#define OUTBUF ((size_t)1 << 16)

enum { TAG_OPSTATE = 'O', TAG_KV = 'K', TAG_IN = 'I', TAG_OUT = 'P', TAG_END = 'E' };

/* Smallest record sizes, to bound counts by the member size before allocating. */
#define MIN_LIST_ENTRY 8
#define MIN_KV (1 + 4 + 1 + 4 + 8 + 8)
#define MIN_CHAN (1 + 4 + 4 + 8)
#define MIN_OPSTATE (1 + 4 + 1 + 1 + 8)

struct ckpt_snap_out {
	FILE *f;
	struct ckpt_hasher *h;
	uint64_t size;
	size_t used;
	int err;
	unsigned char buf[OUTBUF];
};

struct ckpt_snap_out *
ckpt_snap_out_new(FILE *f)
{
	struct ckpt_snap_out *o = malloc(sizeof *o);

	if (o == NULL)
		return NULL;
	o->h = ckpt_hasher_new();
	if (o->h == NULL) {
		free(o);
		return NULL;
	}
	o->f = f;
	o->size = 0;
	o->used = 0;
	o->err = 0;
	return o;
}

void
ckpt_snap_out_free(struct ckpt_snap_out *o)
{
	if (o == NULL)
		return;
	ckpt_hasher_free(o->h);
	free(o);
}

static void
out_write(struct ckpt_snap_out *o, const void *p, size_t n)
{
	ckpt_hasher_update(o->h, p, n);
	if (fwrite(p, 1, n, o->f) != n)
		o->err = 1;
	o->size += n;
}

static void
out_flush(struct ckpt_snap_out *o)
{
	if (o->used)
		out_write(o, o->buf, o->used);
	o->used = 0;
}

static void
put(struct ckpt_snap_out *o, const void *p, size_t n)
{
	if (n > OUTBUF - o->used)
		out_flush(o);
	if (n >= OUTBUF / 2) {
		out_write(o, p, n);
		return;
	}
	memcpy(o->buf + o->used, p, n);
	o->used += n;
}

static void
put_u8(struct ckpt_snap_out *o, unsigned v)
{
	unsigned char b = (unsigned char)v;

	put(o, &b, 1);
}

static void
put_u32(struct ckpt_snap_out *o, uint32_t v)
{
	unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
			      (unsigned char)(v >> 24)};

	put(o, b, 4);
}

static void
put_u64(struct ckpt_snap_out *o, uint64_t v)
{
	unsigned char b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	put(o, b, 8);
}

static void
put_name(struct ckpt_snap_out *o, const char *s)
{
	size_t n = strlen(s);

	put_u32(o, (uint32_t)n);
	put(o, s, n);
	put_u8(o, 0);
}

static void
put_bytes(struct ckpt_snap_out *o, const struct ckpt_bytes *b)
{
	put_u64(o, b->len);
	if (b->len)
		put(o, b->p, b->len);
}

int
ckpt_snap_out_subtask(struct ckpt_snap_out *o, const struct ckpt_subtask *st)
{
	put(o, SNAP_MAGIC, SNAP_MAGIC_LEN);
	for (size_t i = 0; i < st->nops; i++) {
		const struct ckpt_opstate *os = &st->ops[i];

		put_u8(o, TAG_OPSTATE);
		put_name(o, os->name);
		put_u8(o, os->mode);
		put_u64(o, os->n);
		for (size_t k = 0; k < os->n; k++)
			put_bytes(o, &os->entries[k]);
	}
	for (size_t k = 0; k < st->nkv; k++) {
		put_u8(o, TAG_KV);
		put_name(o, st->kv[k].state);
		put_u32(o, st->kv[k].key_group);
		put_bytes(o, &st->kv[k].key);
		put_bytes(o, &st->kv[k].value);
	}
	for (size_t k = 0; k < st->nin; k++) {
		put_u8(o, TAG_IN);
		put_u32(o, st->in[k].a);
		put_u32(o, st->in[k].b);
		put_bytes(o, &st->in[k].data);
	}
	for (size_t k = 0; k < st->nout; k++) {
		put_u8(o, TAG_OUT);
		put_u32(o, st->out[k].a);
		put_u32(o, st->out[k].b);
		put_bytes(o, &st->out[k].data);
	}
	put_u8(o, TAG_END);
	return o->err ? -1 : 0;
}

int
ckpt_snap_out_finish(struct ckpt_snap_out *o, uint64_t *size, uint64_t *xxh3)
{
	out_flush(o);
	*size = o->size;
	*xxh3 = ckpt_hasher_digest(o->h);
	ckpt_hasher_reset(o->h);
	o->size = 0;
	if (o->err)
		return -1;
	return 0;
}

/* ---- decoding */

struct cur {
	unsigned char *p;
	size_t len, off;
	const char *where;
	struct ckpt_err *e;
};

static int
bad(struct cur *c, const char *what)
{
	return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->where, "damaged state file: %s at byte %zu", what, c->off);
}

static int
need(struct cur *c, uint64_t n)
{
	if (n > c->len - c->off)
		return bad(c, "record runs past the end");
	return 0;
}

static uint32_t
get_u32(struct cur *c)
{
	const unsigned char *b = c->p + c->off;

	c->off += 4;
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static uint64_t
get_u64(struct cur *c)
{
	const unsigned char *b = c->p + c->off;
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | b[i];
	c->off += 8;
	return v;
}

static int
get_tag(struct cur *c, int want, const char *what)
{
	if (need(c, 1) < 0)
		return -1;
	if (c->p[c->off] != want)
		return bad(c, what);
	c->off++;
	return 0;
}

/* A NUL-terminated name in place. */
static int
get_name(struct cur *c, char **out)
{
	uint32_t n;

	if (need(c, 4) < 0)
		return -1;
	n = get_u32(c);
	if (need(c, (uint64_t)n + 1) < 0)
		return -1;
	if (c->p[c->off + n] != 0 || memchr(c->p + c->off, 0, n) != NULL)
		return bad(c, "name not terminated");
	*out = (char *)c->p + c->off;
	c->off += (size_t)n + 1;
	return 0;
}

static int
get_bytes(struct cur *c, struct ckpt_bytes *b)
{
	uint64_t n;

	if (need(c, 8) < 0)
		return -1;
	n = get_u64(c);
	if (need(c, n) < 0)
		return -1;
	b->p = c->p + c->off;
	b->len = (size_t)n;
	c->off += (size_t)n;
	return 0;
}

static int
decode_opstate(struct cur *c, struct ckpt_opstate *os)
{
	char *name;

	if (get_tag(c, TAG_OPSTATE, "operator state record expected") < 0 || get_name(c, &name) < 0)
		return -1;
	if (strcmp(name, os->name) != 0)
		return bad(c, "operator state name differs from the manifest");
	if (need(c, 9) < 0)
		return -1;
	if (c->p[c->off++] != os->mode)
		return bad(c, "mode differs from the manifest");
	if (get_u64(c) != os->n)
		return bad(c, "entry count differs from the manifest");
	os->entries = calloc(os->n ? os->n : 1, sizeof *os->entries);
	if (os->entries == NULL)
		return ckpt_err_set(c->e, CKPT_ERR_NOMEM, c->where, "out of memory");
	for (size_t k = 0; k < os->n; k++)
		if (get_bytes(c, &os->entries[k]) < 0)
			return -1;
	return 0;
}

static int
decode_kv(struct cur *c, const struct ckpt_subtask *st, struct ckpt_kv *kv)
{
	if (get_tag(c, TAG_KV, "keyed entry expected") < 0 || get_name(c, &kv->state) < 0 || need(c, 4) < 0)
		return -1;
	kv->key_group = get_u32(c);
	if (!st->keyed || kv->key_group < st->kg_first || kv->key_group > st->kg_last)
		return bad(c, "key group outside the subtask's range");
	if (get_bytes(c, &kv->key) < 0 || get_bytes(c, &kv->value) < 0)
		return -1;
	return 0;
}

static int
decode_chan(struct cur *c, int tag, struct ckpt_chan *ch)
{
	if (get_tag(c, tag, tag == TAG_IN ? "input channel record expected" : "output channel record expected") < 0 ||
	    need(c, 8) < 0)
		return -1;
	ch->a = get_u32(c);
	ch->b = get_u32(c);
	return get_bytes(c, &ch->data);
}

/* The counts of the manifest must fit in len before anything is allocated from them. */
static int
counts_fit(const struct ckpt_subtask *st, size_t len)
{
	uint64_t need = SNAP_MAGIC_LEN + 1, lim = len;

	for (size_t i = 0; i < st->nops; i++) {
		if (st->ops[i].n > lim / MIN_LIST_ENTRY)
			return 0;
		need += MIN_OPSTATE + st->ops[i].n * MIN_LIST_ENTRY;
		if (need > lim)
			return 0;
	}
	if (st->nkv > lim / MIN_KV || st->nin > lim / MIN_CHAN || st->nout > lim / MIN_CHAN)
		return 0;
	need += st->nkv * MIN_KV + (st->nin + st->nout) * MIN_CHAN;
	return need <= lim;
}

static int
decode_all(struct cur *c, struct ckpt_subtask *st)
{
	if (c->len < SNAP_MAGIC_LEN || memcmp(c->p, SNAP_MAGIC, SNAP_MAGIC_LEN) != 0)
		return bad(c, "no " SNAP_MAGIC " magic");
	c->off = SNAP_MAGIC_LEN;
	if (!counts_fit(st, c->len))
		return bad(c, "the manifest's counts do not fit in the file");
	for (size_t i = 0; i < st->nops; i++)
		if (decode_opstate(c, &st->ops[i]) < 0)
			return -1;
	st->kv = calloc(st->nkv ? st->nkv : 1, sizeof *st->kv);
	st->in = calloc(st->nin ? st->nin : 1, sizeof *st->in);
	st->out = calloc(st->nout ? st->nout : 1, sizeof *st->out);
	if (st->kv == NULL || st->in == NULL || st->out == NULL)
		return ckpt_err_set(c->e, CKPT_ERR_NOMEM, c->where, "out of memory");
	for (size_t k = 0; k < st->nkv; k++)
		if (decode_kv(c, st, &st->kv[k]) < 0)
			return -1;
	for (size_t k = 0; k < st->nin; k++)
		if (decode_chan(c, TAG_IN, &st->in[k]) < 0)
			return -1;
	for (size_t k = 0; k < st->nout; k++)
		if (decode_chan(c, TAG_OUT, &st->out[k]) < 0)
			return -1;
	if (get_tag(c, TAG_END, "end record expected") < 0)
		return -1;
	if (c->off != c->len)
		return bad(c, "bytes after the end record");
	return 0;
}

int
ckpt_snap_decode_subtask(struct ckpt_subtask *st, void *buf, size_t len, const char *where,
		    struct ckpt_err *e)
{
	struct cur c = {.p = buf, .len = len, .where = where, .e = e};

	st->arena = ckpt_snap_arena_new();
	if (st->arena == NULL) {
		free(buf);
		return ckpt_err_set(e, CKPT_ERR_NOMEM, where, "out of memory");
	}
	if (ckpt_snap_arena_adopt(st->arena, buf) < 0)
		return ckpt_err_set(e, CKPT_ERR_NOMEM, where, "out of memory");
	st->loaded = 1; /* so that a failure below frees what was allocated */
	if (decode_all(&c, st) < 0 || ckpt_subtask_recount(st, e) < 0)
		return -1;
	return 0;
}
