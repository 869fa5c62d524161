// SPDX-License-Identifier: GPL-2.0
/*
 * The trace file read: chunks checked and decompressed in file order, records handed out one by
 * one. See trace.h for the layout; trace.c writes it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "trace_read_int.h"

/* trace__release gives pages back in steps of at least this many bytes. */
#define TRACE_RELEASE_STEP (8u << 20)

/*
 * What every reader of this process read (trace__reads). Atomic: a report may read beside a
 * thread that reads too (record --flight's dumps).
 */
static struct trace_reads reads;

static void count(__u64 *field, __u64 n)
{
	__atomic_fetch_add(field, n, __ATOMIC_RELAXED);
}

static __u32 chunk_crc(__u32 crc, const void *p, size_t n)
{
	return crc32(crc, p, n);
}

static bool chunk_ok(const struct trace_reader *r, size_t off, size_t *len, __u32 *raw_len)
{
	struct trace_chunk_hdr ch;
	__u32 crc;

	if (r->size - off < sizeof(ch))
		return false;
	memcpy(&ch, r->data + off, sizeof(ch));
	if (ch.magic != TRACE_CHUNK_MAGIC || ch.len % TRACE_ALIGN ||
	    ch.len > r->size - off - sizeof(ch))
		return false;
	crc = ch.crc;
	ch.crc = 0;
	if (chunk_crc(chunk_crc(0, &ch, sizeof(ch)), r->data + off + sizeof(ch), ch.len) != crc)
		return false;
	*len = ch.len;
	*raw_len = ch.raw_len;
	return true;
}

/* Whether the bytes at off could be the start of a chunk that was cut off by the end of file. */
static bool chunk_cut(const struct trace_reader *r, size_t off)
{
	struct trace_chunk_hdr ch;

	if (r->size - off < sizeof(ch))
		return true;
	memcpy(&ch, r->data + off, sizeof(ch));
	return ch.magic == TRACE_CHUNK_MAGIC && ch.len > r->size - off - sizeof(ch) &&
	       chunk_crc(0, &ch, TRACE_CHUNK_HCRC_BYTES) == ch.hcrc;
}

#ifdef GAPSCOPE_FUZZ
/*
 * Fuzz builds read the file onto the heap, exactly its size, so that the address sanitizer sees
 * a read past its end (in a mapping it would land in the last page's zeros, unseen).
 */
static void *map_file(int fd, size_t size)
{
	char *p = malloc(size);

	if (!p || pread(fd, p, size, 0) != (ssize_t)size) {
		free(p);
		return MAP_FAILED;
	}
	return p;
}

static void unmap_file(const void *p, size_t size)
{
	free((void *)p);
}
#else
static void *map_file(int fd, size_t size)
{
	return mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
}

static void unmap_file(const void *p, size_t size)
{
	munmap((void *)p, size);
}
#endif

struct trace_reader *trace__open(const char *path, char *err, size_t errlen)
{
	struct trace_reader *r;
	struct trace_file_hdr fh;
	struct stat st;
	void *data;
	__u32 crc;
	int fd;

