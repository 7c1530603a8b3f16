/*
 * orphans.c: ckpt-inspect --orphans: the files under a directory that no complete checkpoint or
 * savepoint there references and that cannot be in use yet (ckpt-inspect(1), ORPHANS, the rules).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "snap.h"

#define ORPH_DEPTH 256  /* deeper than this is refused, not skipped: a _metadata there would go unread */

/* KEEP: never listed: ckpt's own archives and directories (whole snapshots), what lies behind a
 * symbolic link to a directory (not DIR's own files, which are reached without one) */
enum place { PLAIN, SHARED, TASKOWNED, KEEP };

struct ctx {
	int job, snap;
	unsigned char place;
};

struct key {
	dev_t dev;
	ino_t ino;
};

struct ofile {
	char *path;
	struct key k;
	uint64_t size;
	int64_t sec;
	long nsec;
	int job, snap; /* indices, -1: none */
	unsigned char place;
	unsigned char referenced;
};

struct osnap {
	char *dir;
	int job;
	int64_t id;    /* chk-N in a job; -1 */
	int savepoint; /* named savepoint-* */
	int has_meta;
	/* what reading its _metadata found */
	int ok;
	struct ckpt_err err;
	int64_t sec;
	long nsec;
	struct key *refs;
	size_t nrefs, refcap;
	size_t nonlocal; /* files it names that are not local paths */
};

struct ojob {
	int64_t newest_id; /* highest complete chk-N; -1 */
	int any;           /* a complete _metadata in the job: then sec, nsec its newest */
	int64_t sec;
	long nsec;
};

/* A symbolic link to a directory, entered after every directory reached without one. */
struct deferred {
	char *path;
	struct ctx c;
	int depth;
};

struct owalk {
	struct ofile *f;
	size_t nf, fcap;
	struct osnap *s;
	size_t ns, scap;
	struct ojob *j;
	size_t nj, jcap;
	struct key *dirs; /* directories entered, and the map of them */
	size_t nd, dcap;
	struct ckpt_idmap dmap;
	struct deferred *q;
	size_t nq, qcap;
	struct ckpt_idmap pmap; /* the files by path, built before the _metadata files are read */
	const struct ckpt_orphans_opts *o;
	struct ckpt_err *e;
};

/* ---- names */

static int64_t
chk_n(const char *name)
{
	char *end;
	long long v;

	if (strncmp(name, "chk-", 4) != 0 || !isdigit((unsigned char)name[4]))
		return -1;
	errno = 0;
	v = strtoll(name + 4, &end, 10);
	return errno || *end != '\0' ? -1 : v;
}

/* ---- (device, inode) keys */

static uint64_t
key_hash(struct key k)
{
	return ((uint64_t)k.ino * UINT64_C(0x9E3779B97F4A7C15)) ^ ((uint64_t)k.dev * UINT64_C(0xC2B2AE3D27D4EB4F));
}

static uint64_t
dir_hash(const void *ctx, size_t i)
{
	return key_hash(((const struct key *)ctx)[i]);
}

static int
dir_eq(const void *ctx, size_t i, const void *key)
{
	const struct key *a = &((const struct key *)ctx)[i], *b = key;

	return a->dev == b->dev && a->ino == b->ino;
}

static uint64_t
file_hash(const void *ctx, size_t i)
{
	return key_hash(((const struct ofile *)ctx)[i].k);
}

static int
file_eq(const void *ctx, size_t i, const void *key)
{
	const struct key *a = &((const struct ofile *)ctx)[i].k, *b = key;

	return a->dev == b->dev && a->ino == b->ino;
}

static uint64_t
path_hash(const void *ctx, size_t i)
{
	const char *p = ((const struct ofile *)ctx)[i].path;

	return ckpt_xxh3(p, strlen(p));
}

static int
path_eq(const void *ctx, size_t i, const void *key)
{
	return strcmp(((const struct ofile *)ctx)[i].path, key) == 0;
}

/* ---- the walk: every file, and where it lies (job, snapshot, shared/, taskowned/) */

struct entry {
	char *name;
	struct stat sb; /* after symbolic links */
	int link;       /* the name is a symbolic link */
};

