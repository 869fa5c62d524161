/* SPDX-License-Identifier: GPL-2.0 */
/*
 * System call names by number, per architecture: the numbers an off-CPU event carries are the
 * recording machine's (bpf/offcpu.bpf.c reads them from the registers), so a trace says which
 * machine it came from (trace.h, TRACE_F_ARCH) and is read with that machine's table. Only the
 * calls a blocked thread is seen in are listed: what a wait in them means is the report's
 * business (reports/analysis/kinds.c), by name.
 */
#ifndef GAPSCOPE_SYSCALLS_H
#define GAPSCOPE_SYSCALLS_H

enum gs_arch {
	GS_ARCH_X86_64 = 0, /* every trace before the arch was recorded */
	GS_ARCH_ARM64 = 1,
	GS_ARCH_MAX
};

/* The machine this is built for. */
enum gs_arch gs_arch__host(void);
/* "x86_64", "arm64"; "unknown" past GS_ARCH_MAX. */
const char *gs_arch__name(enum gs_arch a);
/* The name of system call NR on ARCH; NULL for a call not listed (or an unknown arch). */
const char *syscall__name(enum gs_arch arch, int nr);

#endif
