/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Flame graphs as self-contained SVG: a frame's width is proportional to its weight, the root at
 * the bottom. The embedded script zooms on click, searches (highlighting matches and showing
 * their share) and the native tooltip gives each frame's time and share. Kernel and synthetic
 * frames have their own colours.
 */
#ifndef GAPSCOPE_FLAMEGRAPH_H
#define GAPSCOPE_FLAMEGRAPH_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "folded.h"

struct flame_opts {
	const char *title;    /* the gap's chain; NULL: "Flame graph" */
	const char *subtitle; /* e.g. "gap 3 on GPU 0: 2.31 s from 12.004 s"; may be NULL */
	unsigned int width;   /* pixels; 0: 1200 */
	/*
	 * The SVG stays under about this many bytes (0: FLAME_MAX_BYTES): past it the narrowest
	 * frames are left out, whole subtrees at a time, their time still counted in their
	 * parents; the SVG says how many and how much time, and so does struct flame_stats.
	 */
	size_t max_bytes;
	bool no_script; /* leave out the script: for a page that brings its own */
};

#define FLAME_MAX_BYTES (4u << 20)

struct flame_stats {
	size_t frames;	       /* frames drawn */
	size_t frames_omitted; /* frames left out for max_bytes */
	__u64 ns_omitted;      /* their time (each omitted subtree counted once) */
};

/* Writes the SVG. stats may be NULL. Returns 0, or -1 on a write error. */
int flamegraph__write_svg(FILE *out, const struct folded *f, const struct flame_opts *o,
			  struct flame_stats *stats);
/* The same into a malloc'd NUL-terminated buffer (*len without the NUL); -1 on failure. */
int flamegraph__render(const struct folded *f, const struct flame_opts *o, char **buf, size_t *len,
		       struct flame_stats *stats);

#endif /* GAPSCOPE_FLAMEGRAPH_H */
