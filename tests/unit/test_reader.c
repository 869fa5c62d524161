// SPDX-License-Identifier: GPL-2.0
/*
 * The typed decoders (reports/decode.h) and the time-ordered reader (reports/reader.c), on traces
 * written here: records written out of order within the window come back in order of their end;
 * one later than the window is returned at once, marked late and counted; records too short for
 * their type, corrupt and cut-off chunks are counted and skipped; the context sees events at
 * their time; the records held stay within one window's worth. Ends with the reader's speed.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* One translation unit: the unit-test rule builds a single file. */
#include "trace.c"
#include "trace_read.c"
#include "ksyms.c"
#include "strtab.c"
#include "idmap.c"
#include "addrmaps.c"
#include "perfmap.c"
#include "knames.c"
#include "context.c"
#include "reader.c"
#include "testlib.h"

static char dir[] = "/tmp/gs-test-reader.XXXXXX";

static void path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

/* ---- decoders ---------------------------------------------------------------------------- */

static void test_decoders(void)
{
	struct {
		struct offcpu_event e;
		__u64 frames[5];
	} off = {};
	struct cu_event cu = {};
	struct gs_hdr *h = &off.e.h;
	struct gs_frames u, k;
	struct {
		struct gs_rec_losses l;
		__u64 count[2];
	} loss = {};

	/* An off-CPU interval with 3 user and 2 kernel frames. */
	h->type = GS_EV_OFFCPU;
	h->ts = 1000;
	h->ustack_n = 3;
	h->kstack_n = 2;
	h->size = sizeof(off);
	off.e.dur_ns = 250;
	for (int i = 0; i < 5; i++)
		off.frames[i] = 0x100 + i;
	CHECK(gs_rec_check(h), "a whole off-CPU record");
	CHECK(gs_offcpu(h) == &off.e, "decodes as off-CPU");
	CHECK(gs_futex(h) == NULL && gs_cuda(h) == NULL, "not as another type");
	CHECK_EQ_U64(gs_rec_dur(h), 250);
	CHECK_EQ_U64(gs_rec_end(h), 1250);
	u = gs_user_frames(h);
	k = gs_kernel_frames(h);
	CHECK_EQ_U64(u.n, 3);
	CHECK_EQ_U64(k.n, 2);
	CHECK_EQ_U64(u.ip[0], 0x100);
	CHECK_EQ_U64(u.ip[2], 0x102);
	CHECK_EQ_U64(k.ip[0], 0x103);
	CHECK_EQ_U64(k.ip[1], 0x104);

	/* One byte short of its struct (with the frames still there): refused. */
	h->size = sizeof(off) - 8;
	CHECK(!gs_rec_check(h) && gs_offcpu(h) == NULL, "a short off-CPU record decodes");
	/* Frames claimed beyond the record: the fixed part shrinks below the struct. */
	h->size = sizeof(off.e) + 8;
	CHECK(!gs_rec_check(h), "frames past the record");

	/* A CUDA call is an interval only with its return. */
	cu.h.type = GS_EV_CUDA;
	cu.h.size = sizeof(cu);
	cu.h.ts = 5000;
	cu.dur_ns = 70;
	CHECK_EQ_U64(gs_rec_end(&cu.h), 5000);
	cu.h.flags = GS_F_RET;
	CHECK_EQ_U64(gs_rec_end(&cu.h), 5070);
	/* A corrupt duration does not wrap to the past. */
	cu.dur_ns = ~0ull - 10;
	CHECK_EQ_U64(gs_rec_end(&cu.h), ~0ull);
	CHECK(gs_cuda(&cu.h) == &cu, "decodes as CUDA");

	/* Counters: never more than the record holds, whatever n says. */
	loss.l.h.type = GS_REC_LOSSES;
	loss.l.h.size = sizeof(loss);
	loss.l.n = 1000;
	CHECK_EQ_U64(gs_rec_counters(&loss.l.h, loss.l.n, loss.l.count), 2);
	loss.l.n = 1;
	CHECK_EQ_U64(gs_rec_counters(&loss.l.h, loss.l.n, loss.l.count), 1);
	CHECK(gs_rec_is_meta(&loss.l.h) && !gs_rec_is_meta(&cu.h), "metadata told from events");

	/* Unknown types pass on their header alone. */
	cu.h.type = 77;
	cu.h.size = sizeof(struct gs_hdr);
	CHECK(gs_rec_check(&cu.h), "an unknown type with its header");
}

