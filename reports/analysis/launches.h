/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Launch counts (reports/analysis/launches.c). Since trace version 4 the recorder streams only the launches
 * that can end a gap and counts every launch in BPF (bpf/cuda.bpf.c), writing the totals as
 * GS_REC_LAUNCHES records (the last counts); an older trace, or one without such a record (a
 * recorder killed before its first second), is counted from its launch records.
 */
#ifndef GAPSCOPE_LAUNCHES_H
#define GAPSCOPE_LAUNCHES_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "trace.h"

struct launch_fn_count {
	const char *fn; /* the probed symbol */
	__u64 count;
};

struct launch_totals {
	bool counted;	     /* the recorder's counts (GS_REC_LAUNCHES), not the records' */
	bool all;	     /* --all-launches: every launch has its record */
	__u64 total;	     /* every launch */
	__u64 in_trace;	     /* launch records read */
	__u64 async_memsets; /* counted by the recorder (version 5), whether in the trace or not */
	struct launch_fn_count *by_fn; /* by probed symbol, most first */
	size_t nfn;
};

struct launch_counter;

struct launch_counter *launch_counter__new(void);
/* Every record: GS_REC_LAUNCHES keeps its copy, a launch record counts. */
int launch_counter__add(struct launch_counter *c, const struct gs_hdr *h);
/* The totals, with fn_name(arg, probe id) naming the probes; 0 or -ENOMEM. */
int launch_counter__totals(const struct launch_counter *c,
			   const char *(*fn_name)(void *arg, __u32 id), void *arg,
			   struct launch_totals *t);
/* The last GS_REC_LAUNCHES record, NULL if none. */
const struct gs_rec_launches *launch_counter__record(const struct launch_counter *c);
void launch_counter__free(struct launch_counter *c);
void launch_totals__free(struct launch_totals *t);

#endif
