/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User stack snapshots: the registers a thread entered the kernel with and the top of its user
 * stack, copied for the events blame rests on (blocked intervals and futex waits of at least
 * --snapshot-min-block, probed function intervals, CPU samples), so that a report can unwind them
 * with DWARF CFI (reports/symbols/unwind.c) where frame pointers are missing, as perf --call-graph dwarf
 * does. A snapshot is a record of its own, GS_EV_USTACK_SNAP, tied to the event it completes by
 * thread, event type and start time.
 */
#ifndef GAPSCOPE_SNAPSHOT_H
#define GAPSCOPE_SNAPSHOT_H

#include "gapscope.h"

#define GS_SNAP_MAX	  (64 << 10) /* the most stack bytes a snapshot holds */
/* Scratch slots per CPU (snapshot.bpf.h): three for process context, one for interrupts. */
#define SNAP_SLOTS	  4
#define GS_SNAP_DEFAULT	  (16 << 10) /* --stack-snapshot */
#define GS_SNAP_MIN_BLOCK 1000000    /* --snapshot-min-block, ns */
#define GS_SNAP_NREGS	  17	     /* x86-64 DWARF registers 0-16: rax .. r15, rip */
#define GS_SNAP_NRI	  8	     /* return addresses put back for pending uretprobes */
#define GS_SNAP_REG_SP	  7
#define GS_SNAP_REG_IP	  16

struct ustack_snap_event {
	struct gs_hdr h; /* ts, tid: those of the event it completes */
	__u64 end_ns;	 /* that event's end: a reader orders the snapshot just before it */
	__u64 taken_ns;	 /* when the stack was read (off-CPU: the system call's return) */
	__u32 of_type;	 /* GS_EV_* of the event it completes */
	__u32 len;	 /* stack bytes that follow, from regs[GS_SNAP_REG_SP] up */
	__u32 want;	 /* bytes asked for: len < want where the stack ended before */
	__u32 nri;	 /* entries of ri in use */
	__s32 syscall;	 /* off-CPU: the system call it blocked in, else -1 */
	__u32 zlen;	 /* GS_SNAP_F_ZSTD: bytes of the zstd frame that follow instead */
	__u64 regs[GS_SNAP_NREGS]; /* DWARF numbering: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip */
	/*
	 * A uretprobe replaces the return address of the function it probes with its trampoline:
	 * where each slot is on the stack and the address it held, newest first.
	 */
	__u64 ri_slot[GS_SNAP_NRI];
	__u64 ri_ret[GS_SNAP_NRI];
	/* __u8 stack[len] */
};

/*
 * gs_hdr flag of a snapshot in a version 4 trace: the recorder compressed its stack bytes (zstd);
 * zlen bytes follow, len once decompressed. Version 5 compresses whole chunks instead
 * (lib/trace.h), which does far better: a thread's snapshots share most of their bytes.
 */
#define GS_SNAP_F_ZSTD (1u << 8)

/* Configuration, set by the recorder after the load (map snap_cfg, one entry). */
struct snap_cfg {
	__u32 bytes; /* 0: no snapshots */
	__u32 pad;
	__u64 min_block_ns;
};

#endif
