/* rocksdb-sst.c: the bytes of each key group in a RocksDB handle's table files, estimated from each
 * file's footer, meta index, properties and index block alone, never its data blocks
 * (ckpt-inspect --shards splits a RocksDB handle by key-group range; ckpt-inspect(1), SHARDS). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <snappy-c.h>
#include <zstd.h>

#include "readers.h"

#define MAGIC 0x88e241b785f4cff7ull /* BlockBasedTableBuilder's, format_version 1 and later */
#define FOOTER 53                   /* checksum type, two block handles in 40 bytes, version, magic */
#define TRAILER 5                   /* after each block: its compression type and checksum */
#define MAX_BLOCK ((uint64_t)256 << 20)

struct sst {
	const struct ckpt_frocks_file *f;
	int fd;
	const char *where;
	struct ckpt_err *e;
};

struct bh {
	uint64_t off, size;
};

static int
sst_pread(struct sst *t, void *p, size_t n, uint64_t off)
{
	ssize_t r;

	if (off > t->f->size || n > t->f->size - off)
		return ckpt_err_set(t->e, CKPT_ERR_INPUT, t->where, "the RocksDB file %s: a block of %zu bytes at %llu, "
				    "past its end (%llu bytes)", t->f->local, n, (unsigned long long)off,
				    (unsigned long long)t->f->size);
	if (t->f->path == NULL) {
		memcpy(p, t->f->mem + off, n);
		return 0;
	}
	if ((r = pread(t->fd, p, n, (off_t)off)) < 0)
		return ckpt_err_sys(t->e, t->where, "cannot read");
	if ((size_t)r != n)
		return ckpt_err_set(t->e, CKPT_ERR_INPUT, t->where, "short: it ends within the RocksDB file %s's block at %llu",
				    t->f->local, (unsigned long long)off);
	return 0;
}

/* A varint of at most 64 bits from p[*i, n): 0, or -1 when it runs past n or over 10 bytes. */
static int
varint(const unsigned char *p, size_t n, size_t *i, uint64_t *v)
{
	*v = 0;
	for (unsigned s = 0; s < 70 && *i < n; s += 7) {
		unsigned char b = p[(*i)++];

		*v |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80))
			return 0;
	}
	return -1;
}

/* A table whose footer, meta blocks or index do not parse: not estimated (its handle whole), and
 * -R says what is wrong with it when it reads it. */
static int
damaged(void)
{
	return 1;
}

/* The block at h, its compression undone, into *out (malloc'd, *n bytes): 0, 1 when compressed in a
 * way ckpt does not read or damaged, or -1 with e set. */
static int
block(struct sst *t, struct bh h, unsigned char **out, size_t *n)
{
	unsigned char *raw, *u = NULL;
	size_t i = 0, un = 0;
	uint64_t len;
	int rc = -1;

	*out = NULL;
	if (h.size > MAX_BLOCK || h.off > t->f->size || h.size + TRAILER > t->f->size - h.off)
		return damaged();
	if ((raw = ckpt_calloc(h.size + TRAILER, 1, t->e)) == NULL || sst_pread(t, raw, h.size + TRAILER, h.off) < 0)
		goto out;
	switch (raw[h.size]) {
	case 0:
		*out = raw, *n = h.size, raw = NULL;
		rc = 0;
		break;
	case 1: /* Snappy */
		if (snappy_uncompressed_length((char *)raw, h.size, &un) != SNAPPY_OK || un > MAX_BLOCK ||
		    (u = ckpt_calloc(un + 1, 1, t->e)) == NULL ||
		    snappy_uncompress((char *)raw, h.size, (char *)u, &un) != SNAPPY_OK) {
			rc = u || un > MAX_BLOCK ? damaged() : -1;
			break;
		}
		*out = u, *n = un, u = NULL;
		rc = 0;
		break;
	case 7: /* ZSTD, after its decompressed length (format_version 2 and later) */
		if (varint(raw, h.size, &i, &len) < 0 || len > MAX_BLOCK || (u = ckpt_calloc(len + 1, 1, t->e)) == NULL ||
		    ZSTD_decompress(u, len, raw + i, h.size - i) != len) {
			rc = u || len > MAX_BLOCK ? damaged() : -1;
			break;
		}
		*out = u, *n = len, u = NULL;
		rc = 0;
		break;
	default:
		rc = 1;
	}
out:
	free(raw);
	free(u);
	return rc;
}

/* A block's entries in turn: each key's first two bytes (zero past its end) and its value.  delta:
 * an index block whose values are block handles delta-encoded (its value length left out). */
struct it {
	const unsigned char *p;
	size_t end, i, nr, r; /* entries in [0, end); restart r of nr next */
	const unsigned char *rs;
	unsigned char k[2];
	size_t klen;
	const unsigned char *v;
	size_t vn;
	int delta, at_restart;
};

static int
it_init(struct it *x, const unsigned char *p, size_t n, int delta)
{
	memset(x, 0, sizeof *x);
	if (n < 4)
		return -1;
	x->nr = (size_t)(ckpt_load_le(p + n - 4, 4) & 0x7fffffff); /* the top bit: a hash index beside */
	if (x->nr == 0 || x->nr > (n - 4) / 4)
		return -1;
	x->p = p;
	x->end = n - 4 - 4 * x->nr;
	x->rs = p + x->end;
	x->delta = delta;
	return 0;
}

