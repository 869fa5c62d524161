// SPDX-License-Identifier: GPL-2.0
/*
 * The time-ordered reader (reader.h). The file is in end order but for the skew between CPUs,
 * so most records arrive no earlier than the last one: those go to the end of a FIFO (a ring of
 * entries, kept sorted). One that ended a little before the newest few is put in its place
 * among them, moving at most FIFO_SHIFT_MAX entries; one that arrives earlier still goes to a
 * binary heap. The next record out is the smaller of the two heads. A short move is cheaper than
 * a heap's push and pop (a pop walks the heap's whole depth), and a trace where each interval
 * holds a few instants (samples inside a synchronize) has one such record in three. Both hold
 * entries of 24 bytes pointing into the mapped file, in arrays that grow to the most a window
 * holds and are reused: no allocation per record.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reader_int.h"
#include "vec.h"

/* The most FIFO entries moved to put an early record in its place; past it, it goes to the heap. */
#define FIFO_SHIFT_MAX 32

static inline bool before(const struct entry *a, const struct entry *b)
{
	return a->key < b->key || (a->key == b->key && a->seq < b->seq);
}

/* Room for one more of the held entries, of which there are never more than OREADER_MAX_HELD. */
static int grow(void **v, size_t *cap, size_t sz)
{
	if (array__cap(*cap, sz, *cap + 1, 1024) > OREADER_MAX_HELD)
		return -ENOMEM;
	return array__grow(v, cap, sz, *cap + 1, 1024);
}

/* Room for one more entry in the FIFO. */
static int fifo__reserve(struct ordered_reader *r)
{
	size_t old = r->fifo_cap;

	if (r->fifo_n < r->fifo_cap)
		return 0;
	if (grow((void **)&r->fifo, &r->fifo_cap, sizeof(*r->fifo)))
		return -ENOMEM;
	/* Unwrap: the entries from head to the old end move to the new end. */
	if (r->fifo_head) {
		size_t tail = old - r->fifo_head;

		memmove(&r->fifo[r->fifo_cap - tail], &r->fifo[r->fifo_head],
			tail * sizeof(*r->fifo));
		r->fifo_head = r->fifo_cap - tail;
	}
	return 0;
}

/*
 * Puts e (the newest arrival: the highest seq) after every FIFO entry whose key is not above its
 * own, moving the later ones up by one. 1 when that takes more than FIFO_SHIFT_MAX moves: then
 * nothing is changed.
 */
static int fifo__insert(struct ordered_reader *r, const struct entry *e)
{
	size_t mask, i = r->fifo_n, stop;

	if (fifo__reserve(r))
		return -ENOMEM;
	mask = r->fifo_cap - 1;
	stop = i > FIFO_SHIFT_MAX ? i - FIFO_SHIFT_MAX : 0;
	while (i > stop && r->fifo[(r->fifo_head + i - 1) & mask].key > e->key)
		i--;
	if (i && r->fifo[(r->fifo_head + i - 1) & mask].key > e->key)
		return 1;
	for (size_t k = r->fifo_n; k > i; k--)
		r->fifo[(r->fifo_head + k) & mask] = r->fifo[(r->fifo_head + k - 1) & mask];
	r->fifo[(r->fifo_head + i) & mask] = *e;
	r->fifo_n++;
	return 0;
}

static int heap__push(struct ordered_reader *r, const struct entry *e)
{
	size_t i;

	if (r->heap_n == r->heap_cap && grow((void **)&r->heap, &r->heap_cap, sizeof(*r->heap)))
		return -ENOMEM;
	i = r->heap_n++;
	while (i && before(e, &r->heap[(i - 1) / 2])) {
		r->heap[i] = r->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	r->heap[i] = *e;
	return 0;
}

static void heap__pop(struct ordered_reader *r)
{
	struct entry last = r->heap[--r->heap_n];
	size_t i = 0, n = r->heap_n;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && before(&r->heap[c + 1], &r->heap[c]))
			c++;
		if (!before(&r->heap[c], &last))
			break;
		r->heap[i] = r->heap[c];
		i = c;
	}
	if (n)
		r->heap[i] = last;
}

/* The next entry out: the smaller head of FIFO and heap, NULL when both are empty. */
static const struct entry *peek(const struct ordered_reader *r, bool *from_heap)
{
	const struct entry *f = r->fifo_n ? &r->fifo[r->fifo_head] : NULL;
	const struct entry *h = r->heap_n ? &r->heap[0] : NULL;

	*from_heap = h && (!f || before(h, f));
	return *from_heap ? h : f;
}

static void drop(struct ordered_reader *r, bool from_heap)
{
	if (from_heap) {
		heap__pop(r);
	} else {
		r->fifo_head = (r->fifo_head + 1) & (r->fifo_cap - 1);
		r->fifo_n--;
	}
}

struct ordered_reader *oreader__new(struct trace_reader *tr, struct gs_ctx *ctx, __u64 window_ns)
{
	struct ordered_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->tr = tr;
	r->ctx = ctx;
	r->window = window_ns;
	return r;
}

void oreader__free(struct ordered_reader *r)
{
	if (!r)
		return;
	free(r->fifo);
	free(r->heap);
	free(r);
}

const struct oreader_stats *oreader__stats(const struct ordered_reader *r)
{
	return &r->st;
}

