// SPDX-License-Identifier: GPL-2.0
/*
 * Argument positions from the CUDA 13 cuda.h (the unsuffixed names are the old ABI versions the
 * header maps away: cuMemcpyHtoD is the 32-bit-pointer v1, cuCtxSynchronize takes no context while
 * cuCtxSynchronize_v2 takes one). Only calls the blame analysis needs: every probe is a trap per
 * call, and cuGetProcAddress, cuCtxGetCurrent and friends are called hundreds of times while
 * telling nothing about where the GPU waits, so they stay unprobed.
 */
#include <stdlib.h>
#include <string.h>

#include "cuda_fns.h"

struct cu_fn {
	const char *name;
	struct cu_fn_desc d;
};

#define RET   .flags = CU_F_RET
#define ASYNC .flags = CU_F_ASYNC

static const struct cu_fn fns[] = {
	/* Launches: entry only, one trap per launch. */
	{ "cuLaunchKernel", { .kind = CU_K_LAUNCH, .a_handle = 1, .a_grid = 2, .a_stream = 9 } },
	{ "cuLaunchCooperativeKernel",
	  { .kind = CU_K_LAUNCH, .a_handle = 1, .a_grid = 2, .a_stream = 9 } },
	{ "cuLaunchKernelEx", { .kind = CU_K_LAUNCH, .layout = CU_L_LAUNCH_EX } },
	{ "cuLaunch", { .kind = CU_K_LAUNCH, .a_handle = 1 } },
	{ "cuLaunchGrid", { .kind = CU_K_LAUNCH, .a_handle = 1 } },
	{ "cuLaunchGridAsync", { .kind = CU_K_LAUNCH, .a_handle = 1, .a_stream = 4 } },
	{ "cuGraphLaunch", { .kind = CU_K_GRAPH_LAUNCH, .a_handle = 1, .a_stream = 2 } },

	/* Copies: synchronous ones need their duration (a return probe), async ones do not. */
	{ "cuMemcpy", { .kind = CU_K_MEMCPY, RET, .a_bytes = 3 } },
	{ "cuMemcpyAsync", { .kind = CU_K_MEMCPY, ASYNC, .a_bytes = 3, .a_stream = 4 } },
	{ "cuMemcpyHtoD", { .kind = CU_K_MEMCPY, RET, .a_bytes = 3 } },
	{ "cuMemcpyHtoD_v2", { .kind = CU_K_MEMCPY, RET, .a_bytes = 3 } },
	{ "cuMemcpyDtoH", { .kind = CU_K_MEMCPY, RET, .a_bytes = 3 } },
	{ "cuMemcpyDtoH_v2", { .kind = CU_K_MEMCPY, RET, .a_bytes = 3 } },
	{ "cuMemcpyDtoD", { .kind = CU_K_MEMCPY, RET, .a_bytes = 3 } },
	{ "cuMemcpyDtoD_v2", { .kind = CU_K_MEMCPY, RET, .a_bytes = 3 } },
	{ "cuMemcpyHtoDAsync", { .kind = CU_K_MEMCPY, ASYNC, .a_bytes = 3, .a_stream = 4 } },
	{ "cuMemcpyHtoDAsync_v2", { .kind = CU_K_MEMCPY, ASYNC, .a_bytes = 3, .a_stream = 4 } },
	{ "cuMemcpyDtoHAsync", { .kind = CU_K_MEMCPY, ASYNC, .a_bytes = 3, .a_stream = 4 } },
	{ "cuMemcpyDtoHAsync_v2", { .kind = CU_K_MEMCPY, ASYNC, .a_bytes = 3, .a_stream = 4 } },
	{ "cuMemcpyDtoDAsync", { .kind = CU_K_MEMCPY, ASYNC, .a_bytes = 3, .a_stream = 4 } },
	{ "cuMemcpyDtoDAsync_v2", { .kind = CU_K_MEMCPY, ASYNC, .a_bytes = 3, .a_stream = 4 } },
	{ "cuMemcpyPeer", { .kind = CU_K_MEMCPY, RET, .a_ctx = 2, .a_bytes = 5 } },
	{ "cuMemcpyPeerAsync",
	  { .kind = CU_K_MEMCPY, ASYNC, .a_ctx = 2, .a_bytes = 5, .a_stream = 6 } },
	{ "cuMemcpyHtoA", { .kind = CU_K_MEMCPY, RET, .a_bytes = 4 } },
	{ "cuMemcpyHtoA_v2", { .kind = CU_K_MEMCPY, RET, .a_bytes = 4 } },
	{ "cuMemcpyAtoH", { .kind = CU_K_MEMCPY, RET, .a_bytes = 4 } },
	{ "cuMemcpyAtoH_v2", { .kind = CU_K_MEMCPY, RET, .a_bytes = 4 } },
	{ "cuMemcpyAtoD", { .kind = CU_K_MEMCPY, RET, .a_bytes = 4 } },
	{ "cuMemcpyAtoD_v2", { .kind = CU_K_MEMCPY, RET, .a_bytes = 4 } },
	{ "cuMemcpyDtoA", { .kind = CU_K_MEMCPY, RET, .a_bytes = 4 } },
	{ "cuMemcpyDtoA_v2", { .kind = CU_K_MEMCPY, RET, .a_bytes = 4 } },
	{ "cuMemcpyAtoA", { .kind = CU_K_MEMCPY, RET, .a_bytes = 5 } },
	{ "cuMemcpyAtoA_v2", { .kind = CU_K_MEMCPY, RET, .a_bytes = 5 } },
	{ "cuMemcpyHtoAAsync", { .kind = CU_K_MEMCPY, ASYNC, .a_bytes = 4, .a_stream = 5 } },
	{ "cuMemcpyHtoAAsync_v2", { .kind = CU_K_MEMCPY, ASYNC, .a_bytes = 4, .a_stream = 5 } },
	{ "cuMemcpyAtoHAsync", { .kind = CU_K_MEMCPY, ASYNC, .a_bytes = 4, .a_stream = 5 } },
	{ "cuMemcpyAtoHAsync_v2", { .kind = CU_K_MEMCPY, ASYNC, .a_bytes = 4, .a_stream = 5 } },
	/* 2-D/3-D copies describe themselves in a struct; only the _v2 2-D layout is decoded. */
	{ "cuMemcpy2D", { .kind = CU_K_MEMCPY, RET } },
	{ "cuMemcpy2D_v2", { .kind = CU_K_MEMCPY, .layout = CU_L_MEMCPY2D, RET } },
	{ "cuMemcpy2DUnaligned", { .kind = CU_K_MEMCPY, RET } },
	{ "cuMemcpy2DUnaligned_v2", { .kind = CU_K_MEMCPY, .layout = CU_L_MEMCPY2D, RET } },
	{ "cuMemcpy2DAsync", { .kind = CU_K_MEMCPY, ASYNC, .a_stream = 2 } },
	{ "cuMemcpy2DAsync_v2",
	  { .kind = CU_K_MEMCPY, .layout = CU_L_MEMCPY2D, ASYNC, .a_stream = 2 } },
	{ "cuMemcpy3D", { .kind = CU_K_MEMCPY, RET } },
	{ "cuMemcpy3D_v2", { .kind = CU_K_MEMCPY, RET } },
	{ "cuMemcpy3DAsync", { .kind = CU_K_MEMCPY, ASYNC, .a_stream = 2 } },
	{ "cuMemcpy3DAsync_v2", { .kind = CU_K_MEMCPY, ASYNC, .a_stream = 2 } },
	{ "cuMemcpy3DPeer", { .kind = CU_K_MEMCPY, RET } },
	{ "cuMemcpy3DPeerAsync", { .kind = CU_K_MEMCPY, ASYNC, .a_stream = 2 } },
	/* Batches: aux = number of copies. v1 has a failIdx argument that _v2 dropped. */
	{ "cuMemcpyBatchAsync", { .kind = CU_K_MEMCPY, ASYNC, .a_aux = 4, .a_stream = 9 } },
	{ "cuMemcpyBatchAsync_v2", { .kind = CU_K_MEMCPY, ASYNC, .a_aux = 4, .a_stream = 8 } },
	{ "cuMemcpy3DBatchAsync", { .kind = CU_K_MEMCPY, ASYNC, .a_aux = 1, .a_stream = 5 } },
	{ "cuMemcpy3DBatchAsync_v2", { .kind = CU_K_MEMCPY, ASYNC, .a_aux = 1, .a_stream = 4 } },

	/* Memsets: bytes = N << log2(element size). */
	{ "cuMemsetD8", { .kind = CU_K_MEMSET, RET, .a_handle = 1, .a_bytes = 3 } },
	{ "cuMemsetD8_v2", { .kind = CU_K_MEMSET, RET, .a_handle = 1, .a_bytes = 3 } },
	{ "cuMemsetD16",
	  { .kind = CU_K_MEMSET, RET, .a_handle = 1, .a_bytes = 3, .bytes_shift = 1 } },
	{ "cuMemsetD16_v2",
	  { .kind = CU_K_MEMSET, RET, .a_handle = 1, .a_bytes = 3, .bytes_shift = 1 } },
	{ "cuMemsetD32",
	  { .kind = CU_K_MEMSET, RET, .a_handle = 1, .a_bytes = 3, .bytes_shift = 2 } },
	{ "cuMemsetD32_v2",
	  { .kind = CU_K_MEMSET, RET, .a_handle = 1, .a_bytes = 3, .bytes_shift = 2 } },
	{ "cuMemsetD8Async",
	  { .kind = CU_K_MEMSET, ASYNC, .a_handle = 1, .a_bytes = 3, .a_stream = 4 } },
	{ "cuMemsetD16Async",
	  { .kind = CU_K_MEMSET,
	    ASYNC,
	    .a_handle = 1,
	    .a_bytes = 3,
	    .bytes_shift = 1,
	    .a_stream = 4 } },
	{ "cuMemsetD32Async",
	  { .kind = CU_K_MEMSET,
	    ASYNC,
	    .a_handle = 1,
	    .a_bytes = 3,
	    .bytes_shift = 2,
	    .a_stream = 4 } },
	{ "cuMemsetD2D8",
	  { .kind = CU_K_MEMSET, RET, .a_handle = 1, .a_bytes = 4, .a_bytes2 = 5 } },
	{ "cuMemsetD2D8_v2",
	  { .kind = CU_K_MEMSET, RET, .a_handle = 1, .a_bytes = 4, .a_bytes2 = 5 } },
	{ "cuMemsetD2D16",
	  { .kind = CU_K_MEMSET,
	    RET,
	    .a_handle = 1,
	    .a_bytes = 4,
	    .a_bytes2 = 5,
	    .bytes_shift = 1 } },
	{ "cuMemsetD2D16_v2",
	  { .kind = CU_K_MEMSET,
	    RET,
	    .a_handle = 1,
	    .a_bytes = 4,
	    .a_bytes2 = 5,
	    .bytes_shift = 1 } },
	{ "cuMemsetD2D32",
	  { .kind = CU_K_MEMSET,
	    RET,
	    .a_handle = 1,
	    .a_bytes = 4,
	    .a_bytes2 = 5,
	    .bytes_shift = 2 } },
	{ "cuMemsetD2D32_v2",
	  { .kind = CU_K_MEMSET,
	    RET,
	    .a_handle = 1,
	    .a_bytes = 4,
	    .a_bytes2 = 5,
	    .bytes_shift = 2 } },
	{ "cuMemsetD2D8Async",
	  { .kind = CU_K_MEMSET, ASYNC, .a_handle = 1, .a_bytes = 4, .a_bytes2 = 5, .a_stream = 6 } },
	{ "cuMemsetD2D16Async",
	  { .kind = CU_K_MEMSET,
	    ASYNC,
	    .a_handle = 1,
	    .a_bytes = 4,
	    .a_bytes2 = 5,
	    .bytes_shift = 1,
	    .a_stream = 6 } },
	{ "cuMemsetD2D32Async",
	  { .kind = CU_K_MEMSET,
	    ASYNC,
	    .a_handle = 1,
	    .a_bytes = 4,
	    .a_bytes2 = 5,
	    .bytes_shift = 2,
	    .a_stream = 6 } },

	/* Synchronization: the return is the completion evidence. */
	{ "cuStreamSynchronize", { .kind = CU_K_SYNC_STREAM, RET, .a_stream = 1 } },
	{ "cuEventSynchronize", { .kind = CU_K_SYNC_EVENT, RET, .a_handle = 1 } },
	{ "cuCtxSynchronize", { .kind = CU_K_SYNC_CTX, RET } },
	{ "cuCtxSynchronize_v2", { .kind = CU_K_SYNC_CTX, RET, .a_ctx = 1 } },

	/* Events and stream queries. */
	{ "cuEventRecord", { .kind = CU_K_EVENT_RECORD, .a_handle = 1, .a_stream = 2 } },
	{ "cuEventRecordWithFlags", { .kind = CU_K_EVENT_RECORD, .a_handle = 1, .a_stream = 2 } },
	{ "cuEventQuery", { .kind = CU_K_EVENT_QUERY, RET, .a_handle = 1 } },
	{ "cuStreamQuery", { .kind = CU_K_STREAM_QUERY, RET, .a_stream = 1 } },
	{ "cuStreamWaitEvent", { .kind = CU_K_STREAM_WAIT, .a_stream = 1, .a_handle = 2 } },
	/* Host functions and callbacks: entry only; the driver runs them on its own thread when
	 * the work before them is done, a completion signal (reports/analysis/gputime.c). */
	{ "cuLaunchHostFunc",
	  { .kind = CU_K_HOST_FUNC, .a_stream = 1, .a_handle = 2, .a_aux = 3 } },
	{ "cuStreamAddCallback",
	  { .kind = CU_K_HOST_FUNC, .a_stream = 1, .a_handle = 2, .a_aux = 3 } },

	/* Allocation and host registration: can synchronize or pin for long; handle at return. */
	{ "cuMemAlloc", { .kind = CU_K_ALLOC, RET, .a_out = 1, .a_bytes = 2 } },
	{ "cuMemAlloc_v2", { .kind = CU_K_ALLOC, RET, .a_out = 1, .a_bytes = 2 } },
	{ "cuMemAllocPitch", { .kind = CU_K_ALLOC, RET, .a_out = 1, .a_bytes = 3, .a_bytes2 = 4 } },
	{ "cuMemAllocPitch_v2",
	  { .kind = CU_K_ALLOC, RET, .a_out = 1, .a_bytes = 3, .a_bytes2 = 4 } },
	{ "cuMemAllocHost", { .kind = CU_K_ALLOC, RET, .a_out = 1, .a_bytes = 2 } },
	{ "cuMemAllocHost_v2", { .kind = CU_K_ALLOC, RET, .a_out = 1, .a_bytes = 2 } },
	{ "cuMemHostAlloc", { .kind = CU_K_ALLOC, RET, .a_out = 1, .a_bytes = 2 } },
	{ "cuMemAllocManaged", { .kind = CU_K_ALLOC, RET, .a_out = 1, .a_bytes = 2 } },
	{ "cuMemAllocAsync", { .kind = CU_K_ALLOC, RET, .a_out = 1, .a_bytes = 2, .a_stream = 3 } },
	{ "cuMemAllocFromPoolAsync",
	  { .kind = CU_K_ALLOC, RET, .a_out = 1, .a_bytes = 2, .a_aux = 3, .a_stream = 4 } },
	{ "cuMemFree", { .kind = CU_K_FREE, RET, .a_handle = 1 } },
	{ "cuMemFree_v2", { .kind = CU_K_FREE, RET, .a_handle = 1 } },
	{ "cuMemFreeHost", { .kind = CU_K_FREE, RET, .a_handle = 1 } },
	{ "cuMemFreeAsync", { .kind = CU_K_FREE, ASYNC, .a_handle = 1, .a_stream = 2 } },
	{ "cuMemHostRegister", { .kind = CU_K_HOST_REGISTER, RET, .a_handle = 1, .a_bytes = 2 } },
	{ "cuMemHostRegister_v2",
	  { .kind = CU_K_HOST_REGISTER, RET, .a_handle = 1, .a_bytes = 2 } },
	{ "cuMemHostUnregister", { .kind = CU_K_HOST_UNREGISTER, RET, .a_handle = 1 } },

	/* Contexts and streams: which device a stream's work runs on. */
	{ "cuCtxSetCurrent", { .kind = CU_K_CTX_SET, .a_ctx = 1 } },
	{ "cuCtxPushCurrent", { .kind = CU_K_CTX_PUSH, .a_ctx = 1 } },
	{ "cuCtxPushCurrent_v2", { .kind = CU_K_CTX_PUSH, .a_ctx = 1 } },
	{ "cuCtxPopCurrent", { .kind = CU_K_CTX_POP } },
	{ "cuCtxPopCurrent_v2", { .kind = CU_K_CTX_POP } },
	{ "cuDevicePrimaryCtxRetain", { .kind = CU_K_CTX_CREATE, RET, .a_out = 1, .a_aux = 2 } },
	{ "cuCtxCreate", { .kind = CU_K_CTX_CREATE, RET, .a_out = 1, .a_aux = 3 } },
	{ "cuCtxCreate_v2", { .kind = CU_K_CTX_CREATE, RET, .a_out = 1, .a_aux = 3 } },
	{ "cuCtxCreate_v3", { .kind = CU_K_CTX_CREATE, RET, .a_out = 1, .a_aux = 5 } },
	{ "cuCtxCreate_v4", { .kind = CU_K_CTX_CREATE, RET, .a_out = 1, .a_aux = 4 } },
	{ "cuStreamCreate", { .kind = CU_K_STREAM_CREATE, RET, .a_out = 1, .a_aux = 2 } },
	{ "cuStreamCreateWithPriority",
	  { .kind = CU_K_STREAM_CREATE, RET, .a_out = 1, .a_aux = 2 } },

	/* Stream capture: launches between begin and end build a graph and do not run. */
	{ "cuStreamBeginCapture", { .kind = CU_K_CAPTURE_BEGIN, .a_stream = 1 } },
	{ "cuStreamBeginCapture_v2", { .kind = CU_K_CAPTURE_BEGIN, .a_stream = 1 } },
	{ "cuStreamBeginCaptureToGraph", { .kind = CU_K_CAPTURE_BEGIN, .a_stream = 1 } },
	{ "cuStreamEndCapture", { .kind = CU_K_CAPTURE_END, .a_stream = 1 } },

	/* Kernel handles, so that launches carry the kernel's name. */
	{ "cuModuleGetFunction",
	  { .kind = CU_K_GET_FUNCTION, RET, .a_out = 1, .a_aux = 2, .a_name = 3 } },
	{ "cuLibraryGetKernel",
	  { .kind = CU_K_GET_KERNEL, RET, .a_out = 1, .a_aux = 2, .a_name = 3 } },
	{ "cuKernelGetFunction", { .kind = CU_K_KERNEL_FUNCTION, RET, .a_out = 1, .a_aux = 2 } },
	/* Their end: the handles they gave may be handed out again for other kernels. */
	{ "cuModuleUnload", { .kind = CU_K_UNLOAD, RET, .a_handle = 1 } },
	{ "cuLibraryUnload", { .kind = CU_K_UNLOAD, RET, .a_handle = 1 } },
};

