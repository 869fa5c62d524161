// SPDX-License-Identifier: GPL-2.0
/*
 * The trace file library (lib/trace.c, trace_read.c): a round trip of records across several chunks; the
 * trace cut at every byte offset reads exactly the whole chunks before the cut, with a warning;
 * every single corrupted byte after the file header costs exactly the chunk it hit (or, in the
 * last chunk, reads as a cut), is reported, and never yields a record that was not written.
 * One scan hands each record to every consumer of its type, in one pass that trace__reads counts.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace.h"
#include "testlib.h"

#define NREC	  23
#define PER_CHUNK 5

struct rec {
	struct gs_hdr h;
	__u8 payload[64];
};

static struct rec recs[NREC];
static size_t rec_size[NREC];		       /* as written; the trace pads to 8 */
static size_t chunk_end[NREC / PER_CHUNK + 2]; /* file offset where each chunk ends */
static int nchunks;

static void make_records(void)
{
	for (int i = 0; i < NREC; i++) {
		size_t payload = (i * 7) % 61;

		memset(&recs[i], 0, sizeof(recs[i]));
		recs[i].h.type = i == NREC - 1 ? GS_REC_END : 1 + i % 11;
		recs[i].h.ts = 1000000ull * i + 17;
		recs[i].h.tid = 100 + i;
		recs[i].h.tgid = 100;
		for (size_t b = 0; b < payload; b++)
			recs[i].payload[b] = (__u8)(i * 31 + b / 8); /* compressible */
		rec_size[i] = sizeof(struct gs_hdr) + payload;
		recs[i].h.size = rec_size[i];
	}
}

static void write_trace(const char *path, bool compress)
{
	struct trace_writer *w = trace__create(path, true);

	CHECK(w, "create %s", path);
	trace__compress(w, compress);
	nchunks = 0;
	for (int i = 0; i < NREC; i++) {
		CHECK_EQ_U64(trace__append(w, &recs[i], rec_size[i]), 0);
		if (i % PER_CHUNK == PER_CHUNK - 1 || i == NREC - 1) {
			CHECK_EQ_U64(trace__flush(w), 0);
			chunk_end[nchunks++] = trace__bytes(w);
		}
	}
	CHECK_EQ_U64(trace__records(w), NREC);
	CHECK_EQ_U64(trace__finish(w), 0);
}

static bool same(const struct gs_hdr *h, int i)
{
	return h->size == ((rec_size[i] + 7) & ~7ul) && h->type == recs[i].h.type &&
	       !memcmp((const char *)h + 8, (const char *)&recs[i] + 8, rec_size[i] - 8);
}

/* Reads a trace; returns how many records, checking each against recs[] in order, skipping
 * the records of chunk `skip` (or none when -1). */
static int read_all(const char *path, int skip, struct trace_stats *st)
{
	struct trace_reader *r;
	const struct gs_hdr *h;
	char err[256];
	int n = 0, want = 0;

	r = trace__open(path, err, sizeof(err));
	if (!r)
		return -1;
	while (trace__next(r, &h) > 0) {
		if (skip >= 0 && want / PER_CHUNK == skip)
			want = (skip + 1) * PER_CHUNK;
		CHECK(want < NREC, "more records than written in %s", path);
		CHECK(same(h, want), "record %d differs in %s", want, path);
		want++;
		n++;
	}
	*st = *trace__stats(r);
	trace__close(r);
	return n;
}

static void copy_prefix(const char *src, const char *dst, size_t len, long flip)
{
	static char buf[1 << 16];
	int in = open(src, O_RDONLY), out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ssize_t n = read(in, buf, sizeof(buf));

	CHECK(in >= 0 && out >= 0 && n > 0, "copy %s", src);
	if ((size_t)n > len)
		n = len;
	if (flip >= 0 && flip < n)
		buf[flip] ^= 0x5a;
	CHECK(write(out, buf, n) == n, "write %s", dst);
	close(in);
	close(out);
}

struct tally {
	int n, fail_at;
	__u64 last_ts;
};

static int take(void *ctx, const struct gs_hdr *h)
{
	struct tally *t = ctx;

	CHECK(!t->n || h->ts > t->last_ts, "records out of file order");
	t->last_ts = h->ts;
	return ++t->n == t->fail_at ? -ENOMEM : 0;
}

/* trace__peek, trace__scan_types and what trace__reads counts of them. */
static void check_scan(const char *path, size_t size, bool compress)
{
	struct tally one = {}, two = { .fail_at = 1 }, again = {};
	struct trace_consumer c[] = { { .type = 1, .fn = take, .ctx = &one },
				      { .type = 2, .fn = take, .ctx = &two },
				      { .type = 1, .fn = take, .ctx = &again } };
	struct trace_reads before, after;
	struct trace_reader *r;
	const struct gs_hdr *h, *p;
	__u64 raw = 0;
	char err[256];
	int want = 0, twos = 0;

	for (int i = 0; i < NREC; i++) {
		want += recs[i].h.type == 1;
		twos += recs[i].h.type == 2;
		raw += (rec_size[i] + 7) & ~7ul;
	}
	trace__reads(&before);
	CHECK_EQ_U64(trace__scan_types(path, c, 3, err, sizeof(err)), 0);
	trace__reads(&after);
	/* Every type-1 record to both of its consumers, in table order; the failing one stops. */
	CHECK(want > 1 && one.n == want && again.n == want, "type 1: %d and %d of %d", one.n,
	      again.n, want);
	CHECK(twos > 1 && two.n == 1, "type 2: %d of %d after failing", two.n, twos);
	CHECK_EQ_U64(c[1].err, -ENOMEM);
	CHECK_EQ_U64(c[0].err | c[2].err, 0);
	CHECK_EQ_U64(after.opens - before.opens, 1);
	CHECK_EQ_U64(after.passes - before.passes, 1);
	CHECK_EQ_U64(after.chunks - before.chunks, nchunks);
	CHECK_EQ_U64(after.bytes - before.bytes, size - sizeof(struct trace_file_hdr));
	CHECK_EQ_U64(after.raw_bytes - before.raw_bytes, compress ? raw : 0);
	CHECK(trace__scan_types("/nonexistent.gsc", c, 3, err, sizeof(err)) < 0, "no file");
	CHECK(c[0].err < 0 && c[2].err < 0, "no file: consumers not told");

	/* Peeked, the first record comes again; opening alone is no pass. */
	r = trace__open(path, err, sizeof(err));
	CHECK(r, "%s", err);
	trace__reads(&before);
	CHECK(trace__peek(r, &p) > 0 && same(p, 0), "peek");
	CHECK(trace__next(r, &h) > 0 && h == p, "the peeked record again");
	while (trace__next(r, &h) > 0)
		;
	CHECK_EQ_U64(trace__stats(r)->records, NREC);
	CHECK(trace__peek(r, &h) == 0, "peek at the end");
	trace__reads(&after);
	CHECK_EQ_U64(after.passes - before.passes, 1);
	trace__close(r);
}

