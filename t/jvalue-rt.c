/* jvalue-rt.c: each file named, a Java serialization stream, read with libckpt's reader
 * (javaser.c) and written back with its writer (javaser-write.c): "FILE: same" when the bytes
 * written are the stream's, else where they part.  Compiled by t/jvalue.bats against the library
 * of the build under test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flink/format/javaser.h"

static int
one(const char *name)
{
	static unsigned char buf[1 << 20];
	struct ckpt_err e = {0};
	struct ckpt_bytebuf b = {0};
	const struct ckpt_javaser_value *v;
	struct ckpt_javaser *j;
	FILE *f = fopen(name, "rb");
	size_t n, pos = 0, k = 0;
	int r = 1;

	if (f == NULL)
		return printf("%s: cannot open\n", name), 1;
	n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	if ((j = ckpt_javaser_new(buf, n, name, 0, 48, &e)) == NULL)
		return printf("%s: out of memory\n", name), 1;
	if (ckpt_javaser_header(j, &pos) < 0 || ckpt_javaser_read(j, &pos, &v) < 0)
		printf("%s: not read: %s\n", name, e.text);
	else if (ckpt_javaser_write(v, 48, &b, &e) < 0)
		printf("%s: not written: %s\n", name, e.text);
	else if (b.len == pos && memcmp(b.p, buf, pos) == 0)
		r = printf("%s: same\n", name) < 0;
	else {
		while (k < b.len && k < pos && b.p[k] == buf[k])
			k++;
		printf("%s: %zu bytes written for %zu, apart from offset %zu\n", name, b.len, pos, k);
	}
	ckpt_bytebuf_release(&b);
	ckpt_javaser_free(j);
	return r;
}

int
main(int argc, char **argv)
{
	int bad = 0;

	for (int i = 1; i < argc; i++)
		bad |= one(argv[i]);
	return bad;
}
