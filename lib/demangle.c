// SPDX-License-Identifier: GPL-2.0
/* Demangled names (demangle.h). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* glibc declares basename(): libiberty.h is told so, lest its own declaration clash with <libgen.h>. */
#define HAVE_DECL_BASENAME 1
#include <libiberty/demangle.h>

#include "demangle_int.h"
#include "vec.h"

/* C++ ("_Z"), Rust legacy ("_ZN...17h<hash>E") and Rust v0 ("_R") names: what the demangler knows. */
static bool is_mangled(const char *name)
{
	return name && name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

char *demangle(const char *name)
{
	char *out, *copy = NULL;
	const char *llvm;

	if (!is_mangled(name))
		return NULL;
	/* LLVM's ".llvm.NNNN" (a function made local for cross-module inlining) is dropped, as
	 * Rust's and LLVM's own demanglers do; the Itanium grammar has no place for it. */
	llvm = strstr(name, ".llvm.");
	if (llvm) {
		copy = strndup(name, llvm - name);
		if (!copy)
			return NULL;
	}
	/*
	 * libiberty tries Rust first (a legacy Rust name is also a well-formed C++ one: its hash
	 * tells them apart), then the Itanium ABI. Without DMGL_VERBOSE a Rust name comes without
	 * its hash or its crates' disambiguators, as Rust prints it: "std::rt::lang_start::<()>".
	 */
	out = cplus_demangle(copy ? copy : name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	free(copy);
	return out;
}

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
	size_t cap = array__cap(d->cap, sizeof(struct dm_ent), d->cap + 1, 1024);
	struct dm_ent *tab = cap ? calloc(cap, sizeof(*tab)) : NULL;

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
	if (!d || !is_mangled(name))
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
