// SPDX-License-Identifier: GPL-2.0
/*
 * The symbolizer (reports/symbols/symbols.c) on this very process: it dlopens tests/symbols/symtest.c
 * built with -g, feeds /proc/self/maps (with the build-ids the loaded objects carry) as a trace's
 * map records, and checks names, file:line and an inlined frame against the source, static data
 * symbols (also in .bss past the file's mapping), libc functions by name from its .dynsym, and
 * the same object seen by other "processes": with a wrong build-id (not used, counted), stripped
 * (.dynsym names only), stripped with MiniDebugInfo (.gnu_debugdata names its static function),
 * with DWARF found through .gnu_debuglink, and found by build-id under a
 * debug folder, also when the mapped file is gone, and compressed there: inflated once into a
 * debug cache (debugcache.h) whose copy the next symbolizer reads alone. A C++ object (tests/symbols/symcpp.cc) has its
 * functions named as C++ programmers write them, an inlined method's frame included.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <link.h>
#include <malloc.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>

#include "debugcache.h"
#include "demangle.h"
#include "dwscopes.h"
#include "symbols_int.h"
#include "testlib.h"

#define TGID	      ((__u32)getpid())
#define TGID_WRONG_ID (TGID + 1000001)
#define TGID_STRIPPED (TGID + 1000002)
#define TGID_LINKED   (TGID + 1000003)
#define TGID_GONE     (TGID + 1000004)
#define TGID_MINI     (TGID + 1000005)

struct symtest_site {
	void *ret;
	int leaf_line;
	int inner_line;
	int step_line;
};

struct loaded {
	uintptr_t lo, hi; /* PT_LOAD extent in memory */
	__u8 id[64];
	__u32 idlen;
};

static struct loaded objs[256];
static int nobjs;
static char symdir[PATH_MAX - 64]; /* build/tests/symbols */

static int collect(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct loaded *o = &objs[nobjs];

	if (nobjs == 256)
		return 1;
	*o = (struct loaded){ .lo = UINTPTR_MAX };
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD) {
			o->lo = a < o->lo ? a : o->lo;
			o->hi = a + ph->p_memsz > o->hi ? a + ph->p_memsz : o->hi;
		} else if (ph->p_type == PT_NOTE) {
			const char *p = (const char *)a, *end = p + ph->p_memsz;

			while (p + sizeof(ElfW(Nhdr)) <= end) {
				const ElfW(Nhdr) *n = (const void *)p;
				const char *desc = p + sizeof(*n) + ((n->n_namesz + 3) & ~3u);

				if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
				    !memcmp(p + sizeof(*n), "GNU", 4) && n->n_descsz <= 64) {
					memcpy(o->id, desc, n->n_descsz);
					o->idlen = n->n_descsz;
				}
				p = desc + ((n->n_descsz + 3) & ~3u);
			}
		}
	}
	nobjs++;
	return 0;
}

static const struct loaded *loaded_at(uintptr_t addr)
{
	for (int i = 0; i < nobjs; i++)
		if (objs[i].lo <= addr && addr < objs[i].hi)
			return &objs[i];
	return NULL;
}

static char maps[1 << 16]; /* /proc/self/maps before libdw maps files of its own */

static void read_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	size_t n;

	CHECK(f, "cannot read /proc/self/maps");
	n = fread(maps, 1, sizeof(maps) - 1, f);
	CHECK(n > 0 && n < sizeof(maps) - 1, "%zu bytes of /proc/self/maps", n);
	fclose(f);
}

/*
 * Adds this process's file mappings as those of tgid, as the recorder writes them. The mappings
 * of libsymtest.so are given the path as_path instead, and a build-id with one bit flipped if
 * wrong_id. Returns the number added.
 */
