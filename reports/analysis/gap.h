/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The model of the report: what the analysis (analysis.h) makes and every output
 * (reports/render/) reads. Strings are the analysis' (interned, living until analysis__free());
 * a gap's arrays are its own, freed by gap__free_*. Times are CLOCK_MONOTONIC ns, as recorded.
 *
 *   struct analysis
 *     devices[]   per GPU device: busy intervals (API-inferred), busy and idle ns
 *     gaps[]      idle windows >= min_gap, numbered from 1 in order of start, each with
 *                   closer      the thread whose submission ended it
 *                   chain[]     the links from the closer to the gap's main root cause
 *                   roots[]     every root cause the walk found in it, with the path to it
 *                   stacks[]    its folded stacks: frames root first, weight = ns in the gap
 *     causes[]    root causes summed over all gaps by (kind, function), ranked by ns, with
 *                   their share and breakdown
 *     loss        the recorder's loss counters, and what the reader could not read
 */
#ifndef GAPSCOPE_GAP_H
#define GAPSCOPE_GAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#include "gapscope.h"
#include "cgroups.h"
#include "launches.h"
#include "names.h"
#include "unwind.h"

enum blame_kind {
	BK_LOCK,
	BK_COND,
	BK_IO,
	BK_SLEEP,
	BK_PROBE, /* malloc_trim or a --probe function: function says which */
	BK_CUDA,
	BK_ON_CPU,
	BK_PREEMPTED,
	BK_OTHER,
	BK_THROTTLED, /* runnable, stopped by a CPU quota: function names the cgroup */
	BK_RUNNABLE,  /* runnable, not preempted: the CPU idle, or what ran not recorded */
	BK_CHILD,     /* in wait4/waitid: function names the child, detail its pid */
	BK_FAULT,     /* asleep in a page fault: function "major, FILE", "minor, mmap_lock" */
	BK_MAX
};

enum thread_state { TS_ON_CPU, TS_BLOCKED, TS_PREEMPTED };

const char *blame_kind__name(enum blame_kind k); /* "malloc_trim" for BK_PROBE */
const char *thread_state__name(enum thread_state s);

/* One hop of a chain: what a thread was doing, and why the chain goes on (or ends) there. */
struct chain_link {
	__u32 tid;
	const char *comm;
	enum thread_state state;
	enum blame_kind kind;
	__u64 ns;	      /* gap time this link explains (on the path to the root) */
	const char *lock;     /* lock/cond: data symbol or "by FUNCTION"; else NULL */
	const char *function; /* root: hottest/probed/CUDA function; blocked: where it waited */
	const char *detail;   /* "held by T", "woken by T", "preempted by T", a syscall */
	__u64 task;	      /* a task hop (reports/analysis/tasks.h): the task, else 0 */
	const char **frames;  /* leaf first, as summary.json lists them */
	__u32 nframes;
	/* On a gap's chain: the gap time that removing this hop would give back, the model's
	 * figure and its upper bound (reports/analysis/recover.h). */
	__u64 recoverable_ns, recoverable_hi_ns;
};

/*
 * A fault root's pages: the file offsets its faults touched, [lo, hi] (the page of each; 4 KiB
 * pages), n faults named; n 0: none known.
 */
struct fault_span {
	__u64 lo, hi;
	__u64 n;
};

/* What a root's time was in, below the function that names it (reports/analysis/actionable.h). */
struct root_part {
	const char *leaf; /* the innermost frame's function, or "LIB (stripped)"; NULL unknown */
	const char *line; /* a Python function's line, "feeder.py:12"; NULL none */
	__u64 ns;
};

struct hop;

/* A root cause inside one gap, and the path to it. */
struct gap_root {
	struct chain_link *links; /* links[0] = the closer, links[n - 1] = the root */
	__u32 nlinks;
	__u64 ns;
	struct root_part *parts; /* on-CPU and fault roots: by leaf and line */
	__u32 nparts, capparts;
	__u32 order;		/* its place as the walk found it, before the roots were ranked */
	struct fault_span span; /* a fault root's file offsets */
};

/*
 * A piece of the closer's own timeline in a gap, as the walk cut it: blocked until something
 * outside it was ready (a wait: a lock, a condition, I/O, a sleep), else its own work (on CPU,
 * in a call) or its wait for a CPU. The roots found under it, with their time in it, are seg_parts
 * [first, first + nparts). What reports/analysis/recover.c replays with a cause taken out.
 */
enum seg_how {
	SEG_OWN,      /* on CPU, in a call */
	SEG_RUNNABLE, /* waiting for a CPU (woken, or preempted) */
	SEG_WAIT,     /* blocked until woken */
};

