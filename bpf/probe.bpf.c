// SPDX-License-Identifier: GPL-2.0
/*
 * Generic function intervals: probe_entry on the first instruction, probe_return on return; the
 * cookie is the probe id. One event per call, emitted at return with the stack taken there: the
 * return address is then the program counter and the caller's frame pointer is restored, so the
 * frame-pointer walk starts at the immediate caller even when the probed function (libc) has no
 * frame pointer.
 */
#include "gapscope.bpf.h"
#include "offcpu.bpf.h"
#include "probe.h"
#include "snapshot.bpf.h"

char LICENSE[] SEC("license") = "GPL";

struct call_key {
	__u32 tid;
	__u32 id;
};

struct call_state {
	__u64 ts;
	__u64 caller;
	__u64 arg0;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GS_MAX_THREADS);
	__type(key, struct call_key);
	__type(value, struct call_state);
} probe_calls SEC(".maps"); /* not "calls": cuda.bpf.c has one, linked together */

SEC("uprobe")
int BPF_KPROBE(probe_entry)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct call_key key = { .tid = (__u32)id, .id = bpf_get_attach_cookie(ctx) };
	struct call_state s;

	if (!is_target(id >> 32))
		return 0;
	s.ts = bpf_ktime_get_ns();
	offcpu_resumed((__u32)id, id >> 32, s.ts); /* (offcpu.bpf.h) */
	s.caller = entry_caller(ctx);
	s.arg0 = PT_REGS_PARM1(ctx);
	if (bpf_map_update_elem(&probe_calls, &key, &s, BPF_ANY))
		count_loss(GS_LOSS_MAP);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(probe_return)
{
	__u64 now = bpf_ktime_get_ns(), id = bpf_get_current_pid_tgid();
	struct call_key key = { .tid = (__u32)id, .id = bpf_get_attach_cookie(ctx) };
	struct call_state *s;
	struct probe_event *ev;

	if (!is_target(id >> 32))
		return 0;
	offcpu_resumed((__u32)id, id >> 32, now);
	s = bpf_map_lookup_elem(&probe_calls, &key);
	if (!s)
		return 0; /* entered before the probe went live */
	snap_take(GS_EV_PROBE, s->ts, now, -1, 0);
	ev = reserve(sizeof(*ev) + sizeof(struct gs_stack), GS_EV_PROBE);
	if (ev) {
		fill_hdr(&ev->h, GS_EV_PROBE, sizeof(*ev) + sizeof(struct gs_stack), s->ts);
		ev->h.flags |= GS_F_RET;
		ev->id = key.id;
		ev->pad = 0;
		ev->dur_ns = now - s->ts;
		ev->caller = s->caller;
		ev->arg0 = s->arg0;
		ev->ret = PT_REGS_RC(ctx);
		take_ustack(ctx, &ev->h, (void *)(ev + 1));
		submit(ev);
	}
	bpf_map_delete_elem(&probe_calls, &key);
	return 0;
}

/* --lock-holds: pthread_mutex_lock entry and return, pthread_mutex_unlock entry. */
struct lock_wait {
	__u64 mutex;
	__u64 ts;
	__u64 caller;
};

struct lock_key {
	__u32 tid;
	__u32 pad;
	__u64 mutex;
};

struct lock_held {
	__u64 enter_ts;
	__u64 acq_ts;
	__u64 caller;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GS_MAX_THREADS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct lock_wait);
} lock_waits SEC(".maps");

/* A thread can hold several mutexes at once: keyed by thread and mutex. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4 * GS_MAX_THREADS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct lock_key);
	__type(value, struct lock_held);
} locks_held SEC(".maps");

SEC("uprobe")
int BPF_KPROBE(lock_entry)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct lock_wait w;

	if (!is_target(id >> 32))
		return 0;
	w.mutex = PT_REGS_PARM1(ctx);
	w.ts = bpf_ktime_get_ns();
	offcpu_resumed(tid, id >> 32, w.ts);
	w.caller = entry_caller(ctx);
	if (bpf_map_update_elem(&lock_waits, &tid, &w, BPF_ANY))
		count_loss(GS_LOSS_MAP);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(lock_return)
{
	__u64 id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns();
	__u32 tid = (__u32)id;
	struct lock_wait *w;

	if (!is_target(id >> 32))
		return 0;
	offcpu_resumed(tid, id >> 32, now);
	w = bpf_map_lookup_elem(&lock_waits, &tid);
	if (!w)
		return 0; /* entered before the probe went live */
	if (PT_REGS_RC(ctx) == 0) {
		struct lock_key key = { .tid = tid, .mutex = w->mutex };
		struct lock_held held = { .enter_ts = w->ts, .acq_ts = now, .caller = w->caller };

		if (bpf_map_update_elem(&locks_held, &key, &held, BPF_ANY))
			count_loss(GS_LOSS_MAP);
	}
	bpf_map_delete_elem(&lock_waits, &tid);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(unlock_entry)
{
	__u64 now = bpf_ktime_get_ns(), id = bpf_get_current_pid_tgid();
	struct lock_key key = { .tid = (__u32)id, .mutex = PT_REGS_PARM1(ctx) };
	struct lock_held *held;
	struct lock_event *ev;

	if (!is_target(id >> 32))
		return 0;
	offcpu_resumed((__u32)id, id >> 32, now);
	held = bpf_map_lookup_elem(&locks_held, &key);
	if (!held)
		return 0; /* taken before the probe went live, or by trylock/timedlock */
	ev = reserve(sizeof(*ev) + sizeof(struct gs_stack), GS_EV_LOCK);
	if (ev) {
		fill_hdr(&ev->h, GS_EV_LOCK, sizeof(*ev) + sizeof(struct gs_stack), held->acq_ts);
		ev->h.flags |= GS_F_ENTRY_STACK;
		ev->mutex = key.mutex;
		ev->wait_ns = held->acq_ts - held->enter_ts;
		ev->hold_ns = now - held->acq_ts;
		ev->lock_caller = held->caller;
		ev->unlock_caller = entry_caller(ctx);
		take_ustack(ctx, &ev->h, (void *)(ev + 1));
		submit(ev);
	}
	bpf_map_delete_elem(&locks_held, &key);
	return 0;
}
