// SPDX-License-Identifier: GPL-2.0
/*
 * timeline.json's threads: their intervals from a pass over the trace in end order, and the
 * arrows of the gaps' chain links (see perfetto.h).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto_int.h"
#include "reader.h"
#include "vec.h"

#define PEND_MAX       8
#define FUTEX_LOCK_PI  6
#define FUTEX_LOCK_PI2 13

/* ---- gaps and chain links, for the pass -------------------------------------------------- */

static int cmp_pair(const void *x, const void *y)
{
	const struct tl_pair *a = x, *b = y;

	if (a->woken != b->woken)
		return a->woken < b->woken ? -1 : 1;
	return a->g0 < b->g0 ? -1 : a->g0 > b->g0;
}

int tl__index_gaps(struct tl *t)
{
	const struct analysis *a = t->a;
	size_t np = 0;

	t->win = calloc(a->ngaps + 1, sizeof(*t->win));
	for (size_t i = 0; i < a->ngaps; i++)
		np += a->gaps[i].nchain;
	t->pairs = calloc(np + 1, sizeof(*t->pairs));
	if (!t->win || !t->pairs)
		return -1;
	for (size_t i = 0; i < a->ngaps; i++) { /* gaps are in order of start */
		const struct gap *g = &a->gaps[i];

		if (t->nwin && g->start_ns <= t->win[t->nwin - 1].e) {
			if (g->end_ns > t->win[t->nwin - 1].e)
				t->win[t->nwin - 1].e = g->end_ns;
		} else {
			t->win[t->nwin++] = (struct tl_win){ g->start_ns, g->end_ns };
		}
		if (g->end_ns - g->start_ns > t->max_gap)
			t->max_gap = g->end_ns - g->start_ns;
		for (__u32 k = 0; k + 1 < g->nchain; k++)
			if (g->chain[k].state == TS_BLOCKED &&
			    g->chain[k].tid != g->chain[k + 1].tid)
				t->pairs[t->st.links++] =
					(struct tl_pair){ .woken = g->chain[k].tid,
							  .waker = g->chain[k + 1].tid,
							  .g0 = g->start_ns,
							  .g1 = g->end_ns };
	}
	qsort(t->pairs, t->st.links, sizeof(*t->pairs), cmp_pair);
	return 0;
}

/* Whether [s, e] meets a gap's window (an instant on a gap's edge does). */
static bool in_gap(const struct tl *t, __u64 s, __u64 e)
{
	/* the first window starting after e */
	size_t lo = sorted__upper(t->win, t->nwin, sizeof(*t->win), offsetof(struct tl_win, s), e);

	return lo && t->win[lo - 1].e >= s;
}

/* Whether a thread's interval is written; counts what is not. */
static bool keep(struct tl *t, __u64 s, __u64 e)
{
	if (in_gap(t, s, e)) {
		t->st.slices++;
		return true;
	}
	if (e - s < t->min_ns) {
		t->st.short_left_out++;
		return false;
	}
	if (t->outside >= t->max_slices) {
		t->st.capped++;
		return false;
	}
	t->outside++;
	t->st.slices++;
	return true;
}

/* Whether this blocked interval of tid waited in a gap for waker, a chain link says; mark:
 * the link has its arrow. */
static bool match_links(struct tl *t, __u32 tid, __u32 waker, __u64 s, __u64 e, bool mark)
{
	__u64 from = s > t->max_gap ? s - t->max_gap : 0;
	size_t lo = 0, hi = t->st.links;
	bool any = false;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct tl_pair *p = &t->pairs[mid];

		if (p->woken < tid || (p->woken == tid && p->g0 < from))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < t->st.links && t->pairs[lo].woken == tid && t->pairs[lo].g0 <= e; lo++) {
		struct tl_pair *p = &t->pairs[lo];

		if (p->waker == waker && p->g1 >= s) {
			p->matched |= mark;
			any = true;
		}
	}
	return any;
}

/* ---- threads ----------------------------------------------------------------------------- */

static size_t thread_slot(struct tl_thread **tab, size_t cap, __u32 tid)
{
	size_t i = (tid * 2654435761u) & (cap - 1);

	while (tab[i] && tab[i]->tid != tid)
		i = (i + 1) & (cap - 1);
	return i;
}

static struct tl_thread *thread_find(const struct tl *t, __u32 tid)
{
	return t->th[thread_slot(t->th, t->thcap, tid)];
}

