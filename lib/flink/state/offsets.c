/* offsets.c: ckpt-inspect --offsets: where each source operator resumes, one row a split or
 * partition, from the splits and enumerator state sources.c types (above it: it reads through
 * the backing). */

#include <stdlib.h>
#include <string.h>

#include "readers.h"
#include "model/model.h"

#define READER_STATE "SourceReaderState"
#define CONSUMER_STATE "topic-partition-offset-states" /* FlinkKafkaConsumer's union state */

struct offrows {
	struct ckpt_jw *w;
	const struct ckpt_operator *op;
	json_t *held;   /* "topic/partition" keys of what the readers hold (Kafka) */
	json_t *rows;   /* the operator's rows, printed once all its state is read */
	const char *conn; /* a connector some split or the enumerator is typed as */
	char bad[200];   /* the first split no format parses */
	char why[1200];  /* and why */
	long subtask;   /* -1: the enumerator's */
	struct ckpt_err *e;
};

static void
tp_key(char *k, size_t n, const json_t *x)
{
	snprintf(k, n, "%s/%lld", json_string_value(json_object_get(x, "topic")),
		 (long long)json_integer_value(json_object_get(x, "partition")));
}

static void
put(json_t *row, const char *key, const json_t *x, const char *from)
{
	json_t *v = json_object_get(x, from);

	json_object_set(row, key, v ? v : json_null());
}

/* The path of a file split, its URI's parts put together. */
static json_t *
uri_string(const json_t *u)
{
	const char *sc = json_string_value(json_object_get(u, "scheme")),
		   *host = json_string_value(json_object_get(u, "host")),
		   *path = json_string_value(json_object_get(u, "path"));
	char port[24] = "";

	if (json_object_get(u, "port"))
		snprintf(port, sizeof port, ":%lld", (long long)json_integer_value(json_object_get(u, "port")));
	if (path == NULL)
		return json_null();
	return json_sprintf("%s%s%s%s%s%s", sc ? sc : "", sc ? ":" : "", host ? "//" : "", host ? host : "", port, path);
}

/* One row of split x (typed as -a prints it). */
static int
split_row(struct offrows *R, const json_t *x, const char *held_by, const char *status, long source_index)
{
	const char *conn = json_string_value(json_object_get(x, "connector"));
	json_t *row = json_pack("{s:o, s:s, s:o, s:o}", "uid", R->op->uid ? json_string(R->op->uid) : json_null(),
				"operator", R->op->id, "subtask", R->subtask < 0 ? json_null() : json_integer(R->subtask),
				"connector", conn ? json_string(conn) : json_null());

	if (row == NULL)
		return ckpt_err_nomem(R->e, "");
	if (conn && strcmp(conn, "hybrid") == 0) {
		json_decref(row);
		return split_row(R, json_object_get(x, "split"), held_by, status,
				 (long)json_integer_value(json_object_get(x, "source_index")));
	}
	if (source_index >= 0)
		json_object_set_new(row, "source_index", json_integer(source_index));
	if (conn == NULL) {
		put(row, "reason", x, "reason");
	} else if (strcmp(conn, "kafka") == 0 || strcmp(conn, "flink_kafka_consumer") == 0) {
		put(row, "topic", x, "topic");
		put(row, "partition", x, "partition");
		put(row, "starting_offset", x, "starting_offset");
		put(row, "stopping_offset", x, "stopping_offset"); /* none in FlinkKafkaConsumer's: null */
	} else if (strcmp(conn, "file") == 0) {
		json_object_set_new(row, "path", uri_string(json_object_get(x, "uri")));
		put(row, "split_id", x, "split_id");
		put(row, "offset", x, "offset");
		put(row, "length", x, "length");
		put(row, "position", x, "position");
	} else {
		put(row, "split_id", x, "split_id");
		put(row, "from", x, "from");
		put(row, "to", x, "to");
	}
	json_object_set_new(row, "held_by", json_string(held_by));
	if (status)
		json_object_set_new(row, "status", json_string(status));
	if (conn && R->conn == NULL)
		R->conn = strcmp(conn, "kafka") == 0 ? "kafka" : strcmp(conn, "file") == 0 ? "file" :
			  strcmp(conn, "flink_kafka_consumer") == 0 ? "flink_kafka_consumer" : "number_sequence";
	return json_array_append_new(R->rows, row) < 0 ? ckpt_err_nomem(R->e, "") : 0;
}

