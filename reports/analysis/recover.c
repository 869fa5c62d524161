// SPDX-License-Identifier: GPL-2.0
/* Recoverable time per cause and per hop, from the gaps' replayed timelines: see recover.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "recover.h"

struct row {
	enum blame_kind kind;
	const char *name;
	bool hop;
	__u64 ns; /* gap time through it (hops) */
	__u64 lo, hi;
};

/* A root's cause: its kind and its function or lock, as causes.c keys the rows. */
static const char *root_name(const struct gap_root *r)
{
	const struct chain_link *l = &r->links[r->nlinks - 1];

	return l->lock ? l->lock : l->function;
}

/* A hop's name: the lock or condition it waited on, else the function (a child, a call). */
static const char *hop_name(const struct chain_link *l)
{
	return l->lock ? l->lock : l->function;
}

static bool link_same(const struct chain_link *x, const struct chain_link *y)
{
	return x->tid == y->tid && x->kind == y->kind && x->state == y->state &&
	       x->lock == y->lock && x->function == y->function && x->detail == y->detail &&
	       x->task == y->task;
}

/* Own work between two waits on one futex word that is only a retry of the lock. */
#define RETRY_NS 1000000ULL

/* What was taken out of a thread's time so far in the gap: its later acts come that much sooner. */
#define CARRIED 32
struct carried {
	__u32 tid[CARRIED];
	__u64 ns[CARRIED];
	__u32 n;
};

static __u64 *carried_at(struct carried *c, __u32 tid)
{
	for (__u32 i = 0; i < c->n; i++)
		if (c->tid[i] == tid)
			return &c->ns[i];
	if (!tid || c->n == CARRIED)
		return NULL; /* past the bound: that thread's later acts keep their times */
	c->tid[c->n] = tid;
	c->ns[c->n] = 0;
	return &c->ns[c->n++];
}

/* The thread a root's path went to from the closer (its holder or waker), 0: none. */
static __u32 next_tid(const struct gap_root *r)
{
	return r->nlinks > 1 ? r->links[1].tid : 0;
}

/*
 * The gap replayed with the time of the roots in sel taken out: what it gives back, the
 * replay's (lo) and in full (hi). t: where the closer is; a wait ends when what it waited for
 * would have been ready, no sooner than t; own work takes its time less what was taken out.
 * What it waited for is ready sooner by what was taken out of it, and by what was taken out of
 * the same thread's earlier time in the gap (a producer that signals, then releases the mutex
 * the waiter takes back), and of the earlier waits on the same futex word in a row (a lock
 * handed to another waiter first, whose hold began when the first holder let go). Time the
 * closer waited for a CPU goes in the proportion its own work before it was taken out.
 */
