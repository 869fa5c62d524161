// SPDX-License-Identifier: GPL-2.0
/* User stacks unwound from snapshots with libdwfl: see unwind.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <dwarf.h>
#include <gelf.h>
#include <elfutils/libdwfl.h>
#include <zstd.h>

#include "archived.h"
#include "decode.h"
#include "elfcache.h"
#include "names.h"
#include "symbols.h"
#include "unwind.h"
#include "vec.h"

#define UW_MAX_FRAMES GS_USTACK_MAX	      /* as many as a record holds, as the BPF walk takes */
#define UW_EXPIRE_NS  (1000ull * 1000 * 1000) /* a snapshot whose event did not come by then */
#define UW_STACK_SPAN (8ull << 20)	      /* above the snapshot, still the thread's stack */
#define UW_ROOT_DEPTH 4 /* outermost frames looked at for the thread's start */

enum uw_outcome { UW_COMPLETE, UW_TRUNCATED, UW_STOPPED };

struct uw_map {
	__u32 tgid;
	__u64 start, end, pgoff;
	char *path;
	__u8 build_id[32];
	__u32 build_id_len;
};

struct uw_proc {
	__u32 tgid;
	Dwfl *dwfl;
	struct elffile **files; /* those dwfl reports, held while it lives */
	size_t nfiles, capfiles;
	bool stale;  /* its maps changed since the Dwfl was built, or it was let go */
	bool failed; /* no Dwfl could be built for these maps */
};

struct uw_pending {
	__u32 tid, type;
	__u64 ts, end;
	__u8 outcome, n;
	bool done; /* its event came */
	__u64 ip[UW_MAX_FRAMES];
};

struct unwinder {
	struct names *nm;
	struct elfcache *files;		/* the symbolizer's (names__files): each file read once */
	struct report_archive *archive; /* NULL: none */
	bool enabled;
	char *debuginfo_path;
	Dwfl_Callbacks cb;
	Dwfl_Thread_Callbacks tcb;
	struct uw_map *maps;
	size_t nmaps, capmaps;
	struct uw_proc *procs;
	size_t nprocs, capprocs;
	struct uw_pending pend[UNWIND_PENDING];
	size_t npend;
	/* The snapshot being unwound. */
	Dwfl *cur_dwfl;
	__u32 cur_tid;
	const struct ustack_snap_event *snap;
	__u8 stack[GS_SNAP_MAX]; /* its bytes, pending uretprobes' return addresses put back */
	__u64 sp, len;
	bool ran_off;	  /* a read past the snapshot's end failed */
	bool read_failed; /* any read failed: the end libdwfl reports is not the outermost frame */
	__u64 frames[UW_MAX_FRAMES];
	unsigned int nframes;
	/* The event rebuilt with the unwound frames. */
	void *rec;
	size_t caprec;
	struct stack_counts counts;
	/* unwinder__set_budget(): a token bucket on the snapshots' own timestamps */
	unsigned int per_s;
	double tokens;
	__u64 last_ts;
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp);
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg);
static bool set_initial_registers(Dwfl_Thread *thread, void *arg);

struct unwinder *unwinder__new(struct names *nm, bool enabled)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->nm = nm;
	u->files = names__files(nm);
	u->enabled = enabled && u->files;
	u->cb = (Dwfl_Callbacks){
		.find_elf = elffile__find_elf,
		.find_debuginfo = symbols__find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &u->debuginfo_path,
	};
	u->tcb = (Dwfl_Thread_Callbacks){
		.next_thread = next_thread,
		.memory_read = memory_read,
		.set_initial_registers = set_initial_registers,
	};
	return u;
}

/* Ends p's Dwfl and lets go of the files it held. */
static void proc_end(struct uw_proc *p)
{
	dwfl_end(p->dwfl);
	p->dwfl = NULL;
	for (size_t i = 0; i < p->nfiles; i++)
		elffile__put(p->files[i]);
	p->nfiles = 0;
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nprocs; i++) {
		proc_end(&u->procs[i]);
		free(u->procs[i].files);
	}
	for (size_t i = 0; i < u->nmaps; i++)
		free(u->maps[i].path);
	free(u->procs);
	free(u->maps);
	free(u->rec);
	free(u);
}

void unwinder__release_pages(struct unwinder *u)
{
	for (size_t i = 0; u && i < u->nprocs; i++) {
		if (u->procs[i].dwfl)
			u->procs[i].stale = true;
		proc_end(&u->procs[i]);
	}
}

