// SPDX-License-Identifier: GPL-2.0
/*
 * Off-CPU intervals from sched_switch, wakers from sched_waking. A thread switched out while still
 * runnable was preempted (or yielded); one switched out in a sleeping state was blocked, and the
 * task that woke it is the next hop of a blame chain. tp_btf gives both task_structs directly.
 */
#include "offcpu.bpf.h"
#include "snapshot.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Blocked intervals at least this long carry the sleeper's kernel stack (set by the recorder). */
const volatile __u64 stack_min_ns = 100000;

#define TASK_RUNNING 0

#if defined(__TARGET_ARCH_arm64)
#define SYSCALL_NR(regs) ((regs)->syscallno)
#else
#define SYSCALL_NR(regs) ((regs)->orig_ax)
#endif

#define TASK_DEAD 0x80 /* its last switch-out: it never comes back */
#define EEXIST	  17

/*
 * What a blocking system call waits on, where its first argument is a file descriptor: the
 * file's type from its inode, and for anonymous inodes (eventfd, epoll, timerfd, signalfd) the
 * name their files carry ("[eventfd]"). x86-64 system call numbers; elsewhere none is named.
 */
static __always_inline __u16 fd_kind(struct task_struct *task, __s32 nr, struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_x86)
	struct file **fds, *f;
	struct fdtable *fdt;
	unsigned int max, mode;
	char name[12] = {};
	__u64 fd;

	switch (nr) {
	case 0:	  /* read */
	case 1:	  /* write */
	case 19:  /* readv */
	case 20:  /* writev */
	case 42:  /* connect */
	case 43:  /* accept */
	case 44:  /* sendto */
	case 45:  /* recvfrom */
	case 46:  /* sendmsg */
	case 47:  /* recvmsg */
	case 232: /* epoll_wait */
	case 281: /* epoll_pwait */
	case 288: /* accept4 */
	case 441: /* epoll_pwait2 */
		break;
	default:
		return OFFCPU_FD_NONE;
	}
	fd = regs->di;
	fdt = BPF_CORE_READ(task, files, fdt);
	if (!fdt)
		return OFFCPU_FD_NONE;
	max = BPF_CORE_READ(fdt, max_fds);
	fds = BPF_CORE_READ(fdt, fd);
	if (fd >= max || !fds || bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f)
		return OFFCPU_FD_NONE;
	mode = BPF_CORE_READ(f, f_inode, i_mode) & 0170000;
	switch (mode) {
	case 0010000:
		return OFFCPU_FD_PIPE;
	case 0140000:
		return OFFCPU_FD_SOCKET;
	case 0100000:
		return OFFCPU_FD_FILE;
	case 0020000:
	case 0060000:
		return OFFCPU_FD_DEVICE;
	}
	bpf_probe_read_kernel_str(name, sizeof(name), BPF_CORE_READ(f, f_path.dentry, d_name.name));
	if (name[0] != '[')
		return OFFCPU_FD_OTHER;
	if (name[1] == 'e' && name[2] == 'v' && name[5] == 't' && name[6] == 'f')
		return OFFCPU_FD_EVENTFD; /* [eventfd] */
	if (name[1] == 'e' && name[2] == 'v' && name[5] == 't' && name[6] == 'p')
		return OFFCPU_FD_EPOLL; /* [eventpoll] */
	if (name[1] == 't' && name[2] == 'i')
		return OFFCPU_FD_TIMERFD;
	if (name[1] == 's' && name[2] == 'i')
		return OFFCPU_FD_SIGNALFD;
	return OFFCPU_FD_OTHER;
#else
	return OFFCPU_FD_NONE;
#endif
}

/*
 * Who held a CPU while a target thread switched out there stood runnable: the task that ran
 * there longest in all meanwhile (the first task to run, or the last, is often a short
 * interruption: an interrupt thread, a real-time waker; and a hog of greater weight runs more
 * often, not longer at a time). The run time of up to HOLD_TOP tasks is summed; a task not
 * among them takes the place of the one with the least where its run alone is longer. One
 * waiter a CPU, the latest: an earlier one still waiting is left with the first task only.
 */
