/* SPDX-License-Identifier: GPL-2.0 */
/* Scheduler: off-CPU intervals of the target's threads, with why and who woke them. */
#ifndef GAPSCOPE_OFFCPU_H
#define GAPSCOPE_OFFCPU_H

#include "gapscope.h"

#define OFFCPU_PREEMPTED	    1 /* switched out while runnable (preempted or yielded) */
#define OFFCPU_BLOCKED		    2 /* switched out asleep: prev_state != TASK_RUNNING */
/* prev_state's bit for a sleep that a signal ends (poll, a futex), as the kernel's
 * TASK_INTERRUPTIBLE; without it (TASK_UNINTERRUPTIBLE) a kernel lock's or an I/O's wait. */
#define OFFCPU_TASK_INTERRUPTIBLE   0x1
/* Its bit for a sleep only the wakeup ends (TASK_KILLABLE has it too): a fault's, an I/O's. */
#define OFFCPU_TASK_UNINTERRUPTIBLE 0x2

struct offcpu_event {
	struct gs_hdr h;  /* ts = switched out; cpu = where it ran before */
	__u64 dur_ns;	  /* until switched in again */
	__u32 state;	  /* OFFCPU_* */
	__u32 prev_state; /* raw task state at switch-out (TASK_INTERRUPTIBLE, ...) */
	__u32 waker_tid;  /* task current at sched_waking: for a wakeup from interrupt
				 * context (timer, I/O) the interrupted one, often idle (0);
				 * 0 also when no wakeup was seen (preempted) */
	__u32 waker_tgid;
	__u64 wake_ts;		      /* when sched_waking ran, 0 if not seen */
	__u32 on_cpu;		      /* where it resumed */
	__s32 syscall;		      /* blocked: the system call it slept in (its number, orig_ax),
				 * OFFCPU_NO_SYSCALL outside one (interrupt, exception);
				 * traces before version 2 have 0 here: offcpu_syscall() */
	char waker_comm[GS_COMM_LEN]; /* the waker may be outside the target (kworker, ...) */
	/*
	 * Appended in version 6 (older records end before them: offcpu_next()). A runnable
	 * switch-out (OFFCPU_F_NEXT in the flags): the task the CPU switched to, 0 for its idle
	 * task; what stood in the thread's place, or nothing did.
	 */
	__u32 next_tid;
	__u32 next_tgid;
	char next_comm[GS_COMM_LEN];
	/* The CPUs it was allowed then (affinity within its cpuset): how many, the first 64. */
	__u32 nr_cpus_allowed;
	__u32 pad;
	__u64 cpus_allowed;
	/*
	 * The task that ran longest in all on the CPU it waited on, meanwhile (0: none seen, it
	 * came back elsewhere, or its return went unseen; offcpu.bpf.c's cpu_hold): who held that
	 * CPU, where the first to run (next_*) is often a short interruption (an interrupt
	 * thread, a real-time waker) before a hog's runs.
	 */
	__u32 last_tid;
	__u32 last_tgid;
	char last_comm[GS_COMM_LEN];
	/*
	 * Appended in version 7. A blocked interval outside a system call (the page-fault path):
	 * the thread's last file fault before it switched out (filemap:mm_filemap_fault), the
	 * file's inode and device (kernel dev_t) and the page's index in it, and when;
	 * fault_ts 0: none seen (no file fault, the tracepoint missing, an older trace).
	 */
	__u64 fault_ino;
	__u64 fault_index;
	__u64 fault_ts;
	__u32 fault_dev;
	__u32 fault_pad;
};

/* The size of an off-CPU event before version 6 (no next task), and before 7 (no fault). */
#define OFFCPU_EVENT_V5_SIZE offsetof(struct offcpu_event, next_tid)
#define OFFCPU_EVENT_V6_SIZE offsetof(struct offcpu_event, fault_ino)

/*
 * gs_hdr flags of an off-CPU event, bits 12-14 (version 6): a runnable switch-out records what
 * ran next (OFFCPU_F_NEXT), and whether the thread's CPU controller hierarchy was throttled by a
 * quota then (OFFCPU_F_THROTTLED), where the kernel could tell (OFFCPU_F_THROTTLE_KNOWN: its
 * cfs_rq has throttle_count, or the task its throttled flag).
 */
#define OFFCPU_F_NEXT		(1u << 12)
#define OFFCPU_F_THROTTLED	(1u << 13)
#define OFFCPU_F_THROTTLE_KNOWN (1u << 14)
/*
 * Bit 15: a thread asleep since before the recorder could see it switch out (it slept when its
 * process began to be recorded), woken since: the interval starts when the recorder began to
 * watch it, a bound (its sleep began earlier), and ends at its switch-in; the wakeup is known.
 * No system call, file kind or stack: those are read as it switches out.
 */
#define OFFCPU_F_ASLEEP_BEFORE	(1u << 15)

/*
 * gs_hdr flags of an off-CPU event, bits 8-11: what the file descriptor a blocking system call
 * waited on is (read, write, recv*, send*, accept, connect, epoll_wait: the fd is its first
 * argument), OFFCPU_FD_* ; 0 unknown or none (older traces too).
 */
#define OFFCPU_FD_SHIFT 8
#define OFFCPU_FD_MASK	(0xfu << OFFCPU_FD_SHIFT)
enum offcpu_fd_kind {
	OFFCPU_FD_NONE,
	OFFCPU_FD_PIPE,
	OFFCPU_FD_SOCKET,
	OFFCPU_FD_EVENTFD,
	OFFCPU_FD_FILE,	  /* a regular file */
	OFFCPU_FD_DEVICE, /* a character or block device */
	OFFCPU_FD_EPOLL,
	OFFCPU_FD_TIMERFD,
	OFFCPU_FD_SIGNALFD,
	OFFCPU_FD_OTHER,
	OFFCPU_FD_MAX
};

#define OFFCPU_NO_SYSCALL      (-1) /* blocked outside a system call, or preempted */
#define OFFCPU_SYSCALL_UNKNOWN (-2) /* a trace before version 2: not recorded */

#ifndef __bpf__
#include <stdbool.h>
#include <stddef.h>

/* The system call of an off-CPU interval, for a trace of the given version. */
static inline int offcpu_syscall(const struct offcpu_event *e, __u32 trace_version)
{
	return trace_version < 2 ? OFFCPU_SYSCALL_UNKNOWN : e->syscall;
}

/* Whether the event says what ran next (a version 6 record of a runnable switch-out). */
static inline bool offcpu_next(const struct offcpu_event *e, size_t fixed_size)
{
	return fixed_size >= OFFCPU_EVENT_V6_SIZE && (e->h.flags & OFFCPU_F_NEXT);
}

/* Whether the event names the file fault it blocked in (a version 7 record that saw one). */
static inline bool offcpu_fault(const struct offcpu_event *e, size_t fixed_size)
{
	return fixed_size >= sizeof(*e) && e->fault_ts;
}
#endif

#endif
