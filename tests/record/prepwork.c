// SPDX-License-Identifier: GPL-2.0
/*
 * The C side of tests/record/prepfeeder.py's prepare(): CPU work in named functions of a small
 * library, called through ctypes, each sized in iterations (not in time), so that their shares
 * of the CPU hold on a loaded machine. Each returns the CPU time it ran, measured on its own
 * thread's clock: what the report's breakdown is held to. prep_hidden() does its work in a
 * static function: where the library is stripped, that frame has no name.
 *
 *   cc -shared -fPIC -O1 -g -fno-omit-frame-pointer prepwork.c -o libprepwork.so
 */
#include <time.h>

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A loop the compiler keeps: each step depends on the last. */
static __attribute__((noinline)) unsigned long spin(unsigned long n, unsigned long x)
{
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull + (x >> 29);
	return x;
}

volatile unsigned long prep_sink;

double prep_light(unsigned long n)
{
	double t0 = thread_cpu_s();

	for (unsigned long i = 0; i < n; i++)
		prep_sink = prep_sink * 2862933555777941757ull + 3037000493ull + (prep_sink >> 31);
	return thread_cpu_s() - t0;
}

double prep_heavy(unsigned long n)
{
	double t0 = thread_cpu_s();

	for (unsigned long i = 0; i < n; i++)
		prep_sink = prep_sink * 2862933555777941757ull + 3037000493ull + (prep_sink >> 31);
	return thread_cpu_s() - t0;
}

static __attribute__((noinline)) void hidden_work(unsigned long n)
{
	prep_sink = spin(n, prep_sink);
}

double prep_hidden(unsigned long n)
{
	double t0 = thread_cpu_s();

	hidden_work(n);
	return thread_cpu_s() - t0;
}
