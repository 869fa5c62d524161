// SPDX-License-Identifier: MIT
/* engine/field.h against GMP on fresh random values: Montgomery conversion, add, sub, mul, sqr,
 * pow, inverse, and the order of the roots of unity. */
#include <gmp.h>
#include <sys/random.h>

#include "field.h"
#include "rng.h"
#include "testlib.h"

#define ROUNDS 20000

static mpz_t r, R, Rinv;

static void to_z(mpz_t z, fr_t a)
{
	mpz_import(z, FR_LIMBS, -1, sizeof(uint64_t), 0, 0, a.l);
}

/* The value a Montgomery representation stands for: a * R^-1 mod r. */
static void val(mpz_t z, fr_t a)
{
	to_z(z, a);
	mpz_mul(z, z, Rinv);
	mpz_mod(z, z, r);
}

static void check_reduced(fr_t a, const char *what)
{
	mpz_t z;
	mpz_init(z);
	to_z(z, a);
	CHECK(mpz_cmp(z, r) < 0, "%s result not reduced", what);
	mpz_clear(z);
}

int main(void)
{
	uint64_t seed;
	CHECK(getrandom(&seed, sizeof(seed), 0) == sizeof(seed), "getrandom");
	printf("seed %#llx\n", (unsigned long long)seed);
	struct rng g;
	rng__init(&g, seed, 0);

	mpz_inits(r, R, Rinv, NULL);
	mpz_set_str(r, "73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001", 16);
	mpz_setbit(R, 256);
	mpz_invert(Rinv, R, r);

	/* constants */
	mpz_t x, y, z, e;
	mpz_inits(x, y, z, e, NULL);
	to_z(x, fr_modulus());
	CHECK(mpz_cmp(x, r) == 0, "modulus");
	val(x, fr_one());
	CHECK(mpz_cmp_ui(x, 1) == 0, "fr_one is not 1");
	val(x, fr_from_u64(FR_GENERATOR));
	CHECK(mpz_cmp_ui(x, 7) == 0, "generator");
	to_z(x, fr_r2());
	mpz_mul(y, R, R);
	mpz_mod(y, y, r);
	CHECK(mpz_cmp(x, y) == 0, "R^2 mod r");
	mpz_set_ui(x, FR_INV);
	mpz_mul(x, x, r);
	mpz_add_ui(x, x, 1);
	CHECK(mpz_divisible_2exp_p(x, 64), "FR_INV is not -r^-1 mod 2^64");

	/* the 2-adic root: 7^((r-1)/2^32), order exactly 2^32 */
	mpz_sub_ui(e, r, 1);
	CHECK(mpz_scan1(e, 0) == FR_TWO_ADICITY, "two-adicity of r - 1");
	mpz_fdiv_q_2exp(e, e, 32);
	mpz_set_ui(y, 7);
	mpz_powm(y, y, e, r);
	val(x, fr_root_2adic());
	CHECK(mpz_cmp(x, y) == 0, "fr_root_2adic is not 7^((r-1)/2^32)");
	for (unsigned k = 0; k <= 32; k++) {
		fr_t w = fr_root_of_unity(k);
		for (unsigned i = 0; i < k; i++) {
			CHECK(!fr_eq(w, fr_one()), "root of order 2^%u has order 2^%u", k, i);
			w = fr_sqr(w);
		}
		CHECK(fr_eq(w, fr_one()), "root of unity 2^%u: w^(2^%u) != 1", k, k);
	}

	for (int i = 0; i < ROUNDS; i++) {
		fr_t a = rng__fr(&g), b = rng__fr(&g);
		mpz_t va, vb, want, got;
		mpz_inits(va, vb, want, got, NULL);
		val(va, a);
		val(vb, b);

		val(got, fr_add(a, b));
		mpz_add(want, va, vb);
		mpz_mod(want, want, r);
		CHECK(mpz_cmp(got, want) == 0, "add, round %d", i);
		check_reduced(fr_add(a, b), "add");

		val(got, fr_sub(a, b));
		mpz_sub(want, va, vb);
		mpz_mod(want, want, r);
		CHECK(mpz_cmp(got, want) == 0, "sub, round %d", i);
		check_reduced(fr_sub(a, b), "sub");

		val(got, fr_mul(a, b));
		mpz_mul(want, va, vb);
		mpz_mod(want, want, r);
		CHECK(mpz_cmp(got, want) == 0, "mul, round %d", i);
		check_reduced(fr_mul(a, b), "mul");

		val(got, fr_sqr(a));
		mpz_mul(want, va, va);
		mpz_mod(want, want, r);
		CHECK(mpz_cmp(got, want) == 0, "sqr, round %d", i);

		val(got, fr_neg(a));
		mpz_neg(want, va);
		mpz_mod(want, want, r);
		CHECK(mpz_cmp(got, want) == 0, "neg, round %d", i);

		/* to/from Montgomery: from_mont(a) is the value of a, to_mont inverts it */
		fr_t plain = fr_from_mont(a);
		to_z(got, plain);
		CHECK(mpz_cmp(got, va) == 0, "from_mont, round %d", i);
		CHECK(fr_eq(fr_to_mont(plain), a), "to_mont(from_mont(a)) != a, round %d", i);

		if (i % 64 == 0) {
			val(got, fr_inv(a));
			mpz_invert(want, va, r);
			CHECK(mpz_cmp(got, want) == 0, "inverse, round %d", i);
			CHECK(fr_eq(fr_mul(a, fr_inv(a)), fr_one()), "a * a^-1 != 1, round %d", i);

			uint64_t k = rng__next(&g);
			val(got, fr_pow(a, k));
			mpz_set_ui(e, k);
			mpz_powm(want, va, e, r);
			CHECK(mpz_cmp(got, want) == 0, "pow, round %d", i);
		}
		mpz_clears(va, vb, want, got, NULL);
	}

	/* edge values: 0, 1, r - 1 (as Montgomery representations) */
	fr_t edge[3] = { fr_zero(), { { 1, 0, 0, 0 } }, fr_modulus() };
	edge[2].l[0] -= 1;
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++) {
			mpz_t va, vb, want, got;
			mpz_inits(va, vb, want, got, NULL);
			val(va, edge[i]);
			val(vb, edge[j]);
			val(got, fr_mul(edge[i], edge[j]));
			mpz_mul(want, va, vb);
			mpz_mod(want, want, r);
			CHECK(mpz_cmp(got, want) == 0, "mul of edge values %d, %d", i, j);
			val(got, fr_add(edge[i], edge[j]));
			mpz_add(want, va, vb);
			mpz_mod(want, want, r);
			CHECK(mpz_cmp(got, want) == 0, "add of edge values %d, %d", i, j);
			val(got, fr_sub(edge[i], edge[j]));
			mpz_sub(want, va, vb);
			mpz_mod(want, want, r);
			CHECK(mpz_cmp(got, want) == 0, "sub of edge values %d, %d", i, j);
			mpz_clears(va, vb, want, got, NULL);
		}
	CHECK(fr_is_zero(fr_inv(fr_zero())), "inverse of 0 is not 0");

	mpz_clears(x, y, z, e, r, R, Rinv, NULL);
	printf("%d random rounds of add/sub/mul/sqr/neg/mont, %d of inv/pow: ok\n", ROUNDS,
	       ROUNDS / 64);
	TEST_PASS();
}
