// SPDX-License-Identifier: GPL-2.0
/* Strings to indexes (strmap.h): linear probing on FNV-1a, kept half empty. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "strmap.h"
#include "vec.h"

/* s's slot in m, or the free slot where it would go. */
static size_t strmap__slot(const struct strmap *m, const char *const *names, const char *s)
{
	size_t i = hash__str(s) & (m->cap - 1);

	while (m->vals[i] && strcmp(names[m->vals[i] - 1], s))
		i = (i + 1) & (m->cap - 1);
	return i;
}

long strmap__get(const struct strmap *m, const char *const *names, const char *s)
{
	size_t i;

	if (!m->cap)
		return -1;
	i = strmap__slot(m, names, s);
	return m->vals[i] ? (long)m->vals[i] - 1 : -1;
}

static int strmap__grow(struct strmap *m, const char *const *names)
{
	size_t cap = array__cap(m->cap, sizeof(*m->vals), m->cap + 1, 64);
	__u32 *vals = cap ? calloc(cap, sizeof(*vals)) : NULL;

	if (!vals)
		return -ENOMEM;
	/* Every string is distinct: each goes to the first free slot, no compare needed. */
	for (size_t j = 0; j < m->cap; j++) {
		size_t i;

		if (!m->vals[j])
			continue;
		i = hash__str(names[m->vals[j] - 1]) & (cap - 1);
		while (vals[i])
			i = (i + 1) & (cap - 1);
		vals[i] = m->vals[j];
	}
	free(m->vals);
	m->vals = vals;
	m->cap = cap;
	return 0;
}

int strmap__set(struct strmap *m, const char *const *names, const char *s, __u32 index)
{
	size_t i;

	if (index == UINT32_MAX) /* index + 1 would be a free slot */
		return -ERANGE;
	if ((m->n + 1) * 2 > m->cap && strmap__grow(m, names))
		return -ENOMEM;
	i = strmap__slot(m, names, s);
	if (!m->vals[i])
		m->n++;
	m->vals[i] = index + 1;
	return 0;
}

void strmap__free(struct strmap *m)
{
	free(m->vals);
	*m = (struct strmap){};
}
