/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The recorded processes' CPU quotas (GS_REC_CGROUP, GS_REC_CPUSTAT; loader/cgroup.h): which
 * cgroup's quota throttled a runnable thread, whether a cgroup was throttling around a time (the
 * evidence where the kernel could not flag the switch-out itself), the CPUs a process may use
 * where fewer than the machine's, and what a throttled cgroup would have needed.
 *
 * The records come in a pass of their own before the time-ordered one (the trace is marked
 * TRACE_F_CGROUP), so a gap blamed early knows the cpu.stat samples after it; a live analysis
 * takes them as they come.
 */
#ifndef GAPSCOPE_CGROUPS_H
#define GAPSCOPE_CGROUPS_H

#include <stdbool.h>
#include <linux/types.h>

#include "gapscope.h"

struct cgroups;
struct strtab;
struct th_off;

struct cgroups *cgroups__new(struct strtab *strs);
void cgroups__free(struct cgroups *c);
/* A GS_REC_CGROUP, GS_REC_CPUSTAT or GS_REC_CLOCK record (others ignored). 0, or -ENOMEM. */
int cgroups__add(struct cgroups *c, const struct gs_hdr *h);
/*
 * The trace's records in a pass of their own (trace__scan_types): the consumer of GS_REC_CGROUP
 * and GS_REC_CPUSTAT, then the pass's end with its error for c (the scan's c[i].err). 0: those
 * met again later are skipped; else -errno, and they are read in order as they come.
 */
int cgroups__take(void *c, const struct gs_hdr *h);
int cgroups__scanned(struct cgroups *c, int err);

/*
 * Whether the runnable interval o of a thread of tgid was throttled by a CPU quota: the kernel
 * said so at its switch-out, or where it could not tell, its CPU went idle while one of the
 * process's cgroups was throttling.
 */
bool cgroups__off_throttled(const struct cgroups *c, __u32 tgid, const struct th_off *o);
/* "cgroup PATH (cpu.max Q ms per P ms)": the quota that bit tgid at ts; NULL: none recorded. */
const char *cgroups__throttler(struct cgroups *c, __u32 tgid, __u64 ts);
/*
 * "affinity CPUS of N CPUs", or "cpuset ..." where its process's cpuset is what narrowed it: a
 * thread of tgid allowed nr CPUs (mask: the first 64), where the machine has more; else NULL.
 */
const char *cgroups__cpus(struct cgroups *c, __u32 tgid, __u32 nr, __u64 mask);

/* Counts a runnable interval as time the process stood throttled (for cgroups__whatif). */
int cgroups__note_off(struct cgroups *c, __u32 tgid, __u32 tid, const struct th_off *o);

/*
 * What a throttled cgroup would have needed: its use at the rate its threads used CPU while not
 * throttled, over the whole time (need_cpus in cgroups.c).
 */
struct quota_whatif {
	const char *cgroup; /* cgroups__throttler's name; NULL: no quota throttled */
	double has_cpus;    /* quota / period */
	double peak_cpus;   /* the most, over one sample interval (about a second) */
	double mean_cpus;   /* over the recording */
	bool use_known;	    /* false: use taken as the quota in each throttled period (a floor) */
	__u64 throttled_ns; /* runnable while throttled, the process's threads summed */
	__u64 nr_throttled, nr_periods;
};

void cgroups__whatif(struct cgroups *c, struct quota_whatif *w);

#endif
