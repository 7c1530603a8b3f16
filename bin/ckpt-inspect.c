/* ckpt-inspect: look inside a snapshot: summary, state document, checksums, difference, uids; find
 * the snapshots under a directory. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "inspect-offsets.h"
#include "inspect-shards.h"
#include "inspect-summary.h"

enum mode { SUMMARY, ALL, CHECK, DIFF, ROWS, OFFSETS };

enum { OPT_LATEST = 256, OPT_ORPHANS, OPT_OLDER, OPT_RAW, OPT_STATE, OPT_JSON, OPT_TABLE, OPT_SKEW, OPT_PLOT,
       OPT_KEEP_GOING, OPT_OFFSETS, OPT_SHARDS, OPT_SHARD, OPT_COMPRESS };  /* long options without a letter */

struct opts {
	enum mode mode;
	const char *other;
	const char **uids;
	size_t nuids;
	const char **roots; /* -r OLDPREFIX=DIR */
	size_t nroots;
	int meta_only;      /* -m: a Flink snapshot's _metadata only, not the state its handles point to */
	const char *list;   /* -l DIR, --latest DIR: the tree to search */
	int latest;         /* --latest */
	int raw;            /* --raw: -a prints every entry's raw bytes beside its typed form */
	const char *orphans; /* --orphans DIR */
	int64_t older_than;  /* --older-than, seconds (default an hour) */
	int older_set;
	const char *state;  /* --state NAME */
	const char *key;    /* -k KEY, as written */
	json_t *keyv;       /* -k KEY, parsed */
	int verbose;        /* -v: the bytes of state files read, on stderr */
	int json, table;    /* --json, --table: the summary as JSON, as a table (neither: a table on a terminal) */
	int skew;           /* --skew */
	const char *plot;   /* --plot FILE.svg */
	int keep_going;     /* --keep-going: -a, -R and -d go on past a subtask whose state cannot be read */
	int diff_rows;      /* -d -R: the entries that differ, as rows */
	unsigned shards;    /* --shards N: the descriptors of N shards */
	const char *shard;  /* -R --shard D: one shard's rows */
	const char *out;    /* -o OUT: --shard's rows into OUT/part-NNNNN.ndjson */
	const char *compress; /* --compress gz|zst */
};

/* --keep-going: the snapshot whose skipped subtasks are said, and how many were. */
struct skips {
	const char *file;
	unsigned long n;
};

static void
usage(FILE *f)
{
	fprintf(f, "usage: ckpt-inspect [-pmv] [-a [--raw] | -R | -c | --json | --table | --skew [--plot FILE]]\n"
	       "                    [--keep-going] [-u UID ...] [--state NAME] [-k KEY]\n"
	       "                    [-r OLDPREFIX=DIR ...] [file ...]\n"
	       "       ckpt-inspect --offsets [--json | --table] [-u UID ...] [-r OLDPREFIX=DIR ...] [file ...]\n"
	       "       ckpt-inspect [-u UID ...] [-r OLDPREFIX=DIR ...] --shards N SNAPSHOT\n"
	       "       ckpt-inspect -R --shard D [-o OUT [--compress gz|zst]] [--keep-going] [-u UID ...]\n"
	       "                    [--state NAME] [-k KEY] [-r OLDPREFIX=DIR ...] SNAPSHOT\n"
	       "       ckpt-inspect -d [-R] [--keep-going] [-u UID ...] [--state NAME] [-k KEY] [-r OLDPREFIX=DIR ...]\n"
	       "                    OLD NEW\n"
	       "       ckpt-inspect [-pc] [-r OLDPREFIX=DIR ...] -l DIR\n"
	       "       ckpt-inspect [-c] [-r OLDPREFIX=DIR ...] --latest DIR\n"
	       "       ckpt-inspect [-r OLDPREFIX=DIR ...] [--older-than DURATION] --orphans DIR\n"
	       "options:\n"
	       "  -a, --all             print the whole state document, entries typed where their\n"
	       "                        serializers are known\n"
	       "      --raw             with -a, every entry's raw bytes beside its typed form\n"
	       "  -R, --rows            the state as rows (NDJSON): one an entry, map entry, list element\n"
	       "      --offsets         each source split and partition (NDJSON): connector, topic and\n"
	       "                        partition or file, starting and stopping offset; a table on a\n"
	       "                        terminal\n"
	       "  -c, --check           verify each archive against its manifest, or each state file\n"
	       "                        a Flink _metadata names\n"
	       "  -d, --diff            how NEW differs from OLD (exit 1: they differ); with -R, the\n"
	       "                        entries added, removed and changed, as rows\n"
	       "      --keep-going      -a, -R and -d go on past a subtask whose state cannot be read\n"
	       "                        (each named on stderr; exit 1)\n"
	       "  -u, --uid=UID         name the operators the uid (or operator id) UID names, and read\n"
	       "                        only their state (repeatable)\n"
	       "      --state=NAME      read only the state named NAME\n"
	       "  -k, --key=KEY         read only the key KEY (JSON, typed by the key serializer: 42,\n"
	       "                        '\"user-7\"', [1, \"a\"] for a tuple): its key group's bytes alone\n"
	       "      --shards=N        split a Flink snapshot's state into N shards that read apart,\n"
	       "                        balanced by bytes: their descriptors (NDJSON)\n"
	       "      --shard=D         with -R, only shard D's rows (a line of --shards N, or I/N)\n"
	       "  -o, --output=OUT      with --shard, the rows into OUT/part-NNNNN.ndjson (OUT a\n"
	       "                        directory or s3://bucket/prefix), written whole or not at all\n"
	       "      --compress=gz|zst with -o, the part file compressed (.ndjson.gz, .ndjson.zst)\n"
	       "  -v, --verbose         say on stderr how many bytes of state files were read\n"
	       "  -m, --metadata-only   a Flink _metadata alone, not the state files it names\n"
	       "  -l, --list DIR        every checkpoint and savepoint under DIR, complete or not (NDJSON)\n"
	       "      --latest DIR      the path of the newest complete one under DIR\n"
	       "      --orphans DIR     the files under DIR no complete checkpoint or savepoint there\n"
	       "                        references, and not in use (NDJSON; nothing is deleted)\n"
	       "      --older-than=DURATION\n"
	       "                        --orphans keeps files younger than DURATION (30s, 10m, 1h, 2d;\n"
	       "                        default 1h)\n"
	       "  -r, --root=OLDPREFIX=DIR\n"
	       "                        read Flink state files named under OLDPREFIX from DIR (repeatable)\n"
	       "      --json            JSON even on a terminal (the summary, --offsets)\n"
	       "      --table           a table even off a terminal (the summary, --offsets)\n"
	       "      --skew            each keyed state's entries and bytes per subtask and per key group\n"
	       "                        (NDJSON)\n"
	       "      --plot=FILE.svg   with --skew, draw them into FILE.svg (gnuplot)\n"
	       "  -p, --pretty          indented JSON\n"
	       "  -h, --help            this help\n"
	       "  -V, --version         the version\n"
	       "The DIR of -l, --latest and --orphans is the operand, anywhere among the options\n"
	       "(-l -c DIR, --orphans --older-than 1h DIR), or attached: -lDIR, --latest=DIR.\n");
}