struct gap_seg {
	__u64 start, end;
	enum seg_how how;
	__u64 futex; /* a wait on a futex word: which (waits on one word in a row are one wait) */
	__u32 first, nparts;
};

struct gap_seg_part {
	__u32 root; /* index into the gap's roots, as ranked */
	__u64 ns;
};

/* A folded stack of a gap: frames root first (the closer's name is the first), ns inside it. */
struct gap_stack {
	const char **frames;
	__u32 nframes;
	__u64 ns;
};

struct gap {
	__u32 id;  /* from 1, in order of start (set once every gap is known) */
	__u32 seq; /* from 1, in the order their analysis completed (on_gap) */
	__u32 device;
	__u64 start_ns, end_ns;
	/* The start edge is the evidence's return; the device may have gone idle as early as
	 * this (the wakeup of the synchronize's last sleep; == start_ns when not known). */
	__u64 start_earliest_ns;
	const char *tier;      /* "api", or "cupti" where the device has CUPTI's kernel records */
	const char *start_how; /* how the device was known idle: "cuStreamSynchronize returned" */
	const char *end_how;   /* "cuLaunchKernel by gpu-worker-0" */
	__u32 closer_tid;
	const char *closer_comm;
	struct chain_link *chain; /* the path of the largest root */
	__u32 nchain;
	struct gap_root *roots; /* largest first; NULL after on_gap */
	__u32 nroots;
	__u64 cause_ns;	     /* what roots[0] explains */
	struct cause *kinds; /* its root causes by kind and function, largest first */
	__u32 nkinds;
	struct hop *hops; /* the hops its paths pass through, as they came (recover.h) */
	__u32 nhops;
	struct gap_stack *stacks; /* for gaps/NNNN.folded; NULL after on_gap */
	__u32 nstacks;
	struct gap_seg *segs; /* the closer's timeline over the gap; NULL after on_gap */
	__u32 nsegs;
	struct gap_seg_part *seg_parts;
	__u32 nseg_parts;
	__u64 unexplained_ns; /* gap time no thread's timeline covered */
	/* Gap time a thread on a chain was runnable while a process outside the target ran:
	 * the machine's load, not the program's doing. */
	__u64 preempted_outside_ns;
	__u64 woken_outside_ns; /* chains that end at a waker outside the recording */
};

/* A cause's breakdown: a leaf function under it, or a line of it; share of the cause's ns. */
#define CAUSE_PARTS 3
struct cause_part {
	const char *name;
	__u64 ns;
	double share;
};

/*
 * A root cause: a kind and what a user can act on (the function, lock or call), its own time
 * only; on-CPU time with its top leaf functions and, for a Python function, its top lines.
 */
struct cause {
	enum blame_kind kind;
	const char *function; /* the function (or lock) */
	const char *comm;     /* the thread of its largest root */
	__u64 ns;
	double share; /* of all gap time (of the gap's, for a gap's kinds) */
	struct cause_part leaves[CAUSE_PARTS], lines[CAUSE_PARTS];
	__u32 nleaves, nlines;
	/* The gap time that removing it would give back over all gaps (reports/analysis/
	 * recover.h): the model's figure, and the range [lo, hi] it lies in. */
	__u64 recoverable_ns, recoverable_lo_ns, recoverable_hi_ns;
	struct fault_span span; /* fault: the file offsets its faults touched */
};

/*
 * A hop that chains pass through (a lock held across the work, a condition a thread signals,
 * the I/O another process finishes), named by its kind and lock or function: the gap time that
 * removing it would give back over all gaps, as for a cause.
 */
struct hop {
	enum blame_kind kind;
	const char *name;
	__u64 ns; /* gap time through it */
	__u64 recoverable_ns, recoverable_lo_ns, recoverable_hi_ns;
};

/*
 * Writes the gap's chain to OUT as summary.txt lists it, one line with its newline: the closer,
 * then each hop after " ← ", the root with its time ("gpu-worker-0 ← lock tracker_lock held by
 * finalizer-0 ← malloc_trim 28 ms"). Names are escaped for a terminal, C++ names shortened, and
 * a run of an async runtime's plumbing folds into one hop. It lives by the model so that every
 * output words a chain the same way: summary.txt, the flame graphs' titles, the timeline.
 */
void gap__chain_print(const struct gap *g, FILE *out);
/* The same line in BUF, without its newline (cut to SIZE); its length. */
size_t gap__chain_text(const struct gap *g, char *buf, size_t size);

/*
 * A fault row's function in few words: the file by its name alone ("major, dataset.bin" for
 * "major, /data/dataset.bin"), into BUF; other functions as they are. Returns BUF.
 */
