/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Root causes, as the summary ranks them: each gap's roots summed by (kind, function or lock)
 * into a vector kept over the whole analysis, then ranked by kind, each kind named by the
 * function (or lock) that explains most of it; and a gap's own roots by (kind, function).
 */
#ifndef GAPSCOPE_CAUSES_H
#define GAPSCOPE_CAUSES_H

#include "analysis.h"
#include "strtab.h"

/* Adds G's roots to KIND_FN (a vector of this file's own entries, zeroed to start). */
void causes__count(struct vec *kind_fn, const struct gap *g);
/* a->causes from KIND_FN, largest first, with their share of a->gap_ns. */
void causes__rank(struct analysis *a, const struct vec *kind_fn);
/* g->kinds from g->roots, largest first, with their share of the gap. */
void causes__gap_kinds(struct gap *g);

#endif
