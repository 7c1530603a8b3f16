/* state-summary.c: the summary of a Flink snapshot's state (each operator's states, their entries
 * and bytes, by key group) and -c: every file the _metadata names there, every state read through. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "state.h"
#include "model/model.h"

/* ------------------------------------------------------------ the summary */

struct counter {
	json_t *ops;      /* operator id -> {"states": [...], ...} */
	json_t *op;       /* the current operator's object */
	json_t *states;   /* its "states" array */
	json_t *cuts;     /* heap key groups read in part: key group -> {"seen": {state: true}, "why"} */
	json_t *keyed;    /* keyed states passed over with no entries: state -> true */
	struct ckpt_err *e;
	/* count_kv's entries not yet added: to state object o and its key group's object x, the last
	 * entry's (state name, key group); added when another comes or anything else is counted */
	json_t *o, *x;
	char name[128];
	uint32_t kg;
	json_int_t entries, bytes;
};

/* The state object of name in the current operator, added when new. */
static json_t *
count_state(struct counter *C, const char *name)
{
	json_t *o;

	for (size_t i = 0; i < json_array_size(C->states); i++)
		if (strcmp(json_string_value(json_object_get(json_array_get(C->states, i), "name")), name) == 0)
			return json_array_get(C->states, i);
	o = json_pack("{s:s, s:I, s:I}", "name", name, "entries", (json_int_t)0, "bytes", (json_int_t)0);
	if (o == NULL || json_array_append_new(C->states, o) < 0)
		return NULL;
	return o;
}

/* Add v to the count k of o; a count not known (null) stays so, and v < 0 makes it so. */
void
ckpt_fstate_add_int(json_t *o, const char *k, json_int_t v)
{
	json_t *x = json_object_get(o, k);

	if (x == NULL || json_is_integer(x))
		json_object_set_new(o, k, v < 0 ? json_null() : json_integer(json_integer_value(x) + v));
}

/* What count_kv holds back, added. */
static void
count_flush(struct counter *C)
{
	if (C->o == NULL)
		return;
	ckpt_fstate_add_int(C->o, "entries", C->entries);
	ckpt_fstate_add_int(C->o, "bytes", C->bytes);
	ckpt_fstate_add_int(C->x, "entries", C->entries);
	ckpt_fstate_add_int(C->x, "bytes", C->bytes);
	C->o = C->x = NULL;
	C->entries = C->bytes = 0;
}

static int
count_header(void *arg, const char *scope, const struct fheader *h)
{
	struct counter *C = arg;

	count_flush(C);

	if (h->key && !json_object_get(C->op, "key_serializer"))
		json_object_set_new(C->op, "key_serializer", ckpt_fser_json(h->key));
	if (h->compressed)
		json_object_set_new(C->op, "compressed", json_true());
	if (h->stopped) {
		json_t *a = json_object_get(C->op, "not_read");
		int seen = 0;

		if (a == NULL)
			json_object_set_new(C->op, "not_read", a = json_array());
		for (size_t i = 0; i < json_array_size(a); i++)
			seen |= strcmp(json_string_value(json_array_get(a, i)), h->stop) == 0;
		if (!seen)
			json_array_append_new(a, json_string(h->stop));
	}
	for (size_t i = 0; i < h->n; i++) {
		json_t *o = count_state(C, h->m[i].name);

		if (o == NULL)
			return ckpt_err_set(C->e, CKPT_ERR_NOMEM, "", "out of memory");
		if (json_object_get(o, "scope") == NULL) {
			json_object_set_new(o, "scope", json_string(strcmp(scope, "keyed") == 0 ? "keyed" : "operator"));
			json_object_set_new(o, "kind", json_string(ckpt_fstate_meta_kind(&h->m[i])));
			json_object_set(o, "serializers", h->m[i].serializers);
		}
	}
	return 0;
}

static int
count_op(void *arg, const char *state, size_t idx, const unsigned char *p, size_t n, json_t *typed)
{
	struct counter *C = arg;
	json_t *o;

	(void)idx;
	(void)p;
	json_decref(typed);
	count_flush(C);
	if ((o = count_state(C, state)) == NULL)
		return ckpt_err_set(C->e, CKPT_ERR_NOMEM, "", "out of memory");
	ckpt_fstate_add_int(o, "entries", 1);
	ckpt_fstate_add_int(o, "bytes", (json_int_t)n);
	return 0;
}

/* Millions of entries come a state and key group at a time: each is added to the counts held back
 * for the last one's, and those are put into the JSON objects only when that changes. */
