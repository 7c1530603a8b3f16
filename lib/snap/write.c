/*
 * write.c: writing a snapshot as tar, tar.gz, zip or a directory (ckpt-archive(5)),
 * whole or not at all: its state files spooled, then the manifest first and the members.
 */
#include <errno.h>
#include <ftw.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>

#include "snap.h"

int
ckpt_archive_kind_of(const char *path)
{
	size_t n = strlen(path);

	if (n > 1 && path[n - 1] == '/')
		return CKPT_ARCHIVE_DIR;
	if (n > 7 && strcmp(path + n - 7, ".tar.gz") == 0)
		return CKPT_ARCHIVE_TARGZ;
	if (n > 4 && strcmp(path + n - 4, ".tgz") == 0)
		return CKPT_ARCHIVE_TARGZ;
	if (n > 4 && strcmp(path + n - 4, ".tar") == 0)
		return CKPT_ARCHIVE_TAR;
	if (n > 4 && strcmp(path + n - 4, ".zip") == 0)
		return CKPT_ARCHIVE_ZIP;
	return -1;
}

/* ---- writing */

struct wmember {
	char *name;
	uint64_t off, size, xxh3;
};

/*
 * A streaming archive writer, one operator subtask at a time, so that memory
 * stays bounded by the manifest and one subtask: open; for each operator in
 * order, awriter_operator then awriter_subtask for its subtasks in
 * ascending index; then commit (the archive appears whole) or abort (nothing
 * appears).  Members are spooled to a temporary file next to path (directories:
 * written in a temporary directory) until commit writes the manifest first.
 */
struct ckpt_awriter {
	char *path;   /* as given, without a trailing '/' for directories */
	enum ckpt_archive_kind kind;
	FILE *spool;  /* archives: the members, one after the other */
	char *tmpdir; /* directories: built here, renamed into place */
	struct ckpt_model_out *out;
	json_t *ops;  /* the manifest's operators */
	json_t *subs; /* the current operator's subtasks */
	char *cur_id;
	uint32_t cur_p, cur_maxp;
	int64_t last_index;
	struct wmember *m;
	size_t nm, cap;
};

static void
awriter_free(struct ckpt_awriter *w)
{
	if (w->spool)
		fclose(w->spool);
	ckpt_model_out_free(w->out);
	json_decref(w->ops);
	for (size_t i = 0; i < w->nm; i++)
		free(w->m[i].name);
	free(w->m);
	free(w->cur_id);
	free(w->tmpdir);
	free(w->path);
	free(w);
}

static int
rm_one(const char *p, const struct stat *sb, int flag, struct FTW *f)
{
	(void)sb, (void)flag, (void)f;
	return remove(p);
}

