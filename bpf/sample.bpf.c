// SPDX-License-Identifier: GPL-2.0
/*
 * CPU samples. The recorder opens one software cpu-clock event per CPU (no hardware PMU on the
 * machines we run on) with a fixed period of 1/freq seconds of CPU time and attaches this program;
 * samples of other processes are dropped here, so the target's sample count is freq times its CPU
 * time.
 */
#include "gapscope.bpf.h"
#include "sample.h"

char LICENSE[] SEC("license") = "GPL";

SEC("perf_event")
int cpu_sample(struct bpf_perf_event_data *ctx)
{
	struct sample_event *ev;

	if (!current_is_target())
		return 0;
	ev = reserve(sizeof(*ev) + sizeof(struct gs_stack), GS_EV_SAMPLE);
	if (!ev)
		return 0;
	fill_hdr(&ev->h, GS_EV_SAMPLE, sizeof(*ev) + sizeof(struct gs_stack), bpf_ktime_get_ns());
	ev->ip = PT_REGS_IP(&ctx->regs);
	/* A sample in user mode has no kernel stack: bpf_get_stack returns 0 frames then. */
	take_kstack(ctx, &ev->h, (void *)(ev + 1));
	take_ustack(ctx, &ev->h, (void *)(ev + 1));
	submit(ev);
	return 0;
}
