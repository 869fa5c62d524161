// SPDX-License-Identifier: MIT
/*
 * simcuda: a CUDA driver for machines without a GPU, built as libcuda.so.1.
 *
 * It exports a subset of the real driver's symbols, under the names cuda.h binds (this file
 * includes cuda.h, or engine/cuda_api.h's copy of its mapping where there is no toolkit, so
 * defining cuMemAlloc defines cuMemAlloc_v2, exactly as a caller binds it),
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
#include "cuda_api.h"
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

#include "sim.h"

#define API __attribute__((visibility("default")))

#define SIM_DRIVER_VERSION  13000
#define SIM_MAX_DEVICES	    64
#define SIM_DEFAULT_DEVICES 8
/*
 * The device model: about 2000x slower than an H200 per thread of a field kernel, so that the
 * CPU versions of the kernels (~0.1-0.3 us a thread on the dev machines) take a small share of
 * the modelled time.  Copies: a fixed latency per operation (the DMA setup and completion a real
 * engine pays, ~10 us, scaled the same way) and a per-KiB cost; a copy from pageable memory pays
 * the latency once per staging chunk and is synchronous, which is why it costs what pinned
 * copies do not.
 */
#define SIM_KERNEL_NS	    20000ull
#define SIM_THREAD_NS	    1000ull
#define SIM_COPY_NS	    50000ull
#define SIM_COPY_NS_PER_KB  60000ull
#define SIM_STAGED_FACTOR   26 /* pageable (staged) against pinned: 2 GB/s against 52 on an H200 */
/*
 * Freeing device memory: after the drain, the driver unmaps it from the device's page tables
 * and the process's, which takes time in the call (on an H200, emptying PyTorch's cache of a
 * 256 MiB block: ~4 ms). Host time, in the calling thread, scaled as device time is.
 */
#define SIM_UNMAP_NS	    50000ull
#define SIM_UNMAP_NS_PER_MB 60000ull

#define SIM_FATBIN_MAGIC  0xBA55ED50u /* fatBinaryHeader, the image `nvcc --fatbin` writes */
#define SIM_FATBINC_MAGIC 0x466243B1u /* __fatBinC_Wrapper_t, an embedded fatbin wrapper */

enum {
	MAGIC_CTX = 0x43545831,
	MAGIC_STREAM = 0x53545231,
	MAGIC_EVENT = 0x45564E31,
	MAGIC_MODULE = 0x4D4F4431,
	MAGIC_FUNC = 0x46554E31,
	MAGIC_GRAPH = 0x47524131,
	MAGIC_GEXEC = 0x47455831,
};

struct sim_device {
	int ordinal;
	pthread_mutex_t exec; /* held while a kernel runs: one kernel at a time per device */
	pthread_mutex_t dma;  /* held while a copy runs: one copy engine per device */
	uint64_t exec_free;   /* under exec: when its last kernel (or memset) completed */
	uint64_t dma_free;    /* under dma: when its last copy completed */
	struct CUctx_st *primary;
	int primary_refs;
};

/* The driver's staging area for copies from pageable host memory: two pinned bounce buffers,
 * used in turn by one copy at a time (a second copier waits for the staging lock). */
#define SIM_STAGE_CHUNK (64u << 10)
struct staging {
	pthread_mutex_t mu;
	unsigned char *buf[2];
};

struct CUctx_st {
	uint32_t magic;
	struct sim_device *dev;
	struct staging stage;
	pthread_mutex_t mu;	     /* guards streams */
	struct CUstream_st *streams; /* every live stream, the NULL stream first */
	struct CUstream_st *null_stream;
};

#define SIM_ARGS_MAX 128 /* every engine kernel takes one by-value struct of at most this */

enum op_kind {
	OP_KERNEL,
	OP_COPY,
	OP_MEMSET,
	OP_RECORD,
	OP_WAIT_STREAM,
	OP_WAIT_EVENT,
	OP_HOST_FUNC
};

struct op {
	struct op *next;
	enum op_kind kind;
	uint64_t seq;
	uint64_t queued; /* CLOCK_MONOTONIC ns when it was appended to its stream */
	union {
		struct {
			const struct sim_kernel *k;
			uint64_t nthreads;
			unsigned char args[SIM_ARGS_MAX]; /* copied at launch */
		} kernel;
		struct {
			void *dst;
			const void *src;
			size_t bytes;
			bool staged; /* from a staging buffer: a pageable copy's chunk */
		} copy;
		struct {
			void *dst;
			uint32_t value;
			unsigned elem;
			size_t count;
		} memset;
		struct {
			struct CUevent_st *ev;
			uint64_t gen;
		} event;
		struct {
			struct CUstream_st *s;
			uint64_t seq;
		} wait;
		struct {
			CUhostFn fn;		/* cuLaunchHostFunc's */
			CUstreamCallback cb;	/* or cuStreamAddCallback's */
			struct CUstream_st *on; /* the callback's stream argument */
			void *arg;
		} host;
	};
};

struct CUstream_st {
	uint32_t magic;
	unsigned flags;
	int refs; /* the handle, the worker, and every pending wait on this stream */
	struct CUctx_st *ctx;
	struct CUstream_st *next; /* in ctx->streams */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	struct op *head, *tail;
	uint64_t submitted, completed;
	uint64_t done_at; /* when operation `completed` completed (its modelled time) */
	uint64_t wake_at; /* the lowest sequence number a waiter waits for; UINT64_MAX: none */
	bool stopping;
	struct CUgraph_st *capture; /* under ctx->mu: the graph being captured, or NULL */
};

/* A graph captured from a stream: its operations in order, as templates. */
struct CUgraph_st {
	uint32_t magic;
	struct CUctx_st *ctx;
	struct op *head, *tail;
	unsigned nops;
};

/* An instantiated graph: a copy of the graph's operations, launched as a whole. */
struct CUgraphExec_st {
	uint32_t magic;
	struct CUgraph_st g;
};

struct CUevent_st {
	uint32_t magic;
	unsigned flags;
	int refs; /* the handle and every pending record or wait */
	struct CUctx_st *ctx;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	uint64_t recorded; /* generation of the last record enqueued */
	uint64_t reached;  /* generation of the last record executed */
	uint64_t at;	   /* CLOCK_MONOTONIC ns: when the work before that record completed */
};

struct CUmod_st {
	uint32_t magic;
	struct CUctx_st *ctx;
	struct CUfunc_st *funcs; /* freed with the module */
};

