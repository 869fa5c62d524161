// SPDX-License-Identifier: GPL-2.0
/* Demangled names (demangle.h). */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"

/* libstdc++ (or any C++ runtime): the Itanium ABI's demangler, callable from C. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* Rust's legacy escapes inside an identifier, "$LT$" for '<' and the like. */
static const struct {
	const char *esc;
	char c;
} rust_escapes[] = {
	{ "$SP$", '@' }, { "$BP$", '*' }, { "$RF$", '&' }, { "$LT$", '<' },
	{ "$GT$", '>' }, { "$LP$", '(' }, { "$RP$", ')' }, { "$C$", ',' },
};

/*
 * Where a Rust legacy hash ("::h" and 16 hex digits) ends the path, or NULL: at the end, or
 * before a clone suffix the C++ demangler added (" [clone .llvm.123]").
 */
static char *rust_hash(char *s)
{
	for (char *p = strstr(s, "::h"); p; p = strstr(p + 1, "::h")) {
		int i = 0;

		while (i < 16 && isxdigit((unsigned char)p[3 + i]))
			i++;
		if (i == 16 && (!p[19] || p[19] == ' '))
			return p;
	}
	return NULL;
}

/* Undoes Rust's escapes in place: "$u20$" (a code point in hex, ASCII only), the table, ".." for
 * "::". */
static void rust_unescape(char *s)
{
	char *w = s, *start = s;

	while (*s) {
		size_t k, n = 0;

		/* A component that starts with an escape is prefixed with '_': "_$LT$". */
		if (*s == '_' && s[1] == '$' && (w == start || w[-1] == ':')) {
			s++;
			continue;
		}

		if (*s == '.' && s[1] == '.') {
			*w++ = ':';
			*w++ = ':';
			s += 2;
			continue;
		}
		if (*s != '$') {
			*w++ = *s++;
			continue;
		}
		for (k = 0; k < sizeof(rust_escapes) / sizeof(rust_escapes[0]); k++) {
			n = strlen(rust_escapes[k].esc);
			if (!strncmp(s, rust_escapes[k].esc, n))
				break;
		}
		if (k < sizeof(rust_escapes) / sizeof(rust_escapes[0])) {
			*w++ = rust_escapes[k].c;
			s += n;
		} else if (s[1] == 'u' && strchr(s + 2, '$')) {
			char *end;
			unsigned long c = strtoul(s + 2, &end, 16);

			if (*end == '$' && c > 0 && c < 128) {
				*w++ = (char)c;
				s = end + 1;
			} else {
				*w++ = *s++;
			}
		} else {
			*w++ = *s++;
		}
	}
	*w = '\0';
}

char *demangle(const char *name)
{
	char *out, *hash, *copy = NULL;
	const char *llvm;
	int status = -1;

	if (!name || name[0] != '_' || name[1] != 'Z')
		return NULL;
	/* LLVM's ".llvm.NNNN" (a function made local for cross-module inlining) is dropped, as
	 * Rust's and LLVM's own demanglers do; the Itanium grammar has no place for it. */
	llvm = strstr(name, ".llvm.");
	if (llvm) {
		copy = strndup(name, llvm - name);
		if (!copy)
			return NULL;
	}
	out = __cxa_demangle(copy ? copy : name, NULL, NULL, &status);
	free(copy);
	if (status || !out) {
		free(out);
		return NULL;
	}
	/* Rust (legacy): the hash tells it from C++, whose names never end so. */
	hash = rust_hash(out);
	if (hash) {
		memmove(hash, hash + 19, strlen(hash + 19) + 1);
		rust_unescape(out);
	}
	return out;
}

struct dm_ent {
	const char *key; /* NULL: empty */
	const char *name;
	bool owned;
};

struct demangler {
	struct dm_ent *tab;
	size_t cap, n; /* cap: a power of 2, at most half full */
};

struct demangler *demangler__new(void)
{
	return calloc(1, sizeof(struct demangler));
}

static struct dm_ent *dm_slot(struct dm_ent *tab, size_t cap, const char *key)
{
	size_t h = (size_t)(((uintptr_t)key * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);

	while (tab[h].key && tab[h].key != key)
		h = (h + 1) & (cap - 1);
	return &tab[h];
}

static int dm_grow(struct demangler *d)
{
	size_t cap = d->cap ? d->cap * 2 : 1024;
	struct dm_ent *tab = calloc(cap, sizeof(*tab));

	if (!tab)
		return -1;
	for (size_t i = 0; i < d->cap; i++)
		if (d->tab[i].key)
			*dm_slot(tab, cap, d->tab[i].key) = d->tab[i];
	free(d->tab);
	d->tab = tab;
	d->cap = cap;
	return 0;
}

const char *demangler__name(struct demangler *d, const char *name)
{
	struct dm_ent *e;
	char *out;

	/* Only mangled names are kept: the rest answer themselves. */
	if (!d || !name || name[0] != '_' || name[1] != 'Z')
		return name;
	if (d->cap && dm_slot(d->tab, d->cap, name)->key)
		return dm_slot(d->tab, d->cap, name)->name;
	if ((d->n + 1) * 2 > d->cap && dm_grow(d))
		return name;
	out = demangle(name);
	e = dm_slot(d->tab, d->cap, name);
	*e = (struct dm_ent){ name, out ? out : name, out != NULL };
	d->n++;
	return e->name;
}

void demangler__free(struct demangler *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->cap; i++)
		if (d->tab[i].owned)
			free((char *)d->tab[i].name);
	free(d->tab);
	free(d);
}
