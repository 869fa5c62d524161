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
	__u32 i, first = nu;

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
	for (i = first; i < nu; i++)
		if (pyframes__is(user[i])) {
			out->name = actionable__python_row(
				strs, names__user(nm, tgid, user[i], false), &out->line);
			return true;
		}
	for (i = first; i < nu; i++) {
		bool named;
		const char *m = names__user_module(nm, tgid, user[i], i == 0, &named);

		if ((named || m) && !system_module(m)) {
			out->name = frame_label(nm, strs, tgid, user[i], i == 0);
			return true;
		}
	}
	out->name = out->leaf;
	return true;
}
