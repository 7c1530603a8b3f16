/* meta.c: Flink's binary _metadata (format versions 2 to 7) decoded, to its last byte, into a
 * snapshot: the header, operators, subtasks, master states and the properties trailer; the state
 * handles a subtask holds are read in meta-handle.c.  The layout is in ckpt-flink(5). */
#include <stdlib.h>
#include <string.h>

#include "meta.h"

#define FM_MAGIC 0x4960672dU
#define FM_MASTER_MAGIC 0xc96b1696U

/* --------------------------------- subtasks and operators (ckpt-flink(5), OPERATORS, SUBTASK STATE) */

static int
rd_subtask_v2_legacy(struct ckpt_fmeta_reader *r)
{
	int64_t duration;
	size_t at;
	int32_t n;

	if (ckpt_cur_i64(&r->c, &duration, "subtask duration") < 0)
		return -1;
	at = r->c.pos;
	if (ckpt_cur_i32(&r->c, &n, "legacy state count") < 0)
		return -1;
	if (n != 0)
		return ckpt_cur_fail(&r->c, at, "legacy state (from Flink <= 1.1, created through the 'Checkpointed' "
			    "interface) is no longer supported");
	return 0;
}

static int
rd_subtask(struct ckpt_fmeta_reader *r, struct ckpt_operator *op, struct ckpt_subtask *st)
{
	if (r->version == 2 && rd_subtask_v2_legacy(r) < 0)
		return -1;
	if (ckpt_fmeta_read_opstate(r, st, "managed_operator") < 0 || ckpt_fmeta_read_opstate(r, st, "raw_operator") < 0 ||
	    ckpt_fmeta_read_keyed(r, st, "managed_keyed") < 0 || ckpt_fmeta_read_keyed(r, st, "raw_keyed") < 0)
		return -1;
	if (r->version >= 3 && (ckpt_fmeta_read_channels(r, st, 1) < 0 || ckpt_fmeta_read_channels(r, st, 0) < 0))
		return -1;
	if (r->version >= 7) {
		size_t at = r->c.pos;
		uint8_t has;
		uint64_t ref = 0;

		if (ckpt_cur_u8(&r->c, &has, "reference checkpoint flag") < 0)
			return -1;
		if (has > 1)
			return ckpt_cur_fail(&r->c, at, "invalid reference checkpoint flag %u", has);
		if (has && (ckpt_cur_u63(&r->c, &ref, "reference checkpoint id") < 0 ||
			    jappend(r, r->regional, json_pack("{s:s,s:i,s:I}", "operator", op->id,
							     "subtask", (int)st->index, "ref_checkpoint_id",
							     (json_int_t)ref)) < 0))
			return -1;
	}
	return 0;
}

static int
cmp_subtask(const void *a, const void *b)
{
	const struct ckpt_subtask *x = a, *y = b;

	return x->index < y->index ? -1 : x->index > y->index;
}

static void
check_key_groups(struct ckpt_fmeta_reader *r, const struct ckpt_operator *op, const struct ckpt_subtask *st)
{
	uint64_t p = op->parallelism, m = op->max_parallelism, i = st->index, lo, hi;

	if (!st->keyed || p == 0 || m < p)
		return;
	lo = (i * m + p - 1) / p;
	hi = ((i + 1) * m - 1) / p;
	if (st->kg_first != lo || st->kg_last != hi)
		fm_warn(r, "operator %s subtask %u: key groups %u-%u, where Flink assigns %llu-%llu", op->id,
		     st->index, st->kg_first, st->kg_last, (unsigned long long)lo, (unsigned long long)hi);
}

