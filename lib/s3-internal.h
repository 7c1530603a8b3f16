/* s3-internal.h: objects in S3 or an S3-compatible store (s3.c, through libcurl), for the library's
 * readers and writers: where bytes come from when a path is s3://bucket/key (or Flink's s3a://,
 * s3p://).  Configuration from the AWS environment and files (ckpt(7), ENVIRONMENT).  Programs
 * never include it. */
#ifndef CKPT_S3_INTERNAL_H
#define CKPT_S3_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ckpt-internal.h"

/* Is p an S3 URL (s3://, s3a://, s3p://)? */
int ckpt_s3_is_url(const char *p);

/* An object open for ranged reads: its size and ETag taken once (HEAD); every later read must see
 * the same ETag, or fails.  Used by one thread at a time; ckpt_s3obj_close accepts NULL. */
struct ckpt_s3obj;
struct ckpt_s3obj *ckpt_s3obj_open(const char *url, struct ckpt_err *e);
uint64_t ckpt_s3obj_size(const struct ckpt_s3obj *o);
/* Exactly n bytes at off (read ahead by ranges, several in flight): 0, or -1 with e set. */
int ckpt_s3obj_pread(struct ckpt_s3obj *o, void *p, size_t n, uint64_t off, struct ckpt_err *e);
void ckpt_s3obj_close(struct ckpt_s3obj *o);

/* The whole object into *p (malloc'd, *n bytes): 0, or -1 with e set. */
int ckpt_s3_get(const char *url, unsigned char **p, size_t *n, struct ckpt_err *e);
/* The object's size: 0, 1 when it does not exist (bucket there, key not), -1 with e set. */
int ckpt_s3_stat(const char *url, uint64_t *size, struct ckpt_err *e);
/* Every key under the prefix url names (ListObjectsV2, all pages), fn called with each full
 * s3:// URL and size; fn returning non-zero stops with that value.  0, -1 with e set. */
int ckpt_s3_list(const char *url, int (*fn)(void *arg, const char *url, uint64_t size), void *arg,
		 struct ckpt_err *e);
/* Upload the local file path to url (multipart above a size): 0, or -1 with e set (a multipart
 * upload that failed is aborted). */
int ckpt_s3_put_file(const char *path, const char *url, struct ckpt_err *e);
/* Delete the object: 0, or -1 with e set. */
int ckpt_s3_delete(const char *url, struct ckpt_err *e);
/* Upload the files of the local directory dir under the prefix url (url/NAME), the file last
 * last (NULL: none last); on any failure delete what was uploaded.  0, or -1 with e set. */
int ckpt_s3_put_dir(const char *dir, const char *url, const char *last, struct ckpt_err *e);
/* Bytes fetched from the store by this process so far. */
uint64_t ckpt_s3_fetched(void);

#endif
