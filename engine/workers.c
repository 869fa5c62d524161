// SPDX-License-Identifier: MIT
/*
 * The GPU workers and the tails (pipeline.c has the diagram): a worker takes the tracker lock
 * twice, then proves a partition's GPU section (prove_start) under the per-GPU mutex, while a
 * tail thread runs its CPU tail and, once both are done, finishes it (prove_finish).  Also the
 * oversubscribed scenario's CPU-bound pool.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "pipeline_int.h"
#include "rng.h"
#include "verify.h"

/* A dependent chain of field products over x: host-side work that cannot be skipped. */
static fr_t field_chain(const fr_t *x, uint64_t n, uint64_t ops, fr_t acc)
{
	for (uint64_t i = 0; i < ops; i++)
		acc = fr_add(fr_mul(acc, x[(i * 2654435761u) & (n - 1)]), x[i & (n - 1)]);
	return acc;
}

/*
 * The b_g2 MSM stand-ins: CPU field work that outlives the GPU section, on a pool of tail
 * threads (as a prover's rayon pool), so that no thread is created on the path that feeds the
 * GPU: thread creation takes process-wide locks (the stack cache, the address space) that a
 * preempted background thread may hold.
 */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv, done;
	struct part *head, *tail;
	bool closed;
} tails = { .mu = PTHREAD_MUTEX_INITIALIZER,
	    .cv = PTHREAD_COND_INITIALIZER,
	    .done = PTHREAD_COND_INITIALIZER };

static void tail_start(struct part *p)
{
	pthread_mutex_lock(&tails.mu);
	p->tail_next = NULL;
	p->gpu_done = false;
	if (tails.tail)
		tails.tail->tail_next = p;
	else
		tails.head = p;
	tails.tail = p;
	pthread_cond_signal(&tails.cv);
	pthread_mutex_unlock(&tails.mu);
}

/* The GPU section of p is done: its tail may finish the proof. */
static void tail_gpu_done(struct part *p)
{
	pthread_mutex_lock(&tails.mu);
	p->gpu_done = true;
	pthread_cond_broadcast(&tails.done);
	pthread_mutex_unlock(&tails.mu);
}

static void prove_finish(struct part *p);

void tails_close(void)
{
	pthread_mutex_lock(&tails.mu);
	tails.closed = true;
	pthread_cond_broadcast(&tails.cv);
	pthread_mutex_unlock(&tails.mu);
}

void *tail_main(void *arg)
{
	name_thread("tail-%u", (unsigned)(uintptr_t)arg);
	/* off the feeding path (the GPU section does not wait for it), ahead of the finalizers:
	 * --verify's reference check runs here */
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), 5))
		perror("zkengine: setpriority");
	uint64_t n = E.vec_bytes / sizeof(fr_t);
	pthread_mutex_lock(&tails.mu);
	for (;;) {
		while (!tails.head && !tails.closed)
			pthread_cond_wait(&tails.cv, &tails.mu);
		struct part *p = tails.head;
		if (!p)
			break;
		tails.head = p->tail_next;
		if (!tails.head)
			tails.tail = NULL;
		pthread_mutex_unlock(&tails.mu);
		struct seg seg = { now_ns(), run_delay_ns() };
		p->tail_out = field_chain(p->buf->b, n, E.sz.tail_ops, fr_one());
		seg_runnable(&seg);
		pthread_mutex_lock(&tails.mu);
		uint64_t d0 = run_delay_ns();
		while (!p->gpu_done)
			pthread_cond_wait(&tails.done, &tails.mu);
		pthread_mutex_unlock(&tails.mu);
		waited(d0);
		seg = (struct seg){ now_ns(), run_delay_ns() };
		prove_finish(p); /* returns the reservation the dispatcher waits for */
		seg_runnable(&seg);
		pthread_mutex_lock(&tails.mu);
	}
	pthread_mutex_unlock(&tails.mu);
	return NULL;
}

/*
 * A lock taken by a GPU worker: a wait of 100 us or more is a stall of the given kind. Inlined
 * into every caller, so that a complete stack shows the wait in the function that takes the
 * lock (gpu_lock_acquire, gpu_worker_main), which names a lock without a data symbol.
 */
static inline __attribute__((always_inline)) void lock_timed(pthread_mutex_t *mu, enum stall k)
{
	uint64_t t0 = now_ns(), d0 = run_delay_ns();
	pthread_mutex_lock(mu);
	uint64_t t1 = now_ns();
	waited(d0);
	if (t1 - t0 >= 100000)
		stall_keep(k, t0, t1);
	if (t1 - t0 >= 1000000)
		truth_stall(stall_names[k], t0, t1, NULL);
}

static void __attribute__((noinline)) gpu_lock_acquire(struct gpu_ctx *g)
{
	lock_timed(&g->lock, STALL_GPU_LOCK_WAIT);
}

