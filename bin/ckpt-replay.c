/* ckpt-replay: replay a job event log (FLIP-383) into a recovery plan; dump, append to or copy the log. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

enum mode { PLAN, EVENTS, WRITE, REPAIR };
enum { OPT_AVAILABLE = 256, OPT_REPAIR }; /* long options without a letter */

struct opts {
	enum mode mode;
	const char *graph, *available, *out, *dir;
};

static void
usage(FILE *f)
{
	fprintf(f, "usage: ckpt-replay [-p] [-g GRAPH] [--available AVAILABLE] LOGDIR\n"
	       "       ckpt-replay -e LOGDIR\n"
	       "       ckpt-replay -w LOGDIR < events.ndjson\n"
	       "       ckpt-replay --repair OUT LOGDIR\n"
	       "options:\n"
	       "  -g, --graph=GRAPH     the job graph (default: built from the log)\n"
	       "      --available=FILE  the partitions that still exist, a JSON array of ids\n"
	       "  -e, --events          print the log's records as NDJSON\n"
	       "  -w, --write           append the NDJSON events of stdin to the log\n"
	       "      --repair=OUT      copy the log to the new directory OUT, torn tail cut off\n"
	       "  -p, --pretty          indented JSON\n"
	       "  -h, --help            this help\n"
	       "  -V, --version         the version\n");
}

/* Say what reading the log passed over: a gap, and (for -e) a torn tail. */
static void
warn_log(const char *dir, const struct ckpt_evlog_stats *st, int torn)
{
	if (st->ignored > 0)
		cli_warn("%s: events.%u is missing: %u later segment%s ignored", dir, st->gap, st->ignored,
			 st->ignored == 1 ? "" : "s");
	if (torn && st->torn_bytes > 0)
		cli_warn("%s/events.%u: offset %llu: torn record of %llu bytes ignored%s", dir, st->torn_segment,
			 (unsigned long long)st->torn_offset, (unsigned long long)st->torn_bytes,
			 st->torn_tails > 1 ? " (and torn tails of later segments)" : "");
}

static int
fail(const struct ckpt_err *e)
{
	cli_error(e);
	return ckpt_err_status(e);
}

static int
run_plan(const struct opts *o)
{
	struct ckpt_replay_opts ro = {0};
	struct ckpt_jdoc *gdoc = NULL, *adoc = NULL;
	struct ckpt_graph *g = NULL;
	struct ckpt_replay plan;
	struct ckpt_err e = {0};
	json_t *j = NULL;
	int status = 0;

	if (o->graph && ((gdoc = ckpt_jdoc_load(o->graph, &e)) == NULL ||
			 (g = ckpt_graph_from_json(gdoc, &e)) == NULL))
		goto fail;
	if (o->available && (adoc = ckpt_jdoc_load(o->available, &e)) == NULL)
		goto fail;
	ro.graph = g;
	ro.available = adoc;
	if (ckpt_replay_run(o->dir, &ro, &plan, &e) < 0)
		goto fail;
	warn_log(o->dir, &plan.log, 0);
	j = ckpt_replay_to_json(&plan);
	ckpt_replay_release(&plan);
	if (j == NULL)
		cli_out_of_memory();
	if (cli_print_json(j) < 0)
		status = 2;
	goto out;
fail:
	status = fail(&e);
out:
	json_decref(j);
	ckpt_graph_free(g);
	ckpt_jdoc_free(gdoc);
	ckpt_jdoc_free(adoc);
	return status;
}

static int
run_events(const struct opts *o)
{
	struct ckpt_err e = {0};
	struct ckpt_evreader *r = ckpt_evreader_open(o->dir, &e);
	struct ckpt_event ev;
	int k;

	if (r == NULL)
		return fail(&e);
	while ((k = ckpt_evreader_next(r, &ev, &e)) > 0) {
		if (ckpt_event_print(stdout, &ev) < 0 || fflush(stdout) == EOF)
			break;
	}
	if (k < 0) {
		ckpt_evreader_free(r);
		return fail(&e);
	}
	warn_log(o->dir, ckpt_evreader_stats(r), 1);
	ckpt_evreader_free(r);
	return 0;
}

/* Is the line only white space? */
static int
blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strchr(" \t\r\n", s[i]))
			return 0;
	return 1;
}