/* The thread, noted on first sight (a track and a name for it); NULL on ENOMEM. */
static struct tl_thread *thread_note(struct tl *t, __u32 tid, __u32 tgid)
{
	size_t i = thread_slot(t->th, t->thcap, tid);

	if (t->th[i])
		return t->th[i];
	if (2 * (t->st.threads + 1) > t->thcap) {
		size_t cap = array__cap(t->thcap, sizeof(*t->th), t->thcap + 1, 1);
		struct tl_thread **tab = cap ? calloc(cap, sizeof(*tab)) : NULL;

		if (!tab)
			return NULL;
		for (size_t k = 0; k < t->thcap; k++)
			if (t->th[k])
				tab[thread_slot(tab, cap, t->th[k]->tid)] = t->th[k];
		free(t->th);
		t->th = tab;
		t->thcap = cap;
		i = thread_slot(t->th, t->thcap, tid);
	}
	t->th[i] = calloc(1, sizeof(**t->th));
	if (!t->th[i])
		return NULL;
	t->th[i]->tid = tid;
	t->th[i]->tgid = tgid;
	t->st.threads++;
	return t->th[i];
}

/* ---- thread intervals -------------------------------------------------------------------- */

/* x86-64 system calls a thread commonly sleeps in, and what it waits for there. */
static const struct {
	int nr;
	const char *name, *kind;
} syscalls[] = {
	{ 0, "read", "io" },
	{ 1, "write", "io" },
	{ 7, "poll", "io" },
	{ 16, "ioctl", "other" },
	{ 17, "pread64", "io" },
	{ 18, "pwrite64", "io" },
	{ 19, "readv", "io" },
	{ 20, "writev", "io" },
	{ 23, "select", "io" },
	{ 35, "nanosleep", "sleep" },
	{ 42, "connect", "io" },
	{ 43, "accept", "io" },
	{ 45, "recvfrom", "io" },
	{ 47, "recvmsg", "io" },
	{ 61, "wait4", "other" },
	{ 74, "fsync", "io" },
	{ 202, "futex", "futex" },
	{ 230, "clock_nanosleep", "sleep" },
	{ 232, "epoll_wait", "io" },
	{ 257, "openat", "io" },
	{ 270, "pselect6", "io" },
	{ 271, "ppoll", "io" },
	{ 281, "epoll_pwait", "io" },
	{ 288, "accept4", "io" },
	{ 426, "io_uring_enter", "io" },
	{ 441, "epoll_pwait2", "io" },
	{ 449, "futex_waitv", "futex" },
	{ 455, "futex_wait", "futex" },
};

/* Why a blocked interval outside a recorded futex wait blocked, from its system call. */
static const char *off_reason(struct tl *t, const struct gs_hdr *h, int nr, const char **sys)
{
	struct gs_frames k = gs_kernel_frames(h);

	*sys = NULL;
	for (size_t i = 0; i < sizeof(syscalls) / sizeof(syscalls[0]); i++) {
		if (syscalls[i].nr != nr)
			continue;
		*sys = syscalls[i].name;
		if (nr != 16)
			return syscalls[i].kind;
		for (unsigned int f = 0; f < k.n; f++) { /* ioctl into the GPU driver */
			const struct ksym *ks = ctx__ksym(t->ctx, k.ip[f]);

			if (ks && (!strncmp(ks->name, "nv", 2) || !strncmp(ks->name, "uvm", 3)))
				return "cuda";
		}
		return "other";
	}
	return "other";
}

/*
 * The arrow of a chain link, from a short slice on the next thread at `at` to a slice on the
 * woken from then to the end of its blocked interval [s, end]: at its wakeup for a waker, at the
 * start of the wait for the holder of the lock it waited on (the futex's owner then), when
 * another thread took the lock in between and woke it.
 */
