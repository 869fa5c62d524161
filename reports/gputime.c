// SPDX-License-Identifier: GPL-2.0
/* The API-inferred GPU timeline: see gputime.h. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gputime.h"

#define MAX_DEVICES	    64
#define NULL_STREAM_MAX	    2 /* 0: legacy NULL stream, 1: CU_STREAM_LEGACY, 2: per-thread */
#define STREAM_NON_BLOCKING 1

/* What gputime needs of one call. */
struct gop {
	__u64 t;     /* entry */
	__u64 end;   /* return (== t for an entry-only call) */
	__u64 woken; /* its last sleep's wakeup, 0 unknown */
	__u32 tid, tgid;
	__u32 kind; /* enum cu_kind */
	__s32 ret;
	__u64 stream, ctx, handle, aux;
	const char *fn, *comm;
};

struct stream {
	__u64 key_handle, key_owner; /* handle, and the tgid (real streams) or ctx (NULL) */
	__u32 device;
	__u8 non_blocking, capturing, known_device;
	__u64 last_launch;   /* ts of the last launch, 0 none */
	__u64 done_before;   /* launches before this are complete */
	struct stream *next; /* all streams */
};

struct tstate {
	__u32 tid;
	__u64 ctx; /* current context */
	struct tstate *next;
};

struct ctxmap {
	__u64 ctx;
	__u32 device;
	struct ctxmap *next;
};

struct gdev {
	bool seen;
	__u32 outstanding; /* streams with outstanding work */
	__u64 busy_since;
	__u64 idle_since; /* when the last evidence made it idle, 0: never busy yet */
	const char *idle_fn, *idle_comm; /* the call that made it idle */
	__u64 idle_earliest;
	struct vec busy; /* struct busy_interval */
	/* The latest launches, for gputime__launcher(): a ring. */
	__u64 launch_ts[GPUTIME_LAUNCHES];
	__u32 launch_tid[GPUTIME_LAUNCHES];
	__u32 nlaunch;
};

/* An event's last two records: a synchronize that began before the latest waits for the other. */
struct evrec {
	__u64 handle;
	__u32 tgid;
	struct {
		struct stream *stream;
		__u64 ts;
	} rec[2]; /* [0] the latest */
	struct evrec *next;
};

struct gputime {
	struct strtab *strs;
	struct stream *last; /* the stream named last: most calls name it again */
	struct tstate *last_thread;
	struct evrec *events;
	struct stream *streams;
	struct tstate *threads;
	struct ctxmap *ctxs;
	struct gdev dev[MAX_DEVICES];
	struct vec idle; /* struct gpu_idle */
	__u64 min_gap;
};

struct gputime *gputime__new(struct strtab *strs, __u64 min_gap_ns)
{
	struct gputime *g = calloc(1, sizeof(*g));

	if (g) {
		g->strs = strs;
		g->min_gap = min_gap_ns;
	}
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
	d->launch_ts[d->nlaunch % GPUTIME_LAUNCHES] = op->t;
	d->launch_tid[d->nlaunch++ % GPUTIME_LAUNCHES] = op->tid;
	if (was)
		return;
	if (d->outstanding++)
		return;
	if (d->idle_since && op->t - d->idle_since < g->min_gap && d->busy.n) {
		/* Too short for a gap: the busy interval goes on. */
		d->busy.n--;
		d->busy_since = VEC_AT(&d->busy, struct busy_interval, d->busy.n)->start;
		return;
	}
	d->busy_since = op->t;
	if (d->idle_since && op->t - d->idle_since >= g->min_gap) {
		struct gpu_idle *i = vec__push(&g->idle, sizeof(*i));

		if (i) {
			i->device = s->device;
			i->start = d->idle_since;
			i->start_earliest = d->idle_earliest;
			i->end = op->t;
			i->start_how = strtab__internf(g->strs, "%s returned in %s", d->idle_fn,
						       d->idle_comm);
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
		b->end = op->end;
	}
	d->idle_since = op->end;
	d->idle_earliest = op->woken && op->woken < op->end ? op->woken : op->end;
	d->idle_fn = op->fn; /* named only if the idle time becomes a gap */
	d->idle_comm = op->comm;
}

/* Every stream of the device a context or a copy synchronizes with. */
static void evidence_all(struct gputime *g, __u32 device, bool blocking_only, __u64 cut,
			 const struct gop *op)
{
	for (struct stream *s = g->streams; s; s = s->next)
		if (s->device == device && !(blocking_only && s->non_blocking))
			device_evidence(g, s, cut, op);
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
			device_evidence(g, s, op->t, op);
		break;
	case CU_K_SYNC_EVENT:
	case CU_K_EVENT_QUERY:
		ev = event_of(g, op->handle, op->tgid, false);
		if (!ev)
			break;
		for (int i = 0; i < 2; i++)
			if (ev->rec[i].stream && ev->rec[i].ts < op->t) {
				/* launches before the record */
				device_evidence(g, ev->rec[i].stream, ev->rec[i].ts + 1, op);
				break;
			}
		break;
	case CU_K_SYNC_CTX:
		evidence_all(g, device_of_call(g, op), false, op->t, op);
		break;
	case CU_K_MEMCPY:
	case CU_K_MEMSET:
		evidence_all(g, device_of_call(g, op), true, op->t, op);
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
		.fn = fn,
		.comm = comm,
	};
	struct tstate *t;
	struct stream *s;
	struct evrec *ev;

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
			device_launch(g, s, &op);
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
	default:
		/* An async copy, or an entry whose return was not seen: no evidence. */
		if (ret)
			call_returned(g, &op);
	}
	return 0;
}

__u64 gputime__idle_since(const struct gputime *g)
{
	__u64 t = UINT64_MAX;

	for (int i = 0; i < MAX_DEVICES; i++) {
		const struct gdev *d = &g->dev[i];

		if (d->seen && !d->outstanding && d->idle_since && d->idle_since < t)
			t = d->idle_since;
	}
	return t;
}

struct gpu_idle *gputime__take_idle(struct gputime *g, size_t *n)
{
	struct gpu_idle *i = g->idle.data;

	*n = g->idle.n;
	g->idle = (struct vec){};
	return i;
}

__u32 gputime__launcher(const struct gputime *g, __u32 device, __u64 t)
{
	const struct gdev *d = &g->dev[device % MAX_DEVICES];

	for (__u32 k = 0; k < GPUTIME_LAUNCHES && k < d->nlaunch; k++) {
		__u32 i = (d->nlaunch - 1 - k) % GPUTIME_LAUNCHES;

		if (d->launch_ts[i] <= t)
			return d->launch_tid[i];
	}
	return 0;
}

int gputime__finish(struct gputime *g, __u64 t0, __u64 t1, struct device_summary **devs,
		    size_t *ndevs)
{
	size_t nd = 0;

	for (int i = 0; i < MAX_DEVICES; i++)
		if (g->dev[i].seen)
			nd = i + 1;
	*devs = calloc(nd ? nd : 1, sizeof(**devs));
	if (!*devs)
		return -ENOMEM;
	for (size_t i = 0; i < nd; i++) {
		struct gdev *d = &g->dev[i];
		struct device_summary *ds = &(*devs)[i];

		if (d->outstanding) { /* still busy when the recording stopped */
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
	return 0;
}
