/* cleanup.c: the temporary files and directories the library has made and not yet put in place,
 * named so that the program's handler of a fatal signal can remove them (ckpt_cleanup_signal). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base.h"

#define SLOTS 64
#define HOOKS 4

/* A slot is filled under the mutex, its name before used is set, so the handler reads whole names. */
static struct {
	volatile sig_atomic_t used;
	char path[PATH_MAX];
} slots[SLOTS];
static void (*volatile hooks[HOOKS])(void);
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t dying; /* the handler has begun: a name added now is removed at once */

/* unlink, or for a directory everything below it then rmdir, with async-signal-safe calls only
 * (getdents64 rather than readdir, which allocates). */
static void
remove_at(int dirfd, const char *name, int depth)
{
	char buf[4096];
	long n;
	int fd;

	if (unlinkat(dirfd, name, 0) == 0 || (errno != EISDIR && errno != EPERM) || depth > 16)
		return;
	if ((fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return;
	/* each pass removes what it lists; the listing starts over until a pass finds nothing to remove */
	for (int again = 1, pass = 0; again && pass < 1000; pass++) {
		again = 0;
		lseek(fd, 0, SEEK_SET);
		while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
			for (long at = 0; at < n;) {
				unsigned short len;
				const char *d = buf + at + 19; /* d_ino 8, d_off 8, d_reclen 2, d_type 1 */

				memcpy(&len, buf + at + 16, sizeof len);
				at += len;
				if (strcmp(d, ".") != 0 && strcmp(d, "..") != 0) {
					remove_at(fd, d, depth + 1);
					again = 1;
				}
			}
	}
	close(fd);
	unlinkat(dirfd, name, AT_REMOVEDIR);
}

void
ckpt_cleanup_signal(void)
{
	dying = 1;
	for (size_t i = 0; i < HOOKS; i++)
		if (hooks[i])
			hooks[i]();
	for (size_t i = 0; i < SLOTS; i++)
		if (slots[i].used)
			remove_at(AT_FDCWD, slots[i].path, 0);
}

void
ckpt_cleanup_hook(void (*fn)(void))
{
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < HOOKS; i++)
		if (hooks[i] == fn || hooks[i] == NULL) {
			hooks[i] = fn;
			break;
		}
	pthread_mutex_unlock(&mu);
}

/* path named for removal on a signal; when every slot is taken it is not (as before there was one). */
static void
add(const char *path)
{
	size_t n = strlen(path);

	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < SLOTS && n < PATH_MAX; i++)
		if (!slots[i].used) {
			memcpy(slots[i].path, path, n + 1);
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			slots[i].used = 1;
			break;
		}
	pthread_mutex_unlock(&mu);
	if (dying) /* the handler may have passed this slot already */
		remove_at(AT_FDCWD, path, 0);
}

void
ckpt_cleanup_forget(const char *path)
{
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < SLOTS; i++)
		if (slots[i].used && strcmp(slots[i].path, path) == 0) {
			slots[i].used = 0;
			break;
		}
	pthread_mutex_unlock(&mu);
}

/* The fatal signals held in this thread while a name is made and added, so none comes between. */
static void
hold(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

int
ckpt_cleanup_mkstemp(char *tmpl)
{
	sigset_t old;
	int fd, err;

	hold(&old);
	if ((fd = mkostemp(tmpl, O_CLOEXEC)) >= 0)
		add(tmpl);
	err = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = err;
	return fd;
}

char *
ckpt_cleanup_mkdtemp(char *tmpl)
{
	sigset_t old;
	char *d;
	int err;

	hold(&old);
	if ((d = mkdtemp(tmpl)) != NULL)
		add(tmpl);
	err = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = err;
	return d;
}

const char *
ckpt_tmpdir(void)
{
	const char *t = getenv("TMPDIR");

	return t && *t ? t : "/tmp";
}

FILE *
ckpt_tmpfile(const char *name, struct ckpt_err *e)
{
	char t[PATH_MAX];
	FILE *f = NULL;
	int fd, err;

	snprintf(t, sizeof t, "%s/ckpt-tmp.XXXXXX", ckpt_tmpdir());
	if ((fd = ckpt_cleanup_mkstemp(t)) >= 0) {
		unlink(t); /* never seen, whatever happens */
		ckpt_cleanup_forget(t);
		if ((f = fdopen(fd, "w+b")) == NULL) {
			err = errno;
			close(fd);
			errno = err;
		}
	}
	if (f == NULL)
		ckpt_err_sys(e, name, "cannot create a temporary file in %s", ckpt_tmpdir());
	return f;
}
