/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The gapscope trace file, shared by the recorder (loader/) and the readers (reports/).
 *
 * Layout: a file header, then chunks appended as recording goes. A chunk is a header with a
 * CRC32 (zlib) over header and payload (and one over the header alone), and a payload of whole records. Every record starts with
 * struct gs_hdr (type, size, timestamp, thread); BPF events are stored as the BPF side wrote them,
 * with stacks compacted to ustack_n user frames then kstack_n kernel frames at the record's end.
 * Records of types >= GS_REC_CLOCK are written by the recorder (metadata).
 *
 * Because chunks are self-checking and appended, a recorder killed with SIGKILL leaves a trace
 * readable up to its last whole chunk; a reader skips a corrupt chunk (and resynchronizes on the
 * next valid one), and ignores a cut-off tail, counting both in struct trace_stats.
 */
#ifndef GAPSCOPE_TRACE_H
#define GAPSCOPE_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#include "gapscope.h"
#include "cuda.h"
#include "gpu_act.h"
#include "syscalls.h"

#define TRACE_MAGIC	   "GAPSCOPE"
/*
 * 2: offcpu_event.syscall. 3: user stack snapshots (GS_EV_USTACK_SNAP, bpf/snapshot.h), the
 * ustack_snap loss counter, GS_REC_GPU_ACT (CUPTI activity), GS_REC_NVML (utilization samples)
 * GS_REC_PERF_MAP (a JIT's perf map) and GS_REC_ARCHIVE (record --archive's reduced ELF files); a
 * reader of an older file simply finds none of them. 4: launches decided in the kernel (only
 * those that can end a gap have a record, bpf/cuda.bpf.c) and counted there (GS_REC_LAUNCHES);
 * a version 3 file holds every launch and no counts. 5: chunks compressed whole (zstd,
 * trace_chunk_hdr.raw_len), stack snapshots no longer compressed one by one; Python frames
 * (GS_EV_PYSTACK, bpf/pystack.h) and the code objects they name (GS_REC_PYCODE), the pystack and
 * pycode loss counters; a reader of an older file finds none of them. 6: off-CPU events of
 * runnable threads say what ran next and whether a CPU quota throttled them (offcpu.h,
 * appended fields and flags); the target's cgroup with its quota (GS_REC_CGROUP) and that
 * cgroup's cpu.stat (GS_REC_CPUSTAT); a reader of an older file finds none of them. 7: off-CPU
 * events of a sleep in the fault path name the file fault it slept in (offcpu.h, appended
 * fields); an older record ends before them.
 */
#define TRACE_VERSION	   7
#define TRACE_VERSION_MIN  1	       /* the oldest a reader reads (offcpu.h: offcpu_syscall) */
#define TRACE_CHUNK_MAGIC  0x4b434753u /* "SGCK" little endian */
#define TRACE_CHUNK_TARGET (256 << 10) /* a chunk is written at this size */
#define TRACE_ALIGN	   8

struct trace_file_hdr {
	char magic[8];
	__u32 version;
	__u32 hdr_size;
	__u64 created_ns; /* CLOCK_REALTIME */
	__u32 flags;	  /* TRACE_F_* */
	__u32 crc;	  /* crc32 of this header with crc = 0 */
};

/*
 * The CUPTI collector ran in the target (set in place once it spoke): GS_REC_GPU_ACT records
 * follow, written long after the events of their time (reports/analysis/tiers.c reads them in a pass of
 * their own, only in the files that have this flag). Older files have no flags set.
 */
#define TRACE_F_GPU_ACT	   0x1
/* GS_REC_PERF_MAP records at the end: a report that names frames as it goes reads them first. */
#define TRACE_F_PERF_MAP   0x2
/* GS_REC_ARCHIVE records at the end (record --archive): a report reads them first. */
#define TRACE_F_ARCHIVE	   0x4
/* GS_REC_PYCODE records: a report that names Python frames as it goes reads them first. */
#define TRACE_F_PYCODE	   0x8
/*
 * The recording machine (syscalls.h's enum gs_arch) in bits 8-15: the numbers of its system
 * calls in off-CPU events are that machine's. 0, x86-64, in every file from before it was kept.
 */
