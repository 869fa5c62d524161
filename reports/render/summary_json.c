// SPDX-License-Identifier: GPL-2.0
/* summary.json: DESIGN.md's stable keys, and a few more (tier edges, notes). */
#include <inttypes.h>
#include <stdio.h>

#include "gap.h"
#include "headline.h"
#include "summary.h"
#include "archived.h"
#include "escape.h"
#include "folded.h"
#include "idlesplit.h"
#include "jsonw.h"

static void json_frames(struct jsonw *w, const char *key, const char *const *frames, __u32 n)
{
	jsonw__open(w, key, '[');
	for (__u32 i = 0; i < n; i++)
		jsonw__str(w, NULL, frames[i]);
	jsonw__close(w);
}

/* What removing a cause or hop would give back, as a range [lo, hi] (recover.h). */
static void json_range(struct jsonw *w, __u64 lo, __u64 hi)
{
	jsonw__open(w, "recoverable_range_ns", '[');
	jsonw__u64(w, NULL, lo);
	jsonw__u64(w, NULL, hi);
	jsonw__close(w);
}

static void json_link(struct jsonw *w, const struct chain_link *l)
{
	jsonw__open(w, NULL, '{');
	jsonw__fmt(w, "tid", "%u", l->tid);
	jsonw__str(w, "comm", l->comm);
	jsonw__str(w, "state", thread_state__name(l->state));
	jsonw__str(w, "kind", blame_kind__name(l->kind));
	jsonw__u64(w, "ns", l->ns);
	if (l->lock)
		jsonw__str(w, "lock", l->lock);
	if (l->function)
		jsonw__str(w, "function", l->function);
	if (l->detail)
		jsonw__str(w, "detail", l->detail);
	json_frames(w, "frames", l->frames, l->nframes);
	jsonw__u64(w, "recoverable_ns", l->recoverable_ns);
	json_range(w, l->recoverable_ns, l->recoverable_hi_ns);
	jsonw__close(w);
}

/* A cause's breakdown: its top leaf functions and (a Python function's) lines. */
static void json_parts(struct jsonw *w, const char *key, const struct cause_part *p, __u32 n)
{
	jsonw__open(w, key, '[');
	for (__u32 i = 0; i < n; i++) {
		jsonw__open(w, NULL, '{');
		jsonw__str(w, "name", p[i].name);
		jsonw__u64(w, "ns", p[i].ns);
		jsonw__fmt(w, "share", "%.4f", p[i].share);
		jsonw__close(w);
	}
	jsonw__close(w);
}

/* A hop chains pass through, and what removing it would give back (recover.h). */
static void json_hop(struct jsonw *w, const struct hop *h)
{
	jsonw__open(w, NULL, '{');
	jsonw__str(w, "kind", blame_kind__name(h->kind));
	jsonw__str(w, "name", h->name);
	jsonw__u64(w, "ns", h->ns);
	jsonw__u64(w, "recoverable_ns", h->recoverable_ns);
	json_range(w, h->recoverable_lo_ns, h->recoverable_hi_ns);
	jsonw__close(w);
}

/* A cause row, with what removing it would give back. */
static void json_cause(struct jsonw *w, const struct cause *c)
{
	jsonw__open(w, NULL, '{');
	jsonw__str(w, "kind", blame_kind__name(c->kind));
	jsonw__str(w, "function", c->function);
	jsonw__u64(w, "ns", c->ns);
	jsonw__fmt(w, "share", "%.4f", c->share);
	jsonw__u64(w, "recoverable_ns", c->recoverable_ns);
	json_range(w, c->recoverable_lo_ns, c->recoverable_hi_ns);
	if (c->nleaves)
		json_parts(w, "leaves", c->leaves, c->nleaves);
	if (c->nlines)
		json_parts(w, "lines", c->lines, c->nlines);
	if (c->span.n) { /* a fault's pages: the file offsets they start at, and how many */
		jsonw__open(w, "pages", '{');
		jsonw__u64(w, "first_offset", c->span.lo);
		jsonw__u64(w, "last_offset", c->span.hi);
		jsonw__u64(w, "faults", c->span.n);
		jsonw__close(w);
	}
	jsonw__close(w);
}

