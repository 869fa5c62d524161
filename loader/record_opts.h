/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a recording is asked to do, as the recorder's stages read it (bpf_setup.c, cupti_recv.c).
 * record's command line (cmd/options.c) fills it, beside the flight recorder's own options
 * (flight.h), which no stage below loader/live/ needs to know.
 */
#ifndef GAPSCOPE_RECORD_OPTS_H
#define GAPSCOPE_RECORD_OPTS_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

#include "probe_spec.h"

#define MAX_USER_PROBES 32

/* -p may be given this many times. */
#define GS_MAX_PIDS 64

struct record_opts {
	const char *output;
	bool output_given; /* -o: with --flight, the whole recording is written too */
	bool force;
	double duration; /* seconds, 0: until the target exits or a signal */
	unsigned int freq;
	int sampler; /* GS_SAMPLER_*, 0: the tick where the kernel allows, else the timer */
	struct probe_spec probes[MAX_USER_PROBES];
	int nprobes;
	bool lock_holds;
	bool keep_lookups;  /* --keep-lookups (uprobes.h: uprobes__retire_lookups) */
	bool launch_stacks; /* --launch-stacks: user stacks of entry-only CUDA calls */
	bool all_launches;  /* --all-launches: every launch streamed (bpf/cuda.bpf.c) */
	bool uncompressed;  /* --uncompressed: trace chunks written as they are */
	bool follow_children;
	pid_t pid;		 /* -p: the first; the recording ends when it exits */
	pid_t pids[GS_MAX_PIDS]; /* every -p, in order */
	int npids;
	const char *cgroup; /* --cgroup: its processes recorded too */
	char **cmd;	    /* or the command to launch */
	int verbose;	    /* -v 1: per-library notes, the probe list; -vv 2: libbpf's debug log */
	unsigned int ringbuf_mb;
	unsigned int snap_bytes; /* --stack-snapshot: user stack bytes per snapshot, 0 off */
	__u64 snap_min_block_ns; /* --snapshot-min-block: the shortest wait snapshotted */
	int cupti; /* --cupti 1, --no-cupti 0, else -1: on for a launched command, quietly */
	bool nvml;
	bool archive;	/* --archive: reduced ELF files into the trace (archive.h) */
	bool no_python; /* --no-python: no Python frames (pycode.h) */
};

#endif
