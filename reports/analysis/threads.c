// SPDX-License-Identifier: GPL-2.0
/* Per-thread timelines from the trace's events: see threads.h. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "threads.h"
#include "futex.h"
#include "offcpu.h"
#include "sample.h"
#include "trace.h"
#include "vec.h"

#define FUTEX_LOCK_PI  6
#define FUTEX_LOCK_PI2 13
/* A timed wait that waits again on the same word within this is one wait (a retry loop). */
#define RETRY_NS       2000000ull

struct threads {
	struct thread *last; /* consecutive events are often the same thread's */
	struct strtab *strs;
	struct stacktab *stacks;
	struct thread **slots; /* open addressing by tid */
	size_t cap, n;
	struct wake_list *wl; /* open addressing by (uaddr, tgid) */
	size_t wl_cap, wl_n;
	size_t names;	     /* distinct thread names interned (THREADS_NAMES_MAX) */
	__u64 names_dropped; /* names not taken past it */
};

/* The waits on one futex word, in the order they ended. */
struct wake_list {
	__u64 uaddr;
	__u32 tgid;
	bool used;
	struct vec v; /* struct th_wake */
};

struct threads *threads__new(struct strtab *strs, struct stacktab *stacks)
{
	struct threads *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->strs = strs;
	t->stacks = stacks;
	t->cap = 256;
	t->slots = calloc(t->cap, sizeof(*t->slots));
	if (!t->slots) {
		free(t);
		return NULL;
	}
	return t;
}

struct stacktab *threads__stacks(const struct threads *t)
{
	return t->stacks;
}

void threads__free(struct threads *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->cap; i++) {
		struct thread *th = t->slots[i];

		if (!th)
			continue;
		vec__free(&th->off);
		vec__free(&th->futex);
		vec__free(&th->calls);
		vec__free(&th->samples);
		free(th);
	}
	free(t->slots);
	for (size_t i = 0; i < t->wl_cap; i++)
		vec__free(&t->wl[i].v);
	free(t->wl);
	free(t);
}

static size_t slot_of(const struct threads *t, __u32 tid)
{
	size_t i = (tid * 0x9e3779b1u) & (t->cap - 1);

	while (t->slots[i] && t->slots[i]->tid != tid)
		i = (i + 1) & (t->cap - 1);
	return i;
}

struct thread *threads__find(const struct threads *t, __u32 tid)
{
	return t->slots[slot_of(t, tid)];
}

const struct thread **threads__all(const struct threads *t, size_t *n)
{
	const struct thread **all = calloc(t->n ? t->n : 1, sizeof(*all));
	size_t k = 0;

	if (all)
		for (size_t i = 0; i < t->cap; i++)
			if (t->slots[i])
				all[k++] = t->slots[i];
	*n = k;
	return all;
}

static int threads__grow(struct threads *t)
{
	struct threads big = { .cap = array__cap(t->cap, sizeof(*t->slots), t->cap + 1, 1) };

	big.slots = big.cap ? calloc(big.cap, sizeof(*big.slots)) : NULL;
	if (!big.slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i])
			big.slots[slot_of(&big, t->slots[i]->tid)] = t->slots[i];
	free(t->slots);
	t->slots = big.slots;
	t->cap = big.cap;
	return 0;
}

struct thread *threads__get(struct threads *t, __u32 tid, __u32 tgid)
{
	size_t i;
	struct thread *th = t->last;

	if (th && th->tid == tid && th->tgid)
		return th;
	i = slot_of(t, tid);
	th = t->slots[i];
	if (th) {
		if (!th->tgid)
			th->tgid = tgid;
		return t->last = th;
	}
	if ((t->n + 1) * 2 > t->cap) {
		if (threads__grow(t))
			return NULL;
		i = slot_of(t, tid);
	}
	th = calloc(1, sizeof(*th));
	if (!th)
		return NULL;
	th->tid = tid;
	th->tgid = tgid;
	th->comm = strtab__internf(t->strs, "tid %u", tid);
	t->slots[i] = th;
	t->n++;
	return t->last = th;
}

/* A thread name interned, within THREADS_NAMES_MAX distinct ones; NULL past it (counted). */
static const char *name_intern(struct threads *t, const char *name)
{
	const char *s = strtab__find(t->strs, name);

	if (s)
		return s;
	if (t->names >= THREADS_NAMES_MAX) {
		t->names_dropped++;
		return NULL;
	}
	t->names++;
	return strtab__intern(t->strs, name);
}

