// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ref.h"
#include "verify.h"

#define VERIFY_DFT_LOG2N 10 /* the naive DFT is O(n^2): 2^20 products */

int verify__ntt(struct gpu_work *w, unsigned log2n, struct rng *g, char *msg, size_t len)
{
	unsigned log2m = log2n < VERIFY_DFT_LOG2N ? log2n : VERIFY_DFT_LOG2N;
	uint64_t m = 1ULL << log2m;
	fr_t *x = malloc(m * sizeof(fr_t)), *y = malloc(m * sizeof(fr_t));
	int err = -1;

	if (!x || !y) {
		snprintf(msg, len, "out of memory");
		goto out;
	}
	for (uint64_t i = 0; i < m; i++)
		x[i] = rng__fr(g);
	memcpy(y, x, m * sizeof(fr_t));
	gpu__ntt(w, y, log2m, false);
	if (ref__check_dft(x, y, log2m, msg, len))
		goto out;
	gpu__ntt(w, y, log2m, true);
	if (ref__check_equal(x, y, m, msg, len))
		goto out;
	err = 0;
out:
	free(x);
	free(y);
	return err;
}

int verify__hpoly(const fr_t *a, const fr_t *b, const fr_t *c, const fr_t *h, unsigned log2n,
		  struct rng *g, char *msg, size_t len)
{
	uint64_t tau[4];
	for (int i = 0; i < 4; i++)
		tau[i] = rng__next(g);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	return ref__check_hpoly(a, b, c, h, log2n, tau, cpus > 0 ? (int)cpus : 1, msg, len);
}
