// SPDX-License-Identifier: GPL-2.0
/*
 * Recoverable time (reports/analysis/recover.c) on gaps made by hand: a closer's pieces and the
 * roots under them, as the blame walk hands them over. Times in ms for reading, ns inside.
 *   - parallel waits: the lock over the trim, then the batch: the trim gives back nothing, the
 *     producer its time after the trim; the chain's links and the hops say the same;
 *   - a lock handed on (the closer woken, beaten to it, retrying): both holders' trims at once;
 *   - a second lock held by a thread that queued behind the removed holder: it moves too;
 *   - own work and the wait for a CPU amid it go together; a sleep is a duration;
 *   - two gaps of the same cause add up; the causes and hops come ranked, in range.
 */
#include <string.h>

#include "recover.h"
#include "testlib.h"

#define MS 1000000ULL

static const char *TRIM = "malloc_trim", *PRODUCE = "produce_batch", *OWN = "prove";
static const char *TRACKER = "tracker_lock", *BATCH = "by waits_batch", *GPU = "gpu_lock";

static struct chain_link wait_link(__u32 tid, enum blame_kind k, const char *lock)
{
	return (struct chain_link){ .tid = tid, .state = TS_BLOCKED, .kind = k, .lock = lock };
}

static struct chain_link root_link(__u32 tid, enum blame_kind k, enum thread_state st,
				   const char *fn)
{
	return (struct chain_link){ .tid = tid, .state = st, .kind = k, .function = fn };
}

/* A gap from pieces: each piece [start, end) in ms, how, its futex word, its roots in order. */
struct piece {
	double start, end;
	enum seg_how how;
	__u64 futex;
	__u32 nparts;
	struct {
		__u32 root;
		double ms;
	} parts[4];
};

static void make_gap(struct gap *g, struct gap_root *roots, __u32 nroots, const struct piece *p,
		     __u32 np, double end)
{
	memset(g, 0, sizeof(*g));
	g->start_ns = 0;
	g->end_ns = (__u64)(end * MS);
	g->roots = roots;
	g->nroots = nroots;
	g->segs = calloc(np, sizeof(*g->segs));
	g->seg_parts = calloc(np * 4, sizeof(*g->seg_parts));
	for (__u32 i = 0; i < np; i++) {
		g->segs[i] = (struct gap_seg){ .start = (__u64)(p[i].start * MS),
					       .end = (__u64)(p[i].end * MS),
					       .how = p[i].how,
					       .futex = p[i].futex,
					       .first = g->nseg_parts,
					       .nparts = p[i].nparts };
		for (__u32 k = 0; k < p[i].nparts; k++)
			g->seg_parts[g->nseg_parts++] = (struct gap_seg_part){
				.root = p[i].parts[k].root, .ns = (__u64)(p[i].parts[k].ms * MS)
			};
	}
	g->nsegs = np;
	for (__u32 r = 0; r < nroots; r++)
		for (__u32 i = 0; i < g->nseg_parts; i++)
			if (g->seg_parts[i].root == r)
				roots[r].ns += g->seg_parts[i].ns;
	g->chain = roots[0].links;
	g->nchain = roots[0].nlinks;
}

static void free_gap(struct gap *g)
{
	free(g->segs);
	free(g->seg_parts);
	free(g->hops);
}

static const struct cause *cause(struct cause *c, size_t n, enum blame_kind k, const char *fn)
{
	for (size_t i = 0; i < n; i++)
		if (c[i].kind == k && c[i].function == fn)
			return &c[i];
	return NULL;
}

static const struct hop *hop(const struct hop *h, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (h[i].name == name)
			return &h[i];
	return NULL;
}

static const struct hop *gap_hop(const struct gap *g, const char *name)
{
	return hop(g->hops, g->nhops, name);
}

/* Worker 1 waits 20 ms for the tracker lock (recorder 2 trims), then 75 ms for the batch
 * (producer 3), then 5 ms of its own. */
