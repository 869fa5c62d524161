/* SPDX-License-Identifier: GPL-2.0 */
/*
 * timeline.json: the trace as Chrome trace events (the JSON object form), for the Perfetto UI
 * and chrome://tracing.
 *
 *   process "GPU", a thread per device   busy intervals ("kernels") and the gaps, each named by
 *                                         its chain ("gap 3: lock tracker_lock ← malloc_trim")
 *                                         with its numbers, tier, cause and edges as args
 *   each target thread (pid = tgid)       off-CPU intervals (blocked, with the reason from the
 *                                         futex wait or the system call; preempted), futex waits
 *                                         (lock or cond, named), CUDA calls (launches with their
 *                                         kernel's name), malloc_trim and --probe functions;
 *                                         on-CPU time is what lies between
 *   flows                                 an arrow for every link of every gap's chain that
 *                                         goes on to another thread: from a short "wakes T"
 *                                         slice on the waker at the wakeup ("bind_id",
 *                                         "flow_out") to a "woken by W" slice ("flow_in") on
 *                                         the woken, from the wakeup to when it ran again; for
 *                                         a lock that changed hands while it waited, from the
 *                                         holder when the wait began, or else when the holder
 *                                         released it meanwhile
 *
 * Times are microseconds from the trace's start with three decimals (nanoseconds exact). Slices
 * on one track nest or are disjoint, as the format requires.
 *
 * The GPU tracks and the chains come from the finished analysis; the threads' intervals from a
 * second pass over the trace with the ordered reader, written as they end, so memory stays
 * bounded. So does the file: a thread interval outside every gap is written only when it lasts
 * at least min_ns, and at most max_slices of them; whatever overlaps a gap is always written.
 * The "metadata" object at the end says what was left out.
 */
#ifndef GAPSCOPE_PERFETTO_H
#define GAPSCOPE_PERFETTO_H

#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#include "gap.h"

/* Defaults: every interval of a trace of up to TIMELINE_ALL_EVENTS events, else >= 1 ms. */
#define TIMELINE_ALL_EVENTS 400000ull
#define TIMELINE_MIN_NS	    1000000ull
#define TIMELINE_MAX_SLICES 500000

struct timeline_opts {
	__u64 min_ns;	       /* 0: by the trace's size, as above */
	size_t max_slices;     /* thread slices outside every gap; 0: TIMELINE_MAX_SLICES */
	bool no_file_symbols;  /* names__new(): no mapped file is opened */
	const char *debug_dir; /* names__new(): --debug-dir */
};

struct timeline_stats {
	__u64 min_ns;	       /* the threshold used */
	size_t slices;	       /* thread slices written (gaps' and flows' not counted) */
	size_t short_left_out; /* outside every gap and shorter than min_ns */
	size_t capped;	       /* outside every gap, past max_slices */
	size_t threads;
	size_t links;		/* chain links that go on to another thread */
	size_t flows;		/* arrows written */
	size_t links_unmatched; /* links for which no wakeup of the woken by the waker was found */
};

/*
 * Writes timeline.json of the trace at path, which a analysed. st may be NULL. Returns 0, or -1
 * with err set (the trace cannot be read, out of memory, a write error).
 */
int timeline__write(FILE *out, const char *path, const struct analysis *a,
		    const struct timeline_opts *o, struct timeline_stats *st, char *err,
		    size_t errlen);

#endif
