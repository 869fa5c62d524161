/* SPDX-License-Identifier: GPL-2.0 */
/* Process and thread life: fork, exit, names, exec, executable mappings (late attach). */
#ifndef GAPSCOPE_PROC_H
#define GAPSCOPE_PROC_H

#include "gapscope.h"

#define PROC_WATCH_MAX 8
#define PROC_WATCH_LEN 32
#define PROC_NAME_LEN  64
#define PROC_PATH_LEN  256

struct fork_event {
	struct gs_hdr h; /* the parent thread */
	__u32 child_tid;
	__u32 child_tgid;
	char comm[GS_COMM_LEN];
};

struct exit_event {
	struct gs_hdr h;
	__u32 exit_code;
	__u32 group_dead;
};

struct comm_event {
	struct gs_hdr h; /* tid/tgid of the renamed thread (not necessarily current) */
	char comm[GS_COMM_LEN];
};

struct exec_event {
	struct gs_hdr h;
	__u32 old_tid;
	__u32 pad;
	char comm[GS_COMM_LEN];
	char filename[PROC_PATH_LEN];
};

#define MMAP_F_WATCHED (1u << 0) /* file name matches a watched library prefix */
#define MMAP_F_STOPPED \
	(1u << 1) /* the process was sent SIGSTOP: the recorder must attach to
				   * this file, then send SIGCONT */

struct mmap_event {
	struct gs_hdr h;
	__u64 addr;
	__u64 len;
	__u64 pgoff; /* in bytes */
	__u64 dev;   /* kernel dev_t: major << 20 | minor */
	__u64 ino;
	__u32 prot;
	__u32 flags; /* MMAP_F_* */
	__s32 fd;
	__u32 pad;
	char name[PROC_NAME_LEN]; /* file name (dentry), not the full path */
};

/* A watched library name prefix, e.g. "libcuda.so". */
struct watch_name {
	char prefix[PROC_WATCH_LEN];
	__u32 len;
};

/* Files the recorder has attached to, per process: (kernel dev_t, inode, global tgid). */
struct file_key {
	__u64 dev;
	__u64 ino;
	__u32 tgid;
	__u32 pad;
};
#define PROC_ATTACHED_MAX 8192 /* (process, file) pairs */

#endif
