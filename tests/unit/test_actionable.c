// SPDX-License-Identifier: GPL-2.0
/*
 * Your code first (reports/analysis/actionable.c): on-CPU time is named by the innermost frame
 * of the user's own code, a library's frame beneath it its leaf.
 *   - actionable__library() by a path's shape: the interpreter's standard library wherever its
 *     prefix is, site-packages and dist-packages, frozen modules; native files of the system's
 *     folders and of conda and virtual environments; --own's files and folders the user's, on a
 *     '/' boundary;
 *   - stack__actionable() on made-up stacks: a dataset's __getitem__ over numpy's _raw_fft,
 *     the program's loop over zlib, a conda package's library; the innermost frame where no
 *     frame is the user's, as before; --own turning a package back into the row;
 *   - the garbage collector's frame: "gc (in FUNCTION, FILE)" where it is beneath the row's
 *     frame, the row's own name where it is above it; a module's top level named by its line.
 */
#include <string.h>

#include "actionable.h"
#include "pyframes.h"
#include "strtab.h"
#include "testlib.h"

#define PY(k) (PYFRAME_TAG | (k))

/* The frames the stacks below are made of: this test names them itself (names.h's calls). */
static const struct frame {
	__u64 addr;
	const char *name, *module, *path; /* module NULL: a Python frame */
} frames[] = {
	{ 0x1000, "deflate_slow", "libz.so.1", "/usr/lib/x86_64-linux-gnu/libz.so.1.2.13" },
	{ 0x2000, "compress_batch", "prog", "/home/u/proj/build/prog" },
	{ 0x3000, "memcpy", "libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6" },
	{ 0x4000, "helper", "libhelper.so", "/opt/conda/envs/train/lib/libhelper.so" },
	{ 0x6000, "execute_real", "_pocketfft_internal.so",
	  "/srv/venv/lib/python3.11/site-packages/numpy/fft/_pocketfft_internal.so" },
	{ 0x7000, "mine", "libmine.so", "/home/u/proj/build/lib/libmine.so" },
	{ PY(1), "_raw_fft (_pocketfft.py:70)", NULL,
	  "/srv/venv/lib/python3.11/site-packages/numpy/fft/_pocketfft.py" },
	{ PY(2), "__getitem__ (dataset.py:12)", NULL, "/home/u/proj/dataset.py" },
	{ PY(3), "encode (encoder.py:200)", NULL, "/usr/lib/python3.11/json/encoder.py" },
	{ PY(4), "_find_and_load (<frozen importlib._bootstrap>:1)", NULL,
	  "<frozen importlib._bootstrap>" },
	{ PY(5), "<module> (train.py:42)", NULL, "/home/u/proj/train.py" },
	{ PYFRAME_GC, "gc", NULL, NULL },
};

static const char *const *own_now;
static size_t nown_now;

static const struct frame *frame(__u64 addr)
{
	for (size_t i = 0; i < sizeof(frames) / sizeof(frames[0]); i++)
		if (frames[i].addr == addr)
			return &frames[i];
	return NULL;
}

const char *names__user(struct names *n, __u32 tgid, __u64 addr, bool leaf)
{
	(void)n, (void)tgid, (void)leaf;
	return frame(addr)->name;
}

const char *names__user_module(struct names *n, __u32 tgid, __u64 addr, bool leaf, bool *named)
{
	(void)n, (void)tgid, (void)leaf;
	*named = true;
	return frame(addr)->module;
}

const char *names__user_path(struct names *n, __u32 tgid, __u64 addr, bool leaf)
{
	(void)n, (void)tgid, (void)leaf;
	return frame(addr)->path;
}

const char *const *names__own(const struct names *n, size_t *count)
{
	(void)n;
	*count = nown_now;
	return own_now;
}

const char *names__why_unnamed(const struct names *n, const char *module)
{
	(void)n, (void)module;
	return "stripped";
}

static void check_paths(void)
{
	static const struct {
		const char *path;
		bool python, library;
	} cases[] = {
		{ "/usr/lib/python3.11/json/encoder.py", true, true },
		{ "/home/u/.pyenv/versions/3.12.1/lib/python3.12/json/encoder.py", true, true },
		{ "/opt/conda/lib/python3.13t/zlib_helpers.py", true, true },
		{ "/usr/lib/python3/dist-packages/numpy/fft/_pocketfft.py", true, true },
		{ "/srv/venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py", true,
		  true },
		{ "<frozen importlib._bootstrap>", true, true },
		{ "/home/u/proj/train.py", true, false },
		{ "/home/u/proj/lib/python/util.py", true, false }, /* not pythonX.Y */
		{ "/home/u/proj/python3.11/x.py", true, false },    /* not under lib/ */
		{ "/usr/lib/myapp/tool.py", true, false },	    /* Python: by shape alone */
		{ "train.py", true, false },
		{ "<string>", true, false },
		{ "/usr/lib/x86_64-linux-gnu/libz.so.1.2.13", false, true },
		{ "/lib/x86_64-linux-gnu/libc.so.6", false, true },
		{ "/lib64/ld-linux-x86-64.so.2", false, true },
		{ "/usr/local/lib/libfoo.so", false, true },
		{ "/home/u/miniconda3/envs/t/lib/libstdc++.so.6", false, true },
		{ "/opt/conda/lib/libmkl_core.so.2", false, true },
		{ "/home/u/proj/.venv/lib/python3.11/site-packages/torch/lib/libtorch.so", false,
		  true },
		{ "/usr/libexec/helper", false, false }, /* not /usr/lib/ */
		{ "/usr/bin/python3.11", false, false },
		{ "/home/u/proj/build/prog", false, false },
		{ "/home/u/proj/build/lib/libmine.so", false, false },
		{ "/opt/conda/bin/python3.11", false, false },
	};
	const char *own[] = { "/usr/lib/python3/dist-packages/mypkg/",
			      "/usr/local/lib/libours.so" };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK(actionable__library(cases[i].path, cases[i].python, NULL, 0) ==
			      cases[i].library,
		      "%s (%s): expected %s", cases[i].path, cases[i].python ? "Python" : "native",
		      cases[i].library ? "a library's" : "the user's");
	CHECK(!actionable__library(NULL, false, NULL, 0), "no path: the user's (a JIT's code)");
	/* --own: a file or a folder, with or without its trailing '/', on a boundary. */
	CHECK(!actionable__library("/usr/lib/python3/dist-packages/mypkg/x.py", true, own, 2), "");
	CHECK(!actionable__library("/usr/lib/python3/dist-packages/mypkg", true, own, 2), "");
	CHECK(actionable__library("/usr/lib/python3/dist-packages/mypkg2/x.py", true, own, 2), "");
	CHECK(!actionable__library("/usr/local/lib/libours.so", false, own, 2), "");
	CHECK(actionable__library("/usr/local/lib/libours.so.1", false, own, 2), "");
}