static int
rd_subtasks(struct ckpt_fmeta_reader *r, struct ckpt_operator *op, size_t n)
{
	struct ckpt_bits seen = {0};
	int rc = -1;

	if ((op->subtasks = ckpt_calloc(n ? n : 1, sizeof *op->subtasks, r->c.e)) == NULL)
		return -1;
	if (n && ckpt_bits_init(&seen, op->parallelism, r->c.e) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct ckpt_subtask *st = &op->subtasks[i];
		size_t at = r->c.pos;
		int32_t idx;

		if (ckpt_cur_i32(&r->c, &idx, "subtask index") < 0)
			goto out;
		op->nsubtasks++;
		st->finished = r->version >= 3 && idx < 0;
		st->index = st->finished ? (uint32_t)(-(int64_t)idx - 1) : (uint32_t)idx;
		if ((idx < 0 && !st->finished) || st->index >= op->parallelism) {
			ckpt_cur_fail(&r->c, at, "subtask index %d of operator %s is outside its parallelism %u", idx, op->id,
			     op->parallelism);
			goto out;
		}
		if (ckpt_bits_test(&seen, st->index)) {
			ckpt_cur_fail(&r->c, at, "duplicate subtask %u of operator %s", st->index, op->id);
			goto out;
		}
		ckpt_bits_set(&seen, st->index);
		r->nentries++;
		if (st->finished)
			r->nfinished++;
		else if (rd_subtask(r, op, st) < 0)
			goto out;
	}
	qsort(op->subtasks, op->nsubtasks, sizeof *op->subtasks, cmp_subtask);
	for (size_t i = 0; i < op->nsubtasks; i++)
		check_key_groups(r, op, &op->subtasks[i]);
	rc = 0;
out:
	ckpt_bits_release(&seen);
	return rc;
}

static int
rd_operator_head(struct ckpt_fmeta_reader *r, struct ckpt_operator *op)
{
	static const char hex[] = "0123456789abcdef";
	int32_t p, m;
	size_t at;

	if (r->version >= 5) {
		if (ckpt_javaser_utf(&r->c, &op->name, "operator name") < 0 || ckpt_javaser_utf(&r->c, &op->uid, "operator uid") < 0)
			return -1;
		if (op->name[0] == '\0')
			free(op->name), op->name = NULL;
		if (op->uid[0] == '\0')
			free(op->uid), op->uid = NULL;
	}
	if (ckpt_cur_need(&r->c, 16, "operator id") < 0)
		return -1;
	if ((op->id = malloc(33)) == NULL)
		return ckpt_err_nomem(r->c.e, r->c.where);
	for (int i = 0; i < 16; i++) {
		op->id[2 * i] = hex[r->c.p[r->c.pos + i] >> 4];
		op->id[2 * i + 1] = hex[r->c.p[r->c.pos + i] & 15];
	}
	op->id[32] = '\0';
	r->c.pos += 16;
	at = r->c.pos;
	if (ckpt_cur_i32(&r->c, &p, "parallelism") < 0 || ckpt_cur_i32(&r->c, &m, "max parallelism") < 0)
		return -1;
	if (p < 0 || m < 0 || p > m)
		return ckpt_cur_fail(&r->c, at, "operator %s: parallelism %d is not smaller or equal to max parallelism %d",
			    op->id, p, m);
	if ((uint32_t)p > CKPT_PARALLELISM_LIMIT)
		return ckpt_cur_fail(&r->c, at, "operator %s: parallelism %d is above the limit %u", op->id, p,
			    CKPT_PARALLELISM_LIMIT);
	op->parallelism = (uint32_t)p;
	op->max_parallelism = (uint32_t)m;
	if (op->uid) {
		char want[33];

		ckpt_flink_operator_id(op->uid, strlen(op->uid), want);
		if (strcmp(want, op->id) != 0)
			fm_warn(r, "operator %s: its uid \"%s\" gives id %s (the id was set otherwise)", op->id,
			     op->uid, want);
	}
	return 0;
}