static int add_self_maps(struct symbolizer *s, __u32 tgid, const char *as_path, bool wrong_id)
{
	char *save = NULL, *line, copy[sizeof(maps)];
	int n = 0;

	memcpy(copy, maps, sizeof(maps));
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long start, end, pgoff, ino;
		char perms[8], path[PATH_MAX] = "";
		unsigned int maj, min;
		const struct loaded *o;
		struct sym_map m;
		__u8 id[64];

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4095[^\n]", &start, &end, perms,
			   &pgoff, &maj, &min, &ino, path) < 7 ||
		    (!ino && strcmp(path, "[vdso]")))
			continue;
		o = loaded_at(start);
		m = (struct sym_map){ start, end, pgoff, path, NULL, 0 };
		if (o && o->idlen) {
			memcpy(id, o->id, o->idlen);
			m.build_id = id;
			m.build_id_len = o->idlen;
		}
		if (strstr(path, "/libsymtest.so")) {
			m.path = as_path;
			if (wrong_id)
				id[0] ^= 1;
		}
		CHECK(!symbolizer__add_map(s, tgid, &m), "add_map %s", path);
		n++;
	}
	return n;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suffix);

	return s && a >= b && !strcmp(s + a - b, suffix);
}

/* Whether addr lies in a file mapping of this process (not in anonymous memory). */
static bool in_file_mapping(uintptr_t addr)
{
	unsigned long long start, end, pgoff, ino;
	char line[PATH_MAX + 256], perms[8];
	unsigned int maj, min;
	bool in = false;
	FILE *f = fopen("/proc/self/maps", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu", &start, &end, perms, &pgoff, &maj,
			   &min, &ino) == 7 &&
		    ino && start <= addr && addr < end)
			in = true;
	if (f)
		fclose(f);
	return in;
}

static struct sym_file_info file_info(struct symbolizer *s, const char *path)
{
	struct sym_file_info f;

	for (size_t i = 0; symbolizer__file(s, i, &f); i++)
		if (!strcmp(f.path, path))
			return f;
	CHECK(0, "no file %s", path);
	return f;
}

/* The call of symtest_leaf, two inlined functions deep in symtest_outer: three frames. */
static void check_inline_chain(struct symbolizer *s, __u32 tgid, const struct symtest_site *site,
			       __u64 module_off)
{
	const char *want[] = { "symtest_inner", "symtest_step", "symtest_outer" };
	int line[] = { site->leaf_line, site->inner_line, site->step_line };
	struct sym_frame f[8];
	int n = symbolizer__resolve(s, tgid, (__u64)site->ret - 1, f, 8);

	CHECK(n == 3, "tgid %u: %d frames at the inlined call", tgid, n);
	for (int i = 0; i < 3; i++) {
		CHECK(f[i].function && !strcmp(f[i].function, want[i]), "frame %d: %s", i,
		      f[i].function);
		CHECK(f[i].inlined == (i < 2), "frame %d: %s inlined %d", i, want[i], f[i].inlined);
		CHECK(ends_with(f[i].file, "tests/symbols/symtest.c"), "%s", f[i].file);
		CHECK(f[i].line == line[i], "frame %d: %s at line %d, expected %d", i, want[i],
		      f[i].line, line[i]);
		CHECK(!strncmp(f[i].module, "libsymtest", 10), "%s", f[i].module);
		CHECK_EQ_U64(f[i].offset, module_off);
	}
}

/* Whether path has a DWARF section compressed (SHF_COMPRESSED). */
static bool compressed_dwarf(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	Elf_Scn *scn = NULL;
	bool any = false;
	GElf_Shdr sh;

	while (e && (scn = elf_nextscn(e, scn)))
		any |= gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED);
	elf_end(e);
	if (fd >= 0)
		close(fd);
	return any;
}

