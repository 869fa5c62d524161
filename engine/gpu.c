// SPDX-License-Identifier: MIT
/*
 * The engine's GPU layer over the CUDA driver API (see gpu.h): devices, their kernels and tables,
 * the workers' streams, launches and copies.  The driver is loaded at run time (gpu_driver.c).
 */
#include "cuda_api.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu_int.h"
#include "kernels.h"

/* The fatbin of kernels.cu, embedded by fatbin.S. */
extern const unsigned char zk_fatbin[];

#define ZK_KERNEL_ENUM(name) K_##name,
enum zk_kernel { ZK_KERNELS(ZK_KERNEL_ENUM) K_COUNT };
#define ZK_KERNEL_NAME(name) #name,
static const char *const kernel_names[] = { ZK_KERNELS(ZK_KERNEL_NAME) };

struct gpu_dev {
	int ordinal;
	CUdevice device;
	CUcontext ctx;
	CUmodule module;
	CUfunction fn[K_COUNT];
	char name[128];
	unsigned max_log2n;
	/* Read-only tables shared by all workers of the device: powers of the 2^max_log2n-th root
	 * of unity (forward and inverse twiddles, 2^(max_log2n-1) each) and of the coset generator
	 * g and g^-1 (2^max_log2n each). */
	CUdeviceptr tw_fwd, tw_inv, coset, coset_inv;
	uint64_t launches; /* atomic */
	/* An event recorded once, and its CLOCK_MONOTONIC time (anchor_clock): any later event of
	 * the context maps to anchor_ns + elapsed(anchor, event). */
	CUevent anchor;
	uint64_t anchor_ns;
};

/* Synchronize calls made through this layer, by driver function (atomic). */
static uint64_t sync_calls[GPU_NSYNC];

