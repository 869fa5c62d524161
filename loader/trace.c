// SPDX-License-Identifier: GPL-2.0
/* The trace file: chunked, CRC-checked, appended as it goes. See trace.h for the layout. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "cuda.h"
#include "outfile.h"
#include "trace.h"

#define ALIGN8(x)	   (((x) + 7) & ~(size_t)7)
/* trace__release gives pages back in steps of at least this many bytes. */
#define TRACE_RELEASE_STEP (8u << 20)

struct trace_writer {
	int fd;
	unsigned char *buf; /* chunk header space, then payload */
	size_t len;	    /* payload bytes in buf */
	size_t cap;	    /* payload capacity */
	__u32 nrec;
	__u64 seq;
	__u64 bytes;
	__u64 records;
	/* After a failed write: the error, the chunk that did not make it, the records lost. */
	int err;
	__u64 cut_seq;
	__u64 dropped;
	struct trace_file_hdr fh; /* as written, for trace__set_flags() */
};

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += w;
		n -= w;
	}
	return 0;
}

static __u32 crc_of(__u32 crc, const void *p, size_t n)
{
	return crc32(crc, p, n);
}

struct trace_writer *trace__create(const char *path, bool force)
{
	struct trace_writer *w = calloc(1, sizeof(*w));
	struct trace_file_hdr fh = { .version = TRACE_VERSION, .hdr_size = sizeof(fh) };
	struct timespec ts;
	int err;

