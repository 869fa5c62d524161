/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The trace reader's state (lib/trace_read.c), for the unit tests that check what it gives back
 * (trace__release): the file's pages and the decompressed chunks it still holds.
 */
#ifndef GAPSCOPE_TRACE_READ_INT_H
#define GAPSCOPE_TRACE_READ_INT_H

#include <stddef.h>
#include <zstd.h>

#include "trace.h"

/* A compressed chunk's records, held until trace__release passes them. */
struct zchunk {
	struct zchunk *next;
	size_t off; /* the chunk's place in the file */
	size_t len;
	unsigned char data[];
};

struct trace_reader {
	const unsigned char *data;
	size_t size;
	size_t off;		  /* next chunk header */
	const unsigned char *rec; /* next record in the current chunk */
	const unsigned char *rec_end;
	size_t released; /* pages before this offset were given back (trace__release) */
	ZSTD_DCtx *dctx;
	struct zchunk *zhead, *ztail; /* in file order */
	size_t zfreed;		      /* chunks freed by trace__release */
	bool a_pass;		      /* has read a chunk: counted in trace__reads' passes */
	struct trace_stats st;
};

#endif