static void
free_entries(struct entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

/* The entries of dir, each with what stat says (after symbolic links); a name gone meanwhile or a
 * link to nothing is left out.  0, 1 when dir itself is gone (errno ENOENT), -1 with w->e set. */
static int
read_entries(struct owalk *w, const char *dir, int fd, struct entry **out, size_t *n)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	struct entry *v = NULL;
	size_t cap = 0;
	char *p;

	*n = 0;
	if (d == NULL) {
		int err = errno;

		close(fd);
		errno = err;
		return err == ENOENT ? 1 : ckpt_err_sys(w->e, dir, "cannot list"); /* 1: vanished */
	}
	while ((errno = 0, de = readdir(d)) != NULL) {
		struct stat sb;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &sb, 0) != 0) {
			if (errno == ENOENT) /* vanished, or a dangling link */
				continue;
			p = ckpt_snap_path_join(dir, de->d_name, w->e);
			if (errno == ELOOP)
				ckpt_err_set(w->e, CKPT_ERR_INPUT, p ? p : dir, "a symbolic link loop");
			else
				ckpt_err_sys(w->e, p ? p : dir, "cannot open");
			free(p);
			goto fail;
		}
		if (ckpt_grow(&v, &cap, *n + 1, sizeof *v, 16, w->e) < 0 ||
		    (v[*n].name = ckpt_strdup(de->d_name, w->e)) == NULL)
			goto fail;
		v[*n].sb = sb;
		v[*n].link = de->d_type == DT_LNK;
		if (de->d_type == DT_UNKNOWN) {
			struct stat lb;

			v[*n].link = fstatat(dirfd(d), de->d_name, &lb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lb.st_mode);
		}
		(*n)++;
	}
	if (errno) {
		ckpt_err_sys(w->e, dir, "cannot list");
		goto fail;
	}
	closedir(d);
	*out = v;
	return 0;
fail:
	closedir(d);
	free_entries(v, *n);
	return -1;
}

static int
new_snap(struct owalk *w, const char *dir, struct ctx *c, int64_t id, int savepoint, int has_meta)
{
	struct osnap *s;

	if (ckpt_grow(&w->s, &w->scap, w->ns + 1, sizeof *w->s, 64, w->e) < 0)
		return -1;
	s = &w->s[w->ns];
	memset(s, 0, sizeof *s);
	if ((s->dir = ckpt_strdup(dir, w->e)) == NULL)
		return -1;
	s->job = c->job;
	s->id = id;
	s->savepoint = savepoint;
	s->has_meta = has_meta;
	c->snap = (int)w->ns++;
	return 0;
}

/* What dir is: a snapshot (chk-N of a job, savepoint-*, any directory holding a _metadata), a job
 * (it holds chk-N, shared/ or taskowned/), or neither; c becomes its context. */
static int
classify(struct owalk *w, const char *dir, const char *base, const struct entry *v, size_t n, struct ctx *c)
{
	int meta = 0, job = 0;
	int64_t id = c->job >= 0 && c->snap < 0 ? chk_n(base) : -1;

	for (size_t i = 0; i < n; i++) {
		if (strcmp(v[i].name, "_metadata") == 0 && S_ISREG(v[i].sb.st_mode))
			meta = 1;
		if (S_ISREG(v[i].sb.st_mode) && strcmp(v[i].name, SNAP_MANIFEST_NAME) == 0)
			c->place = KEEP;
		if (S_ISDIR(v[i].sb.st_mode) && (chk_n(v[i].name) >= 0 || strcmp(v[i].name, "shared") == 0 ||
						 strcmp(v[i].name, "taskowned") == 0))
			job = 1;
	}
	if (id >= 0 || meta || (c->snap < 0 && strncmp(base, "savepoint-", 10) == 0))
		return new_snap(w, dir, c, id, id < 0 && strncmp(base, "savepoint-", 10) == 0, meta);
	if (job && c->snap < 0) {
		if (ckpt_grow(&w->j, &w->jcap, w->nj + 1, sizeof *w->j, 8, w->e) < 0)
			return -1;
		w->j[w->nj] = (struct ojob){.newest_id = -1};
		c->job = (int)w->nj++;
	}
	return 0;
}

