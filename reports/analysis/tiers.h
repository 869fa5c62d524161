/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The GPU timeline's CUPTI tier, and how far the API-inferred tier agrees with it.
 *
 * A trace whose header has TRACE_F_GPU_ACT may hold the CUPTI collector's activity records
 * (GS_REC_GPU_ACT, lib/gpu_act.h): exact kernel start and end times per device, and the
 * driver's launch calls with the thread that made each. They are written in batches long after
 * the events of their time, so tiers__take() takes them in a pass of its own before the
 * analysis, only in such files. On a device with kernel records the gaps are CUPTI's: idle
 * windows between kernels of at least min_gap, the closer being the thread whose launch call
 * queued the kernel that ended the window (its correlation id), else the last thread the API
 * tier saw launch on the device before the window ended. The API tier's gaps on that
 * device are kept aside and compared (tiers__agree):
 *
 *   recall      CUPTI gaps (min_gap or more) overlapped by an API idle window
 *   precision   API gaps (min_gap or more) overlapping a CUPTI idle window
 *   edge error  of each recalled gap, |API start - CUPTI start| and |API end - CUPTI end| of the
 *               API window overlapping it most: p50 and p99
 *
 * Idle windows, on either side, are those of min_gap / 4 or more (the analysis runs the API tier
 * at that threshold in such a trace), so a window just under min_gap on one side is not counted
 * against the other.
 *
 * Memory: kernel intervals are merged as they come (windows under min_gap / 4 bridged), so it
 * follows the idle windows, not the kernels.
 */
#ifndef GAPSCOPE_TIERS_H
#define GAPSCOPE_TIERS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "gap.h"
#include "gputime.h"
#include "strtab.h"

struct tiers;

/*
 * The activity records come in a pass of their own (trace__scan_types): tiers__take is its
 * consumer of GS_REC_GPU_ACT (0 or -ENOMEM), tiers__scanned the pass's end (0 or -ENOMEM).
 * Without kernel records, an object without devices. NULL: out of memory.
 */
struct tiers *tiers__new(__u64 min_gap_ns, struct strtab *strs);
int tiers__take(void *t, const struct gs_hdr *h);
int tiers__scanned(struct tiers *t);
void tiers__free(struct tiers *t);

/* Whether the device's gaps are CUPTI's (it has kernel records). */
bool tiers__owns(const struct tiers *t, __u32 device);

/* An API-tier idle window (min_gap / 4 or more) of a device tiers__owns(), for the agreement. */
int tiers__api_gap(struct tiers *t, const struct gpu_idle *g);

/*
 * CUPTI gaps that end at or before now, not taken before, as gputime__take_idle() gives the API
 * tier's (malloc'ed, caller frees); closer_tid 0 where no launch record names the thread
 * (the analysis then takes the API tier's last launcher before the end: gputime__launcher()).
 */
struct gpu_idle *tiers__take_idle(struct tiers *t, __u64 now, size_t *n);

/* The end of the next CUPTI gap to take, UINT64_MAX if none. */
__u64 tiers__next_end(const struct tiers *t);

/* The start of the earliest CUPTI gap not taken yet, UINT64_MAX if none. */
__u64 tiers__next_start(const struct tiers *t);

/*
 * Replaces, in devs (from gputime__finish), the busy intervals and times of every device
 * tiers__owns() with CUPTI's, clipped to [t0, t1]; adds devices the API tier did not see.
 */
int tiers__devices(const struct tiers *t, __u64 t0, __u64 t1, struct device_summary **devs,
		   size_t *ndevs);

/* The agreement per device tiers__owns() (allocated, *n of them), and what the collector said
 * of itself. 0 or -ENOMEM. */
int tiers__agree(struct tiers *t, struct cupti_info *info, struct tier_agreement **agree,
		 size_t *n);

#endif
