/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the GPU side says of itself, beside the probes: CUPTI activity from the collector injected
 * into a launched target (cupti_recv.c, loader/cupti/), and NVML utilization samples taken by the
 * recorder (nvml.c). Both are optional and both fail soft: one warning line, and the recording
 * goes on with the API-inferred timeline. One recording per process: the state is file-local.
 *
 *	gpu_feeds__start(&o);		before the target is launched (its environment)
 *	gpu_feeds__tick(out);		every 50 ms of the poll loop
 *	gpu_feeds__finish(out);		after the last drain, before the end record
 */
#ifndef GAPSCOPE_GPU_FEEDS_H
#define GAPSCOPE_GPU_FEEDS_H

#include <stdbool.h>

struct record_opts;
struct trace_out;

/*
 * Sets up what O asks for (and CUPTI by default for a launched command). Never fails. The trace
 * is marked for CUPTI's records (TRACE_F_GPU_ACT) once the collector speaks.
 */
void gpu_feeds__start(const struct record_opts *o);
void gpu_feeds__tick(struct trace_out *out);
/* The last of the activity, a line on what was collected, and every resource given back. */
void gpu_feeds__finish(struct trace_out *out);

/* The parts. */
void cupti_recv__start(bool asked);
void cupti_recv__poll(struct trace_out *out);
void cupti_recv__finish(struct trace_out *out);
void nvml__start(void);
void nvml__sample(struct trace_out *out);
void nvml__finish(void);

#endif