static void replay(const struct gap *g, const bool *sel, __u64 *lo, __u64 *hi)
{
	__u64 t = g->start_ns, out = 0, word_carry = 0, word = 0, own = 0;
	struct carried c = { .n = 0 };
	double frac = 0; /* of the closer's last own work, what was taken out */

	for (__u32 i = 0; i < g->nsegs; i++) {
		const struct gap_seg *s = &g->segs[i];
		__u64 x = 0, shift = 0, ready, len = s->end - s->start, *cp;
		__u64 work = 0, work_x = 0, waited = 0, run;

		for (__u32 k = 0; k < s->nparts; k++) {
			const struct gap_seg_part *p = &g->seg_parts[s->first + k];
			const struct gap_root *r = &g->roots[p->root];
			bool runnable = r->links[r->nlinks - 1].state == TS_PREEMPTED;

			if (sel[p->root])
				x += p->ns;
			else if (runnable)
				waited += p->ns;
			if (!runnable) {
				work += p->ns;
				work_x += sel[p->root] ? p->ns : 0;
			}
		}
		/* Under a wait, the threads it waited for were preempted amid their work: as
		 * much less of that as of the work (the holder preempted while it computes). */
		if (s->how == SEG_WAIT && work)
			x += (__u64)(waited * ((double)work_x / work));
		if (x > len)
			x = len;
		/* Waiting for a CPU amid work that is taken out goes with it, in proportion:
		 * a thread preempted while it computes is preempted less for less to compute. */
		if (s->how == SEG_RUNNABLE)
			x += (__u64)((len - x) * frac);
		out += x;
		if (s->how != SEG_WAIT) {
			if (s->how == SEG_OWN) {
				own += len;
				frac = len ? (double)x / len : 0;
			}
			t += len - x;
			continue;
		}
		frac = 0;
		/* Waits on one futex word in a row, woken between them and beaten to the lock
		 * (on CPU again only to try it), are one wait. */
		word_carry = s->futex && s->futex == word && own < RETRY_NS ? word_carry + x : x;
		own = 0;
		word = s->futex;
		shift = word_carry;
		for (__u32 k = 0; k < s->nparts; k++) {
			const struct gap_seg_part *p = &g->seg_parts[s->first + k];

			if ((cp = carried_at(&c, next_tid(&g->roots[p->root]))) && x + *cp > shift)
				shift = x + *cp;
		}
		/* The threads met in it, in the order the walk found them (a lock's holders one
		 * after the other): each one's later acts come as much sooner as was taken out
		 * up to it (a holder that got the lock after a removed one waited for it too). */
		run = shift - x;
		for (__u32 k = 0; k < s->nparts; k++) {
			const struct gap_seg_part *p = &g->seg_parts[s->first + k];

			run += sel[p->root] ? p->ns : 0;
			if ((cp = carried_at(&c, next_tid(&g->roots[p->root]))) && run > *cp)
				*cp = run;
		}
		if (shift > s->end - g->start_ns)
			shift = s->end - g->start_ns;
		ready = s->end - shift;
		t = ready > t ? ready : t;
	}
	/* Time no piece covers (the closer unknown) stays; the gap ends no earlier than it began. */
	if (!g->nsegs)
		t = g->end_ns;
	*lo = t < g->end_ns ? g->end_ns - t : 0;
	*hi = out < g->end_ns - g->start_ns ? out : g->end_ns - g->start_ns;
	if (*hi < *lo)
		*hi = *lo;
}

static struct row *row_get(struct recover *rc, enum blame_kind kind, const char *name, bool hop)
{
	struct row *r;

	for (size_t i = 0; i < rc->rows.n; i++) {
		r = VEC_AT(&rc->rows, struct row, i);
		if (r->kind == kind && r->name == name && r->hop == hop)
			return r;
	}
	r = vec__push(&rc->rows, sizeof(*r));
	if (r)
		*r = (struct row){ .kind = kind, .name = name, .hop = hop };
	return r;
}

/* Whether root r's path passes through a hop (not its root) of this kind and name. */
static bool through(const struct gap_root *r, enum blame_kind kind, const char *name)
{
	for (__u32 k = 0; k + 1 < r->nlinks; k++)
		if (r->links[k].kind == kind && hop_name(&r->links[k]) == name)
			return true;
	return false;
}

