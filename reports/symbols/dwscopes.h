/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DWARF scopes at an address, for the symbolizer's inline frames (symbols.c): the chain of
 * subprogram, inlined-subroutine and lexical-block DIEs that hold a pc, where each inlined call
 * was made, and the name a frame shows.
 */
#ifndef GAPSCOPE_DWSCOPES_H
#define GAPSCOPE_DWSCOPES_H

#include <elfutils/libdw.h>

struct demangler;

/* Where an inlined call was made: DW_AT_call_file (an index into the CU's files), call_line. */
const char *dwscopes__call_site(Dwarf_Die *cu, Dwarf_Die *inl, int *line);

/* Below parent, the scopes that hold pc, outermost first; the count (at most max). */
int dwscopes__at(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *out, int max);

/*
 * A function's name: its linkage name demangled ("ns::Class::method(int)"), where it has one
 * (C++, Rust), through its abstract origin or specification; else DW_AT_name.
 */
const char *dwscopes__name(Dwarf_Die *die, struct demangler *d);

#endif
