// SPDX-License-Identifier: GPL-2.0
/* The API-inferred GPU timeline: see gputime.h; the devices' side is in gpudev.c. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gputime_int.h"

struct gputime *gputime__new(struct strtab *strs, __u64 min_gap_ns)
{
	struct gputime *g = calloc(1, sizeof(*g));

	if (g) {
		g->strs = strs;
		g->min_gap = min_gap_ns;
	}
	return g;
}

void gputime__copy_model(struct gputime *g, double gbytes_per_s, double latency_us)
{
	g->copy_bytes_per_ns = gbytes_per_s > 0 ? gbytes_per_s : 0;
	g->copy_latency_ns = latency_us > 0 ? (__u64)(latency_us * 1e3) : 0;
}

void gputime__free(struct gputime *g)
{
	if (!g)
		return;
	while (g->streams) {
		struct stream *s = g->streams;

		g->streams = s->next;
		free(s);
	}
	while (g->threads) {
		struct tstate *t = g->threads;

		g->threads = t->next;
		free(t);
	}
	while (g->ctxs) {
		struct ctxmap *c = g->ctxs;

		g->ctxs = c->next;
		free(c);
	}
	for (int i = 0; i < MAX_DEVICES; i++)
		vec__free(&g->dev[i].busy);
	while (g->events) {
		struct evrec *e = g->events;

		g->events = e->next;
		free(e);
	}
	vec__free(&g->idle);
	free(g);
}

static struct tstate *thread_of(struct gputime *g, __u32 tid)
{
	struct tstate *t = g->last_thread;

	if (t && t->tid == tid)
		return t;
	for (t = g->threads; t; t = t->next)
		if (t->tid == tid)
			return g->last_thread = t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	t->next = g->threads;
	g->threads = t;
	return g->last_thread = t;
}

static int device_of_ctx(struct gputime *g, __u64 ctx, bool *known)
{
	for (struct ctxmap *c = g->ctxs; c; c = c->next)
		if (c->ctx == ctx) {
			*known = true;
			return c->device;
		}
	*known = false;
	return 0;
}

static void ctx_set_device(struct gputime *g, __u64 ctx, __u32 device)
{
	struct ctxmap *c;

	for (c = g->ctxs; c; c = c->next)
		if (c->ctx == ctx) {
			c->device = device;
			return;
		}
	c = calloc(1, sizeof(*c));
	if (!c)
		return;
	c->ctx = ctx;
	c->device = device;
	c->next = g->ctxs;
	g->ctxs = c;
}

/* The stream a call names: NULL-stream handles belong to the calling thread's context. */
static struct stream *stream_of(struct gputime *g, const struct gop *op, bool create)
{
	struct tstate *t = thread_of(g, op->tid);
	__u64 ctx = op->ctx ? op->ctx : t ? t->ctx : 0;
	__u64 owner = op->stream <= NULL_STREAM_MAX ? ctx : op->tgid;
	struct stream *s = g->last;
	bool known;

	if (s && s->key_handle == op->stream && s->key_owner == owner)
		return s;
	for (s = g->streams; s; s = s->next)
		if (s->key_handle == op->stream && s->key_owner == owner)
			return g->last = s;
	if (!create || !(s = calloc(1, sizeof(*s))))
		return NULL;
	s->key_handle = op->stream;
	s->key_owner = owner;
	s->device = device_of_ctx(g, ctx, &known) % MAX_DEVICES;
	s->known_device = known;
	s->next = g->streams;
	g->streams = s;
	return g->last = s;
}

static struct evrec *event_of(struct gputime *g, __u64 handle, __u32 tgid, bool create)
{
	struct evrec *e;

	for (e = g->events; e; e = e->next)
		if (e->handle == handle && e->tgid == tgid)
			return e;
	if (!create || !(e = calloc(1, sizeof(*e))))
		return NULL;
	e->handle = handle;
	e->tgid = tgid;
	e->next = g->events;
	g->events = e;
	return e;
}

/* The device a context-wide call (or a synchronous copy) synchronizes. */
static __u32 device_of_call(struct gputime *g, const struct gop *op)
{
	struct tstate *t = thread_of(g, op->tid);
	bool known;

	return device_of_ctx(g, op->ctx ? op->ctx : t ? t->ctx : 0, &known) % MAX_DEVICES;
}

