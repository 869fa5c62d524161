// SPDX-License-Identifier: GPL-2.0
/*
 * trapcount LIB SYM CMD [ARGS...]: runs CMD with a count-only uprobe (trapcount.bpf.c) on SYM
 * in LIB, for every process, and prints "trapcount HITS" when CMD is done; exits with CMD's
 * status. A benchmark's baseline: the trap without gapscope's work.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "trapcount.skel.h"

int main(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o);
	struct trapcount_bpf *skel;
	struct bpf_link *l;
	int status = 0;
	pid_t pid;

	if (argc < 4) {
		fprintf(stderr, "usage: trapcount LIB SYM CMD [ARGS...]\n");
		return 2;
	}
	skel = trapcount_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "trapcount: cannot load the program: %s\n", strerror(errno));
		return 1;
	}
	o.func_name = argv[2];
	l = bpf_program__attach_uprobe_opts(skel->progs.count_hit, -1, argv[1], 0, &o);
	if (!l) {
		fprintf(stderr, "trapcount: cannot attach to %s in %s: %s\n", argv[2], argv[1],
			strerror(errno));
		trapcount_bpf__destroy(skel);
		return 1;
	}
	pid = fork();
	if (pid == 0) {
		execvp(argv[3], &argv[3]);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		status = 1 << 8;
	bpf_link__destroy(l);
	fprintf(stderr, "trapcount %llu\n", (unsigned long long)skel->bss->hits);
	trapcount_bpf__destroy(skel);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
