// SPDX-License-Identifier: GPL-2.0
/* summary.txt: busy per device, gaps, ranked causes, the longest gaps' chains, losses. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gap.h"
#include "headline.h"
#include "summary.h"
#include "archived.h"
#include "duration.h"
#include "escape.h"
#include "idlesplit.h"
#include "shortname.h"

/* A name as text: no control character of the target's reaches a terminal (escape.h). */
static void put(FILE *out, const char *s)
{
	esc__put_text(out, s, SIZE_MAX);
}

/* Rows of the causes table listed here; summary.json has every one. */
#define CAUSES_LISTED 12

/*
 * A cause's breakdown under its row: "lines: 62.0% jax_prep.py:15, ...". Left out where it
 * would only repeat the row (one leaf, the function itself).
 */
static void print_parts(FILE *out, const char *what, const struct cause_part *p, __u32 n,
			const char *self)
{
	char fn[SHORTNAME_MAX];

	if (!n || (n == 1 && p[0].name == self))
		return;
	fprintf(out, "%24s%s:", "", what);
	for (__u32 i = 0; i < n; i++) {
		fprintf(out, "%s %.1f%% ", i ? "," : "", 100 * p[i].share);
		put(out, shortname(p[i].name, fn, sizeof(fn)));
	}
	fputc('\n', out);
}

/*
 * What removing a cause would give back (recover.h): "fix: ≈N ms of GPU idle, M% of the run",
 * of the devices' run times summed, and where the cause's full time says more, that bound.
 */
static void print_fix(FILE *out, const struct analysis *a, __u64 lo, __u64 hi)
{
	fprintf(out, "%24sfix: ≈", "");
	dur__print(out, lo);
	fprintf(out, " of GPU idle, %.1f%% of the run", a->run_ns ? 100.0 * lo / a->run_ns : 0.0);
	if (hi > lo + lo / 10 + a->min_gap_ns) {
		fputs(" (at most ", out);
		dur__print(out, hi);
		fputc(')', out);
	}
	fputc('\n', out);
}

static int cmp_dur(const void *x, const void *y)
{
	const struct gap *a = *(const struct gap *const *)x, *b = *(const struct gap *const *)y;
	__u64 da = a->end_ns - a->start_ns, db = b->end_ns - b->start_ns;

	return da > db ? -1 : da < db;
}

static const struct tier_agreement *agreement(const struct analysis *a, __u32 device)
{
	for (size_t i = 0; i < a->nagree; i++)
		if (a->agree[i].device == device)
			return &a->agree[i];
	return NULL;
}

static double pct(__u32 part, __u32 whole)
{
	return whole ? 100.0 * part / whole : 100.0;
}

/* The CUPTI collector's word, and how far the API tier agrees with CUPTI's gaps. */
static void print_tiers(FILE *out, const struct analysis *a)
{
	const struct cupti_info *c = &a->cupti;

	if (!c->marked)
		return;
	if (!c->on) {
		fputs("CUPTI: no activity (", out);
		put(out, c->status ? c->status : "the collector never started");
		fputs("): API-inferred timeline only\n", out);
	} else {
		fprintf(out,
			"CUPTI: %" PRIu64 " kernels, %" PRIu64 " copies, %" PRIu64 " launch calls, "
			"%" PRIu64 " records dropped%s\n",
			(uint64_t)c->kernels, (uint64_t)c->copies, (uint64_t)c->launches,
			(uint64_t)(c->dropped + c->bad), c->flushed ? "" : " (no final flush)");
	}
	for (size_t i = 0; i < a->nagree; i++) {
		const struct tier_agreement *t = &a->agree[i];

		fprintf(out,
			"device %u: API-inferred gaps against CUPTI's: recall %.1f%% (%u of %u), "
			"precision %.1f%% (%u of %u); edge error start p50 %.3f ms p99 %.3f ms, "
			"end p50 %.3f ms p99 %.3f ms\n",
			t->device, pct(t->recalled, t->cupti_gaps), t->recalled, t->cupti_gaps,
			pct(t->precise, t->api_gaps), t->precise, t->api_gaps,
			t->start_err_p50 / 1e6, t->start_err_p99 / 1e6, t->end_err_p50 / 1e6,
			t->end_err_p99 / 1e6);
	}
}

