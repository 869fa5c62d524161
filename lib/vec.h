/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Growable arrays: struct vec for an array of its own, and array__grow()/array__cap() for an
 * array kept as a pointer and a capacity inside another structure, or a table rehashed into a
 * larger one. Every array grows the one way, by doubling, with the size checked for overflow.
 */
#ifndef GAPSCOPE_VEC_H
#define GAPSCOPE_VEC_H

#include <stddef.h>
#include <string.h>

/*
 * The capacity that holds need elements of elem bytes: cap (first where cap is 0) doubled as
 * often as it takes, or cap itself where it holds them already. 0 where the bytes would overflow.
 */
size_t array__cap(size_t cap, size_t elem, size_t need, size_t first);

/*
 * Room for need elements of elem bytes in the array *p of *cap elements, reallocated to
 * array__cap()'s size where it is short. 0, or -ENOMEM with *p and *cap as they were.
 */
int array__grow(void **p, size_t *cap, size_t elem, size_t need, size_t first);

/* A growable array of fixed-size elements. */
struct vec {
	void *data;
	size_t n, cap, elem;
};

void *vec__grow_push(struct vec *v, size_t elem); /* vec__push when the array is full */
void vec__free(struct vec *v);
/*
 * Drops the leading elements whose unsigned 64-bit field at byte offset off is below horizon (a
 * list kept in that field's order, or nearly: the first element at or past horizon stops it).
 * Returns how many went.
 */
size_t vec__drop_below(struct vec *v, size_t off, unsigned long long horizon);

/*
 * A zeroed new element, NULL on ENOMEM. Inline: the timelines push one for nearly every event,
 * and with elem a constant the zeroing is a few stores, not a call.
 */
static inline void *vec__push(struct vec *v, size_t elem)
{
	char *p;

	if (v->n == v->cap)
		return vec__grow_push(v, elem);
	v->elem = elem;
	p = (char *)v->data + v->n++ * elem;
	memset(p, 0, elem);
	return p;
}
#define VEC_AT(v, type, i) (&((type *)(v)->data)[i])

/*
 * In an array of n elements of size bytes, sorted by the unsigned 64-bit key at byte offset off:
 * the index of the first element whose key is above key (sorted__upper), or at or above it
 * (sorted__lower); n where there is none. Every sorted table of the project searches with these.
 */
static inline unsigned long long sorted__key(const void *base, size_t size, size_t off, size_t i)
{
	unsigned long long k;

	memcpy(&k, (const char *)base + i * size + off, sizeof(k));
	return k;
}

static inline size_t sorted__upper(const void *base, size_t n, size_t size, size_t off,
				   unsigned long long key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sorted__key(base, size, off, mid) <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static inline size_t sorted__lower(const void *base, size_t n, size_t size, size_t off,
				   unsigned long long key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sorted__key(base, size, off, mid) < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
