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

static void json_link(FILE *out, const struct chain_link *l)
{
	fprintf(out, "{\"tid\":%u,\"comm\":", l->tid);
	esc__json(out, l->comm, false);
	fprintf(out, ",\"state\":\"%s\",\"kind\":\"%s\",\"ns\":%" PRIu64,
		thread_state__name(l->state), blame_kind__name(l->kind), (uint64_t)l->ns);
	if (l->lock) {
		fprintf(out, ",\"lock\":");
		esc__json(out, l->lock, false);
	}
	if (l->function) {
		fprintf(out, ",\"function\":");
		esc__json(out, l->function, false);
	}
	if (l->detail) {
		fprintf(out, ",\"detail\":");
		esc__json(out, l->detail, false);
	}
	fprintf(out, ",\"frames\":[");
	for (__u32 i = 0; i < l->nframes; i++) {
		if (i)
			fputc(',', out);
		esc__json(out, l->frames[i], false);
	}
	fprintf(out, "]}");
}

/* A cause's breakdown: its top leaf functions and (a Python function's) lines. */
static void json_parts(FILE *out, const char *key, const struct cause_part *p, __u32 n)
{
	fprintf(out, ",\"%s\":[", key);
	for (__u32 i = 0; i < n; i++) {
		fprintf(out, "%s{\"name\":", i ? "," : "");
		esc__json(out, p[i].name, false);
		fprintf(out, ",\"ns\":%" PRIu64 ",\"share\":%.4f}", (uint64_t)p[i].ns, p[i].share);
	}
	fputc(']', out);
}

static void json_cause(FILE *out, const struct cause *c)
{
	fprintf(out, "{\"kind\":\"%s\",\"function\":", blame_kind__name(c->kind));
	esc__json(out, c->function, false);
	fprintf(out, ",\"ns\":%" PRIu64 ",\"share\":%.4f", (uint64_t)c->ns, c->share);
	if (c->nleaves)
		json_parts(out, "leaves", c->leaves, c->nleaves);
	if (c->nlines)
		json_parts(out, "lines", c->lines, c->nlines);
	fputc('}', out);
}

/*
 * busy_pct over the recording; active_busy_pct over the first to the last GPU work (the
 * headline), a bound where the windows under the floor are not measured (the API tier:
 * under_floor_ns null); idle_split's parts sum to idle_ns.
 */
static void json_device(FILE *out, const struct analysis *a, const struct device_summary *d,
			size_t i)
{
	const struct idle_split *s = &d->split;
	const struct launch_timing *t = &d->timing;
	char text[48];
	double lo;

	fprintf(out,
		"%s{\"id\":%u,\"busy_ns\":%" PRIu64 ",\"idle_ns\":%" PRIu64
		",\"busy_pct\":%.2f,\"active_start_ns\":%" PRIu64 ",\"active_end_ns\":%" PRIu64
		",\"active_busy_pct\":%.2f,\"busy_bound\":%s,\"idle_split\":{\"setup_ns\":%" PRIu64
		",\"gaps_ns\":%" PRIu64 ",\"under_floor_ns\":",
		i ? "," : "", d->id, (uint64_t)d->busy_ns, (uint64_t)d->idle_ns,
		a->duration_ns ? 100.0 * d->busy_ns / a->duration_ns : 0.0,
		(uint64_t)s->active_start, (uint64_t)s->active_end, idlesplit__busy_pct(d),
		s->under_floor_known ? "false" : "true", (uint64_t)s->setup_ns,
		(uint64_t)s->gaps_ns);
	if (s->under_floor_known)
		fprintf(out, "%" PRIu64, (uint64_t)s->under_floor_ns);
	else
		fputs("null", out);
	fprintf(out, ",\"tail_ns\":%" PRIu64 ",\"floor_ns\":%" PRIu64 "}", (uint64_t)s->tail_ns,
		(uint64_t)a->min_gap_ns);
	if (t->host_n || t->kernel_n)
		fprintf(out,
			",\"launch_timing\":{\"tid\":%u,\"host_n\":%" PRIu64
			",\"host_p50_ns\":%" PRIu64 ",\"host_p99_ns\":%" PRIu64
			",\"kernel_n\":%" PRIu64 ",\"kernel_p50_ns\":%" PRIu64
			",\"kernel_p99_ns\":%" PRIu64 "}",
			t->tid, (uint64_t)t->host_n, (uint64_t)t->host_p50_ns,
			(uint64_t)t->host_p99_ns, (uint64_t)t->kernel_n, (uint64_t)t->kernel_p50_ns,
			(uint64_t)t->kernel_p99_ns);
	/* The API tier's range (analysis.h), where it is one. */
	if (d->unconfirmed_ns)
		fprintf(out, ",\"busy_unconfirmed_ns\":%" PRIu64 ",\"busy_min_pct\":%.2f",
			(uint64_t)d->unconfirmed_ns,
			a->duration_ns ? 100.0 * (d->busy_ns - d->unconfirmed_ns) / a->duration_ns :
					 0.0);
	/* summary.txt's headline range, where it prints one (headline__busy_range). */
	if (headline__busy_range(a, d, &lo))
		fprintf(out, ",\"active_busy_min_pct\":%.2f", lo);
	/* The headline as summary.txt prints it, for the page's card: one rounding, not two. */
	fprintf(out, ",\"active_busy_text\":\"%s\"", headline__busy_text(a, d, text, sizeof(text)));
	if (d->busy_unknown)
		fprintf(out, ",\"busy_unknown\":true");
	if (d->unclosed && *d->unclosed) {
		fprintf(out, ",\"unclosed\":");
		esc__json(out, d->unclosed, false);
	}
	fputc('}', out);
}

