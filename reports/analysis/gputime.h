/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The GPU timeline per device, API-inferred tier: work is outstanding on a stream from a launch
 * (cuLaunchKernel*, cuGraphLaunch) until completion evidence covers it: a synchronize that
 * returns (stream, event, context), a query that returns success, a synchronous copy (for the
 * streams it waits on: the NULL stream and blocking streams). Launches into a stream being
 * captured into a graph do not run. A device is busy while any of its streams has outstanding
 * work; its idle windows are reported with the call that established each edge.
 *
 * Calls are fed in the order they end (the ordered reader): an entry-only call (a launch, an
 * event record) at its start, a call with a return probe at its return, whose evidence covers the
 * work queued before the call began. Memory: per stream, event and device, not per call.
 */
#ifndef GAPSCOPE_GPUTIME_H
#define GAPSCOPE_GPUTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "cuda.h"
#include "gap.h"
#include "strtab.h"

struct gputime;

/* An idle window between two busy intervals of a device, closed by a submission. */
struct gpu_idle {
	__u32 device;
	__u64 start, end;
	__u64 start_earliest;  /* the evidence's call slept until woken then: idle from there at
				 * the earliest (== start when not known) */
	const char *start_how; /* "cuStreamSynchronize returned in gpu-worker-0" */
	const char *end_how;   /* "cuLaunchKernel by gpu-worker-1" */
	__u32 closer_tid;
};

/*
 * Stream and event handles are the target's to choose, and the probes record a call before the
 * driver checks its handle: a program can name millions. They are kept in hash tables keyed as
 * the BPF side keys its launch counts (the process and the handle; a NULL stream by its
 * context), bounded per process and in all. A new handle past a bound takes the place of the
 * least recently used stream without work (an event: the least recently used), which is let go
 * of; where every stream has work outstanding, the call is refused. Both are counted (struct
 * handle_stats). NULL streams, a few per context, count only against the bound in all.
 */
#define STREAMS_PER_PROC 4096
#define STREAMS_MAX	 65536
#define EVENTS_PER_PROC	 4096
#define EVENTS_MAX	 65536

struct gputime *gputime__new(struct strtab *strs, __u64 min_gap_ns);
/*
 * Model host<->device async copies (cuMemcpyHtoDAsync*, cuMemcpyDtoHAsync*) as taking
 * latency_us + bytes / gbytes_per_s on their stream: a kernel launched behind copies queued on
 * an idle stream starts when they are done, and the copies queued after a stream's last kernel
 * move its end that much before the evidence that saw them done. Where the copies' real rate
 * is measured (a bandwidth test on the machine), this takes the time copies fill out of the
 * busy intervals. 0 GB/s (the default): copies are not modelled.
 */
void gputime__copy_model(struct gputime *g, double gbytes_per_s, double latency_us);
void gputime__free(struct gputime *g);

/*
 * fn: the probed symbol's name; comm: the calling thread's name; woken: for a call that slept
 * (a blocking synchronize), when its last sleep was woken, else 0. The evidence holds from the
 * return; the wakeup bounds how much earlier the work may have completed (the return waits for
 * a CPU on a busy machine; a driver may also wake its waiters before the last operation is
 * done, as simcuda does at every operation). 0 or -ENOMEM.
 */
int gputime__add(struct gputime *g, const struct cu_event *e, const char *fn, const char *comm,
		 __u64 woken);

/*
 * Idle windows of at least min_gap_ns found since the last call (malloc'ed, caller frees). A
 * window is handed out once the calls fed have passed its end (a launch on another stream may
 * still end it earlier until then), or after gputime__flush() at the trace's end.
 */
/*
 * A thread's off-CPU interval, switched out at start, in at end; for a blocked one, woken at
 * wake (0 unknown) by waker_tid, and whether that wakeup came from an interrupt (irq). A thread
 * woken from an interrupt starts a wake chain; a thread it woke within GPUTIME_HOP_NS of running
 * carries it on, up to GPUTIME_CHAIN_NS from the interrupt. A thread that made CUDA calls, woken
 * through such a chain, is completion evidence for the work its process queued before it began
 * to wait: the driver passing the GPU's interrupt on to a waiter, where no call asks for it.
 * 0 or -ENOMEM.
 */
#define GPUTIME_HOP_NS	 1000000ull
#define GPUTIME_CHAIN_NS 5000000ull
struct gwake {
	__u64 start, end, wake;
	__u32 tid, tgid, waker_tid, waker_tgid;
	bool blocked, irq;
	const char *comm;
};
int gputime__offcpu(struct gputime *g, const struct gwake *w);

/*
 * A host function (cuLaunchHostFunc's, probed once seen queued) called at t with argument arg
 * on thread tid: the work queued on its stream before it was done by then.
 */
int gputime__host_fn(struct gputime *g, __u32 tgid, __u32 tid, __u64 arg, __u64 t,
		     const char *comm);

void gputime__flush(struct gputime *g);

/* A live analysis lets go of the stream and event handles of process tgid, gone at t: the work
 * it queued is done then. */
void gputime__forget_proc(struct gputime *g, __u32 tgid, __u64 t);
/* A live analysis lets go of the streams without work and the events unused for window before
 * now (a non-blocking stream only by the bounds, or with its process). */
void gputime__forget_idle(struct gputime *g, __u64 now, __u64 window);
/* The handles kept and let go of, and the work of finding them (analysis.h). */
void gputime__handles(const struct gputime *g, struct handle_stats *hs);
struct gpu_idle *gputime__take_idle(struct gputime *g, size_t *n);

/*
 * The thread of the latest launch on the device at or before t, among its last GPUTIME_LAUNCHES
 * launches; 0 if none. For gaps another tier found (the closer of a CUPTI gap).
 */
#define GPUTIME_LAUNCHES 64
__u32 gputime__launcher(const struct gputime *g, __u32 device, __u64 t);

/* The earliest start of an idle window still open (a device idle now), UINT64_MAX if none. */
__u64 gputime__idle_since(const struct gputime *g);

/*
 * Per device its busy intervals clipped to [t0, t1] (idle windows shorter than min_gap_ns are
 * part of them). The idle time before a device's first launch and after its last evidence is
 * not a gap. The array is malloc'ed, the caller frees it.
 */
int gputime__finish(struct gputime *g, __u64 t0, __u64 t1, struct device_summary **devs,
		    size_t *ndevs);

/*
 * A live analysis (record --flight): the device's busy time so far, up to now. The busy
 * intervals before the latest are summed and let go, so that the list does not grow with the
 * run (gputime__finish then has only the latest, and their sum in busy_ns). 0, or -ENOENT for
 * a device not seen.
 */
int gputime__busy_ns(struct gputime *g, __u32 device, __u64 now, __u64 *busy_ns);

/* A live analysis: the device's first busy time and its last (now while busy); -ENOENT for a
 * device never busy. */
int gputime__active(const struct gputime *g, __u32 device, __u64 now, __u64 *start, __u64 *end);

#endif
