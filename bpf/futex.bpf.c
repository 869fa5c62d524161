// SPDX-License-Identifier: GPL-2.0
/*
 * Futex waits by syscall tracepoints, not by uprobes on pthread_mutex_lock: an uncontended lock
 * never enters the kernel and so costs nothing here. Every wait command is recorded (WAIT,
 * WAIT_BITSET, LOCK_PI, LOCK_PI2, WAIT_REQUEUE_PI, futex_wait, futex_waitv); wakes are not: the
 * scheduler's sched_waking names the waker.
 */
#include "gapscope.bpf.h"
#include "futex.h"
#include "offcpu.bpf.h"
#include "snapshot.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Waits at least this long carry the waiter's user stack (set by the recorder). */
const volatile __u64 wait_stack_ns = 100000;

#define FUTEX_WAIT	      0
#define FUTEX_LOCK_PI	      6
#define FUTEX_WAIT_BITSET     9
#define FUTEX_WAIT_REQUEUE_PI 11
#define FUTEX_LOCK_PI2	      13
#define FUTEX_CMD_MASK	      127 /* ~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME) */
#define FUTEX_TID_MASK	      0x3fffffff

/* struct wait_state and the waits map: gapscope.bpf.h (sched_switch looks there too). */

static __always_inline bool is_pi(__u32 op)
{
	return op == FUTEX_LOCK_PI || op == FUTEX_LOCK_PI2;
}

static __always_inline int wait_enter(__u64 uaddr, __u32 op, __u32 val, __u32 sys, __u32 nr)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct wait_state s = {
		.ts = bpf_ktime_get_ns(),
		.uaddr = uaddr,
		.op = op,
		.val = val,
		.sys = sys,
		.nr = nr,
	};

	offcpu_resumed(tid, id >> 32, s.ts); /* it runs: no interval of its may still be open */
	bpf_probe_read_user(&s.word, sizeof(s.word), (void *)uaddr);
	if (is_pi(op)) {
		/* PI futex: the word itself holds the owner's tid. */
		s.owner = s.word & FUTEX_TID_MASK;
	} else {
		/*
		 * A glibc pthread_mutex_t waits on its first field, __lock; __owner (the holder's
		 * tid, set once the lock is taken) follows __count at offset 8 (struct
		 * __pthread_mutex_s, all ABIs). For a futex that is not a mutex (condvar, barrier,
		 * semaphore) this reads unrelated bytes, so readers trust it only when it names a
		 * thread of the target. A fault here is not a loss: the word may end a page.
		 */
		bpf_probe_read_user(&s.owner, sizeof(s.owner), (void *)(uaddr + 8));
	}
	if (bpf_map_update_elem(&waits, &tid, &s, BPF_ANY))
		count_loss(GS_LOSS_MAP);
	return 0;
}

static __always_inline int wait_exit(void *ctx, long id, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct wait_state *s = bpf_map_lookup_elem(&waits, &tid);
	const struct snap_cfg *cfg;
	struct futex_event *ev;
	__u64 now, dur;

	if (!s) {
		snap_syscall_exit(id);
		return 0;
	}
	now = bpf_ktime_get_ns();
	/* Back from the wait: had its switch-in gone unseen, its sleep ends here at the latest. */
	offcpu_resumed(tid, pid_tgid >> 32, now);
	dur = now - s->ts;
	cfg = snap_config();
	if (cfg && dur >= cfg->min_block_ns)
		snap_take(GS_EV_FUTEX, s->ts, now, -1, 0);
	if (dur >= wait_stack_ns)
		ev = reserve(sizeof(*ev) + sizeof(struct gs_stack), GS_EV_FUTEX);
	else
		ev = reserve(sizeof(*ev), GS_EV_FUTEX);
	if (ev) {
		fill_hdr(&ev->h, GS_EV_FUTEX, sizeof(*ev), s->ts);
		ev->uaddr = s->uaddr;
		ev->dur_ns = dur;
		ev->op = s->op;
		ev->val = s->val;
		ev->word = s->word;
		ev->owner = s->owner;
		ev->ret = ret;
		ev->sys = s->sys;
		ev->nr = s->nr;
		ev->pad = 0;
		if (dur >= wait_stack_ns) {
			/* Still in the syscall: the user stack is the waiter's. */
			ev->h.size += sizeof(struct gs_stack);
			take_ustack(ctx, &ev->h, (void *)(ev + 1));
		}
		submit(ev);
	}
	bpf_map_delete_elem(&waits, &tid);
	return 0;
}

