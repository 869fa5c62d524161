// SPDX-License-Identifier: MIT
/*
 * simcuda behaves as the driver does where a profiler could tell: error codes for missing
 * initialization, contexts and bad handles; asynchronous launches and pinned copies; blocking
 * pageable copies; legacy-stream ordering; events; one kernel at a time per device (from the
 * SIMCUDA_TRACE ground truth); results of the CPU kernels.
 */
#include "cuda_api.h"
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <string.h>

#include "kernels.h"
#include "testlib.h"

#define STR_(x) #x
#define STR(x)	STR_(x)

/* one name after another, as many as fit a line */
/* clang-format off */
#define FUNCS(X)                                                                                   \
	X(cuInit) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDevicePrimaryCtxRetain)                  \
	X(cuCtxSetCurrent) X(cuCtxSynchronize) X(cuMemAlloc) X(cuMemFree) X(cuMemHostAlloc)      \
	X(cuMemFreeHost) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) X(cuMemcpyDtoH)               \
	X(cuModuleLoadData) X(cuModuleGetFunction) X(cuLaunchKernel) X(cuStreamCreate)           \
	X(cuStreamDestroy) X(cuStreamSynchronize) X(cuStreamQuery) X(cuEventCreate)              \
	X(cuEventDestroy) X(cuEventRecord) X(cuEventQuery) X(cuEventSynchronize)                 \
	X(cuEventElapsedTime) X(cuGetErrorName) X(cuStreamWaitEvent) X(cuModuleUnload)
/* clang-format on */

#define MEMBER(f) __typeof__(f) *f;
static struct {
	FUNCS(MEMBER)
} cu;

#define OK(call) CHECK_EQ_U64(call, CUDA_SUCCESS)

/* Big enough that it is certainly still running right after the launch returns: 2^18
 * exponentiations take a few hundred milliseconds on one core. */
#define BIG_LOG2 18

static CUfunction f_powers;
static char trace_path[] = "/tmp/test_simcuda.XXXXXX";

static void launch_powers(CUstream s, CUdeviceptr out, uint64_t n)
{
	struct fr_powers_args a = { .out = (fr_t *)(uintptr_t)out, .base = fr_from_u64(5), .n = n };
	void *params[] = { &a };
	OK(cu.cuLaunchKernel(f_powers, (unsigned)((n + ZK_BLOCK - 1) / ZK_BLOCK), 1, 1, ZK_BLOCK, 1,
			     1, 0, s, params, NULL));
}

