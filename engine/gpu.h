/* SPDX-License-Identifier: MIT */
/*
 * zkengine's GPU layer: the H-polynomial on a device, driven only through the CUDA driver API
 * (libcuda.so.1, real or simcuda, bound with dlopen/dlsym under the names cuda.h binds).
 *
 * Objects:
 *   gpu__init()        once per process: load a driver, cuInit
 *   struct gpu_dev     one per device: primary context, module, kernels, twiddle/coset tables
 *   struct gpu_work    one per worker thread: its stream, events, device buffers for a, b, c
 *
 * Threads: every function makes the right context current on the calling thread, so any thread
 * may call any function; a gpu_work is used by one thread at a time (its owner), a gpu_dev by
 * any number.  Serializing the device between workers (the per-GPU mutex) is the caller's job.
 *
 * Errors: every driver call is checked; a failure prints
 *   zkengine: cuLaunchKernel(fr_ntt_stage): CUDA_ERROR_...: text
 * and exits with status 1.  Nothing here returns an error to recover from.
 */
#ifndef ZK_GPU_H
#define ZK_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "field.h"

enum gpu_backend { GPU_AUTO, GPU_CUDA, GPU_SIM };

/* The H-polynomial's steps, each timed by a pair of CUDA events on the worker's stream. */
enum gpu_stage {
	GPU_STAGE_H2D,	     /* a, b, c to the device */
	GPU_STAGE_INTT,	     /* evaluations on H -> coefficients, for a, b, c */
	GPU_STAGE_COSET_NTT, /* coefficients -> evaluations on the coset g*H */
	GPU_STAGE_QUOTIENT,  /* (a*b - c) / Z pointwise on the coset */
	GPU_STAGE_INTT_H,    /* back to coefficients, undo the coset shift */
	GPU_STAGE_D2H,	     /* h to the host */
	GPU_NSTAGES,
};

struct gpu_times {
	float ms[GPU_NSTAGES];
	float total_ms;
	/* CLOCK_MONOTONIC of each stage's start event (and [GPU_NSTAGES] the end), from the device's
	 * anchor event, whose host time is bracketed by repeated records (gpu.c, anchor_clock). */
	uint64_t mono_ns[GPU_NSTAGES + 1];
	/* host CLOCK_MONOTONIC start/end of each synchronous copy call (GPU_COPY_SYNC) */
	unsigned nsync;
	uint64_t copy_ns[3][2];
};

/* Calls that block the host until the device is done, counted by this layer (exact counts, for
 * comparison with a profiler's).  GPU_SYNC_MEMCPY: synchronous cuMemcpyHtoD calls. */
enum gpu_sync { GPU_SYNC_STREAM, GPU_SYNC_EVENT, GPU_SYNC_CTX, GPU_SYNC_MEMCPY, GPU_NSYNC };
uint64_t gpu__sync_calls(enum gpu_sync k);
const char *gpu__sync_name(enum gpu_sync k);

/* How a, b, c reach the device: async copies (from pinned memory: gpu__host_alloc), or
 * synchronous cuMemcpyHtoD calls from wherever they are (the `pageable` scenario). */
enum gpu_copy { GPU_COPY_ASYNC, GPU_COPY_SYNC };

#define GPU_MIN_LOG2N 1
#define GPU_MAX_LOG2N 28

struct gpu_dev;
struct gpu_work;

/* Load the driver: GPU_CUDA dlopen("libcuda.so.1"); GPU_SIM <dir of /proc/self/exe>/simcuda/
 * libcuda.so.1; GPU_AUTO the real one if it loads, cuInit succeeds and it has a device, else
 * simcuda.  Returns the backend in use.  Exits with a one-line message on failure. */
enum gpu_backend gpu__init(enum gpu_backend want);
const char *gpu__backend_name(enum gpu_backend b);
/* Path of the loaded libcuda.so.1 (as dlinfo reports it) */
const char *gpu__driver_path(void);
int gpu__count(void);

/* Retain device `ordinal`'s primary context, load the kernels, allocate the tables for
 * transforms of up to 2^max_log2n points; gpu__tables computes them on the device (the first
 * kernels it runs) and sets the clock anchor the stage times are read against. */
struct gpu_dev *gpu__open(int ordinal, unsigned max_log2n);
void gpu__tables(struct gpu_dev *dev);
void gpu__close(struct gpu_dev *dev);
const char *gpu__name(const struct gpu_dev *dev);
int gpu__ordinal(const struct gpu_dev *dev);
/* Kernel launches made on this device so far (all workers). */
uint64_t gpu__launches(const struct gpu_dev *dev);

/* Pinned host memory of the device's context (cuMemHostAlloc); gpu__host_free(dev, NULL) is a
 * no-op. */
void *gpu__host_alloc(struct gpu_dev *dev, size_t bytes);
void gpu__host_free(struct gpu_dev *dev, void *p);

/* A worker's stream, events and device buffers for partitions of 2^log2n points. */
struct gpu_work *gpu__work_new(struct gpu_dev *dev, unsigned log2n);
void gpu__work_free(struct gpu_work *w);

/*
 * H-polynomial of one partition: a, b, c are evaluations on the 2^log2n-th roots of unity
 * (Montgomery form); h receives the 2^log2n coefficients of H = (A*B - C) / (X^n - 1).
 * Three steps on the worker's stream, so a caller can hold the device (the per-GPU mutex) for
 * the kernels' submission alone, as a prover that keeps the device's queue full does:
 *   upload    a, b, c to the device: async copies (returns at once), or synchronous ones
 *             (GPU_COPY_SYNC: returns when they are done; a, b, c reusable after)
 *   compute   launches every kernel (returns at once)
 *   download  h to the host, async; wait synchronizes the stream and reads the stage times
 *             (t may be NULL); h is valid after wait.
 */
void gpu__hpoly_upload(struct gpu_work *w, const fr_t *a, const fr_t *b, const fr_t *c,
		       enum gpu_copy copy);
void gpu__hpoly_compute(struct gpu_work *w);
void gpu__hpoly_download(struct gpu_work *w, fr_t *h);
void gpu__hpoly_wait(struct gpu_work *w, struct gpu_times *t);

/* In-place forward (or inverse, scaled by 1/m) NTT of x[0, 2^log2m) over the 2^log2m-th roots
 * of unity, through the device kernels; synchronous.  log2m <= the worker's log2n.  For
 * --verify. */
void gpu__ntt(struct gpu_work *w, fr_t *x, unsigned log2m, bool inverse);

const char *gpu__stage_name(enum gpu_stage s);

#endif