static void parallel_waits(void)
{
	struct chain_link l0[] = { wait_link(1, BK_LOCK, TRACKER),
				   root_link(2, BK_PROBE, TS_ON_CPU, TRIM) };
	struct chain_link l1[] = { wait_link(1, BK_COND, BATCH),
				   root_link(3, BK_ON_CPU, TS_ON_CPU, PRODUCE) };
	struct chain_link l2[] = { root_link(1, BK_ON_CPU, TS_ON_CPU, OWN) };
	struct gap_root roots[] = { { .links = l1, .nlinks = 2 },
				    { .links = l0, .nlinks = 2 },
				    { .links = l2, .nlinks = 1 } };
	const struct piece p[] = {
		{ 0, 20, SEG_WAIT, 0xa, 1, { { 1, 20 } } },
		{ 20, 95, SEG_WAIT, 0xb, 1, { { 0, 75 } } },
		{ 95, 100, SEG_OWN, 0, 1, { { 2, 5 } } },
	};
	struct recover rc = {};
	struct cause c[] = { { .kind = BK_PROBE, .function = TRIM },
			     { .kind = BK_ON_CPU, .function = PRODUCE },
			     { .kind = BK_ON_CPU, .function = OWN } };
	struct hop *h;
	size_t nh;
	struct gap g;

	make_gap(&g, roots, 3, p, 3, 100);
	CHECK(!recover__gap(&rc, &g), "recover__gap");
	/* The chain is the producer's: its wait and the batch each give back 75 ms. */
	CHECK_EQ_U64(g.chain[0].recoverable_ns, 75 * MS);
	CHECK_EQ_U64(g.chain[1].recoverable_ns, 75 * MS);
	CHECK_EQ_U64(gap_hop(&g, TRACKER)->recoverable_ns, 0);
	CHECK_EQ_U64(gap_hop(&g, TRACKER)->recoverable_hi_ns, 20 * MS);
	CHECK_EQ_U64(gap_hop(&g, BATCH)->recoverable_ns, 75 * MS);
	recover__causes(&rc, c, 3);
	CHECK_EQ_U64(cause(c, 3, BK_PROBE, TRIM)->recoverable_ns, 0);
	CHECK_EQ_U64(cause(c, 3, BK_PROBE, TRIM)->recoverable_hi_ns, 20 * MS);
	CHECK_EQ_U64(cause(c, 3, BK_ON_CPU, PRODUCE)->recoverable_ns, 75 * MS);
	CHECK_EQ_U64(cause(c, 3, BK_ON_CPU, OWN)->recoverable_ns, 5 * MS);
	CHECK(!recover__hops(&rc, &h, &nh), "recover__hops");
	CHECK(nh == 2 && h[0].name == BATCH && h[1].name == TRACKER, "hops ranked: %zu", nh);
	free(h);
	free_gap(&g);
	recover__free(&rc);
}

/*
 * The tracker lock held by finalizer 2 (trim 50 ms); the closer woken, beaten to it by
 * finalizer 4, retries for 0.2 ms and waits again (trim 29.8 ms); then 2 ms of its own. Then a
 * lock held by worker 5, which got the first lock after finalizer 6's trim, in another gap.
 */
static void handed_on(void)
{
	struct chain_link a[] = { wait_link(1, BK_LOCK, TRACKER),
				  root_link(2, BK_PROBE, TS_ON_CPU, TRIM) };
	struct chain_link b[] = { wait_link(1, BK_LOCK, TRACKER),
				  root_link(4, BK_PROBE, TS_ON_CPU, TRIM) };
	struct chain_link own[] = { root_link(1, BK_ON_CPU, TS_ON_CPU, OWN) };
	struct gap_root roots[] = { { .links = a, .nlinks = 2 },
				    { .links = b, .nlinks = 2 },
				    { .links = own, .nlinks = 1 } };
	const struct piece p[] = {
		{ 0, 50, SEG_WAIT, 0xa, 1, { { 0, 50 } } },
		{ 50, 50.2, SEG_OWN, 0, 1, { { 2, 0.2 } } },
		{ 50.2, 80, SEG_WAIT, 0xa, 1, { { 1, 29.8 } } },
		{ 80, 82, SEG_OWN, 0, 1, { { 2, 2 } } },
	};
	struct chain_link c0[] = { wait_link(1, BK_LOCK, TRACKER),
				   root_link(6, BK_PROBE, TS_ON_CPU, TRIM) };
	struct chain_link c1[] = { wait_link(1, BK_LOCK, TRACKER),
				   root_link(5, BK_ON_CPU, TS_ON_CPU, OWN) };
	struct chain_link c2[] = { wait_link(1, BK_LOCK, GPU),
				   root_link(5, BK_ON_CPU, TS_ON_CPU, OWN) };
	struct gap_root roots2[] = { { .links = c0, .nlinks = 2 },
				     { .links = c1, .nlinks = 2 },
				     { .links = c2, .nlinks = 2 },
				     { .links = own, .nlinks = 1 } };
	const struct piece q[] = {
		{ 0, 41, SEG_WAIT, 0xa, 2, { { 0, 40 }, { 1, 1 } } },
		{ 41, 42, SEG_OWN, 0, 1, { { 3, 1 } } },
		{ 42, 45, SEG_WAIT, 0xc, 1, { { 2, 3 } } },
	};
	struct recover rc = {};
	struct cause c[] = { { .kind = BK_PROBE, .function = TRIM } };
	struct gap g, g2;

	make_gap(&g, roots, 3, p, 4, 82);
	CHECK(!recover__gap(&rc, &g), "recover__gap");
	/* Without the trims the closer is at the lock at once: 0.2 + 2 ms of its own are left. */
	CHECK_EQ_U64(gap_hop(&g, TRACKER)->recoverable_ns, 79.8 * MS);
	make_gap(&g2, roots2, 4, q, 3, 45);
	CHECK(!recover__gap(&rc, &g2), "recover__gap");
	/* Worker 5 had the tracker lock after the trim: the GPU lock it held comes as much
	 * sooner as the tracker hop took (41 ms: the trim and worker 5's own hold of it). */
	CHECK_EQ_U64(gap_hop(&g2, TRACKER)->recoverable_ns, 41 * MS);
	recover__causes(&rc, c, 1);
	CHECK_EQ_U64(c[0].recoverable_ns, 119.8 * MS); /* the two gaps add up */
	CHECK(c[0].recoverable_lo_ns == c[0].recoverable_ns &&
		      c[0].recoverable_hi_ns >= c[0].recoverable_ns,
	      "range [%llu, %llu]", c[0].recoverable_lo_ns, c[0].recoverable_hi_ns);
	free_gap(&g);
	free_gap(&g2);
	recover__free(&rc);
}

