// SPDX-License-Identifier: MIT
/* simcuda's streams, events and host functions, as the driver API sees them. */
#include <stdlib.h>

#include "simcuda_int.h"

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
