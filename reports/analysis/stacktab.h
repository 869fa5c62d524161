/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stacks of the analysed events, each distinct (process, user frames, kernel frames) stored once
 * and named by a number. Timelines keep the number, not a pointer into the mapped trace: the
 * reader gives the trace's pages back as it goes, and a program has far fewer distinct stacks
 * than events, so memory follows its code paths, not the trace's length.
 */
#ifndef GAPSCOPE_STACKTAB_H
#define GAPSCOPE_STACKTAB_H

#include <linux/types.h>

#include "gapscope.h"

#define STACK_NONE 0 /* no stack */

struct stacktab;

struct stack_view {
	__u32 tgid;
	__u32 nu, nk;
	const __u64 *user; /* leaf first */
	const __u64 *kern; /* leaf first */
};

struct stacktab *stacktab__new(void);
void stacktab__free(struct stacktab *t);

/* The number of the record's stack (user and kernel frames), STACK_NONE if it has none. */
__u32 stacktab__add(struct stacktab *t, const struct gs_hdr *h);
/* A stack by its number; a view of STACK_NONE is empty. Valid until the next stacktab__add. */
struct stack_view stacktab__get(const struct stacktab *t, __u32 id);

#endif
