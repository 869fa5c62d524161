/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A table from strings to indexes into the caller's own array of them (a string table, frames
 * in first-seen order): open addressing on the one hash (hash.h), indexes only, so the strings
 * stay where the caller keeps them, in the order an output numbers them, and no copy is made.
 * Every call is passed that array (names[i], the string stored as index i) to compare against.
 */
#ifndef GAPSCOPE_STRMAP_H
#define GAPSCOPE_STRMAP_H

#include <stddef.h>
#include <linux/types.h>

struct strmap {
	__u32 *vals; /* index + 1: 0 is a free slot */
	size_t cap, n;
};

/* The index stored for s, or -1. */
long strmap__get(const struct strmap *m, const char *const *names, const char *s);
/*
 * Stores (or replaces) s's index, below UINT32_MAX. names[index] must hold s already, as
 * names[i] must for every index i stored: a slot is compared, and rehashed, through them.
 * 0, -ERANGE or -ENOMEM.
 */
int strmap__set(struct strmap *m, const char *const *names, const char *s, __u32 index);
void strmap__free(struct strmap *m);

#endif
