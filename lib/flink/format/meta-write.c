/* meta-write.c: a Flink _metadata (format versions 3 to 7) written again as Flink's MetadataV3 to
 * V6 serializers write it, with operators re-uided or dropped, absolute file paths relocated or the
 * local files they name carried beside it as relative handles. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "format.h"

/* The output, and where its errors go. */
struct wbuf {
	struct ckpt_bytebuf b;
	struct ckpt_err *e;
};

/* One code point of UTF-8 at s (NUL-terminated): its length, or 0 when malformed. */
static size_t
utf8_next(const unsigned char *s, uint32_t *cp)
{
	size_t n = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
	static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};

	if (n == 0)
		return 0;
	*cp = n == 1 ? s[0] : s[0] & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		*cp = *cp << 6 | (s[i] & 0x3f);
	}
	if (*cp < min[n] || *cp > 0x10ffff || (*cp >= 0xd800 && *cp < 0xe000))
		return 0;
	return n;
}

/* Java's DataOutput.writeUTF: u16 length, then modified UTF-8 (NUL as C0 80, supplementary
 * characters as two 3-byte surrogates). */
static int
w_utf(struct wbuf *w, const char *s, const char *what)
{
	unsigned char *m = malloc(strlen(s) * 3 / 2 + 4), *o = m;
	const unsigned char *p = (const unsigned char *)s;
	int rc = -1;

	if (m == NULL)
		return ckpt_err_nomem(w->e, "");
	while (*p) {
		uint32_t cp, u[2];
		size_t n = utf8_next(p, &cp), k = 1;

		if (n == 0) {
			ckpt_err_set(w->e, CKPT_ERR_INPUT, "", "%s \"%s\" is not UTF-8", what, s);
			goto out;
		}
		p += n;
		u[0] = cp;
		if (cp >= 0x10000) {
			u[0] = 0xd800 + ((cp - 0x10000) >> 10);
			u[1] = 0xdc00 + ((cp - 0x10000) & 0x3ff);
			k = 2;
		}
		for (size_t i = 0; i < k; i++) {
			if (u[i] >= 0x01 && u[i] < 0x80) {
				*o++ = (unsigned char)u[i];
			} else if (u[i] < 0x800) {
				*o++ = (unsigned char)(0xc0 | u[i] >> 6);
				*o++ = (unsigned char)(0x80 | (u[i] & 0x3f));
			} else {
				*o++ = (unsigned char)(0xe0 | u[i] >> 12);
				*o++ = (unsigned char)(0x80 | (u[i] >> 6 & 0x3f));
				*o++ = (unsigned char)(0x80 | (u[i] & 0x3f));
			}
		}
	}
	if ((size_t)(o - m) > 65535) {
		ckpt_err_set(w->e, CKPT_ERR_INPUT, "", "%s is %zu bytes long in modified UTF-8, more than the 65535 "
			     "Flink can write", what, (size_t)(o - m));
		goto out;
	}
	rc = ckpt_bytebuf_be(&w->b, (uint64_t)(o - m), 2, w->e) < 0 ||
	     ckpt_bytebuf_add(&w->b, m, (size_t)(o - m), w->e) < 0 ? -1 : 0;
out:
	free(m);
	return rc;
}

/* ------------------------------------------------------------ edits named by the user */

/* What the edits make of one operator. */
struct opedit {
	int drop;
	const char *uid;    /* the new uid, or NULL */
	char id[33];        /* the new id, when uid is set */
	size_t by;          /* the edit that set drop or uid */
};

static void
edit_text(const struct ckpt_flink_edit *ed, char *buf, size_t n)
{
	switch (ed->kind) {
	case CKPT_FLINK_UID: snprintf(buf, n, "--uid %s=%s", ed->from, ed->to); break;
	case CKPT_FLINK_DROP: snprintf(buf, n, "--drop %s", ed->from); break;
	case CKPT_FLINK_RELOCATE: snprintf(buf, n, "--relocate %s=%s", ed->from, ed->to); break;
	}
}

