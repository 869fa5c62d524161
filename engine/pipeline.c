// SPDX-License-Identifier: MIT
/*
 * The engine's run loop.  For now a plain sequential loop over partitions: synthesize a, b, c,
 * run the H-polynomial on a GPU, verify.  The proving pipeline of DESIGN.md (priority queues,
 * dispatcher with a memory budget, synthesis workers, GPU workers sharing a per-GPU mutex,
 * finalizers, scenarios, --truth) replaces this file's loop; the pieces it needs are in gpu.h
 * (devices, workers, submit/wait), synth.h, verify.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"
#include "verify.h"
#include "zkengine.h"

#define MSG_LEN 1024

/* Random streams: partition p uses stream p; the checks use streams above every partition. */
#define STREAM_NTT_CHECK (1ULL << 62)
#define STREAM_TAU (1ULL << 61)

static void print_header(void)
{
	printf("%4s %3s", "part", "gpu");
	for (int s = 0; s < GPU_NSTAGES; s++)
		printf(" %10s", gpu__stage_name(s));
	printf(" %10s %s\n", "total", "verify");
}

static void print_times(unsigned p, int gpu, const struct gpu_times *t, const char *verdict)
{
	printf("%4u %3d", p, gpu);
	for (int s = 0; s < GPU_NSTAGES; s++)
		printf(" %10.3f", t->ms[s]);
	printf(" %10.3f %s\n", t->total_ms, verdict);
}

int pipeline__run(const struct zk_opts *o)
{
	enum gpu_backend b = gpu__init(o->device);
	int count = gpu__count();
	if ((int)o->gpus > count) {
		fprintf(stderr, "zkengine: --gpus %u: only %d device%s\n", o->gpus, count,
			count == 1 ? "" : "s");
		return 2;
	}
	if (o->truth) {
		fprintf(stderr, "zkengine: --truth: not written by this build yet (the pipeline "
				"writes it)\n");
		return 2;
	}
	if (o->scenario != SCENARIO_FIXED)
		fprintf(stderr, "zkengine: note: scenario %s needs the pipeline; running the plain "
				"loop\n",
			zk_scenario_name(o->scenario));

	uint64_t n = 1ULL << o->log2n;
	size_t bytes = n * sizeof(fr_t);
	unsigned ngpu = o->gpus;
	struct gpu_dev **dev = calloc(ngpu, sizeof(*dev));
	struct gpu_work **work = calloc(ngpu, sizeof(*work));
	fr_t **buf = calloc(4 * (size_t)ngpu, sizeof(*buf));
	if (!dev || !work || !buf) {
		fprintf(stderr, "zkengine: out of memory\n");
		return 1;
	}
	for (unsigned i = 0; i < ngpu; i++) {
		dev[i] = gpu__open((int)i, o->log2n);
		work[i] = gpu__work_new(dev[i], o->log2n);
		for (int j = 0; j < 4; j++)
			buf[4 * i + j] = gpu__host_alloc(dev[i], bytes);
	}
	printf("zkengine: device %s (%s), %u of %d GPU%s: %s\n", gpu__backend_name(b),
	       gpu__driver_path(), ngpu, count, count == 1 ? "" : "s", gpu__name(dev[0]));
	printf("zkengine: %u partitions of 2^%u points, scenario %s, seed %#llx (--seed to "
	       "reproduce)\n",
	       o->partitions, o->log2n, zk_scenario_name(o->scenario),
	       (unsigned long long)o->seed);

	char msg[MSG_LEN];
	int status = 0;
	if (o->verify) {
		for (unsigned i = 0; i < ngpu && !status; i++) {
			struct rng g;
			rng__init(&g, o->seed, STREAM_NTT_CHECK + i);
			if (verify__ntt(work[i], o->log2n, &g, msg, sizeof(msg))) {
				fprintf(stderr, "zkengine: verification FAILED on GPU %u: %s\n", i,
					msg);
				status = 1;
			}
		}
		if (!status)
			printf("zkengine: NTT of 2^%u points equals the GMP DFT, inverse after "
			       "forward is the identity\n",
			       o->log2n < 10 ? o->log2n : 10);
	}

	if (!status)
		print_header();
	for (unsigned p = 0; p < o->partitions && !status; p++) {
		unsigned i = p % ngpu;
		fr_t *a = buf[4 * i], *bb = buf[4 * i + 1], *c = buf[4 * i + 2];
		fr_t *h = buf[4 * i + 3];
		struct rng g;
		struct gpu_times t;

		rng__init(&g, o->seed, p);
		synth__abc(&g, a, bb, c, n);
		gpu__hpoly_submit(work[i], a, bb, c, h, GPU_COPY_ASYNC);
		gpu__hpoly_wait(work[i], &t);

		const char *verdict = "-";
		if (o->verify) {
			rng__init(&g, o->seed, STREAM_TAU + p);
			if (verify__hpoly(a, bb, c, h, o->log2n, &g, msg, sizeof(msg))) {
				fprintf(stderr,
					"zkengine: verification FAILED in partition %u: %s\n", p,
					msg);
				verdict = "FAILED";
				status = 1;
			} else {
				verdict = "ok";
			}
		}
		print_times(p, i, &t, verdict);
		fflush(stdout);
	}

	if (o->verify && !status)
		printf("verification passed (%u partitions)\n", o->partitions);
	for (unsigned i = 0; i < ngpu; i++) {
		printf("zkengine: GPU %u: %llu kernel launches\n", i,
		       (unsigned long long)gpu__launches(dev[i]));
		for (int j = 0; j < 4; j++)
			gpu__host_free(dev[i], buf[4 * i + j]);
		gpu__work_free(work[i]);
		gpu__close(dev[i]);
	}
	free(buf);
	free(work);
	free(dev);
	return status;
}
