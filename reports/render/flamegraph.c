// SPDX-License-Identifier: GPL-2.0
/*
 * SVG flame graphs from folded stack sets (flamegraph.h). The layout is FlameGraph's: root at
 * the bottom, children left to right in name order from their parent's left edge, a frame's
 * width its weight over the total. Each frame is a <g> holding a <title> (the full name, then
 * its time and share: the tooltip, and what the script reads back), a <rect> and a <text>
 * label cut to the width. The script (assets/flame.js) zooms, searches and shows details.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "escape.h"
#include "assets.h"
#include "flamegraph.h"

#define FRAME_H	   16
#define FONT_PX	   12
#define CHAR_PX	   (FONT_PX * 0.59) /* Verdana's average advance; labels are cut by it */
#define PAD_X	   10
#define PAD_BOTTOM 36
#define TITLE_PX   17

/* A stable colour per name, in a family per kind: warm for user code (FlameGraph's "hot"),
 * blue for the kernel, violet for the annotations that join threads. */
static void flame__color(const char *name, enum folded_kind kind, char buf[8])
{
	__u32 h = 2166136261u;
	double a, b;
	int r, g, bl;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 16777619u;
	a = (h & 0xffff) / 65535.0;
	b = (h >> 16) / 65535.0;
	switch (kind) {
	case FOLDED_KERNEL:
		r = 70 + 50 * a, g = 140 + 50 * b, bl = 210 + 40 * a;
		break;
	case FOLDED_SYNTHETIC:
		r = 175 + 30 * a, g = 150 + 25 * a, bl = 225 + 25 * b;
		break;
	default:
		r = 205 + 50 * b, g = 230 * a, bl = 55 * b;
	}
	snprintf(buf, 8, "#%02x%02x%02x", r, g, bl);
}

static const char flame_css[] =
	"svg.gs-flame{font-family:Verdana,'DejaVu Sans',sans-serif;font-size:12px}\n"
	"svg.gs-flame .bg{fill:#fbfaf6}\n"
	"svg.gs-flame .title{font-size:17px;text-anchor:middle;fill:#222}\n"
	"svg.gs-flame .sub{text-anchor:middle;fill:#555}\n"
	"svg.gs-flame .ctl{fill:#1d5fa8;cursor:pointer}\n"
	"svg.gs-flame .ctl.off{fill:#bbb;cursor:default}\n"
	"svg.gs-flame .note{fill:#777}\n"
	"svg.gs-flame .frames g{cursor:pointer}\n"
	"svg.gs-flame .frames rect{rx:2px;ry:2px}\n"
	"svg.gs-flame .frames text{fill:#000;pointer-events:none}\n"
	"svg.gs-flame .frames .k text{fill:#0a2340}\n"
	"svg.gs-flame .frames .s rect{stroke:#6a4fa0;stroke-width:1;stroke-dasharray:3 2}\n"
	"svg.gs-flame .frames .s text{font-style:italic;fill:#2d1d52}\n"
	"svg.gs-flame .frames g:hover rect{stroke:#000;stroke-width:1;stroke-dasharray:none}\n"
	"svg.gs-flame .frames .hit rect{fill:#e040c8}\n"
	"svg.gs-flame .frames .parent rect{opacity:0.5}\n"
	"svg.gs-flame .legend rect{stroke:#888;stroke-width:0.5}\n";

struct layout {
	__u64 threshold; /* frames of this weight or less are left out (when limiting) */
	bool limit;
	__u64 *cursor; /* next free x (in ns) per depth */
	double scale;  /* pixels per ns */
	unsigned int depth_drawn, top;
	__u64 total;
	FILE *out;
	struct flame_stats st;
};

static int layout__depth(const struct folded_node *n, void *ctx)
{
	struct layout *l = ctx;

	if (l->limit && n->weight <= l->threshold)
		return 1;
	if (n->depth + 1 > l->depth_drawn)
		l->depth_drawn = n->depth + 1;
	return 0;
}

