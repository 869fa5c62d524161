/* SPDX-License-Identifier: GPL-2.0 */
/* Finding files as the target will: its executable on PATH, its libraries as ld.so does. */
#ifndef GAPSCOPE_RESOLVE_H
#define GAPSCOPE_RESOLVE_H

#include <stddef.h>

/* CMD as execvp() would find it (PATH search when it has no '/'). -errno on failure. */
int resolve__executable(const char *cmd, char *out, size_t len);

/*
 * The file the dynamic loader would load for NAME (e.g. "libcuda.so.1") in a process running EXE
 * with the current environment: DT_RPATH (without DT_RUNPATH), LD_LIBRARY_PATH, DT_RUNPATH
 * ($ORIGIN expanded), the ld.so cache, then the default directories; only files of EXE's ELF
 * class and machine count. -ENOENT when none.
 */
int resolve__library(const char *exe, const char *name, char *out, size_t len);

#endif
