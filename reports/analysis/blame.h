/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Blame chains: for a gap, walk what its closer did inside it (threads.h timelines); for blocked
 * time follow the lock's owner or the waker, and what that thread did meanwhile, recursively,
 * down to root causes. Every instant of the closer's window ends at exactly one root, so the
 * roots of a gap add up to its duration.
 */
#ifndef GAPSCOPE_BLAME_H
#define GAPSCOPE_BLAME_H

#include "gap.h"
#include "names.h"
#include "strtab.h"
#include "syscalls.h"
#include "threads.h"

struct blame;

/* The machine whose system call numbers the trace holds (syscalls.h); x86-64 until set. */
void blame__set_arch(struct blame *b, enum gs_arch arch);
struct blame *blame__new(struct threads *th, struct names *nm, struct strtab *strs,
			 unsigned int max_hops);
void blame__free(struct blame *b);
/* Chains follow async tasks across threads (reports/analysis/tasks.h); NULL: threads only. */
struct tasks;
void blame__set_tasks(struct blame *b, struct tasks *t);
/* The CPU quotas (cgroups.h) that tell throttling from preemption; NULL: none. */
void blame__set_cgroups(struct blame *b, struct cgroups *c);

/*
 * Hops through async tasks that one gap's walk takes: a task's earlier polls are followed back one
 * by one at one depth of the chain (blame_hops.c), so a busy task's thousand polls would recurse a
 * thousand deep. Past the bound, the polling thread's time is its own; the hops not taken are
 * counted over all gaps.
 */
#define BLAME_MAX_TASK_HOPS 64
__u64 blame__task_hops_cut(const struct blame *b);

/* Fills g->roots, g->chain, g->stacks (allocated; analysis__free frees them). 0 or -ENOMEM. */
int blame__gap(struct blame *b, struct gap *g);

/*
 * Names the walk makes of what the target chose, another process's pid ("python3 (pid 4242)")
 * or a lock's address ("0x7f0a2c001040"), are interned, and interned strings live as long as
 * the analysis: a live one that runs for days among short-lived processes would grow with
 * them. At most BLAME_KEYED_MAX distinct ones are made; past it the name leaves the pid or
 * address out, and is counted here.
 */
#define BLAME_KEYED_MAX 4096
__u64 blame__names_evicted(const struct blame *b);

#endif