static void json_idle_split(struct jsonw *w, const struct analysis *a, const struct idle_split *s)
{
	jsonw__open(w, "idle_split", '{');
	jsonw__u64(w, "setup_ns", s->setup_ns);
	jsonw__u64(w, "gaps_ns", s->gaps_ns);
	if (s->under_floor_known)
		jsonw__u64(w, "under_floor_ns", s->under_floor_ns);
	else
		jsonw__fmt(w, "under_floor_ns", "null");
	jsonw__u64(w, "tail_ns", s->tail_ns);
	jsonw__u64(w, "floor_ns", a->min_gap_ns);
	jsonw__close(w);
}

static void json_launch_timing(struct jsonw *w, const struct launch_timing *t)
{
	jsonw__open(w, "launch_timing", '{');
	jsonw__fmt(w, "tid", "%u", t->tid);
	jsonw__u64(w, "host_n", t->host_n);
	jsonw__u64(w, "host_p50_ns", t->host_p50_ns);
	jsonw__u64(w, "host_p99_ns", t->host_p99_ns);
	jsonw__u64(w, "kernel_n", t->kernel_n);
	jsonw__u64(w, "kernel_p50_ns", t->kernel_p50_ns);
	jsonw__u64(w, "kernel_p99_ns", t->kernel_p99_ns);
	jsonw__close(w);
}

/*
 * busy_pct over the recording; active_busy_pct over the first to the last GPU work (the
 * headline), a bound where the windows under the floor are not measured (the API tier:
 * under_floor_ns null); idle_split's parts sum to idle_ns.
 */
static void json_device(struct jsonw *w, const struct analysis *a, const struct device_summary *d)
{
	const struct idle_split *s = &d->split;
	char text[48];
	double lo;

	jsonw__open(w, NULL, '{');
	jsonw__fmt(w, "id", "%u", d->id);
	jsonw__u64(w, "busy_ns", d->busy_ns);
	jsonw__u64(w, "idle_ns", d->idle_ns);
	jsonw__fmt(w, "busy_pct", "%.2f",
		   a->duration_ns ? 100.0 * d->busy_ns / a->duration_ns : 0.0);
	jsonw__u64(w, "active_start_ns", s->active_start);
	jsonw__u64(w, "active_end_ns", s->active_end);
	jsonw__fmt(w, "active_busy_pct", "%.2f", idlesplit__busy_pct(d));
	jsonw__bool(w, "busy_bound", !s->under_floor_known);
	json_idle_split(w, a, s);
	if (d->timing.host_n || d->timing.kernel_n)
		json_launch_timing(w, &d->timing);
	/* The API tier's range (analysis.h), where it is one. */
	if (d->unconfirmed_ns) {
		jsonw__u64(w, "busy_unconfirmed_ns", d->unconfirmed_ns);
		jsonw__fmt(w, "busy_min_pct", "%.2f",
			   a->duration_ns ?
				   100.0 * (d->busy_ns - d->unconfirmed_ns) / a->duration_ns :
				   0.0);
	}
	/* summary.txt's headline range, where it prints one (headline__busy_range). */
	if (headline__busy_range(a, d, &lo))
		jsonw__fmt(w, "active_busy_min_pct", "%.2f", lo);
	/* The headline as summary.txt prints it, for the page's card: one rounding, not two. */
	jsonw__fmt(w, "active_busy_text", "\"%s\"", headline__busy_text(a, d, text, sizeof(text)));
	if (d->busy_unknown)
		jsonw__bool(w, "busy_unknown", true);
	if (d->unclosed && *d->unclosed)
		jsonw__str(w, "unclosed", d->unclosed);
	jsonw__close(w);
}

