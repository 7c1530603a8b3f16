/*
 * archive.c: the one helper over libarchive: readers over tar and zip, plain or
 * compressed, that stream a member's data block by block, and the writer's setup,
 * member headers and data; libarchive's errors in the project's words.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "snap.h"

#define BLOCK ((size_t)1 << 20)

/* ---- reading through libarchive */

/*
 * libarchive's message in our style: first letter lowercase unless it starts
 * a word in capitals ("ZIP ..."), no final period or new line.
 */
static const char *
arc_msg(struct archive *a, char *buf, size_t size)
{
	const char *m = archive_error_string(a);
	size_t n;

	/* zlib's Z_BUF_ERROR: the compressed data stops short, which is what a cut zip shows */
	if (m && strcmp(m, "ZIP decompression failed (-5)") == 0)
		m = "truncated ZIP data: the archive ends inside a compressed member";
	snprintf(buf, size, "%s", m && *m ? m : "unknown error");
	if (buf[0] >= 'A' && buf[0] <= 'Z' && !(buf[1] >= 'A' && buf[1] <= 'Z'))
		buf[0] = (char)(buf[0] - 'A' + 'a');
	n = strlen(buf);
	while (n > 0 && (buf[n - 1] == '.' || buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return buf;
}

/*
 * The read block for fd: BLOCK, or a small file's size rounded up to 4 KiB,
 * so that opening a small archive (as the fuzzer and most tests do, several
 * times each) does not cost a megabyte buffer each time.
 */
static size_t
read_block(int fd)
{
	struct stat sb;

	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (uint64_t)sb.st_size < BLOCK)
		return ((size_t)sb.st_size + 4095) / 4096 * 4096 + 4096;
	return BLOCK;
}

/* A reader over fd from its start: tar or zip, plain or compressed. */
struct archive *
ckpt_arc_open_read(int fd, const char *name, struct ckpt_err *e)
{
	struct archive *a = archive_read_new();

	if (a == NULL) {
		ckpt_err_nomem(e, name);
		return NULL;
	}
	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	archive_read_support_format_zip(a);
	if (lseek(fd, 0, SEEK_SET) < 0 && errno != ESPIPE) {
		ckpt_err_sys(e, name, "cannot seek");
		archive_read_free(a);
		return NULL;
	}
	if (archive_read_open_fd(a, fd, read_block(fd)) != ARCHIVE_OK) {
		char m[256];
		unsigned char head[512];
		ssize_t n = pread(fd, head, sizeof head, 0);

		/* a tar of ckpt's cut inside its first header: libarchive cannot tell it from anything else */
		if (n >= (ssize_t)sizeof SNAP_MANIFEST_NAME && n < (ssize_t)sizeof head &&
		    memcmp(head, SNAP_MANIFEST_NAME, sizeof SNAP_MANIFEST_NAME) == 0)
			ckpt_err_set(e, CKPT_ERR_INPUT, name, "truncated tar archive: %zd bytes, cut inside the 512-byte "
				     "header of its first member, %s", n, SNAP_MANIFEST_NAME);
		else
			ckpt_err_set(e, CKPT_ERR_INPUT, name, "not a snapshot: %s", arc_msg(a, m, sizeof m));
		archive_read_free(a);
		return NULL;
	}
	return a;
}

/* Next member: 1 and *ent, 0 at the end, -1 on error (named). */
int
ckpt_arc_next(struct archive *a, struct archive_entry **ent, const char *name, struct ckpt_err *e)
{
	int r = archive_read_next_header(a, ent);
	char m[256];

	if (r == ARCHIVE_EOF)
		return 0;
	if ((r == ARCHIVE_OK || r == ARCHIVE_WARN) && archive_entry_pathname(*ent) == NULL)
		return ckpt_err_set(e, CKPT_ERR_INPUT, name, "unreadable archive: a member without a name");
	if (r == ARCHIVE_OK || r == ARCHIVE_WARN)
		return 1;
	return ckpt_err_set(e, CKPT_ERR_INPUT, name, "unreadable archive: %s", arc_msg(a, m, sizeof m));
}

/*
 * Stream the current member's data to fn in blocks; returns the bytes seen, or
 * -1 with e set when the data cannot be read (a cut archive) or fn fails.
 */
int64_t
ckpt_arc_stream(struct archive *a, int (*fn)(void *arg, const void *p, size_t n, int64_t off), void *arg,
	   const char *where, struct ckpt_err *e)
{
	int64_t total = 0;

	for (;;) {
		const void *p;
		size_t n;
		la_int64_t off;
		int r = archive_read_data_block(a, &p, &n, &off);

		if (r == ARCHIVE_EOF)
			return total;
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
			char m[256];

			return ckpt_err_set(e, CKPT_ERR_REFUSED, where, "unreadable member: %s",
					    arc_msg(a, m, sizeof m));
		}
		if (off != total)
			return ckpt_err_set(e, CKPT_ERR_REFUSED, where, "sparse member");
		if (n && fn(arg, p, n, off) < 0)
			return -1;
		total += (int64_t)n;
		ckpt_progress_at(a, (uint64_t)archive_filter_bytes(a, -1));
	}
}

/* Skip the current member's data (a seek in a plain tar); -1 with e set as ckpt_arc_stream sets it. */
int
ckpt_arc_skip(struct archive *a, const char *where, struct ckpt_err *e)
{
	char m[256];

	if (archive_read_data_skip(a) == ARCHIVE_OK)
		return 0;
	return ckpt_err_set(e, CKPT_ERR_REFUSED, where, "unreadable member: %s", arc_msg(a, m, sizeof m));
}
void
ckpt_arc_close(struct archive *a)
{
	if (a)
		archive_read_free(a);
}

/* ---- writing through libarchive */

int
ckpt_arc_write_header(struct archive *a, const char *name, uint64_t size)
{
	struct archive_entry *ent = archive_entry_new();
	int r;

	if (ent == NULL)
		return ARCHIVE_FATAL;
	archive_entry_set_pathname(ent, name);
	archive_entry_set_size(ent, (la_int64_t)size);
	archive_entry_set_filetype(ent, AE_IFREG);
	archive_entry_set_perm(ent, 0644);
	archive_entry_set_mtime(ent, 315532800, 0); /* fixed (1980, zip's epoch): equal input, equal archive */
	r = archive_write_header(a, ent);
	archive_entry_free(ent);
	return r;
}

int
ckpt_arc_write_all(struct archive *a, const void *p, size_t n)
{
	while (n > 0) {
		la_ssize_t k = archive_write_data(a, p, n);

		if (k <= 0)
			return -1;
		p = (const char *)p + k;
		n -= (size_t)k;
	}
	return 0;
}
struct archive *
ckpt_arc_open_write(enum ckpt_archive_kind kind, int fd)
{
	struct archive *a = archive_write_new();

	if (a == NULL)
		return NULL;
	if (kind == CKPT_ARCHIVE_ZIP) {
		archive_write_set_format_zip(a);
	} else {
		archive_write_set_format_pax_restricted(a);
		/* no time stamp in the gzip header: equal input, equal archive */
		if (kind == CKPT_ARCHIVE_TARGZ && (archive_write_add_filter_gzip(a) != ARCHIVE_OK ||
						   archive_write_set_filter_option(a, "gzip", "timestamp", NULL) != ARCHIVE_OK)) {
			archive_write_free(a);
			return NULL;
		}
		archive_write_set_bytes_in_last_block(a, 1);
	}
	if (archive_write_open_fd(a, fd) != ARCHIVE_OK) {
		archive_write_free(a);
		return NULL;
	}
	return a;
}
