/* SPDX-License-Identifier: MIT */
/*
 * BLS12-381 scalar field Fr, Montgomery form over 4x64-bit little-endian limbs.
 *
 * One header for host C and CUDA device code, so the GPU kernels, the simulator's CPU kernels and
 * the host-side setup share every constant and every line of arithmetic.  The independent check of
 * all of this is engine/ref.c (GMP), never this file.
 *
 *   r = 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001
 *   r - 1 = 2^32 * odd, multiplicative generator 7.
 *
 * Values are always kept fully reduced (< r), so equal field elements have equal limbs.
 */
#ifndef ZK_FIELD_H
#define ZK_FIELD_H

#include <stdint.h>

#ifdef __CUDACC__
#define FR_FN	 __host__ __device__ static inline
#define FR_CONST __host__ __device__ static inline
#else
#define FR_FN	 static inline
#define FR_CONST static inline
#endif

#define FR_LIMBS       4
#define FR_TWO_ADICITY 32
#define FR_GENERATOR   7

typedef struct {
	uint64_t l[FR_LIMBS];
} fr_t;

/* Constants as functions rather than globals: a __device__ global would need a separate copy per
 * side, and a function returning a literal folds to immediates on both. */
FR_CONST fr_t fr_modulus(void)
{
	fr_t p = { { 0xffffffff00000001ULL, 0x53bda402fffe5bfeULL, 0x3339d80809a1d805ULL,
		     0x73eda753299d7d48ULL } };
	return p;
}

/* -r^-1 mod 2^64, for Montgomery reduction. */
#define FR_INV 0xfffffffeffffffffULL

/* R mod r = 2^256 mod r: the Montgomery form of 1. */
FR_CONST fr_t fr_one(void)
{
	fr_t o = { { 0x00000001fffffffeULL, 0x5884b7fa00034802ULL, 0x998c4fefecbc4ff5ULL,
		     0x1824b159acc5056fULL } };
	return o;
}

/* R^2 mod r: multiplying by it converts into Montgomery form. */
FR_CONST fr_t fr_r2(void)
{
	fr_t o = { { 0xc999e990f3f29c6dULL, 0x2b6cedcb87925c23ULL, 0x05d314967254398fULL,
		     0x0748d9d99f59ff11ULL } };
	return o;
}

/* 7^((r-1)/2^32) in Montgomery form: a primitive 2^32-th root of unity (tests/unit/test_field.c
 * checks its order against GMP). */
FR_CONST fr_t fr_root_2adic(void)
{
	fr_t o = { { 0xb9b58d8c5f0e466aULL, 0x5b1b4c801819d7ecULL, 0x0af53ae352a31e64ULL,
		     0x5bf3adda19e9b27bULL } };
	return o;
}

FR_FN fr_t fr_zero(void)
{
	fr_t z = { { 0, 0, 0, 0 } };
	return z;
}

/* lo64(a*b + c + *carry), *carry = hi64(...).  Cannot overflow: (2^64-1)^2 + 2(2^64-1) < 2^128. */
FR_FN uint64_t fr_mac(uint64_t a, uint64_t b, uint64_t c, uint64_t *carry)
{
#ifdef __CUDA_ARCH__
	uint64_t lo = a * b, hi = __umul64hi(a, b);
	lo += c;
	hi += lo < c;
	lo += *carry;
	hi += lo < *carry;
	*carry = hi;
	return lo;
#else
	unsigned __int128 t = (unsigned __int128)a * b + c + *carry;
	*carry = (uint64_t)(t >> 64);
	return (uint64_t)t;
#endif
}

/* a + b + *carry, carry in/out in {0, 1}. */
FR_FN uint64_t fr_adc(uint64_t a, uint64_t b, uint64_t *carry)
{
	uint64_t s = a + b;
	uint64_t c1 = s < a;
	uint64_t s2 = s + *carry;
	*carry = c1 | (s2 < s);
	return s2;
}

/* a - b - *borrow, borrow in/out in {0, 1}. */
FR_FN uint64_t fr_sbb(uint64_t a, uint64_t b, uint64_t *borrow)
{
	uint64_t d = a - b;
	uint64_t b1 = a < b;
	uint64_t d2 = d - *borrow;
	*borrow = b1 | (d < *borrow);
	return d2;
}

FR_FN int fr_eq(fr_t a, fr_t b)
{
	return ((a.l[0] ^ b.l[0]) | (a.l[1] ^ b.l[1]) | (a.l[2] ^ b.l[2]) | (a.l[3] ^ b.l[3])) == 0;
}

FR_FN int fr_is_zero(fr_t a)
{
	return (a.l[0] | a.l[1] | a.l[2] | a.l[3]) == 0;
}