/*
 * The generic raw syscall tracepoints, not tp/syscalls/sys_{enter,exit}_futex*: those are perf
 * events underneath, and each one's detach waits for its own RCU-tasks grace periods under the
 * kernel's event_mutex (~50 ms apiece, one after the other: 0.4 s per recorder exit for the
 * syscall tracepoints). The kernel runs the generic tracepoint for every syscall as soon as any
 * syscall tracepoint is on, so the dispatch on the syscall number here, first, adds little.
 */
#if defined(__TARGET_ARCH_arm64)
#define NR_futex	 98
#define SYSCALL_NR(regs) ((regs)->syscallno) /* tp_btf: a trusted pointer */
#else
#define NR_futex	 202
#define SYSCALL_NR(regs) ((regs)->orig_ax) /* tp_btf: a trusted pointer */
#endif
#define NR_futex_waitv 449 /* Linux 5.16 */
#define NR_futex_wait  455 /* Linux 6.7: futex_wait(uaddr, val, mask, flags, timeout, clockid) */

SEC("tp_btf/sys_enter")
int BPF_PROG(futex_sys_enter, struct pt_regs *regs, long id)
{
	if (id == NR_futex) {
		__u32 op = PT_REGS_PARM2_CORE_SYSCALL(regs) & FUTEX_CMD_MASK;

		if (op != FUTEX_WAIT && op != FUTEX_WAIT_BITSET && op != FUTEX_LOCK_PI &&
		    op != FUTEX_LOCK_PI2 && op != FUTEX_WAIT_REQUEUE_PI)
			return 0;
		if (!current_is_target())
			return 0;
		return wait_enter(PT_REGS_PARM1_CORE_SYSCALL(regs), op,
				  PT_REGS_PARM3_CORE_SYSCALL(regs), FUTEX_SYS_FUTEX, 1);
	}
	if (id == NR_futex_wait) {
		if (!current_is_target())
			return 0;
		return wait_enter(PT_REGS_PARM1_CORE_SYSCALL(regs), FUTEX_WAIT_BITSET,
				  PT_REGS_PARM2_CORE_SYSCALL(regs), FUTEX_SYS_WAIT, 1);
	}
	if (id == NR_futex_waitv) {
		/* futex_waitv(waiters, nr_futexes, flags, timeout, clockid): struct futex_waitv
		 * is { u64 val; u64 uaddr; u32 flags; u32 reserved; }; the first waiter stands
		 * for the set. */
		__u64 w[2] = {};

		if (!current_is_target())
			return 0;
		if (bpf_probe_read_user(w, sizeof(w), (void *)PT_REGS_PARM1_CORE_SYSCALL(regs)))
			count_loss(GS_LOSS_READ);
		return wait_enter(w[1], FUTEX_WAIT, w[0], FUTEX_SYS_WAITV,
				  PT_REGS_PARM2_CORE_SYSCALL(regs));
	}
	return 0;
}

/*
 * Only a thread with a wait (or a snapshot) pending gets past the lookup: no tgid check needed.
 */
SEC("tp_btf/sys_exit")
int BPF_PROG(futex_sys_exit, struct pt_regs *regs, long ret)
{
	long id = SYSCALL_NR(regs);

	if (id != NR_futex && id != NR_futex_wait && id != NR_futex_waitv) {
		snap_syscall_exit(id); /* a long block in another system call */
		return 0;
	}
	return wait_exit(ctx, id, ret);
}
