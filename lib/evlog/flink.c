/*
 * flink.c: the payloads of Flink's own job event log (FileSystemJobEventStore), Java
 * serialization streams, decoded into events whose payloads are ckpt-events(5) text; the mapping is
 * in ckpt-events(5).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evlog.h"

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

/* What the last record was decoded into: the event points into it. */
struct ckpt_evflink {
	struct ckpt_javaser *j; /* one reader for every stream: it remembers their class descriptors */
	char *text;             /* the payload made, as json_dumps would (compact, in order) */
	size_t len, cap;
	json_t *real;           /* busy_ms, for jansson to write as it writes every real */
	char vertex[33];
	struct ckpt_event_task *tasks; /* reset: the subtasks, their vertices in hex */
	char (*hex)[33];
	size_t tcap;
};

/* One payload being decoded: its bytes and where the error is. */
struct dec {
	const unsigned char *p;
	size_t len;
	size_t at;
	struct ckpt_err *e;
	struct ckpt_evflink *f; /* what it is decoded into */
	struct ckpt_event *ev;
	int too_big;            /* a metric of more than 18 digits, which ckpt-events(5) refuses */
};

struct ckpt_evflink *
ckpt_evflink_new(struct ckpt_err *e)
{
	struct ckpt_evflink *f = ckpt_calloc(1, sizeof *f, e);

	if (f == NULL)
		return NULL;
	if ((f->j = ckpt_javaser_new(NULL, 0, "", 0, JDEPTH, e)) == NULL || (f->real = json_real(0)) == NULL) {
		ckpt_evflink_free(f);
		ckpt_err_nomem(e, "");
		return NULL;
	}
	return f;
}

void
ckpt_evflink_free(struct ckpt_evflink *f)
{
	if (f == NULL)
		return;
	ckpt_javaser_free(f->j);
	json_decref(f->real);
	free(f->text);
	free(f->tasks);
	free(f->hex);
	free(f);
}

/* Room for n more bytes of text; -1 on no memory. */
static int
room(struct ckpt_evflink *f, size_t n)
{
	if (f->cap - f->len > n)
		return 0;
	if (n >= SIZE_MAX - f->len)
		return -1;
	return ckpt_grow(&f->text, &f->cap, f->len + n + 1, 1, 256, NULL);
}

/* Append the n bytes of s; -1 on no memory. */
static int
put_bytes(struct ckpt_evflink *f, const char *s, size_t n)
{
	if (room(f, n) < 0)
		return -1;
	memcpy(f->text + f->len, s, n);
	f->len += n;
	return 0;
}

static int
put_int(struct ckpt_evflink *f, long long v)
{
	if (room(f, CKPT_DEC_MAX) < 0)
		return -1;
	f->len += ckpt_dec_put(f->text + f->len, v);
	return 0;
}

/* Append the string s; -1 on no memory. */
static int
put_str(struct ckpt_evflink *f, const char *s)
{
	return put_bytes(f, s, strlen(s));
}

/* Append a jansson value as json_dumps writes it; -1 on no memory. */
static int
put_json(struct ckpt_evflink *f, const json_t *v)
{
	for (;;) {
		size_t n = json_dumpb(v, f->text + f->len, f->cap - f->len,
				      JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);

		if (n == 0)
			return -1;
		if (n <= f->cap - f->len) {
			f->len += n;
			return 0;
		}
		if (room(f, n) < 0)
			return -1;
	}
}

