/* fout.c: where a decoded value goes (struct ckpt_fout): nowhere, a jansson value or a document
 * written through ckpt_jw; the decoders of serializer.c, scala.c, kryo.c and rowdata.c share it. */
#include <stdlib.h>

#include "flink.h"

/* FOUT_JSON: give x (taken) its place, the root or a member or element of the open container. */
int
ckpt_fout_put(struct ckpt_fout *o, json_t *x)
{
	json_t *top;

	if (x == NULL)
		return -1;
	if (o->depth == 0) {
		json_decref(o->root);
		o->root = x;
		return 0;
	}
	top = o->stack[o->depth - 1];
	return json_is_object(top) ? json_object_set_new(top, o->key, x) : json_array_append_new(top, x);
}

int
ckpt_fout_entry(struct ckpt_fout *o, const void *p, size_t n)
{
	if (o->mode == FOUT_WRITE) {
		ckpt_fout_elem(o);
		ckpt_jw_entry(o->w, n ? p : "", n);
		return 0;
	}
	return o->mode == FOUT_JSON ? ckpt_fout_put(o, ckpt_entry_to_json(n ? p : "", n)) : 0;
}

int
ckpt_fout_json(struct ckpt_fout *o, json_t *v)
{
	if (v == NULL)
		return -1;
	if (o->mode == FOUT_JSON)
		return ckpt_fout_put(o, v);
	if (o->mode == FOUT_WRITE && o->flat && o->depth == 0 && json_is_object(v)) {
		ckpt_jw_members(o->w, v);
	} else if (o->mode == FOUT_WRITE) {
		ckpt_fout_elem(o);
		ckpt_jw_json(o->w, v);
	}
	json_decref(v);
	return 0;
}

int
ckpt_fout_open(struct ckpt_fout *o, char c)
{
	json_t *x;

	if (o->depth >= FOUT_DEPTH)
		return -1;
	if (o->mode == FOUT_WRITE && o->flat && o->depth == 0 && c == '{') {
		o->obj[0] = 1; /* the members go into the object open */
	} else if (o->mode == FOUT_WRITE) {
		ckpt_fout_elem(o);
		ckpt_jw_open(o->w, c);
		o->obj[o->depth] = c == '{';
	} else if (o->mode == FOUT_JSON) {
		x = c == '{' ? json_object() : json_array();
		if (ckpt_fout_put(o, x) < 0)
			return -1;
		o->stack[o->depth] = x;
	}
	o->depth++;
	return 0;
}

void
ckpt_fout_reset(struct ckpt_fout *o)
{
	json_decref(o->root);
	o->root = NULL;
	o->depth = 0;
}
