// SPDX-License-Identifier: GPL-2.0
/*
 * What the golden trace's program does (report_gen.c has the story of its gaps): start-up, the
 * GPU workers' batches and synchronizes, the finalizer's trim under the tracker lock, the exit.
 */
#include "report_gen.h"

/* ---- the program --------------------------------------------------------------------------- */

static __u64 stream_of(__u32 tid)
{
	return tid == TID_W0 ? STREAM_A : STREAM_B;
}

/* An upload and n kernels on the worker's stream, from t. */
static void submit(__u32 tid, __u64 t, int n)
{
	__u64 u[] = { LIBCUDA + 0x3350, X_WORKER_MAIN, X_START_THREAD, X_CLONE3 };
	__u64 uc[] = { LIBCUDA + 0x33d0, X_WORKER_MAIN, X_START_THREAD, X_CLONE3 };

	ev_cuda(tid, t, 0, P_COPY_ASYNC, CU_K_MEMCPY, X_PROVE_COPY, uc, N(uc));
	last_cuda()->stream = stream_of(tid);
	last_cuda()->bytes = 1 << 20;
	for (int i = 0; i < n; i++) {
		struct cu_event *e;

		ev_cuda(tid, t + (i + 1) * 6 * US, 0, P_LAUNCH, CU_K_LAUNCH, X_PROVE_LAUNCH, u,
			N(u));
		e = last_cuda();
		e->stream = stream_of(tid);
		e->handle = i % 2 ? FN_NTT : FN_MSM;
		e->grid[0] = 256;
		e->grid[1] = e->grid[2] = 1;
		e->block[0] = 256;
		e->block[1] = e->block[2] = 1;
	}
}

/*
 * cuStreamSynchronize from t: simcuda waits on the stream's condition until its stream thread,
 * done with the work at done, wakes it; it runs again 8 us later and returns 14 us after done.
 */
static void synchronize(__u32 tid, __u64 t, __u64 done)
{
	__u64 fu[] = { X_FUTEX_WAIT,  X_COND_WAIT,    X_SIM_SYNC, X_PROVE_SYNC,
		       X_WORKER_MAIN, X_START_THREAD, X_CLONE3 };
	__u64 ru[] = { X_PROVE_SYNC, X_WORKER_MAIN, X_START_THREAD, X_CLONE3 };
	__u32 dev = tid == TID_W0 ? TID_DEV_A : TID_DEV_B;
	__u64 cond = tid == TID_W0 ? STREAM_A_COND : STREAM_B_COND;

	ev_off(tid, t + 4 * US, done + 8 * US, true, SYS_FUTEX, dev, done, NULL, 0);
	ev_futex(tid, t + 2 * US, done + 11 * US - (t + 2 * US), cond, FUTEX_WAIT_BITSET,
		 (__u32)((t - T0) / MS), 0, fu, N(fu));
	ev_cuda(tid, t, done + 14 * US - t, P_SYNC_STREAM, CU_K_SYNC_STREAM, X_PROVE_SYNC, ru,
		N(ru));
	last_cuda()->stream = stream_of(tid);
}

/* simcuda's stream thread tid says, as it starts, that it stands for device 0 (no stack). */
static void device_thread(__u32 tid, __u64 t)
{
	ev_cuda(tid, t, 0, P_DEVICE_THREAD, CU_K_DEVICE_THREAD, X_SIM_WORKER, NULL, 0);
	last_cuda()->h.flags &= ~GS_F_ENTRY_STACK;
	last_cuda()->aux = 0;
}

/* A condition wait in the program (a queue) from t, woken by waker at wake. */
static void cond_wait(__u32 tid, __u64 t, __u64 wake, __u32 waker, __u64 cond, __u64 x_pop,
		      __u64 x_wait)
{
	__u64 fu[] = { X_FUTEX_WAIT, X_COND_WAIT, x_wait, x_pop, X_START_THREAD, X_CLONE3 };

	ev_off(tid, t + 3 * US, wake + 9 * US, true, SYS_FUTEX, waker, wake, NULL, 0);
	ev_futex(tid, t, wake + 12 * US - t, cond, FUTEX_WAIT_BITSET, 2, 0, fu, N(fu));
}

