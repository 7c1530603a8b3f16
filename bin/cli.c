/* cli.c: diagnostics, usage errors and output shared by the ckpt front ends. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

const char *cli_prog = "ckpt";
int cli_pretty = -1;

void
cli_init(const char *prog)
{
	cli_prog = prog;
	opterr = 0; /* cli_bad_option says it, in one line */
}

void
cli_error(const struct ckpt_err *e)
{
	char buf[2048];

	ckpt_err_format(e, buf, sizeof buf);
	fprintf(stderr, "%s: %s\n", cli_prog, buf);
}

void
cli_warn(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", cli_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void
cli_usage_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", cli_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
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
cli_common_option(int c, void (*usage)(void))
{
	switch (c) {
	case 'h':
		usage();
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
cli_print_json(const json_t *v)
{
	int pretty = cli_pretty >= 0 ? cli_pretty : isatty(STDOUT_FILENO);

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
