/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Gap stacks as a pprof profile (gzipped profile.proto, the format of go tool pprof, Pyroscope
 * and Parca): one sample per folded stack of a gap, its value the nanoseconds of the gap it
 * stands for, its locations leaf first, one function per distinct frame name (synthetic frames
 * such as "[lock tracker_lock]" and kernel frames "..._[k]" keep their names), and labels for
 * the gap: "gap" (its id), "device", "cause" (the kind of its main root cause), "cause_function"
 * and "tier". The sum of the values is the gaps' total time, as summary.json's gaps add up.
 *
 * Encoded with protobuf-c from reports/render/profile.proto (the fields of the format gapscope sets),
 * gzipped with zlib.
 */
#ifndef GAPSCOPE_PPROF_H
#define GAPSCOPE_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct analysis;
struct gap;
struct pprof;

struct pprof_labels {
	__u32 gap_id; /* 0: not numbered (a flight interval's gaps are numbered by seq) */
	__u32 device;
	const char *cause;	    /* blame_kind__name() of the main root, NULL: none */
	const char *cause_function; /* NULL: none */
	const char *tier;	    /* "api" or "cupti" */
};

struct pprof *pprof__new(void);
void pprof__free(struct pprof *p);
/* Drops every sample, keeping the tables' memory for the next profile. */
void pprof__reset(struct pprof *p);
/* One stack, frames root first, weighing ns. 0 or -ENOMEM. */
int pprof__add(struct pprof *p, const char *const *frames, size_t n, __u64 ns,
	       const struct pprof_labels *l);
/* Every stack of gap g (during an on_gap callback, while g->stacks is set). 0 or -ENOMEM. */
int pprof__add_gap(struct pprof *p, const struct gap *g, __u32 gap_id);
size_t pprof__samples(const struct pprof *p);
__u64 pprof__total(const struct pprof *p);
/*
 * The gzipped profile in *out (malloc'd, the caller frees it), *len bytes. time_ns: when the
 * profile starts (CLOCK_REALTIME ns, 0 unknown), duration_ns its length. 0 or -ENOMEM.
 */
int pprof__encode(const struct pprof *p, __u64 time_ns, __u64 duration_ns, unsigned char **out,
		  size_t *len);
/* The same written to path (outfile.h: never through a link; force replaces). 0 or -errno. */
int pprof__write(const struct pprof *p, const char *path, bool force, __u64 time_ns,
		 __u64 duration_ns);

/*
 * report --pprof: every gap of a, its stacks read back from NNNN.folded under the directory fd
 * gaps_dfd (written by folded_out), labelled with the gap's id, device, cause and tier; written
 * to path. 0 or -errno (-EINVAL: a folded file could not be read).
 */
int pprof__from_report(const struct analysis *a, int gaps_dfd, const char *path, bool force);

#endif
