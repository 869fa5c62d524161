/* SPDX-License-Identifier: MIT */
/*
 * An independent reference for --verify, on GMP integers: it shares no arithmetic with field.h
 * or the kernels, only the data layout (4 little-endian 64-bit limbs in Montgomery form, value
 * x*2^256 mod r).  Every check returns 0 when the device's result is right, else -1 with a
 * one-line reason in msg.  Device outputs must also be fully reduced (< r).
 */
#ifndef ZK_REF_H
#define ZK_REF_H

#include <stddef.h>
#include <stdint.h>

#include "field.h"

/* y == the forward DFT of x over the 2^log2m-th roots of unity (w = 7^((r-1)/2^log2m)),
 * by the naive O(m^2) sum.  For small m only (log2m <= 12). */
int ref__check_dft(const fr_t *x, const fr_t *y, unsigned log2m, char *msg, size_t len);

/* y == x element by element, as field elements (inverse after forward = identity). */
int ref__check_equal(const fr_t *x, const fr_t *y, uint64_t n, char *msg, size_t len);

/*
 * a, b, c: evaluations of A, B, C on the 2^log2n-th roots of unity; h: coefficients of H from
 * the device.  Checks A(t)*B(t) - C(t) == H(t)*(t^n - 1) at t = tau mod r (moved off the domain
 * if it lands on it), with A, B, C by barycentric Lagrange interpolation (batch inversion) and
 * H by Horner.  Splits the sums over threads threads.
 */
int ref__check_hpoly(const fr_t *a, const fr_t *b, const fr_t *c, const fr_t *h, unsigned log2n,
		     const uint64_t tau[4], int threads, char *msg, size_t len);

#endif
