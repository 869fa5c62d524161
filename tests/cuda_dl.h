/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CUDA driver a test program calls through dlopen (simcuda, or a real libcuda.so.1 given by
 * its path): cuda_dl_open() once, then cuda_dl_sym() for a function or CU(name, args...) for a
 * call that must succeed. Errors name the program (cuda_dl_prog) and exit: with cuda_dl_missing
 * for a function the driver lacks (77: the calling test skips), 1 for anything else.
 */
#ifndef GAPSCOPE_TESTS_CUDA_DL_H
#define GAPSCOPE_TESTS_CUDA_DL_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*cuda_dl_fn)();

static void *cuda_dl_lib;
static const char *cuda_dl_prog = "test";
static int cuda_dl_missing = 1;

static inline void cuda_dl_open(const char *prog, const char *path)
{
	cuda_dl_prog = prog;
	cuda_dl_lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!cuda_dl_lib) {
		fprintf(stderr, "%s: %s\n", prog, dlerror());
		exit(1);
	}
}

static inline cuda_dl_fn cuda_dl_sym(const char *name)
{
	cuda_dl_fn f = (cuda_dl_fn)dlsym(cuda_dl_lib, name);

	if (!f) {
		fprintf(stderr, "%s: %s: %s\n", cuda_dl_prog, name, dlerror());
		exit(cuda_dl_missing);
	}
	return f;
}

#define CU(name, ...)                                                                   \
	do {                                                                            \
		int r_ = cuda_dl_sym(#name)(__VA_ARGS__);                               \
		if (r_) {                                                               \
			fprintf(stderr, "%s: %s: error %d\n", cuda_dl_prog, #name, r_); \
			exit(1);                                                        \
		}                                                                       \
	} while (0)

/* Device 0's primary context, made current: where every test program's work goes. */
static inline void cuda_dl_context(void)
{
	void *ctx;
	int dev;

	CU(cuInit, 0);
	CU(cuDeviceGet, &dev, 0);
	CU(cuDevicePrimaryCtxRetain, &ctx, dev);
	CU(cuCtxSetCurrent, ctx);
}

#endif
