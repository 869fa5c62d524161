/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Taking user stack snapshots (snapshot.h) from any probe family. The maps are weak, as in
 * gapscope.bpf.h: linked into one object, each is one map.
 *
 * Where: at the return of whatever the event measured, when the thread is current and its user
 * stack still as it was while it waited (a futex wait or blocking system call returning, a probed
 * function returning, a sample). A blocked interval is known long only when the thread is
 * switched back in, in another task's context, where its memory cannot be read: sched_switch
 * marks it pending (snap_pending) and the system call's return takes the snapshot. Short waits
 * take none.
 *
 * How: the stack is read page by page from the stack pointer up, so that a stack ending within
 * the size asked for (the main thread's, near its top) gives what is there rather than nothing,
 * and pages below the stack's lowest touched one read as the zeros they hold;
 * into a per-CPU scratch slot, then out to the ring buffer at the size read. A CPU has
 * SNAP_SLOTS of them: the last for interrupts (a sample can interrupt a snapshot in progress),
 * the others for process context, where a program runs preemptibly (a uprobe's, a system call
 * exit's) and another task's may take a snapshot on the same CPU meanwhile: each takes the first
 * free one.
 */
#ifndef GAPSCOPE_SNAPSHOT_BPF_H
#define GAPSCOPE_SNAPSHOT_BPF_H

#include "gapscope.bpf.h"
#include "snapshot.h"
#include "pystack.bpf.h"

struct snap_slot {
	__u64 busy; /* a program on this CPU is filling it (one preempted in a system call's exit) */
	struct ustack_snap_event ev;
	__u8 stack[GS_SNAP_MAX + 4096]; /* room for a last partial page past GS_SNAP_MAX */
};

/* SNAP_SLOTS slots per CPU, cpu * SNAP_SLOTS + i: sized by the recorder (snapshot.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SNAP_SLOTS);
	__type(key, __u32);
	__type(value, struct snap_slot);
} snap_bufs SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct snap_cfg);
} snap_cfg SEC(".maps") __weak;

/* A long blocked interval waiting for its system call's return (off-CPU snapshots). */
struct snap_wait {
	__u64 ts;  /* the first long interval's switch-out */
	__u64 end; /* its switch-in */
	__s32 syscall;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GS_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct snap_wait);
} snap_pending SEC(".maps") __weak;

static __always_inline const struct snap_cfg *snap_config(void)
{
	__u32 zero = 0;
	const struct snap_cfg *c = bpf_map_lookup_elem(&snap_cfg, &zero);

	return c && c->bytes ? c : NULL;
}

#if defined(__TARGET_ARCH_x86)
static __always_inline void snap_regs(struct ustack_snap_event *ev, struct pt_regs *r)
{
	ev->regs[0] = BPF_CORE_READ(r, ax);
	ev->regs[1] = BPF_CORE_READ(r, dx);
	ev->regs[2] = BPF_CORE_READ(r, cx);
	ev->regs[3] = BPF_CORE_READ(r, bx);
	ev->regs[4] = BPF_CORE_READ(r, si);
	ev->regs[5] = BPF_CORE_READ(r, di);
	ev->regs[6] = BPF_CORE_READ(r, bp);
	ev->regs[7] = BPF_CORE_READ(r, sp);
	ev->regs[8] = BPF_CORE_READ(r, r8);
	ev->regs[9] = BPF_CORE_READ(r, r9);
	ev->regs[10] = BPF_CORE_READ(r, r10);
	ev->regs[11] = BPF_CORE_READ(r, r11);
	ev->regs[12] = BPF_CORE_READ(r, r12);
	ev->regs[13] = BPF_CORE_READ(r, r13);
	ev->regs[14] = BPF_CORE_READ(r, r14);
	ev->regs[15] = BPF_CORE_READ(r, r15);
	ev->regs[16] = BPF_CORE_READ(r, ip);
}

/* The return addresses pending uretprobes replaced, and where: the unwinder puts them back. */
static __always_inline void snap_uretprobes(struct ustack_snap_event *ev, struct task_struct *task)
{
	struct return_instance *ri = NULL;

	ev->nri = 0;
	if (!bpf_core_field_exists(ri->stack) || !bpf_core_field_exists(ri->orig_ret_vaddr) ||
	    !bpf_core_field_exists(task->utask))
		return;
	ri = BPF_CORE_READ(task, utask, return_instances);
	for (int i = 0; i < GS_SNAP_NRI && ri; i++) {
		ev->ri_slot[i] = BPF_CORE_READ(ri, stack);
		ev->ri_ret[i] = BPF_CORE_READ(ri, orig_ret_vaddr);
		ev->nri = i + 1;
		ri = BPF_CORE_READ(ri, next);
	}
}

/*
 * A snapshot of the current thread's user stack for the event (of_type, ts) that ends at end.
 * Written before that event where both are written by the same program, so that the file holds
 * it first. irq: 1 from an interrupt (samples), else 0.
 */
static __always_inline void snap_take(__u32 of_type, __u64 ts, __u64 end, __s32 syscall, __u32 irq)
{
	const struct snap_cfg *cfg = snap_config();
	struct task_struct *task = bpf_get_current_task_btf();
	struct ustack_snap_event *ev;
	struct snap_slot *slot;
	struct pt_regs *regs;
	__u32 key, want, n = 0, got = 0;
	__u64 sp, id, size;

	py_take(of_type, ts, end, irq); /* a Python thread's frames, snapshots on or off */
	if (!cfg)
		return;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs || !BPF_CORE_READ(task, mm))
		return;
	/*
	 * Inside execve the registers are still the old image's while the memory may be the new
	 * one's: there is no user stack to take, and none lost (samples of exec'ing children).
	 */
	if (BPF_CORE_READ_BITFIELD_PROBED(task, in_execve))
		return;
	key = bpf_get_smp_processor_id() * SNAP_SLOTS;
	slot = NULL;
	if (irq) {
		key += SNAP_SLOTS - 1;
		slot = bpf_map_lookup_elem(&snap_bufs, &key);
		if (slot && __sync_val_compare_and_swap(&slot->busy, 0, 1))
			slot = NULL;
	} else {
		for (int i = 0; i < SNAP_SLOTS - 1 && !slot; i++, key++) {
			slot = bpf_map_lookup_elem(&snap_bufs, &key);
			if (slot && __sync_val_compare_and_swap(&slot->busy, 0, 1))
				slot = NULL;
		}
	}
	if (!slot) {
		count_loss(GS_LOSS_USNAP); /* every slot of this CPU is being filled */
		return;
	}
	ev = &slot->ev;
	id = bpf_get_current_pid_tgid();
	want = cfg->bytes < GS_SNAP_MAX ? cfg->bytes : GS_SNAP_MAX;
	ev->h.type = GS_EV_USTACK_SNAP;
	ev->h.ts = ts;
	ev->h.tid = (__u32)id;
	ev->h.tgid = id >> 32;
	ev->h.cpu = bpf_get_smp_processor_id();
	ev->h.flags = 0;
	ev->h.ustack_n = 0;
	ev->h.kstack_n = 0;
	ev->end_ns = end;
	ev->taken_ns = bpf_ktime_get_ns();
	ev->of_type = of_type;
	ev->want = want;
	ev->syscall = syscall;
	ev->zlen = 0;
	snap_regs(ev, regs);
	snap_uretprobes(ev, task);
	sp = ev->regs[GS_SNAP_REG_SP];
	for (int i = 0; i < GS_SNAP_MAX / 4096 + 1; i++) {
		__u32 chunk = 4096 - ((sp + n) & 4095);

		if (n >= want || n > GS_SNAP_MAX)
			break;
		if (chunk > want - n)
			chunk = want - n;
		/* Bounds the verifier must see next to the read (the compiler merges them). */
		barrier_var(chunk);
		barrier_var(n);
		if (!chunk || n > GS_SNAP_MAX)
			break;
		chunk = ((chunk - 1) & 4095) + 1;
		/*
		 * A page at the stack pointer the thread has not touched yet (the stack grew
		 * into it: sp moved, nothing written; a new thread or a freshly exec'ed image
		 * in its first instructions) is not present and cannot be read here, but holds
		 * zeros, which the failed read left in the slot. The pages above it are the
		 * callers' frames: read on. The first failure after a read page ends the stack.
		 */
		if (bpf_probe_read_user(&slot->stack[n], chunk, (void *)(sp + n))) {
			if (got)
				break;
		} else {
			got = n + chunk;
		}
		n += chunk;
	}
	n = got & ~7u;
	if (!n)
		count_loss(GS_LOSS_USNAP); /* the registers still give the innermost frame */
	ev->len = n;
	size = sizeof(*ev) + n;
	ev->h.size = size;
	if (size <= sizeof(*ev) + GS_SNAP_MAX &&
	    bpf_ringbuf_output(&events, ev, size, BPF_RB_NO_WAKEUP)) {
		__u32 type = GS_EV_USTACK_SNAP;
		__u64 *lost = bpf_map_lookup_elem(&lost_types, &type);

		count_loss(GS_LOSS_RINGBUF);
		if (lost)
			*lost += 1;
	}
	slot->busy = 0;
}
#else
/* Snapshots need the architecture's register layout: none elsewhere yet. */
static __always_inline void snap_take(__u32 of_type, __u64 ts, __u64 end, __s32 syscall, __u32 irq)
{
}
#endif

/* sched_switch: next's blocked interval [ts, end) in a system call was long: snapshot at its exit. */
static __always_inline void snap_mark(__u32 tid, __u64 ts, __u64 end, __s32 syscall)
{
	const struct snap_cfg *cfg = snap_config();
	struct snap_wait w = { .ts = ts, .end = end, .syscall = syscall };
	struct snap_wait *old;

	if (!cfg || end - ts < cfg->min_block_ns || syscall < 0)
		return;
	old = bpf_map_lookup_elem(&snap_pending, &tid);
	if (old && old->syscall == syscall)
		return; /* the same system call blocked long before: one snapshot serves both */
	if (bpf_map_update_elem(&snap_pending, &tid, &w, BPF_ANY))
		count_loss(GS_LOSS_MAP);
}

/* A system call returns (current thread): the snapshot a long block in it asked for. */
static __always_inline void snap_syscall_exit(long id)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct snap_wait *w = bpf_map_lookup_elem(&snap_pending, &tid);

	if (!w)
		return;
	if (w->syscall == id)
		snap_take(GS_EV_OFFCPU, w->ts, w->end, w->syscall, 0);
	bpf_map_delete_elem(&snap_pending, &tid);
}

#endif
