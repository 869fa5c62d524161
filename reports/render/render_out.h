/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every rendered output of a finished analysis, written into the report's directory next to
 * what the analysis wrote there (summary.json, gaps/NNNN.folded, gaps/all.folded):
 *
 *   gaps/NNNN.svg          each gap's flame graph, titled with its chain, from its folded file
 *   gaps/all.svg           all gaps together
 *   gaps.speedscope.json   the all-gaps profile first, then one per gap
 *   timeline.json          Chrome trace events for the Perfetto UI (perfetto.h): a second pass
 *                          over the trace
 *   index.html             the page (html.h), reading the graphs back from their files
 *
 *	if (render_out__write(dfd, dir, trace_path, a, NULL, NULL))
 *		goto fail;	(what could not be written was said on stderr)
 */
#ifndef GAPSCOPE_RENDER_OUT_H
#define GAPSCOPE_RENDER_OUT_H

#include <stddef.h>

#include "gap.h"
#include "html.h"
#include "perfetto.h"

struct render_out_opts {
	struct timeline_opts timeline;
	size_t html_max_bytes; /* 0: HTML_MAX_BYTES */
	size_t svg_max_bytes;  /* 0: FLAME_MAX_BYTES */
};

/* What was downsampled to keep the files small. */
struct render_out_stats {
	size_t svgs;
	size_t svg_frames_omitted; /* over all SVGs, for svg_max_bytes */
	size_t svg_max;		   /* the largest SVG's bytes */
	struct html_stats html;
	struct timeline_stats timeline;
};

/*
 * Writes the files above into the directory fd DFD (named DIR in messages), which holds the
 * analysis' folded files (a gap's missing folded file gives an empty graph); every file is
 * created and read relative to DFD, never again through DIR's path. trace_path is the trace a analysed. o and stats may be
 * NULL. Returns 0, or -1 after saying on stderr what could not be written.
 */
int render_out__write(int dfd, const char *dir, const char *trace_path, const struct analysis *a,
		      const struct render_out_opts *o, struct render_out_stats *stats);

#endif
