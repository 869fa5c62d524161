// SPDX-License-Identifier: GPL-2.0
/*
 * --nvml: GPU utilization samples from NVML, taken by the recorder at every tick of its poll
 * loop (20 a second). libnvidia-ml is loaded with dlopen, so the recorder needs no NVML to
 * build or run; without it, one warning and the recording goes on. nvml.h is not needed
 * either: the few functions used are declared here from NVML's documented ABI.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "gpu_feeds.h"
#include "trace_out.h"
#include "trace.h"

#define NVML_MAX_DEVICES 64

typedef int nvml_return;		 /* nvmlReturn_t: 0 is NVML_SUCCESS */
typedef struct nvml_device *nvml_device; /* nvmlDevice_t */
struct nvml_utilization {		 /* nvmlUtilization_t */
	unsigned int gpu;		 /* percent of the sample period a kernel ran */
	unsigned int memory;		 /* percent the memory was read or written */
};

static struct {
	void *lib;
	nvml_return (*init)(void);
	nvml_return (*shutdown)(void);
	nvml_return (*count)(unsigned int *);
	nvml_return (*handle)(unsigned int, nvml_device *);
	nvml_return (*util)(nvml_device, struct nvml_utilization *);
	const char *(*error)(nvml_return);
	nvml_device dev[NVML_MAX_DEVICES];
	unsigned int ndev;
	__u64 samples, failed;
} nv;

static void unload(void)
{
	if (nv.lib)
		dlclose(nv.lib);
	memset(&nv, 0, sizeof(nv));
}

void nvml__start(void)
{
	nvml_return r;

	nv.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!nv.lib) {
		fprintf(stderr, "gapscope: warning: --nvml: %s: no NVML samples\n", dlerror());
		return;
	}
#define SYM(field, name)                                                              \
	if (!(*(void **)&nv.field = dlsym(nv.lib, name))) {                           \
		fprintf(stderr,                                                       \
			"gapscope: warning: --nvml: libnvidia-ml has no %s: no NVML " \
			"samples\n",                                                  \
			name);                                                        \
		unload();                                                             \
		return;                                                               \
	}
	SYM(init, "nvmlInit_v2");
	SYM(shutdown, "nvmlShutdown");
	SYM(count, "nvmlDeviceGetCount_v2");
	SYM(handle, "nvmlDeviceGetHandleByIndex_v2");
	SYM(util, "nvmlDeviceGetUtilizationRates");
	SYM(error, "nvmlErrorString");
#undef SYM
	if ((r = nv.init()) || (r = nv.count(&nv.ndev))) {
		fprintf(stderr, "gapscope: warning: --nvml: %s: no NVML samples\n", nv.error(r));
		unload();
		return;
	}
	if (nv.ndev > NVML_MAX_DEVICES)
		nv.ndev = NVML_MAX_DEVICES;
	for (unsigned int i = 0; i < nv.ndev; i++)
		if (nv.handle(i, &nv.dev[i]))
			nv.dev[i] = NULL;
}

void nvml__sample(struct trace_out *out)
{
	for (unsigned int i = 0; nv.lib && i < nv.ndev; i++) {
		struct nvml_utilization u;
		struct gs_rec_nvml r = {};

		if (!nv.dev[i] || nv.util(nv.dev[i], &u)) {
			nv.failed++;
			continue;
		}
		trace_out__hdr(&r.h, GS_REC_NVML, sizeof(r), 0);
		r.device = i;
		r.gpu_pct = u.gpu;
		r.mem_pct = u.memory;
		trace_out__append(out, &r, sizeof(r));
		nv.samples++;
	}
}

void nvml__finish(void)
{
	if (!nv.lib)
		return;
	fprintf(stderr, "gapscope: NVML: %llu samples of %u devices%s\n",
		(unsigned long long)nv.samples, nv.ndev, nv.failed ? " (some unreadable)" : "");
	nv.shutdown();
	unload();
}
