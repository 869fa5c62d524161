/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stack compaction: the BPF side reserves a whole struct gs_stack (GS_USTACK_MAX user and
 * GS_KSTACK_MAX kernel frames) after an event's fixed part; the trace keeps only the frames taken,
 * ustack_n user frames then kstack_n kernel frames (lib/trace.h).
 */
#ifndef GAPSCOPE_STACK_H
#define GAPSCOPE_STACK_H

#include <stddef.h>
#include <linux/types.h>

#include "gapscope.h"

/* Room that any event's compaction fits in: the event as the BPF side wrote it is larger. */
#define STACK_COMPACT_MAX (sizeof(struct gs_stack) + 4096)

/*
 * Copies the GS_F_STACK event EV (h->size bytes) to OUT (cap bytes) with its frames compacted and
 * h.size updated: the compacted size, or 0 for an event that is malformed (frame counts past the
 * arrays, a size too small for the stack) or does not fit.
 */
size_t stack__compact(const struct gs_hdr *ev, void *out, size_t cap);

/* The kernel frames (h->kstack_n of them) of a compacted event. */
static inline const __u64 *stack__kernel_frames(const struct gs_hdr *h)
{
	return (const __u64 *)((const char *)h + h->size) - h->kstack_n;
}

/* The user frames (h->ustack_n of them, innermost first) of a compacted event. */
static inline const __u64 *stack__user_frames(const struct gs_hdr *h)
{
	return stack__kernel_frames(h) - h->ustack_n;
}

#endif