#define TRACE_F_ARCH_SHIFT 8
#define TRACE_F_ARCH_MASK  0xff00u

static inline enum gs_arch trace_flags__arch(__u32 flags)
{
	return (enum gs_arch)((flags & TRACE_F_ARCH_MASK) >> TRACE_F_ARCH_SHIFT);
}
/* GS_REC_CGROUP records: a report that blames gaps as it goes reads them (and GS_REC_CPUSTAT's)
 * first. */
#define TRACE_F_CGROUP 0x10

struct trace_chunk_hdr {
	__u32 magic;
	__u32 len; /* payload bytes, a multiple of 8 */
	__u64 seq; /* 0, 1, 2, ... */
	__u32 nrec;
	__u32 crc;  /* crc32 of this header with crc = 0, then of the payload */
	__u32 hcrc; /* crc32 of magic..nrec alone */
	/*
	 * 0: the payload is the records. Else (version 5) the payload is one zstd frame (zero
	 * padded to 8 bytes) of the records, raw_len bytes once decompressed. Whole chunks
	 * compress far better than records one by one: a busy thread's stack snapshots share
	 * most of their bytes with the one before, and launches with each other.
	 */
	__u32 raw_len;
};

/* The most a reader decompresses a chunk to (the writer's chunks: TRACE_CHUNK_TARGET, or one
 * record when larger, an archived ELF part at most). */
#define TRACE_CHUNK_RAW_MAX (256u << 20)

/*
 * hcrc lets a reader tell a cut-off chunk (its header intact, its length past the end of the
 * file) from a chunk whose header was damaged (a bad length must not pass for a cut).
 */
#define TRACE_CHUNK_HCRC_BYTES offsetof(struct trace_chunk_hdr, crc)

/* Recorder records (metadata). */
enum gs_rec_type {
	GS_REC_CLOCK = 0x100, /* struct gs_rec_clock: first record of a trace */
	GS_REC_TARGET,	      /* struct gs_rec_target */
	GS_REC_PROBE,	      /* struct gs_rec_probe: h.ts = live since */
	GS_REC_MAP,	      /* struct gs_rec_map */
	GS_REC_KSYM,	      /* struct gs_rec_ksym */
	GS_REC_LOSSES,	      /* struct gs_rec_losses: totals so far; the last one counts */
	GS_REC_PROC_EXIT,     /* struct gs_rec_exit */
	GS_REC_END,	      /* struct gs_rec_end: the recorder finished cleanly */
	GS_REC_LOST_TYPES,    /* struct gs_rec_lost_types: ring-buffer losses by event type */
	GS_REC_CU_HANDLES,    /* struct gs_rec_cu_handles: kernel names from handles, so far */
	GS_REC_SAMPLER,	      /* struct gs_rec_sampler: how the CPU samples were taken */
	GS_REC_GPU_ACT,	      /* struct gs_rec_gpu_act: CUPTI activity (v3) */
	GS_REC_NVML,	      /* struct gs_rec_nvml: an NVML utilization sample (v3) */
	GS_REC_PERF_MAP,      /* struct gs_rec_perf_map: a JIT's /tmp/perf-PID.map (v3) */
	GS_REC_ARCHIVE,	      /* struct gs_rec_archive: part of a reduced ELF file (v3) */
	GS_REC_LAUNCHES,      /* struct gs_rec_launches: every launch counted, so far (v4) */
	GS_REC_PYCODE, /* struct gs_rec_pycode: a Python code object's names and lines (v5) */
	/* struct gs_rec_launch_ivals: each thread's times between its launches, so far (v5; a
	 * reader that does not know it skips it) */
	GS_REC_LAUNCH_IVALS,
	GS_REC_CGROUP,	/* struct gs_rec_cgroup: a target's cgroup and its CPU quota (v6) */
	GS_REC_CPUSTAT, /* struct gs_rec_cpustat: that cgroup's cpu.stat, every second (v6) */
	/* struct gs_rec_unprobed: a process that ran before its library probes were in place (a
	 * reader that does not know it skips it) */
	GS_REC_UNPROBED,
};

