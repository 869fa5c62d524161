// SPDX-License-Identifier: GPL-2.0
/*
 * On-CPU time that no sample fell in (blame_int.h: blame__unsampled): named from the nearest
 * stack the thread showed, and said which, so that no chain ends in an unnamed on-CPU root.
 */
#include <stdio.h>
#include <string.h>

#include "actionable.h"
#include "blame_int.h"
#include "names.h"
#include "stacktab.h"
#include "strtab.h"
#include "threads.h"

/* The function a stack was in, as a sample's is named (actionable.h); false: none. */
static bool stack_function(struct blame *b, __u32 stack, struct actionable *act)
{
	struct stack_view v;

	if (stack == STACK_NONE)
		return false;
	v = stacktab__get(threads__stacks(b->th), stack);
	return stack__actionable(b->nm, b->strs, v.tgid, v.user, v.nu, act) && *act->name;
}

/* How near a stack must be to stand for on-CPU time that no sample fell in: a wait's, and a
 * sample's (a busy thread preempted often runs in slices shorter than the sampling period). */
#define UNSAMPLED_SLACK_NS	  2000000ull
#define UNSAMPLED_SAMPLE_SLACK_NS 20000000ull

/*
 * On-CPU time [s, e) that no sample fell in (shorter than the sampling period, or its tick went
 * to another thread): named from the nearest stack the thread showed, said which: where it went
 * off CPU next (its wait's user stack), where it came back from its last wait, or the probed or
 * CUDA call it ran in; else the thread alone, with how long it ran unsampled.
 */
int blame__unsampled(struct blame *b, const struct thread *th, __u64 s, __u64 e)
{
	size_t i = thread__first_off(th, e), j = thread__first_off(th, s);
	const struct th_off *next = i < th->off.n ? VEC_AT(&th->off, struct th_off, i) : NULL;
	const struct th_off *prev = j ? VEC_AT(&th->off, struct th_off, j - 1) : NULL;
	const struct th_call *c = thread__call_at(th, s);
	const char *where = NULL, *x;
	struct actionable act = {};
	__u32 stack = STACK_NONE;
	size_t k = thread__first_sample(th, s);
	const struct th_sample *before = k ? VEC_AT(&th->samples, struct th_sample, k - 1) : NULL,
			       *after = k < th->samples.n ?
						VEC_AT(&th->samples, struct th_sample, k) :
						NULL,
			       *near;

	/* The sample nearest the span, on either side. */
	if (before && s - before->ts > UNSAMPLED_SAMPLE_SLACK_NS)
		before = NULL;
	if (after && (after->ts < e || after->ts - e > UNSAMPLED_SAMPLE_SLACK_NS))
		after = NULL;
	near = !before ? after : !after ? before : s - before->ts <= after->ts - e ? before : after;

	if (next && next->start >= e && next->start - e <= UNSAMPLED_SLACK_NS &&
	    stack_function(b, next->stack, &act)) {
		stack = next->stack;
		where = "its stack at its next wait";
	} else if (prev && prev->end <= s && s - prev->end <= UNSAMPLED_SLACK_NS &&
		   stack_function(b, prev->stack, &act)) {
		stack = prev->stack;
		where = "its stack when it came back from its last wait";
	} else if (near && stack_function(b, near->stack, &act)) {
		stack = near->stack;
		where = near == before ? "its last sample before" : "its first sample after";
	} else if (c && c->name) {
		act = (struct actionable){ .name = c->name, .leaf = c->name };
		stack = c->stack;
		where = "in this probed call";
	} else {
		act = (struct actionable){};
	}
	char d[32];

	if (e - s < 1000000)
		snprintf(d, sizeof(d), "%llu us", (unsigned long long)(e - s) / 1000);
	else
		snprintf(d, sizeof(d), "%.1f ms", (e - s) / 1e6);
	x = strtab__internf(b->strs, "[on cpu %s, no sample%s%s]", d, where ? ": " : "",
			    where ? where : "");
	if (!act.name) /* one name a thread, so that its unsampled spans add up to one cause */
		act.name = strtab__internf(b->strs, "%s (not sampled)", th->comm);
	return blame__root_cpu(b, th, &act, x, stack, e - s, &x, 1);
}
