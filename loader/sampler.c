// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sample.h"
#include "record.skel.h"
#include "clock.h"
#include "ksyms.h"
#include "links.h"
#include "metadata.h"
#include "trace_out.h"
#include "sampler.h"
#include "trace.h"

/*
 * The tick sampler needs the tick's hrtimer function, to know the tick among all hrtimers, and
 * the interrupt's entry, to cut the interrupt's own frames off kernel stacks. Returns false,
 * with why, where this kernel has neither by these names.
 */
static bool tick_symbols(struct record_bpf *skel, struct ksyms *k, unsigned int freq,
			 const char **why)
{
	static const char *const tick_fns[] = { "tick_nohz_handler", "tick_sched_timer" };
	struct ksym *fn = NULL, *entry;
	__u64 end, entry_end;

	if (!k) {
		*why = "/proc/kallsyms is unreadable";
		return false;
	}
	for (size_t i = 0; !fn && i < sizeof(tick_fns) / sizeof(*tick_fns); i++)
		fn = ksyms__by_name(k, tick_fns[i], &end);
	entry = ksyms__by_name(k, "asm_sysvec_apic_timer_interrupt", &entry_end);
	if (!fn || !entry) {
		*why = fn ? "no asm_sysvec_apic_timer_interrupt in kallsyms" :
			    "no tick_nohz_handler or tick_sched_timer in kallsyms";
		return false;
	}
	skel->bss->irq_entry_lo = entry->addr;
	skel->bss->irq_entry_hi = entry_end;
	skel->bss->tick_period_ns = NSEC_PER_SEC / freq;
	skel->bss->tick_fn = fn->addr; /* last: it arms tick_sample() */
	return true;
}

static int attach_tick(struct record_bpf *skel, struct links *links)
{
	struct bpf_program *progs[] = { skel->progs.tick_sample, skel->progs.tick_taken };

	for (size_t i = 0; i < sizeof(progs) / sizeof(*progs); i++) {
		struct bpf_link *l = bpf_program__attach(progs[i]);

		if (!l)
			return -errno;
		if (links__add(links, l))
			return -ENOMEM;
	}
	return 0;
}

/* One software cpu-clock event per CPU, period 1/freq. */
static int attach_timer(struct sampler *s, struct record_bpf *skel, struct links *links)
{
	int ncpus = libbpf_num_possible_cpus(), err;

	s->perf_fds = calloc(ncpus, sizeof(int));
	if (!s->perf_fds)
		return -ENOMEM;
	for (int cpu = 0; cpu < ncpus; cpu++) {
		struct perf_event_attr attr = {
			.type = PERF_TYPE_SOFTWARE,
			.size = sizeof(attr),
			.config = PERF_COUNT_SW_CPU_CLOCK,
			.sample_period = NSEC_PER_SEC / s->freq,
		};
		struct bpf_link *l;
		int fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

		if (fd < 0) {
			if (errno == ENODEV || errno == EINVAL)
				continue; /* possible but offline CPU */
			err = -errno;
			fprintf(stderr, "gapscope: cannot open cpu-clock on CPU %d: %s\n", cpu,
				strerror(errno));
			return err;
		}
		s->perf_fds[s->nperf++] = fd;
		l = bpf_program__attach_perf_event(skel->progs.cpu_sample, fd);
		if (!l) {
			err = -errno;
			fprintf(stderr, "gapscope: cannot attach the sampler: %s\n",
				strerror(errno));
			return err;
		}
		links__add(links, l);
	}
	return 0;
}

int sampler__attach(struct sampler *s, struct record_bpf *skel, struct links *links,
		    struct trace_out *o, struct ksyms *ksyms, int want, unsigned int freq,
		    pid_t tgid, int pid)
{
	const char *why = NULL;
	int err;

	s->freq = freq;
	if (want != GS_SAMPLER_TIMER) {
		if (!tick_symbols(skel, ksyms, freq, &why)) {
			err = -ENOENT;
		} else if ((err = attach_tick(skel, links))) {
			why = strerror(-err);
		} else {
			s->kind = GS_SAMPLER_TICK;
			meta__kernel_probe(o, tgid, pid,
					   "tp_btf/hrtimer_expire_entry+exit (tick sampler)");
			return 0;
		}
		if (want == GS_SAMPLER_TICK) {
			fprintf(stderr, "gapscope: cannot sample at the scheduler tick: %s\n", why);
			return err;
		}
		fprintf(stderr, "gapscope: note: sampling with cpu-clock timers (%s)\n", why);
	}
	s->kind = GS_SAMPLER_TIMER;
	err = attach_timer(s, skel, links);
	if (err)
		return err;
	meta__kernel_probe(o, tgid, pid, "perf_event/cpu-clock");
	return 0;
}

void sampler__write(struct sampler *s, struct record_bpf *skel, struct trace_out *o, pid_t tgid,
		    __u64 recording_ns)
{
	int ncpus = libbpf_num_possible_cpus();
	struct tick_state *st = calloc(ncpus, sizeof(*st));
	struct gs_rec_sampler rec = {};
	__u32 zero = 0;

	trace_out__hdr(&rec.h, GS_REC_SAMPLER, sizeof(rec), tgid);
	rec.kind = s->kind;
	rec.freq = s->freq;
	if (s->kind == GS_SAMPLER_TICK && st &&
	    !bpf_map_lookup_elem(bpf_map__fd(skel->maps.tick_states), &zero, st)) {
		__u64 best = 0;

		for (int i = 0; i < GS_TICK_HZ_N; i++) {
			__u64 hits = 0;

			for (int c = 0; c < ncpus; c++)
				hits += st[c].hz_hits[i];
			if (hits > best) {
				best = hits;
				rec.tick_ns = NSEC_PER_SEC / gs_tick_hz[i];
			}
		}
	}
	free(st);
	/* A busy CPU ticks CONFIG_HZ times a second: none in a second means they go unrecognized. */
	if (s->kind == GS_SAMPLER_TICK && !skel->bss->ticks_seen && recording_ns > NSEC_PER_SEC)
		fprintf(stderr,
			"gapscope: warning: no scheduler tick was seen, so no CPU samples were "
			"taken (--sampler timer takes them from cpu-clock timers)\n");
	rec.period_ns = NSEC_PER_SEC / s->freq;
	if (rec.tick_ns > rec.period_ns)
		rec.period_ns = rec.tick_ns;
	if (s->kind)
		trace_out__append(o, &rec, sizeof(rec));
}

void sampler__close(struct sampler *s)
{
	for (int i = 0; i < s->nperf; i++)
		close(s->perf_fds[i]);
	free(s->perf_fds);
	*s = (struct sampler){};
}
