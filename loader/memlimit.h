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
#define MEMLIMIT_FLOOR_MB    64
/*
 * record --flight adds the ring (--flight-mb: the dumps being written are inside it), what every
 * dump needs (FLIGHT_STICKY_MAX) and the live analysis: its threads, timelines, open gaps and
 * stack table, and the mapped files' unwind tables and symbols it reads; measured 33 MB for a
 * storm of 30,000 futex calls a second with --flight 30 (167 MB resident, less the ring's 64 MiB
 * and the ring buffer's 32 MiB mapped twice). At the defaults the figure is 160 MiB: the storm
 * records inside a cgroup of it without an OOM kill, its peak RSS within it
 * (record_flight_memlimit.sh); in make bench's flight soak VmHWM 76.7 MiB, 129.1 MiB with the
 * largest dump report's beside it.
 */
#define MEMLIMIT_STICKY_MB   16
#define MEMLIMIT_ANALYSIS_MB 32
/*
 * --flight-mb's default: a dump's window (2 s before, 1 s after) at the 3.4 MB/s of trace a
 * PyTorch loop made on the H100 is about 10 MB; the ring holds 9 s of it, and its bound, not the
 * seconds asked for, decides what the ring keeps past that (counted: "let go early").
 */
#define FLIGHT_MB_DEFAULT    32
static inline unsigned long long memlimit__need_mb(unsigned int ringbuf_mb, unsigned int flight_mb)
{
	return MEMLIMIT_FLOOR_MB + (unsigned long long)ringbuf_mb +
	       (flight_mb ? flight_mb + MEMLIMIT_STICKY_MB + MEMLIMIT_ANALYSIS_MB : 0);
}

/*
 * Whether the memory cgroups of this process (cgroup v2's memory.max or v1's
 * memory.limit_in_bytes, the smallest up to the root) allow a recording with RINGBUF_MB, and
 * FLIGHT_MB (record --flight's --flight-mb; 0: not in flight mode); false, said why, when not.
 * Unreadable limits count as none.
 */
bool memlimit__check(unsigned int ringbuf_mb, unsigned int flight_mb);

#endif