static bool write_flow(struct tl *t, const struct tl_thread *th, __u64 s, __u64 end, __u32 from,
		       __u32 from_pid, const char *out_fmt, const char *in_fmt, __u64 at)
{
	/* Both start after `at`'s own edges: the holder often runs from the very switch at
	 * which the waiter blocked. The out slice starts first, so Perfetto binds it first. */
	__u64 in = at + 1 > s + 1 ? at + 1 : s + 1;
	const char *woken = ctx__comm(t->ctx, th->tid), *by = ctx__comm(t->ctx, from);
	char name[320];

	if (in >= end || !thread_note(t, from, from_pid ?: th->tgid))
		return false;
	t->flow_id++;
	t->st.flows++;
	snprintf(name, sizeof(name), out_fmt, woken ?: "?");
	tl__slice(t, from_pid ?: th->tgid, from, at, at + 1, "chain", name, t->flow_id, true);
	tl__arg_str(t, true, "to", woken);
	tl__arg_u64(t, "to_tid", th->tid);
	tl__end(t);
	snprintf(name, sizeof(name), in_fmt, by ?: "?");
	tl__slice(t, th->tgid, th->tid, in, end, "chain", name, t->flow_id, false);
	tl__arg_str(t, true, "from", by);
	tl__arg_u64(t, "from_tid", from);
	tl__arg_u64(t, "until_running_ns", end - in);
	tl__end(t);
	return true;
}

/* An off-CPU interval; reason and lock come from its futex wait, if it was in one. */
static void write_off(struct tl *t, const struct tl_thread *th, const struct offcpu_event *e,
		      const char *reason, const char *lock, __u32 owner, __u64 uaddr)
{
	__u64 s = e->h.ts, end = s + e->dur_ns;
	bool blocked = e->state == OFFCPU_BLOCKED;
	int nr = offcpu_syscall(e, t->version);
	const char *sys = NULL;
	char name[64], waker[GS_COMM_LEN + 1];
	bool flow;

	if (!keep(t, s, end))
		return;
	if (blocked && !reason)
		reason = off_reason(t, &e->h, nr, &sys);
	flow = blocked && e->waker_tid && match_links(t, th->tid, e->waker_tid, s, end, false);
	snprintf(name, sizeof(name), blocked ? "blocked: %s" : "preempted", reason);
	tl__slice(t, th->tgid, th->tid, s, end, "state", name, 0, false);
	tl__arg_str(t, true, "state", blocked ? "blocked" : "preempted");
	if (blocked) {
		tl__arg_str(t, false, "reason", reason);
		if (lock)
			tl__arg_str(t, false, "lock", lock);
		if (sys)
			tl__arg_str(t, false, "syscall", sys);
		else if (nr >= 0)
			tl__arg_u64(t, "syscall_nr", nr);
	}
	if (e->waker_tid || e->waker_comm[0]) {
		snprintf(waker, sizeof(waker), "%s", e->waker_comm);
		tl__arg_str(t, false, "waker", waker);
		tl__arg_u64(t, "waker_tid", e->waker_tid);
	}
	if (e->wake_ts > s && e->wake_ts <= end)
		tl__arg_u64(t, "runnable_after_wakeup_ns", end - e->wake_ts);
	tl__arg_u64(t, "cpu", e->h.cpu);
	tl__arg_u64(t, "resumed_on_cpu", e->on_cpu);
	tl__end(t);
	/* A wakeup not seen: the arrow at the latest moment it can have been, the switch-in. */
	if (flow && write_flow(t, th, s, end, e->waker_tid, e->waker_tgid, "wakes %s",
			       "woken by %s", e->wake_ts ?: end - 1)) {
		match_links(t, th->tid, e->waker_tid, s, end, true);
		return;
	}
	if (!blocked || !uaddr) /* the rest is for lock waits */
		return;
	if (owner && match_links(t, th->tid, owner, s, end, false) &&
	    write_flow(t, th, s, end, owner, th->tgid, "holds the lock %s waits for",
		       "waits for the lock held by %s", s)) {
		match_links(t, th->tid, owner, s, end, true);
		return;
	}
	/* The lock changed hands while it waited: from a holder's release of it meanwhile. */
	for (unsigned int i = 0; i < TL_RELEASES; i++) {
		const struct tl_release *r = &t->rel[i];

		if (r->uaddr != uaddr || r->tgid != th->tgid || r->at < s || r->at >= end ||
		    !match_links(t, th->tid, r->tid, s, end, false))
			continue;
		if (write_flow(t, th, s, end, r->tid, r->tgid, "releases the lock %s waits for",
			       "waits for the lock released by %s", r->at))
			match_links(t, th->tid, r->tid, s, end, true);
		return;
	}
}

