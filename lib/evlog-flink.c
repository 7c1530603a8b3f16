/*
 * evlog-flink.c: the payloads of Flink's own job event log (FileSystemJobEventStore), Java
 * serialization streams, turned into ckpt-events(5) payloads; the mapping is in ckpt-events(5).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt-internal.h"
#include "flink-javaser.h"

#define JDEPTH 64
#define EV "org.apache.flink.runtime.jobmaster.event."
#define C_FINISHED EV "ExecutionVertexFinishedEvent"
#define C_RESET EV "ExecutionVertexResetEvent"
#define C_INIT EV "ExecutionJobVertexInitializedEvent"
#define C_ATTEMPT "org.apache.flink.runtime.executiongraph.ExecutionAttemptID"
#define C_EVID "org.apache.flink.runtime.scheduler.strategy.ExecutionVertexID"
#define C_JVID "org.apache.flink.runtime.jobgraph.JobVertexID"
#define C_OPID "org.apache.flink.runtime.jobgraph.OperatorID"
#define C_DSID "org.apache.flink.runtime.jobgraph.IntermediateDataSetID"
#define C_VINPUT "org.apache.flink.runtime.executiongraph.JobVertexInputInfo"
#define C_IOMETRICS "org.apache.flink.runtime.executiongraph.IOMetrics"
#define C_EMPTY_SHUFFLE "org.apache.flink.runtime.shuffle.EmptyShuffleMasterSnapshot"

struct ckpt_evflink {
	char *text;            /* the last payload made (json_dumps) */
	struct ckpt_javaser *j; /* one reader for every stream: it remembers their class descriptors */
};

/* One payload being decoded: its bytes and where the error is. */
struct dec {
	const unsigned char *p;
	size_t len;
	size_t at;
	struct ckpt_err *e;
	struct ckpt_javaser *j;
};

struct ckpt_evflink *
ckpt_evflink_new(struct ckpt_err *e)
{
	struct ckpt_evflink *f = ckpt_calloc(1, sizeof *f, e);

	if (f != NULL && (f->j = ckpt_javaser_new(NULL, 0, "", 0, JDEPTH, e)) == NULL) {
		free(f);
		return NULL;
	}
	return f;
}

void
ckpt_evflink_free(struct ckpt_evflink *f)
{
	if (f == NULL)
		return;
	free(f->text);
	ckpt_javaser_free(f->j);
	free(f);
}

