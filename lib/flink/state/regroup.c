/* regroup.c: Flink's canonical key-group layout written (FullSnapshotAsyncWriter's), one new state
 * file a subtask, and the _metadata's keyed handles (and max parallelisms) rewritten (meta-write.c):
 * ckpt-merge --max-parallelism moves the keyed state of a canonical savepoint into the key groups of
 * a new max parallelism (each key where Flink's KeyGroupRangeAssignment puts it); --canonical takes
 * the keyed state of any form ckpt reads (canonical, heap, RocksDB), heap entries re-framed as the
 * canonical layout frames them (reframe).  Every entry goes through add_entry: one entry of a state
 * in a key group in, counted (pass 1) or written at its place (pass 2).
 *
 * Memory stays bounded whatever the size: two passes over the state files, no entry kept.  The
 * first counts the bytes and entries of each (new key group, state), so every section's offset is
 * known; the second writes each entry at its place (pwrite), through a small buffer per section.
 * What lives in memory is three counters per new key group and state (at most 32768 x states)
 * and the buffers (WB_TOTAL bytes at most). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readers.h"

#define END_OF_KEY_GROUP 0xffff

/* One operator being regrouped. */
struct rg {
	struct ckpt_fstate_backing_data *b;
	const struct ckpt_operator *op;
	struct ckpt_err *e;
	uint32_t maxp, nst, oldprefix, newprefix;
	uint32_t par;         /* its new parallelism (-P), else its own */
	int rekey;            /* each key's key group computed at maxp (else the input's kept) */
	const char *named;    /* -P OP=N names it: OP */
	uint32_t allp;        /* -P N, else 0 */
	int oponly;           /* no keyed state, at a new parallelism: its operator state moved (oppar.c) */
	int stateless;        /* no handle, no finished subtask: any parallelism, no subtask recorded */
	unsigned char *hdr;   /* the keyed header (serialization proxy), compression off: the subtask's */
	size_t hdrlen;        /* with the most states (Flink registers states lazily), the others' subsets */
	char **names;         /* its states, by id */
	uint32_t hdrfrom;     /* that subtask */
	size_t hdrat;         /* its place in op->subtasks, */
	const struct ckpt_handle *hdrhd; /* and its keyed handle (--rows reads the header again) */
	struct ckpt_fstate_header hk;    /* and that header read (the key serializer of the rows' keys) */
	uint64_t *bytes, *count, *pos; /* per [kg * nst + state id] */
	uint64_t *kgoff;      /* per new key group: its offset in its subtask's file, 0 when empty */
	uint64_t *size;       /* per subtask: its file's size */
	int *fd;              /* per subtask, pass 2: open for subtasks [lo, hi) only */
	uint32_t lo, hi;      /* pass 2 writes the files of a batch of subtasks at a time (file descriptors) */
	const struct ckpt_fstate_header *h; /* the header of the handle being read */
	int pass;
	unsigned char *rec;   /* pass 2: one entry as it is written */
	size_t reccap;
	unsigned char *wb;    /* pass 2: a write buffer per slot, wcap bytes each (none when 0), */
	uint32_t *wn;         /* holding wn[slot] bytes that go at pos[slot] */
	size_t wcap;
	const struct ckpt_frg_hook *hook; /* --rows: states replaced by the rows' entries; NULL: --max-parallelism */
	uint32_t *seq, nseq;  /* --rows, per slot: when its state first came in its key group (0: never), */
                          /* so that the sections keep the input's order (a heap savepoint's is not by id) */
	int canonical;        /* --canonical: any form, heap entries re-framed (reframe) */
	unsigned char *ck, *cv; /* reframe's key and value */
	size_t ckcap, cvcap;
	const void *mbuf;     /* -P: the _metadata, its spans, the operator's index there, */
	const struct ckpt_fmeta_spans *sp;
	size_t opk;
	struct ckpt_bytebuf *opst; /* and its operator state per new subtask (oppar.c), or NULL */
};

#define WB_TOTAL (32u << 20) /* the write buffers' bytes, at most */
#define FD_BATCH 256u         /* new files open at once: pass 2 reads the input again per batch */

static uint32_t
subtask_of(const struct rg *g, uint32_t kg)
{
	return (uint32_t)((uint64_t)kg * g->par / g->maxp);
}

static const char *
short_cls(const struct ckpt_fser *t)
{
	const char *c = t && t->cls ? t->cls : "?", *dot = strrchr(c, '.');

	return dot ? dot + 1 : c;
}

/* The key group at maxp of an entry's key (its prefix, a timer's timestamp, then the key). */
static int
new_group(struct rg *g, const struct ckpt_fstate_header *h, const struct ckpt_fstate_meta *m, const unsigned char *k,
	  size_t kn, uint32_t *kg)
{
	size_t off = g->oldprefix + (m->type == 3 ? 8 : 0);
	struct ckpt_fsrc s;
	struct ckpt_fout o;
	int32_t hash = 0;
	int hashed = 0, r;

	if (kn < off)
		return ckpt_err_set(g->e, CKPT_ERR_INPUT, g->b->meta, "operator %s state %s: a key of %zu bytes, "
				    "shorter than its prefix", g->op->id, m->name, kn);
	o.mode = FOUT_NONE;
	o.root = NULL;
	o.depth = 0;
	ckpt_fsrc_mem(&s, k + off, kn - off, g->b->meta, g->e);
	r = h->key ? ckpt_fser_emit(h->key, &s, &o, &hash, &hashed) : -1;
	ckpt_fsrc_release(&s);
	if (r < 0 || !hashed)
		return ckpt_err_set(g->e, CKPT_ERR_REFUSED, g->b->meta, "operator %s state %s: ckpt cannot compute "
				    "the key group of a key of the key serializer %s (its keys' hashCode is not known)",
				    g->op->id, m->name, short_cls(h->key));
	*kg = ckpt_flink_key_group(hash, g->maxp);
	return 0;
}

