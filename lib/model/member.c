/*
 * member.c: the state file of one operator subtask inside an archive
 * (ckpt-archive(5)): tagged, length-prefixed little-endian records, so that
 * any bytes survive and a reader knows every length before it reads.
 */
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define OUTBUF ((size_t)1 << 16)

enum { TAG_OPSTATE = 'O', TAG_KV = 'K', TAG_IN = 'I', TAG_OUT = 'P', TAG_END = 'E' };

/* Smallest record sizes, to bound counts by the member size before allocating. */
#define MIN_LIST_ENTRY 8
#define MIN_KV (1 + 4 + 1 + 4 + 8 + 8)
#define MIN_CHAN (1 + 4 + 4 + 8)
#define MIN_OPSTATE (1 + 4 + 1 + 1 + 8)

struct ckpt_model_out {
	FILE *f;
	struct ckpt_hasher *h;
	uint64_t size;
	size_t used;
	int err;
	unsigned char buf[OUTBUF];
};

struct ckpt_model_out *
ckpt_model_out_new(FILE *f)
{
	struct ckpt_model_out *o = malloc(sizeof *o);

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
ckpt_model_out_free(struct ckpt_model_out *o)
{
	if (o == NULL)
		return;
	ckpt_hasher_free(o->h);
	free(o);
}

static void
out_write(struct ckpt_model_out *o, const void *p, size_t n)
{
	ckpt_hasher_update(o->h, p, n);
	if (fwrite(p, 1, n, o->f) != n)
		o->err = 1;
	o->size += n;
}

static void
out_flush(struct ckpt_model_out *o)
{
	if (o->used)
		out_write(o, o->buf, o->used);
	o->used = 0;
}

/*
 * Append n bytes: small ones through the buffer, large ones (half the buffer
 * or more) written straight through.  What is buffered always goes out first,
 * large or not: the bytes reach the file in the order they were put.
 */
static void
put(struct ckpt_model_out *o, const void *p, size_t n)
{
	if (n >= OUTBUF / 2) {
		out_flush(o);
		out_write(o, p, n);
		return;
	}
	if (n > OUTBUF - o->used)
		out_flush(o);
	memcpy(o->buf + o->used, p, n);
	o->used += n;
}

static void
put_u8(struct ckpt_model_out *o, unsigned v)
{
	unsigned char b = (unsigned char)v;

	put(o, &b, 1);
}

static void
put_u32(struct ckpt_model_out *o, uint32_t v)
{
	unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
			      (unsigned char)(v >> 24)};

	put(o, b, 4);
}

static void
put_u64(struct ckpt_model_out *o, uint64_t v)
{
	unsigned char b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	put(o, b, 8);
}

static void
put_name(struct ckpt_model_out *o, const char *s)
{
	size_t n = strlen(s);

	put_u32(o, (uint32_t)n);
	put(o, s, n);
	put_u8(o, 0);
}

static void
put_bytes(struct ckpt_model_out *o, const struct ckpt_bytes *b)
{
	put_u64(o, b->len);
	if (b->len)
		put(o, b->p, b->len);
}

int
ckpt_model_out_subtask(struct ckpt_model_out *o, const struct ckpt_subtask *st)
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
ckpt_model_out_finish(struct ckpt_model_out *o, uint64_t *size, uint64_t *xxh3)
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
	uint64_t v = ckpt_load_le(c->p + c->off, 8);

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
	struct ckpt_utf8 u = {0};

	if (ckpt_utf8_feed(&u, c->p + c->off, n) < 0 || !ckpt_utf8_done(&u))
		return bad(c, "name not UTF-8");
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
		return ckpt_err_nomem(c->e, c->where);
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
		return ckpt_err_nomem(c->e, c->where);
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
ckpt_model_decode_subtask(struct ckpt_subtask *st, void *buf, size_t len, const char *where,
		    struct ckpt_err *e)
{
	struct cur c = {.p = buf, .len = len, .where = where, .e = e};

