/* kvtable.h: a small hash table from (key, namespace) to int64, the operators' working state. */
#ifndef CKPT_KVTABLE_H
#define CKPT_KVTABLE_H

#include "base/base.h"

struct ckpt_kvslot {
	uint64_t k;
	int64_t ns, v;
	int used;
};

struct ckpt_kvt {
	struct ckpt_kvslot *s;
	size_t cap, n;
};

/* The value of (k, ns); created as 0 when create is set; NULL when absent (or out of memory). */
int64_t *ckpt_kvt_get(struct ckpt_kvt *t, uint64_t k, int64_t ns, int create);
void ckpt_kvt_del(struct ckpt_kvt *t, uint64_t k, int64_t ns);
void ckpt_kvt_free(struct ckpt_kvt *t);

#endif