int main(int argc, char **argv)
{
	char exe[PATH_MAX], lib[PATH_MAX + 64], stripped[PATH_MAX + 64], linked[PATH_MAX + 64];
	char mini[PATH_MAX + 64];
	char gone[PATH_MAX + 64];
	char tmp[] = "/tmp/gapscope-symbols-XXXXXX", link_dir[PATH_MAX], dbg[PATH_MAX + 256];
	char target[PATH_MAX + 64], exe_name[256];
	int (*outer)(int), (*leaf)(int, int, int, int);
	void *(*addr_of)(void);
	const struct symtest_site *site;
	const struct symbolizer_stats *st;
	struct sym_frame f[8];
	struct sym_map huge;
	struct symbolizer *s, *s2;
	struct link_map *lm;
	const struct loaded *o;
	size_t cached, nmods;
	const char *inner_name;
	void *h, *lock, *counter, *big, *hidden, *api;
	void *hcpp, *cpp_spin, *cpp_get, *cpp_ret;
	int (*cpp_run)(int);
	char cpp[PATH_MAX + 64];
	char hex[129], cache[sizeof(tmp) + 8], copy[sizeof(cache) + 160];
	struct stat cst;
	int n;

	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	CHECK(len > 0, "readlink /proc/self/exe");
	exe[len] = '\0';
	snprintf(exe_name, sizeof(exe_name), "%s", strrchr(exe, '/') + 1);
	snprintf(symdir, sizeof(symdir), "%s/symbols", dirname(exe));
	snprintf(lib, sizeof(lib), "%s/libsymtest.so", symdir);
	snprintf(stripped, sizeof(stripped), "%s/libsymtest-stripped.so", symdir);
	snprintf(linked, sizeof(linked), "%s/libsymtest-linked.so", symdir);
	snprintf(mini, sizeof(mini), "%s/libsymtest-mini.so", symdir);
	snprintf(gone, sizeof(gone), "%s/no-such-dir/libsymtest.so", symdir);

	h = dlopen(lib, RTLD_NOW);
	CHECK(h, "dlopen %s: %s", lib, dlerror());
	CHECK(!dlinfo(h, RTLD_DI_LINKMAP, &lm), "dlinfo");
	outer = (int (*)(int))dlsym(h, "symtest_outer");
	leaf = (int (*)(int, int, int, int))dlsym(h, "symtest_leaf");
	site = dlsym(h, "symtest_site");
	CHECK(outer && leaf && site, "symbols of libsymtest.so");
	CHECK_EQ_U64(outer(7), (((7 + 1) * 3 + 42) + 1) * 2 * 5);
	CHECK(site->leaf_line > 0 && site->inner_line > site->leaf_line &&
		      site->step_line > site->inner_line,
	      "%d %d %d", site->leaf_line, site->inner_line, site->step_line);
	addr_of = (void *(*)(void))dlsym(h, "symtest_lock_addr");
	lock = addr_of();
	addr_of = (void *(*)(void))dlsym(h, "symtest_counter_addr");
	counter = addr_of();
	addr_of = (void *(*)(void))dlsym(h, "symtest_big_addr");
	big = addr_of();
	addr_of = (void *(*)(void))dlsym(h, "symtest_hidden_addr");
	hidden = addr_of();
	api = dlsym(h, "symtest_api");
	CHECK(api && api == dlsym(h, "__symtest_api"), "aliases");
	/* The C++ object: its functions by their mangled names. */
	snprintf(cpp, sizeof(cpp), "%s/libsymcpp.so", symdir);
	hcpp = dlopen(cpp, RTLD_NOW);
	CHECK(hcpp, "dlopen %s: %s", cpp, dlerror());
	cpp_spin = dlsym(hcpp, "_ZN6symcpp6Widget4spinEi");
	cpp_get = dlsym(hcpp, "_ZNK6symcpp3BoxIlE3getEv");
	cpp_run = (int (*)(int))dlsym(hcpp, "symcpp_run");
	addr_of = (void *(*)(void))dlsym(hcpp, "symcpp_inlined_ret");
	CHECK(cpp_spin && cpp_get && cpp_run && addr_of, "symbols of libsymcpp.so");
	CHECK_EQ_U64(cpp_run(3), 3 + 3 + 3 + 3 + 1);
	cpp_ret = addr_of();
	dl_iterate_phdr(collect, NULL);
	read_maps();
	o = loaded_at((uintptr_t)outer);
	CHECK(o && o->idlen >= 16, "libsymtest.so has a build-id");

	s = symbolizer__new(&(struct symbolizer_opts){ 0 });
	CHECK(s, "symbolizer__new");
	CHECK(add_self_maps(s, TGID, lib, false) > 4, "maps of this process");

	/* The inlined calls: symtest_inner in symtest_step in symtest_outer. */
	check_inline_chain(s, TGID, site, (__u64)site->ret - 1 - lm->l_addr);
	/* Asked for one frame, the function that holds the code. */
	CHECK_EQ_U64(symbolizer__resolve(s, TGID, (__u64)site->ret - 1, f, 1), 1);
	CHECK(!strcmp(f[0].function, "symtest_outer") && !f[0].inlined, "%s", f[0].function);

	n = symbolizer__resolve(s, TGID, (__u64)leaf, f, 8);
	CHECK(n == 1 && !strcmp(f[0].function, "symtest_leaf"), "%d %s", n, f[0].function);
	CHECK(ends_with(f[0].file, "tests/symbols/symtest.c") && f[0].line > 0 &&
		      f[0].line < site->leaf_line,
	      "%s:%d", f[0].file, f[0].line);
	n = symbolizer__resolve(s, TGID, (__u64)hidden + 1, f, 8);
	CHECK(n == 1 && !strcmp(f[0].function, "symtest_hidden"), "%d %s", n, f[0].function);
	/* Of __symtest_api, weak symtest_api and local __GI_symtest_api, the one callers call. */
	n = symbolizer__resolve(s, TGID, (__u64)api + 1, f, 8);
	CHECK(n == 1 && !strcmp(f[0].function, "symtest_api"), "%d %s", n, f[0].function);

	/* This test's own code, from the executable. */
	n = symbolizer__resolve(s, TGID, (__u64)ends_with, f, 8);
	CHECK(n >= 1 && !strcmp(f[n - 1].function, "ends_with"), "%d %s", n, f[n - 1].function);
	CHECK(ends_with(f[n - 1].file, "tests/unit/test_symbols.c"), "%s", f[n - 1].file);
	CHECK(!strcmp(f[n - 1].module, exe_name), "%s", f[n - 1].module);

	/* libc has no .symtab here, only .dynsym: names of its exported functions still. */
	n = symbolizer__resolve(s, TGID, (__u64)malloc_trim + 4, f, 8);
	CHECK(n >= 1 && !strcmp(f[n - 1].function, "malloc_trim"), "%d %s", n, f[n - 1].function);
	CHECK(!strcmp(f[n - 1].module, "libc.so.6"), "%s", f[n - 1].module);
	n = symbolizer__resolve(s, TGID, (__u64)dlopen + 2, f, 8);
	CHECK(n >= 1 && strstr(f[n - 1].function, "dlopen"), "%d %s", n, f[n - 1].function);

	/* Static data: the mutex (inside it, too), .data, and .bss past the file's pages. */
	CHECK(!strcmp(symbolizer__data_symbol(s, TGID, (__u64)lock) ?: "", "symtest_lock"), "");
	CHECK(!strcmp(symbolizer__data_symbol(s, TGID, (__u64)lock + 16) ?: "", "symtest_lock"),
	      "inside the mutex");
	CHECK(!strcmp(symbolizer__data_symbol(s, TGID, (__u64)counter) ?: "", "symtest_counter"),
	      "");
	CHECK(!strcmp(symbolizer__data_symbol(s, TGID, (__u64)site) ?: "", "symtest_site"), "");
	CHECK(!in_file_mapping((uintptr_t)big + 3 * 65536 - 1), "the end of .bss is anonymous");
	CHECK(!strcmp(symbolizer__data_symbol(s, TGID, (__u64)big + 3 * 65536 - 1) ?: "",
		      "symtest_big"),
	      "");
	CHECK(!symbolizer__data_symbol(s, TGID, (__u64)outer), "code is not data");
	CHECK(!symbolizer__data_symbol(s, TGID + 7, (__u64)lock), "no such process");
	/*
	 * A data lookup without a name as a symbolizer's first answer: no frame to keep, and no
	 * frame array yet (a copy of nothing from nowhere: undefined, which check-asan's UBSan
	 * reports).
	 */
	s2 = symbolizer__new(&(struct symbolizer_opts){ 0 });
	CHECK(s2 && add_self_maps(s2, TGID, lib, false) > 4, "a second symbolizer");
	CHECK(!symbolizer__data_symbol(s2, TGID, (__u64)outer), "code is not data, asked first");
	symbolizer__free(s2);

	/* Nothing mapped there. */
	CHECK_EQ_U64(symbolizer__resolve(s, TGID, 4096, f, 8), 0);
	/* The vDSO has no file to read: its module and offset, no name, and not a missing file. */
	n = symbolizer__resolve(s, TGID, getauxval(AT_SYSINFO_EHDR) + 0x10, f, 8);
	CHECK(n == 1 && !f[0].function && !strcmp(f[0].module, "[vdso]") && f[0].offset == 0x10,
	      "%d %s %s", n, f[0].function, f[0].module);

	/* C++: demangled, from .symtab and, for the inlined method, from DWARF's linkage name. */
	n = symbolizer__resolve(s, TGID, (__u64)cpp_spin + 1, f, 8);
	CHECK(n == 1 && !strcmp(f[0].function, "symcpp::Widget::spin(int)"), "%d %s", n,
	      f[0].function);
	n = symbolizer__resolve(s, TGID, (__u64)cpp_get + 1, f, 8);
	CHECK(n == 1 && !strcmp(f[0].function, "symcpp::Box<long>::get() const"), "%d %s", n,
	      f[0].function);
	n = symbolizer__resolve(s, TGID, (__u64)cpp_ret - 1, f, 8);
	CHECK(n == 2 && !strcmp(f[0].function, "symcpp::Widget::step(int, void**)") &&
		      f[0].inlined && !strcmp(f[1].function, "symcpp_run") && !f[1].inlined,
	      "%d %s %s", n, f[0].function, f[1].function);
	CHECK(ends_with(f[0].file, "tests/symbols/symcpp.cc") && f[0].line > 0, "%s", f[0].file);

	st = symbolizer__stats(s);
	CHECK_EQ_U64(st->resolved, 11);
	CHECK_EQ_U64(st->unresolved, 2);
	CHECK_EQ_U64(st->missing_files, 0);
	CHECK_EQ_U64(st->build_id_mismatch, 0);

	/* Resolved again: from the cache, the same strings, no new entry. */
	cached = s->cache_used;
	CHECK_EQ_U64(symbolizer__resolve(s, TGID, (__u64)site->ret - 1, f, 8), 3);
	inner_name = f[0].function;
	check_inline_chain(s, TGID, site, (__u64)site->ret - 1 - lm->l_addr);
	CHECK_EQ_U64(symbolizer__resolve(s, TGID, (__u64)site->ret - 1, f, 8), 3);
	CHECK(f[0].function == inner_name, "the cached string");
	CHECK_EQ_U64(s->cache_used, cached);
	CHECK_EQ_U64(st->resolved, 14);

	/* Another process with libsymtest.so of another build: not used, said; libc is shared. */
	nmods = s->nmods;
	add_self_maps(s, TGID_WRONG_ID, lib, true);
	CHECK_EQ_U64(s->nmods, nmods + 1);
	n = symbolizer__resolve(s, TGID_WRONG_ID, (__u64)site->ret - 1, f, 8);
	CHECK(n == 1 && !f[0].function && !strcmp(f[0].module, "libsymtest.so"), "%d %s", n,
	      f[0].function);
	CHECK_EQ_U64(st->build_id_mismatch, 1);
	n = symbolizer__resolve(s, TGID_WRONG_ID, (__u64)malloc_trim + 4, f, 8);
	CHECK(n >= 1 && !strcmp(f[n - 1].function, "malloc_trim"), "%s", f[n - 1].function);
	CHECK(!symbolizer__data_symbol(s, TGID_WRONG_ID, (__u64)lock), "not the build mapped");

	/* Stripped: .dynsym names the exported functions only; no lines, no statics. */
	add_self_maps(s, TGID_STRIPPED, stripped, false);
	n = symbolizer__resolve(s, TGID_STRIPPED, (__u64)site->ret - 1, f, 8);
	CHECK(n == 1 && !strcmp(f[0].function, "symtest_outer") && !f[0].file, "%d %s %s", n,
	      f[0].function, f[0].file);
	CHECK(!strcmp(f[0].module, "libsymtest-stripped.so"), "%s", f[0].module);
	n = symbolizer__resolve(s, TGID_STRIPPED, (__u64)api + 1, f, 8);
	CHECK(n == 1 && !strcmp(f[0].function, "symtest_api"), "%d %s", n, f[0].function);
	n = symbolizer__resolve(s, TGID_STRIPPED, (__u64)hidden + 1, f, 8);
	CHECK(n == 1 && !f[0].function, "%s", f[0].function);
	CHECK(!symbolizer__data_symbol(s, TGID_STRIPPED, (__u64)lock), "static, stripped");
	CHECK(!strcmp(symbolizer__data_symbol(s, TGID_STRIPPED, (__u64)site) ?: "", "symtest_site"),
	      "exported data is in .dynsym");

	CHECK(!strcmp(file_info(s, stripped).source, "dynsym"), "%s",
	      file_info(s, stripped).source);
	CHECK_EQ_U64(file_info(s, stripped).unnamed, 1); /* symtest_hidden */
	CHECK_EQ_U64(file_info(s, stripped).named, 2);

	/* Stripped, with MiniDebugInfo: .gnu_debugdata names the static function too. */
	add_self_maps(s, TGID_MINI, mini, false);
	n = symbolizer__resolve(s, TGID_MINI, (__u64)hidden + 1, f, 8);
	CHECK(n == 1 && !strcmp(f[0].function ?: "", "symtest_hidden"), "%d %s", n, f[0].function);
	n = symbolizer__resolve(s, TGID_MINI, (__u64)site->ret - 1, f, 8);
	CHECK(n == 1 && !strcmp(f[0].function ?: "", "symtest_outer") && !f[0].file, "%d %s", n,
	      f[0].function);
	CHECK(!strcmp(file_info(s, mini).source, "minidebuginfo"), "%s", file_info(s, mini).source);
	CHECK_EQ_U64(file_info(s, mini).unnamed, 0);
	CHECK_EQ_U64(file_info(s, mini).named, 2);
	CHECK(!strcmp(file_info(s, lib).source, "symtab"), "%s", file_info(s, lib).source);

	/* DWARF in a separate file named by .gnu_debuglink, next to the object. */
	add_self_maps(s, TGID_LINKED, linked, false);
	check_inline_chain(s, TGID_LINKED, site, (__u64)site->ret - 1 - lm->l_addr);
	CHECK(ends_with(file_info(s, linked).debug_path, "/libsymtest.debug"), "%s",
	      file_info(s, linked).debug_path);

	/* A file that is gone, without a debug folder to find it in. */
	add_self_maps(s, TGID_GONE, gone, false);
	n = symbolizer__resolve(s, TGID_GONE, (__u64)site->ret - 1, f, 8);
	CHECK(n == 1 && !f[0].function, "%d %s", n, f[0].function);
	CHECK_EQ_U64(st->missing_files, 1);
	CHECK(file_info(s, gone).state == SYM_FILE_MISSING, "");
	CHECK(file_info(s, lib).state == SYM_FILE_OK, "");
	CHECK(file_info(s, stripped).state == SYM_FILE_OK, "");
	CHECK(file_info(s, "[vdso]").state == SYM_FILE_BAD, "");

	/* --debug-dir with .build-id/xx/rest.debug: the stripped object gets its DWARF, and the
	 * gone one is read from the debug file alone. */
	CHECK(mkdtemp(tmp), "mkdtemp");
	for (__u32 i = 0; i < o->idlen; i++)
		sprintf(hex + 2 * i, "%02x", o->id[i]);
	snprintf(link_dir, sizeof(link_dir), "%s/.build-id", tmp);
	CHECK(!mkdir(link_dir, 0755), "mkdir");
	snprintf(link_dir, sizeof(link_dir), "%s/.build-id/%.2s", tmp, hex);
	CHECK(!mkdir(link_dir, 0755), "mkdir");
	snprintf(dbg, sizeof(dbg), "%s/%s.debug", link_dir, hex + 2);
	snprintf(target, sizeof(target), "%s/libsymtest.debug", symdir);
	CHECK(!symlink(target, dbg), "symlink %s", dbg);
	s2 = symbolizer__new(&(struct symbolizer_opts){ .debug_dir = tmp });
	CHECK(s2, "symbolizer__new");
	add_self_maps(s2, TGID_STRIPPED, stripped, false);
	check_inline_chain(s2, TGID_STRIPPED, site, (__u64)site->ret - 1 - lm->l_addr);
	CHECK(!strcmp(symbolizer__data_symbol(s2, TGID_STRIPPED, (__u64)lock) ?: "",
		      "symtest_lock"),
	      "");
	add_self_maps(s2, TGID_GONE, gone, false);
	check_inline_chain(s2, TGID_GONE, site, (__u64)site->ret - 1 - lm->l_addr);
	CHECK(!strcmp(symbolizer__data_symbol(s2, TGID_GONE, (__u64)big + 3 * 65536 - 1) ?: "",
		      "symtest_big"),
	      "");
	CHECK_EQ_U64(symbolizer__stats(s2)->missing_files, 1);
	CHECK(file_info(s2, gone).state == SYM_FILE_OK, "");
	CHECK(!strcmp(file_info(s2, stripped).source, "debug file"), "%s",
	      file_info(s2, stripped).source);
	n = symbolizer__resolve(s2, TGID_STRIPPED, (__u64)hidden + 1, f, 8);
	CHECK(n == 1 && !strcmp(f[0].function ?: "", "symtest_hidden"), "%d %s", n, f[0].function);
	CHECK_EQ_U64(file_info(s2, stripped).unnamed, 0);
	/* An address no mapping covers: counted. */
	CHECK(!symbolizer__resolve(s2, TGID_STRIPPED, 16, f, 8), "unmapped");
	CHECK_EQ_U64(symbolizer__stats(s2)->unmapped, 1);

	/*
	 * More distinct addresses than the cache holds (of a file that is gone, cheap to resolve):
	 * it starts over once, and answers stay right before and after.
	 */
	huge = (struct sym_map){ 1ULL << 40, (1ULL << 40) + (1ULL << 20), 0, gone, NULL, 0 };
	CHECK(!symbolizer__add_map(s2, TGID_GONE + 1, &huge), "add_map");
	for (__u64 a = 0; a < SYM_CACHE_SIZE / 2 + 100; a++) {
		n = symbolizer__resolve(s2, TGID_GONE + 1, huge.start + a, f, 8);
		CHECK(n == 1 && !f[0].function && f[0].offset == a, "%d at +%llu", n,
		      (unsigned long long)a);
		if (a == SYM_CACHE_SIZE / 2 - 10)
			check_inline_chain(s2, TGID_GONE, site, (__u64)site->ret - 1 - lm->l_addr);
	}
	CHECK(s2->cache_used < 200, "%zu entries after the cache started over", s2->cache_used);
	check_inline_chain(s2, TGID_GONE, site, (__u64)site->ret - 1 - lm->l_addr);

	symbolizer__free(s2);

	/*
	 * The same debug file with its DWARF compressed (as Debian ships /usr/lib/debug), with a
	 * debug cache (debugcache.h): the first symbolizer inflates it and leaves a copy, whose
	 * sections are not compressed; the next reads the copy alone (the compressed one gone) and
	 * names the same inline chain; a copy another user could change is not used, and removed.
	 */
	snprintf(cache, sizeof(cache), "%s/cache", tmp);
	CHECK(debugcache__set(cache), "debugcache__set %s", cache);
	unlink(dbg);
	snprintf(target, sizeof(target), "%s/libsymtest-z.debug", symdir);
	CHECK(!symlink(target, dbg), "symlink %s", dbg);
	s2 = symbolizer__new(&(struct symbolizer_opts){ .debug_dir = tmp });
	add_self_maps(s2, TGID_STRIPPED, stripped, false);
	check_inline_chain(s2, TGID_STRIPPED, site, (__u64)site->ret - 1 - lm->l_addr);
	symbolizer__free(s2);
	snprintf(copy, sizeof(copy), "%s/%s.debug", cache, hex);
	CHECK(!stat(copy, &cst) && (cst.st_mode & 0777) == 0600, "no copy %s", copy);
	CHECK(!compressed_dwarf(copy), "the copy %s is still compressed", copy);
	CHECK(compressed_dwarf(target), "libsymtest-z.debug is not compressed");
	unlink(dbg);
	s2 = symbolizer__new(&(struct symbolizer_opts){ .debug_dir = tmp });
	add_self_maps(s2, TGID_STRIPPED, stripped, false);
	check_inline_chain(s2, TGID_STRIPPED, site, (__u64)site->ret - 1 - lm->l_addr);
	symbolizer__free(s2);
	CHECK(!chmod(copy, 0620), "chmod");
	s2 = symbolizer__new(&(struct symbolizer_opts){ .debug_dir = tmp });
	add_self_maps(s2, TGID_STRIPPED, stripped, false);
	n = symbolizer__resolve(s2, TGID_STRIPPED, (__u64)site->ret - 1, f, 8);
	CHECK(n == 1, "%d frames from a copy others may change", n);
	CHECK(access(copy, F_OK), "a copy others may change is kept");
	symbolizer__free(s2);
	debugcache__set(NULL);
	rmdir(cache);

	symbolizer__free(s);
	unlink(dbg);
	rmdir(link_dir);
	snprintf(link_dir, sizeof(link_dir), "%s/.build-id", tmp);
	rmdir(link_dir);
	rmdir(tmp);
	dlclose(hcpp);
	dlclose(h);
	TEST_PASS();
}
