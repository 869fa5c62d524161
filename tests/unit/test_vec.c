// SPDX-License-Identifier: GPL-2.0
/*
 * The growable arrays (lib/vec.c): array__cap() doubles from the first size until the request
 * fits and answers 0 where the bytes would overflow; array__grow() leaves the array as it was
 * when it fails; vec__push() hands out zeroed elements that keep their values as it grows.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "testlib.h"
#include "vec.h"

int main(void)
{
	struct vec v = {};
	int *a = NULL, *keep;
	size_t cap = 0;

	CHECK_EQ_U64(array__cap(0, 4, 1, 64), 64);
	CHECK_EQ_U64(array__cap(0, 4, 65, 64), 128);
	CHECK_EQ_U64(array__cap(64, 4, 64, 16), 64); /* holds it already */
	CHECK_EQ_U64(array__cap(64, 4, 65, 16), 128);
	CHECK_EQ_U64(array__cap(64, 4, 1000, 16), 1024);
	CHECK_EQ_U64(array__cap(0, 1, 1, 0), 1);
	CHECK_EQ_U64(array__cap(SIZE_MAX / 8, 8, SIZE_MAX / 8 + 1, 1), 0);
	CHECK_EQ_U64(array__cap((size_t)1 << 62, 1, ((size_t)1 << 62) + 1, 1), (size_t)1 << 63);
	CHECK_EQ_U64(array__cap((size_t)1 << 63, 1, ((size_t)1 << 63) + 1, 1), 0);

	CHECK_EQ_U64(array__grow((void **)&a, &cap, sizeof(*a), 3, 4), 0);
	CHECK_EQ_U64(cap, 4);
	for (int i = 0; i < 4; i++)
		a[i] = i * 7;
	CHECK_EQ_U64(array__grow((void **)&a, &cap, sizeof(*a), 4, 4), 0);
	CHECK_EQ_U64(cap, 4);
	CHECK_EQ_U64(array__grow((void **)&a, &cap, sizeof(*a), 9, 4), 0);
	CHECK_EQ_U64(cap, 16);
	CHECK_EQ_U64(a[3], 21);
	keep = a;
	CHECK_EQ_U64(array__grow((void **)&a, &cap, sizeof(*a), SIZE_MAX / 2, 4), -ENOMEM);
	CHECK(a == keep && cap == 16, "a failed grow changed the array (cap %zu)", cap);
	free(a);

	for (int i = 0; i < 100; i++) {
		int *e = vec__push(&v, sizeof(int));

		CHECK(e && !*e, "element %d not zeroed", i);
		*e = i;
	}
	CHECK_EQ_U64(v.n, 100);
	CHECK_EQ_U64(v.cap, 128); /* 16, doubled three times */
	CHECK_EQ_U64(*VEC_AT(&v, int, 99), 99);
	CHECK_EQ_U64(*VEC_AT(&v, int, 0), 0);
	vec__free(&v);
	CHECK(!v.data && !v.n && !v.cap, "vec__free left %zu of %zu", v.n, v.cap);
	puts("ok");
	TEST_PASS();
}
