/* state-meta.c: what the serialization proxies at the head of Flink's state files hold
 * (ckpt-flink(5), STATE FILES): the states' meta info, their options and serializers, and the
 * header's helpers the readers of every proxy version share (state-header.c, state-old.c). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readers.h"

void
ckpt_fstate_header_release(struct ckpt_fstate_header *h)
{
	for (size_t i = 0; i < h->n; i++) {
		free(h->m[i].name);
		free(h->m[i].kind);
		free(h->m[i].mode);
		ckpt_fser_free(h->m[i].key);
		ckpt_fser_free(h->m[i].ns);
		ckpt_fser_free(h->m[i].value);
		ckpt_fser_free(h->m[i].ukey);
		json_decref(h->m[i].serializers);
	}
	free(h->m);
	ckpt_fser_free(h->key);
	memset(h, 0, sizeof *h);
}

int
ckpt_fstate_header_stop(struct ckpt_fstate_header *h, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(h->stop, sizeof h->stop, fmt, ap);
	va_end(ap);
	h->stopped = 1;
	return 1;
}

int
ckpt_fstate_read_count(struct ckpt_fsrc *s, int32_t *n, int32_t max, const char *what)
{
	if (ckpt_fsrc_i32(s, n, what) < 0)
		return -1;
	if (*n < 0 || *n > max)
		return ckpt_fsrc_fail(s, "%s %d (0 to %d expected)", what, *n, max);
	return 0;
}

int
ckpt_fstate_read_options(struct ckpt_fsrc *s, struct ckpt_fstate_meta *m)
{
	int32_t n;

	if (ckpt_fstate_read_count(s, &n, 64, "state option count") < 0)
		return -1;
	for (int32_t i = 0; i < n; i++) {
		char *k = NULL, *v = NULL;

		if (ckpt_fsrc_utf(s, &k, "state option") < 0 || ckpt_fsrc_utf(s, &v, "state option value") < 0) {
			free(k);
			return -1;
		}
		if (strcmp(k, "KEYED_STATE_TYPE") == 0 && m->kind == NULL) {
			for (char *p = v; *p; p++)
				*p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
			m->kind = v;
			v = NULL;
		} else if (strcmp(k, "OPERATOR_STATE_DISTRIBUTION_MODE") == 0 && m->mode == NULL) {
			m->mode = v;
			v = NULL;
		}
		free(k);
		free(v);
	}
	return 0;
}

/* The serializers map of a state; 1 when a snapshot class stops the parse. */
static int
read_serializers(struct ckpt_fsrc *s, struct ckpt_fstate_header *h, struct ckpt_fstate_meta *m)
{
	int32_t n;

	if (ckpt_fstate_read_count(s, &n, 16, "state serializer count") < 0)
		return -1;
	for (int32_t i = 0; i < n; i++) {
		struct ckpt_fser *t = NULL, **slot;
		char *k;
		int r;

		if (ckpt_fsrc_utf(s, &k, "serializer name") < 0)
			return -1;
		if (strcmp(k, "KEY_SERIALIZER") == 0)
			slot = &m->key;
		else if (strcmp(k, "NAMESPACE_SERIALIZER") == 0)
			slot = &m->ns;
		else if (strcmp(k, "VALUE_SERIALIZER") == 0)
			slot = &m->value;
		else if (strcmp(k, "USER_KEY_SERIALIZER") == 0 && m->type == 4)
			slot = &m->ukey;
		else {
			ckpt_fsrc_fail(s, "unknown serializer name \"%s\" of state \"%s\" (KEY_SERIALIZER, "
				       "NAMESPACE_SERIALIZER%s expected)", k, m->name,
				       m->type == 4 ? ", VALUE_SERIALIZER or USER_KEY_SERIALIZER" : " or VALUE_SERIALIZER");
			free(k);
			return -1;
		}
		if (*slot != NULL) {
			ckpt_fsrc_fail(s, "state \"%s\" names its %s twice", m->name, k);
			free(k);
			return -1;
		}
		r = ckpt_fser_read(s, 1, &t);
		*slot = t;
		if (r == 0 && json_object_set_new(m->serializers, k, ckpt_fser_json(t)) < 0)
			r = ckpt_err_nomem(s->e, s->where);
		if (r == 1) {
			const char *cls = ckpt_fser_blocker(t);

			ckpt_fstate_header_stop(h, "the %s of state \"%s\" is a %s, whose snapshot ckpt cannot step over", k,
				    m->name, cls ? cls : "?");
		}
		free(k);
		if (r != 0)
			return r;
	}
	return 0;
}

/*
 * A KEY_VALUE_V2 state (Flink 2.x State V2, RegisteredKeyValueStateBackendMetaInfo of
 * runtime.state.v2) names the element serializer of a list state and, beside USER_KEY_SERIALIZER,
 * the user value serializer of a map state, where a KEY_VALUE state names the ListSerializer and
 * MapSerializer; the entries are laid out alike (ForSt's asynchronous states).  Give the state the
 * serializer a KEY_VALUE state of its kind would have.
 */
