/* SPDX-License-Identifier: MIT */
/* --verify: device results against the GMP reference (ref.h) on fresh random inputs. */
#ifndef ZK_VERIFY_H
#define ZK_VERIFY_H

#include <stddef.h>

#include "gpu.h"
#include "rng.h"

/* Through w's kernels: forward NTT of 2^min(log2n, 10) random points equals the naive DFT, and
 * the inverse NTT brings them back.  Returns 0, or -1 with the reason in msg. */
int verify__ntt(struct gpu_work *w, unsigned log2n, struct rng *g, char *msg, size_t len);

/* A*B - C == H*Z at a random point, for one partition's a, b, c and the device's h. */
int verify__hpoly(const fr_t *a, const fr_t *b, const fr_t *c, const fr_t *h, unsigned log2n,
		  struct rng *g, char *msg, size_t len);

#endif
