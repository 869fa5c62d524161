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
	__u64 stream, ctx, handle, aux, bytes;
	const char *fn, *comm;
};

struct stream {
	__u64 key_handle, key_owner; /* handle, and the tgid (real streams) or ctx (NULL) */
	__u32 device;
	__u8 non_blocking, capturing, known_device;
	__u64 last_launch; /* ts of the last launch, 0 none */
	__u64 done_before; /* launches before this are complete */
	/* The copy model (gputime__copy_model): where the stream's own copies hold its kernels. */
	__u64 copy_free; /* the copies queued while no kernel was outstanding end then, 0 none */
	__u64 tail_ns;	 /* modelled time of the copies queued since the last launch */
	__u64 tail_last; /* when the last of them was queued */
	/* Since it last became outstanding: when its first kernel could start, and the launch. */
	__u64 start_eff;
	const char *start_how;
	__u32 start_tid;
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
	const char *idle_less;		 /* "" or how much earlier the copy model put it */
	__u64 idle_earliest;
	struct vec busy;   /* struct busy_interval */
	__u64 busy_folded; /* of intervals let go by gputime__busy_ns() */
	/* The copy model: when the copies queued so far each way end (0: host to device). */
	__u64 engine_free[2];
	/* The latest gap while a launch on another stream may still end it earlier. */
	bool pend;
	struct gpu_idle gap;
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
	double copy_bytes_per_ns; /* 0: copies are not modelled */
	__u64 copy_latency_ns;
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

static bool outstanding(const struct stream *s)
{
	return s->last_launch && s->last_launch >= s->done_before;
}

/* The device's latest gap is final: the trace has passed its end. */
static void flush_gap(struct gputime *g, struct gdev *d)
{
	struct gpu_idle *i;

	if (!d->pend)
		return;
	d->pend = false;
	i = vec__push(&g->idle, sizeof(*i));
	if (i)
		*i = d->gap;
}

static void flush_due(struct gputime *g, __u64 now)
{
	for (int i = 0; i < MAX_DEVICES; i++)
		if (g->dev[i].pend && g->dev[i].gap.end <= now)
			flush_gap(g, &g->dev[i]);
}

/* The device idle from d->idle_since until t, when s's first kernel can start. */
static void open_gap(struct gputime *g, struct gdev *d, const struct stream *s, __u64 t)
{
	flush_gap(g, d);
	d->pend = true;
	d->gap = (struct gpu_idle){
		.device = s->device,
		.start = d->idle_since,
		.start_earliest = d->idle_earliest,
		.end = t,
		.start_how = strtab__internf(g->strs, "%s returned in %s%s", d->idle_fn,
					     d->idle_comm, d->idle_less),
		.end_how = s->start_how,
		.closer_tid = s->start_tid,
	};
}

/*
 * Work that starts at t on another stream of a busy device: where the device's latest gap ends
 * after t (its end was a kernel behind copies), it ends at t instead, and a gap too short then
 * joins the busy intervals on either side.
 */
static void busy_from(struct gputime *g, struct gdev *d, const struct stream *s, __u64 t)
{
	if (d->pend && t < d->gap.end && t >= d->gap.start) {
		d->gap.end = t;
		d->gap.end_how = s->start_how;
		d->gap.closer_tid = s->start_tid;
		d->busy_since = t;
		if (t - d->gap.start < g->min_gap && d->busy.n) {
			d->pend = false;
			d->busy.n--;
			d->busy_since = VEC_AT(&d->busy, struct busy_interval, d->busy.n)->start;
		}
		return;
	}
	if (t < d->busy_since)
		d->busy_since = t < d->idle_since ? d->idle_since : t;
}

static void device_launch(struct gputime *g, struct stream *s, const struct gop *op)
{
	struct gdev *d = &g->dev[s->device];
	bool was = outstanding(s);
	__u64 t = op->t;
	const char *behind = "";

	d->seen = true;
	s->last_launch = op->t;
	s->tail_ns = 0; /* the copies queued before the launch run before its kernel */
	d->launch_ts[d->nlaunch % GPUTIME_LAUNCHES] = op->t;
	d->launch_tid[d->nlaunch++ % GPUTIME_LAUNCHES] = op->tid;
	if (was)
		return;
	if (s->copy_free > t) {
		/* The kernel waits for the copies queued ahead of it on an idle stream. */
		behind = strtab__internf(g->strs, ", behind %.3f ms of copies",
					 (s->copy_free - t) / 1e6);
		t = s->copy_free;
	}
	s->copy_free = 0;
	s->start_eff = t;
	s->start_how = strtab__internf(g->strs, "%s by %s%s", op->fn, op->comm, behind);
	s->start_tid = op->tid;
	if (d->outstanding++) {
		busy_from(g, d, s, t);
		return;
	}
	if (d->idle_since && t - d->idle_since < g->min_gap && d->busy.n) {
		/* Too short for a gap: the busy interval goes on. */
		d->busy.n--;
		d->busy_since = VEC_AT(&d->busy, struct busy_interval, d->busy.n)->start;
		return;
	}
	d->busy_since = t;
	if (d->idle_since && t - d->idle_since >= g->min_gap)
		open_gap(g, d, s, t);
}

/* The device's busy interval ends at end, for the call op. */
static void busy_until(struct gputime *g, struct gdev *d, __u64 end, const char *less,
		       const struct gop *op)
{
	struct busy_interval *b = vec__push(&d->busy, sizeof(*b));

	if (b) {
		b->start = d->busy_since;
		b->end = end;
	}
	d->idle_since = end;
	d->idle_earliest = op->woken && op->woken < end ? op->woken : end;
	d->idle_fn = op->fn; /* named only if the idle time becomes a gap */
	d->idle_comm = op->comm;
	d->idle_less = less;
}

static void device_evidence(struct gputime *g, struct stream *s, __u64 cut, const struct gop *op)
{
	struct gdev *d = &g->dev[s->device];
	bool was = outstanding(s);
	__u64 end = op->end, tail = s->tail_last < cut ? s->tail_ns : 0;
	const struct stream *next = NULL;
	const char *less = "";

	if (cut > s->done_before)
		s->done_before = cut;
	if (s->copy_free && s->copy_free <= op->end)
		s->copy_free = 0;
	if (!was || outstanding(s))
		return;
	s->tail_ns = 0;
	/*
	 * The copies queued after the stream's last kernel ran after it: the kernels were done
	 * that much earlier, though not before the last launch or the busy interval's start.
	 */
	if (tail) {
		__u64 floor = s->last_launch > d->busy_since ? s->last_launch : d->busy_since;

		end = end > floor && end - floor > tail ? end - tail : floor;
		if (end < op->end)
			less = strtab__internf(g->strs, ", less %.3f ms of copies",
					       (op->end - end) / 1e6);
	}
	if (!--d->outstanding) {
		busy_until(g, d, end, less, op);
		return;
	}
	/*
	 * Other streams are outstanding: idle until the first of them can start, if after the
	 * stream's end. A synchronize that slept was woken when its work was done, or later; its
	 * return may come long after that on a busy machine, after another stream's launch, so
	 * the wakeup bounds the end here (where known and no copies were taken off).
	 */
	if (!tail && op->woken && op->woken < end) {
		end = op->woken;
		less = strtab__internf(g->strs, ", woken %.3f ms before", (op->end - end) / 1e6);
	}
	for (const struct stream *o = g->streams; o; o = o->next)
		if (o->device == s->device && outstanding(o) &&
		    (!next || o->start_eff < next->start_eff))
			next = o;
	if (!next || next->start_eff <= end || end <= d->busy_since ||
	    next->start_eff - end < g->min_gap)
		return;
	busy_until(g, d, end, less, op);
	d->busy_since = next->start_eff;
	open_gap(g, d, next, next->start_eff);
}

/*
 * An async copy between host and device on s, modelled to take latency + bytes / rate: queued
 * while no kernel is outstanding on the stream it runs as soon as the copies before it on the
 * stream and the device's copies the same way are done (they share the link), and holds the
 * stream's next kernel back; queued after a launch it runs after that kernel.
 */
static void queue_copy(struct gputime *g, struct stream *s, const struct gop *op, bool to_host)
{
	__u64 ns = g->copy_latency_ns + (__u64)(op->bytes / g->copy_bytes_per_ns);
	__u64 *engine = &g->dev[s->device].engine_free[to_host];

	if (!outstanding(s)) {
		__u64 start = s->copy_free > op->t ? s->copy_free : op->t;

		if (*engine > start)
			start = *engine;
		s->copy_free = *engine = start + ns;
		return;
	}
	s->tail_ns += ns;
	s->tail_last = op->t;
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
		.bytes = e->bytes,
		.fn = fn,
		.comm = comm,
	};
	struct tstate *t;
	struct stream *s;
	struct evrec *ev;

