// SPDX-License-Identifier: GPL-2.0
/*
 * A target for tests/cases/attach_late_cuda.sh that loads its CUDA driver when told to, long
 * after `gapscope record -p` attached: it says "ready" and then acts on each line of stdin:
 *   exec    runs itself anew (the same pid, a new image), which says "ready" again
 *   load    dlopen()s LIBCUDA and says "loaded"
 *   call    calls cuCtxSynchronize N times and says "called"
 *   launch  calls cuLaunchKernel N times and says "launched NS": the CPU time of the calling
 *           thread per call, in ns (a trap is the thread's CPU time; the machine's other work,
 *           which only delays the thread, is not)
 * and exits at the end of stdin. usage: latecuda LIBCUDA N
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int (*launch_fn)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
			 unsigned bz, unsigned shmem, void *stream, void **params, void **extra);

static long long cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)
{
	int (*sync)(void) = NULL;
	launch_fn launch = NULL;
	char line[64];
	void *lib;

	if (argc != 3)
		return 2;
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (!strcmp(line, "exec\n")) {
			execv("/proc/self/exe", argv);
			return 3;
		} else if (!strcmp(line, "load\n")) {
			lib = dlopen(argv[1], RTLD_NOW);
			sync = lib ? (int (*)(void))dlsym(lib, "cuCtxSynchronize") : NULL;
			launch = lib ? (launch_fn)dlsym(lib, "cuLaunchKernel") : NULL;
			if (!sync || !launch) {
				fprintf(stderr, "latecuda: %s\n", dlerror());
				return 2;
			}
			printf("loaded\n");
		} else if (!strcmp(line, "call\n") && sync) {
			for (int i = 0; i < atoi(argv[2]); i++)
				sync();
			printf("called\n");
		} else if (!strcmp(line, "launch\n") && launch) {
			int n = atoi(argv[2]);
			long long t0 = cpu_ns();

			for (int i = 0; i < n; i++)
				launch(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
			printf("launched %lld\n", n > 0 ? (cpu_ns() - t0) / n : 0);
		}
		fflush(stdout);
	}
	return 0;
}
