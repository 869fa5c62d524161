// SPDX-License-Identifier: GPL-2.0
/*
 * Symbols with libdwfl (see symbols.h). A file mapped by several processes (libc by all) is one
 * module, in a Dwfl of its own at bias 0: read once, and cached by (module, ELF address).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "demangle.h"
#include "dwscopes.h"
#include "symbols.h"

#define SYM_BUILD_ID_MAX 64
#define SYM_MAX_FRAMES	 16 /* inline depth kept per address; deeper chains are cut */
#define SYM_MAX_LOADS	 8  /* PT_LOAD headers kept: files have 2 to 5 */
#define SYM_DEBUG_ROOT	 "/usr/lib/debug"
#define SYM_DATA_KEY	 (1ULL << 63) /* in a cache key: a data-symbol answer */
#define SYM_CACHE_SIZE	 (1u << 18)   /* entries; emptied when half full */

struct sym_sym {
	__u64 addr, size;
	const char *name; /* libdwfl's, or a copy without "@VERSION" (owned) */
	int rank;	  /* of the names at one address the lowest is shown */
	bool data, owned;
};

struct sym_load {
	__u64 offset, filesz, vaddr;
};

struct sym_module {
	char *path;
	const char *base; /* in path */
	__u8 build_id[SYM_BUILD_ID_MAX];
	__u32 build_id_len;
	enum sym_file_state state;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct sym_sym *syms; /* sorted by address */
	size_t nsyms;
	struct sym_load loads[SYM_MAX_LOADS];
	int nloads;
	__u64 vaddr_end; /* end of the highest PT_LOAD in memory (.bss included) */
};

struct sym_vma {
	__u32 tgid, module;
	__u64 start, end, pgoff;
	__u64 bias; /* run-time minus ELF address, once biased */
	bool biased;
};

/* A cached answer: frames[first .. first + n) of the arena; module 0 marks an empty slot. */
struct sym_cache_ent {
	__u64 key;    /* ELF address, | SYM_DATA_KEY for data symbols */
	__u32 module; /* module index + 1 */
	__u32 n;
	__u32 first;
};

struct symbolizer {
	char *debug_dir;	       /* --debug-dir, absolute */
	char debuginfo[PATH_MAX + 64]; /* libdwfl's search path */
	char *debuginfo_path;	       /* = debuginfo, for callbacks.debuginfo_path */
	Dwfl_Callbacks callbacks;
	struct sym_module *mods;
	size_t nmods, capmods;
	struct sym_vma *vmas; /* sorted by tgid, then start; a process's do not overlap */
	size_t nvmas, capvmas;
	struct sym_cache_ent *cache;
	size_t cache_used;
	struct sym_frame *frames; /* the cache's arena */
	size_t nframes, capframes;
	struct symbolizer_stats stats;
	struct demangler *dm; /* C++ and Rust names */
	struct sym_fallback fallback;
};

/* Room for need elements: callers never ask for more than SYM_MAX_FRAMES beyond what they have. */
static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t cap2 = *cap ? *cap * 2 : 64;
	void *n;

	if (need <= *cap)
		return 0;
	n = realloc(*p, cap2 * size);
	if (!n)
		return -ENOMEM;
	*p = n;
	*cap = cap2;
	return 0;
}

struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (s) {
		s->cache = calloc(SYM_CACHE_SIZE, sizeof(*s->cache));
		s->dm = demangler__new();
	}
	if (!s || !s->cache || !s->dm) {
		symbolizer__free(s);
		return NULL;
	}
	/*
	 * "": next to the file (.gnu_debuglink); ".debug": its .debug/; an absolute folder:
	 * .build-id/xx/rest.debug, then the file's path, there. A relative one would be taken as
	 * a folder next to each file, and a colon would split one.
	 */
	if (opts && opts->debug_dir && !strchr(opts->debug_dir, ':'))
		s->debug_dir = realpath(opts->debug_dir, NULL);
	snprintf(s->debuginfo, sizeof(s->debuginfo), ":.debug:%s%s" SYM_DEBUG_ROOT,
		 s->debug_dir ?: "", s->debug_dir ? ":" : "");
	s->debuginfo_path = s->debuginfo;
	s->callbacks = (Dwfl_Callbacks){
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &s->debuginfo_path,
	};
	return s;
}

void symbolizer__set_fallback(struct symbolizer *s, const struct sym_fallback *f)
{
	s->fallback = *f;
}

