/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User stacks unwound from snapshots (bpf/snapshot.h) with libdwfl, as perf --call-graph dwarf
 * does: the snapshot's registers are the initial frame, its stack bytes the memory the CFI
 * (.eh_frame, else .debug_frame) of the mapped objects is evaluated against; an address outside
 * the snapshot is read from the file mapped there. One Dwfl per process, its modules the files
 * the trace's map records name, built again when the process's maps change.
 *
 * A snapshot comes just before the event it completes (same thread, event type and start). It is
 * unwound on arrival and kept until that event comes: the event's user frames are then replaced
 * by the unwound ones where those reach the thread's start or go deeper than the frame-pointer
 * walk. At most UNWIND_PENDING snapshots wait at once (the oldest gives way), so memory stays
 * bounded whatever the trace's length.
 *
 * Every event of the kinds a snapshot is taken for (futex waits, off-CPU intervals, probed
 * function returns, CPU samples) with a user stack is counted by how its stack was made.
 */
#ifndef GAPSCOPE_UNWIND_H
#define GAPSCOPE_UNWIND_H

#include <stdbool.h>
#include <linux/types.h>

#include "names.h"
#include "trace.h"

#define UNWIND_PENDING 256

/*
 * How the user stacks of the events a snapshot is taken for were made: captured, unwound from a
 * snapshot (complete: to the thread's or the program's start; truncated: unwinding ran off the
 * snapshot's end; stopped: anywhere else); fp_only, frame pointers alone (fp_complete of them
 * reaching the start by name).
 */
struct stack_counts {
	__u64 captured, complete, truncated, stopped;
	__u64 fp_only, fp_complete;
	__u64 over_budget; /* snapshots left as they came: past unwinder__set_budget()'s rate */
};

struct unwinder;

/* enabled false: snapshots are ignored, no file is opened (fuzzing). NULL when out of memory. */
struct unwinder *unwinder__new(struct names *nm, bool enabled);
void unwinder__free(struct unwinder *u);

struct report_archive;
/* Files record --archive kept, read for mapped files missing here or of another build. */
void unwinder__set_archive(struct unwinder *u, struct report_archive *a);
/*
 * At most PER_S snapshots unwound a second of the trace's clock (a second's worth may come at
 * once); the rest are left as they came, their events keeping the frame-pointer stack, and
 * counted (over_budget). 0: every one. For a live analysis, whose unwinding is most of its CPU.
 */
void unwinder__set_budget(struct unwinder *u, unsigned int per_s);

void unwinder__add_map(struct unwinder *u, const struct gs_rec_map *m);
/* A process that is gone: its maps and its Dwfl (its modules' files, their CFI) let go of. */
void unwinder__forget(struct unwinder *u, __u32 tgid);
/*
 * Lets go of what was read of the files unwound through (their unwind tables): every process's
 * Dwfl ends, built again at its next snapshot. Before names__release_pages(), which ends the
 * files' handles that these Dwfls hold.
 */
void unwinder__release_pages(struct unwinder *u);

/*
 * One record of the ordered stream: a snapshot is unwound and kept; an event is returned with
 * its user stack from its snapshot where that is better (a copy valid until the next call), else
 * as it came, and counted.
 */
const struct gs_hdr *unwinder__feed(struct unwinder *u, const struct gs_hdr *h);

const struct stack_counts *unwinder__counts(const struct unwinder *u);

#endif
