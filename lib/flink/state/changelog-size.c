/* changelog-size.c: the sizes of a changelog's files, which -c checks as its own
 * (ckpt_flink_state_verify) and changelog.c as it opens them. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "readers.h"

/* A changelog file is a flag byte, then the rest, whose length (uncompressed) the _metadata records
 * (FsStateChangelogWriter's handle takes the position after the flag byte): 0 when st bytes fit,
 * else 1 and the problem in -c's words in what. */
int
ckpt_fchangelog_size_problem(int z, uint64_t st, uint64_t size, char *what, size_t n)
{
	if (z == 1 ? st >= 1 : st == size + 1)
		return 0;
	snprintf(what, n, "%s: %llu bytes, the _metadata records %llu and a flag byte", st < size + 1 ? "short" : "long",
		 (unsigned long long)st, (unsigned long long)size);
	return 1;
}

/* The size of a changelog file, which -c checks as its own (ckpt_flink_state_verify). */
/* The first byte of an object in S3 (0 when it cannot be read: the size check then says more). */
static void
first_byte_s3(const char *url, unsigned char *z)
{
	struct ckpt_err ignored = {0};
	struct ckpt_s3obj *o = ckpt_s3obj_open(url, &ignored);

	if (o == NULL || ckpt_s3obj_size(o) == 0 || ckpt_s3obj_pread(o, z, 1, 0, &ignored) < 0)
		*z = 0;
	ckpt_s3obj_close(o);
}

int
ckpt_fchangelog_size(const struct ckpt_snapshot *s, const char *name, const char *path, uint64_t st, char *what,
		     size_t n)
{
	for (size_t i = 0; i < s->nops; i++)
		for (size_t j = 0; j < s->ops[i].nsubtasks; j++)
			for (size_t h = 0; h < s->ops[i].subtasks[j].nhandles; h++) {
				const struct ckpt_handle *x = &s->ops[i].subtasks[j].handles[h];
				const json_t *non = json_object_get(x->detail, "non_materialized");

				if (strcmp(x->kind, "changelog") != 0)
					continue;
				for (size_t k = 0; k < json_array_size(non); k++) {
					const json_t *fs = json_object_get(json_array_get(non, k), "files");

					for (size_t f = 0; f < json_array_size(fs); f++) {
						const json_t *o = json_array_get(fs, f);
						const char *p = json_string_value(json_object_get(o, "path"));
						unsigned char z = 0;
						int fd;

						if (p == NULL || strcmp(p, name) != 0)
							continue;
						if (ckpt_s3_is_url(path))
							first_byte_s3(path, &z);
						else if ((fd = open(path, O_RDONLY)) >= 0) {
							if (read(fd, &z, 1) != 1)
								z = 0;
							close(fd);
						}
						return ckpt_fchangelog_size_problem(z, st, (uint64_t)json_integer_value(json_object_get(o, "size")),
								    what, n);
					}
				}
			}
	return -1;
}
