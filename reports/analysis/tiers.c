// SPDX-License-Identifier: GPL-2.0
/* The CUPTI tier of the GPU timeline and its agreement with the API tier: see tiers.h. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "idmap.h"
#include "tiers.h"
#include "trace.h"

/* Kernels merged into one busy run: the first kernel's launch and name, the last's name. */
struct run {
	__u64 start, end;
	__u32 first_corr, first_name, last_name, pad;
	__u64 busy; /* the time its kernels ran (overlaps once), less than end - start by the
		     * windows bridged inside it */
};

/* A launch record's thread and start, for the host's time between launches. */
struct launch_at {
	__u32 tid, device;
	__u64 start;
};

struct dev {
	__u32 id;
	struct vec runs; /* struct run; sorted and merged at compaction */
	size_t merged;	 /* runs[0..merged) are sorted and disjoint */
	__u64 kernels;
	struct vec durations; /* __u64: each kernel's */
};

struct api_gap {
	__u32 device, closer_tid;
	__u64 start, end;
};

struct tiers {
	__u64 min_gap_ns, bridge_ns;
	struct strtab *strs;
	struct dev *devs;
	size_t ndevs;
	struct idmap launch_tid; /* correlation id -> tid of the launching call */
	struct idmap names;	 /* name id -> index in name_v */
	struct vec name_v;	 /* const char * */
	struct gpu_idle *gaps;	 /* CUPTI gaps of every device, by end */
	size_t ngaps, taken;
	struct vec api;	      /* struct api_gap on owned devices */
	struct vec launch_at; /* struct launch_at */
	struct cupti_info info;
};

#define COMPACT_AT 65536 /* runs not yet merged */

static int cmp_run(const void *x, const void *y)
{
	const struct run *a = x, *b = y;

	return a->start < b->start ? -1 : a->start > b->start;
}

/* Sorts the device's runs and merges those less than bridge_ns apart. */
static void compact(struct dev *d, __u64 bridge_ns)
{
	struct run *r = d->runs.data;
	size_t k = 0;

	if (d->runs.n < 2)
		return;
	qsort(r, d->runs.n, sizeof(*r), cmp_run);
	for (size_t i = 1; i < d->runs.n; i++) {
		if (r[i].start <= r[k].end + bridge_ns) {
			if (r[i].end > r[k].end) {
				/* Of a run that overlaps, only what reaches past the end is new. */
				__u64 past = r[i].end - r[k].end;

				r[k].busy += r[i].start >= r[k].end || r[i].busy < past ?
						     r[i].busy :
						     past;
				r[k].end = r[i].end;
				r[k].last_name = r[i].last_name;
			}
			continue;
		}
		r[++k] = r[i];
	}
	d->runs.n = k + 1;
	d->merged = d->runs.n;
}

static struct dev *dev_of(struct tiers *t, __u32 id)
{
	struct dev *d;

	for (size_t i = 0; i < t->ndevs; i++)
		if (t->devs[i].id == id)
			return &t->devs[i];
	d = realloc(t->devs, (t->ndevs + 1) * sizeof(*d));
	if (!d)
		return NULL;
	t->devs = d;
	d = &t->devs[t->ndevs++];
	memset(d, 0, sizeof(*d));
	d->id = id;
	return d;
}

static int add_kernel(struct tiers *t, const struct gs_gpu_act *a)
{
	struct dev *d;
	struct run *r;
	__u64 *dur;

	if (a->end < a->start || !a->start)
		return 0;      /* CUPTI gives 0 for a kernel it could not time */
	if (a->device >= 64) { /* CUDA numbers devices from 0: a damaged record */
		t->info.bad++;
		return 0;
	}
	d = dev_of(t, a->device);
	if (!d)
		return -ENOMEM;
	r = vec__push(&d->runs, sizeof(*r));
	if (!r)
		return -ENOMEM;
	*r = (struct run){ a->start, a->end, a->correlation, a->aux, a->aux, 0, a->end - a->start };
	d->kernels++;
	dur = vec__push(&d->durations, sizeof(*dur));
	if (!dur)
		return -ENOMEM;
	*dur = a->end - a->start;
	if (d->runs.n - d->merged >= COMPACT_AT)
		compact(d, t->bridge_ns);
	return 0;
}

static int add_name(struct tiers *t, const struct gs_gpu_act *a)
{
	const char **slot = vec__push(&t->name_v, sizeof(*slot));

	if (!slot || !(*slot = strtab__intern(t->strs, a->size > sizeof(*a) ? a->text : "?")))
		return -ENOMEM;
	return idmap__set(&t->names, a->aux, t->name_v.n - 1);
}

