/* SPDX-License-Identifier: GPL-2.0 */
/* Scheduler: off-CPU intervals of the target's threads, with why and who woke them. */
#ifndef GAPSCOPE_OFFCPU_H
#define GAPSCOPE_OFFCPU_H

#include "gapscope.h"

#define OFFCPU_PREEMPTED	1	/* switched out while runnable (preempted or yielded) */
#define OFFCPU_BLOCKED		2	/* switched out asleep: prev_state != TASK_RUNNING */

struct offcpu_event {
	struct gs_hdr h;	/* ts = switched out; cpu = where it ran before */
	__u64 dur_ns;		/* until switched in again */
	__u32 state;		/* OFFCPU_* */
	__u32 prev_state;	/* raw task state at switch-out (TASK_INTERRUPTIBLE, ...) */
	__u32 waker_tid;	/* task current at sched_waking: for a wakeup from interrupt
				 * context (timer, I/O) the interrupted one, often idle (0);
				 * 0 also when no wakeup was seen (preempted) */
	__u32 waker_tgid;
	__u64 wake_ts;		/* when sched_waking ran, 0 if not seen */
	__u32 on_cpu;		/* where it resumed */
	__u32 pad;
	char waker_comm[GS_COMM_LEN]; /* the waker may be outside the target (kworker, ...) */
};

#endif