/* The module of a path and build-id; from the last added: a trace lists a file's maps together. */
static int module_get(struct symbolizer *s, const struct sym_map *m, __u32 *idx)
{
	__u32 blen = m->build_id ? m->build_id_len : 0;
	struct sym_module *mod;

	if (blen > SYM_BUILD_ID_MAX)
		blen = SYM_BUILD_ID_MAX;
	for (size_t i = s->nmods; i-- > 0;) {
		mod = &s->mods[i];
		if (mod->build_id_len == blen && !strcmp(mod->path, m->path) &&
		    (!blen || !memcmp(mod->build_id, m->build_id, blen))) {
			*idx = i;
			return 0;
		}
	}
	if (grow((void **)&s->mods, &s->capmods, s->nmods + 1, sizeof(*s->mods)))
		return -ENOMEM;
	mod = &s->mods[s->nmods];
	*mod = (struct sym_module){ .path = strdup(m->path), .build_id_len = blen };
	if (!mod->path)
		return -ENOMEM;
	mod->base = strrchr(mod->path, '/') ? strrchr(mod->path, '/') + 1 : mod->path;
	if (blen)
		memcpy(mod->build_id, m->build_id, blen);
	*idx = s->nmods++;
	return 0;
}

/* The first vma past (tgid, addr): of a later process, or of tgid and ending above addr. */
static size_t vma_upper(const struct symbolizer *s, __u32 tgid, __u64 addr)
{
	size_t lo = 0, hi = s->nvmas;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct sym_vma *v = &s->vmas[mid];

		if (v->tgid < tgid || (v->tgid == tgid && v->end <= addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int symbolizer__add_map(struct symbolizer *s, __u32 tgid, const struct sym_map *m)
{
	size_t i, j;
	__u32 idx;

	if (!m || !m->path || m->end <= m->start)
		return -EINVAL;
	if (module_get(s, m, &idx) ||
	    grow((void **)&s->vmas, &s->capvmas, s->nvmas + 1, sizeof(*s->vmas)))
		return -ENOMEM;
	i = vma_upper(s, tgid, m->start);
	for (j = i; j < s->nvmas && s->vmas[j].tgid == tgid && s->vmas[j].start < m->end; j++)
		;
	/* vmas[i, j) overlap the new one: it replaces them (munmap and mmap, or exec). */
	memmove(&s->vmas[i + 1], &s->vmas[j], (s->nvmas - j) * sizeof(*s->vmas));
	s->nvmas = s->nvmas - (j - i) + 1;
	s->vmas[i] = (struct sym_vma){ tgid, idx, m->start, m->end, m->pgoff, 0, false };
	return 0;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct sym_sym *x = a, *y = b;

	return x->addr != y->addr ? (x->addr < y->addr ? -1 : 1) : x->rank - y->rank;
}

/*
 * The module's sized function and object symbols by address: dwfl_module_addrinfo scans the
 * whole table at every lookup, milliseconds a lookup in a library of 10^5 symbols. Of aliases,
 * the one a user calls: fewest leading '_', no old version (name@V, not name@@V), global before
 * weak before local, the shortest (malloc, not __libc_malloc; __lll_lock_wait, not __GI_...).
 */
static int module_index(struct sym_module *mod, Dwfl_Module *dm)
{
	int n = dwfl_module_getsymtab(dm);

	mod->syms = calloc(n > 0 ? n : 1, sizeof(*mod->syms));
	if (!mod->syms)
		return -ENOMEM;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(dm, i, &sym, &addr, NULL, NULL, NULL);
		const char *at = name ? strchr(name, '@') : NULL;
		int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
		struct sym_sym *y = &mod->syms[mod->nsyms];

		if (!name || !*name || !sym.st_size || sym.st_shndx == SHN_UNDEF ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_OBJECT))
			continue;
		*y = (struct sym_sym){ addr, sym.st_size, name, 0, type == STT_OBJECT, at != NULL };
		int weak = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
		y->rank = (int)(strspn(name, "_") & 63) << 24 | (at && at[1] != '@') << 22 |
			  weak << 20 | (int)(at ? at - name : (long)strnlen(name, 65535));
		if (at)
			y->name = strndup(name, at - name);
		if (!y->name)
			return -ENOMEM;
		mod->nsyms++;
	}
	qsort(mod->syms, mod->nsyms, sizeof(*mod->syms), sym_cmp);
	return 0;
}

/* The best named symbol of the kind asked for whose extent holds vaddr, or NULL. */
static const char *module_symbol(const struct sym_module *mod, __u64 vaddr, bool data)
{
	const struct sym_sym *syms = mod->syms, *best = NULL;
	size_t lo = 0, hi = mod->nsyms;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Back from the last at or below vaddr: the highest start that holds it, best rank. */
	for (size_t i = lo; i-- > 0 && lo - i <= 32 && (!best || syms[i].addr == best->addr);) {
		const struct sym_sym *y = &syms[i];

		if (y->data == data && vaddr - y->addr < y->size)
			best = y;
	}
	return best ? best->name : NULL;
}

/*
 * Reports file as the only module of a Dwfl of its own, checks its build-id against the one
 * recorded, keeps its PT_LOAD headers and indexes its symbols. 0, -ENOENT (no such file), -ESTALE
 * (another build), -EINVAL (not a regular ELF file) or -ENOMEM.
 */
static int module_report(struct symbolizer *s, struct sym_module *mod, const char *file)
{
	int err = -EINVAL, len;
	const unsigned char *bits;
	GElf_Addr bias, vaddr;
	Dwfl_Module *dm;
	struct stat st;
	size_t phnum;
	Dwfl *dwfl;
	Elf *elf;

	if (file[0] != '[' && stat(file, &st))
		return -ENOENT;
	if (file[0] == '[' || !S_ISREG(st.st_mode)) /* [vdso]; a device or FIFO can block */
		return -EINVAL;
	dwfl = dwfl_begin(&s->callbacks);
	if (!dwfl)
		return -ENOMEM;
	dwfl_report_begin(dwfl);
	/* At bias 0 with p_vaddr added: module addresses are the file's ELF addresses. */
	dm = dwfl_report_elf(dwfl, mod->base, file, -1, 0, true);
	dwfl_report_end(dwfl, NULL, NULL);
	if (!dm)
		goto fail;
	err = -ESTALE;
	len = dwfl_module_build_id(dm, &bits, &vaddr);
	if (mod->build_id_len &&
	    (len != (int)mod->build_id_len || memcmp(bits, mod->build_id, len)))
		goto fail;
	err = -EINVAL;
	elf = dwfl_module_getelf(dm, &bias);
	if (!elf || elf_getphdrnum(elf, &phnum))
		goto fail;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (mod->nloads < SYM_MAX_LOADS)
			mod->loads[mod->nloads++] = (struct sym_load){ ph.p_offset, ph.p_filesz,
								       ph.p_vaddr };
		if (ph.p_vaddr + ph.p_memsz > mod->vaddr_end)
			mod->vaddr_end = ph.p_vaddr + ph.p_memsz;
	}
	err = mod->nloads ? module_index(mod, dm) : -EINVAL;
	if (err)
		goto fail; /* the symbols indexed so far stay for symbolizer__free() */
	mod->dwfl = dwfl;
	mod->mod = dm;
	return 0;
fail:
	dwfl_end(dwfl);
	return err;
}

