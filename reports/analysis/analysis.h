/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The analysis of a trace: read in the order intervals end, a gap analysed as soon as the trace
 * has gone a margin past its end, and what no open gap can need any more dropped, so that memory
 * follows the live state and the gaps, not the trace's length. Each gap is handed to
 * opts->on_gap as its analysis completes, with everything gap.h lists; afterwards the analysis
 * keeps of it only what summary.json lists (the chain, not roots[] and stacks[]). The result,
 * struct analysis, is the model's (gap.h): every output reads it from there.
 *
 * The analysis wires its components (reports/analysis/: the GPU timeline, threads and blame,
 * causes, the losses) and assembles their results in analysis__finish; none of them writes
 * into struct analysis.
 */
#ifndef GAPSCOPE_ANALYSIS_H
#define GAPSCOPE_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#include "gap.h"

struct analysis_opts {
	__u64 min_gap_ns;      /* ANALYSIS_MIN_GAP_NS unless the command says */
	unsigned int max_hops; /* blame chain depth, ANALYSIS_MAX_HOPS unless the command says */
	bool no_file_symbols;  /* frames not named from the mapped files (names__new()) */
	const char *debug_dir; /* --debug-dir: debug files by build-id, before /usr/lib/debug */
	bool api_only;	       /* CUPTI's records left unread: the API-inferred tier alone */
	/* Launch records flagged CU_LF_EXTRA left unread: an --all-launches trace read as the
	 * default trace of the same run would be (the check that both give the same gaps). */
	bool decided_only;
	double copy_gbps; /* --copy-rate: gputime__copy_model(); 0 none */
	double copy_latency_us;
	/* Gaps handed to on_gap and counted (gap_ns, causes), but not kept in gaps[]: a live
	 * analysis that runs for days (record --flight) keeps no list that grows with them. */
	bool forget_gaps;
	/* Live: the stream and event handles without work unused this long are let go of
	 * (record --flight: its window); 0: kept up to their bounds (gputime_int.h). */
	__u64 forget_idle_ns;
	/* Stack snapshots unwound a second at most (unwinder__set_budget); 0: all. */
	unsigned int unwind_per_s;
	/* --own: files and folders of the user's own code wherever they lie (actionable.h); the
	 * flight recorder's live analysis could take the same. */
	const char *const *own;
	size_t nown;
	/* Called once per gap, in completion order (seq), id not yet set; non-zero stops. */
	int (*on_gap)(const struct gap *g, void *ctx);
	void *ctx;
	/* The command's own consumers (up to ANALYSIS_PREPASS_MAX) of the analysis's pre-pass
	 * over the file: read in the same pass, their err set by analysis__open. */
	struct trace_consumer *prepass;
	size_t nprepass;
};
#define ANALYSIS_PREPASS_MAX 4

/*
 * The floor and the chain depth every command starts from: report's --min-gap, the flight
 * recorder's live analysis (its --trigger-gap is another matter) and diff's reading of a trace.
 */
#define ANALYSIS_MIN_GAP_NS 1000000ull
#define ANALYSIS_MAX_HOPS   8
#define ANALYSIS_OPTS_DEFAULT                                                    \
	{                                                                        \
		.min_gap_ns = ANALYSIS_MIN_GAP_NS, .max_hops = ANALYSIS_MAX_HOPS \
	}

/*
 * Read and analyse the trace at path. NULL with err set when it cannot be read at all or holds
 * no record.
 */
struct analysis *analysis__run(const char *path, const struct analysis_opts *opts, char *err,
			       size_t errlen);
void analysis__free(struct analysis *a);

/*
 * The same in steps, for records that are not in a file yet (record --flight: path NULL, the
 * records pushed into analysis__reader() as they are made, see reader.h). analysis__open sets
 * up (from the file at path, or for pushed records); analysis__step takes the next record in
 * time order (0, -ENOMEM, -EIO when on_gap failed); analysis__finish completes every gap left,
 * the devices' totals and the causes' ranking (0, -ENOMEM or -EIO, err set). analysis__run is
 * open, every record of the file, finish.
 */
struct ordered_reader;
struct analysis *analysis__open(const char *path, const struct analysis_opts *opts, char *err,
				size_t errlen);
struct ordered_reader *analysis__reader(struct analysis *a);
/*
 * The rest of analysis__run, after analysis__open(path): every record of the file, then
 * analysis__finish. 0, -ENOMEM, or -EIO where on_gap failed; err says.
 */
int analysis__read(struct analysis *a, const char *path, char *err, size_t errlen);
int analysis__step(struct analysis *a, const struct gs_hdr *h);
int analysis__finish(struct analysis *a, char *err, size_t errlen);
/* Live: a device's busy time so far (gputime__busy_ns); -ENOENT for a device not seen. */
int analysis__busy_ns(struct analysis *a, __u32 device, __u64 *busy_ns);
/* Live: a device's busy time and idle split so far (API tier: under the floor not known). */
int analysis__split(struct analysis *a, __u32 device, __u64 *busy_ns, struct idle_split *s);
/* One line of what the trace lacked, kept in a->notes (up to 16). */
void analysis__note(struct analysis *a, const char *s);
/*
 * Live: lets go of what naming frames and unwinding stacks have read of files (elfcache.h), and
 * says a file that changed meanwhile; the KiB it freed. Names and caches stay.
 */
unsigned long long analysis__release_pages(struct analysis *a);
/* record --archive's files, for other readers' names (archived.h); NULL: none. */
struct report_archive *analysis__archive(const struct analysis *a);

#endif