/* The next entry: 1, 0 at the end, -1 when the block is malformed. */
static int
it_next(struct it *x)
{
	uint64_t shared, own, vn = 0;

	if (x->i >= x->end)
		return 0;
	x->at_restart = x->r < x->nr && (uint32_t)ckpt_load_le(x->rs + 4 * x->r, 4) == x->i;
	x->r += x->at_restart;
	if (varint(x->p, x->end, &x->i, &shared) < 0 || varint(x->p, x->end, &x->i, &own) < 0 ||
	    (!x->delta && varint(x->p, x->end, &x->i, &vn) < 0) || shared > x->klen || own > x->end - x->i)
		return -1;
	for (size_t j = shared; j < 2; j++)
		x->k[j] = j < shared + own ? x->p[x->i + j - shared] : 0;
	x->klen = shared + own;
	x->i += own;
	if (x->delta)
		vn = x->end - x->i; /* the handle's own varints say where it ends */
	if (vn > x->end - x->i)
		return -1;
	x->v = x->p + x->i;
	x->vn = vn;
	x->i += x->delta ? 0 : vn;
	return 1;
}

/* The entry named name of a meta index or properties block, its value; NULL when none. */
static const unsigned char *
find(const unsigned char *p, size_t n, const char *name, size_t *vn)
{
	struct it x;
	unsigned char key[128];
	size_t kl = 0, want = strlen(name);
	uint64_t shared, own, len;

	/* the keys here are needed whole: walked apart from it_next, which keeps two bytes */
	if (it_init(&x, p, n, 0) < 0)
		return NULL;
	while (x.i < x.end) {
		if (varint(p, x.end, &x.i, &shared) < 0 || varint(p, x.end, &x.i, &own) < 0 ||
		    varint(p, x.end, &x.i, &len) < 0 || shared > kl || own > x.end - x.i || shared + own > sizeof key ||
		    len > x.end - x.i - own)
			return NULL;
		memcpy(key + shared, p + x.i, own);
		kl = shared + own;
		x.i += own;
		if (kl == want && memcmp(key, name, kl) == 0) {
			*vn = len;
			return p + x.i;
		}
		x.i += len;
	}
	return NULL;
}

static int
handle_of(const unsigned char *p, size_t n, struct bh *h)
{
	size_t i = 0;

	return varint(p, n, &i, &h->off) < 0 || varint(p, n, &i, &h->size) < 0 ? -1 : 0;
}

/* The footer's index handle and, from the properties, how the index is written: 0, 1 when ckpt does
 * not read such a table (another format or index type), -1 with e set. */
static int
table_meta(struct sst *t, struct bh *index, int *delta, int *first_key)
{
	unsigned char foot[FOOTER], *mi = NULL, *pr = NULL;
	const unsigned char *v;
	size_t i = 1, mn = 0, pn = 0, vn;
	struct bh meta, props;
	uint64_t magic, version, type = 0;
	int rc;

	if (t->f->size < FOOTER)
		return damaged();
	if (sst_pread(t, foot, FOOTER, t->f->size - FOOTER) < 0)
		return -1;
	magic = ckpt_load_le(foot + FOOTER - 8, 8);
	version = ckpt_load_le(foot + FOOTER - 12, 4);
	if (magic != MAGIC || version < 2 || version > 5)
		return 1; /* a legacy or plain table, or format_version 6's footer without the index handle */
	if (varint(foot, FOOTER - 12, &i, &meta.off) < 0 || varint(foot, FOOTER - 12, &i, &meta.size) < 0 ||
	    varint(foot, FOOTER - 12, &i, &index->off) < 0 || varint(foot, FOOTER - 12, &i, &index->size) < 0)
		return damaged();
	if ((rc = block(t, meta, &mi, &mn)) != 0)
		goto out;
	rc = 1;
	if ((v = find(mi, mn, "rocksdb.properties", &vn)) == NULL || handle_of(v, vn, &props) < 0 ||
	    (rc = block(t, props, &pr, &pn)) != 0)
		goto out;
	*delta = (v = find(pr, pn, "rocksdb.index.value.is.delta.encoded", &vn)) != NULL && vn > 0 && v[0] != 0;
	if ((v = find(pr, pn, "rocksdb.block.based.table.index.type", &vn)) != NULL && vn == 4)
		type = ckpt_load_le(v, 4);
	*first_key = type == 3;
	rc = type == 2 || type > 3; /* a partitioned index: not read */
out:
	free(mi);
	free(pr);
	return rc;
}

/* Key group of a key beginning k (prefix bytes), within [first, last]. */
static uint32_t
kg_of(const unsigned char *k, unsigned prefix, uint32_t first, uint32_t last)
{
	uint32_t g = prefix == 2 ? (uint32_t)k[0] << 8 | k[1] : k[0];

	return g < first ? first : g > last ? last : g;
}

