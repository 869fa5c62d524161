/* SPDX-License-Identifier: GPL-2.0 */
/* The idle splitter's state (idlesplit.c), shared with its unit test. */
#ifndef GAPSCOPE_IDLESPLIT_INT_H
#define GAPSCOPE_IDLESPLIT_INT_H

#include <stdbool.h>
#include <linux/types.h>

#include "idmap.h"
#include "kinds.h"
#include "strtab.h"
#include "syscalls.h"

/* A launching thread: its launches in the trace and what it did between them so far. */
struct launcher {
	__u32 tid;
	__u64 launches;
	__u64 first, last; /* its first and latest launch */
	__u64 done;	   /* taken up to here */
	__u64 host_ns;	   /* from first to done, outside the gaps */
	__u64 cuda_ns;	   /* of it in synchronizes */
	__u64 off_ns[BK_MAX];
	__u64 syncs, syncs_quick; /* its synchronizes between launches; returned at once */
	struct idmap stack_ix;	  /* stack id -> index in stacks */
	struct vec stacks;	  /* struct stack_count */
};

#define UNDER_FLOOR_MAX_DEPTH 128 /* user frames, and kernel frames, of a stack drawn */

struct stack_count {
	__u32 stack;
	__u64 n;
};

struct span {
	__u64 start, end;
};

struct idlesplit {
	enum gs_arch arch; /* the trace's machine: its system call numbers */
	struct idmap ix;
	struct vec launchers; /* struct launcher */
	struct idmap ival_ix; /* tid -> index in ivals */
	struct vec ivals;     /* struct gs_launch_ival: each thread's latest */
	struct vec gaps;      /* struct span: gaps of min_gap or more not yet passed */
};

struct device_summary;

/* Gap time of [a, b) outside the gaps, within [lo, hi). */
__u64 idlesplit__outside_gaps(const struct idlesplit *s, __u64 a, __u64 b, __u64 lo, __u64 hi);
/* Whether t lies in a gap of min_gap or more. */
bool idlesplit__in_gap(const struct idlesplit *s, __u64 t);
/* The device's idle time in its parts (setup, gaps, under the floor, tail) over [t0, t1). */
void idlesplit__split_device(struct device_summary *d, __u64 t0, __u64 t1);

#endif
