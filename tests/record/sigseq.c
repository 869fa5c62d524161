// SPDX-License-Identifier: GPL-2.0
/*
 * A recording target for tests/cases/record_hostile.sh: waits for the signals named on its
 * command line (USR1, USR2, WINCH, RTMIN, ... as numbers), in that order, each with
 * sigwaitinfo(), and prints "got N" for each, then exits 0. It prints "ready" once they are all
 * blocked, so that none can end it before it waits.
 * Usage: sigseq SIG...
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	sigset_t set;

	sigemptyset(&set);
	for (int i = 1; i < argc; i++)
		sigaddset(&set, atoi(argv[i]));
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready\n");
	fflush(stdout);
	for (int i = 1; i < argc; i++) {
		int want = atoi(argv[i]), got = sigwaitinfo(&set, NULL);

		printf("got %d\n", got);
		fflush(stdout);
		if (got != want)
			return 1;
	}
	return 0;
}
