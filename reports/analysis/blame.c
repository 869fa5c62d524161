// SPDX-License-Identifier: GPL-2.0
/* Blame chains across wakers and lock owners: see blame.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actionable.h"
#include "blame.h"
#include "blame_int.h"
#include "causes.h"
#include "cgroups.h"
#include "idlesplit.h"
#include "kinds.h"
#include "offcpu.h"
#include "tasks.h"

void blame__set_tasks(struct blame *b, struct tasks *t)
{
	b->tasks = t;
}

__u64 blame__task_hops_cut(const struct blame *b)
{
	return b->task_hops_cut;
}

void blame__set_cgroups(struct blame *b, struct cgroups *c)
{
	b->cg = c;
}

struct blame *blame__new(struct threads *th, struct names *nm, struct strtab *strs,
			 unsigned int max_hops)
{
	struct blame *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->th = th;
	b->nm = nm;
	b->strs = strs;
	b->max_hops = max_hops < 1 ? 1 : max_hops > MAX_HOPS ? MAX_HOPS : max_hops;
	return b;
}

void blame__set_arch(struct blame *b, enum gs_arch arch)
{
	b->arch = arch;
}

void blame__free(struct blame *b)
{
	if (b)
		free(b->all);
	free(b);
}

const char *blame__keyed(struct blame *b, const char *fallback, const char *fmt, ...)
{
	char buf[256];
	const char *s;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if ((s = strtab__find(b->strs, buf)))
		return s;
	if (b->keyed >= BLAME_KEYED_MAX) {
		b->keyed_evicted++;
		return fallback;
	}
	b->keyed++;
	return strtab__intern(b->strs, buf);
}

__u64 blame__names_evicted(const struct blame *b)
{
	return b ? b->keyed_evicted : 0;
}

/* A stack's user frames, leaf first, named; n of them. */
static __u32 stack_names(struct blame *b, __u32 stack, const char **out, __u32 max)
{
	struct stack_view v = stacktab__get(threads__stacks(b->th), stack);
	__u32 n = 0;

	for (__u32 i = 0; i < v.nu && n < max; i++)
		out[n++] = names__user(b->nm, v.tgid, v.user[i], i == 0);
	return n;
}

static __u32 kstack_names(struct blame *b, __u32 stack, const char **out, __u32 max)
{
	struct stack_view v = stacktab__get(threads__stacks(b->th), stack);
	__u32 n = 0;

	for (__u32 i = 0; i < v.nk && n < max; i++)
		out[n++] = names__kernel(b->nm, v.kern[i]);
	return n;
}

/*
 * CPython's GIL: its mutex and conditions are in _PyRuntime (3.11's ceval state; from 3.12 the
 * main interpreter's, which _PyRuntime holds). Named for what it is, with the interpreter the
 * waiting stack ran in: "GIL (python3.11)".
 */
static const char *gil_name(struct blame *b, const struct stack_view *v)
{
	for (__u32 i = 0; i < v->nu; i++) {
		bool named;
		const char *m = names__user_module(b->nm, v->tgid, v->user[i], i == 0, &named);

		if (m && (!strncmp(m, "python", 6) || !strncmp(m, "libpython", 9)))
			return strtab__internf(b->strs, "GIL (%s)", m);
	}
	return "GIL";
}

/* The name of a lock or condition: its data symbol, else the function that waited on it. */
static const char *lock_name(struct blame *b, const struct thread *th, const struct th_futex *f)
{
	const char *d = names__data(b->nm, th->tgid, f->uaddr);
	struct stack_view v = stacktab__get(threads__stacks(b->th), f->stack);

	if (d && !strcmp(d, "_PyRuntime"))
		return gil_name(b, &v);
	if (d)
		return d;
	for (__u32 i = 0; i < v.nu; i++)
		if (!names__in_libc(b->nm, v.tgid, v.user[i]))
			return strtab__internf(b->strs, "by %s",
					       names__user(b->nm, v.tgid, v.user[i], i == 0));
	return blame__keyed(b, "a lock (its address not kept)", "0x%llx",
			    (unsigned long long)f->uaddr);
}

int blame__push_link(struct blame *b, const struct thread *th, enum thread_state st,
		     enum blame_kind kind, const char *lock, const char *fn, const char *detail,
		     __u32 stack)
{
	struct path_link *p = &b->path[b->depth];
	const char *leaf_first[MAX_FRAMES];
	__u32 n = stack_names(b, stack, leaf_first, MAX_FRAMES);

	memset(p, 0, sizeof(*p));
	p->l.tid = th->tid;
	p->l.comm = th->comm;
	p->l.state = st;
	p->l.kind = kind;
	p->l.lock = lock;
	p->l.function = fn;
	p->l.detail = detail;
	for (__u32 i = 0; i < n; i++)
		p->frames_folded[i] = leaf_first[n - 1 - i];
	p->nfolded = n;
	b->depth++;
	return 0;
}

