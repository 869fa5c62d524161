/* SPDX-License-Identifier: MIT */
/*
 * The engine's CUDA kernels: one thread per element of the shared bodies in kernels.h.  Built by
 * nvcc into a fatbin (sm_90 SASS plus compute_90 PTX) that zkengine embeds and hands to
 * cuModuleLoadData; extern "C" keeps the names cuModuleGetFunction looks up unmangled and equal
 * to the names in simcuda's table.
 */
#include "kernels.h"

#define ZK_DEFINE_KERNEL(name)                                                                    \
	extern "C" __global__ void __launch_bounds__(ZK_BLOCK) name(struct name##_args a)        \
	{                                                                                          \
		name##_body(&a, (uint64_t)blockIdx.x * blockDim.x + threadIdx.x);                 \
	}

ZK_KERNELS(ZK_DEFINE_KERNEL)
