/* SPDX-License-Identifier: GPL-2.0 */
/* CPU samples of the target's threads: software cpu-clock, user + kernel stacks. */
#ifndef GAPSCOPE_SAMPLE_H
#define GAPSCOPE_SAMPLE_H

#include "gapscope.h"

struct sample_event {
	struct gs_hdr h;	/* followed by the stacks */
	__u64 ip;		/* interrupted instruction (user or kernel) */
};

#endif
