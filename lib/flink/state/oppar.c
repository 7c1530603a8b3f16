/* oppar.c: an operator's operator state (list, union, broadcast) at a new parallelism (ckpt-merge -P
 * on an operator holding it beside keyed state or alone, or --max-parallelism below its parallelism;
 * regroup.c), one stream a new subtask: the elements Flink's RoundRobinOperatorStateRepartitioner
 * gives that subtask when it restores the operator at that parallelism, copied as the old streams
 * hold them.  A savepoint records one operator state handle a subtask
 * (MetadataV2V3SerializerBase.serializeSingleton), so the old streams cannot be named with new
 * offsets: each new subtask's stream is written (inline, or a file when the old ones were files).
 * Union state: old subtask j's elements go to new subtask j mod N, so that Flink's union on restore
 * (at N, unchanged) hands every subtask every element once. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readers.h"

/* One old handle's entry of a state: its handle (opdata), its offsets (n of them, big-endian i64s). */
struct loc {
	size_t di;
	const unsigned char *offs;
	uint32_t n;
};

/* One state name of one mode, its entries in the old subtasks' order. */
struct sname {
	const unsigned char *p;
	size_t len;
	int mode;
	int32_t hash;
	struct loc *locs;
	size_t nlocs, cap;
};

/* One handle of a new subtask: an old stream, and per state the offsets it restores. */
struct ohand {
	size_t di;
	struct loc *st; /* per state: .di the state's index in names */
	size_t nst, cap;
};

struct pctx {
	const unsigned char *buf;
	const struct ckpt_fmeta_spans *sp;
	struct sname *names;
	size_t nnames, ncap;
	size_t *ord;        /* names in Flink's order: by mode, then as its HashMap iterates them */
	struct ohand **sub; /* per new subtask, its handles */
	size_t *nsub, *csub;
	uint32_t par;
	struct ckpt_fstate_backing_data *b;
	const struct ckpt_operator *op;
	const char *dir;
	size_t opk;
	struct ckpt_bytebuf *raw; /* per opdata: its stream's bytes, once read */
	const unsigned char *hdr; /* the new streams' header (hdrlen bytes, hn states), stream first's */
	size_t hdrlen, hn, first;
	int files;                /* the new streams in files of dir */
	json_t *written;          /* the files written */
	struct ckpt_err *e;
};

/* The bucket of hash h in a java.util.HashMap of n keys (its table grown from 16 as Flink's fill it). */
static uint32_t
bucket(int32_t h, size_t n)
{
	uint32_t u = (uint32_t)h, cap = 16;

	while (n > (size_t)cap / 4 * 3)
		cap *= 2;
	return (u ^ (u >> 16)) & (cap - 1);
}

/* The order a HashMap iterates n keys put in index order: by bucket(i), then as put. */
static void
hash_order(size_t *ord, size_t n, uint32_t (*key)(const void *, size_t), const void *arg)
{
	for (size_t i = 0; i < n; i++)
		ord[i] = i;
	for (size_t i = 1; i < n; i++) /* insertion sort, stable: n is small */
		for (size_t j = i; j > 0 && key(arg, ord[j - 1]) > key(arg, ord[j]); j--) {
			size_t t = ord[j];

			ord[j] = ord[j - 1];
			ord[j - 1] = t;
		}
}

/* Name i's bucket in the HashMap of its mode's names (Flink's groupByStateMode keeps one a mode). */
static uint32_t
name_key(const void *arg, size_t i)
{
	const struct pctx *c = arg;
	size_t n = 0;

	for (size_t k = 0; k < c->nnames; k++)
		n += c->names[k].mode == c->names[i].mode;
	return bucket(c->names[i].hash, n);
}

/* State name p[0, len) of mode: its entry, added when new. */
static struct sname *
name_of(struct pctx *c, const unsigned char *p, size_t len, int mode)
{
	for (size_t i = 0; i < c->nnames; i++)
		if (c->names[i].mode == mode && c->names[i].len == len && memcmp(c->names[i].p, p, len) == 0)
			return &c->names[i];
	if (ckpt_grow(&c->names, &c->ncap, c->nnames + 1, sizeof *c->names, 8, c->e) < 0)
		return NULL;
	c->names[c->nnames] = (struct sname){.p = p, .len = len, .mode = mode, .hash = ckpt_fser_java_mutf8_hash(p, len)};
	return &c->names[c->nnames++];
}

