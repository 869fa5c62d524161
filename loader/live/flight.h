/* SPDX-License-Identifier: GPL-2.0 */
/*
 * record --flight SECONDS: the flight recorder. Every record the recorder makes (trace_out, with
 * or without a trace file) is copied into a ring of chunks in memory that keeps the last SECONDS
 * of trace, bounded in bytes (--flight-mb), and is pushed into the report's own analysis
 * (reports/analysis/analysis.h: analysis__open with no file, analysis__step in time order through the
 * pushed ordered reader, reader.h), which finds and blames the gaps as they close. A gap of at
 * least --trigger-gap, or SIGUSR1, asks for a dump: the window around it (--dump-before,
 * --dump-after) written by a thread of its own as an ordinary trace file named by the time
 * (gapscope-flight-YYYYMMDDTHHMMSS.mmmZ.gsc under --dump-dir), then `gapscope report` of it
 * beside it (FILE.report/), at most --dump-max-per-hour an hour and --dump-max-mb on disk in all
 * (traces and reports).
 *
 *   flight.c        the live analysis, the triggers, the dumps they ask for
 *   flight_ring.c   the ring, its let-go rules, the records every dump needs
 *   flight_dump.c   writing a dump and its report, off the recording's thread
 *   flight_replay.c a recorded trace through the same, its records' times the clock (--replay)
 *   flight_opts.c   the options (an argp child of record's)
 *
 * What a dump needs from before its window (the clock, the target, probes, mappings, kernel
 * symbols, the sampler, thread names, kernel-name lookups, which threads stand for a device) is
 * kept apart from the ring, once (a thread's name: its latest; its word on a device: its first),
 * capped at FLIGHT_STICKY_MAX bytes, and written at the head of every dump, events among them
 * stamped at the window's start.
 */
#ifndef GAPSCOPE_FLIGHT_H
#define GAPSCOPE_FLIGHT_H

#include <argp.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>
#include <stddef.h>
#include <linux/types.h>

#include "cuda.h"
#include "memlimit.h"
#include "trace.h"

#define FLIGHT_CHUNK	   (256u << 10)
#define FLIGHT_STICKY_MAX  ((unsigned int)MEMLIMIT_STICKY_MB << 20)
/* The live analysis puts records in order this long after the recorder read them. */
#define FLIGHT_LAG_NS	   (500ull * 1000 * 1000)
/* A dump is written once the recording has gone this far past its window's end. */
#define FLIGHT_DUE_NS	   (800ull * 1000 * 1000)
/* Under --dump-dir: compressed debug files' decompressed copies (debugcache.h), shared by the
 * live analysis and every dump's report, and taken from --dump-max-mb as they appear. */
#define FLIGHT_DEBUG_CACHE ".debug-cache"

struct flight_opts {
	double seconds;		   /* --flight: seconds of trace kept; 0: off */
	unsigned int mem_mb;	   /* --flight-mb: the ring's bound */
	double trigger_gap_ms;	   /* --trigger-gap; 0: no gap triggers */
	double before_s, after_s;  /* --dump-before, --dump-after */
	unsigned int max_per_hour; /* --dump-max-per-hour */
	unsigned int max_total_mb; /* --dump-max-mb */
	const char *dir;	   /* --dump-dir */
	bool no_report;		   /* --dump-no-report */
	const char *metrics;	   /* --metrics ADDR:PORT (metrics.h), NULL: none */
	double metrics_linger_s;   /* --metrics-linger: served this long after the end */
	const char *push_url;	   /* --push URL: gap profiles pushed (push.h), NULL: none */
	const char *pprof_dir;	   /* --pprof-dir DIR: and/or written there */
	double push_interval_s;	   /* --push-interval */
	bool dump_opts;		   /* one of the above given (they need --flight) */
	const char *replay;	   /* --replay TRACE (flight_replay.c), NULL: live */
};

/* The options of record --flight, an argp child whose input is a struct flight_opts. */
extern const struct argp flight_argp;
void flight_opts__defaults(struct flight_opts *o);

struct flight;