int main(void)
{
	char exe[PATH_MAX], lib[PATH_MAX + 32];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	CHECK(len > 0, "readlink");
	exe[len] = 0;
	snprintf(lib, sizeof(lib), "%s/../simcuda/libcuda.so.1", dirname(exe));

	int fd = mkstemp(trace_path);
	CHECK(fd >= 0, "mkstemp");
	close(fd);
	setenv("SIMCUDA_DEVICES", "3", 1);
	setenv("SIMCUDA_TRACE", trace_path, 1);
	unsetenv("SIMCUDA_FAULT");

	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	CHECK(h, "dlopen %s: %s", lib, dlerror());
#define LOAD(f) CHECK((cu.f = dlsym(h, STR(f))), "missing %s", STR(f));
	FUNCS(LOAD)

	int n;
	CHECK_EQ_U64(cu.cuDeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
	CHECK_EQ_U64(cu.cuInit(1), CUDA_ERROR_INVALID_VALUE);
	OK(cu.cuInit(0));
	OK(cu.cuDeviceGetCount(&n));
	CHECK_EQ_U64(n, 3);
	CUdevice dev;
	CHECK_EQ_U64(cu.cuDeviceGet(&dev, 3), CUDA_ERROR_INVALID_DEVICE);
	OK(cu.cuDeviceGet(&dev, 0));

	CUdeviceptr d;
	CHECK_EQ_U64(cu.cuMemAlloc(&d, 64), CUDA_ERROR_INVALID_CONTEXT);
	CUcontext ctx;
	OK(cu.cuDevicePrimaryCtxRetain(&ctx, dev));
	OK(cu.cuCtxSetCurrent(ctx));

	const char *name;
	OK(cu.cuGetErrorName(CUDA_ERROR_INVALID_HANDLE, &name));
	CHECK(!strcmp(name, "CUDA_ERROR_INVALID_HANDLE"), "%s", name);

	/* modules: only fatbin images; names from the kernel table */
	CUmodule mod;
	static const uint32_t not_fatbin[4] = { 0x464c457f, 0, 0, 0 };
	static const uint32_t fatbin[4] = { 0xBA55ED50, 0x00100001, 0, 0 };
	CHECK_EQ_U64(cu.cuModuleLoadData(&mod, not_fatbin), CUDA_ERROR_INVALID_IMAGE);
	OK(cu.cuModuleLoadData(&mod, fatbin));
	CUfunction f;
	CHECK_EQ_U64(cu.cuModuleGetFunction(&f, mod, "no_such_kernel"), CUDA_ERROR_NOT_FOUND);
	OK(cu.cuModuleGetFunction(&f_powers, mod, "fr_powers"));

	/* bad handles are errors, not crashes */
	uint64_t junk[32] = { 0 };
	CHECK_EQ_U64(cu.cuStreamSynchronize((CUstream)junk), CUDA_ERROR_INVALID_HANDLE);
	CHECK_EQ_U64(cu.cuEventSynchronize((CUevent)junk), CUDA_ERROR_INVALID_HANDLE);
	CHECK_EQ_U64(cu.cuMemFree((CUdeviceptr)(uintptr_t)junk), CUDA_ERROR_INVALID_VALUE);

	uint64_t big = 1ULL << BIG_LOG2;
	size_t bytes = big * sizeof(fr_t);
	CUdeviceptr out;
	OK(cu.cuMemAlloc(&out, bytes));
	CHECK_EQ_U64(out % 256, 0);
	fr_t *pinned, *pageable = malloc(bytes);
	CHECK(pageable, "malloc");
	OK(cu.cuMemHostAlloc((void **)&pinned, bytes, 0));

	CUstream s1, s2;
	CUevent e0, e1;
	OK(cu.cuStreamCreate(&s1, CU_STREAM_DEFAULT));
	OK(cu.cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
	OK(cu.cuEventCreate(&e0, CU_EVENT_DEFAULT));
	OK(cu.cuEventCreate(&e1, CU_EVENT_DEFAULT));
	float ms;
	CHECK_EQ_U64(cu.cuEventElapsedTime(&ms, e0, e1), CUDA_ERROR_INVALID_HANDLE);
	OK(cu.cuEventSynchronize(e0)); /* never recorded: complete */

	/* launches are asynchronous; events complete in stream order */
	OK(cu.cuEventRecord(e0, s1));
	launch_powers(s1, out, big);
	OK(cu.cuEventRecord(e1, s1));
	CHECK_EQ_U64(cu.cuStreamQuery(s1), CUDA_ERROR_NOT_READY);
	CHECK_EQ_U64(cu.cuEventQuery(e1), CUDA_ERROR_NOT_READY);
	CHECK_EQ_U64(cu.cuEventElapsedTime(&ms, e0, e1), CUDA_ERROR_NOT_READY);
	/* a copy from pinned memory is queued behind the kernel and returns at once */
	OK(cu.cuMemcpyDtoHAsync(pinned, out, bytes, s1));
	CHECK_EQ_U64(cu.cuStreamQuery(s1), CUDA_ERROR_NOT_READY);
	OK(cu.cuEventSynchronize(e1));
	OK(cu.cuEventElapsedTime(&ms, e0, e1));
	CHECK(ms > 0.0f, "kernel time %f ms", ms);
	OK(cu.cuStreamSynchronize(s1));
	OK(cu.cuStreamQuery(s1));
	fr_t base = fr_from_u64(5);
	CHECK(fr_eq(pinned[0], fr_one()), "5^0");
	CHECK(fr_eq(pinned[1], base), "5^1");
	CHECK(fr_eq(pinned[big - 1], fr_pow(base, big - 1)), "5^(n-1)");

	/* a copy to pageable memory blocks until done, so the stream is idle when it returns */
	launch_powers(s1, out, big);
	OK(cu.cuMemcpyDtoHAsync(pageable, out, bytes, s1));
	OK(cu.cuStreamQuery(s1));
	CHECK(fr_eq(pageable[big - 1], fr_pow(base, big - 1)), "pageable copy");

	/* the legacy stream waits for a blocking stream's earlier work */
	memset(pageable, 0, bytes);
	OK(cu.cuMemcpyHtoDAsync(out, pageable, bytes, s1)); /* zeroes, synchronously */
	launch_powers(s1, out, big);
	OK(cu.cuMemcpyDtoH(pageable, out, bytes));
	CHECK(fr_eq(pageable[big - 1], fr_pow(base, big - 1)), "legacy copy ran before kernel");

	/* a stream made to wait on an event does not run ahead of it */
	CUdeviceptr out2;
	OK(cu.cuMemAlloc(&out2, bytes));
	launch_powers(s1, out, big);
	OK(cu.cuEventRecord(e1, s1));
	OK(cu.cuStreamWaitEvent(s2, e1, 0));
	OK(cu.cuMemcpyDtoHAsync(pinned, out, bytes, s2));
	OK(cu.cuStreamSynchronize(s2));
	OK(cu.cuEventQuery(e1));

	/* two streams of one device: their kernels never overlap (ground truth from the trace) */
	launch_powers(s1, out, big / 4);
	launch_powers(s2, out2, big / 4);
	launch_powers(s1, out, big / 4);
	launch_powers(s2, out2, big / 4);
	OK(cu.cuCtxSynchronize());
	OK(cu.cuStreamQuery(s1));
	OK(cu.cuStreamQuery(s2));

	FILE *t = fopen(trace_path, "r");
	CHECK(t, "trace file");
	char line[512];
	unsigned long long st[64], en[64];
	int k = 0;
	while (fgets(line, sizeof(line), t) && k < 64) {
		int devno;
		char kname[64];
		static const char fmt[] =
			"{\"device\":%d,\"kernel\":\"%63[^\"]\",\"start_ns\":%llu,\"end_ns\":%llu}";
		CHECK(sscanf(line, fmt, &devno, kname, &st[k], &en[k]) == 4, "trace: %s", line);
		CHECK_EQ_U64(devno, 0);
		CHECK(!strcmp(kname, "fr_powers"), "%s", kname);
		CHECK(en[k] > st[k], "empty interval");
		k++;
	}
	fclose(t);
	CHECK_EQ_U64(k, 8); /* every launch above */
	for (int i = 0; i < k; i++)
		for (int j = i + 1; j < k; j++)
			CHECK(en[i] <= st[j] || en[j] <= st[i], "kernels %d and %d overlap", i, j);

	OK(cu.cuEventDestroy(e0));
	OK(cu.cuEventDestroy(e1));
	CHECK_EQ_U64(cu.cuEventDestroy(e1), CUDA_ERROR_INVALID_HANDLE);
	OK(cu.cuStreamDestroy(s1));
	OK(cu.cuStreamDestroy(s2));
	CHECK_EQ_U64(cu.cuStreamDestroy(s1), CUDA_ERROR_INVALID_HANDLE);
	OK(cu.cuMemFree(out));
	OK(cu.cuMemFree(out2));
	CHECK_EQ_U64(cu.cuMemFree(out), CUDA_ERROR_INVALID_VALUE);
	OK(cu.cuMemFreeHost(pinned));
	OK(cu.cuModuleUnload(mod));
	CHECK_EQ_U64(cu.cuModuleUnload(mod), CUDA_ERROR_INVALID_HANDLE);
	struct fr_powers_args a = { .out = NULL, .n = 0 };
	void *params[] = { &a };
	CHECK_EQ_U64(cu.cuLaunchKernel(f_powers, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL),
		     CUDA_ERROR_INVALID_HANDLE);
	free(pageable);
	unlink(trace_path);
	printf("simcuda: errors, async launches, copies, legacy stream, events, exclusive kernels: "
	       "ok\n");
	TEST_PASS();
}
