/* SPDX-License-Identifier: GPL-2.0 */
/* What the system call a thread blocked in says about its wait (reports/analysis/kinds.c). */
#ifndef GAPSCOPE_KINDS_H
#define GAPSCOPE_KINDS_H

#include "analysis.h"

enum blame_kind syscall__kind(int nr); /* BK_OTHER for a call not listed */
const char *syscall__name(int nr);     /* NULL for a call not listed */
/* What an off-CPU event's fd was (offcpu.h, OFFCPU_FD_* in its flags): "pipe", ...; NULL none. */
const char *offcpu__fd_name(__u16 flags);

#endif
