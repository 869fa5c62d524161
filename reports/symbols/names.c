// SPDX-License-Identifier: GPL-2.0
/* Frame, lock and kernel names for the report: see names.h. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "archived.h"
#include "names.h"
#include "pyframes.h"
#include "perfmap.h"
#include "symbols.h"
#include "vec.h"

struct ksym {
	__u64 addr;
	const char *name;
};

/* A direct-mapped cache of resolved addresses: the same stacks recur all through a trace. */
#define CACHE_SIZE (1u << 14)

struct cache_ent {
	__u64 addr;
	__u32 tgid;
	__u8 kind; /* 0 empty, 1 user leaf, 2 user return, 3 libc test, 4 data */
	__u8 libc;
	__u8 named; /* a symbol, a JIT's or a Python frame's name, not module+offset */
	const char *name;
	const char *module; /* the mapped file's base name; NULL: none known */
	const char *path;   /* its path, a Python frame's source file; NULL: none known */
};

/* A file some process mapped: its inode and path (interned), for names__file. */
struct name_file {
	__u32 tgid;
	__u64 ino;
	const char *path;
};

struct names {
	struct strtab *strs;
	struct symbolizer *sym;
	struct ksym *ksyms;
	size_t nksyms, capksyms;
	bool ksyms_sorted;
	struct cache_ent *cache;
	bool file_symbols;
	struct perfmaps *perfmaps; /* generated code's names, not owned; NULL: none */
	struct pyframes *py;	   /* Python frames' names, not owned; NULL: none */
	const char **own;	   /* names__set_own(): interned */
	size_t nown;
	struct name_file *files; /* mapped files by inode (names__file) */
	size_t nfiles, capfiles;
};

struct names *names__new(struct strtab *strs, bool file_symbols, const char *debug_dir)
{
	struct symbolizer_opts o = { .debug_dir = debug_dir };
	struct names *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->strs = strs;
	n->file_symbols = file_symbols;
	n->sym = symbolizer__new(&o);
	n->cache = calloc(CACHE_SIZE, sizeof(*n->cache));
	if (!n->sym || !n->cache) {
		names__free(n);
		return NULL;
	}
	return n;
}

void names__set_pyframes(struct names *n, struct pyframes *p)
{
	n->py = p;
}

int names__set_own(struct names *n, const char *const *paths, size_t count)
{
	const char **own = count ? calloc(count, sizeof(*own)) : NULL;

	if (count && !own)
		return -ENOMEM;
	for (size_t i = 0; i < count; i++)
		if (!(own[i] = strtab__intern(n->strs, paths[i]))) {
			free(own);
			return -ENOMEM;
		}
	free(n->own);
	n->own = own;
	n->nown = count;
	return 0;
}

const char *const *names__own(const struct names *n, size_t *count)
{
	*count = n->nown;
	return n->own;
}

void names__set_perfmaps(struct names *n, struct perfmaps *p)
{
	n->perfmaps = p;
}

static const char *archived_file(void *ctx, const __u8 *bid, __u32 len)
{
	return report_archive__file(ctx, bid, len);
}

static void archived_used(void *ctx, const char *file)
{
	report_archive__used(ctx, file);
}

void names__set_archive(struct names *n, struct report_archive *a)
{
	struct sym_fallback f = { archived_file, archived_used, a };

	symbolizer__set_fallback(n->sym, &f);
}

void names__release_pages(struct names *n)
{
	if (n)
		symbolizer__release_pages(n->sym);
}

struct elfcache *names__files(struct names *n)
{
	return n && n->sym ? symbolizer__files(n->sym) : NULL;
}

void names__free(struct names *n)
{
	if (!n)
		return;
	symbolizer__free(n->sym);
	free(n->ksyms);
	free(n->own);
	free(n->files);
	free(n->cache);
	free(n);
}

/* A mapped file's path by its inode, once a process and inode (the latest path wins). */
static void add_file(struct names *n, __u32 tgid, __u64 ino, const char *path)
{
	const char *p = strtab__intern(n->strs, path);

	if (!p)
		return;
	for (size_t i = 0; i < n->nfiles; i++)
		if (n->files[i].tgid == tgid && n->files[i].ino == ino) {
			n->files[i].path = p;
			return;
		}
	if (array__grow((void **)&n->files, &n->capfiles, sizeof(*n->files), n->nfiles + 1, 64))
		return;
	n->files[n->nfiles++] = (struct name_file){ tgid, ino, p };
}

const char *names__file(const struct names *n, __u32 tgid, __u64 ino)
{
	const char *any = NULL;

	for (size_t i = 0; ino && i < n->nfiles; i++) {
		if (n->files[i].ino != ino)
			continue;
		if (n->files[i].tgid == tgid)
			return n->files[i].path;
		any = n->files[i].path;
	}
	return any;
}

