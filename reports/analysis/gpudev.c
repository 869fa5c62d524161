// SPDX-License-Identifier: GPL-2.0
/* A device's busy intervals and gaps, from its streams' launches and evidence (gputime_int.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gputime_int.h"

#define UNSURE_MAX 1024 /* windows kept open per busy interval */

/*
 * A device's outstanding streams in a binary heap by start_eff, each knowing its place
 * (s->heap, + 1): the first to start after another's work is done is at the top.
 */
static struct stream **heap_at(struct gdev *d, size_t i)
{
	return VEC_AT(&d->heap, struct stream *, i);
}

static void heap_put(struct gdev *d, size_t i, struct stream *s)
{
	*heap_at(d, i) = s;
	s->heap = i + 1;
}

static void heap_fix(struct gputime *g, struct gdev *d, size_t i)
{
	struct stream *s = *heap_at(d, i);

	while (i && (*heap_at(d, (i - 1) / 2))->start_eff > s->start_eff) {
		g->hs.work++;
		heap_put(d, i, *heap_at(d, (i - 1) / 2));
		i = (i - 1) / 2;
	}
	for (;;) {
		size_t c = 2 * i + 1;

		g->hs.work++;
		if (c >= d->heap.n)
			break;
		if (c + 1 < d->heap.n &&
		    (*heap_at(d, c + 1))->start_eff < (*heap_at(d, c))->start_eff)
			c++;
		if ((*heap_at(d, c))->start_eff >= s->start_eff)
			break;
		heap_put(d, i, *heap_at(d, c));
		i = c;
	}
	heap_put(d, i, s);
}

void gpudev__heap_del(struct gputime *g, struct stream *s)
{
	struct gdev *d = &g->dev[s->device];
	size_t i = s->heap - 1;
	struct stream *last = *heap_at(d, --d->heap.n);

	s->heap = 0;
	if (last == s)
		return;
	heap_put(d, i, last);
	heap_fix(g, d, i);
}

void gpudev__heap_sync(struct gputime *g, struct stream *s)
{
	struct gdev *d = &g->dev[s->device];
	struct stream **p;

	if (!outstanding(s)) {
		if (s->heap)
			gpudev__heap_del(g, s);
		return;
	}
	if (s->heap) {
		heap_fix(g, d, s->heap - 1); /* its start may have moved */
		return;
	}
	p = vec__push(&d->heap, sizeof(*p));
	if (!p)
		return; /* out of memory: not a candidate for the next start */
	heap_put(d, d->heap.n - 1, s);
	heap_fix(g, d, d->heap.n - 1);
}