static int
rd_operator(struct ckpt_fmeta_reader *r, struct ckpt_operator *op)
{
	size_t at, n;
	int32_t chain, nsub;

	if (rd_operator_head(r, op) < 0)
		return -1;
	if (r->sp)
		r->sp->ops[r->op].body = r->c.pos;
	if (r->version == 2) {
		if (ckpt_cur_i32(&r->c, &chain, "chain length") < 0 || ckpt_cur_count(&r->c, &n, 4, "subtask count") < 0)
			return -1;
		return rd_subtasks(r, op, n);
	}
	if (ckpt_fmeta_read_coordinator(r, op) < 0)
		return -1;
	at = r->c.pos;
	if (r->sp)
		r->sp->ops[r->op].count_at = at;
	if (ckpt_cur_need(&r->c, 4, "subtask count") < 0)
		return -1;
	nsub = (int32_t)ckpt_be32(r->c.p + r->c.pos);
	if (nsub < 0) {
		r->c.pos += 4;
		if (op->coordinator)
			return ckpt_cur_fail(&r->c, at, "fully finished operator %s has coordinator state", op->id);
		op->fully_finished = 1;
		r->nfully++;
		return rd_subtasks(r, op, 0);
	}
	if (ckpt_cur_count(&r->c, &n, 4, "subtask count") < 0)
		return -1;
	return rd_subtasks(r, op, n);
}

/* ----------------------------------------------------- master states (ckpt-flink(5), MASTER STATES) */

static int
rd_master_block(struct ckpt_fmeta_reader *r, json_t *ms)
{
	char *name = NULL;
	int32_t version;
	size_t n;
	int rc = -1;

	if (ckpt_cur_i32(&r->c, &version, "master state version") < 0 || ckpt_javaser_utf(&r->c, &name, "master state name") < 0 ||
	    ckpt_cur_count(&r->c, &n, 1, "master state payload length") < 0)
		goto out;
	if (jappend(r, ms, json_pack("{s:s,s:i,s:I,s:o}", "name", name, "version", version, "payload_bytes",
				     (json_int_t)n, "payload", ckpt_entry_to_json(r->c.p + r->c.pos, n))) < 0)
		goto out;
	r->c.pos += n;
	rc = 0;
out:
	free(name);
	return rc;
}

static int
rd_master_states(struct ckpt_fmeta_reader *r, json_t *ms)
{
	size_t n;

	if (ckpt_cur_count(&r->c, &n, 8, "master state count") < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		size_t at = r->c.pos, len, end, saved = r->c.len;
		int32_t magic;
		int rc;

		if (ckpt_cur_i32(&r->c, &magic, "master state magic") < 0)
			return -1;
		if ((uint32_t)magic != FM_MASTER_MAGIC)
			return ckpt_cur_fail(&r->c, at, "invalid master state magic 0x%08x", (uint32_t)magic);
		at = r->c.pos;
		if (ckpt_cur_count(&r->c, &len, 1, "master state length") < 0)
			return -1;
		if (len == 0)
			return ckpt_cur_fail(&r->c, at, "empty master state");
		end = r->c.pos + len;
		r->c.len = end;
		rc = rd_master_block(r, ms);
		r->c.len = saved;
		if (rc < 0)
			return -1;
		if (r->c.pos != end)
			return ckpt_cur_fail(&r->c, r->c.pos, "%zu unread bytes in master state", end - r->c.pos);
	}
	return 0;
}

/* -------------------------------------- CheckpointProperties (ckpt-flink(5), CHECKPOINT PROPERTIES) */

/*
 * The trailer is a Java serialization stream holding one object of plain serializable classes
 * and enums (javaser.c reads it), turned into JSON: fields by their names in snake_case,
 * objects with their "class", enum constants by their names.
 */
struct jconv {
	struct ckpt_fmeta_reader *r;
	json_t **memo; /* per handle: a value already converted (a back-reference shares it) */
};

static int
snake_key(struct ckpt_fmeta_reader *r, json_t *o, const char *name, json_t *v)
{
	char key[256];
	size_t k = 0;

	for (const char *s = name; *s && k + 2 < sizeof key; s++) {
		if (*s >= 'A' && *s <= 'Z') {
			if (k > 0)
				key[k++] = '_';
			key[k++] = (char)(*s - 'A' + 'a');
		} else {
			key[k++] = *s;
		}
	}
	key[k] = '\0';
	return jput(r, o, key, v);
}

static json_t *
jprimitive(const struct ckpt_javaser_value *v)
{
	if (v->type == 'Z')
		return json_boolean(v->i != 0);
	if (v->type == 'D' || v->type == 'F')
		return json_real(v->d);
	return json_integer((json_int_t)v->i);
}

