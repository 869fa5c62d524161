/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a CPython's structures are (bpf/pystack.h), from the interpreter's own file: its version
 * (the Py_Version symbol, 3.11 and later, else the file's name), the address of _PyRuntime, and
 * the offsets: 3.13's debug offsets (_Py_DebugOffsets, at the start of _PyRuntime, as the file
 * initializes it), else a table per version (3.10, 3.11, 3.12, x86-64). Also how a version's line
 * tables are read (the 3.10 format, and the location table of 3.11 and later).
 */
#ifndef GAPSCOPE_PYOFFSETS_H
#define GAPSCOPE_PYOFFSETS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "pystack.h"
#include "trace.h"

#define PY_LINES_310 1 /* (bytes, line delta) pairs */
#define PY_LINES_311 2 /* the location table (Objects/locations.md) */

/* Everything the recorder needs of one interpreter version. */
struct py_layout {
	struct py_offsets bpf; /* runtime: 0 here (the process's address is the caller's) */
	unsigned int major, minor;
	bool from_debug; /* from the interpreter's debug offsets, not the table */
	/* Code objects, strings and bytes, read by the recorder (loader/pycode.c). */
	__u16 co_name; /* the qualified name where the version has one */
	__u16 co_filename;
	__u16 co_firstlineno;
	__u16 co_linetable;
	__u16 bytes_size; /* PyBytesObject: ob_size */
	__u16 bytes_data; /* ob_sval */
	__u16 str_length; /* PyASCIIObject.length */
	__u16 str_state;
	__u16 str_ascii_data;	/* where a compact ASCII string's characters are */
	__u16 str_compact_data; /* where a compact non-ASCII one's are */
	int lines;		/* PY_LINES_* */
};

/* The table's layout of version major.minor: 0, or -ENOENT for a version it does not hold. */
int pyoffsets__table(unsigned int major, unsigned int minor, struct py_layout *out);
#define DO_WORDS 73 /* the most words read */

/*
 * A layout from a 3.13 interpreter's _Py_DebugOffsets (len bytes of it): 0, or -EINVAL when the
 * bytes are not that (the cookie, the version, sizes and offsets that make sense).
 */
int pyoffsets__from_debug(const void *buf, size_t len, struct py_layout *out);

/* What a mapped ELF file says of the interpreter in it. */
struct py_interp {
	struct py_layout layout;
	__u64 runtime_vaddr;   /* _PyRuntime, as the file's addresses go */
	__u64 code_type_vaddr; /* PyCode_Type, 0 if not found */
	__u64 map_vaddr;       /* the address of file offset pgoff (the mapping's start) */
};

/*
 * Whether the ELF file at path (mapped from file offset pgoff) holds a CPython interpreter this
 * recorder reads: 0 and *out filled; -ENOENT: none in it; another -errno with why (a version
 * it does not know, a file it cannot read) in err.
 */
int pyoffsets__probe(const char *path, const char *shown, __u64 pgoff, struct py_interp *out,
		     char *err, size_t errlen);

/*
 * A line table decoded into *out (malloc'ed, *n entries by start, gs_pyline): 0, or -EINVAL
 * for a table that does not decode, -ENOMEM.
 */
int pyoffsets__lines(int kind, const __u8 *tab, size_t len, int firstlineno, struct gs_pyline **out,
		     __u32 *n);

#endif
