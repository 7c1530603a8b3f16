/*
 * list.c: discovery (ckpt-inspect -l, --latest): every checkpoint and savepoint under a
 * directory tree or an S3 prefix, whether it is complete and why not, and the newest complete one.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "snap.h"

#define LIST_DEPTH 64    /* directories deeper than this are not entered */

enum cand { FLINK, FLINK_NO_META, ARCHIVE_FILE, ARCHIVE_DIR };

struct seen {
	dev_t dev;
	ino_t ino;
	int used;
};

struct walk {
	struct ckpt_found *found;
	unsigned char *how; /* enum cand of each found[i] */
	size_t n, cap;
	struct seen *seen; /* directories entered (a symbolic link met twice is not followed again): */
	size_t nseen, seencap; /* a hash set, open addressing, seencap a power of two */
	struct ckpt_err *e;
};

/* ---- names */

/* Names compared with runs of digits as numbers, so that chk-9 comes before chk-10. */
static int
natcmp(const char *a, const char *b)
{
	const char *a0 = a, *b0 = b;

	while (*a && *b) {
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			size_t na, nb;
			int c;

			while (*a == '0' && isdigit((unsigned char)a[1]))
				a++;
			while (*b == '0' && isdigit((unsigned char)b[1]))
				b++;
			for (na = 0; isdigit((unsigned char)a[na]); na++)
				;
			for (nb = 0; isdigit((unsigned char)b[nb]); nb++)
				;
			if (na != nb)
				return na < nb ? -1 : 1;
			if ((c = strncmp(a, b, na)) != 0)
				return c;
			a += na;
			b += nb;
		} else if (*a != *b) {
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		} else {
			a++;
			b++;
		}
	}
	if (*a || *b)
		return *a ? 1 : -1;
	return strcmp(a0, b0);
}

static int
by_natname(const void *x, const void *y)
{
	return natcmp(*(char *const *)x, *(char *const *)y);
}

/* ---- the walk: what is there, by name and type alone */

static int
add(struct walk *w, char *path, enum cand how)
{
	if (path == NULL)
		return -1;
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 64;
		struct ckpt_found *f = ckpt_reallocarray(w->found, cap, sizeof *f, w->e);
		unsigned char *h = f ? ckpt_reallocarray(w->how, cap, 1, w->e) : NULL;

		if (f)
			w->found = f;
		if (h == NULL) {
			free(path);
			return -1;
		}
		w->how = h;
		w->cap = cap;
	}
	memset(&w->found[w->n], 0, sizeof w->found[w->n]);
	w->found[w->n].path = path;
	w->found[w->n].checkpoint_id = -1;
	w->found[w->n].mtime_sec = -1;
	w->how[w->n++] = (unsigned char)how;
	return 0;
}

static struct seen *
seen_slot(struct seen *t, size_t cap, dev_t dev, ino_t ino)
{
	size_t i = (size_t)(((uint64_t)ino * UINT64_C(0x9E3779B97F4A7C15)) ^ (uint64_t)dev) & (cap - 1);

	while (t[i].used && (t[i].dev != dev || t[i].ino != ino))
		i = (i + 1) & (cap - 1);
	return &t[i];
}

/* 1 when the directory (sb) was entered before: a symbolic link loop, or a second way to it. */
static int
seen_dir(struct walk *w, const struct stat *sb)
{
	struct seen *slot;

	if (2 * (w->nseen + 1) > w->seencap) {
		size_t cap = w->seencap ? 2 * w->seencap : 256;
		struct seen *t = ckpt_calloc(cap, sizeof *t, w->e);

		if (t == NULL)
			return -1;
		for (size_t i = 0; i < w->seencap; i++)
			if (w->seen[i].used)
				*seen_slot(t, cap, w->seen[i].dev, w->seen[i].ino) = w->seen[i];
		free(w->seen);
		w->seen = t;
		w->seencap = cap;
	}
	slot = seen_slot(w->seen, w->seencap, sb->st_dev, sb->st_ino);
	if (slot->used)
		return 1;
	*slot = (struct seen){.dev = sb->st_dev, .ino = sb->st_ino, .used = 1};
	w->nseen++;
	return 0;
}

