// SPDX-License-Identifier: GPL-2.0
/*
 * The trace file written: chunked, CRC-checked, compressed, appended as it goes. See trace.h for
 * the layout; trace_read.c reads it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "cuda.h"
#include "outfile.h"
#include "trace.h"

#define ALIGN8(x) (((x) + 7) & ~(size_t)7)

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
	ZSTD_CCtx *zctx; /* NULL: chunks written as they are */
	unsigned char *zbuf;
	size_t zcap;
	__u64 raw_bytes;	  /* records' bytes before compression */
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
	return trace__create_at(AT_FDCWD, path, force);
}

struct trace_writer *trace__create_at(int dfd, const char *name, bool force)
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
	w->fd = outfile__openat(dfd, name, force);
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
	fh.flags = (__u32)gs_arch__host() << TRACE_F_ARCH_SHIFT;
	fh.crc = crc_of(0, &fh, sizeof(fh));
	err = write_all(w->fd, &fh, sizeof(fh));
	if (err) {
		close(w->fd);
		unlinkat(dfd, name, 0);
		free(w->buf);
		free(w);
		errno = -err;
		return NULL;
	}
	w->bytes = sizeof(fh);
	w->fh = fh;
	w->zctx = ZSTD_createCCtx(); /* none: chunks are written uncompressed */
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

/*
 * The payload compressed into w->zbuf after a chunk header, zero padded to 8 bytes; its padded
 * length, or 0 where compressing fails or does not make it smaller.
 */
static size_t compress_chunk(struct trace_writer *w)
{
	size_t bound = ZSTD_compressBound(w->len), n;

	if (!w->zctx)
		return 0;
	if (sizeof(struct trace_chunk_hdr) + bound + TRACE_ALIGN > w->zcap) {
		size_t cap = sizeof(struct trace_chunk_hdr) + bound + TRACE_ALIGN;
		unsigned char *nb = realloc(w->zbuf, cap);

		if (!nb)
			return 0;
		w->zbuf = nb;
		w->zcap = cap;
	}
	n = ZSTD_compressCCtx(w->zctx, w->zbuf + sizeof(struct trace_chunk_hdr), bound,
			      w->buf + sizeof(struct trace_chunk_hdr), w->len, 1);
	if (ZSTD_isError(n) || ALIGN8(n) >= w->len)
		return 0;
	memset(w->zbuf + sizeof(struct trace_chunk_hdr) + n, 0, ALIGN8(n) - n);
	return ALIGN8(n);
}

int trace__flush(struct trace_writer *w)
{
	struct trace_chunk_hdr *ch = (void *)w->buf;
	size_t zlen;
	int err;

	if (w->err)
		return cut(w, w->err);
	if (!w->len)
		return 0;
	zlen = compress_chunk(w);
	if (zlen)
		ch = (void *)w->zbuf;
	ch->magic = TRACE_CHUNK_MAGIC;
	ch->len = zlen ?: w->len;
	ch->seq = w->seq;
	ch->nrec = w->nrec;
	ch->raw_len = zlen ? w->len : 0;
	ch->hcrc = crc_of(0, ch, TRACE_CHUNK_HCRC_BYTES);
	ch->crc = 0;
	ch->crc = crc_of(0, ch, sizeof(*ch) + ch->len);
	err = write_all(w->fd, ch, sizeof(*ch) + ch->len);
	if (err)
		return cut(w, err);
	w->bytes += sizeof(*ch) + ch->len;
	w->raw_bytes += w->len;
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
	ZSTD_freeCCtx(w->zctx);
	free(w->zbuf);
	free(w->buf);
	free(w);
	return err;
}

__u64 trace__bytes(const struct trace_writer *w)
{
	return w->bytes + (w->len ? sizeof(struct trace_chunk_hdr) + w->len : 0);
}

void trace__compress(struct trace_writer *w, bool on)
{
	if (!on) {
		ZSTD_freeCCtx(w->zctx);
		w->zctx = NULL;
	} else if (!w->zctx) {
		w->zctx = ZSTD_createCCtx();
	}
}

__u64 trace__raw_bytes(const struct trace_writer *w)
{
	return w->raw_bytes + w->len;
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