/*
 * Opens the file of mod on its first address. Where the file recorded is gone or another build,
 * a file named by the build-id under --debug-dir or /usr/lib/debug stands in: the binary itself
 * (.build-id/xx/rest), or its debug file (rest.debug), with the same program headers and symbols.
 */
static void module_open(struct symbolizer *s, struct sym_module *mod)
{
	const char *roots[] = { s->debug_dir, SYM_DEBUG_ROOT };
	char file[PATH_MAX], hex[2 * SYM_BUILD_ID_MAX + 1];
	size_t len;
	int err;

	/* /proc/PID/maps marks a file unlinked while mapped; the name is still worth a try. */
	len = snprintf(file, sizeof(file), "%s", mod->path);
	if (len > 10 && len < sizeof(file) && !strcmp(file + len - 10, " (deleted)"))
		file[len - 10] = '\0';
	err = module_report(s, mod, file);
	s->stats.build_id_mismatch += err == -ESTALE;
	s->stats.missing_files += err == -ENOENT;
	if (err && err != -ENOMEM && s->fallback.file) {
		const char *kept = s->fallback.file(s->fallback.ctx, mod->build_id,
						    mod->build_id_len);

		if (kept && !module_report(s, mod, kept)) {
			err = 0;
			s->fallback.used(s->fallback.ctx, kept);
		}
	}
	for (__u32 i = 0; i < mod->build_id_len; i++)
		sprintf(hex + 2 * i, "%02x", mod->build_id[i]);
	for (int i = 0; err && err != -ENOMEM && mod->build_id_len >= 2 && i < 4; i++) {
		snprintf(file, sizeof(file), "%s/.build-id/%.2s/%s%s", roots[i / 2], hex, hex + 2,
			 i % 2 ? ".debug" : "");
		if (roots[i / 2] && !module_report(s, mod, file))
			err = 0;
	}
	mod->state = err == -ESTALE ? SYM_FILE_BUILD_ID_MISMATCH : SYM_FILE_BAD;
	if (!err || err == -ENOENT)
		mod->state = !err ? SYM_FILE_OK : SYM_FILE_MISSING;
}

