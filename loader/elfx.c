// SPDX-License-Identifier: GPL-2.0
/*
 * ELF reading for the recorder, with libelf/gelf over pread (elfread.h): the files are the
 * target's, and its owner may truncate one while it is read. A file that changes while read is
 * said once and its reading fails with -ESTALE.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gelf.h>
#include <libelf.h>

#include "elfread.h"
#include "elfx.h"

static int elf_open(struct elfread *r, const char *path)
{
	int err = elfread__open(r, path);

	if (err == -ESTALE)
		elfread__say_changed(r, path);
	return err;
}

/* Closes r; ret, or -ESTALE where the file changed while it was read (said once). */
static int elf_close(struct elfread *r, const char *path, int ret)
{
	if (ret == -ESTALE || elfread__changed(r)) {
		elfread__say_changed(r, path);
		ret = -ESTALE;
	}
	elfread__close(r);
	return ret;
}

/* .rodata read in windows of this size. */
#define SCAN_WINDOW (4u << 20)

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

/* cb's first non-zero return, 0, or a negative error (-ESTALE: the file changed). */
static int for_each_sym(struct elfread *r, Elf64_Word type,
			int (*cb)(const struct elfx_sym *s, void *ctx), void *ctx)
{
	struct elfread_syms t;
	int ret = elfread__syms_open(&t, r, type);

	if (ret)
		return ret == -ENOENT || ret == -ENOEXEC ? 0 : ret;
	for (size_t i = 0; i < t.n && !ret; i++) {
		struct elfx_sym s;
		GElf_Sym sym;

		ret = elfread__sym(&t, i, &sym);
		if (ret || GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF ||
		    !sym.st_value)
			continue;
		s.name = elfread__sym_name(&t, sym.st_name);
		if (!s.name && r->changed)
			ret = -ESTALE;
		if (!s.name || !*s.name)
			continue;
		s.value = sym.st_value;
		s.size = sym.st_size;
		if (vaddr_to_offset(r->e, sym.st_value, &s.offset))
			ret = cb(&s, ctx);
	}
	elfread__syms_close(&t);
	return ret;
}

int elfx__for_each_dynsym(const char *path, int (*cb)(const struct elfx_sym *s, void *ctx),
			  void *ctx)
{
	struct elfread r;
	int ret = elf_open(&r, path);

	if (ret)
		return ret;
	ret = for_each_sym(&r, SHT_DYNSYM, cb, ctx);
	ret = elf_close(&r, path, ret);
	return ret < 0 ? ret : 0;
}

int elfx__for_each_sym(const char *path, int (*cb)(const struct elfx_sym *s, void *ctx), void *ctx,
		       bool *has_symtab)
{
	struct elfread r;
	Elf_Scn *scn = NULL;
	int ret = elf_open(&r, path);

	if (ret)
		return ret;
	*has_symtab = false;
	while ((scn = elf_nextscn(r.e, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			*has_symtab = true;
	}
	ret = for_each_sym(&r, SHT_SYMTAB, cb, ctx);
	if (!ret)
		ret = for_each_sym(&r, SHT_DYNSYM, cb, ctx);
	ret = elf_close(&r, path, ret);
	return ret < 0 ? ret : 0;
}

#define RODATA_SCAN_MAX (64u << 20)

bool elfx__rodata_has(const char *path, const char *needle)
{
	size_t shstrndx, n = strlen(needle);
	struct elfread r;
	Elf_Scn *scn = NULL;
	char *buf = NULL;
	bool found = false;
	int err = 0;

	if (elf_open(&r, path))
		return false;
	if (elf_getshdrstrndx(r.e, &shstrndx) || !(buf = malloc(SCAN_WINDOW + n)))
		goto out;
	while (!found && !err && (scn = elf_nextscn(r.e, scn))) {
		const char *name;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    sh.sh_size > RODATA_SCAN_MAX)
			continue;
		name = elf_strptr(r.e, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".rodata"))
			continue;
		/* In windows that overlap by the needle's length. */
		for (size_t at = 0; !found && !err && at < sh.sh_size; at += SCAN_WINDOW) {
			size_t len = sh.sh_size - at < SCAN_WINDOW + n ? sh.sh_size - at :
									 SCAN_WINDOW + n;

			err = elfread__pread(&r, buf, len, sh.sh_offset + at);
			found = !err && memmem(buf, len, needle, n);
		}
	}
out:
	free(buf);
	return elf_close(&r, path, err) ? false : found;
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
	struct elfread r;
	int ret = elf_open(&r, path);

	if (ret)
		return ret;
	ret = for_each_sym(&r, SHT_DYNSYM, find_cb, &f);
	if (!ret)
		ret = for_each_sym(&r, SHT_SYMTAB, find_cb, &f);
	ret = elf_close(&r, path, ret);
	if (ret < 0)
		return ret;
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
	struct elfread r;
	size_t n = 0;

	if (elf_open(&r, path))
		return 0;
	while (!n && (scn = elf_nextscn(r.e, scn))) {
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

		if (!elf_getphdrnum(r.e, &phn)) {
			for (size_t i = 0; i < phn && !n; i++) {
				GElf_Phdr ph;
				Elf_Data *data;

				if (!gelf_getphdr(r.e, i, &ph) || ph.p_type != PT_NOTE)
					continue;
				data = elf_getdata_rawchunk(r.e, ph.p_offset, ph.p_filesz,
							    ELF_T_NHDR);
				if (data)
					n = note_build_id(data, id, max);
			}
		}
	}
	/* An id read from a file that changed is not the mapped file's. */
	return elf_close(&r, path, 0) ? 0 : n;
}

int elfx__dyn(const char *path, struct elfx_dyn *d)
{
	Elf_Scn *scn = NULL;
	struct elfread r;
	size_t phn;
	GElf_Ehdr eh;
	int err;

	memset(d, 0, sizeof(*d));
	err = elf_open(&r, path);
	if (err)
		return err;
	if (!gelf_getehdr(r.e, &eh))
		return elf_close(&r, path, -ENOEXEC);
	d->is64 = gelf_getclass(r.e) == ELFCLASS64;
	d->machine = eh.e_machine;
	if (!elf_getphdrnum(r.e, &phn)) {
		for (size_t i = 0; i < phn; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(r.e, i, &ph) && ph.p_type == PT_INTERP && ph.p_filesz &&
			    ph.p_filesz < sizeof(d->interp) &&
			    elfread__pread(&r, d->interp, ph.p_filesz, ph.p_offset))
				memset(d->interp, 0, sizeof(d->interp));
		}
	}
	while ((scn = elf_nextscn(r.e, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;

			if (!gelf_getdyn(data, i, &dyn) ||
			    (dyn.d_tag != DT_RPATH && dyn.d_tag != DT_RUNPATH))
				continue;
			/* The string alone is read, not the whole .dynstr (10^5 names in libtorch). */
			if (!elfread__str(&r, sh.sh_link, dyn.d_un.d_val,
					  dyn.d_tag == DT_RPATH ? d->rpath : d->runpath,
					  sizeof(d->rpath)))
				(dyn.d_tag == DT_RPATH ? d->rpath : d->runpath)[0] = '\0';
		}
	}
	return elf_close(&r, path, 0);
}