	st->arena = ckpt_model_arena_new();
	if (st->arena == NULL) {
		free(buf);
		return ckpt_err_nomem(e, where);
	}
	if (ckpt_model_arena_adopt(st->arena, buf) < 0)
		return ckpt_err_nomem(e, where);
	st->loaded = 1; /* so that a failure below frees what was allocated */
	if (decode_all(&c, st) < 0 || ckpt_subtask_recount(st, e) < 0)
		return -1;
	return 0;
}

/* ---- checking a state file as it streams past (ckpt-inspect -c) */

/*
 * Where the checker is in the file: each value is one field, read whole into
 * acc when it is short, compared or skipped block by block when it is a name
 * or data.  The checks and the words are the decoder's, at the same bytes.
 */
enum at {
	AT_MAGIC, AT_OP_TAG, AT_OP_NAMELEN, AT_OP_NAME, AT_OP_MODECOUNT, AT_OP_LEN, AT_OP_DATA,
	AT_KV_TAG, AT_KV_NAMELEN, AT_KV_NAME, AT_KV_KG, AT_KV_KEYLEN, AT_KV_KEY, AT_KV_VALLEN, AT_KV_VAL,
	AT_CH_TAG, AT_CH_AB, AT_CH_LEN, AT_CH_DATA, AT_END, AT_AFTER, AT_FAILED
};

struct ckpt_model_check {
	const struct ckpt_subtask *st;
	uint64_t size, off; /* the file's size (the manifest's); bytes seen */
	enum at at;
	size_t i, k;        /* operator state, or keyed entry, or channel; entry of the operator state */
	int out;            /* channels: the output ones */
	uint64_t start, left; /* the current field: where it starts, bytes still to come */
	uint64_t width;
	unsigned char acc[16];
	const char *want;   /* names: the manifest's, or NULL */
	int nul, differs;   /* names: a NUL inside; other than want */
	struct ckpt_utf8 u8; /* names: checked as they stream by */
	char what[128];
	uint64_t fail_off;
};

struct ckpt_model_check *
ckpt_model_check_new(const struct ckpt_subtask *st, uint64_t size)
{
	struct ckpt_model_check *c = calloc(1, sizeof *c);

	if (c == NULL)
		return NULL;
	c->st = st;
	c->size = size;
	c->at = AT_MAGIC;
	c->left = c->width = SNAP_MAGIC_LEN;
	if (size < SNAP_MAGIC_LEN)
		c->at = AT_FAILED, snprintf(c->what, sizeof c->what, "no " SNAP_MAGIC " magic");
	return c;
}

void
ckpt_model_check_free(struct ckpt_model_check *c)
{
	free(c);
}

static int
chk_fail(struct ckpt_model_check *c, uint64_t off, const char *what)
{
	c->at = AT_FAILED;
	c->fail_off = off;
	snprintf(c->what, sizeof c->what, "%s", what);
	return -1;
}

/* The next field: width bytes at c->off, which must be in the file (else -1). */
static int
chk_field(struct ckpt_model_check *c, enum at at, uint64_t width)
{
	if (width > c->size - c->off)
		return chk_fail(c, c->off, "record runs past the end");
	c->at = at;
	c->start = c->off;
	c->width = c->left = width;
	return 0;
}

static uint64_t
chk_le(const struct ckpt_model_check *c, size_t from, size_t n)
{
	return ckpt_load_le(c->acc + from, n);
}

/* A name of n bytes and its NUL comes next, to be want when want is not NULL. */
static int
chk_name(struct ckpt_model_check *c, enum at at, uint64_t n, const char *want)
{
	c->want = want != NULL && strlen(want) == n ? want : NULL;
	c->differs = want != NULL && c->want == NULL;
	c->nul = 0;
	memset(&c->u8, 0, sizeof c->u8);
	return chk_field(c, at, n + 1);
}

static int chk_next_opstate(struct ckpt_model_check *c);
static int chk_next_kv(struct ckpt_model_check *c);
static int chk_next_chan(struct ckpt_model_check *c);

