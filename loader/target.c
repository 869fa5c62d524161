// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "privs.h"
#include "procmaps.h"
#include "resolve.h"
#include "target.h"

/* The name of the process at /proc/PID DIR, for messages. */
static const char *comm_of(const char *dir, char *buf, size_t len)
{
	char path[96];
	FILE *f;

	snprintf(path, sizeof(path), "%s/comm", dir);
	f = fopen(path, "re");
	if (!f || !fgets(buf, len, f))
		snprintf(buf, len, "?");
	if (f)
		fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

int target__check(struct target *t, char **cmd, pid_t pid)
{
	char p[64], comm[32];
	struct procmaps_stat ps;
	struct stat st;
	int err;

	*t = (struct target){ .go_fd = -1, .exec_fd = -1, .pidfd = -1, .guardian_sock = -1 };
	if (cmd && (err = resolve__executable(cmd[0], t->exe, sizeof(t->exe)))) {
		fprintf(stderr, "gapscope: cannot run %s: %s\n", cmd[0], strerror(-err));
		return err;
	}
	if (cmd)
		return 0;
	snprintf(p, sizeof(p), "/proc/%d", pid);
	if (stat(p, &st) || procmaps__stat(p, &ps)) {
		fprintf(stderr, "gapscope: cannot attach to pid %d: no such process\n", pid);
		return -ESRCH;
	}
	if (ps.kthread) {
		fprintf(stderr,
			"gapscope: cannot attach to pid %d: a kernel thread (%s), no program to record\n",
			pid, comm_of(p, comm, sizeof(comm)));
		return -EINVAL;
	}
	/* A zombie whose threads all ended; one whose main thread alone ended is attached by another. */
	if ((ps.state == 'Z' && ps.threads < 2) || ps.state == 'X') {
		fprintf(stderr,
			"gapscope: cannot attach to pid %d: it has exited (a zombie its parent has "
			"not reaped)\n",
			pid);
		return -ESRCH;
	}
	t->leader_gone = ps.state == 'Z';
	return privs__may_trace(pid);
}

/*
 * The guardian. A launched target is stopped (SIGSTOP from BPF) while the recorder attaches to a
 * library it maps late; a recorder killed in that moment (SIGKILL, OOM) would leave it stopped
 * for good. The guardian receives a pidfd of the target over a socket and blocks reading that
 * socket. A clean recorder says 'q' first; an EOF without it means the recorder died: SIGCONT to
 * the target (through the pidfd, so never to a reused pid).
 */
static void guardian_main(int sock)
{
	char c = 0, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl)
	};
	struct cmsghdr *cm;
	int pidfd = -1;
	ssize_t n;

	while ((n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	if (n <= 0)
		_exit(0); /* the recorder went before it started a target */
	cm = CMSG_FIRSTHDR(&msg);
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
		memcpy(&pidfd, CMSG_DATA(cm), sizeof(int));
	while ((n = read(sock, &c, 1)) < 0 && errno == EINTR)
		;
	if ((n <= 0 || c != 'q') && pidfd >= 0)
		syscall(SYS_pidfd_send_signal, pidfd, SIGCONT, NULL, 0);
	_exit(0);
}

int target__start_guardian(struct target *t)
{
	int sv[2], err;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		goto fail;
	t->guardian = fork();
	if (t->guardian < 0) {
		err = errno;
		close(sv[0]);
		close(sv[1]);
		errno = err;
		goto fail;
	}
	if (t->guardian == 0) {
		close(sv[0]);
		/* Nothing of the recorder's but the socket: no trace fd, no terminal input. */
		if (sv[1] != 3) {
			dup2(sv[1], 3);
			close(sv[1]);
		}
		syscall(SYS_close_range, 4, ~0u, 0);
		guardian_main(3);
	}
	close(sv[1]);
	t->guardian_sock = sv[0];
	return 0;
fail:
	err = -errno;
	fprintf(stderr, "gapscope: cannot start the guardian: %s\n", strerror(errno));
	return err;
}

/* Hands the guardian a pidfd of the target. */
static int guardian_watch(struct target *t)
{
	int pidfd = syscall(SYS_pidfd_open, t->pid, 0), err = 0;
	char c = 'p', ctl[CMSG_SPACE(sizeof(int))] = {};
	struct iovec iov = { &c, 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl)
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	if (pidfd < 0)
		return -errno;
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &pidfd, sizeof(int));
	if (sendmsg(t->guardian_sock, &msg, MSG_NOSIGNAL) != 1)
		err = -errno;
	close(pidfd);
	return err;
}

