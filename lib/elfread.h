/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ELF files read into this process's own memory with pread(2), never mapped. A mapping of a file
 * that someone else may truncate (the target's owner, a `cp` over a library in use) raises
 * SIGBUS at the next read of a page past the new end, wherever in libelf or libdw that read is;
 * a pread comes short instead, and the file is taken as changed. It also keeps this process's
 * memory free of the pages a uprobe writes into every private mapping of a probed file.
 *
 * libelf reads a section when it is asked for (ELF_C_READ), into malloc'd memory that stays until
 * elf_end(): fine for headers, notes and unwind tables, not for symbol tables (libtorch_cpu.so's
 * .symtab and .strtab are 90 MB). A walk of a symbol table reads it here in windows, with its
 * names for the walk's time; a name kept for later is read alone (elfread__strdup).
 */
#ifndef GAPSCOPE_ELFREAD_H
#define GAPSCOPE_ELFREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <linux/types.h>
#include <gelf.h>

/* One file, opened for reading. */
struct elfread {
	int fd;
	Elf *e;		/* libelf over fd with ELF_C_READ: what is asked for is read, once */
	struct stat st; /* at the open: a size or modification time that differs says it changed */
	bool changed;	/* a read came short, or elfread__changed() saw the file differ */
};

/*
 * Opens an ELF file (a regular file only: a FIFO or device could block). 0, or -errno,
 * -ENOEXEC (not ELF), -ESTALE (it changed while the header was read).
 */
int elfread__open(struct elfread *r, const char *path);
void elfread__close(struct elfread *r);

/* Whether the file changed since the open: a short read seen, or fstat now. */
bool elfread__changed(struct elfread *r);

/* len bytes at file offset off: 0, -ESTALE (short: the file changed), -EINVAL (past its end at
 * the open), or -errno. */
int elfread__pread(struct elfread *r, void *buf, size_t len, __u64 off);

/* The string at off of string table section shndx into buf (cut to size), or NULL. */
const char *elfread__str(struct elfread *r, size_t shndx, __u64 off, char *buf, size_t size);

/* A copy of the string at off of the string table at [tab_off, tab_off + tab_size) of the file
 * (malloc'd), or NULL: past the table, unterminated, unreadable (see changed), out of memory. */
char *elfread__strdup(struct elfread *r, __u64 tab_off, __u64 tab_size, __u64 off);

/* The symbol table of one section, read in windows. */
struct elfread_syms {
	struct elfread *r;
	size_t n;     /* its symbols, the null one included */
	size_t shndx; /* its section */
	bool is64;
	__u64 off; /* of the table in the file */
	size_t entsize;
	__u64 str_off, str_size; /* its string table */
	/* Symbols [win_first, win_first + win_n), in memory form. */
	void *win;
	size_t win_first, win_n;
	/* String table bytes [names_at, names_at + names_len): a window, or all of them (a
	 * table whose names lie in no order of their symbols). */
	char *names;
	__u64 names_at;
	size_t names_len, names_cap;
	size_t names_served, names_loads; /* names asked for, windows read for them */
};

/* The first section of type (SHT_SYMTAB, SHT_DYNSYM): 0, -ENOENT (none), -ENOEXEC, -ENOMEM. */
int elfread__syms_open(struct elfread_syms *t, struct elfread *r, Elf64_Word type);
void elfread__syms_close(struct elfread_syms *t);

/* Symbol i: 0, -ERANGE, -ESTALE (the file changed), or -errno. */
int elfread__sym(struct elfread_syms *t, size_t i, GElf_Sym *sym);

/* A symbol's name (st_name), valid until the next call; NULL when past the table, unterminated,
 * or unreadable (elfread__changed() tells which). */
const char *elfread__sym_name(struct elfread_syms *t, __u32 st_name);

/*
 * Says once for this process, on stderr, that a file changed while it was read (by device and
 * inode: a file named through several paths is said once). shown names it: a path under
 * /proc/PID/root or /proc/PID/map_files is said as the process names it.
 */
void elfread__say_changed(const struct elfread *r, const char *shown);

#endif
