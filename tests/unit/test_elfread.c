// SPDX-License-Identifier: GPL-2.0
/*
 * ELF files read without mapping them (lib/elfread.c), on the C library's file: a walk of its
 * .dynsym finds malloc_trim where the dynamic loader put it; no mapping of the file appears while
 * it is read, by the walk or by libelf (the loader's are all there are); the bytes read at
 * malloc_trim are the file's, also where a uprobe wrote its breakpoint into every mapping of the
 * file, which this process's own text then shows (tests/cases/symbols_breakpoints.sh runs this
 * test under one, and holds it to saying so). A copy truncated while it is read gives short
 * reads and a changed file, never SIGBUS; the change is said once, a /proc/PID/root path as the
 * process names it. A FIFO is refused without blocking.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "elfread.h"
#include "testlib.h"

/* This process's mappings of the file of st. */
static int mappings(const struct stat *st)
{
	char line[PATH_MAX + 128];
	unsigned int maj, min;
	unsigned long ino;
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		n += sscanf(line, "%*s %*s %*s %x:%x %lu", &maj, &min, &ino) == 3 &&
		     ino == st->st_ino && makedev(maj, min) == st->st_dev;
	if (f)
		fclose(f);
	return n;
}

/* The file offset of ELF address vaddr. */
static __u64 file_offset(Elf *e, __u64 vaddr)
{
	size_t n;

	CHECK(!elf_getphdrnum(e, &n), "phdrs");
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, i, &ph) && ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
		    vaddr < ph.p_vaddr + ph.p_filesz)
			return vaddr - ph.p_vaddr + ph.p_offset;
	}
	CHECK(0, "0x%llx in no segment", (unsigned long long)vaddr);
	return 0;
}

/* What f(args) writes on stderr, into buf. */
#define STDERR_OF(buf, call)                             \
	do {                                             \
		FILE *_t = tmpfile();                    \
		int _saved = dup(2);                     \
		size_t _n;                               \
		CHECK(_t &&_saved >= 0, "tmpfile");      \
		fflush(stderr);                          \
		dup2(fileno(_t), 2);                     \
		call;                                    \
		fflush(stderr);                          \
		dup2(_saved, 2);                         \
		close(_saved);                           \
		rewind(_t);                              \
		_n = fread(buf, 1, sizeof(buf) - 1, _t); \
		buf[_n] = '\0';                          \
		fclose(_t);                              \
	} while (0)

