/* SPDX-License-Identifier: MIT */
/*
 * What the pipeline's stages share (pipeline.c has the diagram): the partitions and their
 * queues, the memory budget, the tracker, the engine's state, and the truth file with the stalls
 * it is told of.  Each stage's threads are in its own file.
 */
#ifndef ZK_PIPELINE_INT_H
#define ZK_PIPELINE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "zkengine.h"

struct gpu_ctx;

#define MSG_LEN	      1024
#define PARTS_PER_JOB 4

/* Random streams: partition p uses stream p; the checks use streams above every partition. */
#define STREAM_NTT_CHECK (1ULL << 62)
#define STREAM_TAU	 (1ULL << 61)
#define STREAM_ASSEMBLY	 (1ULL << 60)

/* ---- sizing ------------------------------------------------------------------------------ */

/*
 * How big each piece of work is, per backend and scenario.  The GPU is the bottleneck of the
 * daemon this engine stands for, so everything that feeds it (synthesis, the workers' host work,
 * launches) is sized well below the GPU section, and each scenario makes only its own mechanism
 * slower than the GPU section:
 *   tracker-trim   the finalizer's malloc_trim(0) (the same call, over the same heap, as in every
 *                  scenario) holds the tracker lock: it takes about twice the GPU section;
 *   gpu-lock-wide  host work under the per-GPU mutex: about twice the GPU section;
 *   starved        one synthesis thread for a synthesis that takes ~3x the GPU section;
 *   pageable       synchronous copies from pageable memory (the driver stages them, ~26x slower
 *                  than pinned on an H200 with driver 580: tests/gpu/scenarios-h200);
 *   oversubscribed CPU-bound threads beyond the cores;
 *   parallel-waits before each launch two waits at once (waits.c): the tracker lock, held
 *                  across a trim of ~8 ms, and a producer's batch of ~20 ms.
 * Finalizers run as background threads (nice 10): their result processing, the heap's
 * fragmentation and its trimming, is CPU work that must not take cores from the feeding path,
 * which is what lets `fixed` stay GPU-bound on two CPUs even with the slow trims.
 * The simulated device's time is modelled (simcuda), so the same proportions hold on a loaded
 * 2-CPU machine: the GPU section is ~15 ms at the simulator's default 2^8 points.
 */
struct sizing {
	unsigned temps;		     /* synthesis temporaries per partition */
	unsigned temp_min, temp_max; /* their sizes, bytes */
	unsigned synth_rounds;	     /* passes of field products over each temporary */
	unsigned blocks; /* result assembly: heap blocks per partition (the fragmentation) */
	unsigned block_min, block_max; /* their sizes, bytes: most span one whole page */
	uint64_t tail_ops;	       /* field multiplications of the b_g2 MSM stand-in */
	uint64_t host_ops;	       /* of the host-side prep and post-processing, each */
	unsigned inflight;	       /* memory budget, in partitions */
	unsigned hogs;		       /* oversubscribed: CPU-bound threads beyond the pipeline's */
	unsigned finalizers;	       /* finalizer threads */
	unsigned rec_chunks;	       /* parallel-waits: the small free chunks a trim meets */
	uint64_t produce_ops;	       /* parallel-waits: field products of a producer's batch */
};

/* ---- time, threads, truth (truth.c) ------------------------------------------------------ */

static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void name_thread(const char *fmt, unsigned i);
uint64_t run_delay_ns(void);

struct truth_file {
	pthread_mutex_t mu;
	FILE *f;
};
extern struct truth_file truth;

void __attribute__((format(printf, 4, 5)))
truth_stall(const char *kind, uint64_t start, uint64_t end, const char *extra, ...);
void __attribute__((format(printf, 1, 2))) truth_line(const char *fmt, ...);

/*
 * The stalls the engine knows it injects, kept in memory so that the truth's GPU idle windows
 * can say which of them overlap each window (see truth_idle).  Only GPU-feeding threads' stalls,
 * and the holder's side of the two locks.
 */
enum stall {
	STALL_TRACKER_WAIT,  /* a GPU worker waiting for the tracker lock */
	STALL_TRIM_LOCKED,   /* a finalizer in malloc_trim(0) holding the tracker lock */
	STALL_GPU_LOCK_WAIT, /* a GPU worker waiting for the per-GPU mutex */
	STALL_GPU_LOCK_HOLD, /* host work under the per-GPU mutex */
	STALL_WAIT_WORK,     /* a GPU worker waiting for the GPU queue */
	STALL_SYNC_COPY,     /* a GPU worker in a synchronous copy from pageable memory */
	STALL_PREEMPTED,     /* a GPU worker runnable, not running, for most of a segment */
	STALL_BATCH_WAIT,    /* parallel-waits: a GPU worker waiting for its producer's batch */
	STALL_PRODUCE,	     /* parallel-waits: the producer making that batch */
	STALL_COUNT
};

extern const char *const stall_names[STALL_COUNT];

struct iv {
	uint64_t s, e;
};

struct ivs {
	struct iv *v;
	size_t n, cap;
};

struct stall_lists {
	pthread_mutex_t mu;
	struct ivs k[STALL_COUNT];
};
extern struct stall_lists stalls;

void stall_keep(enum stall k, uint64_t start, uint64_t end);

/* Segment of a thread's timeline, from when it began and its run delay then. */
struct seg {
	uint64_t t, delay;
};

