// SPDX-License-Identifier: GPL-2.0
/* Every rendered output of a finished analysis: see render_out.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "duration.h"
#include "flamegraph.h"
#include "folded.h"
#include "headline.h"
#include "summary.h"
#include "outfile.h"
#include "render_out.h"
#include "speedscope.h"

struct ro {
	int dfd;	 /* the report's directory, taken once by the caller */
	const char *dir; /* its name, for messages */
	const struct analysis *a;
	const char *name; /* the trace's file name: the page's and profiles' title */
	size_t svg_max_bytes;
	struct render_out_stats st;
	struct folded **sets;  /* [0] all gaps, [1 + i] gap i */
	char **names;	       /* speedscope's profile names, the same order */
	struct html_svg *svgs; /* per gap, then the all-gaps graph */
};

static FILE *open_out(const struct ro *r, const char *name, char *path, size_t size)
{
	FILE *f;

	snprintf(path, size, "%s/%s", r->dir, name);
	/* DIR is the report's own: replace what is there */
	f = outfile__fopenat(r->dfd, name, true);
	if (!f)
		fprintf(stderr, "gapscope: cannot write %s: %s\n", path, strerror(errno));
	return f;
}

/* Closes a file of the report; one that could not be written whole (a full disk) is removed. */
static int close_out(const struct ro *r, FILE *f, const char *path, int err)
{
	int cerr = outfile__fclose(f);

	if (cerr || err) {
		unlinkat(r->dfd, path + strlen(r->dir) + 1, 0);
		if (cerr)
			fprintf(stderr, "gapscope: cannot write %s: %s\n", path, strerror(-cerr));
		else
			fprintf(stderr, "gapscope: cannot write %s\n", path);
		return -1;
	}
	return 0;
}

/* A folded file of the report; an empty set where the analysis wrote none. */
static struct folded *read_folded(const struct ro *r, const char *name)
{
	char path[PATH_MAX];
	struct folded *f;

	snprintf(path, sizeof(path), "%s/%s", r->dir, name);
	f = folded__read_at(r->dfd, name);
	if (!f && errno == ENOENT)
		f = folded__new();
	if (!f)
		fprintf(stderr, "gapscope: cannot read %s: %s\n", path, strerror(errno));
	return f;
}

static int write_svg(struct ro *r, const char *name, const struct folded *f, const char *title,
		     const char *subtitle)
{
	struct flame_opts fo = { .title = title,
				 .subtitle = subtitle,
				 .max_bytes = r->svg_max_bytes };
	struct flame_stats fs = {};
	char path[PATH_MAX];
	FILE *out = open_out(r, name, path, sizeof(path));
	long size;
	int err;

	if (!out)
		return -1;
	err = flamegraph__write_svg(out, f, &fo, &fs);
	size = ftell(out);
	if (close_out(r, out, path, err))
		return -1;
	r->st.svgs++;
	r->st.svg_frames_omitted += fs.frames_omitted;
	if (size > 0 && (size_t)size > r->st.svg_max)
		r->st.svg_max = size;
	return 0;
}

/* gaps/NNNN.svg, titled with the gap's chain; its set and names kept for the others. */
static int write_gap(struct ro *r, size_t i)
{
	const struct gap *g = &r->a->gaps[i];
	char name[32], title[1024], sub[256], d[32];

	dur__fmt(d, sizeof(d), g->end_ns - g->start_ns);
	snprintf(sub, sizeof(sub), "gap %u on GPU %u: %s from %.3f s (%s)", g->id, g->device, d,
		 (g->start_ns - r->a->start_ns) / 1e9, g->tier);
	gap__chain_text(g, title, sizeof(title));
	snprintf(name, sizeof(name), "gaps/%04u.folded", g->id);
	r->sets[1 + i] = read_folded(r, name);
	r->names[1 + i] = strdup(sub);
	snprintf(name, sizeof(name), "gaps/%04u.svg", g->id);
	r->svgs[i] = (struct html_svg){ .gap = g->id,
					.path = strdup(name),
					.duration_ns = g->end_ns - g->start_ns };
	if (!r->sets[1 + i] || !r->names[1 + i] || !r->svgs[i].path)
		return -1;
	return write_svg(r, name, r->sets[1 + i], title, sub);
}

static int write_all(struct ro *r)
{
	char sub[128], d[32];

	dur__fmt(d, sizeof(d), r->a->gap_ns);
	snprintf(sub, sizeof(sub), "%zu gaps, %s of GPU idle time", r->a->ngaps, d);
	r->sets[0] = read_folded(r, "gaps/all.folded");
	r->names[0] = strdup("all gaps");
	r->svgs[r->a->ngaps] = (struct html_svg){ .gap = 0, .path = strdup("gaps/all.svg") };
	if (!r->sets[0] || !r->names[0] || !r->svgs[r->a->ngaps].path)
		return -1;
	return write_svg(r, "gaps/all.svg", r->sets[0], "All gaps", sub);
}

/*
 * gaps/launches.{folded,svg}: the launching thread on CPU between its launches, the cost behind
 * the idle time under the floor (idlesplit.h). Not a gap: no speedscope profile, no gap id.
 */
