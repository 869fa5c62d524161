// SPDX-License-Identifier: GPL-2.0
/* 64-bit ids to indexes (idmap.h): linear probing on a multiplicative hash, kept half empty. */
#include <errno.h>
#include <stdlib.h>

#include "idmap.h"
#include "strtab.h"

static size_t idmap__slot(const struct idmap *m, __u64 key)
{
	/* Ids are often small and sequential, handles aligned: take the product's high bits. */
	size_t i = (key * 0x9e3779b97f4a7c15ull >> 17) & (m->cap - 1);

	while (m->vals[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

long idmap__get(const struct idmap *m, __u64 key)
{
	size_t i;

	if (!m->cap)
		return -1;
	i = idmap__slot(m, key);
	return m->vals[i] ? (long)m->vals[i] - 1 : -1;
}

static int idmap__grow(struct idmap *m)
{
	struct idmap big = { .cap = array__cap(m->cap, sizeof(*big.keys), m->cap + 1, 64) };

	big.keys = big.cap ? calloc(big.cap, sizeof(*big.keys)) : NULL;
	big.vals = big.cap ? calloc(big.cap, sizeof(*big.vals)) : NULL;
	if (!big.keys || !big.vals) {
		free(big.keys);
		free(big.vals);
		return -ENOMEM;
	}
	for (size_t j = 0; j < m->cap; j++) {
		size_t i;

		if (!m->vals[j])
			continue;
		i = idmap__slot(&big, m->keys[j]);
		big.keys[i] = m->keys[j];
		big.vals[i] = m->vals[j];
		big.n++;
	}
	free(m->keys);
	free(m->vals);
	*m = big;
	return 0;
}

int idmap__set(struct idmap *m, __u64 key, __u32 index)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap && idmap__grow(m))
		return -ENOMEM;
	i = idmap__slot(m, key);
	if (!m->vals[i])
		m->n++;
	m->keys[i] = key;
	m->vals[i] = index + 1;
	return 0;
}

void idmap__free(struct idmap *m)
{
	free(m->keys);
	free(m->vals);
	*m = (struct idmap){};
}

void *idmap__elem(struct idmap *m, struct vec *v, size_t elem, __u64 key)
{
	long i = idmap__get(m, key);
	void *e;

	if (i >= 0)
		return (char *)v->data + i * elem;
	e = vec__push(v, elem);
	if (e && idmap__set(m, key, v->n - 1)) {
		v->n--;
		return NULL;
	}
	return e;
}
