/* SPDX-License-Identifier: GPL-2.0 */
/* Function intervals by uprobe + uretprobe: malloc_trim, --probe LIB:SYM; --lock-holds. */
#ifndef GAPSCOPE_PROBE_H
#define GAPSCOPE_PROBE_H

#include "gapscope.h"

struct probe_event {
	struct gs_hdr h; /* ts = entry; user stack taken at return (complete chain) */
	__u32 id;	 /* probe id (GS_REC_PROBE names the function) */
	__u32 pad;
	__u64 dur_ns;
	__u64 caller; /* return address, read at entry */
	__u64 arg0;
	__u64 ret;
};

/*
 * --lock-holds: one event per pthread mutex hold, emitted at pthread_mutex_unlock with the
 * user stack there (the holder's code). Costs three traps per lock/unlock pair, so opt-in: the
 * default recording sees only contended locks, through the futex syscalls.
 */
struct lock_event {
	struct gs_hdr h; /* ts = acquired (pthread_mutex_lock returned 0) */
	__u64 mutex;
	__u64 wait_ns;	     /* pthread_mutex_lock entry to return */
	__u64 hold_ns;	     /* acquired to pthread_mutex_unlock entry */
	__u64 lock_caller;   /* return address of the pthread_mutex_lock call */
	__u64 unlock_caller; /* return address of the pthread_mutex_unlock call */
};

#endif
