/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared between the BPF programs and user space: the record header every BPF event starts with,
 * loss counter indices and limits. Only __u32/__u64 and fixed-size arrays, so both sides agree on
 * the layout without packing pragmas. Each probe family adds its event structs in its own header
 * (cuda.h, futex.h, sched.h, sample.h, probe.h, proc.h).
 */
#ifndef GAPSCOPE_H
#define GAPSCOPE_H

#ifndef __bpf__
#include <linux/types.h> /* the BPF side has them from vmlinux.h */
#endif

#define GS_USTACK_MAX  127 /* kernel.perf_event_max_stack default */
#define GS_KSTACK_MAX  48
#define GS_COMM_LEN    16
#define GS_MAX_TGIDS   1024
#define GS_MAX_THREADS 32768

/* Event types: the first word of every BPF event and of every trace record below 0x100. */
enum gs_event_type {
	GS_EV_CUDA = 1,		/* struct cu_event */
	GS_EV_CU_NAME = 2,	/* struct cu_name_event */
	GS_EV_FUTEX = 3,	/* struct futex_event */
	GS_EV_OFFCPU = 4,	/* struct offcpu_event */
	GS_EV_SAMPLE = 5,	/* struct sample_event */
	GS_EV_PROBE = 6,	/* struct probe_event */
	GS_EV_FORK = 7,		/* struct fork_event */
	GS_EV_EXIT = 8,		/* struct exit_event */
	GS_EV_COMM = 9,		/* struct comm_event */
	GS_EV_EXEC = 10,	/* struct exec_event */
	GS_EV_MMAP = 11,	/* struct mmap_event */
	GS_EV_LOCK = 12,	/* struct lock_event (--lock-holds) */
	GS_EV_USTACK_SNAP = 13, /* struct ustack_snap_event: registers and user stack bytes */
	GS_EV_PYSTACK = 14,	/* struct pystack_event: a live CPython's frames (pystack.h) */
	GS_EV_MAX
};

/* Header flags. */
#define GS_F_STACK	   (1u << 0) /* a struct gs_stack follows the fixed part (BPF side) */
/*
 * GS_F_ENTRY_STACK: the user stack was taken at a function's first instruction, where the
 * return address is still at *sp and the frame pointer is the caller's: the caller's frame is
 * missing from the walk, the event's caller field has it.
 */
#define GS_F_ENTRY_STACK   (1u << 1)
#define GS_F_RET	   (1u << 2) /* a return probe completed the event: ret and dur_ns valid */
#define GS_F_TICK	   (1u << 3) /* a sample taken at the scheduler tick (not a cpu-clock timer) */
/* An off-CPU interval inside a recorded futex wait: the futex event says why, no kernel stack. */
#define GS_F_IN_FUTEX	   (1u << 4)
/*
 * An off-CPU interval whose switch-in the scheduler's tracepoint never reported: it ends where
 * the thread was first seen running again (a futex call, a probe, a CUDA call with a return, a
 * tick, its exit or its next switch-out), at most a tick late where the tick sampler runs
 * (bpf/offcpu.bpf.h).
 */
#define GS_F_RESUME_UNSEEN (1u << 5)
/*
 * A blocked off-CPU interval's wakeup: GS_F_WAKE_SEEN where the recorder tells where wakeups
 * came from (traces before it do not), GS_F_WAKE_IRQ where this one came from a hard interrupt
 * handler other than a timer's (a device: the GPU's completion interrupt), whichever task it
 * interrupted.
 */
#define GS_F_WAKE_SEEN	   (1u << 6)
#define GS_F_WAKE_IRQ	   (1u << 7)

/*
 * Every BPF event and every trace record starts with type and size, so a reader can skip what it
 * does not know. size covers the header, the fixed part and the stack frames.
 */
struct gs_hdr {
	__u32 type;
	__u32 size;
	__u64 ts; /* bpf_ktime_get_ns() == CLOCK_MONOTONIC; start of an interval */
	__u32 tid;
	__u32 tgid;
	__u32 cpu;
	__u16 flags;
	__u8 ustack_n; /* user frames, then kernel frames, at the end of the record */
	__u8 kstack_n;
};

/*
 * Stack frames as the BPF side reserves them (fixed places keep the verifier simple); the
 * recorder compacts them to ustack_n user frames followed by kstack_n kernel frames.
 */
struct gs_stack {
	__u64 user[GS_USTACK_MAX];
	__u64 kern[GS_KSTACK_MAX];
};

/* Loss counters: per-CPU in the kernel, summed into the trace (GS_REC_LOSSES). */
enum gs_loss {
	GS_LOSS_RINGBUF = 0, /* ring buffer full: event dropped */
	GS_LOSS_USTACK,	     /* bpf_get_stack(user) failed: event kept, no user stack */
	GS_LOSS_KSTACK,	     /* bpf_get_stack(kernel) failed */
	GS_LOSS_MAP,	     /* per-thread state map full: an interval lost its start */
	GS_LOSS_READ,	     /* reading user memory (arguments, caller) failed */
	GS_LOSS_SIGNAL,	     /* could not stop a thread for a late attach */
	GS_LOSS_RECURSION,   /* user space: runs the kernel skipped (bpf_prog_info) */
	GS_LOSS_ATTACH,	     /* user space: probes that failed to attach */
	GS_LOSS_USNAP,	     /* a user stack snapshot not taken: unreadable stack, buffer busy */
	GS_LOSS_PYSTACK,     /* Python frames not read, or cut short: a failed read, buffer busy */
	GS_LOSS_PYCODE,	     /* user space: Python code objects that could not be named */
	GS_LOSS_MAX
};

#ifndef __bpf__
/* clang-format off */
static const char *const gs_loss_names[GS_LOSS_MAX] __attribute__((unused)) = {
	"ringbuf", "ustack", "kstack", "map", "read", "signal", "recursion", "attach_failed",
	"ustack_snap", "pystack", "pycode",
};
/* clang-format on */
#endif

#endif