static const char *
display(const char *path)
{
	return path == NULL || strcmp(path, "-") == 0 ? "<stdin>" : path;
}

/* Is s a Flink snapshot whose state files are read? */
static int
flink_state(const struct opts *o, const struct ckpt_snapshot *s)
{
	return s->flink && ckpt_snapshot_is_flink_meta(s) && !o->meta_only;
}

/* Mark the operators each uid names; 1 when some uid names none. */
static int
match_uids(const struct opts *o, const struct ckpt_snapshot *s, json_t *sum, const char *file)
{
	json_t *ops = json_object_get(sum, "operators"), *list = json_array();
	int unmatched = 0;

	for (size_t u = 0; u < o->nuids; u++) {
		char id[33];
		json_t *hits = json_array();

		for (size_t i = 0; (i = ckpt_snapshot_match_uid(s, o->uids[u], i, id)) < s->nops; i++) {
			json_array_append_new(hits, json_string(s->ops[i].id));
			json_object_set_new(json_array_get(ops, i), "matched_uid", json_string(o->uids[u]));
		}
		if (json_array_size(hits) == 0) {
			cli_warn("%s: uid \"%s\" (operator id %s) names no operator", file, o->uids[u], id);
			unmatched = 1;
		}
		json_array_append_new(list, json_pack("{s:s, s:s, s:o}", "uid", o->uids[u], "id", id, "operators", hits));
	}
	json_object_set_new(sum, "uids", list);
	return unmatched;
}

/* --shards -u: the plan is of the operators the uids name; 1 when some uid names none (said). */
static int
shard_uids(const struct opts *o, const struct ckpt_snapshot *s, const char *file)
{
	json_t *scratch = json_object();
	int r;

	if (scratch == NULL)
		cli_out_of_memory();
	r = match_uids(o, s, scratch, file);
	json_decref(scratch);
	return r;
}

static int
print_result(json_t *v, struct ckpt_err *e)
{
	int r;

	if (v == NULL) {
		cli_error(e);
		return 2;
	}
	r = cli_print_json(v);
	json_decref(v);
	return r < 0 ? 2 : 0;
}

static void
report(void *arg, const char *where, const char *what)
{
	json_t *problems = arg;

	cli_warn("%s: %s", where, what);
	json_array_append_new(problems, json_pack("{s:s, s:s}", "where", where, "problem", what));
}

/* -c's report, {"file", "ok", COUNTED: count, "bytes", "problems"}: the exit status (1: problems). */
static int
print_check(const char *path, long n, const char *counted, uint64_t count, uint64_t bytes, json_t *problems,
	    struct ckpt_err *e)
{
	int status;

	if (n < 0) {
		cli_error(e);
		json_decref(problems);
		return ckpt_err_status(e);
	}
	status = print_result(json_pack("{s:s, s:b, s:I, s:I, s:o}", "file", display(path), "ok", n == 0, counted,
					(json_int_t)count, "bytes", (json_int_t)bytes, "problems", problems), e);
	/* a file there that could not be read leaves the answer open: an I/O failure, not a "no" */
	return status ? status : n > 0 && e->kind == CKPT_ERR_IO ? 2 : n > 0;
}

static int
check_file(const char *path)
{
	struct ckpt_err e = {0};
	json_t *problems = json_array();
	uint64_t members = 0, bytes = 0;
	long n = ckpt_archive_verify(path, report, problems, &members, &bytes, &e);

	return print_check(path, n, "members", members, bytes, problems, &e);
}

static int
check_flink(const char *path, struct ckpt_snapshot *s)
{
	struct ckpt_err e = {0};
	json_t *problems = json_array();
	uint64_t files = 0, bytes = 0;
	long n = ckpt_flink_state_verify(s, report, problems, &files, &bytes, &e);

	return print_check(path, n, "files", files, bytes, problems, &e);
}

