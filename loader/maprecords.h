/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The target's file-backed mappings as GS_REC_MAP records (path, range, file offset, device and
 * inode, build-id), each written once; executable ones also handed to the archive (archive.h)
 * and to the search for Python interpreters (pycode.h).
 */
#ifndef GAPSCOPE_MAPRECORDS_H
#define GAPSCOPE_MAPRECORDS_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

struct archive;
struct map_seen;
struct pycode;
struct trace_out;

/* The file-backed mappings recorded so far, so that each is written once. */
struct map_records {
	struct map_seen *v;
	size_t n, cap;
	struct archive *archive; /* --archive: the files of executable mappings (archive.h) */
	struct pycode *py;	 /* Python interpreters looked for in them (pycode.h), or NULL */
	/* Files a fault named that no mapping recorded held: looked for once (tgid, inode). */
	struct map_seen *faulted;
	size_t nfaulted, capfaulted;
	__u32 fault_tgid; /* the last file a fault named, known: most faults are of the one before */
	__u64 fault_ino;
};

/* Writes a GS_REC_MAP (with its build-id) for each mapping of TGID not written before. */
void map_records__scan(struct map_records *m, struct trace_out *o, pid_t tgid);
/*
 * A thread of TGID slept in a fault of the file INO (an off-CPU event's): a data file mapped
 * after the last scan is no executable's mmap event, so its mapping is looked for now, once a
 * file, and written as the others are (a reader takes them in as it reads them, before it
 * blames the event's time).
 */
void map_records__file_fault(struct map_records *m, struct trace_out *o, pid_t tgid, __u64 ino);
/* The processes with mappings recorded, each once, up to max of them; the count. */
size_t map_records__tgids(const struct map_records *m, pid_t *out, size_t max);
void map_records__free(struct map_records *m);

#endif