static int jvalue(struct jconv *c, const struct ckpt_javaser_value *v, json_t **out);

/* The fields of each class of the hierarchy, the top-most serializable class first. */
static int
jobject(struct jconv *c, const struct ckpt_javaser_value *v, json_t *o)
{
	if (jputs(c->r, o, "class", v->cls->name) < 0)
		return -1;
	for (size_t i = 0; i < v->n; i++) {
		const struct ckpt_javaser_classdata *d = &v->data[i];

		for (size_t k = 0; k < d->cls->nfields; k++) {
			json_t *f;

			if (jvalue(c, d->fields[k], &f) < 0 || snake_key(c->r, o, d->cls->fields[k].name, f) < 0)
				return -1;
		}
	}
	return 0;
}

/* A value as a new reference in *out. */
static int
jvalue(struct jconv *c, const struct ckpt_javaser_value *v, json_t **out)
{
	json_t *j;

	if (v->handle != SIZE_MAX && c->memo[v->handle]) {
		*out = json_incref(c->memo[v->handle]);
		return 0;
	}
	switch (v->kind) {
	case CKPT_JAVASER_NULL: j = json_null(); break;
	case CKPT_JAVASER_PRIM: j = jprimitive(v); break;
	case CKPT_JAVASER_STRING: /* fall through */
	case CKPT_JAVASER_ENUM: j = json_string(v->str); break;
	case CKPT_JAVASER_OBJECT: j = json_object(); break;
	default: return ckpt_cur_fail(&c->r->c, v->at, "unsupported Java value"); /* the reader refuses them */
	}
	if (j == NULL)
		return ckpt_err_nomem(c->r->c.e, c->r->c.where);
	if (v->handle != SIZE_MAX)
		c->memo[v->handle] = j;
	if (v->kind == CKPT_JAVASER_OBJECT && jobject(c, v, j) < 0)
		return -1;
	*out = json_incref(j);
	return 0;
}

/* The Java object at r->c.pos, read to its end, as JSON. */
static int
java_read(struct ckpt_fmeta_reader *r, json_t **out)
{
	struct ckpt_javaser *j = ckpt_javaser_new(r->c.p, r->c.len, r->c.where, CKPT_JAVASER_PLAIN, FM_DEPTH, r->c.e);
	const struct ckpt_javaser_value *v;
	struct jconv c = {.r = r};
	int rc = -1;

	*out = NULL;
	if (j == NULL || ckpt_javaser_read(j, &r->c.pos, &v) < 0)
		goto out;
	if ((c.memo = ckpt_calloc(ckpt_javaser_handles(j), sizeof *c.memo, r->c.e)) == NULL)
		goto out;
	rc = jvalue(&c, v, out);
out:
	for (size_t i = 0; c.memo && i < ckpt_javaser_handles(j); i++)
		json_decref(c.memo[i]);
	free(c.memo);
	ckpt_javaser_free(j);
	return rc;
}

/* The properties object; sets *kind to "checkpoint" or "savepoint" when the type says so. */
static int
properties_read(struct ckpt_fmeta_reader *r, json_t **props, const char **kind)
{
	static const char want[] = "org.apache.flink.runtime.checkpoint.CheckpointProperties";
	size_t at = r->c.pos;
	json_t *v = NULL, *type;
	const char *cls;
	int rc = -1;

	*kind = NULL;
	if (ckpt_cur_need(&r->c, 4, "checkpoint properties") < 0)
		goto out;
	if (ckpt_be32(r->c.p + r->c.pos) != 0xaced0005) {
		ckpt_cur_fail(&r->c, at, "checkpoint properties are not a Java serialization stream");
		goto out;
	}
	r->c.pos += 4;
	if (java_read(r, &v) < 0)
		goto out;
	if (json_is_object(v)) {
		cls = json_string_value(json_object_get(v, "class")); /* NULL if a field "class" hid it */
		if (cls == NULL || strcmp(cls, want) != 0) {
			ckpt_cur_fail(&r->c, at, "checkpoint properties of unexpected class %s",
			     cls ? cls : "(hidden by a field \"class\")");
			goto out;
		}
		json_object_del(v, "class");
		type = json_object_get(v, "checkpoint_type");
		cls = json_string_value(json_object_get(type, "class"));
		if (cls && strcmp(cls, "org.apache.flink.runtime.checkpoint.CheckpointType") == 0)
			*kind = "checkpoint";
		else if (cls && strcmp(cls, "org.apache.flink.runtime.checkpoint.SavepointType") == 0)
			*kind = "savepoint";
	} else if (!json_is_null(v)) {
		ckpt_cur_fail(&r->c, at, "checkpoint properties are not an object");
		goto out;
	}
	*props = v;
	v = NULL;
	rc = 0;
out:
	json_decref(v);
	return rc;
}

