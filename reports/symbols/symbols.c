// SPDX-License-Identifier: GPL-2.0
/*
 * Symbols with libdwfl (see symbols.h): processes' addresses to mapped files and frames. A file
 * mapped by several processes (libc by all) is one module, in a Dwfl of its own at bias 0 (opened
 * and indexed by reports/symbols/symfile.c): read once, and cached by (module, ELF address).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "clock.h"
#include "dwscopes.h"
#include "debugcache.h"
#include "symbols_int.h"
#include "vec.h"

static bool offline;

void symbols__offline(void)
{
	__atomic_store_n(&offline, true, __ATOMIC_RELEASE);
	elfcache__offline();
}

/*
 * Whether libdwfl may map fd (it maps the debug files it is given): not where someone else could
 * truncate the file meanwhile, which would raise SIGBUS in whatever read it next. Only its owner
 * may write it, and that is this process's user or root.
 */
static bool map_safe(int fd)
{
	struct stat st;

	return !fstat(fd, &st) && S_ISREG(st.st_mode) && !(st.st_mode & (S_IWGRP | S_IWOTH)) &&
	       (st.st_uid == 0 || st.st_uid == geteuid());
}

/*
 * debuginfod, which libdwfl asks once its local searches found nothing
 * (dwfl_standard_find_debuginfo), at most once a build-id in a process: libdebuginfod caches
 * what it gives, not what failed or was cut, and every Dwfl that opens the file (its names, each
 * process's unwinding, again after a let-go) asked anew, DEBUGINFOD_MAXTIME each time. And for
 * SYM_DEBUGINFOD_TOTAL_S in all: each download gets DEBUGINFOD_MAXTIME or what is left of those,
 * the lesser. libdebuginfod reads both variables at every request, so a request is steered by
 * them: no DEBUGINFOD_URLS, no request (the local searches still run). Only a report gets here
 * (the recorder is offline), and it is one thread; the lock keeps the list whole regardless.
 */
static struct {
	pthread_mutex_t lock;
	bool init;
	char *urls;	 /* DEBUGINFOD_URLS as given; NULL: no server to ask */
	char per_s[24];	 /* DEBUGINFOD_MAXTIME as given, or ours */
	long per;	 /* its value in seconds, 0: unbounded */
	__u64 spent_ns;	 /* in requests */
	bool said_spent; /* the total was spent, said */
	struct sym_build_id {
		__u8 id[SYM_BUILD_ID_MAX];
		int len;
	} * failed; /* build-ids debuginfod was asked for and did not give */
	size_t nfailed, capfailed;
} dinfod = { .lock = PTHREAD_MUTEX_INITIALIZER };

static bool dinfod_failed(const unsigned char *bits, int len)
{
	for (size_t i = 0; i < dinfod.nfailed; i++)
		if (dinfod.failed[i].len == len && !memcmp(dinfod.failed[i].id, bits, len))
			return true;
	return false;
}

