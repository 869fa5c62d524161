// SPDX-License-Identifier: GPL-2.0
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ksyms.h"
#include "vec.h"

struct ksyms {
	struct ksym *syms;
	size_t n, cap;
	bool sorted;
	char *text;	/* from kallsyms: the whole file, the names point into it */
	bool own_names; /* from ksyms__add: each name its own allocation */
};

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

struct ksyms *ksyms__new(void)
{
	struct ksyms *k = calloc(1, sizeof(*k));

	if (k)
		k->sorted = true;
	return k;
}

static int push(struct ksyms *k, __u64 addr, const char *name)
{
	if (array__grow((void **)&k->syms, &k->cap, sizeof(*k->syms), k->n + 1, 1024))
		return -ENOMEM;
	if (k->n && addr < k->syms[k->n - 1].addr)
		k->sorted = false;
	k->syms[k->n++] = (struct ksym){ .addr = addr, .name = name };
	return 0;
}

/* The index of the first of the first n symbols (sorted) above addr. */
static size_t upper_bound(const struct ksyms *k, size_t n, __u64 addr)
{
	return sorted__upper(k->syms, n, sizeof(*k->syms), offsetof(struct ksym, addr), addr);
}

/*
 * Kept sorted as it grows, by insertion: a reader adds the trace's symbols between lookups, and a
 * sort at each lookup after an add would cost far more than moving the entries above.
 */
int ksyms__add(struct ksyms *k, __u64 addr, const char *name)
{
	size_t at;
	char *copy;

	if (k->text)
		return -EINVAL; /* a kallsyms table is complete as read */
	copy = strdup(name);
	if (!copy || push(k, addr, copy)) {
		free(copy);
		return -ENOMEM;
	}
	k->own_names = true;
	if (k->sorted)
		return 0;
	/* The new entry went last, below the one before it: move it into place. */
	at = upper_bound(k, k->n - 1, addr);
	memmove(&k->syms[at + 1], &k->syms[at], (k->n - 1 - at) * sizeof(*k->syms));
	k->syms[at] = (struct ksym){ .addr = addr, .name = copy };
	k->sorted = true;
	return 0;
}

static int read_all(int fd, char **out, size_t *outlen)
{
	size_t len = 0, cap = 8 << 20;
	char *text = malloc(cap + 1);

	for (;;) {
		ssize_t n;

		if (!text)
			return -ENOMEM;
		if (len == cap) {
			size_t ncap = array__cap(cap, 1, cap + 1, 0);
			char *t = ncap ? realloc(text, ncap + 1) : NULL; /* + 1: the NUL */

			if (!t) {
				free(text);
				return -ENOMEM;
			}
			text = t;
			cap = ncap;
		}
		n = read(fd, text + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	text[len] = 0;
	*out = text;
	*outlen = len;
	return 0;
}

/*
 * The file read whole in large reads and parsed in place ("ADDR TYPE NAME[\t[MODULE]]" per
 * line), names left where they are: ~120k lines, a strdup and an sscanf each took ~0.1 s.
 */
struct ksyms *ksyms__load(void)
{
	int fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	struct ksyms *k = NULL;
	size_t len;
	char *p, *end, *next;

	if (fd < 0)
		return NULL;
	k = ksyms__new();
	if (!k || read_all(fd, &k->text, &len))
		goto fail;
	close(fd);
	for (p = k->text, end = k->text + len; p < end; p = next) {
		char *eol = memchr(p, '\n', end - p), *name, *q;
		unsigned long long addr;
		char type;

		next = eol ? eol + 1 : end;
		if (eol)
			*eol = 0;
		addr = strtoull(p, &q, 16);
		if (q == p || q[0] != ' ' || !q[1] || q[2] != ' ')
			continue;
		type = q[1];
		name = q + 3;
		/* Text symbols only: stacks hold code addresses. */
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (!addr)
			continue; /* kptr_restrict hides addresses: nothing to name with */
		name[strcspn(name, " \t")] = 0; /* before a module name */
		if (push(k, addr, name))
			break;
	}
	return k;
fail:
	close(fd);
	ksyms__free(k);
	return NULL;
}

size_t ksyms__count(const struct ksyms *k)
{
	return k ? k->n : 0;
}

static void sort(struct ksyms *k)
{
	if (k->sorted)
		return;
	qsort(k->syms, k->n, sizeof(*k->syms), cmp_ksym);
	k->sorted = true;
}

struct ksym *ksyms__find(struct ksyms *k, __u64 addr)
{
	size_t lo = 0, hi;

	if (!k || !k->n)
		return NULL;
	sort(k);
	if (addr < k->syms[0].addr)
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
	if (!k)
		return NULL;
	sort(k);
	for (size_t i = 0; i < k->n; i++) {
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
	if (k->own_names)
		for (size_t i = 0; i < k->n; i++)
			free((char *)k->syms[i].name);
	free(k->syms);
	free(k->text);
	free(k);
}
