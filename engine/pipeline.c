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
 *
 * Both queues are priority queues keyed (job_seq, partition).  The scenarios change only the
 * mechanism named in zkengine.h; every stall is real work or a real wait, never a sleep.
 *
 * --truth FILE: what the engine knows about itself, one JSON object a line (CLOCK_MONOTONIC ns;
 * the profiler never reads it, tests compare its reports against it):
 *   meta             scenario, backend, threads, sizes
 *   partition        a partition's GPU section: kernels_start_ns/kernels_end_ns from its events
 *   malloc_trim      a trim: tracker_lock_held says whether under the tracker lock
 *   tracker_wait, gpu_lock_wait, cond_wait_work, gpu_lock_hold, sync_memcpy, preempted,
 *   result_records   stalls of 1 ms or more with the thread's tid and comm
 *   gpu_busy         the device's busy intervals: simcuda's exact kernel intervals on the
 *                    simulator, else each partition's kernel span from its CUDA events; gaps under
 *                    0.1 ms bridged
 *   gpu_idle         every idle window of 1 ms or more between the first kernel and the last, with
 *                    "stalls": the ns of it each kind of stall overlaps, and "own_ns": the ns the
 *                    scenario's own mechanism overlaps (see own_stalls)
 *   gpu_steady       busy_pct (first kernel to last), whole_busy_pct, idle_ns, own_ns, own_share
 *   gpu_summary, counts, oversubscribe
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <sys/resource.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "rng.h"
#include "verify.h"
#include "zkengine.h"

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
 *   oversubscribed CPU-bound threads beyond the cores.
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
};

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
	default:
		break;
	}
	return s;
}

/* ---- time, threads, truth ---------------------------------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void name_thread(const char *fmt, unsigned i)
{
	char name[16];
	snprintf(name, sizeof(name), fmt, i);
	pthread_setname_np(pthread_self(), name);
}

/* Time this thread spent runnable but not running (schedstat's run_delay), ns.  Read with
 * open/read, not stdio: a GPU worker calls it, and must not allocate (see op_new in simcuda). */
static uint64_t run_delay_ns(void)
{
	char buf[128];
	int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	unsigned long long run = 0, wait = 0;
	if (sscanf(buf, "%llu %llu", &run, &wait) != 2)
		wait = 0;
	return wait;
}

static struct {
	pthread_mutex_t mu;
	FILE *f;
} truth = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* One JSON line: kind, this thread's tid and name, the interval, then `extra` (",\"k\":v..."). */
static void __attribute__((format(printf, 4, 5)))
truth_stall(const char *kind, uint64_t start, uint64_t end, const char *extra, ...)
{
	if (!truth.f)
		return;
	char comm[16] = "", more[512] = "";
	pthread_getname_np(pthread_self(), comm, sizeof(comm));
	if (extra) {
		va_list ap;
		va_start(ap, extra);
		vsnprintf(more, sizeof(more), extra, ap);
		va_end(ap);
	}
	pthread_mutex_lock(&truth.mu);
	fprintf(truth.f,
		"{\"kind\":\"%s\",\"tid\":%d,\"comm\":\"%s\",\"start_ns\":%llu,\"end_ns\":%llu,"
		"\"ns\":%llu%s}\n",
		kind, gettid(), comm, (unsigned long long)start, (unsigned long long)end,
		(unsigned long long)(end - start), more);
	pthread_mutex_unlock(&truth.mu);
}

static void __attribute__((format(printf, 1, 2))) truth_line(const char *fmt, ...)
{
	if (!truth.f)
		return;
	va_list ap;
	va_start(ap, fmt);
	pthread_mutex_lock(&truth.mu);
	vfprintf(truth.f, fmt, ap);
	fputc('\n', truth.f);
	pthread_mutex_unlock(&truth.mu);
	va_end(ap);
}

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
	STALL_COUNT
};

static const char *const stall_names[STALL_COUNT] = {
	"tracker_wait", "trim_locked", "gpu_lock_wait", "gpu_lock_hold",
	"wait_work",	"sync_copy",   "preempted",
};

struct iv {
	uint64_t s, e;
};

struct ivs {
	struct iv *v;
	size_t n, cap;
};

static struct {
	pthread_mutex_t mu;
	struct ivs k[STALL_COUNT];
} stalls = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void stall_keep(enum stall k, uint64_t start, uint64_t end)
{
	if (!truth.f || end <= start)
		return;
	pthread_mutex_lock(&stalls.mu);
	struct ivs *l = &stalls.k[k];
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 256;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v)
			abort();
	}
	l->v[l->n++] = (struct iv){ start, end };
	pthread_mutex_unlock(&stalls.mu);
}

/* Segment of a thread's timeline, from when it began and its run delay then. */
struct seg {
	uint64_t t, delay;
};

/*
 * A wait of a thread that feeds the GPU has ended: the run delay it gathered since d0 is the
 * time it was woken but not yet running, at the wait's end.  Half a millisecond or more of it is
 * an oversubscription stall (the pipeline held back by threads it could not get a CPU from).
 */
static void waited(uint64_t d0)
{
	uint64_t t = now_ns(), d = run_delay_ns() - d0;
	if (d >= 500000 && d < t)
		stall_keep(STALL_PREEMPTED, t - d, t);
}