/* ---- traces written here ------------------------------------------------------------------ */

struct spec {
	__u32 type;    /* GS_EV_* or GS_REC_* */
	__u64 ts, dur; /* dur: an off-CPU interval when type is GS_EV_OFFCPU */
	__u32 tid;
};

/* Writes records in the given order; flushes a chunk every per_chunk records (0: never). */
static void write_specs(const char *path, const struct spec *sp, size_t n, size_t per_chunk)
{
	struct trace_writer *w = trace__create(path, true);

	CHECK(w, "create %s", path);
	for (size_t i = 0; i < n; i++) {
		union {
			struct offcpu_event off;
			struct comm_event comm;
			struct sample_event sample;
			struct gs_rec_ksym ksym;
			char buf[256];
		} r = {};
		size_t size;

		r.off.h.type = sp[i].type;
		r.off.h.ts = sp[i].ts;
		r.off.h.tid = sp[i].tid;
		r.off.h.tgid = 1;
		r.off.h.cpu = i; /* the index written, to check order against */
		switch (sp[i].type) {
		case GS_EV_OFFCPU:
			r.off.dur_ns = sp[i].dur;
			r.off.state = OFFCPU_BLOCKED;
			size = sizeof(r.off);
			break;
		case GS_EV_COMM:
			snprintf(r.comm.comm, sizeof(r.comm.comm), "name-%llu",
				 (unsigned long long)sp[i].dur);
			size = sizeof(r.comm);
			break;
		case GS_REC_KSYM:
			r.ksym.addr = sp[i].dur;
			strcpy(r.ksym.name, "ksym_fn");
			size = sizeof(r.ksym) + 8;
			break;
		default:
			size = sizeof(r.sample);
		}
		r.off.h.size = size;
		CHECK_EQ_U64(trace__append(w, &r, size), 0);
		if (per_chunk && i % per_chunk == per_chunk - 1)
			CHECK_EQ_U64(trace__flush(w), 0);
	}
	CHECK_EQ_U64(trace__finish(w), 0);
}

struct got {
	__u32 idx; /* index written (h.cpu) */
	__u64 end;
	int how;    /* OREADER_IN_ORDER or OREADER_LATE */
	bool timed; /* ordered by its end (not gs_rec_untimed) */
	char comm[GS_COMM_LEN + 1];
};

/* Reads path in order; returns how many records, fills got[], and the stats. */
static size_t read_ordered(const char *path, __u64 window, struct got *got, size_t max,
			   struct oreader_stats *st, struct trace_stats *tst)
{
	char err[256];
	struct trace_reader *tr = trace__open(path, err, sizeof(err));
	struct gs_ctx *ctx = ctx__new();
	struct ordered_reader *r;
	const struct gs_hdr *h;
	size_t n = 0;
	int how;

	CHECK(tr && ctx, "open %s: %s", path, err);
	r = oreader__new(tr, ctx, window);
	CHECK(r, "oreader__new");
	while ((how = oreader__next(r, &h)) > 0) {
		const char *c = ctx__comm(ctx, h->tid);

		CHECK(n < max, "more records than written");
		got[n].idx = h->cpu;
		got[n].end = gs_rec_end(h);
		got[n].timed = !gs_rec_untimed(h);
		got[n].how = how;
		snprintf(got[n].comm, sizeof(got[n].comm), "%s", c ? c : "?");
		n++;
	}
	CHECK_EQ_U64(how, 0);
	*st = *oreader__stats(r);
	if (tst)
		*tst = *trace__stats(tr);
	oreader__free(r);
	ctx__free(ctx);
	trace__close(tr);
	return n;
}

/*
 * Submission order as the recorder sees it: an interval is written when it ends, stamped with
 * its start, and CPUs race for the ring buffer (ends out of order by up to 3 us here).
 */
