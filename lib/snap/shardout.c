/* shardout.c: one shard's rows (ckpt_flink_shard_rows) into its own part file, DIR/part-NNNNN.ndjson
 * or s3://bucket/prefix/part-NNNNN.ndjson, plain, gzip or zstd, written whole or not at all: a
 * temporary file renamed into place, or uploaded once complete (one PUT, or a multipart upload
 * completed at the end), so that a shard run again replaces what it left. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "snap.h"

/* A FILE whose bytes are compressed on their way to the file under it (fopencookie). */
struct squeeze {
	FILE *to;
	int zstd;
	z_stream z;
	ZSTD_CCtx *zc;
	unsigned char buf[1 << 16];
	int failed;
};

static int
drain(struct squeeze *q, size_t n)
{
	if (n && fwrite(q->buf, 1, n, q->to) != n)
		q->failed = 1;
	return q->failed ? -1 : 0;
}

/* The bytes p (NULL: the end) through the compressor. */
static int
squeeze_some(struct squeeze *q, const char *p, size_t n, int end)
{
	if (q->zstd) {
		ZSTD_inBuffer in = {p, n, 0};
		size_t left;

		do {
			ZSTD_outBuffer out = {q->buf, sizeof q->buf, 0};

			left = ZSTD_compressStream2(q->zc, &out, &in, end ? ZSTD_e_end : ZSTD_e_continue);
			if (ZSTD_isError(left) || drain(q, out.pos) < 0)
				return -1;
		} while (end ? left != 0 : in.pos < in.size);
		return 0;
	}
	q->z.next_in = (unsigned char *)(uintptr_t)p;
	q->z.avail_in = (uInt)n;
	do {
		int rc;

		q->z.next_out = q->buf;
		q->z.avail_out = sizeof q->buf;
		rc = deflate(&q->z, end ? Z_FINISH : Z_NO_FLUSH);
		if (rc == Z_STREAM_ERROR || drain(q, sizeof q->buf - q->z.avail_out) < 0)
			return -1;
		if (rc == Z_STREAM_END)
			return 0;
	} while (end || q->z.avail_in > 0 || q->z.avail_out == 0);
	return 0;
}

static ssize_t
squeeze_write(void *cookie, const char *p, size_t n)
{
	struct squeeze *q = cookie;
	size_t done = 0;

	while (done < n) { /* zlib counts in uInt */
		size_t k = n - done > (1u << 30) ? (1u << 30) : n - done;

		if (squeeze_some(q, p + done, k, 0) < 0)
			return -1;
		done += k;
	}
	return (ssize_t)n;
}

static int
squeeze_close(void *cookie)
{
	struct squeeze *q = cookie;
	int rc = q->failed ? -1 : squeeze_some(q, NULL, 0, 1);

	if (q->zstd)
		ZSTD_freeCCtx(q->zc);
	else
		deflateEnd(&q->z);
	free(q);
	return rc;
}

/* A FILE writing to, compressed by zstd or gzip; NULL with e set. */
static FILE *
squeeze_open(FILE *to, int zstd, struct ckpt_err *e)
{
	cookie_io_functions_t io = {.write = squeeze_write, .close = squeeze_close};
	struct squeeze *q = ckpt_calloc(1, sizeof *q, e);
	FILE *f;

	if (q == NULL)
		return NULL;
	q->to = to;
	q->zstd = zstd;
	if (zstd ? (q->zc = ZSTD_createCCtx()) == NULL
		 : deflateInit2(&q->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(q);
		ckpt_err_nomem(e, "");
		return NULL;
	}
	if ((f = fopencookie(q, "w", io)) == NULL) {
		squeeze_close(q);
		ckpt_err_nomem(e, "");
	}
	return f;
}

/* The shard's number, as its descriptor (or I/N) gives it. */
static long
shard_number(const char *desc)
{
	json_t *d, *i;
	long n;

	if (desc[0] != '{')
		return strtol(desc, NULL, 10);
	d = json_loads(desc, 0, NULL);
	i = json_object_get(d, "shard");
	n = json_is_integer(i) && json_integer_value(i) >= 0 && json_integer_value(i) < 100000000 ?
		    (long)json_integer_value(i) : -1;
	json_decref(d);
	return n;
}

/* The rows through compression (compress: NULL or "" plain, "gz", "zst") into f. */
static int
rows_into(struct ckpt_snapshot *s, const char *desc, FILE *f, const char *compress, struct ckpt_err *e)
{
	FILE *z = NULL;
	int rc;

	if (compress && *compress && (z = squeeze_open(f, strcmp(compress, "zst") == 0, e)) == NULL)
		return -1;
	rc = ckpt_flink_shard_rows(s, desc, z ? z : f, e);
	if (z && fclose(z) != 0 && rc == 0)
		rc = ckpt_err_sys(e, "", "compressing the rows");
	if (rc == 0 && fflush(f) == EOF)
		rc = ckpt_err_sys(e, "", "write error");
	return rc;
}

/* s3://: the part written to a temporary file, then uploaded whole. */
static int
to_s3(struct ckpt_snapshot *s, const char *desc, const char *url, const char *compress, struct ckpt_err *e)
{
	char path[4096];
	FILE *f;
	int fd, rc;

	snprintf(path, sizeof path, "%s/ckpt-part-XXXXXX", ckpt_tmpdir());
	if ((fd = ckpt_cleanup_mkstemp(path)) < 0 || (f = fdopen(fd, "w")) == NULL) {
		ckpt_err_sys(e, path, "cannot create");
		if (fd >= 0) {
			close(fd);
			unlink(path);
			ckpt_cleanup_forget(path);
		}
		return -1;
	}
	rc = rows_into(s, desc, f, compress, e);
	if (fclose(f) != 0 && rc == 0)
		rc = ckpt_err_sys(e, path, "write error");
	if (rc == 0)
		rc = ckpt_s3_put_file(path, url, e);
	unlink(path);
	ckpt_cleanup_forget(path);
	return rc;
}

int
ckpt_flink_shard_write(struct ckpt_snapshot *s, const char *desc, const char *out, const char *compress,
		       char *name, size_t n, struct ckpt_err *e)
{
	long i = shard_number(desc);
	size_t len = strlen(out);
	struct ckpt_atomic *a;
	int rc;

	if (i < 0)
		return ckpt_err_set(e, CKPT_ERR_INPUT, "", "--shard: not a shard descriptor (a line of ckpt-inspect "
				    "--shards N, or I/N)");
	if (snprintf(name, n, "%s%spart-%05ld.ndjson%s%s", out, len && out[len - 1] == '/' ? "" : "/", i,
		     compress && *compress ? "." : "", compress ? compress : "") >= (int)n)
		return ckpt_err_set(e, CKPT_ERR_INPUT, out, "name too long");
	if (strncmp(out, "s3://", 5) == 0)
		return to_s3(s, desc, name, compress, e);
	if ((a = ckpt_atomic_open(name, e)) == NULL)
		return -1;
	rc = rows_into(s, desc, ckpt_atomic_file(a), compress, e);
	if (rc < 0) {
		ckpt_atomic_abort(a);
		return -1;
	}
	return ckpt_atomic_commit(a, e);
}
