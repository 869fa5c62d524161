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
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "symbols.h"

#define SYM_BUILD_ID_MAX 64
#define SYM_MAX_FRAMES	 16	/* inline depth kept per address; deeper chains are cut */
#define SYM_MAX_LOADS	 8	/* PT_LOAD headers kept: files have 2 to 5 */
#define SYM_DEBUG_ROOT	 "/usr/lib/debug"
#define SYM_DATA_KEY	 (1ULL << 63)	/* in a cache key: a data-symbol answer */

struct sym_load {
	__u64 offset, filesz, vaddr;
};

struct sym_module {
	char *path;
	const char *base;	/* in path */
	__u8 build_id[SYM_BUILD_ID_MAX];
	__u32 build_id_len;
	enum sym_file_state state;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct sym_load loads[SYM_MAX_LOADS];
	int nloads;
	__u64 vaddr_end;	/* end of the highest PT_LOAD in memory (.bss included) */
};

struct sym_vma {
	__u64 start, end, pgoff;
	__u64 bias;		/* run-time minus ELF address, once biased */
	__u32 module;
	bool biased;
};

struct sym_proc {
	__u32 tgid;
	struct sym_vma *vmas;	/* sorted by start, not overlapping */
	size_t n, cap;
};

/* A cached answer: frames[first .. first + n) of the arena; module 0 marks an empty slot. */
struct sym_cache_ent {
	__u64 key;		/* ELF address, | SYM_DATA_KEY for data symbols */
	__u32 module;		/* module index + 1 */
	__u32 n;
	__u32 first;
};

struct symbolizer {
	char *debug_dir;	/* --debug-dir, absolute */
	char debuginfo[PATH_MAX + 64];	/* libdwfl's search path */
	char *debuginfo_path;	/* = debuginfo, for callbacks.debuginfo_path */
	Dwfl_Callbacks callbacks;
	struct sym_module *mods;
	size_t nmods, capmods;
	struct sym_proc *procs;
	size_t nprocs, capprocs;
	struct sym_cache_ent *cache;
	size_t cache_cap, cache_used;	/* cap: a power of two */
	struct sym_frame *frames;	/* the cache's arena */
	size_t nframes, capframes;
	struct symbolizer_stats stats;
};

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t cap2 = *cap ? *cap : 16;
	void *n;

	if (need <= *cap)
		return 0;
	while (cap2 < need)
		cap2 *= 2;
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

	if (!s)
		return NULL;
	/*
	 * Elements: "" next to the file (.gnu_debuglink); ".debug" its .debug/; an absolute one:
	 * .build-id/xx/rest.debug there, then the file's path below it. A relative --debug-dir
	 * would be read as a folder next to each file, and a colon would split it.
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

/* A trace has a few processes: a linear search. */
static struct sym_proc *proc_find(struct symbolizer *s, __u32 tgid)
{
	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].tgid == tgid)
			return &s->procs[i];
	return NULL;
}

