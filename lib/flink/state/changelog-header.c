/* changelog-header.c: the keyed state header of a changelog's states (ckpt-merge --canonical),
 * made of the bytes its readers pass: the materialized part's header (the key serializer and its
 * states) and the meta info of each metadata change, the key serializer from a timer state's
 * TimerSerializer when no materialized part gives it (a changelog records none of its own). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readers.h"

static int
add(struct ckpt_bytebuf *b, const void *p, size_t n, struct ckpt_err *e, const char *where)
{
	return ckpt_bytebuf_add(b, p, n, NULL) < 0 ? ckpt_err_nomem(e, where) : 0;
}

/* The key serializer t's snapshot, read from p (its source's bytes), kept as the keyed header
 * writes it (TypeSerializerSnapshotSerializationUtil's format version 2 first) when none is yet. */
static int
raw_key(struct ckpt_fclraw *r, const struct ckpt_fser *t, const unsigned char *p, struct ckpt_err *e,
	const char *where)
{
	static const unsigned char v2[4] = {0, 0, 0, 2};

	if (r->key.len || t == NULL || t->end <= t->at)
		return 0;
	return add(&r->key, v2, 4, e, where) < 0 ? -1 : add(&r->key, p + t->at, (size_t)(t->end - t->at), e, where);
}

/* The bytes p[0, n) of state idx's meta info snapshot, kept when it has none yet. */
static int
raw_meta(struct ckpt_fclraw *r, size_t idx, const unsigned char *p, size_t n, struct ckpt_err *e, const char *where)
{
	if (idx >= r->n) {
		struct ckpt_bytebuf *m = ckpt_reallocarray(r->m, idx + 1, sizeof *m, e);

		if (m == NULL)
			return -1;
		memset(m + r->n, 0, (idx + 1 - r->n) * sizeof *m);
		r->m = m;
		r->n = idx + 1;
	}
	return r->m[idx].len ? 0 : add(&r->m[idx], p, n, e, where);
}

int
ckpt_fclraw_meta(struct ckpt_fclraw *r, size_t idx, const struct ckpt_fstate_meta *m, const unsigned char *p,
		 struct ckpt_err *e, const char *where)
{
	if (raw_meta(r, idx, p + m->at, (size_t)(m->end - m->at), e, where) < 0)
		return -1;
	if (m->type == 3 && m->value && m->value->kind == FSER_TIMER && m->value->nkids == 2)
		return raw_key(r, m->value->kids[0], p, e, where);
	return 0;
}

int
ckpt_fclraw_materialized(struct ckpt_fclraw *r, struct ckpt_fstate_ctx *c, const struct ckpt_fstate_header *H,
			 const struct ckpt_fstate_header *hd)
{
	struct ckpt_fsrc s = {0};
	unsigned char *p = ckpt_calloc(hd->end + 1, 1, c->e);
	size_t next = H->n;
	int fd = -1, rc = -1;

	s.fd = -1;
	if (p == NULL || ckpt_fstate_open_bytes(c, &s, &fd) < 0 || ckpt_fsrc_seek(&s, 0, 0) < 0 ||
	    ckpt_fsrc_read(&s, p, hd->end, "keyed state header") < 0)
		goto out;
	if (hd->key && hd->key->at >= 4 && raw_key(r, hd->key, p, c->e, c->where) < 0)
		goto out;
	for (size_t i = 0; i < hd->n; i++)
		if (ckpt_fstate_meta_named(H, hd->m[i].name) == NULL &&
		    raw_meta(r, next++, p + hd->m[i].at, (size_t)(hd->m[i].end - hd->m[i].at), c->e, c->where) < 0)
			goto out;
	rc = 0;
out:
	free(p);
	ckpt_fsrc_release(&s);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Why state i cannot go into a keyed header, or NULL. */
static const char *
unheaded(const struct ckpt_fclraw *r, size_t i, const char *const *why, size_t nwhy)
{
	if (i < nwhy && why[i])
		return why[i];
	if (i >= r->n || r->m[i].len == 0)
		return "its meta info is neither in the materialized part nor in a metadata change";
	if (r->key.len == 0)
		return "the changelog records no key serializer (no materialized part, no timer state)";
	return NULL;
}

int
ckpt_fclraw_header(const struct ckpt_fclraw *r, const struct ckpt_fstate_header *H, const char *const *why,
		   size_t nwhy, struct ckpt_fstate_ctx *c, const char *where, struct ckpt_fstate_header *h,
		   unsigned char **out)
{
	struct ckpt_bytebuf b = {0};
	unsigned char head[5] = {0, 0, 0, 6, 0}, n[2] = {(unsigned char)(H->n >> 8), (unsigned char)H->n};
	struct ckpt_fsrc s;
	int rc = -1;

	for (size_t i = 0; i < H->n; i++)
		if (unheaded(r, i, why, nwhy))
			return ckpt_err_set(c->e, CKPT_ERR_REFUSED, where, "operator %s subtask %u: state \"%s\" of a "
					    "changelog cannot go into a savepoint's keyed header: %s", c->op->id,
					    c->st->index, H->m[i].name, unheaded(r, i, why, nwhy));
	if (H->n == 0 || H->n > 32767)
		return ckpt_err_set(c->e, CKPT_ERR_REFUSED, where, "operator %s subtask %u: a changelog of %zu states",
				    c->op->id, c->st->index, H->n);
	if (add(&b, head, 5, c->e, where) < 0 || add(&b, r->key.p, r->key.len, c->e, where) < 0 ||
	    add(&b, n, 2, c->e, where) < 0)
		goto out;
	for (size_t i = 0; i < H->n; i++)
		if (add(&b, r->m[i].p, r->m[i].len, c->e, where) < 0)
			goto out;
	if (add(&b, "", 1, c->e, where) < 0) /* room for the caller's terminator */
		goto out;
	ckpt_fsrc_mem(&s, b.p, b.len - 1, where, c->e);
	rc = ckpt_fstate_read_keyed_header(&s, h) < 0 ? -1 : 0;
	ckpt_fsrc_release(&s);
	if (rc == 0 && (h->stopped || h->end != b.len - 1))
		rc = ckpt_err_set(c->e, CKPT_ERR_INPUT, where, "operator %s subtask %u: the keyed header made of a "
				  "changelog's states does not read back", c->op->id, c->st->index);
out:
	if (rc == 0) {
		*out = b.p;
		b.p = NULL;
	}
	free(b.p);
	return rc;
}

void
ckpt_fclraw_free(struct ckpt_fclraw *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->m[i].p);
	free(r->m);
	free(r->key.p);
	memset(r, 0, sizeof *r);
}