void unwinder__forget(struct unwinder *u, __u32 tgid)
{
	size_t k = 0;

	for (size_t i = 0; i < u->nmaps; i++) {
		if (u->maps[i].tgid == tgid) {
			free(u->maps[i].path);
			continue;
		}
		u->maps[k++] = u->maps[i];
	}
	u->nmaps = k;
	k = 0;
	for (size_t i = 0; i < u->nprocs; i++) {
		if (u->procs[i].tgid == tgid) {
			proc_end(&u->procs[i]);
			free(u->procs[i].files);
			continue;
		}
		u->procs[k++] = u->procs[i];
	}
	u->nprocs = k;
}

void unwinder__set_budget(struct unwinder *u, unsigned int per_s)
{
	u->per_s = per_s;
	u->tokens = per_s;
}

/* Whether the snapshot at ts may be unwound, within the budget. */
static bool budget_take(struct unwinder *u, __u64 ts)
{
	if (!u->per_s)
		return true;
	if (ts > u->last_ts) {
		u->tokens += (double)(ts - u->last_ts) * u->per_s / 1e9;
		if (u->tokens > u->per_s)
			u->tokens = u->per_s;
		u->last_ts = ts;
	}
	if (u->tokens < 1.0) {
		u->counts.over_budget++;
		return false;
	}
	u->tokens -= 1.0;
	return true;
}

void unwinder__set_archive(struct unwinder *u, struct report_archive *a)
{
	u->archive = a;
}

static struct uw_proc *proc_get(struct unwinder *u, __u32 tgid)
{
	struct uw_proc *p;

	for (size_t i = 0; i < u->nprocs; i++)
		if (u->procs[i].tgid == tgid)
			return &u->procs[i];
	if (array__grow((void **)&u->procs, &u->capprocs, sizeof(*u->procs), u->nprocs + 1, 8))
		return NULL;
	p = &u->procs[u->nprocs++];
	*p = (struct uw_proc){ .tgid = tgid, .stale = true };
	return p;
}

/* A file mapping of a process; those it overlaps are gone (munmap and mmap, or exec). */
void unwinder__add_map(struct unwinder *u, const struct gs_rec_map *m)
{
	size_t fixed = gs_fixed_size(&m->h), len, k = 0;
	struct uw_proc *p;

	if (!u->enabled || fixed <= sizeof(*m) || m->end <= m->start)
		return;
	len = strnlen(m->path, fixed - sizeof(*m));
	if (!len || m->path[0] != '/' || !(p = proc_get(u, m->h.tgid)))
		return;
	for (size_t i = 0; i < u->nmaps; i++) {
		struct uw_map *x = &u->maps[i];

		if (x->tgid == m->h.tgid && x->start < m->end && m->start < x->end) {
			free(x->path);
			continue;
		}
		u->maps[k++] = *x;
	}
	u->nmaps = k;
	if (array__grow((void **)&u->maps, &u->capmaps, sizeof(*u->maps), u->nmaps + 1, 64))
		return;
	u->maps[u->nmaps] = (struct uw_map){ .tgid = m->h.tgid,
					     .start = m->start,
					     .end = m->end,
					     .pgoff = m->pgoff,
					     .path = strndup(m->path, len) };
	if (m->build_id_len <= sizeof(m->build_id)) {
		u->maps[u->nmaps].build_id_len = m->build_id_len;
		memcpy(u->maps[u->nmaps].build_id, m->build_id, m->build_id_len);
	}
	if (u->maps[u->nmaps].path)
		u->nmaps++;
	p->stale = true;
}

/* The 8 bytes at addr of a loaded segment of the file mapped there, as the file holds them. */
static bool file_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *out)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, addr);
	GElf_Addr bias;
	void **ud;

	return mod && dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL) && *ud &&
	       dwfl_module_getelf(mod, &bias) && elffile__read(*ud, addr - bias, out, 8);
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct unwinder *u = arg;

	if (addr >= u->sp && addr - u->sp + 8 <= u->len) {
		memcpy(result, u->stack + (addr - u->sp), 8);
		return true;
	}
	if (file_read(dwfl, addr, result))
		return true;
	u->read_failed = true;
	/* Past a snapshot that was cut at the size asked for: the stack goes on, unread. */
	if (addr >= u->sp + u->len && addr < u->sp + UW_STACK_SPAN && u->len >= u->snap->want)
		u->ran_off = true;
	return false;
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct unwinder *u = arg;

	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return u->cur_tid;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct unwinder *u = arg;
	Dwarf_Word regs[GS_SNAP_NREGS];

	for (int i = 0; i < GS_SNAP_NREGS; i++)
		regs[i] = u->snap->regs[i];
	if (!dwfl_thread_state_registers(thread, 0, GS_SNAP_NREGS, regs))
		return false;
	dwfl_thread_state_register_pc(thread, u->snap->regs[GS_SNAP_REG_IP]);
	return true;
}

