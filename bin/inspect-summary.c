/* inspect-summary.c: ckpt-inspect's summary for a person: the table a terminal shows (an operator a
 * line, its states under it, the totals, what was not read and why), and --skew (NDJSON, or SVG). */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "inspect-summary.h"

#define WIDTH 79 /* a line of the table, at most */

/* One line of the table, its trailing blanks dropped. */
static void __attribute__((format(printf, 1, 2)))
line(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	for (n = strlen(buf); n > 0 && buf[n - 1] == ' '; n--)
		;
	printf("%.*s\n", (int)n, buf);
}

/* s made fit for a terminal in at most w bytes: control characters shown as '?', a long name cut
 * in its middle ("~"), UTF-8 sequences kept whole. */
static const char *
fit(const char *s, size_t w, char *buf, size_t n)
{
	size_t len = s ? strlen(s) : 0, head, tail, k = 0;

	if (s == NULL || n <= w)
		return "";
	if (len <= w) {
		head = len;
		tail = 0;
	} else {
		head = (w - 1) / 2;
		tail = w - 1 - head;
		while (head > 0 && (s[head] & 0xc0) == 0x80)
			head--;
		while (tail > 0 && (s[len - tail] & 0xc0) == 0x80)
			tail--;
	}
	for (size_t i = 0; i < head; i++)
		buf[k++] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	if (len > w)
		buf[k++] = '~';
	for (size_t i = len - tail; i < len; i++)
		buf[k++] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	buf[k] = '\0';
	return buf;
}

/* A count in at most 6 characters: 94, 15.1K, 120M (bytes by 1024, entries by 1000); "?" unknown. */
static const char *
amount(const json_t *v, int bytes, char *buf, size_t n)
{
	const double base = bytes ? 1024 : 1000;
	double x = (double)json_integer_value(v);
	int u = -1;

	if (!json_is_integer(v))
		return "?";
	if (x < (bytes ? 1024 : 100000)) {
		snprintf(buf, n, "%lld", (long long)json_integer_value(v));
		return buf;
	}
	while (x >= base && u < 5) {
		x /= base;
		u++;
	}
	snprintf(buf, n, x < 10 ? "%.1f%c" : "%.0f%c", x, "KMGTPE"[u]);
	return buf;
}

/* The largest subtask against the mean: "B E" (bytes, entries), as multiples of the mean. */
static const char *
skew_text(const json_t *st, char *buf, size_t n)
{
	const json_t *sk = json_object_get(st, "skew");
	double p = (double)json_integer_value(json_object_get(sk, "subtasks")), r[2];
	json_int_t tot[2] = {json_integer_value(json_object_get(st, "bytes")),
			     json_integer_value(json_object_get(st, "entries"))};
	json_int_t max[2] = {json_integer_value(json_object_get(sk, "max_bytes")),
			     json_integer_value(json_object_get(sk, "max_entries"))};

	if (!json_is_object(sk) || tot[1] <= 0)
		return "";
	for (int i = 0; i < 2; i++)
		r[i] = tot[i] > 0 ? (double)max[i] * p / (double)tot[i] : 0;
	snprintf(buf, n, "%.*f %.*f", r[0] < 10 ? 1 : 0, r[0], r[1] < 10 ? 1 : 0, r[1]);
	return buf;
}

/* The key groups of a state: its range list when short, else how many of all. */
static const char *
kg_text(const json_t *st, const json_t *op, char *buf, size_t n)
{
	const char *s = json_string_value(json_object_get(st, "key_groups"));
	size_t count = 0;

	if (s == NULL)
		return "";
	if (strlen(s) <= 10)
		return s;
	for (const char *p = s; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
		unsigned a, b;
		int k = sscanf(p, "%u-%u", &a, &b);

		count += k == 2 && b >= a ? b - a + 1 : 1;
	}
	snprintf(buf, n, "%zu of %lld", count, (long long)json_integer_value(json_object_get(op, "max_parallelism")));
	return buf;
}