/* Remove every temporary file; frees w (NULL is fine). */
static void
awriter_abort(struct ckpt_awriter *w)
{
	if (w == NULL)
		return;
	if (w->tmpdir)
		nftw(w->tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	awriter_free(w);
}

/* A temporary name next to path: "dir/.name.tmp.XXXXXX". */
static char *
temp_next_to(const char *path, struct ckpt_err *e)
{
	char *copy = ckpt_strdup(path, e), *copy2 = ckpt_strdup(path, e), *t = NULL;

	if (copy && copy2) {
		const char *d = dirname(copy), *b = basename(copy2);
		size_t n = strlen(d) + strlen(b) + 20;

		t = malloc(n);
		if (t)
			snprintf(t, n, "%s/.%s.tmp.XXXXXX", d, b);
		else
			ckpt_err_nomem(e, path);
	}
	free(copy);
	free(copy2);
	return t;
}

static int
open_spool(struct ckpt_awriter *w, struct ckpt_err *e)
{
	char *t = temp_next_to(w->path, e);
	int fd;

	if (t == NULL)
		return -1;
	fd = mkstemp(t);
	if (fd < 0) {
		free(t);
		return ckpt_err_sys(e, w->path, "cannot create");
	}
	unlink(t); /* the spool is never seen, whatever happens */
	free(t);
	w->spool = fdopen(fd, "w+b");
	if (w->spool == NULL) {
		close(fd);
		return ckpt_err_sys(e, w->path, "cannot create");
	}
	return 0;
}

/* Open a streaming writer of path as kind; NULL on error. */
static struct ckpt_awriter *
awriter_open(const char *path, enum ckpt_archive_kind kind, struct ckpt_err *e)
{
	struct ckpt_awriter *w = ckpt_calloc(1, sizeof *w, e);
	size_t n;

	if (w == NULL)
		return NULL;
	w->kind = kind;
	w->path = ckpt_strdup(path, e);
	if (w->path == NULL)
		goto fail;
	n = strlen(w->path);
	while (n > 1 && w->path[n - 1] == '/')
		w->path[--n] = '\0';
	w->ops = json_array();
	if (w->ops == NULL) {
		ckpt_err_nomem(e, path);
		goto fail;
	}
	if (kind == CKPT_ARCHIVE_DIR) {
		w->tmpdir = temp_next_to(w->path, e);
		if (w->tmpdir == NULL)
			goto fail;
		if (mkdtemp(w->tmpdir) == NULL) {
			ckpt_err_sys(e, path, "cannot create");
			free(w->tmpdir);
			w->tmpdir = NULL;
			goto fail;
		}
	} else if (open_spool(w, e) < 0) {
		goto fail;
	}
	return w;
fail:
	awriter_abort(w);
	return NULL;
}

/* Start the next operator: its id, uid, name, vertex, parallelism, max parallelism,
 * fully finished and coordinator are copied; its subtasks are not looked at. */
static int
awriter_operator(struct ckpt_awriter *w, const struct ckpt_operator *op, struct ckpt_err *e)
{
	json_t *o, *v;
	size_t i;

	/* what the reader would refuse is refused here, before anything is written */
	if (op->id == NULL || op->id[0] == '\0')
		return ckpt_err_set(e, CKPT_ERR_INPUT, w->path, "an operator without an id");
	if (op->max_parallelism < 1 || op->max_parallelism > CKPT_MAX_PARALLELISM_LIMIT ||
	    op->parallelism < 1 || op->parallelism > op->max_parallelism)
		return ckpt_err_set(e, CKPT_ERR_INPUT, w->path,
				    "operator \"%s\": parallelism %u with max parallelism %u", op->id,
				    op->parallelism, op->max_parallelism);
	json_array_foreach(w->ops, i, v)
		if (strcmp(json_string_value(json_object_get(v, "id")), op->id) == 0)
			return ckpt_err_set(e, CKPT_ERR_INPUT, w->path, "duplicate operator \"%s\"", op->id);
	o = ckpt_model_operator_head(op);
	w->subs = json_array();
	if (ckpt_json_append_new(w->ops, o) < 0 || ckpt_json_set_new(o, "subtasks", w->subs) < 0)
		return ckpt_err_nomem(e, w->path);
	free(w->cur_id);
	w->cur_id = ckpt_strdup(op->id, e);
	if (w->cur_id == NULL)
		return -1;
	w->cur_p = op->parallelism;
	w->cur_maxp = op->max_parallelism;
	w->last_index = -1;
	return 0;
}

/* "op/<id>/<index>", the id's bytes outside [A-Za-z0-9._-] as %XX. */
static char *
member_name(const char *id, uint32_t index)
{
	size_t n = strlen(id);
	char *s = malloc(n * 3 + 32), *o = s;

	if (s == NULL)
		return NULL;
	o += sprintf(o, "op/");
	for (const unsigned char *p = (const unsigned char *)id; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    *p == '-' || *p == '_' || (*p == '.' && p != (const unsigned char *)id))
			*o++ = (char)*p;
		else
			o += sprintf(o, "%%%02X", *p);
	}
	sprintf(o, "/%u", index);
	return s;
}

static int
mkdirs_for(const char *root, const char *name, struct ckpt_err *e)
{
	char p[4096];
	size_t n = (size_t)snprintf(p, sizeof p, "%s/%s", root, name);

	if (n >= sizeof p)
		return ckpt_err_set(e, CKPT_ERR_INPUT, root, "member name too long");
	for (char *s = p + strlen(root) + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST)
			return ckpt_err_sys(e, p, "cannot create directory");
		*s = '/';
	}
	return 0;
}

