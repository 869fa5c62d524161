/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CUDA driver API probes: one entry program (and one return program) attached to every probed
 * cu* symbol; the uprobe cookie is the probe id, which indexes cu_fns, the per-symbol description
 * of where the call carries its stream, context, bytes, grid and handles.
 */
#ifndef GAPSCOPE_CUDA_H
#define GAPSCOPE_CUDA_H

#include "gapscope.h"

#define CU_MAX_FNS  1024
#define CU_NAME_LEN 256

enum cu_kind {
	CU_K_LAUNCH = 1,   /* handle = CUfunction (or CUkernel) */
	CU_K_GRAPH_LAUNCH, /* handle = CUgraphExec */
	CU_K_MEMCPY,
	CU_K_MEMSET,
	CU_K_SYNC_STREAM,
	CU_K_SYNC_EVENT, /* handle = CUevent */
	CU_K_SYNC_CTX,
	CU_K_EVENT_RECORD, /* handle = CUevent */
	CU_K_EVENT_QUERY,  /* handle = CUevent, ret: 0 done, 600 not ready */
	CU_K_STREAM_QUERY,
	CU_K_STREAM_WAIT,   /* handle = CUevent */
	CU_K_ALLOC,	    /* handle = returned pointer */
	CU_K_FREE,	    /* handle = pointer */
	CU_K_HOST_REGISTER, /* handle = host pointer */
	CU_K_HOST_UNREGISTER,
	CU_K_CTX_SET, /* ctx */
	CU_K_CTX_PUSH,
	CU_K_CTX_POP,
	CU_K_CTX_CREATE,      /* ctx = returned context, aux = device */
	CU_K_STREAM_CREATE,   /* stream = returned stream, aux = flags (1: non-blocking) */
	CU_K_GET_FUNCTION,    /* cu_name_event: handle = CUfunction */
	CU_K_GET_KERNEL,      /* cu_name_event: handle = CUkernel */
	CU_K_KERNEL_FUNCTION, /* handle = returned CUfunction, aux = CUkernel */
	CU_K_CAPTURE_BEGIN,   /* stream: launches into it are recorded into a graph, not run */
	CU_K_CAPTURE_END,     /* stream */
	CU_K_UNLOAD,	      /* handle = CUmodule / CUlibrary freed, with its kernel handles */
	CU_K_HOST_FUNC,	      /* stream, handle = the host function, aux = its argument: it runs
			       * on a driver thread once the work queued before it is done */
	CU_K_DEVICE_THREAD,   /* aux = a device's ordinal: the calling thread stands for that
			       * device (GAPSCOPE_DEVICE_THREAD_SYM, below) */
	CU_K_MAX
};

/*
 * A stand-in for the CUDA driver (a simulator, a test double) whose own threads stand for its
 * devices says so: its libcuda exports this function, void GAPSCOPE_DEVICE_THREAD_SYM(int
 * ordinal), doing nothing and not inlined, and each such thread calls it when it starts and again
 * before each wakeup it makes of the process's other threads (so that a recording attached later
 * learns of it too). The recorder probes it with the library's CUDA functions (cuda_fns.c); the
 * BPF side writes the first call of a thread, and one a second at most after that
 * (CU_DEVICE_THREAD_REMARK_NS), as a cu_event of kind CU_K_DEVICE_THREAD. The report takes that
 * thread's wakeups of its process's other threads for the device's interrupt, and its own waits
 * for no host thread's (reports/analysis/feed.c).
 */
#define GAPSCOPE_DEVICE_THREAD_SYM "gapscope_device_thread"
#define CU_DEVICE_THREAD_REMARK_NS 1000000000ull

/* How to find the interesting values among a call's arguments. */
enum cu_layout {
	CU_L_ARGS = 0,	/* a_* argument indices below */
	CU_L_LAUNCH_EX, /* arg1 = const CUlaunchConfig *, arg2 = CUfunction */
	CU_L_MEMCPY2D,	/* arg1 = const CUDA_MEMCPY2D * (_v2 layout, 64-bit fields) */
};

#define CU_F_RET   (1u << 0) /* also a return probe: duration, return value, out handle */
#define CU_F_ASYNC (1u << 1) /* asynchronous variant (memcpy/memset) */

/* Argument indices are 1-based; 0 means "not carried". */
struct cu_fn_desc {
	__u8 kind;
	__u8 layout;
	__u8 flags;
	__u8 a_handle; /* function, event, graph exec, pointer */
	__u8 a_stream;
	__u8 a_ctx;
	__u8 a_bytes;
	__u8 a_bytes2;	  /* multiplied with a_bytes (2-D memset height) */
	__u8 bytes_shift; /* element size: bytes << shift */
	__u8 a_grid;	  /* first of gridX, gridY, gridZ, blockX, blockY, blockZ, sharedMem */
	__u8 a_out;	  /* pointer the call writes a handle to */
	__u8 a_name;	  /* const char *name */
	__u8 a_aux;	  /* second handle: kernel, device, waited event */
	__u8 lib;	  /* which attached libcuda (index into cu_libs, < CU_MAX_LIBS) */
	__u8 pad[2];
};

struct cu_event {
	struct gs_hdr h;
	__u32 fn; /* probe id (GS_REC_PROBE names the symbol) */
	__u32 kind;
	__u64 caller; /* return address into the caller, read at entry */
	__u64 dur_ns; /* entry to return when GS_F_RET */
	__u64 handle;
	__u64 stream;
	__u64 ctx;
	__u64 bytes;
	__u64 aux;
	__u32 grid[3];
	__u32 block[3];
	__u32 shmem;
	__s32 ret; /* CUresult when GS_F_RET */
};

