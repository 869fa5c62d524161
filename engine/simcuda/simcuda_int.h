/* SPDX-License-Identifier: MIT */
/*
 * simcuda internals shared between its stages: the handles' layouts, the simulator's state and
 * the helpers each stage calls. simcuda.c: initialization, devices, contexts and the registries;
 * queue.c: the stream workers and the callback thread; memory.c: allocations and copies;
 * stream.c: the stream, event and host-function API; module.c: modules and launches;
 * graph.c: stream capture and graphs.
 */
#ifndef SIMCUDA_INT_H
#define SIMCUDA_INT_H

#include "cuda_api.h"
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "sim.h"

/* Hidden by default (engine.mk); only the driver's own names are exported. */
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

struct sim_state {
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
};
extern struct sim_state sim;

/* The calling thread's current context (cuCtxSetCurrent, cuCtxPushCurrent). */
extern __thread struct CUctx_st *tls_ctx;

static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static inline bool initialized(void)
{
	return __atomic_load_n(&sim.initialized, __ATOMIC_ACQUIRE);
}

#define CHECK_INIT()                                       \
	do {                                               \
		if (!initialized())                        \
			return CUDA_ERROR_NOT_INITIALIZED; \
	} while (0)

#define CHECK_CTX()                                        \
	do {                                               \
		CHECK_INIT();                              \
		if (!ctx_ok(tls_ctx))                      \
			return CUDA_ERROR_INVALID_CONTEXT; \
	} while (0)

/* simcuda.c: pointer registries, live handles, the stream an operation goes to. */
void range_add(struct range **list, void *p, size_t size);
bool range_del(struct range **list, void *p);
bool range_size(struct range **list, const void *p, size_t *size);
bool range_has(struct range **list, const void *p, size_t bytes);
bool live_add(const void *h);
bool live_del(const void *h);
bool live_is(const void *h, uint32_t magic);
CUresult resolve_stream(CUstream h, struct CUstream_st **out);

/* queue.c: operations, stream workers, the callback thread, draining. */
void stream_put(struct CUstream_st *s);
void event_put(struct CUevent_st *e);
void device_time(uint64_t t0, uint64_t ns);
struct op *op_new(enum op_kind kind);
void op_free(struct op *op);
CUresult stream_new(struct CUctx_st *ctx, unsigned flags, struct CUstream_st **out);
/* The thread that runs host functions and stream callbacks (queue.c), started once. */
void callbacks_start(void);
uint64_t enqueue(struct CUstream_st *s, struct op *op);
bool captured(struct CUstream_st *s, struct op *op);
bool capturing(struct CUstream_st *s);
void stream_wait_seq(struct CUstream_st *s, uint64_t seq);
void stream_drain(struct CUstream_st *s);
void ctx_drain(struct CUctx_st *ctx);

static inline bool ctx_ok(struct CUctx_st *c)
{
	return live_is(c, MAGIC_CTX);
}

static inline bool stream_ok(struct CUstream_st *s)
{
	return live_is(s, MAGIC_STREAM);
}

static inline bool event_ok(struct CUevent_st *e)
{
	return live_is(e, MAGIC_EVENT);
}

#endif
