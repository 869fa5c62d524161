// SPDX-License-Identifier: GPL-2.0
/* Library resolution in the order of glibc's ld.so (elf/dl-load.c: _dl_map_object). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfx.h"
#include "resolve.h"

int resolve__executable(const char *cmd, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (strchr(cmd, '/')) {
		if (access(cmd, X_OK))
			return -errno;
		snprintf(out, len, "%s", cmd);
		return 0;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *end = strchrnul(path, ':');
		int n = end - path;

		snprintf(buf, sizeof(buf), "%.*s/%s", n ? n : 1, n ? path : ".", cmd);
		if (!access(buf, X_OK)) {
			struct stat st;

			if (!stat(buf, &st) && S_ISREG(st.st_mode)) {
				snprintf(out, len, "%s", buf);
				return 0;
			}
		}
		path = *end ? end + 1 : end;
	}
	return -ENOENT;
}

static bool compatible(const char *file, const struct elfx_dyn *exe)
{
	struct elfx_dyn d;
	struct stat st;

	if (stat(file, &st) || !S_ISREG(st.st_mode))
		return false;
	if (elfx__dyn(file, &d))
		return false;
	return d.is64 == exe->is64 && d.machine == exe->machine;
}

/* Try NAME in each directory of a ':'-separated list, expanding $ORIGIN / ${ORIGIN}. */
static bool search_dirs(const char *dirs, const char *origin, const char *name,
			const struct elfx_dyn *exe, char *out, size_t len)
{
	char dir[PATH_MAX], file[PATH_MAX + 256];

	while (dirs && *dirs) {
		const char *end = strchrnul(dirs, ':');
		size_t n = end - dirs, o = 0;

		for (size_t i = 0; i < n && o < sizeof(dir) - 1;) {
			if (!strncmp(dirs + i, "$ORIGIN", 7) ||
			    !strncmp(dirs + i, "${ORIGIN}", 9)) {
				o += snprintf(dir + o, sizeof(dir) - o, "%s", origin);
				i += dirs[i + 1] == '{' ? 9 : 7;
			} else {
				dir[o++] = dirs[i++];
			}
			if (o >= sizeof(dir))
				o = sizeof(dir) - 1;
		}
		dir[o] = 0;
		/* An empty entry means the current directory, as for ld.so. */
		snprintf(file, sizeof(file), "%s/%s", o ? dir : ".", name);
		if (compatible(file, exe)) {
			snprintf(out, len, "%s", file);
			return true;
		}
		dirs = *end ? end + 1 : end;
	}
	return false;
}

/* glibc >= 2.32 ld.so.cache ("glibc-ld.so.cache1.1", elf/cache.c, sysdeps/generic/dl-cache.h). */
struct cache_hdr {
	char magic[17];
	char version[3];
	uint32_t nlibs;
	uint32_t len_strings;
	uint8_t flags;
	uint8_t pad[3];
	uint32_t extension_offset;
	uint32_t unused[3];
};

struct cache_entry {
	int32_t flags;
	uint32_t key;
	uint32_t value;
	uint32_t osversion;
	uint64_t hwcap;
};

#define FLAG_ELF_LIBC6	   0x0003
#define FLAG_TYPE_MASK	   0x00ff
#define FLAG_ARCH_MASK	   0xff00
#define FLAG_X8664_LIB64   0x0300
#define FLAG_AARCH64_LIB64 0x0a00

static bool search_cache(const char *name, const struct elfx_dyn *exe, char *out, size_t len)
{
	int fd = open("/etc/ld.so.cache", O_RDONLY | O_CLOEXEC);
	const struct cache_hdr *h;
	bool found = false, new_format;
	struct stat st;
	void *map;

	if (fd < 0)
		return false;
	if (fstat(fd, &st) || st.st_size < (off_t)sizeof(*h)) {
		close(fd);
		return false;
	}
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return false;
	h = map;
	new_format = !memcmp(h->magic, "glibc-ld.so.cache", 17);
	if (new_format && !memcmp(h->version, "1.1", 3) &&
	    sizeof(*h) + (uint64_t)h->nlibs * sizeof(struct cache_entry) <= (uint64_t)st.st_size) {
		const struct cache_entry *e = (const void *)(h + 1);

		for (uint32_t i = 0; i < h->nlibs && !found; i++) {
			/* String offsets are relative to the header in the new format. */
			if (e[i].key >= st.st_size || e[i].value >= st.st_size)
				continue;
			if ((e[i].flags & FLAG_TYPE_MASK) != FLAG_ELF_LIBC6)
				continue;
			const char *key = (const char *)map + e[i].key;
			const char *val = (const char *)map + e[i].value;

			if (strnlen(key, st.st_size - e[i].key) ==
				    (size_t)(st.st_size - e[i].key) ||
			    strnlen(val, st.st_size - e[i].value) ==
				    (size_t)(st.st_size - e[i].value))
				continue;
			if (strcmp(key, name))
				continue;
			if (compatible(val, exe)) {
				snprintf(out, len, "%s", val);
				found = true;
			}
		}
	}
	munmap(map, st.st_size);
	if (found || new_format)
		return found;

	/* An older cache format: ask ldconfig, which reads them all. */
	FILE *p = popen("ldconfig -p 2>/dev/null", "re");
	char line[PATH_MAX + 128];

	if (!p)
		return false;
	while (!found && fgets(line, sizeof(line), p)) {
		char lib[256], *arrow = strstr(line, "=> ");

		if (!arrow || sscanf(line, " %255s", lib) != 1 || strcmp(lib, name))
			continue;
		arrow += 3;
		arrow[strcspn(arrow, "\n")] = 0;
		if (compatible(arrow, exe)) {
			snprintf(out, len, "%s", arrow);
			found = true;
		}
	}
	pclose(p);
	return found;
}

int resolve__library(const char *exe, const char *name, char *out, size_t len)
{
	static const char *const defaults =
		"/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib/aarch64-linux-gnu:"
		"/usr/lib/aarch64-linux-gnu:/lib64:/usr/lib64:/lib:/usr/lib";
	char origin[PATH_MAX], real[PATH_MAX];
	struct elfx_dyn d;
	int err;

	err = elfx__dyn(exe, &d);
	if (err)
		return err;
	if (strchr(name, '/')) {
		if (!compatible(name, &d))
			return -ENOENT;
		snprintf(out, len, "%s", name);
		return 0;
	}
	/* $ORIGIN is the directory of the executable after symlinks are resolved. */
	if (!realpath(exe, real))
		snprintf(real, sizeof(real), "%s", exe);
	snprintf(origin, sizeof(origin), "%s", real);
	*strrchr(origin, '/') = 0;

	if (!d.runpath[0] && search_dirs(d.rpath, origin, name, &d, out, len))
		return 0;
	if (search_dirs(getenv("LD_LIBRARY_PATH"), origin, name, &d, out, len))
		return 0;
	if (search_dirs(d.runpath, origin, name, &d, out, len))
		return 0;
	if (search_cache(name, &d, out, len))
		return 0;
	if (search_dirs(defaults, origin, name, &d, out, len))
		return 0;
	return -ENOENT;
}