static int
add_file(struct owalk *w, char *path, const struct stat *sb, const struct ctx *c)
{
	struct ofile *f;

	if (path == NULL || ckpt_grow(&w->f, &w->fcap, w->nf + 1, sizeof *w->f, 1024, w->e) < 0) {
		free(path);
		return -1;
	}
	f = &w->f[w->nf++];
	*f = (struct ofile){.path = path, .k = {sb->st_dev, sb->st_ino}, .size = (uint64_t)sb->st_size,
			    .sec = (int64_t)sb->st_mtim.tv_sec, .nsec = sb->st_mtim.tv_nsec, .job = c->job,
			    .snap = c->snap, .place = c->place};
	return 0;
}

static int walk(struct owalk *w, const char *dir, const char *base, int depth, struct ctx c);

static int
walk_entries(struct owalk *w, const char *dir, int depth, const struct entry *v, size_t n, const struct ctx *c)
{
	int job_here = c->job >= 0 && c->snap < 0;

	for (size_t i = 0; i < n; i++) {
		struct ctx cc = *c;
		char *p = ckpt_snap_path_join(dir, v[i].name, w->e);
		int r = 0;

		if (p == NULL)
			return -1;
		if (S_ISDIR(v[i].sb.st_mode)) {
			if (job_here && cc.place == PLAIN && strcmp(v[i].name, "shared") == 0)
				cc.place = SHARED;
			if (job_here && strcmp(v[i].name, "taskowned") == 0)
				cc.place = TASKOWNED;
			if (v[i].link) {
				r = ckpt_grow(&w->q, &w->qcap, w->nq + 1, sizeof *w->q, 16, w->e);
				if (r == 0)
					w->q[w->nq++] = (struct deferred){.path = p, .c = cc, .depth = depth + 1};
				if (r == 0)
					continue;
			} else {
				r = walk(w, p, v[i].name, depth + 1, cc);
			}
		} else if (S_ISREG(v[i].sb.st_mode)) {
			if (ckpt_snap_archive_name(v[i].name))
				cc.place = KEEP;
			r = add_file(w, p, &v[i].sb, &cc);
			p = NULL;
		}
		free(p);
		if (r < 0)
			return -1;
	}
	return 0;
}

static int
walk(struct owalk *w, const char *dir, const char *base, int depth, struct ctx c)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat sb;
	struct entry *v = NULL;
	size_t n = 0;
	struct key k;
	int r = -1;

	if (fd < 0) {
		if (errno == ENOENT && depth > 0) /* vanished */
			return 0;
		return ckpt_err_sys(w->e, dir, "cannot list");
	}
	if (fstat(fd, &sb) != 0) {
		int err = errno;

		close(fd);
		if (err == ENOENT && depth > 0) /* vanished (a file system that says so of an open one) */
			return 0;
		errno = err;
		return ckpt_err_sys(w->e, dir, "cannot list");
	}
	k = (struct key){sb.st_dev, sb.st_ino};
	if (depth >= ORPH_DEPTH) {
		close(fd);
		return ckpt_err_set(w->e, CKPT_ERR_INPUT, dir, "more than %d directories deep", ORPH_DEPTH);
	}
	if (ckpt_idmap_find(&w->dmap, key_hash(k), &k, dir_eq, w->dirs) >= 0) { /* a second way to it */
		close(fd);
		return 0;
	}
	if (ckpt_grow(&w->dirs, &w->dcap, w->nd + 1, sizeof *w->dirs, 256, w->e) < 0) {
		close(fd);
		return -1;
	}
	w->dirs[w->nd] = k;
	if (ckpt_idmap_add(&w->dmap, key_hash(k), w->nd, dir_hash, w->dirs, w->e) < 0) {
		close(fd);
		return -1;
	}
	w->nd++;
	if ((r = read_entries(w, dir, fd, &v, &n)) != 0) {
		if (r > 0 && depth > 0)
			return 0;
		return r < 0 ? -1 : ckpt_err_sys(w->e, dir, "cannot list");
	}
	r = -1;
	if (classify(w, dir, base, v, n, &c) == 0 && walk_entries(w, dir, depth, v, n, &c) == 0)
		r = 0;
	free_entries(v, n);
	return r;
}

/* A symbolic link to a directory that holds the link: a loop. */
static int
link_loop(const char *path, struct ckpt_err *e)
{
	char *to = realpath(path, NULL), *here, *slash;
	size_t n;
	int r = 0;

	if (to == NULL)
		return errno == ENOENT ? 0 : ckpt_err_sys(e, path, "cannot open");
	if ((here = ckpt_strdup(path, e)) == NULL) {
		free(to);
		return -1;
	}
	slash = strrchr(here, '/');
	*slash = '\0'; /* a deferred path always has its directory before it */
	slash = realpath(here, NULL);
	n = strlen(to);
	if (slash && strncmp(slash, to, n) == 0 && (slash[n] == '/' || slash[n] == '\0' || n == 1))
		r = ckpt_err_set(e, CKPT_ERR_INPUT, path, "a symbolic link loop");
	free(slash);
	free(here);
	free(to);
	return r;
}

