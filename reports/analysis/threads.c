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
	size_t names;	     /* distinct thread names interned (THREADS_NAMES_MAX) */
	__u64 names_dropped; /* names not taken past it */
	size_t tid_names;    /* "tid N" names interned */
	/* Threads holding any interval or sample, least prune_at first: a prune visits those it
	 * drops something of, not every thread. */
	struct thread **heap;
	size_t heap_n, heap_cap;
	/* Exits in the order they came (struct exit_ent), from exits_head on; exited: threads
	 * held that exited. */
	struct vec exits;
	size_t exits_head, exited;
	/*
	 * The waits on futex words, in the order they ended (struct wake_ent, from wk_head on,
	 * numbered from wk_seq0), each linked to the next on its word; the words (struct
	 * wake_word, open addressing by (uaddr, tgid)) hold their first and last. A prune drops
	 * waits from the front, and a word with none left.
	 */
	struct vec wk;
	size_t wk_head;
	__u64 wk_seq0;
	struct wake_word *words;
	size_t words_cap, words_n;
	struct threads_counts c;
};

struct exit_ent {
	__u64 ts;
	__u32 tid;
};

struct wake_ent {
	struct th_wake w;
	__u64 next; /* the next wait on its word, 0: none */
};

/* The waits on one futex word of one process; n 0: a free slot. */
struct wake_word {
	__u64 uaddr;
	__u32 tgid;
	__u32 n;
	__u64 head, tail; /* wake_ent numbers */
};

/* Dropped from the front of a queue: moved down once the front is half of it. */
#define QUEUE_COMPACT 4096

struct threads *threads__new(struct strtab *strs, struct stacktab *stacks)
{
	struct threads *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->strs = strs;
	t->stacks = stacks;
	t->cap = 256;
	t->slots = calloc(t->cap, sizeof(*t->slots));
	t->wk_seq0 = 1; /* 0 ends a word's list */
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

static void thread_free(struct thread *th)
{
	vec__free(&th->off);
	vec__free(&th->futex);
	vec__free(&th->calls);
	vec__free(&th->samples);
	free(th);
}

void threads__free(struct threads *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->cap; i++) {
		struct thread *th = t->slots[i];

		if (!th)
			continue;
		thread_free(th);
	}
	free(t->slots);
	free(t->heap);
	vec__free(&t->exits);
	vec__free(&t->wk);
	free(t->words);
	free(t);
}

static size_t tid_home(const struct threads *t, __u32 tid)
{
	return (tid * 0x9e3779b1u) & (t->cap - 1);
}

static size_t slot_of(const struct threads *t, __u32 tid)
{
	size_t i = tid_home(t, tid);

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
	/* Until named: "tid N", within THREADS_NAMES_MAX of them (tids churn up to pid_max). */
	th->comm = t->tid_names < THREADS_NAMES_MAX ? strtab__internf(t->strs, "tid %u", tid) :
						      strtab__intern(t->strs, "tid ?");
	t->tid_names += t->tid_names < THREADS_NAMES_MAX;
	t->slots[i] = th;
	if (++t->n > t->c.threads_max)
		t->c.threads_max = t->n;
	return t->last = th;
}

/*
 * Whether slot k, which holds an entry whose home is h, may move to the free slot i: it may
 * unless h lies cyclically in (i, k] (its probe would then not pass i).
 */
static bool may_fill(size_t i, size_t k, size_t h)
{
	return i <= k ? h <= i || h > k : h <= i && h > k;
}

/* The heap of threads holding timelines, by prune_at. */
static void heap_set(struct threads *t, size_t i, struct thread *th)
{
	t->heap[i] = th;
	th->heap_i = i + 1;
}

static void heap_up(struct threads *t, size_t i)
{
	struct thread *th = t->heap[i];

	while (i) {
		size_t up = (i - 1) / 2;

		if (t->heap[up]->prune_at <= th->prune_at)
			break;
		heap_set(t, i, t->heap[up]);
		i = up;
	}
	heap_set(t, i, th);
}

static void heap_down(struct threads *t, size_t i)
{
	struct thread *th = t->heap[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= t->heap_n)
			break;
		if (c + 1 < t->heap_n && t->heap[c + 1]->prune_at < t->heap[c]->prune_at)
			c++;
		if (th->prune_at <= t->heap[c]->prune_at)
			break;
		heap_set(t, i, t->heap[c]);
		i = c;
	}
	heap_set(t, i, th);
}

