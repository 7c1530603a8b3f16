/* inspect-offsets.c: ckpt-inspect --offsets shown to a person: one line a split, in the columns of
 * a screen, from the NDJSON rows ckpt_flink_offsets writes (ckpt-inspect(1), OFFSETS). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inspect-offsets.h"

#define W_UID 13
#define W_SPLIT 24
#define W_AT 16
#define W_STOP 8

/* s fitted to w columns: cut at its start with "..." (a path's end says most; from a '/' where one
 * is in what is kept), into buf. */
static const char *
fit_end(const char *s, size_t w, char *buf, size_t n)
{
	size_t len = strlen(s);
	const char *keep, *slash;

	if (len <= w || w < 4 || w >= n)
		return s;
	keep = s + len - (w - 3);
	slash = strchr(keep, '/');
	snprintf(buf, n, "...%s", slash && slash[1] ? slash : keep);
	return buf;
}

/* s fitted to w columns: cut at its end with "..." (a name's start says most), into buf. */
static const char *
fit_start(const char *s, size_t w, char *buf, size_t n)
{
	if (strlen(s) <= w || w < 4 || w >= n)
		return s;
	snprintf(buf, n, "%.*s...", (int)(w - 3), s);
	return buf;
}

/* A value as text: a number, a string (a sentinel), "-" for null or absent. */
static const char *
text(const json_t *v, char *buf, size_t n)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v)) {
		snprintf(buf, n, "%lld", (long long)json_integer_value(v));
		return buf;
	}
	return "-";
}

/* What the split is (kafka TOPIC:P, file PATH, number ID) and where it resumes and stops. */
static void
split_text(const json_t *r, char *what, size_t nw, char *at, size_t na, char *stop, size_t ns)
{
	const char *conn = json_string_value(json_object_get(r, "connector"));
	char b1[32], b2[32];

	snprintf(stop, ns, "-");
	if (conn == NULL) {
		snprintf(what, nw, "(untyped)");
		snprintf(at, na, "%s", text(json_object_get(r, "reason"), b1, sizeof b1));
	} else if (strcmp(conn, "kafka") == 0) {
		snprintf(what, nw, "%s:%s", text(json_object_get(r, "topic"), b1, sizeof b1),
			 text(json_object_get(r, "partition"), b2, sizeof b2));
		snprintf(at, na, "%s", text(json_object_get(r, "starting_offset"), b1, sizeof b1));
		snprintf(stop, ns, "%s", text(json_object_get(r, "stopping_offset"), b1, sizeof b1));
	} else if (strcmp(conn, "file") == 0) {
		const json_t *pos = json_object_get(r, "position");
		json_int_t skip = json_integer_value(json_object_get(pos, "records_after_offset"));

		snprintf(what, nw, "%s", text(json_object_get(r, "path"), b1, sizeof b1));
		snprintf(at, na, skip > 0 ? "byte %s +%lld rec" : "byte %s",
			 text(json_object_get(json_is_object(pos) ? pos : r, "offset"), b2, sizeof b2), (long long)skip);
	} else {
		snprintf(what, nw, "%s %s", conn, text(json_object_get(r, "split_id"), b1, sizeof b1));
		snprintf(at, na, "%s", text(json_object_get(r, "from"), b1, sizeof b1));
		snprintf(stop, ns, "%s", text(json_object_get(r, "to"), b1, sizeof b1));
	}
}

/* One row as a line of the table. */
static void
row_line(FILE *f, const json_t *r)
{
	char what[4096], at[256], stop[64], held[64], sub[24], fw[64], fu[64], fa[64];
	const json_t *st = json_object_get(r, "status");
	const char *uid = json_string_value(json_object_get(r, "uid"));

	split_text(r, what, sizeof what, at, sizeof at, stop, sizeof stop);
	snprintf(held, sizeof held, "%s%s%s", json_string_value(json_object_get(r, "held_by")),
		 st ? ", " : "", st ? json_string_value(st) : "");
	fprintf(f, "%-*s %3s %-*s %-*s %-*s %s\n", W_UID,
		fit_start(uid ? uid : json_string_value(json_object_get(r, "operator")), W_UID, fu, sizeof fu),
		text(json_object_get(r, "subtask"), sub, sizeof sub),
		W_SPLIT, fit_end(what, W_SPLIT, fw, sizeof fw), W_AT, fit_end(at, W_AT, fa, sizeof fa), W_STOP, stop, held);
}

int
offsets_table(struct ckpt_snapshot *s, struct ckpt_err *e)
{
	char *buf = NULL, *line, *next;
	size_t len = 0, n = 0;
	FILE *mem = open_memstream(&buf, &len);
	int rc;

	if (mem == NULL)
		return ckpt_err_sys(e, "--offsets", "out of memory");
	rc = ckpt_flink_offsets(s, mem, e);
	if (fclose(mem) != 0 && rc == 0)
		rc = ckpt_err_sys(e, "--offsets", "out of memory");
	for (line = buf; rc == 0 && line && *line; line = next) {
		json_t *r;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		r = json_loads(line, 0, NULL);
		if (r == NULL) {
			rc = ckpt_err_sys(e, "--offsets", "out of memory");
			break;
		}
		if (n++ == 0)
			printf("%-*s %3s %-*s %-*s %-*s %s\n", W_UID, "UID", "SUB", W_SPLIT, "SPLIT", W_AT,
			       "RESUMES AT", W_STOP, "STOPS AT", "HELD BY");
		row_line(stdout, r);
		json_decref(r);
	}
	if (rc == 0 && n == 0)
		printf("no source operator holds splits\n");
	free(buf);
	return rc;
}
