// SPDX-License-Identifier: MIT
/* simcuda's modules, functions and kernel launches. */
#include <stdlib.h>
#include <string.h>

#include "simcuda_int.h"

/* ---- modules and launches ---------------------------------------------------------------- */

API CUresult cuModuleLoadData(CUmodule *mod, const void *image)
{
	CHECK_CTX();
	if (!mod || !image)
		return CUDA_ERROR_INVALID_VALUE;
	uint32_t magic;
	memcpy(&magic, image, sizeof(magic));
	/* Only fatbins: the kernels are the CPU versions in kernels_cpu.c; the image just has to be
	 * what the real driver would be handed. */
	if (magic != SIM_FATBIN_MAGIC && magic != SIM_FATBINC_MAGIC)
		return CUDA_ERROR_INVALID_IMAGE;
	struct CUmod_st *m = calloc(1, sizeof(*m));
	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	m->magic = MAGIC_MODULE;
	m->ctx = tls_ctx;
	if (!live_add(m)) {
		free(m);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*mod = m;
	return CUDA_SUCCESS;
}

/* Waits for the context's work (a queued launch may still refer to the module), then frees the
 * module and its functions. */
API CUresult cuModuleUnload(CUmodule m)
{
	CHECK_INIT();
	if (!live_is(m, MAGIC_MODULE) || !live_del(m))
		return CUDA_ERROR_INVALID_HANDLE;
	ctx_drain(m->ctx);
	pthread_mutex_lock(&sim.mu);
	for (struct CUfunc_st *f = m->funcs, *next; f; f = next) {
		next = f->next;
		live_del(f);
		memset(f, 0, sizeof(*f));
		f->next = sim.free_funcs;
		sim.free_funcs = f;
	}
	pthread_mutex_unlock(&sim.mu);
	free(m);
	return CUDA_SUCCESS;
}

/* A new function of module m for kernel k, a freed one if any. */
static CUresult func_new(CUmodule m, const struct sim_kernel *k, CUfunction *pf)
{
	pthread_mutex_lock(&sim.mu);
	struct CUfunc_st *f = sim.free_funcs;
	if (f)
		sim.free_funcs = f->next;
	pthread_mutex_unlock(&sim.mu);
	if (!f && !(f = calloc(1, sizeof(*f))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	f->magic = MAGIC_FUNC;
	f->name = sim.hide_handle_names ? NULL : k->name;
	f->mod = m;
	f->k = k;
	if (!live_add(f)) {
		free(f);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	/* the module's list is only walked by unload, after the module left the live set */
	pthread_mutex_lock(&sim.mu);
	f->next = m->funcs;
	m->funcs = f;
	pthread_mutex_unlock(&sim.mu);
	*pf = f;
	return CUDA_SUCCESS;
}

API CUresult cuModuleGetFunction(CUfunction *pf, CUmodule m, const char *name)
{
	CHECK_CTX();
	if (!pf || !name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!live_is(m, MAGIC_MODULE))
		return CUDA_ERROR_INVALID_HANDLE;
	const struct sim_kernel *k = sim_kernel__find(name);
	if (!k)
		return CUDA_ERROR_NOT_FOUND;
	return func_new(m, k, pf);
}

/* Every image holds every kernel of the table. */
API CUresult cuModuleGetFunctionCount(unsigned int *count, CUmodule m)
{
	CHECK_CTX();
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	if (!live_is(m, MAGIC_MODULE))
		return CUDA_ERROR_INVALID_HANDLE;
	*count = sim_kernel__count();
	return CUDA_SUCCESS;
}

/* The module's functions in table order, as handles without a lookup by name. */
API CUresult cuModuleEnumerateFunctions(CUfunction *fs, unsigned int n, CUmodule m)
{
	CHECK_CTX();
	if (!fs || n > sim_kernel__count())
		return CUDA_ERROR_INVALID_VALUE;
	if (!live_is(m, MAGIC_MODULE))
		return CUDA_ERROR_INVALID_HANDLE;
	for (unsigned int i = 0; i < n; i++) {
		CUresult rc = func_new(m, sim_kernel__at(i), &fs[i]);
		if (rc != CUDA_SUCCESS)
			return rc;
	}
	return CUDA_SUCCESS;
}

API CUresult cuFuncGetName(const char **name, CUfunction f)
{
	CHECK_INIT();
	if (!name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!live_is(f, MAGIC_FUNC))
		return CUDA_ERROR_INVALID_HANDLE;
	*name = f->k->name;
	return CUDA_SUCCESS;
}

API CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
			    unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
			    CUstream h, void **params, void **extra)
{
	CHECK_CTX();
	if (!live_is(f, MAGIC_FUNC))
		return CUDA_ERROR_INVALID_HANDLE;
	struct CUstream_st *s;
	CUresult rc = resolve_stream(h, &s);
	if (rc != CUDA_SUCCESS)
		return rc;
	if (f->mod->ctx != s->ctx || s->ctx != tls_ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!gx || !gy || !gz || !bx || !by || !bz || gy > 65535 || gz > 65535)
		return CUDA_ERROR_INVALID_VALUE;
	if ((uint64_t)bx * by * bz > 1024)
		return CUDA_ERROR_INVALID_VALUE;
	/* every engine kernel takes one by-value struct: kernelParams[0] points at it */
	if (!params || !params[0] || extra)
		return CUDA_ERROR_INVALID_VALUE;
	if (f->k->args_size > SIM_ARGS_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	struct op *op = op_new(OP_KERNEL);
	if (!op)
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* copied now: the caller may reuse its argument struct as soon as the launch returns */
	memcpy(op->kernel.args, params[0], f->k->args_size);
	op->kernel.k = f->k;
	op->kernel.nthreads = (uint64_t)gx * gy * gz * bx * by * bz;
	if (!captured(s, op))
		enqueue(s, op);
	return CUDA_SUCCESS;
}
