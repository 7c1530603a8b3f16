/* util.h: what the fuzz targets share: fuzz input as a file the readers can open. */
#ifndef CKPT_FUZZ_UTIL_H
#define CKPT_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "ckpt.h"

/* The bytes as an anonymous in-memory file; its path ("/proc/self/fd/N") stays valid until the next call. */
const char *fuzz_memfile(const uint8_t *data, size_t size);
/* A private directory of this process (made once, under /dev/shm or $TMPDIR). */
const char *fuzz_dir(void);
/* Write the bytes to fuzz_dir()/name (replacing it); its path, or NULL on failure. */
const char *fuzz_file(const char *name, const uint8_t *data, size_t size);
/* Remove every file in fuzz_dir() (not the directory). */
void fuzz_dir_clear(void);
/* The bytes as a stream of JSON documents (ckpt_jsonin): fn on each of the first max; the file's path. */
const char *fuzz_each_doc(const uint8_t *data, size_t size, int max, void (*fn)(const struct ckpt_jdoc *doc));

#endif
