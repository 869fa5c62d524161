// SPDX-License-Identifier: GPL-2.0
/* Spans of time as text: see duration.h. */
#include "duration.h"

char *dur__fmt(char *buf, size_t size, __u64 ns)
{
	if (ns >= 10000000000ull)
		snprintf(buf, size, "%.1f s", ns / 1e9);
	else if (ns >= 1000000)
		snprintf(buf, size, "%.0f ms", ns / 1e6);
	else
		snprintf(buf, size, "%.2f ms", ns / 1e6);
	return buf;
}

void dur__print(FILE *out, __u64 ns)
{
	char buf[32];

	fputs(dur__fmt(buf, sizeof(buf), ns), out);
}
