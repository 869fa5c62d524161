// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroups.h"
#include "decode.h"
#include "strtab.h"
#include "threads.h"
#include "trace.h"

struct cg_level {
	__u64 ts; /* when read */
	__u32 tgid, id, version, depth, ncpus;
	__s64 quota_us;
	__u64 period_us;
	const char *path, *cpus, *cpuset;
};

struct cg_stat {
	__u64 ts;
	__u32 id;
	__u64 usage_ns, nr_periods, nr_throttled;
};

/* Time a process stood runnable and throttled: kept to be put in the samples' intervals. */
struct cg_off {
	__u64 start, end;
	__u32 tgid, tid;
};

struct cgroups {
	struct strtab *strs;
	struct vec levels; /* struct cg_level, in file order */
	struct vec stats;  /* struct cg_stat, in file order (time order per id) */
	struct vec offs;   /* struct cg_off */
	bool scanned;	   /* the records came in a pass of their own: later ones are the same */
	int scan_err;	   /* of that pass: the first error */
	__u32 ncpus;	   /* the clock record's */
};

struct cgroups *cgroups__new(struct strtab *strs)
{
	struct cgroups *c = calloc(1, sizeof(*c));

	if (c)
		c->strs = strs;
	return c;
}

void cgroups__free(struct cgroups *c)
{
	if (!c)
		return;
	vec__free(&c->levels);
	vec__free(&c->stats);
	vec__free(&c->offs);
	free(c);
}

static int add(struct cgroups *c, const struct gs_hdr *h)
{
	const struct gs_rec_cgroup *g = gs_cgroup(h);
	const struct gs_rec_cpustat *s = gs_cpustat(h);
	const char *path, *cpus, *cpuset;

	if (g && cgroup_rec__strings(g, &path, &cpus, &cpuset)) {
		struct cg_level *l = vec__push(&c->levels, sizeof(*l));

		if (!l)
			return -ENOMEM;
		*l = (struct cg_level){ .ts = h->ts,
					.tgid = h->tgid,
					.id = g->id,
					.version = g->version,
					.depth = g->depth,
					.ncpus = g->ncpus,
					.quota_us = g->quota_us,
					.period_us = g->period_us,
					.path = strtab__intern(c->strs, path),
					.cpus = strtab__intern(c->strs, cpus),
					.cpuset = strtab__intern(c->strs, cpuset) };
	} else if (s) {
		struct cg_stat *st = vec__push(&c->stats, sizeof(*st));

		if (!st)
			return -ENOMEM;
		*st = (struct cg_stat){ h->ts, s->id, s->usage_ns, s->nr_periods, s->nr_throttled };
	}
	return 0;
}

int cgroups__add(struct cgroups *c, const struct gs_hdr *h)
{
	if (c && gs_clock(h))
		c->ncpus = gs_clock(h)->ncpus;
	return c && !c->scanned ? add(c, h) : 0;
}

int cgroups__take(void *ctx, const struct gs_hdr *h)
{
	struct cgroups *c = ctx;

	/* One consumer per type: the first to fail stops the other too. */
	if (!c->scan_err)
		c->scan_err = add(c, h);
	return c->scan_err;
}

int cgroups__scanned(struct cgroups *c, int err)
{
	err = c->scan_err ?: err;
	c->scanned = !err;
	if (err) { /* read in order instead, from the first */
		c->levels.n = 0;
		c->stats.n = 0;
	}
	return err;
}

static bool known(__u64 v)
{
	return v != GS_CPUSTAT_NONE;
}

/* How much the level's throttle count grew over the sample interval around [a, z]. */
static __u64 throttled_growth(const struct cgroups *c, __u32 id, __u64 a, __u64 z)
{
	const struct cg_stat *before = NULL, *after = NULL;

	for (size_t i = 0; i < c->stats.n; i++) {
		const struct cg_stat *s = VEC_AT(&c->stats, struct cg_stat, i);

		if (s->id != id || !known(s->nr_throttled))
			continue;
		if (s->ts <= a)
			before = s;
		else if (s->ts >= z && !after)
			after = s;
	}
	if (!after)
		return 0;
	/* None before: the cgroup's counts started with it (a cgroup made for the run). */
	return after->nr_throttled - (before ? before->nr_throttled : 0);
}

