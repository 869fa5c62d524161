/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What record needs of the kernel's privileges, and nothing more (README: Privileges):
 *
 *   CAP_BPF       load the BPF programs, create their maps
 *   CAP_PERFMON   attach them: uprobes, tracepoints, perf events (the sampler); read kernel
 *                 memory and stacks from BPF
 *   (CAP_SYS_ADMIN stands for both, as before Linux 5.8 split them out of it)
 *
 * Optional: CAP_SYSLOG, for /proc/kallsyms's addresses when perf_event_paranoid > 1 (kernel
 * frames' names, the tick sampler; without it samples come from cpu-clock timers);
 * CAP_SYS_PTRACE, to attach (-p) to a process of another user or one that is not dumpable,
 * exactly as ptrace would need it.
 */
#ifndef GAPSCOPE_PRIVS_H
#define GAPSCOPE_PRIVS_H

#include <stdbool.h>
#include <sys/types.h>

/* The effective capabilities, a bit per CAP_* (0 when capget fails). */
unsigned long long privs__effective(void);

/*
 * The capabilities record cannot do without: true when all are effective; otherwise one line
 * on stderr naming each one missing and what it is for, and false. A note (one line) when
 * kernel addresses are hidden from us.
 */
bool privs__check_record(void);

/*
 * -p: whether the caller may trace PID as ptrace would let it (same user and a dumpable
 * process, or CAP_SYS_PTRACE; the kernel's own answer decides). 0, or -EPERM/-ESRCH after one
 * line on stderr saying why.
 */
int privs__may_trace(pid_t pid);

/*
 * In a launched target before exec: it gets none of the capabilities granted for recording
 * (ambient and inheritable ones cleared).
 */
void privs__drop_for_exec(void);

#endif
