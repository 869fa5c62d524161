// SPDX-License-Identifier: GPL-2.0
/* Mappings per process (addrmaps.h): a sorted array each, found by binary search. */
#include <stddef.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "addrmaps.h"
#include "idmap.h"
#include "strtab.h"
#include "vec.h"

struct addrmaps {
	struct idmap ids; /* tgid -> procs: a struct vec of struct ctx_map each */
	struct vec procs;
};

struct addrmaps *addrmaps__new(void)
{
	return calloc(1, sizeof(struct addrmaps));
}

void addrmaps__free(struct addrmaps *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->procs.n; i++)
		vec__free(VEC_AT(&a->procs, struct vec, i));
	vec__free(&a->procs);
	idmap__free(&a->ids);
	free(a);
}

static struct vec *proc_of(struct addrmaps *a, __u32 tgid)
{
	long i = idmap__get(&a->ids, tgid);
	struct vec *pm;

	if (i >= 0)
		return VEC_AT(&a->procs, struct vec, i);
	pm = vec__push(&a->procs, sizeof(*pm));
	if (pm && idmap__set(&a->ids, tgid, a->procs.n - 1)) {
		a->procs.n--;
		return NULL;
	}
	return pm;
}

/* The first mapping that ends after addr (the one holding it, if any holds it). */
static size_t lower(const struct vec *pm, __u64 addr)
{
	return sorted__upper(pm->data, pm->n, sizeof(struct ctx_map), offsetof(struct ctx_map, end),
			     addr);
}

int addrmaps__add(struct addrmaps *a, __u32 tgid, const struct ctx_map *m)
{
	struct vec *pm = proc_of(a, tgid);
	struct ctx_map head, tail, *v;
	bool has_head = false, has_tail = false;
	size_t i, j, n, add;

	if (!pm)
		return -ENOMEM;
	if (m->end <= m->start)
		return 0;
	/* [i, j): the mappings m overlaps; the first may keep a head, the last a tail. */
	v = pm->data;
	n = pm->n;
	i = j = lower(pm, m->start);
	while (j < n && v[j].start < m->end)
		j++;
	if (i < j && v[i].start < m->start) {
		head = v[i];
		head.end = m->start;
		has_head = true;
	}
	if (i < j && v[j - 1].end > m->end) {
		tail = v[j - 1];
		tail.pgoff += m->end - tail.start;
		tail.start = m->end;
		has_tail = true;
	}
	/* Room for what is added (the vector may move), then close up behind it. */
	add = 1 + has_head + has_tail;
	for (size_t k = 0; k < add; k++) {
		if (!vec__push(pm, sizeof(*v))) {
			pm->n = n;
			return -ENOMEM;
		}
	}
	v = pm->data;
	memmove(&v[i + add], &v[j], (n - j) * sizeof(*v));
	pm->n = n - (j - i) + add;
	if (has_head)
		v[i++] = head;
	v[i++] = *m;
	if (has_tail)
		v[i] = tail;
	return 0;
}

const struct ctx_map *addrmaps__find(const struct addrmaps *a, __u32 tgid, __u64 addr)
{
	long p = idmap__get(&a->ids, tgid);
	const struct vec *pm;
	const struct ctx_map *m;
	size_t i;

	if (p < 0)
		return NULL;
	pm = VEC_AT(&a->procs, struct vec, p);
	i = lower(pm, addr);
	m = i < pm->n ? VEC_AT(pm, struct ctx_map, i) : NULL;
	return m && m->start <= addr ? m : NULL;
}

const struct ctx_map *addrmaps__find_ino(const struct addrmaps *a, __u32 tgid, __u64 ino)
{
	long p = idmap__get(&a->ids, tgid);
	const struct vec *pm;

	if (p < 0 || !ino)
		return NULL;
	pm = VEC_AT(&a->procs, struct vec, p);
	for (size_t i = 0; i < pm->n; i++)
		if (VEC_AT(pm, struct ctx_map, i)->ino == ino)
			return VEC_AT(pm, struct ctx_map, i);
	return NULL;
}
