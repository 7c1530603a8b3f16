/* io-read.c: io-read OUT CMD...: runs CMD (its output as it is) and writes to OUT what it cost: its
 * CPU seconds (user + system, its threads and children) and the bytes it read, /proc's rchar (read
 * and pread calls, from the page cache too: what RocksDB asked for) and read_bytes (from the disk),
 * read while it is a zombie, before it is reaped.  Exits as CMD does.  For t/bench/rocksdb.sh. */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	unsigned long long rchar = 0, rbytes = 0, v;
	char path[64], line[128];
	struct rusage ru;
	siginfo_t si;
	int status;
	FILE *f;
	pid_t p;

	if (argc < 3) {
		fprintf(stderr, "usage: io-read OUT CMD...\n");
		return 2;
	}
	if ((p = fork()) == 0) {
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		_exit(127);
	}
	if (p < 0 || waitid(P_PID, (id_t)p, &si, WEXITED | WNOWAIT) < 0) {
		perror("io-read");
		return 2;
	}
	snprintf(path, sizeof path, "/proc/%d/io", (int)p);
	if ((f = fopen(path, "r")) != NULL) {
		while (fgets(line, sizeof line, f))
			if (sscanf(line, "rchar: %llu", &v) == 1)
				rchar = v;
			else if (sscanf(line, "read_bytes: %llu", &v) == 1)
				rbytes = v;
		fclose(f);
	}
	waitpid(p, &status, 0);
	getrusage(RUSAGE_CHILDREN, &ru);
	if ((f = fopen(argv[1], "w")) == NULL) {
		perror(argv[1]);
		return 2;
	}
	fprintf(f, "%.3f %llu %llu\n", ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6,
		rchar, rbytes);
	fclose(f);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
