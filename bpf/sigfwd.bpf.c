// SPDX-License-Identifier: GPL-2.0
/*
 * Which signals a launched target received already. The recorder passes a signal sent to it
 * alone (kill PID) on to the target, so that the target sees what it would see without
 * gapscope. A signal sent to their process group (kill -INT -PGID, kill 0, a shell's job
 * control) reaches the target by itself, and must not be passed on a second time; the signal's
 * siginfo cannot tell the two apart (SI_USER both), the sender's kill(2) can. This notes each
 * sender's last kill(2) of a group, before any signal goes out; the recorder reads the note of
 * the sender of a signal it receives (loader/consume.c). Not recorded in the trace.
 */
#include "gapscope.bpf.h"
#include "sigfwd.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SIGFWD_SENDERS);
	__type(key, __u32); /* the sender's tgid */
	__type(value, struct group_kill);
} group_kills SEC(".maps");

#if defined(__TARGET_ARCH_arm64)
#define NR_kill 129
#else
#define NR_kill 62
#endif

/*
 * The generic raw syscall tracepoint, not tp/syscalls/sys_enter_kill: attaching that one reads
 * its id from tracefs, which only root may read (README: Privileges). The recorder attaches it
 * itself, in launch mode only (bpf_setup.c leaves it out of the tracepoints).
 */
SEC("tp_btf/sys_enter")
int BPF_PROG(sigfwd_kill, struct pt_regs *regs, long id)
{
	__u32 sender;
	struct group_kill k = {};
	struct task_struct *task;

	if (id != NR_kill)
		return 0;
	sender = bpf_get_current_pid_tgid() >> 32;
	k.pid = (__s32)PT_REGS_PARM1_CORE_SYSCALL(regs);
	k.sig = (__u32)PT_REGS_PARM2_CORE_SYSCALL(regs);

	/*
	 * Only kills of a group: a kill of one process right after must not hide the group's
	 * (kill -INT -PGID; kill -TERM PID). The recorder deletes a note when it acts on it; one
	 * about another group is told apart by the group.
	 */
	if (k.pid > 0 || !k.sig)
		return 0;
	task = (struct task_struct *)bpf_get_current_task();
	k.pgid = BPF_CORE_READ(task, group_leader, signal, pids[PIDTYPE_PGID], numbers[0].nr);
	bpf_map_update_elem(&group_kills, &sender, &k, BPF_ANY);
	return 0;
}