/* The operator a uid or an operator id names: its stored uid, the id Flink derives from the uid, or the
 * id itself (any case); s->nops when none. */
size_t
ckpt_fmeta_find_op(const struct ckpt_snapshot *s, const char *name)
{
	char id[33];

	ckpt_flink_operator_id(name, strlen(name), id);
	for (size_t i = 0; i < s->nops; i++) {
		const struct ckpt_operator *op = &s->ops[i];

		if ((op->uid && strcmp(op->uid, name) == 0) || strcmp(op->id, id) == 0 || strcasecmp(op->id, name) == 0)
			return i;
	}
	return s->nops;
}

/* Apply one --uid or --drop to oe; conflicting edits of one operator are a usage error. */
static int
edit_one(const struct ckpt_snapshot *s, struct opedit *oe, const struct ckpt_flink_edit *ed, size_t nth,
	 const char *name, struct ckpt_err *e)
{
	char me[1100], other[1100];
	size_t k = ckpt_fmeta_find_op(s, ed[nth].from);
	struct opedit *o = &oe[k];

	edit_text(&ed[nth], me, sizeof me);
	if (k == s->nops)
		return ckpt_err_set(e, CKPT_ERR_REFUSED, name, "%s: no operator has the uid or id \"%s\" (Some "
				    "identifier changes were never applied!)", me, ed[nth].from);
	edit_text(&ed[o->by], other, sizeof other);
	if (ed[nth].kind == CKPT_FLINK_DROP) {
		if (o->uid)
			return ckpt_err_set(e, CKPT_ERR_INPUT, name, "%s and %s edit the same operator %s", other,
					    me, s->ops[k].id);
		o->drop = 1;
	} else {
		if (o->drop || (o->uid && strcmp(o->uid, ed[nth].to) != 0))
			return ckpt_err_set(e, CKPT_ERR_INPUT, name, "%s and %s edit the same operator %s", other,
					    me, s->ops[k].id);
		o->uid = ed[nth].to;
		ckpt_flink_operator_id(o->uid, strlen(o->uid), o->id);
	}
	o->by = nth;
	return 0;
}

/* Whether an edit of ed drops operator k of s. */
int
ckpt_fmeta_dropped(const struct ckpt_snapshot *s, const struct ckpt_flink_edit *ed, size_t ned, size_t k)
{
	for (size_t i = 0; i < ned; i++)
		if (ed[i].kind == CKPT_FLINK_DROP && ckpt_fmeta_find_op(s, ed[i].from) == k)
			return 1;
	return 0;
}

/* A re-uided operator must not take the id (or, where uids are stored, the uid) another kept one has. */
static int
check_collisions(const struct ckpt_snapshot *s, const struct opedit *oe, int uids, const struct ckpt_flink_edit *ed,
		 const char *name, struct ckpt_err *e)
{
	char me[1100];

	for (size_t k = 0; k < s->nops; k++) {
		if (oe[k].uid == NULL || oe[k].drop)
			continue;
		for (size_t j = 0; j < s->nops; j++) {
			const char *id = oe[j].uid ? oe[j].id : s->ops[j].id;
			const char *uid = oe[j].uid ? oe[j].uid : s->ops[j].uid;

			if (j == k || oe[j].drop)
				continue;
			edit_text(&ed[oe[k].by], me, sizeof me);
			if (strcmp(id, oe[k].id) == 0)
				return ckpt_err_set(e, CKPT_ERR_REFUSED, name, "%s: another operator already has the "
						    "id %s that uid \"%s\" gives", me, oe[k].id, oe[k].uid);
			if (uids && uid && strcmp(uid, oe[k].uid) == 0)
				return ckpt_err_set(e, CKPT_ERR_REFUSED, name, "%s: operator %s already has the uid "
						    "\"%s\"", me, s->ops[j].id, uid);
		}
	}
	return 0;
}