static void
state_line(const json_t *op, const json_t *st)
{
	char name[64], a[32], b[32], kg[32], sk[48];
	const char *kind = json_string_value(json_object_get(st, "kind"));
	const char *n = json_string_value(json_object_get(st, "name"));

	if (kind == NULL)
		kind = json_string_value(json_object_get(st, "mode"));
	/* The kind column says "timers": Flink's prefix of every timer state would only cut its name. */
	if (n && kind && strcmp(kind, "timers") == 0 && strncmp(n, "_timer_state/", 13) == 0 && n[13])
		n += 13;
	line("  %-27s %-11s %7s %7s  %-10s %s", fit(n, 27, name, sizeof name),
	       kind ? kind : "", amount(json_object_get(st, "entries"), 0, a, sizeof a),
	       amount(json_object_get(st, "bytes"), 1, b, sizeof b), kg_text(st, op, kg, sizeof kg),
	       skew_text(st, sk, sizeof sk));
}

static void
op_line(const json_t *op)
{
	const char *uid = json_string_value(json_object_get(op, "uid"));
	const char *name = json_string_value(json_object_get(op, "name"));
	const char *fin = json_string_value(json_object_get(op, "finished_subtasks"));
	char l[64], nm[64], f[32], p[32];

	snprintf(p, sizeof p, "%lld/%lld", (long long)json_integer_value(json_object_get(op, "parallelism")),
		 (long long)json_integer_value(json_object_get(op, "max_parallelism")));
	line("%-32s  %-20s  %-11s  %s", fit(uid ? uid : json_string_value(json_object_get(op, "id")), 32, l, sizeof l),
	     fit(name, 20, nm, sizeof nm), p,
	     json_is_true(json_object_get(op, "fully_finished")) ? "all" : fit(fin, 10, f, sizeof f));
}

/* text wrapped at WIDTH, lines after the first indented by four. */
static void
wrapped(const char *text)
{
	size_t col = 0, ind = 0;

	while (*text) {
		size_t w = strcspn(text, " ");

		if (col > ind && col + 1 + w > WIDTH) {
			printf("\n    ");
			col = ind = 4;
		} else if (col > ind) {
			putchar(' ');
			col++;
		}
		for (size_t i = 0; i < w; i++)
			putchar((unsigned char)text[i] < 0x20 || text[i] == 0x7f ? '?' : text[i]);
		col += w;
		text += w;
		text += strspn(text, " ");
	}
	putchar('\n');
}

/* Add "OPERATOR/STATE" to the places a reason names (reasons: reason -> [places]). */
static void
note(json_t *reasons, const char *why, const json_t *op, const char *state)
{
	const char *uid = json_string_value(json_object_get(op, "uid"));
	char buf[300];
	json_t *a = json_object_get(reasons, why);

	snprintf(buf, sizeof buf, "%.8s%s%s", uid ? uid : json_string_value(json_object_get(op, "id")),
		 state ? "/" : "", state ? state : "");
	if (a == NULL && json_object_set_new(reasons, why, a = json_array()) < 0)
		cli_out_of_memory();
	if (json_array_append_new(a, json_string(buf)) < 0)
		cli_out_of_memory();
}

/* A state's reason without its name (`state "NAME": why` is why), so that states share it. */
static void
note_state(json_t *reasons, const char *why, const json_t *op, const char *state)
{
	size_t n = strlen(state);
	char buf[1200];

	if (strncmp(why, "state \"", 7) == 0 && strncmp(why + 7, state, n) == 0 && why[7 + n] == '"') {
		why += 8 + n;
		snprintf(buf, sizeof buf, "%s%s", strncmp(why, ": ", 2) == 0 ? "" : "the state", why + (*why == ':') * 2);
		why = buf;
	}
	note(reasons, why, op, state);
}

/* What the summary could not count, by reason. */
static json_t *
reasons_of(const json_t *sum)
{
	json_t *reasons = json_object(), *op, *st, *v;
	size_t i, j;

	if (reasons == NULL)
		cli_out_of_memory();
	json_array_foreach(json_object_get(sum, "operators"), i, op) {
		const json_t *fs = json_object_get(op, "flink_state");

		json_array_foreach(json_object_get(op, "states"), j, st)
			if ((v = json_object_get(st, "entries_not_read")) != NULL)
				note_state(reasons, json_string_value(v), op, json_string_value(json_object_get(st, "name")));
		json_array_foreach(json_object_get(fs, "not_read"), j, v)
			note(reasons, json_string_value(v), op, NULL);
		if ((v = json_object_get(fs, "unlisted_states")) != NULL)
			note(reasons, json_string_value(v), op, NULL);
	}
	return reasons;
}