/* Handle di's state map read: each state's entry added to its name. */
static int
read_map(struct pctx *c, size_t di)
{
	const struct ckpt_fmeta_opdata *d = &c->sp->opdata[di];
	const unsigned char *q = c->buf + d->head;
	size_t pos = 4, ns = ckpt_load_be(q, 4);

	for (size_t i = 0; i < ns; i++) {
		size_t nl = ckpt_load_be(q + pos, 2);
		int mode = q[pos + 2 + nl];
		uint32_t no = (uint32_t)ckpt_load_be(q + pos + 3 + nl, 4);
		struct sname *s = name_of(c, q + pos + 2, nl, mode > 2 ? 0 : mode);

		if (s == NULL || ckpt_grow(&s->locs, &s->cap, s->nlocs + 1, sizeof *s->locs, 4, c->e) < 0)
			return -1;
		s->locs[s->nlocs++] = (struct loc){.di = di, .offs = q + pos + 7 + nl, .n = no};
		pos += 7 + nl + 8 * (size_t)no;
	}
	return 0;
}

/* Offsets of state s of loc (n from at) put into new subtask t's handle of loc's stream (Flink's merge map). */
static int
put(struct pctx *c, uint32_t t, size_t s, const struct loc *l, uint32_t at, uint32_t n)
{
	struct ohand *h = NULL;

	for (size_t i = 0; i < c->nsub[t] && h == NULL; i++)
		if (c->sub[t][i].di == l->di)
			h = &c->sub[t][i];
	if (h == NULL) {
		if (ckpt_grow(&c->sub[t], &c->csub[t], c->nsub[t] + 1, sizeof **c->sub, 4, c->e) < 0)
			return -1;
		h = &c->sub[t][c->nsub[t]++];
		*h = (struct ohand){.di = l->di};
	}
	for (size_t i = 0; i < h->nst; i++)
		if (h->st[i].di == s) {
			h->st[i] = (struct loc){.di = s, .offs = l->offs + 8 * (size_t)at, .n = n};
			return 0;
		}
	if (ckpt_grow(&h->st, &h->cap, h->nst + 1, sizeof *h->st, 4, c->e) < 0)
		return -1;
	h->st[h->nst++] = (struct loc){.di = s, .offs = l->offs + 8 * (size_t)at, .n = n};
	return 0;
}

/* repartitionSplitState: state s's entries in runs, each new subtask its share from *start round. */
static int
split(struct pctx *c, size_t s, uint32_t *start)
{
	const struct sname *x = &c->names[s];
	uint64_t total = 0;
	size_t li = 0;
	uint32_t oi = 0, next = *start;
	int64_t rem;

	for (size_t i = 0; i < x->nlocs; i++)
		total += x->locs[i].n;
	rem = (int64_t)(total % c->par);
	for (uint32_t i = 0; i < c->par; i++) {
		uint32_t t = (i + *start) % c->par;
		int64_t want = (int64_t)(total / c->par);

		if (rem > 0) {
			want++;
			rem--;
		} else if (rem == 0) {
			next = t;
			rem--;
		}
		while (want > 0) {
			const struct loc *l = &x->locs[li];
			int64_t left = (int64_t)l->n - oi;
			uint32_t from = oi, n = left > want ? (uint32_t)want : (uint32_t)left;

			if (left > want) {
				oi += (uint32_t)want;
			} else {
				oi = 0;
				li++;
			}
			want -= left;
			if (put(c, t, s, l, from, n) < 0)
				return -1;
		}
	}
	*start = next;
	return 0;
}

/* Every state, in Flink's order: split ones, then union ones to every subtask, then broadcast ones
 * (subtask t gets old subtask t mod the old count's copy). */
static int
repartition(struct pctx *c)
{
	uint32_t start = 0;

	for (int mode = 0; mode < 3; mode++)
		for (size_t k = 0; k < c->nnames; k++) {
			size_t s = c->ord[k];
			const struct sname *x = &c->names[s];

			if (x->mode != mode)
				continue;
			if (mode == 0 && split(c, s, &start) < 0)
				return -1;
			for (size_t i = 0; mode == 1 && i < x->nlocs; i++) /* union: once, Flink unites it on restore */
				if (put(c, c->sp->opdata[x->locs[i].di].subtask % c->par, s, &x->locs[i], 0, x->locs[i].n) < 0)
					return -1;
			for (uint32_t t = 0; mode == 2 && t < c->par; t++) /* broadcast: old t mod the old count's */
				if (put(c, t, s, &x->locs[t % x->nlocs], 0, x->locs[t % x->nlocs].n) < 0)
					return -1;
		}
	return 0;
}

