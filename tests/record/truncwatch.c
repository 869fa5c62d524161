// SPDX-License-Identifier: GPL-2.0
/*
 * truncwatch FILE N CMD [ARG...]: runs CMD and truncates FILE to nothing under CMD's N-th read
 * of it: the read (read(2), pread(2) of FILE by CMD's process) is held by fanotify until FILE is
 * truncated, and comes back short, in the middle of whatever CMD was reading. A CMD that maps
 * FILE reads it without read calls: FILE is truncated as soon as CMD maps it, looked for in
 * /proc/PID/maps between reads. With N 0 nothing is truncated and the reads are counted. Says on
 * stderr "truncwatch: truncated at read K", "truncwatch: truncated while mapped" or "truncwatch:
 * K reads"; exits as CMD did (128 + its signal), or 125 on an error of its own. Needs
 * CAP_SYS_ADMIN (fanotify's permission events).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

/* Whether pid maps the file of dev and ino. */
static int mapped(pid_t pid, dev_t dev, ino_t ino)
{
	char path[64], line[PATH_MAX + 128];
	unsigned int maj, min;
	unsigned long i;
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	while (f && !found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%*s %*s %*s %x:%x %lu", &maj, &min, &i) == 3 && i == ino &&
			makedev(maj, min) == dev;
	if (f)
		fclose(f);
	return found;
}

static int fail(const char *what)
{
	fprintf(stderr, "truncwatch: %s: %s\n", what, strerror(errno));
	return 125;
}

int main(int argc, char **argv)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
	long want, reads = 0;
	int fan, status = 0;
	struct stat st;
	pid_t pid;

	if (argc < 4) {
		fprintf(stderr, "usage: truncwatch FILE N CMD [ARG...]\n");
		return 125;
	}
	want = atol(argv[2]);
	fan = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC, O_RDONLY | O_LARGEFILE);
	if (fan < 0 || stat(argv[1], &st) ||
	    fanotify_mark(fan, FAN_MARK_ADD, FAN_ACCESS_PERM, AT_FDCWD, argv[1]))
		return fail(argv[1]);
	pid = fork();
	if (pid < 0)
		return fail("fork");
	if (!pid) {
		execvp(argv[3], &argv[3]);
		_exit(127);
	}
	/* Until CMD ends; once FILE is truncated, the group goes and every read is let through. */
	while (waitpid(pid, &status, WNOHANG) == 0) {
		struct pollfd p = { fan, POLLIN, 0 };
		const struct fanotify_event_metadata *m;
		ssize_t n;

		if (fan < 0) {
			if (waitpid(pid, &status, 0) < 0)
				return fail("wait");
			break;
		}
		if (want && reads < want && mapped(pid, st.st_dev, st.st_ino)) {
			if (truncate(argv[1], 0))
				return fail("truncate");
			fprintf(stderr, "truncwatch: truncated while mapped\n");
			close(fan);
			fan = -1;
			continue;
		}
		if (poll(&p, 1, 1) <= 0)
			continue;
		n = read(fan, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail("read");
		for (m = (const void *)buf; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
			struct fanotify_response r = { .fd = m->fd, .response = FAN_ALLOW };
			int cut = m->pid == pid && ++reads == want;

			/* The reader waits for this answer: FILE is truncated under its read. */
			if (cut && truncate(argv[1], 0))
				return fail("truncate");
			if (write(fan, &r, sizeof(r)) != sizeof(r))
				return fail("answer");
			close(m->fd);
			if (cut)
				fprintf(stderr, "truncwatch: truncated at read %ld\n", reads);
		}
		if (want && reads >= want) {
			close(fan);
			fan = -1;
		}
	}
	if (!want)
		fprintf(stderr, "truncwatch: %ld reads\n", reads);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
