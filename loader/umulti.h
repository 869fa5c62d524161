/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uprobe_multi links (Linux 6.6): many uprobes of one file in one BPF link, each with its cookie.
 * One link detaches with one RCU grace period for all its probes, where a perf-event uprobe per
 * function waits for one each, serialized by the kernel (about 35 ms each on our machines: a
 * libcuda with a hundred probes took seconds to let go). libbpf 1.1 predates the API, so the
 * link is created with the bpf syscall directly.
 */
#ifndef GAPSCOPE_UMULTI_H
#define GAPSCOPE_UMULTI_H

#include <stdbool.h>
#include <linux/types.h>

#define GS_BPF_TRACE_UPROBE_MULTI 48 /* enum bpf_attach_type, Linux 6.6 */

/* Whether the running kernel has uprobe_multi links. */
bool umulti__supported(void);

/* A link for cnt offsets of path; returns its fd or -errno. pid 0: every process. */
int umulti__attach(int prog_fd, const char *path, const __u64 *offsets, const __u64 *cookies,
		   __u32 cnt, bool retprobe, int pid);

#endif
