// SPDX-License-Identifier: GPL-2.0
/* The API-inferred GPU timeline: see gputime.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gputime.h"

#define MAX_DEVICES	64
#define NULL_STREAM_MAX	2	/* 0: legacy NULL stream, 1: CU_STREAM_LEGACY, 2: per-thread */
#define STREAM_NON_BLOCKING 1

/* One call, replayed at its entry (snapshot what the evidence covers) and at its return. */
struct gop {
	__u64 t;		/* when this step happens */
	__u32 tid, tgid;
	__u32 kind;		/* enum cu_kind */
	__u8 ret_step;		/* 0: entry, 1: return (evidence applies) */
	__u8 sync_copy;
	__s32 ret;
	__u64 stream, ctx, handle, aux;
	const char *fn, *comm;
	struct gop *entry;	/* the return step's entry step (holds the snapshot) */
	/* Snapshot at entry: the stream and cut (launches before it are covered). */
	struct stream *snap_stream;
	__u64 snap_cut;
	__u32 snap_device;
};

struct stream {
	__u64 key_handle, key_owner;	/* handle, and the tgid (real streams) or ctx (NULL) */
	__u32 device;
	__u8 non_blocking, capturing, known_device;
	__u64 last_launch;	/* ts of the last launch, 0 none */
	__u64 done_before;	/* launches before this are complete */
	struct stream *next;	/* all streams */
};

struct tstate {
	__u32 tid;
	__u64 ctx;		/* current context */
	struct tstate *next;
};

struct ctxmap {
	__u64 ctx;
	__u32 device;
	struct ctxmap *next;
};

struct gdev {
	bool seen;
	__u32 outstanding;	/* streams with outstanding work */
	__u64 busy_since;
	__u64 idle_since;	/* when the last evidence made it idle, 0: never busy yet */
	const char *idle_how;
	struct vec busy;	/* struct busy_interval */
};

struct gputime {
	struct strtab *strs;
	struct vec ops;		/* struct gop, entries and returns */
	struct stream *streams;
	struct tstate *threads;
	struct ctxmap *ctxs;
	struct gdev dev[MAX_DEVICES];
	struct vec idle;	/* struct gpu_idle */
	__u64 min_gap;
};

struct gputime *gputime__new(struct strtab *strs)
{
	struct gputime *g = calloc(1, sizeof(*g));

	if (g)
		g->strs = strs;
	return g;
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
	vec__free(&g->ops);
	vec__free(&g->idle);
	free(g);
}

static bool has_return(__u32 kind)
{
	switch (kind) {
	case CU_K_SYNC_STREAM:
	case CU_K_SYNC_EVENT:
	case CU_K_SYNC_CTX:
	case CU_K_EVENT_QUERY:
	case CU_K_STREAM_QUERY:
	case CU_K_MEMCPY:
	case CU_K_MEMSET:
	case CU_K_CTX_CREATE:
	case CU_K_STREAM_CREATE:
		return true;
	}
	return false;
}

int gputime__add(struct gputime *g, const struct cu_event *e, const char *fn, const char *comm)
{
	bool ret = e->h.flags & GS_F_RET;
	struct gop *op;

	switch (e->kind) {
	case CU_K_LAUNCH:
	case CU_K_GRAPH_LAUNCH:
	case CU_K_EVENT_RECORD:
	case CU_K_CTX_SET:
	case CU_K_CTX_PUSH:
	case CU_K_CAPTURE_BEGIN:
	case CU_K_CAPTURE_END:
		break;
	default:
		if (!has_return(e->kind) || !ret)
			return 0;	/* an async copy, an entry without its return: no evidence */
	}
	op = vec__push(&g->ops, sizeof(*op));
	if (!op)
		return -ENOMEM;
	op->t = e->h.ts;
	op->tid = e->h.tid;
	op->tgid = e->h.tgid;
	op->kind = e->kind;
	op->ret = ret ? e->ret : 0;
	op->stream = e->stream;
	op->ctx = e->ctx;
	op->handle = e->handle;
	op->aux = e->aux;
	op->fn = fn;
	op->comm = comm;
	/* A copy with a return probe is a synchronous one (async copies have none). */
	op->sync_copy = e->kind == CU_K_MEMCPY || e->kind == CU_K_MEMSET;
	if (ret && has_return(e->kind)) {
		struct gop *r = vec__push(&g->ops, sizeof(*r));

		if (!r)
			return -ENOMEM;
		op = VEC_AT(&g->ops, struct gop, g->ops.n - 2);
		*r = *op;
		r->t = e->h.ts + e->dur_ns;
		r->ret_step = 1;
	}
	return 0;
}

