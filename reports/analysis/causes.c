// SPDX-License-Identifier: GPL-2.0
/* Root causes summed by kind and function, over all gaps and per gap: see causes.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "causes.h"

struct kind_fn {
	enum blame_kind kind;
	const char *fn;
	const char *comm; /* the thread of its largest root */
	__u64 ns, comm_ns;
	struct vec leaves, lines; /* struct cause_part, ns summed */
	struct fault_span span;
};

static const char *root_fn(const struct gap_root *root)
{
	const struct chain_link *l = &root->links[root->nlinks - 1];

	return l->lock ? l->lock : l->function;
}

void fault_span__add(struct fault_span *to, const struct fault_span *s)
{
	if (!s->n)
		return;
	if (!to->n || s->lo < to->lo)
		to->lo = s->lo;
	if (!to->n || s->hi > to->hi)
		to->hi = s->hi;
	to->n += s->n;
}

static void part__add(struct vec *v, const char *name, __u64 ns)
{
	struct cause_part *p;

	if (!name)
		return;
	for (size_t i = 0; i < v->n; i++) {
		p = VEC_AT(v, struct cause_part, i);
		if (p->name == name) {
			p->ns += ns;
			return;
		}
	}
	p = vec__push(v, sizeof(*p));
	if (p) { /* out of memory: the breakdown lacks it, the row's own time does not */
		p->name = name;
		p->ns = ns;
	}
}

static void parts__add(struct vec *leaves, struct vec *lines, const struct gap_root *root)
{
	for (__u32 i = 0; i < root->nparts; i++) {
		part__add(leaves, root->parts[i].leaf, root->parts[i].ns);
		part__add(lines, root->parts[i].line, root->parts[i].ns);
	}
}

/* The top CAUSE_PARTS of v into out, with their share of total. */
static __u32 parts__top(const struct vec *v, __u64 total, struct cause_part *out)
{
	__u32 n = 0;

	for (size_t i = 0; i < v->n; i++) {
		const struct cause_part *p = VEC_AT(v, struct cause_part, i);
		__u32 k = n < CAUSE_PARTS ? n++ : CAUSE_PARTS;

		/* Insert in order, the least falling off the end (ties: the first seen). */
		for (; k > 0 && out[k - 1].ns < p->ns; k--)
			if (k < CAUSE_PARTS)
				out[k] = out[k - 1];
		if (k < CAUSE_PARTS)
			out[k] = *p;
	}
	for (__u32 i = 0; i < n; i++)
		out[i].share = total ? (double)out[i].ns / total : 0;
	return n;
}

/* A gap's roots into the totals by (kind, function or lock). */
void causes__count(struct vec *kind_fn, const struct gap *g)
{
	for (__u32 r = 0; r < g->nroots; r++) {
		const struct gap_root *root = &g->roots[r];
		const struct chain_link *l = &root->links[root->nlinks - 1];
		const char *fn = root_fn(root);
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
		parts__add(&e->leaves, &e->lines, root);
		fault_span__add(&e->span, &root->span);
	}
}

/* Largest first; equal ones in the order they came (the index among them). */
static int cmp_rank(const void *x, const void *y, void *rows)
{
	const struct cause *c = rows;
	size_t i = *(const size_t *)x, j = *(const size_t *)y;

	if (c[i].ns != c[j].ns)
		return c[i].ns > c[j].ns ? -1 : 1;
	return (i > j) - (i < j);
}

/* Largest first, stable: O(n log n) however many (kind, function) rows a trace makes. */
static void causes__sort(struct cause *c, size_t n)
{
	size_t *idx = n > 1 ? malloc(n * sizeof(*idx)) : NULL;
	struct cause *tmp = idx ? malloc(n * sizeof(*tmp)) : NULL;

	if (!tmp) { /* out of memory: in place, slowly */
		free(idx);
		for (size_t i = 1; i < n; i++)
			for (size_t j = i; j && c[j].ns > c[j - 1].ns; j--) {
				struct cause t = c[j];

				c[j] = c[j - 1];
				c[j - 1] = t;
			}
		return;
	}
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof(*idx), cmp_rank, c);
	for (size_t i = 0; i < n; i++)
		tmp[i] = c[idx[i]];
	memcpy(c, tmp, n * sizeof(*c));
	free(tmp);
	free(idx);
}

/* Causes over all gaps: one row per (kind, function), with its own time only. */
int causes__rank(const struct vec *kind_fn, __u64 gap_ns, struct cause **out, size_t *n)
{
	struct cause *all = calloc(kind_fn->n ? kind_fn->n : 1, sizeof(*all));

	*out = all;
	*n = 0;
	if (!all)
		return -ENOMEM;
	for (size_t i = 0; i < kind_fn->n; i++) {
		const struct kind_fn *e = VEC_AT(kind_fn, struct kind_fn, i);
		struct cause *c = &all[*n];

		if (!e->ns)
			continue;
		c->kind = e->kind;
		c->function = e->fn;
		c->comm = e->comm;
		c->ns = e->ns;
		c->share = gap_ns ? (double)e->ns / gap_ns : 0;
		c->nleaves = parts__top(&e->leaves, e->ns, c->leaves);
		c->nlines = parts__top(&e->lines, e->ns, c->lines);
		c->span = e->span;
		(*n)++;
	}
	causes__sort(all, *n);
	return 0;
}

/* A gap's roots by (kind, function), for summary.json: kept when the roots are dropped. */
void causes__gap_kinds(struct gap *g)
{
	struct vec *leaves, *lines;

	g->nkinds = 0;
	g->kinds = calloc(g->nroots ? g->nroots : 1, sizeof(*g->kinds));
	leaves = calloc(g->nroots ? g->nroots : 1, sizeof(*leaves));
	lines = calloc(g->nroots ? g->nroots : 1, sizeof(*lines));
	if (!g->kinds || !leaves || !lines) {
		free(leaves);
		free(lines);
		return;
	}
	for (__u32 r = 0; r < g->nroots; r++) {
		const struct chain_link *l = &g->roots[r].links[g->roots[r].nlinks - 1];
		const char *fn = root_fn(&g->roots[r]);
		__u32 k;

		for (k = 0; k < g->nkinds; k++)
			if (g->kinds[k].kind == l->kind && g->kinds[k].function == fn)
				break;
		if (k == g->nkinds) {
			g->kinds[k].kind = l->kind;
			g->kinds[k].function = fn;
			g->kinds[k].comm = l->comm;
			g->nkinds++;
		}
		g->kinds[k].ns += g->roots[r].ns;
		parts__add(&leaves[k], &lines[k], &g->roots[r]);
		fault_span__add(&g->kinds[k].span, &g->roots[r].span);
	}
	for (__u32 k = 0; k < g->nkinds; k++) {
		g->kinds[k].share = (double)g->kinds[k].ns / (g->end_ns - g->start_ns);
		g->kinds[k].nleaves = parts__top(&leaves[k], g->kinds[k].ns, g->kinds[k].leaves);
		g->kinds[k].nlines = parts__top(&lines[k], g->kinds[k].ns, g->kinds[k].lines);
		vec__free(&leaves[k]);
		vec__free(&lines[k]);
	}
	free(leaves);
	free(lines);
	causes__sort(g->kinds, g->nkinds);
}

void causes__free(struct vec *kind_fn)
{
	for (size_t i = 0; i < kind_fn->n; i++) {
		struct kind_fn *e = VEC_AT(kind_fn, struct kind_fn, i);

		vec__free(&e->leaves);
		vec__free(&e->lines);
	}
	vec__free(kind_fn);
}