static int bad(struct dec *d, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
bad(struct dec *d, size_t at, const char *fmt, ...)
{
	va_list ap;

	d->at = at;
	va_start(ap, fmt);
	ckpt_err_vset(d->e, CKPT_ERR_REFUSED, "", fmt, ap);
	va_end(ap);
	return -1;
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
	ckpt_hex64((uint64_t)lo->i, hex);
	ckpt_hex64((uint64_t)hi->i, hex + 16);
	return 0;
}

/* One Java serialization stream of exactly n bytes at *pos holding one object; *out lives until
 * the next stream is read. */
static int
one_object(struct dec *d, size_t *pos, size_t n, const struct ckpt_javaser_value **out)
{
	size_t end = *pos + n;

	ckpt_javaser_reset(d->f->j, d->p, end, d->e);
	if (ckpt_javaser_header(d->f->j, pos) < 0 || ckpt_javaser_read(d->f->j, pos, out) < 0)
		return javaser_failed(d);
	if (*pos != end)
		return bad(d, *pos, "end of the Java serialization stream expected (%zu bytes left)", end - *pos);
	return 0;
}

/* An ExecutionVertexID into vertex and subtask. */
static int
vertex_id(struct dec *d, const struct ckpt_javaser_value *v, char hex[33], uint32_t *subtask)
{
	const struct ckpt_javaser_value *s = NULL;

	if (want(d, v, C_EVID, "executionVertexId") < 0 ||
	    abstract_id(d, ckpt_javaser_field(v, "jobVertexId"), C_JVID, "jobVertexId", hex) < 0 ||
	    prim(d, v, "subtaskIndex", 'I', "executionVertexId", &s) < 0)
		return -1;
	if (s->i < 0 || s->i >= CKPT_PARALLELISM_LIMIT)
		return bad(d, s->at, "subtask index %lld out of range", (long long)s->i);
	*subtask = (uint32_t)s->i;
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
		uint64_t size = ckpt_be32(b);

		if (size > INT32_MAX || cd->nextra - 1 != (map ? 2 : 1) * size)
			return bad(d, v->at, "%s: %llu elements announced, %zu objects follow", what,
				   (unsigned long long)size, cd->nextra - 1);
		*n = (size_t)size;
	}
	*items = (const struct ckpt_javaser_value *const *)cd->extra + 1;
	return 0;
}

/* ExecutionJobVertexInitializedEvent: {vertex, parallelism}; the inputs are checked, not kept. */
static int
initialized(struct dec *d, const struct ckpt_javaser_value *v)
{
	struct ckpt_evflink *f = d->f;
	const struct ckpt_javaser_value *par = NULL, *const *items = NULL;
	size_t n;

	if (want(d, v, C_INIT, "the event") < 0 ||
	    abstract_id(d, ckpt_javaser_field(v, "jobVertexId"), C_JVID, "jobVertexId", f->vertex) < 0 ||
	    prim(d, v, "parallelism", 'I', "the event", &par) < 0 ||
	    collection(d, ckpt_javaser_field(v, "jobVertexInputInfos"), "jobVertexInputInfos", 1, &items, &n) < 0)
		return -1;
	if (par->i < 1 || par->i > CKPT_PARALLELISM_LIMIT)
		return bad(d, par->at, "parallelism %lld out of range", (long long)par->i);
	for (size_t i = 0; i < n; i++) {
		char ds[33];

		if (abstract_id(d, items[2 * i], C_DSID, "an input's data set", ds) < 0 ||
		    want(d, items[2 * i + 1], C_VINPUT, "an input's JobVertexInputInfo") < 0)
			return -1;
	}
	d->ev->vertex = f->vertex;
	d->ev->parallelism = (uint32_t)par->i;
	if (put_str(f, "{\"vertex\":\"") < 0 || put_str(f, f->vertex) < 0 || put_str(f, "\",\"parallelism\":") < 0 ||
	    put_int(f, d->ev->parallelism) < 0)
		return -1;
	return put_str(f, "}");
}

/* Room for n subtasks of a reset. */
static int
tasks_room(struct dec *d, size_t n)
{
	struct ckpt_evflink *f = d->f;
	struct ckpt_event_task *t;
	char(*hex)[33];

	if (n <= f->tcap)
		return 0;
	if ((t = ckpt_reallocarray(f->tasks, n, sizeof *t, d->e)) == NULL)
		return -1;
	f->tasks = t;
	if ((hex = ckpt_reallocarray(f->hex, n, sizeof *hex, d->e)) == NULL)
		return -1;
	f->hex = hex;
	f->tcap = n;
	return 0;
}

