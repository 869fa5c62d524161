/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The processes an attach records: every -p process, the members of --cgroup, and the
 * descendants of all of them as /proc shows them at the attach (a DataLoader's workers, a
 * launcher's children). Processes they fork later are followed by the BPF side (proc.bpf.c,
 * follow_children), which -p turns on.
 *
 * --cgroup is a unit, not a list taken once: its members are those of the cgroup and of every
 * cgroup below it (v2 services with Delegate=yes, a pod's per-container children), looked at
 * through a directory kept open (it follows a rename), every second (proc_tree__look). A process
 * is its pid and its start time: a newcomer whose pid an earlier member had is a newcomer all
 * the same, and a member is forgotten once it has left, so the set is the cgroup's now, not
 * every pid it ever held.
 */
#ifndef GAPSCOPE_TREE_H
#define GAPSCOPE_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* A process: its pid and its start time (/proc/PID/stat, clock ticks since boot). */
struct proc_member {
	pid_t pid;
	unsigned long long start;
};

struct proc_tree {
	pid_t *pids; /* the given ones first (-p in order, then the cgroup's), then descendants */
	size_t n;
	size_t given; /* how many of pids were given, not found as descendants */
	size_t cap;
	/* --cgroup: the path it had at the attach (for messages), NULL: none. */
	char *cgroup;
	int cgroup_fd;		     /* its directory, open where cgroup is set */
	struct proc_member *members; /* its processes and its children's at the last look, by pid */
	size_t nmembers, mcap;
	struct proc_member *joined; /* of those, the ones the look before did not have */
	size_t njoined, jcap;
};

/*
 * Collects the processes: 0, or -errno with a one-line reason in err. cgroup is a path under
 * /sys/fs/cgroup (absolute there, or relative to it), or NULL.
 */
int proc_tree__collect(struct proc_tree *t, const pid_t *pids, int npids, const char *cgroup,
		       char *err, size_t errlen);
void proc_tree__free(struct proc_tree *t);

/*
 * --cgroup: looks at the processes of the cgroup and of every cgroup below it (the recorder
 * itself left out). Those that were not there at the last look go to t->joined (t->njoined of
 * them), valid until the next look. Returns how many processes the cgroup has (0: none left),
 * -ENOENT where it was removed, another -errno where it cannot be read (t->joined then empty).
 */
long proc_tree__look(struct proc_tree *t);

/* Whether the process M is still running (not exited, its pid not another's since). */
bool proc_tree__alive(const struct proc_member *m);

#endif
