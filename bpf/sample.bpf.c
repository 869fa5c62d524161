// SPDX-License-Identifier: GPL-2.0
/*
 * CPU samples of the target's threads, by one of two samplers (gapscope record --sampler):
 *
 * tick (default): the scheduler tick, which interrupts every busy CPU CONFIG_HZ times a second
 *   whether or not anyone samples. tick_sample() runs at the tick's hrtimer expiry and takes the
 *   sample the interrupt already paid for, at most freq times a second per CPU. No interrupt is
 *   added: in a virtual machine each one costs a timer reprogramming and an exit to the host,
 *   ~50 us on the 2-CPU VM this project is tested on (tests/bench/results.txt).
 *
 * timer: one software cpu-clock perf event per CPU with a period of 1/freq s (cpu_sample()):
 *   any frequency, one extra interrupt per sample.
 *
 * Either way the sample carries the interrupted instruction, the user stack and, for a sample
 * in the kernel, the kernel stack from the interrupted frame down: the same event.
 */
#include "gapscope.bpf.h"
#include "offcpu.bpf.h"
#include "sample.h"
#include "snapshot.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the recorder after load, from /proc/kallsyms. Zero keeps tick_sample() idle. */
__u64 tick_fn;	    /* the tick's hrtimer function: tick_nohz_handler (tick_sched_timer < 6.9) */
__u64 irq_entry_lo; /* [lo, hi): asm_sysvec_apic_timer_interrupt, the interrupt's entry */
__u64 irq_entry_hi;
__u64 tick_period_ns; /* 1e9 / freq: the least time between two samples on one CPU */
__u64 ticks_seen;     /* ticks told from other hrtimers (racy count: zero or not is what counts) */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tick_state);
} tick_states SEC(".maps");

SEC("perf_event")
int cpu_sample(struct bpf_perf_event_data *ctx)
{
	struct sample_event *ev;

	__u64 now = bpf_ktime_get_ns();

	if (!current_is_target())
		return 0;
	snap_take(GS_EV_SAMPLE, now, now, -1, 1);
	ev = reserve(sizeof(*ev) + sizeof(struct gs_stack), GS_EV_SAMPLE);
	if (!ev)
		return 0;
	fill_hdr(&ev->h, GS_EV_SAMPLE, sizeof(*ev) + sizeof(struct gs_stack), now);
	ev->ip = PT_REGS_IP(&ctx->regs);
	/* A sample in user mode has no kernel stack: bpf_get_stack returns 0 frames then. */
	take_kstack(ctx, &ev->h, (void *)(ev + 1));
	take_ustack(ctx, &ev->h, (void *)(ev + 1));
	submit(ev);
	return 0;
}

/*
 * The kernel stack seen from the tick runs through the interrupt's own frames (hrtimer_interrupt,
 * ..., asm_sysvec_apic_timer_interrupt) into the interrupted ones, if the CPU was in the kernel.
 * Drop the interrupt's frames: returns the interrupted kernel frames left, 0 for a sample in user
 * mode, or -1 when no entry frame is there (then the stack is left whole).
 */
static __always_inline int strip_irq_frames(struct gs_hdr *h, struct gs_stack *st)
{
	__u32 n = h->kstack_n, cut = 0;

	for (__u32 i = 0; i < GS_KSTACK_MAX; i++) {
		if (i >= n)
			return -1;
		if (st->kern[i] >= irq_entry_lo && st->kern[i] < irq_entry_hi) {
			cut = i + 1;
			break;
		}
	}
	if (!cut)
		return -1;
	for (__u32 j = 0; j < GS_KSTACK_MAX; j++) {
		__u32 k = j + cut;

		if (k >= n || k >= GS_KSTACK_MAX)
			break;
		st->kern[j] = st->kern[k];
	}
	h->kstack_n = n - cut;
	return h->kstack_n;
}

static __always_inline bool is_tick(struct hrtimer *timer)
{
	/* A kernel whose hrtimer has no function field leaves the sampler idle, not unloadable. */
	return bpf_core_field_exists(timer->function) && tick_fn &&
	       (__u64)BPF_CORE_READ(timer, function) == tick_fn;
}