static void test_order(void)
{
	static const struct spec sp[] = {
		{ GS_EV_COMM, 50, 1, 7 },	   /* 0: thread 7 named name-1 */
		{ GS_EV_SAMPLE, 100, 0, 7 },	   /* 1 */
		{ GS_EV_OFFCPU, 20, 90, 8 },	   /* 2: ends 110 */
		{ GS_EV_SAMPLE, 108, 0, 7 },	   /* 3: ends before 2 (skew) */
		{ GS_REC_KSYM, 5, 0xffff0000, 0 }, /* 4: recorder record, ts its write time */
		{ GS_EV_OFFCPU, 104, 3, 8 },	   /* 5: ends 107, before 2 and 3 */
		{ GS_EV_COMM, 500, 2, 7 },	   /* 6: name-2, stamped by the recorder */
		{ GS_EV_SAMPLE, 115, 0, 7 },	   /* 7 */
		{ GS_EV_OFFCPU, 0, 111, 8 },	   /* 8: a long wait from 0, ends 111 */
		{ GS_EV_SAMPLE, 112, 0, 7 },	   /* 9: ends before 7 */
	};
	/*
	 * By end, ties in file order; recorder records and comm events where they arrive, at the
	 * highest end read before them (0 for record 0, 110 for 4 and 6).
	 */
	static const __u32 want[] = { 0, 1, 5, 3, 2, 4, 6, 8, 9, 7 };
	/* Thread 7's name as of each of its records. */
	static const char *const comm7[] = { [0] = "name-1", [1] = "name-1", [3] = "name-1",
					     [6] = "name-2", [7] = "name-2", [9] = "name-2" };
	struct got got[16];
	struct oreader_stats st;
	char path[256];
	size_t n;

	path_of(path, sizeof(path), "order.gsc");
	write_specs(path, sp, 10, 3);
	n = read_ordered(path, 10, got, 16, &st, NULL);
	CHECK_EQ_U64(n, 10);
	for (size_t i = 0; i < n; i++) {
		CHECK(got[i].idx == want[i], "position %zu: record %u, expected %u", i, got[i].idx,
		      want[i]);
		CHECK_EQ_U64(got[i].how, OREADER_IN_ORDER);
		if (sp[got[i].idx].tid == 7)
			CHECK(!strcmp(got[i].comm, comm7[got[i].idx]),
			      "record %u: thread named %s, expected %s", got[i].idx, got[i].comm,
			      comm7[got[i].idx]);
	}
	CHECK_EQ_U64(st.records, 10);
	CHECK_EQ_U64(st.emitted, 10);
	CHECK_EQ_U64(st.late + st.short_records + st.forced, 0);

	/* Window 0: what the file order cannot give is returned late, never dropped. */
	n = read_ordered(path, 0, got, 16, &st, NULL);
	CHECK_EQ_U64(n, 10);
	/* 3 (108 after 110), 5 (107), then after 7 (115): 8 (111), 9 (112). */
	CHECK_EQ_U64(st.late, 4);
	CHECK_EQ_U64(st.late_max_ns, 115 - 111);
	for (size_t i = 0; i < n; i++) {
		__u32 x = got[i].idx;
		bool late = x == 3 || x == 5 || x == 8 || x == 9;

		CHECK(late == (got[i].how == OREADER_LATE), "record %u: late %d", x, got[i].how);
		/* Whatever was not late is in order among itself. */
		for (size_t j = 0; j < i && !late; j++)
			CHECK(got[j].how == OREADER_LATE || !got[i].timed || !got[j].timed ||
				      got[j].end <= got[i].end,
			      "in-order records %u and %u out of order", got[j].idx, x);
	}
}