static void heap_del(struct threads *t, struct thread *th)
{
	size_t i = th->heap_i - 1;
	struct thread *last = t->heap[--t->heap_n];

	th->heap_i = 0;
	if (last == th)
		return;
	heap_set(t, i, last);
	heap_up(t, i);
	heap_down(t, last->heap_i - 1);
}

/*
 * th holds an interval or sample that ends at end: a prune before then has nothing of it to
 * drop. prune_at stays a lower bound of what the next prune can drop.
 */
static int held(struct threads *t, struct thread *th, __u64 end)
{
	if (th->heap_i) {
		if (end < th->prune_at) {
			th->prune_at = end;
			heap_up(t, th->heap_i - 1);
		}
		return 0;
	}
	if (array__grow((void **)&t->heap, &t->heap_cap, sizeof(*t->heap), t->heap_n + 1, 64))
		return -ENOMEM;
	th->prune_at = end;
	t->heap[t->heap_n++] = th;
	heap_up(t, t->heap_n - 1);
	return 0;
}

/* A thread let go of: out of the table (its followers moved up), the heap, and freed. */
static void thread_drop(struct threads *t, struct thread *th)
{
	size_t i = slot_of(t, th->tid), k = i;

	if (th->heap_i)
		heap_del(t, th);
	for (;;) {
		k = (k + 1) & (t->cap - 1);
		if (!t->slots[k])
			break;
		if (may_fill(i, k, tid_home(t, t->slots[k]->tid))) {
			t->slots[i] = t->slots[k];
			i = k;
		}
	}
	t->slots[i] = NULL;
	t->n--;
	if (th->exit_ns)
		t->exited--;
	if (t->last == th)
		t->last = NULL;
	thread_free(th);
}

/* The exit at the front of the queue, if its thread is still the one that exited then. */
static struct thread *exit_pop(struct threads *t)
{
	const struct exit_ent *e = VEC_AT(&t->exits, struct exit_ent, t->exits_head);
	struct thread *th = threads__find(t, e->tid);

	if (th && th->exit_ns != e->ts)
		th = NULL;
	if (++t->exits_head == t->exits.n) {
		t->exits.n = t->exits_head = 0;
	} else if (t->exits_head >= QUEUE_COMPACT && t->exits_head * 2 >= t->exits.n) {
		t->exits.n -= t->exits_head;
		memmove(t->exits.data, VEC_AT(&t->exits, struct exit_ent, t->exits_head),
			t->exits.n * sizeof(struct exit_ent));
		t->exits_head = 0;
	}
	return th;
}

int threads__exit(struct threads *t, __u32 tid, __u32 tgid, __u64 ts)
{
	struct thread *th = threads__get(t, tid, tgid);
	struct exit_ent *e;

	if (!th || !(e = vec__push(&t->exits, sizeof(*e))))
		return -ENOMEM;
	*e = (struct exit_ent){ .ts = ts, .tid = tid };
	if (!th->exit_ns)
		t->exited++;
	th->exit_ns = ts;
	/* Past the bound, the threads that exited first go, whatever is left of them. */
	while (t->exited > THREADS_EXITED_MAX && t->exits_head < t->exits.n) {
		struct thread *old = exit_pop(t);

		if (old) {
			t->c.threads_evicted++;
			thread_drop(t, old);
		}
	}
	return 0;
}