static void json_launch_intervals(struct jsonw *w, const struct under_floor *u)
{
	jsonw__open(w, "launch_intervals", '{');
	jsonw__fmt(w, "tid", "%u", u->ival_tid);
	jsonw__u64(w, "n", u->ival_n);
	jsonw__open(w, "p50_ns", '[');
	jsonw__u64(w, NULL, u->ival_p50_ns[0]);
	jsonw__u64(w, NULL, u->ival_p50_ns[1]);
	jsonw__close(w);
	jsonw__open(w, "p99_ns", '[');
	jsonw__u64(w, NULL, u->ival_p99_ns[0]);
	jsonw__u64(w, NULL, u->ival_p99_ns[1]);
	jsonw__close(w);
	jsonw__close(w);
}

/* The launching thread between its launches (idlesplit.h): the cause of idle under the floor. */
static void json_under_floor(struct jsonw *w, const struct analysis *a)
{
	const struct under_floor *u = &a->under;

	if (!u->tid)
		return;
	jsonw__newline(w);
	jsonw__open(w, "under_floor", '{');
	jsonw__fmt(w, "tid", "%u", u->tid);
	jsonw__str(w, "comm", u->comm);
	jsonw__u64(w, "launches", u->launches);
	jsonw__u64(w, "syncs", u->syncs);
	jsonw__u64(w, "syncs_quick", u->syncs_quick);
	jsonw__u64(w, "host_ns", u->host_ns);
	jsonw__str_or_null(w, "function", u->function);
	jsonw__u64(w, "samples", u->samples);
	jsonw__u64(w, "function_samples", u->function_samples);
	json_frames(w, "frames", u->frames, u->nframes);
	jsonw__u64(w, "runnable_ns", u->runnable_ns);
	jsonw__bool(w, "shown", headline__launches_shown(a));
	if (headline__launches_shown(a) && u->stacks && folded__total(u->stacks)) {
		jsonw__str(w, "folded", "gaps/launches.folded");
		jsonw__str(w, "svg", "gaps/launches.svg");
	}
	if (u->ival_n)
		json_launch_intervals(w, u);
	jsonw__open(w, "kinds", '[');
	for (int k = 0; k < BK_MAX; k++) {
		if (!u->kind_ns[k])
			continue;
		jsonw__open(w, NULL, '{');
		jsonw__str(w, "kind", k == BK_ON_CPU ? "launch_bound" : blame_kind__name(k));
		jsonw__u64(w, "ns", u->kind_ns[k]);
		jsonw__fmt(w, "share", "%.4f",
			   u->host_ns ? (double)u->kind_ns[k] / u->host_ns : 0.0);
		jsonw__close(w);
	}
	jsonw__close(w);
	jsonw__close(w);
}

/* A gap's root cause: its chain's last link. */
static void json_root(struct jsonw *w, const struct gap *g)
{
	const struct chain_link *root = g->nchain ? &g->chain[g->nchain - 1] : NULL;

	if (!root) {
		jsonw__fmt(w, "cause", "null");
		return;
	}
	jsonw__open(w, "cause", '{');
	jsonw__str(w, "kind", blame_kind__name(root->kind));
	jsonw__str(w, "function", root->lock ? root->lock : root->function);
	jsonw__str(w, "comm", root->comm);
	jsonw__fmt(w, "tid", "%u", root->tid);
	jsonw__u64(w, "ns", g->cause_ns);
	jsonw__close(w);
}

