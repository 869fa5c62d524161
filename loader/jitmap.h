/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The perf maps of the recorded processes (/tmp/perf-PID.map: the names a JIT gives the code it
 * generates, for perf), copied into the trace as GS_REC_PERF_MAP records when the recording
 * ends: the file may be gone or rewritten by the time of the report, and the trace must name
 * that code on another machine.
 */
#ifndef GAPSCOPE_JITMAP_H
#define GAPSCOPE_JITMAP_H

#include <sys/types.h>

struct trace_out;
struct map_records;

/* The largest perf map kept of one process; the lines past it are left out, and said. */
#define JITMAP_MAX_BYTES (64u << 20)

/*
 * Writes the perf map of tgid if it has one: a regular file, not a link, owned by root or by the
 * process's user (while it runs). Returns the symbols (lines) kept, 0 for none, or -errno.
 */
long jitmap__write(struct trace_out *o, pid_t tgid, const char *dir);

/* The same for every process with mappings recorded (and target), a line on stderr for each. */
void jitmap__write_all(struct trace_out *o, const struct map_records *m, pid_t target);

#endif