static void __attribute__((noinline)) gpu_lock_release(struct gpu_ctx *g)
{
	pthread_mutex_unlock(&g->lock);
}

/* Host-side work around the GPU section: preparing the inputs, post-processing h. */
static void __attribute__((noinline)) host_prepare_inputs(struct part *p)
{
	uint64_t n = E.vec_bytes / sizeof(fr_t);
	p->prep_out = field_chain(p->buf->a, n, E.sz.host_ops, p->buf->c[0]);
}

static void __attribute__((noinline)) host_postprocess(struct part *p)
{
	uint64_t n = E.vec_bytes / sizeof(fr_t);
	p->post_out = field_chain(p->buf->h, n, E.sz.host_ops, p->prep_out);
}

static void seg_mark(struct seg *s, const char *where)
{
	uint64_t t = now_ns(), d = run_delay_ns();
	if (s->t && d - s->delay >= 1000000)
		truth_stall("preempted", s->t, t, ",\"runnable_ns\":%llu,\"where\":\"%s\"",
			    (unsigned long long)(d - s->delay), where);
	if (s->t && 2 * (d - s->delay) >= t - s->t && t - s->t >= 1000000)
		stall_keep(STALL_PREEMPTED, s->t, t);
	s->t = t;
	s->delay = d;
}

/*
 * Split proving, part one: start the tail, copy the inputs up, submit the kernels under the
 * per-GPU mutex (only that: the copies overlap the other worker's kernels, and the other worker
 * submits its own behind these while they run, so the device's queue stays full), copy h back,
 * wait, and return while the tail still runs.  gpu-lock-wide holds the mutex across the host
 * work, the copies and the wait too.
 */
static void prove_start(struct worker *w, struct part *p, struct seg *seg)
{
	struct gpu_ctx *g = w->gpu;
	bool wide = scenario(SCENARIO_GPU_LOCK_WIDE);
	enum gpu_copy copy = scenario(SCENARIO_PAGEABLE) ? GPU_COPY_SYNC : GPU_COPY_ASYNC;

	tail_start(p);
	p->gpu = g;
	uint64_t t0, t1;
	uint64_t held = 0;
	if (wide) {
		gpu_lock_acquire(g);
		held = now_ns();
		seg_mark(seg, "gpu_lock");
		t0 = now_ns();
		host_prepare_inputs(p);
		t1 = now_ns();
		truth_stall("gpu_lock_hold", t0, t1,
			    ",\"gpu\":%d,\"phase\":\"prepare\",\"partition\":%u", g->ordinal,
			    p->idx);
		gpu__hpoly_upload(w->work, p->buf->a, p->buf->b, p->buf->c, copy);
	} else {
		host_prepare_inputs(p);
		seg_mark(seg, "prepare");
		gpu__hpoly_upload(w->work, p->buf->a, p->buf->b, p->buf->c, copy);
		seg_mark(seg, "upload");
		gpu_lock_acquire(g);
	}
	seg_mark(seg, "gpu_lock");
	gpu__hpoly_compute(w->work);
	seg_mark(seg, "kernels");
	if (!wide)
		gpu_lock_release(g);
	gpu__hpoly_download(w->work, p->buf->h);
	uint64_t d0 = run_delay_ns();
	gpu__hpoly_wait(w->work, &p->t);
	waited(d0);
	if (wide) {
		t0 = now_ns();
		host_postprocess(p);
		t1 = now_ns();
		/* held with no kernel running: before the kernels and after them */
		stall_keep(STALL_GPU_LOCK_HOLD, held, p->t.mono_ns[GPU_STAGE_INTT]);
		stall_keep(STALL_GPU_LOCK_HOLD, p->t.mono_ns[GPU_STAGE_D2H], t1);
		truth_stall("gpu_lock_hold", t0, t1,
			    ",\"gpu\":%d,\"phase\":\"postprocess\",\"partition\":%u", g->ordinal,
			    p->idx);
		gpu_lock_release(g);
	} else {
		host_postprocess(p);
	}
	seg_mark(seg, "postprocess");

	for (unsigned i = 0; i < p->t.nsync; i++)
		stall_keep(STALL_SYNC_COPY, p->t.copy_ns[i][0], p->t.copy_ns[i][1]);
	for (unsigned i = 0; i < p->t.nsync; i++)
		truth_stall("sync_memcpy", p->t.copy_ns[i][0], p->t.copy_ns[i][1],
			    ",\"gpu\":%d,\"call\":\"cuMemcpyHtoD\",\"bytes\":%zu,\"partition\":%u",
			    g->ordinal, E.vec_bytes, p->idx);
	pthread_mutex_lock(&g->stats_mu);
	g->busy = realloc(g->busy, 2 * (g->nbusy + 1) * sizeof(*g->busy));
	if (!g->busy)
		oom();
	g->busy[2 * g->nbusy] = p->t.mono_ns[GPU_STAGE_INTT];
	g->busy[2 * g->nbusy + 1] = p->t.mono_ns[GPU_STAGE_D2H];
	g->nbusy++;
	pthread_mutex_unlock(&g->stats_mu);
	truth_line("{\"kind\":\"partition\",\"partition\":%u,\"job\":%u,\"gpu\":%d,\"tid\":%d,"
		   "\"gpu_start_ns\":%llu,\"kernels_start_ns\":%llu,\"kernels_end_ns\":%llu,"
		   "\"gpu_end_ns\":%llu,\"gpu_ms\":%.3f}",
		   p->idx, p->job, g->ordinal, gettid(), (unsigned long long)p->t.mono_ns[0],
		   (unsigned long long)p->t.mono_ns[GPU_STAGE_INTT],
		   (unsigned long long)p->t.mono_ns[GPU_STAGE_D2H],
		   (unsigned long long)p->t.mono_ns[GPU_NSTAGES], p->t.total_ms);
}