/* The last part of a path (the directory is the snapshot's). */
static const char *
base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path ? path : "";
}

/* What is incomplete or unread, and why: one paragraph a reason. */
static void
notes(const json_t *sum, int state_read)
{
	const json_t *missing = json_object_get(sum, "missing_files");
	json_t *reasons = reasons_of(sum), *places;
	const char *why;
	char buf[1200];

	if (json_array_size(missing))
		snprintf(buf, sizeof buf, "not read: %zu state file%s missing (%s%s); this is the _metadata alone",
			 json_array_size(missing), json_array_size(missing) == 1 ? "" : "s",
			 json_array_size(missing) == 1 ? "" : "first ", base(json_string_value(json_array_get(missing, 0)))),
			wrapped(buf);
	else if (!state_read && json_object_get(sum, "flink"))
		wrapped("not read: the state files (-m: the _metadata alone), so keyed states are not listed");
	json_object_foreach(reasons, why, places) {
		int k = snprintf(buf, sizeof buf, "not read:");

		for (size_t i = 0; i < json_array_size(places) && i < 3 && k < (int)sizeof buf; i++)
			k += snprintf(buf + k, sizeof buf - (size_t)k, "%s %s", i ? "," : "",
				      json_string_value(json_array_get(places, i)));
		if (json_array_size(places) > 3 && k < (int)sizeof buf)
			k += snprintf(buf + k, sizeof buf - (size_t)k, " and %zu more", json_array_size(places) - 3);
		if (k < (int)sizeof buf)
			snprintf(buf + k, sizeof buf - (size_t)k, ": %s", why);
		wrapped(buf);
	}
	json_decref(reasons);
}

static void
totals(const json_t *sum)
{
	const json_t *t = json_object_get(sum, "totals");
	char a[32], b[32], c[32], d[32], buf[300];

	int k = snprintf(buf, sizeof buf, "total: %lld operators, %lld subtasks, %s entries, %s bytes",
	       (long long)json_integer_value(json_object_get(t, "operators")),
	       (long long)json_integer_value(json_object_get(t, "subtasks")),
	       amount(json_object_get(t, "entries"), 0, a, sizeof a), amount(json_object_get(t, "bytes"), 1, b, sizeof b));
	if (json_integer_value(json_object_get(t, "in_flight_bytes")))
		k += snprintf(buf + k, sizeof buf - (size_t)k, ", %s in flight",
			      amount(json_object_get(t, "in_flight_bytes"), 1, c, sizeof c));
	if (json_object_get(t, "handles"))
		snprintf(buf + k, sizeof buf - (size_t)k, "; %lld handles, %s",
			 (long long)json_integer_value(json_object_get(t, "handles")),
			 amount(json_object_get(t, "handle_bytes"), 1, d, sizeof d));
	wrapped(buf);
}

/* The operators' and states' lines a screen has room for: 60 lines in all, less the head, the
 * totals and the notes. */
#define BODY 44

/* How many of each operator's states fit in BODY lines: all (SIZE_MAX), or k, the rest of an
 * operator said in one line; the operators without state are then one line too (folded).  0 when
 * even one state line an operator does not fit: the operators past the room are said in one line. */
static size_t
states_shown(const json_t *ops, int *folded)
{
	size_t most = 0, i, k;
	const json_t *op;

	*folded = 0;
	json_array_foreach(ops, i, op)
		if (json_array_size(json_object_get(op, "states")) > most)
			most = json_array_size(json_object_get(op, "states"));
	for (k = most + 1; k-- > 0;) {
		size_t n = 0, stateless = 0;

		json_array_foreach(ops, i, op) {
			size_t m = json_array_size(json_object_get(op, "states"));

			stateless += m == 0;
			n += m ? 1 + (m > k ? k + 1 : m) : 0;
		}
		if (k == most && n + stateless <= BODY)
			return SIZE_MAX;
		*folded = stateless > 0;
		if (n + (stateless ? 2 : 0) <= BODY || k == 0)
			return k;
	}
	return 0;
}

/* "... N more states: E entries, B bytes" for the states of op from index k on ("N states: ..." from
 * the first). */