__u64 threads__names_dropped(const struct threads *t)
{
	return t->names_dropped;
}

void threads__set_comm(struct threads *t, __u32 tid, __u32 tgid, const char *comm, size_t len)
{
	struct thread *th = threads__get(t, tid, tgid);
	char buf[GS_COMM_LEN + 1];

	if (!th || !len || !comm[0])
		return;
	if (len > GS_COMM_LEN)
		len = GS_COMM_LEN;
	memcpy(buf, comm, len);
	buf[len] = 0;
	th->comm = name_intern(t, buf) ?: th->comm;
}

int threads__add_offcpu(struct threads *t, const struct gs_hdr *h, __u32 trace_version)
{
	const struct offcpu_event *e = (const void *)h;
	struct thread *th = threads__get(t, h->tid, h->tgid);
	struct th_off *o;
	char comm[GS_COMM_LEN + 1] = {};

	if (!th || !(o = vec__push(&th->off, sizeof(*o))))
		return -ENOMEM;
	memset(o, 0, sizeof(*o));
	o->start = h->ts;
	o->end = h->ts + e->dur_ns;
	o->blocked = e->state == OFFCPU_BLOCKED;
	o->on_cpu = e->on_cpu;
	if (o->blocked && e->wake_ts > o->start && e->wake_ts < o->end)
		o->wake = e->wake_ts;
	o->in_futex = !!(h->flags & GS_F_IN_FUTEX);
	o->syscall = o->blocked ? offcpu_syscall(e, trace_version) : OFFCPU_NO_SYSCALL;
	o->cpu = h->cpu;
	o->fd_flags = h->flags & OFFCPU_FD_MASK;
	o->waker = e->waker_tid;
	o->waker_tgid = e->waker_tgid;
	if (e->waker_tid || e->wake_ts) {
		memcpy(comm, e->waker_comm, GS_COMM_LEN);
		o->waker_comm = name_intern(t, comm[0] ? comm : "?") ?:
								       strtab__intern(t->strs, "?");
	}
	o->stack = h->kstack_n || h->ustack_n ? stacktab__add(t->stacks, h) : STACK_NONE;
	if (!o->blocked && offcpu_next(e, gs_fixed_size(h))) {
		o->next_known = 1;
		o->throttled = !!(h->flags & OFFCPU_F_THROTTLED);
		o->throttle_known = !!(h->flags & OFFCPU_F_THROTTLE_KNOWN);
		o->next_tid = e->next_tid;
		o->next_tgid = e->next_tgid;
		memcpy(comm, e->next_comm, GS_COMM_LEN);
		comm[GS_COMM_LEN] = 0;
		o->next_comm = strtab__intern(t->strs, comm[0] ? comm : "?");
		o->nr_cpus = e->nr_cpus_allowed;
		o->cpus = e->cpus_allowed;
		o->last_tid = e->last_tid;
		o->last_tgid = e->last_tgid;
		memcpy(comm, e->last_comm, GS_COMM_LEN);
		o->last_comm = strtab__intern(t->strs, comm[0] ? comm : "?");
	}
	return 0;
}

static struct wake_list *wake_list(struct threads *t, __u64 uaddr, __u32 tgid, bool create)
{
	size_t i;

	if (!create && !t->wl_cap)
		return NULL;
	if (!t->wl_cap || (create && (t->wl_n + 1) * 2 > t->wl_cap)) {
		size_t cap = array__cap(t->wl_cap, sizeof(*t->wl), t->wl_cap + 1, 64);
		struct wake_list *nw = cap ? calloc(cap, sizeof(*nw)) : NULL;

		if (!nw)
			return NULL;
		for (size_t k = 0; k < t->wl_cap; k++) {
			struct wake_list *o = &t->wl[k];

			if (!o->used)
				continue;
			for (i = ((o->uaddr ^ o->tgid) * 0x9e3779b97f4a7c15ull >> 40) & (cap - 1);
			     nw[i].used; i = (i + 1) & (cap - 1))
				;
			nw[i] = *o;
		}
		free(t->wl);
		t->wl = nw;
		t->wl_cap = cap;
	}
	for (i = ((uaddr ^ tgid) * 0x9e3779b97f4a7c15ull >> 40) & (t->wl_cap - 1); t->wl[i].used;
	     i = (i + 1) & (t->wl_cap - 1))
		if (t->wl[i].uaddr == uaddr && t->wl[i].tgid == tgid)
			return &t->wl[i];
	if (!create)
		return NULL;
	t->wl[i].used = true;
	t->wl[i].uaddr = uaddr;
	t->wl[i].tgid = tgid;
	t->wl_n++;
	return &t->wl[i];
}

