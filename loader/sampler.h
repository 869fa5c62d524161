/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPU samples: at the scheduler tick (bpf/sample.bpf.c recognizes the tick's hrtimer), or from
 * one cpu-clock perf event per CPU where the kernel does not allow that or --sampler timer asks.
 */
#ifndef GAPSCOPE_SAMPLER_H
#define GAPSCOPE_SAMPLER_H

#include <sys/types.h>
#include <linux/types.h>

struct ksyms;
struct links;
struct record_bpf;
struct trace_out;

struct sampler {
	int kind; /* GS_SAMPLER_* in use, 0 before sampler__attach */
	unsigned int freq;
	int *perf_fds;
	int nperf;
};

/*
 * Attaches the sampler WANT asks for (GS_SAMPLER_*, 0: the tick where possible, else the timer)
 * at FREQ samples per second per CPU; KSYMS names the tick's functions. 0 or -errno, said why.
 */
int sampler__attach(struct sampler *s, struct record_bpf *skel, struct links *links,
		    struct trace_out *o, struct ksyms *ksyms, int want, unsigned int freq,
		    pid_t tgid, int pid);
/* GS_REC_SAMPLER: how samples were taken, the tick's rate as measured. */
void sampler__write(struct sampler *s, struct record_bpf *skel, struct trace_out *o, pid_t tgid,
		    __u64 recording_ns);
void sampler__close(struct sampler *s);

#endif
