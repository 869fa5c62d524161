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
		glist_init(&g->idle_streams);
		glist_init(&g->ev_lru);
		for (int i = 0; i < MAX_DEVICES; i++)
			glist_init(&g->dev[i].active);
	}
	return g;
}

void gputime__copy_model(struct gputime *g, double gbytes_per_s, double latency_us)
{
	g->copy_bytes_per_ns = gbytes_per_s > 0 ? gbytes_per_s : 0;
	g->copy_latency_ns = latency_us > 0 ? (__u64)(latency_us * 1e3) : 0;
}

/* ---- the hash tables: chained, doubled when as full as they are long -------------------- */

static size_t htab_slot(const struct htab *t, __u64 k1, __u64 k2)
{
	/* Handles are aligned and often sequential: the product's high bits folded in. */
	__u64 h = (k1 ^ k2 * 0x9e3779b97f4a7c15ull) * 0x9e3779b97f4a7c15ull;

	return (h ^ h >> 32) & (t->cap - 1);
}

static struct hnode *htab_find(struct gputime *g, const struct htab *t, __u64 k1, __u64 k2)
{
	if (!t->cap)
		return NULL;
	for (struct hnode *n = t->b[htab_slot(t, k1, k2)]; n; n = n->next) {
		g->hs.work++;
		if (n->k1 == k1 && n->k2 == k2)
			return n;
	}
	return NULL;
}

static int htab_add(struct htab *t, struct hnode *n)
{
	size_t i;

	if (t->n >= t->cap) {
		struct htab big = { .cap = t->cap ? t->cap * 2 : 256, .n = t->n };

		big.b = calloc(big.cap, sizeof(*big.b));
		if (!big.b)
			return -ENOMEM;
		for (size_t j = 0; j < t->cap; j++)
			while (t->b[j]) {
				struct hnode *m = t->b[j];

				t->b[j] = m->next;
				i = htab_slot(&big, m->k1, m->k2);
				m->next = big.b[i];
				big.b[i] = m;
			}
		free(t->b);
		*t = big;
	}
	i = htab_slot(t, n->k1, n->k2);
	n->next = t->b[i];
	t->b[i] = n;
	t->n++;
	return 0;
}

static void htab_del(struct gputime *g, struct htab *t, struct hnode *n)
{
	for (struct hnode **p = &t->b[htab_slot(t, n->k1, n->k2)]; *p; p = &(*p)->next) {
		g->hs.work++;
		if (*p == n) {
			*p = n->next;
			t->n--;
			return;
		}
	}
}

/* ---- processes, streams and events ------------------------------------------------------ */

static struct gproc *proc_of(struct gputime *g, __u32 tgid, bool create)
{
	struct gproc *p = g->last_proc;

	if (p && p->hn.k1 == tgid)
		return p;
	p = (struct gproc *)htab_find(g, &g->procs, tgid, 0);
	if (p || !create)
		return p ? g->last_proc = p : NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->hn.k1 = tgid;
	glist_init(&p->active);
	glist_init(&p->idle);
	glist_init(&p->events);
	if (htab_add(&g->procs, &p->hn)) {
		free(p);
		return NULL;
	}
	return g->last_proc = p;
}

static void proc_free(struct gputime *g, struct gproc *p)
{
	htab_del(g, &g->procs, &p->hn);
	if (g->last_proc == p)
		g->last_proc = NULL;
	free(p);
}

struct stream *gputime__find(struct gputime *g, __u64 handle, __u64 owner)
{
	struct stream *s = g->last;

	g->hs.work++;
	if (s && s->hn.k1 == handle && s->hn.k2 == owner)
		return s;
	s = (struct stream *)htab_find(g, &g->streams, handle, owner);
	return s ? g->last = s : NULL;
}

static void stream_free(struct gputime *g, struct stream *s)
{
	if (s->heap)
		gpudev__heap_del(g, s);
	htab_del(g, &g->streams, &s->hn);
	glist_del(&s->plink);
	glist_del(&s->glink);
	s->proc->nstreams--;
	if (g->last == s)
		g->last = NULL;
	g->hs.streams--;
	g->hs.streams_let_go++;
	free(s);
}

/* The least recently used stream without work in list h (by plink or glink) let go of. */
static bool let_go_idle(struct gputime *g, struct glink *h, bool by_plink)
{
	if (h->next == h)
		return false;
	stream_free(g, by_plink ? GLIST_ENTRY(h->next, struct stream, plink) :
				  GLIST_ENTRY(h->next, struct stream, glink));
	return true;
}

