// SPDX-License-Identifier: GPL-2.0
/*
 * Task hops (reports/analysis/tasks.c): where a thread at z is inside a poll that began after a, the
 * time before it is the task's: being polled on the thread that polled it last, pending until
 * its wake (the waker explains it), runnable until this poll. Polls nest (tokio runs a worker
 * thread's whole life as one task of its blocking pool): the hop is the innermost poll's, and
 * on-CPU time too short for a sample takes the samples of the innermost poll that holds no other.
 */
#include "trace.h"
#include "strtab.h"
#include "stacktab.h"
#include "runtimes.h"
#include "tasks.h"
#include "testlib.h"

enum { W = 10, P = 11, WAKER = 12 };
#define OUTER 0x1000
#define TASK  0x2000

static void add(struct tasks *t, __u32 kind, __u32 tid, __u64 ts, __u64 task, __u64 dur)
{
	struct gs_hdr h = {
		.type = GS_EV_PROBE, .size = sizeof(h), .ts = ts, .tid = tid, .tgid = 1
	};

	CHECK(!tasks__add(t, &h, kind, task, dur), "tasks__add");
}

static void check_seg(const struct task_seg *s, enum task_seg_kind kind, __u64 a, __u64 z,
		      __u32 tid)
{
	CHECK_EQ_U64(s->kind, kind);
	CHECK_EQ_U64(s->start, a);
	CHECK_EQ_U64(s->end, z);
	CHECK_EQ_U64(s->tid, tid);
	CHECK_EQ_U64(s->task, TASK);
}

int main(void)
{
	struct strtab *strs = strtab__new();
	struct stacktab *stacks = stacktab__new();
	struct tasks *t = tasks__new(strs, stacks);
	struct task_seg seg[TASK_MAX_SEGS];
	__u32 n;

	CHECK(strs && stacks && t, "tables");
	/* in the order the records end: TASK polled on P, woken by WAKER, polled on W; all of W's
	 * polls inside its worker's own (OUTER, the whole recording) */
	add(t, RT_POLL, P, 100, TASK, 10);
	add(t, RT_WAKE, WAKER, 500, TASK, 0);
	add(t, RT_POLL, W, 600, TASK, 50);
	add(t, RT_POLL, W, 0, OUTER, 1000);
	CHECK_EQ_U64(tasks__polls(t), 3);

	/* W at 620 is in TASK's poll (inside OUTER's): runnable 500-600 (W polled it), pending
	 * 110-500 (WAKER woke it), polled on P before that */
	n = tasks__hop(t, NULL, W, 50, 620, seg, TASK_MAX_SEGS);
	CHECK_EQ_U64(n, 3);
	check_seg(&seg[0], TSEG_QUEUED, 500, 600, W);
	check_seg(&seg[1], TSEG_PENDING, 110, 500, WAKER);
	check_seg(&seg[2], TSEG_THREAD, 50, 110, P);
	CHECK_EQ_U64(seg[1].wait, BK_COND);

	/* the interval starts inside the pending time: no earlier poll in it */
	n = tasks__hop(t, NULL, W, 300, 620, seg, TASK_MAX_SEGS);
	CHECK_EQ_U64(n, 2);
	check_seg(&seg[0], TSEG_QUEUED, 500, 600, W);
	check_seg(&seg[1], TSEG_PENDING, 300, 500, WAKER);

	/* a poll that began by a is the thread's own time; between polls only OUTER covers z,
	 * a task never woken nor polled before: no hop either */
	CHECK_EQ_U64(tasks__hop(t, NULL, W, 605, 620, seg, TASK_MAX_SEGS), 0);
	CHECK_EQ_U64(tasks__hop(t, NULL, W, 50, 300, seg, TASK_MAX_SEGS), 0);
	/* another thread, no poll */
	CHECK_EQ_U64(tasks__hop(t, NULL, WAKER, 50, 620, seg, TASK_MAX_SEGS), 0);

	/* unsampled on-CPU time: the innermost poll around it that holds no other (a task's
	 * work), never the worker's own */
	{
		__u64 ps = 0, pe = 0;

		CHECK(tasks__poll_around(t, W, 610, 620, &ps, &pe), "inside TASK's poll on W");
		CHECK_EQ_U64(ps, 600);
		CHECK_EQ_U64(pe, 650);
		CHECK(tasks__poll_around(t, P, 102, 105, &ps, &pe), "inside TASK's poll on P");
		CHECK_EQ_U64(ps, 100);
		CHECK(!tasks__poll_around(t, W, 300, 310, &ps, &pe), "between polls: OUTER's loop");
		CHECK(!tasks__poll_around(t, W, 590, 620, &ps, &pe), "across a poll's start");
		CHECK(!tasks__poll_around(t, WAKER, 490, 510, &ps, &pe), "no poll there");
	}

	tasks__free(t);
	stacktab__free(stacks);
	strtab__free(strs);
	TEST_PASS();
}
