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
	for (int i = 0; i < MAX_DEVICES; i++) {
		vec__free(&g->dev[i].busy);
		vec__free(&g->dev[i].unsure);
	}
	while (g->events) {
		struct evrec *e = g->events;

		g->events = e->next;
		free(e);
	}
	vec__free(&g->idle);
	vec__free(&g->cuda_tgids);
	vec__free(&g->evidence_work);
	free(g);
}

static bool cuda_proc(const struct gputime *g, __u32 tgid)
{
	for (size_t i = 0; i < g->cuda_tgids.n; i++)
		if (*VEC_AT(&g->cuda_tgids, __u32, i) == tgid)
			return true;
	return false;
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
	s->tgid = op->tgid;
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

/*
 * The first wakeup of t's inside [t0, t1] that can be a drain's: from the GPU's interrupt (or
 * its chain), or by another thread of the process (a driver's thread that saw the work done);
 * 0 none. Sleeps woken by a timer (unmapping paced by the kernel, a retry) are not.
 */
static __u64 drain_within(const struct tstate *t, __u64 t0, __u64 t1)
{
	__u64 first = 0;

	for (__u32 k = 0; t && k < TSTATE_OFFS && k < t->noff; k++) {
		const struct toff *o = &t->off[(t->noff - 1 - k) % TSTATE_OFFS];
		__u64 w = o->news ? o->news : o->peer;

		if (o->end <= t0)
			break;
		if (o->start >= t0 && o->end <= t1 && w)
			first = w;
	}
	return first;
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
	case CU_K_FREE:
	case CU_K_HOST_UNREGISTER:
	case CU_K_UNLOAD:
		/*
		 * These wait for the device before they let go of memory or code, and may then
		 * spend long in the driver (unmapping): where the thread slept inside the call
		 * and was woken from the GPU's interrupt (or by the driver's thread), that first
		 * wakeup is the drain, not the return.
		 */
		{
			struct gop w = *op;
			__u64 irq = drain_within(thread_of(g, op->tid), op->t, op->end);

			if (irq) {
				w.end = irq;
				w.verb = "woke from the device's drain in";
			}
			/* The device's, every stream's: non-blocking ones too. */
			gpudev__evidence_all(g, device_of_call(g, op), false, op->t, &w);
		}
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
	t = thread_of(g, op.tid);
	if (t && !t->cuda) {
		t->cuda = true;
		if (!cuda_proc(g, op.tgid)) {
			__u32 *p = vec__push(&g->cuda_tgids, sizeof(*p));

			if (p)
				*p = op.tgid;
		}
	}
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
	case CU_K_STREAM_WAIT:
		ev = event_of(g, op.handle, op.tgid, false);
		s = stream_of(g, &op, true);
		if (ev && s && ev->rec[0].stream && ev->rec[0].stream != s &&
		    ev->rec[0].ts < op.t) {
			__u32 k = s->nwaits;

			if (k ==
			    STREAM_WAITS) { /* the oldest let go of: its source's news is old */
				memmove(&s->waits[0], &s->waits[1],
					(STREAM_WAITS - 1) * sizeof(s->waits[0]));
				k--;
			} else {
				s->nwaits++;
			}
			s->waits[k].src = ev->rec[0].stream;
			s->waits[k].rec = ev->rec[0].ts;
			s->waits[k].at = op.t;
		}
		break;
	case CU_K_HOST_FUNC:
		/* It runs on a driver thread once the work before it is done: news from there. */
		s = stream_of(g, &op, true);
		if (s && !s->capturing && s->last_launch >= s->done_before) {
			s->host_fn = op.t;
			s->host_arg = op.aux;
		}
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

/* t's blocked interval that ended (switched in) last at or before w, if it ran from then to w. */
static const struct toff *ran_since(const struct tstate *t, __u64 w)
{
	for (__u32 k = 0; k < TSTATE_OFFS && k < t->noff; k++) {
		const struct toff *o = &t->off[(t->noff - 1 - k) % TSTATE_OFFS];

		if (o->end <= w)
			return o;
		if (o->start < w)
			return NULL; /* off-CPU at w */
	}
	return NULL;
}

/* The GPU work of process tgid queued before cut was done at t (op names how it was seen). */
static void evidence_proc(struct gputime *g, __u32 tgid, __u64 cut, const struct gop *op)
{
	for (struct stream *s = g->streams; s; s = s->next)
		if (s->tgid == tgid)
			gpudev__evidence(g, s, cut, op);
}

/* d's latest interrupt wakeup in (t0, t1], 0 none. */
static __u64 irq_in(const struct tstate *d, __u64 t0, __u64 t1)
{
	for (__u32 k = 0; k < TSTATE_IRQS && k < d->nirq; k++) {
		__u64 t = d->irqs[(d->nirq - 1 - k) % TSTATE_IRQS];

		if (t <= t0)
			break;
		if (t <= t1)
			return t;
	}
	return 0;
}

/*
 * The driver thread a wakeup came from (o->root) and when it learnt what it passed on
 * (o->news): the waker itself where it is one (news: when it last began to run, or its
 * interrupt while this thread waited), else where the waker's own last wakeup came from, if it
 * ran only briefly before this one (a hop). A chain whose news is older than the wait ends.
 */
static void chain_of(struct gputime *g, const struct gwake *w, struct toff *o)
{
	struct tstate *x, *d;
	const struct toff *xo;

	if (w->waker_tgid != w->tgid || w->waker_tid == w->tid || !w->waker_tid)
		return;
	x = thread_of(g, w->waker_tid);
	xo = x ? ran_since(x, w->wake) : NULL;
	if (!xo)
		return;
	if (x->driver) {
		o->root = x->tid;
		o->news = xo->end;
	} else if (w->wake - xo->end <= GPUTIME_HOP_NS && xo->root) {
		o->root = xo->root;
		o->news = xo->news;
	}
	d = o->root ? thread_of(g, o->root) : NULL;
	if (d && irq_in(d, w->start, w->wake))
		o->news = irq_in(d, w->start, w->wake);
	if (o->news <= w->start)
		o->root = 0, o->news = 0;
}

/*
 * A thread of the process woken with the driver's news (its interrupt, or a chain from its
 * thread) after it began to wait: the host functions queued before that wait have run, the
 * driver's thread calling them once the work before them was done.
 */
static void host_fns_ran(struct gputime *g, const struct gwake *w, __u64 news)
{
	for (struct stream *s = g->streams; s; s = s->next) {
		if (s->tgid != w->tgid || !s->host_fn || s->host_fn >= w->start)
			continue;
		{
			struct gop op = {
				.t = s->host_fn,
				.end = news,
				.tid = w->tid,
				.tgid = w->tgid,
				.fn = "a host function",
				.verb = "ran, its driver thread woken, in",
				.comm = w->comm,
			};

			s->host_fn = 0;
			gpudev__evidence(g, s, op.t + 1, &op);
		}
	}
}

int gputime__offcpu(struct gputime *g, const struct gwake *w)
{
	struct tstate *t;
	struct toff o = { .start = w->start, .end = w->end };

	if (w->waker_tgid == w->tgid && w->waker_tid && w->waker_tid != w->tid)
		o.peer = w->wake;

	gpudev__flush_due(g, w->end);
	if (!w->blocked || !w->wake || !cuda_proc(g, w->tgid))
		return 0; /* preempted: it ran on, its wake chain with it; or no GPU's process */
	t = thread_of(g, w->tid);
	if (!t)
		return -ENOMEM;
	if (w->irq) {
		/*
		 * Its own interrupt: a driver thread's, whose news its wakeups pass on; or a
		 * thread's inside a driver call, its own call's drain: the stream it waits for,
		 * not all its process queued (call_returned takes it), so no chain starts there.
		 */
		t->driver = !t->cuda || t->driver;
		t->irqs[t->nirq++ % TSTATE_IRQS] = w->wake;
		o.root = t->driver ? w->tid : 0;
		o.news = w->wake;
	} else {
		chain_of(g, w, &o);
	}
	t->off[t->noff++ % TSTATE_OFFS] = o;
	if (o.news && (o.root || !w->irq))
		host_fns_ran(g, w, o.news);
	if (!o.news || w->irq || !t->cuda)
		return 0;
	/*
	 * A thread that feeds the GPU, woken through a chain from the driver's thread (the one
	 * the GPU's interrupt wakes) that learnt its news while this one waited: the work its
	 * process queued before it began to wait was done then. This is the completion signal
	 * where no call asks (XLA's host thread waits in a futex; the driver's event thread,
	 * woken by the interrupt, passes it on through the callback threads).
	 */
	{
		struct gop op = {
			.t = w->start,
			.end = o.news,
			.tid = w->tid,
			.tgid = w->tgid,
			.fn = "the GPU's interrupt",
			.verb = "woke, through its waiters,",
			.comm = w->comm,
		};

		evidence_proc(g, w->tgid, op.t, &op);
	}
	return 0;
}

int gputime__host_fn(struct gputime *g, __u32 tgid, __u32 tid, __u64 arg, __u64 t, const char *comm)
{
	gpudev__flush_due(g, t);
	for (struct stream *s = g->streams; s; s = s->next) {
		if (s->tgid != tgid || !s->host_fn || s->host_arg != arg || s->host_fn >= t)
			continue;
		{
			struct gop op = {
				.t = s->host_fn,
				.end = t,
				.tid = tid,
				.tgid = tgid,
				.fn = "a host function",
				.verb = "was called, the work before it done, in",
				.comm = comm,
			};

			s->host_fn = 0;
			gpudev__evidence(g, s, op.t + 1, &op);
		}
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
