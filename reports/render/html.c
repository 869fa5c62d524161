// SPDX-License-Identifier: GPL-2.0
/*
 * index.html (html.h): a skeleton, the embedded styles and scripts (assets/), and the data as
 * inert <script> blocks the page script reads: the summary as given, the busy intervals per
 * device (downsampled to fit), and the flame graphs that fit, as SVG text without their own
 * script (the page's copy of flame.js drives them).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "assets.h"
#include "escape.h"
#include "html.h"

/* Bytes one merged interval takes in the page, about: three numbers and commas. */
#define IV_BYTES   20
#define PAGE_SLACK (256u << 10) /* skeleton, assets, the paths of linked graphs */

struct dev_iv {
	const struct html_device *dev;
	struct html_interval *iv; /* sorted, overlaps merged */
	size_t n;
};

static int iv_by_start(const void *a, const void *b)
{
	const struct html_interval *x = a, *y = b;

	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

static int dev_iv__load(struct dev_iv *d, const struct html_device *dev)
{
	size_t n = 0;

	d->dev = dev;
	d->iv = malloc((dev->n ? dev->n : 1) * sizeof(*d->iv));
	if (!d->iv)
		return -1;
	memcpy(d->iv, dev->busy, dev->n * sizeof(*d->iv));
	qsort(d->iv, dev->n, sizeof(*d->iv), iv_by_start);
	for (size_t i = 0; i < dev->n; i++) {
		if (d->iv[i].end_ns < d->iv[i].start_ns)
			continue;
		if (n && d->iv[i].start_ns <= d->iv[n - 1].end_ns) {
			if (d->iv[i].end_ns > d->iv[n - 1].end_ns)
				d->iv[n - 1].end_ns = d->iv[i].end_ns;
			continue;
		}
		d->iv[n++] = d->iv[i];
	}
	d->n = n;
	return 0;
}

static int u64_desc(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * The shortest idle hole kept so that at most max intervals remain over all devices: holes
 * shorter than it are merged into the busy interval around them. 0 when all fit.
 */
static int html__merge_ns(const struct dev_iv *d, size_t nd, size_t max, __u64 *merge_ns)
{
	size_t n = 0, holes = 0;
	__u64 *h;

	*merge_ns = 0;
	for (size_t i = 0; i < nd; i++)
		n += d[i].n;
	if (n <= max)
		return 0;
	h = malloc(n * sizeof(*h));
	if (!h)
		return -1;
	for (size_t i = 0; i < nd; i++)
		for (size_t j = 1; j < d[i].n; j++)
			h[holes++] = d[i].iv[j].start_ns - d[i].iv[j - 1].end_ns;
	qsort(h, holes, sizeof(*h), u64_desc);
	/* Each kept hole adds one interval to the one per device that remains. */
	max = max > nd ? max - nd : 0;
	*merge_ns = max < holes ? h[max] + 1 : 0;
	free(h);
	return 0;
}

/*
 * One device's intervals as [gap before, length, idle inside, ...], in ns: the gap from the
 * previous interval's end (the first from 0), the merged interval's span and the idle time
 * merged into it, so the page draws true utilisation at any zoom.
 */
static size_t dev_iv__write(FILE *out, const struct dev_iv *d, __u64 merge_ns)
{
	__u64 prev_end = 0, start, end, idle;
	size_t written = 0;

	fprintf(out, "{\"id\":%d,\"t\":[", d->dev->id);
	for (size_t i = 0; i < d->n;) {
		start = d->iv[i].start_ns;
		end = d->iv[i].end_ns;
		idle = 0;
		for (i++; i < d->n && d->iv[i].start_ns - end < merge_ns; i++) {
			idle += d->iv[i].start_ns - end;
			end = d->iv[i].end_ns;
		}
		fprintf(out, "%s%llu,%llu,%llu", written ? "," : "",
			(unsigned long long)(start - (start >= prev_end ? prev_end : start)),
			(unsigned long long)(end - start), (unsigned long long)idle);
		prev_end = end;
		written++;
	}
	fputs("]}", out);
	return written;
}

/*
 * JSON inside <script>: a '<' can only stand inside a JSON string, where \u003c means the same,
 * and without it no "</script" or "<!--" can end or confuse the element.
 */
static void html__json(FILE *out, const char *s, size_t len)
{
	const char *p = s, *end = s + len, *lt;

	while (p < end && (lt = memchr(p, '<', end - p))) {
		fwrite(p, 1, lt - p, out);
		fputs("\\u003c", out);
		p = lt + 1;
	}
	fwrite(p, 1, end - p, out);
}

static const char *memmem_ci(const char *h, size_t hl, const char *n)
{
	size_t nl = strlen(n);

	for (size_t i = 0; i + nl <= hl; i++)
		if (!strncasecmp(h + i, n, nl))
			return h + i;
	return NULL;
}

/*
 * The SVG as it can sit inside <script type="image/svg+xml">: without its own <script>
 * element (the page brings flame.js), and only when nothing left could end the element early.
 * Returns the length written, 0 when it cannot be inlined.
 */
static size_t html__svg_inline(FILE *out, const struct html_svg *s, bool dry)
{
	const char *text = s->svg, *end = s->svg + s->svg_len;
	const char *sc = memmem_ci(text, s->svg_len, "<script"), *sce = NULL;
	size_t len = s->svg_len;

	if (sc) {
		sce = memmem_ci(sc, end - sc, "</script>");
		if (!sce)
			return 0;
		sce += strlen("</script>");
		len -= sce - sc;
		if (memmem_ci(sce, end - sce, "</script") || memmem_ci(sce, end - sce, "<!--"))
			return 0;
	}
	if (memmem_ci(text, sc ? (size_t)(sc - text) : s->svg_len, "</script") ||
	    memmem_ci(text, sc ? (size_t)(sc - text) : s->svg_len, "<!--"))
		return 0;
	if (dry)
		return len;
	fprintf(out, "<script type=\"image/svg+xml\" class=\"gs-svg\" data-gap=\"%u\">", s->gap);
	fwrite(text, 1, sc ? (size_t)(sc - text) : s->svg_len, out);
	if (sce)
		fwrite(sce, 1, end - sce, out);
	fputs("</script>\n", out);
	return len;
}

/* base/path's text when it is smaller than room; NULL otherwise. */
static char *html__read_svg(int dfd, const char *path, size_t room, size_t *len)
{
	int fd = openat(dfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	FILE *in = fd >= 0 ? fdopen(fd, "r") : NULL;
	char *buf = NULL;
	struct stat sb;

	if (!in) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (!fstat(fileno(in), &sb) && (size_t)sb.st_size < room) {
		buf = malloc(sb.st_size + 1);
		if (buf && fread(buf, 1, sb.st_size, in) == (size_t)sb.st_size) {
			buf[sb.st_size] = '\0';
			*len = sb.st_size;
		} else {
			free(buf);
			buf = NULL;
		}
	}
	fclose(in);
	return buf;
}

static int svg_order(const void *a, const void *b)
{
	const struct html_svg *x = *(const struct html_svg *const *)a;
	const struct html_svg *y = *(const struct html_svg *const *)b;

	if (!x->gap != !y->gap)
		return x->gap ? 1 : -1;
	if (x->duration_ns != y->duration_ns)
		return x->duration_ns < y->duration_ns ? 1 : -1;
	return x->gap < y->gap ? -1 : x->gap > y->gap;
}

static const char page_head[] =
	"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	/* Nothing may be fetched: this also keeps a stray URL in the data from loading. */
	"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	"script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; "
	"frame-src 'self' file:; object-src 'self' file:\">\n";

int html__write(FILE *out, const struct html_input *in, struct html_stats *stats)
{
	size_t max = in->max_bytes ? in->max_bytes : HTML_MAX_BYTES, used, budget_iv;
	struct dev_iv *d = calloc(in->ndevices ? in->ndevices : 1, sizeof(*d));
	const struct html_svg **order = calloc(in->nsvgs ? in->nsvgs : 1, sizeof(*order));
	struct html_stats st = {};
	long start = ftell(out);
	int err = -1;

	if (!d || !order)
		goto out;
	for (size_t i = 0; i < in->ndevices; i++) {
		if (dev_iv__load(&d[i], &in->devices[i]))
			goto out;
		st.intervals_in += d[i].n;
	}
	/* The summary goes in whole; the intervals get up to half of what is left. */
	used = PAGE_SLACK + in->summary_len + strlen(gs_asset_flame_js) + strlen(gs_asset_util_js) +
	       strlen(gs_asset_timeline_js) + strlen(gs_asset_report_js) +
	       strlen(gs_asset_report_css);
	budget_iv = used < max ? (max - used) / 2 : 0;
	if (html__merge_ns(d, in->ndevices, budget_iv / IV_BYTES, &st.merge_ns))
		goto out;

	fputs(page_head, out);
	fputs("<title>", out);
	esc__xml(out, in->title ? in->title : "gapscope report", SIZE_MAX);
	fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", gs_asset_report_css);
	fputs("<div id=\"app\"><noscript>This report needs JavaScript.</noscript></div>\n", out);
	fputs("<script type=\"application/json\" id=\"gs-summary\">", out);
	if (in->summary_json)
		html__json(out, in->summary_json, in->summary_len);
	else
		fputs("{}", out);
	fputs("</script>\n<script type=\"application/json\" id=\"gs-meta\">{\"title\":", out);
	esc__json(out, in->title ? in->title : "gapscope report", true);
	fputs("}</script>\n<script type=\"application/json\" id=\"gs-timeline\">{\"devices\":[",
	      out);
	for (size_t i = 0; i < in->ndevices; i++) {
		fputs(i ? ",\n" : "\n", out);
		st.intervals_out += dev_iv__write(out, &d[i], st.merge_ns);
	}
	fprintf(out, "],\n\"intervals_in\":%zu,\"intervals_out\":%zu,\"merge_ns\":%llu}</script>\n",
		st.intervals_in, st.intervals_out, (unsigned long long)st.merge_ns);

	/* Flame graphs: the all-gaps one, then the longest gaps, while the page has room. */
	for (size_t i = 0; i < in->nsvgs; i++)
		order[i] = &in->svgs[i];
	qsort(order, in->nsvgs, sizeof(*order), svg_order);
	/* ftell fails on a pipe: then count the intervals at their estimated size. */
	used = start >= 0 && ftell(out) >= start ? (size_t)(ftell(out) - start) :
						   in->summary_len + st.intervals_out * IV_BYTES;
	used += PAGE_SLACK / 2;
	fputs("<script type=\"application/json\" id=\"gs-svg-paths\">{", out);
	for (size_t i = 0, first = 1; i < in->nsvgs; i++) {
		if (!order[i]->path)
			continue;
		fprintf(out, "%s\"%u\":", first ? "" : ",", order[i]->gap);
		esc__json(out, order[i]->path, true);
		first = 0;
	}
	fputs("}</script>\n", out);
	for (size_t i = 0; i < in->nsvgs; i++) {
		struct html_svg s = *order[i];
		char *text = NULL;
		size_t len;

		if (!s.svg && s.path && in->with_dir && used < max)
			s.svg = text = html__read_svg(in->dir_fd, s.path, max - used, &s.svg_len);
		len = s.svg ? html__svg_inline(out, &s, true) : 0;
		if (len && used + len < max) {
			used += html__svg_inline(out, &s, false) + 80;
			st.svgs_inline++;
		} else if (s.path) {
			st.svgs_linked++;
		}
		free(text);
	}
	fprintf(out,
		"<script>\n%s</script>\n<script>\n%s</script>\n<script>\n%s</script>\n"
		"<script>\n%s</script>\n</body>\n</html>\n",
		gs_asset_flame_js, gs_asset_util_js, gs_asset_timeline_js, gs_asset_report_js);
	st.bytes = start >= 0 && ftell(out) >= start ? (size_t)(ftell(out) - start) : 0;
	err = ferror(out) ? -1 : 0;
out:
	for (size_t i = 0; d && i < in->ndevices; i++)
		free(d[i].iv);
	free(d);
	free(order);
	if (stats)
		*stats = st;
	return err;
}
