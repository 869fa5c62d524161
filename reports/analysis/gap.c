// SPDX-License-Identifier: GPL-2.0
/* What a gap owns, freed in one place, and its chain as a line of text: see gap.h. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "escape.h"
#include "gap.h"
#include "shortname.h"

void gap__free_walk(struct gap *g)
{
	for (__u32 r = 0; r < g->nroots; r++)
		free(g->roots[r].parts);
	/* roots[0]'s links are the gap's chain: freed with it. */
	for (__u32 r = 1; r < g->nroots; r++) {
		for (__u32 k = 0; k < g->roots[r].nlinks; k++)
			free(g->roots[r].links[k].frames);
		free(g->roots[r].links);
	}
	free(g->roots);
	g->roots = NULL;
	g->nroots = 0;
	for (__u32 i = 0; i < g->nstacks; i++)
		free(g->stacks[i].frames);
	free(g->stacks);
	g->stacks = NULL;
	g->nstacks = 0;
	free(g->segs);
	g->segs = NULL;
	g->nsegs = 0;
	free(g->seg_parts);
	g->seg_parts = NULL;
	g->nseg_parts = 0;
}

void gap__free_parts(struct gap *g)
{
	gap__free_walk(g);
	for (__u32 k = 0; k < g->nchain; k++)
		free(g->chain[k].frames);
	free(g->chain);
	g->chain = NULL;
	g->nchain = 0;
	free(g->kinds);
	g->kinds = NULL;
	g->nkinds = 0;
	free(g->hops);
	g->hops = NULL;
	g->nhops = 0;
}

/* ---- the chain as text ------------------------------------------------------------------ */

/* A name as text: no control character of the target's reaches a terminal (escape.h). */
static void put(FILE *out, const char *s)
{
	esc__put_text(out, s, SIZE_MAX);
}

const char *fault__short(const char *function, char *buf, size_t size)
{
	const char *comma = function ? strstr(function, ", /") : NULL;
	const char *base = comma ? strrchr(comma, '/') : NULL;

	if (!base)
		snprintf(buf, size, "%s", function ? function : "");
	else
		snprintf(buf, size, "%.*s, %s", (int)(comma - function), function, base + 1);
	return buf;
}

const char *cause__fault_text(const struct cause *c, char *buf, size_t size)
{
	const char *who = c->nlines ? c->lines[0].name : c->nleaves ? c->leaves[0].name : NULL;
	size_t n;

	fault__short(c->function, buf, size);
	n = strlen(buf);
	if (c->span.n && n < size)
		n += snprintf(buf + n, size - n, " 0x%llx-0x%llx", (unsigned long long)c->span.lo,
			      (unsigned long long)c->span.hi + 0xfff);
	if (who && n < size)
		snprintf(buf + n, size - n, " (%s)", who);
	return buf;
}

/* One link as "lock tracker_lock held by finalizer-2", "malloc_trim 208 ms", ... */
static void print_link(FILE *out, const struct chain_link *l, bool last)
{
	char lock[SHORTNAME_MAX], fn[SHORTNAME_MAX];
	const char *function = shortname(l->function, fn, sizeof(fn));

	if (l->kind == BK_LOCK || l->kind == BK_COND) {
		fprintf(out, "%s ", blame_kind__name(l->kind));
		put(out, l->lock ? shortname(l->lock, lock, sizeof(lock)) : NULL);
		if (l->detail) {
			fputc(' ', out);
			put(out, l->detail);
		}
	} else if (l->kind == BK_PROBE || l->kind == BK_CUDA) {
		put(out, function ? function : blame_kind__name(l->kind));
	} else if ((l->kind == BK_PREEMPTED || l->kind == BK_RUNNABLE) && l->detail) {
		put(out, l->detail);
	} else if (l->kind == BK_CHILD) {
		fputs("waiting for child ", out); /* "waiting for child sleep (pid 812)" */
		put(out, function ? function : "?");
		if (l->detail) {
			fputs(" (", out);
			put(out, l->detail);
			fputc(')', out);
		}
	} else if (l->kind == BK_FAULT && l->function) {
		char f[SHORTNAME_MAX];

		fputs("fault ", out); /* "fault major, dataset.bin" */
		put(out, fault__short(l->function, f, sizeof(f)));
		if (l->detail) {
			fputc(' ', out);
			put(out, l->detail);
		}
	} else if (l->kind == BK_THROTTLED && l->function) {
		fputs("throttled, ", out); /* the cgroup's path whole: no shortening */
		put(out, l->function);
	} else {
		/* Never a bare kind: without a function, what is known ("no sample, after X"), and
		 * the thread. */
		fprintf(out, "%s", blame_kind__name(l->kind));
		if (function) {
			fputc(' ', out);
			put(out, function);
		} else if (l->detail) {
			fputs(" (", out);
			put(out, l->detail);
			fputs(") in ", out);
			put(out, l->comm);
		} else {
			fputs(" in ", out);
			put(out, l->comm);
		}
	}
	if (last) {
		fputc(' ', out);
		dur__print(out, l->ns);
	}
}

