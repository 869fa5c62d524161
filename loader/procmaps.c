// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "procmaps.h"

int procmaps__stat(const char *dir, struct procmaps_stat *st)
{
	char path[PATH_MAX], buf[1024], *p;
	unsigned long flags = 0;
	long threads = 0;
	int ppid = 0;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/stat", dir);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* "PID (COMM) S ...": COMM may hold spaces and parentheses; the state follows the last. */
	p = strrchr(buf, ')');
	if (!p ||
	    sscanf(p + 2,
		   "%c %d %*d %*d %*d %*d %lu %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %ld %*d %llu",
		   &st->state, &ppid, &flags, &threads, &st->start) != 5)
		return -EINVAL;
	st->kthread = flags & 0x00200000; /* PF_KTHREAD */
	st->threads = threads;
	st->ppid = ppid;
	return 0;
}

void procmaps__dir(pid_t pid, char *buf, size_t len)
{
	struct procmaps_stat st;
	struct dirent *de;
	char task[64];
	DIR *d;

	snprintf(buf, len, "/proc/%d", pid);
	if (procmaps__stat(buf, &st) || st.state != 'Z' || st.threads < 2)
		return;
	/* The main thread has exited (pthread_exit) and has no memory any more: a live one. */
	snprintf(task, sizeof(task), "/proc/%d/task", pid);
	d = opendir(task);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char dir[320];

		if (de->d_name[0] == '.' || atoi(de->d_name) == pid)
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", task, de->d_name);
		if (!procmaps__stat(dir, &st) && st.state != 'Z' && st.state != 'X') {
			snprintf(buf, len, "%s", dir);
			break;
		}
	}
	closedir(d);
}

int procmaps__open(struct procmaps *m, pid_t pid)
{
	char path[PATH_MAX];

	procmaps__dir(pid, path, sizeof(path) - 8);
	snprintf(m->dir, sizeof(m->dir), "%s", path);
	strcat(path, "/maps");
	m->f = fopen(path, "re");
	m->own = true;
	return m->f ? 0 : -errno;
}

void procmaps__from_file(struct procmaps *m, FILE *f)
{
	m->f = f;
	m->own = false;
	m->dir[0] = 0;
}

/*
 * A path as the file's name: /proc/PID/maps writes a newline in it as "\012" (and nothing else
 * escaped), which no file of that name matches. The mapping's map_files link has the name as it
 * is; without one (a stream given, no privilege) "\012" is read back as the newline.
 */
static char *real_path(struct procmaps *m, char *path, unsigned long long start,
		       unsigned long long end)
{
	char link[PATH_MAX + 64], *s, *d;
	ssize_t n;

	if (!strstr(path, "\\012"))
		return path;
	snprintf(link, sizeof(link), "%s/map_files/%llx-%llx", m->dir, start, end);
	if (m->dir[0] && (n = readlink(link, m->real, sizeof(m->real) - 1)) > 0) {
		m->real[n] = 0;
		if (n > 10 && !strcmp(m->real + n - 10, " (deleted)"))
			m->real[n - 10] = 0;
		return m->real;
	}
	for (s = d = path; *s;)
		if (!strncmp(s, "\\012", 4)) {
			*d++ = '\n';
			s += 4;
		} else {
			*d++ = *s++;
		}
	*d = 0;
	return path;
}

bool procmaps__next(struct procmaps *m, struct procmaps_entry *e)
{
	while (m->f && fgets(m->line, sizeof(m->line), m->f)) {
		unsigned long long start, end, pgoff, ino;
		unsigned int maj, min;
		char perms[8];
		int path_at = 0;
		char *path;

		/* %n after the inode: the path starts past the spaces that align it. */
		if (sscanf(m->line, "%llx-%llx %7s %llx %x:%x %llu%n", &start, &end, perms, &pgoff,
			   &maj, &min, &ino, &path_at) < 7 ||
		    !path_at || strlen(perms) < 4)
			continue;
		path = m->line + path_at;
		path += strspn(path, " \t");
		path[strcspn(path, "\n")] = 0;
		path = real_path(m, path, start, end);
		*e = (struct procmaps_entry){
			.start = start,
			.end = end,
			.pgoff = pgoff,
			.ino = ino,
			.dev = makedev(maj, min),
			.prot = (perms[0] == 'r' ? PROCMAPS_R : 0) |
				(perms[1] == 'w' ? PROCMAPS_W : 0) |
				(perms[2] == 'x' ? PROCMAPS_X : 0),
			.shared = perms[3] == 's',
			.path = path,
		};
		return true;
	}
	return false;
}

void procmaps__close(struct procmaps *m)
{
	if (m->f && m->own)
		fclose(m->f);
	m->f = NULL;
}
