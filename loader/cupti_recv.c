// SPDX-License-Identifier: GPL-2.0
/*
 * The recorder's end of the CUPTI collector (loader/cupti/inject.c). Before the target is
 * launched: a SOCK_SEQPACKET socket pair, one end left open across the exec at a high
 * descriptor named in GS_CUPTI_FD_ENV, and CUDA_INJECTION64_PATH naming the collector next to
 * the recorder's binary (GAPSCOPE_CUPTI_LIB overrides). A real CUDA driver loads it at cuInit;
 * simcuda does not, nor does a process attached with -p (its driver initialized long ago).
 *
 * Each message is whole struct gs_gpu_act records; each goes to the trace as GS_REC_GPU_ACT.
 * Reading is non-blocking, every 50 ms and at the end: the collector sends from CUPTI's own
 * thread, so a recorder behind only delays that thread, never a launch.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gpu_feeds.h"
#include "trace_out.h"
#include "record_opts.h"
#include "trace.h"

#define CHILD_FD_MIN 200 /* out of the way of the target's own descriptors */
#define RCVBUF	     (8 << 20)

static struct {
	int fd, child_fd;
	bool asked, on, flushed, marked;
	__u64 kernels, copies, memsets, launches, dropped, bad;
} cr = { .fd = -1, .child_fd = -1 };

/*
 * The collector: GAPSCOPE_CUPTI_LIB, else next to the binary (build/), else in ../lib/gapscope/
 * of the binary's directory (make install). The first that exists; the last tried if none.
 */
static const char *collector_path(char *buf, size_t len)
{
	static const char *const dirs[] = { "", "/../lib/gapscope" };
	const char *env = getenv("GAPSCOPE_CUPTI_LIB");
	char exe[PATH_MAX], *slash;
	ssize_t n;

	if (env && *env)
		return env;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = 0;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char cand[PATH_MAX];

		if ((size_t)snprintf(cand, sizeof(cand), "%s%s/%s", exe, dirs[i], GS_CUPTI_LIB) >=
		    sizeof(cand))
			return NULL;
		/* The target is told the path without "..", as a user would write it. */
		if (len >= PATH_MAX && realpath(cand, buf))
			return buf;
		snprintf(buf, len, "%s", cand);
	}
	return buf;
}

void cupti_recv__start(bool asked)
{
	const char *prev = getenv("CUDA_INJECTION64_PATH"), *lib;
	char path[PATH_MAX], num[16];
	int sv[2], big = RCVBUF;

	cr.asked = asked;
	lib = collector_path(path, sizeof(path));
	if (!lib || access(lib, R_OK)) {
		if (asked)
			fprintf(stderr,
				"gapscope: warning: --cupti: no %s next to gapscope or in "
				"../lib/gapscope\n",
				GS_CUPTI_LIB);
		return;
	}
	if (prev && *prev && strcmp(prev, lib)) {
		if (asked)
			fprintf(stderr,
				"gapscope: warning: --cupti: CUDA_INJECTION64_PATH is %s already\n",
				prev);
		return;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		fprintf(stderr, "gapscope: warning: CUPTI: socketpair: %s\n", strerror(errno));
		return;
	}
	/* Root may go past net.core.rmem_max; anyone else gets what the system allows. */
	if (setsockopt(sv[0], SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)))
		setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	cr.child_fd = fcntl(sv[1], F_DUPFD, CHILD_FD_MIN); /* without FD_CLOEXEC */
	close(sv[1]);
	if (cr.child_fd < 0 || fcntl(sv[0], F_SETFL, O_NONBLOCK)) {
		fprintf(stderr, "gapscope: warning: CUPTI: %s\n", strerror(errno));
		close(sv[0]);
		return;
	}
	cr.fd = sv[0];
	snprintf(num, sizeof(num), "%d", cr.child_fd);
	setenv(GS_CUPTI_FD_ENV, num, 1);
	setenv("CUDA_INJECTION64_PATH", lib, 1);
}

static void on_status(const struct gs_gpu_act *a)
{
	switch (a->aux) {
	case GS_CUPTI_ON:
		cr.on = true;
		break;
	case GS_CUPTI_FLUSHED:
		cr.flushed = true;
		break;
	case GS_CUPTI_NO_LIB:
		fprintf(stderr,
			"gapscope: warning: CUPTI: cannot load libcupti (%s): no CUPTI tier\n",
			a->text);
		break;
	default:
		fprintf(stderr, "gapscope: warning: CUPTI: %s: no CUPTI tier\n", a->text);
		break;
	}
}

