// SPDX-License-Identifier: GPL-2.0
/*
 * Tool-chain smoke test: counts getpid() calls of one tgid. Proves that clang -target bpf,
 * bpftool gen skeleton, CO-RE against the pinned vmlinux.h and a tracepoint attach all work
 * on the machine that builds gapscope.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

const volatile __u32 target_tgid = 0;

__u64 calls = 0;

SEC("tp/syscalls/sys_enter_getpid")
int smoke_getpid(void *ctx)
{
	if ((__u32)(bpf_get_current_pid_tgid() >> 32) != target_tgid)
		return 0;
	__sync_fetch_and_add(&calls, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
