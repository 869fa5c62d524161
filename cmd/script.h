/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gapscope script (script.c): events one a line; the recorder's metadata records (clock, probes,
 * maps, losses, CUPTI activity, ...) as '#' lines (script_meta.c).
 */
#ifndef GAPSCOPE_SCRIPT_H
#define GAPSCOPE_SCRIPT_H

#include <stdio.h>
#include <linux/types.h>

#include "gapscope.h"

/* A CLOCK_MONOTONIC time as seconds.microseconds. */
void script__print_time(FILE *o, __u64 ns);
/* One metadata record (gs_rec_is_meta()) as a '#' line; unknown types say so. */
void script__print_meta(FILE *o, const struct gs_hdr *h);

#endif
