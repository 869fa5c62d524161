// SPDX-License-Identifier: GPL-2.0
/*
 * The analysis behind `gapscope report`: read the trace once into per-thread timelines and the
 * GPU call list, replay the GPU timeline for its idle windows, walk a blame chain for each, and
 * rank the root causes. See analysis.h for the result.
 */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "analysis_priv.h"
#include "losses.h"
#include "blame.h"
#include "causes.h"
#include "cgroups.h"
#include "cuda.h"
#include "folded.h"
#include "futex.h"
#include "gputime.h"
#include "idlesplit.h"
#include "names.h"
#include "offcpu.h"
#include "perfmap.h"
#include "pyframes.h"
#include "archived.h"
#include "probe.h"
#include "tasks.h"
#include "reader.h"
#include "proc.h"
#include "sample.h"
#include "stacktab.h"
#include "strtab.h"
#include "threads.h"
#include "tiers.h"
#include "trace.h"
#include "unwind.h"

struct report_archive *analysis__archive(const struct analysis *a)
{
	return a->priv ? a->priv->archive : NULL;
}

unsigned long long analysis__release_pages(struct analysis *a)
{
	struct mallinfo2 before, after;
	size_t held, now;

	if (!a->priv)
		return 0;
	before = mallinfo2();
	/* The unwinder's Dwfls first: they hold handles of the files the names read too. */
	unwinder__release_pages(a->priv->uw);
	names__release_pages(a->priv->nm);
	after = mallinfo2();
	/* libelf read the sections into the heap, which keeps what it grew by: given back. */
	malloc_trim(0);
	held = before.uordblks + before.hblkhd;
	now = after.uordblks + after.hblkhd;
	return held > now ? (held - now) >> 10 : 0;
}

void analysis__note(struct analysis *a, const char *s)
{
	if (a->nnotes < sizeof(a->notes) / sizeof(a->notes[0]))
		a->notes[a->nnotes++] = strtab__intern(a->priv->strs, s);
}

/* The components' way to a note (gap.h's struct notes). */
static void note_add(void *a, const char *line)
{
	analysis__note(a, line);
}

/* Blame a closed gap, hand it on, and keep of it what the summary needs. */
static int complete_gap(struct analysis *a, struct blame *bl, const struct analysis_opts *o,
			struct gap *g)
{
	struct analysis_priv *p = a->priv;
	struct gap *kept;
	int err = blame__gap(bl, g);

	g->seq = ++p->seq;
	causes__count(&p->kind_fn, g);
	causes__gap_kinds(g);
	if (!err)
		err = recover__gap(&p->recover, g);
	g->cause_ns = g->nroots ? g->roots[0].ns : 0;
	a->gap_ns += g->end_ns - g->start_ns;
	if (!err)
		err = idlesplit__gap(p->split, g->start_ns, g->end_ns);
	a->preempted_outside_ns += g->preempted_outside_ns;
	a->woken_outside_ns += g->woken_outside_ns;
	if (!err && o->on_gap)
		err = o->on_gap(g, o->ctx);
	gap__free_walk(g);
	if (o->forget_gaps) {
		/* Live (record --flight): handed on, counted in causes and gap_ns, not kept. */
		gap__free_parts(g);
		return err;
	}
	kept = vec__push(&p->gaps, sizeof(*kept));
	if (!kept) {
		gap__free_parts(g);
		return -ENOMEM;
	}
	*kept = *g;
	return err;
}

/* Closed gaps the trace has gone GAP_MARGIN_NS past (all of them when now is UINT64_MAX). */
static int complete_due(struct analysis *a, struct blame *bl, const struct analysis_opts *o,
			__u64 now)
{
	struct analysis_priv *p = a->priv;
	size_t k = 0;
	int err = 0;

	if (now < p->next_due)
		return 0;
	p->next_due = UINT64_MAX;
	for (size_t i = 0; i < p->pending.n; i++) {
		struct gap *g = VEC_AT(&p->pending, struct gap, i);

		if (!err && (now == UINT64_MAX || g->end_ns + GAP_MARGIN_NS <= now)) {
			err = complete_gap(a, bl, o, g);
			continue;
		}
		if (g->end_ns + GAP_MARGIN_NS < p->next_due)
			p->next_due = g->end_ns + GAP_MARGIN_NS;
		*VEC_AT(&p->pending, struct gap, k++) = *g;
	}
	p->pending.n = k;
	return err;
}

