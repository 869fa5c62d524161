/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the synthetic trace writers of tests/report (gen_trace, gen_streams, gen_taskpolls,
 * futexgen) share: one trace file written through the trace library as the recorder writes one,
 * records counted, a probe record naming a library's symbol, the end record last. Each writer
 * says what its records are; this says how a record goes out. A failed write ends the program.
 */
#ifndef GAPSCOPE_TESTS_GENLIB_H
#define GAPSCOPE_TESTS_GENLIB_H

#include <stddef.h>

#include "trace.h"

/* Creates path (compressed) for the writer prog (its name in errors). Exits on failure. */
void gen__open(const char *prog, const char *path);
/* Appends one record of size bytes. */
void gen__put(const void *rec, size_t size);
/* The records appended so far. */
unsigned long long gen__records(void);
/* h zeroed and filled: type, size, ts, tid, tgid. */
void gen__hdr(struct gs_hdr *h, __u32 type, __u32 size, __u64 ts, __u32 tid, __u32 tgid);
/* A probe record: id of family and kind on lib's sym, with flags (GS_PROBE_F_*). */
void gen__probe(__u32 id, __u32 family, __u32 kind, __u32 flags, const char *lib, const char *sym);
/* The end record at ts (events: every record appended, as the recorder counts them) and the
 * file finished. */
void gen__end(__u64 ts);

#endif