static void
more_states(const json_t *op, size_t k)
{
	const json_t *states = json_object_get(op, "states");
	json_int_t entries = 0, bytes = 0;
	json_t *e, *by;
	int known = 1;
	char a[32], b[32];

	for (size_t j = k; j < json_array_size(states); j++) {
		const json_t *st = json_array_get(states, j);

		known &= json_is_integer(json_object_get(st, "entries")) && json_is_integer(json_object_get(st, "bytes"));
		entries += json_integer_value(json_object_get(st, "entries"));
		bytes += json_integer_value(json_object_get(st, "bytes"));
	}
	e = json_integer(entries);
	by = json_integer(bytes);
	line("  %s%zu %sstate%s: %s entries, %s bytes", k ? "... " : "", json_array_size(states) - k, k ? "more " : "",
	     json_array_size(states) - k == 1 ? "" : "s", known ? amount(e, 0, a, sizeof a) : "?",
	     known ? amount(by, 1, b, sizeof b) : "?");
	json_decref(e);
	json_decref(by);
}

/* The operators without state, folded into one wrapped line. */
static void
stateless_line(const json_t *ops)
{
	char buf[1200];
	size_t n = 0, i;
	int k;
	const json_t *op;

	json_array_foreach(ops, i, op)
		n += json_array_size(json_object_get(op, "states")) == 0;
	k = snprintf(buf, sizeof buf, "%zu operator%s without state:", n, n == 1 ? "" : "s");
	json_array_foreach(ops, i, op) {
		const char *uid = json_string_value(json_object_get(op, "uid"));

		if (json_array_size(json_object_get(op, "states")) || k >= (int)sizeof buf - 40)
			continue;
		k += snprintf(buf + k, sizeof buf - (size_t)k, " %s", uid ? uid : json_string_value(json_object_get(op, "id")));
	}
	wrapped(buf);
}

/* The operators and their states, as many as BODY has room for; 1 when a state line has skew. */
static int
body(const json_t *ops)
{
	size_t k, i, j, lines = 0;
	int folded, skewed = 0;
	const json_t *op, *st;

	k = states_shown(ops, &folded);
	json_array_foreach(ops, i, op) {
		const json_t *states = json_object_get(op, "states");

		if (folded && json_array_size(states) == 0)
			continue;
		if (k == 0 && lines + 2 > BODY - 1) {
			line("... %zu more operators: ckpt-inspect --json lists them all", json_array_size(ops) - i);
			break;
		}
		op_line(op);
		lines++;
		json_array_foreach(states, j, st) {
			if (j == k) {
				more_states(op, k);
				lines++;
				break;
			}
			state_line(op, st);
			lines++;
			skewed |= json_is_object(json_object_get(st, "skew"));
		}
	}
	if (folded)
		stateless_line(ops);
	return skewed;
}

int
summary_table(const json_t *sum, int state_read)
{
	const json_t *fl = json_object_get(sum, "flink");
	const char *kind = json_string_value(json_object_get(sum, "kind"));
	char buf[1200], name[256];
	int skewed;

	snprintf(buf, sizeof buf, "%s: %s %lld, %s", fit(json_string_value(json_object_get(sum, "file")), 200, name, sizeof name),
		 kind ? kind : "snapshot", (long long)json_integer_value(json_object_get(sum, "checkpoint_id")),
		 json_string_value(json_object_get(sum, "format")));
	if (fl)
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), " version %lld",
			 (long long)json_integer_value(json_object_get(fl, "format_version")));
	printf("%s\n", buf);
	line("%-32s  %-20s  %-11s  %s", "operator (uid or id)", "name", "parallelism", "finished");
	line("  %-27s %-11s %7s %7s  %-10s %s", "state", "kind", "entries", "bytes", "key groups", "skew b e");
	skewed = body(json_object_get(sum, "operators"));
	totals(sum);
	if (skewed)
		wrapped("skew b e: the largest subtask's bytes and entries, as multiples of the mean");
	notes(sum, state_read);
	return fflush(stdout) == EOF ? 2 : 0;
}

/* ------------------------------------------------------------ --skew */

/* s as a gnuplot string in single quotes (a quote doubled, control characters as '?'). */
static void
gp_string(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; s && *s; s++)
		if (*s == '\'')
			fputs("''", f);
		else
			fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
	fputc('\'', f);
}

static int
same(const json_t *a, const json_t *b, const char *k)
{
	return json_equal(json_object_get(a, k), json_object_get(b, k));
}