/* A segment of work that feeds the GPU (synthesis, a tail that returns the reservation) spent
 * mostly runnable but not running: an oversubscription stall. */
static void seg_runnable(const struct seg *s)
{
	uint64_t t = now_ns(), d = run_delay_ns() - s->delay;
	if (t - s->t >= 1000000 && 2 * d >= t - s->t)
		stall_keep(STALL_PREEMPTED, s->t, t);
}

/* ---- partitions and their buffers -------------------------------------------------------- */

struct bufs {
	fr_t *a, *b, *c, *h;
	struct bufs *next;
};

struct gpu_ctx;

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
	fr_t tail_out, prep_out, post_out;
};

/* The pinned buffers are reused (pinning is expensive); pageable ones come from the heap. */
static struct {
	pthread_mutex_t mu;
	struct bufs *free;
	struct gpu_dev *dev; /* the context that pins them (portable: every device uses them) */
	bool pageable;
	size_t bytes;
} pool = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void __attribute__((noreturn)) oom(void)
{
	fprintf(stderr, "zkengine: out of memory (or out of threads)\n");
	exit(1);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n);
	if (!p)
		oom();
	return p;
}

/* Fresh pageable memory of its own (as a large malloc would get), so the scenario leaves the
 * heap's fragmentation as it is in every other scenario. */
static void *pageable_alloc(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		oom();
	return p;
}

static struct bufs *bufs_get(void)
{
	pthread_mutex_lock(&pool.mu);
	struct bufs *b = pool.free;
	if (b)
		pool.free = b->next;
	pthread_mutex_unlock(&pool.mu);
	if (b)
		return b;
	b = calloc(1, sizeof(*b));
	if (!b)
		oom();
	fr_t **v[4] = { &b->a, &b->b, &b->c, &b->h };
	for (int i = 0; i < 4; i++)
		*v[i] = pool.pageable ? pageable_alloc(pool.bytes) :
					gpu__host_alloc(pool.dev, pool.bytes);
	return b;
}

static void bufs_put(struct bufs *b)
{
	if (pool.pageable) {
		munmap(b->a, pool.bytes);
		munmap(b->b, pool.bytes);
		munmap(b->c, pool.bytes);
		munmap(b->h, pool.bytes);
		free(b);
		return;
	}
	pthread_mutex_lock(&pool.mu);
	b->next = pool.free;
	pool.free = b;
	pthread_mutex_unlock(&pool.mu);
}

/* ---- priority queues keyed (job_seq, partition) ------------------------------------------ */

struct pq {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct part *head; /* sorted by key */
	bool closed;
};

static void pq_init(struct pq *q)
{
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	q->head = NULL;
	q->closed = false;
}

static bool key_less(const struct part *x, const struct part *y)
{
	return x->job < y->job || (x->job == y->job && x->idx < y->idx);
}

static void pq_push(struct pq *q, struct part *p)
{
	pthread_mutex_lock(&q->mu);
	struct part **pp = &q->head;
	while (*pp && !key_less(p, *pp))
		pp = &(*pp)->next;
	p->next = *pp;
	*pp = p;
	pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

static void pq_close(struct pq *q)
{
	pthread_mutex_lock(&q->mu);
	q->closed = true;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

/* The item with the smallest key; blocks while the queue is empty and open (NULL once closed
 * and drained).  *waited_from is set to when the wait began, 0 if the caller did not wait. */
static struct part *pq_pop(struct pq *q, uint64_t *waited_from)
{
	*waited_from = 0;
	pthread_mutex_lock(&q->mu);
	while (!q->head && !q->closed) {
		if (!*waited_from)
			*waited_from = now_ns();
		pthread_cond_wait(&q->cv, &q->mu);
	}
	struct part *p = q->head;
	if (p)
		q->head = p->next;
	pthread_mutex_unlock(&q->mu);
	return p;
}

/* ---- memory budget: counter + condvar, released in two parts ----------------------------- */

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t total, used;
} budget = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static void budget_reserve(size_t bytes)
{
	pthread_mutex_lock(&budget.mu);
	while (budget.used + bytes > budget.total)
		pthread_cond_wait(&budget.cv, &budget.mu);
	budget.used += bytes;
	pthread_mutex_unlock(&budget.mu);
}

static void budget_release(size_t bytes)
{
	pthread_mutex_lock(&budget.mu);
	budget.used -= bytes;
	pthread_cond_broadcast(&budget.cv);
	pthread_mutex_unlock(&budget.mu);
}

/* ---- the engine's shared state ----------------------------------------------------------- */

/* The job tracker: which jobs failed, how many workers prove, how many partitions are done.
 * Static and global, as in the seed's engine: GPU workers take it twice before every prove,
 * finalizers to record a result. */
static pthread_mutex_t tracker_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	unsigned busy_workers;
	unsigned done;
	unsigned failed_jobs;
} tracker;

/* One per device, on the heap: its context's device, its mutex, its workers' stage times. */
struct gpu_ctx {
	int ordinal;
	struct gpu_dev *dev;
	pthread_mutex_t lock; /* the per-GPU mutex: one GPU section at a time */
	pthread_mutex_t stats_mu;
	uint64_t *busy; /* [2 * nbusy]: kernel-stage intervals from the events */
	unsigned nbusy;
};

