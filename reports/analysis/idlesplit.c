// SPDX-License-Identifier: GPL-2.0
/* The idle split per device and the cause of the idle time under the floor: see idlesplit.h. */
#include <stddef.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "folded.h"
#include "actionable.h"
#include "idlesplit.h"
#include "idlesplit_int.h"
#include "idmap.h"
#include "kinds.h"
#include "names.h"
#include "stacktab.h"
#include "strtab.h"
#include "vec.h"

struct idlesplit *idlesplit__new(void)
{
	return calloc(1, sizeof(struct idlesplit));
}

void idlesplit__set_arch(struct idlesplit *s, enum gs_arch arch)
{
	s->arch = arch;
}

void idlesplit__free(struct idlesplit *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->launchers.n; i++) {
		struct launcher *l = VEC_AT(&s->launchers, struct launcher, i);

		idmap__free(&l->stack_ix);
		vec__free(&l->stacks);
	}
	idmap__free(&s->ix);
	vec__free(&s->launchers);
	vec__free(&s->gaps);
	idmap__free(&s->ival_ix);
	vec__free(&s->ivals);
	free(s);
}

int idlesplit__launch(struct idlesplit *s, __u32 tid, __u64 ts)
{
	struct launcher *l = idmap__elem(&s->ix, &s->launchers, sizeof(*l), tid);

	if (!l)
		return -ENOMEM;
	if (!l->launches++) {
		l->tid = tid;
		l->first = l->done = ts;
	}
	if (ts > l->last)
		l->last = ts;
	return 0;
}

/*
 * The gaps are kept sorted and disjoint (two devices' gaps may overlap: merged), so that a time's
 * gap is a binary search away: a long recording holds thousands of them, and each sample and
 * off-CPU interval of the launching thread looks.
 */
int idlesplit__gap(struct idlesplit *s, __u64 start, __u64 end)
{
	struct span *v;
	size_t i, k, j;

	if (!vec__push(&s->gaps, sizeof(*v)))
		return -ENOMEM;
	v = s->gaps.data;
	/* They come about in order of their end: from the back. */
	for (i = s->gaps.n - 1; i > 0 && v[i - 1].start > start; i--)
		v[i] = v[i - 1];
	v[i] = (struct span){ start, end };
	k = i && v[i - 1].end >= start ? i - 1 : i;
	for (j = k + 1; j < s->gaps.n && v[j].start <= v[k].end; j++)
		if (v[j].end > v[k].end)
			v[k].end = v[j].end;
	memmove(&v[k + 1], &v[j], (s->gaps.n - j) * sizeof(*v));
	s->gaps.n -= j - k - 1;
	return 0;
}

/* The first gap that ends after t (s->gaps.n if none). */
static size_t gap_after(const struct idlesplit *s, __u64 t)
{
	return sorted__upper(s->gaps.data, s->gaps.n, sizeof(struct span),
			     offsetof(struct span, end), t);
}

/* The time of [a, b) within [lo, hi) and outside every gap: the gaps have causes of their own. */
__u64 idlesplit__outside_gaps(const struct idlesplit *s, __u64 a, __u64 b, __u64 lo, __u64 hi)
{
	__u64 ns;

	a = a < lo ? lo : a;
	b = b > hi ? hi : b;
	if (b <= a)
		return 0;
	ns = b - a;
	for (size_t i = gap_after(s, a); i < s->gaps.n; i++) {
		const struct span *g = VEC_AT(&s->gaps, struct span, i);
		__u64 gs = g->start > a ? g->start : a, ge = g->end < b ? g->end : b;

		if (g->start >= b)
			break;
		if (ge > gs)
			ns -= ge - gs < ns ? ge - gs : ns;
	}
	return ns;
}

bool idlesplit__in_gap(const struct idlesplit *s, __u64 t)
{
	size_t i = gap_after(s, t);

	return i < s->gaps.n && VEC_AT(&s->gaps, struct span, i)->start <= t;
}

int idlesplit__ivals(struct idlesplit *s, const struct gs_hdr *h)
{
	const struct gs_rec_launch_ivals *r = gs_launch_ivals(h);
	__u32 n;

	if (!r)
		return 0;
	n = (h->size - sizeof(*r)) / sizeof(r->e[0]);
	n = r->n < n ? r->n : n;
	for (__u32 i = 0; i < n; i++) {
		struct gs_launch_ival *e = idmap__elem(&s->ival_ix, &s->ivals, sizeof(*e),
						       r->e[i].tid);

		if (!e)
			return -ENOMEM;
		*e = r->e[i]; /* totals so far: the latest counts */
	}
	return 0;
}

