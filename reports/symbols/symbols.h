/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User-space symbols for reports, with elfutils libdwfl: function names for every mapped object
 * (.symtab of the file or its debug file, else .dynsym and the MiniDebugInfo of .gnu_debugdata),
 * and where DWARF exists the file:line and the chain of inlined calls at an address. Symbols with
 * a size name the addresses they span (labels without one do not); of aliases, the name callers
 * use, without its version: malloc, not __libc_malloc or malloc@@GLIBC_2.2.5. C++ and Rust names
 * are demangled (demangle.h), inlined ones from DWARF's linkage names: "ns::Class::method(int)".
 *
 * The maps come from the trace (GS_REC_MAP: path, start, end, file offset, build-id); the files are
 * read afterwards from this machine, so the target need not run ("[vdso]" is not read). A
 * file whose build-id differs from the one recorded is not used for names (counted in
 * build_id_mismatch). Debug files are found by build-id (.build-id/xx/rest.debug under
 * --debug-dir and /usr/lib/debug) and by .gnu_debuglink (next to the file, in its .debug/, under
 * --debug-dir and /usr/lib/debug); where the mapped file is gone or another build, the binary or
 * debug file of its build-id under those folders stands in for it. As everywhere libdwfl is
 * used, a DEBUGINFOD_URLS in the environment also has debuginfod servers asked for debug files,
 * each download bounded by DEBUGINFOD_MAXTIME (SYM_DEBUGINFOD_MAXTIME seconds where it is unset)
 * and all of a process's by SYM_DEBUGINFOD_TOTAL_S; a build-id asked for and not given (not
 * there, failed or cut) is not asked for again by the process.
 *
 * Before an offset every source a file offers is used: its .symtab, a separate debug file
 * (build-id, debuglink), the MiniDebugInfo of .gnu_debugdata, debuginfod (where DEBUGINFOD_URLS
 * is set: libdwfl asks through elfutils' libdebuginfod, with its cache), then .dynsym; each file
 * says which one named it, and how many of its addresses stayed unnamed (symbolizer__file).
 *
 * Each file is opened once, on the first address that needs it, and shared by every process that
 * maps it; each (file, address) is resolved once and cached (the cache starts over past 131072
 * of them), so resolving the same stacks again costs a few lookups, not DWARF work.
 *
 * Return addresses point after the call instruction, which may be the first instruction of the
 * next line or function: pass addr - 1 for every frame of a stack but the innermost (the leaf, or
 * the sampled instruction pointer), as perf and gdb do, and addr as is for the innermost.
 *
 * Strings returned (frame names, files, modules, data symbols) belong to the symbolizer and stay
 * valid until symbolizer__free(). Not thread-safe: one symbolizer per thread.
 */
#ifndef GAPSCOPE_SYMBOLS_H
#define GAPSCOPE_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <elfutils/libdwfl.h>

#define SYM_DEBUGINFOD_MAXTIME "10"
#define SYM_DEBUGINFOD_TOTAL_S 30 /* all of a report's downloads */

struct symbolizer_opts {
	const char *debug_dir; /* --debug-dir: searched before /usr/lib/debug; may be NULL */
};

/* One file-backed mapping, as recorded (struct gs_rec_map). */
struct sym_map {
	__u64 start;
	__u64 end;
	__u64 pgoff;	      /* file offset of start, in bytes */
	const char *path;     /* copied */
	const __u8 *build_id; /* copied; NULL or build_id_len 0: unknown, not checked */
	__u32 build_id_len;
};

struct sym_frame {
	const char *function; /* NULL when no symbol covers the address: print module+offset */
	const char *file;     /* source file, NULL without DWARF line information */
	int line;	      /* 0 when file is NULL */
	bool inlined;	      /* inlined into the next frame out; file:line is in this one */
	const char *module;   /* the mapped file's base name, e.g. "libc.so.6" */
	__u64 offset;	      /* the address in the module's ELF (addr - load bias), as addr2line
				 * -e module takes it; for a file that could not be read, the
				 * file offset (the same for code in most layouts) */
};

struct symbolizer_stats {
	__u64 resolved;		 /* symbolizer__resolve() calls that named a function */
	__u64 unresolved;	 /* calls that named none (no mapping, no file, or no symbol) */
	__u64 missing_files;	 /* mapped files that could not be opened (by distinct file) */
	__u64 build_id_mismatch; /* files whose build-id differs from the trace's: not used */
	__u64 unmapped;		 /* calls for an address no recorded mapping covers */
};

/* The state of one mapped file, for reports that say which files gave no names. */
enum sym_file_state {
	SYM_FILE_UNOPENED, /* no address in it was asked for */
	SYM_FILE_OK,
	SYM_FILE_MISSING,
	SYM_FILE_BUILD_ID_MISMATCH,
	SYM_FILE_BAD,	  /* not an ELF file libdwfl can read, or no file ([vdso]) */
	SYM_FILE_CHANGED, /* truncated or rewritten while read: named no more */
};

struct sym_file_info {
	const char *path;	/* as recorded */
	const char *debug_path; /* separate file DWARF was read from (NULL: none, in the file
				 * itself, or not looked for yet) */
	enum sym_file_state state;
	/* Where its function names came from: "symtab" (its own .symtab), "debug file" (a
	 * separate one: --debug-dir, /usr/lib/debug, .gnu_debuglink), "debuginfod",
	 * "minidebuginfo" (.gnu_debugdata), "dynsym" (none of those: exported names only);
	 * NULL when not opened. */
	const char *source;
	__u64 named, unnamed; /* distinct code addresses resolved in it, with and without a name */
};

struct symbolizer;

/* NULL when out of memory. */
struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts);