static int
chk_next_entry(struct ckpt_model_check *c)
{
	if (c->k < c->st->ops[c->i].n)
		return chk_field(c, AT_OP_LEN, 8);
	c->i++;
	return chk_next_opstate(c);
}

static int
chk_next_opstate(struct ckpt_model_check *c)
{
	c->k = 0;
	if (c->i < c->st->nops)
		return chk_field(c, AT_OP_TAG, 1);
	return chk_next_kv(c);
}

static int
chk_next_kv(struct ckpt_model_check *c)
{
	if (c->k < c->st->nkv)
		return chk_field(c, AT_KV_TAG, 1);
	c->k = 0;
	c->out = 0;
	return chk_next_chan(c);
}

static int
chk_next_chan(struct ckpt_model_check *c)
{
	if (!c->out && c->k == c->st->nin)
		c->out = 1, c->k = 0;
	if (c->k < (c->out ? c->st->nout : c->st->nin))
		return chk_field(c, AT_CH_TAG, 1);
	return chk_field(c, AT_END, 1);
}

/* A name is whole: its NUL and its UTF-8 (0, or -1 with c saying why). */
static int
chk_name_done(struct ckpt_model_check *c)
{
	if (c->nul || c->acc[0] != 0)
		return chk_fail(c, c->start, "name not terminated");
	if (!ckpt_utf8_done(&c->u8))
		return chk_fail(c, c->start, "name not UTF-8");
	return 0;
}

/* chk_done of the magic and of an operator state's fields (the fields before AT_KV_TAG) */
static int
chk_done_op(struct ckpt_model_check *c)
{
	const struct ckpt_subtask *st = c->st;

	switch (c->at) {
	case AT_MAGIC:
		if (memcmp(c->acc, SNAP_MAGIC, SNAP_MAGIC_LEN) != 0)
			return chk_fail(c, 0, "no " SNAP_MAGIC " magic");
		if (!counts_fit(st, c->size))
			return chk_fail(c, c->off, "the manifest's counts do not fit in the file");
		c->i = 0;
		return chk_next_opstate(c);
	case AT_OP_TAG:
		if (c->acc[0] != TAG_OPSTATE)
			return chk_fail(c, c->start, "operator state record expected");
		return chk_field(c, AT_OP_NAMELEN, 4);
	case AT_OP_NAMELEN:
		return chk_name(c, AT_OP_NAME, chk_le(c, 0, 4), st->ops[c->i].name);
	case AT_OP_NAME:
		if (chk_name_done(c) < 0)
			return -1;
		if (c->differs)
			return chk_fail(c, c->off, "operator state name differs from the manifest");
		return chk_field(c, AT_OP_MODECOUNT, 9);
	case AT_OP_MODECOUNT:
		if (c->acc[0] != st->ops[c->i].mode)
			return chk_fail(c, c->start + 1, "mode differs from the manifest");
		if (chk_le(c, 1, 8) != st->ops[c->i].n)
			return chk_fail(c, c->off, "entry count differs from the manifest");
		return chk_next_entry(c);
	case AT_OP_LEN:
		return chk_field(c, AT_OP_DATA, chk_le(c, 0, 8));
	case AT_OP_DATA:
		c->k++;
		return chk_next_entry(c);
	default:
		return 0;
	}
}

