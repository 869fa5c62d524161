// SPDX-License-Identifier: GPL-2.0
/*
 * Letting go of an ELF image's pages (lib/elfpages.c), on the C library's file: after a
 * read of every section, the pages are resident (RssFile grows by the file's size); released,
 * RssFile falls back by at least half the file, and every section still reads the same bytes.
 * An image that is not the file's pages is never dropped: libelf's own copy of the file
 * (ELF_C_READ, malloc'd) and a private mapping with a written page keep their bytes.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <gelf.h>

#include "elfpages.h"
#include "testlib.h"

static long rss_file_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "RssFile: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* A sum over every byte of every section: reads them all. */
static unsigned long long sum_sections(Elf *e)
{
	unsigned long long sum = 0;
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d = elf_rawdata(scn, NULL);

		for (size_t i = 0; d && d->d_buf && i < d->d_size; i++)
			sum = sum * 31 + ((const unsigned char *)d->d_buf)[i];
	}
	return sum;
}

int main(void)
{
	Dl_info dl;
	int fd;
	struct stat st;
	unsigned long long want, got;
	long before, touched, after;
	const Elf_Cmd cmds[] = { ELF_C_READ_MMAP, ELF_C_READ_MMAP_PRIVATE };
	Elf *e;
	char *map;

	CHECK(dladdr((void *)printf, &dl) && dl.dli_fname, "the C library's file");
	fd = open(dl.dli_fname, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && !fstat(fd, &st), "open %s", dl.dli_fname);
	CHECK(st.st_size > (1 << 20), "%s of %lld bytes: too small to measure", dl.dli_fname,
	      (long long)st.st_size);
	elf_version(EV_CURRENT);

	/* The file's pages, mapped shared (r--s) and private (rw-p, never written). */
	for (size_t c = 0; c < 2; c++) {
		struct elfpages ep = { 0 };

		e = elf_begin(fd, cmds[c], NULL);
		CHECK(e, "elf_begin");
		before = rss_file_kb();
		want = sum_sections(e);
		touched = rss_file_kb();
		CHECK(touched - before > st.st_size / 1024 / 2,
		      "reading grew RssFile by %ld kB only", touched - before);
		CHECK(!elfpages__scan(&ep), "scan");
		CHECK(elfpages__release(&ep, e), "mode %zu: not released", c);
		CHECK(ep.released_kb > (unsigned long long)st.st_size / 1024 / 2,
		      "counted %llu kB let go", ep.released_kb);
		after = rss_file_kb();
		CHECK(touched - after > st.st_size / 1024 / 2, "mode %zu: RssFile %ld -> %ld kB", c,
		      touched, after);
		got = sum_sections(e);
		CHECK_EQ_U64(got, want);
		elfpages__fini(&ep);
		elf_end(e);
	}

	/* libelf's copy in malloc'd memory: not a mapping, never dropped. (elf_rawfile() reads the
	 * copy whole; asked after sections were read one by one, libelf loses those: asked first.) */
	e = elf_begin(fd, ELF_C_READ, NULL);
	CHECK(e, "elf_begin ELF_C_READ");
	CHECK(!elfpages__release_one(e), "released libelf's malloc'd copy");
	CHECK_EQ_U64(sum_sections(e), want);
	elf_end(e);

	/* A private mapping with a page written: the page is the process's, never dropped. */
	map = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	CHECK(map != MAP_FAILED, "mmap");
	map[st.st_size / 2] ^= 0x5a;
	e = elf_memory(map, st.st_size);
	CHECK(e, "elf_memory");
	want = sum_sections(e);
	CHECK(!elfpages__release_one(e), "released a mapping with a written page");
	CHECK_EQ_U64(sum_sections(e), want);
	elf_end(e);
	munmap(map, st.st_size);
	close(fd);
	printf("elfpages: released shared and private images; kept a copy and a written mapping\n");
	return 0;
}
