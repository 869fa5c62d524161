// SPDX-License-Identifier: GPL-2.0
/* The ELF files read to name frames and unwind stacks: see elfcache.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <gelf.h>

#include "elfcache.h"
#include "vec.h"

#define ELFFILE_MAX_LOADS 16 /* PT_LOAD headers kept: files have 2 to 5 */

struct elf_load {
	__u64 offset, filesz, vaddr;
};

struct elffile {
	char *path;
	struct elfread rd; /* rd.e: this cache's handle, NULL after a let-go */
	unsigned int refs;
	bool said;
	/* From the program headers: what reporting it to libdwfl takes, without its handle. */
	GElf_Half e_type;
	__u64 vaddr;	 /* the first PT_LOAD's address, aligned down */
	__u64 vaddr_end; /* the end of the last PT_LOAD in memory */
	struct elf_load loads[ELFFILE_MAX_LOADS];
	int nloads;
};

struct elfcache {
	struct elffile **v;
	size_t n, cap;
};

struct elfcache *elfcache__new(void)
{
	return calloc(1, sizeof(struct elfcache));
}

static void file_free(struct elffile *f)
{
	elfread__close(&f->rd);
	free(f->path);
	free(f);
}

void elfcache__free(struct elfcache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		file_free(c->v[i]);
	free(c->v);
	free(c);
}

static bool offline;

void elfcache__offline(void)
{
	__atomic_store_n(&offline, true, __ATOMIC_RELEASE);
}

size_t elfcache__dwarf_max(void)
{
	return __atomic_load_n(&offline, __ATOMIC_ACQUIRE) ? ELF_DWARF_OFFLINE_MAX : ELF_DWARF_MAX;
}

/*
 * Hides f's DWARF from libdw where it is larger than elfcache__dwarf_max(): libdw reads every
 * DWARF section of a file whole when it is first asked for any, and skips those of type
 * SHT_NOBITS (as a stripped file has them).
 */
static void dwarf_cap(Elf *e)
{
	size_t shstrndx, sum = 0;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(e, &shstrndx))
		return;
	for (int pass = 0; pass < 2; pass++) {
		while ((scn = elf_nextscn(e, scn))) {
			const char *name;
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
			    !(name = elf_strptr(e, shstrndx, sh.sh_name)) ||
			    (strncmp(name, ".debug_", 7) && strncmp(name, ".zdebug_", 8)))
				continue;
			if (!pass) {
				sum += sh.sh_size;
				continue;
			}
			sh.sh_type = SHT_NOBITS;
			gelf_update_shdr(scn, &sh);
		}
		if (sum <= elfcache__dwarf_max())
			return;
	}
}

/* The program headers' part that reporting and reading take; false without a PT_LOAD. */
static bool read_loads(struct elffile *f)
{
	bool first = true;
	GElf_Ehdr eh;
	size_t n;

	if (!gelf_getehdr(f->rd.e, &eh) || elf_getphdrnum(f->rd.e, &n))
		return false;
	f->e_type = eh.e_type;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(f->rd.e, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		/* As libdwfl places a file: from its first PT_LOAD, aligned, to its last's end. */
		if (first)
			f->vaddr = ph.p_vaddr & -(ph.p_align ?: 1);
		first = false;
		if (ph.p_vaddr + ph.p_memsz > 0)
			f->vaddr_end = ph.p_vaddr + ph.p_memsz;
		if (f->nloads < ELFFILE_MAX_LOADS)
			f->loads[f->nloads++] = (struct elf_load){ ph.p_offset, ph.p_filesz,
								   ph.p_vaddr };
	}
	return !first;
}

struct elffile *elfcache__get(struct elfcache *c, const char *path)
{
	struct elffile *f = NULL;
	struct stat st;
	int err;

