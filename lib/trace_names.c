// SPDX-License-Identifier: GPL-2.0
/* Names of the trace's kinds and types, for the readers' text outputs. */
#include <stddef.h>

#include "cuda.h"
#include "trace.h"

const char *trace__cu_kind_name(__u32 kind)
{
	static const char *const names[CU_K_MAX] = {
		[CU_K_LAUNCH] = "launch",
		[CU_K_GRAPH_LAUNCH] = "graph_launch",
		[CU_K_MEMCPY] = "memcpy",
		[CU_K_MEMSET] = "memset",
		[CU_K_SYNC_STREAM] = "sync_stream",
		[CU_K_SYNC_EVENT] = "sync_event",
		[CU_K_SYNC_CTX] = "sync_ctx",
		[CU_K_EVENT_RECORD] = "event_record",
		[CU_K_EVENT_QUERY] = "event_query",
		[CU_K_STREAM_QUERY] = "stream_query",
		[CU_K_STREAM_WAIT] = "stream_wait",
		[CU_K_ALLOC] = "alloc",
		[CU_K_FREE] = "free",
		[CU_K_HOST_REGISTER] = "host_register",
		[CU_K_HOST_UNREGISTER] = "host_unregister",
		[CU_K_CTX_SET] = "ctx_set",
		[CU_K_CTX_PUSH] = "ctx_push",
		[CU_K_CTX_POP] = "ctx_pop",
		[CU_K_CTX_CREATE] = "ctx_create",
		[CU_K_STREAM_CREATE] = "stream_create",
		[CU_K_GET_FUNCTION] = "get_function",
		[CU_K_GET_KERNEL] = "get_kernel",
		[CU_K_KERNEL_FUNCTION] = "kernel_function",
		[CU_K_CAPTURE_BEGIN] = "capture_begin",
		[CU_K_CAPTURE_END] = "capture_end",
		[CU_K_UNLOAD] = "unload",
		[CU_K_HOST_FUNC] = "host_func",
		[CU_K_DEVICE_THREAD] = "device_thread",
	};

	return kind < CU_K_MAX && names[kind] ? names[kind] : "cuda";
}

const char *trace__event_name(__u32 type)
{
	static const char *const names[GS_EV_MAX] = {
		[GS_EV_CUDA] = "cuda",
		[GS_EV_CU_NAME] = "cu_name",
		[GS_EV_FUTEX] = "futex",
		[GS_EV_OFFCPU] = "offcpu",
		[GS_EV_SAMPLE] = "sample",
		[GS_EV_PROBE] = "probe",
		[GS_EV_FORK] = "fork",
		[GS_EV_EXIT] = "exit",
		[GS_EV_COMM] = "comm",
		[GS_EV_EXEC] = "exec",
		[GS_EV_MMAP] = "mmap",
		[GS_EV_LOCK] = "lock",
		[GS_EV_USTACK_SNAP] = "ustack_snap",
		[GS_EV_PYSTACK] = "pystack",
	};

	return type < GS_EV_MAX && names[type] ? names[type] : "other";
}

const char *trace__gpu_act_kind_name(__u32 kind)
{
	static const char *const names[GS_ACT_KIND_MAX] = {
		[GS_ACT_KERNEL] = "kernel",   [GS_ACT_MEMCPY] = "memcpy",
		[GS_ACT_MEMSET] = "memset",   [GS_ACT_LAUNCH] = "launch",
		[GS_ACT_NAME] = "name",	      [GS_ACT_STATUS] = "status",
		[GS_ACT_DROPPED] = "dropped",
	};

	return kind < GS_ACT_KIND_MAX && names[kind] ? names[kind] : "?";
}

const char *trace__probe_family_name(__u32 family)
{
	switch (family) {
	case GS_PROBE_CUDA:
		return "cuda";
	case GS_PROBE_LIBC:
		return "libc";
	case GS_PROBE_KERNEL:
		return "kernel";
	case GS_PROBE_LOCK:
		return "lock";
	case GS_PROBE_TASK:
		return "task";
	case GS_PROBE_HOST_FN:
		return "host_fn";
	default:
		return "user";
	}
}
