// SPDX-License-Identifier: GPL-2.0
/*
 * A GPU feeder whose input comes from worker processes, as a PyTorch DataLoader's does: two
 * workers, forked first, each compute a batch on the CPU (augment_batch, WORK_MS milliseconds)
 * and hand it over; the feeder (the parent's main thread) waits for the next batch, launches a
 * kernel on it (simcuda, dlopen'ed from the path given) and synchronizes. The GPU idles while the
 * feeder waits: the cause is the workers' augment_batch, the wait only its link. How a batch
 * travels is the mode:
 *
 *   pipe     4 KiB written to a pipe the feeder reads
 *   socket   4 KiB sent on a Unix stream socket pair the feeder receives from
 *   eventfd  a count written to an eventfd the feeder reads
 *
 * With "wait" the parent prints "ready PID" once the workers exist and waits for a line on stdin
 * before anyone starts (so that a recorder can attach to a process whose workers already run);
 * the workers wait for the parent's word on a pipe of their own.
 *
 * usage: workers LIBCUDA MODE ITER WORK_MS [wait]
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../cuda_fr_scale.h"

#define NWORKERS 2
#define BATCH	 4096

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static volatile uint64_t sink;

/* A batch's CPU work, ms milliseconds in a function of its own (samples land in the loop). */
static __attribute__((noinline)) void augment_batch(char *batch, unsigned int ms)
{
	uint64_t x = sink, end = now_ns() + ms * 1000000ull;

	do {
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	} while (now_ns() < end);
	memset(batch, (int)x, BATCH);
	sink = x;
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w <= 0)
			return -1;
		c += w;
		n -= w;
	}
	return 0;
}

static int read_all(int fd, void *p, size_t n)
{
	char *c = p;

	while (n) {
		ssize_t r = read(fd, c, n);

		if (r <= 0)
			return -1;
		c += r;
		n -= r;
	}
	return 0;
}

static void worker(int out, int go, const char *mode, int batches, unsigned int ms)
{
	static char batch[BATCH];
	char c;

	prctl(PR_SET_NAME, "data_worker");
	if (read(go, &c, 1) != 1)
		_exit(1);
	for (int i = 0; i < batches; i++) {
		uint64_t one = 1;

		augment_batch(batch, ms);
		if (!strcmp(mode, "eventfd") ? write_all(out, &one, sizeof(one)) :
					       write_all(out, batch, BATCH))
			_exit(1);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	void *func, *stream, *params[1];
	struct fr_scale_args args;
	int iter, in, out, go[2], status, bad = 0;
	const char *mode;
	unsigned int ms;
	pid_t pids[NWORKERS];
	char *batch = malloc(BATCH);

	if (argc < 5) {
		fprintf(stderr, "usage: workers LIBCUDA pipe|socket|eventfd ITER WORK_MS [wait]\n");
		return 2;
	}
	mode = argv[2];
	iter = atoi(argv[3]);
	ms = atoi(argv[4]);
	if (pipe(go)) {
		perror("workers: pipe");
		return 1;
	}
	if (!strcmp(mode, "pipe")) {
		int p[2];

		if (pipe(p))
			return 1;
		in = p[0], out = p[1];
	} else if (!strcmp(mode, "socket")) {
		int s[2];

		if (socketpair(AF_UNIX, SOCK_STREAM, 0, s))
			return 1;
		in = s[0], out = s[1];
	} else if (!strcmp(mode, "eventfd")) {
		in = out = eventfd(0, 0);
		if (in < 0)
			return 1;
	} else {
		fprintf(stderr, "workers: unknown mode %s\n", mode);
		return 2;
	}
	for (int w = 0; w < NWORKERS; w++) {
		pids[w] = fork();
		if (pids[w] == 0)
			worker(out, go[0], mode, iter / NWORKERS + (w < iter % NWORKERS), ms);
	}
	cuda_dl_open("workers", argv[1]);
	cuda_dl_fr_scale(&func, &stream, &args);
	params[0] = &args;
	prctl(PR_SET_NAME, "gpu_feeder");
	if (argc > 5 && !strcmp(argv[5], "wait")) {
		char line[16];

		printf("ready %d\n", getpid());
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
	}
	if (write_all(go[1], "gg", NWORKERS))
		return 1;
	for (int i = 0; i < iter; i++) {
		uint64_t n;

		if (!strcmp(mode, "eventfd")) {
			/* A count may stand for two batches: take them one at a time. */
			static uint64_t ready;

			if (!ready && read_all(in, &n, sizeof(n)))
				return 1;
			ready = ready ? ready - 1 : n - 1;
		} else if (read_all(in, batch, BATCH)) {
			return 1;
		}
		CU(cuLaunchKernel, func, 1, 1, 1, ZK_BLOCK, 1, 1, 0, stream, params, NULL);
		CU(cuStreamSynchronize, stream);
	}
	for (int w = 0; w < NWORKERS; w++)
		bad |= waitpid(pids[w], &status, 0) != pids[w] || !WIFEXITED(status) ||
		       WEXITSTATUS(status);
	printf("batches %d\n", iter);
	return bad;
}
