// SPDX-License-Identifier: MIT
/*
 * simcuda: a CUDA driver for machines without a GPU, built as libcuda.so.1.
 *
 * It exports a subset of the real driver's symbols, under the names cuda.h binds (its files
 * include cuda.h through simcuda_int.h, or engine/cuda_api.h's copy of its mapping where there
 * is no toolkit, so defining cuMemAlloc defines cuMemAlloc_v2, exactly as a caller binds it),
 * and behaves as the driver does where a profiler could tell the difference:
 *   - every CUstream is a worker thread draining a FIFO of operations (kernels, copies, memsets,
 *     event records, waits); launches and async copies from pinned memory return at once;
 *   - the NULL (legacy) stream orders against every blocking stream of its context, both ways;
 *   - synchronous copies, and async copies from pageable memory, block the caller until the copy
 *     is done, as the driver's staging does;
 *   - stream/event/context synchronization blocks on condition variables (no sleeping, no
 *     spinning), events carry the time the work queued before their record completed;
 *   - kernels of one simulated device run one at a time (an execution lock per device), so the
 *     device is busy exactly while a kernel holds it;
 *   - device time is modelled, as a device keeps it: a kernel takes SIM_KERNEL_NS plus
 *     SIM_THREAD_NS per thread, a copy SIM_COPY_NS plus SIM_COPY_NS_PER_KB per KiB (its own
 *     copy engine, beside the kernels), all scaled by SIMCUDA_TIME_SCALE.  The CPU version of a
 *     kernel computes the result inside that time and the rest of it is spent asleep, so the
 *     simulated device does not compete with the host's threads for cores (the model's time is a
 *     floor: a kernel whose CPU version takes longer takes that long).  An operation starts when
 *     it is submitted to an idle stream and engine, as on a device, however late the thread that
 *     runs it gets a CPU (run_op);
 *   - device memory is host memory (256-byte aligned), device pointers are host addresses.
 *
 * Environment:
 *   SIMCUDA_DEVICES=N   number of devices (default 8, 1..64)
 *   SIMCUDA_TRACE=FILE  append one JSON line per kernel: device, name, CLOCK_MONOTONIC start/end
 *                       (ground truth for tests; the profiler never reads it)
 *   SIMCUDA_FAULT=NAME  corrupt one output element of every launch of kernel NAME (tests only)
 *   SIMCUDA_TIME_SCALE=F  multiply every modelled device time by F (default 1, 0.01..100)
 *
 * Every handle is registered while it lives, so stale or foreign handles get the driver's
 * CUDA_ERROR_INVALID_HANDLE / CUDA_ERROR_INVALID_CONTEXT instead of a crash, and nothing is read
 * through a handle before it is known to be live.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "simcuda_int.h"

struct sim_state sim = { .mu = PTHREAD_MUTEX_INITIALIZER, .trace_fd = -1 };

__thread struct CUctx_st *tls_ctx;
#define CTX_STACK 16
static __thread struct CUctx_st *tls_stack[CTX_STACK];
static __thread int tls_depth;

/* ---- pointer registries ---------------------------------------------------------------- */

void range_add(struct range **list, void *p, size_t size)
{
	struct range *r = malloc(sizeof(*r));
	if (!r)
		abort();
	r->base = (uintptr_t)p;
	r->size = size;
	pthread_mutex_lock(&sim.mu);
	r->next = *list;
	*list = r;
	pthread_mutex_unlock(&sim.mu);
}