/* Idle windows of a tier become pending gaps. */
static void push_idle(struct analysis *a, struct gpu_idle *idle, size_t n, const char *tier)
{
	struct analysis_priv *p = a->priv;

	for (size_t i = 0; i < n; i++) {
		struct gap *g;

		/* A device with CUPTI's timeline: the API tier's windows are only compared. */
		if (!strcmp(tier, "api") && tiers__owns(p->tiers, idle[i].device)) {
			tiers__api_gap(p->tiers, &idle[i]);
			continue;
		}
		if (idle[i].end - idle[i].start < p->min_gap_ns)
			continue; /* under min_gap: taken for the comparison alone */
		g = vec__push(&p->pending, sizeof(*g));
		if (!g)
			break;
		g->device = idle[i].device;
		g->start_ns = idle[i].start;
		g->start_earliest_ns = idle[i].start_earliest;
		g->end_ns = idle[i].end;
		g->tier = tier;
		g->start_how = idle[i].start_how;
		g->end_how = idle[i].end_how;
		g->closer_tid = idle[i].closer_tid;
		if (g->end_ns + GAP_MARGIN_NS < p->next_due)
			p->next_due = g->end_ns + GAP_MARGIN_NS;
	}
	free(idle);
}

static void take_idle(struct analysis *a, bool cuda)
{
	struct analysis_priv *p = a->priv;
	struct gpu_idle *idle;
	size_t n;

	if (cuda) {
		idle = gputime__take_idle(p->gt, &n);
		push_idle(a, idle, n, "api");
	}
	if (p->tiers && a->end_ns >= tiers__next_end(p->tiers)) {
		idle = tiers__take_idle(p->tiers, a->end_ns, &n);
		/* No launch record named the closer: the thread that launched last before the end. */
		for (size_t i = 0; i < n; i++)
			if (!idle[i].closer_tid)
				idle[i].closer_tid = gputime__launcher(p->gt, idle[i].device,
								       idle[i].end);
		push_idle(a, idle, n, "cupti");
	}
}

/* Forget what no open or pending gap can reach back to. */
static void prune(struct analysis *a, __u64 now)
{
	struct analysis_priv *p = a->priv;
	__u64 h = gputime__idle_since(p->gt);

	if (now < h)
		h = now;
	if (tiers__next_start(p->tiers) < h)
		h = tiers__next_start(p->tiers);
	for (size_t i = 0; i < p->pending.n; i++)
		if (VEC_AT(&p->pending, struct gap, i)->start_ns < h)
			h = VEC_AT(&p->pending, struct gap, i)->start_ns;
	if (h > LOOKBACK_NS) {
		/* Out of memory here only leaves the launching thread less watched. */
		idlesplit__harvest(p->split, p->th, h - LOOKBACK_NS);
		threads__prune(p->th, h - LOOKBACK_NS);
		tasks__prune(p->tasks, h - LOOKBACK_NS);
		analysis_priv__forget_exited(p, h - LOOKBACK_NS);
	}
	if (p->opts.forget_idle_ns)
		gputime__forget_idle(p->gt, now, p->opts.forget_idle_ns);
}

static int cmp_gap(const void *x, const void *y)
{
	const struct gap *a = x, *b = y;

	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return a->device < b->device ? -1 : a->device > b->device;
}

/* How Python frames find the eval loop among native frames (pyframes.h). */
static const char *native_name(void *nm, __u32 tgid, __u64 addr, bool leaf)
{
	return names__user(nm, tgid, addr, leaf);
}

/* Whether the file being read says it holds records of flag's kind (TRACE_F_*). */
static bool has(const struct analysis_priv *p, __u32 flag)
{
	return p->tr && (trace__stats(p->tr)->flags & flag);
}

/* The first error of the consumers of ctx, 0 if none (or none were wired). */
static int scan_err(const struct trace_consumer *c, size_t n, const void *ctx)
{
	for (size_t i = 0; i < n; i++)
		if (c[i].ctx == ctx && c[i].err)
			return c[i].err;
	return 0;
}

