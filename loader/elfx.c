// SPDX-License-Identifier: GPL-2.0
/* ELF reading with libelf/gelf. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <gelf.h>
#include <libelf.h>

#include "elfpages.h"
#include "elfx.h"

static Elf *elf_open(const char *path, int *fd)
{
	Elf *e;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return NULL;
	e = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		close(*fd);
		errno = ENOEXEC;
		return NULL;
	}
	return e;
}

/*
 * Symbols walked between letting go of the file's pages (elfpages.h): a table of 10^6 symbols
 * (libtorch's) would otherwise stay resident whole until the file is closed; 32768 of them and
 * their names are about 1.5 MiB.
 */
#define SCAN_RELEASE_EVERY 32768
/* .rodata read in windows of this size, each let go before the next. */
#define SCAN_WINDOW	   (4u << 20)

/*
 * Lets go of the pages of E that a scan has touched. This process's mappings are read once a
 * scan (into EP, empty at first): a scan maps nothing, libelf's image is mapped already.
 */
static void let_go(struct elfpages *ep, Elf *e)
{
	if (!ep->n && elfpages__scan(ep))
		return;
	elfpages__release(ep, e);
}

static void elf_close(Elf *e, int fd)
{
	elf_end(e);
	close(fd);
}

/* A symbol's address to a file offset, through the PT_LOAD segment that contains it. */
static bool vaddr_to_offset(Elf *e, __u64 vaddr, __u64 *off)
{
	size_t n;

	if (elf_getphdrnum(e, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_memsz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return true;
		}
	}
	return false;
}

static int for_each_sym(Elf *e, Elf64_Word type, int (*cb)(const struct elfx_sym *s, void *ctx),
			void *ctx)
{
	struct elfpages ep = { 0 };
	Elf_Scn *scn = NULL;
	int ret = 0;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			struct elfx_sym s;
			GElf_Sym sym;

			if (i % SCAN_RELEASE_EVERY == SCAN_RELEASE_EVERY - 1)
				let_go(&ep, e);
			if (!gelf_getsym(data, i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_shndx == SHN_UNDEF || !sym.st_value)
				continue;
			s.name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (!s.name || !*s.name)
				continue;
			s.value = sym.st_value;
			s.size = sym.st_size;
			if (!vaddr_to_offset(e, sym.st_value, &s.offset))
				continue;
			ret = cb(&s, ctx);
			if (ret)
				goto out;
		}
	}
out:
	elfpages__fini(&ep);
	return ret;
}

int elfx__for_each_dynsym(const char *path, int (*cb)(const struct elfx_sym *s, void *ctx),
			  void *ctx)
{
	int fd, ret;
	Elf *e = elf_open(path, &fd);

	if (!e)
		return -errno;
	ret = for_each_sym(e, SHT_DYNSYM, cb, ctx);
	elf_close(e, fd);
	return ret < 0 ? ret : 0;
}

int elfx__for_each_sym(const char *path, int (*cb)(const struct elfx_sym *s, void *ctx), void *ctx,
		       bool *has_symtab)
{
	int fd, ret;
	Elf *e = elf_open(path, &fd);
	Elf_Scn *scn = NULL;

	if (!e)
		return -errno;
	*has_symtab = false;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			*has_symtab = true;
	}
	ret = for_each_sym(e, SHT_SYMTAB, cb, ctx);
	if (!ret)
		ret = for_each_sym(e, SHT_DYNSYM, cb, ctx);
	elf_close(e, fd);
	return ret < 0 ? ret : 0;
}

#define RODATA_SCAN_MAX (64u << 20)

bool elfx__rodata_has(const char *path, const char *needle)
{
	struct elfpages ep = { 0 };
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool found = false;
	int fd;
	Elf *e = elf_open(path, &fd);

	if (!e)
		return false;
	if (elf_getshdrstrndx(e, &shstrndx))
		goto out;
	while (!found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    sh.sh_size > RODATA_SCAN_MAX)
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".rodata"))
			continue;
		d = elf_rawdata(scn, NULL);
		/* In windows that overlap by the needle's length, each page let go once read. */
		for (size_t at = 0, n = strlen(needle); d && d->d_buf && !found && at < d->d_size;
		     at += SCAN_WINDOW) {
			size_t len = d->d_size - at < SCAN_WINDOW + n ? d->d_size - at :
									SCAN_WINDOW + n;

			found = memmem((const char *)d->d_buf + at, len, needle, n);
			let_go(&ep, e);
		}
	}
