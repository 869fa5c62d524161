// SPDX-License-Identifier: MIT
/*
 * tokengine's bridge to the engine's GPU layer (engine/gpu.c, the same kernels and driver calls
 * as zkengine): a few calls with plain C types, so the Rust side needs no struct layouts.  The
 * seed's engine, too, drives its GPU through a C/C++ library from tokio.
 */
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "rng.h"
#include "synth.h"

/* The driver loaded (enum gpu_backend in, the one in use out). */
int tk_init(int want)
{
	return gpu__init((enum gpu_backend)want);
}

/* Device 0 opened for 2^log2n points, its tables computed. */
void *tk_open(unsigned log2n)
{
	struct gpu_dev *dev = gpu__open(0, log2n);

	gpu__tables(dev);
	return dev;
}

const char *tk_backend_name(int b)
{
	return gpu__backend_name((enum gpu_backend)b);
}

void *tk_work_new(void *dev, unsigned log2n)
{
	return gpu__work_new(dev, log2n);
}

/* Pinned memory for one partition's a, b, c and h (4 vectors of 2^log2n elements). */
void *tk_host_alloc(void *dev, unsigned log2n)
{
	return gpu__host_alloc(dev, 4 * (sizeof(fr_t) << log2n));
}

/* Witness synthesis of partition `idx`: a, b, c with a∘b = c, in the first three vectors. */
void tk_synth(void *buf, unsigned log2n, uint64_t seed, uint64_t idx)
{
	uint64_t n = 1ULL << log2n;
	fr_t *v = buf;
	struct rng g;

	rng__init(&g, seed, idx);
	synth__abc(&g, v, v + n, v + 2 * n, n);
}

/* A partition's GPU section in three steps, so the caller holds its per-GPU lock for the
 * kernels' submission alone: upload a, b, c (async), launch every kernel, then download h and
 * wait; ns[0], ns[1]: the kernels' start and end (CLOCK_MONOTONIC, from the stream's events). */
void tk_upload(void *w, void *buf, unsigned log2n)
{
	uint64_t n = 1ULL << log2n;
	fr_t *v = buf;

	gpu__hpoly_upload(w, v, v + n, v + 2 * n, GPU_COPY_ASYNC);
}

void tk_compute(void *w)
{
	gpu__hpoly_compute(w);
}

void tk_finish(void *w, void *buf, unsigned log2n, uint64_t ns[2])
{
	struct gpu_times t;

	gpu__hpoly_download(w, (fr_t *)buf + 3 * (1ULL << log2n));
	gpu__hpoly_wait(w, &t);
	ns[0] = t.mono_ns[GPU_STAGE_INTT];
	ns[1] = t.mono_ns[GPU_STAGE_D2H];
}

uint64_t tk_launches(void *dev)
{
	return gpu__launches(dev);
}

/* The CPU tail (the b_g2 MSM stand-in): `ops` field multiplications over h. */
uint64_t tk_tail(const void *buf, unsigned log2n, uint64_t ops)
{
	const fr_t *h = (const fr_t *)buf + 3 * (1ULL << log2n);
	uint64_t mask = (1ULL << log2n) - 1;
	fr_t acc = h[0];

	for (uint64_t i = 0; i < ops; i++)
		acc = fr_mul(acc, h[i & mask]);
	return acc.l[0];
}
