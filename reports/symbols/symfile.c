// SPDX-License-Identifier: GPL-2.0
/*
 * A mapped file's symbols (symbols_int.h): the file opened (read, never mapped: elfcache.h), or
 * what stands in for it where it is gone or another build; its symbol table indexed by address,
 * each name read when first shown; and a Dwfl of its own over it for DWARF, built again when
 * needed after a let-go.
 */
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>

#include "symbols_int.h"
#include "vec.h"

/* module_report()'s error for a file that changed while it was read. */
#define SYM_E_CHANGED EAGAIN

static int sym_cmp(const void *a, const void *b)
{
	const struct sym_sym *x = a, *y = b;

	return x->addr != y->addr ? (x->addr < y->addr ? -1 : 1) : (int)x->rank - (int)y->rank;
}

/*
 * Of aliases, the one a user calls ranks lowest: fewest leading '_', no old version (name@V,
 * not name@@V), global before weak before local, the shortest (malloc, not __libc_malloc;
 * __lll_lock_wait, not __GI_...).
 */
static __u32 sym_rank(const char *name, int bind)
{
	const char *at = strchr(name, '@');
	__u32 weak = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;

	return (__u32)(strspn(name, "_") & 63) << 24 | (__u32)(at && at[1] != '@') << 22 |
	       weak << 20 | (__u32)(at ? at - name : (long)strnlen(name, 65535));
}

/* Whether a symbol names the addresses it spans: a sized function or object. */
static bool indexed(const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);

	return sym->st_size && sym->st_shndx != SHN_UNDEF &&
	       (type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_OBJECT);
}

/* Sorted, the array cut to what it holds. */
static void index_done(struct sym_module *mod)
{
	struct sym_sym *v = realloc(mod->syms, (mod->nsyms ?: 1) * sizeof(*mod->syms));

	if (v)
		mod->syms = v;
	qsort(mod->syms, mod->nsyms, sizeof(*mod->syms), sym_cmp);
}

/*
 * The file's .symtab by address, read in windows, names left in the file: dwfl_module_addrinfo
 * scans the whole table at every lookup (milliseconds a lookup in a library of 10^5 symbols),
 * and libdwfl would hold the table and its names whole (90 MB for libtorch_cpu.so). 0, -ENOENT
 * (no .symtab), -SYM_E_CHANGED, -ENOMEM.
 */
static int index_symtab(struct sym_module *mod)
{
	struct elfread_syms t;
	int err = elfread__syms_open(&t, elffile__reader(mod->file), SHT_SYMTAB);

	if (err)
		return err == -ENOEXEC ? -ENOENT : err;
	mod->syms = calloc(t.n ?: 1, sizeof(*mod->syms));
	err = mod->syms ? 0 : -ENOMEM;
	for (size_t i = 1; i < t.n && !err; i++) {
		const char *name;
		GElf_Sym sym;

		err = elfread__sym(&t, i, &sym);
		if (err || !indexed(&sym))
			continue;
		name = elfread__sym_name(&t, sym.st_name);
		if (!name)
			err = t.r->changed ? -ESTALE : 0;
		if (!name || !*name)
			continue;
		mod->syms[mod->nsyms++] =
			(struct sym_sym){ sym.st_value,
					  sym.st_size,
					  NULL,
					  sym.st_name,
					  sym_rank(name, GELF_ST_BIND(sym.st_info)),
					  GELF_ST_TYPE(sym.st_info) == STT_OBJECT };
	}
	mod->str_off = t.str_off;
	mod->str_size = t.str_size;
	elfread__syms_close(&t);
	if (err)
		return err == -ESTALE ? -SYM_E_CHANGED : err;
	index_done(mod);
	return 0;
}

/*
 * Without a .symtab, libdwfl's table: a separate debug file's .symtab, the MiniDebugInfo of
 * .gnu_debugdata with .dynsym, or .dynsym; by index, its names read when shown.
 */
