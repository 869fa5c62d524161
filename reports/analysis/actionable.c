// SPDX-License-Identifier: GPL-2.0
/* The frame of a stack a user can act on: see actionable.h. */
#include <ctype.h>
#include <string.h>

#include "actionable.h"
#include "names.h"
#include "pyframes.h"
#include "strtab.h"

/*
 * Files whose code a user does not write: the C and C++ runtimes and the dynamic loader, the
 * interpreter (its frames give way to Python's, where the stack has them), the CUDA driver and
 * runtime. A sample in memcpy called from the program's loop is the loop's time.
 */
static bool system_module(const char *m)
{
	static const char *const prefixes[] = {
		"libc.so", "libc-",	"ld-linux",   "libpthread", "libm.so",	"libm-",
		"libdl",   "librt",	"libstdc++",  "libgcc_s",   "libcuda.", "libcudart",
		"python",  "libpython", "linux-vdso", "[vdso]",
	};

	if (!m)
		return false;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(m, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* Whether path lies under dir (a file or a folder), on a '/' boundary. */
static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	return n && !strncmp(path, dir, n) && (path[n] == '/' || !path[n] || dir[n - 1] == '/');
}

/* The next folder of path from *at on (its name and length); false at the file's name. */
static bool next_dir(const char *path, const char **at, const char **name, size_t *len)
{
	const char *p = *at, *slash;

	while (*p == '/')
		p++;
	slash = strchr(p, '/');
	if (!slash)
		return false;
	*name = p;
	*len = slash - p;
	*at = slash + 1;
	return true;
}

static bool is_dir(const char *name, size_t len, const char *want)
{
	return len == strlen(want) && !strncmp(name, want, len);
}

/* "python3.11", "python3.13t", "python3": the folder of an interpreter's standard library. */
static bool python_dir(const char *name, size_t len)
{
	size_t i = 6;

	if (len < 7 || strncmp(name, "python", 6) || !isdigit((unsigned char)name[i]))
		return false;
	while (i < len && (isdigit((unsigned char)name[i]) || name[i] == '.'))
		i++;
	return i == len || (i + 1 == len && name[i] == 't');
}

/* A folder a conda or virtual environment is made in, whose lib/ holds packages' libraries. */
static bool env_dir(const char *name, size_t len)
{
	static const char *const marks[] = { "conda", "forge", "venv", "virtualenvs" };

	if (is_dir(name, len, "envs"))
		return true;
	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		if (len >= strlen(marks[i]) && memmem(name, len, marks[i], strlen(marks[i])))
			return true;
	return false;
}

bool actionable__library(const char *path, bool python, const char *const *own, size_t nown)
{
	static const char *const system_dirs[] = {
		"/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/local/lib", "/usr/local/lib64"
	};
	const char *at = path, *name, *prev = NULL;
	size_t len, prevlen = 0;
	bool env = false;

	if (!path)
		return false;
	for (size_t i = 0; i < nown; i++)
		if (under(path, own[i]))
			return false;
	/* The interpreter's own modules, frozen into it: importlib, and more since 3.11. */
	if (python && !strncmp(path, "<frozen ", 8))
		return true;
	if (!python)
		for (size_t i = 0; i < sizeof(system_dirs) / sizeof(system_dirs[0]); i++)
			if (under(path, system_dirs[i]))
				return true;
	while (next_dir(path, &at, &name, &len)) {
		if (is_dir(name, len, "site-packages") || is_dir(name, len, "dist-packages"))
			return true;
		/* PREFIX/lib/pythonX.Y/...: the standard library, wherever the prefix is. */
		if (python && python_dir(name, len) && prev &&
		    (is_dir(prev, prevlen, "lib") || is_dir(prev, prevlen, "lib64")))
			return true;
		/* A conda or virtual environment's lib/: the packages' native libraries. */
		if (!python && env && (is_dir(name, len, "lib") || is_dir(name, len, "lib64")))
			return true;
		env = env || env_dir(name, len);
		prev = name;
		prevlen = len;
	}
	return false;
}

/* Whether a frame is a library's (actionable__library), by where its code comes from. */
static bool library_frame(struct names *nm, __u32 tgid, __u64 addr, bool leaf)
{
	size_t nown;
	const char *const *own = names__own(nm, &nown);

	return actionable__library(names__user_path(nm, tgid, addr, leaf), pyframes__is(addr), own,
				   nown);
}

const char *actionable__python_row(struct strtab *strs, const char *name, const char **line)
{
	size_t len = strlen(name), open, colon;

	*line = NULL;
	if (len < 4 || name[len - 1] != ')')
		return name;
	for (open = len - 1; open > 0 && name[open] != '('; open--)
		;
	if (!open || name[open - 1] != ' ')
		return name;
	for (colon = len - 2; colon > open && isdigit((unsigned char)name[colon]); colon--)
		;
	if (name[colon] != ':' || colon == len - 2)
		return name; /* no line: "function (file)" already */
	*line = strtab__internf(strs, "%.*s", (int)(len - 2 - open), name + open + 1);
	return strtab__internf(strs, "%.*s)", (int)colon, name);
}

/*
 * A Python frame's row: "function (file)", its line apart; a module's top level by its line,
 * "<module> (file:line)", where a flat script's statements are its only functions.
 */
static const char *python_row(struct strtab *strs, const char *name, const char **line)
{
	if (!strncmp(name, "<module> (", 10)) {
		*line = NULL;
		return name;
	}
	return actionable__python_row(strs, name, line);
}

/* "function (file)" as the collector's row under it: "gc (in function, file)". */
static const char *gc_row(struct strtab *strs, const char *row)
{
	size_t len = strlen(row);
	const char *open = len > 1 && row[len - 1] == ')' ? strrchr(row, '(') : NULL, *out;
	int fn, file;

	if (!open || open == row || open[-1] != ' ') {
		out = strtab__internf(strs, "gc (in %s)", row);
	} else {
		fn = (int)(open - 1 - row);
		file = (int)(row + len - 1 - (open + 1));
		out = strtab__internf(strs, "gc (in %.*s, %.*s)", fn, row, file, open + 1);
	}
	return out ?: row;
}

/* A frame as a breakdown names it: its function, or its library where it has none. */
static const char *frame_label(struct names *nm, struct strtab *strs, __u32 tgid, __u64 addr,
			       bool leaf)
{
	bool named;
	const char *m = names__user_module(nm, tgid, addr, leaf, &named);

	if (named || !m)
		return names__user(nm, tgid, addr, leaf);
	return strtab__internf(strs, "%s (%s)", m, names__why_unnamed(nm, m));
}

bool stack__actionable(struct names *nm, struct strtab *strs, __u32 tgid, const __u64 *user,
		       __u32 nu, struct actionable *out)
{
	__u32 i, first = nu, row, gc = nu;

	*out = (struct actionable){};
	/* The vDSO's clock_gettime is the caller's time. */
	for (i = 0; i < nu && first == nu; i++) {
		bool named;
		const char *m = names__user_module(nm, tgid, user[i], i == 0, &named);

		if (!(m && strstr(m, "vdso")) &&
		    !strstr(names__user(nm, tgid, user[i], i == 0), "vdso"))
			first = i;
	}
	if (first == nu)
		return false;
	out->leaf = frame_label(nm, strs, tgid, user[first], first == 0);
	/* The innermost Python frame of the user's own code; else the innermost of any. */
	for (i = first, row = nu; i < nu; i++)
		if (pyframes__is_gc(user[i])) {
			gc = i;
		} else if (pyframes__is(user[i])) {
			row = row == nu ? i : row;
			if (!library_frame(nm, tgid, user[i], false)) {
				row = i;
				break;
			}
		}
	if (row < nu) {
		out->name = python_row(strs, names__user(nm, tgid, user[row], false), &out->line);
		if (gc < row)
			out->name = gc_row(strs, out->name);
		return true;
	}
	/* The same of native code: the program's and its own libraries' over packages'. */
	for (i = first, row = nu; i < nu; i++) {
		bool named;
		const char *m = names__user_module(nm, tgid, user[i], i == 0, &named);

		if ((named || m) && !system_module(m)) {
			row = row == nu ? i : row;
			if (!library_frame(nm, tgid, user[i], i == 0)) {
				row = i;
				break;
			}
		}
	}
	out->name = row < nu ? frame_label(nm, strs, tgid, user[row], row == 0) : out->leaf;
	return true;
}
