// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