/* The waker of a wait: the last blocked off-CPU interval that ended inside it. */
static void futex_waker(const struct thread *th, struct th_futex *f)
{
	for (size_t i = th->off.n; i--;) {
		const struct th_off *o = VEC_AT(&th->off, struct th_off, i);

		if (o->end <= f->start)
			break;
		if (o->blocked && o->end <= f->end + 1000) {
			f->waker = o->waker;
			f->waker_comm = o->waker_comm;
			return;
		}
	}
}

/*
 * A wait arrives once it ended, after the off-CPU intervals inside it (the reader's end order):
 * its waker is known now. A timed wait that timed out and waits again on the same word is
 * merged into the previous wait: the last wait's waker ended it.
 */
int threads__add_futex(struct threads *t, const struct gs_hdr *h)
{
	const struct futex_event *e = (const void *)h;
	struct thread *th = threads__get(t, h->tid, h->tgid);
	const struct thread *owner;
	struct th_futex nf = {}, *f, *prev;
	struct wake_list *wl;

	if (!th)
		return -ENOMEM;
	nf.start = h->ts;
	nf.end = h->ts + e->dur_ns;
	nf.uaddr = e->uaddr;
	nf.lock = e->op == FUTEX_LOCK_PI || e->op == FUTEX_LOCK_PI2;
	nf.timed_out = e->ret == -ETIMEDOUT;
	nf.stack = stacktab__add(t->stacks, h);
	/* The owner field is trusted only where it names another thread of the process. */
	owner = e->owner ? threads__find(t, e->owner) : NULL;
	if (owner && owner->tgid == th->tgid && owner != th) {
		nf.owner = e->owner;
		nf.lock = 1;
	} else if (nf.lock) {
		nf.owner = e->owner;
	}
	futex_waker(th, &nf);
	if (nf.waker && (wl = wake_list(t, nf.uaddr, th->tgid, true))) {
		struct th_wake *w = vec__push(&wl->v, sizeof(*w));

		if (w) {
			w->uaddr = nf.uaddr;
			w->end = nf.end;
			w->tid = th->tid;
			w->tgid = th->tgid;
			w->waker = nf.waker;
		}
	}
	prev = th->futex.n ? VEC_AT(&th->futex, struct th_futex, th->futex.n - 1) : NULL;
	if (prev && prev->timed_out && prev->uaddr == nf.uaddr && nf.start >= prev->end &&
	    nf.start - prev->end < RETRY_NS) {
		prev->end = nf.end;
		prev->timed_out = nf.timed_out;
		prev->waker = nf.waker;
		prev->waker_comm = nf.waker_comm;
		if (nf.owner)
			prev->owner = nf.owner;
		prev->lock |= nf.lock;
		return 0;
	}
	f = vec__push(&th->futex, sizeof(*f));
	if (!f)
		return -ENOMEM;
	*f = nf;
	return 0;
}

int threads__add_call(struct threads *t, const struct gs_hdr *h, enum th_call_kind kind,
		      const char *name, __u64 dur_ns)
{
	struct thread *th = threads__get(t, h->tid, h->tgid);
	struct th_call *c;

	if (!th || !(c = vec__push(&th->calls, sizeof(*c))))
		return -ENOMEM;
	/* A call ends after the calls nested in it: keep the list sorted by start. */
	while (c > (struct th_call *)th->calls.data && c[-1].start > h->ts) {
		*c = c[-1];
		c--;
	}
	c->start = h->ts;
	c->end = h->ts + dur_ns;
	c->name = name;
	c->kind = kind;
	c->stack = stacktab__add(t->stacks, h);
	return 0;
}

int threads__add_sample(struct threads *t, const struct gs_hdr *h)
{
	struct thread *th = threads__get(t, h->tid, h->tgid);
	struct th_sample *s;

	if (!th || !(s = vec__push(&th->samples, sizeof(*s))))
		return -ENOMEM;
	s->ts = h->ts;
	s->stack = stacktab__add(t->stacks, h);
	s->cpu = h->cpu;
	return 0;
}

