/* ckpt-run: run a pipeline on threads with checkpoints, failover and savepoints; events as NDJSON. */
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static volatile int stop_flag, cancel_flag;
static long long kill_after, nevents; /* -K: testing recovery after a crash */

static void
usage(FILE *f)
{
	fprintf(f, "usage: ckpt-run [-p] [--restore ARCHIVE [--allow-non-restored-state]] [--dir DIR]\n"
	       "                [--savepoint PATH] [--stop-after-ms MS] [--stop-after-checkpoints N] [--drain]\n"
	       "                PIPELINE\n"
	       "       ckpt-run [-p] [-L LOGDIR | --recover LOGDIR] [-B PARTDIR] [-K N] PIPELINE\n"
	       "options:\n"
	       "      --restore=ARCHIVE start from the snapshot ARCHIVE\n"
	       "      --allow-non-restored-state\n"
	       "                        with --restore: drop state no operator takes\n"
	       "      --dir=DIR         the checkpoint directory\n"
	       "      --savepoint=PATH  where the stop savepoint goes\n"
	       "      --stop-after-ms=MS\n"
	       "                        stop with a savepoint after MS milliseconds\n"
	       "      --stop-after-checkpoints=N\n"
	       "                        stop with a savepoint after N completed checkpoints\n"
	       "      --drain           stop with drain\n"
	       "  -L, --log=LOGDIR      batch mode: write the job event log to LOGDIR\n"
	       "      --recover=LOGDIR  batch mode: recover from the log in LOGDIR\n"
	       "  -B, --partitions=DIR  batch mode: where blocking partitions go\n"
	       "  -K, --kill-after=N    testing: SIGKILL after N events\n"
	       "  -p, --pretty          indented events\n"
	       "  -h, --help            this help\n"
	       "  -V, --version         the version\n");
}

enum { OPT_RESTORE = 256, OPT_ALLOW, OPT_DIR, OPT_SAVEPOINT, OPT_STOP_MS, OPT_STOP_CPS, OPT_DRAIN, OPT_RECOVER };

/* The letters these options had before ckpt(7)'s table gave them to others: still theirs for a
 * release, with a warning; any other c as it is. */
static int
old_letter(int c)
{
	static const struct { char c; int opt; const char *now, *next; } old[] = {
		{'r', OPT_RESTORE, "--restore", NULL},
		{'a', OPT_ALLOW, "--allow-non-restored-state", NULL},
		{'d', OPT_DIR, "--dir", NULL},
		{'o', OPT_SAVEPOINT, "--savepoint", NULL},
		{'s', OPT_STOP_MS, "--stop-after-ms", NULL},
		{'n', OPT_STOP_CPS, "--stop-after-checkpoints", "--allow-non-restored-state"},
		{'D', OPT_DRAIN, "--drain", NULL},
		{'R', OPT_RECOVER, "--recover", NULL},
	};
	static const char *const name[] = {"-r", "-a", "-d", "-o", "-s", "-n", "-D", "-R"};

	for (size_t i = 0; i < sizeof old / sizeof old[0]; i++)
		if (c == old[i].c) {
			cli_moved(name[i], old[i].now, old[i].next);
			return old[i].opt;
		}
	return c;
}

static void
on_signal(int sig)
{
	if (sig == SIGTERM)
		stop_flag++; /* each signal is a new stop-with-savepoint request */
	else
		cancel_flag = 1;
}

static void
print_event(void *arg, const json_t *ev)
{
	(void)arg;
	cli_print_json(ev);
	fflush(stdout);
	if (kill_after > 0 && ++nevents == kill_after)
		raise(SIGKILL); /* -K: die as kill -9 would, right after this event */
}

/* CKPT_VERIFY_SNAPSHOTS=1: an archive that reads back other than written ends the program at once. */
static _Noreturn void
unverified(void *arg, const char *why)
{
	(void)arg;
	cli_warn("CKPT_VERIFY_SNAPSHOTS: %s", why);
	_exit(2);
}

static long long
number(const char *s, const char *what)
{
	char *end;
	long long x = strtoll(s, &end, 10);

	if (*s == '\0' || *end != '\0' || x < 0)
		cli_usage_fail("%s must be a non-negative integer: %s", what, s);
	return x;
}

static const struct option longopts[] = {
	{"restore", required_argument, NULL, OPT_RESTORE},
	{"allow-non-restored-state", no_argument, NULL, OPT_ALLOW},
	{"dir", required_argument, NULL, OPT_DIR},
	{"savepoint", required_argument, NULL, OPT_SAVEPOINT},
	{"stop-after-ms", required_argument, NULL, OPT_STOP_MS},
	{"stop-after-checkpoints", required_argument, NULL, OPT_STOP_CPS},
	{"drain", no_argument, NULL, OPT_DRAIN},
	{"log", required_argument, NULL, 'L'},
	{"recover", required_argument, NULL, OPT_RECOVER},
	{"partitions", required_argument, NULL, 'B'},
	{"kill-after", required_argument, NULL, 'K'},
	CLI_COMMON_LONGOPTS,
};

/* The options into o (-K into kill_after). */
static void
parse_options(struct ckpt_run_opts *o, int argc, char **argv)
{
	int c;

	/* -a -D -r -d -o -s -n -R: letters ckpt(7) gives to other options, kept for a release */
	while ((c = cli_getopt(argc, argv, ":hVpL:B:K:aDr:d:o:s:n:R:", longopts, usage)) != -1) {
		c = old_letter(c);
		switch (c) {
		case OPT_DRAIN:
			o->drain = 1;
			break;
		case OPT_ALLOW:
			o->allow_non_restored = 1;
			break;
		case OPT_RESTORE:
			o->restore = optarg;
			break;
		case OPT_DIR:
			o->dir = optarg;
			break;
		case OPT_SAVEPOINT:
			o->savepoint = optarg;
			break;
		case OPT_STOP_MS:
			o->stop_after_ms = number(optarg, "--stop-after-ms");
			break;
		case OPT_STOP_CPS:
			o->stop_after_cps = number(optarg, "--stop-after-checkpoints");
			break;
		case 'L':
			o->log = optarg;
			o->recover = 0;
			break;
		case OPT_RECOVER:
			o->log = optarg;
			o->recover = 1;
			break;
		case 'B':
			o->partitions = optarg;
			break;
		case 'K':
			kill_after = number(optarg, "-K");
			break;
		default:
			cli_bad_option(c, argv);
		}
	}
}

/* SIGTERM and SIGINT stop the job (on_signal); a closed pipe is a failed write, not a signal. */
static void
catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int
main(int argc, char **argv)
{
	struct ckpt_run_opts o = {0};
	struct ckpt_err e = {0};
	struct ckpt_pipeline *p;
	int status = 0;

	cli_init("ckpt-run");
	cli_pretty = 0;
	parse_options(&o, argc, argv);
	if (argc - optind != 1)
		cli_usage_fail("one pipeline file expected");
	catch_signals();
	o.stop = &stop_flag;
	o.cancel = &cancel_flag;
	o.event = print_event;
	if (getenv("CKPT_VERIFY_SNAPSHOTS") && strcmp(getenv("CKPT_VERIFY_SNAPSHOTS"), "1") == 0)
		o.unverified = unverified;
	p = ckpt_pipeline_load(argv[optind], &e);
	if (p == NULL || ckpt_pipeline_run(p, &o, &e) < 0) {
		cli_error(&e);
		status = ckpt_err_status(&e);
	}
	ckpt_pipeline_free(p);
	return cli_finish(status);
}