static int
reader_split(void *arg, const char *state, size_t idx, const unsigned char *p, size_t n, json_t *typed)
{
	struct offrows *R = arg;
	const json_t *x = typed;
	char k[600];
	int rc;

	(void)p, (void)n;
	if (typed && json_is_null(json_object_get(typed, "connector")) && R->bad[0] == '\0')
		snprintf(R->bad, sizeof R->bad, "subtask %ld: %s element %zu", R->subtask, state, idx),
		snprintf(R->why, sizeof R->why, "%s", json_string_value(json_object_get(typed, "reason")));
	while (x && json_is_string(json_object_get(x, "connector")) &&
	       strcmp(json_string_value(json_object_get(x, "connector")), "hybrid") == 0)
		x = json_object_get(x, "split");
	if (x && json_object_get(x, "topic")) {
		tp_key(k, sizeof k, x);
		json_object_set_new(R->held, k, json_true());
	}
	rc = typed ? split_row(R, typed, "reader", NULL, -1) : 0;
	json_decref(typed);
	return rc;
}

/* The enumerator's partitions and splits that no reader holds, in the order it lists them. */
static int
enum_rows(struct offrows *R, const json_t *en, long source_index)
{
	const char *conn = json_string_value(json_object_get(en, "connector"));
	const json_t *list, *x;
	char k[600];
	size_t i;

	R->subtask = -1;
	if (conn == NULL)
		return 0;
	if (strcmp(conn, "hybrid") == 0)
		return enum_rows(R, json_object_get(en, "enumerator"),
				 (long)json_integer_value(json_object_get(en, "source_index")));
	if (strcmp(conn, "kafka") != 0) { /* FileSource and NumberSequenceSource: the splits not assigned yet */
		json_array_foreach(json_object_get(en, "splits"), i, x) {
			json_t *s = json_pack("{s:s}", "connector", conn);

			if (s == NULL || json_object_update(s, (json_t *)x) < 0 ||
			    split_row(R, s, "enumerator", "unassigned", source_index) < 0) {
				json_decref(s);
				return -1;
			}
			json_decref(s);
		}
		return 0;
	}
	list = json_object_get(en, "splits") ? json_object_get(en, "splits") : json_object_get(en, "partitions");
	json_array_foreach(list, i, x) {
		json_t *s;
		const char *st = json_string_value(json_object_get(x, "status"));
		int r;

		tp_key(k, sizeof k, x);
		if (json_object_get(R->held, k))
			continue;
		s = json_pack("{s:s, s:O, s:O, s:s, s:n}", "connector", "kafka", "topic", json_object_get(x, "topic"),
			      "partition", json_object_get(x, "partition"), "starting_offset", "migrated", "stopping_offset");
		if (s && json_object_get(x, "starting_offset"))
			json_object_update(s, (json_t *)x);
		r = s ? split_row(R, s, "enumerator", st ? st : "assigned", source_index) : ckpt_err_nomem(R->e, "");
		json_decref(s);
		if (r < 0)
			return -1;
	}
	return 0;
}

/* Kafka's enumerator at version 0 lists its splits by reader: flattened as version 3 lists them. */
static json_t *
flat_v0(const json_t *en)
{
	json_t *o = json_deep_copy(en), *list = json_array(), *a;
	size_t i, j;

	json_array_foreach(json_object_get(en, "assignments"), i, a) {
		const json_t *x;

		json_array_foreach(json_object_get(a, "splits"), j, x)
			json_array_append(list, (json_t *)x);
	}
	json_object_set_new(o, "splits", list);
	return o;
}