/* Code addresses left unnamed (printed as file+offset), and the files they are in. */
static void print_symbols(FILE *out, const struct symbol_counts *c)
{
	if (!c->on)
		return;
	fprintf(out, "symbols: %" PRIu64 " of %" PRIu64 " code addresses unnamed",
		(uint64_t)c->unnamed, (uint64_t)(c->named + c->unnamed));
	if (c->unmapped)
		fprintf(out, ", %" PRIu64 " outside every mapping", (uint64_t)c->unmapped);
	for (size_t i = 0; i < c->nfiles; i++) {
		const char *base = strrchr(c->files[i].path, '/');

		fprintf(out, "%s ", i ? "," : ":");
		put(out, base ? base + 1 : c->files[i].path);
		fprintf(out, " %" PRIu64 " (%s)", (uint64_t)c->files[i].unnamed,
			strcmp(c->files[i].state, "ok") ?
				c->files[i].state :
			!strcmp(c->files[i].source ?: "", "dynsym") ?
				"stripped, no debug file: exported names only" :
			c->files[i].source ?:
					     "?");
	}
	if (c->more_files)
		fprintf(out, " and %zu more files", c->more_files);
	fputc('\n', out);
}

static double share(__u64 part, __u64 whole)
{
	return whole ? 100.0 * part / whole : 0.0;
}

/* ", label 12 ms (3.4%)": a part of the idle time and its share of the run. */
static void print_part(FILE *out, const char *label, __u64 ns, __u64 run)
{
	fprintf(out, ", %s ", label);
	dur__print(out, ns);
	fprintf(out, " (%.1f%%)", share(ns, run));
}

/*
 * The busy figure over the device's active window (its first work to its last): the time
 * before and after it is the program's setup and tail, not time the GPU could have been fed.
 * Then every ns of its idle time in one part. The API tier cannot see windows under the floor
 * (they count busy): its figure is a bound, and said to be one.
 */
static void print_device(FILE *out, const struct analysis *a, const struct device_summary *d)
{
	const struct idle_split *s = &d->split;
	__u64 active = s->active_end - s->active_start, idle = d->idle_ns;
	__u64 busy_active = d->busy_ns < active ? d->busy_ns : active;
	bool cupti = agreement(a, d->id) != NULL;
	const char *bound = s->under_floor_known ? "" : "at most ";
	char floor[32], busy[48];
	double lo;

	snprintf(floor, sizeof(floor), "%g ms", a->min_gap_ns / 1e6);
	/* The figure summary.json's active_busy_text repeats, from one rounding. */
	headline__busy_text(a, d, busy, sizeof(busy));
	if (!cupti && d->busy_unknown) {
		/* Launches and never a completion signal: no figure is printed as a fact. */
		fprintf(out,
			"device %u: busy unknown (API-inferred: launches, and no completion signal "
			"ever; busy %s%%, %.3f s of %.3f s first to last GPU work)\n",
			d->id, busy, busy_active / 1e9, active / 1e9);
	} else if (headline__busy_range(a, d, &lo)) {
		/* Some busy time no completion signal backs: a range, never a guess. */
		fprintf(out,
			"device %u: busy %s%% (%.3f s of %.3f s, first to last GPU work, "
			"API-inferred; %.3f s of it after launches no completion signal followed: "
			"the GPU may have been idle then); at most %.1f%% of the run\n",
			d->id, busy, busy_active / 1e9, active / 1e9, d->unconfirmed_ns / 1e9,
			share(d->busy_ns, a->duration_ns));
	} else {
		fprintf(out,
			"device %u: busy %s%% (%.3f s of %.3f s, first to last GPU work, %s); "
			"%s%.1f%% of the run\n",
			d->id, busy, busy_active / 1e9, active / 1e9,
			cupti ? "CUPTI" : "API-inferred", bound, share(d->busy_ns, a->duration_ns));
	}
	if (!cupti && d->unclosed && *d->unclosed)
		fprintf(out, "device %u: still busy at the end, never seen done: %s\n", d->id,
			d->unclosed);
	fprintf(out, "device %u idle: ", d->id);
	dur__print(out, idle);
	fprintf(out, " (%.1f%% of the run)", share(idle, a->duration_ns));
	print_part(out, "gaps", s->gaps_ns, a->duration_ns);
	if (s->under_floor_known)
		print_part(out, "under the floor", s->under_floor_ns, a->duration_ns);
	/* Said plainly: the API tier has no kernel times, the windows under the floor look busy. */
	if (!s->under_floor_known)
		fprintf(out, ", under the %s floor not measured (no kernel times: counted busy)",
			floor);
	print_part(out, "setup", s->setup_ns, a->duration_ns);
	print_part(out, "tail", s->tail_ns, a->duration_ns);
	fputc('\n', out);
	if (d->timing.host_n)
		fprintf(out,
			"device %u: between launches of tid %u p50 %.3f ms p99 %.3f ms (%" PRIu64
			" intervals); kernels p50 %.3f ms p99 %.3f ms (%" PRIu64 ")\n",
			d->id, d->timing.tid, d->timing.host_p50_ns / 1e6,
			d->timing.host_p99_ns / 1e6, (uint64_t)d->timing.host_n,
			d->timing.kernel_p50_ns / 1e6, d->timing.kernel_p99_ns / 1e6,
			(uint64_t)d->timing.kernel_n);
}

