// SPDX-License-Identifier: GPL-2.0
/*
 * The hops a blame chain makes that are not waits (blame_int.h): through an async task a
 * thread polled (reports/analysis/tasks.h), and from a thread created inside the interval to its creator.
 */
#include "blame_int.h"

/*
 * th reached z inside a poll of an async task that began after a: the poll is th's own time,
 * what came before it the task's (tasks.h), each piece explained by the thread it names, a
 * "task" link on the chain where the task waited.
 */
int blame__task_hop(struct blame *b, const struct thread *th, const struct task_seg *seg, __u32 n,
		    __u64 z)
{
	int err = blame__explain(b, th, seg[0].end, z);

	for (__u32 i = 0; i < n && !err; i++) {
		const struct task_seg *s = &seg[i];
		const struct thread *x = threads__find(b->th, s->tid);
		const char *detail;

		if (s->start >= s->end)
			continue;
		if (!x || x->tgid != th->tgid) {
			const char *xf = "[task: the thread is not known]";

			err = blame__root(b, th, TS_BLOCKED, BK_OTHER, "task", NULL, STACK_NONE,
					  s->end - s->start, &xf, 1);
			continue;
		}
		if (s->kind == TSEG_THREAD) {
			err = blame__explain(b, x, s->start, s->end);
			continue;
		}
		/* An async lock's holder by its task's function, as a mutex's by its thread. */
		if (s->kind == TSEG_PENDING && s->wait == BK_LOCK && s->holder)
			detail = strtab__internf(b->strs, "held by task %s (%s)", s->holder,
						 x->comm);
		else
			detail = strtab__internf(
				b->strs, "task 0x%llx %s %s", (unsigned long long)s->task,
				s->kind == TSEG_PENDING ? "woken by" : "runnable, polled by",
				x->comm);
		blame__push_link(b, th, TS_BLOCKED, s->kind == TSEG_PENDING ? s->wait : BK_COND,
				 s->lock, NULL, detail, STACK_NONE);
		b->path[b->depth - 1].l.task = s->task;
		err = blame__explain(b, x, s->start, s->end);
		b->depth--;
	}
	return err;
}

/*
 * th was created at born inside (a, z): before that, its creator's time explains [a, born)
 * (a pool that starts a thread for the work it was handed, as an async runtime's blocking pool
 * does), a "created by" link on the chain.
 */
int blame__before_birth(struct blame *b, const struct thread *th, __u64 a, __u64 born)
{
	const struct thread *p = threads__find(b->th, th->parent);
	const char *detail;
	int err;

	if (!p || p->tgid != th->tgid || blame__on_path(b, p->tid) || b->depth + 1 >= b->max_hops) {
		const char *x = "[thread not yet created]";

		return blame__root(b, th, TS_BLOCKED, BK_OTHER, "thread start", NULL, STACK_NONE,
				   born - a, &x, 1);
	}
	detail = strtab__internf(b->strs, "created by %s", p->comm);
	blame__push_link(b, th, TS_BLOCKED, BK_COND, "thread start", NULL, detail, STACK_NONE);
	err = blame__explain(b, p, a, born);
	b->depth--;
	return err;
}
