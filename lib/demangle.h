/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Symbol names as their programmers write them, through libiberty's demangler (the one binutils
 * and gdb use): C++ (Itanium ABI, "_Z..."), Rust's legacy names (Itanium-mangled, with a
 * "17h<16 hex>E" hash that is dropped and "$LT$"-style escapes undone) and Rust's v0 names
 * ("_R...", printed as Rust does, without crate disambiguators); anything else as it is.
 *
 * A demangler caches by the name's address: names from a symbol table or a DWARF string section
 * keep theirs, so each is demangled once; results live until demangler__free().
 */
#ifndef GAPSCOPE_DEMANGLE_H
#define GAPSCOPE_DEMANGLE_H

#include <stddef.h>

/* The demangled name, malloc'ed, or NULL when name is not mangled (or not well-formed). */
char *demangle(const char *name);

struct demangler;

struct demangler *demangler__new(void);
/* name demangled (owned by d), or name itself when it is not mangled or memory ran out. */
const char *demangler__name(struct demangler *d, const char *name);
void demangler__free(struct demangler *d);

#endif
