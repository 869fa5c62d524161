/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where the recorder's records go: the trace file being written and, for record --flight, a tap
 * that sees every record too. Every stage that writes a record (the consumer's events, the
 * recorder's own records of metadata.h, the archive, Python's code objects, the counters read
 * from the BPF maps at the end) writes through one struct trace_out.
 */
#ifndef GAPSCOPE_TRACE_OUT_H
#define GAPSCOPE_TRACE_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "gapscope.h"
#include "pidns.h"

struct trace_writer;

struct trace_out {
	struct trace_writer *tw; /* NULL: no file (record --flight without -o) */
	/* Every record also goes here (record --flight points it at the flight recorder); NULL:
	 * none. The stages below know nothing of what listens. */
	void (*tap)(void *ctx, const void *rec, size_t size);
	void *tap_ctx;
	const char *path;
	__u32 next_probe_id; /* GS_REC_PROBE ids; a CUDA probe's is its cu_fns key */
	/* The trace's pids are the kernel's: those read from /proc cross this (pidns.h). */
	const struct pidns *ns;
};

/* The global id of process (TGID) or thread PID of the recorder's namespace, for a record. */
static inline __u32 trace_out__gpid(const struct trace_out *o, pid_t pid, bool tgid)
{
	return pidns__global(o->ns, pid, tgid);
}

/*
 * Appends one record. A failed write (a full disk) ends the file at its last whole chunk and
 * counts every record after it as lost (trace__cut); the recorder reports it once, at the end.
 */
void trace_out__append(struct trace_out *o, const void *rec, size_t size);
/* Writes out the buffered records (a chunk), so that readers see them. */
void trace_out__flush(struct trace_out *o);
/* Whether a write failed: the recording should stop. */
bool trace_out__failed(const struct trace_out *o);

/* A record header stamped now (CLOCK_MONOTONIC), for thread TGID. */
void trace_out__hdr(struct gs_hdr *h, __u32 type, __u32 size, __u32 tgid);

#endif
