/* dot.c: a job graph with its checkpoint plan (and a failure's restart set) as Graphviz DOT, for ckpt-plan -D. */
#include <stdlib.h>
#include <string.h>

#include "graph.h"

#define DETAIL_LIMIT 32 /* vertices up to this parallelism are drawn subtask by subtask */
#define EDGE_LIMIT 256  /* ALL_TO_ALL edges with up to this many connections are drawn one by one */
#define RANGES_SHOWN 48 /* characters of a range list shown in a vertex box */

#define C_TRIGGER "#8fd694"
#define C_WAIT "#bcd9f5"
#define C_FINISHED "#e4e4e4"
#define C_OTHER "#f6c6c6"
#define C_RUNNING "#ffffff"
#define C_RESTART "#d62728"

struct dot {
	FILE *f;
	const struct ckpt_graph *g;
	const struct ckpt_dot_input *in;
};

/* A DOT string: quotes and backslashes escaped, newlines as DOT's \n. */
static void
put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static int
detailed(const struct ckpt_vertex *v)
{
	return v->parallelism <= DETAIL_LIMIT;
}

static int
restarting(const struct dot *d, size_t v, uint32_t i)
{
	return d->in->restart && ckpt_bits_test(&d->in->restart[v], i);
}

static int
failed(const struct dot *d, size_t v, uint32_t i)
{
	for (size_t k = 0; k < d->in->nfailed; k++)
		if (d->in->failed[k].vertex == v && d->in->failed[k].subtask == i)
			return 1;
	return 0;
}

/* The fill colour of a subtask: its part in the plan, or its state when the plan has none. */
static const char *
fill_of(const struct dot *d, size_t v, uint32_t i)
{
	const struct ckpt_plan *p = d->in->plan;
	unsigned char st = d->g->v[v].tasks[i];

	if (ckpt_bits_test(&p->trigger[v], i))
		return C_TRIGGER;
	if (ckpt_bits_test(&p->wait_for[v], i))
		return C_WAIT;
	if (st == CKPT_FINISHED)
		return C_FINISHED;
	return st == CKPT_RUNNING ? C_RUNNING : C_OTHER;
}

static void
subtask_node(const struct dot *d, size_t v, uint32_t i)
{
	unsigned char st = d->g->v[v].tasks[i];
	char label[64];

	if (st == CKPT_RUNNING || st == CKPT_FINISHED)
		snprintf(label, sizeof label, "%u", i);
	else
		snprintf(label, sizeof label, "%u\n%s", i, ckpt_exec_state_name(st));
	fprintf(d->f, "\t\tv%zu_%u [label=", v, i);
	put_str(d->f, label);
	fprintf(d->f, ", fillcolor=\"%s\"", fill_of(d, v, i));
	if (st == CKPT_FINISHED)
		fputs(", style=\"rounded,filled,dashed\", fontcolor=\"#808080\"", d->f);
	if (restarting(d, v, i))
		fprintf(d->f, ", color=\"%s\", penwidth=3", C_RESTART);
	else if (ckpt_bits_test(&d->in->plan->trigger[v], i))
		fputs(", penwidth=2", d->f);
	if (failed(d, v, i))
		fputs(", shape=octagon", d->f);
	fputs("];\n", d->f);
}

static void
vertex_title(const struct dot *d, size_t v, char *buf, size_t size)
{
	const struct ckpt_vertex *vx = &d->g->v[v];

	if (vx->name && strcmp(vx->name, vx->id) != 0)
		snprintf(buf, size, "%s (%s)\nparallelism %u", vx->name, vx->id, vx->parallelism);
	else
		snprintf(buf, size, "%s\nparallelism %u", vx->id, vx->parallelism);
}

/* "what: ranges" for a big vertex's box, shortened; nothing when the set is empty. */
static void
add_ranges(char *buf, size_t size, const char *what, const struct ckpt_bits *b)
{
	size_t len = strlen(buf);
	char *s;

	if (b == NULL || ckpt_bits_next(b, 0) >= b->n || (s = ckpt_rangelist_format(b)) == NULL)
		return;
	if (strlen(s) > RANGES_SHOWN)
		strcpy(s + RANGES_SHOWN - 3, "...");
	snprintf(buf + len, size - len, "\n%s: %s (%zu)", what, s, ckpt_bits_count(b));
	free(s);
}