/*
 * The kernel's name pointer at offset 8 mirrors driver 580's CUfunction layout (see
 * tests/gpu/handle-layout-h200), so gapscope's naming of kernels from their handles (record -p
 * after the lookups) is exercised without a GPU; SIMCUDA_HANDLE_NAMES=0 leaves it NULL, as a
 * driver of another layout would. Freed functions are handed out again, the most recently freed
 * first, as a slab allocator does: a handle of an unloaded module comes back for another kernel.
 */
struct CUfunc_st {
	uint32_t magic;
	const char *name; /* offset 8 */
	struct CUmod_st *mod;
	struct CUfunc_st *next;
	const struct sim_kernel *k;
};
_Static_assert(__builtin_offsetof(struct CUfunc_st, name) == 8, "driver 580's name offset");

/* Device and pinned host allocations, to validate pointers the way the driver does. */
struct range {
	struct range *next;
	uintptr_t base;
	size_t size;
};

static struct {
	pthread_mutex_t mu;
	bool initialized;
	int ndev;
	struct sim_device dev[SIM_MAX_DEVICES];
	struct range *device_mem, *pinned_mem;
	int trace_fd;
	const char *fault;
	double time_scale;
	bool hide_handle_names;
	struct CUfunc_st *free_funcs; /* next-linked */
} sim = { .mu = PTHREAD_MUTEX_INITIALIZER, .trace_fd = -1 };

static __thread struct CUctx_st *tls_ctx;
#define CTX_STACK 16
static __thread struct CUctx_st *tls_stack[CTX_STACK];
static __thread int tls_depth;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* ---- pointer registries ---------------------------------------------------------------- */

static void range_add(struct range **list, void *p, size_t size)
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
static bool range_del(struct range **list, void *p)
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
static bool range_size(struct range **list, const void *p, size_t *size)
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
static bool range_has(struct range **list, const void *p, size_t bytes)
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

static bool live_add(const void *h)
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
static bool live_del(const void *h)
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

static bool live_is(const void *h, uint32_t magic)
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

static bool initialized(void)
{
	return __atomic_load_n(&sim.initialized, __ATOMIC_ACQUIRE);
}

#define CHECK_INIT()                                       \
	do {                                               \
		if (!initialized())                        \
			return CUDA_ERROR_NOT_INITIALIZED; \
	} while (0)

static bool ctx_ok(struct CUctx_st *c)
{
	return live_is(c, MAGIC_CTX);
}

static bool stream_ok(struct CUstream_st *s)
{
	return live_is(s, MAGIC_STREAM);
}

static bool event_ok(struct CUevent_st *e)
{
	return live_is(e, MAGIC_EVENT);
}

/* The stream an operation goes to: NULL, CU_STREAM_LEGACY and CU_STREAM_PER_THREAD all mean the
 * current context's NULL stream here (per-thread streams are not simulated separately). */
static CUresult resolve_stream(CUstream h, struct CUstream_st **out)
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

/* ---- streams --------------------------------------------------------------------------- */

static void stream_put(struct CUstream_st *s)
{
	pthread_mutex_lock(&s->mu);
	bool last = --s->refs == 0;
	pthread_mutex_unlock(&s->mu);
	if (!last)
		return;
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->work);
	pthread_cond_destroy(&s->done);
	free(s);
}

static void event_put(struct CUevent_st *e)
{
	pthread_mutex_lock(&e->mu);
	bool last = --e->refs == 0;
	pthread_mutex_unlock(&e->mu);
	if (!last)
		return;
	pthread_mutex_destroy(&e->mu);
	pthread_cond_destroy(&e->cond);
	free(e);
}

