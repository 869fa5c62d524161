// SPDX-License-Identifier: GPL-2.0
/* Pids across the recorder's pid namespace: see pidns.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "pidns.h"
#include "nspid.h"
#include "nspid.skel.h"

/* The initial pid namespace's inode (PROC_PID_INIT_INO, include/linux/proc_ns.h). */
#define PID_INIT_INO 0xeffffffcu

bool pidns__initial(void)
{
	struct stat st;

	return stat("/proc/self/ns/pid", &st) || st.st_ino == PID_INIT_INO;
}

int pidns__open(struct pidns *ns)
{
	int err;

	*ns = (struct pidns){};
	if (pidns__initial())
		return 0;
	ns->nested = true;
	ns->skel = nspid_bpf__open_and_load();
	if (!ns->skel) {
		err = -errno;
		fprintf(stderr,
			"gapscope: running in a pid namespace, and cannot load the pid translator "
			"(it needs Linux 6.13 or later): %s\n",
			strerror(-err));
		return err;
	}
	return 0;
}

void pidns__close(struct pidns *ns)
{
	nspid_bpf__destroy(ns->skel);
	ns->skel = NULL;
}

static pid_t translate(const struct pidns *ns, pid_t pid, bool to_global, bool tgid)
{
	struct pidns_args a = { .in = pid, .to_global = to_global };
	/* A syscall program's context is copied back into ctx_in (no ctx_out allowed). */
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &a, .ctx_size_in = sizeof(a));

	if (!ns || !ns->nested)
		return pid;
	if (!ns->skel || pid <= 0 ||
	    bpf_prog_test_run_opts(bpf_program__fd(ns->skel->progs.nspid_translate), &opts))
		return 0;
	return tgid ? a.tgid : a.pid;
}

pid_t pidns__global(const struct pidns *ns, pid_t pid, bool tgid)
{
	return translate(ns, pid, true, tgid);
}

pid_t pidns__local(const struct pidns *ns, pid_t pid, bool tgid)
{
	return translate(ns, pid, false, tgid);
}
