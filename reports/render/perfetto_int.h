/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What perfetto.c (the file, the GPU tracks) and perfetto_threads.c (the pass over the trace's
 * thread intervals, the chain links' arrows) share while timeline.json is written.
 */
#ifndef GAPSCOPE_PERFETTO_INT_H
#define GAPSCOPE_PERFETTO_INT_H

#include <stdbool.h>
#include <stdio.h>

#include "gap.h"
#include "context.h"
#include "names.h"
#include "offcpu.h"
#include "perfetto.h"
#include "strtab.h"

/* The GPU's synthetic process: above any pid_max, so no thread of the trace has its ids. */
#define GPU_PID 1000000000u

struct tl_thread {
	__u32 tid, tgid;
	__u32 npend;
	/* Off-CPU intervals inside a futex wait, held until the wait (which ends after them,
	 * so arrives later) says whether it was a lock or a condition. */
	struct offcpu_event *pend;
};

/* A chain link that goes on to another thread: the woken waited for the waker in the gap. */
struct tl_pair {
	__u32 woken, waker;
	__u64 g0, g1;
	bool matched;
};

/* A thread woken from a wait on a lock: the waker had released the lock then. */
struct tl_release {
	__u64 uaddr, at;
	__u32 tid, tgid;
};

/* The releases kept: enough for the waiters of a contended lock while one of them waits. */
#define TL_RELEASES 64

struct tl_win {
	__u64 s, e;
};

struct tl {
	FILE *out;
	const struct analysis *a;
	struct gs_ctx *ctx;
	struct strtab *strs;
	struct names *nm;
	__u32 version;
	__u64 t0; /* the trace's start: ts 0 */
	__u64 min_ns;
	size_t max_slices;
	size_t outside;	       /* thread slices written outside every gap */
	bool first;	       /* no event written yet: no comma before the next */
	bool cut;	       /* the trace could not be read to its end */
	struct tl_thread **th; /* open addressing by tid */
	size_t thcap;
	struct tl_win *win; /* the gaps' windows, merged, by start */
	size_t nwin;
	struct tl_pair *pairs; /* by woken, then gap start */
	__u64 max_gap;
	struct tl_release rel[TL_RELEASES]; /* the latest, a ring */
	unsigned int nrel;
	__u64 flow_id; /* the last arrow's bind_id */
	struct timeline_stats st;
};

/* The writer (perfetto.c): a complete slice up to its args object, args, the closing. */
void tl__slice(struct tl *t, __u32 pid, __u32 tid, __u64 s, __u64 e, const char *cat,
	       const char *name, __u64 flow, bool flow_out);
void tl__arg_str(struct tl *t, bool first, const char *k, const char *v);
void tl__arg_u64(struct tl *t, const char *k, __u64 v);
void tl__end(struct tl *t);
void tl__meta(struct tl *t, const char *what, __u32 pid, __u32 tid, const char *name);

/* The pass (perfetto_threads.c). */
int tl__index_gaps(struct tl *t); /* the gaps' windows and chain links; -1 on ENOMEM */
int tl__feed(struct tl *t, const struct gs_hdr *h); /* a record in end order */
void tl__finish(struct tl *t);			    /* held intervals, thread and process names */
void tl__free(struct tl *t);

#endif
