/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names for the report's frames and locks: user addresses through the symbolizer (symbols.h),
 * "module+0xoffset" where it has no symbol, kernel addresses from the symbols the trace carries
 * ("name_[k]"), static data (a lock's futex word) by its data symbol. Every name is interned
 * and cached per (process, address), so a stack seen again costs hash lookups.
 */
#ifndef GAPSCOPE_NAMES_H
#define GAPSCOPE_NAMES_H

#include <stdbool.h>
#include <linux/types.h>

#include "strtab.h"
#include "trace.h"

struct names;

/*
 * file_symbols: name user frames from the mapped files the trace names (libdwfl). Without it no
 * file is opened and user frames are named by address: for traces of unknown origin (fuzzing).
 * debug_dir (--debug-dir, may be NULL): debug files by build-id there before /usr/lib/debug.
 */
struct names *names__new(struct strtab *strs, bool file_symbols, const char *debug_dir);
void names__free(struct names *n);
struct perfmaps;
/* Names for code no mapped file holds, from the perf maps the trace kept (perfmap.h). */
void names__set_perfmaps(struct names *n, struct perfmaps *p);

struct pyframes;
/* Names for Python frames in stacks (pyframes.h). */
void names__set_pyframes(struct names *n, struct pyframes *p);

struct report_archive;
/* Files record --archive kept, for mapped files missing here or of another build (archived.h). */
void names__set_archive(struct names *n, struct report_archive *a);

void names__add_map(struct names *n, const struct gs_rec_map *m);
/*
 * The path of the file with inode INO that TGID mapped (another process's mapping of it where
 * TGID's is not recorded), from the map records so far; NULL none.
 */
const char *names__file(const struct names *n, __u32 tgid, __u64 ino);
/* A process that is gone: its mappings and the names cached for it (its pid may come back). */
void names__forget(struct names *n, __u32 tgid);
/* What the symbolizer read of files let go (symbolizer__release_pages()). */
void names__release_pages(struct names *n);
/* The files the symbolizer reads (symbolizer__files()), or NULL. */
struct elfcache *names__files(struct names *n);
void names__add_ksym(struct names *n, __u64 addr, const char *name);

/* The function at a user address (leaf: the address itself, else a return address). */
const char *names__user(struct names *n, __u32 tgid, __u64 addr, bool leaf);
/*
 * The mapped file's base name at a user address ("libm.so.6"; NULL: a Python frame, a JIT's
 * code or no mapping), and whether names__user() names it by a symbol (else module+offset).
 */
const char *names__user_module(struct names *n, __u32 tgid, __u64 addr, bool leaf, bool *named);
/*
 * The i-th of the functions inlined at a user return address, innermost first (0: the
 * innermost, the last: the one that holds the code), and where in it ("main.rs:176", NULL
 * without line information); NULL past the last. An async fn's body is inlined into the
 * runtime's poll: only this finds it.
 */
const char *names__user_inlined(struct names *n, __u32 tgid, __u64 addr, unsigned int i,
				const char **line);
/*
 * Where the code at a user address comes from: the mapped file's path as recorded
 * ("/usr/lib/x86_64-linux-gnu/libz.so.1.2.13"), a Python frame's source file as its code
 * object names it; NULL: none known (a JIT's code, no mapping, --no-file-symbols).
 */
const char *names__user_path(struct names *n, __u32 tgid, __u64 addr, bool leaf);
/*
 * The files and folders of the user's own code, whatever folder they lie in (report --own):
 * their frames are never a library's (actionable.h). 0 or -ENOMEM. names__own() lists them.
 */
int names__set_own(struct names *n, const char *const *paths, size_t count);
const char *const *names__own(const struct names *n, size_t *count);
/* Why a module's code has no name, as summary's symbols line says: "stripped", "missing", ... */
const char *names__why_unnamed(const struct names *n, const char *module);
/* Whether the address lies in the C library or the dynamic loader (lock callsites skip it). */
bool names__in_libc(struct names *n, __u32 tgid, __u64 addr);
/* The static data symbol at addr, NULL if none. */
const char *names__data(struct names *n, __u32 tgid, __u64 addr);
const char *names__kernel(struct names *n, __u64 addr);

/*
 * User code addresses named from the files (distinct per file), left unnamed (printed as
 * file+offset: no source the file offers covered them, or the file was missing or another build)
 * and outside every recorded mapping ("[unknown]"); the files with unnamed addresses, most first.
 */
#define SYMBOL_FILES_MAX 8
struct symbol_counts {
	bool on; /* symbols were read from files (not --no-file-symbols) */
	__u64 named, unnamed, unmapped;
	struct {
		const char *path;
		const char *state;  /* "ok", "missing", "build_id_mismatch", "unreadable",
				     * "changed" (while read) */
		const char *source; /* struct sym_file_info's; NULL when not read */
		__u64 unnamed;
	} files[SYMBOL_FILES_MAX];
	size_t nfiles;
	size_t more_files; /* with unnamed addresses, past the SYMBOL_FILES_MAX listed */
};
/* How many user code addresses were named, and where names were missing (struct symbol_counts, above). */
void names__counts(const struct names *n, struct symbol_counts *c);

#endif