/* The first vma of p that ends above addr (p->n when none). */
static size_t vma_upper(const struct sym_proc *p, __u64 addr)
{
	size_t lo = 0, hi = p->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (p->vmas[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int symbolizer__add_map(struct symbolizer *s, __u32 tgid, const struct sym_map *m)
{
	struct sym_proc *p;
	size_t i, j;
	__u32 idx;

	if (!m || !m->path || m->end <= m->start)
		return -EINVAL;
	if (module_get(s, m, &idx))
		return -ENOMEM;
	p = proc_find(s, tgid);
	if (!p) {
		if (grow((void **)&s->procs, &s->capprocs, s->nprocs + 1, sizeof(*s->procs)))
			return -ENOMEM;
		p = &s->procs[s->nprocs++];
		*p = (struct sym_proc){ .tgid = tgid };
	}
	if (grow((void **)&p->vmas, &p->cap, p->n + 1, sizeof(*p->vmas)))
		return -ENOMEM;
	i = vma_upper(p, m->start);
	for (j = i; j < p->n && p->vmas[j].start < m->end; j++)
		;
	/* vmas[i, j) overlap the new one: it replaces them. */
	memmove(&p->vmas[i + 1], &p->vmas[j], (p->n - j) * sizeof(*p->vmas));
	p->n = p->n - (j - i) + 1;
	p->vmas[i] = (struct sym_vma){ .start = m->start, .end = m->end, .pgoff = m->pgoff,
				     .module = idx };
	return 0;
}

/* This kernel's vDSO image, in a memfd libdwfl can read as a file; -1 when there is none. */
static int vdso_fd(void)
{
	const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	size_t size;
	int fd;

	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return -1;
	size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;	/* section headers last */
	fd = memfd_create("vdso", MFD_CLOEXEC);
	if (fd >= 0 && write(fd, eh, size) != (ssize_t)size) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * Reports file (or the vDSO) as the only module of a Dwfl of its own, checks its build-id against
 * the one recorded, and keeps its PT_LOAD headers. 0, -ENOENT (no such file), -ESTALE (another
 * build), -EINVAL (not ELF) or -ENOMEM.
 */
static int module_report(struct symbolizer *s, struct sym_module *mod, const char *file)
{
	int fd = -1, err = -EINVAL, len;
	const unsigned char *bits;
	GElf_Addr bias, vaddr;
	Dwfl_Module *dm;
	struct stat st;
	size_t phnum;
	Dwfl *dwfl;
	Elf *elf;

	if (strcmp(file, "[vdso]") && stat(file, &st))
		return -ENOENT;
	/* Not a device or FIFO a process had mapped: opening one can block, or act. */
	if (strcmp(file, "[vdso]") ? !S_ISREG(st.st_mode) : (fd = vdso_fd()) < 0)
		return -EINVAL;
	dwfl = dwfl_begin(&s->callbacks);
	if (!dwfl) {
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	dwfl_report_begin(dwfl);
	/* At bias 0 with p_vaddr added: module addresses are the file's ELF addresses. */
	dm = dwfl_report_elf(dwfl, mod->base, file, fd, 0, true);
	dwfl_report_end(dwfl, NULL, NULL);
	if (!dm && fd >= 0)
		close(fd);	/* a descriptor passed in is ours on failure, libdwfl's after */
	if (!dm)
		goto fail;
	len = dwfl_module_build_id(dm, &bits, &vaddr);
	err = -ESTALE;
	if (mod->build_id_len &&
	    (len != (int)mod->build_id_len || memcmp(bits, mod->build_id, len)))
		goto fail;
	err = -EINVAL;
	elf = dwfl_module_getelf(dm, &bias);
	if (!elf || elf_getphdrnum(elf, &phnum))
		goto fail;
	mod->nloads = 0;
	mod->vaddr_end = 0;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (mod->nloads < SYM_MAX_LOADS)
			mod->loads[mod->nloads++] =
				(struct sym_load){ ph.p_offset, ph.p_filesz, ph.p_vaddr };
		if (ph.p_vaddr + ph.p_memsz > mod->vaddr_end)
			mod->vaddr_end = ph.p_vaddr + ph.p_memsz;
	}
	if (!mod->nloads)
		goto fail;
	mod->dwfl = dwfl;
	mod->mod = dm;
	return 0;
fail:
	dwfl_end(dwfl);
	return err;
}

/*
 * Where the recorded file is gone or is another build: a file named by the build-id under the
 * debug roots, the binary itself (.build-id/xx/rest) or its debug file (rest.debug), which has
 * the same program headers and the symbols.
 */
static int module_report_by_build_id(struct symbolizer *s, struct sym_module *mod)
{
	const char *roots[] = { s->debug_dir, SYM_DEBUG_ROOT };
	char hex[2 * SYM_BUILD_ID_MAX + 1], file[PATH_MAX];

	if (mod->build_id_len < 2)
		return -ENOENT;
	for (__u32 i = 0; i < mod->build_id_len; i++)
		sprintf(hex + 2 * i, "%02x", mod->build_id[i]);
	for (int i = 0; i < 4; i++) {
		if (!roots[i / 2])
			continue;
		snprintf(file, sizeof(file), "%s/.build-id/%.2s/%s%s", roots[i / 2], hex, hex + 2,
			 i % 2 ? ".debug" : "");
		if (!module_report(s, mod, file))
			return 0;
	}
	return -ENOENT;
}

static void module_open(struct symbolizer *s, struct sym_module *mod)
{
	char file[PATH_MAX];
	size_t len;
	int err;

	/* /proc/PID/maps marks a file unlinked while mapped; the name is still worth a try. */
	len = snprintf(file, sizeof(file), "%s", mod->path);
	if (len > 10 && len < sizeof(file) && !strcmp(file + len - 10, " (deleted)"))
		file[len - 10] = '\0';
	err = module_report(s, mod, file);
	if (err == -ESTALE)
		s->stats.build_id_mismatch++;
	else if (err == -ENOENT)
		s->stats.missing_files++;
	if (!err || (err != -ENOMEM && !module_report_by_build_id(s, mod)))
		mod->state = SYM_FILE_OK;
	else
		mod->state = err == -ESTALE ? SYM_FILE_BUILD_ID_MISMATCH :
			     err == -ENOENT ? SYM_FILE_MISSING : SYM_FILE_BAD;
}

/*
 * The load bias of v's file in p. Two segments can share a file page (read-only data and RELRO),
 * so a mapping's file offset can name the wrong segment; the file's lowest mapping cannot: it maps
 * the first PT_LOAD, the ELF header's. So also for a debug file standing in for the binary, whose
 * PT_LOAD offsets are not the binary's (the first starts at 0 in both).
 */
static __u64 vma_bias(const struct sym_module *mod, struct sym_proc *p, struct sym_vma *v)
{
	const struct sym_vma *low = NULL;
	const struct sym_load *l;
	int k;

	if (v->biased)
		return v->bias;
	for (size_t i = 0; i < p->n; i++)	/* by start: the first of the least offset */
		if (p->vmas[i].module == v->module && (!low || p->vmas[i].pgoff < low->pgoff))
			low = &p->vmas[i];
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
 * The module and ELF address of a run-time address of p: in a mapping, or (data only) in the
 * zero-filled pages a file's last PT_LOAD gets past its mapping, i.e. .bss. Returns the module
 * index or -1. Opens the module's file on first use.
 */
static int addr_locate(struct symbolizer *s, __u32 tgid, __u64 addr, bool data, __u64 *vaddr)
{
	struct sym_proc *p = proc_find(s, tgid);
	struct sym_module *mod;
	struct sym_vma *v;
	bool inside;
	size_t i;

	if (!p)
		return -1;
	i = vma_upper(p, addr);
	inside = i < p->n && p->vmas[i].start <= addr;
	if (!inside && (!data || i == 0))
		return -1;
	v = inside ? &p->vmas[i] : &p->vmas[i - 1];
	mod = &s->mods[v->module];
	if (mod->state == SYM_FILE_UNOPENED)
		module_open(s, mod);
	if (mod->state != SYM_FILE_OK) {
		*vaddr = addr - v->start + v->pgoff;	/* a file offset is all we know */
		return inside ? (int)v->module : -1;
	}
	*vaddr = addr - vma_bias(mod, p, v);
	return inside || *vaddr < mod->vaddr_end ? (int)v->module : -1;
}

static struct sym_cache_ent *cache_slot(struct symbolizer *s, __u32 module, __u64 key)
{
	size_t mask = s->cache_cap - 1;
	size_t h = (size_t)((key ^ ((__u64)module << 40)) * 0x9e3779b97f4a7c15ULL >> 17) & mask;

	while (s->cache[h].module && (s->cache[h].module != module + 1 || s->cache[h].key != key))
		h = (h + 1) & mask;
	return &s->cache[h];
}

static int cache_grow(struct symbolizer *s)
{
	struct sym_cache_ent *old = s->cache, *n;
	size_t oldcap = s->cache_cap;

	if (s->cache_used * 2 < s->cache_cap)
		return 0;
	n = calloc(oldcap ? oldcap * 2 : 4096, sizeof(*n));
	if (!n)
		return -ENOMEM;
	s->cache = n;
	s->cache_cap = oldcap ? oldcap * 2 : 4096;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].module)
			*cache_slot(s, old[i].module - 1, old[i].key) = old[i];
	free(old);
	return 0;
}

/* Where an inlined call was made: DW_AT_call_file (an index into the CU's files), call_line. */
static const char *die_call_site(Dwarf_Die *cu, Dwarf_Die *inl, int *line)
{
	Dwarf_Attribute a;
	Dwarf_Files *files;
	Dwarf_Word fileno, l;
	size_t nfiles;

	*line = 0;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &a), &fileno) ||
	    dwarf_getsrcfiles(cu, &files, &nfiles) || fileno >= nfiles)
		return NULL;
	if (!dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &a), &l))
		*line = (int)l;
	return dwarf_filesrc(files, fileno, NULL, NULL);
}

