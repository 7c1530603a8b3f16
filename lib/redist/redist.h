/* redist.h: the redistribution layer (lib/redist/): a snapshot's state assigned to new
 * parallelism or a new job graph as Flink restores it, and a relocated Flink savepoint written,
 * offered to the engine; it owns its plans (ckpt_redist_free).  Uses the snapshot, Flink, model
 * and base layers. */
#ifndef CKPT_REDIST_INTERNAL_H
#define CKPT_REDIST_INTERNAL_H

#include "base/base.h"
#include "model/model.h"
#include "flink/flink.h"
#include "snap/snap.h"

enum ckpt_redist_how { RD_FINISHED, RD_IN_PLACE, RD_RESCALE };

struct ckpt_redist_name {
	const char *name;  /* borrowed from the input */
	enum ckpt_mode mode;
	uint64_t *cum;     /* list: P+1 prefix sums of the old subtasks' counts */
	uint64_t *lo;      /* list, rescaled: each new subtask's run of the concatenation */
	uint64_t *len;
	uint32_t *holders; /* union, broadcast: old indices holding the name, ascending */
	size_t nholders;
	uint64_t held;     /* union: the holders' counts summed */
};

struct ckpt_redist_op {
	struct ckpt_operator *old, *out;
	enum ckpt_redist_how how;
	uint32_t P, p, maxp;
	const char *vid, *vname;   /* vertex id and name for Flink's messages */
	const char *nid, *nuid, *nname, *nvertex; /* the operator's names in the output */
	struct ckpt_subtask **at;  /* P: the old subtask at each index; NULL when absent or finished */
	int some_finished, keyed, chan;
	long gv;                   /* its vertex in the graph (-g), else -1 */
	int not_head, not_tail;    /* -g: chained after the vertex's first operator (which reads its
				      gates), before its last (which writes its partitions) */
	struct ckpt_redist_name *names;     /* every state name, bytewise sorted */
	size_t nnames;
};

/*
 * An archive is read forward; a new subtask may need old subtasks from two places
 * (the start carried over between list names wraps around), so going back would
 * mean reading the archive again from its start for every new subtask.  Instead we
 * keep a few readers of the same input, each moving forward only.
 */
#define RD_READERS 8

struct ckpt_redist_reader {
	struct ckpt_snapshot *s;
	size_t pos;                 /* the member after the last one it loaded, in manifest order */
	struct ckpt_subtask *held;  /* that member, kept: the next new subtask often starts there */
};

/* A vertex of the graph, for in-flight data (inflight.c). */
struct ckpt_redist_vert {
	uint32_t oldp, newp;
	int known;                   /* some operator of the snapshot restores into it */
	unsigned char *in_state;     /* per input gate: some old subtask holds channel state of it */
	unsigned char *out_state;    /* per result partition */
	int any_in, any_out;
	int head_in, tail_out;       /* its first operator holds input channel handles, its last output ones */
	int in_desc, out_desc;       /* its subtasks get an input (output) rescaling descriptor */
};

struct ckpt_redist {
	struct ckpt_snapshot *in;
	struct ckpt_snapshot *out;
	struct ckpt_redist_op *ops;
	size_t nops;
	const char *name;
	const char *reopen;         /* the input's path when more readers may be opened */
	struct ckpt_redist_reader rd[RD_READERS];
	size_t nrd;
	size_t *base;               /* per input operator: its first subtask's place in manifest order */
	const struct ckpt_graph *graph; /* -g, or NULL */
	struct ckpt_redist_vert *vx;         /* per graph vertex, for the in-flight data of a Flink snapshot */
	char **warn;                /* what Flink's restore drops silently, one line each */
	size_t nwarn, warncap;
};

/* An operator as messages name it: its uid, else its id (inline: inflight.c, which redist.c calls,
 * names operators too, and calls nothing of redist.c). */
static inline const char *
ckpt_redist_opname(const struct ckpt_operator *op)
{
	return op->uid ? op->uid : op->id;
}
/* The name's plan in o, or NULL. */
struct ckpt_redist_name *ckpt_redist_find_name(const struct ckpt_redist_op *o, const char *name);
/* The elements [*a, *b) of old subtask j's state nm that new subtask t takes; 0 when none. */
int ckpt_redist_piece(const struct ckpt_redist_op *o, const struct ckpt_redist_name *nm, uint32_t t, uint32_t j, uint64_t *a,
		  uint64_t *b);
/* The key groups [*a, *b] of old subtask j that new subtask t takes; 0 when none. */
int ckpt_redist_kg_piece(const struct ckpt_redist_op *o, uint32_t t, uint32_t j, uint32_t *a, uint32_t *b);
/* Does new subtask t read anything of old subtask j? */
int ckpt_redist_needed(const struct ckpt_redist *r, const struct ckpt_redist_op *o, uint32_t t, uint32_t j);
/* inflight.c: in-flight data.  Refuse what the input's system refuses (ckpt's archives: any
 * rescaling of it; Flink's: an UNSUPPORTED mapper), check the handles against the graph. */
int ckpt_redist_plan_inflight(struct ckpt_redist *r, struct ckpt_err *e);
void ckpt_redist_free_inflight(struct ckpt_redist *r);
/* Does new subtask t get channel handle h of old subtask j?  Any of its handles? */
int ckpt_redist_chan_to(const struct ckpt_redist *r, const struct ckpt_redist_op *o, uint32_t t, uint32_t j,
		    const struct ckpt_handle *h);
int ckpt_redist_chan_needed(const struct ckpt_redist *r, const struct ckpt_redist_op *o, uint32_t t, uint32_t j);
/* New subtask t's input (or output) rescaling descriptor as JSON, NULL for Flink's NO_RESCALE. */
json_t *ckpt_redist_descriptor(const struct ckpt_redist *r, const struct ckpt_redist_op *o, uint32_t t, int input);
/* restore.c: map the snapshot's operators onto opt->graph (filling r->ops) and apply Flink's
 * VertexFinishedStateChecker; refusals in Flink's words. */
int ckpt_redist_map_graph(struct ckpt_redist *r, const struct ckpt_redist_opts *opt, struct ckpt_err *e);

#endif
