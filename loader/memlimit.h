/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The recorder's memory floor against the memory cgroup it runs in: refused at start, with a
 * message, rather than killed by the OOM killer mid-recording (leaving a trace of a header).
 */
#ifndef GAPSCOPE_MEMLIMIT_H
#define GAPSCOPE_MEMLIMIT_H

#include <stdbool.h>

/*
 * What a recording needs, in MiB: the BPF maps (charged to the cgroup), the recorder itself,
 * and the ring buffer's pages (measured: 63 MB of cgroup usage with a 1 MiB ring buffer, 95 MB
 * with 32).
 */
#define MEMLIMIT_FLOOR_MB 64
static inline unsigned long long memlimit__need_mb(unsigned int ringbuf_mb)
{
	return MEMLIMIT_FLOOR_MB + (unsigned long long)ringbuf_mb;
}

/*
 * Whether the memory cgroups of this process (cgroup v2's memory.max or v1's
 * memory.limit_in_bytes, the smallest up to the root) allow a recording with RINGBUF_MB; false,
 * said why, when not. Unreadable limits count as none.
 */
bool memlimit__check(unsigned int ringbuf_mb);

#endif