static int
count_kv(void *arg, const char *state, uint32_t kg, const unsigned char *k, size_t kn, const unsigned char *v,
	 size_t vn, struct ftyped *typed)
{
	struct counter *C = arg;
	json_t *o, *g, *x;
	char key[16];

	(void)k;
	(void)v;
	(void)typed; /* checked by the reader */
	if (C->o && kg == C->kg && strcmp(state, C->name) == 0) {
		C->entries++;
		C->bytes += (json_int_t)(kn + vn);
		return 0;
	}
	count_flush(C);
	if ((o = count_state(C, state)) == NULL)
		return ckpt_err_set(C->e, CKPT_ERR_NOMEM, "", "out of memory");
	if ((g = json_object_get(o, "key_groups")) == NULL)
		json_object_set_new(o, "key_groups", g = json_object());
	snprintf(key, sizeof key, "%u", kg);
	if ((x = json_object_get(g, key)) == NULL)
		json_object_set_new(g, key, x = json_pack("{s:I, s:I}", "entries", (json_int_t)0, "bytes", (json_int_t)0));
	if (x == NULL)
		return ckpt_err_set(C->e, CKPT_ERR_NOMEM, "", "out of memory");
	if (strlen(state) >= sizeof C->name) { /* too long to hold back: added at once */
		ckpt_fstate_add_int(o, "entries", 1);
		ckpt_fstate_add_int(o, "bytes", (json_int_t)(kn + vn));
		ckpt_fstate_add_int(x, "entries", 1);
		ckpt_fstate_add_int(x, "bytes", (json_int_t)(kn + vn));
		return 0;
	}
	C->o = o;
	C->x = x;
	C->kg = kg;
	strcpy(C->name, state);
	C->entries = 1;
	C->bytes = (json_int_t)(kn + vn);
	return 0;
}

static int
count_skip(void *arg, const char *state, long kg, long n, const char *why)
{
	struct counter *C = arg;
	json_t *o, *g, *x;
	char key[16];

	count_flush(C);
	if (state == NULL) {
		if (json_object_get(C->op, "unlisted_states") == NULL &&
		    ckpt_json_set_new(C->op, "unlisted_states", json_string(why)) < 0)
			return ckpt_err_set(C->e, CKPT_ERR_NOMEM, "", "out of memory");
		return 0;
	}
	if ((o = count_state(C, state)) == NULL)
		return ckpt_err_set(C->e, CKPT_ERR_NOMEM, "", "out of memory");
	if (n == 0) /* nothing passed over: counted whole */
		return kg < 0 || json_object_set_new(C->keyed, state, json_true()) == 0 ? 0 :
			ckpt_err_set(C->e, CKPT_ERR_NOMEM, "", "out of memory");
	ckpt_fstate_add_int(o, "entries", n);
	ckpt_fstate_add_int(o, "bytes", -1);
	if (json_object_get(o, "entries_not_read") == NULL &&
	    ckpt_json_set_new(o, "entries_not_read", json_string(why)) < 0)
		return ckpt_err_set(C->e, CKPT_ERR_NOMEM, "", "out of memory");
	if (kg < 0)
		return 0;
	if ((g = json_object_get(o, "key_groups")) == NULL)
		json_object_set_new(o, "key_groups", g = json_object());
	snprintf(key, sizeof key, "%ld", kg);
	if ((x = json_object_get(g, key)) == NULL)
		json_object_set_new(g, key, x = json_pack("{s:I, s:I}", "entries", (json_int_t)0, "bytes", (json_int_t)0));
	if (x == NULL)
		return ckpt_err_set(C->e, CKPT_ERR_NOMEM, "", "out of memory");
	ckpt_fstate_add_int(x, "entries", n);
	ckpt_fstate_add_int(x, "bytes", -1);
	return 0;
}

/* A heap key group read in part (fsink.cut): which states were found in it, kept until the
 * operator's every subtask is read (count_cuts). */
static int
count_cut(void *arg, const struct fheader *h, uint32_t kg, const int16_t *ids, size_t n)
{
	struct counter *C = arg;
	json_t *seen = json_object();
	char key[16], why[200], buf[16];

	count_flush(C);
	for (size_t i = 0; seen && i < n; i++)
		if (json_object_set_new(seen, ckpt_fstate_state_name(h, ids[i], buf), json_true()) < 0) {
			json_decref(seen);
			seen = NULL;
		}
	snprintf(key, sizeof key, "%u", kg);
	snprintf(why, sizeof why, "a heap snapshot has no lengths, and in some key group it follows state \"%s\", "
		 "whose entries are not read", n ? ckpt_fstate_state_name(h, ids[n - 1], buf) : "?");
	if (seen == NULL || ckpt_json_set_new(C->cuts, key, json_pack("{s:o, s:s}", "seen", seen, "why", why)) < 0)
		return ckpt_err_set(C->e, CKPT_ERR_NOMEM, "", "out of memory");
	return 0;
}

