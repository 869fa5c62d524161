// SPDX-License-Identifier: MIT
/*
 * The proving pipeline of ARCHITECTURE.md ("zkengine"), pthreads in the roles of async tasks:
 *
 *   dispatcher ──(memory budget)──▶ synthesis queue ──▶ synth-N ──▶ GPU queue ──▶ gpu-worker-N
 *   gpu-worker: tracker lock twice, prove_start: hand the partition to a tail (the pool tail-N),
 *               upload, per-GPU mutex for the kernels' submission, download, wait
 *   tail-N:     the CPU tail, then prove_finish: verify, buffers and reservation back
 *   finalizer-N (nice 10): process_partition_result: tracker lock, malloc_trim(0), the result's
 *               records (the next trim's fragmentation)
 *   parallel-waits: before each launch the worker also hands its recorder-N the partition (the
 *               recorder then holds the tracker lock across malloc_trim(0)) and has its
 *               producer-N make a batch, at the same time (waits.c)
 *
 * Both queues are priority queues keyed (job_seq, partition).  The scenarios change only the
 * mechanism named in zkengine.h; every stall is real work or a real wait, never a sleep.
 *
 * Split by stage: parts.c (partitions, their buffers, the queues, the memory budget),
 * dispatcher.c (dispatcher, synthesis), workers.c (GPU workers, tails), finalizer.c, waits.c
 * (parallel-waits' producers and recorders), truth.c (--truth); pipeline_int.h holds what they
 * share.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline_int.h"
#include "rng.h"
#include "verify.h"

/* ---- sizing ------------------------------------------------------------------------------ */

static struct sizing sizing_for(const struct zk_opts *o, enum gpu_backend b, unsigned cpus)
{
	struct sizing s = {
		.temps = 64,
		.temp_min = 6 << 10,
		.temp_max = 20 << 10,
		.synth_rounds = 1,
		.blocks = 30000,
		.block_min = 6 << 10,
		.block_max = 10 << 10,
		.tail_ops = 20000,
		.host_ops = 6000,
		.inflight = o->synth_threads + 2 * o->gpus * o->gpu_workers,
		.hogs = (b == GPU_CUDA ? 6 : 16) * cpus,
		.finalizers = b == GPU_CUDA ? 2 : 3,
	};
	if (b == GPU_CUDA) {
		s.blocks = 15000;
		s.tail_ops = 200000;
		s.host_ops = 10000; /* ~0.4 us an operation over 128 MiB vectors on the H200 */
	}
	switch (o->scenario) {
	case SCENARIO_GPU_LOCK_WIDE:
		s.host_ops *= b == GPU_CUDA ? 6 : 40;
		break;
	case SCENARIO_STARVED:
		s.synth_rounds = b == GPU_CUDA ? 100 : 60;
		break;
	case SCENARIO_OVERSUBSCRIBED:
		/* the workers' own CPU work, which the pool's threads keep from running */
		s.host_ops *= 4;
		break;
	case SCENARIO_PARALLEL_WAITS:
		/* the trim ~8 ms, the batch ~40 ms, beside a GPU section of ~15 ms on simcuda
		 * (tests/cases/engine_scenarios.sh prints both); ~0.4 us a product over the
		 * 128 MiB vectors of a GPU run, ~0.12 us over simcuda's 8 KiB ones. The batch is
		 * five trims long so that, on two CPUs shared with other work, a trim that starts
		 * late or runs slowly still ends before it (the twins' comparison counts on the
		 * order); the fast producer's, a fortieth, ends well before the trim. */
		s.rec_chunks = 40000;
		s.produce_ops = b == GPU_CUDA ? 100000 : 350000;
		if (o->without & ZK_WITHOUT_SLOW_PRODUCER)
			s.produce_ops /= 40;
		break;
	default:
		break;
	}
	return s;
}

/* ---- the engine's shared state ----------------------------------------------------------- */

/* The job tracker (pipeline_int.h), global as in the seed's engine. */
pthread_mutex_t tracker_lock = PTHREAD_MUTEX_INITIALIZER;
struct job_tracker tracker;

struct engine E = { .done_mu = PTHREAD_MUTEX_INITIALIZER, .fin_cv = PTHREAD_COND_INITIALIZER };

/* ---- run --------------------------------------------------------------------------------- */

