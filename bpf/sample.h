/* SPDX-License-Identifier: GPL-2.0 */
/* CPU samples of the target's threads: software cpu-clock, user + kernel stacks. */
#ifndef GAPSCOPE_SAMPLE_H
#define GAPSCOPE_SAMPLE_H

#include "gapscope.h"

struct sample_event {
	struct gs_hdr h; /* followed by the stacks */
	__u64 ip;	 /* interrupted instruction (user or kernel) */
};

/*
 * Tick sampler, per CPU: when the next tick may take a sample, and the tick's rate as seen.
 * CONFIG_HZ is one of a few values (x86: 100, 250, 300, 1000); each interval between two ticks
 * within 5% of one of their periods counts for it. A tick late by a jitter, or the first after
 * an idle spell, counts for none.
 */
#define GS_TICK_HZ_N 4
static const unsigned int gs_tick_hz[GS_TICK_HZ_N]
	__attribute__((unused)) = { 100, 250, 300, 1000 };

struct tick_state {
	__u64 next;
	__u64 last;
	__u64 hz_hits[GS_TICK_HZ_N];
	/* A sample chosen at the tick's start, taken at its end (tick_sample, tick_taken). */
	__u64 pending_ts; /* 0: none */
	__u64 utime;	  /* the task's utime and stime before the tick accounted itself */
	__u64 stime;
	__u32 pending_tid;
	__u32 pad;
};

#endif