/* -c of a Flink snapshot whose _metadata does not decode: damaged or cut (exit 1, said in the report
 * as any problem is), unless it is no _metadata at all, or of a version or state Flink itself no
 * longer reads (exit 2: nothing to check). */
static int
check_unreadable(const char *path, struct ckpt_err *e)
{
	json_t *problems;

	if (e->kind != CKPT_ERR_INPUT || strstr(e->text, "no longer supported") != NULL ||
	    strstr(e->text, "not a Flink _metadata") != NULL) {
		cli_error(e);
		return ckpt_err_status(e);
	}
	problems = json_array();
	report(problems, e->where, e->text);
	return print_check(path, 1, "files", 0, 0, problems, e);
}

/* Is op (of s) one -u names?  (No -u: every one is.) */
static int
uid_named(const struct opts *o, const struct ckpt_snapshot *s, const char *opid)
{
	char id[33];

	for (size_t u = 0; u < o->nuids; u++)
		for (size_t i = 0; (i = ckpt_snapshot_match_uid(s, o->uids[u], i, id)) < s->nops; i++)
			if (strcmp(s->ops[i].id, opid) == 0)
				return 1;
	return o->nuids == 0;
}

/* -d narrowed by -u (the operators), --state (the states) and -k (no state's size: a key's is not
 * known); 1 when some difference is left.  When the entries are compared (entries), a state whose
 * mode and entry count stay, its bytes alone changed (one backend's encoding against another's),
 * is listed but is no difference. */
static int
narrow_diff(const struct opts *o, json_t *d, const struct ckpt_snapshot *a, const struct ckpt_snapshot *b,
	    int entries)
{
	static const char *const lists[] = {"operators_added", "operators_removed", "operators_rescaled",
					    "states_added", "states_removed", "states_resized"};
	int differ = 0;

	for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
		json_t *v = json_object_get(d, lists[l]);

		for (size_t i = json_array_size(v); i-- > 0;) {
			json_t *x = json_array_get(v, i), *st = json_object_get(x, "state");
			const char *op = json_string_value(json_object_get(x, l < 3 ? "id" : "operator"));
			const char *name = json_is_string(st) ? json_string_value(st)
							      : json_string_value(json_object_get(st, "name"));

			if ((op && !uid_named(o, a, op) && !uid_named(o, b, op)) ||
			    (l >= 3 && o->state && (name == NULL || strcmp(name, o->state) != 0)) || (l == 5 && o->keyv))
				json_array_remove(v, i);
			else if (l < 5 || !entries || !json_equal(json_array_get(json_object_get(x, "mode"), 0),
								  json_array_get(json_object_get(x, "mode"), 1)) ||
				 !json_equal(json_array_get(json_object_get(x, "entries"), 0),
					     json_array_get(json_object_get(x, "entries"), 1)))
				differ = 1;
		}
	}
	return differ;
}

static int
diff_file(const struct opts *o, const char *path, struct ckpt_snapshot *s, struct ckpt_snapshot *other)
{
	struct ckpt_err e = {0};
	struct ckpt_flink_diff fd = {.rows = o->diff_rows ? stdout : NULL};
	int differ = 0;
	json_t *d = ckpt_snapshot_diff(s, other, &differ, &e);
	int status;

	if (d)
		differ = narrow_diff(o, d, s, other, flink_state(o, s) && flink_state(o, other));
	/* two Flink snapshots whose state is read: entries by operator, state and key group too */
	if (d && flink_state(o, s) && flink_state(o, other)) {
		json_t *st = ckpt_flink_state_diff(s, other, &fd, &e);
		int bad = st == NULL || json_object_set_new(d, "state", st) < 0;

		if (bad || json_object_set_new(d, "processing_timers", fd.timers) < 0 ||
		    (json_array_size(fd.unread) && json_object_set(d, "not_compared", fd.unread) < 0)) {
			if (bad)
				json_decref(fd.timers);
			json_decref(d);
			d = NULL;
		}
		differ |= fd.differ;
		json_decref(fd.unread);
	} else if (d && o->diff_rows) {
		json_decref(d);
		d = NULL;
		ckpt_err_set(&e, CKPT_ERR_INPUT, display(flink_state(o, s) ? o->other : path), "-d -R compares the entries "
			     "of two Flink snapshots' state files, and this is not one");
	}
	if (d && o->diff_rows) { /* the rows are printed */
		json_decref(d);
		return differ;
	}

	json_t *out = d ? json_pack("{s:s, s:s}", "from", display(path), "to", o->other) : NULL;

	if (out && json_object_update(out, d) < 0) {
		json_decref(out);
		out = NULL;
	}
	json_decref(d);
	status = print_result(out, &e);
	return status ? status : differ;
}

/* -a: the state document, written as it is read (ckpt_snapshot_print). */
static int
print_all(struct ckpt_snapshot *s, struct ckpt_err *e)
{
	if (ckpt_snapshot_print(s, stdout, cli_want_pretty(), e) == 0 && fflush(stdout) != EOF)
		return 0;
	if (ferror(stdout))
		return 2; /* cli_finish says it */
	cli_error(e);
	return 2;
}

/* -R: the rows, written as they are read (ckpt_snapshot_rows). */
static int
print_rows(struct ckpt_snapshot *s, struct ckpt_err *e)
{
	if (ckpt_snapshot_rows(s, stdout, e) == 0 && fflush(stdout) != EOF)
		return 0;
	if (ferror(stdout))
		return 2;
	cli_error(e);
	return 2;
}

