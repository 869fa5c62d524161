// SPDX-License-Identifier: GPL-2.0
/*
 * Process and thread life of the targets, and the late-attach hook.
 *
 * A program may map libcuda long after it started (dlopen, as cudart and PyTorch do). Uprobes are
 * attached per (process, file): once attached for a process they are installed in every mapping
 * of the file in that process, present and future. So the only requirement for missing no call is
 * that the attach completes before the first instruction of the library runs. When a target maps
 * a watched file (libcuda.so*, libc.so*, --probe libraries) executable and the recorder has not
 * attached to that inode for that process yet, this program
 * sends SIGSTOP to the mapping thread before the mmap returns: the process stops before any code
 * of the new mapping can run (dlopen runs constructors only after mapping). The recorder attaches
 * and sends SIGCONT. If SIGCONT arrives before the stop took effect, it cancels the pending stop,
 * which is equally correct since the probes are already live. No timing assumption is involved.
 */
#include "gapscope.bpf.h"
#include "offcpu.bpf.h"
#include "proc.h"

char LICENSE[] SEC("license") = "GPL";

#define PROT_EXEC 0x4
#define SIGSTOP	  19

const volatile bool follow_children = false;
/*
 * Only a process the recorder launched (and whose parent it is) may be stopped for a late attach:
 * a stop is visible to the job-control parent of a process we merely attached to, and would
 * outlive a recorder killed at the wrong moment. Launch mode runs a guardian that sends SIGCONT
 * should the recorder die (cmd/record.c); in -p mode a late library is attached without
 * stopping, and the trace says from when its probes were live.
 */
const volatile bool stop_for_attach = false;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PROC_WATCH_MAX);
	__type(key, __u32);
	__type(value, struct watch_name);
} watch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROC_ATTACHED_MAX);
	__type(key, struct file_key);
	__type(value, __u32);
} attached SEC(".maps");

struct mmap_args {
	__u64 len;
	__u64 pgoff;
	__u32 prot;
	__s32 fd;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GS_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct mmap_args);
} mmaps SEC(".maps");

SEC("tp_btf/sched_process_fork")
int BPF_PROG(proc_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	struct fork_event *ev;

	if (!is_target(ptgid))
		return 0;
	if (follow_children && ctgid != ptgid) {
		__u32 one = 1;

		if (bpf_map_update_elem(&tgids, &ctgid, &one, BPF_ANY))
			count_loss(GS_LOSS_MAP);
	}
	ev = reserve(sizeof(*ev), GS_EV_FORK);
	if (!ev)
		return 0;
	fill_hdr(&ev->h, GS_EV_FORK, sizeof(*ev), bpf_ktime_get_ns());
	ev->child_tid = BPF_CORE_READ(child, pid);
	ev->child_tgid = ctgid;
	BPF_CORE_READ_STR_INTO(&ev->comm, child, comm);
	submit(ev);
	return 0;
}

/* (task, group_dead) since Linux 6.12 (group_dead added): one event per exiting thread. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(proc_exit, struct task_struct *task, bool group_dead)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	struct exit_event *ev;

	if (!is_target(tgid))
		return 0;
	/* The exiting thread is current: an interval of its still open ends here. */
	offcpu_resumed(BPF_CORE_READ(task, pid), tgid, bpf_ktime_get_ns());
	ev = reserve(sizeof(*ev), GS_EV_EXIT);
	if (ev) {
		fill_hdr(&ev->h, GS_EV_EXIT, sizeof(*ev), bpf_ktime_get_ns());
		ev->h.tid = BPF_CORE_READ(task, pid);
		ev->h.tgid = tgid;
		ev->exit_code = BPF_CORE_READ(task, exit_code);
		ev->group_dead = group_dead;
		submit(ev);
	}
	/* The process is gone: its tgid may be reused by an unrelated one. */
	if (group_dead) {
		bpf_map_delete_elem(&tgids, &tgid);
		bpf_map_delete_elem(&watched_since, &tgid);
	}
	return 0;
}

/* pthread_setname_np and prctl(PR_SET_NAME) and exec all end in __set_task_comm. */
SEC("tp_btf/task_rename")
int BPF_PROG(proc_rename, struct task_struct *task, const char *comm)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	struct comm_event *ev;

	if (!is_target(tgid))
		return 0;
	ev = reserve(sizeof(*ev), GS_EV_COMM);
	if (!ev)
		return 0;
	fill_hdr(&ev->h, GS_EV_COMM, sizeof(*ev), bpf_ktime_get_ns());
	ev->h.tid = BPF_CORE_READ(task, pid);
	ev->h.tgid = tgid;
	bpf_probe_read_kernel_str(ev->comm, sizeof(ev->comm), comm);
	submit(ev);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(proc_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	struct exec_event *ev;

	if (!is_target(tgid))
		return 0;
	ev = reserve(sizeof(*ev), GS_EV_EXEC);
	if (!ev)
		return 0;
	fill_hdr(&ev->h, GS_EV_EXEC, sizeof(*ev), bpf_ktime_get_ns());
	ev->old_tid = old_pid;
	ev->pad = 0;
	BPF_CORE_READ_STR_INTO(&ev->comm, p, comm);
	bpf_probe_read_kernel_str(ev->filename, sizeof(ev->filename),
				  BPF_CORE_READ(bprm, filename));
	submit_now(ev); /* the recorder reads the new image's maps while it lives */
	return 0;
}