void names__add_map(struct names *n, const struct gs_rec_map *m)
{
	size_t fixed = gs_fixed_size(&m->h);
	char path[4096];
	size_t len;
	struct sym_map sm = {
		.start = m->start,
		.end = m->end,
		.pgoff = m->pgoff,
		.path = path,
		.build_id = m->build_id,
		.build_id_len = m->build_id_len <= sizeof(m->build_id) ? m->build_id_len : 0,
	};

	if (fixed <= sizeof(*m))
		return;
	len = strnlen(m->path, fixed - sizeof(*m));
	if (!len || len >= sizeof(path))
		return;
	memcpy(path, m->path, len);
	path[len] = 0;
	if (m->ino)
		add_file(n, m->h.tgid, m->ino, path);
	if (!n->file_symbols)
		return;
	symbolizer__add_map(n->sym, m->h.tgid, &sm);
	memset(n->cache, 0, CACHE_SIZE * sizeof(*n->cache));
}

void names__add_ksym(struct names *n, __u64 addr, const char *name)
{
	if (array__grow((void **)&n->ksyms, &n->capksyms, sizeof(*n->ksyms), n->nksyms + 1, 256))
		return;
	n->ksyms[n->nksyms].addr = addr;
	n->ksyms[n->nksyms].name = strtab__intern(n->strs, name);
	n->nksyms++;
	n->ksyms_sorted = false;
}

static const char *file_state(enum sym_file_state st);

static struct cache_ent *cache_slot(struct names *n, __u32 tgid, __u64 addr, __u8 kind)
{
	size_t h = ((addr * 0x9e3779b97f4a7c15ull) ^ tgid ^ ((__u64)kind << 7)) >> 50;

	return &n->cache[h & (CACHE_SIZE - 1)];
}

static bool is_libc_module(const char *m)
{
	return m && (!strncmp(m, "libc.so", 7) || !strncmp(m, "libc-", 5) ||
		     !strncmp(m, "libpthread", 10) || !strncmp(m, "ld-linux", 8));
}

static const char *resolve(struct names *n, __u32 tgid, __u64 addr, bool leaf, bool *libc,
			   bool *named, const char **module)
{
	struct sym_frame f[8];
	const char *jit;
	__u64 off;
	int k;

	*libc = false;
	*named = true;
	*module = NULL;
	if (pyframes__is(addr))
		return pyframes__name(n->py, addr); /* a Python frame (pyframes.h) */
	/*
	 * A JIT's perf map first: it names code it wrote where a file the trace saw mapped may have
	 * been before (the dynamic loader's ld.so.cache, unmapped, its range reused).
	 */
	jit = perfmaps__find(n->perfmaps, tgid, leaf ? addr : addr - 1, &off);
	if (jit)
		return strtab__intern(n->strs, jit);
	k = symbolizer__resolve(n->sym, tgid, leaf ? addr : addr - 1, f, 8);
	if (k <= 0) {
		*named = false;
		return strtab__internf(n->strs, "[unknown] 0x%llx", (unsigned long long)addr);
	}
	*libc = is_libc_module(f[k - 1].module);
	*module = f[k - 1].module ? strtab__intern(n->strs, f[k - 1].module) : NULL;
	/* The function that holds the code: the outermost of the inlined frames. */
	if (f[k - 1].function)
		return strtab__intern(n->strs, f[k - 1].function);
	*named = false;
	return strtab__internf(n->strs, "%s+0x%llx", f[k - 1].module ? f[k - 1].module : "?",
			       (unsigned long long)f[k - 1].offset);
}

static const struct cache_ent *user_frame(struct names *n, __u32 tgid, __u64 addr, bool leaf)
{
	struct cache_ent *c = cache_slot(n, tgid, addr, leaf ? 1 : 2);
	bool libc, named;

	if (c->kind == (leaf ? 1 : 2) && c->addr == addr && c->tgid == tgid)
		return c;
	c->name = resolve(n, tgid, addr, leaf, &libc, &named, &c->module);
	if (pyframes__is(addr))
		c->path = pyframes__file(n->py, addr);
	else
		c->path = c->module ? symbolizer__path(n->sym, tgid, leaf ? addr : addr - 1) : NULL;
	if (c->path)
		c->path = strtab__intern(n->strs, c->path);
	c->addr = addr;
	c->tgid = tgid;
	c->kind = leaf ? 1 : 2;
	c->libc = libc;
	c->named = named;
	return c;
}

const char *names__user(struct names *n, __u32 tgid, __u64 addr, bool leaf)
{
	return user_frame(n, tgid, addr, leaf)->name;
}

const char *names__user_inlined(struct names *n, __u32 tgid, __u64 addr, unsigned int i,
				const char **line)
{
	struct sym_frame f[8];
	const char *base;
	int k;

	*line = NULL;
	if (pyframes__is(addr))
		return NULL;
	k = symbolizer__resolve(n->sym, tgid, addr - 1, f, 8);
	if (k <= 0 || (int)i >= k || !f[i].function)
		return NULL;
	if (f[i].file && f[i].line) {
		base = strrchr(f[i].file, '/');
		*line = strtab__internf(n->strs, "%s:%d", base ? base + 1 : f[i].file, f[i].line);
	}
	return strtab__intern(n->strs, f[i].function);
}

