// SPDX-License-Identifier: GPL-2.0
/*
 * Target for tests/cases/record_stale_names.sh, driven through simcuda: loads module A, looks up
 * fr_scale in it, launches it N times, unloads A, loads module B and takes its functions with
 * cuModuleEnumerateFunctions (no lookup by name), one of which is fr_scale's freed handle again
 * (simcuda hands freed functions out again), and launches that one N times. With --wait it says
 * "ready" after the lookup and waits for a line on stdin before its first launch (the test
 * attaches with -p meanwhile). Prints the handle and both kernels' names as key=value lines.
 * Usage: stale_names LIBCUDA N [--wait]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cuda_dl.h"

typedef void *CUfunction;

/* Every kernel of simcuda's table takes one struct: all zero, it has nothing to do (n = 0). */
static void launch(CUfunction f, int n)
{
	static unsigned char args[128];
	void *params[] = { args };

	for (int i = 0; i < n; i++)
		CU(cuLaunchKernel, f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
	CU(cuCtxSynchronize);
}

int main(int argc, char **argv)
{
	static const uint32_t image[4] = { 0xBA55ED50u }; /* a fatbin's header, as simcuda wants */
	void *a, *b;
	CUfunction f, fs[64];
	unsigned int count;
	const char *name;
	char line[16];
	int n;

	if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "--wait")))
		return 2;
	n = atoi(argv[2]);
	cuda_dl_open("stale_names", argv[1]);
	cuda_dl_context();
	CU(cuModuleLoadData, &a, image);
	CU(cuModuleGetFunction, &f, a, "fr_scale");
	if (argc == 4) {
		printf("ready\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 3;
	}
	launch(f, n);
	CU(cuModuleUnload, a);

	CU(cuModuleLoadData, &b, image);
	CU(cuModuleGetFunctionCount, &count, b);
	if (count > sizeof(fs) / sizeof(fs[0]))
		return 2;
	CU(cuModuleEnumerateFunctions, fs, count, b);
	for (unsigned int i = 0; i < count; i++) {
		if (fs[i] != f)
			continue;
		CU(cuFuncGetName, &name, fs[i]);
		launch(fs[i], n);
		printf("handle=%p\nfirst=fr_scale\nsecond=%s\n", f, name);
		return 0;
	}
	fprintf(stderr, "stale_names: module B's functions do not reuse %p\n", f);
	return 4;
}
