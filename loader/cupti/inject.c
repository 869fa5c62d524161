// SPDX-License-Identifier: GPL-2.0
/*
 * libgapscope-cupti.so: the CUPTI activity collector. `gapscope record` launches its target with
 * CUDA_INJECTION64_PATH naming this library and GS_CUPTI_FD_ENV naming a socket; the CUDA driver
 * loads it at cuInit and calls InitializeInjection(), which loads libcupti (dlopen: a target
 * without it runs as before, the recorder is told why) and asks for kernel, copy and memset
 * activity, plus records of the driver's launch calls alone (their thread ties a kernel's
 * correlation id to the thread that launched it). Timestamps are CLOCK_MONOTONIC, the clock of
 * the BPF events.
 *
 * Nothing here runs on the target's launch path: CUPTI fills its buffers, and the conversion
 * and the sends run in the thread CUPTI hands full buffers back on (its worker, or the thread
 * that flushes at exit).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cupti_activity.h>
#include <cupti_driver_cbid.h>

#include "convert.h"

#define EXPORT		__attribute__((visibility("default")))
#define CUPTI_BUF_SIZE	(4u << 20)
#define CUPTI_BUF_ALIGN 8

#ifndef GS_CUPTI_DIR
#define GS_CUPTI_DIR "/usr/local/cuda/lib64"
#endif

static struct {
	CUptiResult (*activity_enable)(CUpti_ActivityKind);
	CUptiResult (*enable_driver_api)(CUpti_CallbackId, uint8_t);
	CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc,
					  CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*register_timestamp)(CUpti_TimestampCallbackFunc);
	CUptiResult (*next_record)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult (*dropped)(CUcontext, uint32_t, size_t *);
	CUptiResult (*flush_all)(uint32_t);
	CUptiResult (*set_thread_id_type)(CUpti_ActivityThreadIdType);
	CUptiResult (*result_string)(CUptiResult, const char **);
} cupti;

static int out_fd = -1;
static uint32_t pid;
static struct gs_names names;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Sends LEN bytes as one message; the recorder gone, nothing more is sent. Under lock. */
static void send_msg(const void *buf, size_t len)
{
	while (out_fd >= 0 && len && send(out_fd, buf, len, MSG_NOSIGNAL) < 0) {
		if (errno == EINTR)
			continue;
		close(out_fd);
		out_fd = -1;
	}
}

static void send_status(uint32_t status, const char *text)
{
	char buf[GS_CONV_MAX];

	pthread_mutex_lock(&lock);
	send_msg(buf, gs_conv__status(buf, pid, status, text));
	pthread_mutex_unlock(&lock);
}