/*
 * The earliest record in the file still held; the file before it may be given back. Not the
 * FIFO's head: a record put in its place there went ahead of records read before it.
 */
static const void *oldest_held(const struct ordered_reader *r)
{
	const void *oldest = NULL;
	size_t at = SIZE_MAX;

	for (size_t i = 0; i < r->fifo_n + r->heap_n; i++) {
		const void *h =
			i < r->fifo_n ?
				(const void *)r->fifo[(r->fifo_head + i) & (r->fifo_cap - 1)].h :
				(const void *)r->heap[i - r->fifo_n].h;
		size_t pos = trace__pos(r->tr, h);

		if (!oldest || pos < at) {
			oldest = h;
			at = pos;
		}
	}
	return oldest;
}

static int emit(struct ordered_reader *r, const struct entry *e, bool from_heap,
		const struct gs_hdr **rec)
{
	*rec = e->h;
	if (r->ctx && !gs_rec_is_meta(e->h))
		ctx__note(r->ctx, e->h);
	r->last_out = e->key;
	drop(r, from_heap);
	r->st.emitted++;
	return OREADER_IN_ORDER;
}

/* Holds e in its place in the FIFO when that is near its end, else in the heap. */
static int hold(struct ordered_reader *r, const struct entry *e)
{
	int rc = fifo__insert(r, e);

	return rc > 0 ? heap__push(r, e) : rc;
}

/* Admits one record read: 1 held, OREADER_LATE (*rec set), 0 skipped, -ENOMEM. */
static int admit(struct ordered_reader *r, const struct gs_hdr *h, const struct gs_hdr **rec)
{
	struct entry e;

	r->st.records++;
	if (!gs_rec_check(h)) {
		r->st.short_records++;
		return 0;
	}
	if (r->ctx && gs_rec_is_meta(h))
		ctx__note(r->ctx, h);
	e = (struct entry){ gs_rec_untimed(h) ? r->watermark : gs_rec_end(h), r->seq++, h };
	if (e.key < r->last_out) {
		/* Ended before a record already out: it cannot be put in its place. */
		r->st.late++;
		if (r->watermark - e.key > r->st.late_max_ns)
			r->st.late_max_ns = r->watermark - e.key;
		r->st.emitted++;
		if (r->ctx)
			ctx__note(r->ctx, h);
		*rec = h;
		return OREADER_LATE;
	}
	if (e.key > r->watermark)
		r->watermark = e.key;
	if (hold(r, &e))
		return -ENOMEM;
	if (r->fifo_n + r->heap_n > r->st.held_max)
		r->st.held_max = r->fifo_n + r->heap_n;
	return 1;
}

/* Takes one record from the file: 1 held, OREADER_LATE (*rec set), 0 skipped, -1 the end. */
static int take(struct ordered_reader *r, const struct gs_hdr **rec)
{
	const struct gs_hdr *h;

	if (!r->tr || trace__next(r->tr, &h) <= 0)
		return -1;
	return admit(r, h, rec);
}

int oreader__push(struct ordered_reader *r, const struct gs_hdr *h, const struct gs_hdr **rec)
{
	int rc = admit(r, h, rec);

	return rc == OREADER_LATE || rc < 0 ? rc : 0;
}

void oreader__advance(struct ordered_reader *r, __u64 now)
{
	if (now > r->watermark)
		r->watermark = now;
}

__u64 oreader__watermark(const struct ordered_reader *r)
{
	return r->watermark;
}

void oreader__end(struct ordered_reader *r)
{
	r->eof = true;
}

int oreader__next(struct ordered_reader *r, const struct gs_hdr **rec)
{
	for (;;) {
		bool from_heap;
		const struct entry *e = peek(r, &from_heap);
		int rc;

		if (e &&
		    (r->eof || (r->watermark >= r->window && e->key <= r->watermark - r->window)))
			return emit(r, e, from_heap, rec);
		if (e && r->fifo_n + r->heap_n >= OREADER_MAX_HELD) {
			/* Full: the oldest goes out before its window passed. */
			r->st.forced++;
			return emit(r, e, from_heap, rec);
		}
		if (r->eof || !r->tr)
			return 0; /* the end, or (pushed) nothing due yet */
		if (!(r->st.records & 0xffff)) {
			const void *oldest = oldest_held(r);

			if (oldest)
				trace__release(r->tr, oldest);
		}
		rc = take(r, rec);
		if (rc == OREADER_LATE || rc == -ENOMEM)
			return rc;
		if (rc < 0)
			r->eof = true;
	}
}

void oreader__warn(const struct ordered_reader *r, const char *path, FILE *out)
{
	const struct oreader_stats *st = &r->st;

	if (st->short_records)
		fprintf(out,
			"gapscope: warning: %s: %llu record(s) too short for their type, skipped\n",
			path, (unsigned long long)st->short_records);
	if (st->late)
		fprintf(out,
			"gapscope: warning: %s: %llu record(s) arrived too late to be put in time order "
			"(up to %.3f ms behind; window %.3f ms): returned out of order\n",
			path, (unsigned long long)st->late, st->late_max_ns / 1e6, r->window / 1e6);
	if (st->forced)
		fprintf(out,
			"gapscope: warning: %s: %llu record(s) emitted before their window passed "
			"(more than %u held)\n",
			path, (unsigned long long)st->forced, OREADER_MAX_HELD);
}