/* A record later than the window allows: returned at once, marked, counted, said. */
static void test_overflow(void)
{
	struct spec sp[200];
	struct got got[200];
	struct oreader_stats st;
	char path[256], *text = NULL;
	size_t n, tlen = 0, late_at = 0;
	FILE *mem;

	for (int i = 0; i < 200; i++)
		sp[i] = (struct spec){ GS_EV_SAMPLE, 1000000 + 1000ull * i, 0, 7 };
	/* At 150 a record that ended 80 us before the newest: the window is 50 us. */
	sp[150] = (struct spec){ GS_EV_OFFCPU, 1000000 + 1000ull * 50, 20000, 8 };
	path_of(path, sizeof(path), "late.gsc");
	write_specs(path, sp, 200, 64);
	n = read_ordered(path, 50000, got, 200, &st, NULL);
	CHECK_EQ_U64(n, 200);
	CHECK_EQ_U64(st.late, 1);
	CHECK_EQ_U64(st.late_max_ns, 1000ull * 149 - 1000ull * 70);
	for (size_t i = 0; i < n; i++) {
		if (got[i].how == OREADER_LATE) {
			CHECK_EQ_U64(got[i].idx, 150);
			late_at = i;
		} else {
			CHECK(got[i].idx != 150, "the late record was put in order");
		}
	}
	/* Returned as soon as read: after the records up to 149 minus the window. */
	CHECK_EQ_U64(late_at, 100);

	/* The warning says it, with how late. */
	{
		char err[256];
		struct trace_reader *tr = trace__open(path, err, sizeof(err));
		struct ordered_reader *r = oreader__new(tr, NULL, 50000);
		const struct gs_hdr *h;

		while (oreader__next(r, &h) > 0)
			;
		mem = open_memstream(&text, &tlen);
		oreader__warn(r, "late.gsc", mem);
		fclose(mem);
		CHECK(strstr(text, "1 record(s) arrived too late") && strstr(text, "0.079 ms"),
		      "warning: %s", text);
		free(text);
		oreader__free(r);
		trace__close(tr);
	}

	/* A window as long as the lateness puts it in order. */
	n = read_ordered(path, 80000, got, 200, &st, NULL);
	CHECK_EQ_U64(st.late, 0);
	/* It ends at 70 us, as record 70 does: ties keep file order. */
	CHECK_EQ_U64(got[70].idx, 70);
	CHECK_EQ_U64(got[71].idx, 150);
}

/*
 * Records early of the newest by a few places (put in place in the FIFO), by hundreds (the
 * heap), and many on the same end: the order is the stable sort by end, whichever way each went.
 */