/* Drops the leading elements of a list whose end (at end_off) is before horizon. */
static void vec_drop(struct vec *v, size_t end_off, __u64 horizon)
{
	size_t k = 0;

	while (k < v->n &&
	       *(const __u64 *)((const char *)v->data + k * v->elem + end_off) < horizon)
		k++;
	if (!k)
		return;
	memmove(v->data, (char *)v->data + k * v->elem, (v->n - k) * v->elem);
	v->n -= k;
}

void threads__prune(struct threads *t, __u64 horizon)
{
	for (size_t i = 0; i < t->cap; i++) {
		struct thread *th = t->slots[i];

		if (!th)
			continue;
		vec_drop(&th->off, offsetof(struct th_off, end), horizon);
		vec_drop(&th->futex, offsetof(struct th_futex, end), horizon);
		vec_drop(&th->samples, offsetof(struct th_sample, ts), horizon);
		/* Sorted by start: a call that ends late keeps those after it, a few at most. */
		vec_drop(&th->calls, offsetof(struct th_call, end), horizon);
	}
	for (size_t i = 0; i < t->wl_cap; i++)
		if (t->wl[i].used)
			vec_drop(&t->wl[i].v, offsetof(struct th_wake, end), horizon);
}

const struct th_wake *threads__next_wake(struct threads *t, __u64 uaddr, __u32 tgid, __u32 except,
					 __u32 woken_by, __u64 after, __u64 before)
{
	struct wake_list *wl = wake_list(t, uaddr, tgid, false);

	if (!wl)
		return NULL;
	for (size_t i = 0; i < wl->v.n; i++) {
		const struct th_wake *w = VEC_AT(&wl->v, struct th_wake, i);

		if (w->end <= after)
			continue;
		if (w->end >= before)
			break;
		if (w->waker == woken_by && w->tid != except)
			return w;
	}
	return NULL;
}

/*
 * Off-CPU intervals of one thread do not overlap, nor do its futex waits: the first whose end is
 * past a is found by searching starts, then stepping back over the one that may straddle a.
 */
#define FIRST_BY_START(v, type, a)                             \
	({                                                     \
		size_t lo = 0, hi = (v)->n;                    \
		while (lo < hi) {                              \
			size_t mid = (lo + hi) / 2;            \
			if (VEC_AT(v, type, mid)->start < (a)) \
				lo = mid + 1;                  \
			else                                   \
				hi = mid;                      \
		}                                              \
		if (lo && VEC_AT(v, type, lo - 1)->end > (a))  \
			lo--;                                  \
		lo;                                            \
	})

size_t thread__first_off(const struct thread *th, __u64 a)
{
	return FIRST_BY_START(&th->off, struct th_off, a);
}

size_t thread__first_futex(const struct thread *th, __u64 a)
{
	return FIRST_BY_START(&th->futex, struct th_futex, a);
}

size_t thread__first_sample(const struct thread *th, __u64 a)
{
	size_t lo = 0, hi = th->samples.n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (VEC_AT(&th->samples, struct th_sample, mid)->ts < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t thread__calls_upto(const struct thread *th, __u64 t)
{
	size_t lo = 0, hi = th->calls.n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (VEC_AT(&th->calls, struct th_call, mid)->start <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct th_call *thread__call_at(const struct thread *th, __u64 t)
{
	size_t lo = thread__calls_upto(th, t);
	const struct th_call *best = NULL;

	/* Calls nest only shallowly (a CUDA call inside a probed function): look a few back. */
	for (size_t k = 0; k < 8 && lo; k++, lo--) {
		const struct th_call *c = VEC_AT(&th->calls, struct th_call, lo - 1);

		if (c->end <= t)
			continue;
		if (!best || (c->kind == TC_PROBE && best->kind != TC_PROBE))
			best = c;
	}
	return best;
}

const struct th_call *thread__last_call(const struct thread *th, __u64 t)
{
	size_t lo = thread__calls_upto(th, t);
	const struct th_call *best = NULL;

	for (size_t k = 0; k < 8 && lo; k++, lo--) {
		const struct th_call *c = VEC_AT(&th->calls, struct th_call, lo - 1);

		if (c->end <= t && (!best || c->end > best->end))
			best = c;
	}
	return best;
}

const struct th_futex *thread__futex_at(const struct thread *th, __u64 t)
{
	size_t i = thread__first_futex(th, t);

	for (; i < th->futex.n; i++) {
		const struct th_futex *f = VEC_AT(&th->futex, struct th_futex, i);

		if (f->start > t)
			break;
		if (f->end > t)
			return f;
	}
	return NULL;
}
