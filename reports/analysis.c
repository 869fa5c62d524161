// SPDX-License-Identifier: GPL-2.0
/*
 * The analysis behind `gapscope report`: read the trace once into per-thread timelines and the
 * GPU call list, replay the GPU timeline for its idle windows, walk a blame chain for each, and
 * rank the root causes. See analysis.h for the result.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "losses.h"
#include "blame.h"
#include "causes.h"
#include "cuda.h"
#include "futex.h"
#include "gputime.h"
#include "names.h"
#include "offcpu.h"
#include "perfmap.h"
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

/* A gap is analysed once the trace has gone this far past its end (intervals that end later
 * but reach into it are then in), and history is kept this long before the oldest open gap. */
#define GAP_MARGIN_NS (200ull * 1000 * 1000)
#define LOOKBACK_NS   (1000ull * 1000 * 1000)
#define PRUNE_EVERY   65536

struct analysis_priv {
	struct strtab *strs;
	struct stacktab *stacks;
	struct trace_reader *tr;
	struct ordered_reader *rd;
	struct vec pending; /* struct gap: closed, waiting for GAP_MARGIN_NS */
	__u64 next_due;	    /* when the first pending gap is due, UINT64_MAX: none */
	struct vec gaps;    /* struct gap: analysed */
	struct vec kind_fn; /* causes.h: root causes over all gaps */
	__u32 seq;
	struct threads *th;
	struct names *nm;
	struct gputime *gt;
	struct tiers *tiers; /* CUPTI's timeline; NULL unless the trace is marked for it */
	__u64 min_gap_ns;
	struct unwinder *uw;
	struct perfmaps *perfmaps; /* JITs' names, read first where the trace is marked for them */
	struct report_archive *archive; /* record --archive's files, read first where marked */
	struct vec probes;		/* const char *, by probe id */
	struct vec task_kinds; /* __u32 by probe id: enum rt_fn_kind of task probes, else 0 */
	struct tasks *tasks;   /* async tasks' polls and wakes (reports/tasks.h) */
	struct launch_counter *launches;
	bool decided_only; /* analysis_opts.decided_only */
};

static const char *probe_name(struct analysis_priv *p, __u32 id)
{
	const char **n = id < p->probes.n ? VEC_AT(&p->probes, const char *, id) : NULL;

	return n && *n ? *n : "?";
}

static const char *probe_name_of(void *p, __u32 id)
{
	return probe_name(p, id);
}

static void note_probe(struct analysis_priv *p, const struct gs_hdr *h)
{
	const struct gs_rec_probe *r = (const void *)h;
	size_t fixed = gs_fixed_size(h), len;
	const char *lib, *sym;

	if (fixed <= sizeof(*r) || r->id > 1u << 20)
		return;
	lib = r->names;
	len = strnlen(lib, fixed - sizeof(*r));
	if (sizeof(*r) + len + 1 >= fixed)
		return;
	sym = lib + len + 1;
	len = strnlen(sym, fixed - sizeof(*r) - len - 1);
	if (!len)
		return;
	while (p->probes.n <= r->id)
		if (!vec__push(&p->probes, sizeof(const char *)))
			return;
	{
		char buf[256];

		snprintf(buf, sizeof(buf), "%.*s", (int)len, sym);
		*VEC_AT(&p->probes, const char *, r->id) = strtab__intern(p->strs, buf);
	}
	while (p->task_kinds.n <= r->id)
		if (!vec__push(&p->task_kinds, sizeof(__u32)))
			return;
	*VEC_AT(&p->task_kinds, __u32, r->id) = r->family == GS_PROBE_TASK ? r->kind : 0;
}

/*
 * Completion evidence is taken at a synchronize's return, which can only be late (by a wait for
 * a CPU), never early. The wakeup of its last sleep bounds how much earlier: not the evidence
 * itself, since a driver may wake its waiters before the last operation is done (simcuda does
 * at every operation its stream completes).
 */
static __u64 woken(const struct thread *t, const struct gs_hdr *h, const struct cu_event *e)
{
	__u64 end = h->ts + e->dur_ns;

	if (!(h->flags & GS_F_RET) || (e->kind != CU_K_SYNC_STREAM && e->kind != CU_K_SYNC_EVENT &&
				       e->kind != CU_K_SYNC_CTX && e->kind != CU_K_MEMCPY))
		return 0;
	for (size_t i = t->off.n; i--;) {
		const struct th_off *o = VEC_AT(&t->off, struct th_off, i);

		if (o->end <= h->ts)
			break;
		if (o->end <= end && o->blocked)
			return o->wake;
	}
	return 0;
}