static int
resolve_edits(const struct ckpt_snapshot *s, struct opedit *oe, int uids, const struct ckpt_flink_edit *ed,
	      size_t ned, const char *name, struct ckpt_err *e)
{
	for (size_t i = 0; i < ned; i++)
		if (ed[i].kind != CKPT_FLINK_RELOCATE && edit_one(s, oe, ed, i, name, e) < 0)
			return -1;
	return check_collisions(s, oe, uids, ed, name, e);
}

/* ------------------------------------------------------------ encoding */

/* What the rewrite needs besides the output buffer. */
struct wctx {
	struct wbuf w;
	const unsigned char *in;
	const struct ckpt_snapshot *s;
	const struct ckpt_fmeta_spans *sp;
	const struct opedit *oe;
	const struct ckpt_flink_edit *ed;
	size_t ned;
	size_t *used;   /* per edit: how many paths a --relocate rewrote */
	json_t *rel;    /* relative paths of kept operators, as an object used as a set, or NULL */
	const char *name;
	const struct ckpt_flink_rekey *rk; /* --max-parallelism: keyed handles replaced, or NULL */
	size_t ispl;    /* the next of rk's splices */
};

/* The first --relocate whose prefix path starts with, or -1. */
static int
relocation(const struct wctx *c, const char *path)
{
	for (size_t i = 0; i < c->ned; i++)
		if (c->ed[i].kind == CKPT_FLINK_RELOCATE && strncmp(path, c->ed[i].from, strlen(c->ed[i].from)) == 0)
			return (int)i;
	return -1;
}

/* A local absolute path (file:/x, file:///x, file://host/x or /x) as a path of this machine, or NULL. */
static const char *
local_path(const char *p)
{
	if (strncmp(p, "file:", 5) == 0) {
		p += 5;
		if (strncmp(p, "//", 2) == 0)
			p = strchr(p + 2, '/');
	}
	return p && *p == '/' ? p : NULL;
}

/* rel named in the result, the copy of src (NULL: the input's own relative file): two files of one
 * name are refused, one file named twice is one entry. */
static int
note_rel(struct wctx *c, const char *rel, const char *src)
{
	json_t *had = c->rel ? json_object_get(c->rel, rel) : NULL;

	if (c->rel == NULL)
		return 0;
	if (had && (src ? json_is_string(had) && strcmp(json_string_value(had), src) == 0 : json_is_null(had)))
		return 0;
	if (had)
		return ckpt_err_set(c->w.e, CKPT_ERR_INPUT, "", "two state files would be named \"%s\" in the savepoint: "
				    "%s and %s", rel, json_is_string(had) ? json_string_value(had) : rel, src ? src : rel);
	if (json_object_set_new(c->rel, rel, src ? json_string(src) : json_null()) < 0)
		return ckpt_err_nomem(c->w.e, "");
	return 0;
}

/* A path, relocated by the first --relocate whose prefix it starts with. */
static int
w_path(struct wctx *c, const struct ckpt_fmeta_path *p)
{
	char *moved = NULL;
	int i, rc;

	if (p->kind == CKPT_FMETA_PATH_RELATIVE)
		return note_rel(c, p->path, NULL) < 0 ? -1 : w_utf(&c->w, p->path, "relative path");
	if ((i = relocation(c, p->path)) >= 0) {
		size_t n = strlen(c->ed[i].from);

		if ((moved = malloc(strlen(c->ed[i].to) + strlen(p->path + n) + 1)) == NULL)
			return ckpt_err_nomem(c->w.e, "");
		strcpy(stpcpy(moved, c->ed[i].to), p->path + n);
		c->used[i]++;
	}
	rc = w_utf(&c->w, moved ? moved : p->path, "file path");
	free(moved);
	return rc;
}

/* Is p a file the savepoint carries: named by an absolute local path that no --relocate moves? */
static int
carried(const struct wctx *c, const struct ckpt_fmeta_path *p)
{
	return c->rel && p->kind == CKPT_FMETA_PATH_FILE && local_path(p->path) && relocation(c, p->path) < 0;
}