static int bad(struct dec *d, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
bad(struct dec *d, size_t at, const char *fmt, ...)
{
	char msg[900];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	d->at = at;
	return ckpt_err_set(d->e, CKPT_ERR_REFUSED, "", "%s", msg);
}

/* The javaser's "offset N: text" into d->at = N and the text alone. */
static int
javaser_failed(struct dec *d)
{
	size_t n = 0;
	int k = 0;

	if (d->e->kind == CKPT_ERR_NOMEM)
		return -1;
	if (sscanf(d->e->text, "offset %zu: %n", &n, &k) == 1 && k > 0) {
		char msg[sizeof d->e->text];

		snprintf(msg, sizeof msg, "%s", d->e->text + k);
		return bad(d, n, "%s", msg);
	}
	return bad(d, d->at, "%s", d->e->text);
}

/* v must be an object of class cls (its most derived class); what names it in errors. */
static int
want(struct dec *d, const struct ckpt_javaser_value *v, const char *cls, const char *what)
{
	if (v == NULL)
		return bad(d, d->at, "%s: missing", what);
	if (v->kind == CKPT_JAVASER_NULL)
		return bad(d, v->at, "%s is null (expected %s)", what, cls);
	if (v->kind != CKPT_JAVASER_OBJECT)
		return bad(d, v->at, "%s is not an object (expected %s)", what, cls);
	if (strcmp(v->cls->name, cls) != 0)
		return bad(d, v->at, "unknown class %s for %s (expected %s)", v->cls->name, what, cls);
	return 0;
}

/* The primitive field name of obj, of JVM type t. */
static int
prim(struct dec *d, const struct ckpt_javaser_value *obj, const char *name, char t, const char *what,
     const struct ckpt_javaser_value **out)
{
	const struct ckpt_javaser_value *v = ckpt_javaser_field(obj, name);

	if (v == NULL || v->kind != CKPT_JAVASER_PRIM || v->type != t)
		return bad(d, obj->at, "%s: no field %s of type %c", what, name, t);
	*out = v;
	return 0;
}

/* An AbstractID of class cls as Flink prints it: lowerPart then upperPart, 32 hex digits. */
static int
abstract_id(struct dec *d, const struct ckpt_javaser_value *v, const char *cls, const char *what, char hex[33])
{
	const struct ckpt_javaser_value *lo = NULL, *hi = NULL;

	if (want(d, v, cls, what) < 0 || prim(d, v, "lowerPart", 'J', what, &lo) < 0 ||
	    prim(d, v, "upperPart", 'J', what, &hi) < 0)
		return -1;
	snprintf(hex, 33, "%016llx%016llx", (unsigned long long)lo->i, (unsigned long long)hi->i);
	return 0;
}

/* One Java serialization stream of exactly n bytes at *pos holding one object; *out lives until
 * the next stream is read. */
static int
one_object(struct dec *d, size_t *pos, size_t n, const struct ckpt_javaser_value **out)
{
	size_t end = *pos + n;

	ckpt_javaser_reset(d->j, d->p, end, d->e);
	if (ckpt_javaser_header(d->j, pos) < 0 || ckpt_javaser_read(d->j, pos, out) < 0)
		return javaser_failed(d);
	if (*pos != end)
		return bad(d, *pos, "end of the Java serialization stream expected (%zu bytes left)", end - *pos);
	return 0;
}

/* An ExecutionVertexID into vertex and subtask. */
static int
vertex_id(struct dec *d, const struct ckpt_javaser_value *v, char hex[33], json_int_t *subtask)
{
	const struct ckpt_javaser_value *s = NULL;

	if (want(d, v, C_EVID, "executionVertexId") < 0 ||
	    abstract_id(d, ckpt_javaser_field(v, "jobVertexId"), C_JVID, "jobVertexId", hex) < 0 ||
	    prim(d, v, "subtaskIndex", 'I', "executionVertexId", &s) < 0)
		return -1;
	if (s->i < 0 || s->i >= CKPT_PARALLELISM_LIMIT)
		return bad(d, s->at, "subtask index %lld out of range", (long long)s->i);
	*subtask = (json_int_t)s->i;
	return 0;
}

/* The elements of a serialized java.util.ArrayList or HashMap (what its writeObject wrote): the
 * objects after the block data, in order; *n of them. */
static int
collection(struct dec *d, const struct ckpt_javaser_value *v, const char *what, int map,
	   const struct ckpt_javaser_value *const **items, size_t *n)
{
	const struct ckpt_javaser_classdata *cd = NULL;
	const char *top = map ? "java.util.HashMap" : "java.util.ArrayList";

	if (v == NULL || v->kind != CKPT_JAVASER_OBJECT)
		return bad(d, v ? v->at : d->at, "%s is not an object (expected %s)", what, top);
	if (!(strcmp(v->cls->name, top) == 0 || (map && strcmp(v->cls->name, "java.util.LinkedHashMap") == 0)))
		return bad(d, v->at, "unknown class %s for %s (expected %s)", v->cls->name, what, top);
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->data[i].cls->name, top) == 0)
			cd = &v->data[i];
	if (cd == NULL || cd->nextra < 1 || cd->extra[0]->kind != CKPT_JAVASER_BLOCK ||
	    cd->extra[0]->len != (map ? 8u : 4u))
		return bad(d, v->at, "%s: the size written by %s.writeObject is missing", what, top);
	{
		const unsigned char *b = cd->extra[0]->bytes + (map ? 4 : 0);
		uint64_t size = ckpt_load_be(b, 4);

		if (size > INT32_MAX || cd->nextra - 1 != (map ? 2 : 1) * size)
			return bad(d, v->at, "%s: %llu elements announced, %zu objects follow", what,
				   (unsigned long long)size, cd->nextra - 1);
		*n = (size_t)size;
	}
	*items = (const struct ckpt_javaser_value *const *)cd->extra + 1;
	return 0;
}

/* ExecutionJobVertexInitializedEvent: {vertex, parallelism}; the inputs are checked, not kept. */
static json_t *
initialized(struct dec *d, const struct ckpt_javaser_value *v)
{
	const struct ckpt_javaser_value *par = NULL, *const *items = NULL;
	char hex[33];
	size_t n;

	if (want(d, v, C_INIT, "the event") < 0 ||
	    abstract_id(d, ckpt_javaser_field(v, "jobVertexId"), C_JVID, "jobVertexId", hex) < 0 ||
	    prim(d, v, "parallelism", 'I', "the event", &par) < 0 ||
	    collection(d, ckpt_javaser_field(v, "jobVertexInputInfos"), "jobVertexInputInfos", 1, &items, &n) < 0)
		return NULL;
	if (par->i < 1 || par->i > CKPT_PARALLELISM_LIMIT) {
		bad(d, par->at, "parallelism %lld out of range", (long long)par->i);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		char ds[33];

		if (abstract_id(d, items[2 * i], C_DSID, "an input's data set", ds) < 0 ||
		    want(d, items[2 * i + 1], C_VINPUT, "an input's JobVertexInputInfo") < 0)
			return NULL;
	}
	return json_pack("{s:s,s:I}", "vertex", hex, "parallelism", (json_int_t)par->i);
}

