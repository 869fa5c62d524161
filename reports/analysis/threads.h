/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-thread timelines: for every thread of the target, what it did over time, as the blame walk
 * asks for it (threads__window):
 *   off-CPU intervals: preempted (runnable, not running) or blocked, with the system call it
 *     blocked in and the thread that woke it;
 *   futex waits: lock (a pthread mutex with an owner, or a PI lock) or condition wait; a timed
 *     wait that timed out and waited again on the same word is merged into one wait, whose
 *     waker is the one that ended the last;
 *   calls: CUDA calls that returned (their interval), malloc_trim and --probe functions;
 *   CPU samples with their stacks.
 * Fed in the order intervals end (the ordered reader, reader.h), each list stays sorted by start;
 * threads__prune drops what ended before the oldest moment an analysis may still look at, so
 * memory follows the live state, not the trace's length.
 */
#ifndef GAPSCOPE_THREADS_H
#define GAPSCOPE_THREADS_H

#include <stdbool.h>
#include <linux/types.h>

#include "gapscope.h"
#include "stacktab.h"
#include "strtab.h"

struct th_off {
	__u64 start, end;
	__u32 waker;   /* tid, 0: none seen or not a thread of a target */
	__s32 syscall; /* offcpu.h: OFFCPU_NO_SYSCALL, OFFCPU_SYSCALL_UNKNOWN */
	__u32 cpu;     /* where it ran before */
	__u32 on_cpu;  /* where it resumed */
	__u64 wake;    /* blocked: when it was woken (runnable from then on), 0 unknown */
	__u8 blocked;
	__u8 in_futex;
	__u8 uninterruptible; /* blocked in TASK_UNINTERRUPTIBLE (killable or not): I/O, a fault */
	__u16 fd_flags;	      /* offcpu.h: OFFCPU_FD_* of the wait's file */
	__u32 waker_tgid;
	const char *waker_comm;
	__u32 stack; /* stacktab: its kernel stack, and user stack where a snapshot gave one */
	/*
	 * Runnable, from a version 6 trace (next_known): what its CPU switched to (next_tid 0:
	 * the idle task), and whether a CPU quota had throttled its hierarchy (throttle_known:
	 * the kernel could tell).
	 */
	__u8 next_known;
	__u8 throttled;
	__u8 throttle_known;
	__u32 next_tid;
	__u32 next_tgid;
	const char *next_comm;
	__u32 nr_cpus; /* the CPUs it was allowed: how many, the first 64 */
	__u64 cpus;
	__u32 last_tid; /* what ran longest on its CPU meanwhile (offcpu.h), 0: not seen */
	__u32 last_tgid;
	const char *last_comm;
	/* Blocked, from a version 7 trace: the file fault it slept after (fault_ino 0: none). */
	__u64 fault_ino;
	__u64 fault_index; /* the page's index in the file */
};

struct th_futex {
	__u64 start, end;
	__u64 uaddr;
	__u32 owner; /* a thread of the same process holding the lock, else 0 */
	__u32 waker; /* from the last off-CPU interval inside the wait */
	__u8 lock;
	__u8 timed_out;
	const char *waker_comm;
	__u32 stack; /* stacktab: the waiter's user stack */
};

enum th_call_kind { TC_CUDA, TC_PROBE };

struct th_call {
	__u64 start, end;
	const char *name; /* "cuStreamSynchronize", "malloc_trim" */
	__u8 kind;	  /* enum th_call_kind */
	__u32 stack;	  /* stacktab: at return */
};

struct th_sample {
	__u64 ts;
	__u32 stack; /* stacktab */
	__u32 cpu;
};

struct thread {
	__u32 tid, tgid;
	const char *comm;
	__u64 exit_ns;	    /* 0: did not exit while recorded */
	__u64 born_ns;	    /* 0: existed before it was first seen */
	__u32 parent;	    /* the thread that created it (born_ns set) */
	struct vec off;	    /* struct th_off */
	struct vec futex;   /* struct th_futex */
	struct vec calls;   /* struct th_call */
	struct vec samples; /* struct th_sample */
	/* threads__prune's own: the earliest end a prune could drop, its place in the heap of
	 * threads with timelines (index + 1, 0: nothing held). */
	__u64 prune_at;
	size_t heap_i;
	bool keep;   /* named by tid from outside the timelines (a launcher): kept once exited */
	bool device; /* a driver stand-in's thread that stands for a device (feed.c) */
};

struct threads;

struct threads *threads__new(struct strtab *strs, struct stacktab *stacks);
struct stacktab *threads__stacks(const struct threads *t);
void threads__free(struct threads *t);

