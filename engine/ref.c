// SPDX-License-Identifier: MIT
/*
 * The GMP reference behind --verify (see ref.h).  Deliberately written from the definitions, not
 * from the engine's algorithms: the DFT as a sum, polynomials evaluated by Lagrange and Horner,
 * the modulus and the roots of unity derived here from r and the generator 7.
 */
#include <gmp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"

static const char *const R_HEX = "73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001";

#define BATCH 1024 /* elements per batch inversion: one mpz_invert per BATCH */

struct consts {
	mpz_t r, rinv; /* modulus, 2^-256 mod r (Montgomery form -> value) */
};

static void consts_init(struct consts *k)
{
	mpz_init_set_str(k->r, R_HEX, 16);
	mpz_init(k->rinv);
	mpz_setbit(k->rinv, 256);
	mpz_mod(k->rinv, k->rinv, k->r);
	mpz_invert(k->rinv, k->rinv, k->r);
}

static void consts_clear(struct consts *k)
{
	mpz_clears(k->r, k->rinv, NULL);
}

/* Primitive 2^log2m-th root of unity: 7^((r-1)/2^log2m) mod r. */
static void root_of_unity(mpz_t w, const mpz_t r, unsigned log2m)
{
	mpz_t e, g;
	mpz_inits(e, g, NULL);
	mpz_sub_ui(e, r, 1);
	mpz_fdiv_q_2exp(e, e, log2m);
	mpz_set_ui(g, 7);
	mpz_powm(w, g, e, r);
	mpz_clears(e, g, NULL);
}

static void load(mpz_t z, const fr_t *x)
{
	mpz_import(z, FR_LIMBS, -1, sizeof(uint64_t), 0, 0, x->l);
}

static int reduced(const mpz_t z, const mpz_t r)
{
	return mpz_cmp(z, r) < 0;
}

int ref__check_dft(const fr_t *x, const fr_t *y, unsigned log2m, char *msg, size_t len)
{
	struct consts k;
	uint64_t m = 1ULL << log2m;
	mpz_t w, acc, v, *pw = malloc(m * sizeof(mpz_t)), *xs = malloc(m * sizeof(mpz_t));
	int err = 0;

	if (!pw || !xs) {
		snprintf(msg, len, "out of memory");
		free(pw);
		free(xs);
		return -1;
	}
	consts_init(&k);
	mpz_inits(w, acc, v, NULL);
	root_of_unity(w, k.r, log2m);
	for (uint64_t i = 0; i < m; i++) {
		mpz_init(pw[i]);
		mpz_init(xs[i]);
		if (i == 0)
			mpz_set_ui(pw[0], 1);
		else {
			mpz_mul(pw[i], pw[i - 1], w);
			mpz_mod(pw[i], pw[i], k.r);
		}
		load(xs[i], &x[i]);
	}
	/* Montgomery form is linear: sum(x_j R * w^jk) = X_k R, so the limbs compare directly. */
	for (uint64_t kk = 0; kk < m && !err; kk++) {
		mpz_set_ui(acc, 0);
		for (uint64_t j = 0; j < m; j++)
			mpz_addmul(acc, xs[j], pw[(j * kk) & (m - 1)]);
		mpz_mod(acc, acc, k.r);
		load(v, &y[kk]);
		if (!reduced(v, k.r) || mpz_cmp(acc, v) != 0) {
			gmp_snprintf(msg, len,
				     "forward NTT of 2^%u points wrong at %llu: device %#Zx, "
				     "reference %#Zx",
				     log2m, (unsigned long long)kk, v, acc);
			err = -1;
		}
	}
	for (uint64_t i = 0; i < m; i++) {
		mpz_clear(pw[i]);
		mpz_clear(xs[i]);
	}
	free(pw);
	free(xs);
	mpz_clears(w, acc, v, NULL);
	consts_clear(&k);
	return err;
}

int ref__check_equal(const fr_t *x, const fr_t *y, uint64_t n, char *msg, size_t len)
{
	struct consts k;
	mpz_t a, b;
	int err = 0;

	consts_init(&k);
	mpz_inits(a, b, NULL);
	for (uint64_t i = 0; i < n && !err; i++) {
		load(a, &x[i]);
		load(b, &y[i]);
		if (!reduced(b, k.r) || mpz_cmp(a, b) != 0) {
			gmp_snprintf(msg, len,
				     "inverse NTT of forward NTT is not the identity at %llu: "
				     "%#Zx, expected %#Zx",
				     (unsigned long long)i, b, a);
			err = -1;
		}
	}
	mpz_clears(a, b, NULL);
	consts_clear(&k);
	return err;
}

