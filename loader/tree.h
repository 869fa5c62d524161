/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The processes an attach records: every -p process, the members of --cgroup, and the
 * descendants of all of them as /proc shows them at the attach (a DataLoader's workers, a
 * launcher's children). Processes they fork later are followed by the BPF side (proc.bpf.c,
 * follow_children), which -p turns on.
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
};

/*
 * Collects the processes: 0, or -errno with a one-line reason in err. cgroup is a path under
 * /sys/fs/cgroup (absolute there, or relative to it), or NULL.
 */
int proc_tree__collect(struct proc_tree *t, const pid_t *pids, int npids, const char *cgroup,
		       char *err, size_t errlen);
void proc_tree__free(struct proc_tree *t);

#endif
