/* SPDX-License-Identifier: GPL-2.0 */
/* A pid between the recorder's pid namespace and the kernel's (global) ids: nspid.bpf.c. */
#ifndef GAPSCOPE_NSPID_H
#define GAPSCOPE_NSPID_H

#include "gapscope.h"

struct pidns_args {
	__s32 in;	 /* a pid in the caller's namespace, or a global one */
	__u32 to_global; /* 1: IN is the caller's, 0: IN is global */
	__s32 pid;	 /* out: the thread's id on the other side, 0 where it has none */
	__s32 tgid;	 /* out: its process's */
};

#endif