struct chunk {
	const fr_t *a, *b, *c, *h;
	uint64_t lo, hi;
	const mpz_t *r, *w, *tau;
	/* out: sum over the chunk of {a,b,c}_i * w^i / (tau - w^i), unreduced; H's chunk at tau */
	mpz_t sa, sb, sc, sh;
	int64_t unreduced; /* index of an output element >= r, or -1 */
};

static void *chunk_run(void *arg)
{
	struct chunk *ch = arg;
	const mpz_t *r = ch->r;
	mpz_t wi, d[BATCH], pre[BATCH], pw[BATCH], inv, t, u, v;

	mpz_inits(wi, inv, t, u, v, NULL);
	for (int i = 0; i < BATCH; i++)
		mpz_inits(d[i], pre[i], pw[i], NULL);
	mpz_set_ui(t, ch->lo);
	mpz_powm(wi, *ch->w, t, *r);

	for (uint64_t base = ch->lo; base < ch->hi; base += BATCH) {
		uint64_t cnt = ch->hi - base < BATCH ? ch->hi - base : BATCH;
		/* d_k = tau - w^i; pre_k = d_0 ... d_k */
		for (uint64_t k = 0; k < cnt; k++) {
			mpz_set(pw[k], wi);
			mpz_sub(d[k], *ch->tau, wi);
			mpz_mod(d[k], d[k], *r);
			if (k == 0)
				mpz_set(pre[0], d[0]);
			else {
				mpz_mul(pre[k], pre[k - 1], d[k]);
				mpz_mod(pre[k], pre[k], *r);
			}
			mpz_mul(wi, wi, *ch->w);
			mpz_mod(wi, wi, *r);
		}
		mpz_invert(inv, pre[cnt - 1], *r); /* tau is off the domain: d_k != 0 */
		for (uint64_t k = cnt; k-- > 0;) {
			/* inv = 1/(d_0...d_k); 1/d_k = inv * pre_{k-1} */
			if (k > 0) {
				mpz_mul(t, inv, pre[k - 1]);
				mpz_mod(t, t, *r);
				mpz_mul(inv, inv, d[k]);
				mpz_mod(inv, inv, *r);
			} else {
				mpz_set(t, inv);
			}
			mpz_mul(t, t, pw[k]);
			mpz_mod(t, t, *r); /* w^i / (tau - w^i) */
			uint64_t i = base + k;
			load(u, &ch->a[i]);
			mpz_addmul(ch->sa, u, t);
			load(u, &ch->b[i]);
			mpz_addmul(ch->sb, u, t);
			load(u, &ch->c[i]);
			mpz_addmul(ch->sc, u, t);
		}
	}

	/* Horner over h[lo, hi), then times tau^lo */
	mpz_set_ui(ch->sh, 0);
	for (uint64_t i = ch->hi; i-- > ch->lo;) {
		load(u, &ch->h[i]);
		if (!reduced(u, *r) && ch->unreduced < 0)
			ch->unreduced = (int64_t)i;
		mpz_mul(ch->sh, ch->sh, *ch->tau);
		mpz_add(ch->sh, ch->sh, u);
		mpz_mod(ch->sh, ch->sh, *r);
	}
	mpz_set_ui(t, ch->lo);
	mpz_powm(v, *ch->tau, t, *r);
	mpz_mul(ch->sh, ch->sh, v);
	mpz_mod(ch->sh, ch->sh, *r);

	for (int i = 0; i < BATCH; i++)
		mpz_clears(d[i], pre[i], pw[i], NULL);
	mpz_clears(wi, inv, t, u, v, NULL);
	return NULL;
}

