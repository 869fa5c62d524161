// SPDX-License-Identifier: GPL-2.0
/*
 * For tests/cases/report_cupti.sh: a copy of a trace recorded on simcuda with the kernels of the
 * engine's truth file (its gpu_busy intervals: simcuda's exact kernel times) added as the CUPTI
 * collector would have sent them: GS_REC_GPU_ACT kernel records, in batches written LAG_NS after
 * their kernels end, between the trace's own records; the collector's status records; the
 * header marked TRACE_F_GPU_ACT. No launch records: the report must find the closers itself;
 * unless LAUNCHES is given: its {"kind":"launch","tid":T,"start_ns":N} lines become launch
 * records (the calling thread and the call's start; the i-th launch correlated with the i-th
 * kernel, as on one stream), sent with the kernels.
 *
 *   add_cupti IN.gsc TRUTH OUT.gsc [LAUNCHES]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

#define LAG_NS 200000000ull /* as a collector's buffer might be handed over, 200 ms late */

struct kernel {
	unsigned int gpu;
	unsigned long long start, end;
};

struct launch {
	unsigned int tid;
	unsigned long long start;
};

static struct kernel *kernels;
static size_t nkernels, sent;
static struct launch *launches;
static size_t nlaunches, lsent;

static void die(const char *what)
{
	fprintf(stderr, "add_cupti: %s\n", what);
	exit(1);
}

static void read_truth(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	size_t cap = 0;

	if (!f)
		die("cannot open the truth file");
	while (fgets(line, sizeof(line), f)) {
		struct kernel k;

		if (sscanf(line,
			   "{\"kind\":\"gpu_busy\",\"gpu\":%u,\"start_ns\":%llu,\"end_ns\":%llu}",
			   &k.gpu, &k.start, &k.end) != 3)
			continue;
		if (nkernels == cap) {
			cap = cap ? 2 * cap : 1024;
			kernels = realloc(kernels, cap * sizeof(*kernels));
			if (!kernels)
				die("out of memory");
		}
		kernels[nkernels++] = k;
	}
	fclose(f);
	if (!nkernels)
		die("no gpu_busy records in the truth file");
}

static void read_launches(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[256];
	size_t cap = 0;

	if (!f)
		die("cannot open the launches file");
	while (fgets(line, sizeof(line), f)) {
		struct launch l;

		if (sscanf(line, "{\"kind\":\"launch\",\"tid\":%u,\"start_ns\":%llu}", &l.tid,
			   &l.start) != 2)
			continue;
		if (nlaunches == cap) {
			cap = cap ? 2 * cap : 1024;
			launches = realloc(launches, cap * sizeof(*launches));
			if (!launches)
				die("out of memory");
		}
		launches[nlaunches++] = l;
	}
	fclose(f);
}

static void put(struct trace_writer *w, const struct gs_gpu_act *a, const char *text, __u64 ts)
{
	struct {
		struct gs_hdr h;
		struct gs_gpu_act a;
		char text[GS_GPU_ACT_TEXT];
	} rec;
	size_t tlen = text ? (strlen(text) + 8) / 8 * 8 : 0;

	memset(&rec, 0, sizeof(rec));
	rec.a = *a;
	rec.a.size = sizeof(rec.a) + tlen;
	if (text)
		strcpy(rec.text, text);
	rec.h.type = GS_REC_GPU_ACT;
	rec.h.size = sizeof(rec.h) + rec.a.size;
	rec.h.ts = ts;
	if (trace__append(w, &rec, rec.h.size))
		die("cannot write");
}

static void status(struct trace_writer *w, __u32 which, __u64 ts)
{
	struct gs_gpu_act a = { .kind = GS_ACT_STATUS, .aux = which };

	put(w, &a, which == GS_CUPTI_ON ? "libcupti.so (test)" : "", ts);
}

/* The kernels that ended LAG_NS or more before ts. */
static void send_upto(struct trace_writer *w, __u64 ts)
{
	for (; sent < nkernels && (ts == ~0ull || kernels[sent].end + LAG_NS <= ts); sent++) {
		struct gs_gpu_act a = {
			.kind = GS_ACT_KERNEL,
			.device = kernels[sent].gpu,
			.correlation = sent + 1,
			.aux = 1,
			.start = kernels[sent].start,
			.end = kernels[sent].end,
		};

		put(w, &a, NULL, a.start);
	}
	for (; lsent < nlaunches && (ts == ~0ull || launches[lsent].start + LAG_NS <= ts);
	     lsent++) {
		struct gs_gpu_act a = {
			.kind = GS_ACT_LAUNCH,
			.correlation = lsent + 1,
			.tid = launches[lsent].tid,
			.start = launches[lsent].start,
			.end = launches[lsent].start,
		};

		put(w, &a, NULL, a.start);
	}
}

int main(int argc, char **argv)
{
	struct gs_gpu_act name = { .kind = GS_ACT_NAME, .aux = 1 };
	struct trace_reader *r;
	struct trace_writer *w;
	const struct gs_hdr *h;
	char err[512];
	bool started = false;

	if (argc != 4 && argc != 5)
		die("usage: add_cupti IN.gsc TRUTH OUT.gsc [LAUNCHES]");
	read_truth(argv[2]);
	if (argc == 5)
		read_launches(argv[4]);
	r = trace__open(argv[1], err, sizeof(err));
	if (!r)
		die(err);
	w = trace__create(argv[3], true);
	if (!w || trace__set_flags(w, TRACE_F_GPU_ACT))
		die("cannot create the output");
	while (trace__next(r, &h) > 0) {
		if (h->type == GS_REC_END) {
			send_upto(w, ~0ull);
			status(w, GS_CUPTI_FLUSHED, h->ts);
		} else if (h->type < GS_REC_CLOCK) {
			if (!started) {
				status(w, GS_CUPTI_ON, h->ts);
				put(w, &name, "simcuda_kernel", h->ts);
				started = true;
			}
			send_upto(w, h->ts);
		}
		if (trace__append(w, h, h->size))
			die("cannot write");
	}
	if (sent < nkernels)
		die("the trace has no end record");
	if (trace__finish(w))
		die("cannot finish the output");
	trace__close(r);
	printf("add_cupti: %zu kernel intervals, %zu launches added\n", nkernels, nlaunches);
	return 0;
}
