// SPDX-License-Identifier: GPL-2.0
/*
 * The processes an attach records (tree.h): the -p processes, their descendants as /proc shows
 * them at the attach, and a cgroup's members.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tree.h"
#include "vec.h"

static bool has(const struct proc_tree *t, pid_t pid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->pids[i] == pid)
			return true;
	return false;
}

static int add(struct proc_tree *t, pid_t pid)
{
	if (has(t, pid))
		return 0;
	if (array__grow((void **)&t->pids, &t->cap, sizeof(*t->pids), t->n + 1, 16))
		return -ENOMEM;
	t->pids[t->n++] = pid;
	return 0;
}

/* The parent of a process from /proc/PID/stat (its name may hold spaces and parentheses). */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *p;
	int ppid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) &&
	    sscanf(p + 1, " %*c %d", &ppid) != 1)
		ppid = -1;
	fclose(f);
	return ppid;
}

/* The process (thread group) a thread id belongs to, from /proc/TID/status; -1 if gone. */
static pid_t tgid_of(pid_t tid)
{
	char path[64], line[256];
	int tgid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

/* Adds every descendant of the processes in t (one pass over /proc, repeated until no more). */
static int add_descendants(struct proc_tree *t)
{
	size_t before;

	do {
		DIR *d = opendir("/proc");
		struct dirent *e;

		if (!d)
			return -errno;
		before = t->n;
		while ((e = readdir(d))) {
			pid_t pid, pp;
			int err;

			if (!isdigit((unsigned char)e->d_name[0]))
				continue;
			pid = atoi(e->d_name);
			if (has(t, pid) || (pp = parent_of(pid)) <= 0 || !has(t, pp))
				continue;
			err = add(t, pid);
			if (err) {
				closedir(d);
				return err;
			}
		}
		closedir(d);
	} while (t->n != before);
	return 0;
}

int proc_tree__collect(struct proc_tree *t, const pid_t *pids, int npids, const char *cgroup,
		       char *err, size_t errlen)
{
	int rc;

	for (int i = 0; i < npids; i++) {
		char path[64];
		pid_t pid = pids[i], tgid;

		snprintf(path, sizeof(path), "/proc/%d", pid);
		if (access(path, F_OK)) {
			snprintf(err, errlen, "cannot attach to pid %d: no such process", pid);
			return -ESRCH;
		}
		/* A thread's id (top -H, a stack trace): probes and filters go by process. */
		tgid = tgid_of(pid);
		if (tgid > 0 && tgid != pid) {
			fprintf(stderr,
				"gapscope: pid %d is a thread of process %d: recording the process\n",
				pid, tgid);
			pid = tgid;
		}
		if ((rc = add(t, pid)))
			goto fail;
	}
	if (cgroup) {
		char dir[4096], real[PATH_MAX], path[PATH_MAX + 16];
		FILE *f;
		int pid;

		/* /sys/fs/cgroup/X, /X or X: the same cgroup, and nothing outside the cgroup file
		 * system (../../DIR would name any file called cgroup.procs). */
		snprintf(dir, sizeof(dir), "%s%s",
			 !strncmp(cgroup, "/sys/fs/cgroup/", 15) ? "" :
			 cgroup[0] == '/'			 ? "/sys/fs/cgroup" :
								   "/sys/fs/cgroup/",
			 cgroup);
		if (!realpath(dir, real)) {
			snprintf(err, errlen, "cannot read the cgroup's processes: %s: %s", dir,
				 strerror(errno));
			return -ENOENT;
		}
		if (strncmp(real, "/sys/fs/cgroup/", 15)) {
			snprintf(err, errlen, "--cgroup %s is not under /sys/fs/cgroup", cgroup);
			return -EINVAL;
		}
		snprintf(path, sizeof(path), "%s/cgroup.procs", real);
		f = fopen(path, "re");
		if (!f) {
			snprintf(err, errlen, "cannot read the cgroup's processes: %s: %s", path,
				 strerror(errno));
			return -ENOENT;
		}
		if (!(t->cgroup_procs = strdup(path))) {
			fclose(f);
			rc = -ENOMEM;
			goto fail;
		}
		while (fscanf(f, "%d", &pid) == 1)
			if ((rc = add(t, pid))) {
				fclose(f);
				goto fail;
			}
		fclose(f);
		if (!t->n) {
			snprintf(err, errlen, "the cgroup %s has no processes", cgroup);
			return -ESRCH;
		}
	}
	t->given = t->n;
	if ((rc = add_descendants(t)))
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "cannot list the processes to record: %s", strerror(-rc));
	return rc;
}

size_t proc_tree__joined(struct proc_tree *t, pid_t *joined, size_t max)
{
	size_t n = 0;
	FILE *f = t->cgroup_procs ? fopen(t->cgroup_procs, "re") : NULL;
	int pid;

	while (f && n < max && fscanf(f, "%d", &pid) == 1)
		if (pid > 0 && !has(t, pid) && !add(t, pid))
			joined[n++] = pid;
	if (f)
		fclose(f);
	return n;
}

void proc_tree__free(struct proc_tree *t)
{
	free(t->cgroup_procs);
	free(t->pids);
	*t = (struct proc_tree){};
}
