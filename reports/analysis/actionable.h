/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The frame of a stack a user can act on, which names on-CPU time in the causes: the innermost
 * Python frame of the user's own code where the stack has one ("prepare (feeder.py)", the
 * function and its file, its line kept apart; a module's top level by its line, "<module>
 * (x.py:42)"), else the innermost Python frame; where the interpreter's garbage collector ran
 * beneath that frame (pyframes.h's PYFRAME_GC), the collector's row under it, "gc (in prepare,
 * feeder.py)". Else the innermost named function of the program's own executable or libraries,
 * above the internals of the interpreter, the C and C++ runtimes, the CUDA driver and the vDSO,
 * and above the libraries of the system and of packages (actionable__library) where the
 * program's own code is on the stack; else, where the program's own code has no names, its
 * library and why ("libfoo.so (stripped)", "(missing)"); else the leaf as it is named. The leaf
 * under it is the row's breakdown: its function, or its library where it has no name (stripped
 * frames grouped per library).
 */
#ifndef GAPSCOPE_ACTIONABLE_H
#define GAPSCOPE_ACTIONABLE_H

#include <stdbool.h>
#include <linux/types.h>

struct names;
struct strtab;

struct actionable {
	const char *name; /* the row: "prepare (feeder.py)", "synth_partition" */
	const char *leaf; /* the innermost frame: "c_slow", "libm.so.6 (stripped)" */
	const char *line; /* a Python row's line: "feeder.py:12"; else NULL */
};

/*
 * The actionable frame of the user stack user[0..nu) (leaf first) of process tgid; false when
 * the stack has no frame but the vDSO's (out left NULL). Names are interned in strs.
 */
bool stack__actionable(struct names *nm, struct strtab *strs, __u32 tgid, const __u64 *user,
		       __u32 nu, struct actionable *out);

/*
 * Whether code from path is a library's, not the user's own: a Python file (python) of the
 * interpreter's standard library (PREFIX/lib/pythonX.Y/..., frozen modules) or of a
 * site-packages or dist-packages folder; a native file under /usr/lib, /lib, /usr/local/lib
 * (and their lib64), a site-packages or dist-packages folder, or a conda or virtual
 * environment's lib folder. A file under one of own[0..nown) (report --own: files or folders)
 * is the user's wherever it lies; so is a path NULL (a JIT's code).
 * By the path's shape alone: the trace may come from another machine.
 */
bool actionable__library(const char *path, bool python, const char *const *own, size_t nown);

/* A Python frame's name "function (file:line)" as its row, "function (file)"; else name. */
const char *actionable__python_row(struct strtab *strs, const char *name, const char **line);

#endif
