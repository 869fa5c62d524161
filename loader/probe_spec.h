/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which files get probes: the --probe LIB:SYM options (LIB a path, or a file name that matches
 * the library's name with or without its version suffix) and the libraries probed always
 * (libcuda for the driver API, libc for malloc_trim and the mutexes).
 */
#ifndef GAPSCOPE_PROBE_SPEC_H
#define GAPSCOPE_PROBE_SPEC_H

#include <stdbool.h>
#include <stddef.h>

struct probe_spec {
	const char *lib; /* LIB, lib_len bytes (not terminated: it points into the option) */
	size_t lib_len;
	const char *sym; /* SYM */
};

/* Splits ARG at its last ':'; -EINVAL when LIB or SYM is empty or there is no ':'. */
int probe_spec__parse(const char *arg, struct probe_spec *p);
/* Whether the spec's LIB names FILE: the same file for a path, else by file name. */
bool probe_spec__matches(const struct probe_spec *p, const char *file);
/*
 * The file to attach to before EXE runs: EXE itself when LIB names it, else the library the
 * dynamic loader would load for LIB (resolve__library). -ENOENT when none.
 */
int probe_spec__resolve(const struct probe_spec *p, const char *exe, char *out, size_t len);
/*
 * Where LIB is a path: that it is an ELF file with SYM in it (a name is checked when its library
 * is mapped). 0, or -errno with WHY saying what is wrong.
 */
int probe_spec__check(const struct probe_spec *p, char *why, size_t len);
/* The file name part of LIB (what the mmap hook watches for), NUL-terminated in buf. */
void probe_spec__lib_name(const struct probe_spec *p, char *buf, size_t len);

static inline const char *path__base_name(const char *path)
{
	const char *s = __builtin_strrchr(path, '/');

	return s ? s + 1 : path;
}

static inline bool path__is_libcuda(const char *path)
{
	return !__builtin_strncmp(path__base_name(path), "libcuda.so", 10);
}

static inline bool path__is_libc(const char *path)
{
	return !__builtin_strncmp(path__base_name(path), "libc.so", 7);
}

#endif
