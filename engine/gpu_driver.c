// SPDX-License-Identifier: MIT
/*
 * The GPU layer's driver (see gpu.h and gpu.c): libcuda.so.1 loaded at run time.
 *
 * The driver is bound the way cudart binds it: dlopen("libcuda.so.1") and one dlsym per
 * function, under the symbol name cuda.h maps each API name to (cuMemAlloc -> cuMemAlloc_v2,
 * cuStreamDestroy -> cuStreamDestroy_v2, cuCtxSynchronize unversioned in CUDA 13, ...).  The
 * mapping is taken from cuda.h itself: CU_FUNCS (gpu_int.h) names each function by its API name,
 * the header's macros turn that into the versioned symbol, and the same expansion gives the
 * dlsym string.  So the probes of a profiler see the same entry points as for any nvcc-built
 * program.
 */
#include <dlfcn.h>
#include <libgen.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "gpu_int.h"

struct cu_driver cu;

/* ---- errors ------------------------------------------------------------------------------ */

void cu_fail(CUresult rc, const char *fn, const char *what)
{
	const char *name = NULL, *text = NULL;
	if (cu.cuGetErrorName && cu.cuGetErrorName(rc, &name) != CUDA_SUCCESS)
		name = NULL;
	if (cu.cuGetErrorString && cu.cuGetErrorString(rc, &text) != CUDA_SUCCESS)
		text = NULL;
	fprintf(stderr, "zkengine: %s(%s): %s: %s\n", fn, what ? what : "",
		name ? name : "CUDA_ERROR_UNKNOWN_CODE", text ? text : "unrecognized error code");
	exit(1);
}

/* ---- loading the driver ------------------------------------------------------------------ */

static void *sym(const char *name)
{
	dlerror();
	void *p = dlsym(cu.lib, name);
	if (!p) {
		fprintf(stderr, "zkengine: %s: missing driver function %s\n", cu.path, name);
		exit(1);
	}
	return p;
}

static void simcuda_path(char *out, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		fprintf(stderr, "zkengine: --device sim: cannot read /proc/self/exe: %m\n");
		exit(1);
	}
	exe[n] = '\0';
	/* next to the engine, never on the library path, where it would hide a real driver */
	snprintf(out, len, "%s/simcuda/libcuda.so.1", dirname(exe));
}

/* Is there a usable real driver with at least one device?  Leaves it loaded if so. */
static bool try_real_driver(void)
{
	cu.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!cu.lib)
		return false;
	__typeof__(cuInit) *init = dlsym(cu.lib, STR(cuInit));
	__typeof__(cuDeviceGetCount) *count = dlsym(cu.lib, STR(cuDeviceGetCount));
	int n = 0;
	if (init && count && init(0) == CUDA_SUCCESS && count(&n) == CUDA_SUCCESS && n > 0)
		return true;
	dlclose(cu.lib);
	cu.lib = NULL;
	return false;
}

enum gpu_backend gpu__init(enum gpu_backend want)
{
	if (cu.lib)
		return cu.backend;

#ifdef ZK_NO_CUDA_TOOLKIT
	/* Built without nvcc: the embedded fatbin has no kernels a real GPU could run. */
	if (want == GPU_CUDA) {
		fprintf(stderr,
			"zkengine: --device cuda: built without the CUDA toolkit, so without "
			"GPU kernels (install cuda-toolkit-13-0 and rebuild)\n");
		exit(1);
	}
	want = GPU_SIM;
#endif
	if (want == GPU_AUTO)
		want = try_real_driver() ? GPU_CUDA : GPU_SIM;
	if (!cu.lib && want == GPU_CUDA) {
		cu.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
		if (!cu.lib) {
			fprintf(stderr, "zkengine: --device cuda: no CUDA driver: %s\n", dlerror());
			exit(1);
		}
	}
	if (!cu.lib && want == GPU_SIM) {
		char path[PATH_MAX];
		simcuda_path(path, sizeof(path));
		cu.lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!cu.lib) {
			fprintf(stderr, "zkengine: --device sim: cannot load simcuda: %s\n",
				dlerror());
			exit(1);
		}
	}
	cu.backend = want;

	struct link_map *lm = NULL;
	if (dlinfo(cu.lib, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name)
		snprintf(cu.path, sizeof(cu.path), "%s", lm->l_name);
	else
		snprintf(cu.path, sizeof(cu.path), "libcuda.so.1");

#define CU_BIND(f) cu.f = (__typeof__(f) *)sym(STR(f));
	CU_FUNCS(CU_BIND)
#undef CU_BIND

	CU("", cuInit, 0);
	int n = 0;
	CU("", cuDeviceGetCount, &n);
	if (n <= 0) {
		fprintf(stderr, "zkengine: --device %s: no CUDA device\n",
			gpu__backend_name(cu.backend));
		exit(1);
	}
	return cu.backend;
}

const char *gpu__backend_name(enum gpu_backend b)
{
	switch (b) {
	case GPU_AUTO:
		return "auto";
	case GPU_CUDA:
		return "cuda";
	case GPU_SIM:
		return "sim";
	}
	return "?";
}

const char *gpu__driver_path(void)
{
	return cu.path;
}

int gpu__count(void)
{
	int n = 0;
	CU("", cuDeviceGetCount, &n);
	return n;
}