/* Is dir/name there, and a regular file (after symbolic links)? */
static int
has_file(const char *dir, const char *name)
{
	char p[4096];
	struct stat sb;

	if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, name) >= sizeof p)
		return 0;
	return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* The names in dir, sorted, "." and ".." left out; *n of them (free each and the array). */
static char **
read_names(const char *dir, size_t *n, struct ckpt_err *e)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **v = NULL;
	size_t cap = 0;

	*n = 0;
	if (d == NULL) {
		ckpt_err_sys(e, dir, "cannot open");
		return NULL;
	}
	while ((errno = 0, de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (*n == cap) {
			char **nv = ckpt_reallocarray(v, cap ? 2 * cap : 16, sizeof *v, e);

			if (nv == NULL)
				goto fail;
			v = nv;
			cap = cap ? 2 * cap : 16;
		}
		if ((v[*n] = ckpt_strdup(de->d_name, e)) == NULL)
			goto fail;
		(*n)++;
	}
	if (errno) {
		ckpt_err_sys(e, dir, "cannot read");
		goto fail;
	}
	closedir(d);
	if (v == NULL && (v = ckpt_calloc(1, sizeof *v, e)) == NULL)
		return NULL;
	qsort(v, *n, sizeof *v, by_natname);
	return v;
fail:
	closedir(d);
	while (*n > 0)
		free(v[--*n]);
	free(v);
	return NULL;
}

static int walk_dir(struct walk *w, const char *dir, int depth);

/* One directory entry: a directory to enter (*dirs counts them), or an archive file. */
static int
walk_entry(struct walk *w, const char *dir, const char *name, int skip_flink_dirs, int depth, size_t *dirs)
{
	char *p = ckpt_snap_path_join(dir, name, w->e);
	struct stat sb;
	int r = 0;

	if (p == NULL)
		return -1;
	if (stat(p, &sb) != 0) {
		if (errno == ENOENT || errno == ELOOP) /* a dangling link, a link to itself */
			goto out;
		r = ckpt_err_sys(w->e, p, "cannot open");
		goto out;
	}
	if (S_ISDIR(sb.st_mode)) {
		++*dirs;
		/* Flink's shared/ and taskowned/ beside chk-N hold state files, never snapshots */
		if (skip_flink_dirs && (strcmp(name, "shared") == 0 || strcmp(name, "taskowned") == 0))
			goto out;
		r = walk_dir(w, p, depth + 1);
	} else if (S_ISREG(sb.st_mode) && ckpt_snap_archive_name(name)) {
		r = add(w, p, ARCHIVE_FILE);
		p = NULL;
	}
out:
	free(p);
	return r;
}

static int
walk_dir(struct walk *w, const char *dir, int depth)
{
	struct stat sb;
	char **names;
	size_t n, dirs = 0, before = w->n;
	int r = 0, flink_job = 0, seen;

	if (stat(dir, &sb) != 0)
		return ckpt_err_sys(w->e, dir, "cannot open");
	if (depth > LIST_DEPTH || (seen = seen_dir(w, &sb)) > 0)
		return 0;
	if (seen < 0)
		return -1;
	if (has_file(dir, "_metadata"))
		return add(w, ckpt_strdup(dir, w->e), FLINK);
	if (has_file(dir, SNAP_MANIFEST_NAME))
		return add(w, ckpt_strdup(dir, w->e), ARCHIVE_DIR);
	if (ckpt_snap_chk_id(ckpt_snap_path_base(dir)) >= 0 && strchr(ckpt_snap_path_base(dir), '.') == NULL)
		return add(w, ckpt_strdup(dir, w->e), FLINK_NO_META);
	if ((names = read_names(dir, &n, w->e)) == NULL)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (ckpt_snap_chk_id(names[i]) >= 0 && strchr(names[i], '.') == NULL)
			flink_job = 1;
	for (size_t i = 0; i < n && r == 0; i++)
		r = walk_entry(w, dir, names[i], flink_job, depth, &dirs);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	/* a Flink savepoint directory holding state files but no _metadata yet */
	if (r == 0 && dirs == 0 && w->n == before && strncmp(ckpt_snap_path_base(dir), "savepoint-", 10) == 0)
		r = add(w, ckpt_strdup(dir, w->e), FLINK_NO_META);
	return r;
}

