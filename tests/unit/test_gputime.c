// SPDX-License-Identifier: GPL-2.0
/*
 * The API-inferred GPU timeline (reports/gputime.c) on calls made up here, times in ms:
 *   - one stream, uploads, a launch, a copy back and a synchronize: without the copy model the
 *     device is busy from the launch to the synchronize's return; with it (1 GB/s, no latency)
 *     from the uploads' end to the return less the copy back, and the gap's edges say so;
 *   - two streams: the first done (its copy back taken off) while the second's kernel still
 *     waits for its uploads is a gap between them, which a launch on a third stream ends
 *     earlier; a launch that comes after the gap's end leaves it as it was;
 *   - two streams' uploads one after the other on the device's link;
 *   - a synchronize's wakeup, long before its return, bounds its stream's end where another
 *     stream launched in between.
 */
#include <string.h>

/* One translation unit: the unit-test rule builds a single file. */
#include "strtab.c"
#include "gputime.c"
#include "gpudev.c"
#include "testlib.h"

#define MS 1000000ull

static struct gputime *g;
static struct strtab *names; /* g's, freed with it */

static __u64 woken_at; /* the next call's wakeup, 0 none */

static void call(__u64 t, __u64 dur, __u32 kind, __u64 stream, __u64 bytes, const char *fn)
{
	struct cu_event e = {};

	e.h.type = GS_EV_CUDA;
	e.h.size = sizeof(e);
	e.h.ts = t;
	e.h.tid = e.h.tgid = 100;
	e.h.flags = dur ? GS_F_RET : 0;
	e.dur_ns = dur;
	e.kind = kind;
	e.stream = stream;
	e.bytes = bytes;
	CHECK(!gputime__add(g, &e, fn, "feeder", woken_at), "add %s", fn);
	woken_at = 0;
}

static void launch(__u64 t, __u64 stream)
{
	call(t, 0, CU_K_LAUNCH, stream, 0, "cuLaunchKernel");
}

static void upload(__u64 t, __u64 stream, __u64 bytes)
{
	call(t, 0, CU_K_MEMCPY, stream, bytes, "cuMemcpyHtoDAsync_v2");
}

static void copy_back(__u64 t, __u64 stream, __u64 bytes)
{
	call(t, 0, CU_K_MEMCPY, stream, bytes, "cuMemcpyDtoHAsync_v2");
}

static void sync_stream(__u64 t, __u64 end, __u64 stream)
{
	call(t, end - t, CU_K_SYNC_STREAM, stream, 0, "cuStreamSynchronize");
}

/* One partition on one stream from t0 (ms): 1 MB up, a launch, 2 MB back, a synchronize. */
static void partition(__u64 t0)
{
	upload(t0 * MS, 0x10, 1000000);
	launch(t0 * MS + MS / 10, 0x10);
	copy_back(t0 * MS + MS / 5, 0x10, 2000000);
	sync_stream(t0 * MS + MS / 4, (t0 + 10) * MS, 0x10);
}

static struct gpu_idle *gaps(size_t *n)
{
	gputime__flush(g);
	return gputime__take_idle(g, n);
}

static void one_stream(bool model)
{
	struct device_summary *d;
	struct gpu_idle *i;
	size_t n, nd;

	g = gputime__new(names = strtab__new(), MS);
	CHECK(g, "new");
	if (model)
		gputime__copy_model(g, 1.0, 0);
	partition(0); /* its launch is at 0.1 ms: a launch at 0 would be no launch */
	partition(20);
	i = gaps(&n);
	CHECK_EQ_U64(n, 1);
	if (!model) {
		CHECK_EQ_U64(i[0].start, 10 * MS);
		CHECK_EQ_U64(i[0].end, 20 * MS + MS / 10);
		CHECK(!strcmp(i[0].end_how, "cuLaunchKernel by feeder"), "%s", i[0].end_how);
	} else {
		/* Busy from the upload's end (1 ms) to the return less the copy back (8 ms). */
		CHECK_EQ_U64(i[0].start, 8 * MS);
		CHECK_EQ_U64(i[0].end, 21 * MS);
		CHECK(!strcmp(i[0].start_how,
			      "cuStreamSynchronize returned in feeder, less 2.000 ms of copies"),
		      "%s", i[0].start_how);
		CHECK(!strcmp(i[0].end_how, "cuLaunchKernel by feeder, behind 0.900 ms of copies"),
		      "%s", i[0].end_how);
	}
	free(i);
	CHECK(!gputime__finish(g, 0, 30 * MS, &d, &nd), "finish");
	CHECK_EQ_U64(nd, 1);
	CHECK_EQ_U64(d[0].nbusy, 2);
	CHECK_EQ_U64(d[0].busy[0].start, model ? MS : MS / 10);
	CHECK_EQ_U64(d[0].busy[0].end, model ? 8 * MS : 10 * MS);
	free(d[0].busy);
	free(d);
	gputime__free(g);
	strtab__free(names);
}

