/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The recorder's own records in the trace (types >= GS_REC_CLOCK, lib/trace.h): the clock,
 * the target, each probe, thread names, kernel symbols, the exit and the end.
 * Each goes through trace_out.h, as the events from the ring buffer do; the mappings are
 * maprecords.h's, what the BPF maps counted counters.h's.
 */
#ifndef GAPSCOPE_METADATA_H
#define GAPSCOPE_METADATA_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <linux/types.h>

#include "gapscope.h"
#include "pidns.h"

struct trace_out;

void meta__clock(struct trace_out *o, unsigned int sample_freq);
/* ARGV NULL: a process attached to with -p. */
void meta__target(struct trace_out *o, pid_t pid, char **argv);

struct meta_probe {
	__u32 id;
	__u32 family;  /* enum gs_probe_family */
	__u32 kind;    /* enum cu_kind */
	int err;       /* why it did not attach, or 0 */
	__u64 live_ns; /* attached since (CLOCK_MONOTONIC), 0 when it did not */
	__u64 offset;  /* file offset of a uprobe */
	__u32 flags;   /* GS_PROBE_F_* */
	pid_t tgid;    /* the target */
	int pid;       /* the uprobe's pid filter, -1 for every process */
	const char *lib, *sym;
};

void meta__probe(struct trace_out *o, const struct meta_probe *p);
/* Process TGID ran unprobed from FROM_NS until now (enum gs_unprobed_why WHY, LINKS made). */
void meta__unprobed(struct trace_out *o, pid_t tgid, __u64 from_ns, __u32 why, __u32 links);
/* A kernel program attached now, named by its section. */
void meta__kernel_probe(struct trace_out *o, pid_t tgid, int pid, const char *what);
/* The names of TGID's threads as they are now (GS_EV_COMM records). */
unsigned int meta__threads(struct trace_out *o, pid_t tgid); /* the names written */
void meta__ksym(struct trace_out *o, __u64 addr, const char *name);
void meta__exit(struct trace_out *o, pid_t pid, int status, const struct rusage *ru);
void meta__end(struct trace_out *o, pid_t pid, __u64 events);

#endif