static void hex(char *out, const unsigned char *bits, int len)
{
	for (int i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", bits[i]);
}

static int find_debuginfo_online(Dwfl_Module *mod, void **userdata, const char *modname,
				 Dwarf_Addr base, const char *file_name, const char *debuglink_file,
				 GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	__u64 total = SYM_DEBUGINFOD_TOTAL_S * 1000000000ull, t0;
	char id[2 * SYM_BUILD_ID_MAX + 1], max[24];
	const unsigned char *bits;
	GElf_Addr vaddr;
	long left_s;
	int len, fd;

	len = dwfl_module_build_id(mod, &bits, &vaddr);
	pthread_mutex_lock(&dinfod.lock);
	if (!dinfod.init) {
		const char *u = getenv("DEBUGINFOD_URLS"), *m = getenv("DEBUGINFOD_MAXTIME");

		dinfod.init = true;
		dinfod.urls = u && *u ? strdup(u) : NULL;
		snprintf(dinfod.per_s, sizeof(dinfod.per_s), "%s", m ?: SYM_DEBUGINFOD_MAXTIME);
		dinfod.per = atol(dinfod.per_s);
	}
	/* No server, or no build-id to ask by: libdwfl asks nothing. */
	if (!dinfod.urls || len <= 0 || len > SYM_BUILD_ID_MAX) {
		pthread_mutex_unlock(&dinfod.lock);
		return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
						    debuglink_file, debuglink_crc,
						    debuginfo_file_name);
	}
	hex(id, bits, len);
	left_s = dinfod.spent_ns < total ? (total - dinfod.spent_ns) / 1000000000ull : 0;
	if (dinfod_failed(bits, len) || left_s < 1) {
		bool known = dinfod_failed(bits, len);

		/* The local searches only. */
		unsetenv("DEBUGINFOD_URLS");
		fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
						  debuglink_file, debuglink_crc,
						  debuginfo_file_name);
		setenv("DEBUGINFOD_URLS", dinfod.urls, 1);
		if (fd < 0 && !known && !dinfod.said_spent) {
			fprintf(stderr,
				"gapscope: debuginfod: the report's %u s for debuginfod are spent: "
				"no more debug files asked for (build-id %s the first not asked)\n",
				SYM_DEBUGINFOD_TOTAL_S, id);
			dinfod.said_spent = true;
		}
		pthread_mutex_unlock(&dinfod.lock);
		return fd;
	}
	snprintf(max, sizeof(max), "%ld",
		 dinfod.per > 0 && dinfod.per < left_s ? dinfod.per : left_s);
	setenv("DEBUGINFOD_MAXTIME", max, 1);
	t0 = clock__mono_ns();
	fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
					  debuglink_crc, debuginfo_file_name);
	dinfod.spent_ns += clock__mono_ns() - t0;
	setenv("DEBUGINFOD_MAXTIME", dinfod.per_s, 1);
	/*
	 * Found nowhere, debuginfod included (its answer is fd: -ENOENT, not there; -ETIME, cut at
	 * DEBUGINFOD_MAXTIME; another error): not asked again. A download that was cut or failed
	 * is said; "not there" is what the symbols line says of the file.
	 */
	if (fd < 0 && !array__grow((void **)&dinfod.failed, &dinfod.capfailed,
				   sizeof(*dinfod.failed), dinfod.nfailed + 1, 16)) {
		struct sym_build_id *b = &dinfod.failed[dinfod.nfailed++];

		memcpy(b->id, bits, len);
		b->len = len;
		if (fd == -ETIME)
			fprintf(stderr,
				"gapscope: debuginfod: the debug file of build-id %s cut at %s s "
				"(DEBUGINFOD_MAXTIME, or what was left of the report's %u s): not "
				"asked again\n",
				id, max, SYM_DEBUGINFOD_TOTAL_S);
		else if (fd != -1 && fd != -ENOENT && fd != -ENOSYS)
			fprintf(stderr,
				"gapscope: debuginfod: no debug file for build-id %s: %s: not asked "
				"again\n",
				id, strerror(-fd));
	}
	pthread_mutex_unlock(&dinfod.lock);
	return fd;
}

static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	char path[PATH_MAX], *at;
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len, fd;

	if (!__atomic_load_n(&offline, __ATOMIC_ACQUIRE))
		return find_debuginfo_online(mod, userdata, modname, base, file_name,
					     debuglink_file, debuglink_crc, debuginfo_file_name);
	/* The build-id names its debug file: no CRC to check, nothing asked of anyone. */
	len = dwfl_module_build_id(mod, &bits, &vaddr);
	if (len < 2)
		return -1;
	at = path + snprintf(path, sizeof(path), SYM_DEBUG_ROOT "/.build-id/%02x/", bits[0]);
	for (int i = 1; i < len; i++)
		at += sprintf(at, "%02x", bits[i]);
	strcpy(at, ".debug");
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0 && !map_safe(fd)) {
		close(fd);
		fd = -1;
	}
	if (fd >= 0)
		*debuginfo_file_name = strdup(path);
	return fd;
}

int symbols__find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			    const char *file_name, const char *debuglink_file,
			    GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(mod, &bits, &vaddr), fd = -1;

	/* A compressed one's copy where a cache is kept (debugcache.h), made the first time. */
	if (len > 0 && (fd = debugcache__find(bits, len, debuginfo_file_name)) >= 0)
		return fd;
	fd = find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file, debuglink_crc,
			    debuginfo_file_name);
	if (fd >= 0 && len > 0)
		fd = debugcache__keep(fd, bits, len, debuginfo_file_name,
				      __atomic_load_n(&offline, __ATOMIC_ACQUIRE));
	return fd;
}

struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (s) {
		s->cache = calloc(SYM_CACHE_SIZE, sizeof(*s->cache));
		s->dm = demangler__new();
		s->files = elfcache__new();
	}
	if (!s || !s->cache || !s->dm || !s->files) {
		symbolizer__free(s);
		return NULL;
	}
	/*
	 * libdebuginfod bounds a download that makes no progress (DEBUGINFOD_TIMEOUT), not one that
	 * trickles: a server that sends a byte a second held a report without end. A file gets
	 * SYM_DEBUGINFOD_MAXTIME seconds unless the environment says otherwise.
	 */
	setenv("DEBUGINFOD_MAXTIME", SYM_DEBUGINFOD_MAXTIME, 0);
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
		.find_elf = elffile__find_elf,
		.find_debuginfo = symbols__find_debuginfo,
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
	if (array__grow((void **)&s->mods, &s->capmods, sizeof(*s->mods), s->nmods + 1, 64))
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

