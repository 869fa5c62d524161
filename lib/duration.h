/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A span of time as every output writes it for a reader (summary.txt, the flame graphs' titles,
 * the page, the Perfetto timeline, `gapscope diff`): "12.5 s" from 10 s, "905 ms" from 1 ms,
 * "0.44 ms" below. Whole milliseconds from 1 ms because a gap is at least that long (--min-gap)
 * and a chain's links are compared by eye; the same text wherever one span appears.
 */
#ifndef GAPSCOPE_DURATION_H
#define GAPSCOPE_DURATION_H

#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

/* Into BUF of SIZE (NUL-terminated, cut to fit); returns BUF. */
char *dur__fmt(char *buf, size_t size, __u64 ns);
void dur__print(FILE *out, __u64 ns);

#endif
