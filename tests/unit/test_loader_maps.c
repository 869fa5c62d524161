// SPDX-License-Identifier: GPL-2.0
/*
 * The /proc/PID/maps iterator (loader/procmaps.c): every field of a synthetic maps text, paths
 * with spaces and "(deleted)", anonymous mappings and lines not in the format; then
 * /proc/self/maps, where this test's own code and stack must be found with the right permissions.
 */
#include <errno.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "procmaps.h"
#include "testlib.h"

static const char text[] =
	"55d0c0a00000-55d0c0a02000 r--p 00000000 fd:01 1311 /usr/bin/true\n"
	"55d0c0a02000-55d0c0a07000 r-xp 00002000 fd:01 1311 /usr/bin/true\n"
	"55d0c1000000-55d0c1021000 rw-p 00000000 00:00 0                          [heap]\n"
	"this line is not a mapping\n"
	"7f0000000000-7f0000001000 rw-s 00001000 00:05 4242 /dev/shm/a file (deleted)\n"
	"7f0000002000-7f0000003000 ---p 00000000 00:00 0\n"
	"7ffd1e5f6000-7ffd1e5f8000 r-xp 00000000 00:00 0                          [vdso]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n";

static void synthetic(void)
{
	FILE *f = fmemopen((void *)text, sizeof(text) - 1, "r");
	struct procmaps_entry e;
	struct procmaps it;

	CHECK(f, "fmemopen");
	procmaps__from_file(&it, f);

	CHECK(procmaps__next(&it, &e), "first line");
	CHECK_EQ_U64(e.start, 0x55d0c0a00000ull);
	CHECK_EQ_U64(e.end, 0x55d0c0a02000ull);
	CHECK_EQ_U64(e.prot, PROCMAPS_R);
	CHECK_EQ_U64(e.pgoff, 0);
	CHECK_EQ_U64(e.dev, makedev(0xfd, 1));
	CHECK_EQ_U64(e.ino, 1311);
	CHECK(!e.shared, "private");
	CHECK(!strcmp(e.path, "/usr/bin/true"), "path %s", e.path);

	CHECK(procmaps__next(&it, &e), "text");
	CHECK_EQ_U64(e.prot, PROCMAPS_R | PROCMAPS_X);
	CHECK_EQ_U64(e.pgoff, 0x2000);

	CHECK(procmaps__next(&it, &e), "heap");
	CHECK_EQ_U64(e.prot, PROCMAPS_R | PROCMAPS_W);
	CHECK_EQ_U64(e.ino, 0);
	CHECK(!strcmp(e.path, "[heap]"), "aligned name without its padding: '%s'", e.path);

	/* The line that is not a mapping is passed over. */
	CHECK(procmaps__next(&it, &e), "shared file");
	CHECK_EQ_U64(e.start, 0x7f0000000000ull);
	CHECK(e.shared, "shared");
	CHECK_EQ_U64(e.pgoff, 0x1000);
	CHECK_EQ_U64(e.dev, makedev(0, 5));
	CHECK(!strcmp(e.path, "/dev/shm/a file (deleted)"), "path with spaces: '%s'", e.path);

	CHECK(procmaps__next(&it, &e), "anonymous");
	CHECK_EQ_U64(e.prot, 0);
	CHECK(!strcmp(e.path, ""), "no path: '%s'", e.path);

	CHECK(procmaps__next(&it, &e), "vdso");
	CHECK(!strcmp(e.path, "[vdso]"), "'%s'", e.path);
	CHECK(procmaps__next(&it, &e), "vsyscall");
	CHECK_EQ_U64(e.start, 0xffffffffff600000ull);
	CHECK_EQ_U64(e.prot, PROCMAPS_X);
	CHECK(!procmaps__next(&it, &e), "the end");
	CHECK(!procmaps__next(&it, &e), "still the end");
	procmaps__close(&it);
	fclose(f);
}

static void self(void)
{
	__u64 code = (__u64)(unsigned long)&self, stack = (__u64)(unsigned long)&code;
	bool code_found = false, stack_found = false;
	struct procmaps_entry e;
	struct procmaps it;
	__u64 last_end = 0;
	int n = 0;

	CHECK(!procmaps__open(&it, getpid()), "open /proc/self/maps");
	while (procmaps__next(&it, &e)) {
		n++;
		CHECK(e.start < e.end, "%llx-%llx", (unsigned long long)e.start,
		      (unsigned long long)e.end);
		CHECK(e.start >= last_end, "in address order");
		last_end = e.end;
		if (code >= e.start && code < e.end) {
			code_found = true;
			CHECK(e.prot == (PROCMAPS_R | PROCMAPS_X), "code r-x, got %u", e.prot);
			CHECK(e.ino != 0, "code from a file");
			CHECK(strstr(e.path, "test_loader_maps"), "code in %s", e.path);
		}
		if (stack >= e.start && stack < e.end) {
			stack_found = true;
			CHECK(e.prot == (PROCMAPS_R | PROCMAPS_W), "stack rw-, got %u", e.prot);
			CHECK(!strcmp(e.path, "[stack]"), "stack in '%s'", e.path);
		}
	}
	procmaps__close(&it);
	CHECK(n > 5, "%d mappings", n);
	CHECK(code_found && stack_found, "code %d stack %d", code_found, stack_found);
	CHECK(procmaps__open(&it, 0x7ffffffe) == -ENOENT, "no such process");
}

int main(void)
{
	synthetic();
	self();
	TEST_PASS();
}