struct gs_rec_clock {
	struct gs_hdr h; /* h.ts = mono_ns */
	__u64 mono_ns;	 /* CLOCK_MONOTONIC, the clock of bpf_ktime_get_ns() */
	__u64 real_ns;	 /* CLOCK_REALTIME at the same moment */
	__u64 boot_ns;	 /* CLOCK_BOOTTIME */
	__u32 sample_freq;
	__u32 ncpus;
	char host[64];
	char kernel[64];
};

#define GS_TARGET_LAUNCH 1
#define GS_TARGET_ATTACH 2

struct gs_rec_target {
	struct gs_hdr h; /* h.tgid = the target */
	__u32 mode;	 /* GS_TARGET_* */
	__u32 argc;
	char argv[]; /* argc NUL-terminated strings */
};

enum gs_probe_family {
	GS_PROBE_CUDA = 1,
	GS_PROBE_LIBC,	  /* malloc_trim */
	GS_PROBE_USER,	  /* --probe LIB:SYM */
	GS_PROBE_LOCK,	  /* --lock-holds: pthread_mutex_lock/unlock */
	GS_PROBE_KERNEL,  /* tracepoints and the sampler: names = "kernel", section */
	GS_PROBE_TASK,	  /* an async runtime's task poll or wake (lib/runtimes.h): kind =
			  * enum rt_fn_kind, arg0 = the task */
	GS_PROBE_HOST_FN, /* a function given to cuLaunchHostFunc/cuStreamAddCallback, probed
			   * once seen: arg0 = its argument (cuLaunchHostFunc's userData; a
			   * callback's is its third, not kept) */
};

#define GS_PROBE_F_RET	   (1u << 0) /* has a return probe */
#define GS_PROBE_F_RETIRED (1u << 1) /* detached while recording, at h.ts (uprobes.h) */

struct gs_rec_probe {
	struct gs_hdr h; /* h.ts = live since (0 when the attach failed) */
	__u32 id;	 /* cookie: events name their probe by it */
	__u32 family;	 /* enum gs_probe_family */
	__u32 kind;	 /* enum cu_kind for CUDA probes */
	__s32 err;	 /* 0, or -errno of the failed attach */
	__u64 offset;	 /* file offset of the symbol */
	__u32 flags;	 /* GS_PROBE_F_* */
	__s32 pid;	 /* uprobe pid filter, -1 = any process */
	char names[];	 /* library path, NUL, symbol, NUL */
};

struct gs_rec_map {
	struct gs_hdr h; /* h.tgid */
	__u64 start;
	__u64 end;
	__u64 pgoff;
	__u64 dev; /* user-space dev_t (makedev(major, minor)) */
	__u64 ino;
	__u32 prot; /* PROT_* */
	__u32 build_id_len;
	__u8 build_id[32];
	char path[];
};

struct gs_rec_ksym {
	struct gs_hdr h;
	__u64 addr;
	char name[];
};

struct gs_rec_losses {
	struct gs_hdr h;
	__u32 n; /* counters that follow, enum gs_loss order */
	__u32 pad;
	__u64 count[];
};

struct gs_rec_lost_types {
	struct gs_hdr h;
	__u32 n; /* counters that follow, indexed by enum gs_event_type */
	__u32 pad;
	__u64 count[];
};

/*
 * Kernel names read from handles (cuda.h, CU_HANDLE_NAME_OFF), summed over the attached libcudas:
 * how often a lookup's name confirmed or contradicted the handle's, how many handles were named
 * that way or could not be. The last record counts.
 */