/* a - r if a >= r, else a.  Inputs here are < 2r, so one subtraction reduces fully. */
FR_FN fr_t fr_reduce_once(fr_t a)
{
	fr_t p = fr_modulus(), d;
	uint64_t borrow = 0;
	for (int i = 0; i < FR_LIMBS; i++)
		d.l[i] = fr_sbb(a.l[i], p.l[i], &borrow);
	return borrow ? a : d;
}

FR_FN fr_t fr_add(fr_t a, fr_t b)
{
	/* r < 2^255, so a + b < 2^256 never carries out of the top limb. */
	fr_t s;
	uint64_t carry = 0;
	for (int i = 0; i < FR_LIMBS; i++)
		s.l[i] = fr_adc(a.l[i], b.l[i], &carry);
	return fr_reduce_once(s);
}

FR_FN fr_t fr_sub(fr_t a, fr_t b)
{
	fr_t d, p = fr_modulus();
	uint64_t borrow = 0;
	for (int i = 0; i < FR_LIMBS; i++)
		d.l[i] = fr_sbb(a.l[i], b.l[i], &borrow);
	if (borrow) {
		uint64_t carry = 0;
		for (int i = 0; i < FR_LIMBS; i++)
			d.l[i] = fr_adc(d.l[i], p.l[i], &carry);
	}
	return d;
}

FR_FN fr_t fr_neg(fr_t a)
{
	return fr_sub(fr_zero(), a);
}

/* Montgomery product a*b*R^-1 mod r (CIOS, Koc et al. 1996). */
FR_FN fr_t fr_mul(fr_t a, fr_t b)
{
	fr_t p = fr_modulus();
	uint64_t t[FR_LIMBS + 2] = { 0, 0, 0, 0, 0, 0 };

	for (int i = 0; i < FR_LIMBS; i++) {
		uint64_t c = 0;
		for (int j = 0; j < FR_LIMBS; j++)
			t[j] = fr_mac(a.l[j], b.l[i], t[j], &c);
		uint64_t cc = 0;
		t[FR_LIMBS] = fr_adc(t[FR_LIMBS], c, &cc);
		t[FR_LIMBS + 1] = cc;

		uint64_t m = t[0] * FR_INV;
		c = 0;
		(void)fr_mac(m, p.l[0], t[0], &c);
		for (int j = 1; j < FR_LIMBS; j++)
			t[j - 1] = fr_mac(m, p.l[j], t[j], &c);
		cc = 0;
		t[FR_LIMBS - 1] = fr_adc(t[FR_LIMBS], c, &cc);
		t[FR_LIMBS] = t[FR_LIMBS + 1] + cc;
	}
	/* t < 2r < 2^256, so t[FR_LIMBS] is 0 here. */
	fr_t res = { { t[0], t[1], t[2], t[3] } };
	return fr_reduce_once(res);
}

FR_FN fr_t fr_sqr(fr_t a)
{
	return fr_mul(a, a);
}

/* a^e, e given as FR_LIMBS little-endian limbs (a plain integer, not Montgomery). */
FR_FN fr_t fr_pow_limbs(fr_t a, const uint64_t e[FR_LIMBS])
{
	fr_t acc = fr_one();
	for (int i = FR_LIMBS - 1; i >= 0; i--)
		for (int b = 63; b >= 0; b--) {
			acc = fr_sqr(acc);
			if ((e[i] >> b) & 1)
				acc = fr_mul(acc, a);
		}
	return acc;
}

FR_FN fr_t fr_pow(fr_t a, uint64_t e)
{
	fr_t acc = fr_one();
	while (e) {
		if (e & 1)
			acc = fr_mul(acc, a);
		a = fr_sqr(a);
		e >>= 1;
	}
	return acc;
}

/* a^(r-2) = a^-1 (Fermat); 0 maps to 0. */
FR_FN fr_t fr_inv(fr_t a)
{
	fr_t e = fr_modulus();
	e.l[0] -= 2; /* the low limb of r is ...01: no borrow */
	return fr_pow_limbs(a, e.l);
}

/* Canonical integer (< r) in limbs -> Montgomery form. */
FR_FN fr_t fr_to_mont(fr_t a)
{
	return fr_mul(a, fr_r2());
}

/* Montgomery form -> canonical integer in limbs. */
FR_FN fr_t fr_from_mont(fr_t a)
{
	fr_t one = { { 1, 0, 0, 0 } };
	return fr_mul(a, one);
}

FR_FN fr_t fr_from_u64(uint64_t v)
{
	fr_t a = { { v, 0, 0, 0 } };
	return fr_to_mont(a);
}

/* A primitive 2^k-th root of unity, 0 <= k <= 32: the 2^32-th root squared 32-k times. */
FR_FN fr_t fr_root_of_unity(unsigned k)
{
	fr_t w = fr_root_2adic();
	for (unsigned i = k; i < FR_TWO_ADICITY; i++)
		w = fr_sqr(w);
	return w;
}

#endif
