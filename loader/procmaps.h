/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An iterator over the lines of /proc/PID/maps ("START-END PERMS PGOFF MAJ:MIN INODE [PATH]"),
 * the one parser of that format in the recorder.
 */
#ifndef GAPSCOPE_PROCMAPS_H
#define GAPSCOPE_PROCMAPS_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>

#define PROCMAPS_R 1
#define PROCMAPS_W 2
#define PROCMAPS_X 4

struct procmaps_entry {
	__u64 start, end;
	__u64 pgoff;
	__u64 ino;
	dev_t dev;	  /* makedev(major, minor) as the line shows them */
	__u32 prot;	  /* PROCMAPS_R | _W | _X */
	bool shared;	  /* 's' rather than 'p' */
	const char *path; /* "" for an anonymous mapping; valid until the next call */
};

struct procmaps {
	FILE *f;
	bool own;	    /* the iterator opened f and closes it */
	char dir[PATH_MAX]; /* /proc/PID, "" for a stream given */
	char line[PATH_MAX + 256];
	char real[PATH_MAX]; /* a path that held a newline, as map_files has it */
};

/* What /proc/.../stat says of a process or thread. */
struct procmaps_stat {
	char state; /* R, S, D, Z, ... */
	bool kthread;
	long threads;
	pid_t ppid;
	unsigned long long start; /* clock ticks after boot: with the pid, the process's identity */
};

/* DIR's stat (DIR: /proc/PID or /proc/PID/task/TID): 0 or -errno. */
int procmaps__stat(const char *dir, struct procmaps_stat *st);
/*
 * The /proc directory to read process PID's memory, maps and files through: /proc/PID, or where
 * its main thread has exited (pthread_exit; its task keeps no memory), /proc/PID/task/TID of a
 * thread that lives.
 */
void procmaps__dir(pid_t pid, char *buf, size_t len);
/* Opens PID's maps (procmaps__dir): 0, or -errno (the process is gone, or not ours to read). */
int procmaps__open(struct procmaps *m, pid_t pid);
/* Iterates over an open stream in the same format (a test's text through fmemopen()). */
void procmaps__from_file(struct procmaps *m, FILE *f);
/* The next mapping: true, or false at the end. Lines not in the format are passed over. */
bool procmaps__next(struct procmaps *m, struct procmaps_entry *e);
void procmaps__close(struct procmaps *m);

#endif