/* The whole tree: every directory reached without a symbolic link first, so that a directory's
 * place (which job, which checkpoint) is its own; then, in turn, what links lead to. */
static int
walk_all(struct owalk *w, const char *top)
{
	struct ctx c = {.job = -1, .snap = -1, .place = PLAIN};

	if (walk(w, top, ckpt_snap_path_base(top), 0, c) < 0)
		return -1;
	for (size_t i = 0; i < w->nq; i++) {
		struct deferred d = w->q[i];

		d.c.place = KEEP;
		if (link_loop(d.path, w->e) < 0 || walk(w, d.path, ckpt_snap_path_base(d.path), d.depth, d.c) < 0)
			return -1;
	}
	return 0;
}

/* ---- each _metadata read, in parallel */

struct refctx {
	struct osnap *s;
	const struct owalk *w;
	struct ckpt_err *e;
};

static int
note_ref(void *arg, const char *path, int local)
{
	struct refctx *R = arg;
	struct stat sb;
	struct key k;
	long at;

	if (!local) {
		R->s->nonlocal++;
		return 0;
	}
	/* a path spelled as the walk found it (a relative handle's, mostly) is that file; any other
	 * spelling is found by what it leads to */
	if ((at = ckpt_idmap_find(&R->w->pmap, ckpt_xxh3(path, strlen(path)), path, path_eq, R->w->f)) >= 0)
		k = R->w->f[at].k;
	else if (stat(path, &sb) == 0)
		k = (struct key){sb.st_dev, sb.st_ino};
	else /* missing: the checkpoint is damaged, but nothing here is it */
		return 0;
	if (ckpt_grow(&R->s->refs, &R->s->refcap, R->s->nrefs + 1, sizeof *R->s->refs, 16, R->e) < 0)
		return -1;
	R->s->refs[R->s->nrefs++] = k;
	return 0;
}

/* 0 read (s->ok says whether whole), -1 out of memory. */
static int
read_meta(struct osnap *s, const struct owalk *w, struct ckpt_err *e)
{
	const struct ckpt_orphans_opts *o = w->o;
	struct ckpt_err le = {0};
	struct ckpt_snapshot *snap = NULL;
	char *meta = ckpt_snap_path_join(s->dir, "_metadata", e);
	struct refctx R = {.s = s, .w = w, .e = e};
	struct stat sb;
	int r = 0;

	if (meta == NULL)
		return -1;
	if (stat(meta, &sb) != 0) {
		ckpt_err_sys(&le, meta, "cannot open");
	} else if (sb.st_size == 0) {
		ckpt_err_set(&le, CKPT_ERR_INPUT, meta, "empty (being written?)");
	} else if ((snap = ckpt_snapshot_open(meta, &le)) != NULL &&
		   ckpt_flink_state_enable(snap, o->roots, o->nroots, &le) == 0) {
		s->sec = (int64_t)sb.st_mtim.tv_sec;
		s->nsec = sb.st_mtim.tv_nsec;
		if (ckpt_flink_state_each_file(snap, note_ref, &R, &le) == 0)
			s->ok = 1;
	}
	if (!s->ok) {
		if (le.kind == CKPT_ERR_NOMEM) {
			*e = le;
			r = -1;
		}
		s->err = le;
		s->err.kind = CKPT_ERR_INPUT;
	}
	ckpt_snapshot_free(snap);
	free(meta);
	return r;
}

static int
read_one(void *arg, size_t i, struct ckpt_err *e)
{
	struct owalk *w = arg;

	return w->s[i].has_meta ? read_meta(&w->s[i], w, e) : 0;
}

static int
read_all(struct owalk *w)
{
	if (ckpt_idmap_init(&w->pmap, w->nf, w->e) < 0)
		return -1;
	for (size_t i = 0; i < w->nf; i++)
		if (ckpt_idmap_add(&w->pmap, path_hash(w->f, i), i, path_hash, w->f, w->e) < 0)
			return -1;
	return ckpt_snap_each(w->ns, read_one, w, w->e);
}

