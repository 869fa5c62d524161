// SPDX-License-Identifier: GPL-2.0
/* summary.txt: busy per device, gaps, ranked causes, the longest gaps' chains, losses. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "archived.h"
#include "escape.h"
#include "shortname.h"

static void print_ms(FILE *out, __u64 ns)
{
	if (ns >= 10000000000ull)
		fprintf(out, "%.1f s", ns / 1e9);
	else if (ns >= 1000000)
		fprintf(out, "%.0f ms", ns / 1e6);
	else
		fprintf(out, "%.2f ms", ns / 1e6);
}

/* A name as text: no control character of the target's reaches a terminal (escape.h). */
static void put(FILE *out, const char *s)
{
	esc__put_text(out, s, SIZE_MAX);
}

/* One link as "lock tracker_lock held by finalizer-2", "malloc_trim 208 ms", ... */
static void print_link(FILE *out, const struct chain_link *l, bool last)
{
	char lock[SHORTNAME_MAX], fn[SHORTNAME_MAX];
	const char *function = shortname(l->function, fn, sizeof(fn));

	if (l->kind == BK_LOCK || l->kind == BK_COND) {
		fprintf(out, "%s ", blame_kind__name(l->kind));
		put(out, l->lock ? shortname(l->lock, lock, sizeof(lock)) : NULL);
		if (l->detail) {
			fputc(' ', out);
			put(out, l->detail);
		}
	} else if (l->kind == BK_PROBE || l->kind == BK_CUDA) {
		put(out, function ? function : blame_kind__name(l->kind));
	} else if ((l->kind == BK_PREEMPTED || l->kind == BK_RUNNABLE) && l->detail) {
		put(out, l->detail);
	} else if (l->kind == BK_THROTTLED && l->function) {
		fputs("throttled, ", out); /* the cgroup's path whole: no shortening */
		put(out, l->function);
	} else {
		/* Never a bare kind: without a function, what is known ("no sample, after X"), and
		 * the thread. */
		fprintf(out, "%s", blame_kind__name(l->kind));
		if (function) {
			fputc(' ', out);
			put(out, function);
		} else if (l->detail) {
			fputs(" (", out);
			put(out, l->detail);
			fputs(") in ", out);
			put(out, l->comm);
		} else {
			fputs(" in ", out);
			put(out, l->comm);
		}
	}
	if (last) {
		fputc(' ', out);
		print_ms(out, l->ns);
	}
}

static void print_chain(FILE *out, const struct gap *g)
{
	put(out, g->closer_comm);
	for (__u32 k = 0; k < g->nchain; k++) {
		const struct chain_link *l = &g->chain[k];

		fprintf(out, " \u2190 ");
		if (k && (g->chain[k - 1].kind == BK_LOCK || g->chain[k - 1].kind == BK_COND) &&
		    k + 1 < g->nchain) {
			put(out, l->comm);
			fputs(": ", out);
		}
		print_link(out, l, k + 1 == g->nchain);
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

int summary_txt__write(const struct analysis *a, const struct report_out_opts *o, FILE *out)
{
	const struct gap **by_dur;
	size_t top;

	fprintf(out, "duration ");
	print_ms(out, a->duration_ns);
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
		fprintf(out, "device %u: busy %.1f%% (%.3f s of %.3f s, %s)\n", a->devices[d].id,
			a->duration_ns ? 100.0 * a->devices[d].busy_ns / a->duration_ns : 0.0,
			a->devices[d].busy_ns / 1e9, a->duration_ns / 1e9,
			agreement(a, a->devices[d].id) ? "CUPTI" : "API-inferred");
	if (a->copy_gbps > 0)
		fprintf(out,
			"API-inferred tier: host<->device async copies modelled at %g GB/s + %g us\n",
			a->copy_gbps, a->copy_latency_us);
	print_tiers(out, a);
	fprintf(out, "gaps: %zu, total ", a->ngaps);
	print_ms(out, a->gap_ns);
	fprintf(out, " (%.1f%% of the run)\n",
		a->duration_ns ? 100.0 * a->gap_ns / a->duration_ns : 0.0);
	if (a->preempted_outside_ns) {
		fprintf(out, "of which ");
		print_ms(out, a->preempted_outside_ns);
		fprintf(out, " a thread on a chain was runnable while other processes ran\n");
	}
	if (a->woken_outside_ns) {
		fprintf(out, "of which ");
		print_ms(out, a->woken_outside_ns);
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
		print_ms(out, a->quota.throttled_ns);
		fprintf(out, ": needs %s%.2f CPU at its peak second (%.2f on average), has %.2f\n",
			a->quota.use_known ? "≈ " : "≥ ", a->quota.peak_cpus, a->quota.mean_cpus,
			a->quota.has_cpus);
	}
	if (a->ncauses)
		fprintf(out, "\nroot causes (share of gap time):\n");
	for (size_t i = 0; i < a->ncauses; i++) {
		char fn[SHORTNAME_MAX], text[ESC_TEXT_MAX];
		const struct cause *c = &a->causes[i];

		/* Without a function, the thread most of it was in. */
		if (!c->function)
			snprintf(fn, sizeof(fn), "(no function) in %s", c->comm ? c->comm : "?");
		fprintf(out, "  %5.1f%%  %-12s %-40s ", 100 * c->share, blame_kind__name(c->kind),
			esc__text(text, sizeof(text),
				  c->function ? shortname(c->function, fn, sizeof(fn)) : fn,
				  SIZE_MAX));
		print_ms(out, c->ns);
		fputc('\n', out);
	}
	top = o->top < a->ngaps ? o->top : a->ngaps;
	by_dur = calloc(a->ngaps ? a->ngaps : 1, sizeof(*by_dur));
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
		print_ms(out, g->end_ns - g->start_ns);
		fprintf(out, "] gpu%u %s", g->device, strcmp(g->tier, "api") ? "(CUPTI) " : "");
		print_chain(out, g);
	}
	free(by_dur);
	fprintf(out, "\nlosses: %" PRIu64 " events lost", (uint64_t)a->lost_events);
	for (size_t i = 0; i < a->nlosses; i++)
		fprintf(out, ", %s %" PRIu64, a->loss_names[i], (uint64_t)a->losses[i]);
	if (a->resume_unseen)
		fprintf(out, "; %" PRIu64 " off-CPU interval(s) resumed unseen (ended late)",
			(uint64_t)a->resume_unseen);
	/* Snapshots unwound with DWARF, and beside them what frame pointers alone gave. */
	fprintf(out,
		"\nstacks: %" PRIu64 " captured (%" PRIu64 " complete, %" PRIu64
		" truncated, %" PRIu64 " stopped), %" PRIu64 " fp_only (%" PRIu64 " complete)\n",
		(uint64_t)a->stacks.captured, (uint64_t)a->stacks.complete,
		(uint64_t)a->stacks.truncated, (uint64_t)a->stacks.stopped,
		(uint64_t)a->stacks.fp_only, (uint64_t)a->stacks.fp_complete);
	print_symbols(out, &a->symbols);
	if (a->archive)
		fprintf(out, "archive: %" PRIu64 " files, %" PRIu64 " used, %" PRIu64 " damaged\n",
			(uint64_t)a->archive->files, (uint64_t)a->archive->used,
			(uint64_t)a->archive->bad);
	return ferror(out) ? -1 : 0;
}