/* chk_done of a keyed entry's fields (AT_KV_TAG to AT_KV_VAL) */
static int
chk_done_kv(struct ckpt_model_check *c)
{
	uint64_t v;

	switch (c->at) {
	case AT_KV_TAG:
		if (c->acc[0] != TAG_KV)
			return chk_fail(c, c->start, "keyed entry expected");
		return chk_field(c, AT_KV_NAMELEN, 4);
	case AT_KV_NAMELEN:
		return chk_name(c, AT_KV_NAME, chk_le(c, 0, 4), NULL);
	case AT_KV_NAME:
		return chk_name_done(c) < 0 ? -1 : chk_field(c, AT_KV_KG, 4);
	case AT_KV_KG:
		v = chk_le(c, 0, 4);
		if (!c->st->keyed || v < c->st->kg_first || v > c->st->kg_last)
			return chk_fail(c, c->off, "key group outside the subtask's range");
		return chk_field(c, AT_KV_KEYLEN, 8);
	case AT_KV_KEYLEN:
		return chk_field(c, AT_KV_KEY, chk_le(c, 0, 8));
	case AT_KV_KEY:
		return chk_field(c, AT_KV_VALLEN, 8);
	case AT_KV_VALLEN:
		return chk_field(c, AT_KV_VAL, chk_le(c, 0, 8));
	case AT_KV_VAL:
		c->k++;
		return chk_next_kv(c);
	default:
		return 0;
	}
}

/* The current field is whole: check it and go on to the next; -1 when it is wrong (c says why). */
static int
chk_done(struct ckpt_model_check *c)
{
	if (c->at < AT_KV_TAG)
		return chk_done_op(c);
	if (c->at < AT_CH_TAG)
		return chk_done_kv(c);
	switch (c->at) {
	case AT_CH_TAG:
		if (c->acc[0] != (c->out ? TAG_OUT : TAG_IN))
			return chk_fail(c, c->start,
					c->out ? "output channel record expected" : "input channel record expected");
		return chk_field(c, AT_CH_AB, 8);
	case AT_CH_AB:
		return chk_field(c, AT_CH_LEN, 8);
	case AT_CH_LEN:
		return chk_field(c, AT_CH_DATA, chk_le(c, 0, 8));
	case AT_CH_DATA:
		c->k++;
		return chk_next_chan(c);
	case AT_END:
		if (c->acc[0] != TAG_END)
			return chk_fail(c, c->start, "end record expected");
		c->at = AT_AFTER;
		return 0;
	default: /* AT_AFTER, AT_FAILED */
		return 0;
	}
}

/* Fields of no bytes (empty data) are done at once. */
static void
chk_settle(struct ckpt_model_check *c)
{
	while (c->at != AT_FAILED && c->at != AT_AFTER && c->left == 0)
		if (chk_done(c) < 0)
			break;
}

static int
chk_skips(enum at at)
{
	return at == AT_OP_DATA || at == AT_KV_KEY || at == AT_KV_VAL || at == AT_CH_DATA;
}

void
ckpt_model_check_feed(struct ckpt_model_check *c, const void *buf, size_t n)
{
	const unsigned char *p = buf;

	chk_settle(c);
	while (n > 0 && c->at != AT_FAILED) {
		size_t take;

		if (c->at == AT_AFTER) {
			chk_fail(c, c->off, "bytes after the end record");
			break;
		}
		take = c->left < n ? (size_t)c->left : n;
		if (c->at == AT_OP_NAME || c->at == AT_KV_NAME) {
			uint64_t pos = c->width - c->left; /* of the name; its NUL at width - 1 */
			size_t body = pos + take <= c->width - 1 ? take : (size_t)(c->width - 1 - pos);

			if (memchr(p, 0, body) != NULL)
				c->nul = 1;
			ckpt_utf8_feed(&c->u8, p, body);
			if (c->want && memcmp(c->want + pos, p, body) != 0)
				c->differs = 1;
			if (body < take)
				c->acc[0] = p[body];
		} else if (!chk_skips(c->at)) {
			memcpy(c->acc + (c->width - c->left), p, take);
		}
		p += take;
		n -= take;
		c->off += take;
		c->left -= take;
		chk_settle(c);
	}
}

int
ckpt_model_check_end(struct ckpt_model_check *c, char *what, size_t size)
{
	chk_settle(c);
	if (c->at == AT_AFTER)
		return 0;
	if (c->at != AT_FAILED)
		chk_fail(c, c->off, "record runs past the end");
	snprintf(what, size, "damaged state file: %s at byte %llu", c->what, (unsigned long long)c->fail_off);
	return -1;
}
