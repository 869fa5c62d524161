/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the BPF side counted, read from its maps: the losses (ring-buffer reserve failures,
 * recursion misses, failed attaches, by kind and by event type), the kernel names found from
 * handles, and every launch counted (the launch counts and the intervals between launches).
 * Written as records at the end of a recording, or read without writing for the live count.
 */
#ifndef GAPSCOPE_COUNTERS_H
#define GAPSCOPE_COUNTERS_H

#include <sys/types.h>
#include <linux/types.h>

struct record_bpf;
struct trace_out;

/*
 * Loss counters from the BPF side and the probes that failed to attach: GS_REC_LOSSES,
 * GS_REC_LOST_TYPES and GS_REC_CU_HANDLES (cuda_libs: the libcuda files probed).
 */
void counters__write(struct trace_out *o, struct record_bpf *skel, pid_t tgid, __u64 attach_failed,
		     __u32 cuda_libs);
/* The losses so far, in total and by kind (GS_LOSS_MAX counters), without writing them. */
__u64 counters__losses(struct record_bpf *skel, __u64 attach_failed, __u64 *by_kind);

#endif
