// SPDX-License-Identifier: GPL-2.0
/*
 * Library resolution (loader/resolve.c) in ld.so's order, on this machine's libc: the ld.so cache
 * finds the libc this very test runs with; LD_LIBRARY_PATH comes before DT_RUNPATH ($ORIGIN
 * expanded), DT_RPATH before LD_LIBRARY_PATH; a file of the right name that is not an ELF
 * library of the executable's class is passed over; an unknown name is -ENOENT. Executables are
 * found on PATH as execvp() would.
 */
#include <dlfcn.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "elfx.h"
#include "resolve.h"
#include "testlib.h"

static char tmp[64], libc_real[PATH_MAX];

static void sh(const char *fmt, const char *arg)
{
	char cmd[PATH_MAX * 2];
	int rc;

	snprintf(cmd, sizeof(cmd), fmt, arg, arg, arg);
	rc = system(cmd);
	CHECK(rc == 0, "%s: %d", cmd, rc);
}

/* The real path of what resolve__library found, for comparing files across symlinks. */
static const char *resolved(const char *exe, const char *name)
{
	static char out[PATH_MAX], real[PATH_MAX];
	int err = resolve__library(exe, name, out, sizeof(out));

	CHECK(!err, "%s for %s: %d", name, exe, err);
	CHECK(realpath(out, real), "%s exists", out);
	return out;
}

static void executables(void)
{
	char out[PATH_MAX], a[PATH_MAX], b[PATH_MAX];

	setenv("PATH", "/nonexistent:/usr/bin:/bin", 1);
	CHECK(!resolve__executable("sh", out, sizeof(out)), "sh on PATH");
	CHECK(out[0] == '/' && !access(out, X_OK), "%s", out);
	CHECK(!strcmp(out, "/usr/bin/sh"), "the first PATH entry that has it: %s", out);
	CHECK(!resolve__executable("/bin/sh", out, sizeof(out)) && !strcmp(out, "/bin/sh"), "%s",
	      out);
	CHECK(resolve__executable("gapscope-no-such-command", out, sizeof(out)) == -ENOENT,
	      "unknown");
	CHECK(resolve__executable("/etc/passwd", out, sizeof(out)) == -EACCES, "not executable");
	CHECK(realpath("/usr/bin/sh", a) && realpath("/bin/sh", b), "sh");
}

static void cache(void)
{
	char real[PATH_MAX];

	/* No RPATH/RUNPATH in /bin/sh and no LD_LIBRARY_PATH: the cache answers. */
	unsetenv("LD_LIBRARY_PATH");
	CHECK(realpath(resolved("/bin/sh", "libc.so.6"), real), "libc");
	CHECK(!strcmp(real, libc_real), "cache: %s, this process maps %s", real, libc_real);
	CHECK(resolve__library("/bin/sh", "libgapscope-none.so.9", real, sizeof(real)) == -ENOENT,
	      "unknown library");
	CHECK(resolve__library("/nonexistent/exe", "libc.so.6", real, sizeof(real)) < 0,
	      "no executable");
}

static void search_order(void)
{
	char path[PATH_MAX * 2], exe_runpath[PATH_MAX], exe_rpath[PATH_MAX];
	const char *r;

	/* Two executables: one with DT_RUNPATH $ORIGIN/lib, one with DT_RPATH $ORIGIN/rlib. */
	snprintf(path, sizeof(path), "%s/main.c", tmp);
	FILE *f = fopen(path, "w");

	CHECK(f, "%s", path);
	fputs("int main(void) { return 0; }\n", f);
	fclose(f);
	sh("mkdir -p %s/bin/lib %s/bin/rlib %s/ldp", tmp);
	if (system("command -v ${CC:-cc} >/dev/null")) {
		fprintf(stderr, "no C compiler: RUNPATH and RPATH orders not checked\n");
		return;
	}
	sh("${CC:-cc} -o %s/bin/runpath %s/main.c -Wl,--enable-new-dtags,-rpath,'$ORIGIN/lib'",
	   tmp);
	sh("${CC:-cc} -o %s/bin/rpath %s/main.c -Wl,--disable-new-dtags,-rpath,'$ORIGIN/rlib'",
	   tmp);
	snprintf(exe_runpath, sizeof(exe_runpath), "%s/bin/runpath", tmp);
	snprintf(exe_rpath, sizeof(exe_rpath), "%s/bin/rpath", tmp);
	/* Links to the real libc, in every directory; a text file of the same name in one. */
	for (int i = 0; i < 3; i++) {
		static const char *const dirs[] = { "bin/lib", "bin/rlib", "ldp" };

		snprintf(path, sizeof(path), "%s/%s/libc.so.6", tmp, dirs[i]);
		CHECK(!symlink(libc_real, path), "%s", path);
	}
	sh("mkdir -p %s/bad && echo 'not ELF' > %s/bad/libc.so.6", tmp);

	unsetenv("LD_LIBRARY_PATH");
	r = resolved(exe_runpath, "libc.so.6");
	CHECK(strstr(r, "/bin/lib/libc.so.6"), "RUNPATH with $ORIGIN: %s", r);
	snprintf(path, sizeof(path), "%s/bad:%s/ldp", tmp, tmp);
	setenv("LD_LIBRARY_PATH", path, 1);
	r = resolved(exe_runpath, "libc.so.6");
	CHECK(strstr(r, "/ldp/libc.so.6"), "LD_LIBRARY_PATH before RUNPATH, not ELF skipped: %s",
	      r);
	r = resolved(exe_rpath, "libc.so.6");
	CHECK(strstr(r, "/bin/rlib/libc.so.6"), "RPATH before LD_LIBRARY_PATH: %s", r);
	unsetenv("LD_LIBRARY_PATH");
	r = resolved(exe_rpath, "libc.so.6");
	CHECK(strstr(r, "/bin/rlib/libc.so.6"), "RPATH: %s", r);
}

int main(void)
{
	Dl_info info;

	/* A function of libc's that no sanitizer's runtime intercepts (printf is, under ASan). */
	CHECK(dladdr((void *)&gnu_get_libc_version, &info) && info.dli_fname,
	      "where gnu_get_libc_version comes from");
	CHECK(realpath(info.dli_fname, libc_real), "%s", info.dli_fname);
	snprintf(tmp, sizeof(tmp), "/tmp/test_loader_resolve.XXXXXX");
	CHECK(mkdtemp(tmp), "mkdtemp");
	executables();
	cache();
	search_order();
	sh("rm -rf %s", tmp);
	TEST_PASS();
}