static const char *name_of(const struct tiers *t, __u32 id)
{
	long i = idmap__get(&t->names, id);

	return i >= 0 ? *VEC_AT(&t->name_v, const char *, i) : "?";
}

static void on_status(struct tiers *t, const struct gs_gpu_act *a)
{
	const char *text = a->size > sizeof(*a) ? a->text : "";

	if (a->aux == GS_CUPTI_ON)
		t->info.on = true;
	else if (a->aux == GS_CUPTI_FLUSHED)
		t->info.flushed = true;
	else if (!t->info.status)
		t->info.status = strtab__intern(t->strs, text);
}

static int add(struct tiers *t, const struct gs_gpu_act *a)
{
	switch (a->kind) {
	case GS_ACT_KERNEL:
		t->info.kernels++;
		return add_kernel(t, a);
	case GS_ACT_MEMCPY:
		t->info.copies++;
		return 0;
	case GS_ACT_MEMSET:
		t->info.memsets++;
		return 0;
	case GS_ACT_LAUNCH:
		t->info.launches++;
		if (a->tid && a->start) {
			struct launch_at *l = vec__push(&t->launch_at, sizeof(*l));

			if (!l)
				return -ENOMEM;
			*l = (struct launch_at){ a->tid, a->device, a->start };
		}
		return a->tid ? idmap__set(&t->launch_tid, a->correlation, a->tid) : 0;
	case GS_ACT_NAME:
		return add_name(t, a);
	case GS_ACT_STATUS:
		on_status(t, a);
		return 0;
	case GS_ACT_DROPPED:
		t->info.dropped += a->bytes;
		return 0;
	}
	t->info.bad++;
	return 0;
}

static int cmp_idle_end(const void *x, const void *y)
{
	const struct gpu_idle *a = x, *b = y;

	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return a->device < b->device ? -1 : a->device > b->device;
}

/* Every device's windows of min_gap_ns or more between its runs, in order of their end. */
static int find_gaps(struct tiers *t)
{
	size_t n = 0, k = 0;

	for (size_t i = 0; i < t->ndevs; i++) {
		compact(&t->devs[i], t->bridge_ns);
		n += t->devs[i].runs.n;
	}
	t->gaps = calloc(n ? n : 1, sizeof(*t->gaps));
	if (!t->gaps)
		return -ENOMEM;
	for (size_t i = 0; i < t->ndevs; i++) {
		const struct dev *d = &t->devs[i];
		const struct run *r = d->runs.data;

		for (size_t j = 1; j < d->runs.n; j++) {
			struct gpu_idle *g = &t->gaps[k];
			long tid;

			if (r[j].start - r[j - 1].end < t->min_gap_ns)
				continue;
			g->device = d->id;
			g->start = g->start_earliest = r[j - 1].end;
			g->end = r[j].start;
			g->start_how = strtab__internf(t->strs, "kernel %s ended (CUPTI)",
						       name_of(t, r[j - 1].last_name));
			g->end_how = strtab__internf(t->strs, "kernel %s started (CUPTI)",
						     name_of(t, r[j].first_name));
			if (!g->start_how || !g->end_how)
				return -ENOMEM;
			tid = idmap__get(&t->launch_tid, r[j].first_corr);
			g->closer_tid = tid > 0 ? (__u32)tid : 0;
			k++;
		}
	}
	t->ngaps = k;
	qsort(t->gaps, k, sizeof(*t->gaps), cmp_idle_end);
	return 0;
}

int tiers__take(void *ctx, const struct gs_hdr *h)
{
	struct tiers *t = ctx;
	const struct gs_gpu_act *a = gs_gpu_act(h);

	if (!a) {
		t->info.bad++;
		return 0;
	}
	return add(t, a);
}

struct tiers *tiers__new(__u64 min_gap_ns, struct strtab *strs)
{
	struct tiers *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->min_gap_ns = min_gap_ns;
	t->bridge_ns = min_gap_ns / 4;
	t->strs = strs;
	t->info.marked = true;
	return t;
}

int tiers__scanned(struct tiers *t)
{
	return find_gaps(t);
}

void tiers__free(struct tiers *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->ndevs; i++) {
		vec__free(&t->devs[i].runs);
		vec__free(&t->devs[i].durations);
	}
	vec__free(&t->launch_at);
	free(t->devs);
	idmap__free(&t->launch_tid);
	idmap__free(&t->names);
	vec__free(&t->name_v);
	vec__free(&t->api);
	free(t->gaps);
	free(t);
}

bool tiers__owns(const struct tiers *t, __u32 device)
{
	for (size_t i = 0; t && i < t->ndevs; i++)
		if (t->devs[i].id == device)
			return t->devs[i].kernels > 0;
	return false;
}