int main(void)
{
	char copy[] = "/tmp/test_elfread.XXXXXX", shown[PATH_MAX + 64], said[4 * PATH_MAX];
	unsigned char file[16], got[16];
	const unsigned char *text = (const unsigned char *)(void *)malloc_trim;
	__u64 value = 0, off;
	struct elfread_syms t;
	struct elfread r, r2;
	struct stat st;
	Elf_Scn *scn = NULL;
	size_t nsyms = 0;
	int before, fd, out;
	Dl_info dl;
	char *buf;

	CHECK(dladdr((void *)malloc_trim, &dl) && dl.dli_fname, "the C library's file");
	CHECK(!stat(dl.dli_fname, &st), "stat %s", dl.dli_fname);
	before = mappings(&st);
	CHECK(before > 0, "the loader maps %s", dl.dli_fname);

	/* Every symbol of .dynsym, malloc_trim among them, with libelf reading sections too. */
	CHECK(!elfread__open(&r, dl.dli_fname), "open %s", dl.dli_fname);
	CHECK(!elfread__syms_open(&t, &r, SHT_DYNSYM), ".dynsym");
	for (size_t i = 1; i < t.n; i++) {
		const char *name;
		GElf_Sym sym;

		CHECK(!elfread__sym(&t, i, &sym), "symbol %zu", i);
		name = elfread__sym_name(&t, sym.st_name);
		CHECK(name, "the name of symbol %zu", i);
		nsyms++;
		if (!strcmp(name, "malloc_trim") && GELF_ST_TYPE(sym.st_info) == STT_FUNC)
			value = sym.st_value;
	}
	elfread__syms_close(&t);
	while ((scn = elf_nextscn(r.e, scn)))
		CHECK(elf_getdata(scn, NULL), "section %zu", elf_ndxscn(scn));
	CHECK(value, "malloc_trim in .dynsym (%zu symbols)", nsyms);
	CHECK((const unsigned char *)dl.dli_fbase + value == text, "malloc_trim at 0x%llx",
	      (unsigned long long)value);

	/* Its first bytes as the file holds them; this process's text may hold a breakpoint. */
	off = file_offset(r.e, value);
	CHECK(!elfread__pread(&r, got, sizeof(got), off), "read at 0x%llx",
	      (unsigned long long)off);
	fd = open(dl.dli_fname, O_RDONLY);
	CHECK(fd >= 0 && pread(fd, file, sizeof(file), off) == sizeof(file), "pread");
	close(fd);
	CHECK(!memcmp(got, file, sizeof(file)), "the file's bytes");
	CHECK(got[0] != 0xcc, "an int3 in the file");
	printf("malloc_trim's first byte: file 0x%02x, this process's text 0x%02x (%s)\n", got[0],
	       text[0], text[0] == got[0] ? "the file's" : "a breakpoint");
	CHECK(!elfread__changed(&r), "libc changed");
	CHECK_EQ_U64(mappings(&st), before);
	elfread__close(&r);

	/* A copy, truncated after its section headers were read. */
	fd = mkstemp(copy);
	CHECK(fd >= 0, "mkstemp");
	out = open(dl.dli_fname, O_RDONLY);
	buf = malloc(st.st_size);
	CHECK(out >= 0 && buf && read(out, buf, st.st_size) == st.st_size, "read libc");
	CHECK(write(fd, buf, st.st_size) == st.st_size, "write the copy");
	close(out);
	CHECK(!elfread__open(&r, copy), "open the copy");
	CHECK(!elfread__syms_open(&t, &r, SHT_DYNSYM), ".dynsym of the copy");
	CHECK(!ftruncate(fd, 4096), "truncate");
	{
		GElf_Sym sym;

		CHECK(elfread__sym(&t, 1, &sym) == -ESTALE, "a symbol past the end read");
	}
	CHECK(r.changed && elfread__changed(&r), "the change seen");
	CHECK(!elfread__strdup(&r, t.str_off, t.str_size, 1), "a name past the end read");
	scn = NULL;
	while ((scn = elf_nextscn(r.e, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS && sh.sh_offset > 4096)
			CHECK(!elf_getdata(scn, NULL), "section %zu past the end", elf_ndxscn(scn));
	}
	elfread__syms_close(&t);

	/* Said once, by file: a second path to it is the same file. */
	snprintf(shown, sizeof(shown), "/proc/%d/root%s", getpid(), copy);
	STDERR_OF(said, (elfread__say_changed(&r, shown), elfread__say_changed(&r, copy)));
	{
		char want[PATH_MAX + 64];

		snprintf(want, sizeof(want),
			 "gapscope: %s changed while read: its frames unnamed\n", copy);
		CHECK(!strcmp(said, want), "said: '%s'", said);
	}
	elfread__close(&r);
	close(fd);
	unlink(copy);

	/* A FIFO: refused, not waited on. */
	CHECK(mkdtemp(strcpy(copy, "/tmp/test_elfread.XXXXXX")), "mkdtemp");
	snprintf(shown, sizeof(shown), "%s/fifo", copy);
	CHECK(!mkfifo(shown, 0600), "mkfifo");
	CHECK(elfread__open(&r2, shown) == -EINVAL, "a FIFO opened");
	unlink(shown);
	rmdir(copy);
	free(buf);
	printf("elfread: %zu symbols of %s read, no mapping made; a truncated copy read short\n",
	       nsyms, dl.dli_fname);
	return 0;
}
