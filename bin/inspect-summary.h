/* inspect-summary.h: ckpt-inspect's summary shown to a person (the table) and its skew (NDJSON, or
 * drawn by gnuplot), from the summary's JSON (ckpt_snapshot_summary and ckpt_snapshot_summary_flink). */
#ifndef CKPT_INSPECT_SUMMARY_H
#define CKPT_INSPECT_SUMMARY_H

#include "cli.h"

/* The summary as a table of at most 79 columns on stdout (state_read: a Flink snapshot's state
 * files were read, not its _metadata alone): 0, or 2 on a write error. */
int summary_table(const json_t *sum, int state_read);
/* The skew rows of the summary on stdout, one a line; or, with plot, drawn into the SVG file plot
 * (whole or not at all).  0, or 2 with the message said. */
int summary_skew(const json_t *sum, const char *plot);

#endif
