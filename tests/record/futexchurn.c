// SPDX-License-Identifier: GPL-2.0
/*
 * Two threads ping-pong through futex words never used twice, a new pair each round (red-team
 * D22): every wait and wake is on a word the analysis has not seen before, as mutexes and
 * condition variables in freshly allocated memory are.
 *
 * usage: futexchurn SECONDS   (prints rounds=N at the end)
 */
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS_MAX 25000000L

static _Atomic unsigned int *x, *y;

static void fwait(_Atomic unsigned int *a)
{
	while (!atomic_load(a))
		syscall(SYS_futex, a, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
}

static void fwake(_Atomic unsigned int *a)
{
	atomic_store(a, 1);
	syscall(SYS_futex, a, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *other(void *unused)
{
	(void)unused;
	for (long i = 0; i < ROUNDS_MAX; i++) {
		fwait(&x[i]);
		fwake(&y[i]);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	time_t t0 = time(NULL);
	int secs = argc > 1 ? atoi(argv[1]) : 0;
	pthread_t t;
	long i;

	if (secs <= 0) {
		fprintf(stderr, "usage: futexchurn SECONDS\n");
		return 64;
	}
	/* Address space only: a page is touched once its words are used. */
	x = calloc(2 * ROUNDS_MAX, sizeof(*x));
	if (!x) {
		perror("futexchurn");
		return 1;
	}
	y = x + ROUNDS_MAX;
	if (pthread_create(&t, NULL, other, NULL)) {
		perror("futexchurn");
		return 1;
	}
	for (i = 0; i < ROUNDS_MAX && time(NULL) - t0 < secs; i++) {
		fwake(&x[i]);
		fwait(&y[i]);
	}
	printf("rounds=%ld\n", i);
	fflush(stdout);
	/* The other thread waits on a word no one wakes: the process ends here. */
	_exit(0);
}