/* Frames for an ELF address of an opened module, innermost first; the count. */
static int module_frames(struct sym_module *mod, __u64 vaddr, struct sym_frame *f)
{
	const char *sym, *file = NULL;
	Dwarf_Die *cu, *scopes = NULL;
	int line = 0, n = 0, nscopes = 0;
	Dwarf_Addr bias;
	Dwfl_Line *l;
	GElf_Off off;
	GElf_Sym esym;

	sym = dwfl_module_addrinfo(mod->mod, vaddr, &off, &esym, NULL, NULL, NULL);
	l = dwfl_module_getsrc(mod->mod, vaddr);
	if (l)
		file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
	cu = dwfl_module_addrdie(mod->mod, vaddr, &bias);
	if (cu)
		nscopes = dwarf_getscopes(cu, vaddr - bias, &scopes);
	for (int i = 0; i < nscopes && n < SYM_MAX_FRAMES - 1; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_subprogram) {
			/* The symbol names the code as the linker saw it (also foo.cold,
			 * foo.constprop.0); DWARF only where the tables have no symbol. */
			if (!sym)
				sym = dwarf_diename(&scopes[i]);
			break;
		}
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		f[n++] = (struct sym_frame){ dwarf_diename(&scopes[i]), file, file ? line : 0, true,
					     mod->base, vaddr };
		/* The next frame out is at the call site of this inlined call. */
		file = die_call_site(cu, &scopes[i], &line);
	}
	free(scopes);
	f[n++] = (struct sym_frame){ sym, file, file ? line : 0, false, mod->base, vaddr };
	return n;
}