struct gpu_work {
	struct gpu_dev *dev;
	unsigned log2n;
	CUstream stream;
	CUevent ev[GPU_NSTAGES + 1];
	CUdeviceptr a, b, c;
	/* host CLOCK_MONOTONIC around each synchronous copy of the last submit */
	unsigned nsync;
	uint64_t copy_ns[3][2];
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void count_sync(enum gpu_sync k)
{
	__atomic_fetch_add(&sync_calls[k], 1, __ATOMIC_RELAXED);
}

/* ---- launches ---------------------------------------------------------------------------- */

static void launch(struct gpu_dev *dev, CUstream s, enum zk_kernel k, uint64_t threads, void *args)
{
	unsigned grid = (unsigned)((threads + ZK_BLOCK - 1) / ZK_BLOCK);
	void *params[] = { args };
	if (grid == 0)
		return;
	CU(kernel_names[k], cuLaunchKernel, dev->fn[k], grid, 1, 1, ZK_BLOCK, 1, 1, 0, s, params,
	   NULL);
	__atomic_fetch_add(&dev->launches, 1, __ATOMIC_RELAXED);
}

static void launch_powers(struct gpu_dev *dev, CUstream s, CUdeviceptr out, fr_t base, uint64_t n)
{
	struct fr_powers_args a = { .out = (fr_t *)(uintptr_t)out, .base = base, .n = n };
	launch(dev, s, K_fr_powers, n, &a);
}

/* In-place NTT of 2^log2m points at x: bit-reversal, then log2m butterfly stages (DIT). */
static void ntt(struct gpu_work *w, CUdeviceptr x, unsigned log2m, bool inverse)
{
	struct gpu_dev *dev = w->dev;
	struct fr_bitrev_args br = { .data = (fr_t *)(uintptr_t)x, .log2n = log2m };
	launch(dev, w->stream, K_fr_bitrev, 1ULL << log2m, &br);
	for (unsigned s = 0; s < log2m; s++) {
		struct fr_ntt_stage_args st = {
			.data = (fr_t *)(uintptr_t)x,
			.tw = (const fr_t *)(uintptr_t)(inverse ? dev->tw_inv : dev->tw_fwd),
			.log2n = log2m,
			.stage = s,
			.tw_shift = dev->max_log2n - s - 1,
		};
		launch(dev, w->stream, K_fr_ntt_stage, 1ULL << (log2m - 1), &st);
	}
	if (inverse) {
		struct fr_scale_args sc = {
			.data = (fr_t *)(uintptr_t)x,
			.c = fr_inv(fr_from_u64(1ULL << log2m)),
			.n = 1ULL << log2m,
		};
		launch(dev, w->stream, K_fr_scale, 1ULL << log2m, &sc);
	}
}

static void coset(struct gpu_work *w, CUdeviceptr x, CUdeviceptr table, uint64_t n)
{
	struct fr_coset_args a = {
		.data = (fr_t *)(uintptr_t)x,
		.pw = (const fr_t *)(uintptr_t)table,
		.n = n,
	};
	launch(w->dev, w->stream, K_fr_coset, n, &a);
}

/*
 * The device clock against CLOCK_MONOTONIC.  An event recorded on an idle stream runs after the
 * host's reading before the record and before its reading after the synchronize returns, so
 * each of ANCHOR_TRIES records bounds the anchor event's host time to [before - elapsed, after
 * - elapsed], elapsed being the device time from the anchor to that record.  The anchor is the
 * middle of the intersection of those bounds, so one synchronize that returned late (a busy
 * machine's wakeup) does not shift every stage time of the run by its lateness.  Where the bounds
 * do not meet (device and host clocks drifting apart), the narrowest one alone is used.
 */
#define ANCHOR_TRIES 16
static void anchor_clock(struct gpu_dev *dev, CUstream s)
{
	CUevent ev;
	uint64_t lo = 0, hi = UINT64_MAX, best_lo = 0, best_hi = UINT64_MAX;

	CU("anchor", cuEventCreate, &dev->anchor, CU_EVENT_DEFAULT);
	CU("anchor", cuEventCreate, &ev, CU_EVENT_DEFAULT);
	for (int i = 0; i <= ANCHOR_TRIES; i++) {
		CUevent e = i ? ev : dev->anchor;
		uint64_t before = mono_ns();
		CU("anchor", cuEventRecord, e, s);
		CU("anchor", cuEventSynchronize, e);
		count_sync(GPU_SYNC_EVENT);
		uint64_t after = mono_ns();
		float ms = 0;
		if (i)
			CU("anchor", cuEventElapsedTime, &ms, dev->anchor, ev);
		uint64_t d = (uint64_t)((double)ms * 1e6);
		if (before < d)
			continue;
		uint64_t b = before - d, a = after - d;
		lo = b > lo ? b : lo;
		hi = a < hi ? a : hi;
		if (a - b < best_hi - best_lo) {
			best_lo = b;
			best_hi = a;
		}
	}
	CU("anchor", cuEventDestroy, ev);
	if (lo > hi) {
		lo = best_lo;
		hi = best_hi;
	}
	dev->anchor_ns = lo + (hi - lo) / 2;
}

/* ---- devices ----------------------------------------------------------------------------- */

static CUdeviceptr dev_alloc(size_t bytes, const char *what)
{
	CUdeviceptr p;
	CU(what, cuMemAlloc, &p, bytes);
	return p;
}

struct gpu_dev *gpu__open(int ordinal, unsigned max_log2n)
{
	if (max_log2n < GPU_MIN_LOG2N || max_log2n > GPU_MAX_LOG2N) {
		fprintf(stderr, "zkengine: gpu__open: log2n %u out of range\n", max_log2n);
		exit(1);
	}
	struct gpu_dev *dev = calloc(1, sizeof(*dev));
	if (!dev) {
		fprintf(stderr, "zkengine: out of memory\n");
		exit(1);
	}
	char what[32];
	snprintf(what, sizeof(what), "%d", ordinal);
	dev->ordinal = ordinal;
	dev->max_log2n = max_log2n;
	CU(what, cuDeviceGet, &dev->device, ordinal);
	CU(what, cuDeviceGetName, dev->name, sizeof(dev->name), dev->device);
	/* The primary context, as cudart uses: one per device, shared by every thread. */
	CU(what, cuDevicePrimaryCtxRetain, &dev->ctx, dev->device);
	CU(what, cuCtxSetCurrent, dev->ctx);
	CU("kernels.fatbin", cuModuleLoadData, &dev->module, zk_fatbin);
	for (int k = 0; k < K_COUNT; k++)
		CU(kernel_names[k], cuModuleGetFunction, &dev->fn[k], dev->module, kernel_names[k]);

