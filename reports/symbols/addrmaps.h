/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The address spaces of the traced processes as the trace records them: per process, its file
 * mappings, sorted and never overlapping. A mapping added over others cuts away what it overlaps,
 * as mmap(2) replaces them, so a lookup finds the latest mapping at an address.
 */
#ifndef GAPSCOPE_ADDRMAPS_H
#define GAPSCOPE_ADDRMAPS_H

#include <stdbool.h>
#include <linux/types.h>

struct ctx_map {
	__u64 start, end; /* [start, end) */
	__u64 pgoff;	  /* file offset of start */
	__u64 ino;
	__u32 prot;	    /* PROT_*; 0 for an mmap event */
	__u32 build_id_len; /* 0: unknown */
	__u8 build_id[32];
	const char *path; /* full path (map record), or the file name alone (mmap event) */
	bool from_mmap;	  /* known only from an mmap event */
};

struct addrmaps;

struct addrmaps *addrmaps__new(void);
void addrmaps__free(struct addrmaps *a);
/* Adds a mapping of tgid (path not copied: the caller keeps it alive); 0 or -ENOMEM. */
int addrmaps__add(struct addrmaps *a, __u32 tgid, const struct ctx_map *m);
/* The mapping of tgid holding addr, NULL if none; valid until the next add. */
const struct ctx_map *addrmaps__find(const struct addrmaps *a, __u32 tgid, __u64 addr);

/* A mapping of tgid of the file with inode ino (the first), NULL if none; valid until the next
 * add. */
const struct ctx_map *addrmaps__find_ino(const struct addrmaps *a, __u32 tgid, __u64 ino);

#endif