struct worker {
	unsigned id;
	struct gpu_ctx *gpu;
	struct gpu_work *work;
	pthread_t thread;
};

static struct {
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
} E = { .done_mu = PTHREAD_MUTEX_INITIALIZER, .fin_cv = PTHREAD_COND_INITIALIZER };

static bool scenario(enum zk_scenario s)
{
	return E.o->scenario == s;
}

/* ---- CPU work ---------------------------------------------------------------------------- */

/* A dependent chain of field products over x: host-side work that cannot be skipped. */
static fr_t field_chain(const fr_t *x, uint64_t n, uint64_t ops, fr_t acc)
{
	for (uint64_t i = 0; i < ops; i++)
		acc = fr_add(fr_mul(acc, x[(i * 2654435761u) & (n - 1)]), x[i & (n - 1)]);
	return acc;
}

/*
 * Witness synthesis: a, b from many intermediate witness blocks, c = a*b.  Each block is a heap
 * temporary of a varied size, filled with field elements (every page touched), and leaves
 * behind a small witness record that lives until the partition's result is processed.  The
 * temporaries are freed together at the end, so the heap is left with many page-spanning free
 * chunks pinned apart by live records: the fragmentation that makes malloc_trim(0) slow.
 */
static void synthesize(struct part *p, struct rng *g)
{
	const struct sizing *sz = &E.sz;
	uint64_t n = E.vec_bytes / sizeof(fr_t);
	unsigned nt = sz->temps;
	uint64_t rows = (n + nt - 1) / nt;
	fr_t **temps = xmalloc(nt * sizeof(*temps));
	fr_t *a = p->buf->a, *b = p->buf->b, *c = p->buf->c;

	p->keep = xmalloc(nt * sizeof(*p->keep));
	p->nkeep = nt;
	for (unsigned j = 0; j < nt; j++) {
		size_t bytes = sz->temp_min + rng__next(g) % (sz->temp_max - sz->temp_min);
		uint64_t m = bytes / sizeof(fr_t);
		fr_t *t = temps[j] = xmalloc(m * sizeof(fr_t));
		for (uint64_t k = 0; k < m; k++)
			t[k] = rng__fr(g);
		/* the block's constraints: products along the block, in place */
		for (unsigned r = 0; r < sz->synth_rounds; r++)
			for (uint64_t k = 0; k + 1 < m; k++)
				t[k] = fr_mul(t[k], t[k + 1]);
		/* the block's rows cycle through it: a = t, b = t + t', c = a * b, products taken
		 * once per element of the block (memory-heavy rows, light arithmetic) */
		fr_t *u = xmalloc(2 * m * sizeof(fr_t)), *w = u + m;
		for (uint64_t k = 0; k < m; k++) {
			u[k] = fr_add(t[k], t[(k * 13 + 5) % m]);
			w[k] = fr_mul(t[k], u[k]);
		}
		uint64_t i0 = j * rows, z = i0 % m;
		for (uint64_t i = i0; i < i0 + rows && i < n; i++) {
			a[i] = t[z];
			b[i] = u[z];
			c[i] = w[z];
			z = z + 1 == m ? 0 : z + 1;
		}
		free(u);
		size_t rec = 48 + rng__next(g) % 400;
		unsigned char *r = p->keep[j] = xmalloc(rec);
		memcpy(r, &t[0], 32);
		memset(r + 32, (int)j, rec - 32);
	}
	for (unsigned j = 0; j < nt; j++)
		free(temps[j]);
	free(temps);
}

/*
 * Recording a result builds its transcript in many heap blocks of page-spanning sizes (every
 * page touched), each leaving a small record behind; the blocks are freed at once, the records
 * live until the finalizer's next result.  The heap is left with many free chunks pinned apart
 * by live records: the fragmentation that makes the next malloc_trim(0) slow.  On the finalizer
 * (background) threads, off the path that feeds the GPU.
 */
struct finalizer {
	unsigned id;
	void **recs;
	unsigned nrecs;
	uint64_t results;
};

static void build_result_records(struct finalizer *f, struct rng *g)
{
	const struct sizing *sz = &E.sz;
	unsigned nb = sz->blocks;
	unsigned char **blocks = xmalloc(nb * sizeof(*blocks));
	f->recs = xmalloc(nb * sizeof(*f->recs));
	f->nrecs = nb;
	uint64_t acc = rng__next(g);
	for (unsigned j = 0; j < nb; j++) {
		size_t bytes = sz->block_min + rng__next(g) % (sz->block_max - sz->block_min);
		unsigned char *b = blocks[j] = xmalloc(bytes);
		for (size_t k = 0; k < bytes; k += 64)
			b[k] = (unsigned char)(acc + j + k);
		size_t rec = 48 + rng__next(g) % 400;
		unsigned char *r = f->recs[j] = xmalloc(rec);
		memcpy(r, b, 32);
		memset(r + 32, (int)j, rec - 32);
	}
	for (unsigned j = 0; j < nb; j++)
		free(blocks[j]);
	free(blocks);
}

static void free_result_records(struct finalizer *f)
{
	for (unsigned j = 0; j < f->nrecs; j++)
		free(f->recs[j]);
	free(f->recs);
	f->recs = NULL;
	f->nrecs = 0;
}

/* ---- the stages -------------------------------------------------------------------------- */

