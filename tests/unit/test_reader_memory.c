// SPDX-License-Identifier: GPL-2.0
/*
 * What the time-ordered reader (reports/analysis/reader.c) holds and gives back, on traces written
 * here: the records held stay within one window's worth, the file's pages and decompressed
 * chunks behind the window are given back, never one under a record still held. Ends with the
 * reader's speed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "context.h"
#include "reader_int.h"
#include "trace_read_int.h"
#include "testlib.h"

static char dir[] = "/tmp/gs-test-reader-memory.XXXXXX";

static void path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

/* The process's peak resident size (VmHWM), in kB. */
static __u64 peak_rss_kb(void)
{
	char line[256];
	unsigned long long kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	CHECK(f, "/proc/self/status");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %llu kB", &kb) == 1)
			break;
	fclose(f);
	CHECK(kb, "no VmHWM");
	return kb;
}

/* Many records: the held entries stay within a window, the file's pages are given back as
 * reading goes, and the reader's speed. */
static void test_bounded(void)
{
	const size_t n = 2000000;
	struct trace_writer *w;
	struct sample_event e = {};
	struct oreader_stats st;
	struct timespec t0, t1;
	char path[256], err[256];
	struct trace_reader *tr;
	struct ordered_reader *r;
	const struct gs_hdr *h;
	struct gs_ctx *ctx = ctx__new();
	__u64 last = 0, count = 0, hwm, raw;
	struct stat sb;
	double secs;

	path_of(path, sizeof(path), "big.gsc");
	w = trace__create(path, true);
	CHECK(w, "create");
	e.h.type = GS_EV_SAMPLE;
	e.h.size = sizeof(e);
	e.h.tid = 7;
	for (size_t i = 0; i < n; i++) {
		/* 1 us apart, every 7th written 30 us late. */
		e.h.ts = 1000000 + 1000ull * i - (i % 7 ? 0 : 30000);
		CHECK_EQ_U64(trace__append(w, &e, sizeof(e)), 0);
	}
	raw = trace__raw_bytes(w);
	CHECK_EQ_U64(trace__finish(w), 0);

	tr = trace__open(path, err, sizeof(err));
	CHECK(tr, "%s", err);
	r = oreader__new(tr, ctx, 100000); /* 100 us: ~100 records */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (oreader__next(r, &h) > 0) {
		CHECK(h->ts >= last, "out of order at %llu", (unsigned long long)count);
		last = h->ts;
		count++;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	st = *oreader__stats(r);
	CHECK_EQ_U64(count, n);
	CHECK_EQ_U64(st.late, 0);
	CHECK(st.held_max <= 140, "held %llu records for a 100 us window",
	      (unsigned long long)st.held_max);
	/* What lies behind the window (the file's pages, decompressed chunks) was given back: the
	 * peak is far below the records' size. */
	CHECK(stat(path, &sb) == 0, "stat");
	hwm = peak_rss_kb();
#ifdef __SANITIZE_ADDRESS__
	(void)raw; /* AddressSanitizer keeps freed memory in quarantine: no bound on the peak */
#else
	CHECK(hwm * 1024 < raw / 2, "peak RSS %llu kB reading %llu kB of records",
	      (unsigned long long)hwm, (unsigned long long)raw / 1024);
#endif
	secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("ordered reader: %zu records in %.3f s, %.1fM records/s, at most %llu held, "
	       "peak RSS %llu kB for a %lld kB trace\n",
	       n, secs, n / secs / 1e6, (unsigned long long)st.held_max, (unsigned long long)hwm,
	       (long long)sb.st_size / 1024);
	oreader__free(r);
	ctx__free(ctx);
	trace__close(tr);
	unlink(path);
}

/* Whether p lies in what the trace reader still holds: the file above what it gave back, or a
 * decompressed chunk not yet freed. */
static bool still_held(const struct trace_reader *tr, const void *p)
{
	const unsigned char *c = p;

	if (c >= tr->data + tr->released && c < tr->data + tr->size)
		return true;
	for (const struct zchunk *z = tr->zhead; z; z = z->next)
		if (c >= z->data && c < z->data + z->len)
			return true;
	return false;
}

/* Held records that lie in what was given back (the reader's and trace's state). */
static size_t held_below_released(const struct ordered_reader *r, const struct trace_reader *tr)
{
	size_t below = 0;

	for (size_t i = 0; i < r->fifo_n; i++)
		below += !still_held(tr, r->fifo[(r->fifo_head + i) & (r->fifo_cap - 1)].h);
	for (size_t i = 0; i < r->heap_n; i++)
		below += !still_held(tr, r->heap[i].h);
	return below;
}

/* What the reader gave back so far: pages of the file, decompressed chunks freed. */
static size_t given_back(const struct trace_reader *tr)
{
	return tr->released + tr->zfreed;
}

/*
 * The file is given back behind the records the reader holds, never under one: in a trace where
 * a third of the records end before the twenty read before them (put ahead of them, in order),
 * each time pages are given back, none holds a record still waiting to be returned.
 */
static void test_release(void)
{
	const size_t n = 600000;
	struct {
		struct sample_event e;
		__u64 frames[16];
	} rec = {};
	struct trace_writer *w;
	struct oreader_stats st;
	char path[256], err[256];
	struct trace_reader *tr;
	struct ordered_reader *r;
	const struct gs_hdr *h;
	__u64 count = 0, releases = 0;
	size_t released = 0;

	path_of(path, sizeof(path), "release.gsc");
	w = trace__create(path, true);
	CHECK(w, "create");
	rec.e.h.type = GS_EV_SAMPLE;
	rec.e.h.size = sizeof(rec);
	rec.e.h.ustack_n = 16;
	rec.e.h.tid = 7;
	for (size_t i = 0; i < n; i++) {
		rec.e.h.ts = 1000000 + 1000ull * i - (i % 3 ? 0 : 20500);
		CHECK_EQ_U64(trace__append(w, &rec, sizeof(rec)), 0);
	}
	CHECK_EQ_U64(trace__finish(w), 0);

	tr = trace__open(path, err, sizeof(err));
	CHECK(tr, "%s", err);
	r = oreader__new(tr, NULL, 100000);
	while (oreader__next(r, &h) > 0) {
		if (given_back(tr) != released) {
			released = given_back(tr);
			releases++;
			CHECK_EQ_U64(held_below_released(r, tr), 0);
		}
		count++;
	}
	st = *oreader__stats(r);
	CHECK_EQ_U64(count, n);
	CHECK_EQ_U64(st.late + st.forced, 0);
	/* 600000 records of 184 bytes (110 MB once decompressed): given back every 65536 records. */
	CHECK(releases >= 8, "pages given back %llu times", (unsigned long long)releases);
	oreader__free(r);
	trace__close(tr);
	unlink(path);
}

int main(void)
{
	CHECK(mkdtemp(dir), "mkdtemp");
	test_bounded();
	test_release();
	rmdir(dir);
	TEST_PASS();
}
