/* SPDX-License-Identifier: MIT */
/* Witness synthesis stand-in: a, b, c over the domain with a∘b = c, so A*B - C vanishes on the
 * domain and H = (A*B - C)/Z is a polynomial. */
#ifndef ZK_SYNTH_H
#define ZK_SYNTH_H

#include <stdint.h>

#include "field.h"
#include "rng.h"

/* a, b: uniform nonzero elements from g; c[i] = a[i]*b[i].  n elements each. */
static inline void synth__abc(struct rng *g, fr_t *a, fr_t *b, fr_t *c, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		a[i] = rng__fr(g);
		b[i] = rng__fr(g);
		c[i] = fr_mul(a[i], b[i]);
	}
}

#endif