void symbolizer__forget(struct symbolizer *s, __u32 tgid)
{
	size_t k = 0;

	for (size_t i = 0; i < s->nvmas; i++)
		if (s->vmas[i].tgid != tgid)
			s->vmas[k++] = s->vmas[i];
	s->nvmas = k;
}

int symbolizer__add_map(struct symbolizer *s, __u32 tgid, const struct sym_map *m)
{
	size_t i, j;
	__u32 idx;

	if (!m || !m->path || m->end <= m->start)
		return -EINVAL;
	if (module_get(s, m, &idx) ||
	    array__grow((void **)&s->vmas, &s->capvmas, sizeof(*s->vmas), s->nvmas + 1, 64))
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
		symfile__open(s, mod);
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
	const char *sym = demangler__name(s->dm, symfile__symbol(s, mod, vaddr, false));
	Dwfl_Module *dm = symfile__dwfl(s, mod);
	Dwarf_Die *cu = NULL, scopes[SYM_MAX_FRAMES * 2];
	int line = 0, n = 0, nscopes = 0;
	const char *file = NULL;
	Dwarf_Addr bias;
	Dwfl_Line *l;

	l = dm ? dwfl_module_getsrc(dm, vaddr) : NULL;
	if (l)
		file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
	if (dm)
		cu = dwfl_module_addrdie(dm, vaddr, &bias);
	if (dm && !mod->debug_path) { /* a separate file is looked for with the DWARF */
		const char *debug = NULL;

		dwfl_module_info(dm, NULL, NULL, NULL, NULL, NULL, NULL, &debug);
		mod->debug_path = debug ? strdup(debug) : NULL;
	}
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
		const char *name = mod->state == SYM_FILE_OK ?
					   symfile__symbol(s, mod, key & ~SYM_DATA_KEY, true) :
					   NULL;

		/* Not where the file changed while the name was read. */
		f[0].function = mod->state == SYM_FILE_OK ? demangler__name(s->dm, name) : NULL;
		n = f[0].function ? 1 : 0;
	} else if (mod->state == SYM_FILE_OK) {
		n = module_frames(s, mod, key, f);
		/* The file changed while read: what was read of it now may be another's. */
		if (mod->state != SYM_FILE_OK) {
			f[0] = (struct sym_frame){ .module = mod->base, .offset = key };
			n = 1;
		}
	}
	if (!(key & SYM_DATA_KEY)) {
		mod->named += f[n - 1].function != NULL;
		mod->unnamed += !f[n - 1].function;
	}
	if (array__grow((void **)&s->frames, &s->capframes, sizeof(*s->frames), s->nframes + n, 64))
		return NULL;
	if (n) /* a data key without a name keeps none: there may be no array yet */
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
	s->stats.unmapped += module < 0;
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

const char *symbolizer__path(struct symbolizer *s, __u32 tgid, __u64 addr)
{
	__u64 vaddr;
	int module = addr_locate(s, tgid, addr, false, &vaddr);

	return module >= 0 ? s->mods[module].path : NULL;
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
	struct sym_module *mod = i < s->nmods ? &s->mods[i] : NULL;

	if (!mod)
		return false;
	/* Changed since it was read (said once): its names are in doubt, and no more are read. */
	if (mod->state == SYM_FILE_OK && elffile__changed(mod->file))
		mod->state = SYM_FILE_CHANGED;
	*f = (struct sym_file_info){ mod->path,	  mod->debug_path, mod->state,
				     mod->source, mod->named,	   mod->unnamed };
	return true;
}

void symbolizer__release_pages(struct symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nmods; i++)
		symfile__let_go(&s->mods[i]);
	elfcache__let_go(s->files);
	/* A file seen to change (said by the cache) names no more addresses. */
	for (size_t i = 0; i < s->nmods; i++)
		if (s->mods[i].state == SYM_FILE_OK && elffile__reader(s->mods[i].file)->changed)
			s->mods[i].state = SYM_FILE_CHANGED;
}

struct elfcache *symbolizer__files(struct symbolizer *s)
{
	return s->files;
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nmods; i++) {
		struct sym_module *mod = &s->mods[i];

		for (size_t k = 0; k < mod->nsyms; k++)
			free((char *)mod->syms[k].name);
		free(mod->syms);
		symfile__let_go(mod);
		elffile__put(mod->file);
		free(mod->debug_path);
		free(mod->path);
	}
	elfcache__free(s->files);
	free(s->mods);
	free(s->vmas);
	free(s->cache);
	free(s->frames);
	free(s->debug_dir);
	demangler__free(s->dm);
	free(s);
}