static int
v2_serializers(struct ckpt_fsrc *s, struct ckpt_fstate_meta *m)
{
	const char *kind = m->kind ? m->kind : "";
	struct ckpt_fser *t;

	if (strcmp(kind, "map") == 0) {
		if (m->ukey == NULL || m->value == NULL)
			return ckpt_fsrc_fail(s, "map state \"%s\" (State V2) without its %s serializer", m->name,
					      m->ukey == NULL ? "user key" : "value");
		if ((t = ckpt_fser_composite(FSER_MAP, "org.apache.flink.api.common.typeutils.base.MapSerializerSnapshot",
					     m->ukey, m->value)) == NULL)
			return ckpt_err_nomem(s->e, s->where);
		m->ukey = NULL;
		m->value = t;
	} else if (m->ukey != NULL) {
		return ckpt_fsrc_fail(s, "%s state \"%s\" names a USER_KEY_SERIALIZER", kind, m->name);
	} else if (strcmp(kind, "list") == 0 && m->value != NULL) {
		if ((t = ckpt_fser_composite(FSER_LIST, "org.apache.flink.api.common.typeutils.base.ListSerializerSnapshot",
					     m->value, NULL)) == NULL)
			return ckpt_err_nomem(s->e, s->where);
		m->value = t;
	}
	return 0;
}

struct ckpt_fstate_meta *
ckpt_fstate_meta_add(struct ckpt_fsrc *s, struct ckpt_fstate_header *h)
{
	struct ckpt_fstate_meta *m;

	if (ckpt_grow(&h->m, &h->cap, h->n + 1, sizeof *h->m, 4, NULL) < 0) {
		ckpt_err_nomem(s->e, s->where);
		return NULL;
	}
	m = &h->m[h->n++];
	memset(m, 0, sizeof *m);
	if ((m->serializers = json_object()) == NULL) {
		ckpt_err_nomem(s->e, s->where);
		return NULL;
	}
	return m;
}

int
ckpt_fstate_meta_unique(struct ckpt_fsrc *s, const struct ckpt_fstate_header *h)
{
	const struct ckpt_fstate_meta *m = &h->m[h->n - 1];

	for (size_t i = 0; i + 1 < h->n; i++)
		if (strcmp(h->m[i].name, m->name) == 0)
			return ckpt_fsrc_fail(s, "state \"%s\" twice in one header", m->name);
	return 0;
}

/* StateMetaInfoSnapshotReadersWriters' current reader (meta-info versions 6 and 7). */
int
ckpt_fstate_read_meta(struct ckpt_fsrc *s, struct ckpt_fstate_header *h)
{
	struct ckpt_fstate_meta *m;
	int r;

	if ((m = ckpt_fstate_meta_add(s, h)) == NULL)
		return -1;
	m->at = ckpt_fsrc_tell(s);
	if (ckpt_fsrc_utf(s, &m->name, "state name") < 0 || ckpt_fsrc_i32(s, &m->type, "state type") < 0)
		return -1;
	if (m->type < 0 || m->type > 4)
		return ckpt_fsrc_fail(s, "state type %d of state \"%s\" (0 to 4 expected)", m->type, m->name);
	if (ckpt_fstate_meta_unique(s, h) < 0 || ckpt_fstate_read_options(s, m) < 0)
		return -1;
	if (m->type == 3 && m->kind == NULL && (m->kind = strdup("timers")) == NULL)
		return ckpt_err_nomem(s->e, s->where);
	r = read_serializers(s, h, m);
	if (r == 0 && m->type == 4)
		r = v2_serializers(s, m);
	m->end = ckpt_fsrc_tell(s);
	return r;
}

int
ckpt_fstate_read_flag(struct ckpt_fsrc *s, int *v, const char *what)
{
	uint8_t b;

	if (ckpt_fsrc_u8(s, &b, what) < 0)
		return -1;
	if (b > 1)
		return ckpt_fsrc_fail(s, "%s %u (a boolean expected)", what, b);
	*v = b;
	return 0;
}

const struct ckpt_fstate_meta *
ckpt_fstate_meta_named(const struct ckpt_fstate_header *h, const char *name)
{
	for (size_t i = 0; i < h->n; i++)
		if (strcmp(h->m[i].name, name) == 0)
			return &h->m[i];
	return NULL;
}

const char *
ckpt_fstate_meta_kind(const struct ckpt_fstate_meta *m)
{
	if (m->type == 2)
		return "broadcast";
	if (m->type == 1)
		return m->mode && strcmp(m->mode, "UNION") == 0 ? "union" : "list";
	return m->kind ? m->kind : "value";
}