#define HOLD_TOP 4

struct hold_task {
	__u64 ns;
	__u32 tid;
	__u32 tgid;
	char comm[GS_COMM_LEN];
};

struct cpu_hold {
	__u64 since;  /* the current task's run on this CPU began */
	__u32 waiter; /* the target thread it is kept for, 0: none */
	__u32 pad;
	struct hold_task top[HOLD_TOP];
};

static __always_inline void hold_add(struct cpu_hold *h, struct task_struct *p, __u32 tid, __u64 ns)
{
	__u32 least = 0;

	for (__u32 i = 0; i < HOLD_TOP; i++) {
		if (h->top[i].tid == tid && h->top[i].ns) {
			h->top[i].ns += ns;
			return;
		}
		if (h->top[i].ns < h->top[least].ns)
			least = i;
	}
	if (least < HOLD_TOP && ns > h->top[least].ns) {
		h->top[least].ns = ns;
		h->top[least].tid = tid;
		h->top[least].tgid = p->tgid;
		__builtin_memcpy(h->top[least].comm, p->comm, GS_COMM_LEN);
	}
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_hold);
} cpu_holds SEC(".maps");

/*
 * Whether a task's CPU controller hierarchy is throttled by a quota (cpu.max, cfs_quota_us): its
 * cfs_rq's throttle_count counts the throttled levels above and at it; since Linux 6.18 a task
 * also has a throttled flag, set as it leaves for user mode with its hierarchy throttled and
 * switches out still runnable. Neither exists without CONFIG_CFS_BANDWIDTH (or group
 * scheduling): then nothing is known, and the report falls back on the CPU going idle and the
 * cgroup's cpu.stat. Plain loads through tp_btf's trusted task pointer.
 */
static __always_inline __u16 throttle_flags(struct task_struct *p)
{
	__u16 f = 0;

	if (bpf_core_field_exists(p->throttled)) {
		f = OFFCPU_F_THROTTLE_KNOWN;
		if (p->throttled)
			return f | OFFCPU_F_THROTTLED;
	}
	if (bpf_core_field_exists(p->se.cfs_rq) &&
	    bpf_core_field_exists(struct cfs_rq, throttle_count)) {
		struct cfs_rq *rq = p->se.cfs_rq;

		if (rq) {
			f = OFFCPU_F_THROTTLE_KNOWN;
			if (rq->throttle_count > 0)
				f |= OFFCPU_F_THROTTLED;
		}
	}
	return f;
}

/*
 * A thread's last file fault, while it lasts: filemap_fault's tracepoint fires before it looks
 * the page up and, for a page not cached, sleeps on its read; the switch-out that follows takes
 * it (and deletes it). LRU: a thread whose faults never sleep leaves its entry behind.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct fault_last);
} fault_lasts SEC(".maps");

/*
 * When each thread's last fault sleep took a user stack snapshot: at most one a thread every
 * FAULT_SNAP_GAP_NS. A fault on a fast disk sleeps ~30 us: a snapshot (16 KiB by default) at
 * each of 20k a second would be 300 MiB/s through the ring; the report names a sleep without
 * one by the thread's last fault that had one (reports/analysis/blame.c's fault_row).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} fault_snaps SEC(".maps");

#define FAULT_SNAP_GAP_NS (1000ull * 1000)

/*
 * A file fault older than this at the switch-out is not the one it sleeps in: between the
 * tracepoint and the sleep a fault allocates the page and starts its read (microseconds; more
 * where it was preempted meanwhile).
 */
#define FAULT_RECENT_NS (20ull * 1000 * 1000)

/*
 * filemap:mm_filemap_fault (Linux 6.11+): a fault of a file mapping that the page tables could
 * not serve from the page cache's mapped pages, the file and the page's index. It fires for the
 * faults of every process: the recorded ones are kept, the others leave at the first lookup.
 * Where the kernel lacks it, the recorder leaves it out (a failed attach, counted).
 */
SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(filemap_fault, struct address_space *mapping, unsigned long index)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct fault_last f = {};
	__u32 tid = (__u32)id;

	if (!is_target(id >> 32))
		return 0;
	f.ino = BPF_CORE_READ(mapping, host, i_ino);
	f.dev = BPF_CORE_READ(mapping, host, i_sb, s_dev);
	f.index = index;
	f.ts = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&fault_lasts, &tid, &f, BPF_ANY))
		count_loss(GS_LOSS_MAP);
	return 0;
}

/* When sched_switch went live (the loader's, after attaching; 0 until then). */
__u64 sched_live_ns;

/*
 * A thread asleep since before it could be seen switching out, now switched in: its wakeup
 * (who, when, from an interrupt) is the news, above all the first one after attaching of a
 * driver's thread that the GPU's interrupt wakes. OFFCPU_F_ASLEEP_BEFORE, from when it was
 * first watched. A wakeup is taken once: a new thread's first run has none (wake_up_new_task
 * reports no sched_waking).
 */
static __always_inline void asleep_before(__u32 tid, __u32 tgid, __u64 now, __u32 cpu)
{
	struct wake_state *w = bpf_map_lookup_elem(&wakers, &tid);
	__u64 *since = bpf_map_lookup_elem(&watched_since, &tgid), live = sched_live_ns;
	struct off_state s = {};
	struct offcpu_event *ev;

	if (!w || !since || !live)
		return;
	s.ts = *since > live ? *since : live;
	if (w->ts < s.ts || s.ts >= now)
		return; /* woken before it was watched: a sleep that ended unseen */
	s.state = OFFCPU_BLOCKED;
	s.cpu = cpu;
	s.syscall = OFFCPU_NO_SYSCALL;
	s.flags = OFFCPU_F_ASLEEP_BEFORE;
	ev = reserve(sizeof(*ev), GS_EV_OFFCPU);
	if (ev) {
		offcpu_fill(ev, &s, tid, tgid, now, cpu, 0);
		submit(ev);
	}
	bpf_map_delete_elem(&wakers, &tid);
}