/* ---- a prefix in S3: its listing stands for the tree, walked as walk_dir walks a directory */

struct s3key {
	char *rel;             /* the key below the listed directory */
	struct ckpt_s3_entry o;
};

struct s3tree {
	struct s3key *v;
	size_t n, cap;
	const char *scheme;    /* as the user spelt it: s3://, s3a://, s3p:// */
	size_t skip;           /* bytes of the listed directory's URL, its '/' included */
	struct ckpt_err *e;
};

static int
s3_note(void *arg, const struct ckpt_s3_entry *o)
{
	struct s3tree *t = arg;
	struct s3key *k;

	if (strlen(o->url) <= t->skip || ckpt_grow(&t->v, &t->cap, t->n + 1, sizeof *t->v, 64, t->e) < 0)
		return strlen(o->url) <= t->skip ? 0 : -1;
	k = &t->v[t->n];
	k->o = *o;
	if ((k->rel = ckpt_strdup(o->url + t->skip, t->e)) == NULL)
		return -1;
	t->n++;
	return 0;
}

/* Keys in the order of the local walk: component by component, numbers as numbers. */
static int
by_components(const void *x, const void *y)
{
	const char *a = ((const struct s3key *)x)->rel, *b = ((const struct s3key *)y)->rel;

	for (;;) {
		size_t na = strcspn(a, "/"), nb = strcspn(b, "/");
		char ca[1024], cb[1024];
		int c;

		snprintf(ca, sizeof ca, "%.*s", (int)na, a);
		snprintf(cb, sizeof cb, "%.*s", (int)nb, b);
		if ((c = natcmp(ca, cb)) != 0)
			return c;
		if (a[na] == '\0' || b[nb] == '\0') /* a file before the directory of the same name */
			return (a[na] != '\0') - (b[nb] != '\0');
		a += na + 1;
		b += nb + 1;
	}
}

/* The snapshot at dir (an s3:// URL) added in the user's scheme, with the time and size the
 * listing gives its _metadata (meta; NULL: none). */
static int
s3_add(struct walk *w, const struct s3tree *t, const char *dir, enum cand how, const struct ckpt_s3_entry *meta)
{
	char *p = ckpt_calloc(strlen(t->scheme) + strlen(dir) + 1, 1, w->e);

	if (p == NULL)
		return -1;
	sprintf(p, "%s%s", t->scheme, dir + 5); /* dir is s3://...: the user's scheme instead */
	if (add(w, p, how) < 0)
		return -1;
	if (meta) {
		w->found[w->n - 1].mtime_sec = meta->mtime_sec;
		w->found[w->n - 1].mtime_nsec = meta->mtime_nsec;
		w->found[w->n - 1].size = meta->size;
	}
	return 0;
}

