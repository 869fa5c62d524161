/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Uprobe attachment's own state, shared by uprobes.c (libcuda, libc, --probe and the attaching)
 * and uprobes_tasks.c (an async runtime's task functions). Not an interface: uprobes.h is.
 */
#ifndef GAPSCOPE_UPROBES_INT_H
#define GAPSCOPE_UPROBES_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "uprobes.h"

/* One probe of a file, collected first, then attached together with the file's others. */
struct pending {
	__u32 id;
	__u32 family; /* enum gs_probe_family */
	__u32 kind;   /* enum cu_kind */
	bool ret;     /* with a return probe */
	bool lookup;  /* a hot lookup, attached as a link of its own (uprobes__retire_lookups) */
	bool retired; /* that lookup retired: not attached for processes that join later */
	__u64 offset;
	char *sym;
	int err;
};

struct file_probes {
	struct uprobes *u;
	struct pending *p;
	size_t n, cap;
	__u32 cu_lib; /* the file's slot in the BPF side's per-library tables */
};

/* A new probe of FP at OFFSET (its id taken), NULL: an alias of one already there, or no memory. */
struct pending *file_probes__add(struct file_probes *fp, __u32 family, const char *sym,
				 __u64 offset);
/* Every file but libc and libcuda: an async runtime's task functions, from its symbol table. */
void file_probes__add_tasks(struct file_probes *fp, const char *path, const char *shown);

#endif
