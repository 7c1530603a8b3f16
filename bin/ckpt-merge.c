/* ckpt-merge: redistribute a snapshot onto new parallelism; without -P or -g it packs the input as it is. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

static void
usage(FILE *f)
{
	fprintf(f, "usage: ckpt-merge [-p] [-P N | -P OPERATOR=N ...] [-g GRAPH] [-n] [-o OUT] [file]\n"
	       "       ckpt-merge [--uid OLD=NEW ...] [--drop UID_OR_ID ...] [--relocate OLDPREFIX=NEWPREFIX ...]\n"
	       "                  [--max-parallelism N] [--canonical] [--link] [-g GRAPH [-n]] -o OUTDIR/ SNAPSHOT\n"
	       "       ckpt-merge [--rows FILE] [--clear STATE ...] -o OUTDIR/ SAVEPOINT\n"
	       "       ckpt-merge [--set-offset TOPIC:PARTITION=OFFSET ...] [--add-partition TOPIC:PARTITION=OFFSET ...]\n"
	       "                  [--remove-partition TOPIC:PARTITION ...] [--source UID] -o OUTDIR/ SAVEPOINT\n"
	       "options:\n"
	       "  -P, --parallelism=[OPERATOR=]N\n"
	       "                        restore at parallelism N (every operator, or OPERATOR; repeatable)\n"
	       "  -g, --graph=GRAPH     restore onto the job graph in the file GRAPH\n"
	       "  -n, --allow-non-restored-state\n"
	       "                        with -g: drop state no operator of the graph takes\n"
	       "  -o, --output=OUT      write an archive (.tar, .tar.gz, .tgz, .zip or DIR/);\n"
	       "                        a Flink savepoint as DIR/ is written again as a Flink savepoint\n"
	       "      --uid=OLD=NEW     the operator of uid or id OLD takes the uid NEW (and its id)\n"
	       "      --drop=UID_OR_ID  remove the operator's state\n"
	       "      --relocate=OLDPREFIX=NEWPREFIX\n"
	       "                        absolute paths starting with OLDPREFIX start with NEWPREFIX\n"
	       "      --link            hard-link the state files into DIR/ instead of copying them\n"
	       "      --max-parallelism=N\n"
	       "                        every operator's max parallelism N, keyed state regrouped\n"
	       "      --rows=FILE       each state the rows in FILE name (as ckpt-inspect -R prints them;\n"
	       "                        - for standard input) holds exactly those rows\n"
	       "      --clear=STATE     empty the keyed state STATE (repeatable)\n"
	       "      --canonical       any checkpoint or savepoint written as a canonical savepoint\n"
	       "      --set-offset=TOPIC:PARTITION=OFFSET\n"
	       "                        the Kafka source reads the partition from OFFSET: a number, earliest,\n"
	       "                        latest, committed, or +N/-N from the current one (repeatable)\n"
	       "      --add-partition=TOPIC:PARTITION=OFFSET\n"
	       "                        the Kafka source reads a partition it lacks from OFFSET (a number,\n"
	       "                        earliest, latest, committed), on the reader Flink would assign it to\n"
	       "      --remove-partition=TOPIC:PARTITION\n"
	       "                        the Kafka source no longer reads the partition\n"
	       "      --source=UID      with those: the Kafka source of uid or id UID\n"
	       "  -p, --pretty          indented JSON\n"
	       "  -h, --help            this help\n"
	       "  -V, --version         the version\n");
}

/* Is out the very file or directory the input is?  No program overwrites its input. */
static int
same_file(const char *in, const char *out)
{
	struct stat a, b;
	char *o = strdup(out);
	size_t n;
	int same;

	if (in == NULL || strcmp(in, "-") == 0 || o == NULL) {
		free(o);
		return 0;
	}
	n = strlen(o);
	while (n > 1 && o[n - 1] == '/')
		o[--n] = '\0';
	same = stat(in, &a) == 0 && stat(o, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
	free(o);
	return same;
}

/* Would writing s into ckpt's archive leave state behind?  A Flink snapshot keeps its state in its
 * state files, typed by the serializers there: it is written whole as a savepoint (-o DIR/, its
 * path given), and its entries alone (ckpt-inspect -a, an archive of them) not at all. */
static int
flink_unwritable(const struct ckpt_snapshot *s, const char *name, int rescaled, struct ckpt_err *e)
{
	if (s->flink == NULL)
		return 0;
	if (!ckpt_snapshot_is_flink_meta(s))
		return ckpt_err_set(e, CKPT_ERR_INPUT, name, "a Flink snapshot's entries without its state files "
				    "(ckpt-inspect -a): write the snapshot itself, ckpt-merge -o DIR/ SNAPSHOT");
	if (rescaled)
		return ckpt_err_set(e, CKPT_ERR_INPUT, name, "a Flink snapshot is rescaled by Flink on restore: "
				    "without -o ckpt-merge prints the assignment, -o DIR/ without -P writes the savepoint");
	return ckpt_err_set(e, CKPT_ERR_INPUT, name, "a Flink snapshot is written as a Flink savepoint with its "
			    "state files: give -o DIR/ and the snapshot's directory or _metadata");
}

/* Pack mode: the snapshot as it is, to an archive or as the state document. */
static int
pack(const char *in, const char *out)
{
	struct ckpt_err e = {0};
	struct ckpt_snapshot *s;
	int kind = out ? ckpt_archive_kind_of(out) : 0, status = 0;

	if (out && kind < 0)
		cli_usage_fail("%s: name the archive .tar, .tar.gz, .tgz or .zip, or end it with / for a directory",
			       out);
	if (out && same_file(in, out))
		cli_usage_fail("%s: the output would overwrite the input", out);
	s = ckpt_snapshot_open(in, &e);
	if (s == NULL) {
		cli_error(&e);
		return ckpt_err_status(&e);
	}
	if (out) {
		if (flink_unwritable(s, in && strcmp(in, "-") != 0 ? in : "<stdin>", 0, &e) < 0 ||
		    ckpt_snapshot_write(s, out, (enum ckpt_archive_kind)kind, &e) < 0)
			status = ckpt_err_status(&e);
	} else {
		json_t *v = ckpt_snapshot_to_json(s, &e);

		if (v == NULL)
			status = ckpt_err_status(&e);
		else if (cli_print_json(v) < 0)
			status = 2;
		json_decref(v);
	}
	if (status && e.kind != CKPT_ERR_NONE)
		cli_error(&e);
	ckpt_snapshot_free(s);
	return status;
}

/* What the options ask for. */
struct merge_opts {
	struct ckpt_redist_opts ro;
	struct ckpt_par *par;
	const char *graph, *out, *savepoint;
	char *sp_dir; /* savepoint: -o's directory without its trailing '/' */
	int rescale;
	struct ckpt_flink_edit *edits;
	size_t nedits;
	int link;
	uint32_t maxpar; /* --max-parallelism */
	const char *rows; /* --rows */
	char **clear;     /* --clear */
	size_t nclear;
	int canonical;   /* --canonical */
	struct ckpt_flink_offset_set *offsets; /* --set-offset */
	size_t noffsets;
	const char *source; /* --source */
};

static struct ckpt_graph *load_graph(const char *path, struct ckpt_err *e);

enum { OPT_UID = 256, OPT_DROP, OPT_RELOCATE, OPT_LINK, OPT_MAXPAR, OPT_ROWS, OPT_CLEAR, OPT_CANONICAL, OPT_SETOFF,
       OPT_SOURCE, OPT_ADDPART, OPT_RMPART };

/* The options of ckpt_flink_offset_set's kinds. */
static const char *const offset_opt[] = {"--set-offset", "--add-partition", "--remove-partition"};

/* --uid OLD=NEW, --drop X, --relocate OLD=NEW: split at the first '='. */
static void
parse_edit(struct merge_opts *o, int c, char *arg)
{
	static const char *const names[] = {"--uid", "--drop", "--relocate"};
	struct ckpt_flink_edit *ed;
	char *eq = c == OPT_DROP ? NULL : strchr(arg, '=');

	if (c != OPT_DROP && (eq == NULL || eq == arg || eq[1] == '\0'))
		cli_usage_fail("%s %s: give %s", names[c - OPT_UID], arg,
			       c == OPT_UID ? "OLD=NEW (a uid or operator id, and the new uid)" :
			       "OLDPREFIX=NEWPREFIX");
	if (c == OPT_DROP && *arg == '\0')
		cli_usage_fail("--drop: name an operator by its uid or id");
	if ((ed = realloc(o->edits, (o->nedits + 1) * sizeof *ed)) == NULL)
		cli_out_of_memory();
	o->edits = ed;
	ed += o->nedits++;
	ed->kind = c == OPT_UID ? CKPT_FLINK_UID : c == OPT_DROP ? CKPT_FLINK_DROP : CKPT_FLINK_RELOCATE;
	ed->from = arg;
	ed->to = NULL;
	if (eq) {
		*eq = '\0';
		ed->to = eq + 1;
	}
}

/* --set-offset and --add-partition TOPIC:PARTITION=OFFSET, --remove-partition TOPIC:PARTITION (the
 * last ':' before the last '='; Kafka's topic names hold neither). */
static void
parse_setoff(struct merge_opts *o, char *arg, enum ckpt_flink_offset_kind kind)
{
	static const struct { const char *name; int64_t v; } sentinel[] = {
		{"earliest", -2}, {"latest", -1}, {"committed", -3}};
	const char *opt = offset_opt[kind];
	struct ckpt_flink_offset_set *x;
	char *eq = kind == CKPT_OFFSET_REMOVE ? arg + strlen(arg) : strrchr(arg, '='), *colon, *end, *text = strdup(arg);
	long long v;
	long p;

	if (text == NULL)
		cli_out_of_memory();
	if (eq == NULL || (*eq = '\0', colon = strrchr(arg, ':')) == NULL || colon == arg)
		cli_usage_fail("%s %s: give TOPIC:PARTITION%s", opt, text, kind == CKPT_OFFSET_REMOVE ? "" : "=OFFSET");
	*colon = '\0';
	errno = 0;
	p = strtol(colon + 1, &end, 10);
	if (!isdigit((unsigned char)colon[1]) || *end || errno || p > INT32_MAX)
		cli_usage_fail("%s %s: the partition must be a number from 0 to %d", opt, text, INT32_MAX);
	if ((x = realloc(o->offsets, (o->noffsets + 1) * sizeof *x)) == NULL)
		cli_out_of_memory();
	o->offsets = x;
	x += o->noffsets++;
	*x = (struct ckpt_flink_offset_set){.topic = arg, .partition = (int32_t)p, .text = text, .kind = kind};
	for (size_t i = 0; kind != CKPT_OFFSET_REMOVE && i < sizeof sentinel / sizeof *sentinel; i++)
		if (strcmp(eq + 1, sentinel[i].name) == 0) {
			x->value = sentinel[i].v;
			return;
		}
	if (kind == CKPT_OFFSET_REMOVE)
		return;
	x->rel = eq[1] == '+' || eq[1] == '-';
	if (x->rel && kind == CKPT_OFFSET_ADD)
		cli_usage_fail("--add-partition %s: a partition added has no offset to count from: give a number, earliest, "
			       "latest or committed", text);
	errno = 0;
	v = strtoll(eq + 1 + x->rel, &end, 10);
	if (!isdigit((unsigned char)eq[1 + x->rel]) || *end || errno)
		cli_usage_fail("%s %s: the offset must be a number, earliest, latest, committed, +N or -N", opt, text);
	x->value = eq[1] == '-' ? -v : v;
}

/* Does -o name a directory (a trailing '/')? */
static int
dir_output(const char *out)
{
	size_t n = strlen(out);

	return n > 0 && out[n - 1] == '/';
}

/* --rows FILE and --clear: the rows read (before the savepoint is), into wo. */
static int
read_rows(const struct merge_opts *o, struct ckpt_flink_write_opts *wo, struct ckpt_err *e)
{
	int in = o->rows && strcmp(o->rows, "-") == 0;
	FILE *f = o->rows == NULL ? fopen("/dev/null", "r") : in ? stdin : fopen(o->rows, "r");

	if (f == NULL)
		return ckpt_err_sys(e, o->rows, "cannot open");
	if (o->rows)
		cli_mapped_input(in ? "<stdin>" : o->rows);
	wo->rows = ckpt_flink_rows_read(f, in ? "<stdin>" : o->rows ? o->rows : "", e);
	if (f != stdin)
		fclose(f);
	for (size_t i = 0; wo->rows && i < o->nclear; i++)
		if (ckpt_flink_rows_clear(wo->rows, o->clear[i], e) < 0)
			return -1;
	return wo->rows ? 0 : -1;
}

/* -o DIR/ of a Flink snapshot: the savepoint written again, edited, as a new directory. */
static int
savepoint(struct merge_opts *o, const char *in)
{
	struct ckpt_flink_write_opts wo = {.edits = o->edits, .nedits = o->nedits, .link = o->link,
					   .allow_non_restored = o->ro.allow_non_restored, .max_parallelism = o->maxpar,
					   .canonical = o->canonical, .offsets = o->offsets, .noffsets = o->noffsets,
					   .source = o->source, .parallelism = o->ro.parallelism, .per_op = o->par,
					   .nper_op = o->ro.nper_op};
	const char *what = o->noffsets ? offset_opt[o->offsets[0].kind] : o->nedits || o->link ? "--uid, --drop, --relocate and --link" :
			   o->rows || o->nclear ? "--rows and --clear" : o->canonical ? "--canonical" : "--max-parallelism";
	struct ckpt_err e = {0};
	struct ckpt_graph *g = NULL;
	struct stat st;
	int rc = -1;

	if (in == NULL || strcmp(in, "-") == 0)
		cli_usage_fail("%s need%s the savepoint (its directory or its _metadata), not standard input", what,
			       (o->nedits || o->link || o->rows || o->nclear) && !o->noffsets ? "" : "s");
	if (stat(in, &st) == 0 && !ckpt_snapshot_is_flink(in)) {
		ckpt_err_set(&e, CKPT_ERR_INPUT, in, "not a Flink snapshot: %s %s Flink %s only", what,
			     o->noffsets ? "writes" : o->nedits || o->link ? "edit" : o->rows || o->nclear ? "write" :
			     o->canonical ? "converts" : "rewrites", o->canonical ? "snapshots" : "savepoints");
		goto out;
	}
	if ((o->rows || o->nclear) && read_rows(o, &wo, &e) < 0)
		goto out;
	if (o->graph && (g = load_graph(o->graph, &e)) == NULL)
		goto out;
	wo.graph = g;
	rc = ckpt_flink_savepoint_write(in, o->savepoint, &wo, &e);
out:
	if (rc < 0)
		cli_error(&e);
	ckpt_graph_free(g);
	ckpt_flink_rows_free(wo.rows);
	return rc < 0 ? ckpt_err_status(&e) : 0;
}

/* num as a decimal number from 1 to most, or 0 when it is not one. */
static uint32_t
count_of(const char *num, unsigned long most)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(num, &end, 10);
	return isdigit((unsigned char)*num) && *end == '\0' && errno == 0 && n >= 1 && n <= most ? (uint32_t)n : 0;
}