/* The child: waits for the go byte, then execs; an exec error goes back on ep. */
static void child_main(char **cmd, int go, int ep, const sigset_t *orig_mask, bool pipe_ignored)
{
	char c;
	int e;

	sigprocmask(SIG_SETMASK, orig_mask, NULL);
	if (!pipe_ignored)
		signal(SIGPIPE, SIG_DFL); /* ignored by the recorder alone */
	if (read(go, &c, 1) != 1)
		_exit(127); /* the recorder gave up before starting us */
	privs__drop_for_exec();
	execvp(cmd[0], cmd);
	e = errno;
	if (write(ep, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

int target__launch(struct target *t, char **cmd, const sigset_t *orig_mask)
{
	int go[2], ep[2], err;

	if (pipe2(go, O_CLOEXEC) || pipe2(ep, O_CLOEXEC))
		goto fail;
	t->pid = fork();
	if (t->pid < 0)
		goto fail;
	if (t->pid == 0) {
		close(go[1]);
		close(ep[0]);
		child_main(cmd, go[0], ep[1], orig_mask, t->pipe_ignored);
	}
	close(go[0]);
	close(ep[1]);
	t->go_fd = go[1];
	t->exec_fd = ep[0];
	t->launched = true;
	err = guardian_watch(t);
	if (err)
		fprintf(stderr, "gapscope: cannot start the guardian: %s\n", strerror(-err));
	return err;
fail:
	err = -errno;
	fprintf(stderr, "gapscope: cannot start %s: %s\n", cmd[0], strerror(errno));
	return err;
}

int target__attach(struct target *t, pid_t pid)
{
	t->pid = pid;
	t->pidfd = syscall(SYS_pidfd_open, pid, 0);
	return 0;
}

int target__release(struct target *t, const char *name)
{
	char c = 1;
	int e;

	if (write(t->go_fd, &c, 1) != 1)
		return -errno;
	close(t->go_fd);
	t->go_fd = -1;
	t->released = true;
	if (read(t->exec_fd, &e, sizeof(e)) == sizeof(e)) {
		fprintf(stderr, "gapscope: cannot run %s: %s\n", name, strerror(e));
		waitpid(t->pid, &t->status, 0); /* 127, as a shell says it */
		t->gone = true;
		t->exec_failed = true;
		return -e;
	}
	close(t->exec_fd);
	t->exec_fd = -1;
	return 0;
}

int target__exit_fd(struct target *t)
{
	return t->pidfd;
}

bool target__reap(struct target *t)
{
	if (t->launched && wait4(t->pid, &t->status, WNOHANG, &t->ru) == t->pid)
		t->gone = true;
	return t->gone;
}

void target__wait(struct target *t)
{
	if (!t->launched || t->gone)
		return;
	while (wait4(t->pid, &t->status, 0, &t->ru) < 0 && errno == EINTR)
		;
	t->gone = true;
}

void target__close(struct target *t)
{
	if (t->go_fd >= 0)
		close(t->go_fd); /* the child sees EOF and exits without running the command */
	if (t->exec_fd >= 0)
		close(t->exec_fd);
	if (t->pidfd >= 0)
		close(t->pidfd);
	t->go_fd = t->exec_fd = t->pidfd = -1;
	if (t->launched && !t->gone) {
		waitpid(t->pid, &t->status, 0);
		t->gone = true;
	}
}

void target__stop_guardian(struct target *t)
{
	if (t->guardian > 0) {
		if (write(t->guardian_sock, "q", 1) != 1) {
			/* it is gone already */
		}
		close(t->guardian_sock);
		while (waitpid(t->guardian, NULL, 0) < 0 && errno == EINTR)
			;
		t->guardian = 0;
	}
}

int target__exit_code(struct target *t, int err, sigset_t *orig_mask)
{
	/* The recording's own failure comes first: a caller must not take a cut trace for whole. */
	if (err && !t->exec_failed)
		return 1;
	if (!t->launched || !t->released)
		return 0;
	if (WIFEXITED(t->status))
		return WEXITSTATUS(t->status);
	if (WIFSIGNALED(t->status)) {
		int sig = WTERMSIG(t->status);
		struct rlimit no_core = { 0, 0 };

		setrlimit(RLIMIT_CORE, &no_core);
		signal(sig, SIG_DFL);
		sigdelset(orig_mask, sig);
		sigprocmask(SIG_SETMASK, orig_mask, NULL);
		raise(sig);
		return 128 + sig;
	}
	return 1;
}
