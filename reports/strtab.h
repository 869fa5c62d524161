/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interned strings for the report: thread names, function and lock names, folded stacks. Each
 * distinct string is stored once and lives until strtab__free(), so the analysis compares and
 * keeps names as pointers.
 */
#ifndef GAPSCOPE_STRTAB_H
#define GAPSCOPE_STRTAB_H

#include <stddef.h>

struct strtab;

struct strtab *strtab__new(void);
/* The interned copy of s (NULL only when out of memory). */
const char *strtab__intern(struct strtab *t, const char *s);
const char *strtab__internf(struct strtab *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
size_t strtab__bytes(const struct strtab *t);
void strtab__free(struct strtab *t);

/* A growable array of fixed-size elements. */
struct vec {
	void *data;
	size_t n, cap, elem;
};

void *vec__push(struct vec *v, size_t elem); /* a zeroed new element, NULL on ENOMEM */
void vec__free(struct vec *v);
#define VEC_AT(v, type, i) (&((type *)(v)->data)[i])

#endif
