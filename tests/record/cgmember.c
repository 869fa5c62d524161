// SPDX-License-Identifier: GPL-2.0
/*
 * A cgroup member for tests/cases/record_cgroup_*.sh: writes its pid into PROCS (a cgroup.procs
 * file), says "in PID" and then acts on each line of stdin:
 *   trim N   makes N malloc_trim(0) calls and says "trimmed"
 * and exits at the end of stdin.
 *
 * With --as PID it starts as that pid (a newcomer whose pid an earlier member had): a child made
 * with clone3's set_tid (Linux 5.5, CAP_CHECKPOINT_RESTORE), else by forking until the pid comes
 * round again (bounded); the child runs this program anew without --as, the parent waits for it
 * and exits as it did (a SIGTERM to the parent ends the child first).
 *
 * usage: cgmember [--as PID] PROCS
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/sched.h>

static volatile pid_t child;

/* --as: a signal that would end the parent ends the child first (the test's cleanup waits for
 * the parent only, and a cgroup with a process left cannot be removed). */
static void pass_on(int sig)
{
	if (child > 0)
		kill(child, sig);
}

/* A child with pid WANT running ARGV (this program anew): its pid, or -1. */
static pid_t spawn_as(pid_t want, char **argv)
{
	pid_t tid = want, p = -1;
	struct clone_args ca = {
		.exit_signal = SIGCHLD,
		.set_tid = (uintptr_t)&tid,
		.set_tid_size = 1,
	};

	p = syscall(SYS_clone3, &ca, sizeof(ca));
	if (p < 0 && errno != EEXIST) {
		/* No clone3 or no privilege for set_tid: the pids come round (32,768 by default). */
		for (long k = 0; k < 5000000; k++) {
			p = fork();
			if (!p && getpid() != want)
				_exit(0);
			if (p <= 0 || p == want)
				break;
			waitpid(p, NULL, 0);
		}
	}
	if (!p) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* the parent killed outright */
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	return p == want ? p : -1;
}

int main(int argc, char **argv)
{
	char line[64];
	FILE *f;
	int n;

	if (argc == 4 && !strcmp(argv[1], "--as")) {
		char *args[] = { argv[0], argv[3], NULL };
		struct sigaction sa = { .sa_handler = pass_on };
		pid_t p;
		int st;

		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		child = p = spawn_as(atoi(argv[2]), args);
		if (p < 0) {
			fprintf(stderr, "cgmember: cannot start as pid %s\n", argv[2]);
			return 3;
		}
		while (waitpid(p, &st, 0) < 0 && errno == EINTR)
			;
		return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: cgmember [--as PID] PROCS\n");
		return 2;
	}
	f = fopen(argv[1], "w");
	if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f)) {
		fprintf(stderr, "cgmember: cannot join %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	printf("in %d\n", getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "trim %d", &n) == 1) {
			for (int i = 0; i < n; i++)
				malloc_trim(0);
			printf("trimmed\n");
		}
		fflush(stdout);
	}
	return 0;
}