	uint64_t n = 1ULL << max_log2n, half = n / 2;
	dev->tw_fwd = dev_alloc(half * sizeof(fr_t), "twiddles");
	dev->tw_inv = dev_alloc(half * sizeof(fr_t), "twiddles");
	dev->coset = dev_alloc(n * sizeof(fr_t), "coset table");
	dev->coset_inv = dev_alloc(n * sizeof(fr_t), "coset table");
	return dev;
}

void gpu__tables(struct gpu_dev *dev)
{
	uint64_t n = 1ULL << dev->max_log2n, half = n / 2;
	CU("", cuCtxSetCurrent, dev->ctx);

	/* The tables are built on the device, on a private stream, before any worker exists. */
	CUstream s;
	CU("tables", cuStreamCreate, &s, CU_STREAM_NON_BLOCKING);
	fr_t w = fr_root_of_unity(dev->max_log2n), g = fr_from_u64(FR_GENERATOR);
	launch_powers(dev, s, dev->tw_fwd, w, half);
	launch_powers(dev, s, dev->tw_inv, fr_inv(w), half);
	launch_powers(dev, s, dev->coset, g, n);
	launch_powers(dev, s, dev->coset_inv, fr_inv(g), n);
	CU("tables", cuStreamSynchronize, s);
	count_sync(GPU_SYNC_STREAM);
	anchor_clock(dev, s);
	CU("tables", cuStreamDestroy, s);
}

void gpu__close(struct gpu_dev *dev)
{
	if (!dev)
		return;
	CU("", cuCtxSetCurrent, dev->ctx);
	CU("anchor", cuEventDestroy, dev->anchor);
	CU("twiddles", cuMemFree, dev->tw_fwd);
	CU("twiddles", cuMemFree, dev->tw_inv);
	CU("coset table", cuMemFree, dev->coset);
	CU("coset table", cuMemFree, dev->coset_inv);
	CU("kernels.fatbin", cuModuleUnload, dev->module);
	CU("", cuDevicePrimaryCtxRelease, dev->device);
	free(dev);
}

const char *gpu__name(const struct gpu_dev *dev)
{
	return dev->name;
}

int gpu__ordinal(const struct gpu_dev *dev)
{
	return dev->ordinal;
}

uint64_t gpu__launches(const struct gpu_dev *dev)
{
	return __atomic_load_n(&dev->launches, __ATOMIC_RELAXED);
}

void *gpu__host_alloc(struct gpu_dev *dev, size_t bytes)
{
	void *p;
	CU("", cuCtxSetCurrent, dev->ctx);
	/* portable: pinned for every device's context, so any GPU's worker may copy from it */
	CU("pinned buffer", cuMemHostAlloc, &p, bytes, CU_MEMHOSTALLOC_PORTABLE);
	return p;
}

void gpu__host_free(struct gpu_dev *dev, void *p)
{
	if (!p)
		return;
	CU("", cuCtxSetCurrent, dev->ctx);
	CU("pinned buffer", cuMemFreeHost, p);
}

/* ---- workers ----------------------------------------------------------------------------- */

struct gpu_work *gpu__work_new(struct gpu_dev *dev, unsigned log2n)
{
	if (log2n < GPU_MIN_LOG2N || log2n > dev->max_log2n) {
		fprintf(stderr, "zkengine: gpu__work_new: log2n %u beyond the device tables (%u)\n",
			log2n, dev->max_log2n);
		exit(1);
	}
	struct gpu_work *w = calloc(1, sizeof(*w));
	if (!w) {
		fprintf(stderr, "zkengine: out of memory\n");
		exit(1);
	}
	w->dev = dev;
	w->log2n = log2n;
	CU("", cuCtxSetCurrent, dev->ctx);
	/* A blocking stream: ordered against the legacy stream that synchronous copies use. */
	CU("worker", cuStreamCreate, &w->stream, CU_STREAM_DEFAULT);
	for (int i = 0; i <= GPU_NSTAGES; i++)
		CU("stage timing", cuEventCreate, &w->ev[i], CU_EVENT_DEFAULT);
	size_t bytes = (1ULL << log2n) * sizeof(fr_t);
	w->a = dev_alloc(bytes, "a");
	w->b = dev_alloc(bytes, "b");
	w->c = dev_alloc(bytes, "c");
	return w;
}

void gpu__work_free(struct gpu_work *w)
{
	if (!w)
		return;
	CU("", cuCtxSetCurrent, w->dev->ctx);
	CU("worker", cuStreamSynchronize, w->stream);
	count_sync(GPU_SYNC_STREAM);
	CU("a", cuMemFree, w->a);
	CU("b", cuMemFree, w->b);
	CU("c", cuMemFree, w->c);
	for (int i = 0; i <= GPU_NSTAGES; i++)
		CU("stage timing", cuEventDestroy, w->ev[i]);
	CU("worker", cuStreamDestroy, w->stream);
	free(w);
}

static void mark(struct gpu_work *w, int i)
{
	CU(i < GPU_NSTAGES ? gpu__stage_name(i) : "end", cuEventRecord, w->ev[i], w->stream);
}

void gpu__hpoly_upload(struct gpu_work *w, const fr_t *a, const fr_t *b, const fr_t *c,
		       enum gpu_copy copy)
{
	size_t bytes = (1ULL << w->log2n) * sizeof(fr_t);
	const fr_t *in[3] = { a, b, c };
	CUdeviceptr d[3] = { w->a, w->b, w->c };
	static const char *const names[3] = { "a", "b", "c" };

