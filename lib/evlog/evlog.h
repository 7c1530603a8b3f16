/* evlog.h: the event-log layer (lib/evlog/): job event logs (ckpt's and Flink's) read and
 * written, and the recovery plan replayed from them, offered to the engine; it owns its readers,
 * writers and replays, and uses the Flink, graph and base layers, never the engine. */
#ifndef CKPT_EVLOG_H
#define CKPT_EVLOG_H

#include "base/base.h"
#include "flink/flink.h"
#include "graph/graph.h"

/* ------------------------------------------------------- job event logs: evlog.c, parse.c, flink.c */

/* "vertex_finished", ...; NULL for an unknown type. */
const char *ckpt_event_type_name(uint32_t type);

/*
 * Check and decode a payload of a known type into ev (strings live in p).  On
 * error -1, e->text says what is wrong and *at (when not NULL) points at the
 * offending byte of payload; the caller sets where and the kind.
 */
int ckpt_evparser_decode(struct ckpt_evparser *p, uint32_t type, const void *payload, size_t len,
			 struct ckpt_event *ev, const char **at, struct ckpt_err *e);
/* Append json_dumps(payload) (compact). */
int ckpt_evwriter_append_json(struct ckpt_evwriter *w, uint32_t type, const json_t *payload,
			      struct ckpt_err *e);
/* Write the buffer out; with sync, fsync too. */
int ckpt_evwriter_flush(struct ckpt_evwriter *w, int sync, struct ckpt_err *e);
/* End the current segment (Flink's cutBlock); the next record starts a new one. */
int ckpt_evwriter_cut(struct ckpt_evwriter *w, struct ckpt_err *e);
/*
 * Flink's job event log (FileSystemJobEventStore, flink.c): a record is a big-endian int
 * type and int length, then the payload, Java serialization.  The first 16 bytes of a segment
 * tell the formats apart (ckpt_evlog_is_flink).
 */
#define CKPT_EVFLINK_HEADER 8
int ckpt_evlog_is_flink(const unsigned char *p, size_t n);
struct ckpt_evflink;
struct ckpt_evflink *ckpt_evflink_new(struct ckpt_err *e);
void ckpt_evflink_free(struct ckpt_evflink *f);
/*
 * The payload of a Flink record of a known type decoded into ev, whose payload is the event's
 * ckpt-events(5) payload as json_dumps writes it (compact); what ev points to is owned by f and
 * valid until the next call.  Segment and offset are the caller's to set.  On error -1, e->text
 * says what is wrong and *at is the payload byte at fault; the caller sets where.
 */
int ckpt_evflink_decode(struct ckpt_evflink *f, uint32_t type, const unsigned char *p, size_t len,
			struct ckpt_event *ev, size_t *at, struct ckpt_err *e);
/* Set an error of kind at ev's record ("dir/events.N", "offset X: ..."); returns -1. */
int ckpt_evreader_err(const struct ckpt_evreader *r, const struct ckpt_event *ev, struct ckpt_err *e,
		      enum ckpt_errkind kind, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int ckpt_evreader_verr(const struct ckpt_evreader *r, const struct ckpt_event *ev, struct ckpt_err *e,
		       enum ckpt_errkind kind, const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

#endif