static int write_launches(struct ro *r)
{
	const struct under_floor *u = &r->a->under;
	char path[PATH_MAX], sub[256], d[32];
	FILE *out;

	if (!headline__launches_shown(r->a) || !u->stacks || !folded__total(u->stacks))
		return 0;
	out = open_out(r, "gaps/launches.folded", path, sizeof(path));
	if (!out || close_out(r, out, path, folded__write(out, u->stacks)))
		return -1;
	dur__fmt(d, sizeof(d), folded__total(u->stacks));
	snprintf(sub, sizeof(sub), "%s on CPU or runnable between its launches: %s, %llu samples",
		 u->comm, d, (unsigned long long)u->samples);
	return write_svg(r, "gaps/launches.svg", u->stacks, "Host time between launches", sub);
}

static int write_speedscope(struct ro *r)
{
	char path[PATH_MAX], title[PATH_MAX + 32];
	FILE *out = open_out(r, "gaps.speedscope.json", path, sizeof(path));

	if (!out)
		return -1;
	snprintf(title, sizeof(title), "gapscope report of %s", r->name);
	return close_out(r, out, path,
			 speedscope__write(out, title, (const struct folded *const *)r->sets,
					   (const char *const *)r->names, r->a->ngaps + 1));
}

static int write_timeline(struct ro *r, const char *trace_path, const struct timeline_opts *o)
{
	char path[PATH_MAX], err[512] = "";
	FILE *out = open_out(r, "timeline.json", path, sizeof(path));
	int ret;

	if (!out)
		return -1;
	ret = timeline__write(out, trace_path, r->a, o, &r->st.timeline, err, sizeof(err));
	if (ret && *err)
		fprintf(stderr, "gapscope: %s: %s\n", path, err);
	return close_out(r, out, path, ret);
}

/* index.html: summary.json's text as the page embeds it, busy intervals, graphs by path. */
static int write_html(struct ro *r, size_t max_bytes)
{
	const struct analysis *a = r->a;
	struct html_device *devs = calloc(a->ndevices + 1, sizeof(*devs));
	char path[PATH_MAX], *sum = NULL;
	size_t sum_len = 0;
	FILE *mem = open_memstream(&sum, &sum_len), *out = NULL;
	int ret = -1;

	if (!devs || !mem || summary_json__write(a, mem) || fclose(mem)) {
		fprintf(stderr, "gapscope: index.html: out of memory\n");
		goto out;
	}
	for (size_t d = 0; d < a->ndevices; d++) {
		struct html_interval *iv = calloc(a->devices[d].nbusy + 1, sizeof(*iv));

		if (!iv)
			goto out;
		for (size_t k = 0; k < a->devices[d].nbusy; k++)
			iv[k] = (struct html_interval){ a->devices[d].busy[k].start,
							a->devices[d].busy[k].end };
		devs[d] = (struct html_device){ .id = a->devices[d].id,
						.busy = iv,
						.n = a->devices[d].nbusy };
	}
	out = open_out(r, "index.html", path, sizeof(path));
	if (out)
		ret = close_out(r, out, path,
				html__write(out,
					    &(struct html_input){ .title = r->name,
								  .summary_json = sum,
								  .summary_len = sum_len,
								  .devices = devs,
								  .ndevices = a->ndevices,
								  .svgs = r->svgs,
								  .nsvgs = a->ngaps + 1,
								  .max_bytes = max_bytes,
								  .with_dir = true,
								  .dir_fd = r->dfd },
					    &r->st.html));
out:
	for (size_t d = 0; devs && d < a->ndevices; d++)
		free((void *)devs[d].busy);
	free(devs);
	free(sum);
	return ret;
}

int render_out__write(int dfd, const char *dir, const char *trace_path, const struct analysis *a,
		      const struct render_out_opts *o, struct render_out_stats *stats)
{
	const struct render_out_opts none = {};
	const char *slash = strrchr(trace_path, '/');
	struct ro r = { .dfd = dfd, .dir = dir, .a = a, .name = slash ? slash + 1 : trace_path };
	size_t n = a->ngaps + 1;
	int ret = -1;

	if (!o)
		o = &none;
	r.svg_max_bytes = o->svg_max_bytes;
	r.sets = calloc(n, sizeof(*r.sets));
	r.names = calloc(n, sizeof(*r.names));
	r.svgs = calloc(n, sizeof(*r.svgs));
	if (!r.sets || !r.names || !r.svgs) {
		fprintf(stderr, "gapscope: out of memory rendering %s\n", dir);
		goto out;
	}
	for (size_t i = 0; i < a->ngaps; i++)
		if (write_gap(&r, i))
			goto out;
	if (write_all(&r) || write_speedscope(&r) || write_launches(&r))
		goto out;
	/* The page reads the graphs back from their files, so the sets can go first. */
	for (size_t i = 0; i < n; i++) {
		folded__free(r.sets[i]);
		r.sets[i] = NULL;
	}
	if (write_timeline(&r, trace_path, &o->timeline) || write_html(&r, o->html_max_bytes))
		goto out;
	ret = 0;
out:
	for (size_t i = 0; i < n; i++) {
		if (r.sets)
			folded__free(r.sets[i]);
		if (r.names)
			free(r.names[i]);
		if (r.svgs)
			free((void *)r.svgs[i].path);
	}
	free(r.sets);
	free(r.names);
	free(r.svgs);
	if (stats)
		*stats = r.st;
	return ret;
}