/*
 * Sets up the ring, the live analysis and SIGUSR1 (blocked, read through a signalfd: call it
 * after signals__block, so that a launched target gets SIGUSR1 as it was). Prints the memory
 * bound, memlimit__need_mb's for ringbuf_mb. NULL with the reason printed.
 */
struct flight *flight__new(const struct flight_opts *o, unsigned int ringbuf_mb);
/* One record of the recording (trace_out__append). */
void flight__append(struct flight *f, const void *rec, size_t size);
/* The signalfd that reads SIGUSR1 (a dump of the window around now), and reading it. */
int flight__signal_fd(const struct flight *f);
void flight__on_signal(struct flight *f);
/* Every 50 ms: the live analysis catches up, the ring lets go, due dumps start. */
void flight__tick(struct flight *f);
/*
 * The recording ended: the live analysis is finished, the dumps asked for are written (their
 * windows cut at the end) and waited for; a line says how many. Then freed. SIGINT or SIGTERM,
 * pending then or while it waits (the caller blocked them), cuts the dumps' reports.
 */
void flight__stop(struct flight *f);
/*
 * The recording ends on SIGINT or SIGTERM: from now on the dumps' reports are cut (a running one
 * gets SIGTERM, the trace it reads is whole; one not started never starts), each said.
 */
void flight__cut(struct flight *f);
/* Whether SIGINT or SIGTERM is pending (not read) or the recording was cut: if so, it is. */
bool flight__interrupted(struct flight *f);
/* A replay's clock (flight_replay.c): from now on the time is what the records say, now. */
void flight__set_clock(struct flight *f, __u64 now);
/*
 * For a replay's leaps over a stretch with no record: when the first dump asked for is due to
 * start (0: none is asked for), and whether it is *blocked (every report slot taken: it starts
 * once one ends, flight__wait_report, which SIGINT or SIGTERM ends too).
 */
__u64 flight__due(const struct flight *f, bool *blocked);
void flight__wait_report(struct flight *f);
/* flight_replay.c: path's records through a flight recorder of o; the exit status. */
int flight__replay(const struct flight_opts *o, const char *path);

/*
 * Chunks' memory let go of, kept mapped for the next chunk (at most FLIGHT_SPARES of
 * FLIGHT_CHUNK bytes): a chunk filled afresh every few hundred milliseconds page-faulted its 64
 * pages in and unmapped them again, 13% of the recorder's CPU in make bench's flight soak.
 */
#define FLIGHT_SPARES 4
struct flight_spares {
	pthread_mutex_t lock; /* the dumps' threads let go of chunks too */
	unsigned char *data[FLIGHT_SPARES];
	size_t n;
};

/* flight_dump.c: one dump, written and reported by a thread of its own. */
struct flight_chunk {
	struct flight_chunk *next; /* the ring's order, oldest first */
	__u64 min_end, max_end;	   /* of the timed records in it */
	__u64 closed_ns;	   /* when it stopped being filled, 0: not yet */
	__u64 key_max;		   /* where the live analysis orders its last record (reader.h) */
	size_t len, cap;
	int refs;     /* the ring's, and each dump's that is writing it */
	__u64 *alive; /* the flight's bytes of chunks not yet unmapped, less cap when this one is */
	struct flight_spares *spares; /* where its memory goes when let go of, NULL: unmapped */
	bool gpu_act;
	unsigned char *data;
};

