// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <linux/types.h>

#include "elfx.h"
#include "probe_spec.h"
#include "resolve.h"

int probe_spec__parse(const char *arg, struct probe_spec *p)
{
	const char *colon = strrchr(arg, ':');

	if (!colon || colon == arg || !colon[1])
		return -EINVAL;
	*p = (struct probe_spec){ .lib = arg, .lib_len = colon - arg, .sym = colon + 1 };
	return 0;
}

bool probe_spec__matches(const struct probe_spec *p, const char *file)
{
	const char *base = path__base_name(file);
	char lib[PATH_MAX];
	size_t len;

	snprintf(lib, sizeof(lib), "%.*s", (int)p->lib_len, p->lib);
	if (strchr(lib, '/')) {
		char a[PATH_MAX], b[PATH_MAX];

		return realpath(lib, a) && realpath(file, b) && !strcmp(a, b);
	}
	len = strlen(lib);
	return !strcmp(lib, base) || (!strncmp(lib, base, len) && base[len] == '.');
}

int probe_spec__resolve(const struct probe_spec *p, const char *exe, char *out, size_t len)
{
	char name[PATH_MAX];

	snprintf(name, sizeof(name), "%.*s", (int)p->lib_len, p->lib);
	if (!strcmp(path__base_name(name), path__base_name(exe)) || !strcmp(name, exe)) {
		snprintf(out, len, "%s", exe);
		return 0;
	}
	return resolve__library(exe, name, out, len);
}

void probe_spec__lib_name(const struct probe_spec *p, char *buf, size_t len)
{
	const char *lib = p->lib, *end = p->lib + p->lib_len;

	for (const char *s = p->lib; s < end; s++)
		if (*s == '/')
			lib = s + 1;
	snprintf(buf, len, "%.*s", (int)(end - lib), lib);
}

int probe_spec__check(const struct probe_spec *p, char *why, size_t len)
{
	char lib[PATH_MAX];
	struct stat st;
	__u64 off;
	int err;

	snprintf(lib, sizeof(lib), "%.*s", (int)p->lib_len, p->lib);
	if (!strchr(lib, '/'))
		return 0; /* a name: the library may be loaded late, under any path */
	if (stat(lib, &st)) {
		err = -errno;
		snprintf(why, len, "%s: %s", lib, strerror(errno));
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, len, "%s is not a regular file", lib);
		return -EINVAL;
	}
	err = elfx__sym_offset(lib, p->sym, &off);
	if (err == -ENOEXEC)
		snprintf(why, len, "%s is not an ELF file", lib);
	else if (err == -ENOENT)
		snprintf(why, len, "%s has no function %s", lib, p->sym);
	else if (err)
		snprintf(why, len, "%s: %s", lib, strerror(-err));
	return err;
}
