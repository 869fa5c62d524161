// SPDX-License-Identifier: GPL-2.0
/*
 * The idle split and the launching thread between its launches (reports/analysis/idlesplit.c):
 *   - a device's idle time in parts that sum to it: setup, gaps, tail, and under the floor
 *     where kernels are timed (its busy intervals cover its busy time and those windows);
 *   - gaps kept sorted and disjoint whatever order and overlap they come in;
 *   - a launcher's time from its first launch to its latest, less its synchronizes and the gaps:
 *     on CPU (its samples outside CUDA calls and gaps name the function), off CPU by kind,
 *     runnable counted launch-bound, a copy as cuda; what came after its latest launch left
 *     for the next; its synchronizes that returned at once counted.
 */
#include <string.h>

#include "idlesplit.h"
#include "folded.h"
#include "idlesplit_int.h"
#include "kinds.h"
#include "stacktab.h"
#include "strtab.h"
#include "threads.h"
#include "trace.h"
#include "testlib.h"

#define MS 1000000ull

/* Frames named by address: 0x10 is "hot", 0x20 "cold", anything else "caller". */
const char *names__user(struct names *n, __u32 tgid, __u64 addr, bool leaf)
{
	(void)n, (void)tgid, (void)leaf;
	return addr == 0x10 ? "hot" : addr == 0x20 ? "cold" : "caller";
}

/* Every frame is of the program's own file, named. */
const char *names__user_module(struct names *n, __u32 tgid, __u64 addr, bool leaf, bool *named)
{
	(void)n, (void)tgid, (void)addr, (void)leaf;
	*named = true;
	return "prog";
}

/* No frame is a library's: none has a path. */
const char *names__user_path(struct names *n, __u32 tgid, __u64 addr, bool leaf)
{
	(void)n, (void)tgid, (void)addr, (void)leaf;
	return NULL;
}

const char *const *names__own(const struct names *n, size_t *count)
{
	(void)n;
	*count = 0;
	return NULL;
}

const char *names__why_unnamed(const struct names *n, const char *module)
{
	(void)n, (void)module;
	return "missing";
}

const char *names__kernel(struct names *n, __u64 addr)
{
	(void)n, (void)addr;
	return "kfn_[k]";
}

static __u32 stack_of(struct stacktab *st, __u64 leaf)
{
	struct {
		struct gs_hdr h;
		__u64 f[2];
	} r = { .h = { .type = GS_EV_SAMPLE, .size = sizeof(r), .tgid = 7, .ustack_n = 2 },
		.f = { leaf, 0x99 } };

	return stacktab__add(st, &r.h);
}

static void sample(struct thread *th, struct stacktab *st, __u64 ts, __u64 leaf)
{
	struct th_sample *s = vec__push(&th->samples, sizeof(*s));

	*s = (struct th_sample){ .ts = ts, .stack = stack_of(st, leaf) };
}

static void off(struct thread *th, __u64 s, __u64 e, bool blocked, bool futex)
{
	struct th_off *o = vec__push(&th->off, sizeof(*o));

	*o = (struct th_off){ .start = s, .end = e, .blocked = blocked, .in_futex = futex };
}

static void call(struct thread *th, __u64 s, __u64 e, const char *name)
{
	struct th_call *c = vec__push(&th->calls, sizeof(*c));

	*c = (struct th_call){ .start = s, .end = e, .name = name, .kind = TC_CUDA };
}