/* ------------------------------------------------------------ the file */

static int
cmp_file(const void *a, const void *b)
{
	json_t *const *x = a, *const *y = b;

	return strcmp(json_string_value(json_object_get(*x, "path")),
		      json_string_value(json_object_get(*y, "path")));
}

/* Referenced files sorted by path, each once (with its largest size). */
static json_t *
files_dedup(struct ckpt_fmeta_reader *r)
{
	size_t n = json_array_size(r->files);
	json_t **v = ckpt_calloc(n + 1, sizeof *v, r->c.e), *out = NULL;

	if (v == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
		v[i] = json_array_get(r->files, i);
	qsort(v, n, sizeof *v, cmp_file);
	if ((out = jarr(r)) == NULL)
		goto out;
	for (size_t i = 0; i < n; i++) {
		json_t *last = json_array_get(out, json_array_size(out) - 1);

		if (last && cmp_file(&last, &v[i]) == 0) {
			if (json_integer_value(json_object_get(v[i], "size")) >
			    json_integer_value(json_object_get(last, "size")))
				json_object_set(last, "size", json_object_get(v[i], "size"));
			continue;
		}
		if (jappend(r, out, json_deep_copy(v[i])) < 0) {
			json_decref(out);
			out = NULL;
			goto out;
		}
	}
out:
	free(v);
	return out;
}

/* Before version 4 (or with null properties) the file does not say whether it is a savepoint; what it
 * holds may hint. */
static int
kind_guess(struct ckpt_fmeta_reader *r, json_t *f)
{
	if (r->nin + r->nout > 0)
		return jput(r, f, "kind_guess", json_pack("{s:s,s:s}", "kind", "checkpoint", "because",
							  "it holds in-flight channel state (savepoints are aligned)"));
	if (r->canonical)
		return jput(r, f, "kind_guess", json_pack("{s:s,s:s}", "kind", "savepoint", "because",
							  "it holds savepoint key-group handles (tag 7)"));
	return 0;
}

static int
build_flink(struct ckpt_fmeta_reader *r, struct ckpt_snapshot *s, json_t *masters, json_t *props, int has_props)
{
	json_t *f = jnew(r), *files = files_dedup(r);

	s->flink = f;
	if (f == NULL || files == NULL) {
		json_decref(files);
		return -1;
	}
	if (jputi(r, f, "format_version", r->version) < 0 ||
	    jput(r, f, "master_states", json_incref(masters)) < 0 ||
	    (has_props && jput(r, f, "properties", json_incref(props)) < 0))
		goto fail;
	if (jput(r, f, "counts", json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
					   "operators", (json_int_t)s->nops,
					   "fully_finished_operators", (json_int_t)r->nfully,
					   "subtask_entries", (json_int_t)r->nentries,
					   "finished_subtasks", (json_int_t)r->nfinished,
					   "handles", (json_int_t)r->nhandles,
					   "input_channel_handles", (json_int_t)r->nin,
					   "output_channel_handles", (json_int_t)r->nout,
					   "state_size", (json_int_t)r->state_size,
					   "inline_bytes", (json_int_t)r->inline_bytes,
					   "files", (json_int_t)json_array_size(files))) < 0)
		goto fail;
	if (jput(r, f, "files", files) < 0)
		return -1;
	if (s->kind == NULL && kind_guess(r, f) < 0)
		return -1;
	if (json_array_size(r->regional) && jput(r, f, "ref_checkpoint_ids", json_incref(r->regional)) < 0)
		return -1;
	if (json_array_size(r->warnings) && jput(r, f, "warnings", json_incref(r->warnings)) < 0)
		return -1;
	return 0;
fail:
	json_decref(files);
	return -1;
}