	if (stat(path, &st))
		return NULL;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return NULL;
	}
	for (size_t i = 0; i < c->n; i++) {
		f = c->v[i];
		if (f->rd.st.st_dev == st.st_dev && f->rd.st.st_ino == st.st_ino &&
		    !strcmp(f->path, path)) {
			f->refs++;
			return f;
		}
	}
	f = NULL;
	if (array__grow((void **)&c->v, &c->cap, sizeof(*c->v), c->n + 1, 16) ||
	    !(f = calloc(1, sizeof(*f))) || !(f->path = strdup(path))) {
		free(f);
		errno = ENOMEM;
		return NULL;
	}
	err = elfread__open(&f->rd, path);
	if (!err && !read_loads(f))
		err = -ENOEXEC;
	if (err) {
		if (err == -ESTALE)
			elfread__say_changed(&f->rd, path);
		file_free(f);
		errno = -err;
		return NULL;
	}
	dwarf_cap(f->rd.e);
	f->refs = 1;
	c->v[c->n++] = f;
	return f;
}

void elffile__put(struct elffile *f)
{
	if (f && f->refs)
		f->refs--;
}

const char *elffile__path(const struct elffile *f)
{
	return f->path;
}

struct elfread *elffile__reader(struct elffile *f)
{
	return &f->rd;
}

bool elffile__changed(struct elffile *f)
{
	if (elfread__changed(&f->rd) && !f->said) {
		f->said = true;
		elfread__say_changed(&f->rd, f->path);
	}
	return f->rd.changed;
}

Elf *elffile__elf(struct elffile *f)
{
	if (f->rd.e || elffile__changed(f))
		return f->rd.changed ? NULL : f->rd.e;
	f->rd.e = elf_begin(f->rd.fd, ELF_C_READ, NULL);
	if (f->rd.e && elf_kind(f->rd.e) == ELF_K_ELF) {
		dwarf_cap(f->rd.e);
		return f->rd.e;
	}
	elf_end(f->rd.e);
	f->rd.e = NULL;
	elffile__changed(f);
	return NULL;
}

bool elffile__read(struct elffile *f, __u64 vaddr, void *buf, size_t len)
{
	for (int i = 0; i < f->nloads; i++) {
		const struct elf_load *l = &f->loads[i];

		if (vaddr >= l->vaddr && vaddr - l->vaddr <= l->filesz &&
		    len <= l->filesz - (vaddr - l->vaddr))
			return !elfread__pread(&f->rd, buf, len, l->offset + (vaddr - l->vaddr));
	}
	return false;
}

Dwfl_Module *elffile__report(struct elffile *f, Dwfl *d, const char *name, __u64 base,
			     bool add_p_vaddr)
{
	__u64 start, bias;
	Dwfl_Module *m;
	void **ud;

	if (f->e_type == ET_REL || f->rd.changed)
		return NULL;
	if (f->e_type == ET_EXEC || f->e_type == ET_CORE) {
		/* Where its headers say, whatever base: as libdwfl takes it. */
		base = 0;
		add_p_vaddr = true;
	}
	start = add_p_vaddr ? base + f->vaddr : base;
	bias = add_p_vaddr ? base : base - f->vaddr;
	if (bias + f->vaddr_end <= start)
		return NULL;
	m = dwfl_report_module(d, name, start, bias + f->vaddr_end);
	if (m && dwfl_module_info(m, &ud, NULL, NULL, NULL, NULL, NULL, NULL))
		*ud = f;
	return m;
}

int elffile__find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		      char **file_name, Elf **elfp)
{
	struct elffile *f = *userdata;
	Elf *e = f ? elffile__elf(f) : NULL;

	(void)mod, (void)modname, (void)base;
	if (!e)
		return -1;
	/* Another reference to the same handle (libelf counts them): the module's to end. */
	*elfp = elf_begin(-1, ELF_C_READ, e);
	*file_name = *elfp ? strdup(f->path) : NULL;
	return -1; /* no descriptor: libdwfl would close it; the file's stays the cache's */
}

void elfcache__let_go(struct elfcache *c)
{
	size_t k = 0;

	for (size_t i = 0; c && i < c->n; i++) {
		struct elffile *f = c->v[i];

		elffile__changed(f);
		if (f->rd.e)
			elf_end(f->rd.e);
		f->rd.e = NULL;
		if (!f->refs) {
			file_free(f);
			continue;
		}
		c->v[k++] = f;
	}
	if (c)
		c->n = k;
}