/*
 * The load bias of v's file. Two segments can share a file page (read-only data and RELRO), so a
 * mapping's file offset can name the wrong segment; the file's lowest mapping cannot: it maps the
 * first PT_LOAD, the ELF header's. So also for a debug file standing in for the binary, whose
 * PT_LOAD offsets are not the binary's (the first starts at 0 in both).
 */
static __u64 vma_bias(struct symbolizer *s, struct sym_vma *v)
{
	const struct sym_module *mod = &s->mods[v->module];
	const struct sym_vma *low = NULL;
	const struct sym_load *l;
	int k;

	if (v->biased)
		return v->bias;
	for (size_t i = 0; i < s->nvmas; i++) /* by start: the first of the least offset */
		if (s->vmas[i].tgid == v->tgid && s->vmas[i].module == v->module &&
		    (!low || s->vmas[i].pgoff < low->pgoff))
			low = &s->vmas[i];
	for (k = 0; k < mod->nloads; k++)
		if ((mod->loads[k].offset & ~4095ULL) <= low->pgoff &&
		    low->pgoff < mod->loads[k].offset + mod->loads[k].filesz)
			break;
	l = &mod->loads[k < mod->nloads ? k : 0];
	v->bias = low->start - low->pgoff + l->offset - l->vaddr;
	v->biased = true;
	return v->bias;
}

/*
 * The module (or -1) and ELF address of a run-time address of tgid: in a mapping, or (data only)
 * in the zero-filled pages past a file's last mapping (.bss). Opens the module's file at first.
 */
static int addr_locate(struct symbolizer *s, __u32 tgid, __u64 addr, bool data, __u64 *vaddr)
{
	size_t i = vma_upper(s, tgid, addr);
	bool inside = i < s->nvmas && s->vmas[i].tgid == tgid && s->vmas[i].start <= addr;
	struct sym_module *mod;
	struct sym_vma *v;

	if (!inside && (!data || i == 0 || s->vmas[i - 1].tgid != tgid))
		return -1;
	v = inside ? &s->vmas[i] : &s->vmas[i - 1];
	mod = &s->mods[v->module];
	if (mod->state == SYM_FILE_UNOPENED)
		module_open(s, mod);
	if (mod->state != SYM_FILE_OK) {
		*vaddr = addr - v->start + v->pgoff; /* a file offset is all we know */
		return inside ? (int)v->module : -1;
	}
	*vaddr = addr - vma_bias(s, v);
	return inside || *vaddr < mod->vaddr_end ? (int)v->module : -1;
}

/* Frames for an ELF address of an opened module, innermost first; the count. */
static int module_frames(struct symbolizer *s, struct sym_module *mod, __u64 vaddr,
			 struct sym_frame *f)
{
	const char *sym = demangler__name(s->dm, module_symbol(mod, vaddr, false)), *file = NULL;
	Dwarf_Die *cu, scopes[SYM_MAX_FRAMES * 2];
	int line = 0, n = 0, nscopes = 0;
	Dwarf_Addr bias;
	Dwfl_Line *l;

	l = dwfl_module_getsrc(mod->mod, vaddr);
	if (l)
		file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
	cu = dwfl_module_addrdie(mod->mod, vaddr, &bias);
	if (cu)
		nscopes = dwscopes__at(cu, vaddr - bias, scopes, SYM_MAX_FRAMES * 2);
	for (int i = nscopes - 1; i >= 0 && n < SYM_MAX_FRAMES - 1; i--) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_subprogram) {
			/* The linker's name (foo.cold, foo.constprop.0) unless it has none. */
			if (!sym)
				sym = dwscopes__name(&scopes[i], s->dm);
			break;
		}
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		f[n++] = (struct sym_frame){ dwscopes__name(&scopes[i], s->dm),
					     file,
					     file ? line : 0,
					     true,
					     mod->base,
					     vaddr };
		/* The next frame out is at the call site of this inlined call. */
		file = dwscopes__call_site(cu, &scopes[i], &line);
	}
	f[n++] = (struct sym_frame){ sym, file, file ? line : 0, false, mod->base, vaddr };
	return n;
}

