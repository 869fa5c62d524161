/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The blame walk's own state and steps, shared by reports/analysis/blame.c (waits, calls, CPU time) and
 * reports/analysis/blame_hops.c (the hops a chain makes through an async task or to a thread's creator).
 * Not an interface: blame.h is.
 */
#ifndef GAPSCOPE_BLAME_INT_H
#define GAPSCOPE_BLAME_INT_H

#include "blame.h"
#include "kinds.h"
#include "tasks.h"

#define MAX_HOPS   16
#define MAX_FRAMES 48 /* per thread on a folded stack */
#define MAX_FOLDED 512

struct path_link {
	struct chain_link l;
	const char *frames_folded[MAX_FRAMES]; /* root first */
	__u32 nfolded;
};

struct blame {
	struct threads *th;
	struct names *nm;
	struct strtab *strs;
	unsigned int max_hops;
	struct path_link path[MAX_HOPS + 1];
	__u32 depth;
	struct vec roots;	/* struct gap_root */
	struct vec stacks;	/* struct gap_stack */
	__u64 outside_ns;	/* preempted by another process */
	__u64 woken_outside_ns; /* waits whose waker was not recorded */
	const struct thread **all;
	size_t nall;
	struct tasks *tasks; /* NULL: no task probes, chains follow threads only */
	__u32 task_hops;     /* this gap's, up to BLAME_MAX_TASK_HOPS */
	__u64 task_hops_cut; /* every gap's hops not taken for that bound */
	enum gs_arch arch;   /* the trace's machine: its system call numbers */
	/* The next root's breakdown (blame__root_cpu), taken and cleared by the root. */
	const char *root_leaf, *root_line;
	struct fault_span root_span; /* a fault root's page, n 0: none */
	struct cgroups *cg;	     /* CPU quotas, NULL: none */
	__u32 keyed; /* distinct names keyed by a pid or an address (BLAME_KEYED_MAX) */
	__u64 keyed_evicted;
	/* The closer's timeline in pieces (gap.h's struct gap_seg), and the roots found under
	 * the piece being explained (seg: its index + 1, 0: none open). */
	struct vec segs, seg_parts;
	__u32 seg;
	bool seg_top; /* the next explain at depth 0 is the closer's own: cut it in pieces */
};

/* A name keyed by a pid or an address: fallback once BLAME_KEYED_MAX are made (counted). */
const char *blame__keyed(struct blame *b, const char *fallback, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The walk's steps (blame.c): a link pushed on the path (the caller pops it: b->depth--), a
 * root at the end of the path as it stands, what th did over [a, z), whether tid is on the
 * path already. */
int blame__push_link(struct blame *b, const struct thread *th, enum thread_state st,
		     enum blame_kind kind, const char *lock, const char *fn, const char *detail,
		     __u32 stack);
int blame__root(struct blame *b, const struct thread *th, enum thread_state st,
		enum blame_kind kind, const char *fn, const char *detail, __u32 stack, __u64 ns,
		const char *const *extra, __u32 nextra);
int blame__explain(struct blame *b, const struct thread *th, __u64 a, __u64 z);
bool blame__on_path(const struct blame *b, __u32 tid);
/* An on-CPU root named by its actionable frame (actionable.h), its leaf and line kept. */
struct actionable;
int blame__root_cpu(struct blame *b, const struct thread *th, const struct actionable *act,
		    const char *detail, __u32 stack, __u64 ns, const char *const *extra,
		    __u32 nextra);
/* On-CPU time [s, e) of th that no sample fell in, as a root (blame_oncpu.c). */
int blame__unsampled(struct blame *b, const struct thread *th, __u64 s, __u64 e);

/* Runnable, not running, over [s, e) of o, as a root (blame_sched.c). */
struct th_off;
int blame__runnable(struct blame *b, const struct thread *th, const struct th_off *o, __u64 s,
		    __u64 e);

/* The hops (blame_hops.c): through a task (tasks.h's pieces, latest first) to z; to th's
 * creator for [a, born). */
int blame__task_hop(struct blame *b, const struct thread *th, const struct task_seg *seg, __u32 n,
		    __u64 z);
int blame__before_birth(struct blame *b, const struct thread *th, __u64 a, __u64 born);

#endif