/* Stream A done at 9 ms less 3 ms of copies back; stream B's kernel behind 8 ms of uploads
 * from 2 ms; a third stream launching at third_ms (0: none); all from t0. */
static void two_streams(__u64 third_ms, __u64 want_end)
{
	const __u64 t0 = 100 * MS; /* a launch at 0 would be no launch */
	struct gpu_idle *i;
	size_t n;

	g = gputime__new(names = strtab__new(), MS);
	gputime__copy_model(g, 1.0, 0);
	launch(t0, 0xa0);
	copy_back(t0 + MS / 2, 0xa0, 3000000);
	upload(t0 + 2 * MS, 0xb0, 8000000);
	launch(t0 + 2 * MS + MS / 2, 0xb0);
	sync_stream(t0 + 3 * MS, t0 + 9 * MS, 0xa0);
	if (third_ms)
		launch(t0 + third_ms * MS, 0xc0);
	sync_stream(t0 + 12 * MS, t0 + 15 * MS, 0xb0);
	i = gaps(&n);
	CHECK_EQ_U64(n, 1);
	CHECK_EQ_U64(i[0].start, t0 + 6 * MS);
	CHECK_EQ_U64(i[0].end, t0 + want_end * MS);
	free(i);
	gputime__free(g);
	strtab__free(names);
}

/* Two streams' uploads share the device's link: the second's kernel waits for both. */
static void shared_link(void)
{
	const __u64 t0 = 100 * MS;
	struct gpu_idle *i;
	size_t n;

	g = gputime__new(names = strtab__new(), MS);
	gputime__copy_model(g, 1.0, 0);
	launch(t0 - 10 * MS, 0xc0);
	sync_stream(t0 - 9 * MS, t0 - 5 * MS, 0xc0);
	upload(t0, 0xa0, 4000000);
	launch(t0 + MS / 10, 0xa0);
	upload(t0 + MS, 0xb0, 4000000);
	launch(t0 + MS + MS / 10, 0xb0);
	sync_stream(t0 + 5 * MS, t0 + 6 * MS, 0xa0);
	sync_stream(t0 + 7 * MS, t0 + 12 * MS, 0xb0);
	i = gaps(&n);
	CHECK_EQ_U64(n, 2);
	CHECK_EQ_U64(i[0].start, t0 - 5 * MS);
	CHECK_EQ_U64(i[0].end, t0 + 4 * MS); /* a's upload alone */
	CHECK_EQ_U64(i[1].start, t0 + 6 * MS);
	CHECK_EQ_U64(i[1].end, t0 + 8 * MS); /* b's upload after a's */
	free(i);
	gputime__free(g);
	strtab__free(names);
}

/*
 * A synchronize woken at 5 ms returns at 12 ms, after another stream's launch at 8 ms (a
 * thread that waited for a CPU): the device was idle from the wakeup to that launch. Without a
 * wakeup the return alone says nothing of it.
 */
static void late_return(bool woken)
{
	const __u64 t0 = 100 * MS;
	struct gpu_idle *i;
	size_t n;

	g = gputime__new(names = strtab__new(), MS);
	launch(t0, 0xa0);
	launch(t0 + 8 * MS, 0xb0);
	woken_at = woken ? t0 + 5 * MS : 0;
	sync_stream(t0 + MS, t0 + 12 * MS, 0xa0);
	sync_stream(t0 + 13 * MS, t0 + 15 * MS, 0xb0);
	i = gaps(&n);
	CHECK_EQ_U64(n, woken ? 1 : 0);
	if (woken) {
		CHECK_EQ_U64(i[0].start, t0 + 5 * MS);
		CHECK_EQ_U64(i[0].end, t0 + 8 * MS);
		CHECK(!strcmp(i[0].start_how,
			      "cuStreamSynchronize returned in feeder, woken 7.000 ms before"),
		      "%s", i[0].start_how);
	}
	free(i);
	gputime__free(g);
	strtab__free(names);
}

int main(void)
{
	one_stream(false);
	one_stream(true);
	two_streams(0, 10);
	two_streams(8, 8);   /* the third stream's launch ends the gap at 8 ms */
	two_streams(11, 10); /* after the gap: no change */
	shared_link();
	late_return(false);
	late_return(true);
	TEST_PASS();
}