static int
has_state(const struct ckpt_operator *op, const char *name)
{
	for (size_t k = 0; k < op->nsubtasks; k++)
		for (size_t i = 0; i < op->subtasks[k].nops; i++)
			if (strcmp(op->subtasks[k].ops[i].name, name) == 0)
				return 1;
	return 0;
}

/* Each subtask's elements of state only, through reader_split. */
static int
read_state(struct ckpt_fstate_backing_data *b, const struct ckpt_operator *op, struct offrows *R, const char *only,
	   struct ckpt_err *e)
{
	struct ckpt_fstate_sink k = {.op = reader_split, .kv = ckpt_fstate_dry_kv, .arg = R, .part = 1, .only = only};

	for (size_t i = 0; i < op->nsubtasks; i++) {
		R->subtask = op->subtasks[i].index;
		if (!op->subtasks[i].finished && ckpt_fstate_read_subtask(b, op, &op->subtasks[i], &k, e) < 0)
			return -1;
	}
	return 0;
}

static int
operator_offsets(struct ckpt_fstate_backing_data *b, const struct ckpt_operator *op, struct ckpt_jw *w, struct ckpt_err *e)
{
	struct offrows R = {.w = w, .op = op, .e = e};
	json_t *en = NULL;
	char why[1200];
	int rc = -1, readers = has_state(op, READER_STATE), consumer = has_state(op, CONSUMER_STATE);

	if (b->sel && !ckpt_fselect_operator(b->sel, op))
		return 0; /* -u names others */
	if (op->coordinator && ckpt_fser_enum_typed(op->coordinator->p, op->coordinator->len, &en, why, sizeof why) < 0)
		return ckpt_err_nomem(e, "");
	if (!readers && !consumer && (en == NULL || json_is_null(json_object_get(en, "connector")))) {
		json_decref(en);
		return 0;
	}
	if ((R.held = json_object()) == NULL || (R.rows = json_array()) == NULL) {
		ckpt_err_nomem(e, "");
		goto out;
	}
	if ((readers && read_state(b, op, &R, READER_STATE, e) < 0) ||
	    (consumer && read_state(b, op, &R, CONSUMER_STATE, e) < 0))
		goto out;
	if (en && json_object_get(en, "assignments")) {
		json_t *f = flat_v0(en);

		json_decref(en);
		en = f;
	}
	if (en && enum_rows(&R, en, -1) < 0)
		goto out;
	if (R.conn && R.bad[0]) { /* a known source's split that parses as none: damaged */
		ckpt_err_set(e, CKPT_ERR_INPUT, b->meta, "operator %s %s of a %s source: %s", op->id, R.bad, R.conn,
			     R.why);
		goto out;
	}
	for (size_t i = 0; i < json_array_size(R.rows); i++) {
		ckpt_jw_json(w, json_array_get(R.rows, i));
		ckpt_jw_byte(w, '\n');
	}
	rc = ckpt_jw_failed(w, e);
out:
	json_decref(en);
	json_decref(R.held);
	json_decref(R.rows);
	return rc;
}

int
ckpt_flink_offsets(struct ckpt_snapshot *s, FILE *f, struct ckpt_err *e)
{
	struct ckpt_fstate_backing_data *b = ckpt_fstate_backing(s, e);
	struct ckpt_jw *w;
	int rc = 0;

	if (b == NULL || b->base.load == NULL)
		return b ? ckpt_err_set(e, CKPT_ERR_INPUT, "", "--offsets reads the state files: not with -m") : -1;
	if ((w = ckpt_jw_new(f, 0, e)) == NULL)
		return -1;
	for (size_t i = 0; rc == 0 && i < s->nops; i++)
		rc = operator_offsets(b, &s->ops[i], w, e);
	ckpt_jw_flush(w);
	if (rc == 0 && ckpt_jw_failed(w, e) < 0)
		rc = -1;
	ckpt_jw_free(w);
	return rc;
}