/* -P N or -P OPERATOR=N; OPERATOR may itself hold '=', N is after the last one. */
static void
parse_par(struct merge_opts *o, char *arg)
{
	char *eq = strrchr(arg, '='), *num = eq ? eq + 1 : arg;
	uint32_t n = count_of(num, CKPT_PARALLELISM_LIMIT);

	if (n == 0)
		cli_usage_fail("-P %s: the parallelism must be a number from 1 to %u", arg,
			       CKPT_PARALLELISM_LIMIT);
	o->rescale = 1;
	if (eq == NULL) {
		o->ro.parallelism = n;
		return;
	}
	if (eq == arg)
		cli_usage_fail("-P %s: no operator named", arg);
	*eq = '\0';
	o->par = realloc(o->par, (o->ro.nper_op + 1) * sizeof *o->par);
	if (o->par == NULL)
		cli_out_of_memory();
	o->par[o->ro.nper_op].op = arg;
	o->par[o->ro.nper_op++].n = n;
	o->ro.per_op = o->par;
}

/* --max-parallelism N: Flink's bounds, 1 to 32768 (KeyGroupRangeAssignment.UPPER_BOUND_MAX_PARALLELISM). */
static uint32_t
parse_maxpar(const char *arg)
{
	uint32_t n = count_of(arg, 32768);

	if (n == 0)
		cli_usage_fail("--max-parallelism %s: the max parallelism must be a number from 1 to 32768", arg);
	return n;
}

