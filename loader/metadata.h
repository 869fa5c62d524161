/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The recorder's own records in the trace (types >= GS_REC_CLOCK, lib/trace.h): the clock,
 * the target, each probe, mappings, thread names, kernel symbols, losses, the exit and the end.
 * Events from the ring buffer go through the same trace_out.
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

struct archive;
struct record_bpf;
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
void meta__hdr(struct gs_hdr *h, __u32 type, __u32 size, __u32 tgid);

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

/*
 * Loss counters from the BPF side and the probes that failed to attach: GS_REC_LOSSES,
 * GS_REC_LOST_TYPES and GS_REC_CU_HANDLES (cuda_libs: the libcuda files probed).
 */
void meta__losses(struct trace_out *o, struct record_bpf *skel, pid_t tgid, __u64 attach_failed,
		  __u32 cuda_libs);
/* The losses so far, in total and by kind (GS_LOSS_MAX counters), without writing them. */
__u64 meta__count_losses(struct record_bpf *skel, __u64 attach_failed, __u64 *by_kind);

/* The file-backed mappings recorded so far, so that each is written once. */
struct map_records {
	struct map_seen *v;
	size_t n, cap;
	struct archive *archive; /* --archive: the files of executable mappings (archive.h) */
	struct pycode *py;	 /* Python interpreters looked for in them (pycode.h), or NULL */
};

/* Writes a GS_REC_MAP (with its build-id) for each mapping of TGID not written before. */
void map_records__scan(struct map_records *m, struct trace_out *o, pid_t tgid);
/* The processes with mappings recorded, each once, up to max of them; the count. */
size_t map_records__tgids(const struct map_records *m, pid_t *out, size_t max);
void map_records__free(struct map_records *m);

#endif
