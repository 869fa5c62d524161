// SPDX-License-Identifier: GPL-2.0
/*
 * A storm of cheap traced events for tests/bench/run.sh: T threads call futex(FUTEX_WAIT) on a
 * word whose value never matches, so every call returns EAGAIN at once, yet each is one futex
 * wait event for the recorder (enter + exit tracepoints). The total rate is paced (events/s, 0 =
 * as fast as the threads go) by spinning on the clock in batches, without sleeping (a sleep
 * would add off-CPU events of another kind). Prints exactly how many calls it made.
 *
 *   storm --threads T --rate R --seconds S
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint32_t word = 1;
static double rate_per_thread, seconds;
static atomic_uint_fast64_t total;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *run(void *arg)
{
	double t0 = now(), t = t0;
	uint64_t n = 0;

	while (t - t0 < seconds) {
		for (int i = 0; i < 64; i++, n++)
			syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
		t = now();
		/* Ahead of the schedule: spin until it catches up (no sleep: no extra events). */
		while (rate_per_thread > 0 && n > (t - t0) * rate_per_thread && t - t0 < seconds)
			t = now();
	}
	atomic_fetch_add(&total, n);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 2;
	double rate = 0;

	seconds = 2;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--threads"))
			threads = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--rate"))
			rate = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--seconds"))
			seconds = atof(argv[i + 1]);
	}
	rate_per_thread = rate / threads;
	pthread_t tid[threads];
	double t0 = now();

	for (int i = 0; i < threads; i++)
		pthread_create(&tid[i], NULL, run, NULL);
	for (int i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	double el = now() - t0;
	unsigned long long n = atomic_load(&total);

	printf("storm: calls=%llu uaddr=%p seconds=%.3f rate=%.0f\n", n, (void *)&word, el, n / el);
	return 0;
}