static struct ckpt_graph *
load_graph(const char *path, struct ckpt_err *e)
{
	struct ckpt_jdoc *doc = ckpt_jdoc_load(path, e);
	struct ckpt_graph *g = doc ? ckpt_graph_from_json(doc, e) : NULL;

	ckpt_jdoc_free(doc);
	return g;
}

static int
redist_fill(void *arg, struct ckpt_operator *op, struct ckpt_subtask *st, struct ckpt_err *e)
{
	return ckpt_redist_fill(arg, op, st, e);
}

static void
redist_drop(void *arg, struct ckpt_subtask *st)
{
	(void)arg;
	ckpt_redist_release(st);
}

/* Move the entries one new subtask at a time into the streaming writer. */
static int
write_stream(struct ckpt_redist *r, const char *out, int kind, struct ckpt_err *e)
{
	return ckpt_snapshot_write_with(ckpt_redist_snapshot(r), out, (enum ckpt_archive_kind)kind, redist_fill,
					redist_drop, r, e);
}

static int
print_result(struct ckpt_redist *r, int flink, struct ckpt_err *e)
{
	json_t *v;
	int rc;

	if (flink)
		v = ckpt_redist_to_json(r, e);
	else
		v = ckpt_redist_fill_all(r, e) < 0 ? NULL : ckpt_snapshot_to_json(ckpt_redist_snapshot(r), e);
	if (v == NULL)
		return -1;
	rc = cli_print_json(v);
	json_decref(v);
	if (rc < 0)
		ckpt_err_sys(e, "stdout", "write error");
	return rc;
}

