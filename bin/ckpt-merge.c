/* ckpt-merge: redistribute a snapshot onto new parallelism; without -P or -g it packs the input as it is. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

static void
usage(void)
{
	printf("usage: ckpt-merge [-p] [-P N | -P OPERATOR=N ...] [-g GRAPH] [-n] [-o OUT] [file]\n");
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
		if (ckpt_snapshot_write(s, out, (enum ckpt_archive_kind)kind, &e) < 0)
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

int
main(int argc, char **argv)
{
	const char *out = NULL;
	int c;

	cli_init("ckpt-merge");
	while ((c = getopt(argc, argv, "hVpP:g:no:")) != -1) {
		switch (c) {
		case 'h':
			usage();
			return cli_finish(0);
		case 'V':
			cli_version();
			return cli_finish(0);
		case 'p':
			cli_pretty = 1;
			break;
		case 'P':
		case 'g':
		case 'n':
			cli_usage_fail("-%c: rescaling is not implemented yet", c);
		case 'o':
			out = optarg;
			break;
		default:
			cli_usage_fail("unknown option");
		}
	}
	if (argc - optind > 1)
		cli_usage_fail("one input at most");
	return cli_finish(pack(optind < argc ? argv[optind] : NULL, out));
}