/*
 * The generic raw syscall tracepoints rather than tp/syscalls/sys_{enter,exit}_mmap, whose
 * detach costs tens of milliseconds each (futex.bpf.c says why).
 */
#if defined(__TARGET_ARCH_arm64)
#define NR_mmap		      222
#define SYS_PARM6(regs)	      BPF_CORE_READ(regs, regs[5])
#define MMAP_SYSCALL_NR(regs) ((regs)->syscallno) /* tp_btf: a trusted pointer */
#else
#define NR_mmap		      9
#define SYS_PARM6(regs)	      BPF_CORE_READ(regs, r9)
#define MMAP_SYSCALL_NR(regs) ((regs)->orig_ax) /* tp_btf: a trusted pointer */
#endif

SEC("tp_btf/sys_enter")
int BPF_PROG(mmap_sys_enter, struct pt_regs *regs, long id)
{
	__u32 tid;
	struct mmap_args a;

	if (id != NR_mmap)
		return 0;
	a.prot = PT_REGS_PARM3_CORE_SYSCALL(regs);
	a.fd = PT_REGS_PARM5_CORE_SYSCALL(regs);
	if (!(a.prot & PROT_EXEC) || a.fd < 0 || !current_is_target())
		return 0;
	a.len = PT_REGS_PARM2_CORE_SYSCALL(regs);
	a.pgoff = SYS_PARM6(regs);
	tid = (__u32)bpf_get_current_pid_tgid();
	if (bpf_map_update_elem(&mmaps, &tid, &a, BPF_ANY))
		count_loss(GS_LOSS_MAP);
	return 0;
}

static __always_inline struct file *fd_file(int fd)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds = BPF_CORE_READ(fdt, fd);
	struct file *f = NULL;

	if (fd < 0 || fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
	return f;
}

struct match_ctx {
	const char *name;
	bool hit;
};

static long match_one(__u32 i, struct match_ctx *m)
{
	struct watch_name *w = bpf_map_lookup_elem(&watch, &i);
	char buf[PROC_WATCH_LEN] = {};

	if (!w || !w->len)
		return 1; /* entries are filled from 0: stop at the first empty one */
	bpf_probe_read_kernel(buf, sizeof(buf), m->name);
	for (int j = 0; j < PROC_WATCH_LEN; j++) {
		if (j >= w->len) {
			m->hit = true;
			return 1;
		}
		if (buf[j] != w->prefix[j])
			return 0;
	}
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(mmap_sys_exit, struct pt_regs *regs, long ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct mmap_args *a;
	struct mmap_event *ev;
	struct file_key key;
	struct match_ctx m;
	struct file *f;
	struct inode *inode;

	if (MMAP_SYSCALL_NR(regs) != NR_mmap)
		return 0;
	a = bpf_map_lookup_elem(&mmaps, &tid);
	if (!a)
		return 0;
	if (ret < 0 && ret > -4096)
		goto out;
	f = fd_file(a->fd);
	if (!f)
		goto out;
	ev = reserve(sizeof(*ev), GS_EV_MMAP);
	if (!ev)
		goto out;
	fill_hdr(&ev->h, GS_EV_MMAP, sizeof(*ev), bpf_ktime_get_ns());
	inode = BPF_CORE_READ(f, f_inode);
	key.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	key.ino = BPF_CORE_READ(inode, i_ino);
	key.tgid = id >> 32;
	key.pad = 0;
	ev->addr = ret;
	ev->len = a->len;
	ev->pgoff = a->pgoff;
	ev->dev = key.dev;
	ev->ino = key.ino;
	ev->prot = a->prot;
	ev->fd = a->fd;
	ev->pad = 0;
	ev->flags = 0;
	m.name = (const char *)BPF_CORE_READ(f, f_path.dentry, d_name.name);
	m.hit = false;
	bpf_probe_read_kernel_str(ev->name, sizeof(ev->name), m.name);
	bpf_loop(PROC_WATCH_MAX, match_one, &m, 0);
	if (m.hit) {
		ev->flags |= MMAP_F_WATCHED;
		if (stop_for_attach && !bpf_map_lookup_elem(&attached, &key)) {
			/* Signal before the event is visible, so the recorder's SIGCONT can never
			 * precede the SIGSTOP. */
			if (bpf_send_signal_thread(SIGSTOP))
				count_loss(GS_LOSS_SIGNAL);
			else
				ev->flags |= MMAP_F_STOPPED;
		}
	}
	submit_now(ev);
out:
	bpf_map_delete_elem(&mmaps, &tid);
	return 0;
}