	if (!w)
		return NULL;
	w->cap = TRACE_CHUNK_TARGET;
	w->buf = malloc(sizeof(struct trace_chunk_hdr) + w->cap);
	if (!w->buf) {
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	w->fd = outfile__open(path, force);
	if (w->fd < 0) {
		err = -w->fd;
		free(w->buf);
		free(w);
		errno = err;
		return NULL;
	}
	memcpy(fh.magic, TRACE_MAGIC, sizeof(fh.magic));
	clock_gettime(CLOCK_REALTIME, &ts);
	fh.created_ns = ts.tv_sec * 1000000000ull + ts.tv_nsec;
	fh.crc = crc_of(0, &fh, sizeof(fh));
	err = write_all(w->fd, &fh, sizeof(fh));
	if (err) {
		close(w->fd);
		free(w->buf);
		free(w);
		errno = -err;
		return NULL;
	}
	w->bytes = sizeof(fh);
	w->fh = fh;
	return w;
}

int trace__set_flags(struct trace_writer *w, __u32 flags)
{
	struct trace_file_hdr fh = w->fh;

	fh.flags |= flags;
	fh.crc = 0;
	fh.crc = crc_of(0, &fh, sizeof(fh));
	/* pwrite: the appending offset stays where it is. */
	if (pwrite(w->fd, &fh, sizeof(fh), 0) != (ssize_t)sizeof(fh))
		return -errno;
	w->fh = fh;
	return 0;
}

/*
 * A write failed (a full disk): nothing more is written, so that the file ends at its last whole
 * chunk (and whatever part of this one got through, which readers tell from a whole chunk);
 * the records of this chunk and every one appended later are counted as lost.
 */
static int cut(struct trace_writer *w, int err)
{
	if (!w->err) {
		w->err = err;
		w->cut_seq = w->seq;
	}
	w->dropped += w->nrec;
	w->len = 0;
	w->nrec = 0;
	return w->err;
}

int trace__flush(struct trace_writer *w)
{
	struct trace_chunk_hdr *ch = (void *)w->buf;
	int err;

	if (w->err)
		return cut(w, w->err);
	if (!w->len)
		return 0;
	ch->magic = TRACE_CHUNK_MAGIC;
	ch->len = w->len;
	ch->seq = w->seq;
	ch->nrec = w->nrec;
	ch->pad = 0;
	ch->hcrc = crc_of(0, ch, TRACE_CHUNK_HCRC_BYTES);
	ch->crc = 0;
	ch->crc = crc_of(0, w->buf, sizeof(*ch) + w->len);
	err = write_all(w->fd, w->buf, sizeof(*ch) + w->len);
	if (err)
		return cut(w, err);
	w->bytes += sizeof(*ch) + w->len;
	w->seq++;
	w->len = 0;
	w->nrec = 0;
	return 0;
}

int trace__append(struct trace_writer *w, const void *rec, size_t size)
{
	size_t padded = ALIGN8(size);
	struct gs_hdr *h;
	int err;

	if (size < sizeof(struct gs_hdr) || padded > UINT32_MAX)
		return -EINVAL;
	if (w->err) {
		w->dropped++;
		return w->err;
	}
	if (w->len + padded > w->cap) {
		err = trace__flush(w);
		if (err) {
			w->dropped++;
			return err;
		}
		if (padded > w->cap) {
			unsigned char *nb = realloc(w->buf,
						    sizeof(struct trace_chunk_hdr) + padded);

			if (!nb)
				return -ENOMEM;
			w->buf = nb;
			w->cap = padded;
		}
	}
	h = (void *)(w->buf + sizeof(struct trace_chunk_hdr) + w->len);
	memcpy(h, rec, size);
	memset((char *)h + size, 0, padded - size);
	h->size = padded;
	w->len += padded;
	w->nrec++;
	w->records++;
	if (w->len >= TRACE_CHUNK_TARGET)
		return trace__flush(w);
	return 0;
}

int trace__finish(struct trace_writer *w)
{
	int err;

	if (!w)
		return 0;
	err = trace__flush(w);
	/* close(2) reports what a file system could only tell then (NFS, quotas). */
	if (close(w->fd) && !err)
		err = -errno;
	free(w->buf);
	free(w);
	return err;
}

__u64 trace__bytes(const struct trace_writer *w)
{
	return w->bytes + (w->len ? sizeof(struct trace_chunk_hdr) + w->len : 0);
}

__u64 trace__records(const struct trace_writer *w)
{
	return w->records;
}

int trace__cut(const struct trace_writer *w, __u64 *chunk, __u64 *lost)
{
	*chunk = w->cut_seq;
	*lost = w->dropped;
	return w->err;
}

struct trace_reader {
	const unsigned char *data;
	size_t size;
	size_t off;		  /* next chunk header */
	const unsigned char *rec; /* next record in the current chunk */
	const unsigned char *rec_end;
	size_t released; /* pages before this offset were given back (trace__release) */
	struct trace_stats st;
};

static bool chunk_ok(const struct trace_reader *r, size_t off, size_t *len)
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
	if (crc_of(crc_of(0, &ch, sizeof(ch)), r->data + off + sizeof(ch), ch.len) != crc)
		return false;
	*len = ch.len;
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
	       crc_of(0, &ch, TRACE_CHUNK_HCRC_BYTES) == ch.hcrc;
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

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
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
	if (crc_of(0, &fh, sizeof(fh)) != crc || fh.hdr_size < sizeof(fh) ||
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
	return r;
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

	if (r->off >= r->size)
		return false;
	if (chunk_ok(r, r->off, &len))
		goto found;
	for (r->off = bad + TRACE_ALIGN; r->off < r->size; r->off += TRACE_ALIGN) {
		if (chunk_ok(r, r->off, &len)) {
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
	r->rec = r->data + r->off + sizeof(struct trace_chunk_hdr);
	r->rec_end = r->rec + len;
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

int trace__scan(const char *path, __u32 type, int (*fn)(void *ctx, const struct gs_hdr *h),
		void *ctx, char *err, size_t errlen)
{
	struct trace_reader *r = trace__open(path, err, errlen);
	const struct gs_hdr *h;
	int ret = 0;

	if (!r)
		return errno ? -errno : -EINVAL;
	while (!ret && trace__next(r, &h) > 0) {
		if (h->type == type)
			ret = fn(ctx, h);
		trace__release(r, h);
	}
	trace__close(r);
	return ret;
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
	unmap_file(r->data, r->size);
	free(r);
}

__u32 trace__version(const struct trace_reader *r)
{
	return r->st.version;
}

void trace__release(struct trace_reader *r, const void *rec)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t upto = ((const unsigned char *)rec - r->data) & ~(page - 1);

	/* Not every call: a madvise per record would cost more than the pages it frees. */
	if (upto < r->released + TRACE_RELEASE_STEP || upto > r->size)
		return;
#ifdef GAPSCOPE_FUZZ
	return; /* the heap copy (map_file) must keep its bytes */
#endif
	madvise((void *)(r->data + r->released), upto - r->released, MADV_DONTNEED);
	r->released = upto;
}

const char *trace__cu_kind_name(__u32 kind)
{
	static const char *const names[CU_K_MAX] = {
		[CU_K_LAUNCH] = "launch",
		[CU_K_GRAPH_LAUNCH] = "graph_launch",
		[CU_K_MEMCPY] = "memcpy",
		[CU_K_MEMSET] = "memset",
		[CU_K_SYNC_STREAM] = "sync_stream",
		[CU_K_SYNC_EVENT] = "sync_event",
		[CU_K_SYNC_CTX] = "sync_ctx",
		[CU_K_EVENT_RECORD] = "event_record",
		[CU_K_EVENT_QUERY] = "event_query",
		[CU_K_STREAM_QUERY] = "stream_query",
		[CU_K_STREAM_WAIT] = "stream_wait",
		[CU_K_ALLOC] = "alloc",
		[CU_K_FREE] = "free",
		[CU_K_HOST_REGISTER] = "host_register",
		[CU_K_HOST_UNREGISTER] = "host_unregister",
		[CU_K_CTX_SET] = "ctx_set",
		[CU_K_CTX_PUSH] = "ctx_push",
		[CU_K_CTX_POP] = "ctx_pop",
		[CU_K_CTX_CREATE] = "ctx_create",
		[CU_K_STREAM_CREATE] = "stream_create",
		[CU_K_GET_FUNCTION] = "get_function",
		[CU_K_GET_KERNEL] = "get_kernel",
		[CU_K_KERNEL_FUNCTION] = "kernel_function",
		[CU_K_CAPTURE_BEGIN] = "capture_begin",
		[CU_K_CAPTURE_END] = "capture_end",
		[CU_K_UNLOAD] = "unload",
	};

	return kind < CU_K_MAX && names[kind] ? names[kind] : "cuda";
}

const char *trace__event_name(__u32 type)
{
	static const char *const names[GS_EV_MAX] = {
		[GS_EV_CUDA] = "cuda",
		[GS_EV_CU_NAME] = "cu_name",
		[GS_EV_FUTEX] = "futex",
		[GS_EV_OFFCPU] = "offcpu",
		[GS_EV_SAMPLE] = "sample",
		[GS_EV_PROBE] = "probe",
		[GS_EV_FORK] = "fork",
		[GS_EV_EXIT] = "exit",
		[GS_EV_COMM] = "comm",
		[GS_EV_EXEC] = "exec",
		[GS_EV_MMAP] = "mmap",
		[GS_EV_LOCK] = "lock",
		[GS_EV_USTACK_SNAP] = "ustack_snap",
	};

	return type < GS_EV_MAX && names[type] ? names[type] : "other";
}

const char *trace__gpu_act_kind_name(__u32 kind)
{
	static const char *const names[GS_ACT_KIND_MAX] = {
		[GS_ACT_KERNEL] = "kernel",   [GS_ACT_MEMCPY] = "memcpy",
		[GS_ACT_MEMSET] = "memset",   [GS_ACT_LAUNCH] = "launch",
		[GS_ACT_NAME] = "name",	      [GS_ACT_STATUS] = "status",
		[GS_ACT_DROPPED] = "dropped",
	};

	return kind < GS_ACT_KIND_MAX && names[kind] ? names[kind] : "?";
}

const char *trace__probe_family_name(__u32 family)
{
	switch (family) {
	case GS_PROBE_CUDA:
		return "cuda";
	case GS_PROBE_LIBC:
		return "libc";
	case GS_PROBE_KERNEL:
		return "kernel";
	case GS_PROBE_LOCK:
		return "lock";
	case GS_PROBE_TASK:
		return "task";
	default:
		return "user";
	}
}