static int
is_keyed(const struct counter *C, json_t *o)
{
	const char *scope = json_string_value(json_object_get(o, "scope"));

	return json_object_get(o, "key_groups") || (scope && strcmp(scope, "keyed") == 0) ||
	       json_object_get(C->keyed, json_string_value(json_object_get(o, "name")));
}

/* Every keyed state of the operator not found in a key group read in part: its entries there
 * (and so in all) are not known.  Every state is in every key group of its file, but a state may
 * come to light only in another subtask's file, so this waits for the operator's last subtask. */
static int
count_cuts(struct counter *C)
{
	const char *kg;
	json_t *cut, *o, *g;
	size_t i;

	json_object_foreach(C->cuts, kg, cut)
		json_array_foreach(C->states, i, o) {
			if (!is_keyed(C, o) ||
			    json_object_get(json_object_get(cut, "seen"), json_string_value(json_object_get(o, "name"))))
				continue;
			ckpt_fstate_add_int(o, "entries", -1);
			ckpt_fstate_add_int(o, "bytes", -1);
			if (json_object_get(o, "entries_not_read") == NULL &&
			    json_object_set(o, "entries_not_read", json_object_get(cut, "why")) < 0)
				return ckpt_err_set(C->e, CKPT_ERR_NOMEM, "", "out of memory");
			if ((g = json_object_get(o, "key_groups")) == NULL)
				json_object_set_new(o, "key_groups", g = json_object());
			if (ckpt_json_set_new(g, kg, json_pack("{s:n, s:n}", "entries", "bytes")) < 0)
				return ckpt_err_set(C->e, CKPT_ERR_NOMEM, "", "out of memory");
		}
	json_object_clear(C->cuts);
	json_object_clear(C->keyed);
	return 0;
}

/* Handles whose files the summary lists: those of no state ckpt reads, RocksDB's (their entries
 * counted too) and changelogs. */
static int
listed_files(int role)
{
	return role == 0 || role == 4 || role == 5;
}

/* The files of handles that are not a stream of their own (RocksDB incremental, changelog), from
 * the handles only. */
static int
count_unread(struct counter *C, const struct ckpt_subtask *st, const struct ckpt_handle *h)
{
	json_t *a = json_object_get(C->op, "files"), *f;
	static const char *const lists[] = {"shared", "private", NULL};

	if (a == NULL)
		json_object_set_new(C->op, "files", a = json_array());
	if (strcmp(h->kind, "incremental") != 0) {
		f = json_pack("{s:I, s:s, s:s, s:I, s:o}", "subtask", (json_int_t)st->index, "scope", h->scope,
			      "kind", h->kind, "size", (json_int_t)h->size, "path", h->path ? json_string(h->path) : json_null());
		return json_array_append_new(a, f);
	}
	for (int l = 0; lists[l]; l++) {
		json_t *files = json_object_get(h->detail, lists[l]);

		for (size_t i = 0; i < json_array_size(files); i++) {
			json_t *x = json_array_get(files, i);

			f = json_pack("{s:I, s:s, s:s, s:O?, s:O?, s:O?}", "subtask", (json_int_t)st->index, "scope",
				      h->scope, "kind", lists[l], "local_name", json_object_get(x, "local_name"),
				      "size", json_object_get(x, "size"), "path", json_object_get(x, "path"));
			if (json_array_append_new(a, f) < 0)
				return -1;
		}
	}
	return 0;
}

