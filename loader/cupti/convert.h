/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CUPTI activity records to struct gs_gpu_act (gpu_act.h): the collector's one piece of logic
 * that needs no GPU, kept apart so that a unit test can feed it records built by hand.
 */
#ifndef GAPSCOPE_CUPTI_CONVERT_H
#define GAPSCOPE_CUPTI_CONVERT_H

#include <stddef.h>
#include <stdint.h>
#include <cupti_activity.h>

#include "gpu_act.h"

/* The most one conversion writes: a kernel's name record, then the kernel. */
#define GS_CONV_MAX (2 * sizeof(struct gs_gpu_act) + GS_GPU_ACT_TEXT)

/* Kernel names, each sent once, before the first kernel that has it. */
struct gs_names {
	struct gs_name_slot *slots;
	uint32_t cap, n;
};

/*
 * Converts activity record R into OUT (ROOM bytes): the bytes written, 0 for a kind not kept,
 * -1 when ROOM is short of GS_CONV_MAX (send what OUT holds, then call again).
 */
int gs_conv__record(struct gs_names *names, uint32_t pid, const CUpti_Activity *r, void *out,
		    size_t room);
/* A GS_ACT_STATUS or GS_ACT_DROPPED record: the bytes written (at most GS_CONV_MAX). */
int gs_conv__status(void *out, uint32_t pid, uint32_t status, const char *text);
int gs_conv__dropped(void *out, uint32_t pid, uint64_t n);
void gs_names__free(struct gs_names *names);

#endif
