/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Numbers given on the command line (record, report, script): one parser, each number in a
 * range. Only plain decimal text is a number: no leading space, no sign a range does not need,
 * no hex, no NaN or infinity, and nothing that wraps (4294967297 is not 1).
 */
#ifndef GAPSCOPE_NUMARG_H
#define GAPSCOPE_NUMARG_H

#include <sys/types.h>

/* The largest pid Linux gives (PID_MAX_LIMIT on 64-bit). */
#define NUMARG_PID_MAX 4194304

/* A whole number in [MIN, MAX] into *OUT: 0, -EINVAL (not a number) or -ERANGE. */
int numarg__int(const char *s, long long min, long long max, long long *out);
/* A finite number in [MIN, MAX] (decimals, an exponent) into *OUT: 0, -EINVAL or -ERANGE. */
int numarg__double(const char *s, double min, double max, double *out);
/* A process id, 1 to NUMARG_PID_MAX: 0, -EINVAL or -ERANGE. */
int numarg__pid(const char *s, pid_t *out);

#endif