struct gs_rec_cu_handles {
	struct gs_hdr h;
	__u64 agree;
	__u64 disagree;
	__u64 named;
	__u64 rejected;
	__u32 libs;	/* libcudas with probes */
	__u32 libs_off; /* of those, where a disagreement turned names from handles off */
};

/*
 * Every launch, counted in BPF (bpf/cuda.h, cu_launch_counts): the totals so far, by process,
 * probe, unload generation, stream and kernel handle. Written every second and at the end: the
 * last one counts.
 */
struct gs_launch_count {
	struct cu_launch_key k;
	__u64 count;
};

#define GS_LAUNCHES_F_ALL 0x1 /* --all-launches: every launch also has its record */

struct gs_rec_launches {
	struct gs_hdr h;
	__u32 n;     /* entries that follow */
	__u32 flags; /* GS_LAUNCHES_F_* */
	struct gs_launch_count e[];
};

/* A thread's histogram of the time between its launches (cuda.h: CU_IVAL_BUCKETS). */
struct gs_launch_ival {
	__u32 tid;
	__u32 pad;
	struct cu_launch_ival h;
};

struct gs_rec_launch_ivals {
	struct gs_hdr h;
	__u32 n;       /* entries that follow */
	__u32 buckets; /* CU_IVAL_BUCKETS when written */
	struct gs_launch_ival e[];
};

struct gs_rec_exit {
	struct gs_hdr h; /* h.tgid = the launched target */
	__s32 status;	 /* wait status */
	__u32 pad;
	__u64 utime_ns;
	__u64 stime_ns;
};

struct gs_rec_end {
	struct gs_hdr h;
	__u64 events;  /* BPF events written */
	__u64 records; /* all records before this one */
};

#define GS_SAMPLER_TICK	 1 /* at the scheduler tick, at most freq per second per CPU */
#define GS_SAMPLER_TIMER 2 /* cpu-clock perf events, freq per second per CPU */

struct gs_rec_sampler {
	struct gs_hdr h;
	__u32 kind;	 /* GS_SAMPLER_* */
	__u32 freq;	 /* requested: the most samples per CPU-second */
	__u64 tick_ns;	 /* tick: 1e9 / CONFIG_HZ, as measured; 0 if unknown */
	__u64 period_ns; /* CPU time one sample stands for: max(tick_ns, 1e9 / freq) */
};

/*
 * A GPU activity record from the CUPTI collector (lib/gpu_act.h), as it came: kernels,
 * copies, memsets and launch calls with CLOCK_MONOTONIC start and end, kernel names (sent once,
 * before the first kernel that has the name), the collector's status and CUPTI's drops. Written
 * as the collector hands them over, in batches, long after the BPF events of the same time: a
 * reader collects them in a pass of its own rather than in time order.
 */
struct gs_rec_gpu_act {
	struct gs_hdr h; /* h.ts = a.start (when received, for names and status), h.tgid = a.pid */
	struct gs_gpu_act a;
};

/*
 * An NVML utilization sample (nvmlDeviceGetUtilizationRates): the percentage of the last sample
 * period (1/6 s to 1 s, by product) in which a kernel ran, and the memory controller was busy.
 * NVML numbers devices by PCI order, CUDA by its own (CUDA_DEVICE_ORDER): they agree on one GPU.
 */
struct gs_rec_nvml {
	struct gs_hdr h; /* h.ts = when sampled */
	__u32 device;	 /* NVML index */
	__u32 gpu_pct;
	__u32 mem_pct;
	__u32 pad;
};

/*
 * The perf map a process wrote for the code it generates at run time (/tmp/perf-PID.map, lines
 * "START SIZE NAME" in hex), as the recording found it at its end: whole lines, in file order,
 * a long map in several records of up to GS_PERF_MAP_CHUNK bytes of text each. Written after
 * every event: a reader that names frames as it goes collects them in a pass of its own.
 */
#define GS_PERF_MAP_CHUNK (60 << 10)

struct gs_rec_perf_map {
	struct gs_hdr h; /* h.tgid: the process */
	__u32 len;	 /* bytes of text */
	__u32 seq;	 /* 0, 1, ...: the records of one map, in order */
	char text[];
};

