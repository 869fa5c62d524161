/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A kernel-symbol table: addresses to function names. The recorder builds it from /proc/kallsyms
 * to name the kernel frames it writes; a reader builds one from the trace's GS_REC_KSYM records,
 * adding (address, name) pairs one by one. Self-contained: libc only.
 */
#ifndef GAPSCOPE_KSYMS_H
#define GAPSCOPE_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct ksym {
	__u64 addr;
	const char *name;
	bool emitted; /* the recorder's mark: already written to the trace */
};

struct ksyms;

/* An empty table, for ksyms__add(); NULL when out of memory. */
struct ksyms *ksyms__new(void);
/* The text symbols of /proc/kallsyms; NULL when it cannot be read. */
struct ksyms *ksyms__load(void);
/* Adds a symbol (the name is copied). 0 or -ENOMEM. */
int ksyms__add(struct ksyms *k, __u64 addr, const char *name);
size_t ksyms__count(const struct ksyms *k);
/*
 * The function containing addr (the last symbol at or below it), or NULL. An add moves entries:
 * pointers from before an add do not survive it.
 */
struct ksym *ksyms__find(struct ksyms *k, __u64 addr);
/* The symbol named name (the first, by address) and where the next one starts, or NULL. */
struct ksym *ksyms__by_name(struct ksyms *k, const char *name, __u64 *end);
void ksyms__free(struct ksyms *k);

#endif
