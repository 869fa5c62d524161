/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Creating the files and directories gapscope writes (the trace, a report's files), safely in a
 * directory that others can write to, such as /tmp.
 *
 * A file is created exclusively (O_CREAT | O_EXCL | O_NOFOLLOW), mode 0600 less the umask: a
 * symbolic or hard link planted at the path is never written through. Replacing (-f) removes
 * what is at the path, the link itself and never what it points to, then creates the file
 * exclusively; a link planted again in between makes the creation fail, it is not followed. A
 * directory is created 0700; an existing one is written into (-f) only when it is a directory
 * itself, not a link to one, and its owner is the caller, whom no one else can swap it under.
 *
 * Static inline, so that every program built from single translation units (the unit tests, the
 * fuzz targets) that includes the trace writer has these too.
 */
#ifndef GAPSCOPE_OUTFILE_H
#define GAPSCOPE_OUTFILE_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#define OUTFILE_FLAGS (O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC)

/*
 * What REPLACE may remove at PATH: nothing (0), a regular file or a symbolic link (1); anything
 * else (a device node, a FIFO, a socket, a directory) is never replaced: -1, with *WHAT naming
 * it for the message.
 */
static inline int outfile__replaceable(const char *path, const char **what)
{
	struct stat st;

	if (lstat(path, &st))
		return 0;
	if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))
		return 1;
	*what = S_ISDIR(st.st_mode)  ? "a directory" :
		S_ISCHR(st.st_mode)  ? "a character device" :
		S_ISBLK(st.st_mode)  ? "a block device" :
		S_ISFIFO(st.st_mode) ? "a FIFO" :
		S_ISSOCK(st.st_mode) ? "a socket" :
				       "not a regular file";
	return -1;
}

/*
 * Creates PATH for writing; with REPLACE, a regular file or a link at PATH is removed first
 * (anything else: -EEXIST, see outfile__replaceable). fd or -errno.
 */
static inline int outfile__open(const char *path, bool replace)
{
	int fd = open(path, OUTFILE_FLAGS, 0600);
	const char *what;

	if (fd >= 0 || errno != EEXIST || !replace)
		return fd >= 0 ? fd : -errno;
	/* -f on /dev/null as root would otherwise put a regular file in its place. */
	if (outfile__replaceable(path, &what) < 0)
		return -EEXIST;
	/* unlink(2) removes a link, not its target, and refuses a directory (EISDIR). */
	if (unlink(path) && errno != ENOENT)
		return -errno;
	fd = open(path, OUTFILE_FLAGS, 0600);
	return fd >= 0 ? fd : -errno;
}

/* The same as a stdio stream; NULL with errno set. */
static inline FILE *outfile__fopen(const char *path, bool replace)
{
	int fd = outfile__open(path, replace), err;
	FILE *f;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	f = fdopen(fd, "w");
	if (!f) {
		err = errno;
		close(fd);
		unlink(path);
		errno = err;
	}
	return f;
}

/*
 * Closes F: 0, or -errno of the write that failed (a full disk), -EIO when only the stream knows
 * that one did. Every write error reaches the caller this way, the last buffer's included.
 */
static inline int outfile__fclose(FILE *f)
{
	int err = 0;

	if (fflush(f))
		err = -errno;
	else if (ferror(f))
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

/*
 * Creates the directory PATH (0700 less the umask). An existing one: -EEXIST without REUSE;
 * with it 0 when it is a real directory owned by the caller, else -ELOOP (a symbolic link),
 * -ENOTDIR (not a directory) or -EPERM (someone else's). 0 or -errno.
 */
static inline int outfile__mkdir(const char *path, bool reuse)
{
	struct stat st;

	if (!mkdir(path, 0700))
		return 0;
	if (errno != EEXIST || !reuse)
		return -errno;
	if (lstat(path, &st))
		return -errno;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (st.st_uid != geteuid())
		return -EPERM;
	return 0;
}

#endif