/*
 * A hop through an async runtime's own plumbing (a blocking-pool thread parked for work, a
 * task in the run queue, a task awaiting a spawn_blocking's join): a short word for it, NULL
 * for any other link. summary.txt folds a run of them into one hop; summary.json has each.
 */
static const char *plumbing(const struct chain_link *l)
{
	if ((l->kind != BK_COND && l->kind != BK_LOCK) || !l->lock)
		return NULL;
	if (!strcmp(l->lock, "task run queue"))
		return "run queue";
	if (!strncmp(l->lock, "task join", 9))
		return "join";
	for (__u32 i = 0; i < l->nframes; i++)
		if (strstr(l->frames[i], "::runtime::blocking::pool::"))
			return "blocking pool";
	if (!strncmp(l->lock, "by tokio::runtime::", 19) ||
	    !strncmp(l->lock, "by parking_lot::", 16))
		return "park";
	return NULL;
}

/* A wait for an async lock (a task's, through the runtime): "lock async ...". */
static bool async_lock(const struct chain_link *l)
{
	return l->kind == BK_LOCK && l->lock && !strncmp(l->lock, "async ", 6);
}

/*
 * The chain, closer first. Runs of the runtime's plumbing fold into one hop ("runtime
 * (blocking pool, join)"), and a queue of tasks on async locks into its first waiter's lock
 * and its last one's holder: the hops a user reads are the program's.
 */
void gap__chain_print(const struct gap *g, FILE *out)
{
	put(out, g->closer_comm);
	for (__u32 k = 0; k < g->nchain; k++) {
		const struct chain_link *l = &g->chain[k];
		__u32 j = k;

		fprintf(out, " \u2190 ");
		if (k + 1 < g->nchain && plumbing(l)) {
			const char *seen[8];
			__u32 n = 0;

			fputs("runtime (", out);
			for (; j + 1 < g->nchain && plumbing(&g->chain[j]); j++) {
				const char *w = plumbing(&g->chain[j]);
				bool dup = false;

				for (__u32 i = 0; i < n; i++)
					dup |= seen[i] == w;
				if (dup || n == 8)
					continue;
				fprintf(out, "%s%s", n ? ", " : "", w);
				seen[n++] = w;
			}
			fputc(')', out);
			k = j - 1;
			continue;
		}
		if (k && (g->chain[k - 1].kind == BK_LOCK || g->chain[k - 1].kind == BK_COND) &&
		    k + 1 < g->nchain && !plumbing(&g->chain[k - 1])) {
			put(out, l->comm);
			fputs(": ", out);
		}
		while (async_lock(l) && j + 2 < g->nchain && async_lock(&g->chain[j + 1]))
			j++;
		if (j > k) { /* a queue: the first waiter's lock, the last one's holder */
			struct chain_link q = *l;

			q.detail = g->chain[j].detail;
			print_link(out, &q, false);
			fprintf(out, ", %u task%s ahead", j - k, j - k > 1 ? "s" : "");
			k = j;
			continue;
		}
		print_link(out, l, k + 1 == g->nchain);
	}
	fputc('\n', out);
}

size_t gap__chain_text(const struct gap *g, char *buf, size_t size)
{
	FILE *m;
	size_t n;

	if (!size)
		return 0;
	buf[0] = '\0';
	if (!(m = fmemopen(buf, size, "w")))
		return 0;
	gap__chain_print(g, m);
	fclose(m); /* fmemopen ends what it wrote with a NUL where there is room */
	buf[size - 1] = '\0';
	n = strlen(buf);
	if (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return n;
}
