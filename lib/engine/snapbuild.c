/* snapbuild.c: filling the snapshot model (ckpt.h, model/snapshot.c) from a running subtask, and freeing what we built. */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

/* Room for element n of an array of n that keeps no capacity: its capacity is the power of two
 * at or above n (4 at least), grown by ckpt_grow. */
static void *
grow(void *p, size_t n, size_t size, struct ckpt_err *e)
{
	size_t cap = n;

	if (n != 0 && (n & (n - 1)) != 0)
		return p;
	return ckpt_grow(&p, &cap, n + 1, size, 4, e) < 0 ? NULL : p;
}

int
ckpt_st_add_opstate(struct ckpt_subtask *st, const char *name, enum ckpt_mode mode, struct ckpt_err *e)
{
	struct ckpt_opstate *ops = grow(st->ops, st->nops, sizeof *st->ops, e);

	if (ops == NULL)
		return -1;
	st->ops = ops;
	memset(&ops[st->nops], 0, sizeof *ops);
	ops[st->nops].name = ckpt_strdup(name, e);
	ops[st->nops].mode = mode;
	if (ops[st->nops].name == NULL)
		return -1;
	st->loaded = 1;
	return (int)st->nops++;
}

static int
bytes_dup(struct ckpt_bytes *b, const void *p, size_t len, struct ckpt_err *e)
{
	b->p = ckpt_calloc(len + 1, 1, e);
	if (b->p == NULL)
		return -1;
	memcpy(b->p, p, len);
	b->len = len;
	return 0;
}

int
ckpt_st_add_entry(struct ckpt_subtask *st, size_t opi, const void *p, size_t len, struct ckpt_err *e)
{
	struct ckpt_opstate *o = &st->ops[opi];
	struct ckpt_bytes *en = grow(o->entries, o->n, sizeof *o->entries, e);

	if (en == NULL)
		return -1;
	o->entries = en;
	if (bytes_dup(&en[o->n], p, len, e) < 0)
		return -1;
	o->n++;
	o->bytes += len;
	return 0;
}

int
ckpt_st_add_kv(struct ckpt_subtask *st, const char *state, uint32_t kg, const char *key, const char *val,
	  struct ckpt_err *e)
{
	struct ckpt_kv *kv = grow(st->kv, st->nkv, sizeof *st->kv, e);

	if (kv == NULL)
		return -1;
	st->kv = kv;
	kv = &kv[st->nkv];
	memset(kv, 0, sizeof *kv);
	kv->key_group = kg;
	kv->state = ckpt_strdup(state, e);
	if (kv->state == NULL || bytes_dup(&kv->key, key, strlen(key), e) < 0 ||
	    bytes_dup(&kv->value, val, strlen(val), e) < 0) {
		free(kv->state);
		free(kv->key.p);
		return -1;
	}
	st->nkv++;
	st->kv_bytes += strlen(key) + strlen(val);
	st->loaded = 1;
	return 0;
}

/* The model's own release (the engine's subtasks own their bytes: no arena); then all zero, to refill. */
void
ckpt_engine_subtask_release(struct ckpt_subtask *st)
{
	ckpt_subtask_release(st);
	memset(st, 0, sizeof *st);
}

void
ckpt_engine_subtask_free(struct ckpt_subtask *st)
{
	if (st == NULL)
		return;
	ckpt_engine_subtask_release(st);
	free(st);
}