static int test_split(void)
{
	struct busy_interval iv[] = { { 10, 20 }, { 30, 50 } };
	struct device_summary d = { .busy = iv, .nbusy = 2, .busy_ns = 30 };

	/* API tier: the intervals are its busy time; 100 ns run from 0. */
	idlesplit__split_device(&d, 0, 100);
	CHECK_EQ_U64(d.split.active_start, 10);
	CHECK_EQ_U64(d.split.active_end, 50);
	CHECK_EQ_U64(d.split.setup_ns, 10);
	CHECK_EQ_U64(d.split.gaps_ns, 10);
	CHECK_EQ_U64(d.split.tail_ns, 50);
	CHECK_EQ_U64(d.split.under_floor_ns, 0);
	CHECK(idlesplit__busy_pct(&d) == 75.0, "busy %.2f%%", idlesplit__busy_pct(&d));

	/* CUPTI: 24 ns of kernels in the same intervals, 6 under the floor. */
	memset(&d.split, 0, sizeof(d.split));
	d.split.under_floor_known = true;
	d.busy_ns = 24;
	idlesplit__split_device(&d, 0, 100);
	CHECK_EQ_U64(d.split.setup_ns + d.split.gaps_ns + d.split.under_floor_ns + d.split.tail_ns,
		     100 - 24);
	CHECK_EQ_U64(d.split.under_floor_ns, 6);
	CHECK_EQ_U64(d.split.gaps_ns, 10);
	CHECK(idlesplit__busy_pct(&d) == 60.0, "busy %.2f%%", idlesplit__busy_pct(&d));

	/* A live analysis kept only its last interval and where the first began. */
	memset(&d.split, 0, sizeof(d.split));
	d.busy = &iv[1];
	d.nbusy = 1;
	d.busy_ns = 30;
	d.split.active_start = 10;
	idlesplit__split_device(&d, 0, 100);
	CHECK_EQ_U64(d.split.setup_ns, 10);
	CHECK_EQ_U64(d.split.gaps_ns, 10);
	CHECK_EQ_U64(d.split.tail_ns, 50);
	return 0;
}

static int test_gaps(void)
{
	struct idlesplit *s = idlesplit__new();
	const struct span *v;

	CHECK(s, "idlesplit__new");
	/* Out of order, one inside another, two that overlap (two devices'). */
	CHECK(!idlesplit__gap(s, 50, 60) && !idlesplit__gap(s, 10, 20) &&
		      !idlesplit__gap(s, 12, 15) && !idlesplit__gap(s, 55, 70) &&
		      !idlesplit__gap(s, 30, 40) && !idlesplit__gap(s, 5, 11),
	      "idlesplit__gap");
	v = s->gaps.data;
	CHECK_EQ_U64(s->gaps.n, 3);
	CHECK(v[0].start == 5 && v[0].end == 20 && v[1].start == 30 && v[1].end == 40 &&
		      v[2].start == 50 && v[2].end == 70,
	      "gaps %llu-%llu %llu-%llu %llu-%llu", (unsigned long long)v[0].start,
	      (unsigned long long)v[0].end, (unsigned long long)v[1].start,
	      (unsigned long long)v[1].end, (unsigned long long)v[2].start,
	      (unsigned long long)v[2].end);
	CHECK(idlesplit__in_gap(s, 5) && idlesplit__in_gap(s, 19) && !idlesplit__in_gap(s, 20) &&
		      !idlesplit__in_gap(s, 45) && idlesplit__in_gap(s, 69),
	      "in_gap");
	/* [0, 100) less 15 + 10 + 20 of gaps; [15, 35) less 5 + 5; of it [18, 25) less 2. */
	CHECK_EQ_U64(idlesplit__outside_gaps(s, 0, 100, 0, 100), 55);
	CHECK_EQ_U64(idlesplit__outside_gaps(s, 15, 35, 0, 100), 10);
	CHECK_EQ_U64(idlesplit__outside_gaps(s, 15, 35, 18, 25), 5);
	idlesplit__free(s);
	return 0;
}