out:
	elfpages__fini(&ep);
	elf_close(e, fd);
	return found;
}

struct find_ctx {
	const char *name;
	__u64 offset;
};

static int find_cb(const struct elfx_sym *s, void *ctx)
{
	struct find_ctx *f = ctx;

	if (strcmp(s->name, f->name))
		return 0;
	f->offset = s->offset;
	return 1;
}

int elfx__sym_offset(const char *path, const char *name, __u64 *offset)
{
	struct find_ctx f = { .name = name };
	int fd, ret;
	Elf *e = elf_open(path, &fd);

	if (!e)
		return -errno;
	ret = for_each_sym(e, SHT_DYNSYM, find_cb, &f);
	if (ret != 1)
		ret = for_each_sym(e, SHT_SYMTAB, find_cb, &f);
	elf_close(e, fd);
	if (ret != 1)
		return -ENOENT;
	*offset = f.offset;
	return 0;
}

static size_t note_build_id(Elf_Data *data, __u8 *id, size_t max)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((char *)data->d_buf + name_off, "GNU", 4)) {
			size_t n = nh.n_descsz < max ? nh.n_descsz : max;

			memcpy(id, (char *)data->d_buf + desc_off, n);
			return n;
		}
	}
	return 0;
}

size_t elfx__build_id(const char *path, __u8 *id, size_t max)
{
	Elf_Scn *scn = NULL;
	size_t n = 0;
	int fd;
	Elf *e = elf_open(path, &fd);

	if (!e)
		return 0;
	while (!n && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (data)
			n = note_build_id(data, id, max);
	}
	if (!n) {
		/* Stripped of section headers: the notes are still in PT_NOTE segments. */
		size_t phn;

		if (!elf_getphdrnum(e, &phn)) {
			for (size_t i = 0; i < phn && !n; i++) {
				GElf_Phdr ph;
				Elf_Data *data;

				if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_NOTE)
					continue;
				data = elf_getdata_rawchunk(e, ph.p_offset, ph.p_filesz,
							    ELF_T_NHDR);
				if (data)
					n = note_build_id(data, id, max);
			}
		}
	}
	elf_close(e, fd);
	return n;
}

int elfx__dyn(const char *path, struct elfx_dyn *d)
{
	size_t phn;
	GElf_Ehdr eh;
	int fd;
	Elf *e = elf_open(path, &fd);

	memset(d, 0, sizeof(*d));
	if (!e)
		return -errno;
	if (!gelf_getehdr(e, &eh)) {
		elf_close(e, fd);
		return -ENOEXEC;
	}
	d->is64 = gelf_getclass(e) == ELFCLASS64;
	d->machine = eh.e_machine;
	if (!elf_getphdrnum(e, &phn)) {
		for (size_t i = 0; i < phn; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(e, i, &ph))
				continue;
			if (ph.p_type == PT_INTERP) {
				size_t len;
				char *raw = elf_rawfile(e, &len);

				if (raw && ph.p_offset + ph.p_filesz <= len && ph.p_filesz &&
				    ph.p_filesz < sizeof(d->interp))
					memcpy(d->interp, raw + ph.p_offset, ph.p_filesz);
			}
		}
	}
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			const char *s;

			if (!gelf_getdyn(data, i, &dyn))
				continue;
			if (dyn.d_tag != DT_RPATH && dyn.d_tag != DT_RUNPATH)
				continue;
			s = elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
			if (!s)
				continue;
			snprintf(dyn.d_tag == DT_RPATH ? d->rpath : d->runpath, sizeof(d->rpath),
				 "%s", s);
		}
	}
	elf_close(e, fd);
	return 0;
}
