// SPDX-License-Identifier: GPL-2.0
/*
 * truncfeed LIBCUDA LIB N: the stand-in driver's launch and synchronize, then host work in LIB's
 * spin_here(), N times: gaps whose cause is in LIB (tests/cases/record_truncated_lib.sh). With
 * LIB "-", loads the first library only, says "loaded" and waits for its stdin to end: a
 * process that maps a library.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	void *h, *l, *f, *params[1];
	int (*get)(void **, void *, const char *);
	int (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
		      void *, void **, void **);
	int (*sync)(void *);
	void (*spin)(void);
	pid_t parent = getppid();
	char c;

	if (argc != 4)
		return 2;
	h = dlopen(argv[1], RTLD_NOW);
	if (!h)
		return fprintf(stderr, "truncfeed: %s\n", dlerror()), 1;
	if (!strcmp(argv[2], "-")) {
		printf("loaded\n");
		fflush(stdout);
		while (read(0, &c, 1) > 0)
			;
		return 0;
	}
	l = dlopen(argv[2], RTLD_NOW);
	get = dlsym(h, "cuModuleGetFunction");
	launch = dlsym(h, "cuLaunchKernel");
	sync = dlsym(h, "cuStreamSynchronize");
	spin = l ? (void (*)(void))dlsym(l, "spin_here") : NULL;
	if (!get || !launch || !sync || !spin)
		return fprintf(stderr, "truncfeed: %s\n", dlerror()), 1;
	get(&f, 0, "k");
	/* Until done, or orphaned: a test that failed leaves nothing spinning. */
	for (int i = 0; i < atoi(argv[3]) && getppid() == parent; i++) {
		launch(f, 1, 1, 1, 1, 1, 1, 0, 0, params, 0);
		sync(0);
		spin();
	}
	return 0;
}
