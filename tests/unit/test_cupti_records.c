// SPDX-License-Identifier: GPL-2.0
/*
 * The CUPTI collector's conversion (loader/cupti/convert.c), fed activity records built by hand
 * with the toolkit's own structs: kernels (each name sent once, before its first kernel),
 * copies, memsets, launch calls, kinds not kept, a buffer too short, status and drop records.
 */
#include <string.h>

#include "convert.h"
#include <cupti_driver_cbid.h>
#include "testlib.h"

static CUpti_ActivityKernel10 kernel(const char *name, uint64_t start, uint64_t end, uint32_t dev,
				     uint32_t stream, uint32_t corr)
{
	CUpti_ActivityKernel10 k;

	memset(&k, 0xa5, sizeof(k)); /* fields not converted hold garbage, as CUPTI's may */
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.name = name;
	k.start = start;
	k.end = end;
	k.deviceId = dev;
	k.contextId = 7;
	k.streamId = stream;
	k.correlationId = corr;
	return k;
}

static const struct gs_gpu_act *next(const char **p)
{
	const struct gs_gpu_act *a = (const void *)*p;

	CHECK(a->size >= sizeof(*a) && a->size % 8 == 0, "size %u", a->size);
	*p += a->size;
	return a;
}

int main(void)
{
	_Alignas(8) char buf[4 * GS_CONV_MAX];
	struct gs_names names = {};
	const struct gs_gpu_act *a;
	const char *p = buf;
	char ntt[] = "ntt_stage_kernel", copy_of_ntt[] = "ntt_stage_kernel";
	CUpti_ActivityKernel10 k1 = kernel(ntt, 1000, 5000, 1, 14, 101);
	CUpti_ActivityKernel10 k2 = kernel(copy_of_ntt, 6000, 9000, 1, 15, 102);
	CUpti_ActivityMemcpy6 mc;
	CUpti_ActivityMemset4 ms;
	CUpti_ActivityAPI api;
	CUpti_ActivityMarker2 marker;
	int n, used = 0;

	/* The first kernel of a name: its name record, then the kernel. */
	n = gs_conv__record(&names, 4242, (CUpti_Activity *)&k1, buf, sizeof(buf));
	CHECK_EQ_U64(n, 2 * sizeof(struct gs_gpu_act) + 24);
	used += n;
	a = next(&p);
	CHECK_EQ_U64(a->kind, GS_ACT_NAME);
	CHECK_EQ_U64(a->aux, 1);
	CHECK(!strcmp(a->text, "ntt_stage_kernel"), "name %s", a->text);
	a = next(&p);
	CHECK_EQ_U64(a->kind, GS_ACT_KERNEL);
	CHECK_EQ_U64(a->aux, 1);
	CHECK_EQ_U64(a->device, 1);
	CHECK_EQ_U64(a->context, 7);
	CHECK_EQ_U64(a->stream, 14);
	CHECK_EQ_U64(a->correlation, 101);
	CHECK_EQ_U64(a->pid, 4242);
	CHECK_EQ_U64(a->start, 1000);
	CHECK_EQ_U64(a->end, 5000);
	CHECK_EQ_U64(a->bytes, 0);

	/* The same name at another address: no second name record, the same id. */
	n = gs_conv__record(&names, 4242, (CUpti_Activity *)&k2, buf + used, sizeof(buf) - used);
	CHECK_EQ_U64(n, sizeof(struct gs_gpu_act));
	used += n;
	a = next(&p);
	CHECK_EQ_U64(a->kind, GS_ACT_KERNEL);
	CHECK_EQ_U64(a->aux, 1);
	CHECK_EQ_U64(a->stream, 15);
	CHECK_EQ_U64(a->end, 9000);

	memset(&mc, 0, sizeof(mc));
	mc.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	mc.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	mc.bytes = 1 << 20;
	mc.start = 10000;
	mc.end = 30000;
	mc.deviceId = 0;
	mc.contextId = 3;
	mc.streamId = 7;
	mc.correlationId = 103;
	n = gs_conv__record(&names, 4242, (CUpti_Activity *)&mc, buf + used, sizeof(buf) - used);
	CHECK_EQ_U64(n, sizeof(struct gs_gpu_act));
	used += n;
	a = next(&p);
	CHECK_EQ_U64(a->kind, GS_ACT_MEMCPY);
	CHECK_EQ_U64(a->aux, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
	CHECK_EQ_U64(a->bytes, 1 << 20);
	CHECK_EQ_U64(a->start, 10000);
	CHECK_EQ_U64(a->end, 30000);
	CHECK_EQ_U64(a->correlation, 103);

	memset(&ms, 0, sizeof(ms));
	ms.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	ms.bytes = 4096;
	ms.start = 31000;
	ms.end = 32000;
	ms.deviceId = 1;
	ms.streamId = 9;
	ms.correlationId = 104;
	n = gs_conv__record(&names, 4242, (CUpti_Activity *)&ms, buf + used, sizeof(buf) - used);
	used += n;
	a = next(&p);
	CHECK_EQ_U64(a->kind, GS_ACT_MEMSET);
	CHECK_EQ_U64(a->bytes, 4096);
	CHECK_EQ_U64(a->device, 1);
	CHECK_EQ_U64(a->stream, 9);

	/* A launch call: its thread and correlation id, what ties a kernel to its launcher. */
	memset(&api, 0, sizeof(api));
	api.kind = CUPTI_ACTIVITY_KIND_DRIVER;
	api.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
	api.start = 900;
	api.end = 950;
	api.processId = 4242;
	api.threadId = 4250;
	api.correlationId = 101;
	n = gs_conv__record(&names, 4242, (CUpti_Activity *)&api, buf + used, sizeof(buf) - used);
	used += n;
	a = next(&p);
	CHECK_EQ_U64(a->kind, GS_ACT_LAUNCH);
	CHECK_EQ_U64(a->aux, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
	CHECK_EQ_U64(a->tid, 4250);
	CHECK_EQ_U64(a->pid, 4242);
	CHECK_EQ_U64(a->correlation, 101);
	CHECK_EQ_U64(a->start, 900);

	/* A kind not kept writes nothing; a short buffer is refused, without side effects. */
	memset(&marker, 0, sizeof(marker));
	marker.kind = CUPTI_ACTIVITY_KIND_MARKER;
	CHECK_EQ_U64(gs_conv__record(&names, 4242, (CUpti_Activity *)&marker, buf + used,
				     sizeof(buf) - used),
		     0);
	k1.name = "another_kernel";
	CHECK(gs_conv__record(&names, 4242, (CUpti_Activity *)&k1, buf, GS_CONV_MAX - 1) == -1,
	      "a short buffer is refused");
	n = gs_conv__record(&names, 4242, (CUpti_Activity *)&k1, buf + used, sizeof(buf) - used);
	a = next(&p);
	CHECK_EQ_U64(a->kind, GS_ACT_NAME);
	CHECK_EQ_U64(a->aux, 2);
	CHECK(!strcmp(a->text, "another_kernel"), "name %s", a->text);
	used += n;
	p = buf + used;

	/* A name longer than the record keeps is cut, NUL-terminated. */
	{
		char longname[600];

		memset(longname, 'x', sizeof(longname) - 1);
		longname[sizeof(longname) - 1] = 0;
		k1.name = longname;
		n = gs_conv__record(&names, 4242, (CUpti_Activity *)&k1, buf, sizeof(buf));
		p = buf;
		a = next(&p);
		CHECK_EQ_U64(a->kind, GS_ACT_NAME);
		CHECK_EQ_U64(strlen(a->text), GS_GPU_ACT_TEXT - 1);
		CHECK((size_t)n <= GS_CONV_MAX, "%d bytes", n);
	}

	/* Status and drop records. */
	n = gs_conv__status(buf, 4242, GS_CUPTI_NO_LIB, "libcupti.so.13: cannot open");
	p = buf;
	a = next(&p);
	CHECK_EQ_U64(n, a->size);
	CHECK_EQ_U64(a->kind, GS_ACT_STATUS);
	CHECK_EQ_U64(a->aux, GS_CUPTI_NO_LIB);
	CHECK(!strcmp(a->text, "libcupti.so.13: cannot open"), "%s", a->text);
	n = gs_conv__dropped(buf, 4242, 17);
	p = buf;
	a = next(&p);
	CHECK_EQ_U64(a->kind, GS_ACT_DROPPED);
	CHECK_EQ_U64(a->bytes, 17);
	gs_names__free(&names);
	TEST_PASS();
}