static void json_gap(struct jsonw *w, const struct gap *g)
{
	char path[32];

	jsonw__open(w, NULL, '{');
	jsonw__fmt(w, "id", "%u", g->id);
	jsonw__fmt(w, "device", "%u", g->device);
	jsonw__u64(w, "start_ns", g->start_ns);
	jsonw__u64(w, "end_ns", g->end_ns);
	jsonw__u64(w, "duration_ns", g->end_ns - g->start_ns);
	jsonw__str(w, "tier", g->tier);
	jsonw__str(w, "start_edge", g->start_how);
	jsonw__u64(w, "start_earliest_ns", g->start_earliest_ns);
	jsonw__str(w, "end_edge", g->end_how);
	jsonw__u64(w, "preempted_outside_ns", g->preempted_outside_ns);
	jsonw__u64(w, "woken_outside_ns", g->woken_outside_ns);
	jsonw__open(w, "closer", '{');
	jsonw__fmt(w, "tid", "%u", g->closer_tid);
	jsonw__str(w, "comm", g->closer_comm);
	jsonw__close(w);
	jsonw__open(w, "chain", '[');
	for (__u32 k = 0; k < g->nchain; k++)
		json_link(w, &g->chain[k]);
	jsonw__close(w);
	json_root(w, g);
	jsonw__open(w, "roots", '[');
	for (__u32 k = 0; k < g->nkinds; k++)
		json_cause(w, &g->kinds[k]);
	jsonw__close(w);
	jsonw__open(w, "hops", '[');
	for (__u32 k = 0; k < g->nhops; k++)
		json_hop(w, &g->hops[k]);
	jsonw__close(w);
	snprintf(path, sizeof(path), "gaps/%04u.folded", g->id);
	jsonw__str(w, "folded", path);
	snprintf(path, sizeof(path), "gaps/%04u.svg", g->id);
	jsonw__str(w, "svg", path);
	jsonw__close(w);
}

/*
 * Launches: every one the program made (the recorder's counts, or the trace's records where it
 * wrote none), how many have a record, and by probed symbol; the async memsets counted.
 */
static void json_launches(struct jsonw *w, const struct launch_totals *l)
{
	jsonw__newline(w);
	jsonw__open(w, "launches", '{');
	jsonw__u64(w, "total", l->total);
	jsonw__u64(w, "in_trace", l->in_trace);
	jsonw__bool(w, "counted", l->counted);
	jsonw__bool(w, "all", l->all);
	jsonw__u64(w, "async_memsets", l->async_memsets);
	jsonw__open(w, "by_function", '{');
	for (size_t i = 0; i < l->nfn; i++)
		jsonw__named_u64(w, l->by_fn[i].fn, l->by_fn[i].count);
	jsonw__close(w);
	jsonw__close(w);
}

/* The CUPTI tier, in a trace marked for it: the collector's counts and the tiers' agreement. */
static void json_cupti(struct jsonw *w, const struct analysis *a)
{
	const struct cupti_info *c = &a->cupti;

	if (!c->marked)
		return;
	jsonw__newline(w);
	jsonw__open(w, "cupti", '{');
	jsonw__bool(w, "on", c->on);
	jsonw__bool(w, "flushed", c->flushed);
	jsonw__u64(w, "kernels", c->kernels);
	jsonw__u64(w, "copies", c->copies);
	jsonw__u64(w, "memsets", c->memsets);
	jsonw__u64(w, "launches", c->launches);
	jsonw__u64(w, "dropped", c->dropped);
	jsonw__u64(w, "bad", c->bad);
	jsonw__str_or_null(w, "status", c->status);
	jsonw__open(w, "agreement", '[');
	for (size_t i = 0; i < a->nagree; i++) {
		const struct tier_agreement *t = &a->agree[i];

		jsonw__open(w, NULL, '{');
		jsonw__fmt(w, "device", "%u", t->device);
		jsonw__fmt(w, "cupti_gaps", "%u", t->cupti_gaps);
		jsonw__fmt(w, "api_gaps", "%u", t->api_gaps);
		jsonw__fmt(w, "recalled", "%u", t->recalled);
		jsonw__fmt(w, "precise", "%u", t->precise);
		jsonw__fmt(w, "recall", "%.4f",
			   t->cupti_gaps ? (double)t->recalled / t->cupti_gaps : 1.0);
		jsonw__fmt(w, "precision", "%.4f",
			   t->api_gaps ? (double)t->precise / t->api_gaps : 1.0);
		jsonw__u64(w, "start_err_p50_ns", t->start_err_p50);
		jsonw__u64(w, "start_err_p99_ns", t->start_err_p99);
		jsonw__u64(w, "end_err_p50_ns", t->end_err_p50);
		jsonw__u64(w, "end_err_p99_ns", t->end_err_p99);
		jsonw__close(w);
	}
	jsonw__close(w);
	jsonw__close(w);
}