/* Kernel-handle lookups: cuModuleGetFunction / cuLibraryGetKernel, name read at entry. */
struct cu_name_event {
	struct gs_hdr h;
	__u32 fn;
	__u32 kind;
	__u64 handle; /* returned CUfunction / CUkernel */
	__u64 owner;  /* CUmodule / CUlibrary */
	__u64 dur_ns;
	__s32 ret;
	__u32 pad;
	char name[CU_NAME_LEN];
};

/*
 * Naming a kernel from its handle, for handles whose lookup ran before the probes were live
 * (record -p). Driver 580 keeps the kernel's name at *(const char **)(handle + 8) for a CUfunction
 * (cuModuleGetFunction, cuKernelGetFunction) and a CUkernel (cuLibraryGetKernel), as seen on an
 * H200 (tests/gpu/progs/handle_layout.c). That is no ABI: the BPF side checks it against every
 * lookup it does see (calibration) and stops reading handles of a library as soon as one
 * disagrees; a name read from a handle is accepted only if it looks like a symbol.
 */
#define CU_HANDLE_NAME_OFF 8
#define CU_MAX_LIBS	   16

/* gs_hdr flags of cu_name_event (and of the cu_event of cuKernelGetFunction). */
#define CU_NF_BY_HANDLE	   (1u << 8)  /* name read from *(handle + 8), not from a lookup */
#define CU_NF_CAL_AGREE	   (1u << 9)  /* a lookup's name equals *(handle + 8) */
#define CU_NF_CAL_DISAGREE (1u << 10) /* it does not: handles of this library stay unnamed */

/*
 * Launches decided in the kernel (cuda.bpf.c): a launch is streamed when it can matter to a gap,
 * the first on its thread and stream since the target's last other CUDA call; every launch is
 * counted in cu_launch_counts, which the recorder writes into the trace (GS_REC_LAUNCHES).
 * gs_hdr flags of a launch's cu_event and of an async copy's:
 */
#define CU_LF_EXTRA \
	(1u << 11) /* --all-launches: a launch (or async memset) the default leaves out */
/* An async copy (entry only) whose stream had launches since its last streamed one: dur_ns is
 * how long before the copy the last of them was made (the copy model's floor, gputime.c). */
#define CU_EF_PRIOR_LAUNCH (1u << 12)

/*
 * A count of cu_launch_counts: launches, and async memsets (kind CU_K_MEMSET), which the report
 * takes for neither work nor evidence and the default trace leaves out (cuBLAS puts one before
 * each of its launches). Trace version 4 wrote kind 0 for launches.
 */
struct cu_launch_key {
	__u32 tgid;
	__u32 fn;   /* probe id */
	__u32 gen;  /* the process's unload generation: a handle names one kernel per generation */
	__u32 kind; /* CU_K_LAUNCH, CU_K_GRAPH_LAUNCH or CU_K_MEMSET (0: a launch, version 4) */
	__u64 stream;
	__u64 handle;
};

#define CU_MAX_LAUNCH_KEYS 16384

/*
 * The host's time between a thread's consecutive launches, counted in its launch cache: bucket 0
 * under 1 us, then two a power of two of microseconds ([2^k, 1.5 * 2^k) and [1.5 * 2^k, 2^(k+1))
 * us), the last 2^19 us (0.52 s) and over. Folded into cu_launch_ivals by thread at its exit and
 * at the end; written with the launch counts (GS_REC_LAUNCH_IVALS). The report takes p50 and
 * p99 from it: launches left out of the trace are in it.
 */
#define CU_IVAL_BUCKETS	    40
#define CU_MAX_IVAL_THREADS 8192

struct cu_launch_ival {
	__u32 tgid; /* 0: no launch yet */
	__u32 pad;
	__u32 n[CU_IVAL_BUCKETS];
};

/* The bucket of ns: branches only, no loop (the launch probe's hot path). */
static inline __u32 cu_ival_bucket(__u64 ns)
{
	__u64 us = ns / 1000;
	__u32 k = 0;

	if (!us)
		return 0;
	if (us >> 16) {
		us >>= 16;
		k += 16;
	}
	if (us >> 8) {
		us >>= 8;
		k += 8;
	}
	if (us >> 4) {
		us >>= 4;
		k += 4;
	}
	if (us >> 2) {
		us >>= 2;
		k += 2;
	}
	if (us >> 1) {
		us >>= 1;
		k += 1;
	}
	/* k = floor(log2(us)); in half microseconds the bit below the top picks the half */
	k = 1 + 2 * k + (__u32)((ns / 500) >> k & 1);
	return k < CU_IVAL_BUCKETS ? k : CU_IVAL_BUCKETS - 1;
}

/* The least ns bucket b holds (b >= 1); 0 for bucket 0. */
static inline __u64 cu_ival_lo_ns(__u32 b)
{
	__u32 k = (b - 1) / 2;

	if (!b)
		return 0;
	return ((2ull << k) + ((b - 1) % 2 ? 1ull << k : 0)) * 500;
}

/* Per attached libcuda, in the cu_libs map; summed into the trace (GS_REC_CU_HANDLES). */
struct cu_handle_stats {
	__u64 agree;	/* lookups whose name *(handle + 8) confirmed */
	__u64 disagree; /* lookups whose name it contradicted (or that had none there) */
	__u64 named;	/* handles named by reading *(handle + 8) */
	__u64 rejected; /* handles whose *(handle + 8) was unreadable or no symbol-like name */
	__u32 off;	/* set at the first disagreement: no more names from handles */
	__u32 pad;
};

#endif
