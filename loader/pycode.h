/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Python frames on the recorder's side (bpf/pystack.h): finding the interpreter in a recorded
 * process (the python executable, or a libpython, as each executable file mapping is recorded),
 * telling the BPF side where its structures are (map py_procs) once it has a thread (its thread
 * states checked where the version puts them, else found by a scan of the runtime's and the
 * interpreter's first bytes for a list head that points back), and naming the code objects the
 * frames point at, read from the process's memory while it lives (process_vm_readv): one
 * GS_REC_PYCODE per (process, code object), written after the first event that names it, the
 * trace marked TRACE_F_PYCODE. A code object that cannot be read counts as a pycode loss.
 */
#ifndef GAPSCOPE_PYCODE_H
#define GAPSCOPE_PYCODE_H

#include <sys/types.h>
#include <linux/types.h>

#include "gapscope.h"

struct pycode;
struct record_bpf;
struct trace_out;

/* NULL when out of memory. */
struct pycode *pycode__new(struct record_bpf *skel, struct trace_out *out);
void pycode__free(struct pycode *pc);

/*
 * An executable file mapping of tgid: file opens the very file (map_files, else its path),
 * shown is its path as the process sees it; the interpreter in it, if any, is read from now on.
 */
void pycode__map(struct pycode *pc, pid_t tgid, const char *file, const char *shown, __u64 start,
		 __u64 pgoff);
/*
 * Interpreters found before they ran (a launched program) are armed once they have a thread:
 * called every 50 ms.
 */
void pycode__tick(struct pycode *pc);
/* tgid ran execve: its interpreter, if any, is gone. */
void pycode__exec(struct pycode *pc, pid_t tgid);
/* A GS_EV_PYSTACK from the ring buffer: its code objects named (after it in the trace). */
void pycode__event(struct pycode *pc, const struct gs_hdr *h);

#endif
