// SPDX-License-Identifier: GPL-2.0
/*
 * speedscope files (speedscope.h). Each folded stack set becomes a "sampled" profile whose
 * samples are its distinct stacks (frame indices, root first) weighted by their time in
 * nanoseconds; all profiles share one frame table, so a frame is the same frame in every gap.
 */
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "escape.h"
#include "speedscope.h"
#include "vec.h"

/* A string -> index table for the shared frames, in first-seen order. */
struct frame_tab {
	const char **names; /* by index; the strings belong to the folded sets */
	size_t n, cap;
	unsigned int *slots; /* index + 1, 0 empty */
	size_t nslots;
};

static int frame_tab__grow(struct frame_tab *t)
{
	size_t ns = t->nslots ? 2 * t->nslots : 1024;
	unsigned int *slots = calloc(ns, sizeof(*slots));

	if (!slots)
		return -1;
	for (size_t i = 0; i < t->n; i++) {
		size_t s = hash__str(t->names[i]) & (ns - 1);

		while (slots[s])
			s = (s + 1) & (ns - 1);
		slots[s] = i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = ns;
	return 0;
}

/* The index of name, added when new; -1 out of memory. */
static long frame_tab__get(struct frame_tab *t, const char *name)
{
	size_t s;

	if (2 * (t->n + 1) > t->nslots && frame_tab__grow(t))
		return -1;
	s = hash__str(name) & (t->nslots - 1);
	while (t->slots[s]) {
		if (!strcmp(t->names[t->slots[s] - 1], name))
			return t->slots[s] - 1;
		s = (s + 1) & (t->nslots - 1);
	}
	if (array__grow((void **)&t->names, &t->cap, sizeof(*t->names), t->n + 1, 256))
		return -1;
	t->names[t->n] = name;
	t->slots[s] = ++t->n;
	return t->n - 1;
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
	free(tab.slots);
	return err || ferror(out) ? -1 : 0;
}