static const struct cu_fn *find(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (strlen(fns[i].name) == len && !strncmp(fns[i].name, name, len))
			return &fns[i];
	return NULL;
}

static size_t strip_suffix(const char *name, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	if (len > n && !strncmp(name + len - n, suffix, n))
		return len - n;
	return len;
}

bool cuda_fns__lookup(const char *sym, struct cu_fn_desc *d)
{
	size_t len = strlen(sym), base;
	const struct cu_fn *f;

	/* Not the driver's: a stand-in's word that the calling thread stands for a device. */
	if (!strcmp(sym, GAPSCOPE_DEVICE_THREAD_SYM)) {
		*d = (struct cu_fn_desc){ .kind = CU_K_DEVICE_THREAD, .a_aux = 1 };
		return true;
	}
	if (strncmp(sym, "cu", 2))
		return false;
	/* Per-thread default stream twins take the same arguments as their base. */
	len = strip_suffix(sym, len, "_ptsz");
	len = strip_suffix(sym, len, "_ptds");
	f = find(sym, len);
	if (f) {
		*d = f->d;
		return true;
	}
	/* An unknown version (_vN) of a known family: time it, decode nothing. */
	base = len;
	while (base > 2 && sym[base - 1] >= '0' && sym[base - 1] <= '9')
		base--;
	if (base == len || base < 3 || strncmp(sym + base - 2, "_v", 2))
		return false;
	f = find(sym, base - 2);
	if (!f)
		return false;
	memset(d, 0, sizeof(*d));
	d->kind = f->d.kind;
	d->flags = f->d.flags & (CU_F_RET | CU_F_ASYNC);
	if (f->d.a_name) /* a name lookup without its name argument is useless */
		return false;
	return true;
}