/* Sleep until t0 + ns (CLOCK_MONOTONIC): the rest of an operation's modelled device time. */
static void device_time(uint64_t t0, uint64_t ns)
{
	uint64_t until = t0 + (uint64_t)((double)ns * sim.time_scale);
	struct timespec ts = { .tv_sec = (time_t)(until / 1000000000ull),
			       .tv_nsec = (long)(until % 1000000000ull) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static uint64_t copy_ns(size_t bytes)
{
	return SIM_COPY_NS + SIM_COPY_NS_PER_KB * ((bytes + 1023) >> 10);
}

static void trace_kernel(int dev, const char *name, uint64_t start, uint64_t end)
{
	if (sim.trace_fd < 0)
		return;
	char line[256];
	int n = snprintf(line, sizeof(line),
			 "{\"device\":%d,\"kernel\":\"%s\",\"start_ns\":%llu,\"end_ns\":%llu}\n",
			 dev, name, (unsigned long long)start, (unsigned long long)end);
	/* One write(2) per line on an O_APPEND file: lines from many streams never interleave. */
	if (n > 0 && write(sim.trace_fd, line, (size_t)n) != n)
		return; /* best effort: the engine's own results never depend on the trace */
}

/* Wait, holding s->mu, until s has completed operation seq. */
static void stream_wait_locked(struct CUstream_st *s, uint64_t seq)
{
	while (s->completed < seq) {
		if (seq < s->wake_at)
			s->wake_at = seq;
		pthread_cond_wait(&s->done, &s->mu);
	}
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/*
 * Host functions and stream callbacks run on one thread of the driver's (the real one's
 * cuda-EvtHandlr), in the order their streams reach them, and a stream's later work waits for
 * its function to return. The stream's worker hands one over and waits for it.
 */
static struct {
	pthread_mutex_t serial; /* one hand-over at a time */
	pthread_mutex_t mu;
	pthread_cond_t cond;
	bool started, pending;
	struct op *op;
} cbs = { .serial = PTHREAD_MUTEX_INITIALIZER,
	  .mu = PTHREAD_MUTEX_INITIALIZER,
	  .cond = PTHREAD_COND_INITIALIZER };

static void *callback_thread(void *arg)
{
	pthread_setname_np(pthread_self(), "simcuda-cb");
	pthread_mutex_lock(&cbs.mu);
	for (;;) {
		while (!cbs.pending)
			pthread_cond_wait(&cbs.cond, &cbs.mu);
		struct op *op = cbs.op;
		pthread_mutex_unlock(&cbs.mu);
		if (op->host.fn)
			op->host.fn(op->host.arg);
		else
			op->host.cb(op->host.on, CUDA_SUCCESS, op->host.arg);
		pthread_mutex_lock(&cbs.mu);
		cbs.pending = false;
		pthread_cond_broadcast(&cbs.cond);
	}
	return arg;
}

static void run_host_func(struct op *op)
{
	pthread_mutex_lock(&cbs.serial);
	pthread_mutex_lock(&cbs.mu);
	if (!cbs.started) {
		pthread_t t;
		pthread_attr_t attr;

		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		cbs.started = !pthread_create(&t, &attr, callback_thread, NULL);
		pthread_attr_destroy(&attr);
	}
	if (cbs.started) {
		cbs.op = op;
		cbs.pending = true;
		pthread_cond_broadcast(&cbs.cond);
		while (cbs.pending)
			pthread_cond_wait(&cbs.cond, &cbs.mu);
	}
	pthread_mutex_unlock(&cbs.mu);
	pthread_mutex_unlock(&cbs.serial);
}

/*
 * Run op, the next operation of s, and return when it completed in device time.  A device
 * starts queued work when it is free, not when the thread standing in for it next gets a CPU:
 * an operation begins at the latest of its submission, the completion of the stream's previous
 * operation (start) and, for a kernel or a copy, its engine's last completion.  A worker that
 * was kept off its CPU (a busy host, a stolen virtual CPU) catches up by sleeping less; only
 * what it computes on the CPU, and its wakeup at the end, stretch an operation.
 */
static uint64_t run_op(struct CUstream_st *s, struct op *op, uint64_t start)
{
	switch (op->kind) {
	case OP_KERNEL: {
		struct sim_device *d = s->ctx->dev;
		pthread_mutex_lock(&d->exec);
		uint64_t t0 = max_u64(start, d->exec_free);
		op->kernel.k->run(op->kernel.args, op->kernel.nthreads);
		if (sim.fault && !strcmp(sim.fault, op->kernel.k->name))
			op->kernel.k->fault(op->kernel.args, op->kernel.nthreads);
		device_time(t0, SIM_KERNEL_NS + SIM_THREAD_NS * op->kernel.nthreads);
		uint64_t t1 = d->exec_free = now_ns();
		pthread_mutex_unlock(&d->exec);
		trace_kernel(d->ordinal, op->kernel.k->name, t0, t1);
		return t1;
	}
	case OP_COPY: {
		struct sim_device *d = s->ctx->dev;
		pthread_mutex_lock(&d->dma);
		uint64_t t0 = max_u64(start, d->dma_free);
		memmove(op->copy.dst, op->copy.src, op->copy.bytes);
		device_time(t0,
			    copy_ns(op->copy.bytes) * (op->copy.staged ? SIM_STAGED_FACTOR : 1));
		uint64_t t1 = d->dma_free = now_ns();
		pthread_mutex_unlock(&d->dma);
		return t1;
	}
	case OP_MEMSET: {
		struct sim_device *d = s->ctx->dev;
		pthread_mutex_lock(&d->exec);
		uint64_t t0 = max_u64(start, d->exec_free);
		if (op->memset.elem == 1) {
			memset(op->memset.dst, (int)op->memset.value, op->memset.count);
		} else {
			uint32_t *p = op->memset.dst;
			for (size_t i = 0; i < op->memset.count; i++)
				p[i] = op->memset.value;
		}
		device_time(t0, SIM_KERNEL_NS + SIM_THREAD_NS * (op->memset.count / 64));
		uint64_t t1 = d->exec_free = now_ns();
		pthread_mutex_unlock(&d->exec);
		return t1;
	}
	case OP_RECORD: {
		/* the time the work before it completed: what a device's event timestamp holds */
		struct CUevent_st *e = op->event.ev;
		pthread_mutex_lock(&e->mu);
		e->at = start;
		if (op->event.gen > e->reached)
			e->reached = op->event.gen;
		pthread_cond_broadcast(&e->cond);
		pthread_mutex_unlock(&e->mu);
		event_put(e);
		return start;
	}
	case OP_WAIT_EVENT: {
		struct CUevent_st *e = op->event.ev;
		pthread_mutex_lock(&e->mu);
		while (e->reached < op->event.gen)
			pthread_cond_wait(&e->cond, &e->mu);
		uint64_t t = e->at;
		pthread_mutex_unlock(&e->mu);
		event_put(e);
		return max_u64(start, t);
	}
	case OP_HOST_FUNC:
		/* it runs once the work before it is done: on a device, not before that time */
		device_time(start, 0);
		run_host_func(op);
		return max_u64(start, now_ns());
	case OP_WAIT_STREAM: {
		struct CUstream_st *t = op->wait.s;
		pthread_mutex_lock(&t->mu);
		stream_wait_locked(t, op->wait.seq);
		uint64_t done = t->done_at;
		pthread_mutex_unlock(&t->mu);
		stream_put(t);
		return max_u64(start, done);
	}
	}
	return start;
}

/*
 * Operations come from a free list, not malloc: a driver does not allocate per launch, and a
 * thread that feeds the GPU must not wait on a malloc arena that another thread (trimming it,
 * say) holds.
 */
static struct {
	pthread_mutex_t mu;
	struct op *free;
} ops = { .mu = PTHREAD_MUTEX_INITIALIZER };

static struct op *op_new(enum op_kind kind)
{
	pthread_mutex_lock(&ops.mu);
	struct op *op = ops.free;
	if (op)
		ops.free = op->next;
	pthread_mutex_unlock(&ops.mu);
	if (!op)
		op = malloc(sizeof(*op));
	if (op) {
		op->next = NULL;
		op->kind = kind;
		op->seq = 0;
	}
	return op;
}

static void op_free(struct op *op)
{
	pthread_mutex_lock(&ops.mu);
	op->next = ops.free;
	ops.free = op;
	pthread_mutex_unlock(&ops.mu);
}

static void *stream_worker(void *arg)
{
	struct CUstream_st *s = arg;

	/* This thread stands in for the device's engines: named as simcuda's, not after whichever
	 * engine thread created the stream.  It competes for the CPU like any thread: when the host
	 * is overloaded, what it computes and its wakeups stretch the simulated device's operations
	 * (their starts stay where a device's would be: run_op). */
	char name[16];
	snprintf(name, sizeof(name), "simcuda-dev%d", s->ctx->dev->ordinal);
	pthread_setname_np(pthread_self(), name);
	/* modelled device time ends on the ns, not within the default 50 us of timer slack */
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	/*
	 * A device is not slowed by the host's load: where allowed (CAP_SYS_NICE), the thread that
	 * stands in for it runs at the lowest real-time priority, so it takes its CPU (a small
	 * share: the CPU versions of the kernels take a fraction of the modelled time) ahead of any
	 * CPU-bound host thread; else at nice -10, else as it is.  Without the capability the
	 * device's times stretch when the host is oversubscribed.
	 */
	struct sched_param sp = { .sched_priority = 1 };
	if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp))
		(void)setpriority(PRIO_PROCESS, (id_t)gettid(), -10);

	pthread_mutex_lock(&s->mu);
	for (;;) {
		while (!s->head && !s->stopping)
			pthread_cond_wait(&s->work, &s->mu);
		if (!s->head)
			break; /* stopping and drained */
		struct op *op = s->head;
		s->head = op->next;
		if (!s->head)
			s->tail = NULL;
		uint64_t start = max_u64(op->queued, s->done_at);
		pthread_mutex_unlock(&s->mu);

		uint64_t done = run_op(s, op, start);

		pthread_mutex_lock(&s->mu);
		s->completed = op->seq;
		s->done_at = done;
		/* waiters are woken when what they wait for is done, once, as the driver wakes a
		 * blocking synchronize; not at every operation that completes before it */
		if (s->completed >= s->wake_at) {
			s->wake_at = UINT64_MAX;
			pthread_cond_broadcast(&s->done);
		}
		op_free(op);
	}
	pthread_mutex_unlock(&s->mu);
	stream_put(s);
	return NULL;
}

static CUresult stream_new(struct CUctx_st *ctx, unsigned flags, struct CUstream_st **out)
{
	struct CUstream_st *s = calloc(1, sizeof(*s));
	if (!s)
		return CUDA_ERROR_OUT_OF_MEMORY;
	s->magic = MAGIC_STREAM;
	s->flags = flags;
	s->refs = 2; /* handle + worker */
	s->ctx = ctx;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->work, NULL);
	pthread_cond_init(&s->done, NULL);
	s->wake_at = UINT64_MAX;

	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (!live_add(s)) {
		free(s);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	int err = pthread_create(&s->thread, &attr, stream_worker, s);
	pthread_attr_destroy(&attr);
	if (err) {
		live_del(s);
		free(s);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	pthread_mutex_lock(&ctx->mu);
	if (ctx->null_stream) {
		/* keep the NULL stream first: the legacy-stream scan starts after it */
		s->next = ctx->null_stream->next;
		ctx->null_stream->next = s;
	} else {
		s->next = ctx->streams;
		ctx->streams = s;
	}
	pthread_mutex_unlock(&ctx->mu);
	*out = s;
	return CUDA_SUCCESS;
}

/* Append op to s; returns its sequence number.  Caller holds no stream lock. */
static uint64_t push_op(struct CUstream_st *s, struct op *op)
{
	pthread_mutex_lock(&s->mu);
	uint64_t seq = op->seq = ++s->submitted;
	op->queued = now_ns();
	op->next = NULL;
	if (s->tail)
		s->tail->next = op;
	else
		s->head = op;
	s->tail = op;
	pthread_cond_signal(&s->work);
	pthread_mutex_unlock(&s->mu);
	return seq; /* not op->seq: the worker may have run and freed op by now */
}

/* Make s wait for everything submitted to t so far (nothing if t is already idle). */
static void push_wait_stream(struct CUstream_st *s, struct CUstream_st *t)
{
	pthread_mutex_lock(&t->mu);
	uint64_t seq = t->submitted;
	bool idle = t->completed >= seq;
	if (!idle)
		t->refs++;
	pthread_mutex_unlock(&t->mu);
	if (idle)
		return;
	struct op *w = op_new(OP_WAIT_STREAM);
	if (!w)
		abort();
	w->kind = OP_WAIT_STREAM;
	w->wait.s = t;
	w->wait.seq = seq;
	push_op(s, w);
}

/*
 * Enqueue op on s with the legacy default stream's ordering: work on the NULL stream waits for
 * all prior work of the context's blocking streams, and work on a blocking stream waits for all
 * prior work of the NULL stream.  Non-blocking streams order only against themselves.
 */
static uint64_t enqueue(struct CUstream_st *s, struct op *op)
{
	struct CUctx_st *ctx = s->ctx;
	pthread_mutex_lock(&ctx->mu);
	if (s == ctx->null_stream) {
		for (struct CUstream_st *t = ctx->streams; t; t = t->next)
			if (t != s && !(t->flags & CU_STREAM_NON_BLOCKING))
				push_wait_stream(s, t);
	} else if (!(s->flags & CU_STREAM_NON_BLOCKING)) {
		push_wait_stream(s, ctx->null_stream);
	}
	/* under ctx->mu, so the waits and the op are adjacent in s's FIFO */
	uint64_t seq = push_op(s, op);
	pthread_mutex_unlock(&ctx->mu);
	return seq;
}

/* Capturing: s's work goes into its graph instead of running.  Returns true if it did. */
static bool captured(struct CUstream_st *s, struct op *op)
{
	pthread_mutex_lock(&s->ctx->mu);
	struct CUgraph_st *g = s->capture;
	if (g) {
		op->next = NULL;
		if (g->tail)
			g->tail->next = op;
		else
			g->head = op;
		g->tail = op;
		g->nops++;
	}
	pthread_mutex_unlock(&s->ctx->mu);
	return g != NULL;
}

static bool capturing(struct CUstream_st *s)
{
	pthread_mutex_lock(&s->ctx->mu);
	bool c = s->capture != NULL;
	pthread_mutex_unlock(&s->ctx->mu);
	return c;
}

static void stream_wait_seq(struct CUstream_st *s, uint64_t seq)
{
	pthread_mutex_lock(&s->mu);
	stream_wait_locked(s, seq);
	pthread_mutex_unlock(&s->mu);
}

static void stream_drain(struct CUstream_st *s)
{
	pthread_mutex_lock(&s->mu);
	uint64_t seq = s->submitted;
	pthread_mutex_unlock(&s->mu);
	stream_wait_seq(s, seq);
}

static void ctx_drain(struct CUctx_st *ctx)
{
	/* Snapshot the streams with a reference each: another thread may destroy one meanwhile. */
	struct CUstream_st *list[256];
	int n = 0;
	do {
		n = 0;
		pthread_mutex_lock(&ctx->mu);
		for (struct CUstream_st *t = ctx->streams; t && n < 256; t = t->next) {
			pthread_mutex_lock(&t->mu);
			t->refs++;
			pthread_mutex_unlock(&t->mu);
			list[n++] = t;
		}
		pthread_mutex_unlock(&ctx->mu);
		for (int i = 0; i < n; i++) {
			stream_drain(list[i]);
			stream_put(list[i]);
		}
	} while (n == 256);
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

/* ---- memory ------------------------------------------------------------------------------ */

#define CHECK_CTX()                                        \
	do {                                               \
		CHECK_INIT();                              \
		if (!ctx_ok(tls_ctx))                      \
			return CUDA_ERROR_INVALID_CONTEXT; \
	} while (0)

API CUresult cuMemAlloc(CUdeviceptr *dptr, size_t bytes)
{
	CHECK_CTX();
	if (!dptr || bytes == 0)
		return CUDA_ERROR_INVALID_VALUE;
	/* the driver aligns allocations to at least 256 bytes */
	size_t size = (bytes + 255) & ~(size_t)255;
	void *p = aligned_alloc(256, size);
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	range_add(&sim.device_mem, p, bytes);
	*dptr = (CUdeviceptr)(uintptr_t)p;
	return CUDA_SUCCESS;
}

/* Freeing waits for the context's outstanding work, as cuMemFree does when the memory might
 * still be in use (a kernel never reads freed memory), then unmaps it (SIM_UNMAP_NS). */
API CUresult cuMemFree(CUdeviceptr dptr)
{
	CHECK_CTX();
	if (!dptr)
		return CUDA_SUCCESS;
	void *p = (void *)(uintptr_t)dptr;
	size_t bytes = 0;
	if (!range_size(&sim.device_mem, p, &bytes))
		return CUDA_ERROR_INVALID_VALUE;
	ctx_drain(tls_ctx);
	device_time(now_ns(), SIM_UNMAP_NS + SIM_UNMAP_NS_PER_MB * (bytes >> 20));
	if (!range_del(&sim.device_mem, p))
		return CUDA_ERROR_INVALID_VALUE;
	free(p);
	return CUDA_SUCCESS;
}

/* Pinned memory is ordinary memory the simulator remembers, so async copies from it can return
 * at once while copies from anything else block as the driver's staging does. */
static CUresult host_alloc(void **pp, size_t bytes)
{
	CHECK_CTX();
	if (!pp || bytes == 0)
		return CUDA_ERROR_INVALID_VALUE;
	void *p = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	range_add(&sim.pinned_mem, p, bytes);
	*pp = p;
	return CUDA_SUCCESS;
}

API CUresult cuMemHostAlloc(void **pp, size_t bytes, unsigned int flags)
{
	return host_alloc(pp, bytes);
}

API CUresult cuMemAllocHost(void **pp, size_t bytes)
{
	return host_alloc(pp, bytes);
}

API CUresult cuMemFreeHost(void *p)
{
	CHECK_CTX();
	if (!range_del(&sim.pinned_mem, p))
		return CUDA_ERROR_INVALID_VALUE;
	free(p);
	return CUDA_SUCCESS;
}

/* Enqueue one DMA of bytes from src to dst on s; returns its sequence number, 0 on ENOMEM. */
static uint64_t dma(struct CUstream_st *s, void *dst, const void *src, size_t bytes, bool staged)
{
	struct op *op = op_new(OP_COPY);
	if (!op)
		return 0;
	op->copy.dst = dst;
	op->copy.src = src;
	op->copy.bytes = bytes;
	op->copy.staged = staged;
	return enqueue(s, op);
}

/*
 * A copy between pageable host memory and the device, as the driver does it: the DMA engine can
 * only reach pinned memory, so the calling thread copies the data chunk by chunk through the
 * context's two pinned bounce buffers (CPU memcpy into one while the DMA of the other runs),
 * and returns when the last chunk has landed.  Real work on the calling thread, and a wait per
 * chunk for the engine: why a pageable copy costs what pinned copies do not.
 */
static CUresult staged_copy(struct CUstream_st *s, void *dst, const void *src, size_t bytes,
			    bool to_device)
{
	struct staging *st = &s->ctx->stage;
	uint64_t pending[2] = { 0, 0 };
	CUresult rc = CUDA_SUCCESS;

	pthread_mutex_lock(&st->mu);
	for (size_t off = 0, i = 0; off < bytes; off += SIM_STAGE_CHUNK, i ^= 1) {
		size_t len = bytes - off < SIM_STAGE_CHUNK ? bytes - off : SIM_STAGE_CHUNK;
		if (pending[i])
			stream_wait_seq(s, pending[i]); /* this bounce buffer's last DMA is done */
		if (to_device) {
			memcpy(st->buf[i], (const char *)src + off, len);
			pending[i] = dma(s, (char *)dst + off, st->buf[i], len, true);
		} else {
			uint64_t seq = dma(s, st->buf[i], (const char *)src + off, len, true);
			if (seq)
				stream_wait_seq(s, seq);
			memcpy((char *)dst + off, st->buf[i], len);
			pending[i] = 0;
		}
		if (to_device && !pending[i]) {
			rc = CUDA_ERROR_OUT_OF_MEMORY;
			break;
		}
	}
	for (int i = 0; i < 2; i++)
		if (pending[i])
			stream_wait_seq(s, pending[i]);
	pthread_mutex_unlock(&st->mu);
	return rc;
}

static CUresult copy(void *dst, const void *src, size_t bytes, CUstream h, bool async,
		     const void *host)
{
	CHECK_CTX();
	struct CUstream_st *s;
	CUresult rc = resolve_stream(async ? h : NULL, &s);
	if (rc != CUDA_SUCCESS)
		return rc;
	if (bytes == 0)
		return CUDA_SUCCESS;
	const void *dev = host == src ? dst : src;
	if (!range_has(&sim.device_mem, dev, bytes) || !host)
		return CUDA_ERROR_INVALID_VALUE;
	/* Synchronous and asynchronous copies from pageable memory are staged and return when
	 * done; async ones from pinned memory return at once, sync ones when the DMA is done. */
	if (!range_has(&sim.pinned_mem, host, bytes))
		return staged_copy(s, dst, src, bytes, host == src);
	uint64_t seq = dma(s, dst, src, bytes, false);
	if (!seq)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (!async)
		stream_wait_seq(s, seq);
	return CUDA_SUCCESS;
}

API CUresult cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t bytes)
{
	return copy((void *)(uintptr_t)dst, src, bytes, NULL, false, src);
}

API CUresult cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t bytes)
{
	return copy(dst, (const void *)(uintptr_t)src, bytes, NULL, false, dst);
}

API CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t bytes, CUstream h)
{
	return copy((void *)(uintptr_t)dst, src, bytes, h, true, src);
}

