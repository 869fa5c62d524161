/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The reduced ELF files record --archive kept in the trace (GS_REC_ARCHIVE, loader/archive.h),
 * for a report where a mapped file is missing or another build. Collected in a pass of their own
 * (the recorder writes them after every event), each file's parts put together in order and
 * checked against its CRC, then written into a private temporary folder (mkdtemp, 0700), from
 * which libdwfl opens them like any file: the symbolizer (symbols.c) and the unwinder (unwind.c)
 * ask by build-id. The folder goes with archive__free().
 *
 * A file whose parts are missing, out of order, disagree, or fail the CRC is not used: counted in
 * bad, and said in one warning.
 */
#ifndef GAPSCOPE_ARCHIVED_H
#define GAPSCOPE_ARCHIVED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#include "trace.h"

/* The largest reduced file taken (the recorder's ARCHIVE_FILE_MAX). */
#define ARCHIVE_READ_MAX (256u << 20)

struct archive_stats {
	__u64 files; /* whole and checked */
	__u64 used;  /* of them, opened in place of a file missing or of another build */
	__u64 bad;   /* damaged: not used */
};

struct report_archive;

struct report_archive *report_archive__new(void);
/* Takes a GS_REC_ARCHIVE record (others are ignored); 0 or -ENOMEM. */
int report_archive__add(struct report_archive *a, const struct gs_hdr *h);
/* Checks what was added and writes the whole files out; 0 or -errno (no folder). */
int report_archive__finish(struct report_archive *a);
/* report_archive__add of a checked record: the consumer of a pass (trace__scan_types). */
int report_archive__take(void *a, const struct gs_hdr *h);

/* The file kept for a build-id, NULL if none (or a NULL archive). Not yet counted as used. */
const char *report_archive__file(struct report_archive *a, const __u8 *bid, __u32 len);
/* The file at path (from report_archive__file) was used instead of the one mapped. */
void report_archive__used(struct report_archive *a, const char *path);
/*
 * Which file to read for a mapping of path with build-id bid: path where it is there and of
 * that build (or the build-id is unknown, or nothing is archived), else the archived file, else
 * path. Cached per file.
 */
const char *report_archive__choose(struct report_archive *a, const char *path, const __u8 *bid,
				   __u32 len);

const struct archive_stats *report_archive__stats(const struct report_archive *a);
/* One line for the damaged files, if any, prefixed "gapscope: warning: PATH: ". */
void report_archive__warn(const struct report_archive *a, const char *path, FILE *out);
void report_archive__free(struct report_archive *a);

#endif