/* dir (an s3:// URL without the final '/') holds keys [lo, hi), whose rel has off bytes of it. */
static int
walk_s3(struct walk *w, const struct s3tree *t, const char *dir, size_t lo, size_t hi, size_t off, int depth)
{
	size_t before = w->n, dirs = 0;
	int r = 0, flink_job = 0;

	if (depth > LIST_DEPTH)
		return 0;
	for (size_t i = lo; i < hi; i++)
		if (strcmp(t->v[i].rel + off, "_metadata") == 0)
			return s3_add(w, t, dir, FLINK, &t->v[i].o);
	for (size_t i = lo; i < hi; i++)
		if (strcmp(t->v[i].rel + off, SNAP_MANIFEST_NAME) == 0)
			return 0; /* ckpt's own archives are not read from S3 */
	if (ckpt_snap_chk_id(ckpt_snap_path_base(dir)) >= 0 && strchr(ckpt_snap_path_base(dir), '.') == NULL)
		return s3_add(w, t, dir, FLINK_NO_META, NULL);
	for (size_t i = lo; i < hi; i++) {
		const char *rel = t->v[i].rel + off, *slash = strchr(rel, '/');
		char name[1024];

		snprintf(name, sizeof name, "%.*s", (int)(slash ? slash - rel : 0), rel);
		if (slash && ckpt_snap_chk_id(name) >= 0 && strchr(name, '.') == NULL)
			flink_job = 1;
	}
	for (size_t i = lo; i < hi && r == 0;) {
		const char *rel = t->v[i].rel + off, *slash = strchr(rel, '/');
		size_t n = slash ? (size_t)(slash - rel) : 0, j = i + 1;
		char *sub;

		if (slash == NULL) { /* a file: archives are not read from S3 */
			i++;
			continue;
		}
		while (j < hi && strncmp(t->v[j].rel + off, rel, n + 1) == 0)
			j++;
		dirs++;
		/* Flink's shared/ and taskowned/ beside chk-N hold state files, never snapshots */
		if (!(flink_job && ((n == 6 && strncmp(rel, "shared", 6) == 0) ||
				   (n == 9 && strncmp(rel, "taskowned", 9) == 0)))) {
			if ((sub = ckpt_calloc(strlen(dir) + n + 2, 1, w->e)) == NULL)
				return -1;
			sprintf(sub, "%s/%.*s", dir, (int)n, rel);
			r = walk_s3(w, t, sub, i, j, off + n + 1, depth + 1);
			free(sub);
		}
		i = j;
	}
	/* a Flink savepoint directory holding state files but no _metadata yet */
	if (r == 0 && dirs == 0 && w->n == before && strncmp(ckpt_snap_path_base(dir), "savepoint-", 10) == 0)
		r = s3_add(w, t, dir, FLINK_NO_META, NULL);
	return r;
}

/* root (s3://, s3a://, s3p://): a prefix, or the _metadata of a snapshot, listed then walked. */
static int
list_s3(struct walk *w, const char *root, struct ckpt_err *e)
{
	const char *rest = strstr(root, "://") + 3;
	size_t n = strlen(rest), schemelen = (size_t)(rest - root);
	char scheme[8], *dir = ckpt_calloc(n + 8, 1, e), *prefix = ckpt_calloc(n + 8, 1, e);
	struct s3tree t = {.scheme = scheme, .e = e};
	int r = -1;

	snprintf(scheme, sizeof scheme, "%.*s", (int)schemelen, root);
	if (dir == NULL || prefix == NULL)
		goto out;
	while (n > 0 && rest[n - 1] == '/')
		n--;
	sprintf(dir, "s3://%.*s", (int)n, rest);
	if (strcmp(ckpt_snap_path_base(dir), "_metadata") == 0) { /* the _metadata itself: its directory is the snapshot */
		strcpy(prefix, dir);
		*strrchr(dir, '/') = '\0';
	} else {
		sprintf(prefix, "%s/", dir);
	}
	t.skip = strlen(dir) + 1;
	if (ckpt_s3_list(prefix, s3_note, &t, e) < 0)
		goto out;
	if (t.n == 0) {
		r = ckpt_err_set(e, CKPT_ERR_INPUT, root, "no such prefix (no objects under %s)", prefix);
		goto out;
	}
	qsort(t.v, t.n, sizeof *t.v, by_components);
	r = walk_s3(w, &t, dir, 0, t.n, 0, 0);
out:
	for (size_t i = 0; i < t.n; i++)
		free(t.v[i].rel);
	free(t.v);
	free(dir);
	free(prefix);
	return r;
}