/* --offsets: the rows of the source operators' splits and partitions: NDJSON, or a table (--table,
 * or a terminal without --json or -p). */
static int
print_offsets(const struct opts *o, struct ckpt_snapshot *s, struct ckpt_err *e)
{
	int table = o->table || (!o->json && cli_pretty != 1 && isatty(STDOUT_FILENO));

	if ((table ? offsets_table(s, e) : ckpt_flink_offsets(s, stdout, e)) == 0 && fflush(stdout) != EOF)
		return 0;
	if (ferror(stdout))
		return 2;
	cli_error(e);
	return ckpt_err_status(e);
}

/* -k: the document or the rows of one key kept in memory until the read has ended, as the library
 * then reads the state once, without its check pass: a damaged file still prints nothing. */
static int
print_buffered(int rows, struct ckpt_snapshot *s, struct ckpt_err *e)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	int r;

	if (f == NULL)
		cli_out_of_memory();
	r = rows ? ckpt_snapshot_rows(s, f, e) : ckpt_snapshot_print(s, f, cli_want_pretty(), e);
	if (fclose(f) != 0 && r == 0)
		r = ckpt_err_set(e, CKPT_ERR_NOMEM, "", "out of memory");
	if (r == 0) {
		r = fwrite(buf, 1, n, stdout) == n && fflush(stdout) != EOF ? 0 : 2; /* cli_finish says it */
		free(buf);
		return r;
	}
	free(buf);
	cli_error(e);
	return 2;
}

/* --keep-going: a subtask left out, said. */
static void
skipped(void *arg, const char *where, const char *what)
{
	struct skips *sk = arg;

	sk->n++;
	cli_warn("%s: %s skipped: %s", sk->file, where, what);
}

/* A Flink snapshot's state is read unless -m asks for its _metadata only. */
static int
read_flink_state(const struct opts *o, struct ckpt_snapshot *s, struct skips *sk, struct ckpt_err *e)
{
	if (o->meta_only || s->flink == NULL || !ckpt_snapshot_is_flink_meta(s))
		return 0;
	if (ckpt_flink_state_enable(s, o->roots, o->nroots, e) < 0)
		return -1;
	if (o->keep_going)
		ckpt_flink_state_keep_going(s, skipped, sk);
	ckpt_flink_state_raw(s, o->raw);
	if (o->nuids || o->state || o->keyv) {
		struct ckpt_flink_select sel = {.uids = o->uids, .nuids = o->nuids, .state = o->state, .key = o->keyv,
						.key_text = o->key, .buffered = o->keyv != NULL};

		if (ckpt_flink_state_select(s, &sel, e) < 0)
			return -1;
	}
	return 0;
}

/* --state and -k narrow the reading of a Flink snapshot's state files: anything else is refused. */
static int
narrowable(const struct opts *o, const struct ckpt_snapshot *s, const char *file, struct ckpt_err *e)
{
	if (!o->state && !o->keyv && (!o->nuids || o->mode == SUMMARY))
		return 0;
	if (s->flink && ckpt_snapshot_is_flink_meta(s) && !o->meta_only)
		return 0;
	return ckpt_err_set(e, CKPT_ERR_INPUT, file, "%s narrows the reading of a Flink snapshot's state files, and "
			    "this is %s", o->keyv ? "-k" : o->state ? "--state" : "-u",
			    o->meta_only ? "a _metadata read alone (-m)" : "not a Flink snapshot");
}

/* Add each operator's Flink state (ckpt_flink_state_summary) to the summary as "flink_state". */
static int
summary_state(const struct opts *o, struct ckpt_snapshot *s, const char *file, json_t *sum, struct ckpt_err *e)
{
	json_t *st;

	if (o->meta_only || s->flink == NULL || !ckpt_snapshot_is_flink_meta(s))
		return 0;
	/* users often copy only the _metadata: then its summary alone, naming what is not there */
	if ((st = ckpt_flink_state_missing(s, e)) == NULL)
		return -1;
	if (json_array_size(st) > 0) {
		size_t n = json_array_size(st);

		cli_warn("%s: %zu state file%s missing (%s%s); the summary is of the _metadata alone", file, n,
			 n == 1 ? "" : "s", n == 1 ? "" : "first ", json_string_value(json_array_get(st, 0)));
		return json_object_set_new(sum, "missing_files", st) < 0
			       ? ckpt_err_set(e, CKPT_ERR_NOMEM, "", "out of memory") : 0;
	}
	json_decref(st);
	if ((st = ckpt_flink_state_summary(s, e)) == NULL)
		return -1;
	if (ckpt_snapshot_summary_flink(sum, st, e) < 0) {
		json_decref(st);
		return -1;
	}
	json_decref(st);
	return 0;
}

/* The summary as the user asked: a table (--table, or a terminal without --json or -p), the skew
 * (--skew, --plot), or JSON. */
static int
print_summary(const struct opts *o, const struct ckpt_snapshot *s, json_t *v)
{
	int status;

	if (o->skew)
		status = summary_skew(v, o->plot);
	else if (o->table || (!o->json && cli_pretty != 1 && isatty(STDOUT_FILENO)))
		status = summary_table(v, flink_state(o, s));
	else
		return print_result(v, NULL);
	json_decref(v);
	return status;
}

/* --state names no state of the files read: said as -u's uid naming no operator is; 0 then. */
static int
state_found(const struct opts *o, struct ckpt_snapshot *s, const char *file)
{
	char names[1024];

	if (o->state == NULL || !flink_state(o, s) || ckpt_flink_state_found(s, names, sizeof names))
		return 1;
	cli_warn("%s: --state \"%s\" names no state (%s%s)", file, o->state,
		 *names ? "the states: " : "the operators read hold none", names);
	return 0;
}

