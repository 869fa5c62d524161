// SPDX-License-Identifier: MIT
/*
 * The finalizers (pipeline.c has the diagram): background threads (nice 10) that record each
 * partition's result under the tracker lock, trim the heap (malloc_trim(0)) and build the
 * result's records, the fragmentation the next trim meets.
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "pipeline_int.h"
#include "rng.h"

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

/* ---- the stage --------------------------------------------------------------------------- */

/*
 * Recording a partition's result: under the tracker lock, as the seed's engine does, then
 * malloc_trim(0) to hand the freed synthesis memory back.  tracker-trim trims while still
 * holding the lock; every other scenario makes the same call after releasing it.
 */
static void __attribute__((noinline)) process_partition_result(struct finalizer *f, struct part *p)
{
	bool under_lock = scenario(SCENARIO_TRACKER_TRIM);

	if (scenario(SCENARIO_PARALLEL_WAITS)) {
		/* its recorders trim (waits.c): the finalizers only count, so that nothing else
		 * fragments or trims the heap under the trims the scenario times */
		pthread_mutex_lock(&tracker_lock);
		tracker.done++;
		tracker.busy_workers--;
		pthread_mutex_unlock(&tracker_lock);
		for (unsigned j = 0; j < p->nkeep; j++)
			free(p->keep[j]);
		free(p->keep);
		p->keep = NULL;
		return;
	}

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

/*
 * A finalizer: assembles each partition's result and records it (process_partition_result:
 * the result records, the tracker lock, malloc_trim).  Background work (nice 10): it yields the
 * CPU to the threads that feed the GPU.  E.sz.finalizers of them, each taking partitions in
 * order.
 */
void *finalizer_main(void *arg)
{
	struct finalizer f = { .id = (unsigned)(uintptr_t)arg };
	name_thread("finalizer-%u", f.id);
	/* the heap a running daemon has: fragmented by the results it recorded before (built at
	 * start-up, before proving and before this thread steps back) */
	struct rng g;
	rng__init(&g, E.o->seed, STREAM_ASSEMBLY - 1 - f.id);
	if (!scenario(SCENARIO_PARALLEL_WAITS))
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
		fr_t proof = fr_add(fr_add(p->tail_out, p->post_out), p->batch_out);
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