static struct tstate *thread_of(struct gputime *g, __u32 tid)
{
	struct tstate *t;

	for (t = g->threads; t; t = t->next)
		if (t->tid == tid)
			return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	t->next = g->threads;
	g->threads = t;
	return t;
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
	struct stream *s;
	bool known;

	for (s = g->streams; s; s = s->next)
		if (s->key_handle == op->stream && s->key_owner == owner)
			return s;
	if (!create || !(s = calloc(1, sizeof(*s))))
		return NULL;
	s->key_handle = op->stream;
	s->key_owner = owner;
	s->device = device_of_ctx(g, ctx, &known) % MAX_DEVICES;
	s->known_device = known;
	s->next = g->streams;
	g->streams = s;
	return s;
}

static bool outstanding(const struct stream *s)
{
	return s->last_launch && s->last_launch >= s->done_before;
}

static void device_launch(struct gputime *g, struct stream *s, const struct gop *op)
{
	struct gdev *d = &g->dev[s->device];
	bool was = outstanding(s);

	d->seen = true;
	s->last_launch = op->t;
	if (was)
		return;
	if (d->outstanding++)
		return;
	d->busy_since = op->t;
	if (d->idle_since && op->t - d->idle_since >= g->min_gap) {
		struct gpu_idle *i = vec__push(&g->idle, sizeof(*i));

		if (i) {
			i->device = s->device;
			i->start = d->idle_since;
			i->end = op->t;
			i->start_how = d->idle_how;
			i->end_how = strtab__internf(g->strs, "%s by %s", op->fn, op->comm);
			i->closer_tid = op->tid;
		}
	}
}

static void device_evidence(struct gputime *g, struct stream *s, __u64 cut, const struct gop *op)
{
	struct gdev *d = &g->dev[s->device];
	bool was = outstanding(s);

	if (cut > s->done_before)
		s->done_before = cut;
	if (!was || outstanding(s))
		return;
	if (--d->outstanding)
		return;
	struct busy_interval *b = vec__push(&d->busy, sizeof(*b));

	if (b) {
		b->start = d->busy_since;
		b->end = op->t;
	}
	d->idle_since = op->t;
	d->idle_how = strtab__internf(g->strs, "%s returned in %s", op->fn, op->comm);
}

/* Every stream of the device a context or a copy synchronizes with. */
static void evidence_all(struct gputime *g, __u32 device, bool blocking_only, __u64 cut,
			 const struct gop *op)
{
	for (struct stream *s = g->streams; s; s = s->next)
		if (s->device == device && !(blocking_only && s->non_blocking))
			device_evidence(g, s, cut, op);
}

/* Events: the stream and time of their last record. */
struct evrec {
	__u64 handle;
	__u32 tgid;
	struct stream *stream;
	__u64 cut;
};

static struct evrec *event_of(struct vec *events, __u64 handle, __u32 tgid, bool create)
{
	for (size_t i = 0; i < events->n; i++) {
		struct evrec *e = VEC_AT(events, struct evrec, i);

		if (e->handle == handle && e->tgid == tgid)
			return e;
	}
	if (!create)
		return NULL;
	struct evrec *e = vec__push(events, sizeof(*e));

	if (e) {
		e->handle = handle;
		e->tgid = tgid;
	}
	return e;
}

static void replay_entry(struct gputime *g, struct gop *op, struct vec *events)
{
	struct tstate *t = thread_of(g, op->tid);
	struct stream *s;
	struct evrec *ev;
	bool known;

	switch (op->kind) {
	case CU_K_CTX_SET:
	case CU_K_CTX_PUSH:
		if (t)
			t->ctx = op->ctx;
		break;
	case CU_K_LAUNCH:
	case CU_K_GRAPH_LAUNCH:
		s = stream_of(g, op, true);
		if (s && !s->capturing)
			device_launch(g, s, op);
		break;
	case CU_K_CAPTURE_BEGIN:
	case CU_K_CAPTURE_END:
		s = stream_of(g, op, true);
		if (s)
			s->capturing = op->kind == CU_K_CAPTURE_BEGIN;
		break;
	case CU_K_EVENT_RECORD:
		s = stream_of(g, op, true);
		ev = event_of(events, op->handle, op->tgid, true);
		if (ev) {
			ev->stream = s;
			ev->cut = op->t;
		}
		break;
	case CU_K_SYNC_STREAM:
	case CU_K_STREAM_QUERY:
		op->snap_stream = stream_of(g, op, false);
		op->snap_cut = op->t;
		break;
	case CU_K_SYNC_EVENT:
	case CU_K_EVENT_QUERY:
		ev = event_of(events, op->handle, op->tgid, false);
		if (ev) {
			op->snap_stream = ev->stream;
			op->snap_cut = ev->cut + 1;	/* launches before the record */
		}
		break;
	case CU_K_SYNC_CTX:
	case CU_K_MEMCPY:
	case CU_K_MEMSET:
		op->snap_device = device_of_ctx(g, op->ctx ? op->ctx : t ? t->ctx : 0, &known) %
				  MAX_DEVICES;
		op->snap_cut = op->t;
		break;
	}
}

