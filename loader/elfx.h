/* SPDX-License-Identifier: GPL-2.0 */
/* What the recorder reads from ELF files (libelf): symbols, build-ids, dynamic-section paths. */
#ifndef GAPSCOPE_ELFX_H
#define GAPSCOPE_ELFX_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct elfx_sym {
	const char *name;
	__u64 value;  /* st_value */
	__u64 offset; /* file offset of the code: what a uprobe attaches to */
	__u64 size;
};

/* Calls cb for every defined function in .dynsym; a non-zero return stops. -errno on failure. */
int elfx__for_each_dynsym(const char *path, int (*cb)(const struct elfx_sym *s, void *ctx),
			  void *ctx);

/* The same over .symtab, then .dynsym; *has_symtab says whether the file has a .symtab. */
int elfx__for_each_sym(const char *path, int (*cb)(const struct elfx_sym *s, void *ctx), void *ctx,
		       bool *has_symtab);

/*
 * Whether the file's read-only data (.rodata, up to 64 MiB of it) holds the bytes of needle: a
 * stripped program's source paths in its panic messages ("tokio-1.x/src/...") still name what
 * was built into it.
 */
bool elfx__rodata_has(const char *path, const char *needle);

/* File offset of a function by name, from .dynsym then .symtab. -ENOENT when absent. */
int elfx__sym_offset(const char *path, const char *name, __u64 *offset);

/* The NT_GNU_BUILD_ID note; returns its length (0 when absent). */
size_t elfx__build_id(const char *path, __u8 *id, size_t max);

struct elfx_dyn {
	bool is64;	    /* ELFCLASS64 */
	unsigned machine;   /* e_machine */
	char interp[256];   /* PT_INTERP */
	char rpath[1024];   /* DT_RPATH (ignored by ld.so when DT_RUNPATH exists) */
	char runpath[1024]; /* DT_RUNPATH */
};

int elfx__dyn(const char *path, struct elfx_dyn *d);

#endif