static int
inspect_file(const struct opts *o, const char *path, struct ckpt_snapshot *other, struct skips *osk)
{
	struct ckpt_err e = {0};
	struct skips sk = {display(path), 0};
	unsigned long oskipped = osk->n;
	struct ckpt_snapshot *s;
	int status = 0;
	json_t *v;
	uint64_t before = ckpt_flink_state_bytes_read(), fetched = ckpt_s3_fetched();

	if (o->mode == CHECK && !ckpt_snapshot_is_flink(path))
		return check_file(path);
	s = ckpt_snapshot_open(path, &e);
	if (s == NULL && o->mode == CHECK)
		return check_unreadable(path, &e);
	if (s == NULL || narrowable(o, s, display(path), &e) < 0 || read_flink_state(o, s, &sk, &e) < 0) {
		cli_error(&e);
		ckpt_snapshot_free(s);
		return ckpt_err_status(&e);
	}
	if (o->mode == CHECK) {
		status = check_flink(path, s);
	} else if (o->mode == DIFF) {
		status = diff_file(o, path, s, other);
	} else if (o->shards) {
		status = shards_print(s, display(path), o->shards);
		if (status == 0 && o->nuids)
			status = shard_uids(o, s, display(path));
	} else if (o->mode == ROWS && o->shard) {
		status = shards_rows(s, o->shard, o->out, o->compress);
	} else if ((o->mode == ALL || o->mode == ROWS) && o->keyv) {
		status = print_buffered(o->mode == ROWS, s, &e);
	} else if (o->mode == ALL) {
		status = print_all(s, &e);
	} else if (o->mode == ROWS) {
		status = print_rows(s, &e);
	} else if (o->mode == OFFSETS) {
		status = print_offsets(o, s, &e);
	} else {
		v = ckpt_snapshot_summary(s, display(path), &e);
		if (v && summary_state(o, s, display(path), v, &e) < 0) {
			json_decref(v);
			v = NULL;
		}
		if (v && !state_found(o, s, display(path))) {
			json_decref(v);
			status = 2;
		} else if (v == NULL) {
			cli_error(&e);
			status = 2;
		} else {
			int r;

			if (o->nuids)
				status = match_uids(o, s, v, display(path));
			r = print_summary(o, s, v);
			status = r > status ? r : status;
		}
	}
	/* a shard's files may hold none of --state's state: no rows then, not an error */
	if ((o->mode == ALL || o->mode == ROWS) && !o->shard && status == 0 && !state_found(o, s, display(path)))
		status = 2;
	if (status == 2 && e.kind != CKPT_ERR_NONE)
		status = ckpt_err_status(&e);
	if (status == 0 && (sk.n > 0 || osk->n > oskipped))
		status = 1; /* --keep-going left some out */
	if (o->verbose && flink_state(o, s)) {
		char dirs[2048];

		cli_warn("%s: %llu bytes of state files read%s%s", display(path),
			 (unsigned long long)(ckpt_flink_state_bytes_read() - before),
			 ckpt_flink_state_read_dirs(dirs, sizeof dirs) ? " from " : "", dirs);
	}
	if (o->verbose && ckpt_s3_fetched() > fetched)
		cli_warn("%s: %llu bytes fetched from S3", display(path), (unsigned long long)(ckpt_s3_fetched() - fetched));
	ckpt_snapshot_free(s);
	return status;
}

/* -l: one line per snapshot found; --latest: the path of the newest complete one (exit 1: none). */
static int
list_dir(const struct opts *o)
{
	struct ckpt_list_opts lo = {.check = o->mode == CHECK, .roots = o->roots, .nroots = o->nroots};
	struct ckpt_err e = {0};
	struct ckpt_found *f;
	size_t n, best;
	int status = 0;

	ckpt_progress_set(NULL); /* snapshots are read on several threads at once: no progress line */
	if (ckpt_snapshot_list(o->list, &lo, &f, &n, &e) < 0) {
		cli_error(&e);
		return ckpt_err_status(&e);
	}
	if (o->latest) {
		if (ckpt_found_latest(f, n, &best, &e) < 0) {
			cli_error(&e);
			status = 2;
		} else if (best < n) {
			printf("%s\n", f[best].path);
		} else {
			cli_warn("%s: no complete checkpoint or savepoint (%zu found)", o->list, n);
			status = 1;
		}
	}
	for (size_t i = 0; !o->latest && i < n && status == 0; i++) {
		json_t *v = ckpt_found_to_json(&f[i]);

		if (v == NULL)
			cli_out_of_memory();
		if (ckpt_json_print(stdout, v, cli_pretty == 1) < 0 || fflush(stdout) == EOF)
			status = 2; /* cli_finish says it */
		json_decref(v);
	}
	ckpt_found_free(f, n);
	return status;
}

