/*
 * filesink.c: the two-phase-commit file sink.  Records of one checkpoint interval go to an
 * in-progress file; the checkpoint's snapshot turns it into a pending transaction (pre-commit),
 * notify-checkpoint-complete renames it into a committed part file.  Recovery re-commits the
 * pending transactions of the restored state and deletes what later, unfinished attempts left.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine.h"

struct fsink {
	FILE *f;
	int64_t *pend; /* checkpoint ids of pending transactions, ascending */
	size_t npend, cap;
};

/* DIR/<prefix><subtask>-<id>: .inprogress-, .pending- or part- */
static void
path_of(char *out, size_t size, const struct ckpt_task *t, const char *prefix, uint32_t sub, int64_t id)
{
	snprintf(out, size, "%s/%s%u-%" PRId64, t->v->prm.path, prefix, sub, id);
}

/* Commit one transaction: pending -> part.  Already committed (after a restore) is fine. */
static int
commit(struct ckpt_task *t, uint32_t sub, int64_t id, struct ckpt_err *e)
{
	char from[4200], to[4200];
	struct stat sb;

	path_of(from, sizeof from, t, ".pending-", sub, id);
	path_of(to, sizeof to, t, "part-", sub, id);
	if (rename(from, to) == 0 || (errno == ENOENT && stat(to, &sb) == 0))
		return 0;
	return ckpt_err_sys(e, from, "cannot commit");
}

/* Files of this subtask from attempts that no completed checkpoint covers. */
static void
clean_stale(struct ckpt_task *t, int64_t restored_id)
{
	DIR *d = opendir(t->v->prm.path);
	struct dirent *de;

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		unsigned sub;
		long long id;
		char p[4200];

		if ((sscanf(de->d_name, ".inprogress-%u", &sub) == 1 && sub == t->sub) ||
		    (sscanf(de->d_name, ".pending-%u-%lld", &sub, &id) == 2 && sub == t->sub && id > restored_id)) {
			snprintf(p, sizeof p, "%s/%s", t->v->prm.path, de->d_name);
			unlink(p);
		}
	}
	closedir(d);
}

static int
sink_open(struct ckpt_task *t, const struct ckpt_subtask *r, struct ckpt_err *e)
{
	const struct ckpt_opstate *os = ckpt_subtask_opstate(r, "pending");
	struct fsink *s = ckpt_calloc(1, sizeof *s, e);

	if (s == NULL)
		return -1;
	t->ost = s;
	if (mkdir(t->v->prm.path, 0777) < 0 && errno != EEXIST)
		return ckpt_err_sys(e, t->v->prm.path, "cannot create");
	for (size_t i = 0; os && i < os->n; i++) {
		char tmp[64];
		unsigned sub;
		long long id;

		if (os->entries[i].len >= sizeof tmp)
			return ckpt_err_set(e, CKPT_ERR_INPUT, t->v->id, "pending entry %zu is too long", i);
		memcpy(tmp, os->entries[i].p, os->entries[i].len);
		tmp[os->entries[i].len] = '\0';
		if (sscanf(tmp, ".pending-%u-%lld", &sub, &id) != 2)
			return ckpt_err_set(e, CKPT_ERR_INPUT, t->v->id, "pending entry %zu is not a transaction", i);
		if (commit(t, sub, id, e) < 0)
			return -1;
	}
	clean_stale(t, t->job->restore ? (int64_t)t->job->restore->checkpoint_id : -1);
	return 0;
}

static void
sink_record(struct ckpt_task *t, const struct ckpt_rec *r, size_t input)
{
	struct fsink *s = t->ost;

	(void)input;
	if (s->f == NULL) {
		char p[4200];

		path_of(p, sizeof p, t, ".inprogress-", t->sub, (int64_t)t->attempt);
		if ((s->f = fopen(p, "w")) == NULL)
			return;
	}
	fprintf(s->f, "%" PRIu64 " %" PRId64 " %" PRId64 "\n", r->key, r->value, r->ts);
}

/* Close the in-progress file under the name prefix, subtask and id. */
static int
close_into(struct ckpt_task *t, const char *prefix, int64_t id, struct ckpt_err *e)
{
	struct fsink *s = t->ost;
	char from[4200], to[4200];
	int bad;

	if (s->f == NULL)
		return 0;
	bad = fflush(s->f) != 0 || fsync(fileno(s->f)) != 0;
	bad |= fclose(s->f) != 0;
	s->f = NULL;
	path_of(from, sizeof from, t, ".inprogress-", t->sub, (int64_t)t->attempt);
	path_of(to, sizeof to, t, prefix, t->sub, id);
	if (bad || rename(from, to) < 0)
		return ckpt_err_sys(e, from, "cannot close the transaction");
	return 1;
}

/* Pre-commit: this checkpoint's records become a pending transaction named after it. */
static int
sink_snapshot(struct ckpt_task *t, int64_t id, struct ckpt_subtask *st, struct ckpt_err *e)
{
	struct fsink *s = t->ost;
	int r = close_into(t, ".pending-", id, e), k;

	if (r < 0)
		return -1;
	if (r > 0) {
		if (ckpt_grow(&s->pend, &s->cap, s->npend + 1, sizeof *s->pend, 8, e) < 0)
			return -1;
		s->pend[s->npend++] = id;
	}
	if ((k = ckpt_st_add_opstate(st, "pending", CKPT_MODE_LIST, e)) < 0)
		return -1;
	for (size_t i = 0; i < s->npend; i++) {
		char b[64];
		int len = snprintf(b, sizeof b, ".pending-%u-%" PRId64, t->sub, s->pend[i]);

		if (ckpt_st_add_entry(st, (size_t)k, b, (size_t)len, e) < 0)
			return -1;
	}
	return 0;
}

/* Commit: every pending transaction up to the completed checkpoint (later completions subsume earlier). */
static void
sink_complete(struct ckpt_task *t, int64_t id)
{
	struct fsink *s = t->ost;
	struct ckpt_err e = {0};
	size_t k = 0;

	for (size_t i = 0; i < s->npend; i++) {
		if (s->pend[i] <= id && commit(t, t->sub, s->pend[i], &e) == 0)
			continue;
		s->pend[k++] = s->pend[i];
	}
	s->npend = k;
}

/* Without checkpoints there is no transaction to wait for: the end of input commits directly. */
static void
sink_finish(struct ckpt_task *t)
{
	struct ckpt_err e = {0};

	if (t->job->p->interval_ms == 0)
		close_into(t, "part-", 0, &e);
}

static void
sink_dispose(struct ckpt_task *t)
{
	struct fsink *s = t->ost;

	if (s == NULL)
		return;
	if (s->f)
		fclose(s->f);
	free(s->pend);
	free(s);
	t->ost = NULL;
}

const struct ckpt_opdef ckpt_file_sink_def = {
	.open = sink_open,
	.record = sink_record,
	.finish = sink_finish,
	.snapshot = sink_snapshot,
	.complete = sink_complete,
	.dispose = sink_dispose,
};
