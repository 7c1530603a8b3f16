/* cli.h: what every ckpt program's front end shares (the only code besides main() that prints). */
#ifndef CKPT_CLI_H
#define CKPT_CLI_H

#include <getopt.h>

#include "../lib/ckpt.h"

extern const char *cli_prog;  /* "ckpt-plan", ... */
extern int cli_pretty;        /* -1: indent when stdout is a terminal; 0 compact; 1 indented */

void cli_init(const char *prog);
/* SIGINT, SIGTERM and SIGHUP (those not ignored) remove the library's temporary files and
 * directories (ckpt_cleanup_signal), then take their default action: nothing half written stays. */
void cli_clean_on_signals(void);
/* A file the program reads mapped (NAME): a SIGBUS (the file cut short or unreadable under the
 * mapping) removes the temporary files, says "prog: NAME: read error: ..." and exits 2. */
void cli_mapped_input(const char *name);
/* "prog: where: text[: strerror]" on stderr. */
void cli_error(const struct ckpt_err *e);
/* Allocation failed in a front end: "prog: out of memory" on stderr (as the library's
 * CKPT_ERR_NOMEM prints) and exit 2; the one way a program reports it. */
_Noreturn void cli_out_of_memory(void);
/* "prog: text" on stderr. */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A usage error: "prog: text" and "usage: ..." hint on stderr, exit 2. */
_Noreturn void cli_usage_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The usage error for what getopt returned as '?' or ':' (optstrings start with ':'), exit 2. */
_Noreturn void cli_bad_option(int c, char **argv);
/* "prog VERSION" on stdout. */
void cli_version(void);
/*
 * The options every program takes, for its getopt loop: -h (usage) and -V
 * (version) print and exit 0, -p sets cli_pretty.  1 when c was one of them.
 */
int cli_common_option(int c, void (*usage)(FILE *));
/*
 * getopt_long with the common options taken (cli_common_option): the next other option, or -1
 * at the end.  The one option loop every program runs.
 */
/* The long options of cli_common_option, and the end of a longopts array: its last entries. */
#define CLI_COMMON_LONGOPTS                                                                          \
	{"pretty", no_argument, NULL, 'p'}, {"help", no_argument, NULL, 'h'},                          \
	{"version", no_argument, NULL, 'V'}, {NULL, 0, NULL, 0}
int cli_getopt(int argc, char **argv, const char *optstring, const struct option *longopts,
	       void (*usage)(FILE *));
/*
 * A letter given to another option (ckpt(7), OPTIONS): it keeps its old meaning for one release,
 * saying so once on stderr, "prog: -r is now --restore (-r stops working in the next release)", or
 * "(-n will mean --allow-non-restored-state ...)" when next names what the letter becomes.
 */
void cli_moved(const char *old, const char *now, const char *next);
/*
 * No operand, and standard input a terminal: print the usage on stderr and exit 2 (as jq does)
 * rather than wait for a snapshot or a graph to be typed.
 */
void cli_no_input(int noperands, void (*usage)(FILE *));
/*
 * Show the progress of long work (ckpt_progress) on stderr when it is a
 * terminal, and nothing otherwise: "prog: 1.5 GiB of 4.0 GiB (37%)" on one
 * line, rewritten at most four times a second, cleared when the work ends.
 */
void cli_progress(void);
/* Print a JSON value as the user asked (-p or the terminal decides); 0 or -1 on write error. */
int cli_print_json(const json_t *v);
/* Does the user want indented JSON (-p, or stdout is a terminal)? */
int cli_want_pretty(void);
/* Flush and close stdout; a write error is reported and turns status into 2. */
int cli_finish(int status);

#endif
