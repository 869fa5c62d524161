/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Python frames in the report's stacks (bpf/pystack.h). The code objects the recorder named
 * (GS_REC_PYCODE) are read first, in a pass of their own where the trace is marked
 * TRACE_F_PYCODE. A record of Python frames comes just before the event it completes (same
 * thread, event type and start), as a stack snapshot does; that event's user stack is then
 * rebuilt with the Python frames in place of the interpreter's: each native frame of
 * _PyEval_EvalFrameDefault (from the frame-pointer walk or the unwound snapshot) gives way to
 * the Python frames that call of it runs, innermost first, named "function (file:line)". Python
 * frames the native stack has no place for (it never reached the interpreter's loop) go at its
 * root end, and are counted.
 *
 * A Python frame in a stack is an address no user code has (PYFRAME_TAG | its number), which
 * names.c names through pyframes__name().
 *
 * Frames read while the interpreter ran its cyclic garbage collector (PYSTACK_F_GC) get one more
 * frame, PYFRAME_GC, named "gc", innermost of the Python frames: the collection runs inside the
 * allocation or gc.collect() call of the innermost Python frame, under it and over the native
 * frames of the collector itself.
 */
#ifndef GAPSCOPE_PYFRAMES_REPORT_H
#define GAPSCOPE_PYFRAMES_REPORT_H

#include <stdbool.h>
#include <linux/types.h>

#include "trace.h"

#define PYFRAME_TAG  0x4ab0000000000000ull /* not canonical on x86-64: no code is there */
#define PYFRAME_MASK 0xffff000000000000ull
#define PYFRAME_GC   (PYFRAME_TAG | ~PYFRAME_MASK) /* the collector: no frame has that number */

struct pyframes;
struct strtab;

/*
 * Names a native frame of process tgid (leaf: the innermost, an instruction pointer rather
 * than a return address): how the Python frames find the interpreter's eval loop among the
 * native ones. names__user() is the one the report passes.
 */
typedef const char *(*pyframes_native_fn)(void *ctx, __u32 tgid, __u64 addr, bool leaf);

struct py_counts {
	__u64 stacks;	/* events whose stack got Python frames */
	__u64 unplaced; /* of them, with frames the native stack had no place for */
	__u64 unnamed;	/* Python frames whose code object the trace does not name */
};

/* NULL when out of memory. */
struct pyframes *pyframes__new(struct strtab *strs, pyframes_native_fn native, void *ctx);
void pyframes__free(struct pyframes *p);
/*
 * The trace's code objects (GS_REC_PYCODE), in a pass of their own before the ordered one
 * (trace__scan_types' consumer): 0, or -ENOMEM.
 */
int pyframes__take(void *p, const struct gs_hdr *h);
/*
 * One record of the ordered stream: Python frames are kept; an event they complete is
 * returned with them in its user stack (a copy valid until the next call), else as it came.
 */
const struct gs_hdr *pyframes__feed(struct pyframes *p, const struct gs_hdr *h);

static inline bool pyframes__is(__u64 addr)
{
	return (addr & PYFRAME_MASK) == PYFRAME_TAG;
}

static inline bool pyframes__is_gc(__u64 addr)
{
	return addr == PYFRAME_GC;
}

/* "function (file:line)" of a Python frame in a stack; "gc" of the collector's. */
const char *pyframes__name(struct pyframes *p, __u64 addr);
/*
 * A Python frame's source file as its code object names it (co_filename); NULL: not known (and
 * for the collector's frame).
 */
const char *pyframes__file(struct pyframes *p, __u64 addr);
const struct py_counts *pyframes__counts(const struct pyframes *p);

#endif