/* The archived files, once their records are in: written out and given to the unwinder. */
static void archive_ready(struct analysis *a, const char *path, int err)
{
	struct analysis_priv *p = a->priv;

	/* A folder that cannot be made leaves the files unused, and the report goes on. */
	if (err || report_archive__finish(p->archive))
		analysis__note(a, "the archived files could not be put together: not used");
	names__set_archive(p->nm, p->archive);
	unwinder__set_archive(p->uw, p->archive);
	a->archive = report_archive__stats(p->archive);
	if (a->archive->bad) {
		char line[128];

		snprintf(line, sizeof(line), "%llu archived file(s) damaged: not used",
			 (unsigned long long)a->archive->bad);
		analysis__note(a, line);
		report_archive__warn(p->archive, path, stderr);
	}
}

/*
 * The one pass before the time-ordered one: the records written long after their time or at
 * the end (CUPTI's activity, perf maps, Python code objects, archived files, cgroups), each
 * type to the component that takes it, where the file's flags say it has them. -errno with err
 * set where the analysis cannot go on (the CUPTI tier unread); what the others lack is noted.
 */
static int prepass(struct analysis *a, const char *path, char *err, size_t errlen)
{
	struct analysis_priv *p = a->priv;
	const struct {
		void *ctx; /* the component; NULL: not in this file, or not wanted */
		__u32 type;
		int (*take)(void *ctx, const struct gs_hdr *h);
	} wire[] = {
		{ p->tiers, GS_REC_GPU_ACT, tiers__take },
		{ p->perfmaps, GS_REC_PERF_MAP, perfmaps__take },
		{ has(p, TRACE_F_PYCODE) ? p->py : NULL, GS_REC_PYCODE, pyframes__take },
		{ p->archive, GS_REC_ARCHIVE, report_archive__take },
		{ has(p, TRACE_F_CGROUP) ? p->cg : NULL, GS_REC_CGROUP, cgroups__take },
		{ has(p, TRACE_F_CGROUP) ? p->cg : NULL, GS_REC_CPUSTAT, cgroups__take },
	};
	struct trace_consumer c[sizeof(wire) / sizeof(wire[0]) + ANALYSIS_PREPASS_MAX];
	size_t n = 0, own;
	int ret;

	for (size_t i = 0; i < sizeof(wire) / sizeof(wire[0]); i++)
		if (wire[i].ctx)
			c[n++] = (struct trace_consumer){ .type = wire[i].type,
							  .fn = wire[i].take,
							  .ctx = wire[i].ctx };
	own = n;
	if (p->opts.nprepass > ANALYSIS_PREPASS_MAX) {
		snprintf(err, errlen, "%zu consumers of the trace's pre-pass, at most %d",
			 p->opts.nprepass, ANALYSIS_PREPASS_MAX);
		return -EINVAL;
	}
	/* The command's after the analysis's: a record goes to the parts first. */
	for (size_t i = 0; i < p->opts.nprepass; i++)
		c[n++] = p->opts.prepass[i];
	if (!n || !p->tr)
		return 0;
	trace__scan_types(path, c, n, err, errlen);
	for (size_t i = own; i < n; i++)
		p->opts.prepass[i - own].err = c[i].err;
	n = own;
	/* Else than out of memory, the file could not be opened again: err says. */
	if (p->tiers && (ret = scan_err(c, n, p->tiers) ?: tiers__scanned(p->tiers))) {
		if (ret == -ENOMEM)
			snprintf(err, errlen, "out of memory reading the CUPTI records of %s",
				 path);
		return ret;
	}
	if (p->perfmaps && !scan_err(c, n, p->perfmaps))
		names__set_perfmaps(p->nm, p->perfmaps);
	if (scan_err(c, n, p->py))
		analysis__note(a, "the trace's Python code could not be read: frames unnamed");
	if (p->archive)
		archive_ready(a, path, scan_err(c, n, p->archive));
	if (has(p, TRACE_F_CGROUP) && cgroups__scanned(p->cg, scan_err(c, n, p->cg)))
		analysis__note(a,
			       "the trace's cgroup records could not be read first: read in order");
	return 0;
}