	/* O_NONBLOCK: a FIFO given as a trace must not wait for a writer. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	if (!fstat(fd, &st) && !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s is %s: not a gapscope trace", path,
			 S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	if (fstat(fd, &st) || st.st_size < (off_t)sizeof(fh)) {
		snprintf(err, errlen, "%s: not a gapscope trace (too short)", path);
		close(fd);
		return NULL;
	}
	data = map_file(fd, st.st_size);
	close(fd);
	if (data == MAP_FAILED) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	memcpy(&fh, data, sizeof(fh));
	crc = fh.crc;
	fh.crc = 0;
	if (memcmp(fh.magic, TRACE_MAGIC, sizeof(fh.magic))) {
		snprintf(err, errlen, "%s: not a gapscope trace", path);
		unmap_file(data, st.st_size);
		return NULL;
	}
	if (chunk_crc(0, &fh, sizeof(fh)) != crc || fh.hdr_size < sizeof(fh) ||
	    fh.hdr_size > (size_t)st.st_size || fh.hdr_size % TRACE_ALIGN) {
		snprintf(err, errlen, "%s: corrupt trace header", path);
		unmap_file(data, st.st_size);
		return NULL;
	}
	if (fh.version < TRACE_VERSION_MIN || fh.version > TRACE_VERSION) {
		snprintf(err, errlen, "%s: trace version %u, this gapscope reads versions %u to %u",
			 path, fh.version, TRACE_VERSION_MIN, TRACE_VERSION);
		unmap_file(data, st.st_size);
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		snprintf(err, errlen, "out of memory");
		unmap_file(data, st.st_size);
		return NULL;
	}
	r->data = data;
	r->size = st.st_size;
	r->off = fh.hdr_size;
	r->st.version = fh.version;
	r->st.flags = fh.flags;
	count(&reads.opens, 1);
	return r;
}

/*
 * The current chunk (r->rec .. r->rec_end, one zstd frame and its padding) decompressed onto the
 * heap, r->rec pointed at its records there. False where it does not decompress to exactly
 * raw_len bytes (a chunk whose CRC held was written so: it is skipped like a damaged one).
 */
static bool inflate_chunk(struct trace_reader *r, __u32 raw_len)
{
	size_t zlen = ZSTD_findFrameCompressedSize(r->rec, r->rec_end - r->rec);
	struct zchunk *z;

	if (ZSTD_isError(zlen) || raw_len % TRACE_ALIGN || raw_len > TRACE_CHUNK_RAW_MAX)
		return false;
	if (!r->dctx && !(r->dctx = ZSTD_createDCtx()))
		return false;
	z = malloc(sizeof(*z) + raw_len);
	if (!z)
		return false;
	if (ZSTD_decompressDCtx(r->dctx, z->data, raw_len, r->rec, zlen) != raw_len) {
		free(z);
		return false;
	}
	count(&reads.raw_bytes, raw_len);
	z->next = NULL;
	z->off = r->off;
	z->len = raw_len;
	if (r->ztail)
		r->ztail->next = z;
	else
		r->zhead = z;
	r->ztail = z;
	r->rec = z->data;
	r->rec_end = z->data + raw_len;
	return true;
}

/*
 * Advance to the next valid chunk; false at the end of the file. A chunk that fails its check is
 * skipped by scanning (8-byte steps) for the next one that passes; only when none follows is a
 * chunk header whose length runs past the end taken for what it most likely is: the chunk the
 * recorder was writing when it stopped.
 */
static bool next_chunk(struct trace_reader *r)
{
	size_t len, bad = r->off;
	__u32 raw_len;

	if (r->off >= r->size)
		return false;
	if (chunk_ok(r, r->off, &len, &raw_len))
		goto found;
	for (r->off = bad + TRACE_ALIGN; r->off < r->size; r->off += TRACE_ALIGN) {
		if (chunk_ok(r, r->off, &len, &raw_len)) {
			r->st.bad_chunks++;
			r->st.bad_bytes += r->off - bad;
			goto found;
		}
	}
	r->off = r->size;
	if (chunk_cut(r, bad)) {
		r->st.cut_bytes += r->size - bad;
	} else {
		r->st.bad_chunks++;
		r->st.bad_bytes += r->size - bad;
	}
	return false;
found:
	/* A reader is a pass over the bytes once it reads a chunk (opening reads the header). */
	if (!r->a_pass) {
		r->a_pass = true;
		count(&reads.passes, 1);
	}
	count(&reads.chunks, 1);
	count(&reads.bytes, sizeof(struct trace_chunk_hdr) + len);
	r->rec = r->data + r->off + sizeof(struct trace_chunk_hdr);
	r->rec_end = r->rec + len;
	if (raw_len && !inflate_chunk(r, raw_len)) {
		r->st.bad_chunks++;
		r->st.bad_bytes += sizeof(struct trace_chunk_hdr) + len;
		r->rec = NULL;
	}
	r->off += sizeof(struct trace_chunk_hdr) + len;
	r->st.chunks++;
	return true;
}

int trace__next(struct trace_reader *r, const struct gs_hdr **rec)
{
	for (;;) {
		if (r->rec && r->rec_end - r->rec >= (ptrdiff_t)sizeof(struct gs_hdr)) {
			const struct gs_hdr *h = (const void *)r->rec;
			size_t left = r->rec_end - r->rec;

			if (h->size < sizeof(*h) || h->size % TRACE_ALIGN || h->size > left ||
			    h->size < sizeof(*h) + 8 * ((size_t)h->ustack_n + h->kstack_n)) {
				/* The CRC was right, so the writer framed it so: drop
				 * the rest of this chunk rather than guess. */
				r->st.bad_chunks++;
				r->st.bad_bytes += left;
				r->rec = NULL;
				continue;
			}
			r->rec += h->size;
			r->st.records++;
			if (h->type == GS_REC_END)
				r->st.finished = true;
			*rec = h;
			return 1;
		}
		r->rec = NULL;
		if (!next_chunk(r))
			return 0;
	}
}

const struct trace_stats *trace__stats(const struct trace_reader *r)
{
	return &r->st;
}

int trace__peek(struct trace_reader *r, const struct gs_hdr **rec)
{
	bool finished = r->st.finished;
	int ret = trace__next(r, rec);

	/* trace__next stepped over *rec in the chunk it holds: step back. */
	if (ret > 0) {
		r->rec -= (*rec)->size;
		r->st.records--;
		r->st.finished = finished;
	}
	return ret;
}

int trace__scan_types(const char *path, struct trace_consumer *c, size_t n, char *err,
		      size_t errlen)
{
	struct trace_reader *r;
	const struct gs_hdr *h;
	size_t left = n;

	for (size_t i = 0; i < n; i++)
		c[i].err = 0;
	if (!n)
		return 0;
	r = trace__open(path, err, errlen);
	if (!r) {
		int ret = errno ? -errno : -EINVAL;

		for (size_t i = 0; i < n; i++)
			c[i].err = ret;
		return ret;
	}
	while (left && trace__next(r, &h) > 0) {
		for (size_t i = 0; i < n; i++) {
			if (c[i].type != h->type || c[i].err)
				continue;
			c[i].err = c[i].fn(c[i].ctx, h);
			if (c[i].err)
				left--;
		}
		trace__release(r, h); /* what a consumer keeps, it copied */
	}
	trace__close(r);
	return 0;
}

int trace__scan(const char *path, __u32 type, int (*fn)(void *ctx, const struct gs_hdr *h),
		void *ctx, char *err, size_t errlen)
{
	struct trace_consumer c = { .type = type, .fn = fn, .ctx = ctx };

	return trace__scan_types(path, &c, 1, err, errlen) ?: c.err;
}

void trace__reads(struct trace_reads *out)
{
	out->opens = __atomic_load_n(&reads.opens, __ATOMIC_RELAXED);
	out->passes = __atomic_load_n(&reads.passes, __ATOMIC_RELAXED);
	out->chunks = __atomic_load_n(&reads.chunks, __ATOMIC_RELAXED);
	out->bytes = __atomic_load_n(&reads.bytes, __ATOMIC_RELAXED);
	out->raw_bytes = __atomic_load_n(&reads.raw_bytes, __ATOMIC_RELAXED);
}

void trace__warn(const struct trace_reader *r, const char *path, FILE *out)
{
	const struct trace_stats *st = &r->st;

	if (st->bad_chunks)
		fprintf(out, "gapscope: warning: %s: %llu corrupt chunk(s) skipped (%llu bytes)\n",
			path, (unsigned long long)st->bad_chunks,
			(unsigned long long)st->bad_bytes);
	if (st->cut_bytes)
		fprintf(out,
			"gapscope: warning: %s: trace cut off: read to the last whole chunk "
			"(%llu bytes of an incomplete chunk ignored)\n",
			path, (unsigned long long)st->cut_bytes);
	if (!st->finished)
		fprintf(out, "gapscope: warning: %s: recording did not finish (no end record)\n",
			path);
}

void trace__close(struct trace_reader *r)
{
	if (!r)
		return;
	while (r->zhead) {
		struct zchunk *z = r->zhead;

		r->zhead = z->next;
		free(z);
	}
	ZSTD_freeDCtx(r->dctx);
	unmap_file(r->data, r->size);
	free(r);
}

__u32 trace__version(const struct trace_reader *r)
{
	return r->st.version;
}

size_t trace__pos(const struct trace_reader *r, const void *rec)
{
	const unsigned char *p = rec;
	const struct zchunk *z;

	if (p >= r->data && p < r->data + r->size)
		return p - r->data;
	for (z = r->zhead; z && !(p >= z->data && p < z->data + z->len); z = z->next)
		;
	return z ? z->off : SIZE_MAX;
}

void trace__release(struct trace_reader *r, const void *rec)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), pos = trace__pos(r, rec), upto;
	struct zchunk *z;

	if (pos == SIZE_MAX)
		return;
	/* Every compressed chunk before that one has been read through. */
	while (r->zhead && r->zhead->off < pos) {
		z = r->zhead;
		r->zhead = z->next;
		if (!r->zhead)
			r->ztail = NULL;
		free(z);
		r->zfreed++;
	}
	upto = pos & ~(page - 1);
	/* Not every call: a madvise per record would cost more than the pages it frees. */
	if (upto < r->released + TRACE_RELEASE_STEP || upto > r->size)
		return;
#ifdef GAPSCOPE_FUZZ
	return; /* the heap copy (map_file) must keep its bytes */
#endif
	madvise((void *)(r->data + r->released), upto - r->released, MADV_DONTNEED);
	r->released = upto;
}
