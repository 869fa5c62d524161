// SPDX-License-Identifier: GPL-2.0
/* The privileges record needs: see privs.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include "privs.h"
#include "procmaps.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

#define BIT(c) (1ull << (c))

unsigned long long privs__effective(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data))
		return 0;
	return data[0].effective | (unsigned long long)data[1].effective << 32;
}

static const struct {
	int cap;
	const char *name;
	const char *why;
} needed[] = {
	{ CAP_BPF, "CAP_BPF", "to load the BPF programs" },
	{ CAP_PERFMON, "CAP_PERFMON", "to attach uprobes, tracepoints and perf events" },
};

/* Whether /proc/kallsyms shows us zeros for addresses (kptr_restrict, perf_event_paranoid). */
static bool kallsyms_hidden(void)
{
	char line[256];
	unsigned long long addr = 0;
	FILE *f = fopen("/proc/kallsyms", "re");
	bool hidden = true;

	if (!f)
		return true;
	/* The first few lines: one symbol may sit at 0 (fixed_percpu_data). */
	for (int i = 0; i < 8 && fgets(line, sizeof(line), f); i++)
		if (sscanf(line, "%llx", &addr) == 1 && addr) {
			hidden = false;
			break;
		}
	fclose(f);
	return hidden;
}

bool privs__check_record(void)
{
	unsigned long long eff = privs__effective();
	char missing[256] = "";
	size_t len = 0;

	if (!(eff & BIT(CAP_SYS_ADMIN))) {
		for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++) {
			if (eff & BIT(needed[i].cap))
				continue;
			len += snprintf(missing + len, sizeof(missing) - len, "%s%s (%s)",
					len ? ", " : "", needed[i].name, needed[i].why);
			if (len >= sizeof(missing))
				break;
		}
	}
	if (len) {
		fprintf(stderr,
			"gapscope: missing capabilities: %s; run as root or grant them (uid %d)\n",
			missing, (int)getuid());
		return false;
	}
	if (!(eff & BIT(CAP_SYSLOG)) && kallsyms_hidden())
		fprintf(stderr, "gapscope: note: no CAP_SYSLOG: /proc/kallsyms hides kernel "
				"addresses, kernel frames are left unnamed\n");
	return true;
}

/* Uid: real, effective, saved, fs of /proc/PID/status; false when unreadable. */
static bool proc_uids(pid_t pid, unsigned int uid[4])
{
	char path[64], line[256];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "Uid: %u %u %u %u", &uid[0], &uid[1], &uid[2], &uid[3]) == 4;
	fclose(f);
	return found;
}

int privs__may_trace(pid_t pid)
{
	unsigned int uid[4];
	char path[PATH_MAX];
	int fd, err;

	/*
	 * Opening /proc/PID/mem is allowed exactly when ptrace may attach (ptrace_may_access with
	 * PTRACE_MODE_ATTACH: the same user on every uid and gid of the process and a dumpable
	 * process, or CAP_SYS_PTRACE; Yama and other security modules have their say too). The
	 * kernel answers, so its rules are not guessed at here; /proc/PID/status only says why.
	 */
	procmaps__dir(pid, path, sizeof(path) - 8);
	strcat(path, "/mem");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	err = errno;
	if (err == ENOENT || err == ESRCH) {
		fprintf(stderr, "gapscope: cannot attach to pid %d: no such process\n", (int)pid);
		return -ESRCH;
	}
	if (err != EACCES && err != EPERM) {
		fprintf(stderr, "gapscope: cannot attach to pid %d: %s: %s\n", (int)pid, path,
			strerror(err));
		return -err;
	}
	if (proc_uids(pid, uid) && (uid[0] != getuid() || uid[1] != getuid() || uid[2] != getuid()))
		fprintf(stderr,
			"gapscope: cannot attach to pid %d: not permitted to trace it (it runs as "
			"uid %u, we as uid %d; needs the same user or CAP_SYS_PTRACE)\n",
			(int)pid, uid[1], (int)getuid());
	else
		fprintf(stderr,
			"gapscope: cannot attach to pid %d: not permitted to trace it (not dumpable, "
			"another group, or a security module refuses; needs CAP_SYS_PTRACE)\n",
			(int)pid);
	return -EPERM;
}

void privs__drop_for_exec(void)
{
	/*
	 * Ambient capabilities (setpriv --ambient-caps, capsh --addamb) would pass CAP_BPF and
	 * CAP_PERFMON on to the program we start: it runs with what the user has without them.
	 * Inheritable ones too, which a program with file capabilities (setcap cap_bpf+ei) would
	 * gain. Permitted and effective ones do not pass an exec of a non-root user's program. A
	 * root target stays root: its uid is not ours to change.
	 */
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = {};

	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (!syscall(SYS_capget, &hdr, data)) {
		data[0].inheritable = data[1].inheritable = 0;
		syscall(SYS_capset, &hdr, data);
	}
}
