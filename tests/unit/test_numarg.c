// SPDX-License-Identifier: GPL-2.0
/*
 * The command line's one number parser (lib/numarg.c): plain decimals in range are taken;
 * what would wrap at 32 or 64 bits, NaN, infinities, hex, spaces, signs and trailing text are
 * refused, each with the right error.
 */
#include <errno.h>
#include <math.h>

#include "numarg.h"
#include "testlib.h"

static long long int_of(const char *s, long long min, long long max, int want_err)
{
	long long v = -12345;
	int err = numarg__int(s, min, max, &v);

	CHECK(err == want_err, "numarg__int(\"%s\") gave %d, expected %d", s, err, want_err);
	return v;
}

static double dbl_of(const char *s, double min, double max, int want_err)
{
	double v = -12345;
	int err = numarg__double(s, min, max, &v);

	CHECK(err == want_err, "numarg__double(\"%s\") gave %d, expected %d", s, err, want_err);
	return v;
}

int main(void)
{
	pid_t pid = 0;

	/* Whole numbers. */
	CHECK_EQ_U64(int_of("0", 0, 10, 0), 0);
	CHECK_EQ_U64(int_of("10", 0, 10, 0), 10);
	CHECK_EQ_U64(int_of("007", 0, 10, 0), 7);
	CHECK(int_of("-3", -5, 5, 0) == -3, "negative in range");
	int_of("11", 0, 10, -ERANGE);
	int_of("-1", 0, 10, -EINVAL);		  /* no sign where the range has none */
	int_of("4294967297", 0, 100000, -ERANGE); /* would be 1 as a 32-bit value */
	int_of("18446744073709551617", 0, 1LL << 62, -ERANGE); /* beyond 64 bits */
	int_of("", 0, 10, -EINVAL);
	int_of(" 5", 0, 10, -EINVAL);
	int_of("5 ", 0, 10, -EINVAL);
	int_of("+5", 0, 10, -EINVAL);
	int_of("0x10", 0, 100, -EINVAL);
	int_of("5k", 0, 10, -EINVAL);
	int_of("1.0", 0, 10, -EINVAL);
	int_of("-", -5, 5, -EINVAL);

	/* Pids: 1 to the kernel's limit. */
	CHECK(!numarg__pid("1", &pid) && pid == 1, "pid 1");
	CHECK(!numarg__pid("4194304", &pid) && pid == 4194304, "the largest pid");
	CHECK(numarg__pid("4194305", &pid) == -ERANGE, "above PID_MAX_LIMIT");
	CHECK(numarg__pid("4294967297", &pid) == -ERANGE, "a pid that wraps to 1");
	CHECK(numarg__pid("0", &pid) == -ERANGE, "pid 0");
	CHECK(numarg__pid("-1", &pid) == -EINVAL, "pid -1");

	/* Numbers with decimals. */
	CHECK(dbl_of("1.5", 0, 10, 0) == 1.5, "1.5");
	CHECK(dbl_of("2e-3", 0, 10, 0) == 2e-3, "an exponent");
	CHECK(dbl_of("1E+1", 0, 10, 0) == 10, "an exponent with a sign");
	CHECK(dbl_of(".5", 0, 10, 0) == 0.5, ".5");
	CHECK(dbl_of("-2.5", -10, 10, 0) == -2.5, "negative in range");
	dbl_of("-2.5", 0, 10, -ERANGE);
	dbl_of("10.001", 0, 10, -ERANGE);
	dbl_of("nan", 0, 10, -EINVAL);
	dbl_of("NaN", 0, 10, -EINVAL);
	dbl_of("-nan", -10, 10, -EINVAL);
	dbl_of("inf", 0, 1e300, -EINVAL);
	dbl_of("infinity", 0, 1e300, -EINVAL);
	dbl_of("1e999", 0, 1e300, -ERANGE); /* overflows to infinity */
	dbl_of("1e-999", 0, 10, -ERANGE);   /* underflows */
	dbl_of("0x1p3", 0, 100, -EINVAL);
	dbl_of("", 0, 10, -EINVAL);
	dbl_of(" 1", 0, 10, -EINVAL);
	dbl_of("1 ", 0, 10, -EINVAL);
	dbl_of("+1", 0, 10, -EINVAL);
	dbl_of("1ms", 0, 10, -EINVAL);
	dbl_of("e", 0, 10, -EINVAL);
	dbl_of(".", 0, 10, -EINVAL);
	dbl_of("1..2", 0, 10, -EINVAL);
	puts("ok");
	TEST_PASS();
}
