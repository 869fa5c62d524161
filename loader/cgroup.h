/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The target's CPU controller cgroup, for the report to tell a quota's throttling from
 * preemption: its path and quota (GS_REC_CGROUP, each level up that has one; the v1 cpu
 * controller or cgroup v2's cpu.max, whichever holds the process) and each level's cpu.stat
 * (GS_REC_CPUSTAT), sampled every second and at the end. The process may move (a launched
 * target that puts itself into a cgroup before its exec): each sample reads its cgroup again and
 * writes the levels anew when they changed. The process may be gone (at the end, or long before
 * where --cgroup outlives its first member): the levels last read are sampled, and its pid,
 * another process's once reused, is not read again.
 */
#ifndef GAPSCOPE_CGROUP_H
#define GAPSCOPE_CGROUP_H

#include <limits.h>
#include <sys/types.h>
#include <linux/types.h>

struct trace_out;

#define CGROUP_LEVELS 8

struct cgroup_level {
	char dir[PATH_MAX];  /* where its files are */
	char acct[PATH_MAX]; /* v1: its cpuacct cgroup's directory, "" none */
	__u32 id;
	int version; /* GS_CGROUP_V* */
};

struct cgroup_watch {
	pid_t pid;		  /* in the recorder's pid namespace */
	unsigned long long start; /* its start time: the pid is its while that holds */
	bool gone;		  /* it has exited: its levels are the last read */
	__u32 gpid;		  /* in the trace */
	char sig[PATH_MAX + 128]; /* what the levels were written for: path, quotas, CPUs */
	struct cgroup_level lv[CGROUP_LEVELS];
	int n;
	__u32 next_id;
};

void cgroup__watch(struct cgroup_watch *w, pid_t pid, __u32 gpid);
/* Reads the process's cgroup (written when it changed) and every level's cpu.stat. */
void cgroup__sample(struct cgroup_watch *w, struct trace_out *o);

#endif