/* Rescale mode: plan, then print the state document, the assignment, or write the archive. */
static int
rescale(struct merge_opts *o, const char *in)
{
	struct ckpt_err e = {0};
	struct ckpt_graph *g = NULL;
	struct ckpt_snapshot *s = NULL;
	struct ckpt_redist *r = NULL;
	int kind = o->out ? ckpt_archive_kind_of(o->out) : 0, flink, rc = -1;

	if (o->out && kind < 0)
		cli_usage_fail("%s: name the archive .tar, .tar.gz, .tgz or .zip, or end it with / for a directory",
			       o->out);
	if (o->out && same_file(in, o->out))
		cli_usage_fail("%s: the output would overwrite the input", o->out);
	if (o->graph && (g = load_graph(o->graph, &e)) == NULL)
		goto out;
	o->ro.graph = g;
	o->ro.name = in && strcmp(in, "-") != 0 ? in : "<stdin>";
	o->ro.reopen = in && strcmp(in, "-") != 0 ? in : NULL;
	if ((s = ckpt_snapshot_open(in, &e)) == NULL)
		goto out;
	flink = ckpt_snapshot_is_flink_meta(s);
	if (o->out && flink_unwritable(s, o->ro.name, 1, &e) < 0)
		goto out;
	if ((r = ckpt_redist_plan(s, &o->ro, &e)) == NULL)
		goto out;
	for (size_t i = 0; ckpt_redist_warning(r, i); i++)
		cli_warn("%s: %s", o->ro.name, ckpt_redist_warning(r, i));
	rc = o->out ? write_stream(r, o->out, kind, &e) : print_result(r, flink, &e);
out:
	if (rc < 0)
		cli_error(&e);
	ckpt_redist_free(r);
	ckpt_snapshot_free(s);
	ckpt_graph_free(g);
	return rc < 0 ? ckpt_err_status(&e) : 0;
}

