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
#include <string.h>
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
 * Creates NAME under the directory DFD (AT_FDCWD: PATH) for writing; with REPLACE, a regular file
 * or a link at NAME is removed first (anything else: -EEXIST, see outfile__replaceable). fd or
 * -errno. Under a directory fd (outfile__dir, outfile__mkdirat) NAME is resolved from that
 * directory, never again from its path, so renaming the directory away and planting a link at
 * its name changes nothing: the files land in the directory that was checked, or nowhere.
 */
static inline int outfile__openat(int dfd, const char *name, bool replace)
{
	int fd = openat(dfd, name, OUTFILE_FLAGS, 0600);
	struct stat st;

	if (fd >= 0 || errno != EEXIST || !replace)
		return fd >= 0 ? fd : -errno;
	/* -f on /dev/null as root would otherwise put a regular file in its place. */
	if (!fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) && !S_ISREG(st.st_mode) &&
	    !S_ISLNK(st.st_mode))
		return -EEXIST;
	/* unlinkat(2) removes a link, not its target, and refuses a directory (EISDIR). */
	if (unlinkat(dfd, name, 0) && errno != ENOENT)
		return -errno;
	fd = openat(dfd, name, OUTFILE_FLAGS, 0600);
	return fd >= 0 ? fd : -errno;
}

static inline int outfile__open(const char *path, bool replace)
{
	return outfile__openat(AT_FDCWD, path, replace);
}

/* The same as a stdio stream; NULL with errno set. */
static inline FILE *outfile__fopenat(int dfd, const char *name, bool replace)
{
	int fd = outfile__openat(dfd, name, replace), err;
	FILE *f;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	f = fdopen(fd, "w");
	if (!f) {
		err = errno;
		close(fd);
		unlinkat(dfd, name, 0);
		errno = err;
	}
	return f;
}

static inline FILE *outfile__fopen(const char *path, bool replace)
{
	return outfile__fopenat(AT_FDCWD, path, replace);
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

/* The directory DFD/NAME, opened as itself: -ELOOP for a link, -ENOTDIR for anything else. */
static inline int outfile__opendirat(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;

	if (fd >= 0)
		return fd;
	if (errno == ENOTDIR && !fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) &&
	    S_ISLNK(st.st_mode))
		return -ELOOP;
	return -errno;
}

/*
 * Whether the directory DFD is the caller's to write into: owned by it. -EPERM when not. A
 * directory that another user owns could be emptied or swapped under the caller at any time.
 */
static inline int outfile__own_dir(int dfd)
{
	struct stat st;

	if (fstat(dfd, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	return st.st_uid == geteuid() ? 0 : -EPERM;
}

/*
 * Creates the directory NAME under DFD (0700 less the umask) and opens it, taken once: a
 * directory fd whose files outfile__openat creates. An existing one: -EEXIST without REUSE; with
 * it, or when the new one was swapped for another before it was opened, the fd only when it is a
 * real directory owned by the caller, else -ELOOP (a symbolic link), -ENOTDIR (not a
 * directory) or -EPERM (someone else's). fd or -errno.
 */
static inline int outfile__mkdirat(int dfd, const char *name, bool reuse)
{
	int fd, err;

	if (mkdirat(dfd, name, 0700) && (errno != EEXIST || !reuse))
		return -errno;
	fd = outfile__opendirat(dfd, name);
	if (fd < 0)
		return fd;
	err = outfile__own_dir(fd);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/*
 * The parent directory of PATH, opened once (its path is the caller's choice: links in it are
 * followed), and PATH's last component in *NAME (pointing into PATH). fd or -errno.
 */
static inline int outfile__parent(const char *path, const char **name)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];
	int fd;

	*name = slash ? slash + 1 : path;
	if (!slash) {
		fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		return fd >= 0 ? fd : -errno;
	}
	if ((size_t)(slash - path) >= sizeof(dir))
		return -ENAMETOOLONG;
	snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd >= 0 ? fd : -errno;
}

/* outfile__mkdirat under PATH's parent. */
static inline int outfile__mkdir(const char *path, bool reuse)
{
	const char *name;
	int pfd = outfile__parent(path, &name), fd;

	if (pfd < 0)
		return pfd;
	fd = *name ? outfile__mkdirat(pfd, name, reuse) : -EINVAL;
	close(pfd);
	return fd;
}

/*
 * Who besides the caller can change what is in the directory DFD: NULL (no one), "its owner" (it
 * is another user's) or "other users" (group or others may write, and no sticky bit keeps them
 * to their own files). Files created under it with outfile__openat are never written through a
 * link, but such users can remove, rename or replace them.
 */
static inline const char *outfile__shared_dir(int dfd)
{
	struct stat st;

	if (fstat(dfd, &st))
		return NULL;
	if (st.st_uid != geteuid())
		return "its owner";
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
		return "other users";
	return NULL;
}

/*
 * An existing directory named by option OPT (--dump-dir, --pprof-dir), taken once for a run: its
 * fd, or -1 after saying why not. One that others can change is written into, with a warning:
 * what is created there never follows a link, but they can remove or swap it.
 */
static inline int outfile__dir(const char *opt, const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	const char *who;

	if (fd < 0) {
		fprintf(stderr, "gapscope: %s %s: %s\n", opt, dir, strerror(errno));
		return -1;
	}
	who = outfile__shared_dir(fd);
	if (who)
		fprintf(stderr,
			"gapscope: warning: %s %s can be changed by %s: files are created there "
			"without following links, but may be removed or replaced\n",
			opt, dir, who);
	return fd;
}

#endif