/* Write one state file: into the spool, or as a file of the directory. */
static int
write_member(struct ckpt_awriter *w, const struct ckpt_subtask *st, struct wmember *m,
	     struct ckpt_err *e)
{
	FILE *f = w->spool;
	char p[4096];
	int r = 0;

	if (w->kind == CKPT_ARCHIVE_DIR) {
		if (mkdirs_for(w->tmpdir, m->name, e) < 0)
			return -1;
		snprintf(p, sizeof p, "%s/%s", w->tmpdir, m->name);
		if ((f = fopen(p, "wb")) == NULL)
			return ckpt_err_sys(e, p, "cannot create");
	} else {
		m->off = (uint64_t)ftello(f);
	}
	if ((w->out = ckpt_model_out_new(f)) == NULL)
		r = ckpt_err_nomem(e, w->path);
	if (r == 0 && (ckpt_model_out_subtask(w->out, st) < 0 || ckpt_model_out_finish(w->out, &m->size, &m->xxh3) < 0))
		r = ckpt_err_sys(e, w->path, "write error");
	ckpt_model_out_free(w->out);
	w->out = NULL;
	if (w->kind == CKPT_ARCHIVE_DIR) {
		if (r == 0 && (fflush(f) != 0 || fsync(fileno(f)) != 0))
			r = ckpt_err_sys(e, p, "write error");
		if (fclose(f) != 0 && r == 0)
			r = ckpt_err_sys(e, p, "write error");
	}
	return r;
}

static int
any_entries(const struct ckpt_subtask *st)
{
	for (size_t i = 0; i < st->nops; i++)
		if (st->ops[i].n)
			return 1;
	return 0;
}

/* Write one subtask of the current operator; it must be loaded (or finished, or hold only handles).
 * Nothing of st is kept: the caller may unload or free it afterwards. */
static int
awriter_subtask(struct ckpt_awriter *w, const struct ckpt_subtask *st, struct ckpt_err *e)
{
	struct wmember m = {0};
	json_t *v;

	if (w->cur_id == NULL)
		return ckpt_err_set(e, CKPT_ERR_INPUT, w->path, "a subtask before its operator");
	if (st->index >= w->cur_p || (int64_t)st->index <= w->last_index)
		return ckpt_err_set(e, CKPT_ERR_INPUT, w->path,
				    "operator \"%s\": subtask %u out of order or beyond parallelism %u",
				    w->cur_id, st->index, w->cur_p);
	w->last_index = st->index;
	if (st->keyed && (st->kg_first > st->kg_last || st->kg_last >= w->cur_maxp))
		return ckpt_err_set(e, CKPT_ERR_INPUT, w->path,
				    "operator \"%s\": subtask %u: key groups %u-%u outside max parallelism %u",
				    w->cur_id, st->index, st->kg_first, st->kg_last, w->cur_maxp);
	if (st->finished && st->loaded && (st->nkv || st->nin || st->nout || any_entries(st)))
		return ckpt_err_set(e, CKPT_ERR_INPUT, w->path,
				    "operator \"%s\": subtask %u: a finished subtask holds no state", w->cur_id,
				    st->index);
	if (st->loaded && !st->finished) {
		if (ckpt_grow(&w->m, &w->cap, w->nm + 1, sizeof *w->m, 16, e) < 0)
			return -1;
		m.name = member_name(w->cur_id, st->index);
		if (m.name == NULL)
			return ckpt_err_nomem(e, w->path);
		w->m[w->nm++] = m;
		if (write_member(w, st, &w->m[w->nm - 1], e) < 0)
			return -1;
	}
	v = ckpt_model_subtask_manifest(st, st->loaded && !st->finished ? w->m[w->nm - 1].name : NULL);
	if (ckpt_json_append_new(w->subs, v) < 0)
		return ckpt_err_nomem(e, w->path);
	return 0;
}

