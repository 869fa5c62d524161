// SPDX-License-Identifier: GPL-2.0
/*
 * A small shared object for tests/unit/test_symbols.c, built with -g: a call two inlined
 * functions deep with known lines, static data (a mutex in .bss, a counter in .data, a buffer too
 * large for the page the file maps), and functions the test resolves by address. The call lines
 * are passed down as arguments, so the test compares against the source itself, not against
 * numbers copied from it.
 */
#include <pthread.h>

struct symtest_site {
	void *ret;	/* return address of the call into symtest_leaf */
	int leaf_line;	/* the line of that call, in symtest_inner (inlined) */
	int inner_line; /* the line of the call of symtest_inner, in symtest_step */
	int step_line;	/* the line of the call of symtest_step in symtest_outer */
};

struct symtest_site symtest_site;

static pthread_mutex_t symtest_lock = PTHREAD_MUTEX_INITIALIZER;
static int symtest_counter = 42;
static char symtest_big[3 * 65536];

__attribute__((noinline, noclone)) int symtest_leaf(int x, int leaf_line, int inner_line,
						    int step_line)
{
	symtest_site.ret = __builtin_return_address(0);
	symtest_site.leaf_line = leaf_line;
	symtest_site.inner_line = inner_line;
	symtest_site.step_line = step_line;
	__asm__ volatile("" ::: "memory");
	return x + symtest_counter;
}

static inline __attribute__((always_inline)) int symtest_inner(int x, int inner_line, int step_line)
{
	return symtest_leaf(x * 3, __LINE__, inner_line, step_line) + 1;
}

static inline __attribute__((always_inline)) int symtest_step(int x, int step_line)
{
	return symtest_inner(x + 1, __LINE__, step_line) * 2;
}

__attribute__((noinline, noclone)) int symtest_outer(int x)
{
	int r = symtest_step(x, __LINE__);

	return r * 5;
}

/* One function under three names, as C libraries export theirs: named as callers call it. */
int __symtest_api(int x)
{
	return x * 7;
}

extern __typeof(__symtest_api) symtest_api __attribute__((weak, alias("__symtest_api")));
extern __typeof(__symtest_api) __GI_symtest_api
	__attribute__((alias("__symtest_api"), visibility("hidden")));

/* A static function: named by .symtab, gone from a stripped copy. */
static __attribute__((noinline, noclone)) int symtest_hidden(int x)
{
	__asm__ volatile("" ::: "memory");
	return x ^ 0x5a;
}

void *symtest_hidden_addr(void)
{
	return (void *)symtest_hidden;
}

void *symtest_lock_addr(void)
{
	return &symtest_lock;
}

void *symtest_counter_addr(void)
{
	return &symtest_counter;
}

void *symtest_big_addr(void)
{
	return symtest_big;
}