static void replay_return(struct gputime *g, struct gop *op)
{
	const struct gop *e = op->entry;

	if (op->ret)
		return;	/* failed, or a query that found the work not done */
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
	case CU_K_STREAM_CREATE: {
		struct stream *s = stream_of(g, op, true);

		if (s)
			s->non_blocking = op->aux & STREAM_NON_BLOCKING;
		break;
	}
	case CU_K_SYNC_STREAM:
	case CU_K_STREAM_QUERY:
	case CU_K_SYNC_EVENT:
	case CU_K_EVENT_QUERY:
		if (e->snap_stream)
			device_evidence(g, e->snap_stream, e->snap_cut, op);
		break;
	case CU_K_SYNC_CTX:
		evidence_all(g, e->snap_device, false, e->snap_cut, op);
		break;
	case CU_K_MEMCPY:
	case CU_K_MEMSET:
		evidence_all(g, e->snap_device, true, e->snap_cut, op);
		break;
	}
}

static int cmp_gop(const void *a, const void *b)
{
	const struct gop *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	/* At one instant, evidence before a launch: an idle instant is not busy time. */
	return (int)y->ret_step - (int)x->ret_step;
}

int gputime__finish(struct gputime *g, __u64 t0, __u64 t1, __u64 min_gap_ns,
		    struct gpu_idle **idle, size_t *nidle, struct device_summary **devs,
		    size_t *ndevs)
{
	struct vec events = {};
	struct gop *ops;
	size_t n = g->ops.n, nd = 0;

	g->min_gap = min_gap_ns;
	ops = g->ops.data;
	if (n > 1)
		qsort(ops, n, sizeof(*ops), cmp_gop);
	/* After sorting, find each return's entry: same thread, kind, fn, latest entry before. */
	{
		struct gop **open = calloc(n ? n : 1, sizeof(*open));
		size_t nopen = 0;

		if (!open)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			struct gop *op = &ops[i];

			if (!op->ret_step) {
				replay_entry(g, op, &events);
				if (has_return(op->kind))
					open[nopen++] = op;
				continue;
			}
			for (size_t k = nopen; k--;) {
				if (open[k]->tid == op->tid && open[k]->fn == op->fn &&
				    open[k]->t <= op->t) {
					op->entry = open[k];
					open[k] = open[--nopen];
					break;
				}
			}
			if (op->entry)
				replay_return(g, op);
		}
		free(open);
	}
	vec__free(&events);

	for (int i = 0; i < MAX_DEVICES; i++)
		if (g->dev[i].seen)
			nd = i + 1;
	*devs = calloc(nd ? nd : 1, sizeof(**devs));
	if (!*devs)
		return -ENOMEM;
	for (size_t i = 0; i < nd; i++) {
		struct gdev *d = &g->dev[i];
		struct device_summary *ds = &(*devs)[i];

		if (d->outstanding) {	/* still busy when the recording stopped */
			struct busy_interval *b = vec__push(&d->busy, sizeof(*b));

			if (b) {
				b->start = d->busy_since;
				b->end = t1;
			}
		}
		ds->id = i;
		ds->busy = d->busy.data;
		ds->nbusy = d->busy.n;
		d->busy = (struct vec){};
		for (size_t k = 0; k < ds->nbusy; k++) {
			struct busy_interval *b = &ds->busy[k];

			b->start = b->start < t0 ? t0 : b->start;
			b->end = b->end > t1 ? t1 : b->end;
			if (b->end > b->start)
				ds->busy_ns += b->end - b->start;
		}
		ds->idle_ns = t1 > t0 && t1 - t0 > ds->busy_ns ? t1 - t0 - ds->busy_ns : 0;
	}
	*ndevs = nd;
	*idle = g->idle.data;
	*nidle = g->idle.n;
	g->idle = (struct vec){};
	return 0;
}
