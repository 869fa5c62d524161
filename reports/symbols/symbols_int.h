/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The symbolizer's state, shared by its two halves: reports/symbols/symfile.c opens a mapped file (or what
 * stands in for it) and indexes its symbols; reports/symbols/symbols.c maps a process's addresses to
 * files and caches the frames of each address.
 */
#ifndef GAPSCOPE_SYMBOLS_INT_H
#define GAPSCOPE_SYMBOLS_INT_H

#include <limits.h>
#include <stdbool.h>
#include <elfutils/libdwfl.h>

#include "demangle.h"
#include "elfcache.h"
#include "symbols.h"

#define SYM_BUILD_ID_MAX 64
#define SYM_MAX_FRAMES	 16 /* inline depth kept per address; deeper chains are cut */
#define SYM_MAX_LOADS	 8  /* PT_LOAD headers kept: files have 2 to 5 */
#define SYM_DEBUG_ROOT	 "/usr/lib/debug"
#define SYM_DATA_KEY	 (1ULL << 63) /* in a cache key: a data-symbol answer */
#define SYM_CACHE_SIZE	 (1u << 18)   /* entries; emptied when half full */

struct sym_sym {
	__u64 addr, size;
	const char *name; /* read when first shown, without "@VERSION" (owned); NULL until then */
	__u32 ref;	  /* where the name is: its offset in the string table, or libdwfl's
			   * index of the symbol (struct sym_module's from_dwfl) */
	__u32 rank : 31;  /* of the names at one address the lowest is shown */
	__u32 data : 1;
};

struct sym_load {
	__u64 offset, filesz, vaddr;
};

struct sym_module {
	char *path;
	const char *base; /* in path */
	__u8 build_id[SYM_BUILD_ID_MAX];
	__u32 build_id_len;
	enum sym_file_state state;
	struct elffile *file; /* the file read (path's, or what stands in for it), held */
	Dwfl *dwfl;	      /* a Dwfl of its own, over file; NULL after a let-go */
	Dwfl_Module *mod;
	char *debug_path;     /* the separate file its DWARF came from, as libdwfl said */
	struct sym_sym *syms; /* sorted by address */
	size_t nsyms;
	bool from_dwfl;		 /* syms are libdwfl's table (refs its indexes), not .symtab's */
	int dwfl_nsyms;		 /* the size of that table, checked when it is read again */
	__u64 str_off, str_size; /* .symtab's string table in file, where not from_dwfl */
	struct sym_load loads[SYM_MAX_LOADS];
	int nloads;
	__u64 vaddr_end;    /* end of the highest PT_LOAD in memory (.bss included) */
	const char *source; /* struct sym_file_info's */
	__u64 named, unnamed;
};

struct sym_vma {
	__u32 tgid, module;
	__u64 start, end, pgoff;
	__u64 bias; /* run-time minus ELF address, once biased */
	bool biased;
};

/* A cached answer: frames[first .. first + n) of the arena; module 0 marks an empty slot. */
struct sym_cache_ent {
	__u64 key;    /* ELF address, | SYM_DATA_KEY for data symbols */
	__u32 module; /* module index + 1 */
	__u32 n;
	__u32 first;
};

struct symbolizer {
	char *debug_dir;	       /* --debug-dir, absolute */
	char debuginfo[PATH_MAX + 64]; /* libdwfl's search path */
	char *debuginfo_path;	       /* = debuginfo, for callbacks.debuginfo_path */
	Dwfl_Callbacks callbacks;
	struct sym_module *mods;
	size_t nmods, capmods;
	struct sym_vma *vmas; /* sorted by tgid, then start; a process's do not overlap */
	size_t nvmas, capvmas;
	struct sym_cache_ent *cache;
	size_t cache_used;
	struct sym_frame *frames; /* the cache's arena */
	size_t nframes, capframes;
	struct symbolizer_stats stats;
	struct demangler *dm; /* C++ and Rust names */
	struct sym_fallback fallback;
	struct elfcache *files; /* shared with the unwinder (symbolizer__files) */
};

/* Opens the file of mod (on its first address): sets mod->state, and on success its file,
 * symbols and Dwfl. */
void symfile__open(struct symbolizer *s, struct sym_module *mod);
/* mod's Dwfl module (its Dwfl built again after a let-go), or NULL: no DWARF to read. A file
 * that changed sets mod->state to SYM_FILE_CHANGED. */
Dwfl_Module *symfile__dwfl(struct symbolizer *s, struct sym_module *mod);
/* The best named symbol of the kind asked for whose extent holds vaddr, or NULL. */
const char *symfile__symbol(struct symbolizer *s, struct sym_module *mod, __u64 vaddr, bool data);
/* Ends mod's Dwfl: what libdwfl and libelf read for it goes, its symbols stay. */
void symfile__let_go(struct sym_module *mod);

#endif
