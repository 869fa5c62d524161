/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Async tasks across threads: the polls and wakes the recorder's task probes saw (an async
 * runtime's poll and wake functions, lib/runtimes.h), and the hop a blame chain makes when
 * the thread it explains got where it is by polling a task. Such a thread was not waiting for
 * that task's cause itself (between polls a task's worker runs other tasks or parks): the
 * time before the poll belongs to the task, which was
 *   - being polled, on the thread that polled it last (explained as that thread's time),
 *   - pending, until a thread woke it: the waker's own time explains the wait, and the waker's
 *     stack at the wake names what it released (an async lock: "async by FUNCTION"),
 *   - runnable, until a worker polled it: the worker's time explains the delay.
 * A task is its runtime's task pointer (the header tokio's vtable functions take).
 */
#ifndef GAPSCOPE_TASKS_H
#define GAPSCOPE_TASKS_H

#include <stdbool.h>
#include <linux/types.h>

#include "gap.h"
#include "names.h"
#include "stacktab.h"
#include "strtab.h"

struct tasks;

struct tasks *tasks__new(struct strtab *strs, struct stacktab *stacks);
void tasks__free(struct tasks *t);

/* A task probe's event (enum rt_fn_kind): a poll's interval, or a wake. -ENOMEM only. */
int tasks__add(struct tasks *t, const struct gs_hdr *h, __u32 rt_kind, __u64 task, __u64 dur_ns);
/* Polls seen so far. */
__u64 tasks__polls(const struct tasks *t);
/*
 * Forgets the polls, wakes and lock events that ended before horizon (no open gap reaches back
 * to them): the tables follow the window, not the trace's length. A task last polled before it
 * has no earlier poll to hop to: its time before the next one is pending from the window's start.
 */
void tasks__prune(struct tasks *t, __u64 horizon);
/*
 * A note for the report where the target's threads are named as an async runtime's workers
 * (lib/runtimes.h) but no task was seen polled: its symbols are absent (a stripped binary),
 * and chains followed threads only.
 */
struct threads;
void tasks__note(const struct tasks *t, struct threads *th, const struct notes *nt);

/*
 * The innermost poll by thread tid that covers [s, e] and holds no other poll (one task's
 * work, not a worker's loop: tokio's worker threads live in a poll around all of theirs): its
 * bounds. A stretch of on-CPU time too short to hold a sample belongs to that work.
 */
bool tasks__poll_around(const struct tasks *t, __u32 tid, __u64 s, __u64 e, __u64 *ps, __u64 *pe);

enum task_seg_kind {
	TSEG_THREAD,  /* [start, end) is the thread tid's own time (the task polled there) */
	TSEG_PENDING, /* the task waited, woken at end by tid: tid's time explains it */
	TSEG_QUEUED,  /* the task was runnable; tid, which polled it at end, explains the delay */
};

struct task_seg {
	enum task_seg_kind kind;
	__u64 start, end;
	__u32 tid;
	__u64 task;
	enum blame_kind wait; /* TSEG_PENDING: BK_LOCK for an async lock, else BK_COND */
	const char *lock;     /* TSEG_PENDING: what the waker released; TSEG_QUEUED: the queue */
	const char *holder;   /* TSEG_PENDING: the waker's own function, where its stack shows it */
};

#define TASK_MAX_SEGS 4

/*
 * Where thread tid at time z is inside a poll that began after a: the pieces of [a, z) the
 * polled task's history explains, latest first, up to max; 0 when there is no hop (no poll
 * there, or one that began by a). The last piece always ends at the poll's start.
 */
__u32 tasks__hop(struct tasks *t, struct names *nm, __u32 tid, __u64 a, __u64 z,
		 struct task_seg *out, __u32 max);

#endif
