/* SPDX-License-Identifier: GPL-2.0 */
/*
 * speedscope's file format (https://www.speedscope.app/file-format-schema.json): folded stack
 * sets as "sampled" profiles in nanoseconds sharing one frame table, e.g. one profile per gap
 * and one for all gaps.
 */
#ifndef GAPSCOPE_SPEEDSCOPE_H
#define GAPSCOPE_SPEEDSCOPE_H

#include <stddef.h>
#include <stdio.h>

#include "folded.h"

/*
 * Writes profiles[i] named names[i], i < n; name is the file's name (shown by speedscope),
 * may be NULL. An empty set is written as an empty profile. Returns 0, or -1 on a write error
 * (or out of memory).
 */
int speedscope__write(FILE *out, const char *name, const struct folded *const *profiles,
		      const char *const *names, size_t n);

#endif /* GAPSCOPE_SPEEDSCOPE_H */
