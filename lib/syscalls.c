// SPDX-License-Identifier: GPL-2.0
/* Per-architecture system call tables: see syscalls.h. */
#include <stddef.h>

#include "syscalls.h"

struct syscall_row {
	int nr;
	const char *name;
};

/* arch/x86/entry/syscalls/syscall_64.tbl */
static const struct syscall_row x86_64[] = {
	{ 0, "read" },
	{ 1, "write" },
	{ 7, "poll" },
	{ 9, "mmap" },
	{ 10, "mprotect" },
	{ 11, "munmap" },
	{ 16, "ioctl" },
	{ 17, "pread64" },
	{ 18, "pwrite64" },
	{ 19, "readv" },
	{ 20, "writev" },
	{ 23, "select" },
	{ 28, "madvise" },
	{ 35, "nanosleep" },
	{ 40, "sendfile" },
	{ 42, "connect" },
	{ 43, "accept" },
	{ 44, "sendto" },
	{ 45, "recvfrom" },
	{ 46, "sendmsg" },
	{ 47, "recvmsg" },
	{ 61, "wait4" },
	{ 74, "fsync" },
	{ 75, "fdatasync" },
	{ 202, "futex" },
	{ 208, "io_getevents" },
	{ 230, "clock_nanosleep" },
	{ 232, "epoll_wait" },
	{ 257, "openat" },
	{ 270, "pselect6" },
	{ 271, "ppoll" },
	{ 275, "splice" },
	{ 281, "epoll_pwait" },
	{ 288, "accept4" },
	{ 295, "preadv" },
	{ 296, "pwritev" },
	{ 426, "io_uring_enter" },
	{ 441, "epoll_pwait2" },
	{ 449, "futex_waitv" },
	{ 455, "futex_wait" },
};

/* include/uapi/asm-generic/unistd.h: arm64 has no poll, select or epoll_wait of its own. */
static const struct syscall_row arm64[] = {
	{ 4, "io_getevents" },	   { 22, "epoll_pwait" },   { 29, "ioctl" },
	{ 56, "openat" },	   { 63, "read" },	    { 64, "write" },
	{ 65, "readv" },	   { 66, "writev" },	    { 67, "pread64" },
	{ 68, "pwrite64" },	   { 69, "preadv" },	    { 70, "pwritev" },
	{ 71, "sendfile" },	   { 72, "pselect6" },	    { 73, "ppoll" },
	{ 76, "splice" },	   { 82, "fsync" },	    { 83, "fdatasync" },
	{ 98, "futex" },	   { 101, "nanosleep" },    { 115, "clock_nanosleep" },
	{ 202, "accept" },	   { 203, "connect" },	    { 206, "sendto" },
	{ 207, "recvfrom" },	   { 211, "sendmsg" },	    { 212, "recvmsg" },
	{ 215, "munmap" },	   { 222, "mmap" },	    { 226, "mprotect" },
	{ 233, "madvise" },	   { 242, "accept4" },	    { 260, "wait4" },
	{ 426, "io_uring_enter" }, { 441, "epoll_pwait2" }, { 449, "futex_waitv" },
	{ 455, "futex_wait" },
};

static const struct {
	const char *name;
	const struct syscall_row *rows;
	size_t n;
} tables[GS_ARCH_MAX] = {
	[GS_ARCH_X86_64] = { "x86_64", x86_64, sizeof(x86_64) / sizeof(x86_64[0]) },
	[GS_ARCH_ARM64] = { "arm64", arm64, sizeof(arm64) / sizeof(arm64[0]) },
};

enum gs_arch gs_arch__host(void)
{
#if defined(__aarch64__)
	return GS_ARCH_ARM64;
#else
	return GS_ARCH_X86_64;
#endif
}

const char *gs_arch__name(enum gs_arch a)
{
	return (unsigned int)a < GS_ARCH_MAX ? tables[a].name : "unknown";
}

const char *syscall__name(enum gs_arch arch, int nr)
{
	if ((unsigned int)arch >= GS_ARCH_MAX)
		return NULL;
	for (size_t i = 0; i < tables[arch].n; i++)
		if (tables[arch].rows[i].nr == nr)
			return tables[arch].rows[i].name;
	return NULL;
}
