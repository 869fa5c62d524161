// SPDX-License-Identifier: GPL-2.0
/*
 * CUDA function lookup (loader/cuda_fns.c, the probe table): known names give their kind and
 * argument positions; the per-thread default stream twins (_ptsz, _ptds) share their base's
 * layout; _v2 entries are their own; an unknown version of a known family is timed with nothing
 * decoded, except for name lookups; names outside the table (or outside the cu prefix, but for a
 * driver stand-in's gapscope_device_thread) are not probed.
 */
#include <string.h>

#include "cuda_fns.h"
#include "testlib.h"

static struct cu_fn_desc lookup(const char *name)
{
	struct cu_fn_desc d;

	memset(&d, 0xa5, sizeof(d));
	CHECK(cuda_fns__lookup(name, &d), "%s is probed", name);
	return d;
}

static void known(void)
{
	struct cu_fn_desc d = lookup("cuLaunchKernel");

	CHECK_EQ_U64(d.kind, CU_K_LAUNCH);
	CHECK_EQ_U64(d.a_handle, 1);
	CHECK_EQ_U64(d.a_grid, 2);
	CHECK_EQ_U64(d.a_stream, 9);
	CHECK_EQ_U64(d.flags & CU_F_RET, 0); /* launches: entry only */

	d = lookup("cuMemcpyHtoD_v2");
	CHECK_EQ_U64(d.kind, CU_K_MEMCPY);
	CHECK_EQ_U64(d.flags, CU_F_RET);
	CHECK_EQ_U64(d.a_bytes, 3);

	d = lookup("cuMemcpyHtoDAsync_v2");
	CHECK_EQ_U64(d.flags, CU_F_ASYNC);
	CHECK_EQ_U64(d.a_stream, 4);

	d = lookup("cuCtxCreate_v3");
	CHECK_EQ_U64(d.kind, CU_K_CTX_CREATE);
	CHECK_EQ_U64(d.a_aux, 5); /* _v3 has its own layout, not _v2's (3) */
	CHECK_EQ_U64(lookup("cuCtxCreate_v2").a_aux, 3);

	d = lookup("cuModuleGetFunction");
	CHECK_EQ_U64(d.kind, CU_K_GET_FUNCTION);
	CHECK_EQ_U64(d.a_name, 3);
	CHECK_EQ_U64(d.a_out, 1);
}

static void twins(void)
{
	static const char *const bases[] = { "cuLaunchKernel", "cuMemcpyAsync",
					     "cuMemcpyHtoDAsync_v2", "cuStreamBeginCapture_v2" };
	static const char *const suffixes[] = { "_ptsz", "_ptds" };

	for (size_t i = 0; i < sizeof(bases) / sizeof(*bases); i++) {
		struct cu_fn_desc base = lookup(bases[i]);

		for (size_t j = 0; j < 2; j++) {
			char name[128];
			struct cu_fn_desc twin;

			snprintf(name, sizeof(name), "%s%s", bases[i], suffixes[j]);
			twin = lookup(name);
			CHECK(!memcmp(&twin, &base, sizeof(twin)), "%s has %s's layout", name,
			      bases[i]);
		}
	}
}

static void versions(void)
{
	struct cu_fn_desc d = lookup("cuMemcpyHtoD_v9");

	/* A future version: kind and timing flags of the family, no argument decoded. */
	CHECK_EQ_U64(d.kind, CU_K_MEMCPY);
	CHECK_EQ_U64(d.flags, CU_F_RET);
	CHECK_EQ_U64(d.a_bytes, 0);
	CHECK_EQ_U64(d.a_stream, 0);
	d = lookup("cuLaunchKernel_v12_ptsz");
	CHECK_EQ_U64(d.kind, CU_K_LAUNCH);
	CHECK_EQ_U64(d.a_handle, 0);
}

static void not_probed(void)
{
	static const char *const names[] = {
		"cuGetProcAddress",
		"cuCtxGetCurrent",
		"cuInit",
		"cuModuleGetFunction_v2", /* a name lookup without its name argument */
		"cuLaunchKernel_ptsz2",
		"cuLaunchKernel_v",
		"cuLaunchKernelX",
		"xcuLaunchKernel",
		"LaunchKernel",
		"cu",
		"",
	};
	struct cu_fn_desc d;

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		CHECK(!cuda_fns__lookup(names[i], &d), "'%s' is not probed", names[i]);
}

/* A driver stand-in's hook: probed in a libcuda though not a cu* name; its twins are not. */
static void device_thread(void)
{
	struct cu_fn_desc d = lookup("gapscope_device_thread");
	const char *const names[] = { "gapscope_device_thread_ptsz", "gapscope_device_thread_v2",
				      "gapscope_device", "cugapscope_device_thread" };

	CHECK_EQ_U64(d.kind, CU_K_DEVICE_THREAD);
	CHECK_EQ_U64(d.a_aux, 1);
	CHECK_EQ_U64(d.flags, 0); /* entry only: one trap */
	CHECK_EQ_U64(d.a_stream, 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		CHECK(!cuda_fns__lookup(names[i], &d), "'%s' is not probed", names[i]);
}

int main(void)
{
	known();
	device_thread();
	twins();
	versions();
	not_probed();
	TEST_PASS();
}