/* A file carried into the savepoint beside its _metadata: the input from pos, then Flink's relative
 * file handle (tag 6, its name, its size) in place of the file handle (tag 2, its size, its path)
 * that ends at p. */
static int
w_carried(struct wctx *c, const struct ckpt_fmeta_path *p, size_t pos)
{
	const char *base = strrchr(p->path, '/') + 1;

	if (p->at < pos + 9 || c->in[p->at - 9] != 2)
		return ckpt_err_set(c->w.e, CKPT_ERR_INPUT, "", "offset %zu: a file path outside a file handle", p->at);
	if (*base == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0 || strcmp(base, "_metadata") == 0)
		return ckpt_err_set(c->w.e, CKPT_ERR_INPUT, "", "state file %s: not a name a savepoint's file can have",
				    p->path);
	if (note_rel(c, base, local_path(p->path)) < 0)
		return -1;
	return ckpt_bytebuf_add(&c->w.b, c->in + pos, p->at - 9 - pos, c->w.e) < 0 ||
	       ckpt_bytebuf_be(&c->w.b, 6, 1, c->w.e) < 0 || w_utf(&c->w, base, "relative path") < 0 ||
	       ckpt_bytebuf_add(&c->w.b, c->in + p->at - 8, 8, c->w.e) < 0 ? -1 : 0;
}

static int
w_opid(struct wbuf *w, const char *hex)
{
	unsigned char b[16];

	for (int i = 0; i < 16; i++) {
		int hi = hex[2 * i], lo = hex[2 * i + 1];

		hi = hi <= '9' ? hi - '0' : (hi | 0x20) - 'a' + 10;
		lo = lo <= '9' ? lo - '0' : (lo | 0x20) - 'a' + 10;
		b[i] = (unsigned char)(hi << 4 | lo);
	}
	return ckpt_bytebuf_add(&w->b, b, 16, w->e);
}

/* Operator k's body from pos to its end: its paths encoded, the keyed handles --max-parallelism
 * replaces written anew (the paths inside them gone with them). */
static int
w_body(struct wctx *c, size_t k, size_t pos, size_t *np)
{
	const struct ckpt_fmeta_op *sp = &c->sp->ops[k];

	for (;;) {
		const struct ckpt_fmeta_path *p = *np < c->sp->npaths && c->sp->paths[*np].op == k ? &c->sp->paths[*np] : NULL;
		const struct ckpt_flink_splice *x = c->rk && c->ispl < c->rk->nsplices &&
						    c->rk->splices[c->ispl].at < sp->end ? &c->rk->splices[c->ispl] : NULL;

		if (p && p->at < pos) {
			(*np)++;
		} else if (x && (p == NULL || x->at < p->at)) {
			if (ckpt_bytebuf_add(&c->w.b, c->in + pos, x->at - pos, c->w.e) < 0 ||
			    ckpt_bytebuf_add(&c->w.b, x->p, x->n, c->w.e) < 0)
				return -1;
			pos = x->end;
			c->ispl++;
		} else if (p) {
			if (carried(c, p) ? w_carried(c, p, pos) < 0 :
					    ckpt_bytebuf_add(&c->w.b, c->in + pos, p->at - pos, c->w.e) < 0 || w_path(c, p) < 0)
				return -1;
			pos = p->end;
			(*np)++;
		} else {
			return ckpt_bytebuf_add(&c->w.b, c->in + pos, sp->end - pos, c->w.e);
		}
	}
}

/* Operator k: its head encoded (with the new uid and id), its body copied with its paths encoded. */
static int
w_operator(struct wctx *c, size_t k, size_t *np)
{
	const struct ckpt_operator *op = &c->s->ops[k];
	const struct opedit *o = &c->oe[k];

	if (c->sp->version >= 5 && (w_utf(&c->w, op->name ? op->name : "", "operator name") < 0 ||
				    w_utf(&c->w, o->uid ? o->uid : op->uid ? op->uid : "", "operator uid") < 0))
		return -1;
	uint32_t par = c->rk && c->rk->parallelism && c->rk->parallelism[k] ? c->rk->parallelism[k] : op->parallelism;

	if (w_opid(&c->w, o->uid ? o->id : op->id) < 0 || ckpt_bytebuf_be(&c->w.b, par, 4, c->w.e) < 0 ||
	    ckpt_bytebuf_be(&c->w.b, c->rk && c->rk->max_parallelism ? c->rk->max_parallelism : op->max_parallelism, 4,
			    c->w.e) < 0)
		return -1;
	return w_body(c, k, c->sp->ops[k].body, np);
}