/* ---- looking at each one */

/* The first problem a check reports (not what it only could not check). */
struct first {
	char text[1024];
	int any;
};

static void
first_problem(void *arg, const char *where, const char *what)
{
	struct first *F = arg;

	if (F->any || strncmp(what, "not checked: ", 13) == 0)
		return;
	snprintf(F->text, sizeof F->text, "%s: %s", where, what);
	F->any = 1;
}

static int
set_reason(struct ckpt_found *f, const char *text, struct ckpt_err *e)
{
	f->complete = 0;
	if ((f->reason = ckpt_strdup(text, e)) == NULL)
		return -1;
	return 0;
}

/* A library error that is an answer about the snapshot (it is damaged) becomes its reason. */
static int
reason_of(struct ckpt_found *f, const struct ckpt_err *le, struct ckpt_err *e)
{
	char text[1600];

	if (le->kind == CKPT_ERR_NOMEM) {
		*e = *le;
		return -1;
	}
	ckpt_err_format(le, text, sizeof text);
	return set_reason(f, text, e);
}

static const char *
kind_word(const char *k)
{
	if (k == NULL)
		return NULL;
	return strcmp(k, "checkpoint") == 0 ? "checkpoint" : strcmp(k, "savepoint") == 0 ? "savepoint" : NULL;
}

/* The kind by name when the file does not say: chk-N is a checkpoint, savepoint-* a savepoint. */
static const char *
kind_by_name(const char *path)
{
	const char *b = ckpt_snap_path_base(path);

	if (ckpt_snap_chk_id(b) >= 0)
		return "checkpoint";
	return strncmp(b, "savepoint-", 10) == 0 ? "savepoint" : NULL;
}

static void
set_time(struct ckpt_found *f, const struct stat *sb)
{
	f->mtime_sec = (int64_t)sb->st_mtim.tv_sec;
	f->mtime_nsec = sb->st_mtim.tv_nsec;
}

/* What a decoded _metadata says: id, kind, the files it names and their sizes. */
static void
flink_facts(struct ckpt_found *f, const struct ckpt_snapshot *s)
{
	const json_t *files = json_object_get(s->flink, "files");
	const char *guess = json_string_value(json_object_get(json_object_get(s->flink, "kind_guess"), "kind"));

	f->checkpoint_id = (int64_t)s->checkpoint_id;
	/* before format version 4 the file may not say; then what it holds, then its name */
	if (kind_word(s->kind) || kind_word(guess))
		f->kind = kind_word(s->kind) ? kind_word(s->kind) : kind_word(guess);
	f->files = json_array_size(files);
	for (size_t i = 0; i < json_array_size(files); i++)
		f->size += (uint64_t)json_integer_value(json_object_get(json_array_get(files, i), "size"));
}

/* A Flink snapshot: its _metadata decoded, then every file it names there with its size (-c: and
 * its state parsed, as -c checks it). */