static int
rd_header(struct ckpt_fmeta_reader *r)
{
	int32_t magic, version;

	if (r->c.len < 4)
		return ckpt_cur_fail(&r->c, 0, "truncated magic number: %zu of its 4 bytes", r->c.len);
	if (ckpt_cur_i32(&r->c, &magic, "magic number") < 0)
		return -1;
	if ((uint32_t)magic != FM_MAGIC)
		return ckpt_cur_fail(&r->c, 0, "unexpected magic number 0x%08x: not a Flink _metadata file (or a Flink 1.0 "
			    "savepoint, which is not supported)", (uint32_t)magic);
	if (ckpt_cur_i32(&r->c, &version, "format version") < 0)
		return -1;
	if (version == 1)
		return ckpt_cur_fail(&r->c, 4, "this savepoint / checkpoint version (Flink 1.1 / 1.2) is no longer supported");
	if (version < 2 || version > 7)
		return ckpt_cur_fail(&r->c, 4, "unrecognized checkpoint version number: %d", version);
	r->version = version;
	return 0;
}

static int
rd_body(struct ckpt_fmeta_reader *r, struct ckpt_snapshot *s, json_t *masters, json_t **props)
{
	const char *kind;
	size_t n;

	if (ckpt_cur_u63(&r->c, &s->checkpoint_id, "checkpoint id") < 0)
		return -1;
	if (r->sp)
		r->sp->masters_at = r->c.pos;
	if (rd_master_states(r, masters) < 0)
		return -1;
	if (r->sp)
		r->sp->ops_at = r->c.pos;
	if (ckpt_cur_count(&r->c, &n, r->version == 2 ? 32 : r->version < 5 ? 29 : 33, "operator count") < 0)
		return -1;
	if ((s->ops = ckpt_calloc(n ? n : 1, sizeof *s->ops, r->c.e)) == NULL)
		return -1;
	if (r->sp && (r->sp->ops = ckpt_calloc(n ? n : 1, sizeof *r->sp->ops, r->c.e)) == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		s->nops++;
		r->op = i;
		if (r->sp)
			r->sp->ops[r->sp->nops++].at = r->c.pos;
		if (rd_operator(r, &s->ops[i]) < 0)
			return -1;
		if (r->sp)
			r->sp->ops[i].end = r->c.pos;
	}
	if (r->sp)
		r->sp->trailer_at = r->c.pos;
	if (r->version >= 4) {
		if (properties_read(r, props, &kind) < 0)
			return -1;
		if (kind && (s->kind = strdup(kind)) == NULL)
			return ckpt_err_nomem(r->c.e, r->c.where);
	}
	if (r->c.pos != r->c.len)
		return ckpt_cur_fail(&r->c, r->c.pos, "%zu unexpected bytes after the %s", r->c.len - r->c.pos,
			    r->version >= 4 ? "checkpoint properties" : "last operator");
	return 0;
}

int
ckpt_fmeta_sniff(const void *buf, size_t len)
{
	const unsigned char *b = buf;

	if (len >= 4)
		return ckpt_load_be(buf, 4) == FM_MAGIC;
	for (size_t i = 0; i < len; i++) /* cut inside the magic: read, to say it is truncated */
		if (b[i] != (unsigned char)(FM_MAGIC >> (24 - 8 * i)))
			return 0;
	return len > 0;
}

void
ckpt_fmeta_spans_release(struct ckpt_fmeta_spans *sp)
{
	for (size_t i = 0; i < sp->npaths; i++)
		free(sp->paths[i].path);
	free(sp->paths);
	free(sp->ops);
	free(sp->keyed);
	for (size_t i = 0; i < sp->nopdata; i++)
		json_decref(sp->opdata[i].states);
	free(sp->opdata);
	memset(sp, 0, sizeof *sp);
}

