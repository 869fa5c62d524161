/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which program a trace recorded, as one short name: the file name of a launched command's
 * argv[0], or the name the trace gives an attached process's main thread (the first target's
 * either way). summary.json carries it ("program"), and `gapscope diff` compares it.
 */
#ifndef GAPSCOPE_PROGRAM_H
#define GAPSCOPE_PROGRAM_H

#include <stddef.h>

/* BUF gets the name ("" when the trace names no target); 0, or -errno with ERR set. */
int program__of_trace(const char *path, char *buf, size_t len, char *err, size_t errlen);

#endif