/* Write slot's buffered bytes at its place. */
static int
flush(struct rg *g, size_t slot)
{
	uint32_t st, n;

	if (g->wcap == 0 || (n = g->wn[slot]) == 0)
		return 0;
	st = subtask_of(g, (uint32_t)(slot / g->nst));
	if (pwrite(g->fd[st], g->wb + slot * g->wcap, n, (off_t)g->pos[slot]) != (ssize_t)n)
		return ckpt_err_sys(g->e, g->b->meta, "write error");
	g->pos[slot] += n;
	g->wn[slot] = 0;
	return 0;
}

/* Pass 2: one entry written at its place, the last of its section flagged (MSB of key byte 0). */
static int
put_entry(struct rg *g, uint32_t kg, size_t slot, const unsigned char *k, size_t kn, const unsigned char *v,
	  size_t vn)
{
	size_t nk = kn - g->oldprefix + g->newprefix, n = 8 + nk + vn;
	uint32_t st = subtask_of(g, kg);
	unsigned char *p;

	if (st < g->lo || st >= g->hi)
		return 0; /* another batch's */
	if (g->count[slot] == 0)
		return ckpt_err_set(g->e, CKPT_ERR_INPUT, g->b->meta, "operator %s: the state files changed "
				    "while they were read", g->op->id);
	if (ckpt_grow(&g->rec, &g->reccap, n, 1, 4096, g->e) < 0)
		return -1;
	p = g->rec;
	ckpt_store_be(p, nk, 4);
	ckpt_store_be(p + 4, kg, g->newprefix);
	memcpy(p + 4 + g->newprefix, k + g->oldprefix, kn - g->oldprefix);
	if (--g->count[slot] == 0)
		p[4] |= 0x80;
	ckpt_store_be(p + 4 + nk, vn, 4);
	memcpy(p + 8 + nk, v, vn);
	if (g->wcap && g->wn[slot] + n > g->wcap && flush(g, slot) < 0)
		return -1;
	if (n <= g->wcap) {
		memcpy(g->wb + slot * g->wcap + g->wn[slot], p, n);
		g->wn[slot] += (uint32_t)n;
		return 0;
	}
	if (pwrite(g->fd[st], p, n, (off_t)g->pos[slot]) != (ssize_t)n)
		return ckpt_err_sys(g->e, g->b->meta, "write error");
	g->pos[slot] += n;
	return 0;
}

static int
rg_header(void *arg, const char *scope, const struct ckpt_fstate_header *h)
{
	struct rg *g = arg;

	(void)scope;
	g->h = h;
	return 0;
}

/* One entry of state id (meta info m) in the canonical layout, read from key group kg: counted
 * (pass 1) or written at its place (pass 2) in the key group Flink gives its key at maxp. */
static int
add_entry(struct rg *g, const struct ckpt_fstate_meta *m, size_t id, uint32_t kg, const unsigned char *k, size_t kn,
	  const unsigned char *v, size_t vn)
{
	size_t slot;
	uint32_t nkg = kg;

	/* --rows: a state the rows replace keeps its place among its key group's sections */
	if (g->hook && g->pass == 1 && !g->rekey && kg < g->maxp && g->seq[(size_t)kg * g->nst + id] == 0)
		g->seq[(size_t)kg * g->nst + id] = ++g->nseq;
	if (g->hook && g->hook->replaced(g->hook->arg, g->op, m->name))
		return 0; /* --rows: its entries are the rows' */
	if (g->rekey && new_group(g, g->h, m, k, kn, &nkg) < 0)
		return -1;
	if (g->hook && g->pass == 1 && g->rekey && g->seq[(size_t)nkg * g->nst + id] == 0)
		g->seq[(size_t)nkg * g->nst + id] = ++g->nseq;
	slot = (size_t)nkg * g->nst + id;
	if (g->pass == 2)
		return put_entry(g, nkg, slot, k, kn, v, vn);
	g->bytes[slot] += 8 + kn - g->oldprefix + g->newprefix + vn;
	g->count[slot]++;
	return 0;
}

/* --rows: one entry of the rows (k: its key-group prefix, then the key, as read) counted or written. */
static int
rg_put(void *arg, const char *state, uint32_t kg, const unsigned char *k, size_t kn, const unsigned char *v,
       size_t vn)
{
	struct rg *g = arg;
	const struct ckpt_fstate_meta *m = ckpt_fstate_meta_named(&g->hk, state);
	size_t id = 0, slot;

	while (id < g->nst && strcmp(g->names[id], state) != 0)
		id++;
	if (id >= g->nst || m == NULL || kg >= g->op->max_parallelism || kn < g->oldprefix)
		return ckpt_err_set(g->e, CKPT_ERR_INPUT, g->b->meta, "operator %s: state %s is not in the header",
				    g->op->id, state);
	if (g->rekey && new_group(g, &g->hk, m, k, kn, &kg) < 0) /* the rows' key group is at the old one */
		return -1;
	slot = (size_t)kg * g->nst + id;
	if (g->pass == 2)
		return put_entry(g, kg, slot, k, kn, v, vn);
	if (g->seq[slot] == 0)
		g->seq[slot] = (1u << 31) + ++g->nseq; /* after the input's */
	g->bytes[slot] += 8 + kn - g->oldprefix + g->newprefix + vn;
	g->count[slot]++;
	return 0;
}

/* p[0, n) appended to *b at *len (of *cap bytes). */
static int
append(struct rg *g, unsigned char **b, size_t *cap, size_t *len, const unsigned char *p, size_t n)
{
	if (ckpt_grow(b, cap, *len + n + 1, 1, 256, g->e) < 0)
		return -1;
	memcpy(*b + *len, p, n);
	*len += n;
	return 0;
}

/* One value of t read from s (checked, not kept): its end is where s is after it. */
static int
step(const struct ckpt_fser *t, struct ckpt_fsrc *s)
{
	struct ckpt_fout o = {.mode = FOUT_NONE};
	int32_t hash;
	int hashed;

	return ckpt_fser_emit(t, s, &o, &hash, &hashed);
}

/* One map entry of a heap map value v: the entry's key k[0, kn) and the user key v[at, mid) as its
 * key, the null flag and value v[mid, end) as its value. */
