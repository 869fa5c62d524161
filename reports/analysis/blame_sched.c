// SPDX-License-Identifier: GPL-2.0
/*
 * The scheduler's roots (blame_int.h: blame__runnable): a thread runnable but not running,
 * preempted by a thread of the target or another process, woken and waiting for an idle CPU, or
 * stopped by its CPU quota.
 */
#include <string.h>

#include "blame_int.h"
#include "cgroups.h"
#include "strtab.h"
#include "threads.h"

/*
 * Who ran on cpu in [s, e) instead of a runnable thread: the target's thread sampled there most,
 * looking a tick or so around a window too short to hold a sample (samples come at the tick).
 * NULL: none of the target's threads, another process.
 */
#define PREEMPT_SLACK_NS 5000000ull

static const char *preempted_by(struct blame *b, const struct thread *self, __u32 cpu, __u64 s,
				__u64 e)
{
	const struct thread *best = NULL;
	size_t best_n = 0;

	s = s > PREEMPT_SLACK_NS ? s - PREEMPT_SLACK_NS : 0;
	e += PREEMPT_SLACK_NS;
	for (size_t i = 0; i < b->nall; i++) {
		const struct thread *t = b->all[i];
		size_t n = 0;

		if (t == self)
			continue;
		for (size_t k = thread__first_sample(t, s); k < t->samples.n; k++) {
			const struct th_sample *smp = VEC_AT(&t->samples, struct th_sample, k);

			if (smp->ts >= e)
				break;
			n += smp->cpu == cpu;
		}
		if (n > best_n) {
			best = t;
			best_n = n;
		}
	}
	return best ? strtab__internf(b->strs, "preempted by %s", best->comm) : NULL;
}

/*
 * Runnable, not running, over [s, e) of o: preempted, woken and waiting for a CPU, or stopped
 * by a CPU quota. What ran in its place comes from the switch-out where the trace has it (a
 * trace before version 6 does not, nor does a wakeup's wait): a recorded thread sampled on that
 * CPU, else nothing is guessed.
 */
int blame__runnable(struct blame *b, const struct thread *th, const struct th_off *o, __u64 s,
		    __u64 e)
{
	const char *by = NULL, *fn, *cpus = NULL, *x[1], *other_comm = NULL;
	enum blame_kind k = BK_PREEMPTED;
	__u32 other_tid = 0, other_tgid = 0;

	if (!o->blocked && cgroups__off_throttled(b->cg, th->tgid, o)) {
		fn = cgroups__throttler(b->cg, th->tgid, o->start);
		if (!fn)
			fn = "CPU quota (its cgroup not recorded)";
		x[0] = strtab__internf(b->strs, "[throttled: %s]", fn);
		return blame__root(b, th, TS_PREEMPTED, BK_THROTTLED, fn,
				   "throttled by its CPU quota", STACK_NONE, e - s, x, 1);
	}
	/* What held the CPU: what ran longest on it meanwhile, else the first after it left. */
	if (!o->blocked && o->next_known && o->next_tid && o->last_tid) {
		if (o->last_tgid != th->tgid && !threads__find(b->th, o->last_tid))
			other_tid = o->last_tid, other_tgid = o->last_tgid,
			other_comm = o->last_comm;
	} else if (!o->blocked && o->next_known && o->next_tid && o->next_tgid != th->tgid &&
		   !threads__find(b->th, o->next_tid)) {
		other_tid = o->next_tid, other_tgid = o->next_tgid, other_comm = o->next_comm;
	}
	if (other_tid) {
		/* Another process, unrecorded: named, with the CPUs this one was allowed. */
		cpus = cgroups__cpus(b->cg, th->tgid, o->nr_cpus, o->cpus);
		fn = cpus ? blame__keyed(b, strtab__internf(b->strs, "another process, %s", cpus),
					 "%s (pid %u), %s", other_comm, other_tgid, cpus) :
			    blame__keyed(b, "another process", "%s (pid %u)", other_comm,
					 other_tgid);
		by = strtab__internf(b->strs, "preempted by %s", fn);
		b->outside_ns += e - s;
	} else if (!o->blocked && o->next_known && !o->next_tid) {
		k = BK_RUNNABLE;
		fn = "CPU idle";
		by = "runnable, CPU idle";
	} else {
		by = preempted_by(b, th, o->blocked ? o->on_cpu : o->cpu, s, e);
		if (by) {
			fn = by + strlen("preempted by ");
		} else if (o->next_known && o->next_tid) {
			const struct thread *n = threads__find(b->th, o->next_tid);

			fn = n ? n->comm : o->next_comm;
			by = strtab__internf(b->strs, "preempted by %s", fn);
		} else if (!o->blocked) {
			/* A trace before version 6: the switch-out did not say what ran next. */
			k = BK_RUNNABLE;
			fn = "what ran instead not recorded";
			by = "runnable, what ran instead not recorded";
		} else {
			fn = "another process";
			by = "preempted by another process";
			b->outside_ns += e - s;
		}
	}
	x[0] = strtab__internf(b->strs, "[%s]", by);
	return blame__root(b, th, TS_PREEMPTED, k, fn, by, STACK_NONE, e - s, x, 1);
}