static int index_dwfl(struct sym_module *mod, Dwfl_Module *dm)
{
	int n = dwfl_module_getsymtab(dm);

	mod->syms = calloc(n > 0 ? n : 1, sizeof(*mod->syms));
	if (!mod->syms)
		return -ENOMEM;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(dm, i, &sym, &addr, NULL, NULL, NULL);

		if (!name || !*name || !indexed(&sym))
			continue;
		mod->syms[mod->nsyms++] =
			(struct sym_sym){ addr,
					  sym.st_size,
					  NULL,
					  i,
					  sym_rank(name, GELF_ST_BIND(sym.st_info)),
					  GELF_ST_TYPE(sym.st_info) == STT_OBJECT };
	}
	mod->from_dwfl = true;
	mod->dwfl_nsyms = n;
	index_done(mod);
	return 0;
}

/* A symbol's name, read from where it is on first use (owned, without "@VERSION"). */
static const char *sym_name(struct symbolizer *s, struct sym_module *mod, struct sym_sym *y)
{
	char *name = NULL, *at;

	if (y->name)
		return y->name;
	if (mod->from_dwfl) {
		Dwfl_Module *dm = symfile__dwfl(s, mod);
		const char *n = NULL;
		GElf_Addr addr;
		GElf_Sym sym;

		/* The same table as indexed, or its indexes mean nothing. */
		if (dm && dwfl_module_getsymtab(dm) == mod->dwfl_nsyms)
			n = dwfl_module_getsym_info(dm, y->ref, &sym, &addr, NULL, NULL, NULL);
		name = n ? strdup(n) : NULL;
	} else if (mod->state == SYM_FILE_OK) {
		name = elfread__strdup(elffile__reader(mod->file), mod->str_off, mod->str_size,
				       y->ref);
		if (!name && elffile__changed(mod->file))
			mod->state = SYM_FILE_CHANGED;
	}
	if (name && (at = strchr(name, '@')))
		*at = '\0';
	y->name = name;
	return name;
}

const char *symfile__symbol(struct symbolizer *s, struct sym_module *mod, __u64 vaddr, bool data)
{
	struct sym_sym *syms = mod->syms, *best = NULL;
	size_t lo = sorted__upper(syms, mod->nsyms, sizeof(*syms), offsetof(struct sym_sym, addr),
				  vaddr);

	/* Back from the last at or below vaddr: the highest start that holds it, best rank. */
	for (size_t i = lo; i-- > 0 && lo - i <= 32 && (!best || syms[i].addr == best->addr);) {
		struct sym_sym *y = &syms[i];

		if (y->data == data && vaddr - y->addr < y->size)
			best = y;
	}
	return best ? sym_name(s, mod, best) : NULL;
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
 * are read: the file's .symtab, else libdwfl's choice: a separate debug file's (found on the
 * debug path, or from debuginfod: that one has no name here), else .gnu_debugdata's beside
 * .dynsym.
 */
static const char *module_source(struct sym_module *mod, Elf *elf)
{
	const char *debug = NULL;
	Dwarf_Addr bias;
	Dwarf *dw;

	if (!mod->from_dwfl)
		return "symtab";
	dwfl_module_info(mod->mod, NULL, NULL, NULL, NULL, NULL, NULL, &debug);
	if (debug)
		return "debug file";
	dw = dwfl_module_getdwarf(mod->mod, &bias);
	if (dw && dwarf_getelf(dw) != elf)
		return "debuginfod";
	if (has_section(elf, SHT_PROGBITS, ".gnu_debugdata"))
		return "minidebuginfo";
	return "dynsym";
}

void symfile__let_go(struct sym_module *mod)
{
	dwfl_end(mod->dwfl);
	mod->dwfl = NULL;
	mod->mod = NULL;
}

/* mod's file in a Dwfl of its own, at bias 0 with p_vaddr added: module addresses are the file's
 * ELF addresses. */
static Dwfl_Module *dwfl_open(struct symbolizer *s, struct sym_module *mod)
{
	Dwfl_Module *dm;
	Dwfl *d;

	if (mod->mod)
		return mod->mod;
	d = dwfl_begin(&s->callbacks);
	if (!d)
		return NULL;
	dwfl_report_begin(d);
	dm = elffile__report(mod->file, d, mod->base, 0, true);
	dwfl_report_end(d, NULL, NULL);
	if (!dm) {
		dwfl_end(d);
		return NULL;
	}
	mod->dwfl = d;
	mod->mod = dm;
	return dm;
}