/* ExecutionVertexResetEvent: {subtasks: [{vertex, subtask}]}. */
static json_t *
reset(struct dec *d, const struct ckpt_javaser_value *v)
{
	const struct ckpt_javaser_value *const *items;
	json_t *list, *r;
	size_t n;

	if (want(d, v, C_RESET, "the event") < 0 ||
	    collection(d, ckpt_javaser_field(v, "executionVertexIds"), "executionVertexIds", 0, &items, &n) < 0)
		return NULL;
	if ((list = json_array()) == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		char hex[33];
		json_int_t sub;

		if (vertex_id(d, items[i], hex, &sub) < 0 ||
		    json_array_append_new(list, json_pack("{s:s,s:I}", "vertex", hex, "subtask", sub)) < 0) {
			json_decref(list);
			return NULL;
		}
	}
	r = json_pack("{s:o}", "subtasks", list);
	return r;
}

/* IOMetrics as "metrics"; resultPartitionBytes must be null (its keys name data sets, not vertices). */
static json_t *
metrics(struct dec *d, const struct ckpt_javaser_value *v)
{
	static const char *const names[][2] = {
		{"numRecordsIn", "records_in"}, {"numRecordsOut", "records_out"}, {"numBytesIn", "bytes_in"},
		{"numBytesOut", "bytes_out"}, {"accumulateIdleTime", "idle_ms"},
		{"accumulateBackPressuredTime", "back_pressured_ms"},
	};
	const struct ckpt_javaser_value *f = NULL, *rpb;
	json_t *m;

	if (v != NULL && v->kind == CKPT_JAVASER_NULL)
		return json_null();
	if (want(d, v, C_IOMETRICS, "ioMetrics") < 0)
		return NULL;
	rpb = ckpt_javaser_field(v, "resultPartitionBytes");
	if (rpb != NULL && rpb->kind != CKPT_JAVASER_NULL) {
		bad(d, rpb->at, "IOMetrics.resultPartitionBytes is not null: not supported");
		return NULL;
	}
	if ((m = json_object()) == NULL)
		return NULL;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (prim(d, v, names[i][0], 'J', "ioMetrics", &f) < 0 ||
		    json_object_set_new(m, names[i][1], json_integer((json_int_t)f->i)) < 0)
			goto fail;
	}
	if (prim(d, v, "accumulateBusyTime", 'D', "ioMetrics", &f) < 0 ||
	    json_object_set_new(m, "busy_ms", json_real(f->d)) < 0)
		goto fail;
	return m;
fail:
	json_decref(m);
	return NULL;
}

/* The big-endian int at *pos, the length of what follows, within the payload. */
static int
length(struct dec *d, size_t *pos, const char *what, uint32_t *n)
{
	uint32_t v;

	if (d->len - *pos < 4)
		return bad(d, *pos, "%s: length expected, %zu bytes left", what, d->len - *pos);
	v = (uint32_t)ckpt_load_be(d->p + *pos, 4);
	if (v > INT32_MAX)
		return bad(d, *pos, "%s: negative length %d", what, (int32_t)v);
	if (v > d->len - *pos - 4)
		return bad(d, *pos, "%s: length %u runs past the end of the payload (%zu bytes left)", what, v,
			   d->len - *pos - 4);
	*pos += 4;
	*n = v;
	return 0;
}

/* The operator coordinator snapshots, a HashMap<OperatorID, byte[]>, as {operator: entry}. */
static json_t *
coordinators(struct dec *d, const struct ckpt_javaser_value *v)
{
	const struct ckpt_javaser_value *const *items;
	json_t *o = json_object();
	size_t n;

	if (o == NULL || collection(d, v, "the coordinator snapshots", 1, &items, &n) < 0)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		const struct ckpt_javaser_value *b = items[2 * i + 1];
		unsigned char *bytes;
		char op[33];
		json_t *ent;

		if (abstract_id(d, items[2 * i], C_OPID, "a coordinator's operator", op) < 0)
			goto fail;
		if (b->kind != CKPT_JAVASER_ARRAY || strcmp(b->cls->name, "[B") != 0) {
			bad(d, b->at, "a coordinator's snapshot is not a byte[] (%s)",
			    b->kind == CKPT_JAVASER_NULL ? "null" : b->cls ? b->cls->name : "not an array");
			goto fail;
		}
		if ((bytes = malloc(b->n ? b->n : 1)) == NULL)
			goto fail;
		for (size_t k = 0; k < b->n; k++)
			bytes[k] = (unsigned char)b->items[k]->i;
		ent = ckpt_entry_to_json(bytes, b->n);
		free(bytes);
		if (json_object_set_new(o, op, ent) < 0)
			goto fail;
	}
	return o;
