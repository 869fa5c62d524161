/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pids at the boundary of the recorder's pid namespace. The BPF side and the trace speak the
 * kernel's global ids; /proc, kill(2) and the uprobe attach calls speak the recorder's own. In
 * the initial namespace they are the same; in a container (unshare --pid, Docker) each crossing
 * goes through bpf/nspid.bpf.c.
 */
#ifndef GAPSCOPE_PIDNS_H
#define GAPSCOPE_PIDNS_H

#include <stdbool.h>
#include <sys/types.h>

struct nspid_bpf;

struct pidns {
	bool nested; /* the recorder's pid namespace is not the initial one */
	struct nspid_bpf *skel;
};

/* Whether the recorder runs in the initial pid namespace (or cannot tell): its ids are global. */
bool pidns__initial(void);
/* Finds whether the recorder runs in a pid namespace and loads the translator there. -errno. */
int pidns__open(struct pidns *ns);
void pidns__close(struct pidns *ns);
/* The global id of thread or process PID of our namespace (TGID: of its process); 0: none. */
pid_t pidns__global(const struct pidns *ns, pid_t pid, bool tgid);
/* Our namespace's id of global thread or process PID (TGID: of its process); 0: none. */
pid_t pidns__local(const struct pidns *ns, pid_t pid, bool tgid);

#endif