/* The launching thread between its launches (idlesplit.h): the cause of idle under the floor. */
static void json_under_floor(FILE *out, const struct analysis *a)
{
	const struct under_floor *u = &a->under;
	bool first = true;

	if (!u->tid)
		return;
	fprintf(out, ",\n\"under_floor\":{\"tid\":%u,\"comm\":", u->tid);
	esc__json(out, u->comm, false);
	fprintf(out,
		",\"launches\":%" PRIu64 ",\"syncs\":%" PRIu64 ",\"syncs_quick\":%" PRIu64
		",\"host_ns\":%" PRIu64 ",\"function\":",
		(uint64_t)u->launches, (uint64_t)u->syncs, (uint64_t)u->syncs_quick,
		(uint64_t)u->host_ns);
	if (u->function)
		esc__json(out, u->function, false);
	else
		fputs("null", out);
	fprintf(out, ",\"samples\":%" PRIu64 ",\"function_samples\":%" PRIu64 ",\"frames\":[",
		(uint64_t)u->samples, (uint64_t)u->function_samples);
	for (__u32 i = 0; i < u->nframes; i++) {
		fputs(i ? "," : "", out);
		esc__json(out, u->frames[i], false);
	}
	fprintf(out, "],\"runnable_ns\":%" PRIu64 ",\"shown\":%s", (uint64_t)u->runnable_ns,
		headline__launches_shown(a) ? "true" : "false");
	if (headline__launches_shown(a) && u->stacks && folded__total(u->stacks))
		fputs(",\"folded\":\"gaps/launches.folded\",\"svg\":\"gaps/launches.svg\"", out);
	if (u->ival_n)
		fprintf(out,
			",\"launch_intervals\":{\"tid\":%u,\"n\":%" PRIu64 ",\"p50_ns\":[%" PRIu64
			",%" PRIu64 "],\"p99_ns\":[%" PRIu64 ",%" PRIu64 "]}",
			u->ival_tid, (uint64_t)u->ival_n, (uint64_t)u->ival_p50_ns[0],
			(uint64_t)u->ival_p50_ns[1], (uint64_t)u->ival_p99_ns[0],
			(uint64_t)u->ival_p99_ns[1]);
	fputs(",\"kinds\":[", out);
	for (int k = 0; k < BK_MAX; k++) {
		if (!u->kind_ns[k])
			continue;
		fprintf(out, "%s{\"kind\":\"%s\",\"ns\":%" PRIu64 ",\"share\":%.4f}",
			first ? "" : ",", k == BK_ON_CPU ? "launch_bound" : blame_kind__name(k),
			(uint64_t)u->kind_ns[k],
			u->host_ns ? (double)u->kind_ns[k] / u->host_ns : 0.0);
		first = false;
	}
	fputs("]}", out);
}