/* One record: metadata, or an event for the timelines. Returns -ENOMEM only. */
static int feed(struct analysis *a, const struct gs_hdr *h, __u32 version)
{
	struct analysis_priv *p = a->priv;
	size_t fixed = gs_fixed_size(h);
	__u64 end = h->ts;

	switch (h->type) {
	case GS_REC_PROBE:
		note_probe(p, h);
		return 0;
	case GS_REC_MAP:
		if (fixed > sizeof(struct gs_rec_map)) {
			names__add_map(p->nm, (const void *)h);
			unwinder__add_map(p->uw, (const void *)h);
		}
		return 0;
	case GS_REC_KSYM:
		if (fixed > sizeof(struct gs_rec_ksym)) {
			char buf[256];
			const struct gs_rec_ksym *k = (const void *)h;

			snprintf(buf, sizeof(buf), "%.*s", (int)(fixed - sizeof(*k)), k->name);
			names__add_ksym(p->nm, k->addr, buf);
		}
		return 0;
	case GS_REC_LOSSES:
		losses__record(a, h);
		return 0;
	case GS_EV_COMM:
		if (fixed >= sizeof(struct comm_event))
			threads__set_comm(p->th, h->tid, h->tgid,
					  ((const struct comm_event *)h)->comm, GS_COMM_LEN);
		break;
	case GS_EV_FORK:
		if (fixed >= sizeof(struct fork_event)) {
			const struct fork_event *f = (const void *)h;
			struct thread *c = threads__get(p->th, f->child_tid, f->child_tgid);

			if (!c)
				return -ENOMEM;
			c->born_ns = h->ts;
			c->parent = h->tid;
			threads__set_comm(p->th, f->child_tid, f->child_tgid, f->comm, GS_COMM_LEN);
		}
		break;
	case GS_EV_EXEC:
		if (fixed >= sizeof(struct exec_event))
			threads__set_comm(p->th, h->tid, h->tgid,
					  ((const struct exec_event *)h)->comm, GS_COMM_LEN);
		break;
	case GS_EV_EXIT: {
		struct thread *t = threads__get(p->th, h->tid, h->tgid);

		if (!t)
			return -ENOMEM;
		t->exit_ns = h->ts;
		break;
	}
	case GS_EV_OFFCPU:
		if (fixed < sizeof(struct offcpu_event))
			return 0;
		end += ((const struct offcpu_event *)h)->dur_ns;
		if (h->flags & GS_F_RESUME_UNSEEN)
			a->resume_unseen++;
		if (threads__add_offcpu(p->th, h, version))
			return -ENOMEM;
		break;
	case GS_EV_FUTEX:
		if (fixed < sizeof(struct futex_event))
			return 0;
		end += ((const struct futex_event *)h)->dur_ns;
		if (threads__add_futex(p->th, h))
			return -ENOMEM;
		break;
	case GS_EV_PROBE:
		if (fixed < sizeof(struct probe_event))
			return 0;
		if (h->flags & GS_F_RET) {
			const struct probe_event *e = (const void *)h;
			__u32 *tk = e->id < p->task_kinds.n ? VEC_AT(&p->task_kinds, __u32, e->id) :
							      NULL;

			end += e->dur_ns;
			if (tk &&
			    *tk) { /* an async task's poll or wake: not a call of the thread */
				if (tasks__add(p->tasks, h, *tk, e->arg0, e->dur_ns))
					return -ENOMEM;
			} else if (threads__add_call(p->th, h, TC_PROBE, probe_name(p, e->id),
						     e->dur_ns))
				return -ENOMEM;
		}
		break;
	case GS_EV_CUDA: {
		const struct cu_event *e = (const void *)h;
		struct thread *t;

		if (fixed < sizeof(*e))
			return 0;
		a->cuda_events++;
		t = threads__get(p->th, h->tid, h->tgid);
		if (!t || gputime__add(p->gt, e, probe_name(p, e->fn), t->comm, woken(t, h, e)))
			return -ENOMEM;
		if (h->flags & GS_F_RET) {
			end += e->dur_ns;
			if (threads__add_call(p->th, h, TC_CUDA, probe_name(p, e->fn), e->dur_ns))
				return -ENOMEM;
		}
		break;
	}
	case GS_EV_SAMPLE:
		if (fixed < sizeof(struct sample_event))
			return 0;
		if (threads__add_sample(p->th, h))
			return -ENOMEM;
		break;
	default:
		if (h->type >= GS_REC_CLOCK)
			return 0;
	}
	if (h->ts && (!a->start_ns || h->ts < a->start_ns))
		a->start_ns = h->ts;
	if (end > a->end_ns)
		a->end_ns = end;
	a->events++;
	return 0;
}

