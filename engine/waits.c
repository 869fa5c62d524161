// SPDX-License-Identifier: MIT
/*
 * parallel-waits: before each launch a GPU worker needs two things that two other threads make
 * at the same time (pipeline.c has the diagram):
 *   the tracker lock, which its recorder takes as the worker hands it the partition and holds
 *                 across a malloc_trim(0) of about X ms (the seed's finalizers' habit), and
 *   a batch       that its producer starts at that moment and makes in about Y > X ms.
 * So the gap before each launch is about Y, of which the report blames about X on the trim
 * (via the tracker lock) and Y - X on the producer. Shares mislead here: the twin without the
 * trim under the lock (--without trim) still waits Y for the batch and recovers about nothing;
 * the twin with a fast producer (--without slow-producer, Y / 40) recovers about Y - X and is
 * then bounded by the trim. Y is the batch's field products (sizing.produce_ops). X is the
 * trim's consolidation of the small chunks that an assembler thread leaves free between live
 * records after every trim (sizing.rec_chunks): malloc_trim(0) merges every free chunk of the
 * arenas' fast bins before it looks for pages to hand back. Both are CPU work with no system
 * call per chunk, so a loaded machine stretches both alike, and so does a recorder's tracing of
 * system calls (a trim over page-sized chunks makes one madvise a chunk, ~5 us each under it).
 * The assembler works while the GPU runs; the recorder takes the next partition once it is
 * done (a trim beside an assembler inside malloc would wait for its arena's lock).
 *
 * One producer, recorder and assembler per worker (the scenario runs one worker per GPU by
 * default). The finalizers neither trim nor fragment the heap in this scenario: the recorders'
 * trims are the only ones.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "pipeline_int.h"
#include "rng.h"

#define STREAM_RECORDER (1ULL << 59)

struct waits {
	struct worker *w;
	pthread_mutex_t mu;
	pthread_cond_t prod_cv, rec_cv, worker_cv;
	struct part *job;  /* the producer's next batch */
	struct part *item; /* handed to the recorder, until it holds the tracker lock */
	bool ready;	   /* the batch is made */
	bool closed;
	fr_t batch;
	pthread_t producer, recorder, assembler;
	unsigned trims;	    /* the recorder's, so far */
	unsigned assembled; /* the trims the assembler has made the next one's chunks after */
	bool assembling;
	pthread_cond_t asm_cv;
	void **live, **loose; /* the assembler's records, and the chunks freed between them */
};

/* What the truth says of each launch's two waits, by partition (waits_truth). */
struct step {
	uint64_t kick, trim_s, trim_e, prod_s, prod_e, ready;
	int gpu, tid;
	bool held, seen;
};

static struct {
	pthread_mutex_t mu;
	struct step *v;
	unsigned n;
} steps = { .mu = PTHREAD_MUTEX_INITIALIZER };

static struct step *step_of(unsigned idx)
{
	if (!steps.v) {
		steps.n = E.o->partitions;
		steps.v = calloc(steps.n, sizeof(*steps.v));
		if (!steps.v)
			oom();
	}
	return idx < steps.n ? &steps.v[idx] : NULL;
}

/* The batch: a dependent chain of field products over the partition's b, not to be skipped. */
static fr_t __attribute__((noinline)) produce_batch(const struct part *p, uint64_t ops)
{
	uint64_t n = E.vec_bytes / sizeof(fr_t);
	const fr_t *x = p->buf->b;
	fr_t acc = fr_one();
	for (uint64_t i = 0; i < ops; i++)
		acc = fr_add(fr_mul(acc, x[(i * 40503u) & (n - 1)]), x[i & (n - 1)]);
	return acc;
}

static void *producer_main(void *arg)
{
	struct waits *ws = arg;
	name_thread("producer-%u", ws->w->id);
	pthread_mutex_lock(&ws->mu);
	for (;;) {
		while (!ws->job && !ws->closed)
			pthread_cond_wait(&ws->prod_cv, &ws->mu);
		struct part *p = ws->job;
		if (!p)
			break;
		ws->job = NULL;
		pthread_mutex_unlock(&ws->mu);
		uint64_t t0 = now_ns();
		fr_t out = produce_batch(p, E.sz.produce_ops);
		uint64_t t1 = now_ns();
		stall_keep(STALL_PRODUCE, t0, t1);
		truth_stall("produce_batch", t0, t1, ",\"gpu\":%d,\"partition\":%u,\"ops\":%llu",
			    ws->w->gpu->ordinal, p->idx, (unsigned long long)E.sz.produce_ops);
		pthread_mutex_lock(&steps.mu);
		struct step *st = step_of(p->idx);
		if (st) {
			st->prod_s = t0;
			st->prod_e = t1;
		}
		pthread_mutex_unlock(&steps.mu);
		pthread_mutex_lock(&ws->mu);
		ws->batch = out;
		ws->ready = true;
		pthread_cond_signal(&ws->worker_cv);
	}
	pthread_mutex_unlock(&ws->mu);
	return NULL;
}

