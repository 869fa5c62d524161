/* SPDX-License-Identifier: GPL-2.0 */
/* Function intervals by uprobe + uretprobe: malloc_trim, --probe LIB:SYM, --lock-holds. */
#ifndef GAPSCOPE_PROBE_H
#define GAPSCOPE_PROBE_H

#include "gapscope.h"

struct probe_event {
	struct gs_hdr h;	/* ts = entry; user stack taken at return (complete chain) */
	__u32 id;		/* probe id (GS_REC_PROBE names the function) */
	__u32 pad;
	__u64 dur_ns;
	__u64 caller;		/* return address, read at entry */
	__u64 arg0;
	__u64 ret;
};

#endif
