/* setoffhandle.c: what --set-offset's two kinds of source share (setoffset.c's KafkaSource,
 * consumeroff.c's FlinkKafkaConsumer): a handle's bytes (inline, or its file's read whole), the
 * Kafka enumerator recognised, 8 bytes spliced, and a handle of operator state written anew (its
 * removed elements cut, added ones appended, inline or into a new file of the savepoint). */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readers.h"
#include "model/model.h"

/* The bytes of handle di: inline in the _metadata, or its file's. */
const unsigned char *
ckpt_fsetoff_hdata(const struct ckpt_fsetoff *c, size_t di)
{
	return c->sp->opdata[di].file ? c->fdata[di].p : c->buf + c->sp->opdata[di].at;
}

/* What holds them, for messages: the _metadata, or the file. */
const char *
ckpt_fsetoff_hwhere(const struct ckpt_fsetoff *c, size_t di)
{
	return c->sp->opdata[di].file ? c->fwhere[di] : c->meta;
}

/* Handle di's file read whole, once: its size the handle's (a file cut or grown is refused, naming
 * it, as -c says it). */
int
ckpt_fsetoff_read_file(struct ckpt_fsetoff *c, size_t di)
{
	const struct ckpt_fmeta_opdata *d = &c->sp->opdata[di];
	const struct ckpt_operator *op = &c->s->ops[d->op];
	struct ckpt_fstate_ctx x = {.b = c->b, .op = op, .e = c->e};
	struct ckpt_fsrc src = {.fd = -1};
	unsigned char *p = NULL;
	int fd = -1, rc = -1;

	if (!d->file || c->fdata[di].p)
		return 0;
	for (size_t i = 0; i < op->nsubtasks; i++)
		if (op->subtasks[i].index == d->subtask)
			x.st = &op->subtasks[i];
	x.h = &x.st->handles[d->handle];
	snprintf(x.where, sizeof x.where, "%s", c->meta);
	if (ckpt_fstate_open_bytes(&x, &src, &fd) < 0 || (p = ckpt_calloc(d->n + 1, 1, c->e)) == NULL ||
	    ckpt_fsrc_read(&src, p, d->n, "operator state") < 0)
		goto out;
	if ((c->fwhere[di] = strdup(x.where)) == NULL) {
		ckpt_err_nomem(c->e, "");
		goto out;
	}
	c->fdata[di] = (struct ckpt_bytes){.p = p, .len = d->n};
	p = NULL;
	rc = 0;
out:
	free(p);
	ckpt_fsrc_release(&src);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Is the operator a Kafka source (its enumerator typed as Kafka's)?  1, 0, or -1 (refused). */
int
ckpt_fsetoff_kafka_source(struct ckpt_fsetoff *c, const struct ckpt_operator *op)
{
	json_t *en = NULL;
	char why[1200];
	const char *conn;
	int rc = 0;

	if (op->coordinator == NULL)
		return 0;
	if (ckpt_fser_enum_typed(op->coordinator->p, op->coordinator->len, &en, why, sizeof why) < 0)
		return ckpt_err_nomem(c->e, "");
	conn = en ? json_string_value(json_object_get(en, "connector")) : NULL;
	if (en && conn == NULL && c->untyped[0] == '\0')
		snprintf(c->untyped, sizeof c->untyped, ": operator %s's enumerator state is none ckpt can type: %s", op->id,
			 json_string_value(json_object_get(en, "reason")));
	if (conn && strcmp(conn, "kafka") == 0) {
		rc = 1;
		if (json_object_get(en, "splits") || json_object_get(en, "assignments")) {
			c->coord_at = c->sp->ops[op - c->s->ops].coord_at;
			c->coord_len = op->coordinator->len;
		}
	}
	json_decref(en);
	return rc;
}

/* "topic:0, topic:1, ...": the partitions the readers hold, sorted as the readers list them. */
void
ckpt_fsetoff_held(const struct ckpt_fsetoff *c, char *b, size_t n)
{
	size_t used = 0;

	b[0] = '\0';
	for (size_t i = 0; i < c->nsl && used < n; i++)
		used += (size_t)snprintf(b + used, n - used, "%s%s:%d", i ? ", " : "", c->sl[i].topic,
					 (int)c->sl[i].partition);
	if (c->nsl == 0)
		snprintf(b, n, "none");
}

/* The 8 bytes at at become v, as splice n of rk. */
int
ckpt_fsetoff_splice_at(struct ckpt_fsetoff *c, struct ckpt_flink_rekey *rk, size_t at, int64_t v)
{
	struct ckpt_flink_splice *x = &rk->splices[rk->nsplices];

	if ((x->p = malloc(8)) == NULL)
		return ckpt_err_nomem(c->e, "");
	rk->nsplices++;
	x->at = at;
	x->end = at + 8;
	x->n = 8;
	for (int i = 0; i < 8; i++)
		x->p[i] = (unsigned char)((uint64_t)v >> (56 - 8 * i));
	return 0;
}

const char *const ckpt_fsetoff_optname[] = {"--set-offset", "--add-partition", "--remove-partition"};

int
ckpt_fsetoff_named_twice(struct ckpt_fsetoff *c, const struct ckpt_flink_offset_set *sets, size_t nsets)
{
	for (size_t i = 0; i < nsets; i++)
		for (size_t j = i + 1; j < nsets; j++)
			if (sets[i].partition == sets[j].partition && strcmp(sets[i].topic, sets[j].topic) == 0)
				return ckpt_err_set(c->e, CKPT_ERR_INPUT, c->meta, "%s %s and %s %s name one partition",
						    ckpt_fsetoff_optname[sets[i].kind], sets[i].text, ckpt_fsetoff_optname[sets[j].kind], sets[j].text);
	return 0;
}

/* Where offset o of handle di's data lies once its removed elements are cut and nins bytes go in at p. */
static uint64_t
moved(const struct ckpt_fsetoff *c, size_t di, uint64_t o, size_t p, size_t nins)
{
	uint64_t m = o;

	for (size_t i = 0; i < c->nsl; i++)
		if (c->sl[i].d == di && c->sl[i].removed && c->sl[i].eend <= o)
			m -= c->sl[i].eend - c->sl[i].eoff;
	return m + (o >= p ? nins : 0);
}

static int
cut(const struct ckpt_fsetoff *c, size_t di, uint64_t o)
{
	for (size_t i = 0; i < c->nsl; i++)
		if (c->sl[i].d == di && c->sl[i].removed && c->sl[i].eoff == o)
			return 1;
	return 0;
}

/* Handle di's states (from its state count, as meta-handle.c read them): names and modes as
 * they are, every offset moved, the removed elements' gone, the added ones' last of the reader
 * state (each of nadd a reader state element of its own length).  *end: where the data handle starts. */
static int
w_states(struct ckpt_fsetoff *c, size_t di, size_t p, const struct ckpt_bytebuf *ins, size_t nadd, struct ckpt_bytebuf *b,
	 size_t *end)
{
	const unsigned char *q = c->buf + c->sp->opdata[di].head;
	size_t pos = 4, ns = ckpt_load_be(q, 4);

	if (ckpt_bytebuf_add(b, q, 4, c->e) < 0)
		return -1;
	for (size_t i = 0; i < ns; i++) {
		size_t nl = ckpt_load_be(q + pos, 2), no = ckpt_load_be(q + pos + 3 + nl, 4), kept = 0, at = 0;
		int reader = nl == strlen(CKPT_FSETOFF_READER) && memcmp(q + pos + 2, CKPT_FSETOFF_READER, nl) == 0;

		for (size_t j = 0; j < no; j++)
			kept += !(reader && cut(c, di, ckpt_load_be(q + pos + 7 + nl + 8 * j, 8)));
		if (ckpt_bytebuf_add(b, q + pos, 3 + nl, c->e) < 0 ||
		    ckpt_bytebuf_be(b, kept + (reader ? nadd : 0), 4, c->e) < 0)
			return -1;
		for (size_t j = 0; j < no; j++) {
			uint64_t o = ckpt_load_be(q + pos + 7 + nl + 8 * j, 8);

			if (!(reader && cut(c, di, o)) && ckpt_bytebuf_be(b, moved(c, di, o, p, ins->len), 8, c->e) < 0)
				return -1;
		}
		for (size_t j = 0; reader && j < nadd; j++, at += 4 + ckpt_load_be(ins->p + at, 4))
			if (ckpt_bytebuf_be(b, moved(c, di, p, p, 0) + at, 8, c->e) < 0)
				return -1;
		pos += 7 + nl + 8 * no;
	}
	*end = c->sp->opdata[di].head + pos;
	return 0;
}

static int
cmp_eoff(const void *a, const void *b)
{
	const struct ckpt_fsetoff_split *x = *(const struct ckpt_fsetoff_split *const *)a, *y = *(const struct ckpt_fsetoff_split *const *)b;

	return x->eoff < y->eoff ? -1 : x->eoff > y->eoff;
}

/* Handle di's data: the offsets set, the removed elements cut, ins at p (after every reader element). */
static int
w_data(struct ckpt_fsetoff *c, size_t di, size_t p, const struct ckpt_bytebuf *ins, struct ckpt_bytebuf *b)
{
	const struct ckpt_fmeta_opdata *d = &c->sp->opdata[di];
	const unsigned char *q = ckpt_fsetoff_hdata(c, di);
	struct ckpt_fsetoff_split **rm = ckpt_calloc(c->nsl + 1, sizeof *rm, c->e);
	size_t nrm = 0, from = 0, start = b->len;
	int rc = -1;

	if (rm == NULL)
		return -1;
	for (size_t i = 0; i < c->nsl; i++)
		if (c->sl[i].d == di && c->sl[i].removed)
			rm[nrm++] = &c->sl[i];
	qsort(rm, nrm, sizeof *rm, cmp_eoff);
	for (size_t i = 0; i < nrm; i++) {
		if (ckpt_bytebuf_add(b, q + from, rm[i]->eoff - from, c->e) < 0)
			goto out;
		from = rm[i]->eend;
	}
	if (ckpt_bytebuf_add(b, q + from, p - from, c->e) < 0 || ckpt_bytebuf_add(b, ins->p, ins->len, c->e) < 0 ||
	    ckpt_bytebuf_add(b, q + p, d->n - p, c->e) < 0)
		goto out;
	for (size_t i = 0; i < c->nsl; i++) /* kept splits set: before p, each moved by the cuts before it */
		if (c->sl[i].d == di && c->sl[i].set && !c->sl[i].removed)
			ckpt_store_be(b->p + start + moved(c, di, c->sl[i].at - d->at, p, 0), (uint64_t)c->sl[i].v, 8);
	rc = 0;
out:
	free(rm);
	return rc;
}

/* Handle di's new data written whole into the savepoint (a temporary name renamed) as reader-OPID-
 * SUBTASK (-2, -3, ... after it when that is taken), named in b as Flink's relative file handle
 * (tag 6: the name, the size), as a savepoint's own files are. */
static int
w_state_file(struct ckpt_fsetoff *c, size_t di, const struct ckpt_bytebuf *data, struct ckpt_bytebuf *b)
{
	const struct ckpt_fmeta_opdata *d = &c->sp->opdata[di];
	char prefix[80];

	if (c->dir == NULL)
		return ckpt_err_set(c->e, CKPT_ERR_INPUT, ckpt_fsetoff_hwhere(c, di), "reader state in a file: no directory to write "
				    "the new one in");
	snprintf(prefix, sizeof prefix, "reader-%s", c->s->ops[d->op].id);
	return ckpt_fmeta_write_relative(c->sp, di, c->dir, prefix, d->subtask, &c->names, data, b, c->e);
}

/* Handle di written anew from its state count to the end of its data handle, as one splice: inline
 * data in it, or in a new file it names. */
int
ckpt_fsetoff_rebuild_handle(struct ckpt_fsetoff *c, size_t di, const struct ckpt_bytebuf *ins, size_t nadd, struct ckpt_flink_rekey *rk)
{
	const struct ckpt_fmeta_opdata *d = &c->sp->opdata[di];
	struct ckpt_bytebuf b = {0}, data = {0};
	size_t p = 0, end, any = 0;

	for (size_t i = 0; i < c->nsl; i++)
		if (c->sl[i].d == di && (any = 1, c->sl[i].eend > p))
			p = c->sl[i].eend;
	if (!any)
		p = d->n; /* an empty reader state: its element goes last */
	if (w_states(c, di, p, ins, nadd, &b, &end) < 0 || w_data(c, di, p, ins, &data) < 0 ||
	    (d->file ? w_state_file(c, di, &data, &b) < 0 :
	     ckpt_bytebuf_add(&b, c->buf + end, d->at - 4 - end, c->e) < 0 || ckpt_bytebuf_be(&b, data.len, 4, c->e) < 0 ||
	     ckpt_bytebuf_add(&b, data.p, data.len, c->e) < 0)) {
		ckpt_bytebuf_release(&b);
		ckpt_bytebuf_release(&data);
		return -1;
	}
	ckpt_bytebuf_release(&data);
	rk->splices[rk->nsplices++] = (struct ckpt_flink_splice){.at = d->head, .end = d->dend, .p = b.p, .n = b.len};
	return 0;
}
