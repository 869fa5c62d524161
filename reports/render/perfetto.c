// SPDX-License-Identifier: GPL-2.0
/* timeline.json, Chrome trace events for the Perfetto UI: see perfetto.h. */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "duration.h"
#include "escape.h"
#include "flamegraph.h"
#include "perfetto_int.h"
#include "reader.h"

/* ---- JSON -------------------------------------------------------------------------------- */

/* Microseconds from the trace's start, nanoseconds exact. */
static void put_us(FILE *out, __u64 ns)
{
	fprintf(out, "%llu.%03llu", (unsigned long long)(ns / 1000),
		(unsigned long long)(ns % 1000));
}

/* A complete slice up to its args object, which the caller fills and ev_end closes. */
void tl__slice(struct tl *t, __u32 pid, __u32 tid, __u64 s, __u64 e, const char *cat,
	       const char *name, __u64 flow, bool flow_out)
{
	__u64 rs = s > t->t0 ? s - t->t0 : 0;

	fprintf(t->out, "%s{\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":", t->first ? "" : ",\n", pid,
		tid);
	put_us(t->out, rs);
	fputs(",\"dur\":", t->out);
	put_us(t->out, e > s ? e - s : 0);
	fprintf(t->out, ",\"cat\":\"%s\",\"name\":", cat);
	esc__json(t->out, name, false);
	if (flow)
		fprintf(t->out, ",\"bind_id\":%llu,\"%s\":true", (unsigned long long)flow,
			flow_out ? "flow_out" : "flow_in");
	fputs(",\"args\":{", t->out);
	t->first = false;
}

void tl__arg_str(struct tl *t, bool first, const char *k, const char *v)
{
	fprintf(t->out, "%s\"%s\":", first ? "" : ",", k);
	esc__json(t->out, v, false);
}

void tl__arg_u64(struct tl *t, const char *k, __u64 v)
{
	fprintf(t->out, ",\"%s\":%llu", k, (unsigned long long)v);
}

void tl__end(struct tl *t)
{
	fputs("}}", t->out);
}

void tl__meta(struct tl *t, const char *what, __u32 pid, __u32 tid, const char *name)
{
	fprintf(t->out, "%s{\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"name\":\"%s\",\"args\":{\"name\":",
		t->first ? "" : ",\n", pid, tid, what);
	esc__json(t->out, name, false);
	fputs("}}", t->out);
	t->first = false;
}

/* ---- GPU tracks -------------------------------------------------------------------------- */

static void write_gpu(struct tl *t)
{
	const struct analysis *a = t->a;
	char label[512], line[1024], d[32];

	for (size_t i = 0; i < a->ndevices; i++) {
		const struct device_summary *dev = &a->devices[i];

		for (size_t k = 0; k < dev->nbusy; k++) {
			tl__slice(t, GPU_PID, GPU_PID + 1 + dev->id, dev->busy[k].start,
				  dev->busy[k].end, "gpu", "kernels", 0, false);
			tl__end(t);
		}
	}
	for (size_t i = 0; i < a->ngaps; i++) {
		const struct gap *g = &a->gaps[i];
		const struct chain_link *root = g->nchain ? &g->chain[g->nchain - 1] : NULL;

		gap__chain_text(g, line, sizeof(line));
		snprintf(label, sizeof(label), "gap %u: %.*s", g->id, (int)sizeof(label) - 16,
			 line);
		dur__fmt(d, sizeof(d), g->end_ns - g->start_ns);
		tl__slice(t, GPU_PID, GPU_PID + 1 + g->device, g->start_ns, g->end_ns, "gap", label,
			  0, false);
		fprintf(t->out, "\"gap\":%u,\"device\":%u", g->id, g->device);
		tl__arg_u64(t, "duration_ns", g->end_ns - g->start_ns);
		tl__arg_str(t, false, "duration", d);
		tl__arg_str(t, false, "tier", g->tier);
		if (root) {
			snprintf(label, sizeof(label), "%s %s", blame_kind__name(root->kind),
				 root->lock		?:
					 root->function ?:
							  "");
			tl__arg_str(t, false, "cause", label);
			tl__arg_u64(t, "cause_ns", g->cause_ns);
		}
		tl__arg_str(t, false, "chain", line);
		tl__arg_str(t, false, "start_edge", g->start_how);
		tl__arg_str(t, false, "end_edge", g->end_how);
		tl__arg_str(t, false, "closer", g->closer_comm);
		tl__arg_u64(t, "closer_tid", g->closer_tid);
		snprintf(label, sizeof(label), "gaps/%04u.svg", g->id);
		tl__arg_str(t, false, "flame_graph", label);
		tl__end(t);
	}
}

