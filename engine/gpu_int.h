/* SPDX-License-Identifier: MIT */
/*
 * What the GPU layer's two halves share: the driver's functions, bound at run time by
 * gpu_driver.c (gpu__init) and called by gpu.c (devices, launches, copies), and the error path
 * that names a failed call.
 */
#ifndef ZK_GPU_INT_H
#define ZK_GPU_INT_H

#include "cuda_api.h"
#include <limits.h>

#include "gpu.h"

#define STR_(x) #x
#define STR(x)	STR_(x)

#define CU_FUNCS(X)                  \
	X(cuInit)                    \
	X(cuDriverGetVersion)        \
	X(cuGetErrorName)            \
	X(cuGetErrorString)          \
	X(cuDeviceGetCount)          \
	X(cuDeviceGet)               \
	X(cuDeviceGetName)           \
	X(cuDevicePrimaryCtxRetain)  \
	X(cuDevicePrimaryCtxRelease) \
	X(cuCtxSetCurrent)           \
	X(cuCtxSynchronize)          \
	X(cuModuleLoadData)          \
	X(cuModuleUnload)            \
	X(cuModuleGetFunction)       \
	X(cuMemAlloc)                \
	X(cuMemFree)                 \
	X(cuMemHostAlloc)            \
	X(cuMemFreeHost)             \
	X(cuMemcpyHtoD)              \
	X(cuMemcpyHtoDAsync)         \
	X(cuMemcpyDtoHAsync)         \
	X(cuLaunchKernel)            \
	X(cuStreamCreate)            \
	X(cuStreamDestroy)           \
	X(cuStreamSynchronize)       \
	X(cuEventCreate)             \
	X(cuEventDestroy)            \
	X(cuEventRecord)             \
	X(cuEventSynchronize)        \
	X(cuEventElapsedTime)

/* The argument is macro-expanded before use, so cuMemAlloc becomes the member cuMemAlloc_v2
 * with cuMemAlloc_v2's prototype. */
#define CU_MEMBER(f) __typeof__(f) *f;
struct cu_driver {
	void *lib;
	enum gpu_backend backend;
	char path[PATH_MAX];
	CU_FUNCS(CU_MEMBER)
};
extern struct cu_driver cu;

/* Dies naming the driver function fn, `what` and the CUresult's name and text. */
void __attribute__((noreturn)) cu_fail(CUresult rc, const char *fn, const char *what);

/* CU(what, fn, args...): call cu.fn, die naming the symbol and `what` unless it succeeds. */
#define CU(what, fn, ...)                            \
	do {                                         \
		CUresult _rc = cu.fn(__VA_ARGS__);   \
		if (_rc != CUDA_SUCCESS)             \
			cu_fail(_rc, STR(fn), what); \
	} while (0)

#endif