/* A vertex too wide to draw subtask by subtask: one box listing its sets. */
static void
vertex_node(const struct dot *d, size_t v)
{
	const struct ckpt_plan *p = d->in->plan;
	const struct ckpt_vertex *vx = &d->g->v[v];
	const char *fill = C_RUNNING;
	struct ckpt_bits fin;
	char label[1024];

	vertex_title(d, v, label, sizeof label);
	add_ranges(label, sizeof label, "trigger", &p->trigger[v]);
	add_ranges(label, sizeof label, "wait for", &p->wait_for[v]);
	if (ckpt_bits_init(&fin, vx->parallelism, NULL) == 0) {
		for (uint32_t i = 0; i < vx->parallelism; i++)
			if (vx->tasks[i] == CKPT_FINISHED)
				ckpt_bits_set(&fin, i);
		add_ranges(label, sizeof label, "finished", &fin);
		if (ckpt_bits_count(&fin) == vx->parallelism)
			fill = C_FINISHED;
		ckpt_bits_release(&fin);
	}
	add_ranges(label, sizeof label, "restart", d->in->restart ? &d->in->restart[v] : NULL);
	if (d->in->nfailed && ckpt_bits_init(&fin, vx->parallelism, NULL) == 0) {
		for (size_t k = 0; k < d->in->nfailed; k++)
			if (d->in->failed[k].vertex == v)
				ckpt_bits_set(&fin, d->in->failed[k].subtask);
		add_ranges(label, sizeof label, "failed", &fin);
		ckpt_bits_release(&fin);
	}
	if (ckpt_bits_next(&p->wait_for[v], 0) < vx->parallelism)
		fill = C_WAIT;
	if (ckpt_bits_next(&p->trigger[v], 0) < vx->parallelism)
		fill = C_TRIGGER;
	fprintf(d->f, "\tv%zu [label=", v);
	put_str(d->f, label);
	fprintf(d->f, ", fillcolor=\"%s\"", fill);
	if (d->in->restart && ckpt_bits_next(&d->in->restart[v], 0) < vx->parallelism)
		fprintf(d->f, ", color=\"%s\", penwidth=3", C_RESTART);
	fputs("];\n", d->f);
}

static void
vertex_cluster(const struct dot *d, size_t v)
{
	char title[600];

	vertex_title(d, v, title, sizeof title);
	fprintf(d->f, "\tsubgraph cluster_v%zu {\n\t\tlabel=", v);
	put_str(d->f, title);
	fputs(";\n\t\tstyle=rounded;\n", d->f);
	for (uint32_t i = 0; i < d->g->v[v].parallelism; i++)
		subtask_node(d, v, i);
	fputs("\t}\n", d->f);
}

static const char *
edge_style(enum ckpt_partition p)
{
	switch (p) {
	case CKPT_PIPELINED:
	case CKPT_PIPELINED_BOUNDED: return "solid";
	case CKPT_PIPELINED_APPROXIMATE: return "dotted";
	default: return "dashed";
	}
}

/* One arrow for the whole job edge, between clusters or boxes. */
static void
vertex_edge(const struct dot *d, const struct ckpt_edge *ed)
{
	const struct ckpt_vertex *s = &d->g->v[ed->source], *t = &d->g->v[ed->target];
	char label[128];

	if (detailed(s))
		fprintf(d->f, "\tv%zu_0 -> ", ed->source);
	else
		fprintf(d->f, "\tv%zu -> ", ed->source);
	if (detailed(t))
		fprintf(d->f, "v%zu_0 [", ed->target);
	else
		fprintf(d->f, "v%zu [", ed->target);
	if (detailed(s))
		fprintf(d->f, "ltail=cluster_v%zu, ", ed->source);
	if (detailed(t))
		fprintf(d->f, "lhead=cluster_v%zu, ", ed->target);
	snprintf(label, sizeof label, "%s\n%s", ckpt_distribution_name(ed->distribution),
		 ckpt_partition_name(ed->partition));
	fputs("label=", d->f);
	put_str(d->f, label);
	fprintf(d->f, ", style=%s];\n", edge_style(ed->partition));
}