/* --hold-last: read standard input to its end (the data is ignored). */
static void hold_for_stdin(void)
{
	char buf[256];
	ssize_t n;

	while ((n = read(STDIN_FILENO, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		;
}

static void *dispatcher_main(void *arg)
{
	name_thread("dispatcher", 0);
	const struct zk_opts *o = E.o;
	for (unsigned i = 0; i < o->partitions; i++) {
		if (o->hold_last && i == o->partitions - 1)
			hold_for_stdin();
		uint64_t d0 = run_delay_ns();
		budget_reserve(E.res_abc + E.res_rest);
		waited(d0);
		struct part *p = calloc(1, sizeof(*p));
		if (!p)
			oom();
		p->job = i / PARTS_PER_JOB;
		p->idx = i;
		pq_push(&E.synth_q, p);
	}
	pq_close(&E.synth_q);
	return NULL;
}

static void *synth_main(void *arg)
{
	name_thread("synth-%u", (unsigned)(uintptr_t)arg);
	for (;;) {
		uint64_t waited_from, d0 = run_delay_ns();
		struct part *p = pq_pop(&E.synth_q, &waited_from);
		waited(d0);
		if (!p)
			break;
		struct rng g;
		rng__init(&g, E.o->seed, p->idx);
		struct seg seg = { now_ns(), run_delay_ns() };
		p->buf = bufs_get();
		p->abc_held = true;
		synthesize(p, &g);
		seg_runnable(&seg);
		pq_push(&E.gpu_q, p);
	}
	pthread_mutex_lock(&E.synth_q.mu);
	bool last = --E.synth_live == 0;
	pthread_mutex_unlock(&E.synth_q.mu);
	if (last)
		pq_close(&E.gpu_q);
	return NULL;
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

static void tails_close(void)
{
	pthread_mutex_lock(&tails.mu);
	tails.closed = true;
	pthread_cond_broadcast(&tails.cv);
	pthread_mutex_unlock(&tails.mu);
}

static void *tail_main(void *arg)
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

/*
 * Recording a partition's result: under the tracker lock, as the seed's engine does, then
 * malloc_trim(0) to hand the freed synthesis memory back.  tracker-trim trims while still
 * holding the lock; every other scenario makes the same call after releasing it.
 */
static void __attribute__((noinline)) process_partition_result(struct finalizer *f, struct part *p)
{
	bool under_lock = scenario(SCENARIO_TRACKER_TRIM);

	pthread_mutex_lock(&tracker_lock);
	tracker.done++;
	tracker.busy_workers--;
	if (!under_lock)
		pthread_mutex_unlock(&tracker_lock);
	uint64_t t0 = now_ns();
	malloc_trim(0);
	uint64_t t1 = now_ns();
	if (under_lock) {
		pthread_mutex_unlock(&tracker_lock);
		stall_keep(STALL_TRIM_LOCKED, t0, t1);
	}
	for (unsigned j = 0; j < p->nkeep; j++)
		free(p->keep[j]);
	free(p->keep);
	p->keep = NULL;
	/* this result's records replace the last one's (which pinned what the trim met); once the
	 * proving is over no trim that matters follows, and the results left are only drained */
	struct rng g;
	rng__init(&g, E.o->seed, STREAM_ASSEMBLY + p->idx);
	free_result_records(f);
	if (!atomic_load(&E.proving_done)) {
		uint64_t b0 = now_ns();
		build_result_records(f, &g);
		truth_stall("result_records", b0, now_ns(), ",\"partition\":%u,\"blocks\":%u",
			    p->idx, f->nrecs);
	}

	uint64_t d = t1 - t0, max = atomic_load(&E.trim_max_ns);
	atomic_fetch_add(&E.trims, 1);
	atomic_fetch_add(&E.trim_ns, d);
	while (d > max && !atomic_compare_exchange_weak(&E.trim_max_ns, &max, d))
		;
	truth_stall("malloc_trim", t0, t1, ",\"tracker_lock_held\":%s,\"partition\":%u",
		    under_lock ? "true" : "false", p->idx);
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

/*
 * A finalizer: assembles each partition's result and records it (process_partition_result:
 * the result records, the tracker lock, malloc_trim).  Background work (nice 10): it yields the
 * CPU to the threads that feed the GPU.  E.sz.finalizers of them, each taking partitions in
 * order.
 */
static void *finalizer_main(void *arg)
{
	struct finalizer f = { .id = (unsigned)(uintptr_t)arg };
	name_thread("finalizer-%u", f.id);
	/* the heap a running daemon has: fragmented by the results it recorded before (built at
	 * start-up, before proving and before this thread steps back) */
	struct rng g;
	rng__init(&g, E.o->seed, STREAM_ASSEMBLY - 1 - f.id);
	build_result_records(&f, &g);
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), 10))
		perror("zkengine: setpriority");
	pthread_mutex_lock(&E.done_mu);
	E.fin_ready++;
	pthread_cond_broadcast(&E.fin_cv);
	pthread_mutex_unlock(&E.done_mu);
	for (;;) {
		uint64_t waited_from;
		struct part *p = pq_pop(&E.fin_q, &waited_from);
		if (!p)
			break;
		/* assemble: the stand-in proof combines the tail's output with the processed h */
		fr_t proof = fr_add(p->tail_out, p->post_out);
		(void)proof;
		process_partition_result(&f, p);
		free(p);
		pthread_mutex_lock(&E.done_mu);
		E.finished++;
		pthread_mutex_unlock(&E.done_mu);
	}
	free_result_records(&f);
	return NULL;
}

static void *gpu_worker_main(void *arg)
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

		prove_start(w, p, &seg);
		/* partial release: the a/b/c share of the reservation goes back now (the buffers
		 * themselves only after --verify read them) */
		budget_release(E.res_abc);
		tail_gpu_done(p);
	}
	return NULL;
}

