// SPDX-License-Identifier: GPL-2.0
/*
 * Every loss a report prints: the recorder's counters (its last losses record counts) and what
 * the reader could not read (corrupt chunks, a cut-off tail), with a note for each.
 */
#include <stdio.h>

#include "blame.h"
#include "decode.h"
#include "gputime.h"
#include "losses.h"
#include "threads.h"
#include "trace.h"

void losses__record(struct loss_counts *l, const struct gs_hdr *h)
{
	const struct gs_rec_losses *r = (const void *)h;
	size_t fixed = gs_fixed_size(h);
	__u32 n = r->n;

	if (fixed < sizeof(*r))
		return;
	if (n > (fixed - sizeof(*r)) / 8)
		n = (fixed - sizeof(*r)) / 8;
	for (__u32 i = 0; i < n && i < GS_LOSS_MAX; i++)
		l->n[i] = r->count[i];
}

void losses__unprobed(struct loss_counts *l, const struct gs_hdr *h)
{
	const struct gs_rec_unprobed *u = gs_unprobed(h);
	__u64 ns;

	if (!u)
		return;
	ns = h->ts > u->from_ns ? h->ts - u->from_ns : 0;
	l->unprobed.n++;
	l->unprobed.ns += ns;
	if (u->why < GS_UNPROBED_MAX)
		l->unprobed.by_why[u->why]++;
	if (ns >= l->unprobed.max_ns) {
		l->unprobed.max_ns = ns;
		l->unprobed.max_pid = h->tgid;
	}
}

/* The unprobed windows, one note: how many, why, how long. */
static void unprobed_note(const struct loss_counts *l, const struct notes *nt)
{
	char line[256], why[96] = "";
	size_t len = 0;

	for (size_t i = 0; i < GS_UNPROBED_MAX; i++)
		if (l->unprobed.by_why[i] && len < sizeof(why))
			len += snprintf(why + len, sizeof(why) - len, "%s%s %llu", len ? ", " : "",
					gs_unprobed_names[i],
					(unsigned long long)l->unprobed.by_why[i]);
	snprintf(line, sizeof(line),
		 "%llu process(es) ran before their probes were in place (%s): %.3f ms in all, "
		 "longest %.3f ms (pid %u); their library calls then are not in the trace",
		 (unsigned long long)l->unprobed.n, why, l->unprobed.ns / 1e6,
		 l->unprobed.max_ns / 1e6, l->unprobed.max_pid);
	nt->add(nt->ctx, line);
}

/* The stream and event handles not followed (gputime_int.h's bounds), one note. */
static void handles_note(const struct handle_stats *h, const struct notes *nt)
{
	char line[320];

	snprintf(line, sizeof(line),
		 "%llu stream handles not followed: %llu let go of (over %u streams of a process "
		 "or %u in all, or their process gone), %llu calls on a new one refused (every "
		 "stream kept had work); %llu event handles let go of (over %u of a process or "
		 "%u in all)",
		 (unsigned long long)(h->streams_let_go + h->stream_calls_refused),
		 (unsigned long long)h->streams_let_go, STREAMS_PER_PROC, STREAMS_MAX,
		 (unsigned long long)h->stream_calls_refused, (unsigned long long)h->events_let_go,
		 EVENTS_PER_PROC, EVENTS_MAX);
	nt->add(nt->ctx, line);
}

void losses__reader(struct loss_counts *l, const struct trace_stats *st,
		    const struct handle_stats *h, __u64 events, __u64 cuda_events,
		    const struct notes *nt)
{
	char line[256];

	for (size_t i = 0; i < GS_LOSS_MAX; i++)
		l->names[i] = gs_loss_names[i];
	l->count = GS_LOSS_MAX;
	l->names[l->count] = "corrupt_chunks";
	l->n[l->count++] = st->bad_chunks;
	l->names[l->count] = "corrupt_bytes";
	l->n[l->count++] = st->bad_bytes;
	l->names[l->count] = "cut_bytes";
	l->n[l->count++] = st->cut_bytes;
	l->names[l->count] = "unprobed_processes";
	l->n[l->count++] = l->unprobed.n;
	l->names[l->count] = "unprobed_us";
	l->n[l->count++] = l->unprobed.ns / 1000;
	l->names[l->count] = "stream_handles_let_go";
	l->n[l->count++] = h->streams_let_go;
	l->names[l->count] = "stream_calls_refused";
	l->n[l->count++] = h->stream_calls_refused;
	l->names[l->count] = "event_handles_let_go";
	l->n[l->count++] = h->events_let_go;
	if (h->streams_let_go || h->stream_calls_refused || h->events_let_go)
		handles_note(h, nt);
	if (l->unprobed.n)
		unprobed_note(l, nt);
	for (size_t i = 0; i < GS_LOSS_MAX; i++)
		l->lost_events += l->n[i];
	if (st->bad_chunks) {
		snprintf(line, sizeof(line),
			 "%llu corrupt chunk(s) skipped (%llu bytes): their events are missing",
			 (unsigned long long)st->bad_chunks, (unsigned long long)st->bad_bytes);
		nt->add(nt->ctx, line);
	}
	if (st->cut_bytes) {
		snprintf(line, sizeof(line),
			 "trace cut off: read to its last whole chunk (%llu bytes not read)",
			 (unsigned long long)st->cut_bytes);
		nt->add(nt->ctx, line);
	}
	if (!st->finished)
		nt->add(nt->ctx,
			"the recording did not finish (no end record): the report covers what "
			"was written");
	if (!events)
		nt->add(nt->ctx, "the trace holds no events");
	else if (!cuda_events)
		nt->add(nt->ctx, "the trace holds no CUDA events: no GPU timeline, no gaps");
}

void losses__tables(struct loss_counts *l, struct table_counts *t, const struct threads_counts *c,
		    __u64 names_evicted, const struct notes *nt)
{
	char line[256];

	t->words_forgotten = c->words_forgotten;
	t->words_max = c->words_max;
	t->threads_forgotten = c->threads_forgotten;
	t->threads_max = c->threads_max;
	l->names[l->count] = "futex_waits_evicted";
	l->n[l->count++] = c->wakes_evicted;
	l->names[l->count] = "threads_evicted";
	l->n[l->count++] = c->threads_evicted;
	l->names[l->count] = "names_evicted";
	l->n[l->count++] = names_evicted;
	if (c->wakes_evicted || c->threads_evicted) {
		snprintf(
			line, sizeof(line),
			"%llu futex wait(s) and %llu exited thread(s) let go of before their time "
			"(over %u waits, %u exited threads held): chains through them may stop short",
			(unsigned long long)c->wakes_evicted,
			(unsigned long long)c->threads_evicted, THREADS_WAKES_MAX,
			THREADS_EXITED_MAX);
		nt->add(nt->ctx, line);
	}
	if (names_evicted) {
		snprintf(line, sizeof(line),
			 "%llu name(s) of other processes or of locks without their pid or address "
			 "(over %u distinct ones)",
			 (unsigned long long)names_evicted, BLAME_KEYED_MAX);
		nt->add(nt->ctx, line);
	}
}
