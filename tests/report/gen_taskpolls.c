// SPDX-License-Identifier: GPL-2.0
/*
 * Writes a trace whose gaps are filled by one async task polled over and over: a tokio worker
 * thread launches a kernel, synchronizes, then polls task X every 4 us (2 us a poll), each poll
 * woken 1 us before by a timer thread; the next launch is made from inside X's last poll. A
 * gap's blame walks back through X's polls one by one (tasks.h's hops), so its chain is as deep
 * as the gap holds polls, and every poll and wake the trace held stays in the task tables.
 *
 * usage: gen_taskpolls FILE GAPS GAP_MS
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genlib.h"
#include "cuda.h"
#include "probe.h"
#include "proc.h"
#include "runtimes.h"

#define TGID   2000
#define WORKER 2001
#define TIMER  2002
#define TASK   0x7f0000001000ull
#define US     1000ull
#define MS     1000000ull

static void probe_rec(__u32 id, __u32 family, __u32 kind, const char *lib, const char *sym)
{
	gen__probe(id, family, kind, GS_PROBE_F_RET, lib, sym);
}

static void hdr(struct gs_hdr *h, __u32 type, __u32 size, __u64 ts, __u32 tid)
{
	gen__hdr(h, type, size, ts, tid, TGID);
	h->flags = GS_F_RET;
}

static void task_fn(__u32 id, __u32 tid, __u64 ts, __u64 dur)
{
	struct probe_event e = {};

	hdr(&e.h, GS_EV_PROBE, sizeof(e), ts, tid);
	e.id = id;
	e.dur_ns = dur;
	e.arg0 = TASK;
	gen__put(&e, sizeof(e));
}

static void cuda(__u32 id, __u32 kind, __u64 ts, __u64 dur)
{
	struct cu_event c = {};

	hdr(&c.h, GS_EV_CUDA, sizeof(c), ts, WORKER);
	c.fn = id;
	c.kind = kind;
	c.dur_ns = dur;
	c.handle = 0x9000;
	gen__put(&c, sizeof(c));
}

int main(int argc, char **argv)
{
	__u64 t = 1000 * MS, gap_ns;
	long gaps;

	if (argc != 4) {
		fprintf(stderr, "usage: gen_taskpolls FILE GAPS GAP_MS\n");
		return 2;
	}
	gaps = atol(argv[2]);
	gap_ns = strtoull(argv[3], NULL, 10) * MS;
	gen__open("gen_taskpolls", argv[1]);
	probe_rec(1, GS_PROBE_CUDA, CU_K_LAUNCH, "/usr/lib/libcuda.so.1", "cuLaunchKernel");
	probe_rec(2, GS_PROBE_CUDA, CU_K_SYNC_STREAM, "/usr/lib/libcuda.so.1",
		  "cuStreamSynchronize");
	probe_rec(3, GS_PROBE_TASK, RT_POLL, "/srv/feeder", "tokio::runtime::task::raw::poll");
	probe_rec(4, GS_PROBE_TASK, RT_WAKE, "/srv/feeder",
		  "tokio::runtime::task::waker::wake_by_val");
	for (int i = 0; i < 2; i++) {
		struct comm_event c = {};

		hdr(&c.h, GS_EV_COMM, sizeof(c), t, i ? TIMER : WORKER);
		c.h.flags = 0;
		strcpy(c.comm, i ? "timer" : "tokio-runtime-w");
		gen__put(&c, sizeof(c));
	}
	for (long g = 0; g <= gaps; g++) {
		__u64 s;

		/* a launch and 1 ms of GPU work, waited for (the launch of a gap's end is made
		 * inside the task's last poll, below) */
		cuda(1, CU_K_LAUNCH, t, 5 * US);
		cuda(2, CU_K_SYNC_STREAM, t + 10 * US, MS);
		if (g == gaps)
			break;
		/* then only the task until the next launch: woken at s - 1 us, polled [s, s + 2 us) */
		for (s = t + MS + 20 * US; s + 4 * US < t + MS + gap_ns; s += 4 * US) {
			task_fn(4, TIMER, s - US, 0);
			task_fn(3, WORKER, s, 2 * US);
		}
		/* the last poll holds the next launch */
		task_fn(4, TIMER, s - US, 0);
		task_fn(3, WORKER, s, 20 * US);
		t = s + 2 * US;
	}
	gen__end(t);
	printf("gen_taskpolls: %llu records\n", gen__records());
	return 0;
}
