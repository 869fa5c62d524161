/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The flight recorder's state, shared by flight.c (the live analysis, the triggers and the
 * dumps they ask for) and flight_ring.c (the ring of chunks, the records every dump needs, and
 * the rules by which the ring lets go of a chunk).
 */
#ifndef GAPSCOPE_FLIGHT_INT_H
#define GAPSCOPE_FLIGHT_INT_H

#include <limits.h>

#include "analysis.h"
#include "clock.h"
#include "idmap.h"
#include "flight.h"
#include "metrics.h"
#include "reader.h"

/* Stack snapshots the live analysis unwinds a second, at most (flight__new). */
#define FLIGHT_UNWIND_PER_S 64

#define ALIGN8(x)      (((x) + 7) & ~(size_t)7)
#define FLIGHT_PENDING 4
#define FLIGHT_IDLE    256 /* gap ends remembered */
#define FLIGHT_REPORTS 4   /* dumps whose report runs while the next one is written */
#define NS	       1000000000ull
#define HOUR_NS	       (3600ull * NS)

struct flight_req {
	__u64 w0, w1, asked;
	__u64 start; /* of what triggered it (the gap's start) */
	char reason[96];
};

struct flight {
	struct flight_opts o;
	__u64 keep_ns, cap_bytes;
	struct flight_chunk *head, *last; /* oldest, newest */
	struct flight_chunk *tail;	  /* the one being filled (== last), NULL: none */
	__u64 ring_bytes, let_go_early, dropped;
	/* The ring's chunks and those it let go of that a dump still writes (atomically: the dump's
	 * thread lets go of its own): what --flight-mb bounds. */
	__u64 alive;
	struct flight_spares spares; /* what chunks let go of left mapped for the next ones */
	/* What every dump needs (flight__sticky), each a malloc'd record. */
	struct gs_hdr **sticky;
	size_t nsticky, cap_sticky, sticky_bytes;
	struct idmap sticky_name; /* tid -> index of its name (GS_EV_COMM or GS_EV_EXEC) */
	struct idmap sticky_dev;  /* tid -> index of its first CU_K_DEVICE_THREAD event */
	__u64 sticky_dropped;
	/* The live analysis. */
	struct analysis *a;
	struct ordered_reader *rd;
	/* Dumps: asked for, being written, done. */
	struct flight_req pending[FLIGHT_PENDING];
	size_t npending;
	struct flight_dump *cur;		       /* writing its file */
	struct flight_dump *reporting[FLIGHT_REPORTS]; /* file written, report running */
	__u64 *hour; /* when each dump of the last hour was asked for */
	size_t nhour;
	struct flight_dump_counts n; /* of the dumps joined */
	__u64 suppressed, covered;
	/* --dump-max-mb: bytes on disk the dumps took (atomically: their threads take them as they
	 * write, flight_dump.c), from the dump directory's own at the start; and its bound. */
	__u64 disk, disk_cap;
	/* The debug cache under the dump directory (FLIGHT_DEBUG_CACHE): its bytes taken from the
	 * budget, and whether it was given up; both under flight_dump.c's lock once dumps run. */
	__u64 cache_seen;
	bool cache_off;
	bool cache_live; /* the live analysis reads and makes copies there too */
	char cache_path[PATH_MAX];
	bool said_suppressed;
	int sfd;
	/* SIGINT or SIGTERM pending (polled, never read: the recorder's own loop reads them), and
	 * an eventfd each dump's thread writes once done: flight__stop waits on both. cut: the
	 * recording ends on one of them, its dumps' reports with it (flight__cut). */
	int stop_fd, wake_fd;
	bool cut;
	int dump_dfd; /* --dump-dir, taken once: every dump is created under it */
	__u64 real_off;
	struct metrics *m; /* --metrics, or NULL */
	struct push *push; /* --push, --pprof-dir, or NULL */
	/* Where the live analysis saw each device start work from idle (its gaps' ends), at least
	 * keep_ns / (FLIGHT_IDLE / 2) apart: a program with many short gaps keeps some from as far
	 * back as the ring reaches. */
	struct {
		__u64 at[FLIGHT_IDLE];
		size_t n;
	} idle[METRICS_DEVICES];
	unsigned int ticks;
	unsigned long long released_kb; /* what the live analysis read of files, let go */
	/* Replayed (flight__replay): the clock is the records' own, set by flight__set_clock. */
	bool replay;
	__u64 replay_ns;
	__u64 ring_max;		     /* the most alive ever */
	__u64 t0_ns;		     /* flight__new's CLOCK_MONOTONIC: the cost line's span */
	unsigned long long bound_mb; /* the memory bound stated at start (memlimit__need_mb) */
};

/* Now: CLOCK_MONOTONIC, the records' clock; in a replay, how far the records have come. */
static inline __u64 flight_now(const struct flight *f)
{
	return f->replay ? f->replay_ns : clock__mono_ns();
}

/* flight.c */
/* Hands h, a record the ring holds, to the live analysis's ordered reader. */
void flight__live_push(struct flight *f, const struct gs_hdr *h);

/* flight.c: the live analysis uses the debug cache, once it is there. */
void flight_debug_cache_on(struct flight *f);

/* flight_ring.c: the chunk being filled closed (a dump reads it); chunks past the window, or
 * past --flight-mb to make room for need bytes, let go. */
void flight_ring__close_tail(struct flight *f, __u64 now);
void flight_ring__let_go(struct flight *f, __u64 now, size_t need);

#endif