void gputime__track(struct gputime *g, struct stream *s, __u64 now)
{
	bool active = outstanding(s) || s->nwaits || s->copy_free || s->host_fn || s->capturing;

	gpudev__heap_sync(g, s);
	if (active == s->active) {
		if (!active && now > s->used) { /* used now: the most recent of the idle */
			s->used = now;
			glist_del(&s->plink);
			glist_del(&s->glink);
			glist_add_tail(&s->proc->idle, &s->plink);
			glist_add_tail(&g->idle_streams, &s->glink);
		}
		return;
	}
	glist_del(&s->plink);
	glist_del(&s->glink);
	s->active = active;
	if (active) {
		glist_add_tail(&s->proc->active, &s->plink);
		glist_add_tail(&g->dev[s->device].active, &s->glink);
		return;
	}
	s->used = now > s->used ? now : s->used;
	glist_add_tail(&s->proc->idle, &s->plink);
	glist_add_tail(&g->idle_streams, &s->glink);
}

size_t gputime__visit(struct gputime *g, struct glink *h, bool by_plink)
{
	size_t n = 0;

	g->visit.n = 0;
	for (struct glink *l = h->next; l != h; l = l->next) {
		struct stream **p = vec__push(&g->visit, sizeof(*p));

		g->hs.work++;
		if (!p)
			break; /* out of memory: the rest left without this evidence */
		*p = by_plink ? GLIST_ENTRY(l, struct stream, plink) :
				GLIST_ENTRY(l, struct stream, glink);
		n++;
	}
	return n;
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

/* The key of the stream a call names: NULL-stream handles belong to the calling thread's
 * context, the others to its process. */
static __u64 stream_owner(struct gputime *g, const struct gop *op, __u64 *ctx)
{
	struct tstate *t = thread_of(g, op->tid);

	*ctx = op->ctx ? op->ctx : t ? t->ctx : 0;
	return op->stream <= NULL_STREAM_MAX ? *ctx : op->tgid;
}

/*
 * The stream of p that has had work the longest let go of, for the call op: its work is taken
 * as done then. A program that names more streams than the bound with work on each names
 * handles its driver refused (their launches never ran), or has long lost track of the first.
 */
static bool let_go_active(struct gputime *g, struct gproc *p, const struct gop *op)
{
	struct gop done = {
		.t = op->t,
		.end = op->t,
		.tid = op->tid,
		.tgid = op->tgid,
		.fn = "a stream's work",
		.verb = "taken as done, let go of for the bound on streams, by",
		.comm = op->comm,
	};
	struct stream *s;

	if (p->active.next == &p->active)
		return false;
	s = GLIST_ENTRY(p->active.next, struct stream, plink);
	gpudev__evidence(g, s, UINT64_MAX, &done);
	stream_free(g, s);
	return true;
}

/*
 * The stream a call names, made where create says so and the bounds allow: past them it takes
 * the place of the least recently used stream without work (of its process, or of all), or
 * where there is none, of the process's stream that has had work the longest; where the
 * process has none either, the call is refused (NULL, counted).
 */
static struct stream *stream_of(struct gputime *g, const struct gop *op, bool create)
{
	__u64 ctx, owner = stream_owner(g, op, &ctx);
	struct stream *s = gputime__find(g, op->stream, owner);
	struct gproc *p;
	bool known;

	if (s) {
		if (!s->active && op->t > s->used)
			gputime__track(g, s, op->t);
		return s;
	}
	if (!create || !(p = proc_of(g, op->tgid, true)))
		return NULL;
	if ((op->stream > NULL_STREAM_MAX && p->nstreams >= STREAMS_PER_PROC &&
	     !let_go_idle(g, &p->idle, true) && !let_go_active(g, p, op)) ||
	    (g->hs.streams >= STREAMS_MAX && !let_go_idle(g, &g->idle_streams, false) &&
	     !let_go_active(g, p, op))) {
		g->hs.stream_calls_refused++;
		return NULL;
	}
	if (!(s = calloc(1, sizeof(*s))))
		return NULL;
	s->hn.k1 = op->stream;
	s->hn.k2 = owner;
	if (htab_add(&g->streams, &s->hn)) {
		free(s);
		return NULL;
	}
	s->proc = p;
	s->tgid = op->tgid;
	s->device = device_of_ctx(g, ctx, &known) % MAX_DEVICES;
	s->known_device = known;
	s->used = op->t;
	glist_add_tail(&p->idle, &s->plink);
	glist_add_tail(&g->idle_streams, &s->glink);
	p->nstreams++;
	if (++g->hs.streams > g->hs.streams_peak)
		g->hs.streams_peak = g->hs.streams;
	return g->last = s;
}

static void event_free(struct gputime *g, struct evrec *e)
{
	htab_del(g, &g->events, &e->hn);
	glist_del(&e->plink);
	glist_del(&e->glink);
	e->proc->nevents--;
	g->hs.events--;
	g->hs.events_let_go++;
	free(e);
}

/* An event by handle, made where create says so: past the bounds it takes the place of the
 * least recently used event (of its process, or of all). */
static struct evrec *event_of(struct gputime *g, __u64 handle, __u32 tgid, bool create, __u64 now)
{
	struct evrec *e = (struct evrec *)htab_find(g, &g->events, handle, tgid);
	struct gproc *p;

	if (e) {
		e->used = now > e->used ? now : e->used;
		glist_del(&e->plink);
		glist_del(&e->glink);
		glist_add_tail(&e->proc->events, &e->plink);
		glist_add_tail(&g->ev_lru, &e->glink);
		return e;
	}
	if (!create || !(p = proc_of(g, tgid, true)))
		return NULL;
	if (p->nevents >= EVENTS_PER_PROC)
		event_free(g, GLIST_ENTRY(p->events.next, struct evrec, plink));
	if (g->hs.events >= EVENTS_MAX)
		event_free(g, GLIST_ENTRY(g->ev_lru.next, struct evrec, glink));
	if (!(e = calloc(1, sizeof(*e))))
		return NULL;
	e->hn.k1 = handle;
	e->hn.k2 = tgid;
	if (htab_add(&g->events, &e->hn)) {
		free(e);
		return NULL;
	}
	e->proc = p;
	e->used = now;
	glist_add_tail(&p->events, &e->plink);
	glist_add_tail(&g->ev_lru, &e->glink);
	p->nevents++;
	if (++g->hs.events > g->hs.events_peak)
		g->hs.events_peak = g->hs.events;
	return e;
}

void gputime__free(struct gputime *g)
{
	struct htab *tabs[3];

	if (!g)
		return;
	tabs[0] = &g->streams;
	tabs[1] = &g->events;
	tabs[2] = &g->procs;
	for (size_t k = 0; k < 3; k++) {
		struct htab *t = tabs[k];

		for (size_t i = 0; i < t->cap; i++)
			while (t->b[i]) {
				struct hnode *n = t->b[i];

				t->b[i] = n->next;
				free(n); /* the first member of each entry */
			}
		free(t->b);
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
		vec__free(&g->dev[i].heap);
	}
	vec__free(&g->idle);
	vec__free(&g->evidence_work);
	vec__free(&g->visit);
	free(g);
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
		ev = event_of(g, op->handle, op->tgid, false, op->t);
		if (!ev)
			break;
		for (int i = 0; i < 2; i++)
			if (ev->rec[i].set && ev->rec[i].ts < op->t) {
				/* launches before the record (on a stream still kept) */
				s = gputime__find(g, ev->rec[i].handle, ev->rec[i].owner);
				if (s)
					gpudev__evidence(g, s, ev->rec[i].ts + 1, op);
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
	__u64 work = g->hs.work;
	struct tstate *t;
	struct stream *s;
	struct evrec *ev;

	gpudev__flush_due(g, op.end);
	t = thread_of(g, op.tid);
	if (t)
		t->cuda = true;
	/* Its process made CUDA calls: its threads' wake chains are followed. */
	if (!proc_of(g, op.tgid, true))
		return -ENOMEM;
	switch (e->kind) {
	case CU_K_CTX_SET:
	case CU_K_CTX_PUSH:
		t = thread_of(g, op.tid);
		if (t)
			t->ctx = op.ctx;
		break;
	case CU_K_LAUNCH:
	case CU_K_GRAPH_LAUNCH:
		g->hs.launches++;
		s = stream_of(g, &op, true);
		if (s && !s->capturing) {
			gpudev__launch(g, s, &op);
			gputime__track(g, s, op.t);
		}
		break;
	case CU_K_STREAM_WAIT:
		ev = event_of(g, op.handle, op.tgid, false, op.t);
		s = stream_of(g, &op, true);
		if (ev && s && ev->rec[0].set &&
		    (ev->rec[0].handle != s->hn.k1 || ev->rec[0].owner != s->hn.k2) &&
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
			s->waits[k].src_handle = ev->rec[0].handle;
			s->waits[k].src_owner = ev->rec[0].owner;
			s->waits[k].rec = ev->rec[0].ts;
			s->waits[k].at = op.t;
			gputime__track(g, s, op.t);
		}
		break;
	case CU_K_HOST_FUNC:
		/* It runs on a driver thread once the work before it is done: news from there. */
		s = stream_of(g, &op, true);
		if (s && !s->capturing && s->last_launch >= s->done_before) {
			s->host_fn = op.t;
			s->host_arg = op.aux;
			gputime__track(g, s, op.t);
		}
		break;
	case CU_K_CAPTURE_BEGIN:
	case CU_K_CAPTURE_END:
		s = stream_of(g, &op, true);
		if (s) {
			s->capturing = op.kind == CU_K_CAPTURE_BEGIN;
			gputime__track(g, s, op.t);
		}
		break;
	case CU_K_EVENT_RECORD:
		ev = event_of(g, op.handle, op.tgid, true, op.t);
		if (ev) {
			ev->rec[1] = ev->rec[0];
			s = stream_of(g, &op, true);
			ev->rec[0].set = s; /* a stream refused: nothing to wait for */
			ev->rec[0].handle = s ? s->hn.k1 : 0;
			ev->rec[0].owner = s ? s->hn.k2 : 0;
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
		/* Launches on its stream that the trace left out (cuda.h): the last one's time,
		 * after the evidence that loops over streams with work gave the others. */
		if (s && (e->h.flags & CU_EF_PRIOR_LAUNCH) && !s->capturing && e->dur_ns <= op.t &&
		    op.t - e->dur_ns > s->last_launch) {
			if (!outstanding(s))
				gpudev__floor(g, s);
			s->last_launch = op.t - e->dur_ns;
		}
		if (s) {
			gpudev__queue_copy(g, s, &op, strstr(fn, "DtoH"));
			gputime__track(g, s, op.t);
		}
		break;
	default:
		/* An entry whose return was not seen: no evidence. */
		if (ret)
			call_returned(g, &op);
	}
	if (g->hs.work - work > g->hs.work_max)
		g->hs.work_max = g->hs.work - work;
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

/*
 * The GPU work of process tgid queued before cut was done at t (op names how it was seen): its
 * streams with work take the evidence, the others (whose work was done already) only the floor
 * a launch the trace left out is held to (gputime__add).
 */
static void evidence_proc(struct gputime *g, __u32 tgid, __u64 cut, const struct gop *op)
{
	struct gproc *p = proc_of(g, tgid, false);
	size_t n = p ? gputime__visit(g, &p->active, true) : 0;

	if (!p)
		return;
	if (cut > p->floor)
		p->floor = cut;
	for (size_t i = 0; i < n; i++)
		gpudev__evidence(g, *VEC_AT(&g->visit, struct stream *, i), cut, op);
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
	struct gproc *p = proc_of(g, w->tgid, false);
	size_t n = p ? gputime__visit(g, &p->active, true) : 0;

	for (size_t i = 0; i < n; i++) {
		struct stream *s = *VEC_AT(&g->visit, struct stream *, i);

		if (!s->host_fn || s->host_fn >= w->start)
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
	if (!w->blocked || !w->wake || !proc_of(g, w->tgid, false))
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
	struct gproc *p = proc_of(g, tgid, false);
	size_t n = p ? gputime__visit(g, &p->active, true) : 0;

	gpudev__flush_due(g, t);
	for (size_t i = 0; i < n; i++) {
		struct stream *s = *VEC_AT(&g->visit, struct stream *, i);

		if (!s->host_fn || s->host_arg != arg || s->host_fn >= t)
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

void gputime__forget_proc(struct gputime *g, __u32 tgid, __u64 t)
{
	struct gproc *p = proc_of(g, tgid, false);
	struct gop op = {
		.t = t,
		.end = t,
		.tgid = tgid,
		.fn = "the exit",
		.verb = "of",
	};
	size_t n;

	if (!p)
		return;
	op.comm = strtab__internf(g->strs, "process %u", tgid);
	/* Its contexts went with it: the work it queued is done, whoever waited on it. */
	n = gputime__visit(g, &p->active, true);
	for (size_t i = 0; i < n; i++)
		gpudev__evidence(g, *VEC_AT(&g->visit, struct stream *, i), UINT64_MAX, &op);
	while (p->active.next != &p->active || p->idle.next != &p->idle)
		stream_free(g, p->active.next != &p->active ?
				       GLIST_ENTRY(p->active.next, struct stream, plink) :
				       GLIST_ENTRY(p->idle.next, struct stream, plink));
	while (p->events.next != &p->events)
		event_free(g, GLIST_ENTRY(p->events.next, struct evrec, plink));
	proc_free(g, p);
}

void gputime__forget_idle(struct gputime *g, __u64 now, __u64 window)
{
	__u64 before = now > window ? now - window : 0;

	while (g->idle_streams.next != &g->idle_streams) {
		struct stream *s = GLIST_ENTRY(g->idle_streams.next, struct stream, glink);

		if (s->used >= before)
			break;
		if (s->non_blocking) {
			/* Made so by its creation, which no later call repeats: kept, looked at
			 * again a window later. */
			s->used = now;
			glist_del(&s->glink);
			glist_add_tail(&g->idle_streams, &s->glink);
			continue;
		}
		stream_free(g, s);
	}
	while (g->ev_lru.next != &g->ev_lru) {
		struct evrec *e = GLIST_ENTRY(g->ev_lru.next, struct evrec, glink);

		if (e->used >= before)
			break;
		event_free(g, e);
	}
}

void gputime__handles(const struct gputime *g, struct handle_stats *hs)
{
	*hs = g->hs;
}
