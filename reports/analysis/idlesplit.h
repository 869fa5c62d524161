/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Idle time no single gap explains. Per device, the idle time split into setup, gaps, under
 * the floor and tail (struct idle_split); and for the windows under the floor, whose edges are
 * too many and too short to blame one by one, their cause in aggregate (struct under_floor): the
 * thread that launched most, watched between its first launch in the trace and its latest,
 * its synchronizes (waits for the GPU's work) and the gaps (blamed on their own) left out. On
 * CPU or runnable there it is the host that launches slower than the GPU runs (launch-bound);
 * in other CUDA calls (a synchronous copy) it is the kind cuda; off CPU its waits are summed by
 * the kind of each.
 *
 * The launching thread's samples and off-CPU intervals are taken before the timelines forget
 * them (idlesplit__harvest at every prune, with the prune's horizon), so memory stays the
 * timelines' own.
 */
#ifndef GAPSCOPE_IDLESPLIT_H
#define GAPSCOPE_IDLESPLIT_H

#include <linux/types.h>
#include <stdbool.h>
#include <stdio.h>

#include "gap.h"
#include "strtab.h"
#include "syscalls.h"
#include "threads.h"

struct idlesplit;
struct names;

struct idlesplit *idlesplit__new(void);
/* The machine whose system call numbers the trace holds (syscalls.h); x86-64 until set. */
void idlesplit__set_arch(struct idlesplit *s, enum gs_arch arch);
void idlesplit__free(struct idlesplit *s);

/* A launch (an entry-only cuLaunch* or cuGraphLaunch record) by tid at ts. 0 or -ENOMEM. */
int idlesplit__launch(struct idlesplit *s, __u32 tid, __u64 ts);

/*
 * A CUDA call that returned (start, its duration): the launching thread's synchronizes are
 * counted, and those that returned at once (under IDLESPLIT_SYNC_QUICK_NS): the GPU had run
 * everything before the host asked, the API tier's evidence that its queue ran dry.
 */
#define IDLESPLIT_SYNC_QUICK_NS 20000ull
int idlesplit__call(struct idlesplit *s, __u32 tid, __u64 start, const char *fn, __u64 dur_ns);

/* A GS_REC_LAUNCH_IVALS record: each thread's histogram of the time between its launches, counted
 * in BPF (cuda.h), the latest kept. 0 or -ENOMEM. */
int idlesplit__ivals(struct idlesplit *s, const struct gs_hdr *h);

/* A gap of min_gap or more, once blamed: its time is left out of the launching thread's. */
int idlesplit__gap(struct idlesplit *s, __u64 start, __u64 end);

/* Takes what the launching threads did up to horizon (and up to their latest launch). */
int idlesplit__harvest(struct idlesplit *s, struct threads *th, __u64 horizon);

/*
 * At the analysis's end (after the devices' busy time is known): each device's split over
 * [t0, t1], and the launching thread's time between launches in *u (named through nm).
 */
int idlesplit__finish(struct idlesplit *s, struct threads *th, struct names *nm,
		      struct strtab *strs, struct device_summary *devs, size_t ndevs, __u64 t0,
		      __u64 t1, struct under_floor *u);

/*
 * The headline busy figure: the device's busy time over its active window (first to last GPU
 * work), in percent; 0 for a device never busy. An upper bound where !under_floor_known.
 */
static inline double idlesplit__busy_pct(const struct device_summary *d)
{
	__u64 active = d->split.active_end - d->split.active_start;

	if (!active)
		return 0.0;
	return 100.0 * (d->busy_ns < active ? d->busy_ns : active) / active;
}

/*
 * The name a root of on-CPU time gets: the leaf, unless it is the vDSO's (clock_gettime), else
 * the kernel's leaf. One place, for the on-CPU roots and the launching thread's hottest function.
 */
const char *idlesplit__hot_name(struct names *nm, struct strtab *strs, const struct stack_view *v);

#endif
