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

#include "analysis.h"
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
 * [a->start_ns, a->end_ns], and a->under named (symbols through nm).
 */
int idlesplit__finish(struct idlesplit *s, struct threads *th, struct names *nm,
		      struct strtab *strs, struct analysis *a);

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
 * Whether the headline is a range (the API tier, without CUPTI for the device: busy time that no
 * completion signal backs is 0.1% of the active window or more), and its low end in percent: the
 * busy time less that unconfirmed time. summary.txt, summary.json and the page print the same.
 */
static inline bool idlesplit__busy_range(const struct analysis *a, const struct device_summary *d,
					 double *lo_pct)
{
	__u64 active = d->split.active_end - d->split.active_start;
	__u64 busy = d->busy_ns < active ? d->busy_ns : active;

	for (size_t i = 0; i < a->nagree; i++)
		if (a->agree[i].device == d->id)
			return false; /* CUPTI's kernel times: no range */
	if (d->busy_unknown || 1000.0 * d->unconfirmed_ns < (active ? active : 1))
		return false;
	*lo_pct = active ? 100.0 * (busy > d->unconfirmed_ns ? busy - d->unconfirmed_ns : 0) /
				   active :
			   0.0;
	return true;
}

/*
 * The headline figure as summary.txt prints it before its '%': "43.5-43.7" (a range), "at most
 * 32.7" (a bound, and a device whose busy time is unknown), "32.7". Rounded here once, for
 * summary.txt and for summary.json's active_busy_text, which the page's card shows: the same
 * figure rounded twice (43.74999 to 43.7 in one place, to 43.75 and then 43.8 in another) would
 * disagree. Returns buf.
 */
static inline const char *idlesplit__busy_text(const struct analysis *a,
					       const struct device_summary *d, char *buf,
					       size_t size)
{
	bool cupti = false;
	double lo;

	for (size_t i = 0; i < a->nagree; i++)
		cupti |= a->agree[i].device == d->id;
	if (!cupti && d->busy_unknown)
		snprintf(buf, size, "at most %.1f", idlesplit__busy_pct(d));
	else if (idlesplit__busy_range(a, d, &lo))
		snprintf(buf, size, "%.1f-%.1f", lo, idlesplit__busy_pct(d));
	else
		snprintf(buf, size, "%s%.1f", d->split.under_floor_known ? "" : "at most ",
			 idlesplit__busy_pct(d));
	return buf;
}

/*
 * Whether the launching thread's time between launches is worth showing (summary.txt's lines,
 * gaps/launches.{folded,svg}, the page's card): where there is idle time under the floor, as
 * measured (CUPTI, 0.5% of the run or more), or in a launch loop the API tier cannot see into:
 * a thousand launches or more, 50 or more counted for each one the trace kept (each kept launch
 * follows completion evidence: 50 launches or more a synchronize; zkengine's partitions make 18).
 */
static inline bool idlesplit__shown(const struct analysis *a)
{
	const struct under_floor *u = &a->under;
	__u64 under = 0;
	bool known = false;

	for (size_t d = 0; d < a->ndevices; d++) {
		under += a->devices[d].split.under_floor_ns;
		known |= a->devices[d].split.under_floor_known;
	}
	if (!u->tid || !u->host_ns)
		return false;
	if (known)
		return under * 200 >= a->duration_ns;
	return a->launches.counted && a->launches.total >= 1000 &&
	       a->launches.total >= 50 * a->launches.in_trace;
}

/*
 * The name a root of on-CPU time gets: the leaf, unless it is the vDSO's (clock_gettime), else
 * the kernel's leaf. One place, for the on-CPU roots and the launching thread's hottest function.
 */
const char *idlesplit__hot_name(struct names *nm, struct strtab *strs, const struct stack_view *v);

#endif