/*
 * A mapped ELF file reduced to what unwinding and naming need (loader/archive.h: ELF and program
 * headers as in the file, CFI, symbol tables, build-id note, debug link, DWARF under a cap), kept
 * by record --archive for reports where the file is missing or another build. One file is several
 * records in order (seq 0, 1, ...; offset: the bytes of it before this one's), of up to
 * GS_ARCHIVE_CHUNK bytes each, every one naming the build-id and the path mapped. Written after
 * every event: a reader that names frames as it goes collects them in a pass of its own.
 */
#define GS_ARCHIVE_CHUNK   (60 << 10)
#define GS_ARCHIVE_F_DWARF 0x1 /* the DWARF of lines and inlines is in it */

struct gs_rec_archive {
	struct gs_hdr h; /* h.tgid: a process that mapped it */
	__u64 total;	 /* bytes of the reduced file */
	__u64 offset;	 /* of these bytes in it */
	__u32 len;	 /* bytes of the file in this record */
	__u32 seq;	 /* 0, 1, ...: the records of one file, in order */
	__u32 crc;	 /* crc32 (zlib) of the whole reduced file */
	__u32 flags;	 /* GS_ARCHIVE_F_* */
	__u32 path_len;	 /* bytes of the path, its NUL included */
	__u32 build_id_len;
	__u8 build_id[32];
	char data[]; /* the path, then len bytes of the file */
};

/*
 * A Python code object of a recorded process (bpf/pystack.h), read from the process's memory
 * while it lived, when a frame of it first came (loader/pycode.c): its qualified name, its file,
 * and its line table as ranges of instruction bytes. A frame's line is that of the last entry
 * whose start is at most the frame's offset; -1 for none. Written once per code object, soon
 * after the first event that names it: a reader collects them in a pass of its own.
 */
struct gs_pyline {
	__u32 start; /* bytes from the code's first instruction */
	__s32 line;  /* -1: no line */
};

struct gs_rec_pycode {
	struct gs_hdr h; /* h.tgid: the process */
	__u64 code;	 /* the code object's address in the process */
	__s32 firstlineno;
	__u32 nlines;	/* gs_pyline entries that follow, by start */
	__u32 name_len; /* bytes of the qualified name after the lines, its NUL included */
	__u32 file_len; /* bytes of the file name after the name, its NUL included */
	struct gs_pyline lines[];
};

/*
 * A recorded process's CPU controller cgroup with a quota (loader/cgroup.h): written when first
 * read and again whenever the process moved or the quota changed, one record for each level
 * from the process's cgroup up that has a quota (nested limits: the report names the one whose
 * throttle count grew), or one with quota_us -1 for its own cgroup where none has one. h.ts: when
 * read. The strings follow: the cgroup's path below its hierarchy's root, the CPUs the process
 * may run on (its Cpus_allowed_list: affinity within its cpuset), its cpuset's CPUs ("" unknown).
 */
#define GS_CGROUP_V1 1 /* the v1 cpu controller: cpu.cfs_quota_us, cpu.cfs_period_us */
#define GS_CGROUP_V2 2 /* cpu.max */

struct gs_rec_cgroup {
	struct gs_hdr h; /* h.tgid: the process */
	__u32 id;	 /* names this level in GS_REC_CPUSTAT records, unique in the trace */
	__u32 version;	 /* GS_CGROUP_V* */
	__s64 quota_us;	 /* a period's CPU time, -1: no quota */
	__u64 period_us;
	__u32 depth;	/* 0: the process's own cgroup, 1 its parent, ... */
	__u32 ncpus;	/* CPUs online on the machine */
	__u32 path_len; /* bytes of the path, its NUL included */
	__u32 cpus_len; /* bytes of the allowed CPUs' list after it, its NUL included */
	__u32 cpuset_len;
	__u32 pad;
	char text[];
};

