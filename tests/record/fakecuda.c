// SPDX-License-Identifier: GPL-2.0
/*
 * A stand-in libcuda.so.1 for gapscope's own probe tests: the driver-API symbols (with the real
 * ABI's argument order) doing nothing but returning handles, so a test knows exactly which calls
 * with which arguments the recorder must have seen. Built by tests/cases/record_*.sh.
 */
#include <stdint.h>
#include <string.h>

typedef int CUresult;
typedef struct {
	unsigned gx, gy, gz, bx, by, bz, shmem;
	void *stream;
	void *attrs;
	unsigned n;
} CUlaunchConfig;

static char kernels[8][64];
static int nkernels;

static void *handle_for(const char *name)
{
	for (int i = 0; i < nkernels; i++)
		if (!strcmp(kernels[i], name))
			return kernels[i];
	if (nkernels == 8)
		return NULL;
	strncpy(kernels[nkernels], name, 63);
	return kernels[nkernels++];
}

CUresult cuModuleGetFunction(void **f, void *mod, const char *name)
{
	*f = handle_for(name);
	return 0;
}

CUresult cuLibraryGetKernel(void **k, void *lib, const char *name)
{
	*k = handle_for(name);
	return 0;
}

/* The function of a kernel: a different handle, as in the driver. */
CUresult cuKernelGetFunction(void **f, void *k)
{
	*f = (char *)k + 1;
	return 0;
}

CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
			unsigned bz, unsigned shmem, void *stream, void **params, void **extra)
{
	return f ? 0 : 1;
}

CUresult cuLaunchKernel_ptsz(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			     unsigned by, unsigned bz, unsigned shmem, void *stream, void **params,
			     void **extra)
{
	return f ? 0 : 1;
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *c, void *f, void **params, void **extra)
{
	return c && f ? 0 : 1;
}

CUresult cuStreamSynchronize(void *stream)
{
	return 0;
}

CUresult cuCtxSynchronize(void)
{
	return 0;
}

CUresult cuCtxSynchronize_v2(void *ctx)
{
	return 0;
}

CUresult cuMemcpyHtoDAsync_v2(uint64_t dst, const void *src, size_t bytes, void *stream)
{
	return 0;
}

CUresult cuEventQuery(void *event)
{
	return 600; /* CUDA_ERROR_NOT_READY */
}

/* Not a probed family: must not be attached. */
CUresult cuCtxGetCurrent(void **ctx)
{
	*ctx = NULL;
	return 0;
}
