// SPDX-License-Identifier: GPL-2.0
/*
 * A target for tests/cases/record_hostile.sh whose main thread has ended (pthread_exit) while
 * another thread lives on: it prints "ready" once main is gone, then waits for a line on stdin
 * and calls mainexit_work() N times (a function the test probes), and the process exits.
 * Usage: mainexit N
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int n;

__attribute__((noinline)) int mainexit_work(int i)
{
	__asm__ volatile("" ::: "memory");
	return i * 2;
}

static void *worker(void *arg)
{
	pthread_t main_thread = *(pthread_t *)arg;
	char line[16];
	int sum = 0;

	pthread_join(main_thread, NULL); /* main has ended: its task is a zombie now */
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return NULL;
	for (int i = 0; i < n; i++)
		sum += mainexit_work(i);
	printf("done %d\n", sum);
	fflush(stdout);
	return NULL;
}

int main(int argc, char **argv)
{
	static pthread_t self, t;

	n = argc > 1 ? atoi(argv[1]) : 10;
	self = pthread_self();
	if (pthread_create(&t, NULL, worker, &self))
		return 1;
	pthread_exit(NULL);
}