/* The bucket under which a share q of the n intervals lie, as [lo, hi) ns. */
static void ival_quantile(const struct gs_launch_ival *e, __u64 n, double q, __u64 *lo, __u64 *hi)
{
	__u64 want = (__u64)(q * n + 0.5), seen = 0;
	__u32 b = 0;

	want = want ? want : 1;
	for (b = 0; b + 1 < CU_IVAL_BUCKETS; b++) {
		seen += e->h.n[b];
		if (seen >= want)
			break;
	}
	*lo = cu_ival_lo_ns(b);
	*hi = b + 1 < CU_IVAL_BUCKETS ? cu_ival_lo_ns(b + 1) : 0;
}

/* The launching thread's histogram (else the thread with the most intervals): p50, p99. */
static void ival_take(const struct idlesplit *s, struct under_floor *u)
{
	long i = idmap__get(&s->ival_ix, u->tid);
	const struct gs_launch_ival *e = i >= 0 ? VEC_AT(&s->ivals, struct gs_launch_ival, i) :
						  NULL;
	__u64 n = 0;

	for (size_t k = 0; !e && k < s->ivals.n; k++) {
		const struct gs_launch_ival *c = VEC_AT(&s->ivals, struct gs_launch_ival, k);
		__u64 m = 0;

		for (__u32 b = 0; b < CU_IVAL_BUCKETS; b++)
			m += c->h.n[b];
		if (m > n) {
			n = m;
			e = c;
		}
	}
	if (!e)
		return;
	n = 0;
	for (__u32 b = 0; b < CU_IVAL_BUCKETS; b++)
		n += e->h.n[b];
	if (!n)
		return;
	u->ival_tid = e->tid;
	u->ival_n = n;
	ival_quantile(e, n, 0.5, &u->ival_p50_ns[0], &u->ival_p50_ns[1]);
	ival_quantile(e, n, 0.99, &u->ival_p99_ns[0], &u->ival_p99_ns[1]);
}

int idlesplit__call(struct idlesplit *s, __u32 tid, __u64 start, const char *fn, __u64 dur_ns)
{
	long i = idmap__get(&s->ix, tid);
	struct launcher *l;

	if (i < 0 || !strstr(fn, "Synchronize"))
		return 0;
	l = VEC_AT(&s->launchers, struct launcher, i);
	if (start < l->first)
		return 0;
	l->syncs++;
	l->syncs_quick += dur_ns < IDLESPLIT_SYNC_QUICK_NS;
	return 0;
}

/* Whether a CUDA call of the thread covers t (calls nest shallowly: a few looked at). */
static bool in_cuda(const struct thread *th, __u64 t)
{
	size_t k = thread__calls_upto(th, t);

	for (size_t n = 0; n < 8 && k; n++, k--) {
		const struct th_call *c = VEC_AT(&th->calls, struct th_call, k - 1);

		if (c->kind == TC_CUDA && c->end > t)
			return true;
	}
	return false;
}

static int take(const struct idlesplit *s, struct launcher *l, const struct thread *th, __u64 upto)
{
	__u64 lo = l->done;

	if (upto <= lo)
		return 0;
	for (size_t k = thread__first_sample(th, lo); k < th->samples.n; k++) {
		const struct th_sample *smp = VEC_AT(&th->samples, struct th_sample, k);
		struct stack_count *c;

		if (smp->ts >= upto)
			break;
		if (smp->ts < lo || in_cuda(th, smp->ts) || idlesplit__in_gap(s, smp->ts))
			continue;
		c = idmap__elem(&l->stack_ix, &l->stacks, sizeof(*c), smp->stack);
		if (!c)
			return -ENOMEM;
		c->stack = smp->stack;
		c->n++;
	}
	/* Off CPU outside a CUDA call (a synchronize that sleeps is the CUDA call's time). */
	for (size_t k = thread__first_off(th, lo); k < th->off.n; k++) {
		const struct th_off *o = VEC_AT(&th->off, struct th_off, k);
		enum blame_kind kind;

		if (o->start >= upto)
			break;
		if (in_cuda(th, o->start))
			continue;
		kind = !o->blocked ? BK_PREEMPTED :
		       o->in_futex ? BK_LOCK :
				     syscall__kind(s->arch, o->syscall);
		l->off_ns[kind] += idlesplit__outside_gaps(s, o->start, o->end, lo, upto);
	}
	/*
	 * A synchronize waits for the GPU's work: busy time, left out. Any other CUDA call that
	 * returns (a copy, a memset, an allocation) holds the next launch back: its kind.
	 */
	for (size_t k = 0; k < th->calls.n; k++) {
		const struct th_call *c = VEC_AT(&th->calls, struct th_call, k);
		__u64 ns;

		if (c->kind != TC_CUDA)
			continue;
		ns = idlesplit__outside_gaps(s, c->start, c->end, lo, upto);
		if (strstr(c->name, "Synchronize"))
			l->cuda_ns += ns;
		else
			l->off_ns[BK_CUDA] += ns;
	}
	l->host_ns += idlesplit__outside_gaps(s, lo, upto, lo, upto);
	l->done = upto;
	return 0;
}

