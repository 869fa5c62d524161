/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Letting go of the pages a read of an ELF file touched. libelf maps a file whole and reads it in
 * place: every page of a symbol table walked once, or of the unwind tables a stack was unwound
 * with, stays resident and counts in the reader's RSS until elf_end(). libtorch_cpu.so's .symtab
 * and .strtab are 90 MB; a recorder that scans them for a runtime's functions, indexes them to
 * name a gap's frames, or unwinds through them would hold them all. The pages are the file's:
 * dropping them from this process's page tables (MADV_DONTNEED) loses nothing the page cache
 * does not give back on the next read, a minor fault a page.
 */
#ifndef GAPSCOPE_ELFPAGES_H
#define GAPSCOPE_ELFPAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <libelf.h>

/* A mapping whose every page is its file's, as /proc/self/smaps showed it. */
struct elfpages_map {
	uintptr_t start, end;
	unsigned long rss_kb; /* resident when read */
};

/* This process's such mappings, read once for a round of releases. */
struct elfpages {
	struct elfpages_map *maps;
	size_t n, cap;
	unsigned long long released_kb; /* resident when scanned, of the mappings let go */
};

/*
 * Reads /proc/self/smaps for the file mappings that hold no page of their own: read-only or
 * shared ones, or private ones never written (libdwfl maps files writable and private, for the
 * relocations of object files it may apply; a written page is the process's, not the file's).
 * 0, or -errno. Read once for a round of elfpages__release() calls: mappings of files opened
 * after it are not in it, and are left alone.
 */
int elfpages__scan(struct elfpages *ep);
void elfpages__fini(struct elfpages *ep);

/*
 * Drops this process's resident pages of E's file image, where the scan saw the image as one
 * such file mapping (libelf falls back to reading a file into malloc'd memory where it cannot map
 * it, and that must never be dropped); true when dropped. Pointers into the image stay valid: the
 * next access reads the page again. On such a fallback copy, elf_rawfile() (which this asks)
 * reads the whole file, and libelf loses the sections it had read one by one before: a one-time
 * cost of a path taken only where a file cannot be mapped.
 */
bool elfpages__release(struct elfpages *ep, Elf *e);

/* elfpages__scan(), then elfpages__release() of E: for one file. */
bool elfpages__release_one(Elf *e);

#endif
