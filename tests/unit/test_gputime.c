// SPDX-License-Identifier: GPL-2.0
/*
 * The API-inferred GPU timeline (reports/analysis/gputime.c) on calls made up here, times in ms:
 *   - one stream, uploads, a launch, a copy back and a synchronize: without the copy model the
 *     device is busy from the launch to the synchronize's return; with it (1 GB/s, no latency)
 *     from the uploads' end to the return less the copy back, and the gap's edges say so;
 *   - two streams: the first done (its copy back taken off) while the second's kernel still
 *     waits for its uploads is a gap between them, which a launch on a third stream ends
 *     earlier; a launch that comes after the gap's end leaves it as it was;
 *   - two streams' uploads one after the other on the device's link;
 *   - a synchronize's wakeup, long before its return, bounds its stream's end where another
 *     stream launched in between;
 *   - a wake chain from the GPU's interrupt (a driver thread, a helper, the host thread that
 *     launched and waits) ends the busy interval at the interrupt; a helper that ran too long
 *     before passing it on breaks the chain;
 *   - a cuMemFree whose thread slept and was woken from the interrupt inside it: the drain at
 *     the wakeup, not the return;
 *   - a host function: the driver thread woken after it was queued ends the work before it;
 *   - busy time after launches that nothing followed for the gap floor is unconfirmed, unless
 *     a call waited through it;
 *   - a stream made to wait for another's event, seen done: the other's work before the
 *     event's record was done too.
 */
#include <string.h>

#include "strtab.h"
#include "gputime_int.h"
#include "testlib.h"

#define MS 1000000ull

static struct gputime *g;
static struct strtab *names; /* g's, freed with it */

static __u64 woken_at;	     /* the next call's wakeup, 0 none */
static __u32 call_tid = 100; /* the calling thread (process 100) */

static void call(__u64 t, __u64 dur, __u32 kind, __u64 stream, __u64 bytes, const char *fn)
{
	struct cu_event e = {};

	e.h.type = GS_EV_CUDA;
	e.h.size = sizeof(e);
	e.h.ts = t;
	e.h.tid = call_tid;
	e.h.tgid = 100;
	e.h.flags = dur ? GS_F_RET : 0;
	e.dur_ns = dur;
	e.kind = kind;
	e.stream = stream;
	e.bytes = bytes;
	CHECK(!gputime__add(g, &e, fn, "feeder", woken_at), "add %s", fn);
	woken_at = 0;
}