static void
job_edge(const struct dot *d, const struct ckpt_edge *ed)
{
	uint32_t S = d->g->v[ed->source].parallelism, T = d->g->v[ed->target].parallelism;

	if (!detailed(&d->g->v[ed->source]) || !detailed(&d->g->v[ed->target]) ||
	    (ed->distribution == CKPT_ALL_TO_ALL && (uint64_t)S * T > EDGE_LIMIT)) {
		vertex_edge(d, ed);
		return;
	}
	for (uint32_t j = 0; j < T; j++) {
		uint32_t lo = 0, hi = S;

		if (ed->distribution == CKPT_POINTWISE)
			ckpt_pointwise_inputs(S, T, j, &lo, &hi);
		for (uint32_t i = lo; i < hi; i++)
			fprintf(d->f, "\tv%zu_%u -> v%zu_%u [style=%s];\n", ed->source, i, ed->target, j,
				edge_style(ed->partition));
	}
}

static void
legend(const struct dot *d)
{
	fputs("\tsubgraph cluster_legend {\n\t\tlabel=\"legend\";\n\t\tstyle=dotted;\n", d->f);
	fprintf(d->f, "\t\tlegend_trigger [label=\"triggered\", fillcolor=\"%s\", penwidth=2];\n", C_TRIGGER);
	fprintf(d->f, "\t\tlegend_wait [label=\"waited for\", fillcolor=\"%s\"];\n", C_WAIT);
	fprintf(d->f, "\t\tlegend_finished [label=\"finished\", fillcolor=\"%s\", "
		"style=\"rounded,filled,dashed\", fontcolor=\"#808080\"];\n", C_FINISHED);
	if (d->in->plan->decline_reason)
		fprintf(d->f, "\t\tlegend_other [label=\"not running\", fillcolor=\"%s\"];\n", C_OTHER);
	if (d->in->restart)
		fprintf(d->f, "\t\tlegend_restart [label=\"restarting\", fillcolor=\"%s\", color=\"%s\", "
			"penwidth=3];\n", C_RUNNING, C_RESTART);
	if (d->in->nfailed)
		fprintf(d->f, "\t\tlegend_failed [label=\"failed\", shape=octagon, fillcolor=\"%s\", "
			"color=\"%s\", penwidth=3];\n", C_RUNNING, C_RESTART);
	fputs("\t}\n", d->f);
}

static void
graph_label(const struct dot *d)
{
	const struct ckpt_plan *p = d->in->plan;
	size_t ntrig = 0, nwait = 0, nfin = 0;
	char label[1400];

	for (size_t v = 0; v < d->g->nv; v++) {
		ntrig += ckpt_bits_count(&p->trigger[v]);
		nwait += ckpt_bits_count(&p->wait_for[v]);
		nfin += ckpt_bits_count(&p->finished[v]);
	}
	if (p->decline_reason)
		snprintf(label, sizeof label, "checkpoint declined: %s\n%s", p->decline_reason, p->decline_message);
	else
		snprintf(label, sizeof label, "checkpoint plan: %zu triggered, %zu waited for, %zu finished",
			 ntrig, nwait, nfin);
	if (d->in->restart) {
		size_t nrestart = 0, len = strlen(label);

		for (size_t v = 0; v < d->g->nv; v++)
			nrestart += ckpt_bits_count(&d->in->restart[v]);
		snprintf(label + len, sizeof label - len, "\nfailover: %zu subtasks restart", nrestart);
	}
	fputs("\tgraph [rankdir=LR, compound=true, fontname=\"Helvetica\", labelloc=t, label=", d->f);
	put_str(d->f, label);
	fputs("];\n", d->f);
}

int
ckpt_plan_dot(FILE *f, const struct ckpt_graph *g, const struct ckpt_dot_input *in)
{
	struct dot d = {f, g, in};

	fputs("digraph \"ckpt-plan\" {\n", f);
	graph_label(&d);
	fputs("\tnode [fontname=\"Helvetica\", fontsize=10, shape=box, style=\"rounded,filled\"];\n"
	      "\tedge [fontname=\"Helvetica\", fontsize=9];\n", f);
	for (size_t k = 0; k < g->nv; k++) {
		size_t v = g->topo[k];

		if (detailed(&g->v[v]))
			vertex_cluster(&d, v);
		else
			vertex_node(&d, v);
	}
	for (size_t k = 0; k < g->ne; k++)
		job_edge(&d, &g->e[k]);
	legend(&d);
	fputs("}\n", f);
	return ferror(f) ? -1 : 0;
}
