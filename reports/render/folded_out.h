/* SPDX-License-Identifier: GPL-2.0 */
#ifndef GAPSCOPE_FOLDED_OUT_H
#define GAPSCOPE_FOLDED_OUT_H

#include "gap.h"

/*
 * Folded stacks under the directory fd DFD (the caller's, kept open until folded_out__free):
 * folded_out__gap writes one gap's stacks to .seq-N.folded and appends them to all.folded (an
 * on_gap callback); folded_out__finish names each file for its gap's id, NNNN.folded, and
 * folded_out__free removes an all.folded that folded_out__finish did not complete.
 */
struct folded_out;
struct folded_out *folded_out__new(int dfd);
int folded_out__gap(const struct gap *g, void *folded_out);
int folded_out__finish(struct folded_out *f, const struct analysis *a);
void folded_out__free(struct folded_out *f);

#endif
