// SPDX-License-Identifier: GPL-2.0
/* Decompressed copies of compressed debug files by build-id: see debugcache.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>

#include "debugcache.h"

#define CACHE_ID_MAX 64

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *cache_dir;

/* Ours alone: a regular file or folder this user owns that no one else may write. */
static bool ours(int fd, bool dir)
{
	struct stat st;

	return !fstat(fd, &st) && (dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)) &&
	       st.st_uid == geteuid() && !(st.st_mode & (S_IWGRP | S_IWOTH));
}

bool debugcache__set(const char *dir)
{
	char *abs = NULL, cwd[PATH_MAX];
	struct stat st;

	if (dir && dir[0] != '/' && getcwd(cwd, sizeof(cwd)) &&
	    asprintf(&abs, "%s/%s", cwd, dir) < 0)
		abs = NULL;
	else if (dir && dir[0] == '/')
		abs = strdup(dir);
	if (dir && !abs) {
		fprintf(stderr, "gapscope: %s: %s\n", dir, strerror(errno ?: ENOMEM));
		return false;
	}
	/* There already: it must be a folder of this user's alone. */
	if (abs && !lstat(abs, &st) &&
	    (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	     (st.st_mode & (S_IWGRP | S_IWOTH)))) {
		fprintf(stderr, "gapscope: %s: not a folder of this user's alone\n", dir);
		free(abs);
		return false;
	}
	pthread_mutex_lock(&lock);
	free(cache_dir);
	cache_dir = abs;
	pthread_mutex_unlock(&lock);
	return true;
}

/* Whether e has a compressed DWARF section (SHF_COMPRESSED or .zdebug_). */
static bool compressed(Elf *e)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(e, &shstrndx))
		return false;
	while ((scn = elf_nextscn(e, scn))) {
		const char *name;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		if (sh.sh_flags & SHF_COMPRESSED)
			return true;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (name && !strncmp(name, ".zdebug_", 8))
			return true;
	}
	return false;
}

/* Whether the file at fd is ours, an ELF file of build-id bits, its DWARF not compressed. */
static bool valid(int fd, const unsigned char *bits, int len)
{
	Elf *e = ours(fd, false) ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	const void *id;
	bool ok;

	if (!e)
		return false;
	ok = dwelf_elf_gnu_build_id(e, &id) == len && !memcmp(id, bits, len) && !compressed(e);
	elf_end(e);
	return ok;
}

static bool copy_all(int from, int to)
{
	char buf[1 << 16];
	off_t off = 0;
	ssize_t n;

	while ((n = pread(from, buf, sizeof(buf), off)) > 0) {
		for (ssize_t done = 0; done < n;) {
			ssize_t w = write(to, buf + done, n - done);

			if (w <= 0)
				return false;
			done += w;
		}
		off += n;
	}
	return n == 0;
}

/*
 * The copy of src at path: written under a name of this process's, its DWARF sections inflated
 * (libelf lays the file out again), then renamed into place, so that another process finds it
 * whole or not at all. Its fd, or -1.
 */
static int make(int src, const char *path)
{
	char tmp[PATH_MAX + 32];
	bool ok = false;
	Elf_Scn *scn = NULL;
	Elf *e;
	int fd;

	/* The folder, made with the first copy; ours alone, never through a link. */
	snprintf(tmp, sizeof(tmp), "%.*s", (int)(strrchr(path, '/') - path), path);
	if (mkdir(tmp, 0700) && errno != EEXIST)
		return -1;
	fd = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !ours(fd, true)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	e = copy_all(src, fd) ? elf_begin(fd, ELF_C_RDWR, NULL) : NULL;
	if (e) {
		ok = true;
		while (ok && (scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;

			if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED))
				ok = elf_compress(scn, 0, 0) >= 0;
		}
		ok = ok && elf_update(e, ELF_C_WRITE) >= 0;
		elf_end(e);
	}
	if (ok && !rename(tmp, path))
		return fd;
	unlink(tmp);
	close(fd);
	return -1;
}

/* The copy's path for build-id bits, false where no cache is set. */
static bool copy_path(char *path, size_t size, const unsigned char *bits, int len)
{
	char *at;

	if (len < 2 || len > CACHE_ID_MAX)
		return false;
	pthread_mutex_lock(&lock);
	if (!cache_dir || strlen(cache_dir) + 2 * CACHE_ID_MAX + 16 >= size) {
		pthread_mutex_unlock(&lock);
		return false;
	}
	at = path + sprintf(path, "%s/", cache_dir);
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < len; i++)
		at += sprintf(at, "%02x", bits[i]);
	strcpy(at, ".debug");
	return true;
}

int debugcache__find(const unsigned char *bits, int len, char **name)
{
	char path[PATH_MAX];
	int fd;

	if (!copy_path(path, sizeof(path), bits, len))
		return -1;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && !valid(fd, bits, len)) {
		close(fd);
		unlink(path); /* ours to replace: a copy cut short, or not of this build */
		return -1;
	}
	if (fd >= 0 && !(*name = strdup(path))) {
		close(fd);
		return -1;
	}
	return fd;
}

int debugcache__keep(int fd, const unsigned char *bits, int len, char **name, bool replace)
{
	char path[PATH_MAX], *dup;
	bool want;
	Elf *e;
	int c;

	if (fd < 0 || !copy_path(path, sizeof(path), bits, len))
		return fd;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	want = e && compressed(e);
	elf_end(e);
	if (!want)
		return fd;
	c = make(fd, path);
	if (c >= 0 && (!replace || !(dup = strdup(path)))) {
		close(c);
		return fd;
	}
	if (c < 0)
		return fd;
	close(fd);
	free(*name);
	*name = dup;
	return c;
}