	flush_due(g, op.end);
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
			queue_copy(g, s, &op, strstr(fn, "DtoH"));
		break;
	default:
		/* An entry whose return was not seen: no evidence. */
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
		if (d->pend && d->gap.start < t)
			t = d->gap.start;
	}
	return t;
}

void gputime__flush(struct gputime *g)
{
	flush_due(g, UINT64_MAX);
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

	for (int i = 0; i < MAX_DEVICES; i++) {
		flush_gap(g, &g->dev[i]);
		if (g->dev[i].seen)
			nd = i + 1;
	}
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
		ds->busy_ns += d->busy_folded;
		ds->idle_ns = t1 > t0 && t1 - t0 > ds->busy_ns ? t1 - t0 - ds->busy_ns : 0;
	}
	*ndevs = nd;
	return 0;
}

int gputime__busy_ns(struct gputime *g, __u32 device, __u64 now, __u64 *busy_ns)
{
	struct gdev *d = device < MAX_DEVICES ? &g->dev[device] : NULL;
	struct busy_interval *b;
	size_t n;

	if (!d || !d->seen)
		return -ENOENT;
	/* Every interval but the last (which a short gap may still reopen) is summed and let go. */
	n = d->busy.n;
	for (size_t i = 0; i + 1 < n; i++) {
		b = VEC_AT(&d->busy, struct busy_interval, i);
		d->busy_folded += b->end - b->start;
	}
	if (n > 1) {
		*VEC_AT(&d->busy, struct busy_interval, 0) = *VEC_AT(&d->busy, struct busy_interval,
								     n - 1);
		d->busy.n = 1;
	}
	*busy_ns = d->busy_folded;
	if (d->busy.n) {
		b = VEC_AT(&d->busy, struct busy_interval, 0);
		*busy_ns += b->end - b->start;
	}
	if (d->outstanding && now > d->busy_since)
		*busy_ns += now - d->busy_since;
	return 0;
}