/* A stream without work, which the evidence loops leave out: the floors they raised. */
void gpudev__floor(struct gputime *g, struct stream *s)
{
	const struct gdev *d = &g->dev[s->device];
	__u64 f = d->floor_all;

	if (!s->non_blocking && d->floor_blocking > f)
		f = d->floor_blocking;
	if (s->proc->floor > f)
		f = s->proc->floor;
	if (f > s->done_before)
		s->done_before = f;
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

void gpudev__flush_due(struct gputime *g, __u64 now)
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
		.start_how = strtab__internf(g->strs, "%s %s %s%s", d->idle_fn, d->idle_verb,
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

/*
 * Busy since the device's last signal (a launch, or evidence for a stream) with none until t:
 * where that is at least the gap floor, nothing says the GPU was working then.
 */
static void unconfirmed_until(struct gputime *g, struct gdev *d, __u64 t)
{
	__u64 from = d->last_signal > d->busy_since ? d->last_signal : d->busy_since;

	if (d->outstanding && d->last_signal && t > from && t - d->last_signal >= g->min_gap) {
		struct busy_interval *w;

		if (d->unsure.n >= UNSURE_MAX) { /* the oldest stay unconfirmed */
			w = d->unsure.data;
			d->unconfirmed += w->end - w->start;
			memmove(w, w + 1, (d->unsure.n - 1) * sizeof(*w));
			d->unsure.n--;
		}
		w = vec__push(&d->unsure, sizeof(*w));
		if (w)
			*w = (struct busy_interval){ from, t };
		else
			d->unconfirmed += t - from;
	}
	if (t > d->last_signal)
		d->last_signal = t;
}

/* A call waited for the device through [t0, t1]: it was working then. */
static void confirmed(struct gdev *d, __u64 t0, __u64 t1)
{
	for (size_t i = 0; i < d->unsure.n; i++) {
		struct busy_interval *w = VEC_AT(&d->unsure, struct busy_interval, i);

		if (t0 <= w->start && t1 >= w->end)
			w->end = w->start;
		else if (t0 <= w->start && t1 > w->start)
			w->start = t1;
		else if (t0 > w->start && t0 < w->end)
			w->end = t0; /* what it did not wait through stays unsure */
	}
}

/*
 * The busy interval ends: its windows no call waited through were unconfirmed, those still at
 * least the gap floor (what is left of one is as short an idle time as the gaps leave out).
 */
static void unsure_close(struct gputime *g, struct gdev *d)
{
	for (size_t i = 0; i < d->unsure.n; i++) {
		struct busy_interval *w = VEC_AT(&d->unsure, struct busy_interval, i);

		if (w->end - w->start >= g->min_gap)
			d->unconfirmed += w->end - w->start;
	}
	d->unsure.n = 0;
}

void gpudev__launch(struct gputime *g, struct stream *s, const struct gop *op)
{
	struct gdev *d = &g->dev[s->device];
	bool was = outstanding(s);
	__u64 t = op->t;
	const char *behind = "";

	d->seen = true;
	unconfirmed_until(g, d, op->t);
	s->last_launch = op->t;
	s->launches++;
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
	s->open_since = op->t;
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
	if (!d->first_busy)
		d->first_busy = t;
	if (d->idle_since && t - d->idle_since >= g->min_gap)
		open_gap(g, d, s, t);
}

/* The device's busy interval ends at end, for the call op. */
static void busy_until(struct gputime *g, struct gdev *d, __u64 end, const char *less,
		       const struct gop *op)
{
	struct busy_interval *b = vec__push(&d->busy, sizeof(*b));

	unsure_close(g, d);
	if (b) {
		b->start = d->busy_since;
		b->end = end;
	}
	d->idle_since = end;
	d->idle_earliest = op->woken && op->woken < end ? op->woken : end;
	d->idle_fn = op->fn; /* named only if the idle time becomes a gap */
	d->idle_comm = op->comm;
	d->idle_verb = op->verb ? op->verb : "returned in";
	d->idle_less = less;
}

/*
 * A stream whose work before cut is done: so were the other streams' works before the events its
 * waits before cut waited for (cuStreamWaitEvent), by then, and so on along the chain. The chain's
 * length is the trace's to decide (60,000 streams each waiting on the next are 180,000 calls), so
 * it is walked with a worklist, not a recursion: each stream's own update (evidence_done) comes
 * after those of the streams it waited for, depth first, in the order its waits were made, as a
 * recursion would. Each wait is taken off its stream before it is followed: a cycle ends.
 */
struct evidence_step {
	struct stream *s;
	__u64 cut, tail;
	bool was, expanded;
};

static void evidence_done(struct gputime *g, struct stream *s, bool was, __u64 tail,
			  const struct gop *op);

void gpudev__evidence(struct gputime *g, struct stream *s, __u64 cut, const struct gop *op)
{
	struct vec *work = &g->evidence_work;
	struct evidence_step *st = vec__push(work, sizeof(*st));
	size_t base = work->n - 1;

	if (!st)
		return; /* out of memory: the evidence is not taken, as any record not kept */
	*st = (struct evidence_step){ .s = s, .cut = cut };
	while (work->n > base) {
		struct evidence_step cur = *VEC_AT(work, struct evidence_step, work->n - 1);
		struct stream *src[STREAM_WAITS];
		__u64 rec[STREAM_WAITS];
		__u32 k = 0, n = 0;

		g->hs.work++;
		if (cur.expanded) {
			work->n--;
			evidence_done(g, cur.s, cur.was, cur.tail, op);
			gputime__track(g, cur.s, op->end);
			continue;
		}
		st = VEC_AT(work, struct evidence_step, work->n - 1);
		st->expanded = true;
		st->was = outstanding(cur.s);
		st->tail = cur.s->tail_last < cur.cut ? cur.s->tail_ns : 0;
		if (cur.cut > cur.s->done_before) {
			cur.s->done_before = cur.cut;
			gpudev__heap_sync(g, cur.s); /* no longer the next to start */
		}
		for (__u32 i = 0; i < cur.s->nwaits; i++) {
			if (cur.s->waits[i].at < cur.cut) {
				/* Let go of meanwhile: its news is lost with it. */
				src[n] = gputime__find(g, cur.s->waits[i].src_handle,
						       cur.s->waits[i].src_owner);
				rec[n] = cur.s->waits[i].rec;
				n += src[n] != NULL;
			} else {
				cur.s->waits[k++] = cur.s->waits[i];
			}
		}
		cur.s->nwaits = k;
		/* The first wait on top: taken first. */
		for (__u32 i = n; i-- > 0;) {
			st = vec__push(work, sizeof(*st));
			if (st)
				*st = (struct evidence_step){ .s = src[i], .cut = rec[i] + 1 };
		}
	}
}

/* What the evidence that s's work before the step's cut is done means for its device. */
static void evidence_done(struct gputime *g, struct stream *s, bool was, __u64 tail,
			  const struct gop *op)
{
	struct gdev *d = &g->dev[s->device];
	__u64 end = op->end;
	const struct stream *next = NULL;
	const char *less = "";

	if (was) {
		/* The work was not done when the call began to wait (op->t), if it waited: the
		 * time before that, back to the last signal, nothing backs. */
		unconfirmed_until(g, d, op->t < op->end ? op->t : op->end);
		if (op->t < op->end)
			confirmed(d, op->t, op->end);
		if (op->end > d->last_signal)
			d->last_signal = op->end;
	}
	if (!outstanding(s) && was)
		s->ever_done = d->ever_done = true;
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
	if (d->heap.n)
		next = *VEC_AT(&d->heap, struct stream *, 0);
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
void gpudev__queue_copy(struct gputime *g, struct stream *s, const struct gop *op, bool to_host)
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
void gpudev__evidence_all(struct gputime *g, __u32 device, bool blocking_only, __u64 cut,
			  const struct gop *op)
{
	struct gdev *d = &g->dev[device];
	size_t n = gputime__visit(g, &d->active, false);
	__u64 *floor = blocking_only ? &d->floor_blocking : &d->floor_all;

	/* Those without work only raise the floor (gpudev__floor). */
	if (cut > *floor)
		*floor = cut;
	for (size_t i = 0; i < n; i++) {
		struct stream *s = *VEC_AT(&g->visit, struct stream *, i);

		if (!(blocking_only && s->non_blocking))
			gpudev__evidence(g, s, cut, op);
	}
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

/* Whether the device had launches and no completion signal ever closed any of them. */
static bool busy_unknown(const struct gputime *g, __u32 device)
{
	return g->dev[device].seen && !g->dev[device].ever_done; /* seen: launched */
}

/* The device's streams still outstanding at t1, and for how long no evidence closed them. */
static const char *unclosed(struct gputime *g, __u32 device, __u64 t1)
{
	char buf[256];
	size_t n = 0, k = 0;

	buf[0] = 0;
	for (struct glink *l = g->dev[device].active.next; l != &g->dev[device].active;
	     l = l->next) {
		const struct stream *s = GLIST_ENTRY(l, struct stream, glink);

		if (!outstanding(s))
			continue;
		if (k++ < 4 && n < sizeof(buf))
			n += snprintf(buf + n, sizeof(buf) - n,
				      "%sstream 0x%llx (work queued %.3f s "
				      "before the end)",
				      n ? ", " : "", (unsigned long long)s->hn.k1,
				      t1 > s->open_since ? (t1 - s->open_since) / 1e9 : 0.0);
	}
	if (k > 4 && n < sizeof(buf))
		snprintf(buf + n, sizeof(buf) - n, " and %zu more", k - 4);
	return strtab__intern(g->strs, buf);
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

		ds->busy_unknown = busy_unknown(g, i);
		if (d->outstanding) { /* still busy when the recording stopped */
			struct busy_interval *b = vec__push(&d->busy, sizeof(*b));

			if (b) {
				b->start = d->busy_since;
				b->end = t1;
			}
			/* Named where nothing was heard of them for the gap floor at least: the
			 * end of a recording cuts every busy program's last launches off. */
			if (ds->busy_unknown ||
			    (t1 > d->last_signal && t1 - d->last_signal >= g->min_gap))
				ds->unclosed = unclosed(g, i, t1);
			unconfirmed_until(g, d, t1);
			unsure_close(g, d);
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
		/* A live analysis let its first intervals go (gputime__busy_ns): where it began. */
		if (d->first_busy)
			ds->split.active_start = d->first_busy < t0 ? t0 : d->first_busy;
		ds->unconfirmed_ns = d->unconfirmed < ds->busy_ns ? d->unconfirmed : ds->busy_ns;
		if (!ds->unclosed)
			ds->unclosed = "";
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

int gputime__active(const struct gputime *g, __u32 device, __u64 now, __u64 *start, __u64 *end)
{
	const struct gdev *d = device < MAX_DEVICES ? &g->dev[device] : NULL;

	if (!d || !d->seen || !d->first_busy)
		return -ENOENT;
	*start = d->first_busy;
	*end = d->outstanding ? now : d->idle_since;
	return 0;
}
