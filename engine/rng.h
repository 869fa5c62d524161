/* SPDX-License-Identifier: MIT */
/* xoshiro256** (Blackman & Vigna): fast, seedable, reproducible inputs for the engine.  Not for
 * secrets; the seed itself comes from getrandom(2) unless --seed gives one. */
#ifndef ZK_RNG_H
#define ZK_RNG_H

#include <stdint.h>

#include "field.h"

struct rng {
	uint64_t s[4];
};

static inline uint64_t rng__splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* One independent stream per (seed, stream): partition p of a run uses stream p. */
static inline void rng__init(struct rng *g, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ rng__splitmix(&stream);
	for (int i = 0; i < 4; i++)
		g->s[i] = rng__splitmix(&x);
}

static inline uint64_t rng__next(struct rng *g)
{
	uint64_t *s = g->s;
	uint64_t r = s[1] * 5;
	r = ((r << 7) | (r >> 57)) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = (s[3] << 45) | (s[3] >> 19);
	return r;
}

/* A uniform nonzero field element, taken as a Montgomery representation (any value < r is one).
 * Rejection sampling on 255 bits: r > 2^254, so fewer than half the draws are rejected. */
static inline fr_t rng__fr(struct rng *g)
{
	fr_t p = fr_modulus();
	for (;;) {
		fr_t x;
		for (int i = 0; i < FR_LIMBS; i++)
			x.l[i] = rng__next(g);
		x.l[FR_LIMBS - 1] >>= 1;
		if (fr_is_zero(x))
			continue;
		int less = 0;
		for (int i = FR_LIMBS - 1; i >= 0; i--)
			if (x.l[i] != p.l[i]) {
				less = x.l[i] < p.l[i];
				break;
			}
		if (less)
			return x;
	}
}

#endif
