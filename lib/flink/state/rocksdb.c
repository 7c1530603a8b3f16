/* rocksdb.c: the files of a RocksDB state handle (incremental checkpoints, native
 * savepoints) opened as one read-only database through RocksDB's C API (ckpt-flink(5), ROCKSDB). */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include <rocksdb/c.h>

#include "state.h"

#define CACHE_BYTES ((size_t)1 << 20) /* the block cache: memory stays small, files stream */
#define MAX_CFS 4096
#define SLOTS 64                       /* temporary directories open at once (one a reading thread) */

struct ckpt_frocks_db {
	rocksdb_t *db;
	rocksdb_options_t *opt;
	rocksdb_cache_t *cache;
	rocksdb_block_based_table_options_t *table;
	rocksdb_readoptions_t *ro;
	rocksdb_column_family_handle_t **h;
	rocksdb_iterator_t **it; /* one a column family, made when first scanned */
	char **names;
	size_t ncf;
	const char *only; /* NULL: every column family opened; else "default" and this one alone */
	const struct ckpt_frocks_file *f; /* to name a file RocksDB's messages name */
	size_t nf;
	char dir[PATH_MAX];
};

/* ------------------------------------------------------------ the temporary directory */

/*
 * Each directory in use has a slot naming it and its files, so that a signal arriving while it
 * exists removes it (async-signal-safe: unlink and rmdir of known names) before the signal's
 * default action.  The handlers are installed once, only for signals the program left at SIG_DFL.
 */
struct slot {
	volatile sig_atomic_t used;
	char dir[PATH_MAX];
	char names[8192]; /* NUL-separated, an empty name ends */
};
static struct slot slots[SLOTS];
static pthread_mutex_t slot_mu = PTHREAD_MUTEX_INITIALIZER;
static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};

static void
slot_clean(struct slot *s)
{
	char path[PATH_MAX + 256];

	for (const char *n = s->names; *n; n += strlen(n) + 1) {
		size_t d = strlen(s->dir), k = strlen(n);

		if (d + 1 + k + 1 > sizeof path)
			continue;
		memcpy(path, s->dir, d);
		path[d] = '/';
		memcpy(path + d + 1, n, k + 1);
		unlink(path);
	}
	rmdir(s->dir);
}

/*
 * Other threads go on while a handler runs, so a name made in a slot's directory after the
 * handler removed the names would stay.  Each name is made inside a creation section: the thread
 * counts itself in, makes the name only if no signal has come (dying), and counts itself out; the
 * handler says dying, waits for the threads inside to leave (at most 5 s), then removes.  Either
 * a thread sees dying and makes nothing, or the handler sees it inside and waits.
 */
static int dying, creating;
static __thread volatile sig_atomic_t inside; /* this thread is in a creation section */

static int
create_begin(void)
{
	inside = 1;
	__atomic_add_fetch(&creating, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&dying, __ATOMIC_SEQ_CST)) {
		__atomic_sub_fetch(&creating, 1, __ATOMIC_SEQ_CST);
		inside = 0;
		errno = EINTR;
		return -1;
	}
	return 0;
}

static void
create_end(void)
{
	__atomic_sub_fetch(&creating, 1, __ATOMIC_SEQ_CST);
	inside = 0;
}

/* What a signal does before its default action: also the hook of ckpt_cleanup_signal, for a program
 * whose own handler is in place of ours. */
static void
clean_all(void)
{
	struct timespec ms = {0, 1000000};

	__atomic_store_n(&dying, 1, __ATOMIC_SEQ_CST);
	for (int i = 0; i < 5000 && __atomic_load_n(&creating, __ATOMIC_SEQ_CST) > (inside ? 1 : 0); i++)
		nanosleep(&ms, NULL);
	for (size_t i = 0; i < SLOTS; i++)
		if (slots[i].used)
			slot_clean(&slots[i]);
}

static void
on_signal(int sig)
{
	sigset_t set;

	clean_all();
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL); /* the default action now, not when the handler returns */
	raise(sig);
}

static void
install_handlers(void)
{
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		struct sigaction old, sa;

		if (sigaction(sigs[i], NULL, &old) < 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
			continue;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(sigs[i], &sa, NULL);
	}
}