static void on_record(struct trace_out *out, const struct gs_gpu_act *a)
{
	int err;
	struct {
		struct gs_hdr h;
		_Alignas(8) char a[sizeof(struct gs_gpu_act) + GS_GPU_ACT_TEXT];
	} rec;

	switch (a->kind) {
	case GS_ACT_KERNEL:
		cr.kernels++;
		break;
	case GS_ACT_MEMCPY:
		cr.copies++;
		break;
	case GS_ACT_MEMSET:
		cr.memsets++;
		break;
	case GS_ACT_LAUNCH:
		cr.launches++;
		break;
	case GS_ACT_DROPPED:
		cr.dropped += a->bytes;
		break;
	case GS_ACT_STATUS:
		/* The collector runs: the report is to look for its records (TRACE_F_GPU_ACT). */
		if (!cr.marked && out->tw && (err = trace__set_flags(out->tw, TRACE_F_GPU_ACT)))
			fprintf(stderr,
				"gapscope: warning: %s: cannot mark the trace for CUPTI: %s\n",
				out->path, strerror(-err));
		cr.marked = true;
		on_status(a);
		break;
	}
	trace_out__hdr(&rec.h, GS_REC_GPU_ACT, sizeof(rec.h) + a->size, a->pid);
	if (a->start)
		rec.h.ts = a->start;
	if (a->tid)
		rec.h.tid = a->tid;
	memcpy(rec.a, a, a->size);
	trace_out__append(out, &rec, sizeof(rec.h) + a->size);
}

void cupti_recv__poll(struct trace_out *out)
{
	_Alignas(8) char buf[GS_GPU_ACT_MSG];
	ssize_t n;

	/* The target has its end since the launch; ours would hide the collector's going. */
	if (cr.child_fd >= 0) {
		close(cr.child_fd);
		cr.child_fd = -1;
	}
	while (cr.fd >= 0 && (n = recv(cr.fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		for (size_t off = 0; off + sizeof(struct gs_gpu_act) <= (size_t)n;) {
			const struct gs_gpu_act *a = (const void *)(buf + off);

			if (a->size < sizeof(*a) || a->size % 8 ||
			    a->size > sizeof(*a) + GS_GPU_ACT_TEXT || off + a->size > (size_t)n) {
				cr.bad++;
				break;
			}
			on_record(out, a);
			off += a->size;
		}
	}
}

void cupti_recv__finish(struct trace_out *out)
{
	if (cr.fd < 0 && cr.child_fd < 0)
		return;
	cupti_recv__poll(out);
	if (cr.on)
		fprintf(stderr,
			"gapscope: CUPTI: %llu kernels, %llu copies, %llu memsets, %llu launch calls, "
			"%llu dropped%s\n",
			(unsigned long long)cr.kernels, (unsigned long long)cr.copies,
			(unsigned long long)cr.memsets, (unsigned long long)cr.launches,
			(unsigned long long)cr.dropped, cr.flushed ? "" : " (no final flush)");
	else if (cr.asked)
		fprintf(stderr,
			"gapscope: warning: --cupti: the target's CUDA driver did not load "
			"the collector (simcuda, or no CUDA): API-inferred timeline only\n");
	if (cr.bad)
		fprintf(stderr, "gapscope: warning: CUPTI: %llu malformed messages\n",
			(unsigned long long)cr.bad);
	close(cr.fd);
	cr.fd = -1;
}

void gpu_feeds__start(const struct record_opts *o)
{
	if (o->cupti && o->cmd)
		cupti_recv__start(o->cupti > 0);
	else if (o->cupti > 0)
		fprintf(stderr, "gapscope: warning: --cupti needs a launched command (the driver "
				"loads it at cuInit): API-inferred timeline only\n");
	if (o->nvml)
		nvml__start();
}

void gpu_feeds__tick(struct trace_out *out)
{
	cupti_recv__poll(out);
	nvml__sample(out);
}

void gpu_feeds__finish(struct trace_out *out)
{
	cupti_recv__finish(out);
	nvml__sample(out);
	nvml__finish();
}