/* A canonical savepoint's checkpoint properties (format versions 4 and up), as Flink's
 * CheckpointProperties.forSavepoint(false, SavepointFormatType.CANONICAL) writes them through Java
 * serialization (MetadataV4Serializer): no discarding, not forced, claimed, a SavepointType named
 * "Savepoint" of format CANONICAL and post-checkpoint action NONE. */
static const char canonical_properties[] =
	"\xac\xed\x00\x05\x73\x72\x00\x38\x6f\x72\x67\x2e\x61\x70\x61\x63\x68\x65\x2e\x66\x6c\x69\x6e\x6b"
	"\x2e\x72\x75\x6e\x74\x69\x6d\x65\x2e\x63\x68\x65\x63\x6b\x70\x6f\x69\x6e\x74\x2e\x43\x68\x65\x63"
	"\x6b\x70\x6f\x69\x6e\x74\x50\x72\x6f\x70\x65\x72\x74\x69\x65\x73\x00\x00\x00\x00\x00\x00\x00\x02"
	"\x02\x00\x08\x5a\x00\x10\x64\x69\x73\x63\x61\x72\x64\x43\x61\x6e\x63\x65\x6c\x6c\x65\x64\x5a\x00"
	"\x0d\x64\x69\x73\x63\x61\x72\x64\x46\x61\x69\x6c\x65\x64\x5a\x00\x0f\x64\x69\x73\x63\x61\x72\x64"
	"\x46\x69\x6e\x69\x73\x68\x65\x64\x5a\x00\x0f\x64\x69\x73\x63\x61\x72\x64\x53\x75\x62\x73\x75\x6d"
	"\x65\x64\x5a\x00\x10\x64\x69\x73\x63\x61\x72\x64\x53\x75\x73\x70\x65\x6e\x64\x65\x64\x5a\x00\x06"
	"\x66\x6f\x72\x63\x65\x64\x5a\x00\x09\x75\x6e\x63\x6c\x61\x69\x6d\x65\x64\x4c\x00\x0e\x63\x68\x65"
	"\x63\x6b\x70\x6f\x69\x6e\x74\x54\x79\x70\x65\x74\x00\x32\x4c\x6f\x72\x67\x2f\x61\x70\x61\x63\x68"
	"\x65\x2f\x66\x6c\x69\x6e\x6b\x2f\x72\x75\x6e\x74\x69\x6d\x65\x2f\x63\x68\x65\x63\x6b\x70\x6f\x69"
	"\x6e\x74\x2f\x53\x6e\x61\x70\x73\x68\x6f\x74\x54\x79\x70\x65\x3b\x78\x70\x00\x00\x00\x00\x00\x00"
	"\x00\x73\x72\x00\x31\x6f\x72\x67\x2e\x61\x70\x61\x63\x68\x65\x2e\x66\x6c\x69\x6e\x6b\x2e\x72\x75"
	"\x6e\x74\x69\x6d\x65\x2e\x63\x68\x65\x63\x6b\x70\x6f\x69\x6e\x74\x2e\x53\x61\x76\x65\x70\x6f\x69"
	"\x6e\x74\x54\x79\x70\x65\xa0\x87\xd3\x08\xa4\x58\x14\xb8\x02\x00\x03\x4c\x00\x0a\x66\x6f\x72\x6d"
	"\x61\x74\x54\x79\x70\x65\x74\x00\x35\x4c\x6f\x72\x67\x2f\x61\x70\x61\x63\x68\x65\x2f\x66\x6c\x69"
	"\x6e\x6b\x2f\x63\x6f\x72\x65\x2f\x65\x78\x65\x63\x75\x74\x69\x6f\x6e\x2f\x53\x61\x76\x65\x70\x6f"
	"\x69\x6e\x74\x46\x6f\x72\x6d\x61\x74\x54\x79\x70\x65\x3b\x4c\x00\x04\x6e\x61\x6d\x65\x74\x00\x12"
	"\x4c\x6a\x61\x76\x61\x2f\x6c\x61\x6e\x67\x2f\x53\x74\x72\x69\x6e\x67\x3b\x4c\x00\x14\x70\x6f\x73"
	"\x74\x43\x68\x65\x63\x6b\x70\x6f\x69\x6e\x74\x41\x63\x74\x69\x6f\x6e\x74\x00\x48\x4c\x6f\x72\x67"
	"\x2f\x61\x70\x61\x63\x68\x65\x2f\x66\x6c\x69\x6e\x6b\x2f\x72\x75\x6e\x74\x69\x6d\x65\x2f\x63\x68"
	"\x65\x63\x6b\x70\x6f\x69\x6e\x74\x2f\x53\x61\x76\x65\x70\x6f\x69\x6e\x74\x54\x79\x70\x65\x24\x50"
	"\x6f\x73\x74\x43\x68\x65\x63\x6b\x70\x6f\x69\x6e\x74\x41\x63\x74\x69\x6f\x6e\x3b\x78\x70\x7e\x72"
	"\x00\x33\x6f\x72\x67\x2e\x61\x70\x61\x63\x68\x65\x2e\x66\x6c\x69\x6e\x6b\x2e\x63\x6f\x72\x65\x2e"
	"\x65\x78\x65\x63\x75\x74\x69\x6f\x6e\x2e\x53\x61\x76\x65\x70\x6f\x69\x6e\x74\x46\x6f\x72\x6d\x61"
	"\x74\x54\x79\x70\x65\x00\x00\x00\x00\x00\x00\x00\x00\x12\x00\x00\x78\x72\x00\x0e\x6a\x61\x76\x61"
	"\x2e\x6c\x61\x6e\x67\x2e\x45\x6e\x75\x6d\x00\x00\x00\x00\x00\x00\x00\x00\x12\x00\x00\x78\x70\x74"
	"\x00\x09\x43\x41\x4e\x4f\x4e\x49\x43\x41\x4c\x74\x00\x09\x53\x61\x76\x65\x70\x6f\x69\x6e\x74\x7e"
	"\x72\x00\x46\x6f\x72\x67\x2e\x61\x70\x61\x63\x68\x65\x2e\x66\x6c\x69\x6e\x6b\x2e\x72\x75\x6e\x74"
	"\x69\x6d\x65\x2e\x63\x68\x65\x63\x6b\x70\x6f\x69\x6e\x74\x2e\x53\x61\x76\x65\x70\x6f\x69\x6e\x74"
	"\x54\x79\x70\x65\x24\x50\x6f\x73\x74\x43\x68\x65\x63\x6b\x70\x6f\x69\x6e\x74\x41\x63\x74\x69\x6f"
	"\x6e\x00\x00\x00\x00\x00\x00\x00\x00\x12\x00\x00\x78\x71\x00\x7e\x00\x09\x74\x00\x04\x4e\x4f\x4e"
	"\x45";