static void json_gap(FILE *out, const struct gap *g)
{
	const struct chain_link *root = g->nchain ? &g->chain[g->nchain - 1] : NULL;

	fprintf(out,
		"{\"id\":%u,\"device\":%u,\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64
		",\"duration_ns\":%" PRIu64 ",\"tier\":\"%s\",\"start_edge\":",
		g->id, g->device, (uint64_t)g->start_ns, (uint64_t)g->end_ns,
		(uint64_t)(g->end_ns - g->start_ns), g->tier);
	esc__json(out, g->start_how, false);
	fprintf(out, ",\"start_earliest_ns\":%" PRIu64, (uint64_t)g->start_earliest_ns);
	fprintf(out, ",\"end_edge\":");
	esc__json(out, g->end_how, false);
	fprintf(out, ",\"preempted_outside_ns\":%" PRIu64 ",\"woken_outside_ns\":%" PRIu64,
		(uint64_t)g->preempted_outside_ns, (uint64_t)g->woken_outside_ns);
	fprintf(out, ",\"closer\":{\"tid\":%u,\"comm\":", g->closer_tid);
	esc__json(out, g->closer_comm, false);
	fprintf(out, "},\"chain\":[");
	for (__u32 k = 0; k < g->nchain; k++) {
		if (k)
			fputc(',', out);
		json_link(out, &g->chain[k]);
	}
	fprintf(out, "],\"cause\":");
	if (root) {
		fprintf(out, "{\"kind\":\"%s\",\"function\":", blame_kind__name(root->kind));
		esc__json(out, root->lock ? root->lock : root->function, false);
		fprintf(out, ",\"comm\":");
		esc__json(out, root->comm, false);
		fprintf(out, ",\"tid\":%u,\"ns\":%" PRIu64 "}", root->tid, (uint64_t)g->cause_ns);
	} else {
		fprintf(out, "null");
	}
	fprintf(out, ",\"roots\":[");
	for (__u32 k = 0; k < g->nkinds; k++) {
		fputs(k ? "," : "", out);
		json_cause(out, &g->kinds[k]);
	}
	fprintf(out, "]");
	fprintf(out, ",\"folded\":\"gaps/%04u.folded\",\"svg\":\"gaps/%04u.svg\"}", g->id, g->id);
}

/*
 * Launches: every one the program made (the recorder's counts, or the trace's records where it
 * wrote none), how many have a record, and by probed symbol; the async memsets counted.
 */
static void json_launches(FILE *out, const struct launch_totals *l)
{
	fprintf(out,
		",\n\"launches\":{\"total\":%" PRIu64 ",\"in_trace\":%" PRIu64
		",\"counted\":%s,\"all\":%s,\"async_memsets\":%" PRIu64 ",\"by_function\":{",
		(uint64_t)l->total, (uint64_t)l->in_trace, l->counted ? "true" : "false",
		l->all ? "true" : "false", (uint64_t)l->async_memsets);
	for (size_t i = 0; i < l->nfn; i++) {
		fprintf(out, "%s", i ? "," : "");
		esc__json(out, l->by_fn[i].fn, false);
		fprintf(out, ":%" PRIu64, (uint64_t)l->by_fn[i].count);
	}
	fprintf(out, "}}");
}