/* Every loss counter by name, and the analysis's bounded tables (what they let go of). */
static void json_losses(struct jsonw *w, const struct analysis *a)
{
	jsonw__newline(w);
	jsonw__open(w, "losses", '{');
	for (size_t i = 0; i < a->loss.count; i++)
		jsonw__named_u64(w, a->loss.names[i], a->loss.n[i]);
	jsonw__close(w);
	jsonw__newline(w);
	jsonw__open(w, "tables", '{');
	jsonw__u64(w, "futex_words_forgotten", a->tables.words_forgotten);
	jsonw__u64(w, "futex_words_max", a->tables.words_max);
	jsonw__u64(w, "threads_forgotten", a->tables.threads_forgotten);
	jsonw__u64(w, "threads_max", a->tables.threads_max);
	jsonw__close(w);
	jsonw__newline(w);
	jsonw__u64(w, "offcpu_resume_unseen", a->resume_unseen);
}

/*
 * The API tier's handle tables: what they kept and let go of, and the work of finding streams
 * per launch (flat however many handles the trace names).
 */
static void json_handles(struct jsonw *w, const struct analysis *a)
{
	jsonw__newline(w);
	jsonw__open(w, "stream_handles", '{');
	jsonw__u64(w, "kept", a->handles.streams);
	jsonw__u64(w, "peak", a->handles.streams_peak);
	jsonw__u64(w, "let_go", a->handles.streams_let_go);
	jsonw__u64(w, "calls_refused", a->handles.stream_calls_refused);
	jsonw__u64(w, "events_kept", a->handles.events);
	jsonw__u64(w, "events_peak", a->handles.events_peak);
	jsonw__u64(w, "events_let_go", a->handles.events_let_go);
	jsonw__u64(w, "work", a->handles.work);
	jsonw__u64(w, "work_max_call", a->handles.work_max);
	jsonw__u64(w, "launches", a->handles.launches);
	jsonw__fmt(w, "work_per_launch", "%.3f",
		   a->handles.launches ? (double)a->handles.work / a->handles.launches : 0.0);
	jsonw__close(w);
}

/* Stacks as captured and unwound; the symbols found and the files without them; the archive. */
static void json_stacks_symbols(struct jsonw *w, const struct analysis *a)
{
	const struct symbol_counts *c = &a->symbols;

	jsonw__newline(w);
	jsonw__open(w, "stacks", '{');
	jsonw__u64(w, "captured", a->stacks.captured);
	jsonw__u64(w, "complete", a->stacks.complete);
	jsonw__u64(w, "truncated", a->stacks.truncated);
	jsonw__u64(w, "stopped", a->stacks.stopped);
	jsonw__u64(w, "fp_only", a->stacks.fp_only);
	jsonw__u64(w, "fp_complete", a->stacks.fp_complete);
	jsonw__close(w);
	if (c->on) {
		jsonw__newline(w);
		jsonw__open(w, "symbols", '{');
		jsonw__u64(w, "named", c->named);
		jsonw__u64(w, "unnamed", c->unnamed);
		jsonw__u64(w, "unmapped", c->unmapped);
		jsonw__open(w, "unnamed_files", '[');
		for (size_t i = 0; i < c->nfiles; i++) {
			jsonw__open(w, NULL, '{');
			jsonw__str(w, "path", c->files[i].path);
			jsonw__fmt(w, "state", "\"%s\"", c->files[i].state);
			jsonw__str_or_null(w, "source", c->files[i].source);
			jsonw__u64(w, "unnamed", c->files[i].unnamed);
			jsonw__close(w);
		}
		jsonw__close(w);
		jsonw__fmt(w, "more_files", "%zu", c->more_files);
		jsonw__close(w);
	}
	if (a->archive) {
		jsonw__newline(w);
		jsonw__open(w, "archive", '{');
		jsonw__u64(w, "files", a->archive->files);
		jsonw__u64(w, "used", a->archive->used);
		jsonw__u64(w, "damaged", a->archive->bad);
		jsonw__close(w);
	}
}

