// SPDX-License-Identifier: MIT
/*
 * The pipeline's first stages (pipeline.c has the diagram): the dispatcher, which reserves each
 * partition's memory from the budget and queues it for synthesis, and the synthesis threads,
 * which build its witness and queue it for the GPU workers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline_int.h"
#include "rng.h"

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

/* ---- the stages -------------------------------------------------------------------------- */

/* --hold-last: read standard input to its end (the data is ignored). */
static void hold_for_stdin(void)
{
	char buf[256];
	ssize_t n;

	while ((n = read(STDIN_FILENO, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		;
}

void *dispatcher_main(void *arg)
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

void *synth_main(void *arg)
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
