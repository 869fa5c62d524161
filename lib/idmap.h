/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A table from 64-bit ids (thread ids, probe ids, CUDA handles) to indexes into the caller's own
 * array: open addressing, no allocation per entry, so a lookup per record is cheap.
 */
#ifndef GAPSCOPE_IDMAP_H
#define GAPSCOPE_IDMAP_H

#include <stddef.h>
#include <linux/types.h>

struct idmap {
	__u64 *keys;
	__u32 *vals; /* index + 1: 0 is a free slot */
	size_t cap, n;
};

/* The index stored for key, or -1. */
long idmap__get(const struct idmap *m, __u64 key);
/* Stores (or replaces) key's index; 0 or -ENOMEM. */
int idmap__set(struct idmap *m, __u64 key, __u32 index);
void idmap__free(struct idmap *m);

struct vec;
/* The element of key in v (v's indexes kept in m), a zeroed new one if none; NULL on ENOMEM. */
void *idmap__elem(struct idmap *m, struct vec *v, size_t elem, __u64 key);

#endif