/* Tick samples of tid every 4 ms from first to last, stack u (leaf first). */
static void samples(__u32 tid, __u64 first, __u64 last, const __u64 *u, unsigned int nu)
{
	for (__u64 t = first; t <= last; t += 4 * MS)
		ev_sample(tid, t, u, nu, NULL, 0);
}

void program(void)
{
	/* Start-up: the main thread makes the context and looks its kernels up. */
	__u64 u_init[] = { X_INIT_CTX, X_MAIN_INIT, X_LIBC_START };
	__u64 u_ctx[] = { LIBCUDA + 0x3090, X_START_THREAD, X_CLONE3 };
	__u64 u_stream[] = { X_WORKER_STREAM, X_START_THREAD, X_CLONE3 };
	/* gpu-worker-0 and -1 preparing a batch on the CPU (msm_prepare; memmove in it). */
	__u64 u_prep[] = { EXE + 0x6144, X_PROVE_PREP, X_WORKER_MAIN, X_START_THREAD, X_CLONE3 };
	__u64 u_prep_copy[] = { LIBC + 0x1a0c3e, EXE + 0x61b7,	 X_PROVE_PREP,
				X_WORKER_MAIN,	 X_START_THREAD, X_CLONE3 };
	/* finalizer-0 in malloc_trim: walking the heap, and returning pages (madvise). */
	__u64 u_trim[] = { X_MTRIM,    X_MALLOC_TRIM,  X_PROCESS_TRIM,
			   X_FIN_MAIN, X_START_THREAD, X_CLONE3 };
	__u64 u_madv[] = { X_MADVISE,  X_MTRIM,	       X_MALLOC_TRIM, X_PROCESS_TRIM,
			   X_FIN_MAIN, X_START_THREAD, X_CLONE3 };
	__u64 k_madv[] = { KTEXT + 0x02f9f3a, KTEXT + 0x02fa9d1, KTEXT + 0x02fb5e2,
			   KTEXT + 0x02fbeb8, KTEXT + 0x0323c41, KTEXT + 0x0324a17,
			   KTEXT + 0x0324c4d, KTEXT + 0x11ed4f1, KTEXT + 0x0000130 };
	__u64 u_trim_ret[] = { X_PROCESS_TRIM, X_FIN_MAIN, X_START_THREAD, X_CLONE3 };
	/* gpu-worker-0 waiting for the tracker lock: __lll_lock_wait <- pthread_mutex_lock. */
	__u64 u_lock[] = { X_LLL_WAIT,	  X_MUTEX_LOCK,	  X_TRACK_LOCK, X_PROVE_TRACK,
			   X_WORKER_MAIN, X_START_THREAD, X_CLONE3 };
	/* clock_nanosleep's sleep, innermost first, as sched_switch's task stack has it. */
	__u64 k_sleep[] = { KTEXT + 0x0f8a8f4, KTEXT + 0x0f8b0a1, KTEXT + 0x0f91e2d,
			    KTEXT + 0x0429af6, KTEXT + 0x0431cb5, KTEXT + 0x0431f8a,
			    KTEXT + 0x11ed4f1, KTEXT + 0x0000130 };

	ev_exec(AT(120));
	ev_cuda(TID_MAIN, AT(20000), 40 * MS, P_CTX_CREATE, CU_K_CTX_CREATE, X_INIT_CTX, u_init,
		N(u_init));
	last_cuda()->ctx = CTX;
	last_cuda()->aux = 0; /* device 0 */
	ev_cu_name(TID_MAIN, AT(60100), 180 * US, FN_MSM, "msm_bucket_kernel");
	ev_cu_name(TID_MAIN, AT(60300), 25 * US, FN_NTT, "ntt_radix2_kernel");

	/* The threads: two GPU workers, a finalizer; the workers' streams start simcuda threads. */
	ev_fork(TID_MAIN, TID_W0, AT(61000));
	ev_fork(TID_MAIN, TID_W1, AT(61100));
	ev_fork(TID_MAIN, TID_FIN, AT(61200));
	ev_cuda(TID_W0, AT(61500), 0, P_CTX_SET, CU_K_CTX_SET, X_WORKER_CTX, u_ctx, N(u_ctx));
	last_cuda()->ctx = CTX;
	ev_cuda(TID_W1, AT(61520), 0, P_CTX_SET, CU_K_CTX_SET, X_WORKER_CTX, u_ctx, N(u_ctx));
	last_cuda()->ctx = CTX;
	ev_cuda(TID_W0, AT(61600), 400 * US, P_STREAM_CREATE, CU_K_STREAM_CREATE, X_WORKER_STREAM,
		u_stream, N(u_stream));
	last_cuda()->stream = STREAM_A;
	ev_fork(TID_W0, TID_DEV_A, AT(61700));
	device_thread(TID_DEV_A, AT(61740));
	ev_cuda(TID_W1, AT(61650), 420 * US, P_STREAM_CREATE, CU_K_STREAM_CREATE, X_WORKER_STREAM,
		u_stream, N(u_stream));
	last_cuda()->stream = STREAM_B;
	ev_fork(TID_W1, TID_DEV_B, AT(61800));
	device_thread(TID_DEV_B, AT(61840));

	/* The workers wait for their first partitions; the finalizer for a result. */
	cond_wait(TID_W0, AT(62200), AT(99900), TID_MAIN, GPU_QUEUE_COND, X_WORKER_POP,
		  X_QUEUE_WAIT);
	cond_wait(TID_W1, AT(62300), AT(106300), TID_MAIN, GPU_QUEUE_COND, X_WORKER_POP,
		  X_QUEUE_WAIT);
	cond_wait(TID_FIN, AT(62400), AT(112000), TID_W0, RESULT_COND, X_FIN_POP, X_RESULT_WAIT);

	/* Busy 100.0 -> 130.0 ms: gpu-worker-0's partition, then gpu-worker-1's after a 0.4 ms
	 * idle window (shorter than a gap). */
	submit(TID_W0, AT(100000), 4);
	synchronize(TID_W0, AT(100040), AT(106000));
	submit(TID_W1, AT(106400), 4);
	synchronize(TID_W1, AT(106440), AT(130000));
	samples(TID_W0, AT(108004), AT(112004), u_prep, N(u_prep));

	/*
	 * While gpu-worker-1's work runs (until 130.0 ms): the finalizer, handed a result at
	 * 112.0 ms, faults a page in and waits for mmap_lock (uninterruptible), which gpu-worker-1's
	 * stream thread lets go of at 112.29, running a kernel's CPU version; the finalizer then
	 * wakes gpu-worker-0 out of a condition wait (its acknowledgement) at 112.39, and goes back
	 * to waiting for results. The stream thread's wakeup is no news of the device: the device
	 * stays busy (a chain from it would say all work queued before 112.1 done at 112.3).
	 */
	ev_off(TID_FIN, AT(112050), AT(112300), true, OFFCPU_NO_SYSCALL, TID_DEV_B, AT(112290),
	       NULL, 0)
		->prev_state = 0x2; /* TASK_UNINTERRUPTIBLE */
	cond_wait(TID_W0, AT(112100), AT(112390), TID_FIN, RESULT_COND, X_WORKER_POP, X_QUEUE_WAIT);
	cond_wait(TID_FIN, AT(112450), AT(114800), TID_W0, RESULT_COND, X_FIN_POP, X_RESULT_WAIT);

	/*
	 * finalizer-0 takes the tracker lock (uncontended: no event) at 114.90 ms and trims the
	 * heap under it until 157.95; gpu-worker-0 waits for the lock from 115.055 ms (the futex
	 * event names the owner) and is woken by the unlock at 157.965 ms.
	 */
	for (__u64 t = AT(116004); t <= AT(156004); t += 4 * MS) {
		if ((t - AT(116004)) / (4 * MS) % 3 == 2)
			ev_sample(TID_FIN, t, u_madv, N(u_madv), k_madv, N(k_madv));
		else
			ev_sample(TID_FIN, t, u_trim, N(u_trim), NULL, 0);
	}
	ev_probe(TID_FIN, AT(114950), AT(157950) - AT(114950), P_MALLOC_TRIM, 0, 1, u_trim_ret,
		 N(u_trim_ret));
	ev_off(TID_W0, AT(115060), AT(157972), true, SYS_FUTEX, TID_FIN, AT(157965), NULL, 0);
	ev_futex(TID_W0, AT(115055), AT(157985) - AT(115055), TRACKER_LOCK, FUTEX_WAIT, 2, TID_FIN,
		 u_lock, N(u_lock));
	/* gpu-worker-1 is out of work meanwhile: the dispatcher hands it a partition at 160 ms. */
	cond_wait(TID_W1, AT(130050), AT(160000), TID_MAIN, GPU_QUEUE_COND, X_WORKER_POP,
		  X_QUEUE_WAIT);
	/* The finalizer waits for the next result until the end. */
	cond_wait(TID_FIN, AT(157990), AT(212000), TID_MAIN, RESULT_COND, X_FIN_POP, X_RESULT_WAIT);

	/* Gap 1 ends: gpu-worker-0 submits at 158.1 ms; busy until 175.0 (gpu-worker-1's). */
	submit(TID_W0, AT(158100), 4);
	synchronize(TID_W0, AT(158140), AT(170000));
	submit(TID_W1, AT(160200), 4);
	synchronize(TID_W1, AT(160240), AT(175000));

	/* gpu-worker-0 backs off in nanosleep from 170.1 to 181.99 ms (a timer wakes it). */
	ev_off(TID_W0, AT(170100), AT(182000), true, SYS_CLOCK_NANOSLEEP, 0, AT(181990), k_sleep,
	       N(k_sleep));
	/* Gap 2 ends at 182.1 ms: gpu-worker-0 submits; its work is done at 191.0. */
	submit(TID_W0, AT(182100), 4);
	synchronize(TID_W0, AT(182140), AT(191000));

	/*
	 * gpu-worker-1 prepares its next batch on the CPU from 175.05 to 203.0 ms: in gap 3, two
	 * samples in msm_prepare, one in the memmove it calls.
	 */
	samples(TID_W1, AT(176004), AT(192004), u_prep, N(u_prep));
	ev_sample(TID_W1, AT(196004), u_prep_copy, N(u_prep_copy), NULL, 0);
	ev_sample(TID_W1, AT(200004), u_prep, N(u_prep), NULL, 0);
	/* Gap 3 ends at 203.0 ms. */
	submit(TID_W1, AT(203000), 4);
	synchronize(TID_W1, AT(203040), AT(210000));

	/* Shutdown: the dispatcher wakes everyone at 212 ms; the threads exit. */
	cond_wait(TID_W0, AT(191100), AT(212000), TID_MAIN, GPU_QUEUE_COND, X_WORKER_POP,
		  X_QUEUE_WAIT);
	ev_exit(TID_W0, AT(212100), false);
	ev_exit(TID_W1, AT(212150), false);
	ev_exit(TID_FIN, AT(212200), false);
	ev_exit(TID_DEV_A, AT(212300), false);
	ev_exit(TID_DEV_B, AT(212350), false);
	ev_exit(TID_MAIN, AT(213000), true);
}