/* oversubscribed: a CPU-bound pool (the seed's rayon threads) beyond the machine's cores */
static void *hog_main(void *arg)
{
	name_thread("msm-pool-%u", (unsigned)(uintptr_t)arg);
	fr_t x = fr_from_u64(3 + (uintptr_t)arg), acc = fr_one();
	while (!atomic_load_explicit(&E.stop_hogs, memory_order_relaxed))
		for (int i = 0; i < 4096; i++)
			acc = fr_mul(acc, x);
	return (void *)(uintptr_t)acc.l[0];
}

/* ---- results ----------------------------------------------------------------------------- */

static int cmp_iv(const void *x, const void *y)
{
	const struct iv *a = x, *b = y;
	return a->s < b->s ? -1 : a->s > b->s;
}

/* Sort and merge in place; intervals closer than `bridge` ns become one. */
static void ivs_merge(struct ivs *l, uint64_t bridge)
{
	if (!l->n)
		return;
	qsort(l->v, l->n, sizeof(*l->v), cmp_iv);
	size_t k = 0;
	for (size_t i = 1; i < l->n; i++) {
		if (l->v[i].s <= l->v[k].e + bridge) {
			if (l->v[i].e > l->v[k].e)
				l->v[k].e = l->v[i].e;
		} else {
			l->v[++k] = l->v[i];
		}
	}
	l->n = k + 1;
}

static void ivs_add(struct ivs *l, uint64_t start, uint64_t end)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 256;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v)
			oom();
	}
	l->v[l->n++] = (struct iv){ start, end };
}

/* The intersection of two merged lists. */
static struct ivs ivs_intersect(const struct ivs *a, const struct ivs *b)
{
	struct ivs r = { 0 };
	for (size_t i = 0, j = 0; i < a->n && j < b->n;) {
		uint64_t s = a->v[i].s > b->v[j].s ? a->v[i].s : b->v[j].s;
		uint64_t e = a->v[i].e < b->v[j].e ? a->v[i].e : b->v[j].e;
		if (s < e)
			ivs_add(&r, s, e);
		if (a->v[i].e < b->v[j].e)
			i++;
		else
			j++;
	}
	return r;
}

/* ns of the merged list l inside [s, e) */
static uint64_t ivs_overlap(const struct ivs *l, uint64_t s, uint64_t e)
{
	uint64_t ns = 0;
	for (size_t i = 0; i < l->n && l->v[i].s < e; i++) {
		uint64_t a = l->v[i].s > s ? l->v[i].s : s, b = l->v[i].e < e ? l->v[i].e : e;
		if (a < b)
			ns += b - a;
	}
	return ns;
}

static struct ivs ivs_copy(const struct ivs *l)
{
	struct ivs r = { 0 };
	for (size_t i = 0; i < l->n; i++)
		ivs_add(&r, l->v[i].s, l->v[i].e);
	return r;
}

/* The stalls of this scenario's own mechanism, as one merged list (none for fixed). */
static struct ivs own_stalls(void)
{
	struct ivs none = { 0 };
	switch (E.o->scenario) {
	case SCENARIO_TRACKER_TRIM: /* waiting for the tracker lock while a trim holds it */
		return ivs_intersect(&stalls.k[STALL_TRACKER_WAIT], &stalls.k[STALL_TRIM_LOCKED]);
	case SCENARIO_GPU_LOCK_WIDE: /* waiting for the GPU mutex while its holder does host work */
		return ivs_intersect(&stalls.k[STALL_GPU_LOCK_WAIT],
				     &stalls.k[STALL_GPU_LOCK_HOLD]);
	case SCENARIO_STARVED:
		return ivs_copy(&stalls.k[STALL_WAIT_WORK]);
	case SCENARIO_PAGEABLE:
		return ivs_copy(&stalls.k[STALL_SYNC_COPY]);
	case SCENARIO_OVERSUBSCRIBED:
		return ivs_copy(&stalls.k[STALL_PREEMPTED]);
	default:
		return none;
	}
}

/*
 * The device's busy intervals: simcuda's exact kernel intervals (SIMCUDA_TRACE) on the
 * simulator, else each partition's kernel span from its CUDA events.  Gaps shorter than
 * SIM_BRIDGE_NS (launch handoffs between back-to-back kernels) are bridged.
 */
