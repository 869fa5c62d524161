// SPDX-License-Identifier: GPL-2.0
/*
 * Writes traces of CUDA calls on many stream and event handles, for the report's and the flight
 * recorder's stream tables (reports/analysis/gputime.c):
 *
 *   gen_streams FILE chain N     N streams, stream i-1 waiting (cuStreamWaitEvent) on an event
 *                                recorded on stream i after a launch there, then a launch on and
 *                                a synchronize of the default stream, whose evidence runs down
 *                                the chain; then TAIL_GAPS gaps of 50 ms on the default stream,
 *                                the records after the chain
 *   gen_streams FILE distinct N  N launches, each on a stream handle not seen before with an
 *                                event recorded there; three of four streams synchronized at
 *                                once, the context every 1,024 handles
 *
 * The probes record these calls at entry, before a driver checks a handle, so a target makes
 * such traces with handles it never created. Calls are 500 ns apart.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genlib.h"
#include "cuda.h"

#define TGID	  1000
#define TAIL_GAPS 5
#define S(i)	  ((i) ? 0x100000 + 16 * (__u64)(i) : 0)
#define E(i)	  (0x90000000 + 16 * (__u64)(i))

enum { P_LAUNCH = 1, P_SYNC, P_RECORD, P_WAIT, P_CTX_SYNC };

static __u64 t = 1000000000ull;

static void probe_rec(__u32 id, __u32 kind, const char *sym)
{
	gen__probe(id, GS_PROBE_CUDA, kind, 0, "/lib/libcuda.so.1", sym);
}

/* A call at t (then t moves on 500 ns); dur: a return dur ns later, 0 an entry only. */
static void call(__u32 fn, __u32 kind, __u64 stream, __u64 handle, __u64 dur)
{
	struct cu_event cu = {};

	cu.h.type = GS_EV_CUDA;
	cu.h.size = sizeof(cu);
	cu.h.ts = t;
	cu.h.tid = cu.h.tgid = TGID;
	cu.h.flags = dur ? GS_F_RET : 0;
	cu.fn = fn;
	cu.kind = kind;
	cu.stream = stream;
	cu.handle = handle;
	cu.dur_ns = dur;
	cu.grid[0] = cu.block[0] = 1;
	gen__put(&cu, sizeof(cu));
	t += dur + 500;
}

int main(int argc, char **argv)
{
	unsigned long long count;

	if (argc != 4 || (strcmp(argv[2], "chain") && strcmp(argv[2], "distinct"))) {
		fprintf(stderr, "usage: gen_streams FILE chain|distinct N\n");
		return 2;
	}
	count = strtoull(argv[3], NULL, 10);
	gen__open("gen_streams", argv[1]);
	probe_rec(P_LAUNCH, CU_K_LAUNCH, "cuLaunchKernel");
	probe_rec(P_SYNC, CU_K_SYNC_STREAM, "cuStreamSynchronize");
	probe_rec(P_RECORD, CU_K_EVENT_RECORD, "cuEventRecord");
	probe_rec(P_WAIT, CU_K_STREAM_WAIT, "cuStreamWaitEvent");
	probe_rec(P_CTX_SYNC, CU_K_SYNC_CTX, "cuCtxSynchronize");
	if (!strcmp(argv[2], "chain")) {
		for (unsigned long long i = count; i > 0; i--) {
			call(P_LAUNCH, CU_K_LAUNCH, S(i), 0x7000, 0);
			call(P_RECORD, CU_K_EVENT_RECORD, S(i), E(i), 0);
			call(P_WAIT, CU_K_STREAM_WAIT, S(i - 1), E(i), 0);
		}
		call(P_LAUNCH, CU_K_LAUNCH, S(0), 0x7000, 0);
		call(P_SYNC, CU_K_SYNC_STREAM, S(0), 0, 1000000);
		for (int k = 0; k < TAIL_GAPS; k++) {
			t += 50000000;
			call(P_LAUNCH, CU_K_LAUNCH, S(0), 0x7000, 0);
			call(P_SYNC, CU_K_SYNC_STREAM, S(0), 0, 1000000);
		}
	} else {
		for (unsigned long long i = 1; i <= count; i++) {
			call(P_LAUNCH, CU_K_LAUNCH, S(i), 0x7000, 0);
			call(P_RECORD, CU_K_EVENT_RECORD, S(i), E(i), 0);
			if (i % 4)
				call(P_SYNC, CU_K_SYNC_STREAM, S(i), 0, 2000);
			if (i % 1024 == 0)
				call(P_CTX_SYNC, CU_K_SYNC_CTX, 0, 0, 2000);
		}
	}
	gen__end(t);
	printf("gen_streams: %llu records, %.3f s\n", gen__records(), (t - 1000000000ull) / 1e9);
	return 0;
}