/* Old stream di's bytes, read once (inline in the _metadata or its file): c->raw[di]. */
static int
load(struct pctx *c, size_t di)
{
	const struct ckpt_fmeta_opdata *d = &c->sp->opdata[di];
	const struct ckpt_subtask *st = NULL;
	struct ckpt_fstate_ctx x = {.b = c->b, .op = c->op, .e = c->e};
	struct ckpt_fsrc src = {.fd = -1};
	int fd = -1, rc = -1;

	if (c->raw[di].p)
		return 0;
	for (size_t i = 0; i < c->op->nsubtasks && st == NULL; i++)
		st = c->op->subtasks[i].index == d->subtask ? &c->op->subtasks[i] : NULL;
	if (st == NULL || d->handle >= st->nhandles)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->b->meta, "operator %s subtask %u: no such handle",
				    c->op->id, d->subtask);
	x.st = st;
	x.h = &st->handles[d->handle];
	snprintf(x.where, sizeof x.where, "%s", c->b->meta);
	if (ckpt_fstate_open_bytes(&x, &src, &fd) < 0 ||
	    ckpt_grow(&c->raw[di].p, &c->raw[di].cap, x.h->size + 1, 1, 64, c->e) < 0 ||
	    ckpt_fsrc_read(&src, c->raw[di].p, x.h->size, "operator state stream") < 0)
		goto out;
	c->raw[di].len = x.h->size;
	rc = 0;
out:
	ckpt_fsrc_release(&src);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Where the element of stream di at offset off ends: the next offset of any state there, else the
 * stream's end (Flink writes a stream's elements one after another). */
static size_t
elem_end(const struct pctx *c, size_t di, uint64_t off)
{
	const unsigned char *q = c->buf + c->sp->opdata[di].head;
	size_t pos = 4, ns = ckpt_load_be(q, 4), end = c->raw[di].len;

	for (size_t i = 0; i < ns; i++) {
		size_t nl = ckpt_load_be(q + pos, 2), no = ckpt_load_be(q + pos + 3 + nl, 4);

		for (size_t k = 0; k < no; k++) {
			uint64_t o = ckpt_load_be(q + pos + 7 + nl + 8 * k, 8);

			if (o > off && o < end)
				end = (size_t)o;
		}
		pos += 7 + nl + 8 * no;
	}
	return end;
}

/* Stream di's header: its length *len (where its first element starts, else the stream's end), its
 * state count *n when ckpt reads it (else 0: a header with a serializer ckpt cannot walk is copied as
 * it is all the same).  Compressed elements are copied as they are: Flink starts a new compressed
 * stream at each element's offset (CompressibleFSDataOutputStream.getPos flushes). */
static int
header_of(struct pctx *c, size_t di, size_t *n, size_t *len)
{
	const unsigned char *q = c->buf + c->sp->opdata[di].head;
	struct ckpt_fstate_header h = {0};
	size_t pos = 4, ns = ckpt_load_be(q, 4);
	struct ckpt_fsrc s;

	if (load(c, di) < 0)
		return -1;
	*len = c->raw[di].len;
	for (size_t i = 0; i < ns; i++) {
		size_t nl = ckpt_load_be(q + pos, 2), no = ckpt_load_be(q + pos + 3 + nl, 4);

		for (size_t k = 0; k < no; k++)
			if (ckpt_load_be(q + pos + 7 + nl + 8 * k, 8) < *len)
				*len = (size_t)ckpt_load_be(q + pos + 7 + nl + 8 * k, 8);
		pos += 7 + nl + 8 * no;
	}
	if (*len < 5)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->b->meta, "operator %s subtask %u: its operator state is a "
				    "stream shorter than a header", c->op->id, c->sp->opdata[di].subtask);
	ckpt_fsrc_mem(&s, c->raw[di].p, *len, c->b->meta, c->e);
	*n = ckpt_fstate_op_header(&s, &h) == 0 && !h.stopped ? h.n : 0;
	ckpt_fsrc_release(&s);
	ckpt_fstate_header_release(&h);
	*c->e = (struct ckpt_err){.kind = CKPT_ERR_NONE}; /* the count only: a header ckpt cannot walk is no error here */
	return 0;
}

/* The header the new streams start with: the old stream's with the most states (Flink registers
 * states lazily); the new streams are in files when an old one is. */