#define SIM_BRIDGE_NS 100000ull
static struct ivs busy_intervals(const char *sim_trace, const struct gpu_ctx *g, uint64_t since)
{
	struct ivs l = { 0 };
	FILE *f = sim_trace && *sim_trace ? fopen(sim_trace, "re") : NULL;
	if (!f) {
		for (unsigned k = 0; k < g->nbusy; k++)
			ivs_add(&l, g->busy[2 * k], g->busy[2 * k + 1]);
		ivs_merge(&l, 0);
		return l;
	}
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		int d;
		unsigned long long st, en;
		const char *p = strstr(line, "\"start_ns\":");
		const char *q = strstr(line, "\"end_ns\":");
		if (sscanf(line, "{\"device\":%d", &d) != 1 || d != g->ordinal || !p || !q)
			continue;
		if (sscanf(p, "\"start_ns\":%llu", &st) != 1 ||
		    sscanf(q, "\"end_ns\":%llu", &en) != 1 || st < since)
			continue;
		ivs_add(&l, st, en);
	}
	fclose(f);
	ivs_merge(&l, SIM_BRIDGE_NS);
	return l;
}

/*
 * The GPU's truth for one device: its busy intervals, and every idle window of 1 ms or more
 * between its first kernel and its last (the steady state), with the ns of it that each kind of
 * stall of a GPU-feeding thread overlaps and the ns the scenario's own mechanism overlaps.
 * Returns steady-state busy %; *whole_pct gets busy over [t_start, t_end].
 */
static double truth_gpu(const struct ivs *busy, unsigned gpu, const struct ivs *own,
			uint64_t t_start, uint64_t t_end, double *whole_pct, uint64_t *busy_ns)
{
	uint64_t b = 0, idle = 0, own_ns = 0;
	for (size_t i = 0; i < busy->n; i++) {
		b += busy->v[i].e - busy->v[i].s;
		truth_line("{\"kind\":\"gpu_busy\",\"gpu\":%u,\"start_ns\":%llu,\"end_ns\":%llu}",
			   gpu, (unsigned long long)busy->v[i].s, (unsigned long long)busy->v[i].e);
	}
	for (size_t i = 1; i < busy->n; i++) {
		uint64_t s = busy->v[i - 1].e, e = busy->v[i].s;
		if (e - s < 1000000)
			continue;
		char kinds[512] = "";
		size_t len = 0;
		for (int k = 0; k < STALL_COUNT; k++) {
			uint64_t ns = ivs_overlap(&stalls.k[k], s, e);
			if (ns && len < sizeof(kinds))
				len += (size_t)snprintf(kinds + len, sizeof(kinds) - len,
							"%s\"%s\":%llu", len ? "," : "",
							stall_names[k], (unsigned long long)ns);
		}
		uint64_t o = ivs_overlap(own, s, e);
		idle += e - s;
		own_ns += o;
		truth_line("{\"kind\":\"gpu_idle\",\"gpu\":%u,\"start_ns\":%llu,\"end_ns\":%llu,"
			   "\"ns\":%llu,\"own_ns\":%llu,\"stalls\":{%s}}",
			   gpu, (unsigned long long)s, (unsigned long long)e,
			   (unsigned long long)(e - s), (unsigned long long)o, kinds);
	}
	uint64_t first = busy->n ? busy->v[0].s : 0, last = busy->n ? busy->v[busy->n - 1].e : 0;
	double steady = last > first ? 100.0 * (double)b / (double)(last - first) : 0;
	*whole_pct = t_end > t_start ? 100.0 * (double)b / (double)(t_end - t_start) : 0;
	*busy_ns = b;
	truth_line("{\"kind\":\"gpu_steady\",\"gpu\":%u,\"busy_pct\":%.2f,\"whole_busy_pct\":%.2f,"
		   "\"first_kernel_ns\":%llu,\"last_kernel_ns\":%llu,\"idle_ns\":%llu,"
		   "\"own_ns\":%llu,\"own_share\":%.4f}",
		   gpu, steady, *whole_pct, (unsigned long long)first, (unsigned long long)last,
		   (unsigned long long)idle, (unsigned long long)own_ns,
		   idle ? (double)own_ns / (double)idle : 0.0);
	return steady;
}

/* ---- run --------------------------------------------------------------------------------- */