Dwfl_Module *symfile__dwfl(struct symbolizer *s, struct sym_module *mod)
{
	if (mod->state != SYM_FILE_OK || !mod->file)
		return NULL;
	if (elffile__changed(mod->file)) {
		mod->state = SYM_FILE_CHANGED;
		symfile__let_go(mod);
		return NULL;
	}
	return dwfl_open(s, mod);
}

/*
 * Opens file for mod: checks its build-id against the one recorded, keeps its PT_LOAD headers and
 * indexes its symbols. 0, -ENOENT (no such file), -ESTALE (another build), -SYM_E_CHANGED (it
 * changed while read), -EINVAL (not a regular ELF file) or -ENOMEM.
 */
static int module_report(struct symbolizer *s, struct sym_module *mod, const char *file)
{
	const void *bits;
	const char *debug = NULL;
	struct elffile *f;
	size_t phnum;
	int err, len;
	Elf *elf;

	if (file[0] == '[') /* [vdso] */
		return -EINVAL;
	f = elfcache__get(s->files, file);
	if (!f)
		return errno == ENOENT || errno == ENOMEM ? -errno :
		       errno == ESTALE			  ? -SYM_E_CHANGED :
							    -EINVAL;
	err = -SYM_E_CHANGED;
	elf = elffile__elf(f);
	if (!elf)
		goto fail;
	err = -ESTALE;
	len = dwelf_elf_gnu_build_id(elf, &bits);
	if (mod->build_id_len &&
	    (len != (int)mod->build_id_len || memcmp(bits, mod->build_id, len)))
		goto fail;
	err = -EINVAL;
	if (elf_getphdrnum(elf, &phnum))
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
	if (!mod->nloads)
		goto fail;
	mod->file = f;
	err = index_symtab(mod);
	if (err == -ENOENT)
		err = dwfl_open(s, mod) ? index_dwfl(mod, mod->mod) : -EINVAL;
	if (!err && elffile__changed(f))
		err = -SYM_E_CHANGED;
	if (err)
		goto fail;
	mod->source = module_source(mod, elf);
	if (mod->mod)
		dwfl_module_info(mod->mod, NULL, NULL, NULL, NULL, NULL, NULL, &debug);
	mod->debug_path = debug ? strdup(debug) : NULL;
	return 0;
fail:
	if (err == -SYM_E_CHANGED)
		elffile__changed(f); /* said once */
	symfile__let_go(mod);
	free(mod->syms);
	mod->syms = NULL;
	mod->nsyms = 0;
	mod->from_dwfl = false;
	mod->nloads = 0;
	mod->vaddr_end = 0;
	mod->file = NULL;
	elffile__put(f);
	return err;
}

/*
 * Opens the file of mod on its first address. Where the file recorded is gone, another build or
 * changed while read, a file named by the build-id under --debug-dir or /usr/lib/debug stands in:
 * the binary itself (.build-id/xx/rest), or its debug file (rest.debug), with the same program
 * headers and symbols.
 */
void symfile__open(struct symbolizer *s, struct sym_module *mod)
{
	const char *roots[] = { s->debug_dir, SYM_DEBUG_ROOT };
	char file[PATH_MAX], hex[2 * SYM_BUILD_ID_MAX + 1];
	bool changed;
	size_t len;
	int err;

	/* /proc/PID/maps marks a file unlinked while mapped; the name is still worth a try. */
	len = snprintf(file, sizeof(file), "%s", mod->path);
	if (len > 10 && len < sizeof(file) && !strcmp(file + len - 10, " (deleted)"))
		file[len - 10] = '\0';
	err = module_report(s, mod, file);
	changed = err == -SYM_E_CHANGED;
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
	if (err && changed)
		mod->state = SYM_FILE_CHANGED;
}
