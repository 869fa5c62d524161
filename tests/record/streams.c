// SPDX-License-Identifier: GPL-2.0
/*
 * streams LIBCUDA N [slow [LOOPS]]: N launches through LIBCUDA's cuLaunchKernel (the stand-in,
 * tests/record/fakecuda.c), each on a stream handle not seen before. The probes record a launch
 * at its entry, before a driver would refuse a handle it never made, so every one is a stream
 * to the recorder. With slow, the launches are paced (1 ms every 4,096), then the program
 * prints "handles done" and runs an ordinary loop on the default stream: LOOPS (default 2,000)
 * launches and synchronizes, 10 ms apart, and prints "loop done". A recorder that walks every handle it has seen at each
 * call falls behind there.
 */
#include "../cuda_dl.h"
#include <stdint.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	void *f, *params[1] = { 0 };
	cuda_dl_fn launch, sync;
	long n, loops = argc > 4 ? atol(argv[4]) : 2000;
	int slow = argc > 3 && !strcmp(argv[3], "slow");

	if (argc < 3) {
		fprintf(stderr, "usage: streams LIBCUDA N [slow [LOOPS]]\n");
		return 2;
	}
	n = atol(argv[2]);
	cuda_dl_open("streams", argv[1]);
	launch = cuda_dl_sym("cuLaunchKernel");
	sync = cuda_dl_sym("cuStreamSynchronize");
	CU(cuModuleGetFunction, &f, (void *)0, "k");
	for (long i = 0; i < n; i++) {
		launch(f, 1, 1, 1, 1, 1, 1, 0, (void *)(uintptr_t)(0x100000 + 16 * i), params,
		       (void *)0);
		if (slow && i % 4096 == 0)
			usleep(1000);
	}
	if (!slow)
		return 0;
	printf("handles done\n");
	fflush(stdout);
	for (long k = 0; k < loops; k++) {
		launch(f, 1, 1, 1, 1, 1, 1, 0, (void *)0, params, (void *)0);
		sync((void *)0);
		usleep(10000);
	}
	printf("loop done\n");
	fflush(stdout);
	return 0;
}