static int
pick_header(struct pctx *c)
{
	for (size_t di = 0; di < c->sp->nopdata; di++) {
		size_t n = 0, len = 0;

		if (c->sp->opdata[di].op != c->opk)
			continue;
		if (header_of(c, di, &n, &len) < 0)
			return -1;
		c->files |= c->sp->opdata[di].file;
		if (c->hdr == NULL || n > c->hn || (n == c->hn && len > c->hdrlen)) {
			c->hdr = c->raw[di].p;
			c->hdrlen = len;
			c->hn = n;
			c->first = di;
		}
	}
	return 0;
}

/* State s's elements of new subtask t appended to data, their offsets to m; *cnt: how many. */
static int
w_elements(struct pctx *c, uint32_t t, size_t s, struct ckpt_bytebuf *data, struct ckpt_bytebuf *m, size_t *cnt)
{
	for (size_t o = 0; o < c->op->parallelism; o++) /* the old streams in old-subtask order */
	for (size_t i = 0; i < c->nsub[t]; i++)
		for (size_t k = 0; c->sp->opdata[c->sub[t][i].di].subtask == o && k < c->sub[t][i].nst; k++) {
			const struct loc *l = &c->sub[t][i].st[k];
			size_t di = c->sub[t][i].di;

			for (uint32_t j = 0; l->di == s && j < l->n; j++) {
				size_t off = (size_t)ckpt_load_be(l->offs + 8 * (size_t)j, 8), end = elem_end(c, di, off);

				if (off > end)
					return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->b->meta, "operator %s: an operator "
							    "state offset outside its stream", c->op->id);
				if (ckpt_bytebuf_be(m, data->len, 8, c->e) < 0 ||
				    ckpt_bytebuf_add(data, c->raw[di].p + off, end - off, c->e) < 0)
					return -1;
				++*cnt;
			}
		}
	return 0;
}

/* New subtask t's stream into data (the header, then each state's elements), its state map into m
 * (the count, then each state's name, mode and offsets, as the _metadata holds them). */
static int
w_stream(struct pctx *c, uint32_t t, struct ckpt_bytebuf *data, struct ckpt_bytebuf *m)
{
	if (ckpt_bytebuf_add(data, c->hdr, c->hdrlen, c->e) < 0 || ckpt_bytebuf_be(m, c->nnames, 4, c->e) < 0)
		return -1;
	for (size_t s = 0; s < c->nnames; s++) {
		const struct sname *x = &c->names[s];
		unsigned char mode = (unsigned char)x->mode;
		size_t cnt = 0, at;

		if (ckpt_bytebuf_be(m, x->len, 2, c->e) < 0 || ckpt_bytebuf_add(m, x->p, x->len, c->e) < 0 ||
		    ckpt_bytebuf_add(m, &mode, 1, c->e) < 0 || ckpt_bytebuf_be(m, 0, 4, c->e) < 0)
			return -1;
		at = m->len - 4;
		if (w_elements(c, t, s, data, m, &cnt) < 0)
			return -1;
		ckpt_store_be(m->p + at, cnt, 4);
	}
	return 0;
}

/* New subtask t's managed operator state in the _metadata's form into b: the presence flag, the
 * handle (tag 4, the state map, its stream: inline as a ByteStreamStateHandle of a name of its own,
 * or in a file of dir named as oprows.c names its files, when the old streams were in files). */
static int
w_subtask(struct pctx *c, uint32_t t, struct ckpt_bytebuf *b)
{
	struct ckpt_bytebuf data = {0}, m = {0};
	char name[160], prefix[80];
	int rc = -1;

	if (ckpt_bytebuf_be(b, 1, 4, c->e) < 0 || ckpt_bytebuf_be(b, 4, 1, c->e) < 0 || w_stream(c, t, &data, &m) < 0 ||
	    ckpt_bytebuf_add(b, m.p, m.len, c->e) < 0)
		goto out;
	if (c->files) {
		snprintf(prefix, sizeof prefix, "operator-%s", c->op->id);
		rc = ckpt_fmeta_write_relative(c->sp, c->first, c->dir, prefix, t, &c->written, &data, b, c->e);
		goto out;
	}
	snprintf(name, sizeof name, "ckpt-%s-%u", c->op->id, t);
	rc = ckpt_bytebuf_be(b, 1, 1, c->e) < 0 || ckpt_bytebuf_be(b, strlen(name), 2, c->e) < 0 ||
	     ckpt_bytebuf_add(b, name, strlen(name), c->e) < 0 || ckpt_bytebuf_be(b, data.len, 4, c->e) < 0 ||
	     ckpt_bytebuf_add(b, data.p, data.len, c->e) < 0 ? -1 : 0;
out:
	ckpt_bytebuf_release(&data);
	ckpt_bytebuf_release(&m);
	return rc;
}