static int layout__frame(const struct folded_node *n, void *ctx)
{
	struct layout *l = ctx;
	__u64 x = l->cursor[n->depth];
	double px = PAD_X + x * l->scale, w = n->weight * l->scale;
	unsigned int y = l->top + (l->depth_drawn - 1 - n->depth) * FRAME_H;
	enum folded_kind kind = folded__kind(n->name);
	static const char *const cls[] = { "u", "k", "s" };
	char t[32], fill[8];
	size_t fit;

	if (l->limit && n->weight <= l->threshold) {
		/* Left out, it still takes its place: the siblings after it stay where they are. */
		l->cursor[n->depth] += n->weight;
		l->st.ns_omitted += n->weight;
		return 1;
	}
	l->cursor[n->depth] += n->weight;
	l->cursor[n->depth + 1] = x;
	l->st.frames++;
	dur__fmt(t, sizeof(t), n->weight);
	flame__color(n->name, kind, fill);
	fprintf(l->out, "<g class=\"%s\"><title>", cls[kind]);
	esc__xml(l->out, n->name, ~0ul);
	fprintf(l->out,
		"\n%s, %.2f%%</title><rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" "
		"height=\"%u\" fill=\"%s\"/>",
		t, 100.0 * n->weight / l->total, px, y, w, FRAME_H - 1, fill);
	/* A label only where three characters fit; the script relabels on zoom. */
	fit = w > 6 ? (w - 6) / CHAR_PX : 0;
	if (fit >= 3) {
		size_t len = strlen(n->name);

		fprintf(l->out, "<text x=\"%.2f\" y=\"%u\">", px + 3, y + FRAME_H - 4);
		esc__xml(l->out, n->name, len > fit ? fit - 2 : len);
		fputs(len > fit ? "..</text>" : "</text>", l->out);
	}
	fputs("</g>\n", l->out);
	return 0;
}

struct weight_cost {
	__u64 weight;
	size_t cost;
};

static int collect_cost(const struct folded_node *n, void *ctx)
{
	struct weight_cost **p = ctx;

	/* What layout__frame writes for this frame, roughly: markup, title, label. */
	(*p)->weight = n->weight;
	(*p)->cost = 150 + 2 * strlen(n->name);
	(*p)++;
	return 0;
}

