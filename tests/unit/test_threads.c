// SPDX-License-Identifier: GPL-2.0
/*
 * The thread timelines' tables keyed by what the target chooses (reports/analysis/threads.c):
 * a futex word is let go of once its last wait is pruned, and a lock hand-off on a word still
 * held is found as before; past THREADS_WAKES_MAX waits the oldest go, counted; a thread is
 * let go of once the horizon passes its exit and its timelines are empty, unless kept, and past
 * THREADS_EXITED_MAX exited threads the first to exit go, counted; the prune drops exactly what
 * ended before its horizon, whichever thread holds it.
 */
#include <stdint.h>
#include <string.h>

#include "futex.h"
#include "offcpu.h"
#include "sample.h"
#include "stacktab.h"
#include "strtab.h"
#include "testlib.h"
#include "threads.h"
#include "trace.h"

#define TGID 100

/* A blocked interval [s, e) of tid, woken by waker, then its futex wait on uaddr over it. */
static void wait_on(struct threads *t, __u32 tid, __u32 waker, __u64 uaddr, __u64 s, __u64 e)
{
	struct offcpu_event o = {};
	struct futex_event f = {};

	o.h = (struct gs_hdr){
		.type = GS_EV_OFFCPU, .size = sizeof(o), .ts = s, .tid = tid, .tgid = TGID
	};
	o.dur_ns = e - s;
	o.state = OFFCPU_BLOCKED;
	o.waker_tid = waker;
	o.waker_tgid = TGID;
	o.wake_ts = e - 1;
	memcpy(o.waker_comm, "waker", 6);
	CHECK(!threads__add_offcpu(t, &o.h, TRACE_VERSION), "threads__add_offcpu");
	f.h = (struct gs_hdr){
		.type = GS_EV_FUTEX, .size = sizeof(f), .ts = s, .tid = tid, .tgid = TGID
	};
	f.uaddr = uaddr;
	f.dur_ns = e - s;
	CHECK(!threads__add_futex(t, &f.h), "threads__add_futex");
}

static void sample(struct threads *t, __u32 tid, __u64 ts)
{
	struct sample_event e = {};

	e.h = (struct gs_hdr){
		.type = GS_EV_SAMPLE, .size = sizeof(e), .ts = ts, .tid = tid, .tgid = TGID
	};
	CHECK(!threads__add_sample(t, &e.h), "threads__add_sample");
}

/* Words never used twice: those whose wait ended before the horizon go, the rest answer. */
static void words(struct strtab *strs, struct stacktab *st)
{
	struct threads *t = threads__new(strs, st);
	const struct threads_counts *c = threads__counts(t);
	const struct th_wake *w;

	CHECK(t, "threads__new");
	for (__u64 i = 0; i < 10000; i++)
		wait_on(t, 1 + (i & 1), 2 - (i & 1), 0x10000 + 8 * i, 1000 * i + 10,
			1000 * i + 900);
	CHECK_EQ_U64(c->words_max, 10000);
	w = threads__next_wake(t, 0x10000, TGID, 0, 2, 0, UINT64_MAX);
	CHECK(w && w->tid == 1 && w->end == 900, "the first word's wait");
	threads__prune(t, 5000 * 1000);
	CHECK_EQ_U64(c->words_forgotten, 5000);
	CHECK(!threads__next_wake(t, 0x10000 + 8 * 4999, TGID, 0, 1, 0, UINT64_MAX),
	      "a word pruned answers nothing");
	w = threads__next_wake(t, 0x10000 + 8 * 5001, TGID, 0, 1, 0, UINT64_MAX);
	CHECK(w && w->tid == 2 && w->end == 5001 * 1000 + 900, "a word kept answers");
	/* A word pruned and used again starts afresh. */
	wait_on(t, 1, 2, 0x10000, 20000000, 20000500);
	w = threads__next_wake(t, 0x10000, TGID, 0, 2, 0, UINT64_MAX);
	CHECK(w && w->end == 20000500, "a word used again: its new wait only");
	threads__prune(t, UINT64_MAX);
	CHECK_EQ_U64(c->words_forgotten, 10001);
	CHECK_EQ_U64(c->wakes_evicted, 0);
	threads__free(t);
}

/* One word's waits, the hand-off chain through them, partly pruned. */
static void one_word(struct strtab *strs, struct stacktab *st)
{
	struct threads *t = threads__new(strs, st);
	const struct th_wake *w;

	CHECK(t, "threads__new");
	for (__u64 i = 0; i < 100; i++) {
		wait_on(t, 1 + (i % 3), 1 + ((i + 1) % 3), 0x5000, 1000 * i + 10, 1000 * i + 900);
		wait_on(t, 7, 8, 0x6000 + 8 * i, 1000 * i + 10,
			1000 * i + 950); /* others between */
	}
	threads__prune(t, 50 * 1000);
	w = threads__next_wake(t, 0x5000, TGID, 0, 1 + (52 % 3), 0, UINT64_MAX);
	CHECK(w && w->end == 51 * 1000 + 900, "the first wait left, by its waker");
	w = threads__next_wake(t, 0x5000, TGID, 0, 1 + (62 % 3), 60 * 1000 + 900, UINT64_MAX);
	CHECK(w && w->end == 61 * 1000 + 900, "after a time");
	CHECK(!threads__next_wake(t, 0x5000, TGID, 0, 1 + (62 % 3), 60 * 1000 + 900, 61 * 1000),
	      "before a time");
	CHECK_EQ_U64(threads__counts(t)->words_forgotten, 50);
	threads__free(t);
}

