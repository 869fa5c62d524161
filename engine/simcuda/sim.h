/* SPDX-License-Identifier: MIT */
/* simcuda internals shared between the driver-API emulation and its CPU kernel table. */
#ifndef SIMCUDA_SIM_H
#define SIMCUDA_SIM_H

#include <stddef.h>
#include <stdint.h>

/* A CPU version of one kernel of engine/kernels.cu: run() loops the shared body over every
 * thread of the launch; fault() corrupts one element of the kernel's output, for the test that
 * proves --verify notices a wrong kernel (SIMCUDA_FAULT=name). */
struct sim_kernel {
	const char *name;
	size_t args_size;
	void (*run)(const void *args, uint64_t nthreads);
	void (*fault)(const void *args, uint64_t nthreads);
};

const struct sim_kernel *sim_kernel__find(const char *name);
/* The table: sim_kernel__count() kernels, in engine/kernels.h's order. */
unsigned int sim_kernel__count(void);
const struct sim_kernel *sim_kernel__at(unsigned int i);

#endif