static const struct option longopts[] = {
	{"parallelism", required_argument, NULL, 'P'},
	{"graph", required_argument, NULL, 'g'},
	{"allow-non-restored-state", no_argument, NULL, 'n'},
	{"output", required_argument, NULL, 'o'},
	{"uid", required_argument, NULL, OPT_UID},
	{"drop", required_argument, NULL, OPT_DROP},
	{"relocate", required_argument, NULL, OPT_RELOCATE},
	{"link", no_argument, NULL, OPT_LINK},
	{"max-parallelism", required_argument, NULL, OPT_MAXPAR},
	{"rows", required_argument, NULL, OPT_ROWS},
	{"clear", required_argument, NULL, OPT_CLEAR},
	{"canonical", no_argument, NULL, OPT_CANONICAL},
	{"set-offset", required_argument, NULL, OPT_SETOFF},
	{"source", required_argument, NULL, OPT_SOURCE},
	{"add-partition", required_argument, NULL, OPT_ADDPART},
	{"remove-partition", required_argument, NULL, OPT_RMPART},
	CLI_COMMON_LONGOPTS,
};

/* The options into o. */
static void
parse_options(struct merge_opts *o, int argc, char **argv)
{
	int c;

	while ((c = cli_getopt(argc, argv, ":hVpP:g:no:", longopts, usage)) != -1) {
		switch (c) {
		case 'P':
			parse_par(o, optarg);
			break;
		case 'g':
			o->graph = optarg;
			break;
		case 'n':
			o->ro.allow_non_restored = 1;
			break;
		case 'o':
			o->out = optarg;
			break;
		case OPT_UID: /* fall through */
		case OPT_DROP: /* fall through */
		case OPT_RELOCATE:
			parse_edit(o, c, optarg);
			break;
		case OPT_LINK:
			o->link = 1;
			break;
		case OPT_MAXPAR:
			o->maxpar = parse_maxpar(optarg);
			break;
		case OPT_ROWS:
			if (o->rows)
				cli_usage_fail("--rows: one file of rows at most");
			o->rows = optarg;
			break;
		case OPT_CLEAR:
			if (*optarg == '\0')
				cli_usage_fail("--clear: name a keyed state");
			if ((o->clear = realloc(o->clear, (o->nclear + 1) * sizeof *o->clear)) == NULL)
				cli_out_of_memory();
			o->clear[o->nclear++] = optarg;
			break;
		case OPT_CANONICAL:
			o->canonical = 1;
			break;
		case OPT_SETOFF: /* fall through */
		case OPT_ADDPART: /* fall through */
		case OPT_RMPART:
			parse_setoff(o, optarg, c == OPT_SETOFF ? CKPT_OFFSET_SET : c == OPT_ADDPART ? CKPT_OFFSET_ADD :
				     CKPT_OFFSET_REMOVE);
			break;
		case OPT_SOURCE:
			o->source = optarg;
			break;
		default:
			cli_bad_option(c, argv);
		}
	}
}