/* The thread, created (named "tid N") on first sight. NULL on ENOMEM. */
struct thread *threads__get(struct threads *t, __u32 tid, __u32 tgid);
struct thread *threads__find(const struct threads *t, __u32 tid);
/* Every thread, in no particular order: an array the caller frees. */
const struct thread **threads__all(const struct threads *t, size_t *n);
/*
 * Thread names (a thread's own, a waker's) are interned, and interned strings live as long as
 * the analysis: a program that renames its threads without end would grow it without end (4
 * threads renaming themselves 150,000 times a second took a report to 695 MB in 20 s). At most
 * THREADS_NAMES_MAX distinct names are kept; past that a name not seen before is not taken (the
 * thread keeps its last name, a waker is "?"), and counted (threads__names_dropped).
 */
#define THREADS_NAMES_MAX 16384
void threads__set_comm(struct threads *t, __u32 tid, __u32 tgid, const char *comm, size_t len);
__u64 threads__names_dropped(const struct threads *t);

/* Feeding, in the order the intervals end. */
int threads__add_offcpu(struct threads *t, const struct gs_hdr *h, __u32 trace_version);
int threads__add_futex(struct threads *t, const struct gs_hdr *h);
int threads__add_call(struct threads *t, const struct gs_hdr *h, enum th_call_kind kind,
		      const char *name, __u64 dur_ns);
int threads__add_sample(struct threads *t, const struct gs_hdr *h);

/*
 * A thread's exit: it is let go of once the horizon has passed its exit and nothing of its
 * timelines is left (threads__prune), unless kept. 0 or -ENOMEM.
 */
int threads__exit(struct threads *t, __u32 tid, __u32 tgid, __u64 ts);

/*
 * Forget every interval and sample that ended before horizon, the waits on futex words that
 * ended before it (a word with none left is let go of), and the threads that exited before it.
 * Its work follows what it drops: the threads holding something that ended before horizon are
 * found in a heap, the waits and exits in the order they came.
 */
void threads__prune(struct threads *t, __u64 horizon);

/*
 * Everything above is keyed by what the target chooses: its tids (up to pid_max, 4,194,304 under
 * systemd) and its futex words (any address, a new one per mutex in fresh memory: a program
 * ping-ponging through new words took the flight recorder to 2.2 GB in 60 s). What the prune
 * leaves is bounded too: at most THREADS_WAKES_MAX waits on futex words and THREADS_EXITED_MAX
 * exited threads are held; past either the oldest are let go of before the horizon passes them
 * (evicted: a lock hand-off or an exited thread's part in a chain lost), and counted.
 */
#define THREADS_WAKES_MAX  (1u << 17)
#define THREADS_EXITED_MAX 8192u
struct threads_counts {
	__u64 words_forgotten;	 /* futex words let go of once their waits were pruned */
	__u64 words_max;	 /* the most held at once */
	__u64 wakes_evicted;	 /* waits let go of early, over THREADS_WAKES_MAX */
	__u64 threads_forgotten; /* threads let go of after their exit */
	__u64 threads_max;	 /* the most held at once */
	__u64 threads_evicted;	 /* exited threads let go of early, over THREADS_EXITED_MAX */
};
const struct threads_counts *threads__counts(const struct threads *t);

/*
 * Lock hand-offs: the earliest end of a futex wait on uaddr (of process tgid, by a thread other
 * than except) within (after, before) that woken_by ended; its waiter is the lock's next owner.
 * NULL if none.
 */
struct th_wake {
	__u64 uaddr;
	__u64 end;
	__u32 tid, tgid;
	__u32 waker;
};
const struct th_wake *threads__next_wake(struct threads *t, __u64 uaddr, __u32 tgid, __u32 except,
					 __u32 woken_by, __u64 after, __u64 before);

/* First index in a sorted list whose interval may overlap [a, b) (end > a). */
size_t thread__first_off(const struct thread *th, __u64 a);
size_t thread__first_futex(const struct thread *th, __u64 a);
size_t thread__first_sample(const struct thread *th, __u64 a);
/* The number of calls that started at or before t (calls are sorted by start). */
size_t thread__calls_upto(const struct thread *th, __u64 t);
/* The call covering t (the innermost: latest start), NULL if none; probes before CUDA calls. */
const struct th_call *thread__call_at(const struct thread *th, __u64 t);
/* The call that ended last at or before t (of the few started last), NULL if none. */
const struct th_call *thread__last_call(const struct thread *th, __u64 t);
/* The futex wait covering t, NULL if none. */
const struct th_futex *thread__futex_at(const struct thread *th, __u64 t);

#endif