/* ExecutionVertexResetEvent: {subtasks: [{vertex, subtask}]}. */
static int
reset(struct dec *d, const struct ckpt_javaser_value *v)
{
	struct ckpt_evflink *f = d->f;
	const struct ckpt_javaser_value *const *items;
	size_t n;

	if (want(d, v, C_RESET, "the event") < 0 ||
	    collection(d, ckpt_javaser_field(v, "executionVertexIds"), "executionVertexIds", 0, &items, &n) < 0 ||
	    tasks_room(d, n) < 0 || put_str(f, "{\"subtasks\":[") < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct ckpt_event_task *t = &f->tasks[i];

		t->vertex = f->hex[i];
		if (vertex_id(d, items[i], f->hex[i], &t->subtask) < 0 ||
		    put_str(f, i ? ",{\"vertex\":\"" : "{\"vertex\":\"") < 0 || put_str(f, t->vertex) < 0 ||
		    put_str(f, "\",\"subtask\":") < 0 || put_int(f, t->subtask) < 0 || put_str(f, "}") < 0)
			return -1;
	}
	d->ev->tasks = f->tasks;
	d->ev->ntasks = n;
	return put_str(f, "]}");
}

/*
 * A real as json_dumps writes it ("%.17g", with ".0" when that reads as an integer).  A value with
 * at most four binary fraction digits and twelve integer digits is exactly its short decimal, which
 * is what "%.17g" writes: written here without printf; any other value goes through jansson (and
 * one it cannot write, not finite, fails as no memory, as json_real does).
 */
static int
put_real(struct ckpt_evflink *f, double v)
{
	double a = fabs(v);
	char frac[6] = ".0";

	if (!(a < 1e12 && a * 16 == floor(a * 16)))
		return json_real_set(f->real, v) < 0 ? -1 : put_json(f, f->real);
	if (signbit(v) && put_bytes(f, "-", 1) < 0)
		return -1;
	if ((uint64_t)(a * 16) % 16 != 0) {
		unsigned d = (unsigned)((uint64_t)(a * 16) % 16) * 625; /* sixteenths in ten-thousandths */

		for (int i = 4; i > 0; i--, d /= 10)
			frac[i] = (char)('0' + d % 10);
		for (size_t n = 5; frac[n - 1] == '0'; n--)
			frac[n - 1] = '\0';
	}
	return put_int(f, (long long)(a)) < 0 ? -1 : put_bytes(f, frac, strlen(frac));
}

/* IOMetrics as the "metrics" value; resultPartitionBytes must be null (its keys name data sets, not
 * vertices). */
static int
metrics(struct dec *d, const struct ckpt_javaser_value *v)
{
	static const char *const names[][2] = {
		{"numRecordsIn", "records_in"}, {"numRecordsOut", "records_out"}, {"numBytesIn", "bytes_in"},
		{"numBytesOut", "bytes_out"}, {"accumulateIdleTime", "idle_ms"},
		{"accumulateBackPressuredTime", "back_pressured_ms"},
	};
	const struct ckpt_javaser_value *m = NULL, *rpb;
	struct ckpt_evflink *f = d->f;

	if (v != NULL && v->kind == CKPT_JAVASER_NULL)
		return put_str(f, "null");
	if (want(d, v, C_IOMETRICS, "ioMetrics") < 0)
		return -1;
	rpb = ckpt_javaser_field(v, "resultPartitionBytes");
	if (rpb != NULL && rpb->kind != CKPT_JAVASER_NULL)
		return bad(d, rpb->at, "IOMetrics.resultPartitionBytes is not null: not supported");
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (prim(d, v, names[i][0], 'J', "ioMetrics", &m) < 0 ||
		    put_str(f, i ? ",\"" : "{\"") < 0 || put_str(f, names[i][1]) < 0 || put_str(f, "\":") < 0 ||
		    put_int(f, m->i) < 0)
			return -1;
		d->too_big |= m->i >= 1000000000000000000 || m->i <= -1000000000000000000;
	}
	if (prim(d, v, "accumulateBusyTime", 'D', "ioMetrics", &m) < 0 || put_str(f, ",\"busy_ms\":") < 0 ||
	    put_real(f, m->d) < 0)
		return -1;
	return put_str(f, "}");
}

