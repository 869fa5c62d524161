/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The golden trace's generator (report_gen.c writes the records, report_program.c says what the
 * program does): its fixed times, threads, addresses and probe ids.
 */
#ifndef GAPSCOPE_REPORT_GEN_H
#define GAPSCOPE_REPORT_GEN_H

#include <stdbool.h>

#include "cuda.h"
#include "futex.h"
#include "offcpu.h"
#include "probe.h"
#include "proc.h"
#include "sample.h"
#include "trace.h"

#define US	     1000ull
#define MS	     (1000 * US)
#define T0	     (4242ull * 1000 * MS)	 /* CLOCK_MONOTONIC of the recording's start */
#define AT(ms_x1000) (T0 + (__u64)(ms_x1000)*US) /* AT(130000): 130.000 ms in */

#define PID	  31000
#define TID_MAIN  31000
#define TID_W0	  31001
#define TID_W1	  31002
#define TID_FIN	  31003
#define TID_DEV_A 31004 /* simcuda's stream thread of gpu-worker-0's stream */
#define TID_DEV_B 31005

#define SYS_FUTEX	    202
#define SYS_CLOCK_NANOSLEEP 230
#define FUTEX_WAIT	    0
#define FUTEX_WAIT_BITSET   9

/* Mappings: paths that exist on no machine, so names are module+offset everywhere. */
#define EXE	0x55d0c8a00000ull /* zkengine: file offset = address - EXE */
#define LIBC	0x7f3c6a000000ull /* libc.so.6: file offset = address - LIBC */
#define LIBCUDA 0x7f3c69e00000ull /* libcuda.so.1 (simcuda) */
#define VDSO	0x7ffd3b5fe000ull
#define KTEXT	0xffffffff81000000ull

#define TRACKER_LOCK   (EXE + 0x21040)	 /* static pthread_mutex_t in .bss */
#define GPU_QUEUE_COND (EXE + 0x21180)	 /* the GPU queue's condition variable */
#define RESULT_COND    (EXE + 0x211c0)	 /* the finalizers' queue */
#define STREAM_A_COND  0x55d0ca1f32c8ull /* simcuda's per-stream condition (heap) */
#define STREAM_B_COND  0x55d0ca1f3ac8ull

#define CTX	 0x55d0ca1e0010ull
#define STREAM_A 0x55d0ca1f3200ull
#define STREAM_B 0x55d0ca1f3a00ull
#define MODULE	 0x55d0ca1e8800ull
#define FN_MSM	 0x55d0ca1e9100ull
#define FN_NTT	 0x55d0ca1e9180ull

