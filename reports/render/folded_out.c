// SPDX-License-Identifier: GPL-2.0
/*
 * gaps/NNNN.folded and gaps/all.folded: FlameGraph's "root;...;leaf N", N in ns inside the gap.
 * A ';' inside a frame name would split the frame when read back: it is written as ':'; a
 * newline would end the line: control characters are written as spaces. Each gap is written as
 * its analysis completes (gaps are numbered once all are known: the files are renamed then).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "folded_out.h"
#include "outfile.h"

struct folded_out {
	int dfd; /* the gaps/ directory, the caller's */
	FILE *all;
	bool whole; /* all.folded written out to its end (folded_out__finish) */
};

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

struct folded_out *folded_out__new(int dfd)
{
	struct folded_out *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->dfd = dfd;
	f->all = outfile__fopenat(dfd, "all.folded", true);
	if (!f->all) {
		free(f);
		return NULL;
	}
	return f;
}

int folded_out__gap(const struct gap *g, void *ctx)
{
	struct folded_out *f = ctx;
	char name[32];
	FILE *out;
	int err;

	snprintf(name, sizeof(name), ".seq-%u.folded", g->seq);
	out = outfile__fopenat(f->dfd, name, true);
	if (!out)
		return -errno;
	put_stacks(out, g);
	put_stacks(f->all, g);
	err = outfile__fclose(out);
	if (err) {
		unlinkat(f->dfd, name, 0); /* not left cut short (a full disk) */
		return err;
	}
	return ferror(f->all) ? -EIO : 0;
}

int folded_out__finish(struct folded_out *f, const struct analysis *a)
{
	char from[32], to[32];

	for (size_t i = 0; i < a->ngaps; i++) {
		snprintf(from, sizeof(from), ".seq-%u.folded", a->gaps[i].seq);
		snprintf(to, sizeof(to), "%04u.folded", a->gaps[i].id);
		if (renameat(f->dfd, from, f->dfd, to))
			return -errno;
	}
	if (fflush(f->all))
		return -errno;
	if (ferror(f->all))
		return -EIO;
	f->whole = true;
	return 0;
}

void folded_out__free(struct folded_out *f)
{
	if (!f)
		return;
	if (f->all)
		fclose(f->all);
	/*
	 * Not finished (a gap's file or all.folded's own write failed, a full disk; the analysis
	 * failed): what all.folded holds is cut short, often nothing the buffer let out yet.
	 */
	if (!f->whole)
		unlinkat(f->dfd, "all.folded", 0);
	free(f);
}