/* A bucket of times between launches, [lo, hi) ns: "128-192 us", "over 524 ms". */
static void print_range(FILE *out, const __u64 r[2])
{
	if (!r[1])
		fprintf(out, "over %.0f ms", r[0] / 1e6);
	else if (r[1] <= 10000000)
		fprintf(out, "%g-%g us", r[0] / 1e3, r[1] / 1e3);
	else
		fprintf(out, "%g-%g ms", r[0] / 1e6, r[1] / 1e6);
}

/*
 * The cause of the idle time under the floor, in aggregate: the launching thread between its
 * launches, on CPU (launch-bound: the host launches slower than the GPU runs) or off CPU by the
 * kind of its waits.
 */
static void print_under_floor(FILE *out, const struct analysis *a)
{
	const struct under_floor *u = &a->under;
	__u64 under = 0;
	bool known = false;

	for (size_t d = 0; d < a->ndevices; d++) {
		under += a->devices[d].split.under_floor_ns;
		known |= a->devices[d].split.under_floor_known;
	}
	if (!headline__launches_shown(a))
		return;
	fputs("under the floor: ", out);
	if (known) {
		dur__print(out, under);
		fputs(" idle in windows under the floor; ", out);
	}
	fputs("the launching thread ", out);
	put(out, u->comm);
	fprintf(out, " (%" PRIu64 " launches in the trace) between its launches: ",
		(uint64_t)u->launches);
	dur__print(out, u->host_ns);
	fputs(" of host time", out);
	if (u->syncs)
		fprintf(out,
			"; %" PRIu64 " of its %" PRIu64 " synchronizes returned at once (under "
			"%llu us: the GPU had nothing left to run)",
			(uint64_t)u->syncs_quick, (uint64_t)u->syncs,
			IDLESPLIT_SYNC_QUICK_NS / 1000);
	fputc('\n', out);
	/* Launch-bound first, then the waits in the kinds' order. */
	for (int i = -1; i < BK_MAX; i++) {
		int k = i < 0 ? BK_ON_CPU : i;
		char fn[SHORTNAME_MAX];

		if ((i >= 0 && k == BK_ON_CPU) || !u->kind_ns[k] ||
		    100.0 * u->kind_ns[k] / u->host_ns < 0.05)
			continue;
		fprintf(out, "  %5.1f%%  %-12s ", share(u->kind_ns[k], u->host_ns),
			k == BK_ON_CPU ? "launch-bound" : blame_kind__name(k));
		if (k != BK_ON_CPU) {
			fputs(k == BK_CUDA ? "in CUDA calls (not synchronizes) " : "off CPU ", out);
			dur__print(out, u->kind_ns[k]);
			fputc('\n', out);
			continue;
		}
		put(out, u->function ? shortname(u->function, fn, sizeof(fn)) :
				       "(no sample between launches)");
		fputc(' ', out);
		dur__print(out, u->kind_ns[k]);
		fprintf(out, " (on CPU or runnable; %" PRIu64 " of %" PRIu64 " samples",
			(uint64_t)u->function_samples, (uint64_t)u->samples);
		if (u->runnable_ns) {
			fputs("; runnable ", out);
			dur__print(out, u->runnable_ns);
		}
		fputs(")\n", out);
	}
	if (u->ival_n) {
		fprintf(out, "  between launches (every launch, counted in BPF, tid %u): p50 ",
			u->ival_tid);
		print_range(out, u->ival_p50_ns);
		fputs(", p99 ", out);
		print_range(out, u->ival_p99_ns);
		fprintf(out, " (%" PRIu64 " intervals)\n", (uint64_t)u->ival_n);
	}
	if (u->nframes) {
		fputs("  frames:", out);
		for (__u32 i = 0; i < u->nframes && i < 6; i++) {
			char fn[SHORTNAME_MAX];

			fputs(i ? " \u2190 " : " ", out);
			put(out, shortname(u->frames[i], fn, sizeof(fn)));
		}
		fputc('\n', out);
	}
}