/*
 * prev_state is the tracepoint's own argument (Linux 5.18+) rather than prev->__state: a
 * concurrent wakeup may already have set __state back to TASK_RUNNING while the switch
 * proceeds, which would misreport a block as a preemption.
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	/*
	 * This runs at every context switch of the machine: tp_btf's task pointers are trusted,
	 * so their fields are plain loads here, no helper calls.
	 */
	__u64 now = bpf_ktime_get_ns();
	__u32 cpu = bpf_get_smp_processor_id();
	__u32 prev_tid = prev->pid, next_tid = next->pid, zero = 0;
	struct cpu_hold *hold = bpf_map_lookup_elem(&cpu_holds, &zero);

	if (hold) {
		/* prev's run here ends: counted while a thread waits (idle is not a holder). */
		if (hold->waiter && prev_tid && prev_tid != hold->waiter)
			hold_add(hold, prev, prev_tid, now - hold->since);
		hold->since = now;
	}

	if (prev_state != TASK_DEAD && is_target(prev->tgid)) {
		struct off_state s = { .ts = now, .prev_state = prev_state, .cpu = cpu };

		s.state = (preempt || prev_state == TASK_RUNNING) ? OFFCPU_PREEMPTED :
								    OFFCPU_BLOCKED;
		s.syscall = OFFCPU_NO_SYSCALL;
		if (s.state == OFFCPU_BLOCKED) {
			/*
			 * Why it sleeps: the system call it entered the kernel with, from the
			 * registers saved at that entry (a load, no helper). An interrupt or an
			 * exception enters with -1 (x86-64's entry code sets it once it has taken a
			 * page fault's error code from there): a fault's sleep reads as none, here
			 * and on the H200's machine alike.
			 */
			struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(prev);
			struct fault_last *f = bpf_map_lookup_elem(&fault_lasts, &prev_tid);

			if (regs) {
				s.syscall = (__s32)SYSCALL_NR(regs);
				s.flags = fd_kind(prev, s.syscall, regs) << OFFCPU_FD_SHIFT;
			}
			/*
			 * Outside a system call, in an uninterruptible sleep (killable or not): a
			 * fault's (I/O, the mmap lock), not a stop's or a signal's.
			 */
			bool faulting = s.syscall < 0 && (prev_state & OFFCPU_TASK_UNINTERRUPTIBLE);

			if (f) {
				/* The file and page it sleeps on, where the fault began just now. */
				if (faulting && now - f->ts < FAULT_RECENT_NS)
					s.fault = *f;
				bpf_map_delete_elem(&fault_lasts, &prev_tid);
			}
			/*
			 * No system call's return will take its user stack, and it is still
			 * current here: taken now, at the instruction that touched the memory.
			 * Whether the sleep is long is not known yet: one a millisecond a thread.
			 */
			if (faulting) {
				__u64 *last = bpf_map_lookup_elem(&fault_snaps, &prev_tid);

				if (!last || now - *last >= FAULT_SNAP_GAP_NS) {
					if (last)
						*last = now;
					else
						bpf_map_update_elem(&fault_snaps, &prev_tid, &now,
								    BPF_ANY);
					snap_take(GS_EV_OFFCPU, now, now, OFFCPU_NO_SYSCALL, 0);
				}
			}
		} else {
			/*
			 * Runnable: what takes its place (idle is pid 0: nothing did, the CPU had
			 * no other work it could run), and whether a quota stopped it. A report
			 * then tells preemption from throttling.
			 */
			s.flags = OFFCPU_F_NEXT | throttle_flags(prev);
			s.next_tid = next_tid;
			s.next_tgid = next->tgid;
			__builtin_memcpy(s.next_comm, next->comm, sizeof(s.next_comm));
			/* Where it could have run instead: preempted on every CPU it may use. */
			s.nr_cpus_allowed = prev->nr_cpus_allowed;
			s.cpus_allowed = prev->cpus_mask.bits[0];
			if (hold) {
				hold->waiter = prev_tid;
				for (__u32 i = 0; i < HOLD_TOP; i++)
					hold->top[i].ns = 0;
			}
		}
		long err = bpf_map_update_elem(&offs, &prev_tid, &s, BPF_NOEXIST);

		if (err == -EEXIST) {
			/* It ran since its last switch-out, but its switch-in went unseen. */
			offcpu_resumed(prev_tid, prev->tgid, now);
			err = bpf_map_update_elem(&offs, &prev_tid, &s, BPF_ANY);
		}
		if (err)
			count_loss(GS_LOSS_MAP);
	}

	__u32 next_tgid = next->tgid;

	if (!is_target(next_tgid))
		return 0;
	struct off_state *s = bpf_map_lookup_elem(&offs, &next_tid);

	if (!s) {
		/* first run of a new thread, or switched out before we started */
		asleep_before(next_tid, next_tgid, now, cpu);
		return 0;
	}
	__u64 dur = now - s->ts;
	/* Every fault's sleep (outside a system call, uninterruptible) says where it slept. */
	bool stack = s->state == OFFCPU_BLOCKED &&
		     (dur >= stack_min_ns ||
		      (s->syscall < 0 && (s->prev_state & OFFCPU_TASK_UNINTERRUPTIBLE)));
	bool in_futex = s->state == OFFCPU_BLOCKED && bpf_map_lookup_elem(&waits, &next_tid);
	struct offcpu_event *ev;

	if (in_futex)
		stack = false; /* futex_wait_queue <- ... <- futex syscall: the futex event has it */
	else if (s->state == OFFCPU_BLOCKED) /* its user stack, at the syscall's exit */
		snap_mark(next_tid, s->ts, now, s->syscall);

	if (stack)
		ev = reserve(sizeof(*ev) + sizeof(struct gs_stack), GS_EV_OFFCPU);
	else
		ev = reserve(sizeof(*ev), GS_EV_OFFCPU);
	if (ev) {
		offcpu_fill(ev, s, next_tid, next_tgid, now, cpu, in_futex ? GS_F_IN_FUTEX : 0);
		if ((s->flags & OFFCPU_F_NEXT) && hold && hold->waiter == next_tid) {
			/* Back where it waited: who held the CPU longest meanwhile. */
			__u32 best = 0;

			for (__u32 i = 1; i < HOLD_TOP; i++)
				if (hold->top[i].ns > hold->top[best].ns)
					best = i;
			if (best < HOLD_TOP && hold->top[best].ns) {
				ev->last_tid = hold->top[best].tid;
				ev->last_tgid = hold->top[best].tgid;
				__builtin_memcpy(ev->last_comm, hold->top[best].comm,
						 sizeof(ev->last_comm));
			}
		}
		if (stack) {
			/*
			 * next is still inside __schedule, its kernel stack intact: where it slept
			 * (I/O, page fault, futex, ...). Its user stack cannot be read from here
			 * (another task's), the futex event carries that for lock waits.
			 */
			struct gs_stack *st = (void *)(ev + 1);
			long n = bpf_get_task_stack(next, st->kern, sizeof(st->kern), 0);

			if (n < 0) {
				count_loss(GS_LOSS_KSTACK);
				n = 0;
			}
			ev->h.size += sizeof(struct gs_stack);
			ev->h.kstack_n = n / sizeof(__u64);
			ev->h.flags |= GS_F_STACK;
		}
		submit(ev);
	}
	if (hold && hold->waiter == next_tid)
		hold->waiter = 0;
	bpf_map_delete_elem(&offs, &next_tid);
	bpf_map_delete_elem(&wakers, &next_tid);
	return 0;
}