API CUresult cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t bytes, CUstream h)
{
	return copy(dst, (const void *)(uintptr_t)src, bytes, h, true, dst);
}

static CUresult memset_op(CUdeviceptr dst, uint32_t value, unsigned elem, size_t count, CUstream h,
			  bool async)
{
	CHECK_CTX();
	struct CUstream_st *s;
	CUresult rc = resolve_stream(async ? h : NULL, &s);
	if (rc != CUDA_SUCCESS)
		return rc;
	if (count == 0)
		return CUDA_SUCCESS;
	if (!range_has(&sim.device_mem, (void *)(uintptr_t)dst, count * elem) || (dst % elem) != 0)
		return CUDA_ERROR_INVALID_VALUE;
	struct op *op = op_new(OP_MEMSET);
	if (!op)
		return CUDA_ERROR_OUT_OF_MEMORY;
	op->memset.dst = (void *)(uintptr_t)dst;
	op->memset.value = value;
	op->memset.elem = elem;
	op->memset.count = count;
	uint64_t seq = enqueue(s, op);
	if (!async)
		stream_wait_seq(s, seq);
	return CUDA_SUCCESS;
}

API CUresult cuMemsetD8(CUdeviceptr dst, unsigned char v, size_t n)
{
	return memset_op(dst, v, 1, n, NULL, false);
}