/* What was recorded, each device's busy share and idle split, the tiers' word. */
static void print_headline(FILE *out, const struct analysis *a)
{
	fprintf(out, "duration ");
	dur__print(out, a->duration_ns);
	fprintf(out, ", %" PRIu64 " events, %" PRIu64 " CUDA events", (uint64_t)a->events,
		(uint64_t)a->cuda_events);
	if (a->launches.counted)
		fprintf(out, ", %" PRIu64 " launches (%" PRIu64 " in the trace)",
			(uint64_t)a->launches.total, (uint64_t)a->launches.in_trace);
	fputc('\n', out);
	for (size_t i = 0; i < a->nnotes; i++) {
		fputs("note: ", out);
		put(out, a->notes[i]);
		fputc('\n', out);
	}
	for (size_t d = 0; d < a->ndevices; d++)
		print_device(out, a, &a->devices[d]);
	print_under_floor(out, a);
	if (a->copy_gbps > 0)
		fprintf(out,
			"API-inferred tier: host<->device async copies modelled at %g GB/s + %g us\n",
			a->copy_gbps, a->copy_latency_us);
	print_tiers(out, a);
}

/* The gaps' total, the share of it that others' CPU time explains, the CPU quota's part. */
static void print_gap_time(FILE *out, const struct analysis *a)
{
	fprintf(out, "gaps: %zu, total ", a->ngaps);
	dur__print(out, a->gap_ns);
	fprintf(out, " (%.1f%% of the run)\n",
		a->duration_ns ? 100.0 * a->gap_ns / a->duration_ns : 0.0);
	if (a->preempted_outside_ns) {
		fprintf(out, "of which ");
		dur__print(out, a->preempted_outside_ns);
		fprintf(out, " a thread on a chain waited for a CPU held by processes outside the "
			     "recording\n");
	}
	if (a->woken_outside_ns) {
		fprintf(out, "of which ");
		dur__print(out, a->woken_outside_ns);
		fprintf(out, " a chain ended at a waker outside the recording (record it too: -p, "
			     "--cgroup)\n");
	}
	if (a->quota.cgroup) {
		/* Use is capped at the quota: need adds the time its threads stood throttled. */
		fputs("CPU quota: ", out);
		put(out, a->quota.cgroup);
		fprintf(out, " throttled %llu of %llu periods; runnable while throttled ",
			(unsigned long long)a->quota.nr_throttled,
			(unsigned long long)a->quota.nr_periods);
		dur__print(out, a->quota.throttled_ns);
		fprintf(out, ": needs %s%.2f CPU at its peak second (%.2f on average), has %.2f\n",
			a->quota.use_known ? "≈ " : "≥ ", a->quota.peak_cpus, a->quota.mean_cpus,
			a->quota.has_cpus);
	}
}

/* Root causes ranked by gap time, their breakdowns under them; the rest in one row. */
static void print_causes(FILE *out, const struct analysis *a)
{
	if (a->ncauses)
		fprintf(out, "\nroot causes (share of gap time):\n");
	for (size_t i = 0; i < a->ncauses && i < CAUSES_LISTED; i++) {
		char fn[SHORTNAME_MAX], text[ESC_TEXT_MAX];
		const struct cause *c = &a->causes[i];
		const char *shown = fn;

		/* Without a function, the thread most of it was in. A preemption names who
		 * preempted: "by synth-1", never a bare name that reads as the victim. */
		if (!c->function)
			snprintf(fn, sizeof(fn), "(no function) in %s", c->comm ? c->comm : "?");
		else if (c->kind == BK_PREEMPTED)
			snprintf(fn, sizeof(fn), "by %s", c->function);
		/* A fault's row says it all in one line: file, offsets, the code. */
		if (c->kind == BK_FAULT && c->function)
			shown = cause__fault_text(c, fn, sizeof(fn));
		else if (c->function && c->kind != BK_PREEMPTED)
			shown = shortname(c->function, fn, sizeof(fn));
		fprintf(out, "  %5.1f%%  %-12s %-40s ", 100 * c->share, blame_kind__name(c->kind),
			esc__text(text, sizeof(text), shown, SIZE_MAX));
		dur__print(out, c->ns);
		fputc('\n', out);
		if (c->kind != BK_FAULT) { /* a fault's code is on its row */
			print_parts(out, "lines", c->lines, c->nlines, NULL);
			print_parts(out, "leaves", c->leaves, c->nleaves, c->function);
		}
		print_fix(out, a, c->recoverable_ns, c->recoverable_hi_ns);
	}
	if (a->ncauses > CAUSES_LISTED) {
		char more[64];
		__u64 ns = 0;

		for (size_t i = CAUSES_LISTED; i < a->ncauses; i++)
			ns += a->causes[i].ns;
		snprintf(more, sizeof(more), "(%zu more: summary.json)",
			 a->ncauses - CAUSES_LISTED);
		fprintf(out, "  %5.1f%%  %-53s ", a->gap_ns ? 100.0 * ns / a->gap_ns : 0.0, more);
		dur__print(out, ns);
		fputc('\n', out);
	}
}

