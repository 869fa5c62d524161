// SPDX-License-Identifier: MIT
/* simcuda's device side: every stream's worker thread draining its operations in modelled
 * device time, the callback thread that runs host functions, and the waits on both. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "simcuda_int.h"

/* ---- streams --------------------------------------------------------------------------- */

void stream_put(struct CUstream_st *s)
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

void event_put(struct CUevent_st *e)
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
void device_time(uint64_t t0, uint64_t ns)
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

/* Under cbs.mu: the callback thread, once. */
static void callbacks_start_locked(void)
{
	pthread_t t;
	pthread_attr_t attr;

	if (cbs.started)
		return;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	cbs.started = !pthread_create(&t, &attr, callback_thread, NULL);
	pthread_attr_destroy(&attr);
}

/*
 * Started with the first context, as the driver's own thread is: waiting by the time the
 * device first hands it a function, so that its every wakeup is the device's news.
 */
void callbacks_start(void)
{
	pthread_mutex_lock(&cbs.mu);
	callbacks_start_locked();
	pthread_mutex_unlock(&cbs.mu);
}

static void run_host_func(struct op *op)
{
	pthread_mutex_lock(&cbs.serial);
	pthread_mutex_lock(&cbs.mu);
	callbacks_start_locked();
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
 * simcuda's word to a profiler that the calling thread stands for device ordinal, not a thread of
 * the program's: its wakeups of the process's other threads are the device's interrupt. It does
 * nothing; gapscope probes it (bpf/cuda.h, GAPSCOPE_DEVICE_THREAD_SYM). Exported, never inlined,
 * with an effect the compiler must keep, so that every call reaches it; and a frame, so that its
 * first instruction is push %rbp, which the kernel emulates at a probe's hit: a probe on a bare
 * ret is stepped out of line, 37 us a hit against 2.6 on the 2-CPU machine under load
 * (engine_simcuda_exports.sh checks it).
 */
API __attribute__((noinline)) void gapscope_device_thread(int ordinal)
{
	volatile int said = ordinal;

	(void)said;
}

/*
 * Said again before each wakeup a device's thread makes of another (a waiter on its stream or an
 * event, the callback thread): a recording that attached after the thread started learns of it
 * before its first wakeup. Not before every operation: a probe's hit is a trap of a few
 * microseconds, and a launch loop's operations outnumber its waits.
 */
static void said_before_wake(int dev)
{
	gapscope_device_thread(dev);
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
		said_before_wake(s->ctx->dev->ordinal);
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
		said_before_wake(s->ctx->dev->ordinal);
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

struct op *op_new(enum op_kind kind)
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

void op_free(struct op *op)
{
	pthread_mutex_lock(&ops.mu);
	op->next = ops.free;
	ops.free = op;
	pthread_mutex_unlock(&ops.mu);
}

static void *stream_worker(void *arg)
{
	struct CUstream_st *s = arg;
	int dev = s->ctx->dev->ordinal;

	/*
	 * This thread stands in for the device's engines, and says so (gapscope_device_thread);
	 * named as simcuda's, not after whichever engine thread created the stream. It competes for
	 * the CPU like any thread: when the host is overloaded, what it computes and its wakeups
	 * stretch the simulated device's operations (their starts stay where a device's would be:
	 * run_op).
	 */
	char name[16];
	snprintf(name, sizeof(name), "simcuda-dev%d", dev);
	pthread_setname_np(pthread_self(), name);
	gapscope_device_thread(dev);
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
			said_before_wake(dev);
			pthread_cond_broadcast(&s->done);
		}
		op_free(op);
	}
	pthread_mutex_unlock(&s->mu);
	stream_put(s);
	return NULL;
}

CUresult stream_new(struct CUctx_st *ctx, unsigned flags, struct CUstream_st **out)
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
uint64_t enqueue(struct CUstream_st *s, struct op *op)
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
bool captured(struct CUstream_st *s, struct op *op)
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

bool capturing(struct CUstream_st *s)
{
	pthread_mutex_lock(&s->ctx->mu);
	bool c = s->capture != NULL;
	pthread_mutex_unlock(&s->ctx->mu);
	return c;
}

void stream_wait_seq(struct CUstream_st *s, uint64_t seq)
{
	pthread_mutex_lock(&s->mu);
	stream_wait_locked(s, seq);
	pthread_mutex_unlock(&s->mu);
}

void stream_drain(struct CUstream_st *s)
{
	pthread_mutex_lock(&s->mu);
	uint64_t seq = s->submitted;
	pthread_mutex_unlock(&s->mu);
	stream_wait_seq(s, seq);
}

void ctx_drain(struct CUctx_st *ctx)
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