/* The data object whose extent holds vaddr. */
static const char *module_data_symbol(struct sym_module *mod, __u64 vaddr)
{
	const char *name;
	GElf_Off off;
	GElf_Sym sym;

	name = dwfl_module_addrinfo(mod->mod, vaddr, &off, &sym, NULL, NULL, NULL);
	if (!name || GELF_ST_TYPE(sym.st_info) != STT_OBJECT || off >= sym.st_size)
		return NULL;
	return name;
}

/* The cached answer for (module, key), computed on a miss; NULL when out of memory. */
static struct sym_cache_ent *cache_get(struct symbolizer *s, int module, __u64 key)
{
	struct sym_module *mod = &s->mods[module];
	struct sym_frame f[SYM_MAX_FRAMES];
	struct sym_cache_ent *e;
	int n = 1;

	if (cache_grow(s))
		return NULL;
	e = cache_slot(s, module, key);
	if (e->module)
		return e;
	f[0] = (struct sym_frame){ .module = mod->base, .offset = key };	/* unread */
	if (key & SYM_DATA_KEY) {
		f[0].function = mod->state == SYM_FILE_OK ?
				module_data_symbol(mod, key & ~SYM_DATA_KEY) : NULL;
		n = f[0].function ? 1 : 0;
	} else if (mod->state == SYM_FILE_OK) {
		n = module_frames(mod, key, f);
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
	if (f[e->n - 1].function)
		s->stats.resolved++;
	else
		s->stats.unresolved++;
	return n;
}

const char *symbolizer__data_symbol(struct symbolizer *s, __u32 tgid, __u64 addr)
{
	struct sym_cache_ent *e = NULL;
	__u64 vaddr;
	int module;

	module = addr_locate(s, tgid, addr, true, &vaddr);
	if (module >= 0)
		e = cache_get(s, module, vaddr | SYM_DATA_KEY);
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
		dwfl_end(s->mods[i].dwfl);
		free(s->mods[i].path);
	}
	for (size_t i = 0; i < s->nprocs; i++)
		free(s->procs[i].vmas);
	free(s->mods);
	free(s->procs);
	free(s->cache);
	free(s->frames);
	free(s->debug_dir);
	free(s);
}
