// SPDX-License-Identifier: MIT
/* simcuda's stream capture and graphs (kernels only). */
#include <stdlib.h>

#include "simcuda_int.h"

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
