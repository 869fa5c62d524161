// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ksyms.h"

struct ksyms {
	struct ksym *syms;
	size_t n;
	char *text;	/* the whole file; the names point into it */
};

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * The file read whole in large reads and parsed in place ("ADDR TYPE NAME[\t[MODULE]]" per
 * line), names left where they are: ~120k lines, a strdup and an sscanf each took ~0.1 s.
 */
struct ksyms *ksyms__load(void)
{
	int fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	struct ksyms *k;
	size_t len = 0, cap = 8 << 20, scap = 0;
	char *p, *end;

	if (fd < 0)
		return NULL;
	k = calloc(1, sizeof(*k));
	if (!k)
		goto fail;
	k->text = malloc(cap + 1);
	for (;;) {
		ssize_t n;

		if (!k->text)
			goto fail;
		if (len == cap) {
			char *t = realloc(k->text, (cap *= 2) + 1);

			if (!t)
				goto fail;
			k->text = t;
		}
		n = read(fd, k->text + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	fd = -1;
	k->text[len] = 0;
	for (p = k->text, end = k->text + len; p < end; p++) {
		char *eol = memchr(p, '\n', end - p), *name, *q;
		unsigned long long addr;
		char type;

		if (!eol)
			eol = end;
		*eol = 0;
		addr = strtoull(p, &q, 16);
		if (q == p || q[0] != ' ' || !q[1] || q[2] != ' ')
			goto next;
		type = q[1];
		name = q + 3;
		/* Text symbols only: stacks hold code addresses. */
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			goto next;
		if (!addr)
			goto next; /* kptr_restrict hides addresses: nothing to name with */
		name[strcspn(name, " \t")] = 0; /* before a module name */
		if (k->n == scap) {
			size_t ncap = scap ? scap * 2 : 65536;
			struct ksym *ns = realloc(k->syms, ncap * sizeof(*ns));

			if (!ns)
				break;
			k->syms = ns;
			scap = ncap;
		}
		k->syms[k->n].addr = addr;
		k->syms[k->n].name = name;
		k->syms[k->n].emitted = false;
		k->n++;
next:
		p = eol;
	}
	qsort(k->syms, k->n, sizeof(*k->syms), cmp_ksym);
	return k;
fail:
	if (fd >= 0)
		close(fd);
	ksyms__free(k);
	return NULL;
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

struct ksym *ksyms__by_name(struct ksyms *k, const char *name, __u64 *end)
{
	for (size_t i = 0; k && i < k->n; i++) {
		size_t j = i + 1;

		if (strcmp(k->syms[i].name, name))
			continue;
		while (j < k->n && k->syms[j].addr == k->syms[i].addr)
			j++; /* aliases */
		*end = j < k->n ? k->syms[j].addr : k->syms[i].addr + 1;
		return &k->syms[i];
	}
	return NULL;
}

void ksyms__free(struct ksyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->text);
	free(k);
}
