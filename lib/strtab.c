// SPDX-License-Identifier: GPL-2.0
/* Interned strings: open addressing on an FNV-1a hash. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "strtab.h"

struct strtab {
	char **slots;
	size_t cap, n, bytes;
};

struct strtab *strtab__new(void)
{
	struct strtab *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->cap = 1024;
	t->slots = calloc(t->cap, sizeof(*t->slots));
	if (!t->slots) {
		free(t);
		return NULL;
	}
	return t;
}

static int strtab__grow(struct strtab *t)
{
	size_t cap = array__cap(t->cap, sizeof(char *), t->cap + 1, 1024);
	char **slots = cap ? calloc(cap, sizeof(*slots)) : NULL;

	if (!slots)
		return -1;
	for (size_t i = 0; i < t->cap; i++) {
		size_t j;

		if (!t->slots[i])
			continue;
		for (j = hash__str(t->slots[i]) & (cap - 1); slots[j]; j = (j + 1) & (cap - 1))
			;
		slots[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

const char *strtab__intern(struct strtab *t, const char *s)
{
	size_t i;

	if (!s)
		return NULL;
	if ((t->n + 1) * 2 > t->cap && strtab__grow(t))
		return NULL;
	for (i = hash__str(s) & (t->cap - 1); t->slots[i]; i = (i + 1) & (t->cap - 1))
		if (!strcmp(t->slots[i], s))
			return t->slots[i];
	t->slots[i] = strdup(s);
	if (!t->slots[i])
		return NULL;
	t->n++;
	t->bytes += strlen(s) + 1;
	return t->slots[i];
}

const char *strtab__find(const struct strtab *t, const char *s)
{
	for (size_t i = hash__str(s) & (t->cap - 1); t->slots[i]; i = (i + 1) & (t->cap - 1))
		if (!strcmp(t->slots[i], s))
			return t->slots[i];
	return NULL;
}

const char *strtab__internf(struct strtab *t, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return strtab__intern(t, buf);
}

size_t strtab__bytes(const struct strtab *t)
{
	return t->bytes;
}

void strtab__free(struct strtab *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->cap; i++)
		free(t->slots[i]);
	free(t->slots);
	free(t);
}
