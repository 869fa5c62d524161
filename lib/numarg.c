// SPDX-License-Identifier: GPL-2.0
/* Numbers on the command line: see numarg.h. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "numarg.h"

/* Whether S is made of CHARS only, and not empty (strto* skip spaces and take "nan", "0x"). */
static int only(const char *s, const char *chars)
{
	return *s && strspn(s, chars) == strlen(s);
}

int numarg__int(const char *s, long long min, long long max, long long *out)
{
	char *end;
	long long v;

	if (!only(s, min < 0 ? "-0123456789" : "0123456789"))
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end || end == s)
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int numarg__double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	/* Signs inside too: an exponent's ("1e-6"); the range decides about a leading '-'. */
	if (!only(s, "-+.0123456789eE") || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (*end || end == s)
		return -EINVAL;
	if (errno == ERANGE || !isfinite(v) || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int numarg__pid(const char *s, pid_t *out)
{
	long long v;
	int err = numarg__int(s, 1, NUMARG_PID_MAX, &v);

	if (!err)
		*out = (pid_t)v;
	return err;
}