static int
run_write(const struct opts *o)
{
	struct ckpt_err e = {0};
	struct ckpt_evwriter *w = NULL;
	struct ckpt_evparser *ps = ckpt_evparser_new(&e);
	struct ckpt_event ev;
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t n;
	int status = 0;

	setvbuf(stdin, NULL, _IOFBF, 1 << 20);
	if (ps == NULL || (w = ckpt_evwriter_open(o->dir, CKPT_EVW_WHOLE, &e)) == NULL)
		goto fail;
	while ((n = getline(&line, &cap, stdin)) >= 0) {
		const char *at = NULL;

		lineno++;
		if (blank(line, (size_t)n))
			continue;
		if (ckpt_evparser_line(ps, line, (size_t)n, &ev, &at, &e) < 0) {
			char where[64], text[sizeof e.text];

			memcpy(text, e.text, sizeof text);
			snprintf(where, sizeof where, "<stdin>:%zu:%zu", lineno, at ? (size_t)(at - line) + 1 : 1);
			ckpt_err_set(&e, CKPT_ERR_INPUT, where, "%s", text);
			goto fail;
		}
		if (ckpt_evwriter_append(w, ev.type, ev.payload, ev.len, &e) < 0)
			goto fail;
	}
	if (ferror(stdin)) {
		ckpt_err_sys(&e, "<stdin>", "read error");
		goto fail;
	}
	status = ckpt_evwriter_close(w, &e) < 0 ? fail(&e) : 0;
	w = NULL;
	goto out;
fail:
	status = fail(&e);
out:
	ckpt_evwriter_abort(w);
	ckpt_evparser_free(ps);
	free(line);
	return status;
}

static int
run_repair(const struct opts *o)
{
	struct ckpt_err e = {0};
	struct ckpt_evlog_stats st;

	if (ckpt_evlog_copy(o->dir, o->out, &st, &e) < 0)
		return fail(&e);
	warn_log(o->dir, &st, 0);
	return 0;
}

static void
set_mode(struct opts *o, enum mode m)
{
	if (o->mode != PLAN && o->mode != m)
		cli_usage_fail("-e, -w and --repair exclude each other");
	o->mode = m;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"graph", required_argument, NULL, 'g'}, {"available", required_argument, NULL, OPT_AVAILABLE},
		{"events", no_argument, NULL, 'e'},      {"write", no_argument, NULL, 'w'},
		{"repair", required_argument, NULL, OPT_REPAIR},
		CLI_COMMON_LONGOPTS,
	};
	struct opts o = {0};
	int c;

	cli_init("ckpt-replay");
	/* -a, -R: letters ckpt(7) gives to other options, kept for a release */
	while ((c = cli_getopt(argc, argv, ":hVpg:ewa:R:", longopts, usage)) != -1) {
		switch (c) {
		case 'g':
			o.graph = optarg;
			break;
		case 'a':
			cli_moved("-a", "--available", NULL);
			/* fall through */
		case OPT_AVAILABLE:
			o.available = optarg;
			break;
		case 'e':
			set_mode(&o, EVENTS);
			break;
		case 'w':
			set_mode(&o, WRITE);
			break;
		case 'R':
			cli_moved("-R", "--repair", NULL);
			/* fall through */
		case OPT_REPAIR:
			set_mode(&o, REPAIR);
			o.out = optarg;
			break;
		default:
			cli_bad_option(c, argv);
		}
	}
	if (argc - optind != 1)
		cli_usage_fail(argc == optind ? "missing LOGDIR" : "too many operands");
	if (o.mode != PLAN && (o.graph || o.available))
		cli_usage_fail("-g and --available apply to the recovery plan only");
	o.dir = argv[optind];
	if (strstr(o.dir, "://")) { /* an S3 prefix: named as the library names it, without a final '/' */
		size_t n = strlen(o.dir), min = (size_t)(strstr(o.dir, "://") - o.dir) + 4;

		while (n > min && o.dir[n - 1] == '/')
			argv[optind][--n] = '\0';
	}
	if (o.mode != EVENTS || !isatty(STDOUT_FILENO))
		cli_progress(); /* -e to the terminal shows the records themselves */
	switch (o.mode) {
	case EVENTS:
		return cli_finish(run_events(&o));
	case WRITE:
		return cli_finish(run_write(&o));
	case REPAIR:
		return cli_finish(run_repair(&o));
	default:
		return cli_finish(run_plan(&o));
	}
}
