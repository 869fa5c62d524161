/* SPDX-License-Identifier: GPL-2.0 */
/*
 * BPF setup and teardown: what the kernel must offer (privileges, BTF, tracefs), the one object
 * with every probe family (bpf/bpf.mk links them into record.skel.h) opened, configured through
 * rodata and map sizes, loaded; the tracepoints attached.
 */
#ifndef GAPSCOPE_BPF_SETUP_H
#define GAPSCOPE_BPF_SETUP_H

#include <stdbool.h>
#include <sys/types.h>

struct gs_launch_count;
struct links;
struct record_bpf;
struct record_opts;
struct trace_out;

/* Root or CAP_BPF+CAP_PERFMON, and kernel BTF; false, said why, when not. */
bool bpf_setup__check(void);
/* Tracepoint ids live in tracefs, which a fresh machine may not have mounted. */
void bpf_setup__mount_tracefs(bool verbose);
/* libbpf's own messages, with -v only. */
void bpf_setup__libbpf_output(bool verbose);

/*
 * Opens the object, configures it for the recording O asks for and loads it; *UMULTI says
 * whether the uprobe programs were loaded for uprobe_multi links. NULL, said why, on failure.
 */
struct record_bpf *bpf_setup__open_load(const struct record_opts *o, bool *umulti);
/* Lets the BPF side record TGID (the target; its children join it with --follow-children). */
int bpf_setup__watch_tgid(struct record_bpf *skel, pid_t tgid);
/*
 * Takes TGID back from the BPF side: a process found to have exited as it was given, whose exit
 * the BPF side saw before it was watched (an entry left would record whatever process gets its
 * pid next).
 */
void bpf_setup__unwatch_tgid(struct record_bpf *skel, pid_t tgid);
/* Whether the BPF side records tgid already (given, or forked by a process it records). */
bool bpf_setup__watching(struct record_bpf *skel, pid_t tgid);
/*
 * Attaches every loaded tracepoint program (not the uprobes and the sampler, attached per file
 * and per CPU) and records each as a GS_REC_PROBE. 0 or -errno, said why; an optional one the
 * kernel lacks (filemap:mm_filemap_fault) adds to *FAILED instead.
 */
int bpf_setup__attach_tracepoints(struct record_bpf *skel, struct links *links, struct trace_out *o,
				  pid_t tgid, int pid, __u64 *failed);
/*
 * Once the CUDA probes are off: the launch counts still in threads' caches (bpf/launches.bpf.h,
 * cu_thread) into cu_launch_counts, then the fold at thread exit let go of. 0 or -errno.
 */
int bpf_setup__fold_launches(struct record_bpf *skel);
/*
 * While the probes are on: the counts threads' launch caches hold now (read, not taken), as
 * the trace's entries (malloc'd array in *e, *n of them); 0 or -errno (then none).
 */
int bpf_setup__peek_launches(struct record_bpf *skel, struct gs_launch_count **e, size_t *n);
void bpf_setup__destroy(struct record_bpf *skel);

#endif