/* What goes with what, checked in this order; *in the input (NULL: stdin), o's savepoint set. */
static void
check_options(struct merge_opts *o, int argc, char **argv, const char **in)
{
	if (argc - optind > 1)
		cli_usage_fail("one input at most");
	cli_no_input(argc - optind, usage);
	if (o->graph && o->rescale)
		cli_usage_fail("-P and -g exclude each other: the graph gives the parallelism");
	if (o->ro.allow_non_restored && !o->graph)
		cli_usage_fail("-n needs -g");
	*in = optind < argc ? argv[optind] : NULL;
	/* A Flink savepoint written to DIR/ stays a Flink savepoint (edited or not); edits need that. */
	if (o->out && dir_output(o->out) &&
	    (o->noffsets || o->nedits || o->link || o->maxpar || o->rows || o->nclear || o->canonical ||
	     ckpt_snapshot_is_flink(*in)))
		o->savepoint = o->out;
	if (o->savepoint) {
		size_t n = strlen(o->out);

		while (n > 1 && o->out[n - 1] == '/')
			n--;
		if ((o->savepoint = o->sp_dir = strndup(o->out, n)) == NULL)
			cli_out_of_memory();
	}
	if ((o->nedits || o->link) && !o->savepoint)
		cli_usage_fail("--uid, --drop, --relocate and --link write a Flink savepoint: give -o DIR/");
	if (o->source && !o->noffsets)
		cli_usage_fail("--source needs --set-offset, --add-partition or --remove-partition");
	if (o->noffsets && !o->savepoint)
		cli_usage_fail("%s writes a Flink savepoint: give -o DIR/", offset_opt[o->offsets[0].kind]);
	if (o->noffsets && (o->rows || o->nclear || o->maxpar || o->canonical || o->rescale || o->graph))
		cli_usage_fail("%s goes with --uid, --drop, --relocate and --link only", offset_opt[o->offsets[0].kind]);
	if (o->maxpar && !o->savepoint)
		cli_usage_fail("--max-parallelism writes a Flink savepoint: give -o DIR/");
	if ((o->rows || o->nclear) && !o->savepoint)
		cli_usage_fail("--rows and --clear write a Flink savepoint: give -o DIR/");
	if (o->canonical && !o->savepoint)
		cli_usage_fail("--canonical writes a Flink savepoint: give -o DIR/");
	if (o->savepoint && o->rescale && !(o->maxpar || o->canonical || o->rows || o->nclear))
		cli_usage_fail("-P alone writes no Flink savepoint: Flink rescales one on restore (to split its "
			       "keyed state at the new parallelism now, add --canonical)");
	/* KeyGroupRangeAssignment's precondition, checked before anything is read */
	if (o->maxpar && o->ro.parallelism > o->maxpar)
		cli_usage_fail("-P %u is above --max-parallelism %u (Flink: Maximum parallelism must not be smaller "
			       "than parallelism.)", o->ro.parallelism, o->maxpar);
	for (size_t i = 0; o->maxpar && i < o->ro.nper_op; i++)
		if (o->par[i].n > o->maxpar)
			cli_usage_fail("-P %s=%u is above --max-parallelism %u (Flink: Maximum parallelism must not be "
				       "smaller than parallelism.)", o->par[i].op, o->par[i].n, o->maxpar);
}

int
main(int argc, char **argv)
{
	struct merge_opts o = {0};
	const char *in;
	int status;

	cli_init("ckpt-merge");
	cli_progress();
	cli_clean_on_signals();
	parse_options(&o, argc, argv);
	check_options(&o, argc, argv, &in);
	if (o.savepoint)
		status = savepoint(&o, in);
	else
		status = o.rescale || o.graph ? rescale(&o, in) : pack(in, o.out);
	free(o.par);
	free(o.edits);
	free(o.sp_dir);
	free(o.clear);
	for (size_t i = 0; i < o.noffsets; i++)
		free((char *)o.offsets[i].text);
	free(o.offsets);
	return cli_finish(status);
}