static void
pctx_release(struct pctx *c)
{
	for (size_t i = 0; i < c->nnames; i++)
		free(c->names[i].locs);
	for (uint32_t t = 0; c->sub && t < c->par; t++) {
		for (size_t i = 0; i < c->nsub[t]; i++)
			free(c->sub[t][i].st);
		free(c->sub[t]);
	}
	for (size_t di = 0; c->raw && di < c->sp->nopdata; di++)
		ckpt_bytebuf_release(&c->raw[di]);
	free(c->raw);
	json_decref(c->written);
	free(c->names);
	free(c->ord);
	free(c->sub);
	free(c->nsub);
	free(c->csub);
}

int
ckpt_foppar_check(const void *buf, const struct ckpt_fmeta_spans *sp, size_t opk, const struct ckpt_operator *op,
		  int rows, const char *meta, struct ckpt_err *e)
{
	const unsigned char *q;
	size_t n = 0, want = 0;

	for (size_t i = 0; i < op->nsubtasks; i++)
		for (size_t j = 0; j < op->subtasks[i].nhandles; j++)
			want += strcmp(op->subtasks[i].handles[j].scope, "managed_operator") == 0;
	for (size_t di = 0; di < sp->nopdata; di++) {
		const struct ckpt_fmeta_opdata *d = &sp->opdata[di];
		size_t pos = 4, ns;

		if (d->op != opk)
			continue;
		if (rows)
			return ckpt_err_set(e, CKPT_ERR_REFUSED, meta, "operator %s: --rows and a new parallelism of its "
					    "operator state in one write: write the rows first, then the parallelism", op->id);
		n++;
		q = (const unsigned char *)buf + d->head;
		ns = ckpt_load_be(q, 4);
		for (size_t i = 0; i < ns; i++)
			pos += 7 + ckpt_load_be(q + pos, 2) + 8 * ckpt_load_be(q + pos + 3 + ckpt_load_be(q + pos, 2), 4);
		if (d->subtask >= op->parallelism)
			return ckpt_err_set(e, CKPT_ERR_INPUT, meta, "operator %s: subtask %u beyond its parallelism %u",
					    op->id, d->subtask, op->parallelism);
	}
	if (n != want)
		return ckpt_err_set(e, CKPT_ERR_REFUSED, meta, "operator %s: its operator state is in a file-merging "
				    "segment, which a new parallelism does not move yet: restore the savepoint on Flink at "
				    "that parallelism", op->id);
	return 0;
}

int
ckpt_foppar_split(const struct ckpt_foppar_in *in, struct ckpt_bytebuf *out, struct ckpt_err *e)
{
	const struct ckpt_fmeta_spans *sp = in->sp;
	struct pctx c = {.buf = in->buf, .sp = sp, .par = in->par, .b = in->b, .op = in->op, .dir = in->dir, .e = e};
	uint32_t par = in->par;
	int rc = -1;

	c.sub = ckpt_calloc(par, sizeof *c.sub, e);
	c.nsub = ckpt_calloc(par, sizeof *c.nsub, e);
	c.csub = ckpt_calloc(par, sizeof *c.csub, e);
	c.raw = ckpt_calloc(sp->nopdata + 1, sizeof *c.raw, e);
	c.opk = in->opk;
	if (c.sub == NULL || c.nsub == NULL || c.csub == NULL || c.raw == NULL || pick_header(&c) < 0)
		goto out;
	/* the old subtasks' handles in their order (the _metadata lists subtasks in any order) */
	for (uint32_t st = 0; st < in->op->parallelism; st++)
		for (size_t di = 0; di < sp->nopdata; di++)
			if (sp->opdata[di].op == in->opk && sp->opdata[di].subtask == st &&
			    read_map(&c, di) < 0)
				goto out;
	if ((c.ord = ckpt_calloc(c.nnames + 1, sizeof *c.ord, e)) == NULL)
		goto out;
	hash_order(c.ord, c.nnames, name_key, &c);
	if (repartition(&c) < 0)
		goto out;
	for (uint32_t t = 0; t < par; t++)
		if (w_subtask(&c, t, &out[t]) < 0)
			goto out;
	rc = 0;
out:
	pctx_release(&c);
	return rc;
}