/*
 * The process's Dwfl: each mapped file reported once, at the load address of its mapping of
 * the lowest file offset (the ELF header's), as the dynamic loader placed it.
 */
static Dwfl *proc_dwfl(struct unwinder *u, struct uw_proc *p)
{
	Dwfl *d;
	int nmods = 0;

	if (!p->stale)
		return p->failed ? NULL : p->dwfl;
	proc_end(p);
	p->stale = false;
	p->failed = true;
	d = dwfl_begin(&u->cb);
	if (!d)
		return NULL;
	dwfl_report_begin(d);
	for (size_t i = 0; i < u->nmaps; i++) {
		const struct uw_map *m = &u->maps[i];
		const char *base = strrchr(m->path, '/') + 1, *file;
		bool first = m->tgid == p->tgid;
		struct elffile *f;

		for (size_t j = 0; j < u->nmaps && first; j++) {
			const struct uw_map *o = &u->maps[j];

			if (j != i && o->tgid == m->tgid && !strcmp(o->path, m->path) &&
			    (o->pgoff < m->pgoff || (o->pgoff == m->pgoff && j < i)))
				first = false;
		}
		if (!first)
			continue;
		/* The file mapped where it is here and that build, else the one archived. */
		file = report_archive__choose(u->archive, m->path, m->build_id, m->build_id_len);
		if (array__grow((void **)&p->files, &p->capfiles, sizeof(*p->files), p->nfiles + 1,
				16) ||
		    !(f = elfcache__get(u->files, file)))
			continue;
		/* Read, not mapped (elfcache.h); a file that changed is unwound through no more. */
		if (elffile__changed(f) ||
		    !elffile__report(f, d, base, m->start - m->pgoff, false)) {
			elffile__put(f);
			continue;
		}
		p->files[p->nfiles++] = f;
		nmods++;
	}
	dwfl_report_end(d, NULL, NULL);
	p->dwfl = d;
	if (!nmods || !dwfl_attach_state(d, NULL, p->tgid, &u->tcb, u)) {
		proc_end(p);
		return NULL;
	}
	p->dwfl = d;
	p->failed = false;
	return d;
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct unwinder *u = arg;
	Dwarf_Addr pc;
	bool activation;

	if (u->nframes >= UW_MAX_FRAMES || !dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	/* Return addresses, as a frame-pointer walk gives them (names take one off): an exact
	 * address past the first (a signal frame's) is stored one on. */
	u->frames[u->nframes] = u->nframes && activation ? pc + 1 : pc;
	u->nframes++;
	return DWARF_CB_OK;
}

static bool is_root(const char *name)
{
	static const char *const roots[] = { "start_thread",
					     "clone3",
					     "__clone3",
					     "clone",
					     "__clone",
					     "main",
					     "_start",
					     "__libc_start_main",
					     "__libc_start_call_main" };

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if (!strcmp(name, roots[i]))
			return true;
	return false;
}

/* Whether one of a stack's outermost frames is where a thread or the program starts. */
static bool reaches_root(struct unwinder *u, __u32 tgid, const __u64 *ip, unsigned int n)
{
	for (unsigned int i = n > UW_ROOT_DEPTH ? n - UW_ROOT_DEPTH : 0; i < n; i++)
		if (is_root(names__user(u->nm, tgid, ip[i], i == 0)))
			return true;
	return false;
}

/* Unwinds the snapshot into a pending slot (the oldest gives way when all are taken). */
static void snapshot(struct unwinder *u, const struct gs_hdr *h)
{
	const struct ustack_snap_event *s = gs_snap(h);
	struct uw_pending *pe;
	struct uw_proc *p;
	int rc;

	size_t stored = s && (h->flags & GS_SNAP_F_ZSTD) ? s->zlen : s ? s->len : 0;

	if (!s || s->len > GS_SNAP_MAX || sizeof(*s) + stored > gs_fixed_size(h))
		return;
	if (u->npend == UNWIND_PENDING) {
		memmove(&u->pend[0], &u->pend[1], (UNWIND_PENDING - 1) * sizeof(u->pend[0]));
		u->npend--;
	}
	pe = &u->pend[u->npend];
	*pe = (struct uw_pending){ .tid = h->tid,
				   .type = s->of_type,
				   .ts = h->ts,
				   .end = s->end_ns,
				   .outcome = UW_STOPPED };
	u->npend++;
	p = proc_get(u, h->tgid);
	u->cur_dwfl = p ? proc_dwfl(u, p) : NULL;
	if (!u->cur_dwfl)
		return;
	u->snap = s;
	u->cur_tid = h->tid;
	u->sp = s->regs[GS_SNAP_REG_SP];
	u->len = s->len;
	u->ran_off = u->read_failed = false;
	u->nframes = 0;
	if (!(h->flags & GS_SNAP_F_ZSTD))
		memcpy(u->stack, s + 1, s->len);
	else if (ZSTD_decompress(u->stack, sizeof(u->stack), s + 1, s->zlen) != s->len)
		return; /* damaged: the event keeps its frame-pointer stack */
	for (__u32 i = 0; i < s->nri && i < GS_SNAP_NRI; i++)
		if (s->ri_slot[i] >= u->sp && s->ri_slot[i] - u->sp + 8 <= u->len)
			memcpy(u->stack + (s->ri_slot[i] - u->sp), &s->ri_ret[i], 8);
	rc = dwfl_getthread_frames(u->cur_dwfl, h->tid, frame_cb, u);
	pe->n = u->nframes;
	memcpy(pe->ip, u->frames, u->nframes * sizeof(u->frames[0]));
	/* An unreadable return address ends the walk as the outermost frame does: rc 0 alone
	 * says little. */
	if (reaches_root(u, h->tgid, pe->ip, pe->n))
		pe->outcome = UW_COMPLETE;
	else if (u->ran_off)
		pe->outcome = UW_TRUNCATED;
	else if (rc == 0 && !u->read_failed)
		pe->outcome = UW_COMPLETE;
}

/* The event with the pending snapshot's frames for its user stack; NULL when out of memory. */
static const struct gs_hdr *rebuild(struct unwinder *u, const struct gs_hdr *h,
				    const struct uw_pending *pe)
{
	size_t fixed = gs_fixed_size(h), size = fixed + 8 * ((size_t)pe->n + h->kstack_n);
	struct gs_hdr *r;

	if (size > u->caprec) {
		void *n = realloc(u->rec, size);

		if (!n)
			return NULL;
		u->rec = n;
		u->caprec = size;
	}
	r = u->rec;
	memcpy(r, h, fixed);
	memcpy((char *)r + fixed, pe->ip, 8 * (size_t)pe->n);
	memcpy((char *)r + fixed + 8 * (size_t)pe->n, gs_kstack(h), 8 * (size_t)h->kstack_n);
	r->size = size;
	r->ustack_n = pe->n;
	/* The unwound stack starts where the snapshot was taken: no frame is missing from it. */
	r->flags &= ~GS_F_ENTRY_STACK;
	return r;
}

const struct gs_hdr *unwinder__feed(struct unwinder *u, const struct gs_hdr *h)
{
	const struct gs_hdr *out = h;
	struct uw_pending *pe = NULL;
	size_t k = 0;

	if (h->type == GS_EV_USTACK_SNAP) {
		if (u->enabled && budget_take(u, h->ts))
			snapshot(u, h);
		return h;
	}
	if (h->type != GS_EV_FUTEX && h->type != GS_EV_OFFCPU && h->type != GS_EV_SAMPLE &&
	    (h->type != GS_EV_PROBE || !(h->flags & GS_F_RET)))
		return h;
	for (size_t i = 0; i < u->npend && !pe; i++)
		if (u->pend[i].tid == h->tid && u->pend[i].type == h->type &&
		    u->pend[i].ts == h->ts)
			pe = &u->pend[i];
	if (pe) {
		u->counts.captured++;
		u->counts.complete += pe->outcome == UW_COMPLETE;
		u->counts.truncated += pe->outcome == UW_TRUNCATED;
		u->counts.stopped += pe->outcome == UW_STOPPED;
		if (pe->n && (pe->outcome == UW_COMPLETE || pe->n > h->ustack_n))
			out = rebuild(u, h, pe) ?: h;
		pe->done = true;
	} else if (h->ustack_n) {
		u->counts.fp_only++;
		u->counts.fp_complete += reaches_root(u, h->tgid, gs_ustack(h), h->ustack_n);
	}
	/* The one used goes, and those whose event never came. */
	for (size_t i = 0; i < u->npend; i++)
		if (!u->pend[i].done && u->pend[i].end + UW_EXPIRE_NS >= h->ts)
			u->pend[k++] = u->pend[i];
	u->npend = k;
	return out;
}

const struct stack_counts *unwinder__counts(const struct unwinder *u)
{
	return &u->counts;
}