/* A slot for dir and the files' names; -1 when they do not fit (e set). */
static int
slot_take(const char *dir, const struct ckpt_frocks_file *f, size_t n, struct ckpt_err *e)
{
	static int installed;
	struct slot *s = NULL;
	size_t at = 0;
	int i;

	pthread_mutex_lock(&slot_mu);
	if (!installed) {
		install_handlers();
		ckpt_cleanup_hook(clean_all);
		installed = 1;
	}
	for (i = 0; i < SLOTS && s == NULL; i++)
		if (!slots[i].used)
			s = &slots[i];
	if (s != NULL) {
		snprintf(s->dir, sizeof s->dir, "%s", dir);
		for (size_t k = 0; k < n && at != (size_t)-1; k++) {
			size_t len = strlen(f[k].local) + 1;

			if (at + len + 1 > sizeof s->names)
				at = (size_t)-1;
			else {
				memcpy(s->names + at, f[k].local, len);
				at += len;
			}
		}
		if (at != (size_t)-1) {
			s->names[at] = '\0';
			s->used = 1;
		}
	}
	pthread_mutex_unlock(&slot_mu);
	if (s == NULL || at == (size_t)-1)
		return ckpt_err_set(e, CKPT_ERR_INPUT, dir, s == NULL ? "too many RocksDB databases open at once" :
				    "a RocksDB handle with too many files");
	return i - 1;
}

/* Slot i given up before its directory was made: nothing of it to remove. */
static void
slot_drop(int i)
{
	pthread_mutex_lock(&slot_mu);
	slots[i].used = 0;
	pthread_mutex_unlock(&slot_mu);
}

/* A new name for a temporary directory under tmp: what mkdtemp would choose, chosen here so that
 * its slot names it before it exists (a signal between the two then still removes it). */