/* The CPU quota of the target's cgroup, where it has one. */
static void json_quota(struct jsonw *w, const struct analysis *a)
{
	if (!a->quota.cgroup)
		return;
	jsonw__newline(w);
	jsonw__open(w, "quota", '{');
	jsonw__str(w, "cgroup", a->quota.cgroup);
	jsonw__fmt(w, "has_cpus", "%.3f", a->quota.has_cpus);
	jsonw__fmt(w, "peak_cpus", "%.3f", a->quota.peak_cpus);
	jsonw__fmt(w, "mean_cpus", "%.3f", a->quota.mean_cpus);
	jsonw__bool(w, "use_known", a->quota.use_known);
	jsonw__u64(w, "throttled_ns", a->quota.throttled_ns);
	jsonw__u64(w, "nr_throttled", a->quota.nr_throttled);
	jsonw__u64(w, "nr_periods", a->quota.nr_periods);
	jsonw__close(w);
}

static int write_json(const struct analysis *a, const char *program, FILE *out)
{
	struct jsonw w;

	jsonw__init(&w, out);
	jsonw__open(&w, NULL, '{');
	jsonw__fmt(&w, "version", "1");
	/* start_ns: the trace's first moment (CLOCK_MONOTONIC), where the page's time axis begins */
	jsonw__u64(&w, "start_ns", a->start_ns);
	jsonw__u64(&w, "duration_ns", a->duration_ns);
	jsonw__u64(&w, "lost_events", a->loss.lost_events);
	json_losses(&w, a);
	/* the recorded program (program.h), for `gapscope diff` to tell two programs apart */
	if (program && *program) {
		jsonw__newline(&w);
		jsonw__str(&w, "program", program);
	}
	json_handles(&w, a);
	json_stacks_symbols(&w, a);
	jsonw__newline(&w);
	jsonw__open(&w, "notes", '[');
	for (size_t i = 0; i < a->nnotes; i++)
		jsonw__str(&w, NULL, a->notes[i]);
	jsonw__close(&w);
	jsonw__newline(&w);
	jsonw__open(&w, "devices", '[');
	for (size_t d = 0; d < a->ndevices; d++)
		json_device(&w, a, &a->devices[d]);
	jsonw__close(&w);
	json_under_floor(&w, a);
	if (a->copy_gbps > 0) {
		jsonw__newline(&w);
		jsonw__open(&w, "copy_model", '{');
		jsonw__fmt(&w, "gbps", "%g", a->copy_gbps);
		jsonw__fmt(&w, "latency_us", "%g", a->copy_latency_us);
		jsonw__close(&w);
	}
	json_launches(&w, &a->launches);
	json_cupti(&w, a);
	json_quota(&w, a);
	jsonw__newline(&w);
	jsonw__u64(&w, "gap_ns", a->gap_ns);
	jsonw__u64(&w, "preempted_outside_ns", a->preempted_outside_ns);
	jsonw__u64(&w, "woken_outside_ns", a->woken_outside_ns);
	jsonw__newline(&w);
	jsonw__open(&w, "gaps", '[');
	for (size_t g = 0; g < a->ngaps; g++) {
		jsonw__newline(&w);
		json_gap(&w, &a->gaps[g]);
	}
	jsonw__close(&w);
	jsonw__newline(&w);
	jsonw__open(&w, "causes", '[');
	for (size_t i = 0; i < a->ncauses; i++)
		json_cause(&w, &a->causes[i]);
	jsonw__close(&w);
	jsonw__newline(&w);
	jsonw__u64(&w, "run_ns", a->run_ns);
	jsonw__open(&w, "hops", '[');
	for (size_t i = 0; i < a->nhops; i++)
		json_hop(&w, &a->hops[i]);
	jsonw__close(&w);
	jsonw__close(&w);
	fputc('\n', out);
	return ferror(out) ? -1 : 0;
}

int summary_json__write(const struct analysis *a, FILE *out)
{
	return write_json(a, NULL, out);
}

int summary_json__write_program(const struct analysis *a, const char *program, FILE *out)
{
	return write_json(a, program, out);
}
