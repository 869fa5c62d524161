// SPDX-License-Identifier: GPL-2.0
/*
 * Library calls made by a process's descendants only: the parent loads the driver named by
 * argv[1] (dlopen: its children inherit the mapping), forks one child, prints "ready PID" and
 * waits for a line on stdin (a recorder attaches meanwhile); then that child and FORKED more,
 * forked after the line, each make N malloc_trim(0) and N cuStreamSynchronize calls. The parent
 * makes none. Prints "calls=C" (per kind, all children together) at the end.
 *
 * A child forked after the attach runs without its own probes until the recorder has put them
 * in place (loader/uprobes.h): for each, the parent prints "forked PID" and waits for a line on
 * stdin before the child calls, so that all of its calls are made probed.
 *
 * usage: treecalls LIBCUDA N FORKED
 */
#include <dlfcn.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int (*sync_fn)(void *);

static void calls(int n)
{
	for (int k = 0; k < n; k++) {
		malloc_trim(0);
		sync_fn(NULL);
		usleep(2000);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	void *h = argc == 4 ? dlopen(argv[1], RTLD_NOW) : NULL;
	int n = argc == 4 ? atoi(argv[2]) : 0, forked = argc == 4 ? atoi(argv[3]) : 0, go[2];
	char c, line[16];
	pid_t first;

	if (!h || !(sync_fn = (int (*)(void *))dlsym(h, "cuStreamSynchronize")) || pipe(go)) {
		fprintf(stderr, "usage: treecalls LIBCUDA N FORKED\n");
		return 2;
	}
	first = fork();
	if (!first) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		calls(n);
	}
	printf("ready %d\n", getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	if (write(go[1], "g", 1) != 1)
		return 1;
	for (int i = 0; i < forked; i++) {
		int probed[2];
		pid_t p;

		if (pipe(probed))
			return 1;
		p = fork();
		if (!p) {
			close(probed[1]);
			if (read(probed[0], &c, 1) != 1)
				_exit(1);
			calls(n);
		}
		close(probed[0]);
		printf("forked %d\n", p);
		fflush(stdout);
		if (p < 0 || !fgets(line, sizeof(line), stdin) || write(probed[1], "g", 1) != 1)
			return 1;
		close(probed[1]);
	}
	while (wait(NULL) > 0)
		;
	printf("calls=%d\n", n * (forked + 1));
	return 0;
}
