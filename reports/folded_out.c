// SPDX-License-Identifier: GPL-2.0
/*
 * gaps/NNNN.folded and gaps/all.folded: FlameGraph's "root;...;leaf N", N in ns inside the gap.
 * A ';' inside a frame name would split the frame when read back: it is written as ':'; a
 * newline would end the line: control characters are written as spaces.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analysis.h"

static void put_frame(FILE *out, const char *s)
{
	for (; *s; s++)
		fputc(*s == ';' ? ':' : (unsigned char)*s < 0x20 ? ' ' : *s, out);
}

static void put_stacks(FILE *out, const struct gap *g)
{
	for (__u32 i = 0; i < g->nstacks; i++) {
		const struct gap_stack *s = &g->stacks[i];

		for (__u32 k = 0; k < s->nframes; k++) {
			if (k)
				fputc(';', out);
			put_frame(out, s->frames[k]);
		}
		fprintf(out, " %" PRIu64 "\n", (uint64_t)s->ns);
	}
}

int folded_out__write(const struct analysis *a, const char *dir)
{
	char path[4096];
	FILE *all, *f;
	int err = 0;

	snprintf(path, sizeof(path), "%s/all.folded", dir);
	all = fopen(path, "we");
	if (!all)
		return -errno;
	for (size_t i = 0; i < a->ngaps && !err; i++) {
		snprintf(path, sizeof(path), "%s/%04u.folded", dir, a->gaps[i].id);
		f = fopen(path, "we");
		if (!f) {
			err = -errno;
			break;
		}
		put_stacks(f, &a->gaps[i]);
		put_stacks(all, &a->gaps[i]);
		if (fclose(f))
			err = -errno;
	}
	if (fclose(all) && !err)
		err = -errno;
	return err;
}
