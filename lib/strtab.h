/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interned strings for the report: thread names, function and lock names, folded stacks. Each
 * distinct string is stored once and lives until strtab__free(), so the analysis compares and
 * keeps names as pointers.
 */
#ifndef GAPSCOPE_STRTAB_H
#define GAPSCOPE_STRTAB_H

#include <stddef.h>

#include "vec.h" /* struct vec: most users of one intern strings too */

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

#endif
