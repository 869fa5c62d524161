/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names of code generated at run time, from the perf maps the recorder kept in the trace
 * (GS_REC_PERF_MAP: the lines of /tmp/perf-PID.map, "START SIZE NAME" in hex, that a JIT writes
 * for perf: V8, the JVM's agents, CPython 3.12 with -X perf, and so on). Code lies in anonymous
 * memory, which no mapped file names.
 *
 * Where one range was named twice (code freed and generated again at the same place) the later
 * line wins, as the map's reader would see it last. The recorder writes the maps at the end of
 * recording, after every event: readers that name frames as they go scan the trace for them
 * first, in a pass of their own (perfmaps__take).
 */
#ifndef GAPSCOPE_PERFMAP_H
#define GAPSCOPE_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "trace.h"

struct perfmaps;

struct perfmaps *perfmaps__new(void);
void perfmaps__free(struct perfmaps *p);

/* Takes the lines of a GS_REC_PERF_MAP record (other records are ignored); 0 or -ENOMEM. */
int perfmaps__add(struct perfmaps *p, const struct gs_hdr *h);
/* Lines of text (a perf map file's content) for process tgid; lines not in the format skipped. */
int perfmaps__add_text(struct perfmaps *p, __u32 tgid, const char *text, size_t len);
/* perfmaps__add as a consumer of a pass of its own (trace__scan_types). */
int perfmaps__take(void *p, const struct gs_hdr *h);

/* The name of the generated code of tgid at addr, and addr's offset in it; NULL if none. */
const char *perfmaps__find(struct perfmaps *p, __u32 tgid, __u64 addr, __u64 *offset);
/* Symbols held, over every process. */
size_t perfmaps__count(const struct perfmaps *p);

#endif