/*
 * Recording a partition's start in the tracker, then trimming the heap: parallel-waits' trim
 * under the tracker lock (after it with --without trim: the same call, as fixed makes it).
 */
static void __attribute__((noinline)) record_partition(struct waits *ws, unsigned idx)
{
	bool under_lock = !(E.o->without & ZK_WITHOUT_TRIM);

	tracker.recorded++;
	if (!under_lock)
		pthread_mutex_unlock(&tracker_lock);
	uint64_t t0 = now_ns();
	malloc_trim(0);
	uint64_t t1 = now_ns();
	if (under_lock) {
		pthread_mutex_unlock(&tracker_lock);
		stall_keep(STALL_TRIM_LOCKED, t0, t1);
	}
	uint64_t d = t1 - t0, max = atomic_load(&E.trim_max_ns);
	atomic_fetch_add(&E.trims, 1);
	atomic_fetch_add(&E.trim_ns, d);
	while (d > max && !atomic_compare_exchange_weak(&E.trim_max_ns, &max, d))
		;
	truth_stall("malloc_trim", t0, t1, ",\"tracker_lock_held\":%s,\"partition\":%u",
		    under_lock ? "true" : "false", idx);
	pthread_mutex_lock(&steps.mu);
	struct step *st = step_of(idx);
	if (st) {
		st->trim_s = t0;
		st->trim_e = t1;
		st->held = under_lock;
	}
	pthread_mutex_unlock(&steps.mu);
	pthread_mutex_lock(&ws->mu);
	ws->trims++;
	pthread_cond_signal(&ws->asm_cv);
	pthread_mutex_unlock(&ws->mu);
}

/*
 * A result's records, assembled: pairs of small blocks of which the first is freed at once (to
 * the fast bins: at most 120 bytes) and the second lives until the next assembly.
 */
static void __attribute__((noinline)) assemble_records(struct waits *ws, struct rng *g)
{
	unsigned n = E.sz.rec_chunks;
	for (unsigned i = 0; i < n; i++) {
		free(ws->live[i]);
		ws->loose[i] = xmalloc(24 + rng__next(g) % 96);
		ws->live[i] = xmalloc(24 + rng__next(g) % 96);
		*(volatile char *)ws->live[i] = (char)i;
	}
	for (unsigned i = 0; i < n; i++)
		free(ws->loose[i]);
}

static void *assembler_main(void *arg)
{
	struct waits *ws = arg;
	struct rng g;
	name_thread("assembler-%u", ws->w->id);
	rng__init(&g, E.o->seed, STREAM_RECORDER + ws->w->id);
	pthread_mutex_lock(&ws->mu);
	for (;;) {
		while (ws->assembled == ws->trims && !ws->closed)
			pthread_cond_wait(&ws->asm_cv, &ws->mu);
		if (ws->closed)
			break;
		ws->assembled = ws->trims;
		ws->assembling = true;
		pthread_mutex_unlock(&ws->mu);
		assemble_records(ws, &g);
		pthread_mutex_lock(&ws->mu);
		ws->assembling = false;
		pthread_cond_signal(&ws->rec_cv);
	}
	pthread_mutex_unlock(&ws->mu);
	return NULL;
}

static void *recorder_main(void *arg)
{
	struct waits *ws = arg;
	name_thread("recorder-%u", ws->w->id);
	pthread_mutex_lock(&ws->mu);
	for (;;) {
		while (!ws->item && !ws->closed)
			pthread_cond_wait(&ws->rec_cv, &ws->mu);
		if (!ws->item)
			break;
		/* the assembler's chunks all freed before the trim: malloc_trim takes each arena's
		 * lock, and an assembler preempted inside malloc would make the trim its wait */
		while (ws->assembling)
			pthread_cond_wait(&ws->rec_cv, &ws->mu);
		pthread_mutex_unlock(&ws->mu);
		/* the lock first, then the partition: the worker goes on only once it is held */
		pthread_mutex_lock(&tracker_lock);
		pthread_mutex_lock(&ws->mu);
		/* its number only: with --without trim the partition may be finished and freed
		 * before the trim is */
		unsigned idx = ws->item->idx;
		ws->item = NULL;
		pthread_cond_signal(&ws->worker_cv);
		pthread_mutex_unlock(&ws->mu);
		record_partition(ws, idx);
		pthread_mutex_lock(&ws->mu);
	}
	pthread_mutex_unlock(&ws->mu);
	return NULL;
}