struct flight_dump {
	__u64 w0, w1;	      /* the window, CLOCK_MONOTONIC ns */
	bool clean;	      /* w0 is where the GPU was seen idle: its state there is known */
	bool late;	      /* w0 after the trigger's start: the ring no longer held it */
	__u64 asked_ns;	      /* when it was asked for */
	__u64 real_off;	      /* CLOCK_REALTIME - CLOCK_MONOTONIC */
	char reason[96];      /* "gap 1.234 s on gpu0 (malloc_trim)", "SIGUSR1" */
	unsigned char *heads; /* the records every dump needs, copied */
	size_t heads_len;
	struct flight_chunk **chunks;
	size_t nchunks;
	const char *dir;
	int dfd; /* dir, taken once by the recorder: the dump and its report are made under it */
	bool report;
	bool replay; /* the window is of a replay's clock: no time after it to say */
	/* --dump-max-mb: the bytes on disk (du's: blocks) of every dump of the recording, traces
	 * and reports, taken atomically by each dump's thread as it writes, and their bound. */
	__u64 *disk, disk_cap;
	/* The debug cache's bytes taken from that budget so far, and whether it is given up (it
	 * would pass the budget: removed, no report uses it again); the recording's, under
	 * flight_dump.c's lock. */
	__u64 *cache_seen;
	bool *cache_off;
	/* Set by the thread. */
	char path[4096];
	char name[64]; /* path's last component, under dfd */
	__u64 bytes, records;
	double write_ms, report_ms;
	double after_ms; /* from the window's end to the file written */
	int err;
	bool over;	  /* the trace would have passed --dump-max-mb: removed */
	bool report_over; /* its report would have: removed */
	bool report_cut;  /* its report was cut at the recorder's exit: removed */
	bool cache_over;  /* the debug cache was removed after its report, for --dump-max-mb */
	/* The report's process: its CPU (user and system, once reaped) and peak RSS (VmHWM, read
	 * while it ran). */
	double report_cpu_s;
	long report_maxrss_kb;
	int written; /* atomically: 1 once the file is written (its chunks let go) */
	int done;    /* atomically: 1 when the thread finished, its report too */
	pthread_t thread;
	/* Under flight_dump.c's lock: the report running (0: none), and whether the recording
	 * was cut at its end (SIGINT, SIGTERM): a report running is ended, none is started. */
	pid_t report_pid;
	bool cut;
	int wake_fd; /* an eventfd written once done, -1: none */
};

void flight_chunk__put(struct flight_chunk *c);
/* A spare chunk's memory (FLIGHT_CHUNK bytes), or NULL: none kept. */
unsigned char *flight_spares__take(struct flight_spares *s);
/* Unmaps every spare. */
void flight_spares__free(struct flight_spares *s);
/* What du says of name under dfd, a folder's contents included (never through a link). */
__u64 flight_dump__du(int dfd, const char *name);
/* Starts the thread that writes d; 0 or -errno. */
int flight_dump__start(struct flight_dump *d, pthread_t *thread);
/* The recording is cut at its end: d's report, running, is ended (SIGTERM); not yet, never runs. */
void flight_dump__cut(struct flight_dump *d);
/* What the joined dumps add up to. */
struct flight_dump_counts {
	__u64 dumps, bytes;	/* files written and kept, their size */
	__u64 over;		/* traces removed for --dump-max-mb */
	__u64 reports_over;	/* reports removed for it */
	__u64 reports_cut;	/* reports cut at the recorder's exit */
	__u64 reports;		/* report processes reaped */
	double reports_cpu_s;	/* their CPU, user and system */
	long reports_maxrss_kb; /* the largest one's peak RSS */
};

/* Waits for it, prints its line, counts it in *n, frees what it held (d too). */
void flight_dump__join(struct flight_dump *d, pthread_t thread, struct flight_dump_counts *n);

/*
 * Records every dump needs whatever its window, kept apart from the ring: the recorder's
 * description of the recording (clock, target, probes, mappings, kernel symbols, sampler) and
 * the events that name threads and kernels, or say which threads stand for a device.
 */
static inline bool flight__sticky(const struct gs_hdr *h)
{
	switch (h->type) {
	case GS_REC_CLOCK:
	case GS_REC_TARGET:
	case GS_REC_PROBE:
	case GS_REC_MAP:
	case GS_REC_KSYM:
	case GS_REC_SAMPLER:
	case GS_REC_CGROUP: /* the quota that names a throttled gap; its cpu.stat is periodic */
	case GS_REC_PYCODE: /* a Python code object, read once: names frames of any later dump */
	case GS_EV_COMM:
	case GS_EV_CU_NAME:
	case GS_EV_EXEC:
	case GS_EV_FORK:
		return true;
	case GS_EV_CUDA: /* a driver stand-in's word that a thread stands for a device */
		return h->size >= sizeof(struct cu_event) &&
		       ((const struct cu_event *)h)->kind == CU_K_DEVICE_THREAD;
	default:
		return false;
	}
}

#endif