/* --orphans: one line per file no complete snapshot under the directory needs; nothing deleted. */
static int
orphans_dir(const struct opts *o)
{
	struct ckpt_orphans_opts oo = {.older_than = o->older_set ? o->older_than : 3600, .now = (int64_t)time(NULL),
				       .roots = o->roots, .nroots = o->nroots};
	struct ckpt_err e = {0};
	struct ckpt_orphans out;
	int status = 0;

	ckpt_progress_set(NULL); /* _metadata files are read on several threads at once */
	if (ckpt_snapshot_orphans(o->orphans, &oo, &out, &e) < 0) {
		cli_error(&e);
		return ckpt_err_status(&e);
	}
	for (size_t i = 0; i < out.n && status == 0; i++) {
		json_t *v = ckpt_orphan_to_json(&out.v[i]);

		if (v == NULL)
			cli_out_of_memory();
		if (ckpt_json_print(stdout, v, 0) < 0)
			status = 2; /* cli_finish says it */
		json_decref(v);
	}
	if (out.outside)
		cli_warn("%s: %llu file%s a _metadata names lie%s outside it: not listed", o->orphans,
			 (unsigned long long)out.outside, out.outside == 1 ? "" : "s", out.outside == 1 ? "s" : "");
	if (isatty(2))
		cli_warn("%s: %zu file%s, %llu bytes, that no complete checkpoint or savepoint needs", o->orphans,
			 out.n, out.n == 1 ? "" : "s", (unsigned long long)out.bytes);
	ckpt_orphans_free(&out);
	return status;
}

/* 30s, 10m, 1h, 2d (or 0): seconds, or -1. */
static int64_t
duration(const char *s)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || v < 0 || end == s || v > INT64_MAX / 86400)
		return -1;
	if (*end == '\0')
		return v == 0 ? 0 : -1;
	if (end[1] != '\0')
		return -1;
	switch (*end) {
	case 's':
		return v;
	case 'm':
		return v * 60;
	case 'h':
		return v * 3600;
	case 'd':
		return v * 86400;
	}
	return -1;
}

/* -k's argument: one JSON value, or a usage error naming it. */
static json_t *
parse_key(const char *arg)
{
	json_error_t je;
	json_t *v = json_loads(arg, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);

	if (v == NULL)
		cli_usage_fail("-k %s: not JSON (a key is JSON: 42, '\"user-7\"', [1, \"a\"]): %s", arg, je.text);
	return v;
}

/* --json, --table, --skew and --plot choose how the summary (--json and --table: or --offsets) is
 * shown: each alone, with nothing else. */
static void
summary_options(const struct opts *o, int nfiles)
{
	const char *opt = o->plot ? "--plot" : o->skew ? "--skew" : o->table ? "--table" : o->json ? "--json" : NULL;

	if (opt == NULL)
		return;
	/* --table and --json show --offsets too (a table, NDJSON) */
	if (o->mode != SUMMARY && !(o->mode == OFFSETS && !o->skew))
		cli_usage_fail("%s goes with the summary, not with -a, -R, -c or -d", opt);
	if (o->plot && !o->skew)
		cli_usage_fail("--plot goes with --skew");
	if (o->json + o->table + o->skew > 1)
		cli_usage_fail("--json, --table and --skew exclude each other");
	if (o->table && cli_pretty == 1)
		cli_usage_fail("-p indents JSON: not with --table");
	if (o->plot && nfiles > 1)
		cli_usage_fail("--plot draws one snapshot: %d given", nfiles);
}

/* --shards N: 1 to 1000000 shards. */
static unsigned
shard_count(const char *arg)
{
	char *end;
	unsigned long n = strtoul(arg, &end, 10);

	if (end == arg || *end != '\0' || arg[0] == '-' || n == 0 || n > 1000000)
		cli_usage_fail("--shards needs a number of shards from 1 to 1000000, not \"%s\"", arg);
	return (unsigned)n;
}

/* --shards plans, -R --shard reads one shard (-o: into its part file): of one snapshot, alone. */
static void
shard_options(const struct opts *o, int nfiles)
{
	if (o->shards && o->shard)
		cli_usage_fail("--shards plans the shards, --shard reads one: not both");
	if (o->shards && o->mode != SUMMARY)
		cli_usage_fail("--shards goes with -r alone");
	if (o->shard && o->mode != ROWS)
		cli_usage_fail("--shard goes with -R");
	if ((o->out || o->compress) && !o->shard)
		cli_usage_fail("%s goes with -R --shard", o->out ? "-o" : "--compress");
	if (o->compress && !o->out)
		cli_usage_fail("--compress goes with -o");
	if ((o->shards || o->shard) && o->meta_only)
		cli_usage_fail("%s is of the state files: not with -m (the _metadata alone)", o->shards ? "--shards" : "--shard");
	/* a plan is of handles' bytes: -u chooses the operators whose handles it holds; a state shares
	 * its files with its operator's other states, a key is in one key group, and no file is read */
	if (o->shards && o->state)
		cli_usage_fail("--shards splits the state files, which hold each of an operator's states: "
			       "not with --state (read one state of a shard with -R --shard D --state NAME)");
	if (o->shards && o->key)
		cli_usage_fail("--shards splits the state files, and a key is in one key group: not with -k "
			       "(-R -k reads that key group alone)");
	if (o->shards && o->keep_going)
		cli_usage_fail("--shards plans from the _metadata and RocksDB's index blocks, and reads no entry: not with --keep-going "
			       "(it goes with -R --shard)");
	if ((o->shards || o->shard) && nfiles != 1)
		cli_usage_fail("%s takes one snapshot, %d given", o->shards ? "--shards" : "--shard", nfiles);
}

static void
set_mode(struct opts *o, enum mode m)
{
	if ((o->mode == DIFF && m == ROWS) || (o->mode == ROWS && m == DIFF)) {
		o->diff_rows = 1; /* -d -R: the differences as rows */
		o->mode = DIFF;
		return;
	}
	if (o->mode != SUMMARY && o->mode != m && (m == OFFSETS || o->mode == OFFSETS))
		cli_usage_fail("--offsets excludes -a, -R, -c and -d");
	if (o->mode != SUMMARY && o->mode != m)
		cli_usage_fail("-a, -R, -c and -d exclude each other");
	o->mode = m;
}