void waits_start(struct worker *w)
{
	struct waits *ws = calloc(1, sizeof(*ws));
	if (!ws)
		oom();
	ws->w = w;
	pthread_mutex_init(&ws->mu, NULL);
	pthread_cond_init(&ws->prod_cv, NULL);
	pthread_cond_init(&ws->rec_cv, NULL);
	pthread_cond_init(&ws->worker_cv, NULL);
	pthread_cond_init(&ws->asm_cv, NULL);
	ws->live = calloc(E.sz.rec_chunks, sizeof(*ws->live));
	ws->loose = calloc(E.sz.rec_chunks, sizeof(*ws->loose));
	if (!ws->live || !ws->loose)
		oom();
	/* the first trim meets what every later one does: the assembler's first records (it
	 * starts as if after a trim) */
	ws->trims = 1;
	w->waits = ws;
	if (pthread_create(&ws->producer, NULL, producer_main, ws) ||
	    pthread_create(&ws->recorder, NULL, recorder_main, ws) ||
	    pthread_create(&ws->assembler, NULL, assembler_main, ws))
		oom();
}

void waits_stop(struct worker *w)
{
	struct waits *ws = w->waits;
	pthread_mutex_lock(&ws->mu);
	ws->closed = true;
	pthread_cond_broadcast(&ws->prod_cv);
	pthread_cond_broadcast(&ws->rec_cv);
	pthread_cond_broadcast(&ws->asm_cv);
	pthread_mutex_unlock(&ws->mu);
	pthread_join(ws->producer, NULL);
	pthread_join(ws->recorder, NULL);
	pthread_join(ws->assembler, NULL);
	for (unsigned i = 0; i < E.sz.rec_chunks; i++)
		free(ws->live[i]);
	free(ws->live);
	free(ws->loose);
	free(ws);
	w->waits = NULL;
}

/* The producer starts p's batch, and the recorder takes p once it holds the tracker lock. */
void waits_kick(struct worker *w, struct part *p)
{
	struct waits *ws = w->waits;
	uint64_t t = now_ns();
	pthread_mutex_lock(&steps.mu);
	struct step *st = step_of(p->idx);
	if (st) {
		st->kick = t;
		st->gpu = w->gpu->ordinal;
		st->tid = gettid();
		st->seen = true;
	}
	pthread_mutex_unlock(&steps.mu);
	pthread_mutex_lock(&ws->mu);
	ws->job = p;
	ws->ready = false;
	pthread_cond_signal(&ws->prod_cv);
	ws->item = p;
	pthread_cond_signal(&ws->rec_cv);
	while (ws->item)
		pthread_cond_wait(&ws->worker_cv, &ws->mu);
	pthread_mutex_unlock(&ws->mu);
}

void waits_batch(struct worker *w, struct part *p)
{
	struct waits *ws = w->waits;
	uint64_t t0 = now_ns(), d0 = run_delay_ns();
	pthread_mutex_lock(&ws->mu);
	while (!ws->ready)
		pthread_cond_wait(&ws->worker_cv, &ws->mu);
	p->batch_out = ws->batch;
	pthread_mutex_unlock(&ws->mu);
	uint64_t t1 = now_ns();
	waited(d0);
	if (t1 - t0 >= 100000)
		stall_keep(STALL_BATCH_WAIT, t0, t1);
	if (t1 - t0 >= 1000000)
		truth_stall("batch_wait", t0, t1, ",\"gpu\":%d,\"partition\":%u", w->gpu->ordinal,
			    p->idx);
	pthread_mutex_lock(&steps.mu);
	struct step *st = step_of(p->idx);
	if (st)
		st->ready = t1;
	pthread_mutex_unlock(&steps.mu);
}

/*
 * One line per launch: when the worker set both going (kick_ns), the trim's interval and
 * whether it held the tracker lock, the batch's interval, and when the worker had both
 * (ready_ns). The recoverable time of either is checked against these and the twins.
 */
void waits_truth(void)
{
	for (unsigned i = 0; i < steps.n; i++) {
		const struct step *s = &steps.v[i];
		if (!s->seen)
			continue;
		truth_line("{\"kind\":\"wait_step\",\"partition\":%u,\"gpu\":%d,\"tid\":%d,"
			   "\"kick_ns\":%llu,\"trim\":{\"start_ns\":%llu,\"end_ns\":%llu,"
			   "\"tracker_lock_held\":%s},\"producer\":{\"start_ns\":%llu,"
			   "\"end_ns\":%llu},\"ready_ns\":%llu}",
			   i, s->gpu, s->tid, (unsigned long long)s->kick,
			   (unsigned long long)s->trim_s, (unsigned long long)s->trim_e,
			   s->held ? "true" : "false", (unsigned long long)s->prod_s,
			   (unsigned long long)s->prod_e, (unsigned long long)s->ready);
	}
	free(steps.v);
	steps.v = NULL;
	steps.n = 0;
}