static void print_row(const struct part *p, const char *verdict)
{
	flockfile(stdout);
	printf("%4u %3d", p->idx, p->gpu->ordinal);
	for (int s = 0; s < GPU_NSTAGES; s++)
		printf(" %10.3f", p->t.ms[s]);
	printf(" %10.3f %s\n", p->t.total_ms, verdict);
	fflush(stdout);
	funlockfile(stdout);
}

/*
 * Split proving, part two, on the tail's thread once both halves are done: verify (--verify),
 * hand the buffers and the rest of the reservation back, and pass the partition on to the
 * finalizers.  Nothing a finalizer holds gates the pipeline, however far behind they are.
 */
static void prove_finish(struct part *p)
{
	const char *verdict = "-";
	if (E.o->verify) {
		char msg[MSG_LEN];
		struct rng g;
		rng__init(&g, E.o->seed, STREAM_TAU + p->idx);
		if (verify__hpoly(p->buf->a, p->buf->b, p->buf->c, p->buf->h, E.o->log2n, &g, msg,
				  sizeof(msg))) {
			fprintf(stderr, "zkengine: verification FAILED in partition %u: %s\n",
				p->idx, msg);
			verdict = "FAILED";
			atomic_store(&E.status, 1);
		} else {
			verdict = "ok";
		}
	}
	print_row(p, verdict);
	bufs_put(p->buf);
	p->buf = NULL;
	budget_release(E.res_rest);
	pq_push(&E.fin_q, p);
}

void *gpu_worker_main(void *arg)
{
	struct worker *w = arg;
	bool first = true;
	name_thread("gpu-worker-%u", w->id);
	for (;;) {
		uint64_t waited_from, d0 = run_delay_ns();
		struct part *p = pq_pop(&E.gpu_q, &waited_from);
		waited(d0);
		if (!p)
			break;
		uint64_t got = now_ns();
		if (waited_from && got - waited_from >= 100000)
			stall_keep(STALL_WAIT_WORK, waited_from, got);
		if (waited_from && got - waited_from >= 1000000)
			truth_stall("cond_wait_work", waited_from, got,
				    ",\"gpu\":%d,\"queue\":\"gpu\",\"partition\":%u,"
				    "\"startup\":%s",
				    w->gpu->ordinal, p->idx, first ? "true" : "false");
		first = false;
		struct seg seg = { 0, 0 };
		seg_mark(&seg, "");
		bool waits = scenario(SCENARIO_PARALLEL_WAITS);
		if (waits)
			waits_kick(w, p);

		/* two acquisitions of the tracker lock before every prove, as in the seed */
		lock_timed(&tracker_lock, STALL_TRACKER_WAIT);
		bool failed = tracker.failed_jobs != 0;
		pthread_mutex_unlock(&tracker_lock);
		seg_mark(&seg, "tracker_check");
		if (failed)
			continue; /* never: no job fails here, but the check is the point */
		lock_timed(&tracker_lock, STALL_TRACKER_WAIT);
		tracker.busy_workers++;
		pthread_mutex_unlock(&tracker_lock);
		seg_mark(&seg, "tracker_busy");
		if (waits) {
			waits_batch(w, p);
			seg_mark(&seg, "batch");
		}

		prove_start(w, p, &seg);
		/* partial release: the a/b/c share of the reservation goes back now (the buffers
		 * themselves only after --verify read them) */
		budget_release(E.res_abc);
		tail_gpu_done(p);
	}
	return NULL;
}

/* oversubscribed: a CPU-bound pool (the seed's rayon threads) beyond the machine's cores */
void *hog_main(void *arg)
{
	name_thread("msm-pool-%u", (unsigned)(uintptr_t)arg);
	fr_t x = fr_from_u64(3 + (uintptr_t)arg), acc = fr_one();
	while (!atomic_load_explicit(&E.stop_hogs, memory_order_relaxed))
		for (int i = 0; i < 4096; i++)
			acc = fr_mul(acc, x);
	return (void *)(uintptr_t)acc.l[0];
}
