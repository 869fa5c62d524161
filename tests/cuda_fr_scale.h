/* SPDX-License-Identifier: GPL-2.0 */
/*
 * simcuda's fr_scale kernel (engine/kernels.h) ready to launch, for the test programs that feed
 * a GPU through tests/cuda_dl.h: device 0's context made current, the kernel's function, a
 * stream of its own and the arguments over 256 elements of device memory.
 */
#ifndef GAPSCOPE_TESTS_CUDA_FR_SCALE_H
#define GAPSCOPE_TESTS_CUDA_FR_SCALE_H

#include <stdint.h>

#include "cuda_dl.h"
#include "kernels.h"

static inline void cuda_dl_fr_scale(void **func, void **stream, struct fr_scale_args *args)
{
	static const uint32_t fatbin[4] = { 0xBA55ED50u }; /* the fatbin header's magic */
	void *mod, *dev_mem;

	cuda_dl_context();
	CU(cuModuleLoadData, &mod, fatbin);
	CU(cuModuleGetFunction, func, mod, "fr_scale");
	CU(cuStreamCreate, stream, 1);
	CU(cuMemAlloc_v2, &dev_mem, 256 * sizeof(fr_t));
	args->data = dev_mem;
	args->c = fr_one();
	args->n = 256;
}

#endif
