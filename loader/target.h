/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The recorded process: a command launched stopped before exec (released once the probes are
 * attached), or a running process (-p); its guardian; its end and exit status.
 */
#ifndef GAPSCOPE_TARGET_H
#define GAPSCOPE_TARGET_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>

struct target {
	pid_t pid;     /* in the recorder's pid namespace */
	pid_t gpid;    /* the kernel's id: the BPF side's and the trace's (pidns.h) */
	bool launched; /* by us, not -p */
	bool released; /* told to exec */
	bool gone;     /* reaped, or (-p) exited */
	bool exec_failed;
	bool leader_gone;  /* -p: its main thread has exited (pthread_exit), others live */
	bool pipe_ignored; /* SIGPIPE was ignored when we started: the target inherits that */
	int status;	   /* wait status of a launched target */
	struct rusage ru;
	char exe[PATH_MAX]; /* the launched command's file */
	int go_fd, exec_fd; /* release, and exec errors back */
	int pidfd;	    /* -p: readable when the process exits */
	pid_t guardian;
	int guardian_sock;
};

/*
 * Checks before anything is started: CMD can be run (its file found as execvp() would) or PID
 * exists. 0, or -errno said why.
 */
int target__check(struct target *t, char **cmd, pid_t pid);
/*
 * Forks the guardian: a process that sends the target SIGCONT should the recorder die while the
 * BPF side holds the target stopped. It must start before any BPF fd exists (it would keep the
 * programs alive). For launched targets only.
 */
int target__start_guardian(struct target *t);
/* Forks CMD, stopped before exec until target__release; ORIG_MASK is the signal mask it gets. */
int target__launch(struct target *t, char **cmd, const sigset_t *orig_mask);
/* Records a running process instead. */
int target__attach(struct target *t, pid_t pid);
/* Lets a launched target exec; -errno (said why) when exec failed, the child reaped. */
int target__release(struct target *t, const char *name);
/* A pollable fd for the target's end (-p), or -1. */
int target__exit_fd(struct target *t);
/* After SIGCHLD: whether a launched target exited (then reaped, its status kept). */
bool target__reap(struct target *t);
/* Waits for a launched target to exit, as without the recorder. */
void target__wait(struct target *t);
/* Lets go of the target: a launched one never released exits without running the command. */
void target__close(struct target *t);
/* The guardian leaves quietly: every stopped thread got its SIGCONT already. */
void target__stop_guardian(struct target *t);
/*
 * The recorder's exit code: 1 when the recording failed (ERR), whatever the target did; else the
 * launched target's own (127 when it could not be run; a death by signal re-raised, without a
 * core dump, so that a shell sees 128 + the signal); 0 for -p.
 */
int target__exit_code(struct target *t, int err, sigset_t *orig_mask);

#endif
