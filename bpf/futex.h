/* SPDX-License-Identifier: GPL-2.0 */
/* Futex waits from the futex syscalls: one event per wait, at its return. */
#ifndef GAPSCOPE_FUTEX_H
#define GAPSCOPE_FUTEX_H

#include "gapscope.h"

enum futex_sys {
	FUTEX_SYS_FUTEX = 0, /* futex(2) */
	FUTEX_SYS_WAIT,	     /* futex_wait(2), Linux 6.7 */
	FUTEX_SYS_WAITV,     /* futex_waitv(2), Linux 5.16 */
};

struct futex_event {
	struct gs_hdr h; /* ts = entry */
	__u64 uaddr;	 /* futex_waitv: the first waiter's address */
	__u64 dur_ns;
	__u32 op;    /* command, FUTEX_PRIVATE_FLAG/FUTEX_CLOCK_REALTIME masked off */
	__u32 val;   /* the value the caller expected */
	__u32 word;  /* the futex word at entry */
	__u32 owner; /* lock owner tid if a lock (see futex.bpf.c), else 0 */
	__s32 ret;
	__u32 sys; /* enum futex_sys */
	__u32 nr;  /* futex_waitv: number of futexes */
	__u32 pad;
};

#endif
