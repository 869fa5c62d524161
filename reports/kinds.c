// SPDX-License-Identifier: GPL-2.0
/*
 * The names of the analysis' kinds and states, and what the system call a thread blocked in
 * says about its wait (x86-64 numbers, from the off-CPU event's syscall field).
 */
#include <stddef.h>

#include "analysis.h"
#include "kinds.h"
#include "offcpu.h"

const char *blame_kind__name(enum blame_kind k)
{
	static const char *const names[BK_MAX] = {
		[BK_LOCK] = "lock",	      [BK_COND] = "cond",	    [BK_IO] = "io",
		[BK_SLEEP] = "sleep",	      [BK_PROBE] = "malloc_trim",   [BK_CUDA] = "cuda",
		[BK_ON_CPU] = "on_cpu",	      [BK_PREEMPTED] = "preempted", [BK_OTHER] = "other",
		[BK_THROTTLED] = "throttled", [BK_RUNNABLE] = "runnable",
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
 * futex waits whose futex event is missing (a condition wait), and a few named only.
 */
static const struct {
	int nr;
	const char *name;
	enum blame_kind kind;
} syscalls[] = {
	{ 0, "read", BK_IO },
	{ 1, "write", BK_IO },
	{ 7, "poll", BK_IO },
	{ 9, "mmap", BK_OTHER },
	{ 10, "mprotect", BK_OTHER },
	{ 11, "munmap", BK_OTHER },
	{ 16, "ioctl", BK_OTHER },
	{ 17, "pread64", BK_IO },
	{ 18, "pwrite64", BK_IO },
	{ 19, "readv", BK_IO },
	{ 20, "writev", BK_IO },
	{ 23, "select", BK_IO },
	{ 28, "madvise", BK_OTHER },
	{ 35, "nanosleep", BK_SLEEP },
	{ 40, "sendfile", BK_IO },
	{ 42, "connect", BK_IO },
	{ 43, "accept", BK_IO },
	{ 44, "sendto", BK_IO },
	{ 45, "recvfrom", BK_IO },
	{ 46, "sendmsg", BK_IO },
	{ 47, "recvmsg", BK_IO },
	{ 61, "wait4", BK_OTHER },
	{ 74, "fsync", BK_IO },
	{ 75, "fdatasync", BK_IO },
	{ 202, "futex", BK_COND },
	{ 208, "io_getevents", BK_IO },
	{ 230, "clock_nanosleep", BK_SLEEP },
	{ 232, "epoll_wait", BK_IO },
	{ 257, "openat", BK_IO },
	{ 270, "pselect6", BK_IO },
	{ 271, "ppoll", BK_IO },
	{ 275, "splice", BK_IO },
	{ 281, "epoll_pwait", BK_IO },
	{ 288, "accept4", BK_IO },
	{ 295, "preadv", BK_IO },
	{ 296, "pwritev", BK_IO },
	{ 426, "io_uring_enter", BK_IO },
	{ 441, "epoll_pwait2", BK_IO },
	{ 449, "futex_waitv", BK_COND },
	{ 455, "futex_wait", BK_COND },
};

enum blame_kind syscall__kind(int nr)
{
	for (size_t i = 0; i < sizeof(syscalls) / sizeof(syscalls[0]); i++)
		if (syscalls[i].nr == nr)
			return syscalls[i].kind;
	return BK_OTHER;
}

const char *syscall__name(int nr)
{
	for (size_t i = 0; i < sizeof(syscalls) / sizeof(syscalls[0]); i++)
		if (syscalls[i].nr == nr)
			return syscalls[i].name;
	return NULL;
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
