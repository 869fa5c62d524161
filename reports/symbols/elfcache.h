/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ELF files that naming frames and unwinding stacks read, each opened once and read with
 * pread (elfread.h), never mapped: they are the recorded processes' files, which their owners
 * may truncate or rewrite meanwhile. A file that changes is said once ("changed while read") and
 * read no more.
 *
 * A file's libelf handle is given to every Dwfl that reports it (the symbolizer's, and the
 * unwinder's of each process that maps it) through libdwfl's find_elf callback: its unwind tables
 * and DWARF are read once into memory, not once a process. libelf keeps what it read until the
 * handle ends; the live analysis lets go of every handle every few seconds (elfcache__let_go),
 * and the next use reads again what it needs. A file's DWARF over elfcache__dwarf_max() bytes is
 * not read at all (libdw reads every DWARF section whole): its names come from its symbol table.
 */
#ifndef GAPSCOPE_ELFCACHE_H
#define GAPSCOPE_ELFCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <elfutils/libdwfl.h>

#include "elfread.h"

struct elfcache;
struct elffile;

/*
 * DWARF a file may have read (libdw reads every DWARF section of a file whole): ELF_DWARF_MAX
 * bytes, ELF_DWARF_OFFLINE_MAX after elfcache__offline() (the live analysis, whose memory is
 * bounded; symbols__offline() calls it). A file with more is named from its symbol table alone.
 */
#define ELF_DWARF_MAX	      (512ull << 20)
#define ELF_DWARF_OFFLINE_MAX (16ull << 20)
void elfcache__offline(void);
size_t elfcache__dwarf_max(void);

struct elfcache *elfcache__new(void);
/* Every file must have been put (elffile__put) and every Dwfl that reports one ended. */
void elfcache__free(struct elfcache *c);

/*
 * The file at path as it is now (by device and inode: a path that names another file since is
 * another entry), opened on first use; a reference, put with elffile__put(). NULL with errno:
 * ENOENT (no such file), EINVAL (not a regular file), ENOEXEC (not ELF), ESTALE (it changed
 * while its headers were read), ENOMEM.
 */
struct elffile *elfcache__get(struct elfcache *c, const char *path);
void elffile__put(struct elffile *f);

const char *elffile__path(const struct elffile *f);
struct elfread *elffile__reader(struct elffile *f);

/* Its libelf handle (opened again after a let-go), valid until the next let-go; NULL where the
 * file can no longer be read. */
Elf *elffile__elf(struct elffile *f);

/* Whether the file changed since it was opened (fstat now); said once, the first time. */
bool elffile__changed(struct elffile *f);

/* len bytes at ELF address vaddr, as the file holds them (in a PT_LOAD's file contents). */
bool elffile__read(struct elffile *f, __u64 vaddr, void *buf, size_t len);

/*
 * Reports f to d as dwfl_report_elf() would, at base (add_p_vaddr as it takes it), read through
 * elffile__find_elf (the Dwfl's find_elf callback). d holds no reference: keep one until
 * dwfl_end(d). NULL where libdwfl refused it (an overlap) or f has no loadable segment.
 */
Dwfl_Module *elffile__report(struct elffile *f, Dwfl *d, const char *name, __u64 base,
			     bool add_p_vaddr);
int elffile__find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		      char **file_name, Elf **elfp);

/*
 * Checks every file for a change (said once), ends every libelf handle (what libelf read goes
 * once no Dwfl holds it: end them first) and closes the files no one holds.
 */
void elfcache__let_go(struct elfcache *c);

#endif
