// SPDX-License-Identifier: GPL-2.0
/*
 * speedscope files (speedscope.h). Each folded stack set becomes a "sampled" profile whose
 * samples are its distinct stacks (frame indices, root first) weighted by their time in
 * nanoseconds; all profiles share one frame table, so a frame is the same frame in every gap.
 */
#include <stdlib.h>

#include "escape.h"
#include "speedscope.h"
#include "strmap.h"
#include "vec.h"

/* The shared frames, in first-seen order: their indexes are the samples' frame numbers. */
struct frame_tab {
	const char **names; /* by index; the strings belong to the folded sets */
	size_t n, cap;
	struct strmap index;
};

/* The index of name, added when new; -1 out of memory. */
static long frame_tab__get(struct frame_tab *t, const char *name)
{
	long i = strmap__get(&t->index, t->names, name);

	if (i >= 0)
		return i;
	if (array__grow((void **)&t->names, &t->cap, sizeof(*t->names), t->n + 1, 256))
		return -1;
	t->names[t->n] = name;
	if (strmap__set(&t->index, t->names, name, t->n))
		return -1;
	return t->n++;
}

struct profile_writer {
	FILE *out;
	struct frame_tab *tab;
	bool first;
	bool weights; /* second pass: the weights array */
	int err;
};

static int stack__write(const char *const *frames, size_t n, __u64 weight, void *ctx)
{
	struct profile_writer *w = ctx;

	fputs(w->first ? "" : ",", w->out);
	w->first = false;
	if (w->weights) {
		fprintf(w->out, "%llu", (unsigned long long)weight);
		return 0;
	}
	fputc('[', w->out);
	for (size_t i = 0; i < n; i++) {
		long idx = frame_tab__get(w->tab, frames[i]);

		if (idx < 0)
			return -1;
		fprintf(w->out, "%s%ld", i ? "," : "", idx);
	}
	fputc(']', w->out);
	return 0;
}

int speedscope__write(FILE *out, const char *name, const struct folded *const *profiles,
		      const char *const *names, size_t n)
{
	struct frame_tab tab = {};
	int err = 0;

	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",", out);
	fputs("\"exporter\":\"gapscope\",\"name\":", out);
	esc__json(out, name ? name : "gapscope", false);
	fputs(",\"activeProfileIndex\":0,\"profiles\":[", out);
	for (size_t i = 0; i < n && !err; i++) {
		struct profile_writer w = { .out = out, .tab = &tab, .first = true };

		fputs(i ? ",\n{" : "\n{", out);
		fputs("\"type\":\"sampled\",\"name\":", out);
		esc__json(out, names && names[i] ? names[i] : "profile", false);
		fprintf(out,
			",\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":%llu,"
			"\"samples\":[",
			(unsigned long long)folded__total(profiles[i]));
		err = folded__for_each_stack(profiles[i], stack__write, &w);
		fputs("],\"weights\":[", out);
		w.weights = true;
		w.first = true;
		if (!err)
			err = folded__for_each_stack(profiles[i], stack__write, &w);
		fputs("]}", out);
	}
	fputs("],\n\"shared\":{\"frames\":[", out);
	for (size_t i = 0; i < tab.n; i++) {
		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
		esc__json(out, tab.names[i], false);
		fputc('}', out);
	}
	fputs("]}}\n", out);
	free(tab.names);
	strmap__free(&tab.index);
	return err || ferror(out) ? -1 : 0;
}
