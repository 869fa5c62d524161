/* SPDX-License-Identifier: MIT */
/*
 * The engine's GPU kernels as per-element bodies, shared by engine/kernels.cu (nvcc, one thread
 * per element) and simcuda's CPU kernels (a loop over the same elements).
 *
 * Every kernel takes exactly one argument, a by-value struct defined here, so a launch passes
 * kernelParams = { &args } and the simulator can read kernelParams[0] as that struct without
 * parsing the cubin's parameter layout.  The structs hold device pointers as plain pointers:
 * sizeof(void *) == sizeof(CUdeviceptr) on every 64-bit target this runs on.
 *
 * Every body is handed a global thread index i and ignores i beyond its range, so the host may
 * round the grid up to whole blocks.
 */
#ifndef ZK_KERNELS_H
#define ZK_KERNELS_H

#include "field.h"

/* X(name) for every kernel: the symbol in the fatbin and in simcuda's table. */
#define ZK_KERNELS(X)   \
	X(fr_powers)    \
	X(fr_bitrev)    \
	X(fr_ntt_stage) \
	X(fr_scale)     \
	X(fr_coset)     \
	X(fr_pointwise)

#define ZK_BLOCK 256 /* threads per block for every launch */

/* out[i] = base^i, i < n: twiddle and coset tables, built once per device. */
struct fr_powers_args {
	fr_t *out;
	fr_t base;
	uint64_t n;
};

/* In-place bit-reversal permutation of data[0, 2^log2n).  Thread i swaps i with rev(i) when
 * i < rev(i), so every pair is touched by exactly one thread. */
struct fr_bitrev_args {
	fr_t *data;
	uint32_t log2n;
};

/* One radix-2 decimation-in-time stage on bit-reversed input: butterflies of half-size
 * 2^stage, thread i < 2^(log2n-1) handles one butterfly.  The twiddle for position j of the
 * half is tw[j << tw_shift], so a table of powers of a 2^m-th root serves every transform of
 * size <= 2^m (tw_shift = m - stage - 1).  Forward or inverse is the choice of table. */
struct fr_ntt_stage_args {
	fr_t *data;
	const fr_t *tw;
	uint32_t log2n;
	uint32_t stage;
	uint32_t tw_shift;
};

/* data[i] *= c, i < n (c in Montgomery form): 1/n after an inverse transform. */
struct fr_scale_args {
	fr_t *data;
	fr_t c;
	uint64_t n;
};

/* data[i] *= pw[i], i < n: with pw[i] = g^i the coset shift of coefficients (evaluating on
 * g*H afterwards), with pw[i] = g^-i its undoing. */
struct fr_coset_args {
	fr_t *data;
	const fr_t *pw;
	uint64_t n;
};

/* a[i] = (a[i]*b[i] - c[i]) * zinv, i < n: the quotient by Z(X) = X^n - 1, which is the
 * constant g^n - 1 everywhere on the coset g*H. */
struct fr_pointwise_args {
	fr_t *a;
	const fr_t *b;
	const fr_t *c;
	fr_t zinv;
	uint64_t n;
};

FR_FN void fr_powers_body(const struct fr_powers_args *a, uint64_t i)
{
	if (i < a->n)
		a->out[i] = fr_pow(a->base, i);
}

FR_FN uint64_t zk_bitrev(uint64_t i, uint32_t bits)
{
	if (bits == 0)
		return 0;
#ifdef __CUDA_ARCH__
	return __brevll(i) >> (64 - bits);
#else
	uint64_t r = 0;
	for (uint32_t b = 0; b < bits; b++, i >>= 1)
		r = (r << 1) | (i & 1);
	return r;
#endif
}

FR_FN void fr_bitrev_body(const struct fr_bitrev_args *a, uint64_t i)
{
	if (i >= (1ULL << a->log2n))
		return;
	uint64_t j = zk_bitrev(i, a->log2n);
	if (i < j) {
		fr_t t = a->data[i];
		a->data[i] = a->data[j];
		a->data[j] = t;
	}
}

FR_FN void fr_ntt_stage_body(const struct fr_ntt_stage_args *a, uint64_t i)
{
	if (a->log2n == 0 || i >= (1ULL << (a->log2n - 1)))
		return;
	uint64_t half = 1ULL << a->stage;
	uint64_t j = i & (half - 1);
	uint64_t k = ((i >> a->stage) << (a->stage + 1)) + j;
	fr_t u = a->data[k];
	fr_t v = fr_mul(a->data[k + half], a->tw[j << a->tw_shift]);
	a->data[k] = fr_add(u, v);
	a->data[k + half] = fr_sub(u, v);
}

FR_FN void fr_scale_body(const struct fr_scale_args *a, uint64_t i)
{
	if (i < a->n)
		a->data[i] = fr_mul(a->data[i], a->c);
}

FR_FN void fr_coset_body(const struct fr_coset_args *a, uint64_t i)
{
	if (i < a->n)
		a->data[i] = fr_mul(a->data[i], a->pw[i]);
}

FR_FN void fr_pointwise_body(const struct fr_pointwise_args *a, uint64_t i)
{
	if (i < a->n)
		a->a[i] = fr_mul(fr_sub(fr_mul(a->a[i], a->b[i]), a->c[i]), a->zinv);
}

#endif