static int
look_flink(struct ckpt_found *f, const struct ckpt_list_opts *o, struct ckpt_err *e)
{
	struct ckpt_err le = {0};
	struct ckpt_snapshot *s = NULL;
	struct first F = {.any = 0};
	char *meta = ckpt_snap_path_join(f->path, "_metadata", e);
	struct stat sb;
	uint64_t nfiles = 0, bytes = 0;
	long n;
	int r = -1;

	f->format = "flink metadata";
	f->kind = kind_by_name(f->path);
	f->checkpoint_id = ckpt_snap_chk_id(ckpt_snap_path_base(f->path));
	if (meta == NULL)
		return -1;
	if (ckpt_s3_is_url(f->path)) { /* when and how big: as the listing said */
		sb.st_size = (off_t)f->size;
	} else if (stat(meta, &sb) != 0) {
		ckpt_err_sys(&le, meta, "cannot open");
		r = reason_of(f, &le, e);
		goto out;
	} else {
		set_time(f, &sb);
		f->size = (uint64_t)sb.st_size;
	}
	if (sb.st_size == 0) {
		r = set_reason(f, "_metadata is empty (being written)", e);
		goto out;
	}
	if ((s = ckpt_snapshot_open(meta, &le)) == NULL ||
	    ckpt_flink_state_enable(s, o->roots, o->nroots, &le) < 0) {
		r = reason_of(f, &le, e);
		goto out;
	}
	flink_facts(f, s);
	n = o->check ? ckpt_flink_state_verify(s, first_problem, &F, &nfiles, &bytes, &le)
		     : ckpt_flink_state_files(s, first_problem, &F, &nfiles, &bytes, &le);
	if (n < 0)
		r = reason_of(f, &le, e);
	else if (n > 0)
		r = set_reason(f, F.any ? F.text : "not complete", e);
	else
		r = 0;
out:
	ckpt_snapshot_free(s);
	free(meta);
	return r;
}

/* ckpt's own archive (or unpacked directory): its manifest, then every member there, whole (-c:
 * every checksum).  1 when the file is no snapshot of ckpt's at all (another tar or zip). */
static int
look_archive(struct ckpt_found *f, int is_dir, const struct ckpt_list_opts *o, struct ckpt_err *e)
{
	struct ckpt_err le = {0};
	struct ckpt_snapshot *s;
	struct first F = {.any = 0};
	struct stat sb;
	char *stamp = is_dir ? ckpt_snap_path_join(f->path, SNAP_MANIFEST_NAME, e) : ckpt_strdup(f->path, e);
	uint64_t members = 0, bytes = 0;
	long n;
	int r = -1;

	/* by name until the archive itself says */
	f->format = is_dir ? "directory" : ckpt_snap_has_suffix(f->path, ".zip") ? "zip"
					 : ckpt_snap_has_suffix(f->path, ".tar") ? "tar" : "tar.gz";
	f->kind = kind_by_name(f->path);
	f->checkpoint_id = ckpt_snap_chk_id(ckpt_snap_path_base(f->path));
	if (stamp == NULL)
		return -1;
	if (stat(stamp, &sb) == 0) {
		set_time(f, &sb);
		f->size = (uint64_t)sb.st_size;
	}
	if ((s = ckpt_snapshot_open(f->path, &le)) == NULL) {
		/* a tar or zip of something else is not listed; a damaged one of ckpt's is */
		if (!is_dir && strncmp(le.text, "not a ckpt archive", 18) == 0)
			r = 1;
		else
			r = reason_of(f, &le, e);
		goto out;
	}
	f->format = ckpt_snapshot_format(s);
	f->checkpoint_id = (int64_t)s->checkpoint_id;
	if (kind_word(s->kind))
		f->kind = kind_word(s->kind);
	if (s->backing && ((struct ckpt_model_backing *)s->backing)->load == ckpt_snap_arch_load) {
		const struct ckpt_snap_arch *b = s->backing;

		f->files = b->nmembers;
		for (size_t i = 0; is_dir && i < b->nmembers; i++)
			f->size += b->members[i].size;
	}
	if (o->check) {
		n = ckpt_archive_verify(f->path, first_problem, &F, &members, &bytes, &le);
		if (n < 0)
			r = reason_of(f, &le, e);
		else
			r = n > 0 ? set_reason(f, F.any ? F.text : "not complete", e) : 0;
	} else {
		r = ckpt_snap_members_check(s, &le) < 0 ? reason_of(f, &le, e) : 0;
	}
out:
	ckpt_snapshot_free(s);
	free(stamp);
	return r;
}