/* A data block's bytes (with its trailer) spread over key groups [lo, hi] of w. */
static void
spread(uint64_t *w, uint32_t first, uint32_t lo, uint32_t hi, uint64_t bytes)
{
	uint64_t n = (uint64_t)(hi - lo) + 1;

	for (uint32_t g = lo; g <= hi; g++)
		w[g - first] += bytes / n + ((uint64_t)(g - lo) < bytes % n);
}

/*
 * Each index entry is a data block's handle under a key at or above the block's last key and below
 * the next block's first: a block holds the key groups from its predecessor's key's to its own, the
 * first block from the handle's first key group (its first key is in the data, not read).
 */
static int
index_walk(const unsigned char *p, size_t n, uint64_t fsize, int delta, int first_key, unsigned prefix, uint32_t first,
	   uint32_t last, uint64_t *w)
{
	struct it x;
	struct bh h = {0}, prev = {0};
	uint32_t lo = first;
	int r;

	if (it_init(&x, p, n, delta) < 0)
		return damaged();
	while ((r = it_next(&x)) > 0) {
		size_t i = 0;
		uint64_t d;
		uint32_t g = kg_of(x.k, prefix, first, last);

		if (delta && !x.at_restart) {
			if (varint(x.v, x.vn, &i, &d) < 0)
				return damaged();
			h.off = prev.off + prev.size + TRAILER;
			h.size = prev.size + (uint64_t)((int64_t)(d >> 1) ^ -(int64_t)(d & 1));
		} else if (varint(x.v, x.vn, &i, &h.off) < 0 || varint(x.v, x.vn, &i, &h.size) < 0)
			return damaged();
		if (first_key) { /* the block's first key, after its handle */
			if (varint(x.v, x.vn, &i, &d) < 0 || d > x.vn - i)
				return damaged();
			i += d;
		}
		if (h.size > fsize)
			return damaged();
		x.i += delta ? i : 0;
		spread(w, first, lo < g ? lo : g, lo > g ? lo : g, h.size + TRAILER);
		lo = g;
		prev = h;
	}
	return r < 0 ? damaged() : 0;
}

int
ckpt_frocks_sst_groups(const struct ckpt_frocks_file *f, unsigned prefix, uint32_t first, uint32_t last, uint64_t *w,
		       const char *where, struct ckpt_err *e)
{
	struct sst t = {.f = f, .fd = -1, .where = f->path ? f->path : where, .e = e};
	struct bh index;
	struct stat sb;
	unsigned char *ix = NULL;
	size_t n = 0;
	int delta = 0, first_key = 0, rc = -1;

	if (f->path && ((t.fd = open(f->path, O_RDONLY)) < 0 || fstat(t.fd, &sb) < 0)) {
		ckpt_err_sys(e, f->path, "cannot open the RocksDB file %s", f->local);
		goto out;
	} else if (f->path && (uint64_t)sb.st_size != f->size) {
		rc = ckpt_err_set(e, CKPT_ERR_INPUT, f->path, "%s: %llu bytes, the _metadata records %llu",
				  (uint64_t)sb.st_size < f->size ? "short" : "long", (unsigned long long)sb.st_size,
				  (unsigned long long)f->size); /* as -R words it */
		goto out;
	}
	if ((rc = table_meta(&t, &index, &delta, &first_key)) != 0 || (rc = block(&t, index, &ix, &n)) != 0)
		goto out;
	rc = index_walk(ix, n, f->size, delta, first_key, prefix, first, last, w);
out:
	free(ix);
	if (t.fd >= 0)
		close(t.fd);
	return rc;
}

int
ckpt_frocks_kg_bytes(struct ckpt_fstate_backing_data *b, const struct ckpt_operator *op, const struct ckpt_subtask *st,
		     const struct ckpt_handle *h, uint64_t *w, struct ckpt_err *e)
{
	const json_t *sh = json_object_get(h->detail, "shared"), *pr = json_object_get(h->detail, "private");
	size_t nf = json_array_size(sh) + json_array_size(pr), n = 0;
	struct ckpt_frocks_file *f = ckpt_calloc(nf + 1, sizeof *f, e);
	char(*paths)[1024] = ckpt_calloc(nf + 1, sizeof *paths, e);
	struct ckpt_fstate_ctx c = {.b = b, .op = op, .st = st, .h = h, .e = e};
	int rc = -1;

	if (f == NULL || paths == NULL || ckpt_fstate_rocks_files(&c, f, paths, &n) < 0)
		goto out;
	rc = 0;
	/* on S3 whole: RocksDB reads local files, so each part of the handle would fetch them whole */
	for (size_t i = 0; i < n; i++)
		if (f[i].path && ckpt_s3_is_url(f[i].path))
			rc = 1;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		size_t k = strlen(f[i].local);

		if (k > 4 && strcmp(f[i].local + k - 4, ".sst") == 0)
			rc = ckpt_frocks_sst_groups(&f[i], ckpt_flink_kg_prefix(op->max_parallelism), st->kg_first, st->kg_last, w,
						    b->meta, e);
	}
out:
	free(f);
	free(paths);
	return rc;
}