API CUresult cuMemsetD32(CUdeviceptr dst, unsigned int v, size_t n)
{
	return memset_op(dst, v, 4, n, NULL, false);
}

API CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream h)
{
	return memset_op(dst, v, 1, n, h, true);
}

API CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int v, size_t n, CUstream h)
{
	return memset_op(dst, v, 4, n, h, true);
}

/* ---- streams and events ------------------------------------------------------------------ */

API CUresult cuStreamCreate(CUstream *ph, unsigned int flags)
{
	CHECK_CTX();
	if (!ph || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
		return CUDA_ERROR_INVALID_VALUE;
	return stream_new(tls_ctx, flags, ph);
}

/* Returns at once, as the driver does; the worker finishes the queued work, then exits. */
API CUresult cuStreamDestroy(CUstream h)
{
	CHECK_INIT();
	if (!stream_ok(h) || h == h->ctx->null_stream || !live_del(h))
		return CUDA_ERROR_INVALID_HANDLE;
	struct CUctx_st *ctx = h->ctx;
	pthread_mutex_lock(&ctx->mu);
	for (struct CUstream_st **pp = &ctx->streams; *pp; pp = &(*pp)->next)
		if (*pp == h) {
			*pp = h->next;
			break;
		}
	pthread_mutex_unlock(&ctx->mu);
	pthread_mutex_lock(&h->mu);
	h->stopping = true;
	pthread_cond_signal(&h->work);
	pthread_mutex_unlock(&h->mu);
	stream_put(h);
	return CUDA_SUCCESS;
}

API CUresult cuStreamSynchronize(CUstream h)
{
	CHECK_INIT();
	struct CUstream_st *s;
	CUresult rc = resolve_stream(h, &s);
	if (rc != CUDA_SUCCESS)
		return rc;
	if (capturing(s))
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	stream_drain(s);
	return CUDA_SUCCESS;
}

API CUresult cuStreamQuery(CUstream h)
{
	CHECK_INIT();
	struct CUstream_st *s;
	CUresult rc = resolve_stream(h, &s);
	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&s->mu);
	bool idle = s->completed >= s->submitted;
	pthread_mutex_unlock(&s->mu);
	return idle ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

API CUresult cuEventCreate(CUevent *ph, unsigned int flags)
{
	CHECK_CTX();
	unsigned known = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
	if (!ph || (flags & ~known))
		return CUDA_ERROR_INVALID_VALUE;
	struct CUevent_st *e = calloc(1, sizeof(*e));
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	e->magic = MAGIC_EVENT;
	e->flags = flags;
	e->refs = 1;
	e->ctx = tls_ctx;
	pthread_mutex_init(&e->mu, NULL);
	pthread_cond_init(&e->cond, NULL);
	if (!live_add(e)) {
		free(e);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*ph = e;
	return CUDA_SUCCESS;
}

API CUresult cuEventDestroy(CUevent e)
{
	CHECK_INIT();
	if (!live_del(e))
		return CUDA_ERROR_INVALID_HANDLE;
	event_put(e); /* pending records and waits keep it until they ran */
	return CUDA_SUCCESS;
}

API CUresult cuEventRecord(CUevent e, CUstream h)
{
	CHECK_INIT();
	if (!event_ok(e))
		return CUDA_ERROR_INVALID_HANDLE;
	struct CUstream_st *s;
	CUresult rc = resolve_stream(h, &s);
	if (rc != CUDA_SUCCESS)
		return rc;
	if (s->ctx != e->ctx)
		return CUDA_ERROR_INVALID_HANDLE;
	struct op *op = op_new(OP_RECORD);
	if (!op)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&e->mu);
	op->event.gen = ++e->recorded;
	e->refs++;
	pthread_mutex_unlock(&e->mu);
	op->event.ev = e;
	enqueue(s, op);
	return CUDA_SUCCESS;
}

API CUresult cuEventQuery(CUevent e)
{
	CHECK_INIT();
	if (!event_ok(e))
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&e->mu);
	bool done = e->reached >= e->recorded;
	pthread_mutex_unlock(&e->mu);
	return done ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

/* Waits for the event's most recent record; an event never recorded is complete. */
API CUresult cuEventSynchronize(CUevent e)
{
	CHECK_INIT();
	if (!event_ok(e))
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&e->mu);
	uint64_t gen = e->recorded;
	while (e->reached < gen)
		pthread_cond_wait(&e->cond, &e->mu);
	pthread_mutex_unlock(&e->mu);
	return CUDA_SUCCESS;
}

API CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end)
{
	CHECK_INIT();
	if (!ms)
		return CUDA_ERROR_INVALID_VALUE;
	if (!event_ok(start) || !event_ok(end))
		return CUDA_ERROR_INVALID_HANDLE;
	if ((start->flags | end->flags) & CU_EVENT_DISABLE_TIMING)
		return CUDA_ERROR_INVALID_HANDLE;
	uint64_t t[2];
	struct CUevent_st *ev[2] = { start, end };
	for (int i = 0; i < 2; i++) {
		pthread_mutex_lock(&ev[i]->mu);
		bool never = ev[i]->recorded == 0;
		bool pending = ev[i]->reached < ev[i]->recorded;
		t[i] = ev[i]->at;
		pthread_mutex_unlock(&ev[i]->mu);
		if (never)
			return CUDA_ERROR_INVALID_HANDLE;
		if (pending)
			return CUDA_ERROR_NOT_READY;
	}
	*ms = (float)((double)(int64_t)(t[1] - t[0]) / 1e6);
	return CUDA_SUCCESS;
}

API CUresult cuStreamWaitEvent(CUstream h, CUevent e, unsigned int flags)
{
	CHECK_INIT();
	if (!event_ok(e))
		return CUDA_ERROR_INVALID_HANDLE;
	struct CUstream_st *s;
	CUresult rc = resolve_stream(h, &s);
	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&e->mu);
	uint64_t gen = e->recorded;
	bool done = e->reached >= gen;
	if (!done)
		e->refs++;
	pthread_mutex_unlock(&e->mu);
	if (done)
		return CUDA_SUCCESS; /* nothing to wait for: never recorded, or already reached */
	struct op *op = op_new(OP_WAIT_EVENT);
	if (!op) {
		event_put(e);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	op->event.ev = e;
	op->event.gen = gen;
	enqueue(s, op);
	return CUDA_SUCCESS;
}

