// SPDX-License-Identifier: GPL-2.0
/*
 * The processes an attach records (tree.h): the -p processes, their descendants as /proc shows
 * them at the attach, and a cgroup's members, the cgroups below it included.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "procmaps.h"
#include "tree.h"
#include "vec.h"

/*
 * How deep below --cgroup its cgroups are looked at (a directory open per level): systemd's and
 * Kubernetes' hierarchies are under 10 deep.
 */
#define CGROUP_DEPTH_MAX 64

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

/* The stat of a process: 0 or -errno (gone). */
static int pstat_read(pid_t pid, struct procmaps_stat *s)
{
	char dir[64];

	snprintf(dir, sizeof(dir), "/proc/%d", pid);
	return procmaps__stat(dir, s);
}

/* The parent of a process, -1 if gone. */
static pid_t parent_of(pid_t pid)
{
	struct procmaps_stat s;

	return pstat_read(pid, &s) ? -1 : s.ppid;
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

struct pidlist {
	pid_t *p;
	size_t n, cap;
};

/* Appends the pids of the cgroup.procs in directory DIRFD to L: 0 or -errno. */
static int read_procs(int dirfd, struct pidlist *l)
{
	int fd = openat(dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC), pid, err = 0;
	FILE *f;

	if (fd < 0)
		return -errno;
	if (!(f = fdopen(fd, "r"))) {
		err = -errno;
		close(fd);
		return err;
	}
	errno = 0;
	while (!err && fscanf(f, "%d", &pid) == 1)
		if (!(err = array__grow((void **)&l->p, &l->cap, sizeof(*l->p), l->n + 1, 64)))
			l->p[l->n++] = pid;
	if (!err && ferror(f))
		err = -(errno ?: EIO);
	fclose(f);
	return err;
}

/* The processes of the cgroup in DIRFD and of every cgroup below it, into L: 0 or -errno. */
static int walk(int dirfd, int depth, struct pidlist *l)
{
	int err = read_procs(dirfd, l), dfd;
	struct dirent *e;
	DIR *d;

	/*
	 * Below the cgroup itself, one removed since its parent was read (ENOENT) or a threaded one
	 * (v2: EOPNOTSUPP; its processes are its domain's, listed above it) has none of its own.
	 */
	if (err == -ENOMEM || (err && !depth))
		return err;
	if (depth == CGROUP_DEPTH_MAX)
		return 0;
	/* A description of its own: the directory kept open is never read, its offset never moved. */
	dfd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return 0;
	if (!(d = fdopendir(dfd))) {
		close(dfd);
		return 0;
	}
	err = 0;
	while (!err && (e = readdir(d))) {
		int sub;

		if ((e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) || !strcmp(e->d_name, ".") ||
		    !strcmp(e->d_name, ".."))
			continue;
		sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue; /* a file (DT_UNKNOWN), or removed meanwhile */
		err = walk(sub, depth + 1, l) == -ENOMEM ? -ENOMEM : 0;
		close(sub);
	}
	closedir(d);
	return err;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static const struct proc_member *member_of(const struct proc_tree *t, pid_t pid)
{
	size_t lo = 0, hi = t->nmembers;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->members[mid].pid == pid)
			return &t->members[mid];
		if (t->members[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

long proc_tree__look(struct proc_tree *t)
{
	struct proc_member *now = NULL;
	size_t n = 0, cap = 0, listed = 0;
	struct pidlist l = {};
	pid_t self = getpid();
	int err;

	t->njoined = 0;
	if (!t->cgroup)
		return -EINVAL;
	if ((err = walk(t->cgroup_fd, 0, &l)))
		goto out;
	qsort(l.p, l.n, sizeof(*l.p), cmp_pid);
	for (size_t i = 0; i < l.n && !err; i++) {
		const struct proc_member *was;
		struct procmaps_stat s;

		/*
		 * v1 lists a process once per cgroup of its threads, in no order across cgroups;
		 * the recorder does not record itself (nor count itself a member, or a cgroup it
		 * sits in would never end).
		 */
		if ((i && l.p[i] == l.p[i - 1]) || l.p[i] == self || l.p[i] <= 0)
			continue;
		listed++;
		if (pstat_read(l.p[i], &s))
			continue; /* gone since it was listed */
		if ((err = array__grow((void **)&now, &cap, sizeof(*now), n + 1, 16)))
			break;
		now[n] = (struct proc_member){ .pid = l.p[i], .start = s.start };
		/* The same pid started anew is another process: one that joined. */
		was = member_of(t, l.p[i]);
		if ((!was || was->start != s.start) &&
		    !(err = array__grow((void **)&t->joined, &t->jcap, sizeof(*t->joined),
					t->njoined + 1, 16)))
			t->joined[t->njoined++] = now[n];
		n++;
	}
out:
	free(l.p);
	if (err) {
		free(now);
		t->njoined = 0;
		return err;
	}
	free(t->members);
	t->members = now;
	t->nmembers = n;
	t->mcap = cap;
	return (long)listed;
}

bool proc_tree__alive(const struct proc_member *m)
{
	struct procmaps_stat s;

	/* A zombie whose threads all ended has exited; one whose main thread alone did lives. */
	return !pstat_read(m->pid, &s) && s.start == m->start && s.state != 'X' &&
	       (s.state != 'Z' || s.threads > 1);
}

/* --cgroup: its directory, open, and its members. 0, or -errno with the reason in err. */
static int open_cgroup(struct proc_tree *t, const char *cgroup, char *err, size_t errlen)
{
	char dir[4096], real[PATH_MAX];
	struct statfs fs;
	long n;
	int fd;

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
	/* The directory, not its path, from now on: a rename (v1) leaves it the same cgroup. */
	fd = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot read the cgroup's processes: %s: %s", real,
			 strerror(errno));
		return -ENOENT;
	}
	if (fstatfs(fd, &fs) ||
	    (fs.f_type != CGROUP_SUPER_MAGIC && fs.f_type != CGROUP2_SUPER_MAGIC)) {
		close(fd);
		snprintf(err, errlen, "--cgroup %s is not a cgroup", cgroup);
		return -EINVAL;
	}
	if (!(t->cgroup = strdup(real))) {
		close(fd);
		snprintf(err, errlen, "cannot list the processes to record: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	t->cgroup_fd = fd;
	n = proc_tree__look(t);
	if (n < 0) {
		snprintf(err, errlen, "cannot read the cgroup's processes: %s/cgroup.procs: %s",
			 real, strerror((int)-n));
		return (int)n;
	}
	for (size_t i = 0; i < t->nmembers; i++)
		if (add(t, t->members[i].pid)) {
			snprintf(err, errlen, "cannot list the processes to record: %s",
				 strerror(ENOMEM));
			return -ENOMEM;
		}
	/* With -p, a cgroup empty now may be joined later. */
	if (!t->n) {
		snprintf(err, errlen, "the cgroup %s has no processes", cgroup);
		return -ESRCH;
	}
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
	if (cgroup && (rc = open_cgroup(t, cgroup, err, errlen)))
		return rc;
	t->given = t->n;
	if ((rc = add_descendants(t)))
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "cannot list the processes to record: %s", strerror(-rc));
	return rc;
}

void proc_tree__free(struct proc_tree *t)
{
	if (t->cgroup)
		close(t->cgroup_fd);
	free(t->cgroup);
	free(t->members);
	free(t->joined);
	free(t->pids);
	*t = (struct proc_tree){};
}
