// SPDX-License-Identifier: GPL-2.0
/*
 * The names of the analysis' kinds and states, and what the system call a thread blocked in
 * says about its wait: by the name syscalls.h gives its number on the trace's machine.
 */
#include <stddef.h>
#include <string.h>

#include "kinds.h"
#include "offcpu.h"

const char *blame_kind__name(enum blame_kind k)
{
	static const char *const names[BK_MAX] = {
		[BK_LOCK] = "lock",	      [BK_COND] = "cond",	    [BK_IO] = "io",
		[BK_SLEEP] = "sleep",	      [BK_PROBE] = "malloc_trim",   [BK_CUDA] = "cuda",
		[BK_ON_CPU] = "on_cpu",	      [BK_PREEMPTED] = "preempted", [BK_OTHER] = "other",
		[BK_THROTTLED] = "throttled", [BK_RUNNABLE] = "runnable",   [BK_CHILD] = "child",
		[BK_FAULT] = "fault",
	};

	return k < BK_MAX ? names[k] : "other";
}

const char *thread_state__name(enum thread_state s)
{
	return s == TS_BLOCKED ? "blocked" : s == TS_PREEMPTED ? "preempted" : "on_cpu";
}

/*
 * The system calls a thread commonly sleeps in: I/O (select, sendfile, sockets, fsync,
 * io_getevents, epoll, openat, pselect/ppoll, splice, preadv/pwritev, io_uring_enter), sleeps,
 * futex waits whose futex event is missing (a condition wait), a parent's wait for its child
 * (wait4, waitid: the child names it), and a few named only.
 */
static const struct {
	const char *name;
	enum blame_kind kind;
} kinds[] = {
	{ "read", BK_IO },	     { "write", BK_IO },	{ "poll", BK_IO },
	{ "pread64", BK_IO },	     { "pwrite64", BK_IO },	{ "readv", BK_IO },
	{ "writev", BK_IO },	     { "select", BK_IO },	{ "nanosleep", BK_SLEEP },
	{ "sendfile", BK_IO },	     { "connect", BK_IO },	{ "accept", BK_IO },
	{ "sendto", BK_IO },	     { "recvfrom", BK_IO },	{ "sendmsg", BK_IO },
	{ "recvmsg", BK_IO },	     { "fsync", BK_IO },	{ "fdatasync", BK_IO },
	{ "futex", BK_COND },	     { "io_getevents", BK_IO }, { "clock_nanosleep", BK_SLEEP },
	{ "epoll_wait", BK_IO },     { "openat", BK_IO },	{ "pselect6", BK_IO },
	{ "ppoll", BK_IO },	     { "splice", BK_IO },	{ "epoll_pwait", BK_IO },
	{ "accept4", BK_IO },	     { "preadv", BK_IO },	{ "pwritev", BK_IO },
	{ "io_uring_enter", BK_IO }, { "epoll_pwait2", BK_IO }, { "futex_waitv", BK_COND },
	{ "futex_wait", BK_COND },   { "wait4", BK_CHILD },	{ "waitid", BK_CHILD },
};

enum blame_kind syscall__kind(enum gs_arch arch, int nr)
{
	const char *name = syscall__name(arch, nr);

	for (size_t i = 0; name && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kinds[i].name, name))
			return kinds[i].kind;
	return BK_OTHER;
}

const char *offcpu__fd_name(__u16 flags)
{
	static const char *const names[OFFCPU_FD_MAX] = {
		[OFFCPU_FD_PIPE] = "pipe",	 [OFFCPU_FD_SOCKET] = "socket",
		[OFFCPU_FD_EVENTFD] = "eventfd", [OFFCPU_FD_FILE] = "file",
		[OFFCPU_FD_DEVICE] = "device",	 [OFFCPU_FD_EPOLL] = "epoll",
		[OFFCPU_FD_TIMERFD] = "timerfd", [OFFCPU_FD_SIGNALFD] = "signalfd",
		[OFFCPU_FD_OTHER] = "other fd",
	};
	unsigned int k = (flags & OFFCPU_FD_MASK) >> OFFCPU_FD_SHIFT;

	return k < OFFCPU_FD_MAX ? names[k] : NULL;
}