/* A cgroup's cpu.stat as read at h.ts; counters since the cgroup was made. */
#define GS_CPUSTAT_NONE (~0ull) /* a counter the kernel does not give */

struct gs_rec_cpustat {
	struct gs_hdr h; /* h.tgid: the process the cgroup was recorded for */
	__u32 id;	 /* the gs_rec_cgroup's */
	__u32 pad;
	__u64 usage_ns; /* CPU time its tasks used (v2 usage_usec; v1 cpuacct.usage) */
	__u64 nr_periods;
	__u64 nr_throttled;
	__u64 throttled_ns; /* the time its run queues were throttled */
};

/*
 * Library probes belong to the processes they record (loader/uprobes.c): a process that joins the
 * recording (forked, exec'd, a cgroup's newcomer, a library it maps while the recorder does not
 * stop it) runs unprobed from FROM_NS until its probes are in place at h.ts. Calls it made in
 * that window are not in the trace: the kernel's filter drops them before any BPF program runs.
 */
enum gs_unprobed_why {
	GS_UNPROBED_FORK = 0,
	GS_UNPROBED_EXEC,
	GS_UNPROBED_JOIN,   /* --cgroup: a newcomer, from when the recorder saw it */
	GS_UNPROBED_DLOPEN, /* a library mapped late, not stopped for (attach mode) */
	GS_UNPROBED_MAX
};

static const char *const gs_unprobed_names[GS_UNPROBED_MAX] __attribute__((unused)) = {
	"fork",
	"exec",
	"join",
	"dlopen",
};

struct gs_rec_unprobed {
	struct gs_hdr h; /* h.ts: probes in place; h.tgid: the process */
	__u64 from_ns;	 /* unprobed since (CLOCK_MONOTONIC) */
	__u32 why;	 /* enum gs_unprobed_why */
	__u32 links;	 /* links made for it then (0: nothing of it to probe) */
};

/* Writer. */
struct trace_writer;

/*
 * Creates PATH, 0600 less the umask, never through a link (outfile.h); FORCE replaces what is
 * there. NULL with errno set.
 */
struct trace_writer *trace__create(const char *path, bool force);
/* The same, NAME under the directory fd DFD (outfile__openat); a header that cannot be written
 * (a full disk) leaves no file. */
struct trace_writer *trace__create_at(int dfd, const char *name, bool force);
/*
 * 0 or -errno. After a failed write nothing more is written: the file stays readable to its last
 * whole chunk, and the records of the chunk that failed and all later ones are counted lost.
 */
int trace__append(struct trace_writer *w, const void *rec, size_t size);
int trace__flush(struct trace_writer *w);
/* Sets FLAGS (TRACE_F_*) in the file header, written again in place. 0 or -errno. */
int trace__set_flags(struct trace_writer *w, __u32 flags);
int trace__finish(struct trace_writer *w);
__u64 trace__bytes(const struct trace_writer *w);
__u64 trace__records(const struct trace_writer *w);
/* Whether chunks are compressed (the default; off for tests that place bytes in a chunk). */
void trace__compress(struct trace_writer *w, bool on);
/* The records' bytes as appended, before chunks were compressed. */
__u64 trace__raw_bytes(const struct trace_writer *w);
/* The first write error (-errno, 0 if none), the chunk it cut (sequence number), records lost. */
int trace__cut(const struct trace_writer *w, __u64 *chunk, __u64 *lost);

/* Reader. */
struct trace_stats {
	__u64 chunks; /* valid chunks read */
	__u64 records;
	__u64 bad_chunks; /* failed their CRC or framing: skipped */
	__u64 bad_bytes;  /* bytes skipped for corruption */
	__u64 cut_bytes;  /* incomplete last chunk, ignored */
	bool finished;	  /* saw GS_REC_END */
	__u32 version;	  /* of the file: TRACE_VERSION_MIN..TRACE_VERSION */
	__u32 flags;	  /* of the file header: TRACE_F_* */
};

struct trace_reader;

