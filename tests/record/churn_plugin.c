// SPDX-License-Identifier: GPL-2.0
/*
 * The small library tests/record/churn.c loads and unloads over and over: one function, probed
 * with record --probe, so every load must carry the probe and every call of it be counted.
 */
#include <stdint.h>

/* noinline and a side effect: a real call, with its own entry, every time. */
__attribute__((noinline)) uint64_t churn_fn(uint64_t x)
{
	static volatile uint64_t acc;

	acc += x * 2654435761u + 1;
	return acc;
}
