/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ordered reader's state (reports/analysis/reader.c), for its unit test: the records it holds
 * (a FIFO for those in order, a heap for early ones) and what it read.
 */
#ifndef GAPSCOPE_READER_INT_H
#define GAPSCOPE_READER_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "reader.h"

struct entry {
	__u64 key; /* gs_rec_end, or (gs_rec_untimed) the highest end read before it */
	__u64 seq; /* arrival: ties keep file order */
	const struct gs_hdr *h;
};

struct ordered_reader {
	struct trace_reader *tr;
	struct gs_ctx *ctx;
	__u64 window;

	struct entry *fifo;		    /* ring, keys non-decreasing from head to tail */
	size_t fifo_cap, fifo_head, fifo_n; /* cap: a power of 2 */
	struct entry *heap;		    /* min-heap by (key, seq) */
	size_t heap_cap, heap_n;

	__u64 seq;
	__u64 watermark; /* the highest key read */
	__u64 last_out;	 /* the key of the last record emitted in order */
	bool eof;
	struct oreader_stats st;
};

#endif
