// SPDX-License-Identifier: GPL-2.0
/*
 * Target for tests/cases/attach_names.sh: looks its kernels up (cuModuleGetFunction,
 * cuLibraryGetKernel + cuKernelGetFunction) before gapscope attaches, says "ready" and waits for
 * a line on stdin (the test sends it once the recorder is attached). Then it launches every
 * kernel N times, looks one more kernel up (the recorder's calibration sample), launches all
 * again and exits. Usage: names_target LIBCUDA N
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
	unsigned gx, gy, gz, bx, by, bz, shmem;
	void *stream;
	void *attrs;
	unsigned n;
} launch_config;

static int (*get_fn)(void **, void *, const char *);
static int (*get_kernel)(void **, void *, const char *);
static int (*kernel_fn)(void **, void *);
static int (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
		     void *, void **, void **);
static int (*launch_ex)(const launch_config *, void *, void **, void **);

static void *sym(void *lib, const char *name)
{
	void *p = dlsym(lib, name);

	if (!p) {
		fprintf(stderr, "names_target: %s: %s\n", name, dlerror());
		exit(2);
	}
	return p;
}

static void launch_all(void *alpha, void *beta, void *gamma, void *delta, int n)
{
	launch_config c = { 2, 1, 1, 32, 1, 1, 0, NULL, NULL, 0 };

	for (int i = 0; i < n; i++) {
		launch(alpha, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
		launch(beta, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
		launch_ex(&c, gamma, NULL, NULL);
		if (delta)
			launch(delta, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
	}
}

int main(int argc, char **argv)
{
	void *lib, *alpha, *beta, *gk, *gamma, *delta;
	char line[64];
	int n;

	if (argc != 3)
		return 2;
	n = atoi(argv[2]);
	lib = dlopen(argv[1], RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "names_target: %s\n", dlerror());
		return 2;
	}
	get_fn = sym(lib, "cuModuleGetFunction");
	get_kernel = sym(lib, "cuLibraryGetKernel");
	kernel_fn = sym(lib, "cuKernelGetFunction");
	launch = sym(lib, "cuLaunchKernel");
	launch_ex = sym(lib, "cuLaunchKernelEx");

	get_fn(&alpha, (void *)0x77, "k_alpha");
	get_fn(&beta, (void *)0x77, "_Z6k_betaPfS_i");
	get_kernel(&gk, (void *)0x78, "k_gamma");
	kernel_fn(&gamma, gk);
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 3;

	launch_all(alpha, beta, gamma, NULL, n);
	get_fn(&delta, (void *)0x77, "k_delta");
	launch_all(alpha, beta, gamma, delta, n);
	printf("alpha=%p\nbeta=%p\ngamma=%p\ndelta=%p\n", alpha, beta, gamma, delta);
	return 0;
}