int tiers__api_gap(struct tiers *t, const struct gpu_idle *g)
{
	struct api_gap *a = vec__push(&t->api, sizeof(*a));

	if (!a)
		return -ENOMEM;
	*a = (struct api_gap){ g->device, g->closer_tid, g->start, g->end };
	return 0;
}

struct gpu_idle *tiers__take_idle(struct tiers *t, __u64 now, size_t *n)
{
	size_t k = t->taken;
	struct gpu_idle *out;

	*n = 0;
	while (k < t->ngaps && t->gaps[k].end <= now)
		k++;
	if (k == t->taken)
		return NULL;
	out = malloc((k - t->taken) * sizeof(*out));
	if (!out)
		return NULL;
	memcpy(out, &t->gaps[t->taken], (k - t->taken) * sizeof(*out));
	*n = k - t->taken;
	t->taken = k;
	return out;
}

__u64 tiers__next_end(const struct tiers *t)
{
	return t->taken < t->ngaps ? t->gaps[t->taken].end : UINT64_MAX;
}

__u64 tiers__next_start(const struct tiers *t)
{
	__u64 s = UINT64_MAX;

	/* By end, so a later one may start earlier: the few not taken yet are all looked at. */
	for (size_t i = t ? t->taken : 0; t && i < t->ngaps; i++)
		if (t->gaps[i].start < s)
			s = t->gaps[i].start;
	return s;
}

static __u64 overlap(__u64 s0, __u64 e0, __u64 s1, __u64 e1)
{
	__u64 s = s0 > s1 ? s0 : s1, e = e0 < e1 ? e0 : e1;

	return e > s ? e - s : 0;
}

/* The API gap of the device that overlaps [s, e] most, NULL if none does. */
static const struct api_gap *best_api(const struct tiers *t, __u32 dev, __u64 s, __u64 e)
{
	const struct api_gap *best = NULL;
	__u64 most = 0;

	for (size_t i = 0; i < t->api.n; i++) {
		const struct api_gap *a = VEC_AT(&t->api, struct api_gap, i);
		__u64 o = a->device == dev ? overlap(a->start, a->end, s, e) : 0;

		if (o > most) {
			most = o;
			best = a;
		}
	}
	return best;
}

static void timing(const struct tiers *t, const struct dev *d, struct launch_timing *lt);

int tiers__devices(const struct tiers *t, __u64 t0, __u64 t1, struct device_summary **devs,
		   size_t *ndevs)
{
	for (size_t i = 0; i < t->ndevs; i++) {
		const struct dev *d = &t->devs[i];
		const struct run *r = d->runs.data;
		struct device_summary *ds = NULL;
		size_t k = 0;

		if (!d->kernels)
			continue;
		for (size_t j = 0; j < *ndevs && !ds; j++)
			if ((*devs)[j].id == d->id)
				ds = &(*devs)[j];
		if (!ds) {
			ds = realloc(*devs, (*ndevs + 1) * sizeof(*ds));
			if (!ds)
				return -ENOMEM;
			*devs = ds;
			ds = &ds[(*ndevs)++];
			memset(ds, 0, sizeof(*ds));
			ds->id = d->id;
		}
		free(ds->busy);
		ds->busy = calloc(d->runs.n ? d->runs.n : 1, sizeof(*ds->busy));
		if (!ds->busy)
			return -ENOMEM;
		ds->busy_ns = 0;
		/*
		 * Windows under min_gap join the busy intervals, as in the API tier; busy_ns is
		 * the kernels' own time, so that the windows under the floor are idle time
		 * (idlesplit.h), a run cut at the recording's edges counted in proportion.
		 */
		for (size_t j = 0; j < d->runs.n; j++) {
			__u64 s = r[j].start < t0 ? t0 : r[j].start,
			      e = r[j].end > t1 ? t1 : r[j].end;

			if (e <= s)
				continue;
			ds->busy_ns += e - s == r[j].end - r[j].start ?
					       r[j].busy :
					       (__u64)((double)r[j].busy * (e - s) /
						       (r[j].end - r[j].start));
			if (k && s - ds->busy[k - 1].end < t->min_gap_ns) {
				ds->busy[k - 1].end = e;
				continue;
			}
			ds->busy[k++] = (struct busy_interval){ s, e };
		}
		ds->nbusy = k;
		ds->idle_ns = t1 - t0 > ds->busy_ns ? t1 - t0 - ds->busy_ns : 0;
		ds->split.under_floor_known = true;
		timing(t, d, &ds->timing);
	}
	return 0;
}