json_t *
ckpt_flink_state_summary(struct ckpt_snapshot *s, struct ckpt_err *e)
{
	struct flink_backing *b = ckpt_fstate_backing(s, e);
	struct counter C = {.e = e};
	struct fsink k = {.header = count_header, .op = count_op, .kv = count_kv, .skip = count_skip, .cut = count_cut,
			  .arg = &C, .untyped = 1};
	json_t *out = NULL;

	if (b == NULL)
		return NULL;
	if ((C.ops = json_object()) == NULL || (C.cuts = json_object()) == NULL || (C.keyed = json_object()) == NULL) {
		ckpt_err_set(e, CKPT_ERR_NOMEM, "", "out of memory");
		goto out;
	}
	for (size_t i = 0; i < s->nops; i++) {
		const struct ckpt_operator *op = &s->ops[i];

		if (!ckpt_fselect_operator(b->sel, op))
			continue; /* --uid: its files are not opened */
		C.op = json_pack("{s:[]}", "states");
		if (C.op == NULL || json_object_set_new(C.ops, op->id, C.op) < 0)
			goto out;
		C.states = json_object_get(C.op, "states");
		for (size_t j = 0; j < op->nsubtasks; j++) {
			const struct ckpt_subtask *st = &op->subtasks[j];

			if (ckpt_fstate_read_subtask(b, op, st, &k, e) < 0)
				goto out;
			count_flush(&C);
			for (size_t h = 0; h < st->nhandles; h++)
				if (listed_files(ckpt_fstate_handle_role(&st->handles[h])) &&
				    strstr(st->handles[h].scope, "channel") == NULL &&
				    count_unread(&C, st, &st->handles[h]) < 0)
					goto out;
		}
		if (count_cuts(&C) < 0)
			goto out;
	}
	out = C.ops;
	C.ops = NULL;
out:
	json_decref(C.ops);
	json_decref(C.cuts);
	json_decref(C.keyed);
	return out;
}

/* ------------------------------------------------------------ -c */

struct verifier {
	ckpt_verify_report *report;
	void *arg;
	json_t *bad; /* paths already reported */
	long problems;
	uint64_t s3bytes; /* of the files in S3: what reading them all fetches */
};

static void
problem(struct verifier *V, const char *where, const char *what)
{
	V->problems++;
	json_object_set_new(V->bad, where, json_true());
	V->report(V->arg, where, what);
}

/* The size of a state file, local or in S3: 0; 1 when it is not there (why says so); -1, e set. */
static int
file_size(const char *path, uint64_t *size, char *why, size_t n, struct ckpt_err *e)
{
	struct stat sb;
	int r;

	if (ckpt_s3_is_url(path)) {
		if ((r = ckpt_s3_stat(path, size, e)) == 1)
			snprintf(why, n, "missing (no such object)");
		return r;
	}
	if (stat(path, &sb) < 0) {
		snprintf(why, n, "missing (%s)", strerror(errno));
		return 1;
	}
	*size = (uint64_t)sb.st_size;
	return 0;
}

/* Every file the _metadata names: there, and of its recorded size (segment files: at least). */
static int
verify_files(struct flink_backing *b, const struct ckpt_snapshot *s, struct verifier *V, uint64_t *files,
	     uint64_t *bytes, struct ckpt_err *e)
{
	const json_t *list = json_object_get(s->flink, "files");
	struct fctx c = {.b = b, .e = e};

	for (size_t i = 0; i < json_array_size(list); i++) {
		const json_t *f = json_array_get(list, i);
		const char *kind = json_string_value(json_object_get(f, "kind"));
		uint64_t size = (uint64_t)json_integer_value(json_object_get(f, "size"));
		char path[1024], what[1200];
		uint64_t have;
		int cl, r;

		if (ckpt_fstate_local_path(&c, kind, json_string_value(json_object_get(f, "path")), path,
					   sizeof path) < 0) {
			char msg[1200];

			ckpt_err_format(e, msg, sizeof msg);
			problem(V, json_string_value(json_object_get(f, "path")), msg);
			memset(e, 0, sizeof *e);
			continue;
		}
		(*files)++;
		if ((r = file_size(path, &have, what, sizeof what, e)) != 0) {
			if (r < 0) {
				ckpt_err_format(e, what, sizeof what);
				memset(e, 0, sizeof *e);
			}
			problem(V, path, what);
			continue;
		}
		cl = ckpt_fchangelog_size(s, json_string_value(json_object_get(f, "path")), path, have, what, sizeof what);
		if (cl == 1)
			problem(V, path, what);
		else if (cl == 0)
			*bytes += size, V->s3bytes += ckpt_s3_is_url(path) ? size : 0;
		if (cl >= 0)
			continue;
		if (strcmp(kind, "segment_file") == 0 ? have < size : have != size) {
			snprintf(what, sizeof what, "%s: %llu bytes, the _metadata records %llu", have < size ? "short" : "long",
				 (unsigned long long)have, (unsigned long long)size);
			problem(V, path, what);
			continue;
		}
		*bytes += size;
		if (ckpt_s3_is_url(path))
			V->s3bytes += size;
	}
	return 0;
}

