// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the trace reader (lib/trace.c, trace_read.c) and the time-ordered reader with its context
 * (reports/analysis/reader.c, context.c) over any bytes: the input as it is (CRCs checked as written),
 * then with its chunks' CRCs made right. Every record handed out must lie inside its chunk and
 * hold its stack frames; the sanitizers catch any read past the input.
 */
#include <assert.h>

#include "fuzz.h"
#include "reader.h"

static struct fuzz_file file;
static FILE *devnull;

/* Touches every byte of a record, as a consumer may: the sanitizer checks they are the input's. */
static unsigned int touch(const struct gs_hdr *h)
{
	const unsigned char *p = (const void *)h;
	struct gs_frames u = gs_user_frames(h), k = gs_kernel_frames(h);
	unsigned int sum = 0;

	assert(h->size >= sizeof(*h) && h->size % TRACE_ALIGN == 0);
	for (__u32 i = 0; i < h->size; i++)
		sum += p[i];
	for (__u32 i = 0; i < u.n; i++)
		sum += (unsigned int)u.ip[i];
	for (__u32 i = 0; i < k.n; i++)
		sum += (unsigned int)k.ip[i];
	return sum;
}

static void read_raw(const char *path)
{
	char err[256];
	struct trace_reader *r = trace__open(path, err, sizeof(err));
	const struct gs_hdr *h;
	unsigned int sum = 0;
	__u64 n = 0;

	if (!r)
		return;
	while (trace__next(r, &h) > 0) {
		sum += touch(h);
		n++;
	}
	assert(trace__stats(r)->records == n);
	trace__warn(r, path, devnull);
	trace__close(r);
	fprintf(devnull, "%u\n", sum);
}

static void read_ordered(const char *path)
{
	char err[256];
	struct trace_reader *tr = trace__open(path, err, sizeof(err));
	struct gs_ctx *ctx = ctx__new();
	struct ordered_reader *r = NULL;
	const struct gs_hdr *h;
	__u64 n = 0;
	int ret;

	if (!tr || !ctx || ctx__prescan(ctx, path))
		goto out;
	r = oreader__new(tr, ctx, OREADER_WINDOW_NS);
	if (!r)
		goto out;
	while ((ret = oreader__next(r, &h)) > 0) {
		touch(h);
		n++;
		if (!gs_rec_is_meta(h))
			fprintf(devnull, "%s %s\n", ctx__comm(ctx, h->tid) ?: "?",
				trace__event_name(h->type));
	}
	assert(ret == 0);
	assert(oreader__stats(r)->emitted == n);
	oreader__warn(r, path, devnull);
out:
	oreader__free(r);
	ctx__free(ctx);
	trace__close(tr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *fixed;

	if (!devnull)
		devnull = fopen("/dev/null", "we");
	if (fuzz_file__set(&file, data, size))
		return 0;
	read_raw(file.path);
	fixed = fuzz_fix_crcs(data, size);
	if (!fixed || fuzz_file__set(&file, fixed, size)) {
		free(fixed);
		return 0;
	}
	read_raw(file.path);
	read_ordered(file.path);
	free(fixed);
	return 0;
}