/* The big-endian int at *pos, the length of what follows, within the payload. */
static int
length(struct dec *d, size_t *pos, const char *what, uint32_t *n)
{
	uint32_t v;

	if (d->len - *pos < 4)
		return bad(d, *pos, "%s: length expected, %zu bytes left", what, d->len - *pos);
	v = ckpt_be32(d->p + *pos);
	if (v > INT32_MAX)
		return bad(d, *pos, "%s: negative length %d", what, (int32_t)v);
	if (v > d->len - *pos - 4)
		return bad(d, *pos, "%s: length %u runs past the end of the payload (%zu bytes left)", what, v,
			   d->len - *pos - 4);
	*pos += 4;
	*n = v;
	return 0;
}

/*
 * The operator coordinator snapshots, a HashMap<OperatorID, byte[]>, as {operator: entry} in *out,
 * NULL when there are none (the caller frees it, also on error).  They are rarely kept (see
 * finished), so jansson makes them: entries are JSON the one way ckpt_entry_to_json makes them.
 */
static int
coordinators(struct dec *d, const struct ckpt_javaser_value *v, json_t **out)
{
	const struct ckpt_javaser_value *const *items;
	size_t n;

	*out = NULL;
	if (collection(d, v, "the coordinator snapshots", 1, &items, &n) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct ckpt_javaser_value *b = items[2 * i + 1];
		unsigned char *bytes;
		char op[33];
		json_t *ent;

		if (abstract_id(d, items[2 * i], C_OPID, "a coordinator's operator", op) < 0)
			return -1;
		if (b->kind != CKPT_JAVASER_ARRAY || strcmp(b->cls->name, "[B") != 0)
			return bad(d, b->at, "a coordinator's snapshot is not a byte[] (%s)",
				   b->kind == CKPT_JAVASER_NULL ? "null" : b->cls ? b->cls->name : "not an array");
		if ((*out == NULL && (*out = json_object()) == NULL) || (bytes = malloc(b->n ? b->n : 1)) == NULL)
			return -1;
		for (size_t k = 0; k < b->n; k++)
			bytes[k] = (unsigned char)b->items[k]->i;
		ent = ckpt_entry_to_json(bytes, b->n);
		free(bytes);
		if (json_object_set_new(*out, op, ent) < 0)
			return -1;
	}
	return 0;
}

/* ExecutionVertexFinishedEvent's first stream: the event without its snapshots, and the payload's
 * text up to them. */
static int
finished_event(struct dec *d, const struct ckpt_javaser_value *v)
{
	struct ckpt_event *ev = d->ev;
	const struct ckpt_javaser_value *att, *num = NULL;

	if (want(d, v, C_FINISHED, "the event") < 0)
		return -1;
	att = ckpt_javaser_field(v, "executionAttemptId");
	if (want(d, att, C_ATTEMPT, "executionAttemptId") < 0 ||
	    prim(d, att, "attemptNumber", 'I', "executionAttemptId", &num) < 0 ||
	    vertex_id(d, ckpt_javaser_field(att, "executionVertexId"), d->f->vertex, &ev->subtask) < 0)
		return -1;
	if (num->i < 0)
		return bad(d, num->at, "attempt number %lld out of range", (long long)num->i);
	ev->vertex = d->f->vertex;
	ev->attempt = (uint32_t)num->i;
	if (put_str(d->f, "{\"vertex\":\"") < 0 || put_str(d->f, ev->vertex) < 0 ||
	    put_str(d->f, "\",\"subtask\":") < 0 || put_int(d->f, ev->subtask) < 0 ||
	    put_str(d->f, ",\"attempt\":") < 0 || put_int(d->f, ev->attempt) < 0 || put_str(d->f, ",\"metrics\":") < 0)
		return -1;
	return metrics(d, ckpt_javaser_field(v, "ioMetrics"));
}