static struct actionable name(struct strtab *strs, const __u64 *stack, __u32 n)
{
	struct actionable a;

	CHECK(stack__actionable(NULL, strs, 7, stack, n, &a), "a stack of %u frames", n);
	return a;
}

#define NAME(strs, ...)                            \
	name(strs, (const __u64[]){ __VA_ARGS__ }, \
	     sizeof((const __u64[]){ __VA_ARGS__ }) / sizeof(__u64))

static void check_stacks(struct strtab *strs)
{
	struct actionable a;

	/* A DataLoader worker: numpy's C code under numpy's Python under the user's dataset. */
	a = NAME(strs, 0x6000, PY(1), PY(2), PY(4));
	CHECK(!strcmp(a.name, "__getitem__ (dataset.py)"), "row %s", a.name);
	CHECK(a.line && !strcmp(a.line, "dataset.py:12"), "line %s", a.line ?: "none");
	CHECK(!strcmp(a.leaf, "execute_real"), "leaf %s", a.leaf);
	/* No Python frame of the user's: the innermost, as before. */
	a = NAME(strs, 0x3000, PY(3), PY(4));
	CHECK(!strcmp(a.name, "encode (encoder.py)") && !strcmp(a.leaf, "memcpy"), "row %s leaf %s",
	      a.name, a.leaf);
	/* Python's frames before a native frame of the user's own. */
	a = NAME(strs, 0x7000, PY(2));
	CHECK(!strcmp(a.name, "__getitem__ (dataset.py)"), "row %s", a.name);
	/* Native: the program's loop over zlib, the leaf zlib's. */
	a = NAME(strs, 0x1000, 0x2000);
	CHECK(!strcmp(a.name, "compress_batch") && !strcmp(a.leaf, "deflate_slow"),
	      "row %s leaf %s", a.name, a.leaf);
	/* Over libc (the runtime), zlib and a conda package's library: the user's libmine. */
	a = NAME(strs, 0x3000, 0x1000, 0x4000, 0x7000, 0x2000);
	CHECK(!strcmp(a.name, "mine") && !strcmp(a.leaf, "memcpy"), "row %s leaf %s", a.name,
	      a.leaf);
	/* Only libraries' code above the runtime: the innermost of it, as before. */
	a = NAME(strs, 0x3000, 0x1000, 0x4000);
	CHECK(!strcmp(a.name, "deflate_slow"), "row %s", a.name);

	/* The collector under the user's function, through numpy's: the user's is the row's. */
	a = NAME(strs, 0x3000, PYFRAME_GC, PY(1), PY(2), PY(4));
	CHECK(!strcmp(a.name, "gc (in __getitem__, dataset.py)"), "row %s", a.name);
	CHECK(a.line && !strcmp(a.line, "dataset.py:12") && !strcmp(a.leaf, "memcpy"),
	      "line %s leaf %s", a.line ?: "none", a.leaf);
	/* The collector above the row's frame (it ran a library's code, a finalizer): not its. */
	a = NAME(strs, 0x3000, PY(3), PY(2), PYFRAME_GC, PY(4));
	CHECK(!strcmp(a.name, "__getitem__ (dataset.py)"), "row %s", a.name);
	/* A flat script's top level: its line in the row, none apart. */
	a = NAME(strs, 0x1000, PY(5));
	CHECK(!strcmp(a.name, "<module> (train.py:42)") && !a.line, "row %s line %s", a.name,
	      a.line ?: "none");
	a = NAME(strs, 0x1000, PYFRAME_GC, PY(5));
	CHECK(!strcmp(a.name, "gc (in <module>, train.py:42)"), "row %s", a.name);

	/* --own: numpy's folder and the conda library are the user's. */
	{
		static const char *const own[] = { "/srv/venv/lib/python3.11/site-packages/numpy",
						   "/opt/conda/envs/train/lib/libhelper.so" };

		own_now = own;
		nown_now = 2;
		a = NAME(strs, 0x6000, PY(1), PY(2));
		CHECK(!strcmp(a.name, "_raw_fft (_pocketfft.py)") &&
			      !strcmp(a.leaf, "execute_real"),
		      "row %s leaf %s", a.name, a.leaf);
		a = NAME(strs, 0x1000, 0x4000, 0x2000);
		CHECK(!strcmp(a.name, "helper"), "row %s", a.name);
		own_now = NULL;
		nown_now = 0;
	}
}

int main(void)
{
	struct strtab *strs = strtab__new();

	CHECK(strs, "out of memory");
	check_paths();
	check_stacks(strs);
	strtab__free(strs);
	TEST_PASS();
}
