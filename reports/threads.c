// SPDX-License-Identifier: GPL-2.0
/* Per-thread timelines from the trace's events: see threads.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "threads.h"
#include "futex.h"
#include "offcpu.h"
#include "sample.h"
#include "trace.h"

#define FUTEX_LOCK_PI	6
#define FUTEX_LOCK_PI2	13
/* A timed wait that waits again on the same word within this is one wait (a retry loop). */
#define RETRY_NS	2000000ull

struct threads {
	struct strtab *strs;
	struct thread **slots;	/* open addressing by tid */
	size_t cap, n;
	struct vec wakes;	/* struct th_wake, by uaddr then end */
};

struct threads *threads__new(struct strtab *strs)
{
	struct threads *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->strs = strs;
	t->cap = 256;
	t->slots = calloc(t->cap, sizeof(*t->slots));
	if (!t->slots) {
		free(t);
		return NULL;
	}
	return t;
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
	vec__free(&t->wakes);
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
	struct threads big = { .cap = t->cap * 2 };

	big.slots = calloc(big.cap, sizeof(*big.slots));
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
	size_t i = slot_of(t, tid);
	struct thread *th = t->slots[i];

	if (th) {
		if (!th->tgid)
			th->tgid = tgid;
		return th;
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
	return th;
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
	th->comm = strtab__intern(t->strs, buf);
}

int threads__add_offcpu(struct threads *t, const struct gs_hdr *h, __u32 trace_version)
{
	const struct offcpu_event *e = (const void *)h;
	struct thread *th = threads__get(t, h->tid, h->tgid);
	struct th_off *o;
	char comm[GS_COMM_LEN + 1] = {};

	if (!th || !(o = vec__push(&th->off, sizeof(*o))))
		return -ENOMEM;
	o->start = h->ts;
	o->end = h->ts + e->dur_ns;
	o->blocked = e->state == OFFCPU_BLOCKED;
	o->in_futex = !!(h->flags & GS_F_IN_FUTEX);
	o->syscall = o->blocked ? offcpu_syscall(e, trace_version) : OFFCPU_NO_SYSCALL;
	o->cpu = h->cpu;
	o->waker = e->waker_tid;
	if (e->waker_tid || e->wake_ts) {
		memcpy(comm, e->waker_comm, GS_COMM_LEN);
		o->waker_comm = strtab__intern(t->strs, comm[0] ? comm : "?");
	}
	o->ev = h;
	return 0;
}

int threads__add_futex(struct threads *t, const struct gs_hdr *h)
{
	const struct futex_event *e = (const void *)h;
	struct thread *th = threads__get(t, h->tid, h->tgid);
	struct th_futex *f;

	if (!th || !(f = vec__push(&th->futex, sizeof(*f))))
		return -ENOMEM;
	f->start = h->ts;
	f->end = h->ts + e->dur_ns;
	f->uaddr = e->uaddr;
	f->owner = e->owner;	/* checked in threads__seal, once every thread is known */
	f->lock = e->op == FUTEX_LOCK_PI || e->op == FUTEX_LOCK_PI2;
	f->timed_out = e->ret == -ETIMEDOUT;
	f->ev = h;
	return 0;
}

int threads__add_call(struct threads *t, const struct gs_hdr *h, enum th_call_kind kind,
		      const char *name, __u64 dur_ns)
{
	struct thread *th = threads__get(t, h->tid, h->tgid);
	struct th_call *c;

	if (!th || !(c = vec__push(&th->calls, sizeof(*c))))
		return -ENOMEM;
	c->start = h->ts;
	c->end = h->ts + dur_ns;
	c->name = name;
	c->kind = kind;
	c->ev = h;
	return 0;
}

int threads__add_sample(struct threads *t, const struct gs_hdr *h)
{
	struct thread *th = threads__get(t, h->tid, h->tgid);
	struct th_sample *s;

	if (!th || !(s = vec__push(&th->samples, sizeof(*s))))
		return -ENOMEM;
	s->ts = h->ts;
	s->ev = h;
	return 0;
}

static int cmp_start(const void *a, const void *b)
{
	/* Every interval struct starts with __u64 start (th_sample with ts). */
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

static void vec_sort(struct vec *v)
{
	if (v->n > 1)
		qsort(v->data, v->n, v->elem, cmp_start);
}

/* The waker of a wait: the last blocked off-CPU interval that ended inside it. */
static void futex_waker(const struct thread *th, struct th_futex *f)
{
	size_t i = thread__first_off(th, f->start);
	const struct th_off *best = NULL;

	for (; i < th->off.n; i++) {
		const struct th_off *o = VEC_AT(&th->off, struct th_off, i);

		if (o->start >= f->end)
			break;
		if (o->blocked && o->end <= f->end + 1000)
			best = o;
	}
	if (best) {
		f->waker = best->waker;
		f->waker_comm = best->waker_comm;
	}
}

static void thread__seal(struct threads *t, struct thread *th)
{
	size_t n = 0;

	vec_sort(&th->off);
	vec_sort(&th->futex);
	vec_sort(&th->calls);
	vec_sort(&th->samples);
	for (size_t i = 0; i < th->futex.n; i++) {
		struct th_futex *f = VEC_AT(&th->futex, struct th_futex, i);
		const struct thread *owner = f->owner ? threads__find(t, f->owner) : NULL;

		if (owner && owner->tgid == th->tgid && owner != th)
			f->lock = 1;
		else if (!f->lock)
			f->owner = 0;
		futex_waker(th, f);
	}
	/* Merge a timed wait retried on the same word: the last wait's waker ended it. */
	for (size_t i = 0; i < th->futex.n; i++) {
		struct th_futex *f = VEC_AT(&th->futex, struct th_futex, i);
		struct th_futex *prev = n ? VEC_AT(&th->futex, struct th_futex, n - 1) : NULL;

		if (prev && prev->timed_out && prev->uaddr == f->uaddr &&
		    f->start >= prev->end && f->start - prev->end < RETRY_NS) {
			prev->end = f->end;
			prev->timed_out = f->timed_out;
			prev->waker = f->waker;
			prev->waker_comm = f->waker_comm;
			if (f->owner)
				prev->owner = f->owner;
			prev->lock |= f->lock;
			continue;
		}
		if (n != i)
			*VEC_AT(&th->futex, struct th_futex, n) = *f;
		n++;
	}
	th->futex.n = n;
}

static int cmp_wake(const void *a, const void *b)
{
	const struct th_wake *x = a, *y = b;

	if (x->uaddr != y->uaddr)
		return x->uaddr < y->uaddr ? -1 : 1;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

void threads__seal(struct threads *t)
{
	for (size_t i = 0; i < t->cap; i++) {
		struct thread *th = t->slots[i];

		if (!th)
			continue;
		thread__seal(t, th);
		for (size_t k = 0; k < th->futex.n; k++) {
			const struct th_futex *f = VEC_AT(&th->futex, struct th_futex, k);
			struct th_wake *w;

			if (!f->waker || !(w = vec__push(&t->wakes, sizeof(*w))))
				continue;
			w->uaddr = f->uaddr;
			w->end = f->end;
			w->tid = th->tid;
			w->tgid = th->tgid;
			w->waker = f->waker;
		}
	}
	if (t->wakes.n > 1)
		qsort(t->wakes.data, t->wakes.n, sizeof(struct th_wake), cmp_wake);
}

const struct th_wake *threads__next_wake(const struct threads *t, __u64 uaddr, __u32 tgid,
					 __u32 except, __u32 woken_by, __u64 after, __u64 before)
{
	struct th_wake key = { .uaddr = uaddr, .tgid = tgid, .end = after + 1 };
	size_t lo = 0, hi = t->wakes.n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (cmp_wake(VEC_AT(&t->wakes, struct th_wake, mid), &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < t->wakes.n; lo++) {
		const struct th_wake *w = VEC_AT(&t->wakes, struct th_wake, lo);

		if (w->uaddr != uaddr || w->tgid != tgid || w->end >= before)
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
#define FIRST_BY_START(v, type, a)                                                                 \
	({                                                                                         \
		size_t lo = 0, hi = (v)->n;                                                        \
		while (lo < hi) {                                                                  \
			size_t mid = (lo + hi) / 2;                                                \
			if (VEC_AT(v, type, mid)->start < (a))                                     \
				lo = mid + 1;                                                      \
			else                                                                       \
				hi = mid;                                                          \
		}                                                                                  \
		if (lo && VEC_AT(v, type, lo - 1)->end > (a))                                      \
			lo--;                                                                      \
		lo;                                                                                \
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

const struct th_call *thread__call_at(const struct thread *th, __u64 t)
{
	size_t lo = 0, hi = th->calls.n;
	const struct th_call *best = NULL;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (VEC_AT(&th->calls, struct th_call, mid)->start <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
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