/* A host function or stream callback: run on the driver's callback thread after the work queued
 * before it on the stream, which waits for it. Not capturable here. */
static CUresult host_func(CUstream h, CUhostFn fn, CUstreamCallback cb, void *arg)
{
	CHECK_INIT();
	if (!fn && !cb)
		return CUDA_ERROR_INVALID_VALUE;
	struct CUstream_st *s;
	CUresult rc = resolve_stream(h, &s);
	if (rc != CUDA_SUCCESS)
		return rc;
	if (capturing(s))
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	struct op *op = op_new(OP_HOST_FUNC);
	if (!op)
		return CUDA_ERROR_OUT_OF_MEMORY;
	op->host.fn = fn;
	op->host.cb = cb;
	op->host.on = h;
	op->host.arg = arg;
	enqueue(s, op);
	return CUDA_SUCCESS;
}

API CUresult cuLaunchHostFunc(CUstream h, CUhostFn fn, void *userData)
{
	return host_func(h, fn, NULL, userData);
}

API CUresult cuStreamAddCallback(CUstream h, CUstreamCallback cb, void *userData,
				 unsigned int flags)
{
	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	return host_func(h, NULL, cb, userData);
}

/* ---- modules and launches ---------------------------------------------------------------- */

API CUresult cuModuleLoadData(CUmodule *mod, const void *image)
{
	CHECK_CTX();
	if (!mod || !image)
		return CUDA_ERROR_INVALID_VALUE;
	uint32_t magic;
	memcpy(&magic, image, sizeof(magic));
	/* Only fatbins: the kernels are the CPU versions in kernels_cpu.c; the image just has to be
	 * what the real driver would be handed. */
	if (magic != SIM_FATBIN_MAGIC && magic != SIM_FATBINC_MAGIC)
		return CUDA_ERROR_INVALID_IMAGE;
	struct CUmod_st *m = calloc(1, sizeof(*m));
	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	m->magic = MAGIC_MODULE;
	m->ctx = tls_ctx;
	if (!live_add(m)) {
		free(m);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*mod = m;
	return CUDA_SUCCESS;
}

/* Waits for the context's work (a queued launch may still refer to the module), then frees the
 * module and its functions. */
API CUresult cuModuleUnload(CUmodule m)
{
	CHECK_INIT();
	if (!live_is(m, MAGIC_MODULE) || !live_del(m))
		return CUDA_ERROR_INVALID_HANDLE;
	ctx_drain(m->ctx);
	pthread_mutex_lock(&sim.mu);
	for (struct CUfunc_st *f = m->funcs, *next; f; f = next) {
		next = f->next;
		live_del(f);
		memset(f, 0, sizeof(*f));
		f->next = sim.free_funcs;
		sim.free_funcs = f;
	}
	pthread_mutex_unlock(&sim.mu);
	free(m);
	return CUDA_SUCCESS;
}

/* A new function of module m for kernel k, a freed one if any. */
static CUresult func_new(CUmodule m, const struct sim_kernel *k, CUfunction *pf)
{
	pthread_mutex_lock(&sim.mu);
	struct CUfunc_st *f = sim.free_funcs;
	if (f)
		sim.free_funcs = f->next;
	pthread_mutex_unlock(&sim.mu);
	if (!f && !(f = calloc(1, sizeof(*f))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	f->magic = MAGIC_FUNC;
	f->name = sim.hide_handle_names ? NULL : k->name;
	f->mod = m;
	f->k = k;
	if (!live_add(f)) {
		free(f);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	/* the module's list is only walked by unload, after the module left the live set */
	pthread_mutex_lock(&sim.mu);
	f->next = m->funcs;
	m->funcs = f;
	pthread_mutex_unlock(&sim.mu);
	*pf = f;
	return CUDA_SUCCESS;
}

API CUresult cuModuleGetFunction(CUfunction *pf, CUmodule m, const char *name)
{
	CHECK_CTX();
	if (!pf || !name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!live_is(m, MAGIC_MODULE))
		return CUDA_ERROR_INVALID_HANDLE;
	const struct sim_kernel *k = sim_kernel__find(name);
	if (!k)
		return CUDA_ERROR_NOT_FOUND;
	return func_new(m, k, pf);
}

/* Every image holds every kernel of the table. */
API CUresult cuModuleGetFunctionCount(unsigned int *count, CUmodule m)
{
	CHECK_CTX();
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	if (!live_is(m, MAGIC_MODULE))
		return CUDA_ERROR_INVALID_HANDLE;
	*count = sim_kernel__count();
	return CUDA_SUCCESS;
}

/* The module's functions in table order, as handles without a lookup by name. */
API CUresult cuModuleEnumerateFunctions(CUfunction *fs, unsigned int n, CUmodule m)
{
	CHECK_CTX();
	if (!fs || n > sim_kernel__count())
		return CUDA_ERROR_INVALID_VALUE;
	if (!live_is(m, MAGIC_MODULE))
		return CUDA_ERROR_INVALID_HANDLE;
	for (unsigned int i = 0; i < n; i++) {
		CUresult rc = func_new(m, sim_kernel__at(i), &fs[i]);
		if (rc != CUDA_SUCCESS)
			return rc;
	}
	return CUDA_SUCCESS;
}

API CUresult cuFuncGetName(const char **name, CUfunction f)
{
	CHECK_INIT();
	if (!name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!live_is(f, MAGIC_FUNC))
		return CUDA_ERROR_INVALID_HANDLE;
	*name = f->k->name;
	return CUDA_SUCCESS;
}

API CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
			    unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
			    CUstream h, void **params, void **extra)
{
	CHECK_CTX();
	if (!live_is(f, MAGIC_FUNC))
		return CUDA_ERROR_INVALID_HANDLE;
	struct CUstream_st *s;
	CUresult rc = resolve_stream(h, &s);
	if (rc != CUDA_SUCCESS)
		return rc;
	if (f->mod->ctx != s->ctx || s->ctx != tls_ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!gx || !gy || !gz || !bx || !by || !bz || gy > 65535 || gz > 65535)
		return CUDA_ERROR_INVALID_VALUE;
	if ((uint64_t)bx * by * bz > 1024)
		return CUDA_ERROR_INVALID_VALUE;
	/* every engine kernel takes one by-value struct: kernelParams[0] points at it */
	if (!params || !params[0] || extra)
		return CUDA_ERROR_INVALID_VALUE;
	if (f->k->args_size > SIM_ARGS_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	struct op *op = op_new(OP_KERNEL);
	if (!op)
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* copied now: the caller may reuse its argument struct as soon as the launch returns */
	memcpy(op->kernel.args, params[0], f->k->args_size);
	op->kernel.k = f->k;
	op->kernel.nthreads = (uint64_t)gx * gy * gz * bx * by * bz;
	if (!captured(s, op))
		enqueue(s, op);
	return CUDA_SUCCESS;
}

/* ---- stream capture and graphs: kernels only ----------------------------------------------- */

API CUresult cuStreamBeginCapture(CUstream h, CUstreamCaptureMode mode)
{
	CHECK_INIT();
	struct CUstream_st *s;
	CUresult rc = resolve_stream(h, &s);
	if (rc != CUDA_SUCCESS)
		return rc;
	if (s == s->ctx->null_stream) /* the legacy stream cannot be captured */
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	struct CUgraph_st *g = calloc(1, sizeof(*g));
	if (!g)
		return CUDA_ERROR_OUT_OF_MEMORY;
	g->magic = MAGIC_GRAPH;
	g->ctx = s->ctx;
	pthread_mutex_lock(&s->ctx->mu);
	bool busy = s->capture != NULL;
	if (!busy)
		s->capture = g;
	pthread_mutex_unlock(&s->ctx->mu);
	if (busy) {
		free(g);
		return CUDA_ERROR_ILLEGAL_STATE;
	}
	(void)mode;
	return CUDA_SUCCESS;
}

API CUresult cuStreamIsCapturing(CUstream h, CUstreamCaptureStatus *status)
{
	CHECK_INIT();
	struct CUstream_st *s;
	CUresult rc = resolve_stream(h, &s);
	if (rc != CUDA_SUCCESS)
		return rc;
	if (!status)
		return CUDA_ERROR_INVALID_VALUE;
	*status = capturing(s) ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
	return CUDA_SUCCESS;
}

API CUresult cuStreamEndCapture(CUstream h, CUgraph *graph)
{
	CHECK_INIT();
	struct CUstream_st *s;
	CUresult rc = resolve_stream(h, &s);
	if (rc != CUDA_SUCCESS)
		return rc;
	if (!graph)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&s->ctx->mu);
	struct CUgraph_st *g = s->capture;
	s->capture = NULL;
	pthread_mutex_unlock(&s->ctx->mu);
	if (!g)
		return CUDA_ERROR_ILLEGAL_STATE;
	if (!live_add(g)) {
		free(g);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*graph = g;
	return CUDA_SUCCESS;
}

static void graph_clear(struct CUgraph_st *g)
{
	for (struct op *op = g->head, *next; op; op = next) {
		next = op->next;
		op_free(op);
	}
	g->head = g->tail = NULL;
	g->nops = 0;
}

API CUresult cuGraphDestroy(CUgraph g)
{
	CHECK_INIT();
	if (!live_is(g, MAGIC_GRAPH) || !live_del(g))
		return CUDA_ERROR_INVALID_VALUE;
	graph_clear(g);
	free(g);
	return CUDA_SUCCESS;
}

API CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph g, unsigned long long flags)
{
	CHECK_INIT();
	if (!exec || !live_is(g, MAGIC_GRAPH) || flags)
		return CUDA_ERROR_INVALID_VALUE;
	struct CUgraphExec_st *x = calloc(1, sizeof(*x));
	if (!x)
		return CUDA_ERROR_OUT_OF_MEMORY;
	x->magic = MAGIC_GEXEC;
	x->g.ctx = g->ctx;
	for (struct op *op = g->head; op; op = op->next) {
		struct op *c = op_new(op->kind);
		if (!c) {
			graph_clear(&x->g);
			free(x);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		*c = *op;
		c->next = NULL;
		if (x->g.tail)
			x->g.tail->next = c;
		else
			x->g.head = c;
		x->g.tail = c;
		x->g.nops++;
	}
	if (!live_add(x)) {
		graph_clear(&x->g);
		free(x);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*exec = x;
	return CUDA_SUCCESS;
}

API CUresult cuGraphExecDestroy(CUgraphExec x)
{
	CHECK_INIT();
	if (!live_is(x, MAGIC_GEXEC) || !live_del(x))
		return CUDA_ERROR_INVALID_VALUE;
	graph_clear(&x->g);
	free(x);
	return CUDA_SUCCESS;
}

/* Every operation of the graph, in order, on the stream: a graph launch is work until done. */
API CUresult cuGraphLaunch(CUgraphExec x, CUstream h)
{
	CHECK_INIT();
	if (!live_is(x, MAGIC_GEXEC))
		return CUDA_ERROR_INVALID_VALUE;
	struct CUstream_st *s;
	CUresult rc = resolve_stream(h, &s);
	if (rc != CUDA_SUCCESS)
		return rc;
	if (s->ctx != x->g.ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	for (struct op *op = x->g.head; op; op = op->next) {
		struct op *c = op_new(op->kind);
		if (!c)
			return CUDA_ERROR_OUT_OF_MEMORY;
		*c = *op;
		c->next = NULL;
		if (!captured(s, c))
			enqueue(s, c);
	}
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
