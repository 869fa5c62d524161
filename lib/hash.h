/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one string hash: 64-bit FNV-1a (offset basis 14695981039346656037, prime 1099511628211).
 * Every table keyed by a string uses it (strtab, strmap for the renderers' string and frame
 * tables, the CUPTI collector's names); tests/cases/layout.sh holds the tree to this one
 * definition.
 */
#ifndef GAPSCOPE_HASH_H
#define GAPSCOPE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define FNV1A_BASIS 0xcbf29ce484222325ull
#define FNV1A_PRIME 0x100000001b3ull

static inline uint64_t hash__str(const char *s)
{
	uint64_t h = FNV1A_BASIS;

	while (*s)
		h = (h ^ (unsigned char)*s++) * FNV1A_PRIME;
	return h;
}

/* Folds LEN bytes at P into H (FNV-1a's step), for keys that are not strings. */
static inline uint64_t hash__bytes(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;

	while (len--)
		h = (h ^ *b++) * FNV1A_PRIME;
	return h;
}

#endif
