// SPDX-License-Identifier: MIT
/*
 * simcuda's table of CPU kernels: the same per-element bodies as the CUDA kernels
 * (engine/kernels.h), looped over every thread of a launch in index order.  One launch runs on
 * one host thread, the simulated device's single execution unit.
 */
#include <string.h>

#include "kernels.h"
#include "sim.h"

#define SIM_RUN(name)                                               \
	static void name##_run(const void *args, uint64_t nthreads) \
	{                                                           \
		const struct name##_args *a = args;                 \
		for (uint64_t i = 0; i < nthreads; i++)             \
			name##_body(a, i);                          \
	}
ZK_KERNELS(SIM_RUN)

/* Add one to a single element of the output, in the middle of what the launch wrote: the kind
 * of off-by-one a real kernel bug produces, small enough that only exact checking sees it. */
static void bump(fr_t *x)
{
	*x = fr_add(*x, fr_one());
}

static void fr_powers_fault(const void *args, uint64_t nthreads)
{
	const struct fr_powers_args *a = args;
	if (a->n)
		bump(&a->out[a->n / 2]);
}

static void fr_bitrev_fault(const void *args, uint64_t nthreads)
{
	const struct fr_bitrev_args *a = args;
	bump(&a->data[(1ULL << a->log2n) / 2]);
}

static void fr_ntt_stage_fault(const void *args, uint64_t nthreads)
{
	const struct fr_ntt_stage_args *a = args;
	bump(&a->data[(1ULL << a->log2n) / 2]);
}

static void fr_scale_fault(const void *args, uint64_t nthreads)
{
	const struct fr_scale_args *a = args;
	if (a->n)
		bump(&a->data[a->n / 2]);
}

static void fr_coset_fault(const void *args, uint64_t nthreads)
{
	const struct fr_coset_args *a = args;
	if (a->n)
		bump(&a->data[a->n / 2]);
}

static void fr_pointwise_fault(const void *args, uint64_t nthreads)
{
	const struct fr_pointwise_args *a = args;
	if (a->n)
		bump(&a->a[a->n / 2]);
}

#define SIM_ENTRY(name) { #name, sizeof(struct name##_args), name##_run, name##_fault },
static const struct sim_kernel kernels[] = { ZK_KERNELS(SIM_ENTRY) };

const struct sim_kernel *sim_kernel__find(const char *name)
{
	for (size_t i = 0; i < sizeof(kernels) / sizeof(kernels[0]); i++)
		if (!strcmp(kernels[i].name, name))
			return &kernels[i];
	return NULL;
}

unsigned int sim_kernel__count(void)
{
	return sizeof(kernels) / sizeof(kernels[0]);
}

const struct sim_kernel *sim_kernel__at(unsigned int i)
{
	return i < sim_kernel__count() ? &kernels[i] : NULL;
}