/*
 * From now on no Dwfl of this process asks the network for a file (debuginfod, which libdwfl
 * asks on its own whenever DEBUGINFOD_URLS is set, synchronously, for up to 90 s a file):
 * separate debug files are looked for by build-id under /usr/lib/debug only. For a process whose
 * thread must not block, record --flight's live analysis; its dumps' reports, processes of their
 * own, still ask. symbols__find_debuginfo: every Dwfl_Callbacks' find_debuginfo, which obeys it.
 * The DWARF a file may have read is the smaller bound then (elfcache__offline).
 */
void symbols__offline(void);
int symbols__find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			    const char *file_name, const char *debuglink_file,
			    GElf_Word debuglink_crc, char **debuginfo_file_name);

/*
 * Files that stand in for a mapped file missing or of another build, by build-id: the reduced
 * copies record --archive kept (archived.h). Tried after the file recorded, before the debug
 * folders; used() is told of each one opened.
 */
struct sym_fallback {
	const char *(*file)(void *ctx, const __u8 *build_id, __u32 len);
	void (*used)(void *ctx, const char *file);
	void *ctx;
};

void symbolizer__set_fallback(struct symbolizer *s, const struct sym_fallback *f);

/*
 * Adds a mapping of process tgid. A mapping that overlaps earlier ones of the same process
 * replaces them (the address space changed: munmap and mmap, or exec). Cheap: no file is opened.
 * 0 or -ENOMEM, -EINVAL.
 */
int symbolizer__add_map(struct symbolizer *s, __u32 tgid, const struct sym_map *m);
/* A process that is gone: its mappings (the files' symbols stay, for any other process). */
void symbolizer__forget(struct symbolizer *s, __u32 tgid);

/*
 * An address of tgid (addr - 1 for return addresses, see above) to up to max frames, innermost
 * (inlined) first, the function that holds the code last. Returns the number of frames written:
 * 0 when no mapping covers addr; 1 frame with function NULL when the mapped file is missing or
 * not the recorded build. With fewer than all frames asked for, the last one written is still
 * the function that holds the code (max 1: just that function).
 */
int symbolizer__resolve(struct symbolizer *s, __u32 tgid, __u64 addr, struct sym_frame *out,
			int max);

/*
 * The static data symbol (an object: a global or static variable, e.g. a pthread mutex) whose
 * extent holds addr, also in the zero-filled .bss pages past the file's mapping; NULL if none.
 */
const char *symbolizer__data_symbol(struct symbolizer *s, __u32 tgid, __u64 addr);

const struct symbolizer_stats *symbolizer__stats(const struct symbolizer *s);

/* The path, as recorded, of the file mapped at a user address of tgid; NULL: none. */
const char *symbolizer__path(struct symbolizer *s, __u32 tgid, __u64 addr);

/* The i-th distinct mapped file, in the order first added (i from 0); false past the last. */
bool symbolizer__file(const struct symbolizer *s, size_t i, struct sym_file_info *f);

void symbolizer__free(struct symbolizer *s);

/*
 * Lets go of what was read of the files so far (elfcache.h): names and indexes stay, and a file
 * is read again where a new address needs its DWARF. Checks each file for a change. For a
 * recorder that runs for days; the unwinder's Dwfls should be ended first
 * (unwinder__release_pages), which hold the same files.
 */
void symbolizer__release_pages(struct symbolizer *s);

/* The files the symbolizer reads, for the unwinder to read them once with it. */
struct elfcache *symbolizer__files(struct symbolizer *s);

#endif