/*
 * The tick's start: count it (the tick's rate), and choose whether it samples (a target thread
 * on the CPU, at most freq a second). The sample is taken at the tick's end, in tick_taken().
 */
SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(tick_sample, struct hrtimer *timer, ktime_t *now)
{
	struct task_struct *task;
	struct tick_state *s;
	__u32 zero = 0;
	__u64 t, id;

	if (!is_tick(timer))
		return 0;
	s = bpf_map_lookup_elem(&tick_states, &zero);
	if (!s)
		return 0;
	ticks_seen++;
	t = bpf_ktime_get_ns();
	for (int i = 0; i < GS_TICK_HZ_N; i++) {
		__u64 p = 1000000000ull / gs_tick_hz[i], dt = t - s->last;

		if (dt > p - p / 20 && dt < p + p / 20)
			s->hz_hits[i]++;
	}
	s->last = t;
	s->pending_ts = 0;
	id = bpf_get_current_pid_tgid();
	if (!is_target(id >> 32))
		return 0;
	offcpu_resumed((__u32)id, id >> 32, t); /* on the CPU: no interval of its is open */
	if (t < s->next)
		return 0;
	/* Keep the phase, so that freq below HZ is met on average; after an idle spell, no burst. */
	s->next += tick_period_ns;
	if (s->next <= t)
		s->next = t + tick_period_ns;
	task = bpf_get_current_task_btf();
	s->pending_ts = t;
	s->pending_tid = task->pid;
	s->utime = task->utime;
	s->stime = task->stime;
	return 0;
}

/*
 * The tick's end. Whether it interrupted user or kernel mode, the tick has just told the
 * kernel's own accounting: it charged a tick to the task's utime or stime (tick-based CPU
 * accounting). So only a sample in the kernel walks the kernel stack, which for a sample in user
 * mode would be the interrupt's own seven frames, most of a sample's cost in a virtual machine.
 * (Guessing the mode from the task's entry registers, orig_ax -1 for an interrupt, is wrong:
 * in a PVM guest a page fault enters with -1 too.) Where the accounting is not tick-based
 * (VIRT_CPU_ACCOUNTING, or irq time taken out), neither moved, and the walk decides.
 */
SEC("tp_btf/hrtimer_expire_exit")
int BPF_PROG(tick_taken, struct hrtimer *timer)
{
	struct sample_event *ev;
	struct task_struct *task;
	struct tick_state *s;
	struct pt_regs *regs;
	__u32 zero = 0;
	int user;

	if (!is_tick(timer))
		return 0;
	s = bpf_map_lookup_elem(&tick_states, &zero);
	if (!s || !s->pending_ts)
		return 0;
	task = bpf_get_current_task_btf();
	if (task->pid != s->pending_tid) {
		s->pending_ts = 0;
		return 0;
	}
	user = task->utime != s->utime ? 1 : task->stime != s->stime ? 0 : -1;
	snap_take(GS_EV_SAMPLE, s->pending_ts, s->pending_ts, -1, 1);
	ev = reserve(sizeof(*ev) + sizeof(struct gs_stack), GS_EV_SAMPLE);
	if (!ev) {
		s->pending_ts = 0;
		return 0;
	}
	fill_hdr(&ev->h, GS_EV_SAMPLE, sizeof(*ev) + sizeof(struct gs_stack), s->pending_ts);
	s->pending_ts = 0;
	ev->h.flags |= GS_F_TICK;
	if (user != 1) {
		/* The interrupt's frames, then the interrupted ones, which stay; none: user mode. */
		take_kstack(ctx, &ev->h, (void *)(ev + 1));
		if (strip_irq_frames(&ev->h, (void *)(ev + 1)) <= 0)
			user = 1;
	}
	if (user != 1) {
		ev->ip = ((struct gs_stack *)(ev + 1))->kern[0];
	} else {
		/* In user mode: the registers the interrupt saved at the top of the task's stack. */
		regs = (struct pt_regs *)bpf_task_pt_regs(task);
		ev->ip = regs ? BPF_CORE_READ(regs, ip) : 0;
	}
	/* From a tracepoint the user stack is walked from those same saved registers. */
	take_ustack(ctx, &ev->h, (void *)(ev + 1));
	submit(ev);
	return 0;
}
