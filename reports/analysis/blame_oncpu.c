// SPDX-License-Identifier: GPL-2.0
/*
 * On-CPU time that no sample fell in (blame_int.h: blame__unsampled): named from the nearest
 * stack the thread showed, and said which, so that no chain ends in an unnamed on-CPU root.
 */
#include <stdio.h>
#include <string.h>

#include "blame_int.h"
#include "names.h"
#include "stacktab.h"
#include "strtab.h"
#include "threads.h"

/* The function a stack was in: its leaf user frame, unless that is the vDSO's; NULL none. */
static const char *leaf_function(struct blame *b, __u32 stack)
{
	struct stack_view v;

	if (stack == STACK_NONE)
		return NULL;
	v = stacktab__get(threads__stacks(b->th), stack);
	for (__u32 i = 0; i < v.nu; i++) {
		const char *f = names__user(b->nm, v.tgid, v.user[i], i == 0);

		if (f && *f && !strstr(f, "vdso"))
			return f;
	}
	return NULL;
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
	const char *fn = NULL, *where = NULL, *x;
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
	    (fn = leaf_function(b, next->stack))) {
		stack = next->stack;
		where = "its stack at its next wait";
	} else if (prev && prev->end <= s && s - prev->end <= UNSAMPLED_SLACK_NS &&
		   (fn = leaf_function(b, prev->stack))) {
		stack = prev->stack;
		where = "its stack when it came back from its last wait";
	} else if (near && (fn = leaf_function(b, near->stack))) {
		stack = near->stack;
		where = near == before ? "its last sample before" : "its first sample after";
	} else if (c && c->name) {
		fn = c->name;
		stack = c->stack;
		where = "in this probed call";
	}
	char d[32];

	if (e - s < 1000000)
		snprintf(d, sizeof(d), "%llu us", (unsigned long long)(e - s) / 1000);
	else
		snprintf(d, sizeof(d), "%.1f ms", (e - s) / 1e6);
	x = strtab__internf(b->strs, "[on cpu %s, no sample%s%s]", d, where ? ": " : "",
			    where ? where : "");
	if (!fn) /* one name a thread, so that its unsampled spans add up to one cause */
		fn = strtab__internf(b->strs, "%s (not sampled)", th->comm);
	return blame__root(b, th, TS_ON_CPU, BK_ON_CPU, fn, x, stack, e - s, &x, 1);
}
