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
usage(void)
{
	printf("usage: ckpt-run [-paD] [-r ARCHIVE] [-d DIR] [-o SAVEPOINT] [-s MS] [-n N] PIPELINE\n"
	       "       ckpt-run [-p] [-L LOGDIR | -R LOGDIR] [-B PARTDIR] [-K N] PIPELINE\n"
	       "options:\n"
	       "  -r, --restore=ARCHIVE start from the snapshot ARCHIVE\n"
	       "  -a, --allow-non-restored-state\n"
	       "                        with -r: drop state no operator takes\n"
	       "  -d, --dir=DIR         the checkpoint directory\n"
	       "  -o, --savepoint=PATH  where the stop savepoint goes\n"
	       "  -s, --stop-after-ms=MS\n"
	       "                        stop with a savepoint after MS milliseconds\n"
	       "  -n, --stop-after-checkpoints=N\n"
	       "                        stop with a savepoint after N completed checkpoints\n"
	       "  -D, --drain           stop with drain\n"
	       "  -L, --log=LOGDIR      batch mode: write the job event log to LOGDIR\n"
	       "  -R, --recover=LOGDIR  batch mode: recover from the log in LOGDIR\n"
	       "  -B, --partitions=DIR  batch mode: where blocking partitions go\n"
	       "  -K, --kill-after=N    testing: SIGKILL after N events\n"
	       "  -p, --pretty          indented events\n"
	       "  -h, --help            this help\n"
	       "  -V, --version         the version\n");
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

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"restore", required_argument, NULL, 'r'},
		{"allow-non-restored-state", no_argument, NULL, 'a'},
		{"dir", required_argument, NULL, 'd'},
		{"savepoint", required_argument, NULL, 'o'},
		{"stop-after-ms", required_argument, NULL, 's'},
		{"stop-after-checkpoints", required_argument, NULL, 'n'},
		{"drain", no_argument, NULL, 'D'},
		{"log", required_argument, NULL, 'L'},
		{"recover", required_argument, NULL, 'R'},
		{"partitions", required_argument, NULL, 'B'},
		{"kill-after", required_argument, NULL, 'K'},
		{"pretty", no_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	struct ckpt_run_opts o = {0};
	struct ckpt_err e = {0};
	struct ckpt_pipeline *p;
	struct sigaction sa;
	int c, status = 0;

	cli_init("ckpt-run");
	cli_pretty = 0;
	while ((c = getopt_long(argc, argv, ":hVpaDr:d:o:s:n:L:R:B:K:", longopts, NULL)) != -1) {
		if (cli_common_option(c, usage))
			continue;
		switch (c) {
		case 'D':
			o.drain = 1;
			break;
		case 'a':
			o.allow_non_restored = 1;
			break;
		case 'r':
			o.restore = optarg;
			break;
		case 'd':
			o.dir = optarg;
			break;
		case 'o':
			o.savepoint = optarg;
			break;
		case 's':
			o.stop_after_ms = number(optarg, "-s");
			break;
		case 'n':
			o.stop_after_cps = number(optarg, "-n");
			break;
		case 'L':
			o.log = optarg;
			o.recover = 0;
			break;
		case 'R':
			o.log = optarg;
			o.recover = 1;
			break;
		case 'B':
			o.partitions = optarg;
			break;
		case 'K':
			kill_after = number(optarg, "-K");
			break;
		default:
			cli_bad_option(c, argv);
		}
	}
	if (argc - optind != 1)
		cli_usage_fail("one pipeline file expected");
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
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