struct analysis *analysis__open(const char *path, const struct analysis_opts *opts, char *err,
				size_t errlen)
{
	struct analysis *a = calloc(1, sizeof(*a));
	struct analysis_priv *p = calloc(1, sizeof(*p));
	const struct gs_hdr *first;

	if (!a || !p) {
		free(a);
		free(p);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	a->priv = p;
	p->opts = *opts;
	p->next_due = UINT64_MAX;
	p->min_gap_ns = a->min_gap_ns = opts->min_gap_ns;
	p->version = TRACE_VERSION;
	if (path && !(p->tr = trace__open(path, err, errlen))) {
		analysis__free(a);
		return NULL;
	}
	if (p->tr && trace__peek(p->tr, &first) <= 0) {
		/* A recorder killed at once (the OOM killer in a small cgroup) leaves a header. */
		snprintf(err, errlen, "%s holds no records: its recorder ended before writing any",
			 path);
		analysis__free(a);
		return NULL;
	}
	p->strs = strtab__new();
	p->stacks = stacktab__new();
	p->th = p->strs && p->stacks ? threads__new(p->strs, p->stacks) : NULL;
	p->nm = p->strs ? names__new(p->strs, !opts->no_file_symbols, opts->debug_dir) : NULL;
	if (p->nm && names__set_own(p->nm, opts->own, opts->nown))
		goto oom;
	if (p->strs && !opts->api_only && has(p, TRACE_F_GPU_ACT) &&
	    !(p->tiers = tiers__new(opts->min_gap_ns, p->strs)))
		goto oom;
	/* With CUPTI's timeline the API tier's windows down to a quarter of min_gap are compared. */
	p->gt = p->strs ? gputime__new(p->strs, opts->min_gap_ns / (p->tiers ? 4 : 1)) : NULL;
	if (p->gt && opts->copy_gbps > 0) {
		gputime__copy_model(p->gt, opts->copy_gbps, opts->copy_latency_us);
		a->copy_gbps = opts->copy_gbps;
		a->copy_latency_us = opts->copy_latency_us;
	}
	p->uw = p->nm ? unwinder__new(p->nm, !opts->no_file_symbols) : NULL;
	if (p->uw)
		unwinder__set_budget(p->uw, opts->unwind_per_s);
	if (p->nm && has(p, TRACE_F_PERF_MAP))
		p->perfmaps = perfmaps__new();
	if (p->nm && (p->py = pyframes__new(p->strs, native_name, p->nm)))
		names__set_pyframes(p->nm, p->py);
	if (p->uw && !opts->no_file_symbols && has(p, TRACE_F_ARCHIVE))
		p->archive = report_archive__new();
	p->cg = cgroups__new(p->strs);
	if (p->cg && prepass(a, path, err, errlen)) {
		analysis__free(a);
		return NULL;
	}
	p->rd = oreader__new(p->tr, NULL, OREADER_WINDOW_NS);
	p->launches = launch_counter__new();
	p->split = idlesplit__new();
	p->decided_only = opts->decided_only;
	p->bl = p->th ? blame__new(p->th, p->nm, p->strs, opts->max_hops) : NULL;
	p->tasks = tasks__new(p->strs, p->stacks);
	if (!p->th || !p->nm || !p->gt || !p->uw || !p->rd || !p->launches || !p->split || !p->bl ||
	    !p->tasks || !p->cg)
		goto oom;
	blame__set_tasks(p->bl, p->tasks);
	/* A live analysis (no file) reads this machine's records. */
	{
		enum gs_arch arch = p->tr ? trace_flags__arch(trace__stats(p->tr)->flags) :
					    gs_arch__host();

		blame__set_arch(p->bl, arch);
		if (p->split)
			idlesplit__set_arch(p->split, arch);
	}
	blame__set_cgroups(p->bl, p->cg);
	if (p->tr)
		p->version = trace__stats(p->tr)->version;
	return a;
oom:
	snprintf(err, errlen, "out of memory");
	analysis__free(a);
	return NULL;
}

int analysis__step(struct analysis *a, const struct gs_hdr *h)
{
	struct analysis_priv *p = a->priv;

	if (p->decided_only && h->type == GS_EV_CUDA && (h->flags & CU_LF_EXTRA))
		return 0;
	if (launch_counter__add(p->launches, h) ||
	    (h->type == GS_REC_LAUNCH_IVALS && idlesplit__ivals(p->split, h)))
		return -ENOMEM;
	h = unwinder__feed(p->uw, h);
	h = pyframes__feed(p->py, h);
	if (analysis_priv__feed(a, h, p->version))
		return -ENOMEM;
	take_idle(a, h->type == GS_EV_CUDA);
	if (a->end_ns >= p->next_due && complete_due(a, p->bl, &p->opts, a->end_ns))
		return -EIO;
	if (++p->nrec % PRUNE_EVERY == 0 || a->end_ns >= p->pruned_ns + PRUNE_NS) {
		p->pruned_ns = a->end_ns;
		prune(a, a->end_ns);
	}
	return 0;
}

int analysis__busy_ns(struct analysis *a, __u32 device, __u64 *busy_ns)
{
	return gputime__busy_ns(a->priv->gt, device, a->end_ns, busy_ns);
}

int analysis__split(struct analysis *a, __u32 device, __u64 *busy_ns, struct idle_split *s)
{
	__u64 start, end;
	int err = gputime__busy_ns(a->priv->gt, device, a->end_ns, busy_ns);

	memset(s, 0, sizeof(*s));
	if (err || gputime__active(a->priv->gt, device, a->end_ns, &start, &end) || end < start ||
	    start < a->start_ns)
		return err ? err : -ENOENT;
	s->active_start = start;
	s->active_end = end;
	s->setup_ns = start - a->start_ns;
	s->tail_ns = a->end_ns > end ? a->end_ns - end : 0;
	s->gaps_ns = end - start > *busy_ns ? end - start - *busy_ns : 0;
	return 0;
}

struct ordered_reader *analysis__reader(struct analysis *a)
{
	return a->priv->rd;
}

int analysis__finish(struct analysis *a, char *err, size_t errlen)
{
	struct analysis_priv *p = a->priv;
	const struct notes nt = { note_add, a };
	__u64 names_evicted = 0;

	gputime__flush(p->gt);
	take_idle(a, true);
	if (complete_due(a, p->bl, &p->opts, UINT64_MAX)) {
		snprintf(err, errlen, "cannot write the report");
		return -EIO;
	}
	a->duration_ns = a->end_ns > a->start_ns ? a->end_ns - a->start_ns : 0;
	if (gputime__finish(p->gt, a->start_ns, a->end_ns, &a->devices, &a->ndevices))
		goto oom;
	gputime__handles(p->gt, &a->handles);
	if (p->tiers &&
	    (tiers__devices(p->tiers, a->start_ns, a->end_ns, &a->devices, &a->ndevices) ||
	     tiers__agree(p->tiers, &a->cupti, &a->agree, &a->nagree)))
		goto oom;
	if (idlesplit__finish(p->split, p->th, p->nm, p->strs, a->devices, a->ndevices, a->start_ns,
			      a->end_ns, &a->under))
		goto oom;
	tasks__note(p->tasks, p->th, &nt);
	cgroups__whatif(p->cg, &a->quota);
	a->gaps = p->gaps.data;
	a->ngaps = p->gaps.n;
	p->gaps = (struct vec){};
	if (a->ngaps > 1)
		qsort(a->gaps, a->ngaps, sizeof(*a->gaps), cmp_gap);
	for (size_t i = 0; i < a->ngaps; i++)
		a->gaps[i].id = i + 1;
	if (p->bl && blame__task_hops_cut(p->bl)) {
		char line[160];

		snprintf(line, sizeof(line),
			 "%llu hops through async tasks not followed (%d at most in one gap): that "
			 "time is named as the polling thread's own",
			 (unsigned long long)blame__task_hops_cut(p->bl), BLAME_MAX_TASK_HOPS);
		analysis__note(a, line);
	}
	names_evicted = blame__names_evicted(p->bl);
	blame__free(p->bl);
	p->bl = NULL;
	free(a->causes);
	if (causes__rank(&p->kind_fn, a->gap_ns, &a->causes, &a->ncauses))
		goto oom;
	recover__causes(&p->recover, a->causes, a->ncauses);
	free(a->hops);
	if (recover__hops(&p->recover, &a->hops, &a->nhops))
		goto oom;
	a->run_ns = 0;
	for (size_t d = 0; d < a->ndevices; d++)
		a->run_ns += a->devices[d].busy_ns + a->devices[d].idle_ns;
	if (!a->run_ns)
		a->run_ns = a->duration_ns;
	if (launch_counter__totals(p->launches, analysis_priv__probe_name, p, &a->launches))
		goto oom;
	a->stacks = *unwinder__counts(p->uw);
	names__counts(p->nm, &a->symbols);
	if (p->tr)
		losses__reader(&a->loss, trace__stats(p->tr), &a->handles, a->events,
			       a->cuda_events, &nt);
	losses__tables(&a->loss, &a->tables, threads__counts(p->th), names_evicted, &nt);
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}

int analysis__read(struct analysis *a, const char *path, char *err, size_t errlen)
{
	const struct gs_hdr *h;
	int ret;

	while ((ret = oreader__next(a->priv->rd, &h)) > 0) {
		ret = analysis__step(a, h);
		if (ret == -ENOMEM)
			goto oom;
		if (ret)
			goto fail;
	}
	if (ret < 0)
		analysis__note(a, "the trace could not be read to its end");
	ret = analysis__finish(a, err, errlen);
	if (!ret && threads__names_dropped(a->priv->th)) {
		char line[160];

		snprintf(line, sizeof(line),
			 "%llu thread renames not followed: over %u distinct thread names",
			 (unsigned long long)threads__names_dropped(a->priv->th),
			 THREADS_NAMES_MAX);
		analysis__note(a, line);
	}
	if (ret == -ENOMEM)
		goto oom;
	if (ret)
		goto fail;
	return 0;
oom:
	snprintf(err, errlen, "out of memory analysing %s", path);
	return -ENOMEM;
fail:
	snprintf(err, errlen, "cannot write the report of %s", path);
	return -EIO;
}

struct analysis *analysis__run(const char *path, const struct analysis_opts *opts, char *err,
			       size_t errlen)
{
	struct analysis *a = analysis__open(path, opts, err, errlen);

	if (a && analysis__read(a, path, err, errlen)) {
		analysis__free(a);
		return NULL;
	}
	return a;
}

void analysis__free(struct analysis *a)
{
	struct analysis_priv *p;

	if (!a)
		return;
	p = a->priv;
	for (size_t g = 0; g < a->ngaps; g++)
		gap__free_parts(&a->gaps[g]);
	free(a->gaps);
	if (p) {
		for (size_t i = 0; i < p->pending.n; i++)
			gap__free_parts(VEC_AT(&p->pending, struct gap, i));
		vec__free(&p->pending);
		causes__free(&p->kind_fn);
		recover__free(&p->recover);
		for (size_t g = 0; g < p->gaps.n; g++)
			gap__free_parts(VEC_AT(&p->gaps, struct gap, g));
		vec__free(&p->gaps);
		blame__free(p->bl);
	}
	for (size_t d = 0; d < a->ndevices; d++)
		free(a->devices[d].busy);
	free(a->devices);
	free(a->agree);
	free(a->causes);
	free(a->hops);
	folded__free(a->under.stacks);
	launch_totals__free(&a->launches);
	if (p) {
		launch_counter__free(p->launches);
		idlesplit__free(p->split);
		oreader__free(p->rd);
		gputime__free(p->gt);
		tiers__free(p->tiers);
		unwinder__free(p->uw);
		perfmaps__free(p->perfmaps);
		pyframes__free(p->py);
		names__free(p->nm);
		report_archive__free(p->archive);
		threads__free(p->th);
		tasks__free(p->tasks);
		cgroups__free(p->cg);
		stacktab__free(p->stacks);
		vec__free(&p->probes);
		vec__free(&p->task_kinds);
		vec__free(&p->exited);
		trace__close(p->tr);
		strtab__free(p->strs);
		free(p);
	}
	free(a);
}
