/* SPDX-License-Identifier: GPL-2.0 */
/* Kernel function symbols from /proc/kallsyms, so the trace can name the kernel frames it holds. */
#ifndef GAPSCOPE_KSYMS_H
#define GAPSCOPE_KSYMS_H

#include <stdbool.h>
#include <linux/types.h>

struct ksym {
	__u64 addr;
	char *name;
	bool emitted;	/* already written to the trace */
};

struct ksyms;

struct ksyms *ksyms__load(void);
/* The function containing addr, or NULL. */
struct ksym *ksyms__find(struct ksyms *k, __u64 addr);
/* The text symbol named name (the first, by address) and where the next one starts, or NULL. */
struct ksym *ksyms__by_name(struct ksyms *k, const char *name, __u64 *end);
void ksyms__free(struct ksyms *k);

#endif
