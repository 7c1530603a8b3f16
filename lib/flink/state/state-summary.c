/* state-summary.c: the summary of a Flink snapshot's state (each operator's states, their entries
 * and bytes, by key group) and -c: every file the _metadata names there, every state read through. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "readers.h"
#include "model/model.h"

/* ------------------------------------------------------------ the summary */

struct counter {
	json_t *ops;      /* operator id -> {"states": [...], ...} */
	json_t *op;       /* the current operator's object */
	json_t *states;   /* its "states" array */
	json_t *cuts;     /* heap key groups read in part: key group -> {"seen": {state: true}, "why"} */
	json_t *keyed;    /* keyed states passed over with no entries: state -> true */
	struct ckpt_err *e;
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
				return ckpt_err_nomem(C->e, "");
			if ((g = json_object_get(o, "key_groups")) == NULL)
				json_object_set_new(o, "key_groups", g = json_object());
			if (ckpt_json_set_new(g, kg, json_pack("{s:n, s:n}", "entries", "bytes")) < 0)
				return ckpt_err_nomem(C->e, "");
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

/*
 * The summary on every processor: each subtask is read by a task whose sink records what it is
 * told (a header's states, runs of entries of one state and key group, what is passed over),
 * and the records are given to the counter above in the document's order, a batch of subtasks at
 * a time, so that the summary is the one a single thread makes.
 */
#define SUMMARY_BATCH 256

struct rec {
	json_t *ev;       /* the subtask's records, in order */
	struct ckpt_err *err;
	json_t *run;      /* the last record of entries ("o", "k"), while more continue it... */
	json_int_t e, b;  /* ...its counts, put into it when another record comes */
	char name[128];   /* "o" or "k", then its state */
	uint32_t kg;
};

static void
rec_flush(struct rec *R)
{
	if (R->run) {
		json_integer_set(json_object_get(R->run, "e"), R->e);
		json_integer_set(json_object_get(R->run, "b"), R->b);
	}
	R->run = NULL;
}

static int
rec_add(struct rec *R, json_t *x)
{
	rec_flush(R);
	if (x == NULL || json_array_append_new(R->ev, x) < 0)
		return ckpt_err_nomem(R->err, "");
	return 0;
}

/* A record of entries begun: it is the run the next entries of the same state (and key group)
 * continue, unless the state's name is too long to compare. */
static void
rec_run(struct rec *R, char t, const char *state, uint32_t kg, json_int_t b)
{
	if (strlen(state) + 1 >= sizeof R->name)
		return;
	R->run = json_array_get(R->ev, json_array_size(R->ev) - 1);
	R->kg = kg;
	R->e = 1;
	R->b = b;
	snprintf(R->name, sizeof R->name, "%c%s", t, state);
}

static int
rec_header(void *arg, const char *scope, const struct ckpt_fstate_header *h)
{
	struct rec *R = arg;
	json_t *st = json_array(), *x;

	for (size_t i = 0; st && i < h->n; i++)
		if (json_array_append_new(st, json_pack("{s:s, s:s, s:O?}", "name", h->m[i].name, "kind",
							 ckpt_fstate_meta_kind(&h->m[i]), "serializers",
							 h->m[i].serializers)) < 0) {
			json_decref(st);
			st = NULL;
		}
	x = st ? json_pack("{s:s, s:s, s:o, s:b, s:s?, s:o}", "t", "h", "scope", scope, "key",
			   h->key ? ckpt_fser_json(h->key) : json_null(), "compressed", h->compressed, "stop",
			   h->stopped ? h->stop : NULL, "states", st)
		   : NULL;
	return rec_add(R, x);
}

static int
rec_op(void *arg, const char *state, size_t idx, const unsigned char *p, size_t n, json_t *typed)
{
	struct rec *R = arg;

	(void)idx;
	(void)p;
	json_decref(typed);
	if (R->run && R->name[0] == 'o' && strcmp(state, R->name + 1) == 0) {
		R->e++;
		R->b += (json_int_t)n;
		return 0;
	}
	if (rec_add(R, json_pack("{s:s, s:s, s:I, s:I}", "t", "o", "state", state, "e", (json_int_t)1, "b",
				 (json_int_t)n)) < 0)
		return -1;
	rec_run(R, 'o', state, 0, (json_int_t)n);
	return 0;
}

static int
rec_kv(void *arg, const char *state, uint32_t kg, const unsigned char *k, size_t kn, const unsigned char *v,
       size_t vn, struct ckpt_fstate_typed *typed)
{
	struct rec *R = arg;

	(void)k;
	(void)v;
	(void)typed; /* checked by the reader */
	if (R->run && R->name[0] == 'k' && kg == R->kg && strcmp(state, R->name + 1) == 0) {
		R->e++;
		R->b += (json_int_t)(kn + vn);
		return 0;
	}
	if (rec_add(R, json_pack("{s:s, s:s, s:I, s:I, s:I}", "t", "k", "state", state, "kg", (json_int_t)kg, "e",
				 (json_int_t)1, "b", (json_int_t)(kn + vn))) < 0)
		return -1;
	rec_run(R, 'k', state, kg, (json_int_t)(kn + vn));
	return 0;
}

static int
rec_skip(void *arg, const char *state, long kg, long n, const char *why)
{
	return rec_add(arg, json_pack("{s:s, s:s?, s:I, s:I, s:s}", "t", "s", "state", state, "kg", (json_int_t)kg,
				      "n", (json_int_t)n, "why", why));
}

static int
rec_cut(void *arg, const struct ckpt_fstate_header *h, uint32_t kg, const int16_t *ids, size_t n)
{
	json_t *seen = json_array();
	char why[200], buf[16];

	for (size_t i = 0; seen && i < n; i++)
		if (json_array_append_new(seen, json_string(ckpt_fstate_state_name(h, ids[i], buf))) < 0) {
			json_decref(seen);
			seen = NULL;
		}
	snprintf(why, sizeof why, "a heap snapshot has no lengths, and in some key group it follows state \"%s\", "
		 "whose entries are not read", n ? ckpt_fstate_state_name(h, ids[n - 1], buf) : "?");
	return rec_add(arg, seen ? json_pack("{s:s, s:I, s:o, s:s}", "t", "c", "kg", (json_int_t)kg, "seen", seen,
					     "why", why)
				 : NULL);
}

/* A header record to the counter, as count_header takes a header. */
static int
play_header(struct counter *C, json_t *x)
{
	const char *scope = json_string_value(json_object_get(x, "scope")), *stop;
	json_t *key = json_object_get(x, "key"), *m;
	size_t i;

	if (!json_is_null(key) && !json_object_get(C->op, "key_serializer"))
		json_object_set(C->op, "key_serializer", key);
	if (json_is_true(json_object_get(x, "compressed")))
		json_object_set_new(C->op, "compressed", json_true());
	if ((stop = json_string_value(json_object_get(x, "stop"))) != NULL) {
		json_t *a = json_object_get(C->op, "not_read");
		int seen = 0;

		if (a == NULL)
			json_object_set_new(C->op, "not_read", a = json_array());
		for (i = 0; i < json_array_size(a); i++)
			seen |= strcmp(json_string_value(json_array_get(a, i)), stop) == 0;
		if (!seen)
			json_array_append_new(a, json_string(stop));
	}
	json_array_foreach(json_object_get(x, "states"), i, m) {
		json_t *o = count_state(C, json_string_value(json_object_get(m, "name")));

		if (o == NULL)
			return ckpt_err_nomem(C->e, "");
		if (json_object_get(o, "scope") == NULL) {
			json_object_set_new(o, "scope", json_string(strcmp(scope, "keyed") == 0 ? "keyed" : "operator"));
			json_object_set(o, "kind", json_object_get(m, "kind"));
			json_object_set(o, "serializers", json_object_get(m, "serializers"));
		}
	}
	return 0;
}

/* Entries e of bytes b (-1: not known) of a state, in key group kg (or -1), to the counter; why:
 * why they are not read (NULL: they are). */
static int
play_entries(struct counter *C, const char *state, json_int_t kg, json_int_t e, json_int_t b, json_t *why)
{
	json_t *o = count_state(C, state), *g, *x;
	char key[24];

	if (o == NULL)
		return ckpt_err_nomem(C->e, "");
	ckpt_fstate_add_int(o, "entries", e);
	ckpt_fstate_add_int(o, "bytes", b);
	if (why && json_object_get(o, "entries_not_read") == NULL && json_object_set(o, "entries_not_read", why) < 0)
		return ckpt_err_nomem(C->e, "");
	if (kg < 0)
		return 0;
	if ((g = json_object_get(o, "key_groups")) == NULL)
		json_object_set_new(o, "key_groups", g = json_object());
	snprintf(key, sizeof key, "%lld", (long long)kg);
	if ((x = json_object_get(g, key)) == NULL)
		json_object_set_new(g, key, x = json_pack("{s:I, s:I}", "entries", (json_int_t)0, "bytes", (json_int_t)0));
	if (x == NULL)
		return ckpt_err_nomem(C->e, "");
	ckpt_fstate_add_int(x, "entries", e);
	ckpt_fstate_add_int(x, "bytes", b);
	return 0;
}

/* A subtask's records to the counter, in order. */
static int
play(struct counter *C, json_t *ev)
{
	size_t i;
	json_t *x;

	json_array_foreach(ev, i, x) {
		const char *t = json_string_value(json_object_get(x, "t"));
		const char *state = json_string_value(json_object_get(x, "state"));
		json_int_t kg = json_integer_value(json_object_get(x, "kg")), n, e, b;
		char key[24];
		int r = 0;

		e = json_integer_value(json_object_get(x, "e"));
		b = json_integer_value(json_object_get(x, "b"));
		switch (*t) {
		case 'h':
			r = play_header(C, x);
			break;
		case 'o':
			r = play_entries(C, state, -1, e, b, NULL);
			break;
		case 'k':
			r = play_entries(C, state, kg, e, b, NULL);
			break;
		case 's':
			n = json_integer_value(json_object_get(x, "n"));
			if (state == NULL) {
				if (json_object_get(C->op, "unlisted_states") == NULL &&
				    json_object_set(C->op, "unlisted_states", json_object_get(x, "why")) < 0)
					r = ckpt_err_nomem(C->e, "");
				break;
			}
			if (count_state(C, state) == NULL) {
				r = ckpt_err_nomem(C->e, "");
				break;
			}
			if (n == 0) { /* nothing passed over: counted whole */
				if (kg >= 0 && json_object_set_new(C->keyed, state, json_true()) < 0)
					r = ckpt_err_nomem(C->e, "");
				break;
			}
			r = play_entries(C, state, kg, n, -1, json_object_get(x, "why"));
			break;
		default: { /* 'c' */
			json_t *seen = json_object(), *nm;
			size_t k;

			json_array_foreach(json_object_get(x, "seen"), k, nm)
				if (seen && json_object_set(seen, json_string_value(nm), json_true()) < 0) {
					json_decref(seen);
					seen = NULL;
				}
			snprintf(key, sizeof key, "%lld", (long long)kg);
			if (seen == NULL || ckpt_json_set_new(C->cuts, key, json_pack("{s:o, s:O}", "seen", seen, "why",
										     json_object_get(x, "why"))) < 0)
				r = ckpt_err_nomem(C->e, "");
		}
		}
		if (r < 0)
			return -1;
	}
	return 0;
}

struct sumtasks {
	struct ckpt_fstate_backing_data *b;
	const struct ckpt_operator *op;
	struct rec *rec; /* of the batch */
	size_t first;    /* the batch's first subtask */
};

static int
sum_task(void *arg, size_t t, struct ckpt_err *e)
{
	struct sumtasks *S = arg;
	struct rec *R = &S->rec[t];
	struct ckpt_fstate_sink k = {.header = rec_header, .op = rec_op, .kv = rec_kv, .skip = rec_skip, .cut = rec_cut,
			  .arg = R, .untyped = 1};

	int r;

	R->err = e;
	if ((R->ev = json_array()) == NULL)
		return ckpt_err_nomem(e, "");
	r = ckpt_fstate_read_subtask(S->b, S->op, &S->op->subtasks[S->first + t], &k, e);
	rec_flush(R);
	return r;
}

json_t *
ckpt_flink_state_summary(struct ckpt_snapshot *s, struct ckpt_err *e)
{
	struct ckpt_fstate_backing_data *b = ckpt_fstate_backing(s, e);
	struct counter C = {.e = e};
	struct sumtasks S = {.b = b};
	json_t *out = NULL;

	if (b == NULL)
		return NULL;
	ckpt_fstate_progress(s, NULL, 1);
	if ((C.ops = json_object()) == NULL || (C.cuts = json_object()) == NULL || (C.keyed = json_object()) == NULL ||
	    (S.rec = ckpt_calloc(SUMMARY_BATCH, sizeof *S.rec, e)) == NULL) {
		ckpt_err_nomem(e, "");
		goto out;
	}
	for (size_t i = 0; i < s->nops; i++) {
		const struct ckpt_operator *op = &s->ops[i];
		size_t k;

		if (!ckpt_fselect_operator(b->sel, op))
			continue; /* --uid: its files are not opened */
		C.op = json_pack("{s:[]}", "states");
		if (C.op == NULL || json_object_set_new(C.ops, op->id, C.op) < 0)
			goto out;
		C.states = json_object_get(C.op, "states");
		S.op = op;
		for (S.first = 0; S.first < op->nsubtasks; S.first += k) {
			int r = 0;

			k = op->nsubtasks - S.first < SUMMARY_BATCH ? op->nsubtasks - S.first : SUMMARY_BATCH;
			if (ckpt_fselect_buffered(b->sel)) { /* what the selection keeps is not the threads' to share */
				for (size_t t = 0; t < k && r == 0; t++)
					r = sum_task(&S, t, e);
			} else {
				r = ckpt_fstate_run(k, sum_task, &S, NULL, e);
			}
			for (size_t t = 0; t < k && r == 0; t++) {
				const struct ckpt_subtask *st = &op->subtasks[S.first + t];

				r = play(&C, S.rec[t].ev);
				for (size_t h = 0; h < st->nhandles && r == 0; h++)
					if (listed_files(ckpt_fstate_handle_role(&st->handles[h])) &&
					    strstr(st->handles[h].scope, "channel") == NULL &&
					    count_unread(&C, st, &st->handles[h]) < 0)
						r = -1;
			}
			for (size_t t = 0; t < k; t++) {
				json_decref(S.rec[t].ev);
				S.rec[t] = (struct rec){0};
			}
			if (r < 0)
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
	free(S.rec);
	ckpt_progress_end(s);
	return out;
}

/* ------------------------------------------------------------ -c */

struct verifier {
	ckpt_verify_report *report;
	void *arg;
	json_t *bad; /* paths already reported */
	long problems;
	struct ckpt_err io; /* the first file that could not be read for another reason than its absence */
	uint64_t s3bytes; /* of the files in S3: what reading them all fetches */
};

static void
problem(struct verifier *V, const char *where, const char *what)
{
	V->problems++;
	json_object_set_new(V->bad, where, json_true());
	V->report(V->arg, where, what);
}

/* The size of a state file, local or in S3: 0; 1 when it is not there (why says so); -1, e set
 * (a file there or not: -c cannot tell). */
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
		if (errno != ENOENT && errno != ENOTDIR)
			return ckpt_err_sys(e, path, "cannot stat");
		snprintf(why, n, "missing (%s)", strerror(errno));
		return 1;
	}
	*size = (uint64_t)sb.st_size;
	return 0;
}

/* Every file the _metadata names: there, and of its recorded size (segment files: at least). */
static int
verify_files(struct ckpt_fstate_backing_data *b, const struct ckpt_snapshot *s, struct verifier *V, uint64_t *files,
	     uint64_t *bytes, struct ckpt_err *e)
{
	const json_t *list = json_object_get(s->flink, "files");
	struct ckpt_fstate_ctx c = {.b = b, .e = e};

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
				struct ckpt_err pw = *e;

				if (V->io.kind == CKPT_ERR_NONE)
					V->io = *e;
				pw.where[0] = '\0';
				ckpt_err_format(&pw, what, sizeof what);
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
	struct ckpt_fstate_backing_data *b = ckpt_fstate_backing(s, e);
	const json_t *list = s->flink ? json_object_get(s->flink, "files") : NULL;
	struct ckpt_err ignored = {0};
	struct ckpt_fstate_ctx c = {.b = b, .e = &ignored};
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
	ckpt_err_nomem(e, "");
	return NULL;
}

int
ckpt_flink_state_each_file(struct ckpt_snapshot *s, int (*fn)(void *arg, const char *path, int local), void *arg,
			   struct ckpt_err *e)
{
	struct ckpt_fstate_backing_data *b = ckpt_fstate_backing(s, e);
	const json_t *list = s->flink ? json_object_get(s->flink, "files") : NULL;
	struct ckpt_err ignored = {0};
	struct ckpt_fstate_ctx c = {.b = b, .e = &ignored};

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
	struct ckpt_fstate_backing_data *b = ckpt_fstate_backing(s, e);
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
	else
		ckpt_fstate_progress(s, NULL, 1);
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
		if (pe.kind == CKPT_ERR_IO && V.io.kind == CKPT_ERR_NONE)
			V.io = pe;
	}
	rc = V.problems;
	if (V.io.kind != CKPT_ERR_NONE)
		*e = V.io;
out:
	ckpt_s3_progress_end();
	ckpt_progress_end(s);
	free(each);
	json_decref(V.bad);
	return rc;
}

long
ckpt_flink_state_files(struct ckpt_snapshot *s, ckpt_verify_report *report, void *arg, uint64_t *files,
		       uint64_t *bytes, struct ckpt_err *e)
{
	struct ckpt_fstate_backing_data *b = ckpt_fstate_backing(s, e);
	struct verifier V = {.report = report, .arg = arg};
	long rc = -1;

	*files = *bytes = 0;
	if (b == NULL)
		return -1;
	if ((V.bad = json_object()) == NULL)
		return ckpt_err_nomem(e, "");
	if (verify_files(b, s, &V, files, bytes, e) == 0)
		rc = V.problems;
	json_decref(V.bad);
	return rc;
}