static int
w_file(struct wctx *c, size_t len)
{
	const struct ckpt_fmeta_spans *sp = c->sp;
	size_t kept = 0, np = 0;

	for (size_t k = 0; k < c->s->nops; k++)
		kept += !c->oe[k].drop;
	if (ckpt_bytebuf_be(&c->w.b, 0x4960672d, 4, c->w.e) < 0 ||
	    ckpt_bytebuf_be(&c->w.b, (uint32_t)sp->version, 4, c->w.e) < 0 ||
	    ckpt_bytebuf_be(&c->w.b, c->s->checkpoint_id, 8, c->w.e) < 0 ||
	    ckpt_bytebuf_add(&c->w.b, c->in + sp->masters_at, sp->ops_at - sp->masters_at, c->w.e) < 0 ||
	    ckpt_bytebuf_be(&c->w.b, kept, 4, c->w.e) < 0)
		return -1;
	for (size_t k = 0; k < c->s->nops; k++) {
		if (c->oe[k].drop) {
			while (np < sp->npaths && sp->paths[np].op == k)
				np++;
			while (c->rk && c->ispl < c->rk->nsplices && c->rk->splices[c->ispl].at < sp->ops[k].end)
				c->ispl++;
			continue;
		}
		if (w_operator(c, k, &np) < 0)
			return -1;
	}
	if (c->rk && c->rk->canonical && sp->version >= 4)
		return ckpt_bytebuf_add(&c->w.b, canonical_properties, sizeof canonical_properties - 1, c->w.e);
	return ckpt_bytebuf_add(&c->w.b, c->in + sp->trailer_at, len - sp->trailer_at, c->w.e);
}

