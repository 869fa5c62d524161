/* SPDX-License-Identifier: GPL-2.0 */
/* The report's loss counters (reports/analysis/losses.c). */
#ifndef GAPSCOPE_LOSSES_H
#define GAPSCOPE_LOSSES_H

#include "analysis.h"
#include "trace.h"

/* A GS_REC_LOSSES record: the totals so far (the last one counts). */
void losses__record(struct analysis *a, const struct gs_hdr *h);
/* A GS_REC_UNPROBED record: a process's window without probes. */
void losses__unprobed(struct analysis *a, const struct gs_hdr *h);
/* After the last record: the reader's own counters and notes, and the sum of the losses. */
void losses__reader(struct analysis *a, const struct trace_stats *st);
/*
 * What the analysis let go of from its own tables (threads.h, blame.h): the tables' counts,
 * and as losses what went before its time, with a note when any did.
 */
struct threads_counts;
void losses__tables(struct analysis *a, const struct threads_counts *c, __u64 names_evicted);

#endif