/* Writes the held intervals that end by end (all with end UINT64_MAX) as in a futex wait. */
static void pend_flush(struct tl *t, struct tl_thread *th, __u64 start, __u64 end,
		       const char *reason, const char *lock, __u32 owner, __u64 uaddr)
{
	__u32 k = 0;

	for (__u32 i = 0; i < th->npend; i++) {
		const struct offcpu_event *e = &th->pend[i];
		__u64 s = e->h.ts, z = s + e->dur_ns;

		if (s >= start && z <= end) {
			write_off(t, th, e, reason, lock, owner, uaddr);
			/* Who woke it from a lock wait had just released that lock. */
			if (uaddr && e->waker_tid)
				t->rel[t->nrel++ % TL_RELEASES] = (struct tl_release){
					uaddr, e->wake_ts ?: z, e->waker_tid, th->tgid
				};
		} else if (z <= start || end == UINT64_MAX) {
			write_off(t, th, e, "futex", NULL, 0, 0); /* its wait was not recorded */
		} else {
			th->pend[k++] = *e;
		}
	}
	th->npend = k;
	if (!k) { /* a thread's wait is over: what it held goes, or churned threads keep it */
		free(th->pend);
		th->pend = NULL;
	}
}

static void on_offcpu(struct tl *t, struct tl_thread *th, const struct offcpu_event *e)
{
	if (e->state != OFFCPU_BLOCKED || !(e->h.flags & GS_F_IN_FUTEX)) {
		write_off(t, th, e, NULL, NULL, 0, 0);
		return;
	}
	if (!th->pend && !(th->pend = calloc(PEND_MAX, sizeof(*th->pend)))) {
		write_off(t, th, e, "futex", NULL, 0, 0);
		return;
	}
	if (th->npend == PEND_MAX) {
		write_off(t, th, &th->pend[0], "futex", NULL, 0, 0);
		memmove(th->pend, th->pend + 1, --th->npend * sizeof(*th->pend));
	}
	{
		/* A record before version 6 ends before the next task: the rest stays zero. */
		size_t n = gs_fixed_size(&e->h) < sizeof(*e) ? gs_fixed_size(&e->h) : sizeof(*e);

		memset(&th->pend[th->npend], 0, sizeof(*e));
		memcpy(&th->pend[th->npend++], e, n);
	}
}

/*
 * A lock's name: its data symbol, else the first function outside libc that waited on it, else
 * its address, written into buf: interned, an address per futex word ever waited on would keep
 * one string each (a program waiting on fresh words made 600,000 in 6 s).
 */
static const char *lock_name(struct tl *t, const struct gs_hdr *h, __u64 uaddr, char *buf,
			     size_t len)
{
	const char *d = names__data(t->nm, h->tgid, uaddr);
	struct gs_frames f = gs_user_frames(h);

	for (unsigned int i = 0; !d && i < f.n; i++)
		if (!names__in_libc(t->nm, h->tgid, f.ip[i]))
			return strtab__internf(t->strs, "by %s",
					       names__user(t->nm, h->tgid, f.ip[i], i == 0));
	if (d)
		return d;
	snprintf(buf, len, "0x%llx", (unsigned long long)uaddr);
	return buf;
}

static void on_futex(struct tl *t, struct tl_thread *th, const struct futex_event *f)
{
	const struct gs_hdr *h = &f->h;
	const struct tl_thread *owner = f->owner && f->owner != h->tid ? thread_find(t, f->owner) :
									 NULL;
	bool lock = f->op == FUTEX_LOCK_PI || f->op == FUTEX_LOCK_PI2 ||
		    (owner && owner->tgid == h->tgid);
	char title[320], addr[24], lbuf[24];
	const char *name = lock_name(t, h, f->uaddr, lbuf, sizeof(lbuf));

	pend_flush(t, th, h->ts, h->ts + f->dur_ns, lock ? "lock" : "cond", name,
		   lock ? f->owner : 0, lock ? f->uaddr : 0);
	if (!keep(t, h->ts, h->ts + f->dur_ns))
		return;
	snprintf(title, sizeof(title), "%s wait %s", lock ? "lock" : "cond", name);
	snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)f->uaddr);
	tl__slice(t, h->tgid, h->tid, h->ts, h->ts + f->dur_ns, "wait", title, 0, false);
	tl__arg_str(t, true, lock ? "lock" : "cond", name);
	tl__arg_str(t, false, "futex", addr);
	if (lock && f->owner)
		tl__arg_u64(t, "owner_tid", f->owner);
	fprintf(t->out, ",\"ret\":%d", f->ret);
	tl__end(t);
}