/*
 * -l, --latest, --orphans: their directory is the one operand (-l -c DIR, --orphans --older-than 0
 * DIR), or attached (-lDIR, --latest=DIR) and then there is none.  Sets o's, and returns argc: no
 * operand left for files.
 */
static int
directory(struct opts *o, int mode, const char *dir, int argc, char **argv)
{
	const char *opt = mode == 'l' ? "-l" : mode == OPT_LATEST ? "--latest" : "--orphans";
	int i = optind;

	if (dir && i < argc)
		cli_usage_fail("%s takes its directory, not files: \"%s\"", opt, argv[i]);
	if (dir == NULL && i == argc)
		cli_usage_fail("%s needs a directory", opt);
	if (dir == NULL && i + 1 < argc)
		cli_usage_fail("%s takes one directory, not also \"%s\"", opt, argv[i + 1]);
	if (dir == NULL)
		dir = argv[i];
	if (*dir == '\0')
		cli_usage_fail("%s needs a directory, not \"\"", opt);
	if (mode == OPT_ORPHANS)
		o->orphans = dir;
	else
		o->list = dir;
	o->latest = mode == OPT_LATEST;
	return argc;
}

/* -d OLD NEW, as diff(1): NEW opened as the other.  The last release's -d OTHER FILE ... (-dOTHER,
 * --diff=OTHER, or one file or more than two) still works, said on stderr. */
static void
diff_operands(struct opts *o, int *argc, char **argv)
{
	int n = *argc - optind;

	if (o->other == NULL && n == 2) {
		o->other = argv[--*argc];
		return;
	}
	if (o->other == NULL && n == 0)
		cli_usage_fail("-d compares two snapshots: -d OLD NEW");
	if (o->other == NULL)
		o->other = argv[optind++];
	cli_warn("-d OTHER FILE (how OTHER differs from FILE) is the form of the last release: write -d FILE OTHER, "
		 "-d OLD NEW as diff(1)");
}

static const struct option longopts[] = {
	{"all", no_argument, NULL, 'a'},     {"rows", no_argument, NULL, 'R'},     {"check", no_argument, NULL, 'c'},
	{"diff", optional_argument, NULL, 'd'}, {"uid", required_argument, NULL, 'u'},
	{"pretty", no_argument, NULL, 'p'},  {"help", no_argument, NULL, 'h'},
	{"metadata-only", no_argument, NULL, 'm'}, {"root", required_argument, NULL, 'r'},
	{"version", no_argument, NULL, 'V'}, {"list", optional_argument, NULL, 'l'},
	{"latest", optional_argument, NULL, OPT_LATEST}, {"orphans", optional_argument, NULL, OPT_ORPHANS},
	{"older-than", required_argument, NULL, OPT_OLDER}, {"raw", no_argument, NULL, OPT_RAW},
	{"state", required_argument, NULL, OPT_STATE}, {"key", required_argument, NULL, 'k'},
	{"verbose", no_argument, NULL, 'v'}, {"keep-going", no_argument, NULL, OPT_KEEP_GOING},
	{"json", no_argument, NULL, OPT_JSON}, {"table", no_argument, NULL, OPT_TABLE},
	{"skew", no_argument, NULL, OPT_SKEW}, {"plot", required_argument, NULL, OPT_PLOT},
	{"offsets", no_argument, NULL, OPT_OFFSETS},
	{"shards", required_argument, NULL, OPT_SHARDS}, {"shard", required_argument, NULL, OPT_SHARD},
	{"output", required_argument, NULL, 'o'}, {"compress", required_argument, NULL, OPT_COMPRESS},
	{NULL, 0, NULL, 0},
};

/* The directory options as given: -l or --latest (listing: which) and --orphans, each with its
 * attached directory (NULL: the operand is the directory). */
struct dirs {
	int listing, orphans;
	const char *dir, *odir;
};

/* One option c of getopt_long (its argument in optarg) into o and d. */
static void
option(struct opts *o, struct dirs *d, int c, char **argv)
{
	switch (c) {
	case 'a': case 'R': case 'c':
		set_mode(o, c == 'a' ? ALL : c == 'R' ? ROWS : CHECK);
		break;
	case OPT_OFFSETS:
		set_mode(o, OFFSETS);
		break;
	case OPT_SHARDS:
		o->shards = shard_count(optarg);
		break;
	case OPT_SHARD:
		if (o->shard)
			cli_usage_fail("--shard takes one shard, once");
		o->shard = optarg;
		break;
	case 'o':
		if (o->out || *optarg == '\0')
			cli_usage_fail("-o takes one directory or s3://bucket/prefix, once");
		o->out = optarg;
		break;
	case OPT_COMPRESS:
		if (strcmp(optarg, "gz") != 0 && strcmp(optarg, "zst") != 0)
			cli_usage_fail("--compress is gz or zst, not \"%s\"", optarg);
		o->compress = optarg;
		break;
	case 'd':
		set_mode(o, DIFF);
		o->other = optarg;
		break;
	case 'u':
		o->uids[o->nuids++] = optarg;
		break;
	case OPT_RAW:
		o->raw = 1;
		break;
	case OPT_KEEP_GOING:
		o->keep_going = 1;
		break;
	case OPT_STATE:
		if (o->state)
			cli_usage_fail("--state takes one state name, once");
		o->state = optarg;
		break;
	case 'k':
		if (o->key)
			cli_usage_fail("-k takes one key, once");
		o->key = optarg;
		o->keyv = parse_key(optarg);
		break;
	case 'v':
		o->verbose = 1;
		break;
	case 'm':
		o->meta_only = 1;
		break;
	case OPT_JSON:
		o->json = 1;
		break;
	case OPT_TABLE:
		o->table = 1;
		break;
	case OPT_SKEW:
		o->skew = 1;
		break;
	case OPT_PLOT:
		if (o->plot)
			cli_usage_fail("--plot takes one file, once");
		o->plot = optarg;
		break;
	case 'l': case OPT_LATEST:
		if (d->listing)
			cli_usage_fail("-l and --latest take one directory, once");
		d->listing = c;
		d->dir = optarg;
		break;
	case OPT_ORPHANS:
		if (d->orphans)
			cli_usage_fail("--orphans takes one directory, once");
		d->orphans = 1;
		d->odir = optarg;
		break;
	case OPT_OLDER:
		if ((o->older_than = duration(optarg)) < 0)
			cli_usage_fail("--older-than needs a duration (30s, 10m, 1h, 2d), not \"%s\"", optarg);
		o->older_set = 1;
		break;
	case 'r':
		if (strchr(optarg, '=') == NULL || optarg[0] == '=' || strchr(optarg, '=')[1] == '\0')
			cli_usage_fail("-r needs OLDPREFIX=DIR, not \"%s\"", optarg);
		o->roots[o->nroots++] = optarg;
		break;
	default:
		cli_bad_option(c, argv);
	}
}