/* A call that returned: its evidence covers the work queued before it began (op->t). */
static void call_returned(struct gputime *g, const struct gop *op)
{
	struct stream *s;
	struct evrec *ev;

	if (op->ret)
		return; /* failed, or a query that found the work not done */
	switch (op->kind) {
	case CU_K_CTX_CREATE:
		/* cuCtxCreate makes the new context current; a primary context is not. */
		ctx_set_device(g, op->ctx, (__u32)op->aux);
		if (!strstr(op->fn, "Primary")) {
			struct tstate *t = thread_of(g, op->tid);

			if (t)
				t->ctx = op->ctx;
		}
		break;
	case CU_K_STREAM_CREATE:
		s = stream_of(g, op, true);
		if (s)
			s->non_blocking = op->aux & STREAM_NON_BLOCKING;
		break;
	case CU_K_SYNC_STREAM:
	case CU_K_STREAM_QUERY:
		s = stream_of(g, op, false);
		if (s)
			gpudev__evidence(g, s, op->t, op);
		break;
	case CU_K_SYNC_EVENT:
	case CU_K_EVENT_QUERY:
		ev = event_of(g, op->handle, op->tgid, false);
		if (!ev)
			break;
		for (int i = 0; i < 2; i++)
			if (ev->rec[i].stream && ev->rec[i].ts < op->t) {
				/* launches before the record */
				gpudev__evidence(g, ev->rec[i].stream, ev->rec[i].ts + 1, op);
				break;
			}
		break;
	case CU_K_SYNC_CTX:
		gpudev__evidence_all(g, device_of_call(g, op), false, op->t, op);
		break;
	case CU_K_MEMCPY:
	case CU_K_MEMSET:
		gpudev__evidence_all(g, device_of_call(g, op), true, op->t, op);
		break;
	}
}

int gputime__add(struct gputime *g, const struct cu_event *e, const char *fn, const char *comm,
		 __u64 woken)
{
	bool ret = e->h.flags & GS_F_RET;
	struct gop op = {
		.t = e->h.ts,
		.end = e->h.ts + (ret ? e->dur_ns : 0),
		.woken = woken,
		.tid = e->h.tid,
		.tgid = e->h.tgid,
		.kind = e->kind,
		.ret = ret ? e->ret : 0,
		.stream = e->stream,
		.ctx = e->ctx,
		.handle = e->handle,
		.aux = e->aux,
		.bytes = e->bytes,
		.fn = fn,
		.comm = comm,
	};
	struct tstate *t;
	struct stream *s;
	struct evrec *ev;

	gpudev__flush_due(g, op.end);
	switch (e->kind) {
	case CU_K_CTX_SET:
	case CU_K_CTX_PUSH:
		t = thread_of(g, op.tid);
		if (t)
			t->ctx = op.ctx;
		break;
	case CU_K_LAUNCH:
	case CU_K_GRAPH_LAUNCH:
		s = stream_of(g, &op, true);
		if (s && !s->capturing)
			gpudev__launch(g, s, &op);
		break;
	case CU_K_CAPTURE_BEGIN:
	case CU_K_CAPTURE_END:
		s = stream_of(g, &op, true);
		if (s)
			s->capturing = op.kind == CU_K_CAPTURE_BEGIN;
		break;
	case CU_K_EVENT_RECORD:
		ev = event_of(g, op.handle, op.tgid, true);
		if (ev) {
			ev->rec[1] = ev->rec[0];
			ev->rec[0].stream = stream_of(g, &op, true);
			ev->rec[0].ts = op.t;
		}
		break;
	case CU_K_MEMCPY:
		if (ret) {
			call_returned(g, &op);
			break;
		}
		/* An async copy: no evidence; where copies are modelled, time on its stream. */
		s = g->copy_bytes_per_ns > 0 && (strstr(fn, "HtoD") || strstr(fn, "DtoH")) ?
			    stream_of(g, &op, true) :
			    NULL;
		/* Launches on its stream that the trace left out (cuda.h): the last one's time. */
		if (s && (e->h.flags & CU_EF_PRIOR_LAUNCH) && !s->capturing && e->dur_ns <= op.t &&
		    op.t - e->dur_ns > s->last_launch)
			s->last_launch = op.t - e->dur_ns;
		if (s)
			gpudev__queue_copy(g, s, &op, strstr(fn, "DtoH"));
		break;
	default:
		/* An entry whose return was not seen: no evidence. */
		if (ret)
			call_returned(g, &op);
	}
	return 0;
}

void gputime__flush(struct gputime *g)
{
	gpudev__flush_due(g, UINT64_MAX);
}

struct gpu_idle *gputime__take_idle(struct gputime *g, size_t *n)
{
	struct gpu_idle *i = g->idle.data;

	*n = g->idle.n;
	g->idle = (struct vec){};
	return i;
}
