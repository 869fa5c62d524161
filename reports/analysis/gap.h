/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The model of the report: a gap (a window the GPU was idle), the chain of links from the thread
 * that ended it to its root cause, the roots and stacks its walk found, and the causes summed
 * over gaps. The analysis (analysis.h) makes them; every output (reports/render/) reads them.
 * Strings are the analysis' (interned); the arrays are the gap's own, freed by gap__free_*.
 */
#ifndef GAPSCOPE_GAP_H
#define GAPSCOPE_GAP_H

#include <stdio.h>
#include <linux/types.h>

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
};

/* What a root's time was in, below the function that names it (reports/analysis/actionable.h). */
struct root_part {
	const char *leaf; /* the innermost frame's function, or "LIB (stripped)"; NULL unknown */
	const char *line; /* a Python function's line, "feeder.py:12"; NULL none */
	__u64 ns;
};

/* A root cause inside one gap, and the path to it. */
struct gap_root {
	struct chain_link *links; /* links[0] = the closer, links[n - 1] = the root */
	__u32 nlinks;
	__u64 ns;
	struct root_part *parts; /* on-CPU roots: by leaf and line */
	__u32 nparts, capparts;
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
	struct gap_stack *stacks; /* for gaps/NNNN.folded; NULL after on_gap */
	__u32 nstacks;
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
 * A span of time as summary.txt writes every one (the chain's root's among them): "12.5 s" from
 * 10 s, "208 ms" from 1 ms, "0.42 ms" under that.
 */
void gap__print_ms(FILE *out, __u64 ns);

/* What summary.json does not list: the walk's roots and the folded stacks (after on_gap). */
void gap__free_walk(struct gap *g);
/* Everything a gap owns: the walk's parts, its chain and its causes by kind. */
void gap__free_parts(struct gap *g);

#endif
