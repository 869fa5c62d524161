// SPDX-License-Identifier: GPL-2.0
/*
 * For tests/cases/record_lookups.sh: launches as PyTorch makes them, a cuKernelGetFunction
 * before every cuLaunchKernelEx, against the stand-in libcuda (tests/record/fakecuda.c).
 *
 *   lookups_target LIBCUDA N WAIT
 *
 * Looks up four kernels (cuLibraryGetKernel), makes 64 launches, then with WAIT=1 waits until
 * the recorder has retired its cuKernelGetFunction probe: until the function's first byte, read
 * through /proc/self/mem, is no longer the breakpoint a uprobe puts there (20 s at most, else
 * exit 3). Then N more launches, and one of a fifth kernel whose function no probe saw made.
 * Prints the launches of each phase.
 */
#include "../cuda_dl.h"
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef int (*lib_get_kernel_fn)(void **k, void *lib, const char *name);
typedef int (*kernel_get_function_fn)(void **f, void *k);
typedef int (*launch_ex_fn)(const void *cfg, void *f, void **params, void **extra);

static const char *const names[] = { "lk_alpha", "lk_beta", "lk_gamma", "lk_delta", "lk_epsilon" };

static lib_get_kernel_fn get_kernel;
static kernel_get_function_fn get_function;
static launch_ex_fn launch;

static void launch_of(void *kernel)
{
	unsigned cfg[16] = { 1, 1, 1, 32, 1, 1, 0 };
	void *f = NULL;

	if (get_function(&f, kernel) || launch(cfg, f, NULL, NULL)) {
		fprintf(stderr, "lookups_target: a call failed\n");
		exit(1);
	}
}

/* Whether the first byte of fn is a breakpoint (int3): a uprobe is on it. */
static int probed(int mem, void *fn)
{
	unsigned char b = 0;

	if (pread(mem, &b, 1, (off_t)(uintptr_t)fn) != 1) {
		perror("lookups_target: /proc/self/mem");
		exit(1);
	}
	return b == 0xcc;
}

int main(int argc, char **argv)
{
	void *k[5];
	int n, wait, mem;

	if (argc != 4) {
		fprintf(stderr, "usage: lookups_target LIBCUDA N WAIT\n");
		return 2;
	}
	n = atoi(argv[2]);
	wait = atoi(argv[3]);
	cuda_dl_open("lookups_target", argv[1]);
	get_kernel = (lib_get_kernel_fn)cuda_dl_sym("cuLibraryGetKernel");
	get_function = (kernel_get_function_fn)cuda_dl_sym("cuKernelGetFunction");
	launch = (launch_ex_fn)cuda_dl_sym("cuLaunchKernelEx");
	mem = open("/proc/self/mem", O_RDONLY);
	if (mem < 0) {
		fprintf(stderr, "lookups_target: /proc/self/mem\n");
		return 1;
	}
	for (int i = 0; i < 5; i++)
		if (get_kernel(&k[i], NULL, names[i]))
			return 1;
	for (int i = 0; i < 64; i++)
		launch_of(k[i % 4]);
	printf("phase1 64\n");
	fflush(stdout);
	if (wait) {
		struct timespec t = { 0, 5000000 };
		int tries = 0;

		/* Polls the recorder's doing, not a time: the test fails if it never happens. */
		while (probed(mem, (void *)get_function) && ++tries < 4000)
			nanosleep(&t, NULL);
		if (tries == 4000) {
			fprintf(stderr, "lookups_target: the probe was never retired\n");
			return 3;
		}
	}
	for (int i = 0; i < n; i++)
		launch_of(k[i % 4]);
	launch_of(k[4]);
	printf("phase2 %d\n", n + 1);
	return 0;
}