static int by_end_then_index(const void *x, const void *y)
{
	const struct spec *a = x, *b = y;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

static void test_mixed(void)
{
	enum { N = 20000 };
	static struct spec sp[N], sorted[N];
	static struct got got[N];
	struct oreader_stats st;
	unsigned int seed = 12345;
	char path[256];
	size_t n;

	for (int i = 0; i < N; i++) {
		unsigned int r = rand_r(&seed) % 100;
		/* 10 ns a record, ends on a 40 ns grid: runs of equal ends. */
		__u64 back = r < 60 ? 0 : r < 90 ? rand_r(&seed) % 200 : rand_r(&seed) % 5000;

		sp[i] = (struct spec){ GS_EV_SAMPLE, (100000 + 10ull * i - back) / 40 * 40, 0, i };
	}
	memcpy(sorted, sp, sizeof(sp));
	qsort(sorted, N, sizeof(*sorted), by_end_then_index);
	path_of(path, sizeof(path), "mixed.gsc");
	write_specs(path, sp, N, 1000);
	n = read_ordered(path, 10000, got, N, &st, NULL);
	CHECK_EQ_U64(n, N);
	CHECK_EQ_U64(st.late + st.forced, 0);
	for (size_t i = 0; i < n; i++) {
		CHECK(got[i].idx == sorted[i].tid, "position %zu: record %u, expected %u", i,
		      got[i].idx, sorted[i].tid);
		CHECK_EQ_U64(got[i].how, OREADER_IN_ORDER);
	}
}

/* Short records, a corrupt chunk and a cut-off one: counted, the rest read in order. */
static void test_damage(void)
{
	struct spec sp[40] = {};
	struct got got[40];
	struct oreader_stats st;
	struct trace_stats tst;
	char path[256];
	struct stat sb;
	size_t n;
	int fd;

	/* Odd ones written after an even one that ended 500 ns later. */
	for (int i = 0; i < 40; i++)
		sp[i].ts = 1000ull * i + (i % 2 ? 0 : 1500);
	path_of(path, sizeof(path), "damage.gsc");

	/* A record too short for its type: framing and CRC right, so only its type tells. */
	{
		struct trace_writer *w = trace__create(path, true);
		struct sample_event e = {};

		trace__compress(w, false); /* the damage below is placed by chunk size */
		for (int i = 0; i < 40; i++) {
			e.h.type = GS_EV_SAMPLE;
			e.h.ts = sp[i].ts;
			e.h.tid = 7;
			e.h.cpu = i;
			e.h.size = i == 5 ? sizeof(struct gs_hdr) : sizeof(e);
			CHECK_EQ_U64(trace__append(w, &e, e.h.size), 0);
			if (i % 10 == 9)
				CHECK_EQ_U64(trace__flush(w), 0);
		}
		CHECK_EQ_U64(trace__finish(w), 0);
	}
	/* Corrupt a byte of the second chunk; cut the last one short. */
	CHECK(stat(path, &sb) == 0, "stat");
	fd = open(path, O_RDWR);
	CHECK(fd >= 0, "open");
	{
		size_t chunk = sizeof(struct trace_chunk_hdr) + 10 * sizeof(struct sample_event);
		off_t off = sizeof(struct trace_file_hdr) + chunk + 40;
		char b;

		CHECK(pread(fd, &b, 1, off) == 1, "read");
		b ^= 0x55;
		CHECK(pwrite(fd, &b, 1, off) == 1, "write");
		CHECK(ftruncate(fd, sb.st_size - 16) == 0, "truncate");
	}
	close(fd);
	n = read_ordered(path, 2000, got, 40, &st, &tst);
	/* Chunks 0 and 2 whole, 9 + 10 records; record 5 too short; chunks 1 and 3 lost. */
	CHECK_EQ_U64(n, 19);
	CHECK_EQ_U64(st.short_records, 1);
	CHECK_EQ_U64(tst.bad_chunks, 1);
	CHECK(tst.cut_bytes > 0, "cut not counted");
	CHECK(!tst.finished, "finished");
	CHECK_EQ_U64(st.late, 0);
	for (size_t i = 1; i < n; i++)
		CHECK(got[i - 1].end <= got[i].end, "out of order at %zu", i);
	for (size_t i = 0; i < n; i++)
		CHECK(got[i].idx != 5 && (got[i].idx < 10 || got[i].idx >= 20) && got[i].idx < 30,
		      "record %u read", got[i].idx);
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

/*
 * Pushed records (record --flight): the records of a file pushed one by one as they come give
 * the same order as the file read in order, due records come out as soon as the window has
 * passed them, and oreader__advance lets the held ones out without a newer record.
 */
static void test_push(const char *path, __u64 window)
{
	enum { N = 20000 };
	static struct got pulled[N];
	struct oreader_stats st;
	char err[256];
	size_t n = read_ordered(path, window, pulled, N, &st, NULL), k = 0, pushed = 0;
	struct trace_reader *tr = trace__open(path, err, sizeof(err));
	struct ordered_reader *r = oreader__new(NULL, NULL, window);
	const struct gs_hdr *h, *o;
	__u64 newest = 0;
	int rc;

	CHECK(tr && r, "open %s: %s", path, err);
	CHECK(n > 1000, "%zu records", n);
	while (trace__next(tr, &h) > 0) {
		pushed++;
		if (!gs_rec_untimed(h) && gs_rec_end(h) > newest)
			newest = gs_rec_end(h);
		rc = oreader__push(r, h, &o);
		CHECK(rc == 0 || rc == OREADER_LATE, "push: %d", rc);
		if (rc == OREADER_LATE) {
			CHECK(k < n && pulled[k].idx == o->cpu, "late record %zu", k);
			k++;
		}
		while (oreader__next(r, &o) > 0) {
			CHECK(k < n && pulled[k].idx == o->cpu, "record %zu: %u, pulled %u", k,
			      o->cpu, pulled[k].idx);
			k++;
		}
		if (pushed == n / 2)
			CHECK(k > 0 && k < pushed, "%zu of %zu out half way", k, pushed);
	}
	/* Nothing newer comes: advancing past the newest end lets every held record out. */
	CHECK(k < n, "nothing held at the end");
	oreader__advance(r, newest + window);
	while (oreader__next(r, &o) > 0) {
		CHECK(k < n && pulled[k].idx == o->cpu, "record %zu after advance", k);
		k++;
	}
	CHECK_EQ_U64(k, n);
	oreader__end(r);
	CHECK_EQ_U64(oreader__next(r, &o), 0);
	oreader__free(r);
	trace__close(tr);
}

int main(void)
{
	char path[256];

	CHECK(mkdtemp(dir), "mkdtemp");
	test_decoders();
	test_order();
	test_overflow();
	test_mixed();
	path_of(path, sizeof(path), "mixed.gsc");
	test_push(path, 10000); /* test_mixed's records: 10 ns apart, out of order by up to 5 us */
	test_damage();
	test_bounded();
	test_release();
	for (const char *const *f = (const char *const[]){ "order.gsc", "late.gsc", "mixed.gsc",
							   "damage.gsc", NULL };
	     *f; f++) {
		path_of(path, sizeof(path), *f);
		unlink(path);
	}
	rmdir(dir);
	TEST_PASS();
}