/* Remove the range starting exactly at p; false if there is none. */
bool range_del(struct range **list, void *p)
{
	bool found = false;
	pthread_mutex_lock(&sim.mu);
	for (struct range **pp = list; *pp; pp = &(*pp)->next) {
		if ((*pp)->base == (uintptr_t)p) {
			struct range *r = *pp;
			*pp = r->next;
			free(r);
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&sim.mu);
	return found;
}

/* The size of the range starting exactly at p; false if there is none. */
bool range_size(struct range **list, const void *p, size_t *size)
{
	bool found = false;
	pthread_mutex_lock(&sim.mu);
	for (struct range *r = *list; r; r = r->next)
		if (r->base == (uintptr_t)p) {
			*size = r->size;
			found = true;
			break;
		}
	pthread_mutex_unlock(&sim.mu);
	return found;
}

/* Does [p, p+bytes) lie inside one registered range? */
bool range_has(struct range **list, const void *p, size_t bytes)
{
	bool ok = false;
	uintptr_t a = (uintptr_t)p;
	pthread_mutex_lock(&sim.mu);
	for (struct range *r = *list; r; r = r->next) {
		if (a >= r->base && a - r->base <= r->size && bytes <= r->size - (a - r->base)) {
			ok = true;
			break;
		}
	}
	pthread_mutex_unlock(&sim.mu);
	return ok;
}

/* ---- handles --------------------------------------------------------------------------- */

/* The live handles of every kind; each starts with its kind's magic number.  A program has tens
 * of them, so a scan under one lock is cheaper than anything cleverer. */
static struct {
	pthread_mutex_t mu;
	const void **v;
	size_t n, cap;
} live = { .mu = PTHREAD_MUTEX_INITIALIZER };

bool live_add(const void *h)
{
	bool ok = true;
	pthread_mutex_lock(&live.mu);
	if (live.n == live.cap) {
		size_t cap = live.cap ? 2 * live.cap : 64;
		const void **v = realloc(live.v, cap * sizeof(*v));
		if (v) {
			live.v = v;
			live.cap = cap;
		} else {
			ok = false;
		}
	}
	if (ok)
		live.v[live.n++] = h;
	pthread_mutex_unlock(&live.mu);
	return ok;
}

/* Unregister h; false if it was not live (destroyed twice, or never a handle). */
bool live_del(const void *h)
{
	bool found = false;
	pthread_mutex_lock(&live.mu);
	for (size_t i = 0; i < live.n; i++)
		if (live.v[i] == h) {
			live.v[i] = live.v[--live.n];
			found = true;
			break;
		}
	pthread_mutex_unlock(&live.mu);
	return found;
}

bool live_is(const void *h, uint32_t magic)
{
	bool ok = false;
	if (!h)
		return false;
	pthread_mutex_lock(&live.mu);
	for (size_t i = 0; i < live.n; i++)
		if (live.v[i] == h) {
			ok = *(const uint32_t *)h == magic;
			break;
		}
	pthread_mutex_unlock(&live.mu);
	return ok;
}

/* The stream an operation goes to: NULL, CU_STREAM_LEGACY and CU_STREAM_PER_THREAD all mean the
 * current context's NULL stream here (per-thread streams are not simulated separately). */
CUresult resolve_stream(CUstream h, struct CUstream_st **out)
{
	if (h == NULL || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
		if (!ctx_ok(tls_ctx))
			return CUDA_ERROR_INVALID_CONTEXT;
		*out = tls_ctx->null_stream;
		return CUDA_SUCCESS;
	}
	if (!stream_ok(h))
		return CUDA_ERROR_INVALID_HANDLE;
	*out = h;
	return CUDA_SUCCESS;
}

/* ---- initialization, devices, contexts ------------------------------------------------ */

API CUresult cuDriverGetVersion(int *version)
{
	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	*version = SIM_DRIVER_VERSION;
	return CUDA_SUCCESS;
}

API CUresult cuInit(unsigned int flags)
{
	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim.mu);
	if (sim.initialized) {
		pthread_mutex_unlock(&sim.mu);
		return CUDA_SUCCESS;
	}
	int n = SIM_DEFAULT_DEVICES;
	const char *env = getenv("SIMCUDA_DEVICES");
	if (env && *env) {
		char *end;
		long v = strtol(env, &end, 10);
		if (*end || v < 0 || v > SIM_MAX_DEVICES) {
			pthread_mutex_unlock(&sim.mu);
			return CUDA_ERROR_INVALID_VALUE;
		}
		n = (int)v;
	}
	if (n == 0) {
		/* as the driver does on a machine whose GPUs are all hidden */
		pthread_mutex_unlock(&sim.mu);
		return CUDA_ERROR_NO_DEVICE;
	}
	sim.ndev = n;
	for (int i = 0; i < n; i++) {
		sim.dev[i].ordinal = i;
		pthread_mutex_init(&sim.dev[i].exec, NULL);
		pthread_mutex_init(&sim.dev[i].dma, NULL);
	}
	sim.time_scale = 1.0;
	const char *scale = getenv("SIMCUDA_TIME_SCALE");
	if (scale && *scale) {
		char *end;
		double v = strtod(scale, &end);
		if (*end || !(v >= 0.01 && v <= 100)) {
			pthread_mutex_unlock(&sim.mu);
			return CUDA_ERROR_INVALID_VALUE;
		}
		sim.time_scale = v;
	}
	const char *trace = getenv("SIMCUDA_TRACE");
	if (trace && *trace)
		sim.trace_fd = open(trace, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	const char *names = getenv("SIMCUDA_HANDLE_NAMES");
	sim.hide_handle_names = names && !strcmp(names, "0");
	const char *fault = getenv("SIMCUDA_FAULT");
	sim.fault = fault && *fault ? strdup(fault) : NULL;
	__atomic_store_n(&sim.initialized, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&sim.mu);
	return CUDA_SUCCESS;
}

API CUresult cuDeviceGetCount(int *count)
{
	CHECK_INIT();
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	*count = sim.ndev;
	return CUDA_SUCCESS;
}

API CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
	CHECK_INIT();
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	if (ordinal < 0 || ordinal >= sim.ndev)
		return CUDA_ERROR_INVALID_DEVICE;
	*device = ordinal;
	return CUDA_SUCCESS;
}

API CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	CHECK_INIT();
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (dev < 0 || dev >= sim.ndev)
		return CUDA_ERROR_INVALID_DEVICE;
	snprintf(name, (size_t)len, "simcuda device %d", dev);
	return CUDA_SUCCESS;
}

API CUresult cuDeviceTotalMem(size_t *bytes, CUdevice dev)
{
	CHECK_INIT();
	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	if (dev < 0 || dev >= sim.ndev)
		return CUDA_ERROR_INVALID_DEVICE;
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	*bytes = pages > 0 && psize > 0 ? (size_t)pages * (size_t)psize : (size_t)1 << 32;
	return CUDA_SUCCESS;
}

API CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
	CHECK_INIT();
	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	if (dev < 0 || dev >= sim.ndev)
		return CUDA_ERROR_INVALID_DEVICE;
	switch (attrib) {
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
		*pi = 9;
		break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
		*pi = 0;
		break;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
		*pi = 1;
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
		*pi = 1024;
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
		*pi = 0x7fffffff;
		break;
	case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
		*pi = 32;
		break;
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
		*pi = 1;
		break;
	default:
		*pi = 0;
		break;
	}
	return CUDA_SUCCESS;
}

API CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	CHECK_INIT();
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (dev < 0 || dev >= sim.ndev)
		return CUDA_ERROR_INVALID_DEVICE;
	struct sim_device *d = &sim.dev[dev];
	pthread_mutex_lock(&sim.mu);
	if (!d->primary) {
		struct CUctx_st *c = calloc(1, sizeof(*c));
		if (!c) {
			pthread_mutex_unlock(&sim.mu);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		c->magic = MAGIC_CTX;
		c->dev = d;
		pthread_mutex_init(&c->mu, NULL);
		pthread_mutex_init(&c->stage.mu, NULL);
		for (int i = 0; i < 2; i++) {
			c->stage.buf[i] = aligned_alloc(4096, SIM_STAGE_CHUNK);
			if (!c->stage.buf[i]) {
				pthread_mutex_unlock(&sim.mu);
				return CUDA_ERROR_OUT_OF_MEMORY;
			}
		}
		CUresult rc = stream_new(c, CU_STREAM_DEFAULT, &c->null_stream);
		if (rc == CUDA_SUCCESS && !live_add(c))
			rc = CUDA_ERROR_OUT_OF_MEMORY; /* the stream thread idles forever: rare */
		if (rc != CUDA_SUCCESS) {
			pthread_mutex_unlock(&sim.mu);
			return rc;
		}
		d->primary = c;
		callbacks_start();
	}
	d->primary_refs++;
	*pctx = d->primary;
	pthread_mutex_unlock(&sim.mu);
	return CUDA_SUCCESS;
}

