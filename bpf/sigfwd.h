/* SPDX-License-Identifier: GPL-2.0 */
/* The last kill(2) to a process group (or to every process) by each sender: sigfwd.bpf.c. */
#ifndef GAPSCOPE_SIGFWD_H
#define GAPSCOPE_SIGFWD_H

#include "gapscope.h"

#define SIGFWD_SENDERS 1024

struct group_kill {
	__s32 pid; /* kill(2)'s pid argument: 0, -1 or -pgid */
	__u32 sig;
	__s32 pgid; /* the sender's process group, for pid 0 */
	__u32 pad;
};

#endif
