// SPDX-License-Identifier: GPL-2.0
/*
 * Every loss a report prints: the recorder's counters (its last losses record counts) and what
 * the reader could not read (corrupt chunks, a cut-off tail), with a note for each.
 */
#include <stdio.h>

#include "analysis.h"
#include "blame.h"
#include "decode.h"
#include "gputime.h"
#include "losses.h"
#include "threads.h"
#include "trace.h"

void losses__record(struct analysis *a, const struct gs_hdr *h)
{
	const struct gs_rec_losses *l = (const void *)h;
	size_t fixed = gs_fixed_size(h);
	__u32 n = l->n;

	if (fixed < sizeof(*l))
		return;
	if (n > (fixed - sizeof(*l)) / 8)
		n = (fixed - sizeof(*l)) / 8;
	for (__u32 i = 0; i < n && i < GS_LOSS_MAX; i++)
		a->losses[i] = l->count[i];
}

void losses__unprobed(struct analysis *a, const struct gs_hdr *h)
{
	const struct gs_rec_unprobed *u = gs_unprobed(h);
	__u64 ns;

	if (!u)
		return;
	ns = h->ts > u->from_ns ? h->ts - u->from_ns : 0;
	a->unprobed.n++;
	a->unprobed.ns += ns;
	if (u->why < GS_UNPROBED_MAX)
		a->unprobed.by_why[u->why]++;
	if (ns >= a->unprobed.max_ns) {
		a->unprobed.max_ns = ns;
		a->unprobed.max_pid = h->tgid;
	}
}

/* The unprobed windows, one note: how many, why, how long. */
static void unprobed_note(struct analysis *a)
{
	char line[256], why[96] = "";
	size_t len = 0;

	for (size_t i = 0; i < GS_UNPROBED_MAX; i++)
		if (a->unprobed.by_why[i] && len < sizeof(why))
			len += snprintf(why + len, sizeof(why) - len, "%s%s %llu", len ? ", " : "",
					gs_unprobed_names[i],
					(unsigned long long)a->unprobed.by_why[i]);
	snprintf(line, sizeof(line),
		 "%llu process(es) ran before their probes were in place (%s): %.3f ms in all, "
		 "longest %.3f ms (pid %u); their library calls then are not in the trace",
		 (unsigned long long)a->unprobed.n, why, a->unprobed.ns / 1e6,
		 a->unprobed.max_ns / 1e6, a->unprobed.max_pid);
	analysis__note(a, line);
}

/* The stream and event handles not followed (gputime_int.h's bounds), one note. */
static void handles_note(struct analysis *a)
{
	const struct handle_stats *h = &a->handles;
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
	analysis__note(a, line);
}

void losses__reader(struct analysis *a, const struct trace_stats *st)
{
	char line[256];

	for (size_t i = 0; i < GS_LOSS_MAX; i++)
		a->loss_names[i] = gs_loss_names[i];
	a->nlosses = GS_LOSS_MAX;
	a->loss_names[a->nlosses] = "corrupt_chunks";
	a->losses[a->nlosses++] = st->bad_chunks;
	a->loss_names[a->nlosses] = "corrupt_bytes";
	a->losses[a->nlosses++] = st->bad_bytes;
	a->loss_names[a->nlosses] = "cut_bytes";
	a->losses[a->nlosses++] = st->cut_bytes;
	a->loss_names[a->nlosses] = "unprobed_processes";
	a->losses[a->nlosses++] = a->unprobed.n;
	a->loss_names[a->nlosses] = "unprobed_us";
	a->losses[a->nlosses++] = a->unprobed.ns / 1000;
	a->loss_names[a->nlosses] = "stream_handles_let_go";
	a->losses[a->nlosses++] = a->handles.streams_let_go;
	a->loss_names[a->nlosses] = "stream_calls_refused";
	a->losses[a->nlosses++] = a->handles.stream_calls_refused;
	a->loss_names[a->nlosses] = "event_handles_let_go";
	a->losses[a->nlosses++] = a->handles.events_let_go;
	if (a->handles.streams_let_go || a->handles.stream_calls_refused ||
	    a->handles.events_let_go)
		handles_note(a);
	if (a->unprobed.n)
		unprobed_note(a);
	for (size_t i = 0; i < GS_LOSS_MAX; i++)
		a->lost_events += a->losses[i];
	if (st->bad_chunks) {
		snprintf(line, sizeof(line),
			 "%llu corrupt chunk(s) skipped (%llu bytes): their events are missing",
			 (unsigned long long)st->bad_chunks, (unsigned long long)st->bad_bytes);
		analysis__note(a, line);
	}
	if (st->cut_bytes) {
		snprintf(line, sizeof(line),
			 "trace cut off: read to its last whole chunk (%llu bytes not read)",
			 (unsigned long long)st->cut_bytes);
		analysis__note(a, line);
	}
	if (!st->finished)
		analysis__note(
			a, "the recording did not finish (no end record): the report covers what "
			   "was written");
	if (!a->events)
		analysis__note(a, "the trace holds no events");
	else if (!a->cuda_events)
		analysis__note(a, "the trace holds no CUDA events: no GPU timeline, no gaps");
}

void losses__tables(struct analysis *a, const struct threads_counts *c, __u64 names_evicted)
{
	char line[256];

	a->tables.words_forgotten = c->words_forgotten;
	a->tables.words_max = c->words_max;
	a->tables.threads_forgotten = c->threads_forgotten;
	a->tables.threads_max = c->threads_max;
	a->loss_names[a->nlosses] = "futex_waits_evicted";
	a->losses[a->nlosses++] = c->wakes_evicted;
	a->loss_names[a->nlosses] = "threads_evicted";
	a->losses[a->nlosses++] = c->threads_evicted;
	a->loss_names[a->nlosses] = "names_evicted";
	a->losses[a->nlosses++] = names_evicted;
	if (c->wakes_evicted || c->threads_evicted) {
		snprintf(
			line, sizeof(line),
			"%llu futex wait(s) and %llu exited thread(s) let go of before their time "
			"(over %u waits, %u exited threads held): chains through them may stop short",
			(unsigned long long)c->wakes_evicted,
			(unsigned long long)c->threads_evicted, THREADS_WAKES_MAX,
			THREADS_EXITED_MAX);
		analysis__note(a, line);
	}
	if (names_evicted) {
		snprintf(line, sizeof(line),
			 "%llu name(s) of other processes or of locks without their pid or address "
			 "(over %u distinct ones)",
			 (unsigned long long)names_evicted, BLAME_KEYED_MAX);
		analysis__note(a, line);
	}
}
