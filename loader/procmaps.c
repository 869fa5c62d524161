// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "procmaps.h"

int procmaps__open(struct procmaps *m, pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	m->f = fopen(path, "re");
	m->own = true;
	return m->f ? 0 : -errno;
}

void procmaps__from_file(struct procmaps *m, FILE *f)
{
	m->f = f;
	m->own = false;
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
