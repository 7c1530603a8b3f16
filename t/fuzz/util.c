/* util.c: fuzz input as files: the readers open paths, libFuzzer hands over bytes. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util.h"

static int memfd = -1;
static char memfd_path[64];
static char dir[256];

static int
write_all(int fd, const uint8_t *data, size_t size)
{
	while (size > 0) {
		ssize_t n = write(fd, data, size);

		if (n <= 0)
			return -1;
		data += n;
		size -= (size_t)n;
	}
	return 0;
}

const char *
fuzz_memfile(const uint8_t *data, size_t size)
{
	if (memfd < 0) {
		memfd = memfd_create("fuzz", 0);
		if (memfd < 0)
			abort();
		snprintf(memfd_path, sizeof memfd_path, "/proc/self/fd/%d", memfd);
	}
	if (ftruncate(memfd, 0) < 0 || lseek(memfd, 0, SEEK_SET) < 0 || write_all(memfd, data, size) < 0)
		abort();
	return memfd_path;
}

static void
remove_dir(void)
{
	fuzz_dir_clear();
	rmdir(dir);
}

const char *
fuzz_dir(void)
{
	if (dir[0] == '\0') {
		const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");

		snprintf(dir, sizeof dir, "%s/ckpt-fuzz.XXXXXX", base ? base : "/tmp");
		if (mkdtemp(dir) == NULL)
			abort();
		atexit(remove_dir);
	}
	return dir;
}

const char *
fuzz_file(const char *name, const uint8_t *data, size_t size)
{
	static char path[512];
	int fd;

	snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return NULL;
	if (write_all(fd, data, size) < 0) {
		close(fd);
		return NULL;
	}
	close(fd);
	return path;
}

void
fuzz_dir_clear(void)
{
	DIR *d = opendir(fuzz_dir());
	struct dirent *de;
	char path[600];

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		unlink(path);
	}
	closedir(d);
}

const char *
fuzz_each_doc(const uint8_t *data, size_t size, int max, void (*fn)(const struct ckpt_jdoc *doc))
{
	const char *path = fuzz_memfile(data, size);
	struct ckpt_err e = {0};
	struct ckpt_jsonin *in = ckpt_jsonin_open(path, &e);
	struct ckpt_jdoc *doc;

	if (in == NULL)
		abort(); /* a readable file cannot fail to open */
	for (int n = 0; n < max && ckpt_jsonin_next(in, &doc, &e) > 0; n++)
		fn(doc);
	ckpt_jsonin_free(in);
	return path;
}
