// SPDX-License-Identifier: GPL-2.0
/*
 * Pids at the boundary of a pid namespace. Every BPF program sees the kernel's global ids
 * (bpf_get_current_pid_tgid), while a recorder inside a container (a pid namespace: Docker,
 * unshare --pid) knows its target by the pid its namespace gives it. The recorder runs this
 * program (BPF_PROG_TEST_RUN, in its own context) to turn one into the other: a pid of its
 * namespace into the global ids of that thread and its process, or a global pid into the ids
 * its namespace shows. Its own object: the kfuncs need Linux 6.13, and the recorder loads this
 * only where it runs in a namespace of its own (loader/pidns.c).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "nspid.h"

char LICENSE[] SEC("license") = "GPL";

extern struct task_struct *bpf_task_from_vpid(s32 vpid) __ksym;
extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym;
extern void bpf_task_release(struct task_struct *p) __ksym;

/* The id struct pid P has at LEVEL in namespace NS, 0 where it has none there. */
static __always_inline __s32 nr_in(struct pid *p, unsigned int level, struct pid_namespace *ns)
{
	struct upid u = {};

	if (!p || BPF_CORE_READ(p, level) < level || level > 31)
		return 0;
	bpf_probe_read_kernel(&u, sizeof(u), &p->numbers[level]);
	return u.ns == ns ? u.nr : 0;
}

SEC("syscall")
int nspid_translate(struct pidns_args *a)
{
	struct task_struct *me = bpf_get_current_task_btf(), *t;
	struct pid *mine = BPF_CORE_READ(me, thread_pid);
	unsigned int level = BPF_CORE_READ(mine, level);
	struct pid_namespace *ns;
	struct upid u = {};

	if (level > 31)
		return 1;
	bpf_probe_read_kernel(&u, sizeof(u), &mine->numbers[level]);
	ns = u.ns;
	a->pid = a->tgid = 0;
	t = a->to_global ? bpf_task_from_vpid(a->in) : bpf_task_from_pid(a->in);
	if (!t)
		return 0;
	if (a->to_global) {
		a->pid = BPF_CORE_READ(t, pid);
		a->tgid = BPF_CORE_READ(t, tgid);
	} else {
		a->pid = nr_in(BPF_CORE_READ(t, thread_pid), level, ns);
		a->tgid = nr_in(BPF_CORE_READ(t, group_leader, thread_pid), level, ns);
	}
	bpf_task_release(t);
	return 0;
}