static void
dir_name(char *out, size_t n, const char *tmp)
{
	static const char abc[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	static atomic_uint_fast64_t seq;
	struct timespec ts;
	uint64_t x;
	char suffix[7];

	clock_gettime(CLOCK_REALTIME, &ts);
	x = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^ (uint64_t)getpid() << 40 ^
	    atomic_fetch_add(&seq, 1) * 0x9e3779b97f4a7c15ull;
	x = ckpt_xxh3(&x, sizeof x);
	for (int i = 0; i < 6; i++, x /= sizeof abc - 1)
		suffix[i] = abc[x % (sizeof abc - 1)];
	suffix[6] = '\0';
	snprintf(out, n, "%s/ckpt-rocksdb-%s", tmp, suffix);
}

static void
slot_give(int i)
{
	pthread_mutex_lock(&slot_mu);
	slot_clean(&slots[i]);
	slots[i].used = 0;
	pthread_mutex_unlock(&slot_mu);
}

/* A file's name is its own: no directory, nothing RocksDB would not write. */
static int
plain_name(const char *n)
{
	return *n && strchr(n, '/') == NULL && strcmp(n, ".") != 0 && strcmp(n, "..") != 0 && strlen(n) < 200;
}

/* A file in S3: fetched into the directory (RocksDB reads local files only). */
static int
place_s3(const char *to, const struct ckpt_frocks_file *f, struct ckpt_err *e)
{
	struct ckpt_s3obj *o = ckpt_s3obj_open(f->path, e);
	int fd = -1, rc = -1;

	if (o == NULL)
		return -1;
	if (ckpt_s3obj_size(o) != f->size) {
		ckpt_err_set(e, CKPT_ERR_INPUT, f->path, "%s: %llu bytes, the _metadata records %llu",
			     ckpt_s3obj_size(o) < f->size ? "short" : "long", (unsigned long long)ckpt_s3obj_size(o),
			     (unsigned long long)f->size); /* as -c words it */
		goto out;
	}
	if (create_begin() == 0) {
		fd = open(to, O_WRONLY | O_CREAT | O_EXCL, 0600);
		create_end();
	}
	if (fd < 0) {
		ckpt_err_sys(e, to, "cannot write");
		goto out;
	}
	if (ckpt_s3obj_copy(o, fd, to, e) < 0)
		goto out;
	if (close(fd) < 0) {
		fd = -1;
		ckpt_err_sys(e, to, "cannot write");
		goto out;
	}
	fd = -1;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	ckpt_s3obj_close(o);
	return rc;
}

/* Put one file into the directory: a link to a local file of its recorded size, or its bytes
 * (inline, or fetched from S3). */
static int
place(const char *dir, const struct ckpt_frocks_file *f, const char *where, struct ckpt_err *e)
{
	char to[PATH_MAX + 256], abs[PATH_MAX];
	struct stat sb;
	int r;

	if (!plain_name(f->local))
		return ckpt_err_set(e, CKPT_ERR_INPUT, where, "a RocksDB file named \"%s\"", f->local);
	snprintf(to, sizeof to, "%s/%s", dir, f->local);
	if (f->path == NULL) {
		ssize_t w = -1;
		int fd = -1;

		if (create_begin() == 0) {
			fd = open(to, O_WRONLY | O_CREAT | O_EXCL, 0600);
			create_end();
		}
		if (fd >= 0)
			w = write(fd, f->mem, f->size);
		if (fd < 0 || w != (ssize_t)f->size || close(fd) < 0)
			return ckpt_err_sys(e, to, "cannot write");
		return 0;
	}
	if (ckpt_s3_is_url(f->path))
		return place_s3(to, f, e);
	if (stat(f->path, &sb) < 0)
		return ckpt_err_sys(e, f->path, "cannot open the RocksDB file %s", f->local);
	if ((uint64_t)sb.st_size != f->size)
		return ckpt_err_set(e, CKPT_ERR_INPUT, f->path, "%s: %llu bytes, the _metadata records %llu",
				    (uint64_t)sb.st_size < f->size ? "short" : "long", (unsigned long long)sb.st_size,
				    (unsigned long long)f->size); /* as -c words it */
	if (realpath(f->path, abs) == NULL)
		return ckpt_err_sys(e, f->path, "cannot resolve");
	if (create_begin() < 0)
		return ckpt_err_sys(e, to, "cannot link");
	r = symlink(abs, to);
	create_end();
	if (r < 0)
		return ckpt_err_sys(e, to, "cannot link");
	ckpt_fsrc_note_read(f->path);
	return 0;
}

/* ------------------------------------------------------------ RocksDB */

/*
 * Flink's column families merge with StringAppendTESTOperator ("stringappendtest"): the operands
 * of a list state joined by ','.  An SST written before compaction may hold them unmerged, so the
 * database is opened with an operator of the same name that joins them the same way.
 */
static char *
merge_join(const char *base, size_t bn, const char *const *ops, const size_t *on, int n, unsigned char *ok,
	   size_t *len)
{
	size_t t = base ? bn : 0;
	char *o, *p;

	for (int i = 0; i < n; i++)
		t += on[i] + 1;
	if ((o = p = malloc(t + 1)) == NULL) {
		*ok = 0;
		return NULL;
	}
	if (base) {
		memcpy(p, base, bn);
		p += bn;
	}
	for (int i = 0; i < n; i++) {
		if (base || i > 0)
			*p++ = ',';
		memcpy(p, ops[i], on[i]);
		p += on[i];
	}
	*len = (size_t)(p - o);
	*ok = 1;
	return o;
}

static char *
merge_full(void *st, const char *k, size_t kn, const char *base, size_t bn, const char *const *ops,
	   const size_t *on, int n, unsigned char *ok, size_t *len)
{
	(void)st, (void)k, (void)kn;
	return merge_join(base, bn, ops, on, n, ok, len);
}

static char *
merge_partial(void *st, const char *k, size_t kn, const char *const *ops, const size_t *on, int n,
	      unsigned char *ok, size_t *len)
{
	(void)st, (void)k, (void)kn;
	return merge_join(NULL, 0, ops, on, n, ok, len);
}

static void
merge_free(void *st, const char *v, size_t n)
{
	(void)st, (void)n;
	free((void *)v);
}

static void
merge_gone(void *st)
{
	(void)st; /* no state */
}

static const char *
merge_name(void *st)
{
	(void)st;
	return "stringappendtest";
}

/* RocksDB's message, the temporary directory's names replaced by the files they stand for. */
static int
rocks_fail(const struct ckpt_frocks_db *d, struct ckpt_err *e, const char *where, const char *what, char *msg)
{
	const char *hit = strstr(msg, d->dir);
	const char *file = where;

	if (hit && hit[strlen(d->dir)] == '/') {
		const char *name = hit + strlen(d->dir) + 1;

		for (size_t i = 0; i < d->nf; i++) {
			size_t k = strlen(d->f[i].local);

			if (strncmp(name, d->f[i].local, k) == 0 && (name[k] == '\0' || name[k] == ' ' || name[k] == ':')) {
				file = d->f[i].path ? d->f[i].path : where;
				break;
			}
		}
	}
	for (char *p; (p = strstr(msg, d->dir)) != NULL && p[strlen(d->dir)] == '/';) /* its own names */
		memmove(p, p + strlen(d->dir) + 1, strlen(p + strlen(d->dir) + 1) + 1);
	ckpt_err_set(e, CKPT_ERR_INPUT, file, "%s: rocksdb: %s", what, msg);
	free(msg);
	return -1;
}

void
ckpt_frocks_close(struct ckpt_frocks_db *d)
{
	if (d == NULL)
		return;
	for (size_t i = 0; d->it && i < d->ncf; i++)
		if (d->it[i])
			rocksdb_iter_destroy(d->it[i]);
	for (size_t i = 0; d->h && i < d->ncf; i++)
		if (d->h[i])
			rocksdb_column_family_handle_destroy(d->h[i]);
	if (d->db)
		rocksdb_close(d->db);
	if (d->names)
		rocksdb_list_column_families_destroy(d->names, d->ncf);
	if (d->ro)
		rocksdb_readoptions_destroy(d->ro);
	if (d->opt)
		rocksdb_options_destroy(d->opt);
	if (d->table)
		rocksdb_block_based_options_destroy(d->table);
	if (d->cache)
		rocksdb_cache_destroy(d->cache);
	free(d->h);
	free(d->it);
	free(d);
}

/* The options every column family gets: Flink's merge operator, a small cache, no log, every
 * table opened at once (so that the directory can go as soon as the database is open). */
static int
rocks_options(struct ckpt_frocks_db *d, struct ckpt_err *e, const char *where)
{
	rocksdb_mergeoperator_t *m;

	d->opt = rocksdb_options_create();
	d->table = rocksdb_block_based_options_create();
	d->cache = rocksdb_cache_create_lru(CACHE_BYTES);
	d->ro = rocksdb_readoptions_create();
	m = rocksdb_mergeoperator_create(NULL, merge_gone, merge_full, merge_partial, merge_free, merge_name);
	if (!d->opt || !d->table || !d->cache || !d->ro || !m)
		return ckpt_err_nomem(e, where);
	rocksdb_options_set_merge_operator(d->opt, m); /* the options own it */
	rocksdb_block_based_options_set_block_cache(d->table, d->cache);
	rocksdb_options_set_block_based_table_factory(d->opt, d->table);
	rocksdb_options_set_info_log_level(d->opt, 5); /* HEADER_LEVEL: nothing but the header */
	rocksdb_options_set_keep_log_file_num(d->opt, 1);
	rocksdb_options_set_max_open_files(d->opt, -1);
	rocksdb_options_set_max_file_opening_threads(d->opt, 1);
	rocksdb_options_set_skip_stats_update_on_db_open(d->opt, 1);
	rocksdb_options_set_paranoid_checks(d->opt, 1);
	rocksdb_readoptions_set_verify_checksums(d->ro, 1);
	rocksdb_readoptions_set_fill_cache(d->ro, 1);
	return 0;
}

/* RocksDB's open fails with "... While open a file for random read: 000016.ldb: No such file or
 * directory in file MANIFEST-000004" (it tries NNNNNN.sst, then the old NNNNNN.ldb) when its MANIFEST
 * names a table file the directory lacks; every file of the handle was placed, so the handle lacks
 * it.  Said so, with the .sst name Flink would have listed; -1 when msg is not that. */
static int
rocks_unlisted(struct ckpt_err *e, const char *where, const char *msg)
{
	static const char pre[] = "While open a file for random read: ";
	const char *p = strstr(msg, pre), *m = strstr(msg, " in file "), *slash;
	unsigned long long num;
	int used = 0;

	if (p == NULL || m == NULL || strstr(msg, "No such file or directory") == NULL)
		return -1;
	m += strlen(" in file ");
	if ((slash = strrchr(m, '/')) != NULL)
		m = slash + 1;
	if (strncmp(m, "MANIFEST-", 9) != 0)
		return -1;
	p += sizeof pre - 1;
	for (const char *q = p; *q && *q != ':'; q++) /* the name, without the temporary directory */
		if (*q == '/')
			p = q + 1;
	if (sscanf(p, "%llu.%*3[ldbst]:%n", &num, &used) < 1 || used == 0)
		return -1;
	ckpt_err_set(e, CKPT_ERR_INPUT, where, "RocksDB's %.*s names the table file %06llu.sst, which the handle does "
		     "not list", (int)strcspn(m, " :"), m, num);
	return 0;
}

/* The column families to open, their names in pn and their indexes in pick: every one, or with
 * only set "default" and only (a read-only database may open some: the others' files stay shut). */
static size_t
rocks_pick(const struct ckpt_frocks_db *d, const char **pn, size_t *pick)
{
	size_t n = 0;

	for (size_t i = 0; i < d->ncf; i++)
		if (d->only == NULL || strcmp(d->names[i], "default") == 0 || strcmp(d->names[i], d->only) == 0) {
			pn[n] = d->names[i];
			pick[n++] = i;
		}
	return n;
}

static int
rocks_open(struct ckpt_frocks_db *d, struct ckpt_err *e, const char *where)
{
	const rocksdb_options_t **o;
	rocksdb_column_family_handle_t **h;
	const char **pn;
	size_t *pick, np;
	char *err = NULL;

	d->names = rocksdb_list_column_families(d->opt, d->dir, &d->ncf, &err);
	if (err)
		return rocks_fail(d, e, where, "cannot list its column families", err);
	if (d->ncf == 0 || d->ncf > MAX_CFS)
		return ckpt_err_set(e, CKPT_ERR_INPUT, where, "%zu column families", d->ncf);
	o = ckpt_calloc(d->ncf, sizeof *o + sizeof *h + sizeof *pn + sizeof *pick, e);
	if (o == NULL || (d->h = ckpt_calloc(d->ncf, sizeof *d->h, e)) == NULL ||
	    (d->it = ckpt_calloc(d->ncf, sizeof *d->it, e)) == NULL) {
		free(o);
		return -1;
	}
	h = (rocksdb_column_family_handle_t **)(o + d->ncf);
	pn = (const char **)(h + d->ncf);
	pick = (size_t *)(pn + d->ncf);
	np = rocks_pick(d, pn, pick);
	for (size_t i = 0; i < np; i++)
		o[i] = d->opt;
	d->db = rocksdb_open_for_read_only_column_families(d->opt, d->dir, (int)np, pn, o, h, 0, &err);
	for (size_t i = 0; err == NULL && i < np; i++)
		d->h[pick[i]] = h[i];
	free(o);
	if (err) {
		memset(d->h, 0, d->ncf * sizeof *d->h);
		d->db = NULL;
		if (rocks_unlisted(e, where, err) == 0) {
			free(err);
			return -1;
		}
		return rocks_fail(d, e, where, "cannot open", err);
	}
	return 0;
}

struct ckpt_frocks_db *
ckpt_frocks_open(const struct ckpt_frocks_file *f, size_t n, const char *only, const char *where, struct ckpt_err *e)
{
	struct ckpt_frocks_db *d = ckpt_calloc(1, sizeof *d, e);
	int slot = -1, rc = -1;

	if (d == NULL)
		return NULL;
	d->f = f;
	d->nf = n;
	d->only = only;
	for (int tries = 0;; tries++) { /* the slot first, then the directory it names */
		int err;

		dir_name(d->dir, sizeof d->dir, ckpt_tmpdir());
		if ((slot = slot_take(d->dir, f, n, e)) < 0) {
			free(d);
			return NULL;
		}
		if (create_begin() == 0) {
			int made = mkdir(d->dir, 0700) == 0;

			err = errno;
			create_end();
			if (made)
				break;
		} else
			err = errno;
		slot_drop(slot);
		if (err != EEXIST || tries == 100) {
			snprintf(d->dir, sizeof d->dir, "%s/ckpt-rocksdb-XXXXXX", ckpt_tmpdir());
			errno = err;
			ckpt_err_sys(e, d->dir, "cannot make a temporary directory");
			free(d);
			return NULL;
		}
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(f[i].local, f[j].local) == 0) {
				ckpt_err_set(e, CKPT_ERR_INPUT, where, "the RocksDB file %s twice", f[i].local);
				goto out;
			}
	for (size_t i = 0; i < n; i++)
		if (place(d->dir, &f[i], where, e) < 0)
			goto out;
	if (rocks_options(d, e, where) < 0 || rocks_open(d, e, where) < 0)
		goto out;
	rc = 0;
out:
	slot_give(slot); /* every table is open: the directory is not needed any more */
	if (rc < 0) {
		ckpt_frocks_close(d);
		return NULL;
	}
	return d;
}

size_t
ckpt_frocks_ncf(const struct ckpt_frocks_db *d)
{
	return d->ncf;
}

const char *
ckpt_frocks_cf(const struct ckpt_frocks_db *d, size_t i)
{
	return d->names[i];
}

int
ckpt_frocks_scan(struct ckpt_frocks_db *d, size_t cf, const void *lo, size_t nlo, const void *hi, size_t nhi,
		 ckpt_frocks_fn *fn, void *arg, const char *where, struct ckpt_err *e)
{
	rocksdb_iterator_t *it = d->it[cf];
	char *err = NULL;
	int rc = 0;

	if (d->h[cf] == NULL) /* not opened (ckpt_frocks_open's only) */
		return ckpt_err_set(e, CKPT_ERR_INPUT, where, "column family \"%s\" is not open", d->names[cf]);
	/* one iterator a column family, sought again for each range: making one costs more than a seek */
	if (it == NULL && (it = d->it[cf] = rocksdb_create_iterator_cf(d->db, d->ro, d->h[cf])) == NULL)
		return ckpt_err_nomem(e, where);
	if (lo)
		rocksdb_iter_seek(it, lo, nlo);
	else
		rocksdb_iter_seek_to_first(it);
	for (; rc == 0 && rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
		size_t kn, vn;
		const char *k = rocksdb_iter_key(it, &kn), *v;

		if (hi) {
			int c = memcmp(k, hi, kn < nhi ? kn : nhi);

			if (c > 0 || (c == 0 && kn >= nhi))
				break;
		}
		v = rocksdb_iter_value(it, &vn);
		rc = fn(arg, (const unsigned char *)k, kn, (const unsigned char *)v, vn);
	}
	if (rc == 0) {
		rocksdb_iter_get_error(it, &err);
		if (err)
			rc = rocks_fail(d, e, where, "cannot read", err);
	}
	return rc;
}

/* Which table file holds key k of column family cf: the first live file of cf whose key range
 * holds it, else the one file of cf (a damaged key may lie outside the range its MANIFEST
 * records); RocksDB says no offset within it.  NULL when neither. */
const struct ckpt_frocks_file *
ckpt_frocks_file_of(struct ckpt_frocks_db *d, size_t cf, const unsigned char *k, size_t kn)
{
	const rocksdb_livefiles_t *lf = rocksdb_livefiles(d->db);
	const char *in = NULL, *only = NULL;
	int n = 0;

	for (int i = 0; lf && i < rocksdb_livefiles_count(lf); i++) {
		const char *name = rocksdb_livefiles_name(lf, i), *cfn = rocksdb_livefiles_column_family_name(lf, i);
		size_t an, bn;
		const char *a = rocksdb_livefiles_smallestkey(lf, i, &an), *b = rocksdb_livefiles_largestkey(lf, i, &bn);
		int ca, cb;

		if (name == NULL || cfn == NULL || strcmp(cfn, d->names[cf]) != 0 || a == NULL || b == NULL)
			continue;
		only = n++ == 0 ? name : NULL;
		ca = memcmp(a, k, an < kn ? an : kn);
		cb = memcmp(k, b, kn < bn ? kn : bn);
		if (in == NULL && (ca < 0 || (ca == 0 && an <= kn)) && (cb < 0 || (cb == 0 && kn <= bn)))
			in = name;
	}
	in = in ? in : only;
	for (size_t j = 0; in && j < d->nf; j++)
		if (strcmp(d->f[j].local, in + (*in == '/')) == 0) {
			rocksdb_livefiles_destroy(lf);
			return &d->f[j];
		}
	if (lf)
		rocksdb_livefiles_destroy(lf);
	return NULL;
}