static json_t *
manifest_json(struct ckpt_awriter *w, const struct ckpt_snapshot *s)
{
	json_t *o = json_pack("{s:s, s:i, s:I, s:o}", "format", "ckpt-archive", "version", 1, "checkpoint_id",
			      (json_int_t)s->checkpoint_id, "kind", s->kind ? json_string(s->kind) : json_null());
	json_t *mem = json_array();

	if (o == NULL || mem == NULL)
		goto fail;
	if (s->flink && json_object_set(o, "flink", s->flink) < 0)
		goto fail;
	if (json_object_set(o, "operators", w->ops) < 0 || json_object_set(o, "members", mem) < 0)
		goto fail;
	for (size_t i = 0; i < w->nm; i++) {
		char hex[17];

		ckpt_hex64(w->m[i].xxh3, hex);
		if (ckpt_json_append_new(mem, json_pack("{s:s, s:I, s:s}", "name", w->m[i].name, "size",
							(json_int_t)w->m[i].size, "xxh3", hex)) < 0)
			goto fail;
	}
	json_decref(mem);
	return o;
fail:
	json_decref(mem);
	json_decref(o);
	return NULL;
}


static int
commit_dir(struct ckpt_awriter *w, const char *text, struct ckpt_err *e)
{
	char p[4096];
	FILE *f;
	int r = 0;

	snprintf(p, sizeof p, "%s/%s", w->tmpdir, SNAP_MANIFEST_NAME);
	if ((f = fopen(p, "wb")) == NULL)
		return ckpt_err_sys(e, w->path, "cannot create");
	if (fputs(text, f) == EOF || fflush(f) != 0 || fsync(fileno(f)) != 0)
		r = ckpt_err_sys(e, w->path, "write error");
	if (fclose(f) != 0 && r == 0)
		r = ckpt_err_sys(e, w->path, "write error");
	if (r < 0)
		return -1;
	if (chmod(w->tmpdir, 0777 & ~(mode_t)ckpt_umask()) != 0) /* mkdtemp makes 0700 */
		return ckpt_err_sys(e, w->path, "cannot set permissions");
	if (rename(w->tmpdir, w->path) != 0)
		return ckpt_err_sys(e, w->path, "cannot rename into place");
	free(w->tmpdir);
	w->tmpdir = NULL;
	return ckpt_fsync_dir_of(w->path, e);
}
static int
copy_member(struct ckpt_awriter *w, struct archive *a, const struct wmember *m, unsigned char *buf)
{
	uint64_t done = 0;

	if (ckpt_arc_write_header(a, m->name, m->size) != ARCHIVE_OK)
		return -1;
	while (done < m->size) {
		size_t n = m->size - done < SNAP_BLOCK ? (size_t)(m->size - done) : SNAP_BLOCK;
		ssize_t k = pread(fileno(w->spool), buf, n, (off_t)(m->off + done));

		if (k <= 0)
			return -1;
		if (ckpt_arc_write_all(a, buf, (size_t)k) < 0)
			return -1;
		done += (uint64_t)k;
	}
	return 0;
}
static int
commit_archive(struct ckpt_awriter *w, const char *text, struct ckpt_err *e)
{
	struct ckpt_atomic *at = NULL;
	struct archive *a = NULL;
	unsigned char *buf = NULL;
	int r = -1;

	if (fflush(w->spool) != 0 || ferror(w->spool))
		return ckpt_err_sys(e, w->path, "write error");
	at = ckpt_atomic_open(w->path, e);
	if (at == NULL)
		return -1;
	buf = malloc(SNAP_BLOCK);
	a = buf ? ckpt_arc_open_write(w->kind, fileno(ckpt_atomic_file(at))) : NULL;
	if (a == NULL) {
		ckpt_err_set(e, CKPT_ERR_NOMEM, w->path, "cannot start the archive");
		goto out;
	}
	if (ckpt_arc_write_header(a, SNAP_MANIFEST_NAME, strlen(text)) != ARCHIVE_OK ||
	    ckpt_arc_write_all(a, text, strlen(text)) < 0)
		goto arcerr;
	for (size_t i = 0; i < w->nm; i++)
		if (copy_member(w, a, &w->m[i], buf) < 0)
			goto arcerr;
	if (archive_write_close(a) != ARCHIVE_OK)
		goto arcerr;
	r = ckpt_atomic_commit(at, e);
	at = NULL;
	goto out;
arcerr:
	errno = archive_errno(a) > 0 ? archive_errno(a) : EIO;
	ckpt_err_sys(e, w->path, "write error");
out:
	if (a)
		archive_write_free(a);
	ckpt_atomic_abort(at);
	free(buf);
	return r;
}

