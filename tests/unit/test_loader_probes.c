// SPDX-License-Identifier: GPL-2.0
/*
 * Probe matching (loader/probe_spec.c): --probe LIB:SYM parsed at its last ':'; which files a LIB
 * names (a path: the same file through symlinks; a name: the file name with or without its
 * version suffix, never a longer name); the file attached to before exec (the executable itself,
 * or the library as ld.so finds it); the name the mmap hook watches; and the symbol's file
 * offset, checked against the code this process runs.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <string.h>

#include "elfx.h"
#include "resolve.h"
#include "probe_spec.h"
#include "testlib.h"

static char libc_real[PATH_MAX];

static struct probe_spec parse(const char *arg)
{
	struct probe_spec p;

	CHECK(!probe_spec__parse(arg, &p), "%s parses", arg);
	return p;
}

static void parsing(void)
{
	static const char *const bad[] = { "libc.so.6", ":free", "libc.so.6:", ":", "" };
	struct probe_spec p = parse("libc.so.6:free");

	CHECK(p.lib_len == 9 && !strncmp(p.lib, "libc.so.6", 9), "lib %.*s", (int)p.lib_len, p.lib);
	CHECK(!strcmp(p.sym, "free"), "sym %s", p.sym);
	p = parse("/opt/a:b/libx.so:sym"); /* the last ':' splits */
	CHECK(p.lib_len == 16 && !strcmp(p.sym, "sym"), "%zu %s", p.lib_len, p.sym);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		CHECK(probe_spec__parse(bad[i], &p) == -EINVAL, "'%s' is rejected", bad[i]);
}

static void matching(void)
{
	static const struct {
		const char *spec, *file;
		bool match;
	} cases[] = {
		{ "libc.so.6:free", "/usr/lib/x86_64-linux-gnu/libc.so.6", true },
		{ "libc.so:free", "/usr/lib/x86_64-linux-gnu/libc.so.6", true },
		{ "libc:free", "/lib/libc.so.6", true },
		{ "libc:free", "libc.so.6", true },
		{ "lib:free", "/lib/libc.so.6", false }, /* a prefix of the name, not a version */
		{ "libc.so.6.1:free", "/lib/libc.so.6", false },
		{ "libcuda:cuInit", "/lib/libc.so.6", false },
		{ "libcuda.so:cuInit", "/usr/lib/libcuda.so.1", true },
		{ "app:main", "/srv/bin/app", true },
		{ "app:main", "/srv/bin/app2", false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct probe_spec p = parse(cases[i].spec);

		CHECK(probe_spec__matches(&p, cases[i].file) == cases[i].match, "%s on %s: %s",
		      cases[i].spec, cases[i].file, cases[i].match ? "no match" : "a match");
	}
}

static void paths(void)
{
	char tmp[] = "/tmp/test_loader_probes.XXXXXX", link[64], spec[PATH_MAX + 8];
	struct probe_spec p;

	CHECK(mkdtemp(tmp), "mkdtemp");
	snprintf(link, sizeof(link), "%s/libc-link.so", tmp);
	CHECK(!symlink(libc_real, link), "%s", link);
	/* A path names the file itself, whatever the name it is reached by. */
	snprintf(spec, sizeof(spec), "%s:free", link);
	p = parse(spec);
	CHECK(probe_spec__matches(&p, libc_real), "%s names %s", link, libc_real);
	CHECK(!probe_spec__matches(&p, "/bin/sh"), "and not another file");
	CHECK(!probe_spec__matches(&p, "/nonexistent/libc-link.so"), "nor one of the same name");
	unlink(link);
	rmdir(tmp);
}

static void resolution(void)
{
	char out[PATH_MAX], real[PATH_MAX], name[64];
	struct probe_spec p;

	unsetenv("LD_LIBRARY_PATH");
	p = parse("libc.so.6:free");
	CHECK(!probe_spec__resolve(&p, "/bin/sh", out, sizeof(out)), "libc for /bin/sh");
	CHECK(realpath(out, real) && !strcmp(real, libc_real), "%s, this process maps %s", out,
	      libc_real);
	p = parse("sh:main"); /* the executable itself, by name */
	CHECK(!probe_spec__resolve(&p, "/bin/sh", out, sizeof(out)), "sh");
	CHECK(!strcmp(out, "/bin/sh"), "%s", out);
	p = parse("/bin/sh:main");
	CHECK(!probe_spec__resolve(&p, "/bin/sh", out, sizeof(out)) && !strcmp(out, "/bin/sh"),
	      "%s", out);
	p = parse("libgapscope-none.so.3:f");
	CHECK(probe_spec__resolve(&p, "/bin/sh", out, sizeof(out)) == -ENOENT, "unknown library");

	p = parse("/opt/x/libfoo.so.1:bar");
	probe_spec__lib_name(&p, name, sizeof(name));
	CHECK(!strcmp(name, "libfoo.so.1"), "watched as %s", name);
	p = parse("libcuda.so:cuInit");
	probe_spec__lib_name(&p, name, sizeof(name));
	CHECK(!strcmp(name, "libcuda.so"), "watched as %s", name);
}

/* The offset a uprobe goes to holds the code this process runs for the symbol. */
static void symbol_offset(void)
{
	unsigned char file[16];
	__u64 off = 0;
	int fd;

	CHECK(!elfx__sym_offset(libc_real, "malloc_trim", &off), "malloc_trim in libc");
	CHECK(off > 0, "offset %llx", (unsigned long long)off);
	fd = open(libc_real, O_RDONLY);
	CHECK(fd >= 0 && pread(fd, file, sizeof(file), off) == sizeof(file), "read libc");
	close(fd);
	/* From the second byte: a recorder elsewhere may have put its breakpoint on the first. */
	CHECK(!memcmp(file + 1, (unsigned char *)(void *)malloc_trim + 1, sizeof(file) - 1),
	      "the bytes at offset %llx are malloc_trim's", (unsigned long long)off);
	CHECK(elfx__sym_offset(libc_real, "gapscope_no_such_function", &off) == -ENOENT,
	      "unknown symbol");
}

int main(void)
{
	Dl_info info;

	CHECK(dladdr((void *)&malloc_trim, &info) && info.dli_fname, "where malloc_trim is");
	CHECK(realpath(info.dli_fname, libc_real), "%s", info.dli_fname);
	parsing();
	matching();
	paths();
	resolution();
	symbol_offset();
	TEST_PASS();
}
