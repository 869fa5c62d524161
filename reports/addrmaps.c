// SPDX-License-Identifier: GPL-2.0
/* Mappings per process (addrmaps.h): a sorted array each, found by binary search. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "addrmaps.h"
#include "idmap.h"

struct proc_maps {
	struct ctx_map *v;
	size_t n, cap;
};

struct addrmaps {
	struct idmap ids;	/* tgid -> procs[] */
	struct proc_maps *procs;
	size_t nprocs, cap;
};

struct addrmaps *addrmaps__new(void)
{
	return calloc(1, sizeof(struct addrmaps));
}

void addrmaps__free(struct addrmaps *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nprocs; i++)
		free(a->procs[i].v);
	free(a->procs);
	idmap__free(&a->ids);
	free(a);
}

static struct proc_maps *proc_of(struct addrmaps *a, __u32 tgid)
{
	long i = idmap__get(&a->ids, tgid);

	if (i >= 0)
		return &a->procs[i];
	if (a->nprocs == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 16;
		struct proc_maps *np = realloc(a->procs, cap * sizeof(*np));

		if (!np)
			return NULL;
		a->procs = np;
		a->cap = cap;
	}
	if (idmap__set(&a->ids, tgid, a->nprocs))
		return NULL;
	a->procs[a->nprocs] = (struct proc_maps){};
	return &a->procs[a->nprocs++];
}

/* The first mapping that ends after addr (the one holding it, if any holds it). */
static size_t lower(const struct proc_maps *pm, __u64 addr)
{
	size_t lo = 0, hi = pm->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int addrmaps__add(struct addrmaps *a, __u32 tgid, const struct ctx_map *m)
{
	struct proc_maps *pm = proc_of(a, tgid);
	struct ctx_map head, tail;
	bool has_head = false, has_tail = false;
	size_t i, j, add;

	if (!pm)
		return -ENOMEM;
	if (m->end <= m->start)
		return 0;
	/* [i, j): the mappings m overlaps; the first may keep a head, the last a tail. */
	i = j = lower(pm, m->start);
	while (j < pm->n && pm->v[j].start < m->end)
		j++;
	if (i < j && pm->v[i].start < m->start) {
		head = pm->v[i];
		head.end = m->start;
		has_head = true;
	}
	if (i < j && pm->v[j - 1].end > m->end) {
		tail = pm->v[j - 1];
		tail.pgoff += m->end - tail.start;
		tail.start = m->end;
		has_tail = true;
	}
	add = 1 + has_head + has_tail;
	if (pm->n - (j - i) + add > pm->cap) {
		size_t cap = pm->cap ? pm->cap * 2 : 32;
		struct ctx_map *nv = realloc(pm->v, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		pm->v = nv;
		pm->cap = cap;
	}
	memmove(&pm->v[i + add], &pm->v[j], (pm->n - j) * sizeof(*pm->v));
	pm->n = pm->n - (j - i) + add;
	if (has_head)
		pm->v[i++] = head;
	pm->v[i++] = *m;
	if (has_tail)
		pm->v[i] = tail;
	return 0;
}

const struct ctx_map *addrmaps__find(const struct addrmaps *a, __u32 tgid, __u64 addr)
{
	long p = idmap__get(&a->ids, tgid);
	const struct proc_maps *pm;
	size_t i;

	if (p < 0)
		return NULL;
	pm = &a->procs[p];
	i = lower(pm, addr);
	return i < pm->n && pm->v[i].start <= addr ? &pm->v[i] : NULL;
}