/* One datablock $sN a state of the operator (rows [from, to)): "key_group bytes entries" lines;
 * their names in names; the largest bytes and entries in top. */
static void
gp_blocks(FILE *f, const json_t *rows, size_t from, size_t to, json_t *names, json_int_t top[2])
{
	for (size_t i = from; i < to; i++) {
		const json_t *r = json_array_get(rows, i);
		json_int_t v[2] = {json_integer_value(json_object_get(r, "bytes")),
				   json_integer_value(json_object_get(r, "entries"))};

		if (i == from || !same(r, json_array_get(rows, i - 1), "state")) {
			fprintf(f, "$s%zu << EOD\n0 0 0\n", json_array_size(names));
			if (json_array_append(names, json_object_get(r, "state")) < 0)
				cli_out_of_memory();
		}
		if (json_object_get(r, "key_group")) {
			fprintf(f, "%lld %lld %lld\n", (long long)json_integer_value(json_object_get(r, "key_group")),
				(long long)v[0], (long long)v[1]);
			for (int k = 0; k < 2; k++)
				top[k] = v[k] > top[k] ? v[k] : top[k];
		}
		if (i + 1 == to || !same(r, json_array_get(rows, i + 1), "state"))
			fprintf(f, "EOD\n");
	}
}

/* The subtasks' ranges, from the first state's subtask rows: a dashed line where each begins, its
 * index above; the last key group. */
static unsigned
gp_subtasks(FILE *f, const json_t *rows, size_t from, size_t to)
{
	unsigned a, b = 0, last = 0;

	fprintf(f, "unset arrow\nunset label\n");
	for (size_t i = from; i < to && same(json_array_get(rows, i), json_array_get(rows, from), "state"); i++) {
		const json_t *r = json_array_get(rows, i);
		int n = sscanf(json_string_value(json_object_get(r, "key_groups")) ? json_string_value(json_object_get(r, "key_groups")) : "", "%u-%u", &a, &b);

		if (n < 1)
			continue;
		last = n == 2 ? b : a;
		if (a > 0)
			fprintf(f, "set arrow from %g, graph 0 to %g, graph 1 nohead dt 2 lc rgb 'gray40'\n", a - 0.5, a - 0.5);
		fprintf(f, "set label '%lld' at %g, graph 1.03 center\n",
			(long long)json_integer_value(json_object_get(r, "subtask")), (a + last) / 2.0);
	}
	return last;
}

/* The operator of rows [from, to): a bytes and an entries panel, one series a state. */
static void
gp_operator(FILE *f, const json_t *rows, size_t from, size_t to, size_t *block)
{
	const json_t *op = json_array_get(rows, from);
	const char *who = json_string_value(json_object_get(op, "uid"));
	json_int_t top[2] = {0, 0};
	json_t *names = json_array();
	size_t first = *block, k;
	unsigned last;

	if (names == NULL)
		cli_out_of_memory();
	for (k = 0; k < first; k++) /* block numbers go on across operators */
		json_array_append_new(names, json_null());
	gp_blocks(f, rows, from, to, names, top);
	*block = json_array_size(names);
	last = gp_subtasks(f, rows, from, to);
	fprintf(f, "set xrange [-0.5:%g]\nset xtics %s\n", last + 0.5, last < 16 ? "1" : "autofreq");
	for (int p = 0; p < 2; p++) {
		fprintf(f, "set yrange [0:%s]\nset title ", top[p] ? "*" : "1");
		gp_string(f, who ? who : json_string_value(json_object_get(op, "operator")));
		fprintf(f, ".': %s per key group, subtasks above'\nplot ", p ? "entries" : "bytes");
		for (k = first; k < *block; k++) {
			/* states side by side, not one over the other */
			fprintf(f, "%s$s%zu using ($1+%g):%d with impulses lw 3 title ", k > first ? ", " : "", k,
				(double)(k - first) * 0.1, p ? 3 : 2);
			gp_string(f, json_string_value(json_array_get(names, k)));
		}
		fprintf(f, "\n");
	}
	json_decref(names);
}

