// SPDX-License-Identifier: GPL-2.0
/*
 * Loads build/bpf/smoke.bpf.o through its skeleton into the running kernel, attaches the
 * sys_enter_getpid tracepoint filtered to this process, makes a known number of getpid()
 * calls and checks that the kernel counted exactly that many.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "smoke.skel.h"
#include "testlib.h"

int main(void)
{
	struct smoke_bpf *skel = NULL;
	const int n = 1000;
	int err;

	test_need_root("loads a BPF program");
	libbpf_set_print(NULL);

	/* Tracepoint ids live in tracefs, which a fresh machine may not have mounted. */
	struct stat st;
	if (stat("/sys/kernel/tracing/events", &st) != 0)
		CHECK(mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0,
		      "mount tracefs: %s", strerror(errno));

	skel = smoke_bpf__open();
	CHECK(skel != NULL, "open skeleton: %s", strerror(errno));
	skel->rodata->target_tgid = getpid();
	err = smoke_bpf__load(skel);
	CHECK(err == 0, "load: %s", strerror(-err));
	err = smoke_bpf__attach(skel);
	CHECK(err == 0, "attach: %s", strerror(-err));

	for (int i = 0; i < n; i++)
		syscall(SYS_getpid);

	smoke_bpf__detach(skel);
	CHECK_EQ_U64(skel->bss->calls, (unsigned long long)n);
	smoke_bpf__destroy(skel);
	TEST_PASS();
}
