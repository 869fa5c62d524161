/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The report's loss counters (reports/analysis/losses.c): the recorder's, as its records say,
 * and what the reader and the analysis could not keep, each with a note where it matters.
 */
#ifndef GAPSCOPE_LOSSES_H
#define GAPSCOPE_LOSSES_H

#include "gap.h"
#include "trace.h"

/* A GS_REC_LOSSES record: the totals so far (the last one counts). */
void losses__record(struct loss_counts *l, const struct gs_hdr *h);
/* A GS_REC_UNPROBED record: a process's window without probes. */
void losses__unprobed(struct loss_counts *l, const struct gs_hdr *h);
/*
 * After the last record: the reader's own counters (st), the stream and event handles not
 * followed (h), the sum of the recorder's losses, and their notes; events and cuda_events (the
 * records analysed) say an empty trace.
 */
void losses__reader(struct loss_counts *l, const struct trace_stats *st,
		    const struct handle_stats *h, __u64 events, __u64 cuda_events,
		    const struct notes *nt);
/*
 * What the analysis let go of from its own tables (threads.h, blame.h): the tables' counts in t,
 * and as losses what went before its time, with a note when any did.
 */
struct threads_counts;
void losses__tables(struct loss_counts *l, struct table_counts *t, const struct threads_counts *c,
		    __u64 names_evicted, const struct notes *nt);

#endif