/* The gnuplot script of the rows: a row of two panels (bytes, entries) an operator. */
static void
gp_script(FILE *f, const json_t *rows, const char *file)
{
	size_t nops = 0, block = 0, from = 0;

	for (size_t i = 0; i < json_array_size(rows); i++)
		nops += i == 0 || !same(json_array_get(rows, i), json_array_get(rows, i - 1), "operator");
	fprintf(f, "set terminal svg size 1000,%zu noenhanced font 'sans,11'\nset style data impulses\n"
		"set xlabel 'key group'\nset key top right\nset multiplot layout %zu,2 title ",
		nops * 280 + 40, nops);
	gp_string(f, file);
	fprintf(f, ".': keyed state by key group'\n");
	for (size_t i = 1; i <= json_array_size(rows); i++)
		if (i == json_array_size(rows) || !same(json_array_get(rows, i), json_array_get(rows, from), "operator")) {
			gp_operator(f, rows, from, i, &block);
			from = i;
		}
	fprintf(f, "unset multiplot\n");
}

/* gnuplot run on script with its output to fd: 0, or -1 with the message said. */
static int
gp_run(const char *script, size_t n, int fd, const char *plot)
{
	int in[2], st;
	pid_t pid;
	void (*pipe_was)(int);

	if (pipe(in) < 0 || (pid = fork()) < 0) {
		cli_warn("%s: cannot run gnuplot: %s", plot, strerror(errno));
		return -1;
	}
	if (pid == 0) {
		if (dup2(in[0], 0) < 0 || dup2(fd, 1) < 0)
			_exit(126);
		close(in[0]);
		close(in[1]);
		execlp("gnuplot", "gnuplot", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	pipe_was = signal(SIGPIPE, SIG_IGN);
	for (size_t k = 0; k < n;) {
		ssize_t w = write(in[1], script + k, n - k);

		if (w < 0 && errno != EINTR)
			break;
		k += w > 0 ? (size_t)w : 0;
	}
	close(in[1]);
	signal(SIGPIPE, pipe_was);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
		cli_warn("%s: --plot draws with gnuplot, which is not installed (Debian: gnuplot-nox)", plot);
	else
		cli_warn("%s: gnuplot failed (%s %d)", plot, WIFEXITED(st) ? "exit status" : "signal",
			 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	return -1;
}

/* The rows drawn into the SVG file plot, whole or not at all (a temporary file beside it, synced,
 * renamed). */
static int
plot_rows(const json_t *rows, const json_t *sum, const char *plot)
{
	char *script = NULL, *tmp = malloc(strlen(plot) + 8);
	size_t n = 0;
	FILE *f = open_memstream(&script, &n);
	int fd = -1, r = 2;
	mode_t mask = umask(0);

	umask(mask);
	if (f == NULL || tmp == NULL)
		cli_out_of_memory();
	gp_script(f, rows, json_string_value(json_object_get(sum, "file")));
	if (fclose(f) != 0)
		cli_out_of_memory();
	sprintf(tmp, "%s.XXXXXX", plot);
	if ((fd = mkstemp(tmp)) < 0 || fchmod(fd, 0666 & ~mask) < 0) {
		cli_warn("%s: %s", plot, strerror(errno));
		if (fd >= 0)
			unlink(tmp);
		goto out;
	}
	if (gp_run(script, n, fd, plot) == 0) {
		int ok = fsync(fd) == 0;

		ok = close(fd) == 0 && ok;
		fd = -1;
		if (ok && rename(tmp, plot) == 0)
			r = 0;
		else
			cli_warn("%s: %s", plot, strerror(errno));
	}
	if (r)
		unlink(tmp);
out:
	if (fd >= 0)
		close(fd);
	free(script);
	free(tmp);
	return r;
}

int
summary_skew(const json_t *sum, const char *plot)
{
	struct ckpt_err e = {0};
	json_t *rows = ckpt_snapshot_skew(sum, &e), *r;
	int status = 0;
	size_t i;

	if (rows == NULL) {
		cli_error(&e);
		return 2;
	}
	if (plot && json_array_size(rows) == 0) {
		cli_warn("%s: no keyed state to draw: nothing written", json_string_value(json_object_get(sum, "file")));
		status = 1;
	} else if (plot) {
		status = plot_rows(rows, sum, plot);
	}
	json_array_foreach(rows, i, r)
		if (!plot && (ckpt_json_print(stdout, r, 0) < 0 || fflush(stdout) == EOF)) {
			status = 2; /* cli_finish says it */
			break;
		}
	json_decref(rows);
	return status;
}
