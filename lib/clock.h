/* SPDX-License-Identifier: GPL-2.0 */
/* Nanosecond clock readers: every timestamp the recorder writes comes from one of these. */
#ifndef GAPSCOPE_CLOCK_H
#define GAPSCOPE_CLOCK_H

#include <time.h>
#include <sys/time.h>
#include <linux/types.h>

#define NSEC_PER_SEC 1000000000ull

static inline __u64 clock__ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* The clock of bpf_ktime_get_ns(): every event's timestamp. */
static inline __u64 clock__mono_ns(void)
{
	return clock__ns(CLOCK_MONOTONIC);
}

static inline __u64 clock__real_ns(void)
{
	return clock__ns(CLOCK_REALTIME);
}

static inline __u64 clock__boot_ns(void)
{
	return clock__ns(CLOCK_BOOTTIME);
}

static inline __u64 clock__timeval_ns(const struct timeval *tv)
{
	return tv->tv_sec * NSEC_PER_SEC + tv->tv_usec * 1000ull;
}

#endif