static int test_launcher(void)
{
	struct strtab *strs = strtab__new();
	struct stacktab *st = stacktab__new();
	struct threads *ths = threads__new(strs, st);
	struct idlesplit *s = idlesplit__new();
	struct analysis a = { .start_ns = 0, .end_ns = 200 * MS };
	struct thread *th;

	CHECK(strs && st && ths && s, "setup");
	th = threads__get(ths, 42, 7);
	CHECK(th, "threads__get");
	/* Launches at 0, 100 ms (and one at 150 ms seen after the first harvest). */
	CHECK(!idlesplit__launch(s, 42, 0) && !idlesplit__launch(s, 42, 100 * MS), "launch");
	call(th, 50 * MS, 60 * MS, "cuStreamSynchronize");  /* the GPU's work: left out */
	call(th, 60 * MS, 62 * MS, "cuMemcpyHtoD_v2");	    /* holds the next launch back */
	off(th, 20 * MS, 30 * MS, true, true);		    /* a lock */
	off(th, 52 * MS, 58 * MS, true, false);		    /* inside the synchronize */
	off(th, 70 * MS, 75 * MS, false, false);	    /* runnable */
	CHECK(!idlesplit__gap(s, 80 * MS, 90 * MS), "gap"); /* blamed on its own */
	sample(th, st, 10 * MS, 0x10);
	sample(th, st, 40 * MS, 0x10);
	sample(th, st, 55 * MS, 0x20); /* in the synchronize */
	sample(th, st, 85 * MS, 0x20); /* in the gap */
	sample(th, st, 95 * MS, 0x20);
	sample(th, st, 120 * MS, 0x20); /* after the latest launch: not yet */
	CHECK(!idlesplit__harvest(s, ths, 300 * MS), "harvest");
	CHECK(!idlesplit__call(s, 42, 55 * MS, "cuStreamSynchronize", 5000) &&
		      !idlesplit__call(s, 42, 56 * MS, "cuCtxSynchronize", 900000) &&
		      !idlesplit__call(s, 42, 57 * MS, "cuMemcpyHtoD_v2", 10),
	      "call");
	CHECK(!idlesplit__launch(s, 42, 150 * MS), "launch");
	CHECK(!idlesplit__finish(s, ths, NULL, strs, a.devices, a.ndevices, a.start_ns, a.end_ns,
				 &a.under),
	      "finish");

	/* 150 ms less the 10 ms gap and the 10 ms synchronize. */
	CHECK_EQ_U64(a.under.tid, 42);
	CHECK_EQ_U64(a.under.launches, 3);
	CHECK_EQ_U64(a.under.host_ns, 130 * MS);
	CHECK_EQ_U64(a.under.kind_ns[BK_LOCK], 10 * MS);
	CHECK_EQ_U64(a.under.kind_ns[BK_CUDA], 2 * MS);
	CHECK_EQ_U64(a.under.runnable_ns, 5 * MS);
	CHECK_EQ_U64(a.under.kind_ns[BK_PREEMPTED], 0);
	CHECK_EQ_U64(a.under.kind_ns[BK_ON_CPU], 118 * MS);
	CHECK_EQ_U64(a.under.syncs, 2);
	CHECK_EQ_U64(a.under.syncs_quick, 1);
	/* Samples at 10, 40 (hot), 95, 120 (cold): a tie is the first to reach it. */
	CHECK_EQ_U64(a.under.samples, 4);
	CHECK_EQ_U64(a.under.function_samples, 2);
	CHECK(a.under.function && !strcmp(a.under.function, "hot"), "function %s",
	      a.under.function ?: "(none)");
	CHECK(a.under.nframes == 2 && !strcmp(a.under.frames[1], "caller"), "frames");
	CHECK(a.under.stacks && folded__total(a.under.stacks) > 117 * MS &&
		      folded__total(a.under.stacks) <= 118 * MS,
	      "stacks' total");
	folded__free(a.under.stacks);
	idlesplit__free(s);
	threads__free(ths);
	stacktab__free(st);
	strtab__free(strs);
	return 0;
}

int main(void)
{
	if (test_split() || test_gaps() || test_launcher())
		return 1;
	printf("ok\n");
	return 0;
}