const struct threads_counts *threads__counts(const struct threads *t)
{
	return &t->c;
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

	if (!th || !(o = vec__push(&th->off, sizeof(*o))) || held(t, th, h->ts + e->dur_ns))
		return -ENOMEM;
	memset(o, 0, sizeof(*o));
	o->start = h->ts;
	o->end = h->ts + e->dur_ns;
	o->blocked = e->state == OFFCPU_BLOCKED;
	o->on_cpu = e->on_cpu;
	if (o->blocked && e->wake_ts > o->start && e->wake_ts < o->end)
		o->wake = e->wake_ts;
	o->in_futex = !!(h->flags & GS_F_IN_FUTEX);
	o->uninterruptible = o->blocked && (e->prev_state & OFFCPU_TASK_UNINTERRUPTIBLE);
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
	if (o->blocked && offcpu_fault(e, gs_fixed_size(h))) {
		o->fault_ino = e->fault_ino;
		o->fault_index = e->fault_index;
	}
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

static size_t word_home(const struct threads *t, __u64 uaddr, __u32 tgid)
{
	return ((uaddr ^ tgid) * 0x9e3779b97f4a7c15ull >> 32) & (t->words_cap - 1);
}

/* The word's slot: its own, or the free one it would take. */
static size_t word_slot(const struct threads *t, __u64 uaddr, __u32 tgid)
{
	size_t i = word_home(t, uaddr, tgid);

	while (t->words[i].n && (t->words[i].uaddr != uaddr || t->words[i].tgid != tgid))
		i = (i + 1) & (t->words_cap - 1);
	return i;
}

static struct wake_word *word_find(const struct threads *t, __u64 uaddr, __u32 tgid)
{
	struct wake_word *w;

	if (!t->words_cap)
		return NULL;
	w = &t->words[word_slot(t, uaddr, tgid)];
	return w->n ? w : NULL;
}

/* The word, made (holding no wait yet) if new; NULL on ENOMEM. */
static struct wake_word *word_get(struct threads *t, __u64 uaddr, __u32 tgid)
{
	struct wake_word *w = word_find(t, uaddr, tgid);

	if (w)
		return w;
	if ((t->words_n + 1) * 2 > t->words_cap) {
		struct threads big = { .words_cap = array__cap(t->words_cap, sizeof(*t->words),
							       t->words_cap + 1, 64) };

		big.words = big.words_cap ? calloc(big.words_cap, sizeof(*big.words)) : NULL;
		if (!big.words)
			return NULL;
		for (size_t k = 0; k < t->words_cap; k++)
			if (t->words[k].n)
				big.words[word_slot(&big, t->words[k].uaddr, t->words[k].tgid)] =
					t->words[k];
		free(t->words);
		t->words = big.words;
		t->words_cap = big.words_cap;
	}
	w = &t->words[word_slot(t, uaddr, tgid)];
	*w = (struct wake_word){ .uaddr = uaddr, .tgid = tgid };
	if (++t->words_n > t->c.words_max)
		t->c.words_max = t->words_n;
	return w;
}

/* A word with no wait left: its slot freed, the words after it moved up. */
static void word_del(struct threads *t, struct wake_word *w)
{
	size_t i = w - t->words, k = i;

	for (;;) {
		k = (k + 1) & (t->words_cap - 1);
		if (!t->words[k].n)
			break;
		if (may_fill(i, k, word_home(t, t->words[k].uaddr, t->words[k].tgid))) {
			t->words[i] = t->words[k];
			i = k;
		}
	}
	t->words[i].n = 0;
	t->words_n--;
}

static struct wake_ent *wake_at(const struct threads *t, __u64 seq)
{
	return VEC_AT(&t->wk, struct wake_ent, seq - t->wk_seq0);
}

/* The oldest wait dropped (pruned, or evicted): it is the first of its word's. */
static void wake_pop(struct threads *t, bool pruned)
{
	const struct wake_ent *e = VEC_AT(&t->wk, struct wake_ent, t->wk_head);
	struct wake_word *w = word_find(t, e->w.uaddr, e->w.tgid);

	if (w) {
		w->head = e->next;
		if (!--w->n) {
			word_del(t, w);
			t->c.words_forgotten += pruned;
		}
	}
	if (++t->wk_head == t->wk.n) {
		t->wk_seq0 += t->wk_head;
		t->wk.n = t->wk_head = 0;
	} else if (t->wk_head >= QUEUE_COMPACT && t->wk_head * 2 >= t->wk.n) {
		t->wk.n -= t->wk_head;
		memmove(t->wk.data, VEC_AT(&t->wk, struct wake_ent, t->wk_head),
			t->wk.n * sizeof(struct wake_ent));
		t->wk_seq0 += t->wk_head;
		t->wk_head = 0;
	}
}

static int wake_add(struct threads *t, const struct th_wake *nw)
{
	struct wake_word *w;
	struct wake_ent *e;
	__u64 seq;

	if (t->wk.n - t->wk_head >= THREADS_WAKES_MAX) {
		wake_pop(t, false);
		t->c.wakes_evicted++;
	}
	if (!(w = word_get(t, nw->uaddr, nw->tgid)))
		return -ENOMEM;
	if (!(e = vec__push(&t->wk, sizeof(*e)))) {
		if (!w->n)
			word_del(t, w);
		return -ENOMEM;
	}
	seq = t->wk_seq0 + t->wk.n - 1;
	e->w = *nw;
	if (w->n)
		wake_at(t, w->tail)->next = seq;
	else
		w->head = seq;
	w->tail = seq;
	w->n++;
	return 0;
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
	if (nf.waker) {
		struct th_wake w = { .uaddr = nf.uaddr,
				     .end = nf.end,
				     .tid = th->tid,
				     .tgid = th->tgid,
				     .waker = nf.waker };

		if (wake_add(t, &w))
			return -ENOMEM;
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
	return held(t, th, nf.end);
}

int threads__add_call(struct threads *t, const struct gs_hdr *h, enum th_call_kind kind,
		      const char *name, __u64 dur_ns)
{
	struct thread *th = threads__get(t, h->tid, h->tgid);
	struct th_call *c;

	if (!th || !(c = vec__push(&th->calls, sizeof(*c))) || held(t, th, h->ts + dur_ns))
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

	if (!th || !(s = vec__push(&th->samples, sizeof(*s))) || held(t, th, h->ts))
		return -ENOMEM;
	s->ts = h->ts;
	s->stack = stacktab__add(t->stacks, h);
	s->cpu = h->cpu;
	return 0;
}

/*
 * Drops the leading elements of a list whose end (at end_off) is before horizon; a list left
 * empty gives its memory back (a thread that went quiet holds none). The end of its first
 * element left, UINT64_MAX when none.
 */
static __u64 vec_drop(struct vec *v, size_t end_off, __u64 horizon)
{
	size_t k = 0;

#define END_AT(i) (*(const __u64 *)((const char *)v->data + (i)*v->elem + end_off))
	while (k < v->n && END_AT(k) < horizon)
		k++;
	if (k == v->n) {
		vec__free(v);
		return UINT64_MAX;
	}
	if (k) {
		memmove(v->data, (char *)v->data + k * v->elem, (v->n - k) * v->elem);
		v->n -= k;
	}
	return END_AT(0);
#undef END_AT
}

void threads__prune(struct threads *t, __u64 horizon)
{
	while (t->heap_n && t->heap[0]->prune_at < horizon) {
		struct thread *th = t->heap[0];
		__u64 next = vec_drop(&th->off, offsetof(struct th_off, end), horizon), x;

		x = vec_drop(&th->futex, offsetof(struct th_futex, end), horizon);
		next = x < next ? x : next;
		x = vec_drop(&th->samples, offsetof(struct th_sample, ts), horizon);
		next = x < next ? x : next;
		/* Sorted by start: a call that ends late keeps those after it, a few at most. */
		x = vec_drop(&th->calls, offsetof(struct th_call, end), horizon);
		next = x < next ? x : next;
		if (next != UINT64_MAX) {
			th->prune_at = next; /* not before horizon: it goes down the heap */
			heap_down(t, 0);
			continue;
		}
		heap_del(t, th);
		if (th->exit_ns && th->exit_ns < horizon && !th->keep) {
			t->c.threads_forgotten++;
			thread_drop(t, th);
		}
	}
	while (t->wk_head < t->wk.n && VEC_AT(&t->wk, struct wake_ent, t->wk_head)->w.end < horizon)
		wake_pop(t, true);
	/* Threads that exited with nothing held; those that held some went above. */
	while (t->exits_head < t->exits.n &&
	       VEC_AT(&t->exits, struct exit_ent, t->exits_head)->ts < horizon) {
		struct thread *th = exit_pop(t);

		if (th && !th->heap_i && !th->keep) {
			t->c.threads_forgotten++;
			thread_drop(t, th);
		}
	}
}

const struct th_wake *threads__next_wake(struct threads *t, __u64 uaddr, __u32 tgid, __u32 except,
					 __u32 woken_by, __u64 after, __u64 before)
{
	const struct wake_word *ww = word_find(t, uaddr, tgid);

	for (__u64 seq = ww ? ww->head : 0; seq; seq = wake_at(t, seq)->next) {
		const struct th_wake *w = &wake_at(t, seq)->w;

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
#define FIRST_BY_START(v, type, a)                                                                \
	({                                                                                        \
		size_t lo = sorted__lower((v)->data, (v)->n, sizeof(type), offsetof(type, start), \
					  (a));                                                   \
		if (lo && VEC_AT(v, type, lo - 1)->end > (a))                                     \
			lo--;                                                                     \
		lo;                                                                               \
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
	return sorted__lower(th->samples.data, th->samples.n, sizeof(struct th_sample),
			     offsetof(struct th_sample, ts), a);
}

size_t thread__calls_upto(const struct thread *th, __u64 t)
{
	return sorted__upper(th->calls.data, th->calls.n, sizeof(struct th_call),
			     offsetof(struct th_call, start), t);
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