static int
unused_relocation(struct wctx *c)
{
	char me[1100];

	for (size_t i = 0; i < c->ned; i++) {
		if (c->ed[i].kind == CKPT_FLINK_RELOCATE && c->used[i] == 0) {
			edit_text(&c->ed[i], me, sizeof me);
			return ckpt_err_set(c->w.e, CKPT_ERR_REFUSED, c->name, "%s: no absolute path of a kept "
					    "operator starts with \"%s\"", me, c->ed[i].from);
		}
	}
	return 0;
}

int
ckpt_fmeta_rewrite(const void *buf, size_t len, const char *name, const struct ckpt_flink_edit *ed,
		       size_t ned, struct ckpt_bytes *out, json_t **relative, struct ckpt_err *e)
{
	return ckpt_fmeta_rewrite_rekeyed(buf, len, name, ed, ned, NULL, out, relative, e);
}

int
ckpt_fmeta_rewrite_rekeyed(const void *buf, size_t len, const char *name, const struct ckpt_flink_edit *ed,
			       size_t ned, const struct ckpt_flink_rekey *rk, struct ckpt_bytes *out, json_t **relative,
			       struct ckpt_err *e)
{
	struct ckpt_fmeta_spans sp;
	struct ckpt_snapshot *s = ckpt_fmeta_decode_spans(buf, len, name, &sp, e);
	struct wctx c = {.w = {.e = e}, .in = buf, .s = s, .sp = &sp, .ed = ed, .ned = ned, .name = name, .rk = rk};
	struct opedit *oe = NULL;
	int rc = -1;

	out->p = NULL;
	out->len = 0;
	if (relative)
		*relative = NULL;
	if (s == NULL)
		goto out;
	if (sp.version < 3) {
		ckpt_err_set(e, CKPT_ERR_INPUT, name, "format version %d: version 2 and below are read-only: Flink "
			     "cannot write them either", sp.version);
		goto out;
	}
	oe = ckpt_calloc(s->nops + 1, sizeof *oe, e);
	c.used = ckpt_calloc(ned + 1, sizeof *c.used, e);
	if (oe == NULL || c.used == NULL || resolve_edits(s, oe, sp.version >= 5, ed, ned, name, e) < 0)
		goto out;
	c.oe = oe;
	if (relative && (c.rel = json_object()) == NULL) {
		ckpt_err_nomem(e, "");
		goto out;
	}
	if (w_file(&c, len) < 0) {
		ckpt_err_locate(e, e->kind, name);
		goto out;
	}
	if (unused_relocation(&c) < 0)
		goto out;
	if (relative)
		*relative = json_incref(c.rel);
	out->p = c.w.b.p;
	out->len = c.w.b.len;
	c.w.b.p = NULL;
	rc = 0;
out:
	ckpt_bytebuf_release(&c.w.b);
	free(c.used);
	free(oe);
	json_decref(c.rel);
	ckpt_fmeta_spans_release(&sp);
	ckpt_snapshot_free(s);
	return rc;
}
