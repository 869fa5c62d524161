// SPDX-License-Identifier: GPL-2.0
/*
 * launchloop LIBCUDA N [ex|memset]: N launches of one kernel through LIBCUDA's cuLaunchKernel (or
 * cuLaunchKernelEx; with memset, each after a cuMemsetD8Async as cuBLAS does), after 1000 not
 * timed, and "per_launch_us X" printed. Against the stand-in libcuda
 * (tests/record/fakecuda.c), whose launch returns at once, the time is the call plus whatever
 * a uprobe on it adds: tests/bench/launch_cost.sh puts the recorder's cost per launch beside a
 * count-only uprobe's, as tests/gpu/truth.sh does with empty kernels on a GPU.
 */
#include "../cuda_dl.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int (*get_function_fn)(void **f, void *mod, const char *name);
typedef int (*launch_fn)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
			 unsigned bz, unsigned shmem, void *stream, void **params, void **extra);
typedef int (*launch_ex_fn)(const void *cfg, void *f, void **params, void **extra);
typedef int (*memset_fn)(unsigned long long dst, unsigned char v, size_t n, void *stream);

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned cfg[16] = { 1, 1, 1, 32, 1, 1, 0 };
	get_function_fn get_function;
	launch_ex_fn launch_ex;
	launch_fn launch;
	memset_fn memset_async = NULL;
	void *f = NULL;
	int n, ex, ms, bad = 0;
	double t0, t1;

	if (argc < 3) {
		fprintf(stderr, "usage: launchloop LIBCUDA N [ex|memset]\n");
		return 2;
	}
	n = atoi(argv[2]);
	ex = argc > 3 && !strcmp(argv[3], "ex");
	ms = argc > 3 && !strcmp(argv[3], "memset");
	cuda_dl_open("launchloop", argv[1]);
	get_function = (get_function_fn)cuda_dl_sym("cuModuleGetFunction");
	launch = (launch_fn)cuda_dl_sym("cuLaunchKernel");
	launch_ex = (launch_ex_fn)cuda_dl_sym("cuLaunchKernelEx");
	if (ms)
		memset_async = (memset_fn)cuda_dl_sym("cuMemsetD8Async");
	if (get_function(&f, NULL, "empty_kernel")) {
		fprintf(stderr, "launchloop: %s lacks the driver calls it needs\n", argv[1]);
		return 1;
	}
	/* The first launches take the recorder's one-time work (naming the handle). */
	for (int i = 0; i < 1000; i++) {
		if (ms)
			bad |= memset_async(0, 0, 64, NULL);
		bad |= ex ? launch_ex(cfg, f, NULL, NULL) :
			    launch(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
	}
	t0 = now_s();
	for (int i = 0; i < n; i++) {
		if (ms)
			bad |= memset_async(0, 0, 64, NULL);
		bad |= ex ? launch_ex(cfg, f, NULL, NULL) :
			    launch(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
	}
	t1 = now_s();
	if (bad) {
		fprintf(stderr, "launchloop: a launch failed\n");
		return 1;
	}
	printf("per_launch_us %.4f\n", (t1 - t0) * 1e6 / n);
	return 0;
}
