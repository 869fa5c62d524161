// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksyms.h"

struct ksyms {
	struct ksym *syms;
	size_t n;
};

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

struct ksyms *ksyms__load(void)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	struct ksyms *k;
	char line[512];
	size_t cap = 0;

	if (!f)
		return NULL;
	k = calloc(1, sizeof(*k));
	if (!k) {
		fclose(f);
		return NULL;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char type, name[256];

		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		/* Text symbols only: stacks hold code addresses. */
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (!addr)
			continue; /* kptr_restrict hides addresses: nothing to name with */
		if (k->n == cap) {
			cap = cap ? cap * 2 : 65536;
			struct ksym *ns = realloc(k->syms, cap * sizeof(*ns));

			if (!ns)
				break;
			k->syms = ns;
		}
		k->syms[k->n].addr = addr;
		k->syms[k->n].name = strdup(name);
		k->syms[k->n].emitted = false;
		if (!k->syms[k->n].name)
			break;
		k->n++;
	}
	fclose(f);
	qsort(k->syms, k->n, sizeof(*k->syms), cmp_ksym);
	return k;
}

struct ksym *ksyms__find(struct ksyms *k, __u64 addr)
{
	size_t lo = 0, hi;

	if (!k || !k->n || addr < k->syms[0].addr)
		return NULL;
	hi = k->n;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return &k->syms[lo];
}

void ksyms__free(struct ksyms *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->n; i++)
		free(k->syms[i].name);
	free(k->syms);
	free(k);
}