static int
map_entry(struct rg *g, const struct ckpt_fstate_meta *m, size_t id, uint32_t kg, const unsigned char *k, size_t kn,
	  const unsigned char *v, size_t at, size_t mid, size_t end)
{
	size_t nk = 0, nv = 0;

	if (append(g, &g->ck, &g->ckcap, &nk, k, kn) < 0 || append(g, &g->ck, &g->ckcap, &nk, v + at, mid - at) < 0 ||
	    append(g, &g->cv, &g->cvcap, &nv, v + mid, end - mid) < 0)
		return -1;
	return add_entry(g, m, id, kg, g->ck, nk, g->cv, nv);
}

/*
 * A heap snapshot's map or list entry (its value whole: MapSerializer's i32 count, then each user
 * key, null flag and value; ListSerializer's i32 count, then the elements) in the canonical framing,
 * as Flink's heap savepoint writes it (RocksDB's own): a map one entry per user key, the user key
 * after the namespace and the null flag before the value; a list one entry, its elements joined by
 * ','.  An empty map or list has no entry, as in Flink's.
 */
static int
reframe(struct rg *g, const struct ckpt_fstate_meta *m, size_t id, uint32_t kg, const unsigned char *k, size_t kn,
	const unsigned char *v, size_t vn)
{
	const struct ckpt_fser *t = m->value;
	int map = m->kindc == 'm', rc = -1;
	struct ckpt_fsrc s;
	size_t nv = 0;
	int32_t n;

	ckpt_fsrc_mem(&s, v, vn, g->b->meta, g->e);
	if (t->nkids < (map ? 2u : 1u) || !t->kids[0] || (map && !t->kids[1]) ||
	    ckpt_fsrc_i32(&s, &n, "element count") < 0 || n < 0)
		goto out;
	for (int32_t i = 0; i < n; i++) {
		size_t at = ckpt_fsrc_tell(&s), mid;
		uint8_t isnull = 0;

		if (step(t->kids[0], &s) < 0)
			goto out;
		mid = ckpt_fsrc_tell(&s);
		if (!map && ((i > 0 && append(g, &g->cv, &g->cvcap, &nv, (const unsigned char *)",", 1) < 0) ||
			     append(g, &g->cv, &g->cvcap, &nv, v + at, mid - at) < 0))
			goto out;
		if (map && (ckpt_fsrc_u8(&s, &isnull, "map value null flag") < 0 || (!isnull && step(t->kids[1], &s) < 0) ||
			    map_entry(g, m, id, kg, k, kn, v, at, mid, ckpt_fsrc_tell(&s)) < 0))
			goto out;
	}
	if (!ckpt_fsrc_drained(&s)) {
		ckpt_fsrc_fail(&s, "value of state \"%s\" does not end where its serializer ends", m->name);
		goto out;
	}
	rc = !map && n > 0 ? add_entry(g, m, id, kg, k, kn, g->cv, nv) : 0;
out:
	if (rc < 0 && g->e->kind == CKPT_ERR_NONE)
		ckpt_err_set(g->e, CKPT_ERR_INPUT, g->b->meta, "operator %s state %s: a heap %s value ckpt cannot "
			     "re-frame", g->op->id, m->name, map ? "map" : "list");
	ckpt_fsrc_release(&s);
	return rc;
}

static int
rg_kv(void *arg, const char *state, uint32_t kg, const unsigned char *k, size_t kn, const unsigned char *v,
      size_t vn, struct ckpt_fstate_typed *typed)
{
	struct rg *g = arg;
	size_t id = 0;
	const struct ckpt_fstate_meta *m = ckpt_fstate_meta_named(g->h, state);

	while (id < g->nst && strcmp(g->names[id], state) != 0)
		id++;
	if (id >= g->nst || m == NULL)
		return ckpt_err_set(g->e, CKPT_ERR_INPUT, g->b->meta, "operator %s: state %s is not in the header",
				    g->op->id, state);
	if (g->canonical && typed && typed->heap && (m->kindc == 'm' || m->kindc == 'l'))
		return reframe(g, m, id, kg, k, kn, v, vn);
	return add_entry(g, m, id, kg, k, kn, v, vn);
}

/* Read every subtask's keyed handle through the sink (and the rows' entries, --rows). */
static int
read_all(struct rg *g)
{
	/* --canonical: heap-layout entries come with their ftyped, saying so */
	struct ckpt_fstate_sink k = {.header = rg_header, .kv = rg_kv, .op = ckpt_fstate_dry_op, .arg = g, .untyped = 1,
			  .layout = g->canonical, .part = 2};

	for (size_t i = 0; i < g->op->nsubtasks; i++)
		if (ckpt_fstate_read_subtask(g->b, g->op, &g->op->subtasks[i], &k, g->e) < 0)
			return -1;
	/* --rows: after the input, whose states' order each key group's sections keep */
	return g->hook ? g->hook->entries(g->hook->arg, g->b, g->op, &g->op->subtasks[g->hdrat],
					  g->hdrhd, g->op->max_parallelism, g->pass, rg_put, g, g->e) : 0;
}

/* The raw header of subtask st's keyed handle hd kept when it has more states than the one kept;
 * verify: its states all in the one kept. */
static void
free_names(struct rg *g)
{
	for (size_t i = 0; g->names && i < g->nst; i++)
		free(g->names[i]);
	free(g->names);
	g->names = NULL;
	g->nst = 0;
}

/* Every state of subtask st's header h is in the header kept. */
static int
subset(struct rg *g, const struct ckpt_subtask *st, const struct ckpt_fstate_header *h)
{
	for (size_t i = 0; i < h->n; i++) {
		size_t j = 0;

		while (j < g->nst && strcmp(g->names[j], h->m[i].name) != 0)
			j++;
		if (j == g->nst)
			return ckpt_err_set(g->e, CKPT_ERR_REFUSED, g->b->meta, "operator %s: subtask %u has state %s "
					    "and subtask %u, with more states, has not", g->op->id, st->index,
					    h->m[i].name, g->hdrfrom);
	}
	return 0;
}