static void on_cuda(struct tl *t, const struct cu_event *e)
{
	const struct gs_hdr *h = &e->h;
	__u64 end = h->ts + ((h->flags & GS_F_RET) ? e->dur_ns : 0);
	const struct ctx_probe *p;
	const char *sym, *kernel;
	char name[320], hex[24], kbuf[CU_NAME_LEN + 2];
	bool unconfirmed = false;

	if (!keep(t, h->ts, end)) /* names looked up only for what is written */
		return;
	p = ctx__probe(t->ctx, e->fn);
	sym = p ? p->sym : trace__cu_kind_name(e->kind);
	kernel = e->kind == CU_K_LAUNCH ? ctx__kernel_name(t->ctx, e->handle, NULL, &unconfirmed) :
					  NULL;
	if (kernel && unconfirmed) { /* the handle may be another kernel's since an unload */
		snprintf(kbuf, sizeof(kbuf), "%s?", kernel);
		kernel = kbuf;
	}
	snprintf(name, sizeof(name), "%s%s%s", sym, kernel ? " " : "", kernel ?: "");
	tl__slice(t, h->tgid, h->tid, h->ts, end, "cuda", name, 0, false);
	tl__arg_str(t, true, "call", sym);
	if (kernel)
		tl__arg_str(t, false, "kernel", kernel);
	snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)e->stream);
	tl__arg_str(t, false, "stream", hex);
	if (e->kind == CU_K_MEMCPY || e->kind == CU_K_MEMSET)
		tl__arg_u64(t, "bytes", e->bytes);
	if (h->flags & GS_F_RET)
		fprintf(t->out, ",\"ret\":%d", e->ret);
	tl__end(t);
}

static void on_probe(struct tl *t, const struct probe_event *e)
{
	const struct ctx_probe *p = ctx__probe(t->ctx, e->id);
	const struct gs_hdr *h = &e->h;

	if (!(h->flags & GS_F_RET) || !keep(t, h->ts, h->ts + e->dur_ns))
		return;
	tl__slice(t, h->tgid, h->tid, h->ts, h->ts + e->dur_ns, "probe", p ? p->sym : "?", 0,
		  false);
	tl__arg_str(t, true, "library", p ? p->lib : "?");
	tl__arg_u64(t, "arg0", e->arg0);
	tl__arg_u64(t, "ret", e->ret);
	tl__end(t);
}

int tl__feed(struct tl *t, const struct gs_hdr *h)
{
	struct tl_thread *th;

	if (h->type == GS_REC_MAP && gs_fixed_size(h) > sizeof(struct gs_rec_map))
		names__add_map(t->nm, (const struct gs_rec_map *)h);
	if (h->type >= GS_REC_CLOCK || !h->tid)
		return 0;
	th = thread_note(t, h->tid, h->tgid);
	if (!th)
		return -1;
	if (gs_offcpu(h))
		on_offcpu(t, th, gs_offcpu(h));
	else if (gs_futex(h))
		on_futex(t, th, gs_futex(h));
	else if (gs_cuda(h))
		on_cuda(t, gs_cuda(h));
	else if (gs_probe(h))
		on_probe(t, gs_probe(h));
	return 0;
}

void tl__finish(struct tl *t)
{
	for (size_t i = 0; i < t->thcap; i++)
		if (t->th[i])
			pend_flush(t, t->th[i], 0, UINT64_MAX, NULL, NULL, 0, 0);
	for (size_t i = 0; i < t->st.links; i++)
		t->st.links_unmatched += !t->pairs[i].matched;
	for (size_t i = 0; i < t->thcap; i++) {
		const struct tl_thread *th = t->th[i];
		const char *comm;
		char buf[32];

		if (!th)
			continue;
		comm = ctx__comm(t->ctx, th->tid);
		if (!comm)
			snprintf(buf, sizeof(buf), "tid %u", th->tid);
		tl__meta(t, "thread_name", th->tgid, th->tid, comm ?: buf);
		if (th->tid != th->tgid)
			continue;
		tl__meta(t, "process_name", th->tgid, th->tid, comm ?: buf);
	}
}

void tl__free(struct tl *t)
{
	for (size_t i = 0; t->th && i < t->thcap; i++) {
		if (t->th[i])
			free(t->th[i]->pend);
		free(t->th[i]);
	}
	free(t->th);
	free(t->win);
	free(t->pairs);
}