json_t *
ckpt_flink_state_missing(struct ckpt_snapshot *s, struct ckpt_err *e)
{
	struct flink_backing *b = ckpt_fstate_backing(s, e);
	const json_t *list = s->flink ? json_object_get(s->flink, "files") : NULL;
	struct ckpt_err ignored = {0};
	struct fctx c = {.b = b, .e = &ignored};
	json_t *out;

	if (b == NULL)
		return NULL;
	if ((out = json_array()) == NULL)
		goto nomem;
	for (size_t i = 0; i < json_array_size(list); i++) {
		const json_t *f = json_array_get(list, i);
		const char *kind = json_string_value(json_object_get(f, "kind"));
		const char *named = json_string_value(json_object_get(f, "path"));
		char path[1024], why[64];
		uint64_t have;
		int local = ckpt_fstate_local_path(&c, kind, named, path, sizeof path) == 0;

		if (local && file_size(path, &have, why, sizeof why, &ignored) == 0)
			continue;
		if (json_array_append_new(out, json_string(local ? path : named)) < 0)
			goto nomem;
	}
	return out;
nomem:
	json_decref(out);
	ckpt_err_set(e, CKPT_ERR_NOMEM, "", "out of memory");
	return NULL;
}

int
ckpt_flink_state_each_file(struct ckpt_snapshot *s, int (*fn)(void *arg, const char *path, int local), void *arg,
			   struct ckpt_err *e)
{
	struct flink_backing *b = ckpt_fstate_backing(s, e);
	const json_t *list = s->flink ? json_object_get(s->flink, "files") : NULL;
	struct ckpt_err ignored = {0};
	struct fctx c = {.b = b, .e = &ignored};

	if (b == NULL)
		return -1;
	for (size_t i = 0; i < json_array_size(list); i++) {
		const json_t *f = json_array_get(list, i);
		const char *named = json_string_value(json_object_get(f, "path"));
		char path[1024];
		int local = ckpt_fstate_local_path(&c, json_string_value(json_object_get(f, "kind")), named, path,
						   sizeof path) == 0 &&
			    !ckpt_s3_is_url(path); /* an object in S3 is not a file here */

		if (fn(arg, local ? path : named, local) < 0)
			return -1;
	}
	return 0;
}

long
ckpt_flink_state_verify(struct ckpt_snapshot *s, ckpt_verify_report *report, void *arg, uint64_t *files,
			uint64_t *bytes, struct ckpt_err *e)
{
	struct flink_backing *b = ckpt_fstate_backing(s, e);
	struct verifier V = {.report = report, .arg = arg};
	struct ckpt_err *each = NULL;
	size_t n = 0;
	long rc = -1;

	*files = *bytes = 0;
	if (b == NULL || (V.bad = json_object()) == NULL)
		goto out;
	if (verify_files(b, s, &V, files, bytes, e) < 0)
		goto out;
	if (V.s3bytes > 0) /* in S3 the wait is for the bytes: shown as they come */
		ckpt_s3_progress_begin(V.s3bytes);
	if (ckpt_fstate_verify_all(s, &each, &n, e) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		struct ckpt_err pe = each[i], pw;
		char msg[1200], text[1100];

		if (pe.kind == CKPT_ERR_NONE)
			continue;
		if (pe.kind == CKPT_ERR_NOMEM) {
			*e = pe;
			goto out;
		}
		if (json_object_get(V.bad, pe.where)) /* missing or of the wrong size: said already */
			continue;
		pw = pe; /* the diagnostic -a prints, one line, after its "where: " */
		pw.where[0] = '\0';
		ckpt_err_format(&pw, text, sizeof text);
		snprintf(msg, sizeof msg, "%s%s", pe.kind == CKPT_ERR_REFUSED ? "not checked: " : "", text);
		if (pe.kind == CKPT_ERR_REFUSED)
			report(arg, pe.where, msg);
		else
			problem(&V, pe.where, msg);
	}
	rc = V.problems;
out:
	ckpt_s3_progress_end();
	free(each);
	json_decref(V.bad);
	return rc;
}

long
ckpt_flink_state_files(struct ckpt_snapshot *s, ckpt_verify_report *report, void *arg, uint64_t *files,
		       uint64_t *bytes, struct ckpt_err *e)
{
	struct flink_backing *b = ckpt_fstate_backing(s, e);
	struct verifier V = {.report = report, .arg = arg};
	long rc = -1;

	*files = *bytes = 0;
	if (b == NULL)
		return -1;
	if ((V.bad = json_object()) == NULL)
		return ckpt_err_set(e, CKPT_ERR_NOMEM, "", "out of memory");
	if (verify_files(b, s, &V, files, bytes, e) == 0)
		rc = V.problems;
	json_decref(V.bad);
	return rc;
}
