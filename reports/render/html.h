/* SPDX-License-Identifier: GPL-2.0 */
/*
 * index.html: one self-contained page (styles, script and data inline; no fetches, works from
 * file://) with the GPU busy/idle timeline per device and the gaps marked on it, each gap's
 * chain, numbers and flame graph on click, the ranked causes, the loss counters and the tier
 * that established each gap. Everything it says about gaps, causes and losses it reads from the
 * summary.json text, embedded as it is.
 *
 * An hour-long trace has millions of kernel intervals and thousands of gaps: the page keeps to
 * max_bytes by merging busy intervals across idle holes shorter than a resolution it picks
 * (each merged interval keeps its true busy time, so utilisation stays exact at every zoom) and
 * by inlining flame graphs, longest gap first, while they fit; the others are shown from their
 * relative path next to the page.
 */
#ifndef GAPSCOPE_HTML_H
#define GAPSCOPE_HTML_H

#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

/* Times are on summary.json's time base (a gap's start_ns). */
struct html_interval {
	__u64 start_ns, end_ns;
};

struct html_device {
	int id;				  /* summary.json's devices[].id */
	const struct html_interval *busy; /* sorted by start; overlaps are merged */
	size_t n;
};

struct html_svg {
	unsigned int gap; /* summary.json's gaps[].id; 0 for the all-gaps graph */
	const char *svg;  /* the SVG text (flamegraph__render), or NULL: read path */
	size_t svg_len;
	const char *path;  /* relative to the page, e.g. "gaps/0001.svg"; may be NULL */
	__u64 duration_ns; /* the gap's: longer gaps are inlined first (gap 0 always first) */
};

struct html_input {
	const char *title;	  /* e.g. the trace's name; NULL: "gapscope report" */
	const char *summary_json; /* summary.json's text */
	size_t summary_len;
	const struct html_device *devices;
	size_t ndevices;
	const struct html_svg *svgs; /* per gap, and the all-gaps one (gap 0) */
	size_t nsvgs;
	size_t max_bytes; /* 0: HTML_MAX_BYTES */
	/* Where the paths lie (with_dir): a graph given by path only is read from under the
	 * directory fd dir_fd to be inlined (when it fits), so a caller may write the SVG files
	 * first and keep no text. */
	bool with_dir;
	int dir_fd;
};

#define HTML_MAX_BYTES (16u << 20)

/* What was downsampled to keep the page to max_bytes. */
struct html_stats {
	size_t intervals_in, intervals_out; /* busy intervals given / written */
	__u64 merge_ns;			    /* idle holes shorter than this were merged (0: none) */
	size_t svgs_inline, svgs_linked;    /* flame graphs in the page / by path only */
	size_t bytes;			    /* the page's size */
};

/* Writes the page. stats may be NULL. Returns 0, or -1 on a write error or out of memory. */
int html__write(FILE *out, const struct html_input *in, struct html_stats *stats);

#endif /* GAPSCOPE_HTML_H */