/* What one run sets up, and tears down after the stages are done. */
struct run {
	struct zk_opts o;
	enum gpu_backend b;
	unsigned cpus, ngpu, nworkers;
	int count;	      /* devices */
	char sim_trace[4096]; /* simcuda's exact kernel intervals, "" none */
	bool own_trace;	      /* written for this run: removed after it */
	pthread_t *fins, *tailpool;
	struct gpu_ctx **gpus;
	struct worker *workers;
	uint64_t t_start, t_end;
};

static unsigned cpus_online(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

/* The simulator's exact kernel times are the GPU truth: have simcuda write them. */
static void run_sim_trace(struct run *r)
{
	const char *t = getenv("SIMCUDA_TRACE");

	if (t && *t) {
		snprintf(r->sim_trace, sizeof(r->sim_trace), "%s", t);
	} else {
		snprintf(r->sim_trace, sizeof(r->sim_trace), "%s.simcuda-trace", r->o.truth);
		unlink(r->sim_trace);
		setenv("SIMCUDA_TRACE", r->sim_trace, 1);
		r->own_trace = true;
	}
}

/* The options the command line left open, the truth file, the sizes and the queues; 0, or the
 * exit status. */
static int run_setup(struct run *r)
{
	struct zk_opts *o = &r->o;

	r->cpus = cpus_online();
	if (o->truth && o->device != GPU_CUDA)
		run_sim_trace(r);
	r->b = gpu__init(o->device);
	int count = r->count = gpu__count();
	if ((int)o->gpus > count) {
		fprintf(stderr, "zkengine: --gpus %u: only %d device%s\n", o->gpus, count,
			count == 1 ? "" : "s");
		return 2;
	}
	/* scenario defaults for what the command line left open: the simulator's device time is
	 * modelled per thread, so a small domain keeps its CPU versions of the kernels cheap */
	if (!o->log2n)
		o->log2n = r->b == GPU_CUDA ? 22 : 8;
	/* parallel-waits: one worker per GPU, so that each gap is one worker's two waits and not
	 * hidden behind another worker's kernels */
	if (!o->gpu_workers)
		o->gpu_workers = o->scenario == SCENARIO_PARALLEL_WAITS ? 1 : 2;
	if (!o->synth_threads)
		o->synth_threads = o->scenario == SCENARIO_STARVED ? 1 :
				   r->b == GPU_CUDA ? (r->cpus > 4 ? r->cpus - 2 : 2) :
						      4;
	if (o->truth) {
		truth.f = fopen(o->truth, "we");
		if (!truth.f) {
			fprintf(stderr, "zkengine: --truth %s: %m\n", o->truth);
			return 1;
		}
	}
	E.o = o;
	E.sz = sizing_for(o, r->b, r->cpus);
	E.vec_bytes = ((size_t)1 << o->log2n) * sizeof(fr_t);
	E.res_abc = 3 * E.vec_bytes;
	E.res_rest = E.vec_bytes + (size_t)E.sz.temps * (E.sz.temp_min + E.sz.temp_max) / 2;
	budget.total = (size_t)E.sz.inflight * (E.res_abc + E.res_rest);
	pq_init(&E.synth_q);
	pq_init(&E.gpu_q);
	pq_init(&E.fin_q);
	/* the synthesis temporaries stay in the arenas (not mmap), whatever was freed before */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	return 0;
}

/*
 * The finalizers first: the fragmented heap a running daemon has is built before the device is
 * touched, so the recording's first GPU work is the proving's.
 */
static void run_finalizers(struct run *r)
{
	r->fins = calloc(E.sz.finalizers, sizeof(*r->fins));
	r->tailpool = calloc(r->o.gpus * r->o.gpu_workers + 1, sizeof(*r->tailpool));
	if (!r->tailpool || !r->fins)
		oom();
	for (unsigned i = 0; i < E.sz.finalizers; i++)
		if (pthread_create(&r->fins[i], NULL, finalizer_main, (void *)(uintptr_t)i))
			oom();
	pthread_mutex_lock(&E.done_mu);
	while (E.fin_ready < E.sz.finalizers)
		pthread_cond_wait(&E.fin_cv, &E.done_mu);
	pthread_mutex_unlock(&E.done_mu);
}

/* The devices, their workers, the buffers' pool; the devices' tables last. */
static void run_devices(struct run *r)
{
	const struct zk_opts *o = &r->o;
	unsigned ngpu = r->ngpu = o->gpus, nworkers = r->nworkers = ngpu * o->gpu_workers;
	struct gpu_ctx **gpus = r->gpus = calloc(ngpu, sizeof(*gpus));
	struct worker *workers = r->workers = calloc(nworkers, sizeof(*workers));

	if (!gpus || !workers)
		oom();
	for (unsigned i = 0; i < ngpu; i++) {
		struct gpu_ctx *g = gpus[i] = calloc(1, sizeof(*g));
		if (!g)
			oom();
		g->ordinal = (int)i;
		g->dev = gpu__open((int)i, o->log2n);
		pthread_mutex_init(&g->lock, NULL);
		pthread_mutex_init(&g->stats_mu, NULL);
	}
	for (unsigned i = 0; i < nworkers; i++) {
		workers[i].id = i;
		workers[i].gpu = gpus[i / o->gpu_workers];
		workers[i].work = gpu__work_new(workers[i].gpu->dev, o->log2n);
	}
	pool.dev = gpus[0]->dev;
	pool.pageable = o->scenario == SCENARIO_PAGEABLE;
	pool.bytes = E.vec_bytes;
	/* pinning is expensive and takes the driver's locks: the pinned buffers for the whole
	 * budget are made before proving starts, not while other threads launch */
	if (!pool.pageable) {
		struct bufs *pre = NULL;
		for (unsigned i = 0; i < E.sz.inflight; i++) {
			struct bufs *x = bufs_get();
			x->next = pre;
			pre = x;
		}
		while (pre) {
			struct bufs *next = pre->next;
			bufs_put(pre);
			pre = next;
		}
	}
	/* the devices' first work, right before proving (and after the pinning above) */
	for (unsigned i = 0; i < ngpu; i++)
		gpu__tables(gpus[i]->dev);
}

/* What runs, on stdout and in the truth's meta line; with --verify, the NTT against GMP's DFT
 * (0, or the exit status); then the table's header. */
static int run_banner(const struct run *r)
{
	const struct zk_opts *o = &r->o;
	int count = r->count;

	printf("zkengine: device %s (%s), %u of %d GPU%s: %s\n", gpu__backend_name(r->b),
	       gpu__driver_path(), r->ngpu, count, count == 1 ? "" : "s",
	       gpu__name(r->gpus[0]->dev));
	printf("zkengine: %u partitions of 2^%u points, scenario %s%s%s, seed %#llx (--seed to "
	       "reproduce)\n",
	       o->partitions, o->log2n, zk_scenario_name(o->scenario),
	       o->without & ZK_WITHOUT_TRIM ? " without trim" : "",
	       o->without & ZK_WITHOUT_SLOW_PRODUCER ? " without slow-producer" : "",
	       (unsigned long long)o->seed);
	printf("zkengine: %u synthesis threads, %u GPU workers per GPU, budget %u partitions, "
	       "%u CPUs\n",
	       o->synth_threads, o->gpu_workers, E.sz.inflight, r->cpus);
	truth_line(
		"{\"kind\":\"meta\",\"pid\":%d,\"scenario\":\"%s\",\"backend\":\"%s\","
		"\"gpus\":%u,\"gpu_workers\":%u,\"synth_threads\":%u,\"partitions\":%u,"
		"\"log2n\":%u,\"cpus\":%u,\"clock\":\"CLOCK_MONOTONIC\",\"gpu_busy_bridge_ns\":%llu,"
		"\"without\":[%s%s%s],\"seed\":%llu}",
		getpid(), zk_scenario_name(o->scenario), gpu__backend_name(r->b), r->ngpu,
		o->gpu_workers, o->synth_threads, o->partitions, o->log2n, r->cpus,
		r->b == GPU_SIM ? SIM_BRIDGE_NS : 0ull,
		o->without & ZK_WITHOUT_TRIM ? "\"trim\"" : "",
		(o->without & ZK_WITHOUT_TRIM) && (o->without & ZK_WITHOUT_SLOW_PRODUCER) ? "," :
											    "",
		o->without & ZK_WITHOUT_SLOW_PRODUCER ? "\"slow-producer\"" : "",
		(unsigned long long)o->seed);

	if (o->verify) {
		char msg[MSG_LEN];
		for (unsigned i = 0; i < r->ngpu; i++) {
			struct rng g;
			rng__init(&g, o->seed, STREAM_NTT_CHECK + i);
			if (verify__ntt(r->workers[i * o->gpu_workers].work, o->log2n, &g, msg,
					sizeof(msg))) {
				fprintf(stderr, "zkengine: verification FAILED on GPU %u: %s\n", i,
					msg);
				return 1;
			}
		}
		printf("zkengine: NTT of 2^%u points equals the GMP DFT, inverse after forward "
		       "is the identity\n",
		       o->log2n < 10 ? o->log2n : 10);
	}

	printf("%4s %3s", "part", "gpu");
	for (int s = 0; s < GPU_NSTAGES; s++)
		printf(" %10s", gpu__stage_name(s));
	printf(" %10s %s\n", "total", "verify");
	fflush(stdout);
	return 0;
}

/* The stages, from the dispatcher's first partition to the finalizers' last result. */
static void run_stages(struct run *r)
{
	const struct zk_opts *o = &r->o;
	unsigned nworkers = r->nworkers;
	pthread_t *tailpool = r->tailpool;

	r->t_start = now_ns();
	unsigned nhogs = o->scenario == SCENARIO_OVERSUBSCRIBED ? E.sz.hogs : 0;
	pthread_t *hogs = calloc(nhogs ? nhogs : 1, sizeof(*hogs));
	pthread_t disp, *synth = calloc(o->synth_threads, sizeof(*synth));
	if (!hogs || !synth)
		oom();
	for (unsigned i = 0; i < nhogs; i++)
		pthread_create(&hogs[i], NULL, hog_main, (void *)(uintptr_t)i);
	E.synth_live = o->synth_threads;
	for (unsigned i = 0; i < o->synth_threads; i++)
		if (pthread_create(&synth[i], NULL, synth_main, (void *)(uintptr_t)i))
			oom();
	for (unsigned i = 0; i <= nworkers; i++)
		if (pthread_create(&tailpool[i], NULL, tail_main, (void *)(uintptr_t)i))
			oom();
	if (o->scenario == SCENARIO_PARALLEL_WAITS)
		for (unsigned i = 0; i < nworkers; i++)
			waits_start(&r->workers[i]);
	for (unsigned i = 0; i < nworkers; i++)
		if (pthread_create(&r->workers[i].thread, NULL, gpu_worker_main, &r->workers[i]))
			oom();
	if (pthread_create(&disp, NULL, dispatcher_main, NULL))
		oom();

	pthread_join(disp, NULL);
	for (unsigned i = 0; i < o->synth_threads; i++)
		pthread_join(synth[i], NULL);
	for (unsigned i = 0; i < nworkers; i++)
		pthread_join(r->workers[i].thread, NULL);
	if (o->scenario == SCENARIO_PARALLEL_WAITS) {
		for (unsigned i = 0; i < nworkers; i++)
			waits_stop(&r->workers[i]);
		waits_truth();
	}
	/* the pool oversubscribes the proving, not the background result processing after it */
	uint64_t t_gpu_done = now_ns();
	atomic_store(&E.stop_hogs, true);
	atomic_store(&E.proving_done, true);
	for (unsigned i = 0; i < nhogs; i++)
		pthread_join(hogs[i], NULL);
	if (nhogs)
		truth_line("{\"kind\":\"oversubscribe\",\"threads\":%u,\"cpus\":%u,"
			   "\"start_ns\":%llu,\"end_ns\":%llu}",
			   nhogs, r->cpus, (unsigned long long)r->t_start,
			   (unsigned long long)t_gpu_done);
	tails_close();
	for (unsigned i = 0; i <= nworkers; i++)
		pthread_join(tailpool[i], NULL);
	free(tailpool);
	pq_close(&E.fin_q);
	for (unsigned i = 0; i < E.sz.finalizers; i++)
		pthread_join(r->fins[i], NULL);
	free(r->fins);
	r->t_end = now_ns();
	free(hogs);
	free(synth);
}

/*
 * Tear the workers down before counting: freeing a worker synchronizes its stream, and the
 * counts printed after must equal every driver call the engine made (a recorder's trace is
 * checked against them).
 */
static void run_teardown_workers(struct run *r)
{
	for (unsigned i = 0; i < r->nworkers; i++)
		gpu__work_free(r->workers[i].work);
	for (struct bufs *p = pool.free, *next; p; p = next) {
		next = p->next;
		gpu__host_free(pool.dev, p->a);
		gpu__host_free(pool.dev, p->b);
		gpu__host_free(pool.dev, p->c);
		gpu__host_free(pool.dev, p->h);
		free(p);
	}
}

/* The counts on stdout, and each device's busy time and idle windows (truth_gpu); returns the
 * launches. */
static uint64_t run_counts(const struct run *r)
{
	double secs = (double)(r->t_end - r->t_start) / 1e9;
	uint64_t launches = 0;
	for (unsigned i = 0; i < r->ngpu; i++)
		launches += gpu__launches(r->gpus[i]->dev);
	uint64_t trims = atomic_load(&E.trims);
	printf("partitions done: %u\n", E.finished);
	printf("throughput: %.2f partitions/s\n", secs > 0 ? E.finished / secs : 0);
	printf("launches: %llu\n", (unsigned long long)launches);
	printf("malloc_trim calls: %llu\n", (unsigned long long)trims);
	printf("malloc_trim ms: mean %.1f, max %.1f\n",
	       trims ? (double)atomic_load(&E.trim_ns) / 1e6 / (double)trims : 0.0,
	       (double)atomic_load(&E.trim_max_ns) / 1e6);
	for (int k = 0; k < GPU_NSYNC; k++)
		printf("sync calls %s: %llu\n", gpu__sync_name(k),
		       (unsigned long long)gpu__sync_calls(k));
	for (int k = 0; k < STALL_COUNT; k++)
		ivs_merge(&stalls.k[k], 0);
	struct ivs own = own_stalls();
	for (unsigned i = 0; i < r->ngpu; i++) {
		struct gpu_ctx *g = r->gpus[i];
		uint64_t busy = 0;
		double whole;
		struct ivs iv = busy_intervals(r->b == GPU_SIM ? r->sim_trace : NULL, g,
					       r->t_start);
		double pct = truth_gpu(&iv, i, &own, r->t_start, r->t_end, &whole, &busy);
		free(iv.v);
		printf("gpu %u busy: %.1f%% steady (first kernel to last), %.1f%% whole run "
		       "(%u partitions, %.1f ms of kernels)\n",
		       i, pct, whole, g->nbusy, (double)busy / 1e6);
		printf("zkengine: GPU %u: %llu kernel launches\n", i,
		       (unsigned long long)gpu__launches(g->dev));
		truth_line(
			"{\"kind\":\"gpu_summary\",\"gpu\":%u,\"busy_pct\":%.2f,\"busy_ns\":%llu,"
			"\"partitions\":%u,\"launches\":%llu,\"source\":\"%s\"}",
			i, pct, (unsigned long long)busy, g->nbusy,
			(unsigned long long)gpu__launches(g->dev),
			r->b == GPU_SIM && *r->sim_trace ? "simcuda" : "events");
	}
	free(own.v);
	return launches;
}

/* The devices closed; the truth's last line, the counts (sync calls, the wall time). */
static void run_close(struct run *r, uint64_t launches)
{
	/* the sync calls as the counts above have them */
	char sync_json[256];
	snprintf(sync_json, sizeof(sync_json),
		 "{\"cuStreamSynchronize\":%llu,\"cuEventSynchronize\":%llu,"
		 "\"cuCtxSynchronize\":%llu,\"cuMemcpyHtoD\":%llu}",
		 (unsigned long long)gpu__sync_calls(GPU_SYNC_STREAM),
		 (unsigned long long)gpu__sync_calls(GPU_SYNC_EVENT),
		 (unsigned long long)gpu__sync_calls(GPU_SYNC_CTX),
		 (unsigned long long)gpu__sync_calls(GPU_SYNC_MEMCPY));
	for (unsigned i = 0; i < r->ngpu; i++) {
		gpu__close(r->gpus[i]->dev);
		free(r->gpus[i]->busy);
		free(r->gpus[i]);
	}
	if (truth.f) {
		truth_line("{\"kind\":\"counts\",\"partitions\":%u,\"launches\":%llu,"
			   "\"malloc_trim\":%llu,\"sync\":%s,\"wall_ns\":%llu}",
			   E.finished, (unsigned long long)launches,
			   (unsigned long long)atomic_load(&E.trims), sync_json,
			   (unsigned long long)(r->t_end - r->t_start));
		fclose(truth.f);
		if (r->own_trace)
			unlink(r->sim_trace);
	}
	free(r->gpus);
	free(r->workers);
}

int pipeline__run(const struct zk_opts *opts)
{
	struct run r = { .o = *opts }; /* E.o points into it while the stages run */
	int status;

	status = run_setup(&r);
	if (status)
		return status;
	run_finalizers(&r);
	run_devices(&r);
	status = run_banner(&r);
	if (status)
		return status;
	run_stages(&r);

	status = atomic_load(&E.status);
	if (r.o.verify && !status)
		printf("verification passed (%u partitions)\n", r.o.partitions);
	run_teardown_workers(&r);
	run_close(&r, run_counts(&r));
	return status;
}
