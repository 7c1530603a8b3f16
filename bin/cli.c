/* cli.c: diagnostics, usage errors and output shared by the ckpt front ends. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

const char *cli_prog = "ckpt";
int cli_pretty = -1;

static void progress_clear(void);

void
cli_init(const char *prog)
{
	cli_prog = prog;
	opterr = 0; /* cli_bad_option says it, in one line */
}

static void
on_fatal(int sig)
{
	sigset_t set;

	ckpt_cleanup_signal();
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
}

void
cli_clean_on_signals(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};

	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		struct sigaction old, sa;

		if (sigaction(sigs[i], NULL, &old) < 0 || old.sa_handler == SIG_IGN) /* nohup, or a job in & */
			continue;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_fatal;
		sigemptyset(&sa.sa_mask);
		sigaction(sigs[i], &sa, NULL);
	}
}

static char bus_line[512];
static size_t bus_len;

static void
on_bus(int sig)
{
	(void)sig;
	ckpt_cleanup_signal();
	(void)!write(STDERR_FILENO, bus_line, bus_len);
	_exit(2);
}

void
cli_mapped_input(const char *name)
{
	struct sigaction sa;
	int n = snprintf(bus_line, sizeof bus_line, "%s: %s: read error: the file changed or could not be read "
			 "while it was read in place\n", cli_prog, name);

	bus_len = n < 0 ? 0 : (size_t)n < sizeof bus_line ? (size_t)n : sizeof bus_line - 1;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_bus;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

void
cli_error(const struct ckpt_err *e)
{
	char buf[2048];

	ckpt_err_format(e, buf, sizeof buf);
	progress_clear();
	fprintf(stderr, "%s: %s\n", cli_prog, buf);
}

void
cli_out_of_memory(void)
{
	struct ckpt_err e = {0};

	ckpt_err_set(&e, CKPT_ERR_NOMEM, "", "out of memory");
	cli_error(&e);
	exit(2);
}

/* "prog: message" on stderr, without the end of the line. */
static void vsay(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

static void
vsay(const char *fmt, va_list ap)
{
	progress_clear();
	fprintf(stderr, "%s: ", cli_prog);
	vfprintf(stderr, fmt, ap);
}

void
cli_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void
cli_usage_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see %s -h)\n", cli_prog);
	exit(2);
}

void
cli_bad_option(int c, char **argv)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "";

	if (c == ':') {
		if (optopt)
			cli_usage_fail("option -%c needs an argument", optopt);
		cli_usage_fail("option %s needs an argument", arg);
	}
	if (optopt)
		cli_usage_fail("unknown option -%c", optopt);
	cli_usage_fail("unknown option %s", arg);
}

void
cli_version(void)
{
	printf("%s %s\n", cli_prog, CKPT_VERSION);
}

int
cli_common_option(int c, void (*usage)(FILE *))
{
	switch (c) {
	case 'h':
		usage(stdout);
		exit(cli_finish(0));
	case 'V':
		cli_version();
		exit(cli_finish(0));
	case 'p':
		cli_pretty = 1;
		return 1;
	default:
		return 0;
	}
}

int
cli_getopt(int argc, char **argv, const char *optstring, const struct option *longopts, void (*usage)(FILE *))
{
	int c;

	while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1 && cli_common_option(c, usage))
		;
	return c;
}

void
cli_moved(const char *old, const char *now, const char *next)
{
	static const char *said[16];
	size_t i;

	for (i = 0; i < sizeof said / sizeof said[0] && said[i]; i++)
		if (strcmp(said[i], old) == 0)
			return;
	if (i < sizeof said / sizeof said[0])
		said[i] = old;
	if (next)
		cli_warn("%s is now %s (%s will mean %s in the next release)", old, now, old, next);
	else
		cli_warn("%s is now %s (%s stops working in the next release)", old, now, old);
}

void
cli_no_input(int noperands, void (*usage)(FILE *))
{
	if (noperands > 0 || !isatty(STDIN_FILENO))
		return;
	usage(stderr);
	exit(2);
}

int
cli_want_pretty(void)
{
	return cli_pretty >= 0 ? cli_pretty : isatty(STDOUT_FILENO);
}

int
cli_print_json(const json_t *v)
{
	int pretty = cli_want_pretty();

	if (ckpt_json_print(stdout, v, pretty) < 0 || fflush(stdout) == EOF)
		return -1;
	return 0;
}

int
cli_finish(int status)
{
	if (fflush(stdout) == EOF || ferror(stdout)) {
		fprintf(stderr, "%s: stdout: write error: %s\n", cli_prog, strerror(errno));
		return 2;
	}
	if (fclose(stdout) == EOF) {
		fprintf(stderr, "%s: stdout: write error: %s\n", cli_prog, strerror(errno));
		return 2;
	}
	return status;
}

/* ---- progress on a terminal */

static struct {
	struct timespec last;
	int shown;  /* a line is on the terminal */
	int begun;  /* last is set */
} prog;

static void
human(char *buf, size_t size, const char *unit, uint64_t n)
{
	static const char *const sfx[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double x = (double)n;
	unsigned k = 0;

	if (strcmp(unit, "bytes") != 0) {
		snprintf(buf, size, "%llu", (unsigned long long)n);
		return;
	}
	while (x >= 1024 && k + 1 < sizeof sfx / sizeof sfx[0]) {
		x /= 1024;
		k++;
	}
	snprintf(buf, size, k ? "%.1f %s" : "%.0f %s", x, sfx[k]);
}

static void
progress_update(void *arg, const char *unit, uint64_t done, uint64_t total)
{
	struct timespec now;
	char d[32], t[32];

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
	if (prog.begun && (now.tv_sec - prog.last.tv_sec) * 1000 + (now.tv_nsec - prog.last.tv_nsec) / 1000000 < 250)
		return;
	prog.last = now;
	prog.begun = 1;
	human(d, sizeof d, unit, done);
	if (total > 0 && done <= total) {
		human(t, sizeof t, unit, total);
		fprintf(stderr, "\r%s: %s of %s%s%s (%u%%)\033[K", cli_prog, d, t, strcmp(unit, "bytes") ? " " : "",
			strcmp(unit, "bytes") ? unit : "", (unsigned)(done * 100 / total));
	} else {
		fprintf(stderr, "\r%s: %s%s%s\033[K", cli_prog, d, strcmp(unit, "bytes") ? " " : "",
			strcmp(unit, "bytes") ? unit : "");
	}
	fflush(stderr);
	prog.shown = 1;
}

/* Take the progress line off the terminal (before a message, and at the end); the next update redraws it. */
static void
progress_clear(void)
{
	if (prog.shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	prog.shown = 0;
}

static void
progress_end(void *arg)
{
	(void)arg;
	progress_clear();
	prog.begun = 0;
}

void
cli_progress(void)
{
	static const struct ckpt_progress p = {progress_update, progress_end, NULL};

	if (isatty(STDERR_FILENO))
		ckpt_progress_set(&p);
}