/* The WANT longest gaps, each with its chain. -1 out of memory. */
static int print_longest(FILE *out, const struct analysis *a, size_t want)
{
	size_t top = want < a->ngaps ? want : a->ngaps;
	const struct gap **by_dur = calloc(a->ngaps ? a->ngaps : 1, sizeof(*by_dur));
	if (!by_dur)
		return -1;
	for (size_t i = 0; i < a->ngaps; i++)
		by_dur[i] = &a->gaps[i];
	qsort(by_dur, a->ngaps, sizeof(*by_dur), cmp_dur);
	if (top)
		fprintf(out, "\nlongest gaps:\n");
	for (size_t i = 0; i < top; i++) {
		const struct gap *g = by_dur[i];

		fprintf(out, "gap %u [", g->id);
		dur__print(out, g->end_ns - g->start_ns);
		fprintf(out, "] gpu%u %s", g->device, strcmp(g->tier, "api") ? "(CUPTI) " : "");
		gap__chain_print(g, out);
	}
	free(by_dur);
	return 0;
}

/* Everything lost or left out, counted: events, stacks, tables, symbols, the archive. */
static void print_losses(FILE *out, const struct analysis *a)
{
	fprintf(out, "\nlosses: %" PRIu64 " events lost", (uint64_t)a->loss.lost_events);
	for (size_t i = 0; i < a->loss.count; i++)
		fprintf(out, ", %s %" PRIu64, a->loss.names[i], (uint64_t)a->loss.n[i]);
	if (a->resume_unseen)
		fprintf(out,
			"; %" PRIu64 " off-CPU interval(s) resumed unseen (their switch back in "
			"was not seen: each ends where its thread was next seen running)",
			(uint64_t)a->resume_unseen);
	/* Snapshots unwound with DWARF, and beside them what frame pointers alone gave. */
	fprintf(out,
		"\nstacks: %" PRIu64 " captured (%" PRIu64 " complete, %" PRIu64
		" truncated, %" PRIu64 " stopped), %" PRIu64 " fp_only (%" PRIu64 " complete)\n",
		(uint64_t)a->stacks.captured, (uint64_t)a->stacks.complete,
		(uint64_t)a->stacks.truncated, (uint64_t)a->stacks.stopped,
		(uint64_t)a->stacks.fp_only, (uint64_t)a->stacks.fp_complete);
	fprintf(out,
		"tables: %" PRIu64 " futex words let go of (at most %" PRIu64 " held), %" PRIu64
		" exited threads let go of (at most %" PRIu64 " threads held)\n",
		(uint64_t)a->tables.words_forgotten, (uint64_t)a->tables.words_max,
		(uint64_t)a->tables.threads_forgotten, (uint64_t)a->tables.threads_max);
	print_symbols(out, &a->symbols);
	if (a->archive)
		fprintf(out, "archive: %" PRIu64 " files, %" PRIu64 " used, %" PRIu64 " damaged\n",
			(uint64_t)a->archive->files, (uint64_t)a->archive->used,
			(uint64_t)a->archive->bad);
}

int summary_txt__write(const struct analysis *a, const struct report_out_opts *o, FILE *out)
{
	print_headline(out, a);
	print_gap_time(out, a);
	print_causes(out, a);
	if (print_longest(out, a, o->top))
		return -1;
	print_losses(out, a);
	return ferror(out) ? -1 : 0;
}