/* 0 looked at, 1 not a snapshot (dropped), -1 error (out of memory). */
static int
look(struct ckpt_found *f, enum cand how, const struct ckpt_list_opts *o, struct ckpt_err *e)
{
	f->complete = 1;
	switch (how) {
	case FLINK:
		return look_flink(f, o, e);
	case FLINK_NO_META:
		f->format = "flink metadata";
		f->kind = kind_by_name(f->path);
		f->checkpoint_id = ckpt_snap_chk_id(ckpt_snap_path_base(f->path));
		return set_reason(f, "no _metadata (being written, or abandoned)", e);
	case ARCHIVE_FILE:
		return look_archive(f, 0, o, e);
	case ARCHIVE_DIR:
		return look_archive(f, 1, o, e);
	}
	return 0;
}

/* ---- in parallel: each reader takes the next one not yet taken */

struct looks {
	struct walk *w;
	const struct ckpt_list_opts *o;
	unsigned char *drop;
	pthread_mutex_t arc; /* libarchive initialises some of its tables lazily: one archive at a time */
};

static int
look_one(void *arg, size_t i, struct ckpt_err *e)
{
	struct looks *L = arg;
	int r;

	if (L->w->how[i] == ARCHIVE_FILE || L->w->how[i] == ARCHIVE_DIR) {
		pthread_mutex_lock(&L->arc);
		r = look(&L->w->found[i], (enum cand)L->w->how[i], L->o, e);
		pthread_mutex_unlock(&L->arc);
	} else {
		r = look(&L->w->found[i], (enum cand)L->w->how[i], L->o, e);
	}
	if (r > 0)
		L->drop[i] = 1;
	return r < 0 ? -1 : 0;
}

static int
look_all(struct walk *w, const struct ckpt_list_opts *o, struct ckpt_err *e)
{
	struct looks L = {.w = w, .o = o};
	size_t k = 0;
	int r;

	if ((L.drop = ckpt_calloc(w->n ? w->n : 1, 1, e)) == NULL)
		return -1;
	pthread_mutex_init(&L.arc, NULL);
	r = ckpt_snap_each(w->n, look_one, &L, e);
	pthread_mutex_destroy(&L.arc);
	for (size_t i = 0; i < w->n; i++) {
		if (L.drop[i]) {
			free(w->found[i].path);
			free(w->found[i].reason);
			continue;
		}
		w->found[k++] = w->found[i];
	}
	w->n = k;
	free(L.drop);
	return r;
}

int
ckpt_snapshot_list(const char *root, const struct ckpt_list_opts *o, struct ckpt_found **out, size_t *n,
		   struct ckpt_err *e)
{
	struct walk w = {.e = e};
	struct stat sb;
	char *top = ckpt_strdup(root, e);
	size_t len = top ? strlen(top) : 0;
	int r;

	*out = NULL;
	*n = 0;
	if (top == NULL)
		return -1;
	while (len > 1 && top[len - 1] == '/') /* JOB/ is JOB: its name says what it is */
		top[--len] = '\0';
	if (ckpt_s3_is_url(top)) {
		r = list_s3(&w, root, e);
	} else if (stat(top, &sb) != 0) {
		r = ckpt_err_sys(e, root, "cannot open"); /* as the user named it */
	} else if (S_ISDIR(sb.st_mode)) {
		r = walk_dir(&w, top, 0);
	} else if (strcmp(ckpt_snap_path_base(root), "_metadata") == 0) {
		/* the _metadata itself: its directory is the snapshot */
		const char *slash = strrchr(root, '/');
		char *dir = slash ? strndup(root, (size_t)(slash - root) + (slash == root)) : strdup(".");

		r = dir ? add(&w, dir, FLINK) : ckpt_err_nomem(e, root);
	} else {
		r = add(&w, ckpt_strdup(root, e), ARCHIVE_FILE);
	}
	if (r == 0)
		r = look_all(&w, o, e);
	free(w.seen);
	free(w.how);
	free(top);
	if (r < 0) {
		ckpt_found_free(w.found, w.n);
		return -1;
	}
	*out = w.found;
	*n = w.n;
	return 0;
}

