/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The processes an attach records: every -p process, the members of --cgroup, and the
 * descendants of all of them as /proc shows them at the attach (a DataLoader's workers, a
 * launcher's children). Processes they fork later are followed by the BPF side (proc.bpf.c,
 * follow_children), which -p turns on. A process that joins the cgroup later (a container's
 * `exec`, a service's new worker) comes to light in its cgroup.procs: proc_tree__joined().
 */
#ifndef GAPSCOPE_TREE_H
#define GAPSCOPE_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct proc_tree {
	pid_t *pids; /* the given ones first (-p in order, then the cgroup's), then descendants */
	size_t n;
	size_t given; /* how many of pids were given, not found as descendants */
	size_t cap;
	char *cgroup_procs; /* --cgroup: its cgroup.procs file; NULL: none */
};

/*
 * Collects the processes: 0, or -errno with a one-line reason in err. cgroup is a path under
 * /sys/fs/cgroup (absolute there, or relative to it), or NULL.
 */
int proc_tree__collect(struct proc_tree *t, const pid_t *pids, int npids, const char *cgroup,
		       char *err, size_t errlen);
void proc_tree__free(struct proc_tree *t);

/*
 * --cgroup: the processes in the cgroup now that the tree does not hold yet (joined since the
 * attach or the last call), added to it and written to JOINED, at most MAX; how many. 0 without
 * --cgroup, or where the cgroup is gone.
 */
size_t proc_tree__joined(struct proc_tree *t, pid_t *joined, size_t max);

#endif