/* The level with a quota of tgid that throttled most around [a, z]; NULL: none has a quota. */
static const struct cg_level *biting(const struct cgroups *c, __u32 tgid, __u64 a, __u64 z,
				     __u64 *growth)
{
	const struct cg_level *best = NULL;
	__u64 most = 0;

	for (size_t i = 0; i < c->levels.n; i++) {
		const struct cg_level *l = VEC_AT(&c->levels, struct cg_level, i);
		__u64 g;

		if (l->tgid != tgid || l->quota_us < 0)
			continue;
		g = throttled_growth(c, l->id, a, z);
		/* Equal counts: the nearest the process, read the latest. */
		if (!best || g > most || (g == most && l->depth <= best->depth))
			best = l, most = g;
	}
	if (growth)
		*growth = most;
	return best;
}

bool cgroups__off_throttled(const struct cgroups *c, __u32 tgid, const struct th_off *o)
{
	__u64 g = 0;

	if (!o->next_known || o->blocked)
		return false;
	if (o->throttle_known)
		return o->throttled;
	return c && !o->next_tid && biting(c, tgid, o->start, o->end, &g) && g;
}

/* A quota's milliseconds: "20", "2.5". */
static void ms(char *buf, size_t len, __u64 us)
{
	if (us % 1000)
		snprintf(buf, len, "%.3g", us / 1000.0);
	else
		snprintf(buf, len, "%llu", (unsigned long long)us / 1000);
}

static const char *level_name(struct cgroups *c, const struct cg_level *l)
{
	char q[32], p[32];

	ms(q, sizeof(q), l->quota_us);
	ms(p, sizeof(p), l->period_us);
	return strtab__internf(c->strs, "cgroup %s (%s %s ms per %s ms)", l->path,
			       l->version == GS_CGROUP_V2 ? "cpu.max" : "cpu.cfs_quota_us", q, p);
}

const char *cgroups__throttler(struct cgroups *c, __u32 tgid, __u64 ts)
{
	const struct cg_level *l = c ? biting(c, tgid, ts, ts, NULL) : NULL;

	return l ? level_name(c, l) : NULL;
}

/* CPUs in a list such as "0-3,8,10-11"; 0 where it does not parse. */
static unsigned int cpu_count(const char *s)
{
	unsigned int n = 0;

	while (*s) {
		char *e;
		unsigned long a = strtoul(s, &e, 10), b = a;

		if (e == s)
			return 0;
		if (*e == '-') {
			s = e + 1;
			b = strtoul(s, &e, 10);
			if (e == s || b < a)
				return 0;
		}
		n += b - a + 1;
		s = *e == ',' ? e + 1 : e;
		if (*e && *e != ',')
			return 0;
	}
	return n;
}

/* A CPU mask as a list, "0-3,8"; "" for none. */
static void cpu_list(__u64 mask, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (int i = 0; i < 64 && n < len; i++) {
		int j = i;

		if (!(mask >> i & 1))
			continue;
		while (j < 63 && (mask >> (j + 1) & 1))
			j++;
		n += snprintf(buf + n, len - n, "%s%d", n ? "," : "", i);
		if (j > i && n < len)
			n += snprintf(buf + n, len - n, "-%d", j);
		i = j;
	}
}

const char *cgroups__cpus(struct cgroups *c, __u32 tgid, __u32 nr, __u64 mask)
{
	const struct cg_level *last = NULL;
	__u32 ncpus;
	char list[256];

	if (!c || !nr)
		return NULL;
	for (size_t i = 0; i < c->levels.n; i++) {
		const struct cg_level *l = VEC_AT(&c->levels, struct cg_level, i);

		if (l->tgid == tgid)
			last = l;
	}
	/* The machine's CPUs online, as the recorder saw them; else those the clock counted. */
	ncpus = last && last->ncpus ? last->ncpus : c->ncpus;
	if (!ncpus || nr >= ncpus)
		return NULL;
	if (nr > 64 || (__u32)__builtin_popcountll(mask) != nr)
		return strtab__internf(c->strs, "affinity: %u of %u CPUs", nr, ncpus);
	cpu_list(mask, list, sizeof(list));
	/* The cpuset is what narrowed it where the thread may use all the cpuset has. */
	if (last && cpu_count(last->cpuset) == nr && !strcmp(last->cpuset, list))
		return strtab__internf(c->strs, "cpuset %s of %u CPUs", list, ncpus);
	return strtab__internf(c->strs, "affinity %s of %u CPUs", list, ncpus);
}

