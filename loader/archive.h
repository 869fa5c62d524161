/* SPDX-License-Identifier: GPL-2.0 */
/*
 * record --archive: what unwinding and naming need of each mapped ELF file, kept in the trace
 * (GS_REC_ARCHIVE, trace.h) so that a report on another machine, or after the program was
 * rebuilt, still names and unwinds its frames.
 *
 * A file is noted when a mapping of it with PROT_EXEC and a build-id is recorded: its fd is
 * opened then (through /proc/PID/map_files, the very file mapped, else by its path with the
 * build-id checked), so that a file deleted or replaced before the end is still the one kept.
 * At the end each file is reduced with libelf to its ELF header, program headers (addresses map
 * as in the original) and the sections named in archive.c, every other section left in place as
 * SHT_NOBITS (section indices, which symbols refer to, stay valid): CFI, symbol tables, the
 * build-id note and the debug link always, the DWARF of lines and inlines while the reduced
 * file stays under ARCHIVE_DWARF_CAP.
 */
#ifndef GAPSCOPE_ARCHIVE_H
#define GAPSCOPE_ARCHIVE_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

struct trace_out;

/* DWARF (.debug_line, .debug_info, ...) is kept only while the reduced file stays this small. */
#define ARCHIVE_DWARF_CAP (16u << 20)
/* A file whose reduced form is larger still (huge symbol tables) is not kept, and said. */
#define ARCHIVE_FILE_MAX  (256u << 20)
#define ARCHIVE_MAX_FILES 1024

struct archive_file;

struct archive {
	struct archive_file *v;
	size_t n, cap;
};

/*
 * A mapping of path in tgid at [start, end) with build-id bid: the file is kept once per
 * build-id. Cheap: an open, no read.
 */
void archive__note(struct archive *a, pid_t tgid, __u64 start, __u64 end, const char *path,
		   const __u8 *bid, __u32 bid_len);

/*
 * Writes every file noted into the trace (and marks it TRACE_F_ARCHIVE), one line on stderr:
 * files and bytes kept. Returns the files written.
 */
size_t archive__write_all(struct archive *a, struct trace_out *o);

/*
 * The reduced ELF of the file open at fd, in a buffer the caller frees; NULL with errno set.
 * dwarf_kept says whether the DWARF sections are in it.
 */
void *archive__reduce(int fd, size_t *size, int *dwarf_kept);

void archive__free(struct archive *a);

#endif
