// SPDX-License-Identifier: GPL-2.0
/*
 * A mapped file's symbols (symbols_int.h): the file opened with libdwfl, or what stands in for it
 * where it is gone or another build, and its symbol table indexed by address.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <elfutils/libdw.h>

#include "elfpages.h"
#include "symbols_int.h"

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
const char *symfile__symbol(const struct sym_module *mod, __u64 vaddr, bool data)
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

/* Whether elf has a section of type type (0: any) named name (NULL: any). */
static bool has_section(Elf *elf, GElf_Word type, const char *name)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || (type && sh.sh_type != type))
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || (n && !strcmp(n, name)))
			return true;
	}
	return false;
}

/*
 * Which source named the module's functions (struct sym_file_info's source), once its symbols
 * are read: libdwfl takes the file's .symtab, else a separate debug file's (found on the debug
 * path, or from debuginfod: that one has no name here), else .gnu_debugdata's beside .dynsym.
 */
static const char *module_source(Dwfl_Module *dm, Elf *elf)
{
	const char *debug = NULL;
	Dwarf_Addr bias;
	Dwarf *dw;

	if (has_section(elf, SHT_SYMTAB, NULL))
		return "symtab";
	dwfl_module_info(dm, NULL, NULL, NULL, NULL, NULL, NULL, &debug);
	if (debug)
		return "debug file";
	dw = dwfl_module_getdwarf(dm, &bias);
	if (dw && dwarf_getelf(dw) != elf)
		return "debuginfod";
	if (has_section(elf, SHT_PROGBITS, ".gnu_debugdata"))
		return "minidebuginfo";
	return "dynsym";
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
	mod->source = module_source(dm, elf);
	/* Indexing read the whole symbol table: its pages go now, a name's come back when asked. */
	elfpages__release_one(elf);
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
void symfile__open(struct symbolizer *s, struct sym_module *mod)
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
