/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Off-CPU state shared by the families that see a target thread run (offcpu.bpf.c keeps it;
 * futex.bpf.c, probe.bpf.c, cuda.bpf.c, sample.bpf.c and proc.bpf.c check it). The maps are
 * weak, as in gapscope.bpf.h.
 *
 * A thread switched out is in offs until sched_switch sees it switched back in. Some switches
 * never reach the tracepoint: on the 2-CPU VM this project is tested on, no switch away from the
 * threads of the machine's own init process reaches sched_switch, for ftrace's event as for a
 * BPF program, so the target thread that runs next resumes unseen. Left alone, its interval
 * would vanish at its next switch-out (a 181 ms futex sleep with no off-CPU time, beside two CPU
 * hogs). So whatever sees the thread running while it is still in offs (a futex call, a probed
 * function's entry or return, a CUDA call with a return or a name lookup, a tick, its exit, its
 * next switch-out) ends the interval there, as an event flagged GS_F_RESUME_UNSEEN: its end is
 * that first sign of running, at most a tick late where the tick sampler runs. Entry-only CUDA
 * calls (launches) do not look: theirs is the hot path, and an instant cannot break the nesting
 * of a thread's intervals.
 */
#ifndef GAPSCOPE_OFFCPU_BPF_H
#define GAPSCOPE_OFFCPU_BPF_H

#include "gapscope.bpf.h"
#include "offcpu.h"

/* A thread's last file fault (filemap:mm_filemap_fault), offcpu.bpf.c's filemap_fault. */
struct fault_last {
	__u64 ino;
	__u64 index;
	__u64 ts;
	__u32 dev;
	__u32 pad;
};

struct off_state {
	__u64 ts;
	__u32 state;
	__u32 prev_state;
	__u32 cpu;
	__s32 syscall;
	__u16 flags; /* OFFCPU_FD_* << OFFCPU_FD_SHIFT, OFFCPU_F_* */
	__u16 pad;
	__u32 next_tid; /* OFFCPU_F_NEXT: what the CPU switched to */
	__u32 next_tgid;
	char next_comm[GS_COMM_LEN];
	__u32 nr_cpus_allowed;
	__u64 cpus_allowed;
	struct fault_last fault; /* blocked in the fault path: its file fault, ts 0 none */
};

struct wake_state {
	__u64 ts;
	__u32 tid;
	__u32 tgid;
	char comm[GS_COMM_LEN];
	__u32 irq; /* made from a device's interrupt handler (offcpu.bpf.c's irq_ctx) */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GS_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct off_state);
} offs SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GS_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct wake_state);
} wakers SEC(".maps") __weak;

/*
 * When each target process began to be watched (tgid -> CLOCK_MONOTONIC ns, the loader's
 * bpf_setup__watch_tgid; gone with the process): a thread of it that switches in unseen
 * switching out, woken meanwhile, has been asleep since before then or since sched_switch went
 * live, the later of the two (offcpu.bpf.c's asleep_before).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GS_MAX_TGIDS);
	__type(key, __u32);
	__type(value, __u64);
} watched_since SEC(".maps") __weak;

/* The fixed part of an off-CPU event for thread tid of tgid, off since s->ts, until now. */
static __always_inline void offcpu_fill(struct offcpu_event *ev, const struct off_state *s,
					__u32 tid, __u32 tgid, __u64 now, __u32 cpu, __u16 flags)
{
	struct wake_state *w = bpf_map_lookup_elem(&wakers, &tid);

	ev->h.type = GS_EV_OFFCPU;
	ev->h.size = sizeof(*ev);
	ev->h.ts = s->ts;
	ev->h.tid = tid;
	ev->h.tgid = tgid;
	ev->h.cpu = s->cpu;
	ev->h.flags = flags | s->flags;
	ev->h.ustack_n = 0;
	ev->h.kstack_n = 0;
	ev->dur_ns = now - s->ts;
	ev->state = s->state;
	ev->prev_state = s->prev_state;
	ev->waker_tid = 0;
	ev->waker_tgid = 0;
	ev->wake_ts = 0;
	__builtin_memset(ev->waker_comm, 0, sizeof(ev->waker_comm));
	/* A wakeup recorded before this thread went off-CPU belongs to an earlier sleep. */
	ev->h.flags |= GS_F_WAKE_SEEN;
	if (w && w->ts >= s->ts) {
		if (w->irq)
			ev->h.flags |= GS_F_WAKE_IRQ;
		ev->waker_tid = w->tid;
		ev->waker_tgid = w->tgid;
		ev->wake_ts = w->ts;
		__builtin_memcpy(ev->waker_comm, w->comm, sizeof(ev->waker_comm));
	}
	ev->on_cpu = cpu;
	ev->syscall = s->syscall;
	ev->next_tid = s->next_tid;
	ev->next_tgid = s->next_tgid;
	__builtin_memcpy(ev->next_comm, s->next_comm, sizeof(ev->next_comm));
	ev->nr_cpus_allowed = s->nr_cpus_allowed;
	ev->pad = 0;
	ev->cpus_allowed = s->cpus_allowed;
	ev->last_tid = 0;
	ev->last_tgid = 0;
	__builtin_memset(ev->last_comm, 0, sizeof(ev->last_comm));
	ev->fault_ino = s->fault.ino;
	ev->fault_index = s->fault.index;
	ev->fault_ts = s->fault.ts;
	ev->fault_dev = s->fault.dev;
	ev->fault_pad = 0;
}

/*
 * The current thread (tid of tgid, a target's) is running at now (the calling event's own time,
 * so that the interval ends no later than that event starts): if it is still in offs, its
 * switch-in was not seen; end its interval there. The entry is copied and deleted before the
 * event is written, so that of two programs nested on one CPU (a tick inside a futex call's, a
 * switch-out inside a preempted uprobe program's) at most one writes it.
 */
static __always_inline void offcpu_resumed(__u32 tid, __u32 tgid, __u64 now)
{
	struct off_state *p = bpf_map_lookup_elem(&offs, &tid), s;
	struct offcpu_event *ev;

	if (!p)
		return;
	s = *p;
	if (bpf_map_delete_elem(&offs, &tid))
		return;
	ev = reserve(sizeof(*ev), GS_EV_OFFCPU);
	if (ev) {
		offcpu_fill(ev, &s, tid, tgid, now, bpf_get_smp_processor_id(), GS_F_RESUME_UNSEEN);
		submit(ev);
	}
	bpf_map_delete_elem(&wakers, &tid);
}

#endif
