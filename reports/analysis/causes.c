// SPDX-License-Identifier: GPL-2.0
/* Root causes summed by kind and function, over all gaps and per gap: see causes.h. */
#include <stdlib.h>

#include "causes.h"

struct kind_fn {
	enum blame_kind kind;
	const char *fn;
	const char *comm; /* the thread of its largest root */
	__u64 ns, comm_ns;
};

/* A gap's roots into the totals by (kind, function or lock). */
void causes__count(struct vec *kind_fn, const struct gap *g)
{
	for (__u32 r = 0; r < g->nroots; r++) {
		const struct gap_root *root = &g->roots[r];
		const struct chain_link *l = &root->links[root->nlinks - 1];
		const char *fn = l->lock ? l->lock : l->function;
		struct kind_fn *e = NULL;

		for (size_t i = 0; i < kind_fn->n && !e; i++) {
			struct kind_fn *c = VEC_AT(kind_fn, struct kind_fn, i);

			if (c->kind == l->kind && c->fn == fn)
				e = c;
		}
		if (!e && (e = vec__push(kind_fn, sizeof(*e)))) {
			e->kind = l->kind;
			e->fn = fn;
		}
		if (!e)
			continue;
		e->ns += root->ns;
		if (root->ns > e->comm_ns) {
			e->comm = l->comm;
			e->comm_ns = root->ns;
		}
	}
}

/* Causes over all gaps, by kind; each names the function (or lock) explaining most of it. */
void causes__rank(struct analysis *a, const struct vec *kind_fn)
{
	const char *best_fn[BK_MAX] = {}, *best_comm[BK_MAX] = {};
	__u64 best[BK_MAX] = {}, by_kind[BK_MAX] = {};

	for (size_t i = 0; i < kind_fn->n; i++) {
		const struct kind_fn *e = VEC_AT(kind_fn, struct kind_fn, i);

		by_kind[e->kind] += e->ns;
		if (e->ns > best[e->kind]) {
			best[e->kind] = e->ns;
			best_fn[e->kind] = e->fn;
			best_comm[e->kind] = e->comm;
		}
	}
	a->ncauses = 0;
	for (int k = 0; k < BK_MAX; k++) {
		if (!by_kind[k])
			continue;
		a->causes[a->ncauses].kind = k;
		a->causes[a->ncauses].function = best_fn[k];
		a->causes[a->ncauses].comm = best_comm[k];
		a->causes[a->ncauses].ns = by_kind[k];
		a->causes[a->ncauses].share = a->gap_ns ? (double)by_kind[k] / a->gap_ns : 0;
		a->ncauses++;
	}
	for (size_t i = 1; i < a->ncauses; i++) /* insertion sort, largest first */
		for (size_t j = i; j && a->causes[j].ns > a->causes[j - 1].ns; j--) {
			struct cause t = a->causes[j];

			a->causes[j] = a->causes[j - 1];
			a->causes[j - 1] = t;
		}
}

/* A gap's roots by (kind, function), for summary.json: kept when the roots are dropped. */
void causes__gap_kinds(struct gap *g)
{
	g->nkinds = 0;
	g->kinds = calloc(g->nroots ? g->nroots : 1, sizeof(*g->kinds));
	if (!g->kinds)
		return;
	for (__u32 r = 0; r < g->nroots; r++) {
		const struct chain_link *l = &g->roots[r].links[g->roots[r].nlinks - 1];
		const char *fn = l->lock ? l->lock : l->function;
		__u32 k;

		for (k = 0; k < g->nkinds; k++)
			if (g->kinds[k].kind == l->kind && g->kinds[k].function == fn)
				break;
		if (k == g->nkinds) {
			g->kinds[k].kind = l->kind;
			g->kinds[k].function = fn;
			g->nkinds++;
		}
		g->kinds[k].ns += g->roots[r].ns;
	}
	for (__u32 k = 0; k < g->nkinds; k++) {
		g->kinds[k].share = (double)g->kinds[k].ns / (g->end_ns - g->start_ns);
		for (__u32 j = k; j && g->kinds[j].ns > g->kinds[j - 1].ns; j--) {
			struct cause t = g->kinds[j];

			g->kinds[j] = g->kinds[j - 1];
			g->kinds[j - 1] = t;
		}
	}
}