static int cmp_u64(const void *x, const void *y)
{
	const __u64 *a = x, *b = y;

	return *a < *b ? -1 : *a > *b;
}

/* The q-quantile (0..1) of v[0..n), sorted in place; 0 for none. */
static __u64 quantile(__u64 *v, size_t n, double q)
{
	size_t i;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	i = (size_t)(q * (n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

static int cmp_launch(const void *x, const void *y)
{
	const struct launch_at *a = x, *b = y;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

/*
 * The device's kernel durations, and the host's time from one launch to the next of the thread
 * that launched most on it (CUPTI's launch records): their p50 and p99. Sorts in place.
 */
static void timing(const struct tiers *t, const struct dev *d, struct launch_timing *lt)
{
	struct launch_at *l = t->launch_at.data;
	size_t n = t->launch_at.n, best = 0, run = 0, at = 0;
	__u32 cur = 0;
	__u64 *iv;

	memset(lt, 0, sizeof(*lt));
	lt->kernel_n = d->durations.n;
	lt->kernel_p50_ns = quantile(d->durations.data, d->durations.n, 0.5);
	lt->kernel_p99_ns = quantile(d->durations.data, d->durations.n, 0.99);
	if (n > 1)
		qsort(l, n, sizeof(*l), cmp_launch);
	for (size_t i = 0; i < n; i++) {
		if (l[i].device != d->id)
			continue;
		run = run && l[i].tid == cur ? run + 1 : 1;
		cur = l[i].tid;
		if (run > best) {
			best = run;
			lt->tid = l[i].tid;
		}
	}
	iv = best > 1 ? calloc(best, sizeof(*iv)) : NULL;
	if (!iv)
		return;
	for (size_t i = 0, prev = SIZE_MAX; i < n; i++) {
		if (l[i].device != d->id || l[i].tid != lt->tid)
			continue;
		if (prev != SIZE_MAX)
			iv[at++] = l[i].start - l[prev].start;
		prev = i;
	}
	lt->host_n = at;
	lt->host_p50_ns = quantile(iv, at, 0.5);
	lt->host_p99_ns = quantile(iv, at, 0.99);
	free(iv);
}

static __u64 absdiff(__u64 a, __u64 b)
{
	return a > b ? a - b : b - a;
}

/*
 * Whether [s, e] overlaps an idle window of the device (one of bridge_ns or more: the windows
 * between its merged runs). The first window that ends after s is the one to look at.
 */
static bool cupti_idle(const struct dev *d, __u64 s, __u64 e)
{
	const struct run *r = d->runs.data;
	size_t lo = 1, hi = d->runs.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].start > s)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo < d->runs.n && r[lo - 1].end < e;
}

static int agree_dev(struct tiers *t, const struct dev *d, struct tier_agreement *ag)
{
	size_t n = 0;
	__u64 *se = calloc(t->ngaps + 1, sizeof(*se)), *ee = calloc(t->ngaps + 1, sizeof(*ee));

	if (!se || !ee) {
		free(se);
		free(ee);
		return -ENOMEM;
	}
	ag->device = d->id;
	for (size_t i = 0; i < t->ngaps; i++) {
		const struct gpu_idle *g = &t->gaps[i];
		const struct api_gap *a;

		if (g->device != d->id)
			continue;
		ag->cupti_gaps++;
		a = best_api(t, d->id, g->start, g->end);
		if (!a)
			continue;
		ag->recalled++;
		se[n] = absdiff(a->start, g->start);
		ee[n++] = absdiff(a->end, g->end);
	}
	for (size_t i = 0; i < t->api.n; i++) {
		const struct api_gap *a = VEC_AT(&t->api, struct api_gap, i);

		if (a->device != d->id || a->end - a->start < t->min_gap_ns)
			continue;
		ag->api_gaps++;
		ag->precise += cupti_idle(d, a->start, a->end);
	}
	ag->start_err_p50 = quantile(se, n, 0.5);
	ag->start_err_p99 = quantile(se, n, 0.99);
	ag->end_err_p50 = quantile(ee, n, 0.5);
	ag->end_err_p99 = quantile(ee, n, 0.99);
	free(se);
	free(ee);
	return 0;
}

int tiers__agree(struct tiers *t, struct cupti_info *info, struct tier_agreement **agree, size_t *n)
{
	*info = t->info;
	*n = 0;
	*agree = calloc(t->ndevs ? t->ndevs : 1, sizeof(**agree));
	if (!*agree)
		return -ENOMEM;
	for (size_t i = 0; i < t->ndevs; i++)
		if (t->devs[i].kernels && agree_dev(t, &t->devs[i], &(*agree)[(*n)++]))
			return -ENOMEM;
	return 0;
}