int cgroups__note_off(struct cgroups *c, __u32 tgid, __u32 tid, const struct th_off *o)
{
	struct cg_off *x;

	if (!c || !cgroups__off_throttled(c, tgid, o))
		return 0;
	if (!(x = vec__push(&c->offs, sizeof(*x))))
		return -ENOMEM;
	*x = (struct cg_off){ o->start, o->end, tgid, tid };
	return 0;
}

/* Throttled runnable time of tgid's threads inside [a, z), and how many threads (up to 64). */
static __u64 throttled_in(const struct cgroups *c, __u32 tgid, __u64 a, __u64 z, __u32 *nthreads)
{
	__u32 tids[64], n = 0;
	__u64 sum = 0;

	for (size_t i = 0; i < c->offs.n; i++) {
		const struct cg_off *o = VEC_AT(&c->offs, struct cg_off, i);
		__u64 s = o->start > a ? o->start : a, e = o->end < z ? o->end : z;
		__u32 k = 0;

		if (o->tgid != tgid || e <= s)
			continue;
		sum += e - s;
		while (k < n && tids[k] != o->tid)
			k++;
		if (k == n && n < 64)
			tids[n++] = o->tid;
	}
	*nthreads = n;
	return sum;
}

/*
 * CPUs needed over dt: use was made in the time its threads were not throttled, so at that
 * rate over all of it, use / (1 - the share of a throttled thread's time it stood throttled).
 * Use plus the time throttled would count all of that time as CPU, where a feeder unthrottled
 * also waits for its GPU. A thread throttled nearly all the time gives no rate: then that sum,
 * a bound.
 */
static double need_cpus(__u64 use, __u64 thr, __u32 nthreads, __u64 dt)
{
	double phi = nthreads ? (double)thr / ((double)nthreads * dt) : 0;

	if (phi < 0.95)
		return (double)use / (1 - phi) / dt;
	return (double)(use + thr) / dt;
}

void cgroups__whatif(struct cgroups *c, struct quota_whatif *w)
{
	const struct cg_level *best = NULL;
	__u64 most = 0, span = 0;
	double total_need = 0;

	memset(w, 0, sizeof(*w));
	if (!c || !c->offs.n)
		return;
	/* The level that throttled most over the whole recording. */
	for (size_t i = 0; i < c->levels.n; i++) {
		const struct cg_level *l = VEC_AT(&c->levels, struct cg_level, i);
		__u64 g;

		if (l->quota_us <= 0 || !l->period_us)
			continue;
		g = throttled_growth(c, l->id, 0, UINT64_MAX - 1);
		if (!best || g > most)
			best = l, most = g;
	}
	if (!best)
		return;
	w->cgroup = level_name(c, best);
	w->has_cpus = (double)best->quota_us / best->period_us;
	w->use_known = true;
	/* Need over each interval between two samples: use plus the time stood throttled. */
	{
		const struct cg_stat *prev = NULL;

		for (size_t i = 0; i < c->stats.n; i++) {
			const struct cg_stat *s = VEC_AT(&c->stats, struct cg_stat, i);
			__u64 dt, use, thr;
			__u32 nthreads;
			double need;

			if (s->id != best->id)
				continue;
			if (!prev) {
				prev = s;
				continue;
			}
			dt = s->ts - prev->ts;
			if (dt < 100000000ull)
				continue; /* the end's sample just after the last: too short to say */
			if (known(s->usage_ns) && known(prev->usage_ns)) {
				use = s->usage_ns - prev->usage_ns;
			} else {
				/* A throttled period used its whole quota: a floor. */
				use = (s->nr_throttled - prev->nr_throttled) * best->quota_us *
				      1000;
				w->use_known = false;
			}
			thr = throttled_in(c, best->tgid, prev->ts, s->ts, &nthreads);
			w->throttled_ns += thr;
			need = need_cpus(use, thr, nthreads, dt);
			if (need > w->peak_cpus)
				w->peak_cpus = need;
			total_need += need * dt;
			span += dt;
			if (known(s->nr_throttled) && known(prev->nr_throttled))
				w->nr_throttled += s->nr_throttled - prev->nr_throttled;
			if (known(s->nr_periods) && known(prev->nr_periods))
				w->nr_periods += s->nr_periods - prev->nr_periods;
			prev = s;
		}
	}
	w->mean_cpus = span ? total_need / span : 0;
	if (!span)
		w->cgroup = NULL;
}
