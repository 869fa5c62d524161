/* SPDX-License-Identifier: GPL-2.0 */
/*
 * BPF-only helpers shared by every probe family. Each object defines the same shared maps, weak:
 * the build links the families into one object (bpf/bpf.mk, `bpftool gen object`), where each
 * becomes a single map, so all families write into one ring buffer, filter by one tgid set and
 * count losses in one place, and the recorder loads one object (one parse of the kernel's BTF).
 */
#ifndef GAPSCOPE_BPF_H
#define GAPSCOPE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "gapscope.h"

/* All events, in submission order. Sized by the recorder (bpf_map__set_max_entries). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} events SEC(".maps") __weak;

/* Target processes (tgid -> 1). Threads are covered by their tgid. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GS_MAX_TGIDS);
	__type(key, __u32);
	__type(value, __u32);
} tgids SEC(".maps") __weak;

/* Futex waits in progress, by thread (futex.bpf.c); sched_switch skips the kernel stack of an
 * off-CPU interval inside one: the futex event already says why the thread slept. */
struct wait_state {
	__u64 ts;
	__u64 uaddr;
	__u32 op;
	__u32 val;
	__u32 word;
	__u32 owner;
	__u32 sys;
	__u32 nr;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GS_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct wait_state);
} waits SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, GS_LOSS_MAX);
	__type(key, __u32);
	__type(value, __u64);
} losses SEC(".maps") __weak;

/* Ring-buffer losses by event type (GS_EV_*): what a full buffer cost, kind by kind. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, GS_EV_MAX);
	__type(key, __u32);
	__type(value, __u64);
} lost_types SEC(".maps") __weak;

static __always_inline void count_loss(__u32 what)
{
	__u64 *n = bpf_map_lookup_elem(&losses, &what);

	if (n)
		*n += 1; /* per-CPU slot: no atomics needed */
}

static __always_inline bool is_target(__u32 tgid)
{
	return bpf_map_lookup_elem(&tgids, &tgid) != NULL;
}

static __always_inline bool current_is_target(void)
{
	return is_target(bpf_get_current_pid_tgid() >> 32);
}

/*
 * Reserve an event of constant size; a full ring buffer is a counted loss, never silent, counted
 * also by event type so that "generated = recorded + lost" can be checked per kind.
 */
static __always_inline void *reserve(__u32 size, __u32 type)
{
	void *ev = bpf_ringbuf_reserve(&events, size, 0);

	if (!ev) {
		__u64 *n = bpf_map_lookup_elem(&lost_types, &type);

		count_loss(GS_LOSS_RINGBUF);
		if (n)
			*n += 1;
	}
	return ev;
}

/*
 * Waking the recorder for every event would have it preempt the very threads it records, each
 * preemption an event that wakes it again. So events are submitted quietly and the recorder
 * polls (every 50 ms); only a filling buffer wakes it. submit_now() is for the rare events the
 * recorder must act on at once (a thread stopped for a late attach, a new process image).
 */
#define GS_WAKEUP_BYTES (512 << 10)

static __always_inline void submit(void *ev)
{
	__u64 flags = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= GS_WAKEUP_BYTES ?
			      BPF_RB_FORCE_WAKEUP :
			      BPF_RB_NO_WAKEUP;

	bpf_ringbuf_submit(ev, flags);
}

static __always_inline void submit_now(void *ev)
{
	bpf_ringbuf_submit(ev, BPF_RB_FORCE_WAKEUP);
}

static __always_inline void fill_hdr(struct gs_hdr *h, __u32 type, __u32 size, __u64 ts)
{
	__u64 id = bpf_get_current_pid_tgid();

	h->type = type;
	h->size = size;
	h->ts = ts;
	h->tid = (__u32)id;
	h->tgid = id >> 32;
	h->cpu = bpf_get_smp_processor_id();
	h->flags = 0;
	h->ustack_n = 0;
	h->kstack_n = 0;
}

/*
 * The user stack by frame pointers, from the registers the task entered the kernel with (the
 * uprobe's trap, the system call, the interrupt): the ip, then each frame's return address.
 * It is the walk bpf_get_stack(BPF_F_USER_STACK) makes, made here because the helper costs
 * ~1.5 us a frame on the virtual machines we run on, where a 16-byte user read costs ~0.03 us
 * (tests/bench/results.txt). A frame pointer must point up the stack, 8-aligned, to readable
 * memory; the walk stops at the first that does not, or at a zero return address. As in the
 * kernel's walk, a return address a pending uretprobe replaced is put back.
 */
static __always_inline void take_ustack(void *ctx, struct gs_hdr *h, struct gs_stack *st)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct return_instance *ri = NULL;
	struct xol_area *xol;
	__u64 fp, tramp = 0;
	__u32 n = 0;

	h->flags |= GS_F_STACK;
	if (!regs || !BPF_CORE_READ(task, mm))
		return; /* a kernel thread, or an exiting task: no user stack */
	/* Where the kernel's uprobe structures differ, no put-back rather than no load. */
	xol = bpf_core_field_exists(ri->orig_ret_vaddr) && bpf_core_field_exists(ri->chained) &&
			      bpf_core_field_exists(task->utask) ?
		      BPF_CORE_READ(task, mm, uprobes_state.xol_area) :
		      NULL;
	if (xol) {
		tramp = BPF_CORE_READ(xol, vaddr);
		ri = BPF_CORE_READ(task, utask, return_instances);
	}
	st->user[0] = PT_REGS_IP_CORE(regs);
	fp = PT_REGS_FP_CORE(regs);
	n = 1;
	for (int i = 1; i < GS_USTACK_MAX; i++) {
		__u64 frame[2]; /* saved frame pointer, return address */

		if (!fp || (fp & 7) || bpf_probe_read_user(frame, sizeof(frame), (void *)fp))
			break;
		if (!frame[1])
			break;
		if (tramp && frame[1] == tramp && ri) {
			/*
			 * A return address a pending uretprobe replaced with its trampoline: the
			 * task's return instances hold the replaced ones, newest first, the way
			 * the stack holds the trampolines (a chained one, made by a tail call,
			 * shares its slot with the next).
			 */
			bool chained = BPF_CORE_READ(ri, chained);

			frame[1] = BPF_CORE_READ(ri, orig_ret_vaddr);
			ri = BPF_CORE_READ(ri, next);
			if (chained && ri)
				ri = BPF_CORE_READ(ri, next);
		}
		st->user[i] = frame[1];
		n = i + 1;
		if (frame[0] <= fp)
			break; /* frames must go up the stack */
		fp = frame[0];
	}
	h->ustack_n = n;
}

static __always_inline void take_kstack(void *ctx, struct gs_hdr *h, struct gs_stack *st)
{
	long n = bpf_get_stack(ctx, st->kern, sizeof(st->kern), 0);

	if (n < 0) {
		count_loss(GS_LOSS_KSTACK);
		n = 0;
	}
	h->kstack_n = n / sizeof(__u64);
	h->flags |= GS_F_STACK;
}

/*
 * At a function's first instruction the return address is at the stack pointer and the frame
 * pointer still belongs to the caller, so a frame-pointer walk skips the immediate caller. Read
 * it here so that frame survives (also inside libraries built without frame pointers).
 */
static __always_inline __u64 entry_caller(struct pt_regs *regs)
{
	__u64 ret = 0;

	if (bpf_probe_read_user(&ret, sizeof(ret), (void *)PT_REGS_SP(regs)))
		count_loss(GS_LOSS_READ);
	return ret;
}

#endif