fail:
	json_decref(o);
	return NULL;
}

/* The stream of n bytes at *pos as JSON made by conv; *pos steps over it. */
static json_t *
stream(struct dec *d, size_t *pos, uint32_t n, json_t *(*conv)(struct dec *, const struct ckpt_javaser_value *))
{
	const struct ckpt_javaser_value *v;

	return one_object(d, pos, n, &v) == 0 ? conv(d, v) : NULL;
}

static json_t *
shuffle(struct dec *d, const struct ckpt_javaser_value *v)
{
	if (want(d, v, C_EMPTY_SHUFFLE, "the shuffle master snapshot") < 0)
		return NULL;
	return json_pack("{s:b,s:s}", "incremental", 0, "state", "");
}

/* ExecutionVertexFinishedEvent's first stream: the event without its snapshots. */
static json_t *
finished_event(struct dec *d, const struct ckpt_javaser_value *v)
{
	const struct ckpt_javaser_value *att, *num = NULL;
	json_int_t sub;
	char hex[33];
	json_t *m;

	if (want(d, v, C_FINISHED, "the event") < 0)
		return NULL;
	att = ckpt_javaser_field(v, "executionAttemptId");
	if (want(d, att, C_ATTEMPT, "executionAttemptId") < 0 ||
	    prim(d, att, "attemptNumber", 'I', "executionAttemptId", &num) < 0 ||
	    vertex_id(d, ckpt_javaser_field(att, "executionVertexId"), hex, &sub) < 0)
		return NULL;
	if (num->i < 0) {
		bad(d, num->at, "attempt number %lld out of range", (long long)num->i);
		return NULL;
	}
	if ((m = metrics(d, ckpt_javaser_field(v, "ioMetrics"))) == NULL)
		return NULL;
	return json_pack("{s:s,s:I,s:I,s:o}", "vertex", hex, "subtask", sub, "attempt", (json_int_t)num->i,
			 "metrics", m);
}

/* ExecutionVertexFinishedEvent.Serializer: three length-prefixed streams, the last one optional. */
static json_t *
finished(struct dec *d)
{
	json_t *ev = NULL, *co = NULL, *sh = NULL;
	size_t pos = 0;
	uint32_t n;

	if (length(d, &pos, "the event", &n) < 0 || (ev = stream(d, &pos, n, finished_event)) == NULL)
		goto fail;
	if (length(d, &pos, "the coordinator snapshots", &n) < 0 ||
	    (co = stream(d, &pos, n, coordinators)) == NULL)
		goto fail;
	if (length(d, &pos, "the shuffle master snapshot", &n) < 0)
		goto fail;
	if (n > 0 && (sh = stream(d, &pos, n, shuffle)) == NULL)
		goto fail;
	if (pos != d->len) {
		bad(d, pos, "end of payload expected (%zu bytes left)", d->len - pos);
		goto fail;
	}
	/* Flink: the event carries snapshots when it has a shuffle master snapshot */
	if (sh != NULL) {
		json_t *s = json_pack("{s:o,s:o}", "coordinators", co, "shuffle", sh);

		co = sh = NULL;
		if (s == NULL || json_object_set_new(ev, "snapshots", s) < 0)
			goto fail;
	}
	json_decref(co);
	return ev;
fail:
	json_decref(ev);
	json_decref(co);
	json_decref(sh);
	return NULL;
}

int
ckpt_evflink_decode(struct ckpt_evflink *f, uint32_t type, const unsigned char *p, size_t len, const char **text,
		    size_t *tlen, size_t *at, struct ckpt_err *e)
{
	struct dec d = {p, len, 0, e, f->j};
	json_t *j = NULL;

	e->kind = CKPT_ERR_NONE;
	if (type == CKPT_EVENT_VERTEX_FINISHED) {
		j = finished(&d);
	} else {
		size_t pos = 0;
		const struct ckpt_javaser_value *v;

		if (one_object(&d, &pos, len, &v) == 0)
			j = type == CKPT_EVENT_VERTICES_RESET ? reset(&d, v) : initialized(&d, v);
	}
	if (j == NULL) {
		*at = d.at;
		if (e->kind == CKPT_ERR_NONE)
			ckpt_err_set(e, CKPT_ERR_NOMEM, "", "out of memory");
		return -1;
	}
	free(f->text);
	f->text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(j);
	if (f->text == NULL)
		return ckpt_err_set(e, CKPT_ERR_NOMEM, "", "out of memory");
	*text = f->text;
	*tlen = strlen(f->text);
	return 0;
}
