// SPDX-License-Identifier: GPL-2.0
/*
 * A fork storm for tests/cases/record_forkstorm.sh: loads the driver LIBCUDA, says "ready", and
 * at a line on stdin forks N children at once. Each child calls cuStreamSynchronize K times as
 * soon as it runs (before any recorder could have put its probes in place), then waits for
 * SIGUSR1 (the test sends it when the recorder says the child's probes are in place; children
 * are born with it blocked, so an early one waits for them) and makes M more calls. Says
 * "children=N" and "calls=C" (all of them) when all have exited.
 *
 * usage: forkstorm LIBCUDA N K M
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t probed;

static void on_usr1(int sig)
{
	(void)sig;
	probed = 1;
}

int main(int argc, char **argv)
{
	void *h = argc == 5 ? dlopen(argv[1], RTLD_NOW) : NULL;
	int (*sync_fn)(void *) = h ? (int (*)(void *))dlsym(h, "cuStreamSynchronize") : NULL;
	int n = argc == 5 ? atoi(argv[2]) : 0, k = argc == 5 ? atoi(argv[3]) : 0,
	    m = argc == 5 ? atoi(argv[4]) : 0, ok = 0, st;
	sigset_t usr1, none;
	char line[16];

	if (!sync_fn) {
		fprintf(stderr, "usage: forkstorm LIBCUDA N K M\n");
		return 2;
	}
	signal(SIGUSR1, on_usr1);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (int i = 0; i < n; i++) {
		pid_t p = fork();

		if (p < 0)
			return 1;
		if (p)
			continue;
		for (int j = 0; j < k; j++)
			sync_fn(NULL);
		sigemptyset(&none);
		alarm(60); /* the test has failed by then */
		while (!probed)
			sigsuspend(&none);
		for (int j = 0; j < m; j++)
			sync_fn(NULL);
		_exit(0);
	}
	while (wait(&st) > 0)
		ok += WIFEXITED(st) && !WEXITSTATUS(st);
	printf("children=%d\ncalls=%d\n", ok, ok * (k + m));
	return 0;
}