struct report_archive *analysis__archive(const struct analysis *a)
{
	return a->priv ? a->priv->archive : NULL;
}

void analysis__note(struct analysis *a, const char *s)
{
	if (a->nnotes < sizeof(a->notes) / sizeof(a->notes[0]))
		a->notes[a->nnotes++] = strtab__intern(a->priv->strs, s);
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
	g->cause_ns = g->nroots ? g->roots[0].ns : 0;
	a->gap_ns += g->end_ns - g->start_ns;
	a->preempted_outside_ns += g->preempted_outside_ns;
	if (!err && o->on_gap)
		err = o->on_gap(g, o->ctx);
	for (__u32 r = 1; r < g->nroots; r++) {
		for (__u32 k = 0; k < g->roots[r].nlinks; k++)
			free(g->roots[r].links[k].frames);
		free(g->roots[r].links);
	}
	free(g->roots);
	g->roots = NULL;
	g->nroots = 0;
	for (__u32 i = 0; i < g->nstacks; i++)
		free(g->stacks[i].frames);
	free(g->stacks);
	g->stacks = NULL;
	g->nstacks = 0;
	kept = vec__push(&p->gaps, sizeof(*kept));
	if (!kept) {
		for (__u32 k = 0; k < g->nchain; k++)
			free(g->chain[k].frames);
		free(g->chain);
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
	if (h > LOOKBACK_NS)
		threads__prune(p->th, h - LOOKBACK_NS);
}

static int cmp_gap(const void *x, const void *y)
{
	const struct gap *a = x, *b = y;

	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return a->device < b->device ? -1 : a->device > b->device;
}

struct analysis *analysis__run(const char *path, const struct analysis_opts *opts, char *err,
			       size_t errlen)
{
	struct analysis *a = calloc(1, sizeof(*a));
	struct analysis_priv *p = calloc(1, sizeof(*p));
	const struct gs_hdr *h;
	struct blame *bl = NULL;
	__u64 nrec = 0;
	__u32 version;
	int ret;

	if (!a || !p) {
		free(a);
		free(p);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	a->priv = p;
	p->next_due = UINT64_MAX;
	p->min_gap_ns = opts->min_gap_ns;
	p->tr = trace__open(path, err, errlen);
	if (!p->tr) {
		analysis__free(a);
		return NULL;
	}
	p->strs = strtab__new();
	p->stacks = stacktab__new();
	p->th = p->strs && p->stacks ? threads__new(p->strs, p->stacks) : NULL;
	p->nm = p->strs ? names__new(p->strs, !opts->no_file_symbols, opts->debug_dir) : NULL;
	if (p->strs && !opts->api_only && (trace__stats(p->tr)->flags & TRACE_F_GPU_ACT) &&
	    !(p->tiers = tiers__scan(path, opts->min_gap_ns, p->strs, err, errlen)))
		goto out;
	/* With CUPTI's timeline the API tier's windows down to a quarter of min_gap are compared. */
	p->gt = p->strs ? gputime__new(p->strs, opts->min_gap_ns / (p->tiers ? 4 : 1)) : NULL;
	if (p->gt && opts->copy_gbps > 0) {
		gputime__copy_model(p->gt, opts->copy_gbps, opts->copy_latency_us);
		a->copy_gbps = opts->copy_gbps;
		a->copy_latency_us = opts->copy_latency_us;
	}
	p->uw = p->nm ? unwinder__new(p->nm, !opts->no_file_symbols) : NULL;
	if (p->nm && (trace__stats(p->tr)->flags & TRACE_F_PERF_MAP) &&
	    (p->perfmaps = perfmaps__new()) && !perfmaps__scan(p->perfmaps, path))
		names__set_perfmaps(p->nm, p->perfmaps);
	if (p->uw && !opts->no_file_symbols && (trace__stats(p->tr)->flags & TRACE_F_ARCHIVE) &&
	    (p->archive = report_archive__new())) {
		/* A folder that cannot be made leaves the files unused, and the report goes on. */
		if (report_archive__scan(p->archive, path))
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
	p->rd = oreader__new(p->tr, NULL, OREADER_WINDOW_NS);
	p->launches = launch_counter__new();
	p->decided_only = opts->decided_only;
	bl = p->th ? blame__new(p->th, p->nm, p->strs, opts->max_hops) : NULL;
	p->tasks = tasks__new(p->strs, p->stacks);
	if (!p->th || !p->nm || !p->gt || !p->uw || !p->rd || !p->launches || !bl || !p->tasks)
		goto oom;
	blame__set_tasks(bl, p->tasks);
	version = trace__stats(p->tr)->version;
	while ((ret = oreader__next(p->rd, &h)) > 0) {
		if (p->decided_only && h->type == GS_EV_CUDA && (h->flags & CU_LF_EXTRA))
			continue;
		if (launch_counter__add(p->launches, h))
			goto oom;
		h = unwinder__feed(p->uw, h);
		if (feed(a, h, version))
			goto oom;
		take_idle(a, h->type == GS_EV_CUDA);
		if (a->end_ns >= p->next_due && complete_due(a, bl, opts, a->end_ns))
			goto fail;
		if (++nrec % PRUNE_EVERY == 0)
			prune(a, a->end_ns);
	}
	if (ret < 0)
		analysis__note(a, "the trace could not be read to its end");
	gputime__flush(p->gt);
	take_idle(a, true);
	if (complete_due(a, bl, opts, UINT64_MAX))
		goto fail;
	a->duration_ns = a->end_ns > a->start_ns ? a->end_ns - a->start_ns : 0;
	if (gputime__finish(p->gt, a->start_ns, a->end_ns, &a->devices, &a->ndevices))
		goto oom;
	if (p->tiers &&
	    (tiers__devices(p->tiers, a->start_ns, a->end_ns, &a->devices, &a->ndevices) ||
	     tiers__agree(p->tiers, a)))
		goto oom;
	tasks__note(p->tasks, p->th, a);
	a->gaps = p->gaps.data;
	a->ngaps = p->gaps.n;
	if (a->ngaps > 1)
		qsort(a->gaps, a->ngaps, sizeof(*a->gaps), cmp_gap);
	for (size_t i = 0; i < a->ngaps; i++)
		a->gaps[i].id = i + 1;
	blame__free(bl);
	causes__rank(a, &p->kind_fn);
	if (launch_counter__totals(p->launches, probe_name_of, p, &a->launches))
		goto oom;
	a->stacks = *unwinder__counts(p->uw);
	losses__reader(a, trace__stats(a->priv->tr));
	return a;
oom:
	snprintf(err, errlen, "out of memory analysing %s", path);
	goto out;
fail:
	snprintf(err, errlen, "cannot write the report of %s", path);
out:
	blame__free(bl);
	a->gaps = p->gaps.data;
	a->ngaps = p->gaps.n;
	analysis__free(a);
	return NULL;
}

void analysis__free(struct analysis *a)
{
	struct analysis_priv *p;

	if (!a)
		return;
	p = a->priv;
	for (size_t g = 0; g < a->ngaps; g++) {
		struct gap *gp = &a->gaps[g];

		for (__u32 k = 0; k < gp->nchain; k++)
			free(gp->chain[k].frames);
		free(gp->chain);
		free(gp->kinds);
	}
	free(a->gaps);
	if (p) {
		for (size_t i = 0; i < p->pending.n; i++) {
			struct gap *g = VEC_AT(&p->pending, struct gap, i);

			free(g->roots);
			free(g->stacks);
		}
		vec__free(&p->pending);
		vec__free(&p->kind_fn);
	}
	for (size_t d = 0; d < a->ndevices; d++)
		free(a->devices[d].busy);
	free(a->devices);
	free(a->agree);
	launch_totals__free(&a->launches);
	if (p) {
		launch_counter__free(p->launches);
		oreader__free(p->rd);
		gputime__free(p->gt);
		tiers__free(p->tiers);
		unwinder__free(p->uw);
		perfmaps__free(p->perfmaps);
		names__free(p->nm);
		report_archive__free(p->archive);
		threads__free(p->th);
		tasks__free(p->tasks);
		stacktab__free(p->stacks);
		vec__free(&p->probes);
		vec__free(&p->task_kinds);
		trace__close(p->tr);
		strtab__free(p->strs);
		free(p);
	}
	free(a);
}
