// SPDX-License-Identifier: GPL-2.0
/*
 * A target for tests/cases/attach_late_cuda.sh that loads its CUDA driver when told to, long
 * after `gapscope record -p` attached: it says "ready" and then acts on each line of stdin:
 *   exec    runs itself anew (the same pid, a new image), which says "ready" again
 *   load    dlopen()s LIBCUDA and says "loaded"
 *   call    calls cuCtxSynchronize N times and says "called"
 * and exits at the end of stdin. usage: latecuda LIBCUDA N
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int (*sync)(void) = NULL;
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
			if (!sync) {
				fprintf(stderr, "latecuda: %s\n", dlerror());
				return 2;
			}
			printf("loaded\n");
		} else if (!strcmp(line, "call\n") && sync) {
			for (int i = 0; i < atoi(argv[2]); i++)
				sync();
			printf("called\n");
		}
		fflush(stdout);
	}
	return 0;
}
