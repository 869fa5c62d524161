// SPDX-License-Identifier: GPL-2.0
/*
 * System calls are named with the table of the machine the trace came from: a trace marked
 * arm64 (trace.h, TRACE_F_ARCH) names arm64's numbers, and one from before the mark reads as
 * x86-64.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kinds.h"
#include "syscalls.h"
#include "trace.h"

static int failures;

#define CHECK(cond)                                                                \
	do {                                                                       \
		if (!(cond)) {                                                     \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond); \
			failures++;                                                \
		}                                                                  \
	} while (0)

static int streq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* The arch a trace written with extra header FLAGS reads back as. */
static enum gs_arch written_as(__u32 flags)
{
	char path[] = "/tmp/test_syscalls-XXXXXX", err[256];
	int fd = mkstemp(path);
	struct trace_writer *w;
	struct trace_reader *r;
	enum gs_arch a = GS_ARCH_MAX;

	if (fd < 0)
		return a;
	close(fd);
	w = trace__create(path, true);
	if (w && (!flags || !trace__set_flags(w, flags)) && !trace__finish(w)) {
		r = trace__open(path, err, sizeof(err));
		if (r) {
			a = trace_flags__arch(trace__stats(r)->flags);
			trace__close(r);
		}
	}
	unlink(path);
	return a;
}

int main(void)
{
	/* The same number, two machines. */
	CHECK(streq(syscall__name(GS_ARCH_X86_64, 202), "futex"));
	CHECK(streq(syscall__name(GS_ARCH_ARM64, 202), "accept"));
	CHECK(streq(syscall__name(GS_ARCH_ARM64, 98), "futex"));
	CHECK(streq(syscall__name(GS_ARCH_ARM64, 63), "read"));
	CHECK(streq(syscall__name(GS_ARCH_X86_64, 0), "read"));
	CHECK(!syscall__name(GS_ARCH_ARM64, 0) || !streq(syscall__name(GS_ARCH_ARM64, 0), "read"));
	CHECK(!syscall__name(GS_ARCH_MAX, 0));

	/* What a wait means follows the name, whatever the number. */
	CHECK(syscall__kind(GS_ARCH_ARM64, 98) == BK_COND);
	CHECK(syscall__kind(GS_ARCH_X86_64, 98) == BK_OTHER); /* getrusage on x86-64 */
	CHECK(syscall__kind(GS_ARCH_ARM64, 101) == BK_SLEEP);
	CHECK(syscall__kind(GS_ARCH_X86_64, 35) == BK_SLEEP);
	CHECK(syscall__kind(GS_ARCH_ARM64, 207) == BK_IO);

	/* The writer marks this machine; a mark set later is read back; none reads as x86-64. */
	CHECK(written_as(0) == gs_arch__host());
	if (gs_arch__host() == GS_ARCH_X86_64)
		CHECK(written_as((__u32)GS_ARCH_ARM64 << TRACE_F_ARCH_SHIFT) == GS_ARCH_ARM64);
	CHECK(trace_flags__arch(TRACE_F_GPU_ACT | TRACE_F_PYCODE) == GS_ARCH_X86_64);
	CHECK(streq(gs_arch__name(GS_ARCH_ARM64), "arm64"));

	if (failures)
		return 1;
	printf("test_syscalls: ok\n");
	return 0;
}