/* ---- what is referenced, what is kept, what is listed */

static int
later(int64_t s1, long n1, int64_t s2, long n2)
{
	return s1 != s2 ? s1 > s2 : n1 > n2;
}

/* Each job's newest complete checkpoint and _metadata; then the first _metadata that is not read
 * whole and is no checkpoint being written: refused (-1). */
static int
judge_snaps(struct owalk *w, struct ojob *all)
{
	const struct osnap *bad = NULL;

	for (size_t i = 0; i < w->ns; i++) {
		const struct osnap *s = &w->s[i];
		/* a job is dated by its checkpoints alone (a job with none has nothing listed) */
		struct ojob *j = s->job >= 0 && s->id >= 0 ? &w->j[s->job] : NULL;

		if (!s->has_meta || !s->ok)
			continue;
		if (j && s->id > j->newest_id)
			j->newest_id = s->id;
		for (struct ojob *x = all; x; x = x == all ? j : NULL)
			if (!x->any || later(s->sec, s->nsec, x->sec, x->nsec)) {
				x->any = 1;
				x->sec = s->sec;
				x->nsec = s->nsec;
			}
	}
	for (size_t i = 0; i < w->ns; i++) {
		const struct osnap *s = &w->s[i];

		if (!s->has_meta || s->ok)
			continue;
		if (s->id >= 0 && s->job >= 0 && s->id > w->j[s->job].newest_id) /* being written */
			continue;
		if (bad == NULL || strcmp(s->dir, bad->dir) < 0)
			bad = s;
	}
	if (bad) {
		*w->e = bad->err;
		ckpt_err_prefix(w->e, "not read whole, so no file's use is known and nothing is listed");
		return -1;
	}
	return 0;
}

/* Mark every file a complete _metadata names (by device and inode: every name of it, however the
 * _metadata spells it); count those not under the directory. */
static int
mark_refs(struct owalk *w, uint64_t *outside)
{
	struct ckpt_idmap fm = {0}, rm = {0};
	struct key *u = NULL; /* each file named, once */
	size_t nu = 0, ucap = 0;
	int r = -1;

	*outside = 0;
	if (ckpt_idmap_init(&fm, w->nf, w->e) < 0)
		return -1;
	for (size_t i = 0; i < w->nf; i++)
		if (ckpt_idmap_find(&fm, key_hash(w->f[i].k), &w->f[i].k, file_eq, w->f) < 0 &&
		    ckpt_idmap_add(&fm, key_hash(w->f[i].k), i, file_hash, w->f, w->e) < 0)
			goto out;
	for (size_t i = 0; i < w->ns; i++) {
		const struct osnap *s = &w->s[i];

		*outside += s->ok ? s->nonlocal : 0;
		for (size_t k = 0; s->ok && k < s->nrefs; k++) {
			uint64_t h = key_hash(s->refs[k]);

			if (ckpt_idmap_find(&rm, h, &s->refs[k], dir_eq, u) >= 0)
				continue;
			if (ckpt_grow(&u, &ucap, nu + 1, sizeof *u, 1024, w->e) < 0)
				goto out;
			u[nu] = s->refs[k];
			if (ckpt_idmap_add(&rm, h, nu++, dir_hash, u, w->e) < 0)
				goto out;
			if (ckpt_idmap_find(&fm, h, &s->refs[k], file_eq, w->f) < 0)
				(*outside)++;
		}
	}
	for (size_t i = 0; i < w->nf; i++)
		w->f[i].referenced = ckpt_idmap_find(&rm, key_hash(w->f[i].k), &w->f[i].k, dir_eq, u) >= 0;
	r = 0;
out:
	ckpt_idmap_release(&fm);
	ckpt_idmap_release(&rm);
	free(u);
	return r;
}