/* The checks below on a trace written with chunks compressed or not; returns its size. */
static size_t check_file(const char *path, const char *cut, bool compress)
{
	struct trace_stats st;
	struct stat sb;
	char err[256];

	write_trace(path, compress);
	CHECK(stat(path, &sb) == 0, "stat");
	CHECK_EQ_U64(sb.st_size, chunk_end[nchunks - 1]);

	/* Round trip. */
	CHECK_EQ_U64(read_all(path, -1, &st), NREC);
	CHECK_EQ_U64(st.chunks, nchunks);
	CHECK_EQ_U64(st.bad_chunks + st.cut_bytes, 0);
	CHECK(st.finished, "end record seen");
	check_scan(path, sb.st_size, compress);

	/* An existing file is refused without force. */
	CHECK(trace__create(path, false) == NULL, "refuses to overwrite");

	/* Cut at every offset: exactly the whole chunks before the cut survive. */
	for (size_t len = 0; len < (size_t)sb.st_size; len++) {
		int whole = 0, n;

		copy_prefix(path, cut, len, -1);
		n = read_all(cut, -1, &st);
		if (len < sizeof(struct trace_file_hdr)) {
			CHECK(n == -1, "a %zu-byte file opens", len);
			continue;
		}
		while (whole < nchunks && chunk_end[whole] <= len)
			whole++;
		CHECK(n == (whole == nchunks ? NREC : whole * PER_CHUNK),
		      "cut at %zu: %d records, %d whole chunks", len, n, whole);
		CHECK(!st.finished, "cut at %zu reads as finished", len);
		size_t boundary = whole ? chunk_end[whole - 1] : sizeof(struct trace_file_hdr);

		CHECK_EQ_U64(st.cut_bytes, len - boundary);
		CHECK_EQ_U64(st.bad_chunks, 0);
	}

	/* One corrupted byte anywhere: the header is refused, a chunk is skipped and reported. */
	for (long off = 0; off < sb.st_size; off++) {
		int chunk = 0, n, expect;

		copy_prefix(path, cut, sb.st_size, off);
		if (off < (long)sizeof(struct trace_file_hdr)) {
			CHECK(trace__open(cut, err, sizeof(err)) == NULL,
			      "corrupt header byte %ld accepted", off);
			continue;
		}
		while (chunk_end[chunk] <= (size_t)off)
			chunk++;
		n = read_all(cut, chunk, &st);
		expect = NREC - (chunk == nchunks - 1 ? NREC - chunk * PER_CHUNK : PER_CHUNK);
		CHECK(n == expect, "byte %ld (chunk %d): %d records, expected %d", off, chunk, n,
		      expect);
		CHECK(st.bad_chunks == 1 || (chunk == nchunks - 1 && st.cut_bytes),
		      "byte %ld: corruption not reported", off);
	}

	/* The warning names what happened. */
	copy_prefix(path, cut, sb.st_size - 3, -1);
	{
		struct trace_reader *r = trace__open(cut, err, sizeof(err));
		const struct gs_hdr *h;
		char *text = NULL;
		size_t tlen = 0;
		FILE *mem = open_memstream(&text, &tlen);

		CHECK(r, "%s", err);
		while (trace__next(r, &h) > 0)
			;
		trace__warn(r, "cut.gsc", mem);
		fclose(mem);
		CHECK(strstr(text, "cut off"), "warning: %s", text);
		CHECK(strstr(text, "did not finish"), "warning: %s", text);
		free(text);
		trace__close(r);
	}

	return sb.st_size;
}

int main(void)
{
	char dir[] = "/tmp/gs-test-trace.XXXXXX", path[256], cut[256];
	size_t raw, z;

	CHECK(mkdtemp(dir), "mkdtemp");
	snprintf(path, sizeof(path), "%s/t.gsc", dir);
	snprintf(cut, sizeof(cut), "%s/cut.gsc", dir);
	make_records();
	raw = check_file(path, cut, false);
	z = check_file(path, cut, true);
	/* The same records, every chunk smaller compressed (or written as it was). */
	CHECK(z < raw, "compressed %zu bytes, uncompressed %zu", z, raw);
	printf("trace: %zu bytes compressed, %zu uncompressed\n", z, raw);
	unlink(cut);
	unlink(path);
	rmdir(dir);
	TEST_PASS();
}