/*
 * Per CPU: inside a hard interrupt's handler (irq_handler_entry/exit: a device's, never the
 * local timer's on x86), a tasklet (where drivers finish their interrupts), a timer's expiry.
 * A wakeup made in a device's handler (and no timer's: on arm64 the timer is an interrupt
 * like others) is the device's news, the GPU's completion interrupt among them: sched_waking
 * tells it (GS_F_WAKE_IRQ) whichever task the interrupt stopped, not only the idle one.
 * Flags, not depths: hard handlers do not nest, and a program attached while a handler runs
 * (between entry's and exit's) must not leave a count behind.
 */
struct irq_ctx {
	__u32 hard, tasklet, timer, pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct irq_ctx);
} irq_ctxs SEC(".maps");

static __always_inline struct irq_ctx *irq_ctx(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&irq_ctxs, &zero);
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(irq_enter)
{
	struct irq_ctx *c = irq_ctx();

	if (c)
		c->hard = 1;
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(irq_exit)
{
	struct irq_ctx *c = irq_ctx();

	if (c)
		c->hard = 0;
	return 0;
}

#define HI_SOFTIRQ	0
#define TASKLET_SOFTIRQ 6

SEC("tp_btf/softirq_entry")
int BPF_PROG(softirq_enter, unsigned int vec)
{
	struct irq_ctx *c = irq_ctx();

	if (c)
		c->tasklet = vec == HI_SOFTIRQ || vec == TASKLET_SOFTIRQ;
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(softirq_exit, unsigned int vec)
{
	struct irq_ctx *c = irq_ctx();

	if (c)
		c->tasklet = 0;
	return 0;
}

SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(irq_timer_enter)
{
	struct irq_ctx *c = irq_ctx();

	if (c)
		c->timer = 1;
	return 0;
}

SEC("tp_btf/hrtimer_expire_exit")
int BPF_PROG(irq_timer_exit)
{
	struct irq_ctx *c = irq_ctx();

	if (c)
		c->timer = 0;
	return 0;
}

/* Runs in the waker's context: current is who made the sleeper runnable. */
SEC("tp_btf/sched_waking")
int BPF_PROG(sched_waking, struct task_struct *p)
{
	__u32 tid;
	__u64 id;
	struct wake_state w;

	if (!is_target(p->tgid))
		return 0;
	tid = p->pid;
	id = bpf_get_current_pid_tgid();
	w.ts = bpf_ktime_get_ns();
	w.tid = (__u32)id;
	w.tgid = id >> 32;
	bpf_get_current_comm(w.comm, sizeof(w.comm));
	{
		struct irq_ctx *c = irq_ctx();

		w.irq = c && (c->hard || c->tasklet) && !c->timer;
		w.pad = 0;
	}
	if (bpf_map_update_elem(&wakers, &tid, &w, BPF_ANY))
		count_loss(GS_LOSS_MAP);
	return 0;
}