const char *fault__short(const char *function, char *buf, size_t size);
/*
 * A fault cause as one line's words, into BUF: "major, dataset.bin 0x1a000-0x3f000
 * (gather_rows)": the file's offsets its faults touched, the code that touched them (its top
 * line, else its top frame). Returns BUF.
 */
const char *cause__fault_text(const struct cause *c, char *buf, size_t size);

/* What summary.json does not list: the walk's roots and the folded stacks (after on_gap). */
void gap__free_walk(struct gap *g);
/* Everything a gap owns: the walk's parts, its chain and its causes by kind. */
void gap__free_parts(struct gap *g);

/*
 * The analysis's tables keyed by what the target chose (threads.h): futex words and threads let
 * go of as the trace went by, and the most held at once. What went before its time (evicted,
 * over a bound) is among the losses.
 */
struct table_counts {
	__u64 words_forgotten, words_max, threads_forgotten, threads_max;
};

/*
 * Where a component of the analysis says what the trace lacked or what it let go of: a line of
 * the report's notes (the analysis keeps them: analysis__note).
 */
struct notes {
	void (*add)(void *ctx, const char *line);
	void *ctx;
};

/* ---- the analysis' result ------------------------------------------------------------- */

struct folded;
struct analysis_priv;

struct busy_interval {
	__u64 start, end;
};

/*
 * A device's idle time, every ns of it in one part (reports/analysis/idlesplit.c): before its first busy
 * time (setup) and after its last (tail), in windows of min_gap or more between them (the gaps),
 * and in windows under min_gap (under the floor). The last is measured only where kernels are
 * timed (CUPTI); the API tier cannot tell them from busy time and counts them busy.
 */
struct idle_split {
	__u64 active_start, active_end; /* first to last busy time; 0, 0 when never busy */
	__u64 setup_ns, tail_ns, gaps_ns, under_floor_ns;
	bool under_floor_known;
};

/* Quantiles of the host's time between a thread's consecutive launches, and of the kernels'
 * durations (CUPTI's launch and kernel records); n 0 where there were none. */
struct launch_timing {
	__u32 tid; /* the thread with the most launch records */
	__u64 host_n, host_p50_ns, host_p99_ns;
	__u64 kernel_n, kernel_p50_ns, kernel_p99_ns;
};

struct device_summary {
	__u32 id;
	__u64 busy_ns, idle_ns;	    /* over the recording */
	struct busy_interval *busy; /* sorted, disjoint; windows under min_gap inside them */
	size_t nbusy;
	struct idle_split split;
	struct launch_timing timing;
	/*
	 * API tier: of busy_ns, the time no completion signal backs (a launch followed by
	 * neither another launch nor evidence for at least the gap floor, until a call that
	 * did not wait, or the end): the device may have been idle then. Busy is a range,
	 * busy_ns - unconfirmed_ns to busy_ns. unclosed: the streams with work still
	 * outstanding at the end, none of whose launches since were ever seen done ("" none).
	 */
	__u64 unconfirmed_ns;
	const char *unclosed;
	bool busy_unknown; /* launches, and no completion signal ever: busy_ns is only a bound */
};

/*
 * Idle under the floor in aggregate (reports/underfloor.c): the thread that launched most, what
 * it did between its launches (from its first launch to its last), and the kinds that time
 * falls into: on CPU (launch-bound: the host launches slower than the GPU runs), in CUDA calls
 * (copies and the like), or off CPU by the blame kind of its wait. host_ns is that time less
 * its synchronizes (waits for the GPU's work) and the gaps.
 */
#define UNDER_FLOOR_FRAMES 16
struct under_floor {
	__u32 tid; /* 0: no launching thread seen */
	const char *comm;
	__u64 launches; /* in the trace */
	/* Its synchronizes after its first launch, and those that returned at once (idlesplit.h):
	 * the GPU had nothing left to run when the host asked. */
	__u64 syncs, syncs_quick;
	__u64 host_ns;
	__u64 kind_ns[BK_MAX]; /* BK_ON_CPU: on CPU or runnable (launch-bound); BK_CUDA: in CUDA
				* calls but synchronizes; the others: off CPU, by its wait
				* (BK_PREEMPTED: 0, in BK_ON_CPU) */
	__u64 runnable_ns;     /* of kind_ns[BK_ON_CPU]: runnable, not running */
	const char *function;  /* the hottest function on CPU between launches, NULL: unsampled */
	__u64 samples, function_samples;
	const char *frames[UNDER_FLOOR_FRAMES]; /* its most common stack, leaf first */
	__u32 nframes;
	/* The time between its launches, every launch counted (BPF, GS_REC_LAUNCH_IVALS; else
	 * the thread with the most): n intervals, p50 and p99 as the [lo, hi) ns of their bucket
	 * (hi 0: open). ival_n 0: none recorded (an older trace, or no launch cache). */
	__u32 ival_tid;
	__u64 ival_n, ival_p50_ns[2], ival_p99_ns[2];
	/* Its stacks on CPU between launches (the thread's name first, frames root first), each
	 * weighted by its share of the launch-bound time: gaps/launches.{folded,svg}. */
	struct folded *stacks;
};