/* Keep subtask st's header h, its bytes *p (taken), when it has more states than the one kept. */
static int
keep_header(struct rg *g, const struct ckpt_subtask *st, const struct ckpt_handle *hd, struct ckpt_fstate_header *h,
	    unsigned char **p)
{
	if (g->hdr && h->n <= g->nst)
		return 0;
	free(g->hdr);
	free_names(g);
	ckpt_fstate_header_release(&g->hk);
	g->hk = *h; /* taken */
	memset(h, 0, sizeof *h);
	h = &g->hk;
	g->hdr = *p;
	g->hdrlen = h->end;
	g->hdrfrom = st->index;
	g->hdrat = (size_t)(st - g->op->subtasks);
	g->hdrhd = hd;
	*p = NULL;
	if ((g->names = ckpt_calloc(h->n + 1, sizeof *g->names, g->e)) == NULL)
		return -1;
	for (; g->nst < h->n; g->nst++)
		if ((g->names[g->nst] = ckpt_strdup(h->m[g->nst].name, g->e)) == NULL)
			return -1;
	return 0;
}

static int
take_header(struct rg *g, const struct ckpt_subtask *st, const struct ckpt_handle *hd, int verify)
{
	struct ckpt_fstate_ctx c = {.b = g->b, .op = g->op, .st = st, .h = hd, .e = g->e};
	struct ckpt_fstate_header h = {0};
	struct ckpt_fsrc s = {0};
	unsigned char *p = NULL;
	int fd = -1, rc = -1;

	s.fd = -1;
	snprintf(c.where, sizeof c.where, "%s", g->b->meta);
	if (ckpt_fstate_handle_role(hd) == 5 ? ckpt_fchangelog_header(&c, &h, &p) < 0 :
	    ckpt_fstate_handle_role(hd) == 4 ? ckpt_fstate_rocks_header(&c, &s, &fd, &h) < 0 :
	    ckpt_fstate_open_bytes(&c, &s, &fd) < 0 || ckpt_fstate_read_keyed_header(&s, &h) < 0)
		goto out;
	if (h.stopped || h.version != 6) {
		ckpt_err_set(g->e, CKPT_ERR_REFUSED, g->b->meta, "operator %s subtask %u: %s%s", g->op->id, st->index,
			     h.stopped ? "its keyed state header cannot be read: " : "keyed state header version "
			     "below 6 (Flink 1.7): restore it on Flink and take a savepoint first",
			     h.stopped ? h.stop : "");
		goto out;
	}
	if (p == NULL && ((p = ckpt_calloc(h.end + 1, 1, g->e)) == NULL || ckpt_fsrc_seek(&s, 0, 0) < 0 ||
			  ckpt_fsrc_read(&s, p, h.end, "keyed state header") < 0))
		goto out; /* a changelog's (role 5) made already */
	p[4] = 0; /* written uncompressed */
	if (verify ? subset(g, st, &h) < 0 : keep_header(g, st, hd, &h, &p) < 0)
		goto out;
	rc = 0;
out:
	free(p);
	ckpt_fstate_header_release(&h);
	ckpt_fsrc_release(&s);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* The bytes of records in one channel's buffers: its state size less the i32 length before each
 * buffer (ChannelStateSerializer writes a buffer as its length and its bytes; an offset a buffer). */
static uint64_t
channel_bytes(uint64_t n, const json_t *offs)
{
	uint64_t framing = 4 * (uint64_t)json_array_size(offs);

	return n > framing ? n - framing : 0;
}

/* In-flight data: a savepoint holds none (Flink takes savepoints aligned), so a channel handle
 * whose buffers hold bytes is refused; empty buffers (what an unaligned checkpoint writes for a
 * channel with nothing in flight) are kept as they are, and Flink restores nothing from them. */
static int
check_channel(struct rg *g, const struct ckpt_subtask *st, const struct ckpt_handle *h)
{
	const json_t *chans = json_object_get(h->detail, "channels");
	uint64_t bytes = 0;

	if (chans == NULL)
		bytes = channel_bytes(h->size, json_object_get(h->detail, "offsets"));
	for (size_t i = 0; i < json_array_size(chans); i++)
		bytes += channel_bytes((uint64_t)json_integer_value(json_object_get(json_array_get(chans, i), "size")),
				       json_object_get(json_array_get(chans, i), "offsets"));
	if (bytes == 0)
		return 0;
	return ckpt_err_set(g->e, CKPT_ERR_REFUSED, g->b->meta, "operator %s subtask %u: %llu bytes of in-flight "
			    "data (%s state of an unaligned checkpoint): a savepoint holds none; restore the checkpoint "
			    "on Flink and take a savepoint", g->op->id, st->index, (unsigned long long)bytes, h->scope);
}

/* --canonical: what a savepoint cannot hold, or ckpt cannot write as one, refused naming it. */
static int
check_canonical(struct rg *g, const struct ckpt_subtask *st, const struct ckpt_handle *h)
{
	const char *sc = h->scope;

	if (strcmp(sc, "input_channel") == 0 || strcmp(sc, "output_channel") == 0)
		return check_channel(g, st, h);
	if (strcmp(sc, "managed_keyed") != 0 || ckpt_fstate_handle_role(h) >= 3)
		return 0;
	return ckpt_err_set(g->e, CKPT_ERR_REFUSED, g->b->meta, "operator %s subtask %u: its keyed state is a %s "
			    "handle, which --canonical does not convert yet", g->op->id, st->index, h->kind);
}

/* An operator without keyed state whose parallelism stays, else its new one (-P naming it; above maxp:
 * -P N, else maxp): one with operator state (g->oponly) then as Flink's restore at it redistributes it. */
static void
par_nokeyed(struct rg *g)
{
	const struct ckpt_operator *op = g->op;

	if (!g->named && op->parallelism > g->maxp)
		g->par = g->allp ? g->allp : g->maxp;
	else if (!g->named && !g->stateless)
		g->par = op->parallelism;
	g->oponly = !g->stateless && !op->fully_finished && g->par != op->parallelism;
}

/* What a new parallelism of an operator holding keyed or operator state does not move, refused. */
static int
check_moved(struct rg *g, int keyed)
{
	const struct ckpt_operator *op = g->op;

	if (ckpt_foppar_check(g->mbuf, g->sp, g->opk, op, g->hook != NULL, g->b->meta, g->e) < 0)
		return -1;
	for (size_t i = 0; i < op->nsubtasks; i++)
		for (size_t j = 0; j < op->subtasks[i].nhandles; j++) {
			const char *sc = op->subtasks[i].handles[j].scope;

			if (strcmp(sc, "managed_keyed") != 0 && strcmp(sc, "input_channel") != 0 &&
			    strcmp(sc, "output_channel") != 0 && strcmp(sc, "managed_operator") != 0)
				return ckpt_err_set(g->e, CKPT_ERR_REFUSED, g->b->meta, "operator %s subtask %u: its %s "
						    "state%s is not moved to parallelism %u yet: restore the savepoint on "
						    "Flink at that parallelism", op->id, op->subtasks[i].index, sc,
						    keyed ? " beside keyed state" : "", g->par);
		}
	return 0;
}

/* The operator's new parallelism, within maxp; one with keyed state holds keyed, operator and
 * channel state alone when it changes, one with operator state alone (par_nokeyed) operator and
 * channel state alone. */
static int
check_par(struct rg *g, int keyed)
{
	const struct ckpt_operator *op = g->op;

	g->stateless = !op->fully_finished;
	for (size_t i = 0; i < op->nsubtasks; i++)
		if (op->subtasks[i].nhandles || op->subtasks[i].finished)
			g->stateless = 0;
	if (!keyed)
		par_nokeyed(g);
	if (g->par > g->maxp)
		return ckpt_err_set(g->e, CKPT_ERR_REFUSED, g->b->meta, "operator %s: its %sparallelism %u is above the "
				    "max parallelism %u (Flink: Maximum parallelism must not be smaller than "
				    "parallelism.)", op->id, g->par != op->parallelism ? "new " : "", g->par, g->maxp);
	if ((keyed || g->oponly) && g->par != op->parallelism && check_moved(g, keyed) < 0)
		return -1;
	return 0;
}

/* Which operators regroup: each subtask one canonical keyed handle (--canonical: one keyed handle
 * ckpt reads), or none has keyed state. */
static int
check_op(struct rg *g, int *keyed)
{
	const struct ckpt_operator *op = g->op;
	size_t n = 0;

	for (size_t i = 0; i < op->nsubtasks; i++) {
		const struct ckpt_subtask *st = &op->subtasks[i];

		for (size_t j = 0; j < st->nhandles; j++) {
			const struct ckpt_handle *h = &st->handles[j];

			if (g->canonical && check_canonical(g, st, h) < 0)
				return -1;
			if (g->canonical && strcmp(h->scope, "managed_keyed") == 0) {
				n++;
				continue;
			}
			if (strcmp(h->scope, "raw_keyed") == 0 && !(g->canonical && !g->rekey && g->par == op->parallelism))
				return ckpt_err_set(g->e, CKPT_ERR_REFUSED, g->b->meta, "operator %s subtask %u: raw "
						    "keyed state has no key-group layout ckpt can regroup", op->id,
						    st->index);
			if (strcmp(h->scope, "managed_keyed") != 0)
				continue;
			if (strcmp(h->kind, "savepoint_key_groups") != 0)
				return ckpt_err_set(g->e, CKPT_ERR_REFUSED, g->b->meta, "operator %s subtask %u: its keyed "
						    "state is not a canonical savepoint's (handle kind %s): %s canonical "
						    "savepoints only: add --canonical to convert it in the same write", op->id,
						    st->index, h->kind, g->hook ? "--rows writes into" : "--max-parallelism rewrites");
			n++;
		}
	}
	*keyed = n > 0;
	if (check_par(g, n > 0) < 0)
		return -1;
	for (int verify = 0; verify < 2; verify++)
		for (size_t i = 0; n > 0 && i < op->nsubtasks; i++) {
			if (op->subtasks[i].finished)
				return ckpt_err_set(g->e, CKPT_ERR_REFUSED, g->b->meta, "operator %s subtask %u: "
						    "finished subtasks beside keyed state are not regrouped", op->id,
						    op->subtasks[i].index);
			for (size_t j = 0; j < op->subtasks[i].nhandles; j++)
				if (strcmp(op->subtasks[i].handles[j].scope, "managed_keyed") == 0 &&
				    take_header(g, &op->subtasks[i], &op->subtasks[i].handles[j], verify) < 0)
					return -1;
		}
	return 0;
}

static void
range_of(const struct rg *g, uint32_t st, uint32_t *first, uint32_t *last)
{
	uint64_t p = g->par, m = g->maxp;

	*first = (uint32_t)((st * m + p - 1) / p);
	*last = (uint32_t)(((st + 1) * m - 1) / p);
}

/* The i-th state of key group kg's sections: by id, or (--rows) in the order the input had them. */
static uint32_t
in_order(const struct rg *g, uint32_t kg, uint32_t i)
{
	const uint32_t *q = g->seq ? g->seq + (size_t)kg * g->nst : NULL;
	uint32_t id = 0, best = UINT32_MAX, rank;

	if (q == NULL)
		return i;
	for (uint32_t j = 0; j < g->nst; j++) { /* the one with i states before it (nst is small) */
		rank = 0;
		for (uint32_t k = 0; k < g->nst; k++)
			rank += q[k] < q[j] || (q[k] == q[j] && k < j);
		if (rank == i && j < best)
			best = id = j;
	}
	return id;
}

/* The sections' offsets, and the header, state ids and end marks written around them. */
static int
lay_out(struct rg *g)
{
	unsigned char b[2];

	for (uint32_t st = g->lo; st < g->hi; st++) {
		uint32_t first, last;
		uint64_t off = g->hdrlen;

		range_of(g, st, &first, &last);
		if (pwrite(g->fd[st], g->hdr, g->hdrlen, 0) != (ssize_t)g->hdrlen)
			return ckpt_err_sys(g->e, g->b->meta, "write error");
		for (uint32_t kg = first; kg <= last; kg++) {
			int any = 0;

			for (uint32_t i = 0; i < g->nst; i++) {
				uint32_t id = in_order(g, kg, i);
				size_t slot = (size_t)kg * g->nst + id;

				if (g->count[slot] == 0)
					continue;
				if (!any)
					g->kgoff[kg] = off;
				any = 1;
				ckpt_store_be(b, id, 2);
				if (pwrite(g->fd[st], b, 2, (off_t)off) != 2)
					return ckpt_err_sys(g->e, g->b->meta, "write error");
				g->pos[slot] = off + 2;
				off += 2 + g->bytes[slot];
			}
			if (any) {
				ckpt_store_be(b, END_OF_KEY_GROUP, 2);
				if (pwrite(g->fd[st], b, 2, (off_t)off) != 2)
					return ckpt_err_sys(g->e, g->b->meta, "write error");
				off += 2;
			}
		}
		g->size[st] = off;
	}
	return 0;
}

static char *
file_name(const struct rg *g, uint32_t st)
{
	char *p = NULL;

	return asprintf(&p, "keyed-%s-%u", g->op->id, st) < 0 ? NULL : p;
}

/* Subtask st's new handle: KeyGroupsSavepointStateHandle (tag 7), its range, offsets, and its file
 * as a relative handle (tag 6). */
static int
handle_bytes(const struct rg *g, uint32_t st, struct ckpt_flink_splice *x)
{
	uint32_t first, last;
	char *name = file_name(g, st);
	size_t nl = name ? strlen(name) : 0, n;
	unsigned char *p;

	range_of(g, st, &first, &last);
	n = 9 + 8 * (size_t)(last - first + 1) + 1 + 2 + nl + 8;
	if (name == NULL || (p = ckpt_calloc(n, 1, g->e)) == NULL) {
		free(name);
		return name ? -1 : ckpt_err_nomem(g->e, "");
	}
	x->p = p;
	x->n = n;
	*p++ = 7;
	ckpt_store_be(p, first, 4);
	ckpt_store_be(p + 4, last - first + 1, 4);
	p += 8;
	for (uint32_t kg = first; kg <= last; kg++, p += 8)
		ckpt_store_be(p, g->kgoff[kg], 8);
	*p++ = 6;
	ckpt_store_be(p, nl, 2);
	memcpy(p + 2, name, nl);
	ckpt_store_be(p + 2 + nl, g->size[st], 8);
	free(name);
	return 0;
}

static int
open_files(struct rg *g, const char *dir)
{
	for (uint32_t st = g->lo; st < g->hi; st++) {
		char *name = file_name(g, st), *path = NULL;

		if (name == NULL || asprintf(&path, "%s/%s", dir, name) < 0) {
			free(name);
			return ckpt_err_nomem(g->e, "");
		}
		g->fd[st] = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (g->fd[st] < 0)
			ckpt_err_sys(g->e, path, "cannot create");
		free(name);
		free(path);
		if (g->fd[st] < 0)
			return -1;
	}
	return 0;
}

static int
close_files(struct rg *g, int ok)
{
	int rc = 0;

	for (uint32_t st = 0; g->fd && st < g->par; st++) {
		if (g->fd[st] < 0)
			continue;
		if (ok && rc == 0 && fsync(g->fd[st]) != 0)
			rc = ckpt_err_sys(g->e, g->b->meta, "write error");
		if (close(g->fd[st]) != 0 && ok && rc == 0)
			rc = ckpt_err_sys(g->e, g->b->meta, "write error");
		g->fd[st] = -1;
	}
	return rc;
}

/* Pass 1 of one operator: checked, counted.  *keyed 0: nothing to move. */
static int
count_op(struct rg *g, int *keyed)
{
	size_t slots;

	g->oldprefix = ckpt_flink_kg_prefix(g->op->max_parallelism);
	g->newprefix = ckpt_flink_kg_prefix(g->maxp);
	*keyed = 0;
	if (check_op(g, keyed) < 0)
		return -1;
	if (!*keyed)
		return 0;
	slots = (size_t)g->maxp * (g->nst ? g->nst : 1);
	g->bytes = ckpt_calloc(slots, sizeof *g->bytes, g->e);
	g->count = ckpt_calloc(slots, sizeof *g->count, g->e);
	g->pos = ckpt_calloc(slots, sizeof *g->pos, g->e);
	g->kgoff = ckpt_calloc(g->maxp, sizeof *g->kgoff, g->e);
	g->size = ckpt_calloc(g->par, sizeof *g->size, g->e);
	g->fd = ckpt_calloc(g->par, sizeof *g->fd, g->e);
	if (g->hook && (g->seq = ckpt_calloc(slots, sizeof *g->seq, g->e)) == NULL)
		return -1;
	if (!g->bytes || !g->count || !g->pos || !g->kgoff || !g->size || !g->fd)
		return -1;
	for (uint32_t st = 0; st < g->par; st++)
		g->fd[st] = -1;
	/* --rows: which states the rows replace is settled (pass 0) before the input is counted */
	if (g->hook && g->hook->entries(g->hook->arg, g->b, g->op, &g->op->subtasks[g->hdrat], g->hdrhd,
					g->op->max_parallelism, 0, rg_put, g, g->e) < 0)
		return -1;
	g->pass = 1;
	return read_all(g);
}

/* The subtasks the _metadata does not list (they had no state) as new records after the operator's
 * subtask count, each with its keyed handle alone: the count's splice.  At a new parallelism (-P)
 * every subtask is new: the records after the count replaced too. */
static int
add_subtasks(struct rg *g, const struct ckpt_fmeta_spans *sp, size_t opk, const unsigned char *have,
	     struct ckpt_flink_splice *x, size_t *nx)
{
	static const unsigned char zero[12];
	int v = sp->version;
	size_t tail = 1 + (v >= 3 ? 8 : 0) + (v >= 7 ? 1 : 0), added = 0;
	struct ckpt_bytebuf b = {0};

	x->p = NULL;
	x->n = 0;
	for (uint32_t st = 0; st < g->par; st++) {
		struct ckpt_flink_splice h = {0};
		unsigned char id[4];
		int r;

		if (have[st])
			continue;
		/* the count (written below), then: subtask, operator state (-P: Flink's share of it, oppar.c;
		 * else none), raw keyed, channels, reference */
		ckpt_store_be(id, st, 4);
		r = (!g->oponly && handle_bytes(g, st, &h) < 0) || ckpt_bytebuf_add(&b, zero, b.len ? 0 : 4, g->e) < 0 ||
		    ckpt_bytebuf_add(&b, id, 4, g->e) < 0 ||
		    (g->opst ? ckpt_bytebuf_add(&b, g->opst[st].p, g->opst[st].len, g->e) < 0 ||
		     ckpt_bytebuf_add(&b, zero, 4, g->e) < 0 : ckpt_bytebuf_add(&b, zero, 8, g->e) < 0) ||
		    ckpt_bytebuf_add(&b, h.p ? h.p : zero, h.p ? h.n : 1, g->e) < 0 || /* oponly: no keyed handle */
		    ckpt_bytebuf_add(&b, zero, tail, g->e) < 0 ? -1 : 0;
		free(h.p);
		if (r < 0) {
			ckpt_bytebuf_release(&b);
			return -1;
		}
		added++;
	}
	if (added == 0)
		return 0;
	x->p = b.p;
	ckpt_store_be(x->p, (g->par != g->op->parallelism ? 0 : g->op->nsubtasks) + added, 4);
	x->n = b.len;
	x->at = sp->ops[opk].count_at;
	x->end = g->par != g->op->parallelism ? sp->ops[opk].end : x->at + 4;
	++*nx;
	return 0;
}

/* Pass 2's write buffers: WB_TOTAL bytes shared by the slots, up to 4 KiB each (none under 64). */
static int
buffers(struct rg *g)
{
	size_t slots = (size_t)g->maxp * g->nst;

	g->wcap = slots ? WB_TOTAL / slots : 0;
	g->wcap = g->wcap > 4096 ? 4096 : g->wcap < 64 ? 0 : g->wcap;
	if (g->wcap == 0)
		return 0;
	g->wb = malloc(slots * g->wcap);
	g->wn = ckpt_calloc(slots, sizeof *g->wn, g->e);
	if (g->wb == NULL && g->wn)
		ckpt_err_nomem(g->e, "");
	return g->wb && g->wn ? 0 : -1;
}

/* -P: the operator's operator state at its new parallelism, when it holds any (g->opst). */
static int
op_state(struct rg *g, const char *dir)
{
	struct ckpt_foppar_in in = {.buf = g->mbuf, .sp = g->sp, .opk = g->opk, .b = g->b, .op = g->op, .par = g->par,
				    .dir = dir};
	size_t n = 0;

	for (size_t di = 0; di < g->sp->nopdata; di++)
		n += g->sp->opdata[di].op == g->opk;
	if (n == 0 || g->par == g->op->parallelism)
		return 0;
	if ((g->opst = ckpt_calloc(g->par, sizeof *g->opst, g->e)) == NULL)
		return -1;
	return ckpt_foppar_split(&in, g->opst, g->e);
}

/* A stateless operator at a new parallelism: no subtask recorded (as Flink records one none of
 * whose subtasks has state), the count's splice x[*nx]. */
static int
no_subtasks(const struct ckpt_fmeta_spans *sp, size_t k, struct ckpt_flink_splice *x, size_t *nx, struct ckpt_err *e)
{
	x += *nx;
	if ((x->p = ckpt_calloc(4, 1, e)) == NULL)
		return -1;
	x->n = 4;
	x->at = sp->ops[k].count_at;
	x->end = sp->ops[k].end;
	++*nx;
	return 0;
}

/* An operator with operator state alone at its new parallelism (g->oponly): each new subtask holds its
 * share of the operator state (oppar.c), none when it holds none (no subtask recorded then). */
static int
write_oponly(struct rg *g, const char *dir, const struct ckpt_fmeta_spans *sp, size_t opk, struct ckpt_flink_splice *x,
	     size_t *nx)
{
	unsigned char *have = ckpt_calloc(g->par, 1, g->e);
	int rc = -1;

	if (have == NULL || op_state(g, dir) < 0)
		goto out;
	rc = g->opst ? add_subtasks(g, sp, opk, have, &x[*nx], nx) : no_subtasks(sp, opk, x, nx, g->e);
out:
	free(have);
	return rc;
}

/* Pass 2 of one operator: its files written into dir, its handles' new bytes as splices. */
static int
write_op(struct rg *g, const char *dir, const struct ckpt_fmeta_spans *sp, size_t opk, struct ckpt_flink_splice *x,
	 size_t *nx)
{
	unsigned char *have = ckpt_calloc(g->par, 1, g->e);
	int rc = -1;

	g->pass = 2;
	if (have == NULL || buffers(g) < 0 || op_state(g, dir) < 0)
		goto out;
	for (g->lo = 0; g->lo < g->par; g->lo = g->hi) {
		g->hi = g->par - g->lo > FD_BATCH ? g->lo + FD_BATCH : g->par;
		if (open_files(g, dir) < 0 || lay_out(g) < 0 || read_all(g) < 0)
			goto out;
		for (size_t i = 0; i < (size_t)g->maxp * g->nst; i++)
			if (flush(g, i) < 0)
				goto out;
		if (close_files(g, 1) < 0)
			goto out;
	}
	for (size_t i = 0; i < (size_t)g->maxp * g->nst; i++)
		if (g->count[i] != 0) {
			ckpt_err_set(g->e, CKPT_ERR_INPUT, g->b->meta, "operator %s: the state files changed while "
				     "they were read", g->op->id);
			goto out;
		}
	for (size_t i = 0; i < sp->nkeyed; i++) {
		const struct ckpt_fmeta_keyed *k = &sp->keyed[i];

		if (k->op != opk || !k->managed || g->par != g->op->parallelism)
			continue;
		have[k->subtask] = 1;
		x[*nx].at = k->at;
		x[*nx].end = k->end;
		if (handle_bytes(g, k->subtask, &x[*nx]) < 0)
			goto out;
		++*nx;
	}
	rc = add_subtasks(g, sp, opk, have, &x[*nx], nx);
out:
	free(have);
	if (close_files(g, rc == 0) < 0)
		rc = -1;
	return rc;
}

static void
rg_release(struct rg *g)
{
	free(g->hdr);
	free_names(g);
	free(g->bytes);
	free(g->count);
	free(g->pos);
	free(g->kgoff);
	free(g->size);
	free(g->fd);
	free(g->rec);
	free(g->wb);
	free(g->wn);
	free(g->seq);
	free(g->ck);
	free(g->cv);
	for (uint32_t st = 0; g->opst && st < g->par; st++)
		ckpt_bytebuf_release(&g->opst[st]);
	free(g->opst);
	ckpt_fstate_header_release(&g->hk);
}

static int
cmp_splice(const void *a, const void *b)
{
	const struct ckpt_flink_splice *x = a, *y = b;

	return x->at < y->at ? -1 : x->at > y->at;
}

int
ckpt_flink_regroup(const char *meta, const void *buf, size_t len, const struct ckpt_flink_write_opts *o,
		   const char *dir, struct ckpt_bytes *out, json_t **relative, struct ckpt_err *e)
{
	return ckpt_frg_run(meta, buf, len, o, NULL, dir, out, relative, e);
}

/* Operator op's new parallelism (the last -P naming it, else -P N, else its own) into g. */
static void
par_of(struct rg *g, const struct ckpt_flink_write_opts *o, const struct ckpt_operator *op)
{
	g->par = o->parallelism ? o->parallelism : op->parallelism;
	g->allp = o->parallelism;
	for (size_t i = 0; i < o->nper_op; i++)
		if (strcmp(o->per_op[i].op, op->id) == 0 || (op->uid && strcmp(o->per_op[i].op, op->uid) == 0)) {
			g->par = o->per_op[i].n;
			g->named = o->per_op[i].op;
		}
}

/* Every -P OP=N names an operator of s. */
static int
check_per_op(const struct rg *g, const struct ckpt_snapshot *s, const struct ckpt_flink_write_opts *o,
	     const char *meta, struct ckpt_err *e)
{
	for (size_t i = 0; i < o->nper_op; i++) {
		size_t k = 0;

		while (k < s->nops && g[k].named != o->per_op[i].op)
			k++;
		if (k == s->nops)
			return ckpt_err_set(e, CKPT_ERR_INPUT, meta, "-P %s=%u: no operator with that id or uid",
					    o->per_op[i].op, o->per_op[i].n);
	}
	return 0;
}

int
ckpt_frg_run(const char *meta, const void *buf, size_t len, const struct ckpt_flink_write_opts *o,
	     const struct ckpt_frg_hook *hook, const char *dir, struct ckpt_bytes *out, json_t **relative,
	     struct ckpt_err *e)
{
	struct ckpt_fmeta_spans sp;
	struct ckpt_snapshot *s = ckpt_fmeta_decode_spans(buf, len, meta, &sp, e);
	struct ckpt_flink_rekey rk = {.max_parallelism = o->max_parallelism, .canonical = o->canonical};
	/* an operator the rows do not touch is rewritten all the same when the options change it */
	int all = hook == NULL || o->max_parallelism || o->canonical || o->parallelism || o->nper_op;
	struct rg *g = NULL;
	uint32_t *par = NULL;
	int *keyed = NULL, rc = -1;

	if (s == NULL)
		goto out;
	if ((s->backing = ckpt_flink_backing_new(meta, e)) == NULL)
		goto out;
	g = ckpt_calloc(s->nops + 1, sizeof *g, e);
	keyed = ckpt_calloc(s->nops + 1, sizeof *keyed, e);
	rk.splices = ckpt_calloc(sp.nkeyed + s->nops + sp.nopdata + 1, sizeof *rk.splices, e);
	rk.parallelism = par = ckpt_calloc(s->nops + 1, sizeof *par, e);
	if (g == NULL || keyed == NULL || rk.splices == NULL || par == NULL)
		goto out;
	for (size_t k = 0; k < s->nops; k++) {
		const struct ckpt_operator *op = &s->ops[k];

		g[k] = (struct rg){.b = s->backing, .op = op, .e = e, .hook = hook, .canonical = o->canonical,
				   .maxp = o->max_parallelism ? o->max_parallelism : op->max_parallelism,
				   .mbuf = buf, .sp = &sp, .opk = k};
		g[k].rekey = g[k].maxp != op->max_parallelism || (o->max_parallelism && !hook && !o->canonical);
		par_of(&g[k], o, op);
	}
	if (check_per_op(g, s, o, meta, e) < 0)
		goto out;
	for (size_t k = 0; k < s->nops; k++) /* every check before anything is written; a dropped operator unread */
		if ((all || hook->touches(hook->arg, &s->ops[k])) && !ckpt_fmeta_dropped(s, o->edits, o->nedits, k) &&
		    count_op(&g[k], &keyed[k]) < 0)
			goto out;
	if (hook && hook->checked(hook->arg, s, e) < 0)
		goto out;
	if (hook && hook->opstate && hook->opstate(hook->arg, s, buf, &sp, dir, &rk, e) < 0)
		goto out;
	for (size_t k = 0; k < s->nops; k++) {
		if (keyed[k] && write_op(&g[k], dir, &sp, k, rk.splices, &rk.nsplices) < 0)
			goto out;
		if (!keyed[k] && g[k].stateless && g[k].par != s->ops[k].parallelism &&
		    no_subtasks(&sp, k, rk.splices, &rk.nsplices, e) < 0)
			goto out;
		if (!keyed[k] && g[k].oponly && write_oponly(&g[k], dir, &sp, k, rk.splices, &rk.nsplices) < 0)
			goto out;
		par[k] = keyed[k] || g[k].oponly || g[k].stateless || s->ops[k].fully_finished ? g[k].par : 0;
	}
	qsort(rk.splices, rk.nsplices, sizeof *rk.splices, cmp_splice);
	rc = ckpt_fmeta_rewrite_rekeyed(buf, len, meta, o->edits, o->nedits, &rk, out, relative, e);
out:
	for (size_t k = 0; g && k < s->nops; k++)
		rg_release(&g[k]);
	for (size_t i = 0; i < rk.nsplices; i++)
		free(rk.splices[i].p);
	free(rk.splices);
	free(g);
	free(keyed);
	free(par);
	ckpt_fmeta_spans_release(&sp);
	ckpt_snapshot_free(s);
	return rc;
}