/* The cached answer for (module, key), computed on a miss; NULL when out of memory. */
static struct sym_cache_ent *cache_get(struct symbolizer *s, int module, __u64 key)
{
	struct sym_module *mod = &s->mods[module];
	struct sym_frame f[SYM_MAX_FRAMES];
	struct sym_cache_ent *e;
	size_t h;
	int n = 1;

	h = (size_t)((key ^ ((__u64)module << 40)) * 0x9e3779b97f4a7c15ULL >> 20);
	for (h &= SYM_CACHE_SIZE - 1; s->cache[h].module; h = (h + 1) & (SYM_CACHE_SIZE - 1))
		if (s->cache[h].module == (__u32)module + 1 && s->cache[h].key == key)
			return &s->cache[h];
	/* Full enough to slow down: start over (the strings stay valid, frames were copied). */
	if (s->cache_used >= SYM_CACHE_SIZE / 2) {
		memset(s->cache, 0, SYM_CACHE_SIZE * sizeof(*s->cache));
		s->cache_used = s->nframes = 0;
		return cache_get(s, module, key);
	}
	e = &s->cache[h];
	f[0] = (struct sym_frame){ .module = mod->base, .offset = key }; /* unread */
	if (key & SYM_DATA_KEY) {
		bool ok = mod->state == SYM_FILE_OK;
		f[0].function = ok ? module_symbol(mod, key & ~SYM_DATA_KEY, true) : NULL;
		f[0].function = demangler__name(s->dm, f[0].function);
		n = f[0].function ? 1 : 0;
	} else if (mod->state == SYM_FILE_OK) {
		n = module_frames(s, mod, key, f);
	}
	if (grow((void **)&s->frames, &s->capframes, s->nframes + n, sizeof(*s->frames)))
		return NULL;
	memcpy(&s->frames[s->nframes], f, n * sizeof(*f));
	*e = (struct sym_cache_ent){ key, module + 1, n, s->nframes };
	s->nframes += n;
	s->cache_used++;
	return e;
}

int symbolizer__resolve(struct symbolizer *s, __u32 tgid, __u64 addr, struct sym_frame *out,
			int max)
{
	struct sym_cache_ent *e = NULL;
	const struct sym_frame *f;
	int module, n;
	__u64 vaddr;

	if (max <= 0)
		return 0;
	module = addr_locate(s, tgid, addr, false, &vaddr);
	if (module >= 0)
		e = cache_get(s, module, vaddr & ~SYM_DATA_KEY);
	if (!e) {
		s->stats.unresolved++;
		return 0;
	}
	f = &s->frames[e->first];
	n = (int)e->n < max ? (int)e->n : max;
	memcpy(out, f, n * sizeof(*out));
	/* Cut short, the last frame written still names the function that holds the code. */
	out[n - 1] = f[e->n - 1];
	s->stats.resolved += f[e->n - 1].function != NULL;
	s->stats.unresolved += !f[e->n - 1].function;
	return n;
}

const char *symbolizer__data_symbol(struct symbolizer *s, __u32 tgid, __u64 addr)
{
	__u64 vaddr;
	int module = addr_locate(s, tgid, addr, true, &vaddr);
	struct sym_cache_ent *e = module >= 0 ? cache_get(s, module, vaddr | SYM_DATA_KEY) : NULL;

	return e && e->n ? s->frames[e->first].function : NULL;
}

const struct symbolizer_stats *symbolizer__stats(const struct symbolizer *s)
{
	return &s->stats;
}

bool symbolizer__file(const struct symbolizer *s, size_t i, struct sym_file_info *f)
{
	if (i >= s->nmods)
		return false;
	*f = (struct sym_file_info){ s->mods[i].path, NULL, s->mods[i].state };
	if (s->mods[i].mod)
		dwfl_module_info(s->mods[i].mod, NULL, NULL, NULL, NULL, NULL, NULL,
				 &f->debug_path);
	return true;
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nmods; i++) {
		struct sym_module *mod = &s->mods[i];

		for (size_t k = 0; k < mod->nsyms; k++)
			if (mod->syms[k].owned)
				free((char *)mod->syms[k].name);
		free(mod->syms);
		dwfl_end(mod->dwfl);
		free(mod->path);
	}
	free(s->mods);
	free(s->vmas);
	free(s->cache);
	free(s->frames);
	free(s->debug_dir);
	demangler__free(s->dm);
	free(s);
}