int idlesplit__harvest(struct idlesplit *s, struct threads *th, __u64 horizon)
{
	__u64 oldest = UINT64_MAX;
	size_t k = 0;

	for (size_t i = 0; i < s->launchers.n; i++) {
		struct launcher *l = VEC_AT(&s->launchers, struct launcher, i);
		const struct thread *t = threads__find(th, l->tid);

		/* Between launches only: what came after the latest waits for the next one. */
		if (t && take(s, l, t, horizon < l->last ? horizon : l->last))
			return -ENOMEM;
		if (l->done < oldest)
			oldest = l->done;
	}
	/* Gaps every launching thread has been taken past are needed no more. */
	for (size_t i = 0; i < s->gaps.n; i++)
		if (VEC_AT(&s->gaps, struct span, i)->end >= oldest)
			*VEC_AT(&s->gaps, struct span, k++) = *VEC_AT(&s->gaps, struct span, i);
	s->gaps.n = k;
	return 0;
}

const char *idlesplit__hot_name(struct names *nm, struct strtab *strs, const struct stack_view *v)
{
	struct actionable act;

	/* The rule the causes use (actionable.h): a row a user can act on, not a leaf. */
	if (stack__actionable(nm, strs, v->tgid, v->user, v->nu, &act))
		return act.name;
	return v->nk ? names__kernel(nm, v->kern[0]) : NULL;
}

/* The launching thread's hottest function and its most common stack of that function. */
static void name_hot(struct launcher *l, struct threads *th, struct names *nm, struct strtab *strs,
		     struct under_floor *u)
{
	struct stacktab *st = threads__stacks(th);
	struct idmap fx = {};
	struct vec fn = {}; /* __u64 samples per function, by its interned name */
	__u64 best = 0, best_stack = 0;

	for (size_t i = 0; i < l->stacks.n; i++) {
		const struct stack_count *c = VEC_AT(&l->stacks, struct stack_count, i);
		struct stack_view v = stacktab__get(st, c->stack);
		const char *hot = idlesplit__hot_name(nm, strs, &v);
		__u64 *n;

		u->samples += c->n;
		if (!hot || !(n = idmap__elem(&fx, &fn, sizeof(*n), (__u64)(uintptr_t)hot)))
			continue;
		*n += c->n;
		if (*n > best) {
			best = *n;
			u->function = hot;
		}
	}
	u->function_samples = best;
	/* Every stack, root first under the thread's name, its samples' share of the time. */
	u->stacks = folded__new();
	for (size_t i = 0; u->stacks && u->samples && i < l->stacks.n; i++) {
		const struct stack_count *c = VEC_AT(&l->stacks, struct stack_count, i);
		struct stack_view v = stacktab__get(st, c->stack);
		const char *fr[1 + 2 * UNDER_FLOOR_MAX_DEPTH];
		size_t n = 0;

		fr[n++] = u->comm;
		for (__u32 k = v.nu; k-- > 0 && n < 1 + UNDER_FLOOR_MAX_DEPTH;)
			fr[n++] = names__user(nm, v.tgid, v.user[k], k == 0);
		for (__u32 k = v.nk; k-- > 0 && n < 1 + 2 * UNDER_FLOOR_MAX_DEPTH;)
			fr[n++] = names__kernel(nm, v.kern[k]);
		if (folded__add(u->stacks, fr, n,
				(__u64)((double)u->kind_ns[BK_ON_CPU] * c->n / u->samples)))
			break;
	}
	for (size_t i = 0; u->function && i < l->stacks.n; i++) {
		const struct stack_count *c = VEC_AT(&l->stacks, struct stack_count, i);
		struct stack_view v = stacktab__get(st, c->stack);

		if (c->n <= best_stack || idlesplit__hot_name(nm, strs, &v) != u->function)
			continue;
		best_stack = c->n;
		u->nframes = 0;
		for (__u32 k = 0; k < v.nu && u->nframes < UNDER_FLOOR_FRAMES; k++)
			u->frames[u->nframes++] = names__user(nm, v.tgid, v.user[k], k == 0);
	}
	idmap__free(&fx);
	vec__free(&fn);
}