/* An event call (record, wait) of event ev on stream at t. */
static void event_call(__u64 t, __u32 kind, __u64 ev, __u64 stream, const char *fn)
{
	struct cu_event e = {};

	e.h.type = GS_EV_CUDA;
	e.h.size = sizeof(e);
	e.h.ts = t;
	e.h.tid = e.h.tgid = 100;
	e.kind = kind;
	e.stream = stream;
	e.handle = ev;
	CHECK(!gputime__add(g, &e, fn, "feeder", 0), "add %s", fn);
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

/* An off-CPU interval of tid (process 100) from a to b (ms), woken at w by waker (0: irq). */
static void offcpu(__u32 tid, double a, double b, double w, __u32 waker)
{
	struct gwake x = {
		.start = (__u64)(a * MS),
		.end = (__u64)(b * MS),
		.wake = (__u64)(w * MS),
		.tid = tid,
		.tgid = 100,
		.waker_tid = waker,
		.waker_tgid = waker ? 100 : 0,
		.blocked = true,
		.irq = !waker,
		.comm = tid == 100 ? "feeder" : "helper",
	};

	CHECK(!gputime__offcpu(g, &x), "offcpu %u", tid);
}

/*
 * The graph launched at 10 ms; the host thread (100) waits from 10.2; the driver's thread (200)
 * is woken by the interrupt at 10.9, wakes a helper (300) at 11.0, which wakes the host thread
 * at 11.1 (or, hop_ms later, too late to be passing the news on). The next launch at 50 ms.
 */
static void wake_chain(double hop_ms)
{
	struct gpu_idle *i;
	size_t n;

	g = gputime__new(names = strtab__new(), MS);
	call(10 * MS, 0, CU_K_GRAPH_LAUNCH, 0xa0, 0, "cuGraphLaunch");
	offcpu(200, 5, 10.95, 10.9, 0);
	offcpu(300, 9, 11.02, 11.0, 200);
	offcpu(100, 10.2, 11.2 + hop_ms, 11.1 + hop_ms, 300);
	launch(50 * MS, 0xa0);
	i = gaps(&n);
	CHECK_EQ_U64(n, hop_ms > 1 ? 0 : 1);
	if (n) {
		CHECK_EQ_U64(i[0].start, (__u64)(10.9 * MS));
		CHECK_EQ_U64(i[0].end, 50 * MS);
		CHECK(!strcmp(i[0].start_how,
			      "the GPU's interrupt woke, through its waiters, feeder"),
		      "%s", i[0].start_how);
	}
	free(i);
	gputime__free(g);
	strtab__free(names);
}

/* A launch at 10 ms; cuMemFree from 12 to 20 ms, its thread asleep 12.5-15, woken at 14.8. */
static void free_drain(bool irq)
{
	struct gpu_idle *i;
	size_t n;

	g = gputime__new(names = strtab__new(), MS);
	launch(10 * MS, 0xa0);
	if (irq)
		offcpu(100, 12.5, 15, 14.8, 0);
	call(12 * MS, 8 * MS, CU_K_FREE, 0, 0, "cuMemFree_v2");
	launch(40 * MS, 0xa0);
	i = gaps(&n);
	CHECK_EQ_U64(n, 1);
	CHECK_EQ_U64(i[0].start, irq ? (__u64)(14.8 * MS) : 20 * MS);
	CHECK(!strcmp(i[0].start_how, irq ? "cuMemFree_v2 woke from the device's drain in feeder" :
					    "cuMemFree_v2 returned in feeder"),
	      "%s", i[0].start_how);
	free(i);
	gputime__free(g);
	strtab__free(names);
}

/* A launch at 10 ms and a host function at 10.1; the driver thread, asleep from 10.5, woken
 * at 11.9 by the interrupt. */
static void host_fn(void)
{
	struct gpu_idle *i;
	size_t n;

	g = gputime__new(names = strtab__new(), MS);
	launch(10 * MS, 0xa0);
	call(10 * MS + MS / 10, 0, CU_K_HOST_FUNC, 0xa0, 0, "cuLaunchHostFunc");
	offcpu(200, 10.5, 12, 11.9, 0);
	launch(30 * MS, 0xa0);
	i = gaps(&n);
	CHECK_EQ_U64(n, 1);
	CHECK_EQ_U64(i[0].start, (__u64)(11.9 * MS));
	free(i);
	gputime__free(g);
	strtab__free(names);
}

/*
 * Launches at 10 and 30 ms on one stream, then a synchronize at 31 ms that does not wait
 * (21 ms unconfirmed: nothing said the GPU worked after either launch), or from 30.2 to 40 ms
 * (20: the wait backs the end). Two streams: a's synchronize waits from 10.1 to 20 ms, through
 * b's launch at 15, which left 10-15 ms unsure until a's return confirmed it.
 */
static void unconfirmed(int how)
{
	struct device_summary *d;
	size_t nd, n;

	g = gputime__new(names = strtab__new(), MS);
	launch(10 * MS, 0xa0);
	if (how == 2) {
		sync_stream(10 * MS + MS / 10, 20 * MS, 0xa0);
		launch(15 * MS, 0xb0);
		sync_stream(16 * MS, 25 * MS, 0xb0);
	} else {
		launch(30 * MS, 0xa0);
		if (how == 0)
			sync_stream(31 * MS, 31 * MS + MS / 20, 0xa0);
		else
			sync_stream(30 * MS + MS / 5, 40 * MS, 0xa0);
	}
	gputime__flush(g);
	free(gputime__take_idle(g, &n));
	CHECK(!gputime__finish(g, 0, 100 * MS, &d, &nd), "finish");
	CHECK_EQ_U64(nd, 1);
	CHECK_EQ_U64(d[0].unconfirmed_ns, how == 0 ? 21 * MS : how == 1 ? 20 * MS : 0);
	CHECK(!strcmp(d[0].unclosed, ""), "unclosed %s", d[0].unclosed);
	CHECK(!d[0].busy_unknown, "evidence seen, yet busy unknown");
	free(d[0].busy);
	free(d);
	gputime__free(g);
	strtab__free(names);
}

/* A launch never seen done: busy to the end, unconfirmed from the launch, the stream named. */
static void unclosed_stream(void)
{
	struct device_summary *d;
	size_t nd;

	g = gputime__new(names = strtab__new(), MS);
	launch(10 * MS, 0xa0);
	launch(11 * MS, 0xa0);
	CHECK(!gputime__finish(g, 0, 100 * MS, &d, &nd), "finish");
	CHECK_EQ_U64(d[0].busy_ns, 90 * MS);
	CHECK_EQ_U64(d[0].unconfirmed_ns, 90 * MS);
	CHECK(!strcmp(d[0].unclosed, "stream 0xa0 (work queued 0.090 s before the end)"),
	      "unclosed %s", d[0].unclosed);
	CHECK(d[0].busy_unknown, "no evidence ever, yet busy is known");
	free(d[0].busy);
	free(d);
	gputime__free(g);
	strtab__free(names);
}

/*
 * Stream a's kernel at 10 ms, an event recorded after it, stream b made to wait for the event
 * and given a kernel; b's synchronize (11-20 ms) says a's kernel was done too, by 20 ms: the
 * device is idle from there to a's next launch at 40 ms. Without the wait, nothing closes a.
 */
static void wait_chain(bool wait)
{
	struct gpu_idle *i;
	size_t n;

	g = gputime__new(names = strtab__new(), MS);
	launch(10 * MS, 0xa0);
	event_call(10 * MS + MS / 10, CU_K_EVENT_RECORD, 0xe1, 0xa0, "cuEventRecord");
	if (wait)
		event_call(10 * MS + MS / 5, CU_K_STREAM_WAIT, 0xe1, 0xb0, "cuStreamWaitEvent");
	launch(10 * MS + MS * 3 / 10, 0xb0);
	sync_stream(11 * MS, 20 * MS, 0xb0);
	launch(40 * MS, 0xa0);
	i = gaps(&n);
	CHECK_EQ_U64(n, wait ? 1 : 0);
	if (n) {
		CHECK_EQ_U64(i[0].start, 20 * MS);
		CHECK_EQ_U64(i[0].end, 40 * MS);
	}
	free(i);
	gputime__free(g);
	strtab__free(names);
}

/*
 * A thread inside its synchronize of stream a, woken from the interrupt at 11.9 ms, wakes
 * another thread of the process (300, which made CUDA calls) at 12.0: that is a's drain, not
 * news of b's kernel (launched at 10.05, before 300 began to wait): b stays busy until its
 * own synchronize, and no gap opens at 11.9 (the one gap: 3-10 ms, before the launches).
 */
static void sync_irq_no_chain(void)
{
	struct gpu_idle *i;
	size_t n;

	g = gputime__new(names = strtab__new(), MS);
	call_tid = 300;
	launch(1 * MS, 0xc0);
	sync_stream(2 * MS, 3 * MS, 0xc0);
	call_tid = 100;
	launch(10 * MS, 0xa0);
	launch(10 * MS + MS / 20, 0xb0);
	offcpu(100, 10.2, 11.95, 11.9, 0);
	sync_stream(10 * MS + MS * 3 / 20, 11 * MS + MS * 96 / 100, 0xa0);
	offcpu(300, 10.1, 12.1, 12.0, 100);
	launch(40 * MS, 0xa0);
	sync_stream(41 * MS, 42 * MS, 0xb0);
	i = gaps(&n);
	CHECK_EQ_U64(n, 1); /* c's, before the launches */
	CHECK_EQ_U64(i[0].end, 10 * MS);
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
	wake_chain(0);
	wake_chain(1.5);
	free_drain(false);
	free_drain(true);
	host_fn();
	unconfirmed(0);
	unconfirmed(1);
	unconfirmed(2);
	unclosed_stream();
	wait_chain(false);
	wait_chain(true);
	sync_irq_no_chain();
	TEST_PASS();
}
