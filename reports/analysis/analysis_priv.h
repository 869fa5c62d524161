/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The analysis's private state (analysis.c drives it; feed.c takes each record into it), shared
 * by the two files only.
 */
#ifndef GAPSCOPE_ANALYSIS_PRIV_H
#define GAPSCOPE_ANALYSIS_PRIV_H

#include "analysis.h"
#include "recover.h"
#include "strtab.h"

/* A gap is analysed once the trace has gone this far past its end (intervals that end later
 * but reach into it are then in), and history is kept this long before the oldest open gap. */
#define GAP_MARGIN_NS (200ull * 1000 * 1000)
#define LOOKBACK_NS   (1000ull * 1000 * 1000)
#define PRUNE_EVERY   65536		      /* records, */
#define PRUNE_NS      (1000ull * 1000 * 1000) /* or trace time, between two prunes */

struct exited_proc {
	__u32 tgid;
	__u64 ts; /* its last thread's exit */
};

#define PROBE_HOST_FN 0x80000000u /* task_kinds: a cuLaunchHostFunc function's probe */

struct analysis_priv {
	struct strtab *strs;
	struct stacktab *stacks;
	struct trace_reader *tr;
	struct ordered_reader *rd;
	struct vec pending;	/* struct gap: closed, waiting for GAP_MARGIN_NS */
	__u64 next_due;		/* when the first pending gap is due, UINT64_MAX: none */
	struct vec gaps;	/* struct gap: analysed */
	struct vec kind_fn;	/* causes.h: root causes over all gaps */
	struct recover recover; /* recover.h: what removing each cause or hop gives back */
	__u32 seq;
	struct threads *th;
	struct names *nm;
	struct gputime *gt;
	struct tiers *tiers; /* CUPTI's timeline; NULL unless the trace is marked for it */
	__u64 min_gap_ns;
	struct unwinder *uw;
	struct perfmaps *perfmaps; /* JITs' names, read first where the trace is marked for them */
	struct pyframes *py;	   /* Python frames in stacks (pyframes.h) */
	struct report_archive *archive; /* record --archive's files, read first where marked */
	struct vec probes;		/* const char *, by probe id */
	struct vec task_kinds;		/* __u32 by probe id: enum rt_fn_kind of task probes,
				* PROBE_HOST_FN for a host function's, else 0 */
	struct tasks *tasks; /* async tasks' polls and wakes (reports/analysis/tasks.h) */
	struct cgroups *cg;  /* CPU quotas (reports/analysis/cgroups.h) */
	struct launch_counter *launches;
	struct idlesplit *split; /* idle under the floor: the launching thread (idlesplit.h) */
	/* Live (forget_gaps): processes gone, struct exited_proc, let go of once every gap that
	 * could reach back to them is analysed. */
	struct vec exited;
	bool decided_only; /* analysis_opts.decided_only */
	/* Between analysis__open and analysis__finish: */
	struct blame *bl;
	struct analysis_opts opts;
	__u32 version; /* of the trace (TRACE_VERSION when live) */
	__u64 nrec;
	__u64 pruned_ns; /* the trace's time at the last prune */
};

/* Live: the state of processes gone before horizon let go of (feed.c). */
void analysis_priv__forget_exited(struct analysis_priv *p, __u64 horizon);

/* One record: metadata, or an event for the timelines (feed.c). Returns -ENOMEM only. */
int analysis_priv__feed(struct analysis *a, const struct gs_hdr *h, __u32 version);
/* A probe's symbol by its id, "?" when the trace did not name it (feed.c). */
const char *analysis_priv__probe_name(void *priv, __u32 id);

#endif
