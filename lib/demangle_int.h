/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The demangler's cache (lib/demangle.c), for its unit test: an open-addressing table keyed by
 * the name's address.
 */
#ifndef GAPSCOPE_DEMANGLE_INT_H
#define GAPSCOPE_DEMANGLE_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "demangle.h"

struct dm_ent {
	const char *key; /* NULL: empty */
	const char *name;
	bool owned;
};

struct demangler {
	struct dm_ent *tab;
	size_t cap, n; /* cap: a power of 2, at most half full */
};

#endif
