// SPDX-License-Identifier: GPL-2.0
/*
 * A stand-in libcuda.so.1 for gapscope's own probe tests: the driver-API symbols (with the real
 * ABI's argument order) doing nothing but returning handles, so a test knows exactly which calls
 * with which arguments the recorder must have seen. Built by tests/cases/record_*.sh.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef struct {
	unsigned gx, gy, gz, bx, by, bz, shmem;
	void *stream;
	void *attrs;
	unsigned n;
} CUlaunchConfig;

/*
 * Handles laid out as driver 580's CUfunction/CUkernel: the kernel's name pointer at offset 8,
 * where gapscope reads the names of handles it saw no lookup for (record -p). With
 * FAKECUDA_NAME_LAYOUT=other the name is at offset 16 and offset 8 points to another, plausible
 * name: a driver whose layout differs, which gapscope must notice and not trust.
 */
struct handle {
	uint64_t magic;
	const char *at8;
	const char *at16;
	char name[64];
	char other[64];
};

static struct handle kernels[8], funcs[8];
static int nkernels;

static void set_names(struct handle *h, const char *name)
{
	const char *layout = getenv("FAKECUDA_NAME_LAYOUT");

	strncpy(h->name, name, sizeof(h->name) - 1);
	snprintf(h->other, sizeof(h->other), "not_%s", name);
	h->magic = 0x6b65726e656cull;
	if (layout && !strcmp(layout, "other")) {
		h->at8 = h->other;
		h->at16 = h->name;
	} else {
		h->at8 = h->name;
		h->at16 = NULL;
	}
}

static void *handle_for(const char *name)
{
	for (int i = 0; i < nkernels; i++)
		if (!strcmp(kernels[i].name, name))
			return &kernels[i];
	if (nkernels == 8)
		return NULL;
	set_names(&kernels[nkernels], name);
	set_names(&funcs[nkernels], name);
	return &kernels[nkernels++];
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
	*f = k ? &funcs[(struct handle *)k - kernels] : NULL;
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

CUresult cuMemsetD8Async(uint64_t dst, unsigned char v, size_t n, void *stream)
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