/* The closing metadata: what the file holds and what it leaves out. */
static void write_metadata(struct tl *t)
{
	const struct timeline_stats *st = &t->st;
	char note[256];

	fputs("\n],\n\"displayTimeUnit\":\"ns\",\n\"metadata\":{", t->out);
	tl__arg_str(t, true, "generator", "gapscope report");
	tl__arg_u64(t, "trace_start_ns", t->t0);
	tl__arg_u64(t, "duration_ns", t->a->duration_ns);
	tl__arg_u64(t, "min_slice_ns", st->min_ns);
	tl__arg_u64(t, "max_slices", t->max_slices);
	tl__arg_u64(t, "thread_slices", st->slices);
	tl__arg_u64(t, "left_out_short", st->short_left_out);
	tl__arg_u64(t, "left_out_past_max_slices", st->capped);
	tl__arg_u64(t, "threads", st->threads);
	tl__arg_u64(t, "chain_links", st->links);
	tl__arg_u64(t, "flows", st->flows);
	tl__arg_u64(t, "chain_links_without_wakeup", st->links_unmatched);
	if (st->min_ns)
		snprintf(note, sizeof(note),
			 "thread intervals outside every gap shorter than %llu ns, or past the "
			 "first %zu, are left out; everything that overlaps a gap is kept",
			 (unsigned long long)st->min_ns, t->max_slices);
	else
		snprintf(note, sizeof(note),
			 "thread intervals outside every gap past the first %zu are left out; "
			 "everything that overlaps a gap is kept",
			 t->max_slices);
	tl__arg_str(t, false, "left_out", note);
	if (t->cut)
		tl__arg_str(t, false, "cut", "the trace could not be read to its end");
	tl__arg_str(t, false, "not_drawn",
		    "on-CPU time (between the slices), CPU samples, "
		    "mutex holds (--lock-holds)");
	fputs("}}\n", t->out);
}

int timeline__write(FILE *out, const char *path, const struct analysis *a,
		    const struct timeline_opts *o, struct timeline_stats *st, char *err,
		    size_t errlen)
{
	struct tl t = { .out = out, .a = a, .t0 = a->start_ns, .first = true, .thcap = 64 };
	struct trace_reader *tr = trace__open(path, err, errlen);
	struct ordered_reader *r = NULL;
	const struct gs_hdr *h;
	int ret = -1, n;

	if (o && o->min_ns)
		t.min_ns = o->min_ns;
	else if (a->events > TIMELINE_ALL_EVENTS)
		t.min_ns = TIMELINE_MIN_NS;
	t.max_slices = o && o->max_slices ? o->max_slices : TIMELINE_MAX_SLICES;
	t.st.min_ns = t.min_ns;
	if (!tr)
		return -1;
	t.version = trace__version(tr);
	t.ctx = ctx__new();
	t.strs = strtab__new();
	t.nm = t.strs ? names__new(t.strs, !(o && o->no_file_symbols), o ? o->debug_dir : NULL) :
			NULL;
	if (t.nm && analysis__archive(a))
		names__set_archive(t.nm, analysis__archive(a));
	t.th = calloc(t.thcap, sizeof(*t.th));
	if (!t.ctx || !t.nm || !t.th || tl__index_gaps(&t)) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	r = oreader__new(tr, t.ctx, OREADER_WINDOW_NS);
	if (!r) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	fputs("{\"traceEvents\":[\n", out);
	tl__meta(&t, "process_name", GPU_PID, GPU_PID, "GPU");
	for (size_t i = 0; i < a->ndevices; i++) {
		char name[32];

		snprintf(name, sizeof(name), "GPU %u", a->devices[i].id);
		tl__meta(&t, "thread_name", GPU_PID, GPU_PID + 1 + a->devices[i].id, name);
	}
	write_gpu(&t);
	while ((n = oreader__next(r, &h)) > 0) {
		if (tl__feed(&t, h)) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
	}
	/* A trace that cannot be read to its end was analysed as far as it goes: so is it here. */
	t.cut = n < 0;
	tl__finish(&t);
	write_metadata(&t);
	if (ferror(out)) {
		snprintf(err, errlen, "write error");
		goto out;
	}
	ret = 0;
out:
	if (st)
		*st = t.st;
	oreader__free(r);
	tl__free(&t);
	names__free(t.nm);
	strtab__free(t.strs);
	ctx__free(t.ctx);
	trace__close(tr);
	return ret;
}