/*
 * Every loss a report prints (reports/analysis/losses.c): the recorder's counters by name
 * ("ringbuf", ...), then the reader's and the analysis's ("corrupt_chunks", ...); lost_events sums
 * the recorder's. unprobed: the processes that ran before their library probes were in place
 * (GS_REC_UNPROBED): how many, for how long in all, the longest (its process), by why.
 */
#define LOSS_MAX (GS_LOSS_MAX + 11)
struct loss_counts {
	const char *names[LOSS_MAX];
	__u64 n[LOSS_MAX];
	size_t count;
	__u64 lost_events;
	struct {
		__u64 n, ns, max_ns, by_why[GS_UNPROBED_MAX];
		__u32 max_pid;
	} unprobed;
};

/*
 * The API tier's stream and event handles (reports/analysis/gputime_int.h bounds them): kept
 * now and at most, let go of (a bound reached, an exited process's, or in a live analysis unused
 * for its window), and calls refused (a new stream past a bound where every stream has work);
 * and the work done finding and visiting streams (a unit: an entry looked at), in all, in the
 * call that did most, and the launches, for work per launch.
 */
struct handle_stats {
	__u64 streams, streams_peak, streams_let_go, stream_calls_refused;
	__u64 events, events_peak, events_let_go;
	__u64 work, work_max, launches;
};

/* How far the API-inferred gaps of a device agree with CUPTI's (reports/analysis/tiers.h). */
struct tier_agreement {
	__u32 device;
	__u32 cupti_gaps, api_gaps;
	__u32 recalled; /* CUPTI gaps an API gap overlaps */
	__u32 precise;	/* API gaps that overlap a CUPTI idle window */
	__u64 start_err_p50, start_err_p99, end_err_p50, end_err_p99; /* ns, of recalled gaps */
};

/* The CUPTI collector, as its records say (marked: the trace has TRACE_F_GPU_ACT). */
struct cupti_info {
	bool marked, on, flushed;
	__u64 kernels, copies, memsets, launches, dropped, bad;
	const char *status; /* why there is no CUPTI tier, when the collector said so */
};

struct analysis {
	__u64 start_ns, end_ns, duration_ns;
	__u64 events; /* trace records analysed */
	__u64 cuda_events;
	struct device_summary *devices;
	size_t ndevices;
	struct gap *gaps;
	size_t ngaps;
	__u64 gap_ns;
	__u64 preempted_outside_ns; /* summed over the gaps */
	__u64 woken_outside_ns;	    /* summed over the gaps */
	struct cause *causes;	    /* every (kind, function), largest first: shares sum to 1 */
	size_t ncauses;
	struct hop *hops; /* every hop, most recoverable first */
	size_t nhops;
	__u64 run_ns; /* the devices' run times summed: what recoverable time is a share of */
	struct loss_counts loss; /* losses.h */
	struct handle_stats handles;
	struct table_counts tables; /* threads.h's tables, what they let go of */
	/* Off-CPU intervals whose switch-in the scheduler never reported (GS_F_RESUME_UNSEEN):
	 * not lost, but ended at the thread's next sign of running; counted, not a note. */
	__u64 resume_unseen;
	struct stack_counts stacks;
	struct symbol_counts symbols;
	/* record --archive's files (archived.h), counted as they are used; NULL: none archived. */
	const struct archive_stats *archive;
	/* What the trace lacked, one line each (cut off, corrupt, no CUDA events, ...). */
	const char *notes[16];
	size_t nnotes;
	struct cupti_info cupti;
	double copy_gbps, copy_latency_us; /* the API tier's copy model, 0 GB/s: none */
	struct launch_totals launches;	   /* launches.h */
	struct quota_whatif quota;	   /* a CPU quota that throttled (cgroups.h) */
	struct tier_agreement *agree;	   /* per device with a CUPTI tier */
	size_t nagree;
	struct under_floor under; /* the launching thread between its launches */
	__u64 min_gap_ns;	  /* the floor: analysis_opts.min_gap_ns */
	struct analysis_priv *priv;
};

#endif
