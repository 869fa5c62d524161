/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interned strings for the report: thread names, function and lock names, folded stacks. Each
 * distinct string is stored once and lives until strtab__free(), so the analysis compares and
 * keeps names as pointers.
 */
#ifndef GAPSCOPE_STRTAB_H
#define GAPSCOPE_STRTAB_H

#include <stddef.h>
#include <string.h>

struct strtab;

struct strtab *strtab__new(void);
/* The interned copy of s (NULL only when out of memory). */
const char *strtab__intern(struct strtab *t, const char *s);
/* The interned copy of s if there is one, else NULL: nothing is added. */
const char *strtab__find(const struct strtab *t, const char *s);
const char *strtab__internf(struct strtab *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
size_t strtab__bytes(const struct strtab *t);
void strtab__free(struct strtab *t);

/* A growable array of fixed-size elements. */
struct vec {
	void *data;
	size_t n, cap, elem;
};

void *vec__grow_push(struct vec *v, size_t elem); /* vec__push when the array is full */
void vec__free(struct vec *v);

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

#endif
