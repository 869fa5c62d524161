/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The result of `gapscope report`'s analysis, kept in memory after it ran so that every output
 * (summary.txt, summary.json, folded stacks, and the renderers: per-gap SVG, speedscope,
 * index.html, Perfetto timeline.json) is written from one structure.
 *
 * The trace is read once, in the order intervals end; a gap is analysed as soon as the trace has
 * gone a margin past its end, and what no open gap can need any more is dropped, so memory
 * follows the live state and the gaps, not the trace's length. Each gap is handed to
 * opts->on_gap as its analysis completes, with everything below; afterwards the analysis keeps
 * of it only what summary.json lists (the chain, not roots[] and stacks[]).
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
 *     losses[]    the recorder's loss counters, and what the reader could not read
 *
 * All strings are owned by the analysis (interned): they live until analysis__free().
 * Times are CLOCK_MONOTONIC ns, as recorded.
 */
#ifndef GAPSCOPE_ANALYSIS_H
#define GAPSCOPE_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#include "gapscope.h"
#include "cgroups.h"
#include "launches.h"
#include "names.h"
#include "unwind.h"

#include "gap.h"

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

struct folded;

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

#define ANALYSIS_LOSS_MAX (GS_LOSS_MAX + 11)

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
	/* Loss counters by name ("ringbuf", ...), the reader's ("corrupt_chunks", ...) last. */
	const char *loss_names[ANALYSIS_LOSS_MAX];
	__u64 losses[ANALYSIS_LOSS_MAX];
	size_t nlosses;
	__u64 lost_events; /* sum of losses */
	struct handle_stats handles;
	/* Processes that ran before their library probes were in place (GS_REC_UNPROBED): how
	 * many, for how long in all, the longest (its process), by why they joined. */
	struct {
		__u64 n, ns, max_ns, by_why[GS_UNPROBED_MAX];
		__u32 max_pid;
	} unprobed;
	/*
	 * The analysis's tables keyed by what the target chose (threads.h): futex words and
	 * threads let go of as the trace went by, and the most held at once. What went before
	 * its time (evicted, over a bound) is among the losses.
	 */
	struct {
		__u64 words_forgotten, words_max, threads_forgotten, threads_max;
	} tables;
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

struct analysis_opts {
	__u64 min_gap_ns;      /* ANALYSIS_MIN_GAP_NS unless the command says */
	unsigned int max_hops; /* blame chain depth, ANALYSIS_MAX_HOPS unless the command says */
	bool no_file_symbols;  /* frames not named from the mapped files (names__new()) */
	const char *debug_dir; /* --debug-dir: debug files by build-id, before /usr/lib/debug */
	bool api_only;	       /* CUPTI's records left unread: the API-inferred tier alone */
	/* Launch records flagged CU_LF_EXTRA left unread: an --all-launches trace read as the
	 * default trace of the same run would be (the check that both give the same gaps). */
	bool decided_only;
	double copy_gbps; /* --copy-rate: gputime__copy_model(); 0 none */
	double copy_latency_us;
	/* Gaps handed to on_gap and counted (gap_ns, causes), but not kept in gaps[]: a live
	 * analysis that runs for days (record --flight) keeps no list that grows with them. */
	bool forget_gaps;
	/* Live: the stream and event handles without work unused this long are let go of
	 * (record --flight: its window); 0: kept up to their bounds (gputime_int.h). */
	__u64 forget_idle_ns;
	/* Stack snapshots unwound a second at most (unwinder__set_budget); 0: all. */
	unsigned int unwind_per_s;
	/* Called once per gap, in completion order (seq), id not yet set; non-zero stops. */
	int (*on_gap)(const struct gap *g, void *ctx);
	void *ctx;
};

/*
 * The floor and the chain depth every command starts from: report's --min-gap, the flight
 * recorder's live analysis (its --trigger-gap is another matter) and diff's reading of a trace.
 */
#define ANALYSIS_MIN_GAP_NS 1000000ull
#define ANALYSIS_MAX_HOPS   8
#define ANALYSIS_OPTS_DEFAULT                                                    \
	{                                                                        \
		.min_gap_ns = ANALYSIS_MIN_GAP_NS, .max_hops = ANALYSIS_MAX_HOPS \
	}

/* Read and analyse the trace at path. NULL with err set when it cannot be read at all. */
struct analysis *analysis__run(const char *path, const struct analysis_opts *opts, char *err,
			       size_t errlen);
void analysis__free(struct analysis *a);

/*
 * The same in steps, for records that are not in a file yet (record --flight: path NULL, the
 * records pushed into analysis__reader() as they are made, see reader.h). analysis__open sets
 * up (from the file at path, or for pushed records); analysis__step takes the next record in
 * time order (0, -ENOMEM, -EIO when on_gap failed); analysis__finish completes every gap left,
 * the devices' totals and the causes' ranking (0, -ENOMEM or -EIO, err set). analysis__run is
 * open, every record of the file, finish.
 */
struct ordered_reader;
struct analysis *analysis__open(const char *path, const struct analysis_opts *opts, char *err,
				size_t errlen);
struct ordered_reader *analysis__reader(struct analysis *a);
int analysis__step(struct analysis *a, const struct gs_hdr *h);
int analysis__finish(struct analysis *a, char *err, size_t errlen);
/* Live: a device's busy time so far (gputime__busy_ns); -ENOENT for a device not seen. */
int analysis__busy_ns(struct analysis *a, __u32 device, __u64 *busy_ns);
/* Live: a device's busy time and idle split so far (API tier: under the floor not known). */
int analysis__split(struct analysis *a, __u32 device, __u64 *busy_ns, struct idle_split *s);
/* One line of what the trace lacked, kept in a->notes (up to 16). */
void analysis__note(struct analysis *a, const char *s);
/*
 * Live: lets go of what naming frames and unwinding stacks have read of files (elfcache.h), and
 * says a file that changed meanwhile; the KiB it freed. Names and caches stay.
 */
unsigned long long analysis__release_pages(struct analysis *a);
/* record --archive's files, for other readers' names (archived.h); NULL: none. */
struct report_archive *analysis__archive(const struct analysis *a);

/* Outputs (summary_txt.c, summary_json.c, folded_out.c). */
struct report_out_opts {
	unsigned int top; /* gaps listed in summary.txt */
};
int summary_txt__write(const struct analysis *a, const struct report_out_opts *o, FILE *out);
int summary_json__write(const struct analysis *a, FILE *out);
/*
 * Folded stacks under the directory fd DFD (the caller's, kept open until folded_out__free):
 * folded_out__gap writes one gap's stacks to .seq-N.folded and appends them to all.folded (an
 * on_gap callback); folded_out__finish names each file for its gap's id, NNNN.folded, and
 * folded_out__free removes an all.folded that folded_out__finish did not complete.
 */
struct folded_out;
struct folded_out *folded_out__new(int dfd);
int folded_out__gap(const struct gap *g, void *folded_out);
int folded_out__finish(struct folded_out *f, const struct analysis *a);
void folded_out__free(struct folded_out *f);

#endif
