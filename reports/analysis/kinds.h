/* SPDX-License-Identifier: GPL-2.0 */
/* What the system call a thread blocked in says about its wait (reports/analysis/kinds.c). */
#ifndef GAPSCOPE_KINDS_H
#define GAPSCOPE_KINDS_H

#include "gap.h"
#include "syscalls.h"

/* What a wait in system call NR of ARCH is (syscalls.h names it); BK_OTHER for one not listed. */
enum blame_kind syscall__kind(enum gs_arch arch, int nr);
/* What an off-CPU event's fd was (offcpu.h, OFFCPU_FD_* in its flags): "pipe", ...; NULL none. */
const char *offcpu__fd_name(__u16 flags);

#endif
