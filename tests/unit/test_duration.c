// SPDX-License-Identifier: GPL-2.0
/*
 * The one duration formatter (lib/duration.c): each range's unit and digits, the boundaries
 * included, and a buffer too small cut and terminated.
 */
#include <string.h>

#include "duration.h"
#include "testlib.h"

static void check_duration(__u64 ns, const char *want)
{
	char buf[32];

	CHECK(!strcmp(dur__fmt(buf, sizeof(buf), ns), want), "%llu ns: \"%s\", expected \"%s\"",
	      (unsigned long long)ns, buf, want);
}

int main(void)
{
	char small[4];

	check_duration(0, "0.00 ms");
	check_duration(4999, "0.00 ms");
	check_duration(440000, "0.44 ms");
	check_duration(999999, "1.00 ms");
	check_duration(1000000, "1 ms");
	check_duration(905400000, "905 ms");
	check_duration(9999999999ull, "10000 ms");
	check_duration(10000000000ull, "10.0 s");
	check_duration(3600000000000ull, "3600.0 s");
	/* Cut to the buffer, always terminated. */
	CHECK(!strcmp(dur__fmt(small, sizeof(small), 905400000), "905"), "cut: \"%s\"", small);
	puts("ok");
	TEST_PASS();
}
