// SPDX-License-Identifier: GPL-2.0
/*
 * The flight recorder's ring (flight.c has the rest) and the records every dump needs.
 *
 * Chunks are mapped anonymous memory of FLIGHT_CHUNK bytes (more for a bigger record), unmapped
 * when the ring and every dump have let go of them, so that the recorder's resident size follows
 * the ring. A chunk goes when all its records ended more than SECONDS ago, or earlier when a new
 * chunk would take the ring past --flight-mb, but never before the live analysis has had every
 * record of it: its ordered reader holds records until the recording is OREADER_WINDOW_NS past
 * them (the chunk's key_max against oreader__watermark), which is tens of milliseconds of a
 * steady recording, FLIGHT_LAG_NS of an idle one. Past the bound with nothing that may go (every
 * chunk still held by the analysis), records are dropped and counted.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "flight_int.h"
#include "vec.h"

static void sticky_add(struct flight *f, const struct gs_hdr *h, size_t size)
{
	/* A thread's latest name, and its first word that it stands for a device: the later ones
	 * (one a second) would put it after a dump's window, and the trace's end with it. */
	struct idmap *by_tid = h->type == GS_EV_COMM || h->type == GS_EV_EXEC ? &f->sticky_name :
			       h->type == GS_EV_CUDA			      ? &f->sticky_dev :
										NULL;
	size_t padded = ALIGN8(size);
	struct gs_hdr *copy;
	long at = by_tid ? idmap__get(by_tid, h->tid) : -1;

	if (at >= 0 && by_tid == &f->sticky_dev)
		return;

	if (f->sticky_bytes + padded > FLIGHT_STICKY_MAX ||
	    (at < 0 && array__grow((void **)&f->sticky, &f->cap_sticky, sizeof(*f->sticky),
				   f->nsticky + 1, 256)) ||
	    !(copy = calloc(1, padded))) {
		f->sticky_dropped++;
		return;
	}
	if (at < 0 && by_tid && idmap__set(by_tid, h->tid, f->nsticky)) {
		free(copy);
		f->sticky_dropped++;
		return;
	}
	memcpy(copy, h, size);
	copy->size = padded;
	if (at >= 0) {
		f->sticky_bytes -= f->sticky[at]->size;
		free(f->sticky[at]);
		f->sticky[at] = copy;
	} else {
		f->sticky[f->nsticky++] = copy;
	}
	f->sticky_bytes += padded;
}

/* The chunk being filled is full, or a dump reads it: it stays in the ring as it is. */
void flight_ring__close_tail(struct flight *f, __u64 now)
{
	if (f->tail)
		f->tail->closed_ns = now;
	f->tail = NULL;
}

/* Whether the live analysis has had every record of c (or is gone): c's memory may go. */
static bool analysed(const struct flight *f, const struct flight_chunk *c)
{
	return !f->rd || c->key_max + OREADER_WINDOW_NS <= oreader__watermark(f->rd);
}

static __u64 alive_bytes(struct flight *f)
{
	return __atomic_load_n(&f->alive, __ATOMIC_ACQUIRE);
}

/*
 * Lets go of the chunks whose records all ended more than SECONDS ago, and of the oldest while
 * what is alive and need more bytes (a chunk to come) would pass the bound; never the newest, nor
 * one the live analysis still holds records of. A chunk a dump is writing stays alive until the
 * dump has it written (tens of milliseconds): the ring is that much shorter meanwhile.
 */
void flight_ring__let_go(struct flight *f, __u64 now, size_t need)
{
	__u64 pin = ~0ull; /* a dump asked for keeps its window (within the bound) */

	for (size_t i = 0; i < f->npending; i++)
		if (f->pending[i].w0 < pin)
			pin = f->pending[i].w0;
	while (f->head && f->head != f->last) {
		struct flight_chunk *c = f->head;
		bool old = c->max_end + f->keep_ns < now && c->max_end < pin;

		if (!c->closed_ns || !analysed(f, c) ||
		    (!old && alive_bytes(f) + need <= f->cap_bytes))
			break;
		if (!old)
			f->let_go_early++;
		f->head = c->next;
		f->ring_bytes -= c->cap;
		flight_chunk__put(c);
	}
}

static struct flight_chunk *new_chunk(struct flight *f, size_t need)
{
	struct flight_chunk *c = calloc(1, sizeof(*c));
	size_t cap = need > FLIGHT_CHUNK ? ALIGN8(need) : FLIGHT_CHUNK;

	if (!c)
		return NULL;
	c->data = cap == FLIGHT_CHUNK ? flight_spares__take(&f->spares) : NULL;
	if (!c->data)
		c->data = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			       0);
	if (c->data == MAP_FAILED) {
		free(c);
		return NULL;
	}
	c->cap = cap;
	c->refs = 1;
	c->alive = &f->alive;
	c->spares = &f->spares;
	c->min_end = ~0ull;
	if (f->last)
		f->last->next = c;
	else
		f->head = c;
	f->last = f->tail = c;
	f->ring_bytes += cap;
	if (__atomic_add_fetch(&f->alive, cap, __ATOMIC_ACQ_REL) > f->ring_max)
		f->ring_max = alive_bytes(f);
	return c;
}

void flight__append(struct flight *f, const void *rec, size_t size)
{
	const struct gs_hdr *h = rec;
	size_t padded = ALIGN8(size);
	struct flight_chunk *c = f->tail;
	struct gs_hdr *copy;
	__u64 t;

	if (size < sizeof(*h))
		return;
	if (f->m)
		metrics__record(f->m, h);
	if (flight__sticky(h))
		sticky_add(f, h, size);
	if (f->replay && h->type == GS_REC_CLOCK && size >= sizeof(struct gs_rec_clock))
		f->real_off = ((const struct gs_rec_clock *)h)->real_ns -
			      ((const struct gs_rec_clock *)h)->mono_ns;
	if (!c || c->len + padded > c->cap) {
		__u64 now = flight_now(f);

		size_t cap = padded > FLIGHT_CHUNK ? padded : FLIGHT_CHUNK;

		flight_ring__close_tail(f, now);
		flight_ring__let_go(f, now, cap);
		if (alive_bytes(f) + cap > f->cap_bytes && f->head) {
			f->dropped++; /* past the bound, and every chunk still held */
			return;
		}
		c = new_chunk(f, padded);
		if (!c) {
			f->dropped++;
			return;
		}
	}
	copy = (void *)(c->data + c->len);
	memcpy(copy, rec, size);
	memset((char *)copy + size, 0, padded - size);
	copy->size = padded;
	c->len += padded;
	t = gs_rec_untimed(copy) ? copy->ts : gs_rec_end(copy);
	if (t && t < c->min_end)
		c->min_end = t;
	if (t > c->max_end && t != ~0ull)
		c->max_end = t;
	c->gpu_act |= copy->type == GS_REC_GPU_ACT;
	if (f->rd) {
		/* Where the live analysis orders it (reader.h): its end, or the latest end read. */
		__u64 key = gs_rec_untimed(copy) ? oreader__watermark(f->rd) : gs_rec_end(copy);

		if (key > c->key_max)
			c->key_max = key;
	}
	flight__live_push(f, copy);
}