/* The CUPTI tier, in a trace marked for it: the collector's counts and the tiers' agreement. */
static void json_cupti(FILE *out, const struct analysis *a)
{
	const struct cupti_info *c = &a->cupti;

	if (!c->marked)
		return;
	fprintf(out,
		",\n\"cupti\":{\"on\":%s,\"flushed\":%s,\"kernels\":%" PRIu64 ",\"copies\":%" PRIu64
		",\"memsets\":%" PRIu64 ",\"launches\":%" PRIu64 ",\"dropped\":%" PRIu64
		",\"bad\":%" PRIu64 ",\"status\":",
		c->on ? "true" : "false", c->flushed ? "true" : "false", (uint64_t)c->kernels,
		(uint64_t)c->copies, (uint64_t)c->memsets, (uint64_t)c->launches,
		(uint64_t)c->dropped, (uint64_t)c->bad);
	if (c->status)
		esc__json(out, c->status, false);
	else
		fprintf(out, "null");
	fprintf(out, ",\"agreement\":[");
	for (size_t i = 0; i < a->nagree; i++) {
		const struct tier_agreement *t = &a->agree[i];

		fprintf(out,
			"%s{\"device\":%u,\"cupti_gaps\":%u,\"api_gaps\":%u,\"recalled\":%u,"
			"\"precise\":%u,\"recall\":%.4f,\"precision\":%.4f,\"start_err_p50_ns\":%" PRIu64
			",\"start_err_p99_ns\":%" PRIu64 ",\"end_err_p50_ns\":%" PRIu64
			",\"end_err_p99_ns\":%" PRIu64 "}",
			i ? "," : "", t->device, t->cupti_gaps, t->api_gaps, t->recalled,
			t->precise, t->cupti_gaps ? (double)t->recalled / t->cupti_gaps : 1.0,
			t->api_gaps ? (double)t->precise / t->api_gaps : 1.0,
			(uint64_t)t->start_err_p50, (uint64_t)t->start_err_p99,
			(uint64_t)t->end_err_p50, (uint64_t)t->end_err_p99);
	}
	fprintf(out, "]}");
}

