// SPDX-License-Identifier: GPL-2.0
/*
 * A recording target for tests/cases/record_signals.sh: counts the SIGINTs it receives, and who
 * sent each, until a SIGTERM ends it. Standard signals are delivered lowest number first, so a
 * SIGINT sent before the SIGTERM has been counted by then. Prints "ready" once its handlers are
 * in place, then "sigints=N senders=PID,..." and exits with the code given (default 42).
 * With --die it keeps the default action of SIGINT instead, and dies of it.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t sigints, done;
static volatile pid_t senders[16];

static void on_sigint(int sig, siginfo_t *si, void *uc)
{
	if (sigints < 16)
		senders[sigints] = si->si_pid;
	sigints++;
}

static void on_sigterm(int sig)
{
	done = 1;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = on_sigint, .sa_flags = SA_SIGINFO };
	int code = argc > 1 && strcmp(argv[1], "--die") ? atoi(argv[1]) : 42;
	sigset_t block, none;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, NULL);
	if (argc > 1 && !strcmp(argv[1], "--die")) {
		printf("ready pid=%d\n", getpid());
		fflush(stdout);
		sigprocmask(SIG_UNBLOCK, &block, NULL);
		for (;;)
			pause();
	}
	sigaction(SIGINT, &sa, NULL);
	signal(SIGTERM, on_sigterm);
	printf("ready pid=%d\n", getpid());
	fflush(stdout);
	sigemptyset(&none);
	while (!done)
		sigsuspend(&none); /* the only place either signal is taken */
	printf("sigints=%d senders=", sigints);
	for (int i = 0; i < sigints && i < 16; i++)
		printf("%s%d", i ? "," : "", senders[i]);
	printf("\n");
	return code;
}
