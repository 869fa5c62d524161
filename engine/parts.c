// SPDX-License-Identifier: MIT
/*
 * The pipeline's partitions (pipeline.c has the diagram): their buffers (pinned and reused, or
 * pageable), the priority queues keyed (job_seq, partition) between the stages, and the memory
 * budget the dispatcher reserves and the workers release.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "pipeline_int.h"

struct buf_pool pool = { .mu = PTHREAD_MUTEX_INITIALIZER };

void __attribute__((noreturn)) oom(void)
{
	fprintf(stderr, "zkengine: out of memory (or out of threads)\n");
	exit(1);
}

void *xmalloc(size_t n)
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

struct bufs *bufs_get(void)
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

void bufs_put(struct bufs *b)
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

void pq_init(struct pq *q)
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

void pq_push(struct pq *q, struct part *p)
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

void pq_close(struct pq *q)
{
	pthread_mutex_lock(&q->mu);
	q->closed = true;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

struct part *pq_pop(struct pq *q, uint64_t *waited_from)
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

struct mem_budget budget = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

void budget_reserve(size_t bytes)
{
	pthread_mutex_lock(&budget.mu);
	while (budget.used + bytes > budget.total)
		pthread_cond_wait(&budget.cv, &budget.mu);
	budget.used += bytes;
	pthread_mutex_unlock(&budget.mu);
}

void budget_release(size_t bytes)
{
	pthread_mutex_lock(&budget.mu);
	budget.used -= bytes;
	pthread_cond_broadcast(&budget.cv);
	pthread_mutex_unlock(&budget.mu);
}
