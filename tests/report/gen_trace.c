// SPDX-License-Identifier: GPL-2.0
/*
 * Writes a synthetic trace of N events for measuring `gapscope report`: a process whose feeder
 * threads launch kernels, synchronize, and wait on a lock held by finalizers in malloc_trim,
 * with off-CPU intervals, wakers, futex waits with owners and CPU samples with stacks, in the
 * proportions a zkengine recording has. Time advances steadily, so the live state (threads,
 * streams, open intervals) stays the same size however long the trace.
 *
 * usage: gen_trace FILE N_EVENTS
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genlib.h"
#include "cuda.h"
#include "futex.h"
#include "offcpu.h"
#include "probe.h"
#include "proc.h"
#include "sample.h"

#define TGID	  1000
#define NFEED	  2
#define NFIN	  4
#define GAP_EVERY 400 /* iterations between two lock waits that idle the GPU */

static unsigned long long max_n;

static void hdr(struct gs_hdr *h, __u32 type, __u32 size, __u64 ts, __u32 tid, int frames)
{
	gen__hdr(h, type, size, ts, tid, TGID);
	h->cpu = tid & 1;
	h->ustack_n = frames;
}

/* A record with a user stack of `frames` return addresses into the main binary. */
static void put_stacked(void *fixed, size_t fsize, int frames, __u64 seed)
{
	unsigned char buf[1024];
	__u64 *st = (__u64 *)(buf + fsize);

	memcpy(buf, fixed, fsize);
	for (int i = 0; i < frames; i++)
		st[i] = 0x401000 +
			(((seed % 16) * 31 + i * 97) & 0xfff); /* a program has few call sites */
	((struct gs_hdr *)buf)->size = fsize + frames * 8;
	gen__put(buf, fsize + frames * 8);
}

static void probe_rec(__u32 id, const char *sym)
{
	gen__probe(id, 0, 0, 0, "/lib/libcuda.so.1", sym);
}

int main(int argc, char **argv)
{
	__u64 t = 1000000000ull;

	if (argc != 3) {
		fprintf(stderr, "usage: gen_trace FILE N_EVENTS\n");
		return 2;
	}
	max_n = strtoull(argv[2], NULL, 10);
	gen__open("gen_trace", argv[1]);
	probe_rec(1, "cuLaunchKernel");
	probe_rec(2, "cuStreamSynchronize");
	probe_rec(3, "malloc_trim");
	for (int i = 0; i < NFEED + NFIN; i++) {
		struct comm_event c = {};

		hdr(&c.h, GS_EV_COMM, sizeof(c), t, TGID + 1 + i, 0);
		snprintf(c.comm, sizeof(c.comm), i < NFEED ? "feeder-%d" : "fin-%d", i);
		gen__put(&c, sizeof(c));
	}
	for (__u64 it = 0; gen__records() < max_n; it++) {
		__u32 feeder = TGID + 1 + (it / GAP_EVERY) % NFEED;
		__u32 fin = TGID + 1 + NFEED + it % NFIN;
		struct cu_event cu = {};
		struct futex_event fx = {};
		struct offcpu_event off = {};
		struct probe_event pr = {};
		struct sample_event sm = {};

		if (it % GAP_EVERY == GAP_EVERY - 1) {
			/* A finalizer trims under the lock for 2 ms; the feeder waits for it. */
			memset(&pr, 0, sizeof(pr));
			hdr(&pr.h, GS_EV_PROBE, sizeof(pr), t, fin, 8);
			pr.id = 3;
			pr.dur_ns = 2000000;
			pr.h.flags = GS_F_RET;
			put_stacked(&pr, sizeof(pr), 8, it);
			memset(&off, 0, sizeof(off));
			hdr(&off.h, GS_EV_OFFCPU, sizeof(off), t + 100000, feeder, 0);
			off.dur_ns = 1900000;
			off.state = OFFCPU_BLOCKED;
			off.waker_tid = fin;
			off.waker_tgid = TGID;
			off.syscall = 202;
			off.h.flags = GS_F_IN_FUTEX;
			gen__put(&off, sizeof(off));
			memset(&fx, 0, sizeof(fx));
			hdr(&fx.h, GS_EV_FUTEX, sizeof(fx), t + 90000, feeder, 8);
			fx.uaddr = 0x600000;
			fx.dur_ns = 1910000;
			fx.owner = fin;
			put_stacked(&fx, sizeof(fx), 8, it);
			t += 2010000;
		}
		/* The feeder launches 8 kernels and synchronizes (1 ms of GPU work). */
		for (int k = 0; k < 8; k++) {
			memset(&cu, 0, sizeof(cu));
			hdr(&cu.h, GS_EV_CUDA, sizeof(cu), t + k * 1000, feeder, 6);
			cu.fn = 1;
			cu.kind = CU_K_LAUNCH;
			cu.stream = 0x5000;
			cu.h.flags = GS_F_ENTRY_STACK;
			put_stacked(&cu, sizeof(cu), 6, it + k);
		}
		memset(&cu, 0, sizeof(cu));
		hdr(&cu.h, GS_EV_CUDA, sizeof(cu), t + 9000, feeder, 6);
		cu.fn = 2;
		cu.kind = CU_K_SYNC_STREAM;
		cu.stream = 0x5000;
		cu.dur_ns = 1000000;
		cu.h.flags = GS_F_RET;
		put_stacked(&cu, sizeof(cu), 6, it);
		/* Meanwhile the finalizers run (samples) and are preempted now and then. */
		for (int k = 0; k < 4; k++) {
			memset(&sm, 0, sizeof(sm));
			hdr(&sm.h, GS_EV_SAMPLE, sizeof(sm), t + k * 250000, fin, 10);
			sm.ip = 0x401000 + k;
			sm.h.flags = GS_F_TICK;
			put_stacked(&sm, sizeof(sm), 10, it * 7 + k);
		}
		memset(&off, 0, sizeof(off));
		hdr(&off.h, GS_EV_OFFCPU, sizeof(off), t + 500000, fin, 0);
		off.dur_ns = 50000;
		off.state = OFFCPU_PREEMPTED;
		off.syscall = OFFCPU_NO_SYSCALL;
		gen__put(&off, sizeof(off));
		t += 1010000;
	}
	gen__end(t);
	printf("gen_trace: %llu events\n", gen__records());
	return 0;
}
