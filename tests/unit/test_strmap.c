// SPDX-License-Identifier: GPL-2.0
/*
 * The string to index table (lib/strmap.c): lookups compare the strings' text, not their
 * pointers, through the caller's array; a miss is -1, the empty string a key like any other;
 * an index is kept across growth from 64 slots through many doublings, where the caller's array
 * moves too; a second set replaces (with a copy of the string at its new index); UINT32_MAX
 * cannot be stored.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "strmap.h"
#include "vec.h"

#define N 5000

int main(void)
{
	struct strmap m = {};
	char **names = NULL, buf[32];
	size_t cap_names = 0;
	const char *const *nm;

	CHECK_EQ_U64(strmap__get(&m, NULL, "anything"), -1); /* never set: no slots at all */

	/* The first entries, as pprof's table starts: "" at 0, then names sharing a prefix. */
	for (int i = 0; i < 3; i++)
		CHECK_EQ_U64(array__grow((void **)&names, &cap_names, sizeof(*names), i + 1, 4), 0);
	names[0] = strdup("");
	names[1] = strdup("a");
	names[2] = strdup("ab");
	nm = (const char *const *)names;
	for (int i = 0; i < 3; i++)
		CHECK_EQ_U64(strmap__set(&m, nm, names[i], i), 0);
	CHECK_EQ_U64(m.n, 3);
	CHECK_EQ_U64(m.cap, 64);
	CHECK_EQ_U64(strmap__get(&m, nm, ""), 0);
	CHECK_EQ_U64(strmap__get(&m, nm, "a"), 1);
	CHECK_EQ_U64(strmap__get(&m, nm, "ab"), 2);
	CHECK_EQ_U64(strmap__get(&m, nm, "abc"), -1);
	CHECK_EQ_U64(strmap__get(&m, nm, "b"), -1);
	strcpy(buf, "ab"); /* the text counts, not the pointer */
	CHECK_EQ_U64(strmap__get(&m, nm, buf), 2);

	/* Thousands more, the caller's array reallocated as it goes: 64 slots doubled 8 times. */
	for (int i = 3; i < N; i++) {
		CHECK_EQ_U64(array__grow((void **)&names, &cap_names, sizeof(*names), i + 1, 4), 0);
		snprintf(buf, sizeof(buf), "frame_%d", i);
		names[i] = strdup(buf);
		CHECK(names[i], "out of memory");
		nm = (const char *const *)names;
		CHECK_EQ_U64(strmap__get(&m, nm, buf), -1);
		CHECK_EQ_U64(strmap__set(&m, nm, buf, i), 0);
		CHECK_EQ_U64(strmap__get(&m, nm, buf), i);
	}
	CHECK_EQ_U64(m.n, N);
	CHECK_EQ_U64(m.cap, 16384); /* half empty at most: 5000 need 10000 slots */
	for (int i = 0; i < N; i++)
		CHECK(strmap__get(&m, nm, names[i]) == i, "names[%d] \"%s\" lost: %ld", i, names[i],
		      strmap__get(&m, nm, names[i]));
	CHECK_EQ_U64(strmap__get(&m, nm, "frame_5000"), -1);
	CHECK_EQ_U64(strmap__get(&m, nm, "frame_"), -1);
	CHECK_EQ_U64(strmap__get(&m, nm, "frame_49999"), -1);
	CHECK_EQ_U64(strmap__get(&m, nm, ""), 0);

	/* A second set replaces: a copy of "frame_7" at N, then back to 7; nothing added. */
	CHECK_EQ_U64(array__grow((void **)&names, &cap_names, sizeof(*names), N + 1, 4), 0);
	names[N] = strdup("frame_7");
	CHECK(names[N], "out of memory");
	nm = (const char *const *)names;
	CHECK_EQ_U64(strmap__set(&m, nm, names[N], N), 0);
	CHECK_EQ_U64(strmap__get(&m, nm, "frame_7"), N);
	CHECK_EQ_U64(m.n, N);
	CHECK_EQ_U64(strmap__set(&m, nm, "frame_7", 7), 0);
	CHECK_EQ_U64(strmap__get(&m, nm, "frame_7"), 7);
	CHECK_EQ_U64(m.n, N);

	/* index + 1 is stored: UINT32_MAX would read as a free slot, and is refused. */
	CHECK_EQ_U64(strmap__set(&m, nm, "frame_8", UINT32_MAX), -ERANGE);
	CHECK_EQ_U64(strmap__get(&m, nm, "frame_8"), 8);
	CHECK_EQ_U64(m.n, N);

	strmap__free(&m);
	CHECK(!m.vals && !m.cap && !m.n, "strmap__free left %zu of %zu", m.n, m.cap);
	CHECK_EQ_U64(strmap__get(&m, nm, "frame_7"), -1);
	for (int i = 0; i <= N; i++)
		free(names[i]);
	free(names);
	puts("ok");
	TEST_PASS();
}