/* Why f is listed, or NULL: kept (referenced, or it may be in use). */
static const char *
verdict(const struct owalk *w, const struct ofile *f, const struct ojob *all)
{
	const struct osnap *s = f->snap >= 0 ? &w->s[f->snap] : NULL;
	const struct ojob *scope = f->job >= 0 ? &w->j[f->job] : all;
	int64_t cut = w->o->now - w->o->older_than;

	if (f->referenced || f->place == TASKOWNED || f->place == KEEP)
		return NULL;
	/* no complete _metadata to date it by, or written since the newest one: a snapshot in progress */
	if (!scope->any || !later(scope->sec, scope->nsec, f->sec, f->nsec))
		return NULL;
	if (f->sec >= cut)
		return NULL;
	if (s && s->has_meta && s->ok && strcmp(ckpt_snap_path_base(f->path), "_metadata") == 0 &&
	    strlen(f->path) == strlen(s->dir) + 10)
		return NULL;
	if (s && s->id >= 0 && !s->ok) {
		/* above the newest complete checkpoint of its job: being written */
		if (s->id > w->j[s->job].newest_id)
			return NULL;
		return "aborted checkpoint";
	}
	if (s && !s->has_meta && s->savepoint)
		return "aborted savepoint";
	if (s && s->ok)
		return s->id >= 0 ? "unreferenced file in a checkpoint" : s->savepoint ? "unreferenced file in a savepoint"
										  : "unreferenced file in a snapshot";
	if (s) /* a directory with a _metadata that is no chk-N nor savepoint-*, not read: refused before */
		return NULL;
	return f->place == SHARED ? "unreferenced shared file" : "unreferenced file";
}

static int
by_path(const void *x, const void *y)
{
	return strcmp(((const struct ckpt_orphan *)x)->path, ((const struct ckpt_orphan *)y)->path);
}

static int
collect(struct owalk *w, const struct ojob *all, struct ckpt_orphans *out)
{
	size_t cap = 0;

	for (size_t i = 0; i < w->nf; i++) {
		struct ofile *f = &w->f[i];
		const char *why = verdict(w, f, all);

		if (why == NULL)
			continue;
		if (ckpt_grow(&out->v, &cap, out->n + 1, sizeof *out->v, 64, w->e) < 0)
			return -1;
		out->v[out->n++] = (struct ckpt_orphan){.path = f->path, .size = f->size, .mtime_sec = f->sec,
							.mtime_nsec = f->nsec, .reason = why};
		out->bytes += f->size;
		f->path = NULL;
	}
	if (out->n > 1)
		qsort(out->v, out->n, sizeof *out->v, by_path);
	return 0;
}

static void
walk_free(struct owalk *w)
{
	for (size_t i = 0; i < w->nf; i++)
		free(w->f[i].path);
	for (size_t i = 0; i < w->ns; i++) {
		free(w->s[i].dir);
		free(w->s[i].refs);
	}
	free(w->f);
	free(w->s);
	free(w->j);
	free(w->dirs);
	ckpt_idmap_release(&w->dmap);
	ckpt_idmap_release(&w->pmap);
	for (size_t i = 0; i < w->nq; i++)
		free(w->q[i].path);
	free(w->q);
}

int
ckpt_snapshot_orphans(const char *dir, const struct ckpt_orphans_opts *o, struct ckpt_orphans *out,
		      struct ckpt_err *e)
{
	struct owalk w = {.o = o, .e = e};
	struct ojob all = {.newest_id = -1};
	char *top = ckpt_strdup(dir, e);
	size_t len = top ? strlen(top) : 0;
	int r = -1;

	memset(out, 0, sizeof *out);
	if (top == NULL)
		return -1;
	while (len > 1 && top[len - 1] == '/') /* JOB/ is JOB: its name says what it is */
		top[--len] = '\0';
	if (walk_all(&w, top) == 0 && read_all(&w) == 0 && judge_snaps(&w, &all) == 0 &&
	    mark_refs(&w, &out->outside) == 0 && collect(&w, &all, out) == 0)
		r = 0;
	walk_free(&w);
	free(top);
	if (r < 0)
		ckpt_orphans_free(out);
	return r;
}

void
ckpt_orphans_free(struct ckpt_orphans *o)
{
	for (size_t i = 0; o && i < o->n; i++)
		free(o->v[i].path);
	if (o) {
		free(o->v);
		memset(o, 0, sizeof *o);
	}
}

json_t *
ckpt_orphan_to_json(const struct ckpt_orphan *f)
{
	char when[64] = "";
	struct tm tm;
	time_t t = (time_t)f->mtime_sec;

	if (gmtime_r(&t, &tm) != NULL)
		strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_pack("{s:s, s:I, s:s, s:s}", "path", f->path, "size", (json_int_t)f->size, "mtime", when,
			 "reason", f->reason);
}