/* The snapshots, {coordinators, shuffle} (Flink's EmptyShuffleMasterSnapshot), after the payload's
 * text so far, from its offset *at; co is taken. */
static int
snapshots(struct dec *d, json_t *co, size_t *at)
{
	struct ckpt_evflink *f = d->f;
	json_t *s;
	int rc;

	s = json_pack("{s:o,s:{s:b,s:s}}", "coordinators", co ? co : json_object(), "shuffle", "incremental", 0,
		      "state", "");
	if (s == NULL || put_str(f, ",\"snapshots\":") < 0) {
		json_decref(s);
		return -1;
	}
	*at = f->len;
	rc = put_json(f, s);
	json_decref(s);
	d->ev->snapshots_len = f->len - *at;
	return rc;
}

/* ExecutionVertexFinishedEvent.Serializer: three length-prefixed streams, the last one optional. */
static int
finished(struct dec *d)
{
	const struct ckpt_javaser_value *v;
	json_t *co = NULL;
	size_t pos = 0, snap = 0;
	uint32_t n;
	int rc = -1;

	if (length(d, &pos, "the event", &n) < 0 || one_object(d, &pos, n, &v) < 0 || finished_event(d, v) < 0 ||
	    length(d, &pos, "the coordinator snapshots", &n) < 0 || one_object(d, &pos, n, &v) < 0 ||
	    coordinators(d, v, &co) < 0 || length(d, &pos, "the shuffle master snapshot", &n) < 0)
		goto out;
	if (n > 0 && (one_object(d, &pos, n, &v) < 0 ||
		      want(d, v, C_EMPTY_SHUFFLE, "the shuffle master snapshot") < 0))
		goto out;
	if (pos != d->len) {
		bad(d, pos, "end of payload expected (%zu bytes left)", d->len - pos);
		goto out;
	}
	/* Flink: the event carries snapshots when it has a shuffle master snapshot */
	if (n > 0) {
		rc = snapshots(d, co, &snap);
		co = NULL;
		if (rc < 0)
			goto out;
	}
	/* the text may have moved as it grew */
	if ((rc = put_str(d->f, "}")) == 0 && n > 0)
		d->ev->snapshots = d->f->text + snap;
out:
	json_decref(co);
	return rc;
}

int
ckpt_evflink_decode(struct ckpt_evflink *f, uint32_t type, const unsigned char *p, size_t len,
		    struct ckpt_event *ev, size_t *at, struct ckpt_err *e)
{
	struct dec d = {p, len, 0, e, f, ev, 0};
	const struct ckpt_javaser_value *v;
	size_t pos = 0;
	int rc;

	e->kind = CKPT_ERR_NONE;
	*ev = (struct ckpt_event){.type = type};
	f->len = 0;
	if (type == CKPT_EVENT_VERTEX_FINISHED)
		rc = finished(&d);
	else if ((rc = one_object(&d, &pos, len, &v)) == 0)
		rc = type == CKPT_EVENT_VERTICES_RESET ? reset(&d, v) : initialized(&d, v);
	/* as ckpt-events(5)'s parser says of such a payload, at its start, once it is all decoded */
	if (rc == 0 && d.too_big)
		rc = bad(&d, 0, "not JSON: too big integer");
	if (rc < 0) {
		*at = d.at;
		if (e->kind == CKPT_ERR_NONE)
			ckpt_err_nomem(e, "");
		return -1;
	}
	ev->payload = (const unsigned char *)f->text;
	ev->len = f->len;
	return 0;
}