void
ckpt_found_free(struct ckpt_found *f, size_t n)
{
	for (size_t i = 0; f && i < n; i++) {
		free(f[i].path);
		free(f[i].reason);
	}
	free(f);
}

/* ---- the newest complete one */

/* The directory a checkpoint lies in: checkpoints side by side are one job's. */
static size_t
parent_len(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? (size_t)(s - path) : 0;
}

static int
same_job(const struct ckpt_found *a, const struct ckpt_found *b)
{
	size_t n = parent_len(a->path);

	return n == parent_len(b->path) && strncmp(a->path, b->path, n) == 0;
}

/* Is a newer than b (time written, then checkpoint id)? */
static int
newer(const struct ckpt_found *a, const struct ckpt_found *b)
{
	if (a->mtime_sec != b->mtime_sec)
		return a->mtime_sec > b->mtime_sec;
	if (a->mtime_nsec != b->mtime_nsec)
		return a->mtime_nsec > b->mtime_nsec;
	return a->checkpoint_id > b->checkpoint_id;
}

static int
is_checkpoint(const struct ckpt_found *f)
{
	return f->kind && strcmp(f->kind, "checkpoint") == 0;
}

/* Complete checkpoints by job, then highest id (then newest) first. */
static int
by_job_then_id(const void *x, const void *y, void *arg)
{
	const struct ckpt_found *f = arg, *a = &f[*(const size_t *)x], *b = &f[*(const size_t *)y];
	size_t na = parent_len(a->path), nb = parent_len(b->path);
	int c = strncmp(a->path, b->path, na < nb ? na : nb);

	if (c == 0 && na != nb)
		c = na < nb ? -1 : 1;
	if (c != 0)
		return c;
	if (a->checkpoint_id != b->checkpoint_id)
		return a->checkpoint_id > b->checkpoint_id ? -1 : 1;
	if (newer(a, b) != newer(b, a))
		return newer(a, b) ? -1 : 1;
	return *(const size_t *)x < *(const size_t *)y ? -1 : 1;
}

int
ckpt_found_latest(const struct ckpt_found *f, size_t n, size_t *best, struct ckpt_err *e)
{
	size_t *idx = ckpt_calloc(n ? n : 1, sizeof *idx, e), m = 0, b = n;

	*best = n;
	if (idx == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (f[i].complete && is_checkpoint(&f[i]))
			idx[m++] = i;
		else if (f[i].complete && (b == n || newer(&f[i], &f[b])))
			b = i;
	}
	qsort_r(idx, m, sizeof *idx, by_job_then_id, (void *)f);
	/* of each job's checkpoints, only the first in that order (its highest id) counts */
	for (size_t k = 0; k < m; k++) {
		size_t i = idx[k];

		if (k > 0 && same_job(&f[idx[k - 1]], &f[i]))
			continue;
		if (b == n || newer(&f[i], &f[b]) || (!newer(&f[b], &f[i]) && i < b))
			b = i;
	}
	free(idx);
	*best = b;
	return 0;
}

/* ---- as JSON */

json_t *
ckpt_found_to_json(const struct ckpt_found *f)
{
	char when[64] = "";
	struct tm tm;
	time_t t = (time_t)f->mtime_sec;

	if (f->mtime_sec >= 0 && gmtime_r(&t, &tm) != NULL)
		strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_pack("{s:s, s:s?, s:s, s:o, s:o, s:I, s:I, s:b, s:s?}", "path", f->path, "kind", f->kind,
			 "format", f->format, "checkpoint_id",
			 f->checkpoint_id >= 0 ? json_integer((json_int_t)f->checkpoint_id) : json_null(), "time",
			 *when ? json_string(when) : json_null(), "size", (json_int_t)f->size, "files",
			 (json_int_t)f->files, "complete", f->complete, "reason", f->reason);
}
