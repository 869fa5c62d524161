// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>

#include "umulti.h"

#define GS_BPF_F_UPROBE_MULTI_RETURN 1

/* The BPF_LINK_CREATE attributes for uprobe_multi (include/uapi/linux/bpf.h, Linux 6.6). */
struct link_create_umulti {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__u64 path;
	__u64 offsets;
	__u64 ref_ctr_offsets;
	__u64 cookies;
	__u32 cnt;
	__u32 umulti_flags;
	__u32 pid;
};

int umulti__attach(int prog_fd, const char *path, const __u64 *offsets, const __u64 *cookies,
		   __u32 cnt, bool retprobe, int pid)
{
	union {
		union bpf_attr attr;
		struct link_create_umulti lc;
	} u;
	int fd;

	_Static_assert(sizeof(struct link_create_umulti) <= sizeof(union bpf_attr), "attr size");
	memset(&u, 0, sizeof(u));
	u.lc.prog_fd = prog_fd;
	u.lc.attach_type = GS_BPF_TRACE_UPROBE_MULTI;
	u.lc.path = (__u64)(unsigned long)path;
	u.lc.offsets = (__u64)(unsigned long)offsets;
	u.lc.cookies = (__u64)(unsigned long)cookies;
	u.lc.cnt = cnt;
	u.lc.umulti_flags = retprobe ? GS_BPF_F_UPROBE_MULTI_RETURN : 0;
	u.lc.pid = pid > 0 ? pid : 0;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &u.attr, sizeof(u.attr));
	return fd < 0 ? -errno : fd;
}

/* As libbpf 1.3 probes it: a uprobe_multi link on "/" fails with EBADF only where supported. */
bool umulti__supported(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = GS_BPF_TRACE_UPROBE_MULTI);
	__u64 offset = 0;
	int prog, link;
	bool ok;

	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns, 2, &opts);
	if (prog < 0)
		return false;
	link = umulti__attach(prog, "/", &offset, NULL, 1, false, 0);
	ok = link == -EBADF;
	if (link >= 0)
		close(link);
	close(prog);
	return ok;
}