/* The primary context stays allocated after its last release (its NULL stream thread idles):
 * handles from it remain safe to check, and a later retain returns the same context. */
API CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
	CHECK_INIT();
	if (dev < 0 || dev >= sim.ndev)
		return CUDA_ERROR_INVALID_DEVICE;
	struct sim_device *d = &sim.dev[dev];
	pthread_mutex_lock(&sim.mu);
	CUresult rc = CUDA_SUCCESS;
	if (!d->primary || d->primary_refs == 0)
		rc = CUDA_ERROR_INVALID_CONTEXT;
	else
		d->primary_refs--;
	struct CUctx_st *c = d->primary;
	pthread_mutex_unlock(&sim.mu);
	if (rc == CUDA_SUCCESS)
		ctx_drain(c);
	return rc;
}

API CUresult cuCtxSetCurrent(CUcontext ctx)
{
	CHECK_INIT();
	if (ctx && !ctx_ok(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	tls_ctx = ctx;
	return CUDA_SUCCESS;
}

API CUresult cuCtxGetCurrent(CUcontext *pctx)
{
	CHECK_INIT();
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = tls_ctx;
	return CUDA_SUCCESS;
}

API CUresult cuCtxPushCurrent(CUcontext ctx)
{
	CHECK_INIT();
	if (!ctx_ok(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	if (tls_depth >= CTX_STACK)
		return CUDA_ERROR_INVALID_VALUE;
	tls_stack[tls_depth++] = tls_ctx;
	tls_ctx = ctx;
	return CUDA_SUCCESS;
}

API CUresult cuCtxPopCurrent(CUcontext *pctx)
{
	CHECK_INIT();
	if (!tls_ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (pctx)
		*pctx = tls_ctx;
	tls_ctx = tls_depth > 0 ? tls_stack[--tls_depth] : NULL;
	return CUDA_SUCCESS;
}

API CUresult cuCtxGetDevice(CUdevice *device)
{
	CHECK_INIT();
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	if (!ctx_ok(tls_ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	*device = tls_ctx->dev->ordinal;
	return CUDA_SUCCESS;
}

API CUresult cuCtxSynchronize(void)
{
	CHECK_INIT();
	if (!ctx_ok(tls_ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	ctx_drain(tls_ctx);
	return CUDA_SUCCESS;
}

/* CUDA 13's variant with an explicit context (NULL: the current one); PyTorch binds this one. */
API CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
	CHECK_INIT();
	if (!ctx)
		ctx = tls_ctx;
	if (!ctx_ok(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	ctx_drain(ctx);
	return CUDA_SUCCESS;
}

/* ---- errors ------------------------------------------------------------------------------ */

static const struct {
	CUresult rc;
	const char *name, *text;
} errors[] = {
#define E(rc, text)           \
	{                     \
		rc, #rc, text \
	}
	E(CUDA_SUCCESS, "no error"),
	E(CUDA_ERROR_INVALID_VALUE, "invalid argument"),
	E(CUDA_ERROR_OUT_OF_MEMORY, "out of memory"),
	E(CUDA_ERROR_NOT_INITIALIZED, "initialization error"),
	E(CUDA_ERROR_DEINITIALIZED, "driver shutting down"),
	E(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"),
	E(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"),
	E(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid"),
	E(CUDA_ERROR_INVALID_CONTEXT, "invalid device context"),
	E(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"),
	E(CUDA_ERROR_NOT_FOUND, "named symbol not found"),
	E(CUDA_ERROR_NOT_READY, "device not ready"),
	E(CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure"),
	E(CUDA_ERROR_NOT_SUPPORTED, "operation not supported"),
	E(CUDA_ERROR_UNKNOWN, "unknown error"),
#undef E
};

API CUresult cuGetErrorName(CUresult rc, const char **str)
{
	if (!str)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].rc == rc) {
			*str = errors[i].name;
			return CUDA_SUCCESS;
		}
	*str = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

API CUresult cuGetErrorString(CUresult rc, const char **str)
{
	if (!str)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].rc == rc) {
			*str = errors[i].text;
			return CUDA_SUCCESS;
		}
	*str = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}
