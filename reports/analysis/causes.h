/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Root causes, as the summary ranks them: each gap's roots summed by (kind, function or lock)
 * into a vector kept over the whole analysis, then ranked, each (kind, function) a row with its
 * own time only (the rows' shares sum to 1); an on-CPU row with its top leaf functions and, for
 * a Python function, its top lines (reports/analysis/actionable.h says how on-CPU time is named). A
 * gap's own roots are ranked the same way.
 */
#ifndef GAPSCOPE_CAUSES_H
#define GAPSCOPE_CAUSES_H

#include "gap.h"
#include "strtab.h"
#include "vec.h"

/* Widens TO by S (the union of their offsets; faults counted). */
void fault_span__add(struct fault_span *to, const struct fault_span *s);
/* Adds G's roots to KIND_FN (a vector of this file's own entries, zeroed to start). */
void causes__count(struct vec *kind_fn, const struct gap *g);
/* The rows from KIND_FN (allocated, *n of them), largest first, with their share of gap_ns:
 * 0 or -ENOMEM. */
int causes__rank(const struct vec *kind_fn, __u64 gap_ns, struct cause **out, size_t *n);
/* g->kinds from g->roots, largest first, with their share of the gap. */
void causes__gap_kinds(struct gap *g);
/* KIND_FN's entries and the vector. */
void causes__free(struct vec *kind_fn);

#endif
