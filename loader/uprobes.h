/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Uprobe attachment: the CUDA driver functions in libcuda, malloc_trim (and with --lock-holds the
 * pthread mutexes) in libc, and each --probe LIB:SYM, found once per file and recorded in the
 * trace as GS_REC_PROBE records, then attached per process: each recorded process gets its own
 * links, filtered by the kernel to its memory, so that no other process on the host traps on a
 * probed call. Before exec to the files the target will load, for -p to what each process has
 * mapped, while recording to each watched library a process maps (loader/consume.c), and to the
 * processes that join (fork, exec, a cgroup's newcomer); a process's links go when it exits.
 */
#ifndef GAPSCOPE_UPROBES_H
#define GAPSCOPE_UPROBES_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

#include "probe_spec.h"

struct links;
struct pidns;
struct record_bpf;
struct trace_out;

struct uprobes {
	/* Set by the caller. */
	struct record_bpf *skel;
	struct links *links;
	struct trace_out *out;
	const struct pidns *ns; /* global ids of the processes attached to by pid */
	bool umulti;		/* uprobe_multi links (Linux 6.6) */
	pid_t tgid;		/* the target (global), named in the probe records */
	pid_t pid;		/* the target in our namespace: the launched one's probes */
	bool lock_holds;
	const struct probe_spec *specs; /* --probe */
	int nspecs;
	bool keep_lookups; /* --keep-lookups: cuKernelGetFunction probed the whole recording */
	int verbose;	   /* record's -v: 1 the probe list, 2 a note per file */

	/* Kept while recording. */
	struct probed_file *files;
	size_t nfiles;
	struct uproc *procs; /* the processes with links */
	size_t nprocs;
	__u64 links_made;
	__u64 attach_failed;
	__u64 cuda_probes;
	size_t no_symtab; /* files without a symbol table, no async runtime's mark in them */
	struct lookup_probe *lookups; /* hot kernel-handle lookups, retired once names agree */
	size_t nlookups;
	struct host_fn *host_fns; /* host functions probed (uprobes__host_fn) */
	size_t nhost_fns;
};

/*
 * Attaches every probe that belongs in a file for process PID (our namespace; TGID global), once
 * per (process, file); the file's symbols are read once. PATH is what to open (it may be
 * /proc/PID/fd/N or /proc/PID/root/...), SHOWN what the trace calls it; KDEV and KINO the file in
 * the kernel's encoding when known (0: from stat). -errno when PATH cannot be read.
 */
int uprobes__attach_file(struct uprobes *u, pid_t pid, pid_t tgid, const char *path,
			 const char *shown, __u64 kdev, __u64 kino);
/* Before exec: libc, libcuda and each --probe LIB as the dynamic loader will find them for EXE. */
void uprobes__attach_predicted(struct uprobes *u, const char *exe);
/* For -p: every executable file PID (our namespace) has mapped already, for PID. */
void uprobes__attach_mapped(struct uprobes *u, pid_t pid);
/*
 * Process PID (TGID global) joined the recording at SINCE (CLOCK_MONOTONIC; enum
 * gs_unprobed_why WHY): its probes now, for what it maps, and the window in which it ran
 * without them in the trace (GS_REC_UNPROBED). A process attached already is left as it is,
 * but after an exec by a thread other than its main one (WHY GS_UNPROBED_EXEC): the links
 * follow the main thread's task, which that exec replaced.
 */
void uprobes__process_joined(struct uprobes *u, pid_t pid, pid_t tgid, __u64 since, __u32 why);
/* Process TGID (global) has exited: its links let go of, on threads of their own. */
void uprobes__process_gone(struct uprobes *u, pid_t tgid);
/* Tells the mmap hook which library names to stop the target for (libcuda, libc, --probe). */
void uprobes__watch(struct uprobes *u);
/*
 * One trap per hot call: PyTorch calls cuKernelGetFunction before every launch, so its probe
 * (entry and return: two more traps a launch) is retired once the library's kernel handles have
 * shown their names LOOKUP_TRUST times without a contradiction (bpf/names.bpf.h, calibrate()):
 * from then on a launch of a function no lookup named reads the name from its handle, once. The
 * trace gets the probe's record again, flagged GS_PROBE_F_RETIRED, at the time it went. Needs
 * uprobe_multi links (the probe is its own link); called at every poll tick.
 */
#define LOOKUP_TRUST 8 /* a PyTorch 2.11 process on driver 580 checked 11 lookups, all agreed */
void uprobes__retire_lookups(struct uprobes *u);
/*
 * A host function (cuLaunchHostFunc, cuStreamAddCallback) of process TGID (PID in the
 * recorder's namespace) at address FN, seen queued: probed from now on, entry and return, once
 * per function (GS_PROBE_HOST_FN). The driver calls it on its own thread once the work queued
 * before it is done: the report's completion evidence. At most HOST_FNS_MAX functions.
 */
#define HOST_FNS_MAX 64
void uprobes__host_fn(struct uprobes *u, pid_t tgid, pid_t pid, __u64 fn);
/* The libcuda files probed. */
__u32 uprobes__cuda_libs(const struct uprobes *u);
void uprobes__free(struct uprobes *u);

#endif