int ref__check_hpoly(const fr_t *a, const fr_t *b, const fr_t *c, const fr_t *h, unsigned log2n,
		     const uint64_t tau_limbs[4], int threads, char *msg, size_t len)
{
	struct consts k;
	uint64_t n = 1ULL << log2n;
	mpz_t w, tau, tn, kf, A, B, C, H, lhs, rhs;
	int err = 0;

	consts_init(&k);
	mpz_inits(w, tau, tn, kf, A, B, C, H, lhs, rhs, NULL);
	root_of_unity(w, k.r, log2n);

	/* tau must be off the domain (tau^n != 1), where the barycentric formula divides by 0 */
	mpz_import(tau, 4, -1, sizeof(uint64_t), 0, 0, tau_limbs);
	mpz_mod(tau, tau, k.r);
	for (;;) {
		mpz_powm_ui(tn, tau, n, k.r);
		if (mpz_cmp_ui(tn, 1) != 0)
			break;
		mpz_add_ui(tau, tau, 1);
	}

	int nch = threads > 0 ? threads : 1;
	if ((uint64_t)nch > n / BATCH)
		nch = n / BATCH ? (int)(n / BATCH) : 1;
	struct chunk *ch = calloc((size_t)nch, sizeof(*ch));
	pthread_t *tid = calloc((size_t)nch, sizeof(*tid));
	if (!ch || !tid) {
		snprintf(msg, len, "out of memory");
		err = -1;
		goto out;
	}
	for (int i = 0; i < nch; i++) {
		ch[i] = (struct chunk){
			.a = a,
			.b = b,
			.c = c,
			.h = h,
			.lo = n * (uint64_t)i / nch,
			.hi = n * (uint64_t)(i + 1) / nch,
			.r = (const mpz_t *)&k.r,
			.w = (const mpz_t *)&w,
			.tau = (const mpz_t *)&tau,
			.unreduced = -1,
		};
		mpz_inits(ch[i].sa, ch[i].sb, ch[i].sc, ch[i].sh, NULL);
		if (i > 0 && pthread_create(&tid[i], NULL, chunk_run, &ch[i]) != 0) {
			/* run it here if no thread can be had: slower, same result */
			chunk_run(&ch[i]);
			tid[i] = 0;
		}
	}
	chunk_run(&ch[0]);
	for (int i = 1; i < nch; i++)
		if (tid[i])
			pthread_join(tid[i], NULL);

	for (int i = 0; i < nch; i++) {
		mpz_add(A, A, ch[i].sa);
		mpz_add(B, B, ch[i].sb);
		mpz_add(C, C, ch[i].sc);
		mpz_add(H, H, ch[i].sh);
		if (ch[i].unreduced >= 0 && !err) {
			snprintf(msg, len, "H coefficient %lld is not reduced mod r",
				 (long long)ch[i].unreduced);
			err = -1;
		}
		mpz_clears(ch[i].sa, ch[i].sb, ch[i].sc, ch[i].sh, NULL);
	}
	if (err)
		goto out;

	/* L(tau) = (tau^n - 1)/n * sum_i y_i w^i/(tau - w^i); inputs carry a factor 2^256 */
	mpz_sub_ui(tn, tn, 1); /* tau^n - 1 */
	mpz_set_ui(kf, n);
	mpz_invert(kf, kf, k.r);
	mpz_mul(kf, kf, tn);
	mpz_mul(kf, kf, k.rinv);
	mpz_mod(kf, kf, k.r);
	mpz_t *vals[3] = { &A, &B, &C };
	for (int i = 0; i < 3; i++) {
		mpz_mod(*vals[i], *vals[i], k.r);
		mpz_mul(*vals[i], *vals[i], kf);
		mpz_mod(*vals[i], *vals[i], k.r);
	}
	mpz_mul(H, H, k.rinv);
	mpz_mod(H, H, k.r);

	mpz_mul(lhs, A, B);
	mpz_sub(lhs, lhs, C);
	mpz_mod(lhs, lhs, k.r);
	mpz_mul(rhs, H, tn);
	mpz_mod(rhs, rhs, k.r);
	if (mpz_cmp(lhs, rhs) != 0) {
		gmp_snprintf(msg, len,
			     "A(t)*B(t) - C(t) != H(t)*(t^n - 1) at t = %#Zx (n = 2^%u): "
			     "%#Zx != %#Zx",
			     tau, log2n, lhs, rhs);
		err = -1;
	}
out:
	free(ch);
	free(tid);
	mpz_clears(w, tau, tn, kf, A, B, C, H, lhs, rhs, NULL);
	consts_clear(&k);
	return err;
}