static unsigned cpus_online(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

int pipeline__run(const struct zk_opts *opts)
{
	struct zk_opts o = *opts;
	unsigned cpus = cpus_online();
	char sim_trace[4096] = "";
	bool own_trace = false;

	/* The simulator's exact kernel times are the GPU truth: have simcuda write them. */
	if (o.truth && o.device != GPU_CUDA) {
		const char *t = getenv("SIMCUDA_TRACE");
		if (t && *t) {
			snprintf(sim_trace, sizeof(sim_trace), "%s", t);
		} else {
			snprintf(sim_trace, sizeof(sim_trace), "%s.simcuda-trace", o.truth);
			unlink(sim_trace);
			setenv("SIMCUDA_TRACE", sim_trace, 1);
			own_trace = true;
		}
	}
	enum gpu_backend b = gpu__init(o.device);
	int count = gpu__count();
	if ((int)o.gpus > count) {
		fprintf(stderr, "zkengine: --gpus %u: only %d device%s\n", o.gpus, count,
			count == 1 ? "" : "s");
		return 2;
	}
	/* scenario defaults for what the command line left open: the simulator's device time is
	 * modelled per thread, so a small domain keeps its CPU versions of the kernels cheap */
	if (!o.log2n)
		o.log2n = b == GPU_CUDA ? 22 : 8;
	if (!o.synth_threads)
		o.synth_threads = o.scenario == SCENARIO_STARVED ? 1 :
				  b == GPU_CUDA			 ? (cpus > 4 ? cpus - 2 : 2) :
								   4;
	if (o.truth) {
		truth.f = fopen(o.truth, "we");
		if (!truth.f) {
			fprintf(stderr, "zkengine: --truth %s: %m\n", o.truth);
			return 1;
		}
	}
	E.o = &o;
	E.sz = sizing_for(&o, b, cpus);
	E.vec_bytes = ((size_t)1 << o.log2n) * sizeof(fr_t);
	E.res_abc = 3 * E.vec_bytes;
	E.res_rest = E.vec_bytes + (size_t)E.sz.temps * (E.sz.temp_min + E.sz.temp_max) / 2;
	budget.total = (size_t)E.sz.inflight * (E.res_abc + E.res_rest);
	pq_init(&E.synth_q);
	pq_init(&E.gpu_q);
	pq_init(&E.fin_q);
	/* the synthesis temporaries stay in the arenas (not mmap), whatever was freed before */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);

	/*
	 * The finalizers first: the fragmented heap a running daemon has is built before the
	 * device is touched, so the recording's first GPU work is the proving's.
	 */
	pthread_t *fins = calloc(E.sz.finalizers, sizeof(*fins));
	pthread_t *tailpool = calloc(o.gpus * o.gpu_workers + 1, sizeof(*tailpool));
	if (!tailpool || !fins)
		oom();
	for (unsigned i = 0; i < E.sz.finalizers; i++)
		if (pthread_create(&fins[i], NULL, finalizer_main, (void *)(uintptr_t)i))
			oom();
	pthread_mutex_lock(&E.done_mu);
	while (E.fin_ready < E.sz.finalizers)
		pthread_cond_wait(&E.fin_cv, &E.done_mu);
	pthread_mutex_unlock(&E.done_mu);

	unsigned ngpu = o.gpus, nworkers = ngpu * o.gpu_workers;
	struct gpu_ctx **gpus = calloc(ngpu, sizeof(*gpus));
	struct worker *workers = calloc(nworkers, sizeof(*workers));
	if (!gpus || !workers)
		oom();
	for (unsigned i = 0; i < ngpu; i++) {
		struct gpu_ctx *g = gpus[i] = calloc(1, sizeof(*g));
		if (!g)
			oom();
		g->ordinal = (int)i;
		g->dev = gpu__open((int)i, o.log2n);
		pthread_mutex_init(&g->lock, NULL);
		pthread_mutex_init(&g->stats_mu, NULL);
	}
	for (unsigned i = 0; i < nworkers; i++) {
		workers[i].id = i;
		workers[i].gpu = gpus[i / o.gpu_workers];
		workers[i].work = gpu__work_new(workers[i].gpu->dev, o.log2n);
	}
	pool.dev = gpus[0]->dev;
	pool.pageable = o.scenario == SCENARIO_PAGEABLE;
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

	printf("zkengine: device %s (%s), %u of %d GPU%s: %s\n", gpu__backend_name(b),
	       gpu__driver_path(), ngpu, count, count == 1 ? "" : "s", gpu__name(gpus[0]->dev));
	printf("zkengine: %u partitions of 2^%u points, scenario %s, seed %#llx (--seed to "
	       "reproduce)\n",
	       o.partitions, o.log2n, zk_scenario_name(o.scenario), (unsigned long long)o.seed);
	printf("zkengine: %u synthesis threads, %u GPU workers per GPU, budget %u partitions, "
	       "%u CPUs\n",
	       o.synth_threads, o.gpu_workers, E.sz.inflight, cpus);
	truth_line(
		"{\"kind\":\"meta\",\"pid\":%d,\"scenario\":\"%s\",\"backend\":\"%s\","
		"\"gpus\":%u,\"gpu_workers\":%u,\"synth_threads\":%u,\"partitions\":%u,"
		"\"log2n\":%u,\"cpus\":%u,\"clock\":\"CLOCK_MONOTONIC\",\"gpu_busy_bridge_ns\":%llu}",
		getpid(), zk_scenario_name(o.scenario), gpu__backend_name(b), ngpu, o.gpu_workers,
		o.synth_threads, o.partitions, o.log2n, cpus, b == GPU_SIM ? SIM_BRIDGE_NS : 0ull);

	if (o.verify) {
		char msg[MSG_LEN];
		for (unsigned i = 0; i < ngpu; i++) {
			struct rng g;
			rng__init(&g, o.seed, STREAM_NTT_CHECK + i);
			if (verify__ntt(workers[i * o.gpu_workers].work, o.log2n, &g, msg,
					sizeof(msg))) {
				fprintf(stderr, "zkengine: verification FAILED on GPU %u: %s\n", i,
					msg);
				return 1;
			}
		}
		printf("zkengine: NTT of 2^%u points equals the GMP DFT, inverse after forward "
		       "is the identity\n",
		       o.log2n < 10 ? o.log2n : 10);
	}

	printf("%4s %3s", "part", "gpu");
	for (int s = 0; s < GPU_NSTAGES; s++)
		printf(" %10s", gpu__stage_name(s));
	printf(" %10s %s\n", "total", "verify");
	fflush(stdout);

	uint64_t t_start = now_ns();
	unsigned nhogs = o.scenario == SCENARIO_OVERSUBSCRIBED ? E.sz.hogs : 0;
	pthread_t *hogs = calloc(nhogs ? nhogs : 1, sizeof(*hogs));
	pthread_t disp, *synth = calloc(o.synth_threads, sizeof(*synth));
	if (!hogs || !synth)
		oom();
	for (unsigned i = 0; i < nhogs; i++)
		pthread_create(&hogs[i], NULL, hog_main, (void *)(uintptr_t)i);
	E.synth_live = o.synth_threads;
	for (unsigned i = 0; i < o.synth_threads; i++)
		if (pthread_create(&synth[i], NULL, synth_main, (void *)(uintptr_t)i))
			oom();
	for (unsigned i = 0; i <= nworkers; i++)
		if (pthread_create(&tailpool[i], NULL, tail_main, (void *)(uintptr_t)i))
			oom();
	for (unsigned i = 0; i < nworkers; i++)
		if (pthread_create(&workers[i].thread, NULL, gpu_worker_main, &workers[i]))
			oom();
	if (pthread_create(&disp, NULL, dispatcher_main, NULL))
		oom();

	pthread_join(disp, NULL);
	for (unsigned i = 0; i < o.synth_threads; i++)
		pthread_join(synth[i], NULL);
	for (unsigned i = 0; i < nworkers; i++)
		pthread_join(workers[i].thread, NULL);
	/* the pool oversubscribes the proving, not the background result processing after it */
	uint64_t t_gpu_done = now_ns();
	atomic_store(&E.stop_hogs, true);
	atomic_store(&E.proving_done, true);
	for (unsigned i = 0; i < nhogs; i++)
		pthread_join(hogs[i], NULL);
	if (nhogs)
		truth_line("{\"kind\":\"oversubscribe\",\"threads\":%u,\"cpus\":%u,"
			   "\"start_ns\":%llu,\"end_ns\":%llu}",
			   nhogs, cpus, (unsigned long long)t_start,
			   (unsigned long long)t_gpu_done);
	tails_close();
	for (unsigned i = 0; i <= nworkers; i++)
		pthread_join(tailpool[i], NULL);
	free(tailpool);
	pq_close(&E.fin_q);
	for (unsigned i = 0; i < E.sz.finalizers; i++)
		pthread_join(fins[i], NULL);
	free(fins);
	uint64_t t_end = now_ns();

	int status = atomic_load(&E.status);
	if (o.verify && !status)
		printf("verification passed (%u partitions)\n", o.partitions);

	/*
	 * Tear the workers down before counting: freeing a worker synchronizes its stream, and the
	 * counts printed below must equal every driver call the engine made (a recorder's trace is
	 * checked against them).
	 */
	for (unsigned i = 0; i < nworkers; i++)
		gpu__work_free(workers[i].work);
	for (struct bufs *p = pool.free, *next; p; p = next) {
		next = p->next;
		gpu__host_free(pool.dev, p->a);
		gpu__host_free(pool.dev, p->b);
		gpu__host_free(pool.dev, p->c);
		gpu__host_free(pool.dev, p->h);
		free(p);
	}

	double secs = (double)(t_end - t_start) / 1e9;
	uint64_t launches = 0;
	for (unsigned i = 0; i < ngpu; i++)
		launches += gpu__launches(gpus[i]->dev);
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
	char sync_json[256];
	snprintf(sync_json, sizeof(sync_json),
		 "{\"cuStreamSynchronize\":%llu,\"cuEventSynchronize\":%llu,"
		 "\"cuCtxSynchronize\":%llu,\"cuMemcpyHtoD\":%llu}",
		 (unsigned long long)gpu__sync_calls(GPU_SYNC_STREAM),
		 (unsigned long long)gpu__sync_calls(GPU_SYNC_EVENT),
		 (unsigned long long)gpu__sync_calls(GPU_SYNC_CTX),
		 (unsigned long long)gpu__sync_calls(GPU_SYNC_MEMCPY));
	for (int k = 0; k < STALL_COUNT; k++)
		ivs_merge(&stalls.k[k], 0);
	struct ivs own = own_stalls();
	for (unsigned i = 0; i < ngpu; i++) {
		struct gpu_ctx *g = gpus[i];
		uint64_t busy = 0;
		double whole;
		struct ivs iv = busy_intervals(b == GPU_SIM ? sim_trace : NULL, g, t_start);
		double pct = truth_gpu(&iv, i, &own, t_start, t_end, &whole, &busy);
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
			b == GPU_SIM && *sim_trace ? "simcuda" : "events");
	}
	free(own.v);

	for (unsigned i = 0; i < ngpu; i++) {
		gpu__close(gpus[i]->dev);
		free(gpus[i]->busy);
		free(gpus[i]);
	}
	if (truth.f) {
		truth_line("{\"kind\":\"counts\",\"partitions\":%u,\"launches\":%llu,"
			   "\"malloc_trim\":%llu,\"sync\":%s,\"wall_ns\":%llu}",
			   E.finished, (unsigned long long)launches, (unsigned long long)trims,
			   sync_json, (unsigned long long)(t_end - t_start));
		fclose(truth.f);
		if (own_trace)
			unlink(sim_trace);
	}
	free(gpus);
	free(workers);
	free(hogs);
	free(synth);
	return status;
}
