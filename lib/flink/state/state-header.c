/* state-header.c: the operator and the keyed serialization proxies at the head of a state file,
 * each version read here (the current ones, through state-meta.c) or by state-old.c. */
#include <unistd.h>

#include "readers.h"

static int
read_metas(struct ckpt_fsrc *s, struct ckpt_fstate_header *h, const char *what)
{
	int16_t n;

	if (ckpt_fsrc_i16(s, &n, what) < 0)
		return -1;
	if (n < 0)
		return ckpt_fsrc_fail(s, "negative %s %d", what, n);
	for (int16_t i = 0; i < n; i++) {
		int r = ckpt_fstate_read_meta(s, h);

		if (r != 0)
			return r;
	}
	return 0;
}

/* OperatorBackendSerializationProxy; 1 when the header stops early (h->stop says why). */
int
ckpt_fstate_op_header(struct ckpt_fsrc *s, struct ckpt_fstate_header *h)
{
	int r;

	if (ckpt_fsrc_seek(s, 0, 0) < 0 || ckpt_fsrc_i32(s, &h->version, "operator state header version") < 0)
		return -1;
	if (h->version < 1 || h->version > 6)
		return ckpt_fsrc_fail(s, "operator state header version %d (1 to 6 expected)", h->version);
	if (h->version < 5)
		return ckpt_fstate_old_op_header(s, h);
	if (h->version == 6 && ckpt_fstate_read_flag(s, &h->compressed, "compression flag") < 0)
		return -1;
	if ((r = read_metas(s, h, "operator state count")) != 0)
		return r;
	h->nlist = h->n;
	if ((r = read_metas(s, h, "broadcast state count")) != 0)
		return r;
	h->end = ckpt_fsrc_tell(s);
	return 0;
}

/* KeyedBackendSerializationProxy; 1 when the header stops early. */
int
ckpt_fstate_read_keyed_header(struct ckpt_fsrc *s, struct ckpt_fstate_header *h)
{
	int r;

	if (ckpt_fsrc_seek(s, 0, 0) < 0 || ckpt_fsrc_i32(s, &h->version, "keyed state header version") < 0)
		return -1;
	if (h->version < 1 || h->version > 6)
		return ckpt_fsrc_fail(s, "keyed state header version %d (1 to 6 expected)", h->version);
	if (h->version < 6)
		return ckpt_fstate_old_keyed_header(s, h);
	if (ckpt_fstate_read_flag(s, &h->compressed, "key-group compression flag") < 0)
		return -1;
	if ((r = ckpt_fser_read(s, 1, &h->key)) != 0) {
		if (r == 1)
			ckpt_fstate_header_stop(h, "the key serializer is a %s, whose snapshot ckpt cannot step over",
				    ckpt_fser_blocker(h->key));
		return r;
	}
	if ((r = read_metas(s, h, "keyed state count")) != 0)
		return r;
	h->end = ckpt_fsrc_tell(s);
	return 0;
}

/* The keyed serialization proxy at the head of c->h's stream (changelog.c reads it too). */
int
ckpt_fstate_keyed_header(struct ckpt_fstate_ctx *c, struct ckpt_fstate_header *h)
{
	struct ckpt_fsrc s = {0};
	int fd = -1, rc;

	s.fd = -1;
	rc = ckpt_fstate_open_bytes(c, &s, &fd) < 0 || ckpt_fstate_read_keyed_header(&s, h) < 0 ? -1 : 0;
	ckpt_fsrc_release(&s);
	if (fd >= 0)
		close(fd);
	return rc;
}