const char *names__user_module(struct names *n, __u32 tgid, __u64 addr, bool leaf, bool *named)
{
	const struct cache_ent *c = user_frame(n, tgid, addr, leaf);

	*named = c->named;
	return c->module;
}

const char *names__user_path(struct names *n, __u32 tgid, __u64 addr, bool leaf)
{
	return user_frame(n, tgid, addr, leaf)->path;
}

void names__forget(struct names *n, __u32 tgid)
{
	symbolizer__forget(n->sym, tgid);
	for (size_t i = 0; i < CACHE_SIZE; i++)
		if (n->cache[i].tgid == tgid)
			n->cache[i].kind = 0;
}

const char *names__why_unnamed(const struct names *n, const char *module)
{
	struct sym_file_info f;

	for (size_t i = 0; module && symbolizer__file(n->sym, i, &f); i++) {
		const char *base = strrchr(f.path, '/');

		if (strcmp(base ? base + 1 : f.path, module))
			continue;
		if (f.state == SYM_FILE_BUILD_ID_MISMATCH)
			return "another build";
		if (f.state == SYM_FILE_CHANGED)
			return "changed while read";
		if (f.state != SYM_FILE_OK)
			return file_state(f.state);
		return f.source && strcmp(f.source, "dynsym") ? "no symbol covers it" : "stripped";
	}
	return "stripped";
}

bool names__in_libc(struct names *n, __u32 tgid, __u64 addr)
{
	struct cache_ent *c = cache_slot(n, tgid, addr, 3);
	bool libc, named;

	if (c->kind == 3 && c->addr == addr && c->tgid == tgid)
		return c->libc;
	c->name = resolve(n, tgid, addr, false, &libc, &named, &c->module);
	c->addr = addr;
	c->tgid = tgid;
	c->kind = 3;
	c->libc = libc;
	return libc;
}

const char *names__data(struct names *n, __u32 tgid, __u64 addr)
{
	struct cache_ent *c = cache_slot(n, tgid, addr, 4);
	const char *s;

	if (c->kind == 4 && c->addr == addr && c->tgid == tgid)
		return c->name;
	s = symbolizer__data_symbol(n->sym, tgid, addr);
	c->name = s ? strtab__intern(n->strs, s) : NULL;
	c->addr = addr;
	c->tgid = tgid;
	c->kind = 4;
	return c->name;
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

const char *names__kernel(struct names *n, __u64 addr)
{
	size_t lo;

	if (!n->ksyms_sorted && n->nksyms) { /* a trace without kernel symbols has none */
		qsort(n->ksyms, n->nksyms, sizeof(*n->ksyms), cmp_ksym);
		n->ksyms_sorted = true;
	}
	lo = sorted__upper(n->ksyms, n->nksyms, sizeof(*n->ksyms), offsetof(struct ksym, addr),
			   addr);
	if (!lo)
		return strtab__internf(n->strs, "0x%llx_[k]", (unsigned long long)addr);
	return strtab__internf(n->strs, "%s_[k]", n->ksyms[lo - 1].name);
}

static const char *file_state(enum sym_file_state st)
{
	switch (st) {
	case SYM_FILE_OK:
		return "ok";
	case SYM_FILE_MISSING:
		return "missing";
	case SYM_FILE_BUILD_ID_MISMATCH:
		return "build_id_mismatch";
	case SYM_FILE_CHANGED:
		return "changed";
	default:
		return "unreadable";
	}
}

void names__counts(const struct names *n, struct symbol_counts *c)
{
	struct sym_file_info f;

	*c = (struct symbol_counts){ .on = n->file_symbols };
	c->unmapped = symbolizer__stats(n->sym)->unmapped;
	for (size_t i = 0; symbolizer__file(n->sym, i, &f); i++) {
		size_t k;

		c->named += f.named;
		c->unnamed += f.unnamed;
		if (!f.unnamed)
			continue;
		/* Kept most first: insert, the least falling off the end. */
		for (k = c->nfiles; k > 0 && c->files[k - 1].unnamed < f.unnamed; k--)
			;
		if (c->nfiles == SYMBOL_FILES_MAX) {
			c->more_files++;
			if (k == SYMBOL_FILES_MAX)
				continue;
			c->nfiles--;
		}
		memmove(&c->files[k + 1], &c->files[k], (c->nfiles - k) * sizeof(c->files[0]));
		c->files[k].path = f.path;
		c->files[k].state = file_state(f.state);
		c->files[k].source = f.source;
		c->files[k].unnamed = f.unnamed;
		c->nfiles++;
	}
}