struct ckpt_snapshot *
ckpt_fmeta_decode(const void *buf, size_t len, const char *name, struct ckpt_err *e)
{
	return ckpt_fmeta_decode_spans(buf, len, name, NULL, e);
}

struct ckpt_snapshot *
ckpt_fmeta_decode_spans(const void *buf, size_t len, const char *name, struct ckpt_fmeta_spans *sp,
			    struct ckpt_err *e)
{
	struct ckpt_fmeta_reader r = {.c = {.p = buf, .len = len, .where = name, .e = e}, .sp = sp};
	struct ckpt_snapshot *s = ckpt_calloc(1, sizeof *s, e);
	json_t *masters = json_array(), *props = NULL;
	int ok = 0;

	if (sp)
		memset(sp, 0, sizeof *sp);
	r.files = json_array();
	r.warnings = json_array();
	r.regional = json_array();
	if (s == NULL)
		goto out;
	if (masters == NULL || r.files == NULL || r.warnings == NULL || r.regional == NULL) {
		ckpt_err_nomem(e, name);
		goto out;
	}
	if (rd_header(&r) < 0)
		goto out;
	if (sp)
		sp->version = r.version;
	if (rd_body(&r, s, masters, &props) < 0 ||
	    build_flink(&r, s, masters, props, r.version >= 4) < 0)
		goto out;
	ok = 1;
out:
	json_decref(masters);
	json_decref(props);
	json_decref(r.files);
	json_decref(r.warnings);
	json_decref(r.regional);
	free(r.cl);
	if (!ok) {
		ckpt_snapshot_free(s); /* no backing yet: the model only */
		return NULL;
	}
	return s;
}

/* Does a file the savepoint names carry the name name (a relative handle's path, an absolute one's
 * base name), but for those within operator data di? */
static int
path_taken(const struct ckpt_fmeta_spans *sp, size_t di, const char *name)
{
	const struct ckpt_fmeta_opdata *d = &sp->opdata[di];

	for (size_t i = 0; i < sp->npaths; i++) {
		const struct ckpt_fmeta_path *x = &sp->paths[i];
		const char *base = strrchr(x->path, '/');

		if ((x->at < d->head || x->end > d->dend) &&
		    strcmp(x->kind == CKPT_FMETA_PATH_RELATIVE || base == NULL ? x->path : base + 1, name) == 0)
			return 1;
	}
	return 0;
}

int
ckpt_fmeta_write_relative(const struct ckpt_fmeta_spans *sp, size_t di, const char *dir, const char *prefix,
			  uint32_t subtask, json_t **names, const struct ckpt_bytebuf *data, struct ckpt_bytebuf *b,
			  struct ckpt_err *e)
{
	char name[160], *path = NULL;
	struct ckpt_atomic *w;
	int rc = -1;

	snprintf(name, sizeof name, "%s-%u", prefix, subtask);
	for (unsigned k = 2; (*names && json_object_get(*names, name)) || path_taken(sp, di, name); k++)
		snprintf(name, sizeof name, "%s-%u-%u", prefix, subtask, k);
	if ((*names == NULL && (*names = json_object()) == NULL) || json_object_set_new(*names, name, json_true()) < 0 ||
	    asprintf(&path, "%s/%s", dir, name) < 0)
		return ckpt_err_nomem(e, "");
	if ((w = ckpt_atomic_open(path, e)) == NULL)
		goto out;
	if (fwrite(data->p, 1, data->len, ckpt_atomic_file(w)) != data->len) {
		ckpt_err_sys(e, path, "write error");
		ckpt_atomic_abort(w);
		goto out;
	}
	if (ckpt_atomic_commit(w, e) < 0)
		goto out;
	rc = ckpt_bytebuf_be(b, 6, 1, e) < 0 || ckpt_bytebuf_be(b, strlen(name), 2, e) < 0 ||
	     ckpt_bytebuf_add(b, name, strlen(name), e) < 0 || ckpt_bytebuf_be(b, data->len, 8, e) < 0 ? -1 : 0;
out:
	free(path);
	return rc;
}
