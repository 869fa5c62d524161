/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which program a trace recorded, as one short name: the file name of a launched command's
 * argv[0], or the name the trace gives an attached process's main thread (the first target's
 * either way). summary.json carries it ("program"), and `gapscope diff` compares it.
 */
#ifndef GAPSCOPE_PROGRAM_H
#define GAPSCOPE_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>

#include "trace.h"

/*
 * The name is gathered in a pass that reads the trace anyway (trace__scan_types: the analysis's
 * pre-pass, analysis_opts.prepass): program__consumers sets up the PROGRAM_CONSUMERS consumers
 * c[] (the first target record; the comm events of its main thread where it was attached), which
 * write the name into buf ("" when the trace names no target) as they meet them, and stop as
 * soon as it is known. program__scanned after the pass: 0, or -errno.
 */
#define PROGRAM_CONSUMERS 2
struct program_scan {
	__u32 tgid; /* the first target's; 0 until its record is met */
	bool named; /* from a launched command's argv: no comm event changes it */
	char *buf;
	size_t len;
};
void program__consumers(struct program_scan *s, char *buf, size_t len, struct trace_consumer *c);
int program__scanned(const struct trace_consumer *c);

#endif