void waited(uint64_t d0);
void seg_runnable(const struct seg *s);

/* The results: the stalls merged, the scenario's own, the device's busy intervals and idle
 * windows. */
#define SIM_BRIDGE_NS 100000ull
void ivs_merge(struct ivs *l, uint64_t bridge);
struct ivs own_stalls(void);
struct ivs busy_intervals(const char *sim_trace, const struct gpu_ctx *g, uint64_t since);
double truth_gpu(const struct ivs *busy, unsigned gpu, const struct ivs *own, uint64_t t_start,
		 uint64_t t_end, double *whole_pct, uint64_t *busy_ns);

/* ---- partitions, their buffers, queues and the budget (parts.c) -------------------------- */

struct bufs {
	fr_t *a, *b, *c, *h;
	struct bufs *next;
};

struct part {
	struct part *next; /* in a queue */
	unsigned job, idx; /* (job_seq, partition): the queues' key; idx numbers it in the run */
	struct bufs *buf;
	bool abc_held; /* a, b, c still needed (by --verify) after the GPU section */
	void **keep;   /* witness records, kept until the result is processed */
	unsigned nkeep;
	struct gpu_ctx *gpu;
	struct gpu_times t;
	struct part *tail_next; /* in the tail queue (while also on its way to finalization) */
	bool gpu_done;		/* under tails.mu: prove_start returned */
	fr_t tail_out, prep_out, post_out, batch_out;
};

/* The pinned buffers are reused (pinning is expensive); pageable ones come from the heap. */
struct buf_pool {
	pthread_mutex_t mu;
	struct bufs *free;
	struct gpu_dev *dev; /* the context that pins them (portable: every device uses them) */
	bool pageable;
	size_t bytes;
};
extern struct buf_pool pool;

void __attribute__((noreturn)) oom(void);
void *xmalloc(size_t n);
struct bufs *bufs_get(void);
void bufs_put(struct bufs *b);

struct pq {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct part *head; /* sorted by key */
	bool closed;
};

void pq_init(struct pq *q);
void pq_push(struct pq *q, struct part *p);
void pq_close(struct pq *q);
/* The item with the smallest key; blocks while the queue is empty and open (NULL once closed
 * and drained).  *waited_from is set to when the wait began, 0 if the caller did not wait. */
struct part *pq_pop(struct pq *q, uint64_t *waited_from);

/* The memory budget: counter + condvar, released in two parts. */
struct mem_budget {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t total, used;
};
extern struct mem_budget budget;
void budget_reserve(size_t bytes);
void budget_release(size_t bytes);

/* ---- the engine's shared state (pipeline.c) ---------------------------------------------- */

/* The job tracker: which jobs failed, how many workers prove, how many partitions are done.
 * Global, as in the seed's engine: GPU workers take it twice before every prove,
 * finalizers to record a result. */
extern pthread_mutex_t tracker_lock;
struct job_tracker {
	unsigned busy_workers;
	unsigned done;
	unsigned failed_jobs;
	unsigned recorded; /* parallel-waits: partitions its recorders took (waits.c) */
};
extern struct job_tracker tracker;

/* One per device, on the heap: its context's device, its mutex, its workers' stage times. */
struct gpu_ctx {
	int ordinal;
	struct gpu_dev *dev;
	pthread_mutex_t lock; /* the per-GPU mutex: one GPU section at a time */
	pthread_mutex_t stats_mu;
	uint64_t *busy; /* [2 * nbusy]: kernel-stage intervals from the events */
	unsigned nbusy;
};

struct waits;

struct worker {
	unsigned id;
	struct gpu_ctx *gpu;
	struct gpu_work *work;
	pthread_t thread;
	struct waits *waits; /* parallel-waits: its producer and recorder (waits.c) */
};

struct engine {
	const struct zk_opts *o;
	struct sizing sz;
	size_t vec_bytes, res_abc, res_rest;
	struct pq synth_q, gpu_q, fin_q;
	unsigned synth_live; /* under synth_q.mu: the last one out closes the GPU queue */
	pthread_mutex_t done_mu;
	pthread_cond_t fin_cv;
	unsigned fin_ready; /* finalizers whose heap is built: proving starts after */
	unsigned finished;
	atomic_int status;
	atomic_uint_fast64_t trims, trim_ns, trim_max_ns;
	atomic_bool stop_hogs;
	atomic_bool proving_done; /* every GPU section is done: the finalizers only drain */
	bool print_rows;
};
extern struct engine E;

static inline bool scenario(enum zk_scenario s)
{
	return E.o->scenario == s;
}

/* ---- the stages' threads ----------------------------------------------------------------- */

void *dispatcher_main(void *arg); /* dispatcher.c */
void *synth_main(void *arg);
void *tail_main(void *arg); /* workers.c */
void tails_close(void);
void *gpu_worker_main(void *arg);
void *hog_main(void *arg);
void *finalizer_main(void *arg); /* finalizer.c */

/* parallel-waits (waits.c): each worker's producer and recorder, started and stopped with the
 * workers; before each launch, waits_kick sets both going (it returns once the recorder holds
 * the tracker lock) and waits_batch waits for the batch; the truth's per-step lines. */
void waits_start(struct worker *w);
void waits_stop(struct worker *w);
void waits_kick(struct worker *w, struct part *p);
void waits_batch(struct worker *w, struct part *p);
void waits_truth(void);

#endif