static int by_weight_desc(const void *a, const void *b)
{
	__u64 x = ((const struct weight_cost *)a)->weight,
	      y = ((const struct weight_cost *)b)->weight;

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * The weight at or below which frames are left out so the SVG fits max_bytes. A parent weighs
 * at least as much as any child, so "weight above the threshold" keeps whole trees: no frame
 * is drawn without its parent.
 */
static int layout__limit(struct layout *l, const struct folded *f, size_t max_bytes)
{
	size_t n = folded__nodes(f), used = 4096 + sizeof(flame_css) + strlen(gs_asset_flame_js);
	size_t all = used;
	struct weight_cost *wc, *p;

	wc = malloc((n ? n : 1) * sizeof(*wc));
	if (!wc)
		return -1;
	p = wc;
	folded__walk(f, collect_cost, &p);
	for (size_t i = 0; i < n; i++)
		all += wc[i].cost;
	if (all <= max_bytes) { /* everything fits: no need to sort */
		free(wc);
		return 0;
	}
	qsort(wc, n, sizeof(*wc), by_weight_desc);
	for (size_t i = 0; i < n; i++) {
		used += wc[i].cost;
		if (used > max_bytes) {
			l->limit = true;
			l->threshold = wc[i].weight;
			break;
		}
	}
	free(wc);
	return 0;
}

/* The title, wrapped at spaces to lines that fit the width (at most three, the last cut). */
static unsigned int flame__title(FILE *out, const char *title, unsigned int width, bool emit)
{
	size_t per_line = (width - 2 * PAD_X) / (TITLE_PX * 0.6), len = strlen(title);
	unsigned int lines = 0;
	const char *p = title;

	while (*p && lines < 3) {
		size_t n = strlen(p);

		if (n > per_line && lines < 2) {
			n = per_line;
			while (n > per_line / 2 && p[n] != ' ')
				n--;
			if (p[n] != ' ')
				n = per_line;
		} else if (n > per_line) {
			n = per_line - 2;
		}
		if (emit) {
			fprintf(out, "<text class=\"title\" x=\"%u\" y=\"%u\">", width / 2,
				24 + lines * (TITLE_PX + 4));
			esc__xml(out, p, n);
			fputs(p + n < title + len && lines == 2 ? "..</text>\n" : "</text>\n", out);
		}
		lines++;
		p += n;
		while (*p == ' ')
			p++;
	}
	return lines ? lines : 1;
}

int flamegraph__write_svg(FILE *out, const struct folded *f, const struct flame_opts *o,
			  struct flame_stats *stats)
{
	unsigned int width = o && o->width ? o->width : 1200, height, tlines, y0;
	const char *title = o && o->title ? o->title : "Flame graph";
	const char *sub = o ? o->subtitle : NULL;
	struct layout l = { .out = out, .total = folded__total(f) };
	char t[32];

	if (width < 400)
		width = 400;
	if (layout__limit(&l, f, o && o->max_bytes ? o->max_bytes : FLAME_MAX_BYTES))
		return -1;
	folded__walk(f, layout__depth, &l);
	l.cursor = calloc(l.depth_drawn + 2, sizeof(*l.cursor));
	if (!l.cursor)
		return -1;
	l.scale = l.total ? (double)(width - 2 * PAD_X) / l.total : 0;
	tlines = flame__title(out, title, width, false);
	y0 = 24 + (tlines - 1) * (TITLE_PX + 4) + (sub ? 20 : 0);
	l.top = y0 + 22;
	height = l.top + (l.depth_drawn ? l.depth_drawn : 1) * FRAME_H + PAD_BOTTOM;

	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" class=\"gs-flame\" "
		"width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" data-total-ns=\"%llu\">\n"
		"<style>\n%s</style>\n<rect class=\"bg\" width=\"100%%\" height=\"100%%\"/>\n",
		width, height, width, height, (unsigned long long)l.total, flame_css);
	flame__title(out, title, width, true);
	if (sub) {
		fprintf(out, "<text class=\"sub\" x=\"%u\" y=\"%u\">", width / 2, y0);
		esc__xml(out, sub, ~0ul);
		fputs("</text>\n", out);
	}
	dur__fmt(t, sizeof(t), l.total);
	fprintf(out,
		"<text class=\"ctl reset off\" x=\"%u\" y=\"%u\">Reset zoom</text>\n"
		"<text class=\"ctl search\" x=\"%u\" y=\"%u\" text-anchor=\"end\">Search</text>\n"
		"<text class=\"note total\" x=\"%u\" y=\"%u\" text-anchor=\"middle\">"
		"total %s</text>\n",
		PAD_X, y0 + 14, width - PAD_X, y0 + 14, width / 2, y0 + 14, t);
	fprintf(out,
		"<g class=\"legend\" transform=\"translate(%u,%u)\">"
		"<rect x=\"0\" y=\"-10\" width=\"10\" height=\"10\" fill=\"#f08a20\"/>"
		"<text x=\"14\" y=\"0\">user</text>"
		"<rect x=\"52\" y=\"-10\" width=\"10\" height=\"10\" fill=\"#6aa8e8\"/>"
		"<text x=\"66\" y=\"0\">kernel</text>"
		"<rect x=\"118\" y=\"-10\" width=\"10\" height=\"10\" fill=\"#c0a8f0\"/>"
		"<text x=\"132\" y=\"0\">lock / wake / cross-thread</text></g>\n",
		PAD_X + 90, y0 + 14);
	fputs("<g class=\"frames\">\n", out);
	if (l.depth_drawn)
		folded__walk(f, layout__frame, &l);
	fputs("</g>\n", out);
	l.st.frames_omitted = folded__nodes(f) - l.st.frames;
	fprintf(out,
		"<text class=\"note details\" x=\"%u\" y=\"%u\"> </text>\n"
		"<text class=\"note matched\" x=\"%u\" y=\"%u\" text-anchor=\"end\"> </text>\n",
		PAD_X, height - 20, width - PAD_X, height - 20);
	if (!l.total)
		fprintf(out,
			"<text class=\"note\" x=\"%u\" y=\"%u\" text-anchor=\"middle\">"
			"no stacks in this set</text>\n",
			width / 2, l.top + 12);
	if (l.st.frames_omitted) {
		char each[32];

		dur__fmt(t, sizeof(t), l.st.ns_omitted);
		dur__fmt(each, sizeof(each), l.threshold);
		fprintf(out,
			"<text class=\"note omitted\" x=\"%u\" y=\"%u\">%zu frames of %s or "
			"less left out to keep this file small (%s in all, counted in their parents)"
			"</text>\n",
			PAD_X, height - 5, l.st.frames_omitted, each, t);
	}
	if (!o || !o->no_script)
		fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n",
			gs_asset_flame_js);
	fputs("</svg>\n", out);
	free(l.cursor);
	if (stats)
		*stats = l.st;
	return ferror(out) ? -1 : 0;
}

int flamegraph__render(const struct folded *f, const struct flame_opts *o, char **buf, size_t *len,
		       struct flame_stats *stats)
{
	FILE *out = open_memstream(buf, len);
	int err;

	if (!out)
		return -1;
	err = flamegraph__write_svg(out, f, o, stats);
	if (fclose(out) || err) {
		free(*buf);
		*buf = NULL;
		return -1;
	}
	return 0;
}