	CU("", cuCtxSetCurrent, w->dev->ctx);
	mark(w, GPU_STAGE_H2D);
	w->nsync = 0;
	for (int i = 0; i < 3; i++) {
		if (copy == GPU_COPY_SYNC) {
			w->copy_ns[i][0] = mono_ns();
			CU(names[i], cuMemcpyHtoD, d[i], in[i], bytes);
			w->copy_ns[i][1] = mono_ns();
			w->nsync++;
			count_sync(GPU_SYNC_MEMCPY);
		} else
			CU(names[i], cuMemcpyHtoDAsync, d[i], in[i], bytes, w->stream);
	}
}

void gpu__hpoly_compute(struct gpu_work *w)
{
	struct gpu_dev *dev = w->dev;
	uint64_t n = 1ULL << w->log2n;
	CUdeviceptr d[3] = { w->a, w->b, w->c };

	CU("", cuCtxSetCurrent, dev->ctx);
	mark(w, GPU_STAGE_INTT);
	for (int i = 0; i < 3; i++)
		ntt(w, d[i], w->log2n, true);

	/* Coefficients times g^i, then a forward NTT: evaluations on g*H, where Z = X^n - 1 is the
	 * nonzero constant g^n - 1, so the division is a multiplication. */
	mark(w, GPU_STAGE_COSET_NTT);
	for (int i = 0; i < 3; i++) {
		coset(w, d[i], dev->coset, n);
		ntt(w, d[i], w->log2n, false);
	}

	mark(w, GPU_STAGE_QUOTIENT);
	fr_t g = fr_from_u64(FR_GENERATOR);
	struct fr_pointwise_args pw = {
		.a = (fr_t *)(uintptr_t)w->a,
		.b = (const fr_t *)(uintptr_t)w->b,
		.c = (const fr_t *)(uintptr_t)w->c,
		.zinv = fr_inv(fr_sub(fr_pow(g, n), fr_one())),
		.n = n,
	};
	launch(dev, w->stream, K_fr_pointwise, n, &pw);

	mark(w, GPU_STAGE_INTT_H);
	ntt(w, w->a, w->log2n, true);
	coset(w, w->a, dev->coset_inv, n);

	/* the D2H stage's start event is the kernels' end */
	mark(w, GPU_STAGE_D2H);
}

void gpu__hpoly_download(struct gpu_work *w, fr_t *h)
{
	size_t bytes = (1ULL << w->log2n) * sizeof(fr_t);
	CU("", cuCtxSetCurrent, w->dev->ctx);
	CU("h", cuMemcpyDtoHAsync, h, w->a, bytes, w->stream);
	mark(w, GPU_NSTAGES);
}

void gpu__hpoly_wait(struct gpu_work *w, struct gpu_times *t)
{
	CU("", cuCtxSetCurrent, w->dev->ctx);
	CU("worker", cuStreamSynchronize, w->stream);
	count_sync(GPU_SYNC_STREAM);
	if (!t)
		return;
	for (int i = 0; i < GPU_NSTAGES; i++)
		CU(gpu__stage_name(i), cuEventElapsedTime, &t->ms[i], w->ev[i], w->ev[i + 1]);
	CU("total", cuEventElapsedTime, &t->total_ms, w->ev[0], w->ev[GPU_NSTAGES]);
	for (int i = 0; i <= GPU_NSTAGES; i++) {
		float ms;
		CU("anchor", cuEventElapsedTime, &ms, w->dev->anchor, w->ev[i]);
		t->mono_ns[i] = w->dev->anchor_ns + (uint64_t)((double)ms * 1e6);
	}
	t->nsync = w->nsync;
	memcpy(t->copy_ns, w->copy_ns, sizeof(t->copy_ns));
}

uint64_t gpu__sync_calls(enum gpu_sync k)
{
	return k < GPU_NSYNC ? __atomic_load_n(&sync_calls[k], __ATOMIC_RELAXED) : 0;
}

const char *gpu__sync_name(enum gpu_sync k)
{
	static const char *const names[GPU_NSYNC] = {
		[GPU_SYNC_STREAM] = "cuStreamSynchronize",
		[GPU_SYNC_EVENT] = "cuEventSynchronize",
		[GPU_SYNC_CTX] = "cuCtxSynchronize",
		[GPU_SYNC_MEMCPY] = "cuMemcpyHtoD",
	};
	return k < GPU_NSYNC ? names[k] : "?";
}

void gpu__ntt(struct gpu_work *w, fr_t *x, unsigned log2m, bool inverse)
{
	if (log2m < GPU_MIN_LOG2N || log2m > w->log2n) {
		fprintf(stderr, "zkengine: gpu__ntt: log2m %u beyond the worker's %u\n", log2m,
			w->log2n);
		exit(1);
	}
	size_t bytes = (1ULL << log2m) * sizeof(fr_t);
	CU("", cuCtxSetCurrent, w->dev->ctx);
	CU("ntt", cuMemcpyHtoDAsync, w->a, x, bytes, w->stream);
	ntt(w, w->a, log2m, inverse);
	CU("ntt", cuMemcpyDtoHAsync, x, w->a, bytes, w->stream);
	CU("ntt", cuStreamSynchronize, w->stream);
	count_sync(GPU_SYNC_STREAM);
}

const char *gpu__stage_name(enum gpu_stage s)
{
	static const char *const names[GPU_NSTAGES] = {
		[GPU_STAGE_H2D] = "h2d",
		[GPU_STAGE_INTT] = "intt",
		[GPU_STAGE_COSET_NTT] = "coset_ntt",
		[GPU_STAGE_QUOTIENT] = "quotient",
		[GPU_STAGE_INTT_H] = "intt_h",
		[GPU_STAGE_D2H] = "d2h",
	};
	return s < GPU_NSTAGES ? names[s] : "?";
}