/* Past THREADS_WAKES_MAX waits held, the oldest go, counted. */
static void wakes_bound(struct strtab *strs, struct stacktab *st)
{
	struct threads *t = threads__new(strs, st);
	const struct threads_counts *c = threads__counts(t);

	CHECK(t, "threads__new");
	for (__u64 i = 0; i < THREADS_WAKES_MAX + 100; i++)
		wait_on(t, 1, 2, 0x10000 + 8 * i, 100 * i + 10, 100 * i + 90);
	CHECK_EQ_U64(c->wakes_evicted, 100);
	CHECK_EQ_U64(c->words_max, THREADS_WAKES_MAX);
	CHECK(!threads__next_wake(t, 0x10000 + 8 * 99, TGID, 0, 2, 0, UINT64_MAX),
	      "an evicted wait answers nothing");
	CHECK(threads__next_wake(t, 0x10000 + 8 * 100, TGID, 0, 2, 0, UINT64_MAX),
	      "the oldest kept answers");
	threads__prune(t, UINT64_MAX);
	CHECK_EQ_U64(c->words_forgotten, THREADS_WAKES_MAX);
	threads__free(t);
}

/* Exited threads go once the horizon passes their exit and their timelines are empty. */
static void exits(struct strtab *strs, struct stacktab *st)
{
	struct threads *t = threads__new(strs, st);
	const struct threads_counts *c = threads__counts(t);
	struct thread *kept;

	CHECK(t, "threads__new");
	sample(t, 10, 1000);
	sample(t, 10, 5000);
	CHECK(!threads__exit(t, 10, TGID, 6000), "threads__exit");
	sample(t, 11, 1000);
	CHECK(!threads__exit(t, 11, TGID, 2000), "threads__exit");
	kept = threads__get(t, 12, TGID);
	CHECK(kept, "threads__get");
	kept->keep = true;
	CHECK(!threads__exit(t, 12, TGID, 1500), "threads__exit");
	sample(t, 13, 1000); /* alive */
	threads__prune(t, 3000);
	CHECK(!threads__find(t, 11), "exited before the horizon, nothing left: let go of");
	CHECK(threads__find(t, 10) && threads__find(t, 10)->samples.n == 1,
	      "exited after the horizon: kept, its last sample with it");
	CHECK(threads__find(t, 12), "a thread kept");
	CHECK(threads__find(t, 13) && !threads__find(t, 13)->samples.n, "alive: kept, emptied");
	threads__prune(t, 7000);
	CHECK(!threads__find(t, 10), "once the horizon passed its exit");
	CHECK_EQ_U64(c->threads_forgotten, 2);
	CHECK_EQ_U64(c->threads_max, 4);
	/* A tid used again after its thread went is a new thread. */
	CHECK(threads__get(t, 10, TGID + 1) && threads__find(t, 10)->tgid == TGID + 1 &&
		      !threads__find(t, 10)->exit_ns,
	      "a tid used again");
	/* Many tids exited within the horizon: the first to exit go past the bound. */
	for (__u32 i = 0; i < THREADS_EXITED_MAX + 10; i++) {
		sample(t, 1000 + i, 8000 + i);
		CHECK(!threads__exit(t, 1000 + i, TGID, 8000 + i), "threads__exit");
	}
	/* tid 12 exited first, kept: THREADS_EXITED_MAX held with it. */
	CHECK_EQ_U64(c->threads_evicted, 11);
	CHECK(!threads__find(t, 1010) && threads__find(t, 1011), "the first to exit went");
	threads__prune(t, UINT64_MAX);
	CHECK_EQ_U64(c->threads_forgotten, 2 + THREADS_EXITED_MAX - 1);
	CHECK(threads__find(t, 12) && threads__find(t, 13) && threads__find(t, 10),
	      "kept, and alive");
	threads__free(t);
}

/* The prune drops exactly what ended before its horizon, whichever thread holds it. */
static void prune_exact(struct strtab *strs, struct stacktab *st)
{
	struct threads *t = threads__new(strs, st);
	unsigned int seed = 1;
	__u64 held = 0, horizon = 0;

	CHECK(t, "threads__new");
	for (__u64 ts = 1; ts < 200000; ts++) {
		seed = seed * 1103515245 + 12345;
		sample(t, 1 + (seed >> 16) % 500, ts);
		if (ts % 7919 == 0) {
			horizon = ts - (seed >> 20) % 5000;
			threads__prune(t, horizon);
		}
	}
	for (__u32 tid = 1; tid <= 500; tid++) {
		const struct thread *th = threads__find(t, tid);

		CHECK(th, "thread %u", tid);
		for (size_t i = 0; i < th->samples.n; i++)
			CHECK(VEC_AT(&th->samples, struct th_sample, i)->ts >= horizon,
			      "tid %u holds a sample before the last horizon", tid);
		held += th->samples.n;
	}
	CHECK_EQ_U64(held, 200000 - horizon);
	threads__free(t);
}

int main(void)
{
	struct strtab *strs = strtab__new();
	struct stacktab *st = stacktab__new();

	CHECK(strs && st, "tables");
	words(strs, st);
	one_word(strs, st);
	wakes_bound(strs, st);
	exits(strs, st);
	prune_exact(strs, st);
	stacktab__free(st);
	strtab__free(strs);
	TEST_PASS();
}