static int write_json(const struct analysis *a, const char *program, FILE *out)
{
	/* start_ns: the trace's first moment (CLOCK_MONOTONIC), where the page's time axis begins */
	fprintf(out,
		"{\"version\":1,\"start_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64
		",\"lost_events\":%" PRIu64 ",\n\"losses\":{",
		(uint64_t)a->start_ns, (uint64_t)a->duration_ns, (uint64_t)a->loss.lost_events);
	for (size_t i = 0; i < a->loss.count; i++) {
		fprintf(out, "%s", i ? "," : "");
		esc__json(out, a->loss.names[i], false);
		fprintf(out, ":%" PRIu64, (uint64_t)a->loss.n[i]);
	}
	fprintf(out,
		"},\n\"tables\":{\"futex_words_forgotten\":%" PRIu64 ",\"futex_words_max\":%" PRIu64
		",\"threads_forgotten\":%" PRIu64 ",\"threads_max\":%" PRIu64 "}",
		(uint64_t)a->tables.words_forgotten, (uint64_t)a->tables.words_max,
		(uint64_t)a->tables.threads_forgotten, (uint64_t)a->tables.threads_max);
	fprintf(out, ",\n\"offcpu_resume_unseen\":%" PRIu64, (uint64_t)a->resume_unseen);
	/* the recorded program (program.h), for `gapscope diff` to tell two programs apart */
	if (program && *program) {
		fprintf(out, ",\n\"program\":");
		esc__json(out, program, false);
	}
	/* The API tier's handle tables: what they kept and let go of, and the work of finding
	 * streams per launch (flat however many handles the trace names). */
	fprintf(out,
		",\n\"stream_handles\":{\"kept\":%" PRIu64 ",\"peak\":%" PRIu64
		",\"let_go\":%" PRIu64 ",\"calls_refused\":%" PRIu64 ",\"events_kept\":%" PRIu64
		",\"events_peak\":%" PRIu64 ",\"events_let_go\":%" PRIu64 ",\"work\":%" PRIu64
		",\"work_max_call\":%" PRIu64 ",\"launches\":%" PRIu64 ",\"work_per_launch\":%.3f}",
		(uint64_t)a->handles.streams, (uint64_t)a->handles.streams_peak,
		(uint64_t)a->handles.streams_let_go, (uint64_t)a->handles.stream_calls_refused,
		(uint64_t)a->handles.events, (uint64_t)a->handles.events_peak,
		(uint64_t)a->handles.events_let_go, (uint64_t)a->handles.work,
		(uint64_t)a->handles.work_max, (uint64_t)a->handles.launches,
		a->handles.launches ? (double)a->handles.work / a->handles.launches : 0.0);
	fprintf(out,
		",\n\"stacks\":{\"captured\":%" PRIu64 ",\"complete\":%" PRIu64
		",\"truncated\":%" PRIu64 ",\"stopped\":%" PRIu64 ",\"fp_only\":%" PRIu64
		",\"fp_complete\":%" PRIu64 "}",
		(uint64_t)a->stacks.captured, (uint64_t)a->stacks.complete,
		(uint64_t)a->stacks.truncated, (uint64_t)a->stacks.stopped,
		(uint64_t)a->stacks.fp_only, (uint64_t)a->stacks.fp_complete);
	if (a->symbols.on) {
		const struct symbol_counts *c = &a->symbols;

		fprintf(out,
			",\n\"symbols\":{\"named\":%" PRIu64 ",\"unnamed\":%" PRIu64
			",\"unmapped\":%" PRIu64 ",\"unnamed_files\":[",
			(uint64_t)c->named, (uint64_t)c->unnamed, (uint64_t)c->unmapped);
		for (size_t i = 0; i < c->nfiles; i++) {
			fprintf(out, "%s{\"path\":", i ? "," : "");
			esc__json(out, c->files[i].path, false);
			fprintf(out, ",\"state\":\"%s\",\"source\":", c->files[i].state);
			if (c->files[i].source)
				esc__json(out, c->files[i].source, false);
			else
				fputs("null", out);
			fprintf(out, ",\"unnamed\":%" PRIu64 "}", (uint64_t)c->files[i].unnamed);
		}
		fprintf(out, "],\"more_files\":%zu}", c->more_files);
	}
	if (a->archive)
		fprintf(out,
			",\n\"archive\":{\"files\":%" PRIu64 ",\"used\":%" PRIu64
			",\"damaged\":%" PRIu64 "}",
			(uint64_t)a->archive->files, (uint64_t)a->archive->used,
			(uint64_t)a->archive->bad);
	fprintf(out, ",\n\"notes\":[");
	for (size_t i = 0; i < a->nnotes; i++) {
		fprintf(out, "%s", i ? "," : "");
		esc__json(out, a->notes[i], false);
	}
	fprintf(out, "],\n\"devices\":[");
	for (size_t d = 0; d < a->ndevices; d++)
		json_device(out, a, &a->devices[d], d);
	fprintf(out, "]");
	json_under_floor(out, a);
	if (a->copy_gbps > 0)
		fprintf(out, ",\n\"copy_model\":{\"gbps\":%g,\"latency_us\":%g}", a->copy_gbps,
			a->copy_latency_us);
	json_launches(out, &a->launches);
	json_cupti(out, a);
	if (a->quota.cgroup) {
		fprintf(out, ",\n\"quota\":{\"cgroup\":");
		esc__json(out, a->quota.cgroup, false);
		fprintf(out,
			",\"has_cpus\":%.3f,\"peak_cpus\":%.3f,\"mean_cpus\":%.3f,\"use_known\":%s,"
			"\"throttled_ns\":%" PRIu64 ",\"nr_throttled\":%" PRIu64
			",\"nr_periods\":%" PRIu64 "}",
			a->quota.has_cpus, a->quota.peak_cpus, a->quota.mean_cpus,
			a->quota.use_known ? "true" : "false", (uint64_t)a->quota.throttled_ns,
			(uint64_t)a->quota.nr_throttled, (uint64_t)a->quota.nr_periods);
	}
	fprintf(out,
		",\n\"gap_ns\":%" PRIu64 ",\"preempted_outside_ns\":%" PRIu64
		",\"woken_outside_ns\":%" PRIu64 ",\n\"gaps\":[",
		(uint64_t)a->gap_ns, (uint64_t)a->preempted_outside_ns,
		(uint64_t)a->woken_outside_ns);
	for (size_t g = 0; g < a->ngaps; g++) {
		fprintf(out, "%s\n", g ? "," : "");
		json_gap(out, &a->gaps[g]);
	}
	fprintf(out, "],\n\"causes\":[");
	for (size_t i = 0; i < a->ncauses; i++) {
		fputs(i ? "," : "", out);
		json_cause(out, &a->causes[i]);
	}
	fprintf(out, "]}\n");
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
