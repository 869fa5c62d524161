// SPDX-License-Identifier: GPL-2.0
/*
 * launchmix LIBCUDA THREADS KERNELS STREAMS N [hold]: THREADS threads each make N launches
 * through LIBCUDA's cuLaunchKernel (the stand-in, tests/record/fakecuda.c, returns at once),
 * launch i of thread t of kernel (i * 7 + t) % KERNELS on stream i % STREAMS + 1: more kernels
 * and streams than a thread's launch cache holds (bpf/cuda.bpf.c, cu_thread), so that counts
 * leave it all the ways they can. The kernels are handles made here, laid out as the driver's
 * (the name pointer at offset 8: "mix_K"), never looked up.
 *
 * Without hold the threads exit as they finish (their caches folded at exit) and the process
 * ends. With hold it reads a line from stdin first (the recorder is attached by then), and once
 * the launches are made prints "launched N" and waits, every thread alive, for stdin's end:
 * what the recorder counts when stopped then is what the caches still hold.
 */
#include "../cuda_dl.h"
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef int (*launch_fn)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
			 unsigned bz, unsigned shmem, void *stream, void **params, void **extra);

struct handle {
	void *unused;
	const char *name; /* offset 8 */
	char buf[24];
};

static struct handle *kernels;
static int nkernels, nstreams, n, hold;
static launch_fn launch;
static pthread_barrier_t done;
static int gate[2]; /* hold: closed when stdin ends */

static void *run(void *arg)
{
	int t = (int)(intptr_t)arg;

	for (int i = 0; i < n; i++)
		if (launch(&kernels[(i * 7 + t) % nkernels], 1, 1, 1, 32, 1, 1, 0,
			   (void *)(uintptr_t)(i % nstreams + 1), NULL, NULL)) {
			fprintf(stderr, "launchmix: cuLaunchKernel failed\n");
			exit(1);
		}
	if (hold) {
		char c;

		pthread_barrier_wait(&done);
		while (read(gate[0], &c, 1) > 0)
			;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads;
	pthread_t *tid;
	char line[64];

	if (argc < 6) {
		fprintf(stderr, "usage: launchmix LIBCUDA THREADS KERNELS STREAMS N [hold]\n");
		return 2;
	}
	threads = atoi(argv[2]);
	nkernels = atoi(argv[3]);
	nstreams = atoi(argv[4]);
	n = atoi(argv[5]);
	hold = argc > 6;
	if (threads < 1 || nkernels < 1 || nstreams < 1 || n < 0) {
		fprintf(stderr, "launchmix: bad arguments\n");
		return 2;
	}
	cuda_dl_open("launchmix", argv[1]);
	launch = (launch_fn)cuda_dl_sym("cuLaunchKernel");
	kernels = calloc(nkernels, sizeof(*kernels));
	tid = calloc(threads, sizeof(*tid));
	if (!kernels || !tid || pipe(gate))
		return 1;
	for (int k = 0; k < nkernels; k++) {
		snprintf(kernels[k].buf, sizeof(kernels[k].buf), "mix_%d", k);
		kernels[k].name = kernels[k].buf;
	}
	if (hold) {
		pthread_barrier_init(&done, NULL, threads + 1);
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
	}
	for (int t = 0; t < threads; t++)
		if (pthread_create(&tid[t], NULL, run, (void *)(intptr_t)t))
			return 1;
	if (hold) {
		pthread_barrier_wait(&done);
		printf("launched %lld\n", (long long)threads * n);
		fflush(stdout);
		while (fgets(line, sizeof(line), stdin))
			;
		close(gate[1]);
	}
	for (int t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	if (!hold)
		printf("launched %lld\n", (long long)threads * n);
	return 0;
}