struct trace_reader *trace__open(const char *path, char *err, size_t errlen);
/* 1 and *rec set: a record; 0: the end. The record stays valid until trace__close. */
int trace__next(struct trace_reader *r, const struct gs_hdr **rec);
const struct trace_stats *trace__stats(const struct trace_reader *r);
/* The version of the file being read (TRACE_VERSION_MIN..TRACE_VERSION). */
__u32 trace__version(const struct trace_reader *r);
/*
 * Where a record handed out lies in the file: its offset, or for a record of a compressed chunk
 * that chunk's (so records compare in file order, which their addresses do not: decompressed
 * chunks live on the heap); SIZE_MAX for a pointer not the reader's.
 */
size_t trace__pos(const struct trace_reader *r, const void *rec);
/*
 * Lets the kernel drop the file's pages before rec (a record trace__next returned), and frees
 * the decompressed chunks before rec's (trace__pos order): pages read again fault back in, but a
 * record of a freed chunk is gone, so a caller passes the earliest record it still holds.
 */
void trace__release(struct trace_reader *r, const void *rec);
/* The same as trace__next without taking the record: the next call hands out *rec again. */
int trace__peek(struct trace_reader *r, const struct gs_hdr **rec);

/* One consumer of a scan: the records of one type (GS_REC_*, GS_EV_*). */
struct trace_consumer {
	__u32 type;
	int (*fn)(void *ctx, const struct gs_hdr *h);
	void *ctx;
	int err; /* set by the scan: fn's first non-zero return, after which fn gets no more */
};

/*
 * One pass of its own over the file at path, for the records readers need before their
 * time-ordered pass (those written long after their time, or at the end): each record goes to
 * every consumer of its type, in table order, the records in file order. A consumer that fails
 * is left out of the rest; the others go on. 0, or -errno (every c[i].err too) when the file
 * cannot be opened (err says why). A consumer copies what it keeps: the record is released.
 */
int trace__scan_types(const char *path, struct trace_consumer *c, size_t n, char *err,
		      size_t errlen);
/* trace__scan_types with one consumer: its fn's first non-zero, 0, or -errno as there. */
int trace__scan(const char *path, __u32 type, int (*fn)(void *ctx, const struct gs_hdr *h),
		void *ctx, char *err, size_t errlen);

/*
 * What every reader of this process has read so far: readers opened, passes over the bytes (a
 * reader that read a chunk), the chunks and their bytes as in the file, the bytes decompressed.
 */
struct trace_reads {
	__u64 opens;
	__u64 passes;
	__u64 chunks;
	__u64 bytes;
	__u64 raw_bytes;
};
void trace__reads(struct trace_reads *out);
/* Prints what was skipped or missing, one line each, prefixed "gapscope: warning: PATH: ". */
void trace__warn(const struct trace_reader *r, const char *path, FILE *out);
void trace__close(struct trace_reader *r);

/* Names the format owns, shared by every reader: "?" (or "cuda") for a value it does not know. */
const char *trace__cu_kind_name(__u32 kind);	    /* enum cu_kind: "launch", "sync_stream", ... */
const char *trace__event_name(__u32 type);	    /* enum gs_event_type: "cuda", "offcpu", ... */
const char *trace__probe_family_name(__u32 family); /* enum gs_probe_family: "cuda", "libc", ... */
const char *trace__gpu_act_kind_name(__u32 kind);   /* enum gs_gpu_act_kind: "kernel", ... */

/* Size of the fixed part of a record (without its stack frames). */
static inline size_t gs_fixed_size(const struct gs_hdr *h)
{
	size_t frames = (size_t)h->ustack_n + h->kstack_n;

	return h->size >= sizeof(*h) + frames * 8 ? h->size - frames * 8 : h->size;
}

static inline const __u64 *gs_ustack(const struct gs_hdr *h)
{
	return (const __u64 *)((const char *)h + gs_fixed_size(h));
}

static inline const __u64 *gs_kstack(const struct gs_hdr *h)
{
	return gs_ustack(h) + h->ustack_n;
}

#endif