/* The options into o; -l, --latest and --orphans checked with what goes with them. */
static void
parse_options(struct opts *o, int argc, char **argv)
{
	struct dirs d = {0};
	int c;

	while ((c = cli_getopt(argc, argv, ":hVpacRmvd::u:r:l::k:o:", longopts, usage)) != -1)
		option(o, &d, c, argv);
	if (d.listing && d.orphans)
		cli_usage_fail("--orphans goes with --older-than and -r alone");
	if (d.listing || d.orphans)
		optind = directory(o, d.listing ? d.listing : OPT_ORPHANS, d.listing ? d.dir : d.odir, argc, argv);
	if (o->older_set && !o->orphans)
		cli_usage_fail("--older-than goes with --orphans");
	if (o->orphans && (o->list || o->mode != SUMMARY || o->nuids || o->state || o->key || o->meta_only ||
			   cli_pretty == 1))
		cli_usage_fail("--orphans goes with --older-than and -r alone");
	if (o->list && ((o->mode != SUMMARY && o->mode != CHECK) || o->nuids || o->state || o->key || o->meta_only))
		cli_usage_fail("%s goes with -c and -r alone", o->latest ? "--latest" : "-l");
}

/* What goes with the files' modes, checked in this order. */
static void
file_options(const struct opts *o, int nfiles)
{
	if (o->raw && o->mode != ALL)
		cli_usage_fail("--raw goes with -a");
	summary_options(o, nfiles);
	shard_options(o, nfiles);
	if ((o->nuids || o->state || o->key) && o->mode == CHECK)
		cli_usage_fail("%s goes with the summary, -a, -R and -d, not with -c",
			       o->key ? "-k" : o->state ? "--state" : "-u");
	if (o->mode == OFFSETS && (o->state || o->key || o->keep_going))
		cli_usage_fail("%s does not go with --offsets", o->state ? "--state" : o->key ? "-k" : "--keep-going");
	if (o->keep_going && o->mode != ALL && o->mode != ROWS && o->mode != DIFF)
		cli_usage_fail("--keep-going goes with -a, -R and -d");
}

/* The files (none: stdin), each inspected; with -d, against the other, read first. */
static int
inspect_files(struct opts *o, int argc, char **argv)
{
	struct ckpt_err e = {0};
	struct skips osk = {0};
	struct ckpt_snapshot *other = NULL;
	int status = 0;

	cli_no_input(argc - optind, usage);
	file_options(o, argc - optind);
	if ((o->mode == ALL || o->mode == ROWS || o->diff_rows) && isatty(STDOUT_FILENO))
		ckpt_progress_set(NULL); /* the rows to the terminal show how far it is */
	if (o->mode == DIFF) {
		diff_operands(o, &argc, argv);
		other = ckpt_snapshot_open(o->other, &e);
		osk.file = display(o->other);
		if (other == NULL || narrowable(o, other, display(o->other), &e) < 0 ||
		    read_flink_state(o, other, &osk, &e) < 0) {
			cli_error(&e);
			status = ckpt_err_status(&e);
			goto out;
		}
	}
	if (optind == argc)
		status = inspect_file(o, NULL, other, &osk);
	for (int i = optind; i < argc; i++) {
		int r = inspect_file(o, argv[i], other, &osk);

		status = r > status ? r : status;
	}
out:
	ckpt_snapshot_free(other);
	return status;
}

int
main(int argc, char **argv)
{
	struct opts o = {0};
	int status;

	cli_init("ckpt-inspect");
	cli_progress();
	cli_clean_on_signals();
	o.uids = calloc((size_t)argc, sizeof *o.uids);
	o.roots = calloc((size_t)argc, sizeof *o.roots);
	if (o.uids == NULL || o.roots == NULL)
		return 2;
	parse_options(&o, argc, argv);
	if (o.orphans)
		status = orphans_dir(&o);
	else if (o.list)
		status = list_dir(&o);
	else
		status = inspect_files(&o, argc, argv);
	json_decref(o.keyv);
	free(o.uids);
	free(o.roots);
	return cli_finish(status);
}