int recover__gap(struct recover *rc, struct gap *g)
{
	bool *sel = calloc(g->nroots ? g->nroots : 1, sizeof(*sel));
	bool *done = calloc(g->nroots ? g->nroots : 1, sizeof(*done));
	struct vec hops = {}; /* struct hop: this gap's */
	struct hop *h;
	__u64 lo, hi;
	int err = 0;

	if (!sel || !done) {
		err = -ENOMEM;
		goto out;
	}
	/* Each link of the chain: the paths through it, the chain up to it being theirs. */
	for (__u32 k = 0; k < g->nchain; k++) {
		for (__u32 r = 0; r < g->nroots; r++) {
			const struct gap_root *root = &g->roots[r];
			__u32 j = 0;

			if (root->nlinks > k)
				for (j = 0; j <= k && link_same(&root->links[j], &g->chain[j]); j++)
					;
			sel[r] = j == k + 1;
		}
		replay(g, sel, &g->chain[k].recoverable_ns, &g->chain[k].recoverable_hi_ns);
	}
	/* Each cause (kind, function) of the gap: every root of it at once. */
	for (__u32 r = 0; r < g->nroots; r++) {
		const struct chain_link *l = &g->roots[r].links[g->roots[r].nlinks - 1];
		const char *name = root_name(&g->roots[r]);
		struct row *row;

		if (done[r])
			continue;
		for (__u32 q = 0; q < g->nroots; q++) {
			const struct chain_link *m = &g->roots[q].links[g->roots[q].nlinks - 1];

			sel[q] = m->kind == l->kind && root_name(&g->roots[q]) == name;
			done[q] |= sel[q];
		}
		replay(g, sel, &lo, &hi);
		if (!(row = row_get(rc, l->kind, name, false))) {
			err = -ENOMEM;
			goto out;
		}
		row->lo += lo;
		row->hi += hi;
		for (__u32 k = 0; k < g->nkinds; k++)
			if (g->kinds[k].kind == l->kind && g->kinds[k].function == name) {
				g->kinds[k].recoverable_ns = g->kinds[k].recoverable_lo_ns = lo;
				g->kinds[k].recoverable_hi_ns = hi;
			}
	}
	/* Each hop (kind, lock or function) that a path passes through, once a gap. */
	for (__u32 r = 0; r < g->nroots; r++)
		for (__u32 k = 0; k + 1 < g->roots[r].nlinks; k++) {
			const struct chain_link *l = &g->roots[r].links[k];
			const char *name = hop_name(l);
			size_t i;

			for (i = 0; i < hops.n; i++) {
				h = VEC_AT(&hops, struct hop, i);
				if (h->kind == l->kind && h->name == name)
					break;
			}
			if (!name || i < hops.n)
				continue;
			if (!(h = vec__push(&hops, sizeof(*h)))) {
				err = -ENOMEM;
				goto out;
			}
			*h = (struct hop){ .kind = l->kind, .name = name };
		}
	for (size_t i = 0; i < hops.n; i++) {
		struct row *row;

		h = VEC_AT(&hops, struct hop, i);
		for (__u32 q = 0; q < g->nroots; q++) {
			sel[q] = through(&g->roots[q], h->kind, h->name);
			h->ns += sel[q] ? g->roots[q].ns : 0;
		}
		replay(g, sel, &lo, &hi);
		h->recoverable_ns = h->recoverable_lo_ns = lo;
		h->recoverable_hi_ns = hi;
		if (!(row = row_get(rc, h->kind, h->name, true))) {
			err = -ENOMEM;
			goto out;
		}
		row->ns += h->ns;
		row->lo += lo;
		row->hi += hi;
	}
out:
	free(g->hops);
	g->hops = hops.data;
	g->nhops = hops.n;
	free(sel);
	free(done);
	return err;
}

void recover__causes(const struct recover *rc, struct cause *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < rc->rows.n; j++) {
			const struct row *r = VEC_AT(&rc->rows, struct row, j);

			if (r->hop || r->kind != c[i].kind || r->name != c[i].function)
				continue;
			c[i].recoverable_ns = c[i].recoverable_lo_ns = r->lo;
			c[i].recoverable_hi_ns = r->hi;
			break;
		}
}

static int cmp_hop(const void *x, const void *y)
{
	const struct hop *a = x, *b = y;

	if (a->recoverable_ns != b->recoverable_ns)
		return a->recoverable_ns > b->recoverable_ns ? -1 : 1;
	return a->ns > b->ns ? -1 : a->ns < b->ns;
}

int recover__hops(const struct recover *rc, struct hop **out, size_t *n)
{
	struct hop *h = calloc(rc->rows.n ? rc->rows.n : 1, sizeof(*h));

	*out = h;
	*n = 0;
	if (!h)
		return -ENOMEM;
	for (size_t j = 0; j < rc->rows.n; j++) {
		const struct row *r = VEC_AT(&rc->rows, struct row, j);

		if (!r->hop || !r->ns)
			continue;
		h[*n] = (struct hop){ .kind = r->kind,
				      .name = r->name,
				      .ns = r->ns,
				      .recoverable_ns = r->lo,
				      .recoverable_lo_ns = r->lo,
				      .recoverable_hi_ns = r->hi };
		(*n)++;
	}
	if (*n > 1)
		qsort(h, *n, sizeof(*h), cmp_hop);
	return 0;
}

void recover__free(struct recover *rc)
{
	vec__free(&rc->rows);
}