static uint64_t CUPTIAPI mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(CUPTI_BUF_ALIGN, CUPTI_BUF_SIZE);
	*size = *buffer ? CUPTI_BUF_SIZE : 0;
	*max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				      size_t valid)
{
	char msg[GS_GPU_ACT_MSG];
	CUpti_Activity *r = NULL;
	size_t used = 0, dropped = 0;
	int n;

	pthread_mutex_lock(&lock);
	while (valid && cupti.next_record(buffer, valid, &r) == CUPTI_SUCCESS) {
		n = gs_conv__record(&names, pid, r, msg + used, sizeof(msg) - used);
		if (n < 0) {
			send_msg(msg, used);
			used = 0;
			n = gs_conv__record(&names, pid, r, msg, sizeof(msg));
		}
		used += n > 0 ? n : 0;
	}
	if (cupti.dropped(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped) {
		if (sizeof(msg) - used < GS_CONV_MAX) {
			send_msg(msg, used);
			used = 0;
		}
		used += gs_conv__dropped(msg + used, pid, dropped);
	}
	send_msg(msg, used);
	pthread_mutex_unlock(&lock);
	free(buffer);
}

/* At the target's exit: what CUPTI still holds, then a word that this was all. */
static void flush_at_exit(void)
{
	cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	send_status(GS_CUPTI_FLUSHED, "");
}

static void *load_cupti(char *why, size_t len)
{
	static const char *const paths[] = {
		"libcupti.so.13",
		"libcupti.so",
		GS_CUPTI_DIR "/libcupti.so.13",
	};
	void *h = NULL;

	for (size_t i = 0; !h && i < sizeof(paths) / sizeof(paths[0]); i++)
		h = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(why, len, "%s", dlerror());
		return NULL;
	}
#define SYM(field, name)                                        \
	if (!(*(void **)&cupti.field = dlsym(h, name))) {       \
		snprintf(why, len, "libcupti has no %s", name); \
		return NULL;                                    \
	}
	SYM(activity_enable, "cuptiActivityEnable");
	SYM(enable_driver_api, "cuptiActivityEnableDriverApi");
	SYM(register_callbacks, "cuptiActivityRegisterCallbacks");
	SYM(register_timestamp, "cuptiActivityRegisterTimestampCallback");
	SYM(next_record, "cuptiActivityGetNextRecord");
	SYM(dropped, "cuptiActivityGetNumDroppedRecords");
	SYM(flush_all, "cuptiActivityFlushAll");
	SYM(set_thread_id_type, "cuptiSetThreadIdType");
	SYM(result_string, "cuptiGetResultString");
#undef SYM
	return h;
}

/* Says which CUPTI call failed and why; 0 when none did. */
static int check(CUptiResult res, const char *call)
{
	char why[GS_GPU_ACT_TEXT];
	const char *s = NULL;

	if (res == CUPTI_SUCCESS)
		return 0;
	cupti.result_string(res, &s);
	snprintf(why, sizeof(why), "%s: %s", call, s ? s : "unknown error");
	send_status(GS_CUPTI_FAILED, why);
	return -1;
}

/* The launch calls whose records tie kernels to threads; nothing else of the driver's API. */
static const CUpti_CallbackId launch_cbids[] = {
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
	CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
};

/* The CUDA driver's injection entry point, called once at cuInit. */
EXPORT int InitializeInjection(void)
{
	const char *env = getenv(GS_CUPTI_FD_ENV);
	char why[GS_GPU_ACT_TEXT], *end;
	static int done;
	Dl_info info;
	long fd;

	if (done++ || !env)
		return 1;
	fd = strtol(env, &end, 10);
	if (*end || fd < 0)
		return 1;
	out_fd = fd;
	pid = getpid();
	if (!load_cupti(why, sizeof(why))) {
		send_status(GS_CUPTI_NO_LIB, why);
		return 1;
	}
	/* Launch records name the system thread id (the BPF events' tid) where CUPTI can. */
	cupti.set_thread_id_type(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	if (check(cupti.register_timestamp(mono_ns), "cuptiActivityRegisterTimestampCallback") ||
	    check(cupti.register_callbacks(buffer_requested, buffer_completed),
		  "cuptiActivityRegisterCallbacks") ||
	    check(cupti.activity_enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
		  "cuptiActivityEnable(CONCURRENT_KERNEL)") ||
	    check(cupti.activity_enable(CUPTI_ACTIVITY_KIND_MEMCPY),
		  "cuptiActivityEnable(MEMCPY)") ||
	    check(cupti.activity_enable(CUPTI_ACTIVITY_KIND_MEMSET), "cuptiActivityEnable(MEMSET)"))
		return 1;
	for (size_t i = 0; i < sizeof(launch_cbids) / sizeof(launch_cbids[0]); i++)
		if (check(cupti.enable_driver_api(launch_cbids[i], 1),
			  "cuptiActivityEnableDriverApi"))
			break;
	atexit(flush_at_exit);
	send_status(GS_CUPTI_ON,
		    dladdr(cupti.flush_all, &info) && info.dli_fname ? info.dli_fname : "libcupti");
	return 1;
}