static bool link_eq(const struct chain_link *x, const struct chain_link *y)
{
	return x->tid == y->tid && x->kind == y->kind && x->state == y->state &&
	       x->lock == y->lock && x->function == y->function && x->detail == y->detail &&
	       x->task == y->task;
}

/* ns of a root into its breakdown by (leaf, line). */
static int root__add_part(struct gap_root *r, const char *leaf, const char *line, __u64 ns)
{
	for (__u32 i = 0; i < r->nparts; i++)
		if (r->parts[i].leaf == leaf && r->parts[i].line == line) {
			r->parts[i].ns += ns;
			return 0;
		}
	if (r->nparts == r->capparts) {
		__u32 cap = r->capparts ? 2 * r->capparts : 4;
		struct root_part *p = realloc(r->parts, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		r->parts = p;
		r->capparts = cap;
	}
	r->parts[r->nparts++] = (struct root_part){ leaf, line, ns };
	return 0;
}

/* A piece of the closer's timeline opens: the roots found until the next are under it. */
static int seg__open(struct blame *b, __u64 s, __u64 e, enum seg_how how, __u64 futex)
{
	struct gap_seg *g = vec__push(&b->segs, sizeof(*g));

	if (!g)
		return -ENOMEM;
	*g = (struct gap_seg){
		.start = s, .end = e, .how = how, .futex = futex, .first = b->seg_parts.n
	};
	b->seg = b->segs.n;
	return 0;
}

/* ns of root (its order) under the open piece. */
static int seg__add(struct blame *b, __u32 root, __u64 ns)
{
	struct gap_seg *g = VEC_AT(&b->segs, struct gap_seg, b->seg - 1);
	struct gap_seg_part *p =
		g->nparts ? VEC_AT(&b->seg_parts, struct gap_seg_part, b->seg_parts.n - 1) : NULL;

	if (p && p->root == root) {
		p->ns += ns;
		return 0;
	}
	if (!(p = vec__push(&b->seg_parts, sizeof(*p))))
		return -ENOMEM;
	p->root = root;
	p->ns = ns;
	g->nparts++;
	return 0;
}

/* The path as it stands (the root is the top link) explains ns; its folded stack too. */
static int add_root(struct blame *b, __u64 ns, const char *const *extra, __u32 nextra)
{
	const char *frames[MAX_FOLDED];
	const char *leaf = b->root_leaf, *line = b->root_line;
	struct fault_span span = b->root_span;
	struct gap_root *r = NULL;
	struct gap_stack *s;
	__u32 n = 0;

	b->root_leaf = b->root_line = NULL;
	b->root_span = (struct fault_span){};
	if (!ns)
		return 0;
	for (size_t i = 0; i < b->roots.n && !r; i++) {
		struct gap_root *c = VEC_AT(&b->roots, struct gap_root, i);
		__u32 k;

		if (c->nlinks != b->depth)
			continue;
		for (k = 0; k < b->depth && link_eq(&c->links[k], &b->path[k].l); k++)
			;
		if (k == b->depth)
			r = c;
	}
	if (!r) {
		r = vec__push(&b->roots, sizeof(*r));
		if (!r || !(r->links = calloc(b->depth, sizeof(*r->links))))
			return -ENOMEM;
		r->nlinks = b->depth;
		r->order = b->roots.n - 1;
		for (__u32 k = 0; k < b->depth; k++) {
			const struct path_link *p = &b->path[k];
			const char **fr = p->nfolded ? malloc(p->nfolded * sizeof(*fr)) : NULL;

			r->links[k] = p->l;
			if (!fr)
				continue;
			for (__u32 i = 0; i < p->nfolded; i++) /* leaf first */
				fr[i] = p->frames_folded[p->nfolded - 1 - i];
			r->links[k].frames = fr;
			r->links[k].nframes = p->nfolded;
		}
	}
	r->ns += ns;
	fault_span__add(&r->span, &span);
	if ((leaf || line) && root__add_part(r, leaf, line, ns))
		return -ENOMEM;
	if (b->seg && seg__add(b, r->order, ns))
		return -ENOMEM;

	/* Folded: closer;frames;[lock X];--;[held by Y];Y's frames;...;extra (leaf) */
	frames[n++] = b->path[0].l.comm;
	for (__u32 k = 0; k < b->depth && n < MAX_FOLDED - 8; k++) {
		const struct path_link *p = &b->path[k];

		for (__u32 i = 0; i < p->nfolded && n < MAX_FOLDED - 8; i++)
			frames[n++] = p->frames_folded[i];
		if (k + 1 == b->depth)
			break;
		if (p->l.kind == BK_LOCK)
			frames[n++] = strtab__internf(b->strs, "[lock %s]", p->l.lock);
		else
			frames[n++] = strtab__internf(b->strs, "[cond %s]", p->l.lock);
		frames[n++] = "--";
		frames[n++] = strtab__internf(b->strs, "[%s]", p->l.detail);
	}
	for (__u32 i = 0; i < nextra && n < MAX_FOLDED; i++)
		frames[n++] = extra[i];
	for (size_t i = 0; i < b->stacks.n; i++) {
		s = VEC_AT(&b->stacks, struct gap_stack, i);
		if (s->nframes == n && !memcmp(s->frames, frames, n * sizeof(*frames))) {
			s->ns += ns;
			return 0;
		}
	}
	s = vec__push(&b->stacks, sizeof(*s));
	if (!s || !(s->frames = malloc(n * sizeof(*frames))))
		return -ENOMEM;
	memcpy(s->frames, frames, n * sizeof(*frames));
	s->nframes = n;
	s->ns = ns;
	return 0;
}

/*
 * Memory work a sample was in: its system call, by the kernel's handler (root first, so that an
 * exec's own mappings stay the exec's; the mapping calls' inner functions stand for a handler
 * inlined into the dispatch), else a user leaf that is libc's wrapper of it. Heap growth (brk,
 * and mprotect: glibc grows an arena by opening its reserved pages), fresh mappings and
 * unmapping are the allocator's cost, not the function's own work: the leaf says which, the row
 * stays the caller's. NULL: none.
 */
static const struct {
	const char *call, *leaf;
} mem_calls[] = {
	{ "brk", "heap growth (brk)" },
	{ "mprotect", "heap growth (mprotect)" },
	{ "mmap", "fresh memory (mmap)" },
	{ "munmap", "unmapping (munmap)" },
};

static const char *memory_call(const char *fn, size_t len)
{
	static const char *const entries[] = { "__x64_sys_", "__arm64_sys_", "__do_sys_",
					       "__se_sys_" };
	static const struct {
		const char *fn;
		__u32 call;
	} inner[] = {
		{ "ksys_mmap_pgoff", 2 },
		{ "vm_mmap_pgoff", 2 },
		{ "__vm_munmap", 3 },
		{ "do_mprotect_pkey", 1 },
	};

	for (size_t i = 0; i < sizeof(inner) / sizeof(inner[0]); i++)
		if (strlen(inner[i].fn) == len && !strncmp(fn, inner[i].fn, len))
			return mem_calls[inner[i].call].leaf;
	for (size_t j = 0; j < sizeof(entries) / sizeof(entries[0]); j++) {
		size_t n = strlen(entries[j]);

		if (len < n || strncmp(fn, entries[j], n))
			continue;
		for (size_t c = 0; c < sizeof(mem_calls) / sizeof(mem_calls[0]); c++)
			if (strlen(mem_calls[c].call) == len - n &&
			    !strncmp(fn + n, mem_calls[c].call, len - n))
				return mem_calls[c].leaf;
		return ""; /* another system call's */
	}
	return NULL;
}

static const char *memory_leaf(const char *const *kern, __u32 nk, const char *uleaf)
{
	static const char *const wrappers[] = { "%s", "__%s", "%s64", "__%s64" };
	char name[64];

	for (__u32 i = nk; i-- > 0;) { /* kernel names end in "_[k]" */
		size_t len = strlen(kern[i]);
		const char *leaf;

		if (len > 4 && !strcmp(kern[i] + len - 4, "_[k]"))
			len -= 4;
		if ((leaf = memory_call(kern[i], len)))
			return *leaf ? leaf : NULL;
	}
	for (size_t c = 0; uleaf && c < sizeof(mem_calls) / sizeof(mem_calls[0]); c++)
		for (size_t j = 0; j < sizeof(wrappers) / sizeof(wrappers[0]); j++) {
			snprintf(name, sizeof(name), wrappers[j], mem_calls[c].call);
			if (!strcmp(uleaf, name))
				return mem_calls[c].leaf;
		}
	return NULL;
}

/* A root link on top of the path, its stack's frames on the folded line, then popped. */
int blame__root(struct blame *b, const struct thread *th, enum thread_state st,
		enum blame_kind kind, const char *fn, const char *detail, __u32 stack, __u64 ns,
		const char *const *extra, __u32 nextra)
{
	int err;

	blame__push_link(b, th, st, kind, NULL, fn, detail, stack);
	err = add_root(b, ns, extra, nextra);
	b->depth--;
	return err;
}

int blame__root_cpu(struct blame *b, const struct thread *th, const struct actionable *act,
		    const char *detail, __u32 stack, __u64 ns, const char *const *extra,
		    __u32 nextra)
{
	const char *mem = memory_leaf(NULL, 0, act->leaf);

	b->root_leaf = mem ? mem : act->leaf;
	b->root_line = act->line;
	return blame__root(b, th, TS_ON_CPU, BK_ON_CPU, act->name, detail, stack, ns, extra,
			   nextra);
}

/*
 * On-CPU time [s, e): split over the thread's samples in it, by stack. Time too short to hold a
 * sample inside a task's poll (a worker thread preempted often, its CPU in slivers between the
 * ticks) is split over the samples of that poll: the same task's work.
 */
static int on_cpu(struct blame *b, const struct thread *th, __u64 s, __u64 e)
{
	size_t k0 = thread__first_sample(th, s), k1 = k0, nsmp;
	const char *frames[MAX_FRAMES], *rootfirst[MAX_FRAMES];
	__u64 ps, pe;
	int err = 0;

	while (k1 < th->samples.n && VEC_AT(&th->samples, struct th_sample, k1)->ts < e)
		k1++;
	nsmp = k1 - k0;
	if (!nsmp && tasks__poll_around(b->tasks, th->tid, s, e, &ps, &pe)) {
		k0 = k1 = thread__first_sample(th, ps);
		while (k1 < th->samples.n && VEC_AT(&th->samples, struct th_sample, k1)->ts < pe)
			k1++;
		nsmp = k1 - k0;
	}
	if (!nsmp)
		return blame__unsampled(b, th, s, e);
	for (size_t k = k0; k < k1; k++) {
		const struct th_sample *smp = VEC_AT(&th->samples, struct th_sample, k);
		__u32 nk = kstack_names(b, smp->stack, frames, MAX_FRAMES);
		__u64 share = (e - s) / nsmp + (k == k0 ? (e - s) % nsmp : 0);
		struct stack_view v = stacktab__get(threads__stacks(b->th), smp->stack);
		struct actionable act;
		const char *mem;

		/* User frames come with the link (root first); kernel frames go above them. */
		for (__u32 i = 0; i < nk; i++)
			rootfirst[i] = frames[nk - 1 - i];
		/* Named by the frame a user can act on; a kernel-only stack by its leaf. */
		if (!stack__actionable(b->nm, b->strs, v.tgid, v.user, v.nu, &act))
			act.name = act.leaf = nk ? frames[0] : NULL;
		else if ((mem = memory_leaf(frames, nk, act.leaf)))
			act.leaf = mem; /* the row stays the caller's: "heap growth (mprotect)" */
		err = blame__root_cpu(b, th, &act, NULL, smp->stack, share, rootfirst, nk);
		if (err)
			return err;
	}
	return 0;
}

bool blame__on_path(const struct blame *b, __u32 tid)
{
	for (__u32 k = 0; k < b->depth; k++)
		if (b->path[k].l.tid == tid)
			return true;
	return false;
}

/* A blocked wait: follow the next thread, or end the chain at the wait itself. */
static int follow(struct blame *b, const struct thread *th, enum blame_kind kind, const char *lock,
		  __u32 next_tid, const char *next_comm, bool held, __u32 stack, __u64 s, __u64 e)
{
	const struct thread *nx = next_tid ? threads__find(b->th, next_tid) : NULL;
	const char *who = nx ? nx->comm : next_comm ? next_comm : "?";
	const char *detail = strtab__internf(b->strs, "%s %s", held ? "held by" : "woken by", who);
	int err;

	if (!nx || blame__on_path(b, nx->tid) || b->depth + 1 >= b->max_hops) {
		blame__push_link(b, th, TS_BLOCKED, kind, lock, NULL, detail, stack);
		b->path[b->depth - 1].l.kind = kind;
		{
			const char *x = strtab__internf(b->strs, "[%s %s]",
							kind == BK_LOCK ? "lock" : "cond", lock);

			err = add_root(b, e - s, &x, 1);
		}
		b->depth--;
		return err;
	}
	blame__push_link(b, th, TS_BLOCKED, kind, lock, NULL, detail, stack);
	err = blame__explain(b, nx, s, e);
	b->depth--;
	return err;
}

/*
 * A mutex wait: the owner at its start held the lock until it woke another waiter on the same
 * word, who then held it, and so on: each holder explains its part of the wait.
 */
static int lock_wait(struct blame *b, const struct thread *th, const struct th_futex *f,
		     const char *lock, __u64 s, __u64 e)
{
	__u32 owner = f->owner ? f->owner : f->waker;
	__u64 t = f->start;
	int err = 0;

	while (t < e && !err) {
		const struct th_wake *w = threads__next_wake(b->th, f->uaddr, th->tgid, th->tid,
							     owner, t, e);
		__u64 z = w ? w->end : e;

		if (z > s)
			err = follow(b, th, BK_LOCK, lock, owner,
				     owner == f->waker ? f->waker_comm : NULL, true, f->stack,
				     t > s ? t : s, z);
		if (!w)
			break;
		owner = w->tid;
		t = z;
	}
	return err;
}

/*
 * A wait for a child (wait4, waitid): the child's exit woke the parent, so the waker is the
 * child, named by what it ran ("sleep", the name exec gave it) and its pid. Recorded
 * (--follow-children), its own time over the wait is the reason, as a waker's is; else the wait
 * is the root, the child named. The row keeps the name alone: a tool run per step is one row, not
 * one per pid.
 */
static int child_wait(struct blame *b, const struct thread *th, const struct th_off *o,
		      const struct thread *w, __u64 s, __u64 e)
{
	const char *name = o->waker_comm ? o->waker_comm : w ? w->comm : "?";
	__u32 pid = o->waker_tgid ? o->waker_tgid : w ? w->tgid : 0;
	const char *x[MAX_FRAMES];
	__u32 n, i;

	/* A child not followed is known by its fork alone: nothing of its time, not even its
	 * exit (which woke the parent), is in the trace. */
	if (w && !w->exit_ns && !w->off.n && !w->samples.n && !w->calls.n)
		w = NULL;

	if (w && w->tgid != th->tgid && !blame__on_path(b, w->tid) && b->depth + 1 < b->max_hops) {
		int err;

		blame__push_link(b, th, TS_BLOCKED, BK_CHILD, NULL, name,
				 blame__keyed(b, "pid ?", "pid %u", pid), o->stack);
		err = blame__explain(b, w, s, e);
		b->depth--;
		return err;
	}
	n = kstack_names(b, o->stack, x, MAX_FRAMES - 1);
	for (i = 0; i < n / 2; i++) {
		const char *t = x[i];

		x[i] = x[n - 1 - i];
		x[n - 1 - i] = t;
	}
	x[n++] = strtab__internf(b->strs, "[waiting for child %s]", name);
	if (pid && !w)
		b->woken_outside_ns += e - s;
	return blame__root(b, th, TS_BLOCKED, BK_CHILD, name,
			   !pid ? NULL :
			   w	? blame__keyed(b, "pid ?", "pid %u", pid) :
				  blame__keyed(b, "pid ?, not recorded", "pid %u, not recorded", pid),
			   o->stack, e - s, x, n);
}

/* Whether a kernel frame's name (which may end "_[k]") is fn. */
static bool kname_is(const char *name, const char *fn)
{
	size_t n = strlen(fn);

	return !strncmp(name, fn, n) && (!name[n] || !strcmp(name + n, "_[k]"));
}

enum fault_type { FAULT_NONE, FAULT_MAJOR, FAULT_SWAP, FAULT_MMAP_LOCK, FAULT_MINOR };

/*
 * What a sleep outside a system call was, from its kernel stack K[0..n) (leaf first): in the
 * page-fault path (the exception's entry, handle_mm_fault), a file's page it waited for
 * (filemap_fault: the read, or the lock of a page another fault reads) or a swapped-out one
 * (do_swap_page) is a major fault; waiting for the mmap lock before the fault could look at
 * the mapping (lock_mm_and_find_vma) or anything else there a minor one. A stack elsewhere: no
 * fault. Without a kernel stack (a trace before version 7 keeps none under 100 us; or the
 * switch lost it), a file fault just before the sleep says major; else an uninterruptible sleep
 * outside a system call is a fault's, major where no recorded thread woke it (the disk's
 * completion interrupt did, whatever it stopped), minor where one did (a lock's release).
 */
static enum fault_type fault_type(const char *const *k, __u32 n, const struct th_off *o,
				  bool woken_by_recorded)
{
	bool in_fault = false, filemap = false, swap = false, lock = false;

	if (!n && o->fault_ino)
		return FAULT_MAJOR;
	if (!n)
		return !o->uninterruptible ? FAULT_NONE :
		       woken_by_recorded   ? FAULT_MINOR :
					     FAULT_MAJOR;
	for (__u32 i = 0; i < n; i++) {
		if (kname_is(k[i], "asm_exc_page_fault") || kname_is(k[i], "exc_page_fault") ||
		    kname_is(k[i], "do_user_addr_fault") || kname_is(k[i], "handle_mm_fault") ||
		    kname_is(k[i], "do_page_fault") || kname_is(k[i], "do_mem_abort"))
			in_fault = true;
		else if (kname_is(k[i], "filemap_fault"))
			filemap = true;
		else if (kname_is(k[i], "do_swap_page"))
			swap = true;
		else if (kname_is(k[i], "lock_mm_and_find_vma"))
			lock = true;
	}
	if (!in_fault)
		return FAULT_NONE;
	return filemap ? FAULT_MAJOR : swap ? FAULT_SWAP : lock ? FAULT_MMAP_LOCK : FAULT_MINOR;
}

#define FAULT_STACK_BACK_NS (10ull * 1000 * 1000)

/*
 * The user stack a fault sleep was in: its own, or where the recorder took none (one a
 * millisecond a thread), that of the thread's last fault sleep before it with one, of the same
 * file, at most FAULT_STACK_BACK_NS and 64 intervals back (the same loop touching the next
 * page). STACK_NONE: none.
 */
static __u32 fault_ustack(struct blame *b, const struct thread *th, const struct th_off *o)
{
	const struct th_off *base = th->off.n ? VEC_AT(&th->off, struct th_off, 0) : NULL;
	size_t i;

	if (o->stack != STACK_NONE && stacktab__get(threads__stacks(b->th), o->stack).nu)
		return o->stack;
	if (!base || o < base || o >= base + th->off.n)
		return o->stack;
	i = o - base;
	for (size_t k = 0; k < 64 && i > 0; k++) {
		const struct th_off *p = &base[--i];

		if (p->end + FAULT_STACK_BACK_NS < o->start)
			break;
		if (p->blocked && p->uninterruptible && p->syscall == OFFCPU_NO_SYSCALL &&
		    p->fault_ino == o->fault_ino && p->stack != STACK_NONE &&
		    stacktab__get(threads__stacks(b->th), p->stack).nu)
			return p->stack;
	}
	return o->stack;
}

/*
 * The row of a fault: "major, FILE" (the file the page is of, where its mapping is recorded),
 * "major, swap", "minor, mmap_lock", "minor". Its user frame (the code that touched the memory:
 * the stack taken as it switched out) is the row's leaf and line, the page's file offset its
 * span. A major fault's wakeup is the disk's completion, whatever task its interrupt stopped:
 * not followed. A minor one's waker (the mmap lock's holder) is, as any waker's.
 */
static const char *fault_row(struct blame *b, const struct thread *th, const struct th_off *o,
			     enum fault_type ft)
{
	__u32 stack = fault_ustack(b, th, o);
	struct stack_view v = stacktab__get(threads__stacks(b->th), stack);
	struct actionable act;
	const char *file;

	if (stack != STACK_NONE && stack__actionable(b->nm, b->strs, v.tgid, v.user, v.nu, &act)) {
		b->root_leaf = act.name;
		b->root_line = act.line;
	}
	switch (ft) {
	case FAULT_MAJOR:
		if (!o->fault_ino)
			return "major";
		b->root_span = (struct fault_span){ o->fault_index << 12, o->fault_index << 12, 1 };
		file = names__file(b->nm, th->tgid, o->fault_ino);
		return file ? strtab__internf(b->strs, "major, %s", file) :
			      strtab__internf(b->strs, "major, inode %llu",
					      (unsigned long long)o->fault_ino);
	case FAULT_SWAP:
		return "major, swap";
	case FAULT_MMAP_LOCK:
		return "minor, mmap_lock";
	default:
		return "minor";
	}
}

static int off_cpu(struct blame *b, const struct thread *th, const struct th_off *o, __u64 s,
		   __u64 e)
{
	const struct th_futex *f;
	enum blame_kind k;
	enum fault_type ft;
	const char *x[MAX_FRAMES], *sn;
	__u32 n, i;

	if (!o->blocked || (o->wake && s >= o->wake))
		return blame__runnable(b, th, o, s, e);
	f = thread__futex_at(th, s);
	if (f) {
		const char *lock = lock_name(b, th, f);

		if (f->lock)
			return lock_wait(b, th, f, lock, s, e);
		return follow(b, th, BK_COND, lock, f->waker, f->waker_comm, false, f->stack, s, e);
	}
	k = syscall__kind(b->arch, o->syscall);
	if (k == BK_COND)
		return follow(b, th, BK_COND, "futex", o->waker, o->waker_comm, false, o->stack, s,
			      e);
	n = kstack_names(b, o->stack, x, MAX_FRAMES - 1);
	ft = o->syscall != OFFCPU_NO_SYSCALL ?
		     FAULT_NONE :
		     fault_type(x, n, o, o->waker && threads__find(b->th, o->waker));
	for (i = 0; i < n / 2; i++) {
		const char *t = x[i];

		x[i] = x[n - 1 - i];
		x[n - 1 - i] = t;
	}
	if (ft == FAULT_MAJOR || ft == FAULT_SWAP) {
		const char *fn = fault_row(b, th, o, ft);

		x[n++] = strtab__internf(b->strs, "[fault %s]", fn);
		return blame__root(b, th, TS_BLOCKED, BK_FAULT, fn, "woken by I/O completion",
				   o->stack, e - s, x, n);
	}
	sn = syscall__name(b->arch, o->syscall);
	if (sn && !strcmp(sn, "ioctl")) { /* into the GPU driver when its stack says so */
		for (i = 0; i < n; i++)
			if (!strncmp(x[i], "nv", 2) || !strncmp(x[i], "uvm", 3))
				k = BK_CUDA;
	}
	if (ft != FAULT_NONE)
		k = BK_FAULT;
	{
		const char *fd = offcpu__fd_name(o->fd_flags);
		const char *fn = ft != FAULT_NONE ? fault_row(b, th, o, ft) :
				 sn		  ? sn :
				 o->syscall >= 0 ?
				      strtab__internf(b->strs, "syscall %d", o->syscall) :
				 o->syscall == OFFCPU_SYSCALL_UNKNOWN ? "syscall unknown" :
									"no syscall";
		const struct thread *w = o->waker ? threads__find(b->th, o->waker) : NULL;
		const char *wdetail = NULL;

		if (fd) /* what it waited on: read (pipe), recvfrom (socket), ... */
			fn = strtab__internf(b->strs, "%s (%s)", fn, fd);
		if (k == BK_CHILD)
			return child_wait(b, th, o, w, s, e);

		/* Woken by a recorded thread, of this process or another (a pipe's writer, an
		 * mmap lock's holder, a DataLoader worker): what it did meanwhile is the reason;
		 * a sleep's timer is not. */
		if (k != BK_SLEEP && k != BK_CUDA && w && !blame__on_path(b, w->tid) &&
		    b->depth + 1 < b->max_hops) {
			int err;

			/* A fault's leaf and page are its own root's, not the waker's. */
			b->root_leaf = b->root_line = NULL;
			b->root_span = (struct fault_span){};
			blame__push_link(
				b, th, TS_BLOCKED, k, NULL, fn,
				w->tgid == th->tgid ?
					strtab__internf(b->strs, "woken by %s", w->comm) :
					blame__keyed(
						b, strtab__internf(b->strs, "woken by %s", w->comm),
						"woken by %s (pid %u)", w->comm, w->tgid),
				o->stack);
			err = blame__explain(b, w, s, e);
			b->depth--;
			return err;
		}

		if (o->waker_comm && o->waker_tgid && !w && k != BK_SLEEP) {
			/* Woken by a process the recording does not hold: named, and counted. */
			wdetail = blame__keyed(
				b,
				strtab__internf(b->strs, "woken by %s (not recorded)",
						o->waker_comm),
				"woken by %s (pid %u, not recorded)", o->waker_comm, o->waker_tgid);
			b->woken_outside_ns += e - s;
		} else if (o->waker_comm) {
			wdetail = strtab__internf(b->strs, "woken by %s", o->waker_comm);
		}
		x[n++] = strtab__internf(b->strs, "[%s %s]", blame_kind__name(k), fn);
		return blame__root(b, th, TS_BLOCKED, k, fn, wdetail, o->stack, e - s, x, n);
	}
}

/* In a probed function or CUDA call: the root; its stack (from entry) lacks it: name as leaf. */
static int in_call(struct blame *b, const struct thread *th, const struct th_call *c, __u64 s,
		   __u64 e)
{
	return blame__root(b, th, TS_ON_CPU, c->kind == TC_PROBE ? BK_PROBE : BK_CUDA, c->name,
			   NULL, c->stack, e - s, &c->name, c->name ? 1 : 0);
}

/* The next moment after t at which a call starts or ends (the classification may change). */
static __u64 call_edge(const struct thread *th, __u64 t, __u64 z)
{
	const struct th_call *c = thread__call_at(th, t);
	size_t lo = thread__calls_upto(th, t);

	if (c)
		return c->end < z ? c->end : z;
	if (lo < th->calls.n && VEC_AT(&th->calls, struct th_call, lo)->start < z)
		return VEC_AT(&th->calls, struct th_call, lo)->start;
	return z;
}

/* What th did over [a, z): pieces by off-CPU intervals and calls, each to its root. */
int blame__explain(struct blame *b, const struct thread *th, __u64 a, __u64 z)
{
	/* The closer's own pieces, each with what it waited for, for the replay (recover.h). */
	bool top = b->seg_top && b->depth == 0;
	size_t i;
	__u64 t;
	int err = 0;

	b->seg_top = false;
	if (th->born_ns > a && th->born_ns < z) {
		if (top && (err = seg__open(b, a, th->born_ns, SEG_WAIT, 0)))
			return err;
		err = blame__before_birth(b, th, a, th->born_ns);
		if (err)
			return err;
		a = th->born_ns;
	}
	i = thread__first_off(th, a);
	t = a;

	if (b->tasks && b->depth + 2 < b->max_hops) {
		struct task_seg seg[TASK_MAX_SEGS];
		__u32 n = tasks__hop(b->tasks, b->nm, th->tid, a, z, seg, TASK_MAX_SEGS);

		if (n && b->task_hops < BLAME_MAX_TASK_HOPS) {
			b->task_hops++;
			/* One piece: what the task waited for and its poll, not told apart. */
			if (top && (err = seg__open(b, a, z, SEG_WAIT, 0)))
				return err;
			return blame__task_hop(b, th, seg, n, z);
		}
		b->task_hops_cut += n != 0;
	}
	while (t < z && !err) {
		const struct th_off *o = i < th->off.n ? VEC_AT(&th->off, struct th_off, i) : NULL;
		__u64 e = z;
		const struct th_call *c;
		bool runnable;

		if (o && o->end <= t) {
			i++;
			continue;
		}
		if (th->exit_ns && t >= th->exit_ns) {
			const char *x = "[exited]";

			if (top && (err = seg__open(b, t, z, SEG_OWN, 0)))
				return err;
			return blame__root(b, th, TS_BLOCKED, BK_OTHER, "exited", NULL, STACK_NONE,
					   z - t, &x, 1);
		}
		if (o && o->start <= t) {
			e = o->end < z ? o->end : z;
			if (o->wake > t && o->wake < e)
				e = o->wake; /* blocked until woken, then waiting for a CPU */
		} else if (o && o->start < z)
			e = o->start;
		c = thread__call_at(th, t);
		{
			__u64 ce = call_edge(th, t, z);

			if (ce > t && ce < e)
				e = ce;
		}
		runnable = o && o->start <= t && (!o->blocked || (o->wake && t >= o->wake));
		/* Blocked until woken is a wait for something outside; the rest is its own time. */
		if (top) {
			bool wait = !c && o && o->start <= t && !runnable;
			const struct th_futex *f = wait ? thread__futex_at(th, t) : NULL;

			/* A wait is for what another thread makes (a lock, a condition, a pipe's
			 * writer): it ends when that one is done. A sleep, a file's I/O, a fault
			 * or a kernel lock met by chance last as long as they last, from whenever
			 * they began: its own time. */
			if (wait && !f) {
				enum blame_kind k = syscall__kind(b->arch, o->syscall);

				wait = k == BK_COND ||
				       (k == BK_IO && o->waker && o->waker != th->tid &&
					threads__find(b->th, o->waker));
			}

			err = seg__open(b, t, e,
					wait ? SEG_WAIT :
					(c && c->kind == TC_CUDA && runnable) || (!c && runnable) ?
					       SEG_RUNNABLE :
					       SEG_OWN,
					f ? f->uaddr : 0);
			if (err)
				return err;
		}
		/* In a CUDA call but runnable, not running: waiting for a CPU, not for the GPU. */
		if (c && c->kind == TC_CUDA && runnable)
			err = off_cpu(b, th, o, t, e);
		else if (c)
			err = in_call(b, th, c, t, e);
		else if (o && o->start <= t)
			err = off_cpu(b, th, o, t, e);
		else
			err = on_cpu(b, th, t, e);
		t = e;
	}
	return err;
}

static int cmp_root(const void *x, const void *y)
{
	const struct gap_root *a = x, *c = y;

	return a->ns > c->ns ? -1 : a->ns < c->ns;
}

static int cmp_stack(const void *x, const void *y)
{
	const struct gap_stack *a = x, *c = y;

	return a->ns > c->ns ? -1 : a->ns < c->ns;
}

/* The pieces' roots by their place among the ranked roots. */
static int segs__rank(struct gap *g)
{
	__u32 *at = g->nroots ? malloc(g->nroots * sizeof(*at)) : NULL;

	if (g->nroots && !at)
		return -ENOMEM;
	for (__u32 r = 0; r < g->nroots; r++)
		at[g->roots[r].order] = r;
	for (__u32 i = 0; i < g->nseg_parts; i++)
		g->seg_parts[i].root = at[g->seg_parts[i].root];
	free(at);
	return 0;
}

int blame__gap(struct blame *b, struct gap *g)
{
	const struct thread *closer = threads__find(b->th, g->closer_tid);
	int err;

	b->roots = (struct vec){};
	b->stacks = (struct vec){};
	b->segs = (struct vec){};
	b->seg_parts = (struct vec){};
	b->seg = 0;
	b->seg_top = true;
	b->depth = 0;
	b->task_hops = 0;
	b->outside_ns = 0;
	b->woken_outside_ns = 0;
	free(b->all); /* threads come and go as the trace is read */
	b->all = threads__all(b->th, &b->nall);
	if (!closer) {
		g->unexplained_ns = g->end_ns - g->start_ns;
		return 0;
	}
	g->closer_comm = closer->comm;
	err = blame__explain(b, closer, g->start_ns, g->end_ns);
	g->preempted_outside_ns = b->outside_ns;
	g->woken_outside_ns = b->woken_outside_ns;
	g->roots = b->roots.data;
	g->nroots = b->roots.n;
	g->stacks = b->stacks.data;
	g->nstacks = b->stacks.n;
	g->segs = b->segs.data;
	g->nsegs = b->segs.n;
	g->seg_parts = b->seg_parts.data;
	g->nseg_parts = b->seg_parts.n;
	b->seg = 0;
	if (g->nroots > 1)
		qsort(g->roots, g->nroots, sizeof(*g->roots), cmp_root);
	err = err ? err : segs__rank(g);
	if (g->nstacks > 1)
		qsort(g->stacks, g->nstacks, sizeof(*g->stacks), cmp_stack);
	if (g->nroots) {
		g->chain = g->roots[0].links;
		g->nchain = g->roots[0].nlinks;
	}
	/* Each link of the chain explains the time of the paths through it. */
	for (__u32 k = 0; k < g->nchain; k++) {
		__u64 ns = 0;

		for (__u32 r = 0; r < g->nroots; r++)
			if (g->roots[r].nlinks > k && link_eq(&g->roots[r].links[k], &g->chain[k]))
				ns += g->roots[r].ns;
		g->chain[k].ns = ns;
	}
	return err;
}
