/* arena.c: the arena of a subtask's entries: many small allocations in a few big blocks, freed at once
 * (declared in model.h). */
#include <stdlib.h>

#include "model.h"

#define ARENA_CHUNK ((size_t)1 << 20)

struct arena_block {
	struct arena_block *next;
	size_t used, cap;
	unsigned char *p;
};

struct ckpt_model_arena {
	struct arena_block *head; /* head is the block being filled */
};

struct ckpt_model_arena *
ckpt_model_arena_new(void)
{
	return calloc(1, sizeof(struct ckpt_model_arena));
}

static struct arena_block *
arena_push(struct ckpt_model_arena *a, void *p, size_t cap, size_t used)
{
	struct arena_block *b = malloc(sizeof *b);

	if (b == NULL)
		return NULL;
	b->p = p;
	b->cap = cap;
	b->used = used;
	if (a->head && used == cap) { /* a full block goes behind the one being filled */
		b->next = a->head->next;
		a->head->next = b;
	} else {
		b->next = a->head;
		a->head = b;
	}
	return b;
}

void *
ckpt_model_arena_alloc(struct ckpt_model_arena *a, size_t n)
{
	struct arena_block *b = a->head;
	void *p;

	n = (n + 7) & ~(size_t)7;
	if (n == 0)
		n = 8;
	if (b && b->cap - b->used >= n) {
		p = b->p + b->used;
		b->used += n;
		return p;
	}
	if (n >= ARENA_CHUNK / 4) {
		p = malloc(n);
		if (p == NULL || arena_push(a, p, n, n) == NULL) {
			free(p);
			return NULL;
		}
		return p;
	}
	p = malloc(ARENA_CHUNK);
	if (p == NULL || arena_push(a, p, ARENA_CHUNK, n) == NULL) {
		free(p);
		return NULL;
	}
	return p;
}

int
ckpt_model_arena_adopt(struct ckpt_model_arena *a, void *block)
{
	if (arena_push(a, block, 1, 1) == NULL) {
		free(block);
		return -1;
	}
	return 0;
}

void
ckpt_model_arena_free(struct ckpt_model_arena *a)
{
	struct arena_block *b, *next;

	if (a == NULL)
		return;
	for (b = a->head; b; b = next) {
		next = b->next;
		free(b->p);
		free(b);
	}
	free(a);
}
