// SPDX-License-Identifier: GPL-2.0
/*
 * The cheapest useful uprobe: it counts its hits and does nothing else. tests/bench/trapcount.c
 * attaches it to a function so that what gapscope's own probe of that function costs can be
 * set beside the cost of the trap itself (tests/gpu/truth.sh).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

__u64 hits = 0;

SEC("uprobe")
int count_hit(void *ctx)
{
	__sync_fetch_and_add(&hits, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
