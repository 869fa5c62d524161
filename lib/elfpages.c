// SPDX-License-Identifier: GPL-2.0
/* Dropping an ELF file image's resident pages (elfpages.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elfpages.h"
#include "vec.h"

int elfpages__scan(struct elfpages *ep)
{
	char line[512], perms[8];
	unsigned long start = 0, end = 0, ino = 0, kb, rss = 0;
	bool in = false; /* the current mapping is a file's, its Anonymous line not read yet */
	FILE *f = fopen("/proc/self/smaps", "re");

	ep->n = 0;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e, i;
		char p[8];

		/* A mapping's first line (an attribute's name may start as a hex number does). */
		if (sscanf(line, "%lx-%lx %7s %*s %*s %lu", &s, &e, p, &i) == 4) {
			start = s, end = e, ino = i;
			memcpy(perms, p, sizeof(perms));
			in = ino != 0; /* inode 0: anonymous */
			continue;
		}
		if (in && sscanf(line, "Rss: %lu kB", &kb) == 1)
			rss = kb;
		/* Anonymous: the pages of its own (written) that the mapping holds. */
		if (!in || sscanf(line, "Anonymous: %lu kB", &kb) != 1)
			continue;
		in = false;
		if (kb && perms[3] == 'p') /* a page written: the process's, not the file's */
			continue;
		if (array__grow((void **)&ep->maps, &ep->cap, sizeof(*ep->maps), ep->n + 1, 64))
			break;
		ep->maps[ep->n++] = (struct elfpages_map){ start, end, rss };
	}
	fclose(f);
	return 0;
}

void elfpages__fini(struct elfpages *ep)
{
	free(ep->maps);
	ep->maps = NULL;
	ep->n = ep->cap = 0;
}

bool elfpages__release(struct elfpages *ep, Elf *e)
{
	size_t size = 0;
	char *base = e ? elf_rawfile(e, &size) : NULL;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), lo, hi;

	if (!base || size < page)
		return false;
	lo = (uintptr_t)base & ~(page - 1);
	hi = ((uintptr_t)base + size + page - 1) & ~(page - 1);
	for (size_t i = 0; i < ep->n; i++) {
		if (lo < ep->maps[i].start || hi > ep->maps[i].end)
			continue;
		if (madvise((void *)lo, hi - lo, MADV_DONTNEED))
			return false;
		/* The whole mapping's: libelf maps a file whole, one mapping each. */
		ep->released_kb += ep->maps[i].rss_kb;
		ep->maps[i].rss_kb = 0;
		return true;
	}
	return false;
}

bool elfpages__release_one(Elf *e)
{
	struct elfpages ep = { 0 };
	bool done = !elfpages__scan(&ep) && elfpages__release(&ep, e);

	elfpages__fini(&ep);
	return done;
}
