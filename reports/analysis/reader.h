/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The time-ordered reader: a trace's records in the order their intervals ended, with the trace
 * context (context.h) kept up to date on the way. What every part of `gapscope script` and
 * `gapscope report` reads a trace through.
 *
 * The context is fed every record: an event (type < GS_REC_CLOCK) just before it is returned,
 * so names and mappings are those of its time (a thread renamed later keeps its old name on
 * earlier events); a recorder record as soon as it is read, since the recorder writes what
 * events need (kernel symbols, maps) just before those events, and may write it after events
 * that ended later.
 *
 *	char err[256];
 *	struct trace_reader *tr = trace__open(path, err, sizeof(err));
 *	struct gs_ctx *ctx = ctx__new();
 *	struct ordered_reader *r;
 *	const struct gs_hdr *h;
 *	int n;
 *
 *	if (!tr || !ctx || ctx__prescan(ctx, path))	(prescan: optional, see context.h)
 *		goto fail;
 *	r = oreader__new(tr, ctx, OREADER_WINDOW_NS);
 *	while ((n = oreader__next(r, &h)) > 0) {
 *		const struct offcpu_event *e = gs_offcpu(h);	(decode.h)
 *
 *		if (e)
 *			printf("%s off-CPU %llu ns from %llu\n", ctx__comm(ctx, h->tid) ?: "?",
 *			       e->dur_ns, h->ts);
 *	}
 *	oreader__warn(r, path, stderr);		(late records, short records)
 *	trace__warn(tr, path, stderr);		(corrupt and cut-off chunks, no end record)
 *	oreader__free(r);
 *	ctx__free(ctx);
 *	trace__close(tr);
 *
 * Which time orders the stream: the END of each record, gs_rec_end() = h.ts + its duration for
 * an interval (off-CPU, futex wait, probed function, CUDA call with a return, kernel-name lookup,
 * mutex hold), h.ts for an instant (launch, sample, fork, comm, mmap, ...). Ties keep file order.
 * h.ts itself stays the start of the interval.
 *
 * Why the end: the BPF side writes an event when it ends, so the file is in end order up to the
 * skew between CPUs reserving the one ring buffer (microseconds). Ordering by start would need a
 * window as long as the longest interval (a thread blocked for the whole run), which nothing
 * bounds. A consumer thus sees an interval once it is complete, after every record that ended
 * before it; nested intervals arrive inner first (off-CPU intervals before the futex wait or
 * CUDA call that holds them).
 *
 * Recorder records (type >= GS_REC_CLOCK) and comm events are ordered where they arrive: at the
 * highest end read before them (gs_rec_untimed). A recorder record's h.ts is when it was written
 * (for a probe record: live since, 0 when the attach failed), not a time in the stream; the
 * recorder writes comm events itself too, the names of an attached process's threads, stamped
 * when it read them while the ring buffer still held up to 160 ms of earlier events (measured
 * attaching to a loaded machine).
 *
 * The window: a record is held until one that ended window_ns after it has been read, then
 * emitted in order. One arriving after a record that ended later was already emitted is late:
 * it is returned at once, out of order, as OREADER_LATE, and counted (oreader__stats,
 * oreader__warn), never put silently in a wrong place. Memory: the records of one window (a
 * pointer, the end and a sequence number each, at most OREADER_MAX_HELD of them); the file's
 * pages behind the oldest held record are given back to the kernel as reading goes, so the
 * resident size does not grow with the trace.
 *
 * Records point into the mapped trace and stay valid until trace__close.
 */
#ifndef GAPSCOPE_READER_H
#define GAPSCOPE_READER_H

#include <stdio.h>
#include <linux/types.h>

#include "context.h"
#include "decode.h"
#include "trace.h"

/*
 * Skew seen between CPUs is microseconds (6 us at most in a zkengine tracker-trim recording on
 * 2 CPUs); 50 ms also covers a program descheduled between taking a time and writing its event.
 */
#define OREADER_WINDOW_NS (50ull * 1000 * 1000)
/* A hard cap on the records held (24 bytes each): past it the oldest is emitted early. */
#define OREADER_MAX_HELD  (1u << 22)

/* oreader__next results above 0. */
#define OREADER_IN_ORDER 1
#define OREADER_LATE	 2 /* a record that could not be put in order (see above) */

struct oreader_stats {
	__u64 records;	     /* records read from the trace */
	__u64 emitted;	     /* records returned (in order or late) */
	__u64 short_records; /* too short for their type (gs_rec_check): counted, dropped */
	__u64 late;	     /* returned out of order */
	__u64 late_max_ns;   /* the most a late record ended before the newest end read:
				 * a window this long would have ordered them all */
	__u64 forced;	     /* emitted before their window passed (OREADER_MAX_HELD) */
	__u64 held_max;	     /* most records held at once */
};

struct ordered_reader;

/*
 * A reader over tr (positioned at its start) that feeds ctx (not owned; may be NULL) every
 * record as it arrives. window_ns: how late, against the latest end read, a record may arrive
 * and still be put in order. NULL on allocation failure.
 */
struct ordered_reader *oreader__new(struct trace_reader *tr, struct gs_ctx *ctx, __u64 window_ns);

/* OREADER_IN_ORDER or OREADER_LATE with *rec set; 0 at the end of the trace; < 0 an error. */
int oreader__next(struct ordered_reader *r, const struct gs_hdr **rec);

/*
 * Pushed records (tr NULL in oreader__new: a recording's records as they are made, record
 * --flight): oreader__push holds h (which must stay valid until oreader__next returns it) and
 * returns 0, or OREADER_LATE with *rec = h to be taken at once, or -ENOMEM; oreader__next then
 * returns the records due, and 0 when none is due yet. oreader__advance(now): no record ending
 * before now - window_ns is still to come (the recorder has read everything up to now), so
 * those held are due. oreader__end: nothing more will come, everything held is due.
 */
int oreader__push(struct ordered_reader *r, const struct gs_hdr *h, const struct gs_hdr **rec);
void oreader__advance(struct ordered_reader *r, __u64 now);
/*
 * The latest end read or advanced to: a pushed record is ordered at its end (gs_rec_end), an
 * untimed one at this value as it was pushed; every record ordered at or before
 * oreader__watermark() - window_ns has been returned once oreader__next returned 0.
 */
__u64 oreader__watermark(const struct ordered_reader *r);
void oreader__end(struct ordered_reader *r);

const struct oreader_stats *oreader__stats(const struct ordered_reader *r);

/* What was dropped or out of order, a line each, "gapscope: warning: PATH: ...". */
void oreader__warn(const struct ordered_reader *r, const char *path, FILE *out);

void oreader__free(struct ordered_reader *r);

#endif
