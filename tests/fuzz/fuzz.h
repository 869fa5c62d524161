/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the fuzz targets share: the input as a file the readers can open by path (a memfd,
 * /proc/self/fd/N), and a copy of it with every chunk's CRCs made right, so that mutations get
 * past the chunk checks into the record decoders behind them.
 */
#ifndef GAPSCOPE_FUZZ_H
#define GAPSCOPE_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "trace.h"

struct fuzz_file {
	int fd;
	char path[64];
};

/* The bytes as a file; -1 when the memfd cannot be made (the target then returns). */
static inline int fuzz_file__set(struct fuzz_file *f, const uint8_t *data, size_t size)
{
	if (f->fd <= 0) {
		f->fd = memfd_create("gapscope-fuzz", MFD_CLOEXEC);
		if (f->fd < 0)
			return -1;
		snprintf(f->path, sizeof(f->path), "/proc/self/fd/%d", f->fd);
	}
	if (ftruncate(f->fd, 0) || pwrite(f->fd, data, size, 0) != (ssize_t)size)
		return -1;
	return 0;
}

/*
 * A copy of data whose file header and chunks carry the CRCs the writer would have given them:
 * walked as the reader walks well-framed chunks (a header whose length fits); what follows the
 * first one that does not fit is left as it is. Freed by the caller.
 */
static inline uint8_t *fuzz_fix_crcs(const uint8_t *data, size_t size)
{
	uint8_t *d = malloc(size ? size : 1);
	struct trace_file_hdr fh;
	size_t off;

	if (!d)
		return NULL;
	memcpy(d, data, size);
	if (size < sizeof(fh))
		return d;
	memcpy(&fh, d, sizeof(fh));
	fh.crc = 0;
	fh.crc = crc32(0, (const void *)&fh, sizeof(fh));
	memcpy(d, &fh, sizeof(fh));
	off = fh.hdr_size >= sizeof(fh) && fh.hdr_size <= size ? fh.hdr_size : sizeof(fh);
	off = (off + 7) & ~(size_t)7;
	while (off <= size && size - off >= sizeof(struct trace_chunk_hdr)) {
		struct trace_chunk_hdr ch;

		memcpy(&ch, d + off, sizeof(ch));
		if (ch.len % TRACE_ALIGN || ch.len > size - off - sizeof(ch))
			break;
		ch.magic = TRACE_CHUNK_MAGIC;
		ch.hcrc = crc32(0, (const void *)&ch, TRACE_CHUNK_HCRC_BYTES);
		ch.crc = 0;
		memcpy(d + off, &ch, sizeof(ch));
		ch.crc = crc32(crc32(0, (const void *)&ch, sizeof(ch)), d + off + sizeof(ch),
			       ch.len);
		memcpy(d + off, &ch, sizeof(ch));
		off += sizeof(ch) + ch.len;
	}
	return d;
}

#endif
