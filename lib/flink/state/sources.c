/* sources.c: a source operator's state typed (each split of SourceReaderState, the enumerator's
 * checkpoint in the coordinator state; ckpt-flink(5), SOURCES), for -a, -R and offsets.c. */
#include <stdlib.h>
#include <string.h>

#include "readers.h"
#include "model/model.h"

#define READER_STATE "SourceReaderState"

/* What a typer of element idx of state gave (rc, v, why) into *typed: its error named by the element,
 * or, where no format parsed, the element's bytes with the reason. */
static int
typed_or_bytes(struct ckpt_fstate_ctx *c, const char *state, size_t idx, int rc, json_t *v, const char *why,
	       const unsigned char *p, size_t n, json_t **typed)
{
	if (rc < 0) {
		ckpt_err_prefix(c->e, "operator %s subtask %u: %s element %zu", c->op->id, c->st->index, state, idx);
		return -1;
	}
	if (v == NULL)
		v = json_pack("{s:n, s:s, s:o}", "connector", "reason", why, "bytes", ckpt_entry_to_json(p, n));
	if (v == NULL)
		return ckpt_err_nomem(c->e, c->where);
	json_decref(*typed);
	*typed = v;
	return 0;
}

int
ckpt_fstate_split(struct ckpt_fstate_ctx *c, size_t idx, const unsigned char *p, size_t n, uint64_t at, json_t **typed)
{
	char why[1200];
	json_t *v = NULL;
	int rc = ckpt_fser_split_typed(p, n, at, c->where, &v, why, sizeof why, c->e);

	return typed_or_bytes(c, READER_STATE, idx, rc, v, why, p, n, typed);
}

/* Element idx of state name of a connector before the Source API or a sink (kind, ckpt_fstate_legacy_kind
 * says which), typed into *typed as ckpt_fstate_split does. */
int
ckpt_fstate_legacy(struct ckpt_fstate_ctx *c, int kind, const char *name, size_t idx, const unsigned char *p, size_t n,
		   uint64_t at, json_t **typed)
{
	char why[1200];
	json_t *v = NULL;
	int rc = ckpt_fser_legacy_typed(kind, p, n, at, c->where, &v, why, sizeof why, c->e);

	return typed_or_bytes(c, name, idx, rc, v, why, p, n, typed);
}

/* Which legacy connector's or sink's state name is (FLEGACY_*; the sinks' only as byte[]), 0 none. */
int
ckpt_fstate_legacy_kind(const char *name, const struct ckpt_fser *value)
{
	int k = ckpt_fser_legacy_kind(name, value);

	if (k == FLEGACY_CONSUMER || k >= FLEGACY_PRODUCER_HINT || (k && value && value->kind == FSER_BYTES))
		return k;
	return 0;
}

int
ckpt_fstate_is_split(const char *state, const struct ckpt_fser *value)
{
	return value && value->kind == FSER_BYTES && strcmp(state, READER_STATE) == 0;
}

/* The operator's head in -a: its coordinator state typed when SourceCoordinator wrote it (beside
 * the bytes under --raw). */
static int
source_head(struct ckpt_snapshot *s, const struct ckpt_operator *op, json_t *head)
{
	const struct ckpt_fstate_backing_data *b = s->backing;
	char why[1200];
	json_t *v;

	if (op->coordinator == NULL)
		return 0;
	if (ckpt_fser_enum_typed(op->coordinator->p, op->coordinator->len, &v, why, sizeof why) < 0)
		return -1;
	if (v == NULL)
		return 0;
	if (b->raw)
		return json_object_set_new(head, "coordinator_typed", v);
	return json_object_set_new(head, "coordinator", v);
}

void
ckpt_fstate_sources_init(struct ckpt_fstate_backing_data *b)
{
	b->base.head = source_head;
}