/* A 5 ms wait for a cond whose waker's time in it was half work, half preempted; 10 ms of own
 * work, preempted 10 ms amid it; a 5 ms sleep. Then the same wait last: it bounds the rest. */
static void own_and_runnable(void)
{
	struct chain_link w[] = { root_link(1, BK_ON_CPU, TS_ON_CPU, OWN) };
	struct chain_link pr[] = { root_link(1, BK_PREEMPTED, TS_PREEMPTED, "by hog") };
	struct chain_link sl[] = { root_link(1, BK_SLEEP, TS_BLOCKED, "nanosleep") };
	struct chain_link cw[] = { wait_link(1, BK_COND, BATCH),
				   root_link(3, BK_ON_CPU, TS_ON_CPU, PRODUCE) };
	struct chain_link cp[] = { wait_link(1, BK_COND, BATCH),
				   root_link(3, BK_PREEMPTED, TS_PREEMPTED, "by hog") };
	struct gap_root roots[] = { { .links = w, .nlinks = 1 },
				    { .links = pr, .nlinks = 1 },
				    { .links = sl, .nlinks = 1 },
				    { .links = cw, .nlinks = 2 },
				    { .links = cp, .nlinks = 2 } };
	const struct piece p[] = {
		{ 0, 5, SEG_WAIT, 0xb, 2, { { 3, 2.5 }, { 4, 2.5 } } },
		{ 5, 15, SEG_OWN, 0, 1, { { 0, 10 } } },
		{ 15, 25, SEG_RUNNABLE, 0, 1, { { 1, 10 } } },
		{ 25, 30, SEG_OWN, 0, 1, { { 2, 5 } } },
	};
	struct recover rc = {};
	struct cause c[] = { { .kind = BK_ON_CPU, .function = OWN },
			     { .kind = BK_SLEEP, .function = "nanosleep" },
			     { .kind = BK_ON_CPU, .function = PRODUCE } };
	struct gap g;

	make_gap(&g, roots, 5, p, 4, 30);
	CHECK(!recover__gap(&rc, &g), "recover__gap");
	recover__causes(&rc, c, 3);
	CHECK_EQ_U64(c[0].recoverable_ns, 20 * MS); /* the work and the wait for a CPU amid it */
	CHECK_EQ_U64(c[1].recoverable_ns, 5 * MS);
	CHECK_EQ_U64(c[2].recoverable_ns, 5 * MS); /* the producer's work and its preemption */
	CHECK_EQ_U64(c[2].recoverable_hi_ns, 5 * MS);
	free_gap(&g);
	recover__free(&rc);

	/* The cond wait last, ready at 30 ms however early the closer gets to it. */
	const struct piece q[] = {
		{ 0, 10, SEG_OWN, 0, 1, { { 0, 10 } } },
		{ 10, 20, SEG_RUNNABLE, 0, 1, { { 1, 10 } } },
		{ 20, 25, SEG_OWN, 0, 1, { { 2, 5 } } },
		{ 25, 30, SEG_WAIT, 0xb, 2, { { 3, 2.5 }, { 4, 2.5 } } },
	};
	struct cause d[] = { { .kind = BK_ON_CPU, .function = OWN } };

	for (__u32 r = 0; r < 5; r++)
		roots[r].ns = 0;
	rc = (struct recover){};
	make_gap(&g, roots, 5, q, 4, 30);
	CHECK(!recover__gap(&rc, &g), "recover__gap");
	recover__causes(&rc, d, 1);
	CHECK_EQ_U64(d[0].recoverable_ns, 0);
	CHECK_EQ_U64(d[0].recoverable_hi_ns, 20 * MS);
	free_gap(&g);
	recover__free(&rc);
}

int main(void)
{
	parallel_waits();
	handed_on();
	own_and_runnable();
	printf("recover: parallel waits, hand-offs, own work: ok\n");
	TEST_PASS();
}
