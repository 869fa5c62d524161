/* Minimal assertions for C unit tests: exit 1 on failure, 77 on skip, 0 on pass. */
#ifndef GAPSCOPE_TESTLIB_H
#define GAPSCOPE_TESTLIB_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define CHECK(cond, fmt, ...)                                                                     \
	do {                                                                                      \
		if (!(cond)) {                                                                    \
			fprintf(stderr, "%s:%d: check failed: %s: " fmt "\n", __FILE__, __LINE__, \
				#cond, ##__VA_ARGS__);                                            \
			exit(1);                                                                  \
		}                                                                                 \
	} while (0)

#define CHECK_EQ_U64(a, b)                                                                    \
	do {                                                                                  \
		unsigned long long _a = (a), _b = (b);                                        \
		if (_a != _b) {                                                               \
			fprintf(stderr, "%s:%d: %s == %llu, expected %s == %llu\n", __FILE__, \
				__LINE__, #a, _a, #b, _b);                                    \
			exit(1);                                                              \
		}                                                                             \
	} while (0)

#define TEST_PASS() return 0

/* Root-only tests skip on a developer machine without root, but never in CI (CI runs as root). */
static inline void test_need_root(const char *why)
{
	if (geteuid() == 0)
		return;
	if (getenv("CI")) {
		fprintf(stderr, "not root in CI, but this test %s\n", why);
		exit(1);
	}
	fprintf(stderr, "SKIP: not root (this test %s)\n", why);
	exit(77);
}

#endif