/* Return addresses in the engine (file offsets 0x4a10.. are its functions). */
#define X_CLONE3	(LIBC + 0x126854)  /* clone3+0x34: the outermost frame of a thread */
#define X_START_THREAD	(LIBC + 0x94ac3)   /* start_thread+0x2e3 */
#define X_WORKER_MAIN	(EXE + 0x4a6f)	   /* gpu_worker_main -> prove_start */
#define X_PROVE_LAUNCH	(EXE + 0x4d12)	   /* prove_start -> cuLaunchKernel */
#define X_PROVE_COPY	(EXE + 0x4cf0)	   /* prove_start -> cuMemcpyHtoDAsync_v2 */
#define X_PROVE_SYNC	(EXE + 0x4d58)	   /* prove_start -> cuStreamSynchronize */
#define X_PROVE_TRACK	(EXE + 0x4d9b)	   /* prove_start -> tracker_update */
#define X_PROVE_PREP	(EXE + 0x4ca1)	   /* prove_start -> msm_prepare */
#define X_TRACK_LOCK	(EXE + 0x5233)	   /* tracker_update -> pthread_mutex_lock */
#define X_QUEUE_WAIT	(EXE + 0x8843)	   /* gpu_queue_pop -> pthread_cond_wait */
#define X_WORKER_POP	(EXE + 0x4a3b)	   /* gpu_worker_main -> gpu_queue_pop */
#define X_FIN_MAIN	(EXE + 0x7355)	   /* finalizer_main -> process_partition_result */
#define X_FIN_POP	(EXE + 0x7321)	   /* finalizer_main -> result_queue_pop */
#define X_RESULT_WAIT	(EXE + 0x7a13)	   /* result_queue_pop -> pthread_cond_wait */
#define X_PROCESS_TRIM	(EXE + 0x75c8)	   /* process_partition_result -> malloc_trim */
#define X_MAIN_INIT	(EXE + 0x8120)	   /* main -> gpu_init */
#define X_INIT_CTX	(EXE + 0x3e40)	   /* gpu_init -> cuCtxCreate_v2 */
#define X_WORKER_CTX	(EXE + 0x4a21)	   /* gpu_worker_main -> cuCtxSetCurrent */
#define X_WORKER_STREAM (EXE + 0x4a30)	   /* gpu_worker_main -> cuStreamCreate */
#define X_LIBC_START	(LIBC + 0x2a1ca)   /* __libc_start_call_main */
#define X_MUTEX_LOCK	(LIBC + 0x9f2f4)   /* pthread_mutex_lock -> __lll_lock_wait */
#define X_LLL_WAIT	(LIBC + 0x98b2d)   /* __lll_lock_wait: after its futex syscall */
#define X_COND_WAIT	(LIBC + 0x93f1a)   /* pthread_cond_wait -> __futex_abstimed_wait */
#define X_FUTEX_WAIT	(LIBC + 0x91c39)   /* __futex_abstimed_wait_common: syscall */
#define X_MTRIM		(LIBC + 0xa5b47)   /* mtrim, inside malloc_trim */
#define X_MALLOC_TRIM	(LIBC + 0xa5d8e)   /* malloc_trim -> mtrim */
#define X_MADVISE	(LIBC + 0x11eb4b)  /* madvise: after its syscall */
#define X_SIM_SYNC	(LIBCUDA + 0x33c7) /* cuStreamSynchronize -> pthread_cond_wait */
#define X_SIM_WORKER	(LIBCUDA + 0x3512) /* stream_worker -> gapscope_device_thread */

/* Probe ids, as the recorder numbers them: tracepoints, then malloc_trim, then CUDA. */
enum {
	P_FORK,
	P_EXIT,
	P_RENAME,
	P_EXEC,
	P_SYS_ENTER,
	P_SYS_ENTER2,
	P_SYS_EXIT,
	P_SYS_EXIT2,
	P_SWITCH,
	P_WAKING,
	P_TICK,
	P_MALLOC_TRIM,
	P_CTX_CREATE,
	P_CTX_SET,
	P_STREAM_CREATE,
	P_GET_FUNCTION,
	P_LAUNCH,
	P_COPY_ASYNC,
	P_SYNC_STREAM,
	P_DEVICE_THREAD, /* simcuda's gapscope_device_thread: its stream threads stand for device 0 */
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* The events (report_gen.c), kept until main() writes them in the order they ended. */
void ev_comm(__u32 tid, __u64 ts);
void ev_fork(__u32 parent, __u32 child, __u64 ts);
void ev_exec(__u64 ts);
void ev_exit(__u32 tid, __u64 ts, bool group_dead);
void ev_cuda(__u32 tid, __u64 ts, __u64 dur, __u32 fn, __u32 kind, __u64 caller, const __u64 *u,
	     unsigned int nu);
struct cu_event *last_cuda(void);
void ev_cu_name(__u32 tid, __u64 ts, __u64 dur, __u64 handle, const char *name);
void ev_futex(__u32 tid, __u64 ts, __u64 dur, __u64 uaddr, __u32 op, __u32 val, __u32 owner,
	      const __u64 *u, unsigned int nu);
struct offcpu_event *ev_off(__u32 tid, __u64 ts, __u64 end, bool blocked, int syscall, __u32 waker,
			    __u64 wake, const __u64 *k, unsigned int nk);
void ev_sample(__u32 tid, __u64 ts, const __u64 *u, unsigned int nu, const __u64 *k,
	       unsigned int nk);
void ev_probe(__u32 tid, __u64 ts, __u64 dur, __u32 id, __u64 arg0, __u64 ret, const __u64 *u,
	      unsigned int nu);

/* The program's events (report_program.c). */
void program(void);

#endif