/* Write the manifest (checkpoint id, kind and flink facts taken from s) and the members; frees w. */
static int
awriter_commit(struct ckpt_awriter *w, const struct ckpt_snapshot *s, struct ckpt_err *e)
{
	json_t *man = manifest_json(w, s);
	char *text = man ? json_dumps(man, JSON_PRESERVE_ORDER | JSON_INDENT(1)) : NULL;
	int r;

	json_decref(man);
	if (text != NULL) { /* the manifest ends its line, like any text file */
		size_t n = strlen(text);
		char *t = ckpt_reallocarray(text, n + 2, 1, NULL);

		if (t == NULL)
			free(text);
		else
			memcpy(t + n, "\n", 2);
		text = t;
	}
	if (text == NULL) {
		awriter_abort(w);
		return ckpt_err_nomem(e, "");
	}
	r = w->kind == CKPT_ARCHIVE_DIR ? commit_dir(w, text, e) : commit_archive(w, text, e);
	free(text);
	awriter_abort(w);
	return r;
}

int
ckpt_snapshot_write_with(struct ckpt_snapshot *s, const char *path, enum ckpt_archive_kind kind,
			 int (*fill)(void *arg, struct ckpt_operator *op, struct ckpt_subtask *st,
				     struct ckpt_err *e),
			 void (*drop)(void *arg, struct ckpt_subtask *st), void *arg, struct ckpt_err *e)
{
	struct ckpt_awriter *w = awriter_open(path, kind, e);
	uint64_t done = 0, total = 0;

	if (w == NULL)
		return -1;
	for (size_t i = 0; i < s->nops; i++)
		total += s->ops[i].nsubtasks;
	ckpt_progress_begin(s, "subtasks", total);
	for (size_t i = 0; i < s->nops; i++) {
		struct ckpt_operator *op = &s->ops[i];

		if (awriter_operator(w, op, e) < 0)
			goto fail;
		for (size_t k = 0; k < op->nsubtasks; k++) {
			struct ckpt_subtask *st = &op->subtasks[k];
			int r = fill(arg, op, st, e);

			if (r == 0)
				r = awriter_subtask(w, st, e);
			drop(arg, st);
			if (r < 0)
				goto fail;
			ckpt_progress_at(s, ++done);
		}
	}
	ckpt_progress_end(s);
	return awriter_commit(w, s, e);
fail:
	ckpt_progress_end(s);
	awriter_abort(w);
	return -1;
}

/* The snapshot's own subtasks: loaded for the write when not loaded already (and then unloaded). */
struct own_load {
	struct ckpt_snapshot *s;
	int was;
};

static int
own_fill(void *arg, struct ckpt_operator *op, struct ckpt_subtask *st, struct ckpt_err *e)
{
	struct own_load *l = arg;

	l->was = st->loaded;
	if (!l->was && st->nhandles == 0)
		return ckpt_subtask_load(l->s, op, st, e);
	return 0;
}

static void
own_drop(void *arg, struct ckpt_subtask *st)
{
	const struct own_load *l = arg;

	if (!l->was)
		ckpt_subtask_unload(st);
}

int
ckpt_snapshot_write(struct ckpt_snapshot *s, const char *path, enum ckpt_archive_kind kind,
		    struct ckpt_err *e)
{
	struct own_load l = {s, 0};

	return ckpt_snapshot_write_with(s, path, kind, own_fill, own_drop, &l, e);
}