void idlesplit__split_device(struct device_summary *d, __u64 t0, __u64 t1)
{
	struct idle_split *s = &d->split;
	__u64 covered = 0, idle = t1 > t0 && t1 - t0 > d->busy_ns ? t1 - t0 - d->busy_ns : 0;

	for (size_t i = 0; i < d->nbusy; i++)
		covered += d->busy[i].end - d->busy[i].start;
	if (!d->nbusy) { /* never busy */
		s->active_start = 0;
		s->setup_ns = idle;
		return;
	}
	/*
	 * The API tier counts the windows under the floor busy: what its intervals cover is its
	 * busy time, the intervals let go by a live analysis included (it keeps where the first
	 * began). CUPTI's intervals are all there, and cover its busy time and those windows.
	 */
	if (!s->under_floor_known)
		covered = d->busy_ns;
	if (s->under_floor_known || !s->active_start || s->active_start > d->busy[0].start)
		s->active_start = d->busy[0].start;
	s->active_end = d->busy[d->nbusy - 1].end;
	s->setup_ns = s->active_start - t0;
	s->tail_ns = t1 - s->active_end;
	s->gaps_ns = s->active_end - s->active_start - covered;
	/* The busy intervals hold the windows under the floor: what they cover beyond busy_ns. */
	s->under_floor_ns = covered > d->busy_ns ? covered - d->busy_ns : 0;
}

int idlesplit__finish(struct idlesplit *s, struct threads *th, struct names *nm,
		      struct strtab *strs, struct device_summary *devs, size_t ndevs, __u64 t0,
		      __u64 t1, struct under_floor *u)
{
	struct launcher *top = NULL;
	const struct thread *t;

	for (size_t i = 0; i < ndevs; i++)
		idlesplit__split_device(&devs[i], t0, t1);
	if (idlesplit__harvest(s, th, UINT64_MAX))
		return -ENOMEM;
	for (size_t i = 0; i < s->launchers.n; i++) {
		struct launcher *l = VEC_AT(&s->launchers, struct launcher, i);

		if (!top || l->launches > top->launches)
			top = l;
	}
	memset(u, 0, sizeof(*u));
	if (!top)
		return 0;
	t = threads__find(th, top->tid);
	u->tid = top->tid;
	u->comm = t ? t->comm : strtab__internf(strs, "tid %u", top->tid);
	u->launches = top->launches;
	u->syncs = top->syncs;
	u->syncs_quick = top->syncs_quick;
	u->host_ns = top->host_ns > top->cuda_ns ? top->host_ns - top->cuda_ns : 0;
	/*
	 * Runnable but not running is launch-bound too: the thread wanted a CPU to go on to its
	 * next launch (on a loaded machine most of a spinning launcher's off-CPU time). Said apart.
	 */
	memcpy(u->kind_ns, top->off_ns, sizeof(u->kind_ns));
	u->runnable_ns = u->kind_ns[BK_PREEMPTED];
	u->kind_ns[BK_PREEMPTED] = 0;
	u->kind_ns[BK_ON_CPU] = u->host_ns;
	for (int k = 0; k < BK_MAX; k++)
		if (k != BK_ON_CPU)
			u->kind_ns[BK_ON_CPU] -= u->kind_ns[k] < u->kind_ns[BK_ON_CPU] ?
							 u->kind_ns[k] :
							 u->kind_ns[BK_ON_CPU];
	name_hot(top, th, nm, strs, u);
	ival_take(s, u);
	return 0;
}
